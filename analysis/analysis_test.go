package analysis

import (
	"sort"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

// firstKernel analyses src and returns its first kernel.
func firstKernel(t *testing.T, src string) *Function {
	t.Helper()
	ks := Analyze(parse.ParseFile("t.cu", []byte(src))).Kernels()
	if len(ks) == 0 {
		t.Fatalf("no kernel in %q", src)
	}
	return ks[0]
}

// expectIndex checks the index forms of every array of the first kernel in
// src, written as "a: f1; f2 | b: f" in order of the report.
func expectIndex(t *testing.T, src, want string) {
	t.Helper()
	k := firstKernel(t, src)
	var parts []string
	for _, a := range k.Arrays {
		var forms []string
		for _, s := range a.Forms() {
			forms = append(forms, s.String())
		}
		parts = append(parts, a.Name+": "+strings.Join(forms, "; "))
	}
	if got := strings.Join(parts, " | "); got != want {
		t.Errorf("index forms\n got: %s\nwant: %s\nsrc: %s", got, want, src)
	}
}

func TestIndexForms(t *testing.T) {
	expectIndex(t, `__global__ void k(float *a, const float *b, int n) {
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		if (i < n) a[i] = b[i] * 2; }`,
		"a: affine(thread) | b: affine(thread)")
	expectIndex(t, `__global__ void k(float *a, int n) {
		for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) a[i] += 1; }`,
		"a: affine(thread)")
	expectIndex(t, `#define WARP_SHIFT 5
		__global__ void k(const long *rowptr, const int *col, int *lab, long n) {
		const long tid = blockDim.x * (long)blockIdx.x + threadIdx.x;
		const long w = tid >> WARP_SHIFT;
		const long lane = tid & ((1 << WARP_SHIFT) - 1);
		if (w < n) for (long e = rowptr[w] + lane; e < rowptr[w + 1]; e += 32) lab[col[e]] = 1; }`,
		"rowptr: affine(warp) | lab: data-dependent (from col) | col: data-dependent (from rowptr)")
	expectIndex(t, `__global__ void k(const int *idx, const float *tab, float *out) {
		int i = threadIdx.x + blockIdx.x * blockDim.x;
		out[i] = tab[idx[i]]; }`,
		"out: affine(thread) | tab: data-dependent (from idx) | idx: affine(thread)")
	expectIndex(t, `__global__ void k(float *a) { a[threadIdx.x * threadIdx.x] = 0; a[5] = 1; }`,
		"a: nonlinear; uniform")
	expectIndex(t, `__global__ void k(const float *a, float *o, int n) {
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		const float *row = a + i * n;
		o[i] = row[3] + *(a + i); }`,
		"o: affine(thread) | a: affine(thread)")
}

func TestAccessModes(t *testing.T) {
	f := Analyze(parse.ParseFile("t.cu", []byte(`__global__ void k(int *a, int *b, int *c, int *d) {
		int i = threadIdx.x; a[i] = 1; b[i] += 2; atomicAdd(&c[i], 1); int *p = &d[i]; d[i]++; }`)))
	got := map[string][]string{}
	for _, a := range f.Kernels()[0].Arrays {
		for _, acc := range a.Accesses {
			got[a.Name] = append(got[a.Name], string(acc.Mode))
		}
	}
	want := map[string]string{"a": "write", "b": "read-write", "c": "atomic", "d": "address,read-write"}
	for name, w := range want {
		g := got[name]
		sort.Strings(g)
		if strings.Join(g, ",") != w {
			t.Errorf("%s modes = %v, want %s", name, g, w)
		}
	}
}

func name(v *parse.VarDecl) string {
	if v == nil {
		return ""
	}
	return v.Name
}

// A local assigned through a reference parameter or its address is not
// uniform, whatever its initialiser said.
func TestOutParamsAreNotUniform(t *testing.T) {
	expectIndex(t, `__device__ bool fetch(int t, int &out) { out = t * 3; return true; }
		__global__ void k(int *a) {
		int t = blockIdx.x * blockDim.x + threadIdx.x;
		int s = 0;
		if (fetch(t, s)) a[s] = 1; }`,
		"a: unknown")
	expectIndex(t, `__device__ void set(int *p, int v);
		__global__ void k(int *a) {
		int s = 0;
		set(&s, threadIdx.x);
		a[s] = 1; }`,
		"a: unknown")
}

// Cache-hinted loads through pointer arithmetic are accesses too.
func TestLdgIsAnAccess(t *testing.T) {
	expectIndex(t, `__global__ void k(const int *idx, const float *x, float *y) {
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		y[i] = __ldg(x + idx[i]) + __ldg(&x[i]); }`,
		"y: affine(thread) | x: data-dependent (from idx); affine(thread) | idx: affine(thread)")
}

// expectAccesses checks every access of the first kernel in src, written
// as "array mode index" and joined with " | " in report order.
func expectAccesses(t *testing.T, src, want string) {
	t.Helper()
	k := firstKernel(t, src)
	var parts []string
	for _, a := range k.Arrays {
		for _, acc := range a.Accesses {
			parts = append(parts, a.Name+" "+string(acc.Mode)+" "+acc.Index.String())
		}
	}
	if got := strings.Join(parts, " | "); got != want {
		t.Errorf("accesses\n got: %s\nwant: %s\nsrc: %s", got, want, src)
	}
}

// A pointer derived from a parameter (`T *q = p + off`) and stepped with
// ++/--/+= still points into p: stores through it are writes of p, at an
// index no more regular than the offset and the steps.
func TestWritesThroughDerivedPointer(t *testing.T) {
	const head = `__global__ void k(float *p, float v) {
		int off = blockIdx.x * blockDim.x + threadIdx.x;
		float *q = p + off; `
	cases := []struct{ body, want string }{
		{`*q++ = v; }`, "p write affine(thread)"},
		{`*(q++) = v; }`, "p write affine(thread)"},
		{`*++q = v; }`, "p write affine(thread)"},
		{`*q-- = v; }`, "p write affine(thread)"},
		{`q[0] = v; }`, "p write affine(thread)"},
		{`q++; q[0] = v; }`, "p write affine(thread)"},
		{`*q++ += v; }`, "p read-write affine(thread)"},
		{`++*q; }`, "p read-write affine(thread)"},
		{`(*q)--; }`, "p read-write affine(thread)"},
		{`*q *= v; }`, "p read-write affine(thread)"},
		{`v = *q++; }`, "p read affine(thread)"},
		{`atomicAdd(q++, v); }`, "p atomic affine(thread)"},
		{`atomicAdd(&q[1], v); }`, "p atomic affine(thread)"},
	}
	for _, c := range cases {
		expectAccesses(t, head+c.body, c.want)
	}
}

// The steps of a derived or parameter pointer count in its offset: a
// thread-dependent step makes a uniform base thread-dependent.
func TestPointerStepsShapeTheIndex(t *testing.T) {
	expectAccesses(t, `__global__ void k(float *p, float v) {
		float *q = p; q += threadIdx.x; *q = v; }`, "p write affine(thread)")
	expectAccesses(t, `__global__ void k(float *p, float v) {
		p += blockIdx.x * blockDim.x + threadIdx.x; *p = v; p[1] = v; }`, "p write affine(thread) | p write affine(thread)")
	expectAccesses(t, `__global__ void k(const int *idx, float *p, float v) {
		float *q = p + idx[threadIdx.x]; *q++ = v; }`, "idx read affine(thread) | p write data-dependent (from idx)")
	expectAccesses(t, `template <typename T> __global__ void k(T *p, T v, int n) {
		T *q = p + threadIdx.x;
		for (int j = 0; j < n; j++) *q++ = v; }`, "p write affine(thread)")
	// a parameter stepped by a uniform amount: every thread writes the same elements
	expectAccesses(t, `__global__ void k(float *p, float v, int n) {
		for (int j = 0; j < n; j++) *p++ = v; }`, "p write uniform")
	// a pointer aimed at two different arrays is neither of them
	expectAccesses(t, `__global__ void k(float *a, float *b, float v, int c) {
		float *q = a + threadIdx.x; if (c) q = b; *q = v; }`, "q write unknown")
}

func launchSummary(f *File, l Launch) string {
	texts := func(es []parse.Expr) string {
		var out []string
		for _, e := range es {
			out = append(out, f.Parse.Text(e))
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	s := l.Kernel
	if l.Via != "" {
		s += " via " + l.Via
	}
	s += " config=" + texts(l.Config)
	if l.ConfigStruct != nil {
		s += " struct=" + f.Parse.Text(l.ConfigStruct)
	}
	s += " args=" + texts(l.Args)
	if l.ArgsArray != nil {
		s += " array=" + f.Parse.Text(l.ArgsArray)
	}
	return s
}

// Only error diagnostics are unparsed regions: a warning marks code the
// parser recovered (a supplied ';') and the analysis of it is complete.
func TestUnparsedCountsErrors(t *testing.T) {
	f := Analyze(parse.ParseFile("t.cu", []byte(`__global__ void k(int *a, int n) {
		do { a[threadIdx.x] = 1; } while (0)
		for (int j = 0; j < n j++) a[j] = 2;
	}`)))
	k := f.Kernels()[0]
	if len(k.Diags) != 2 || k.Unparsed() != 1 {
		t.Errorf("diags %v, unparsed %d; want 2 diagnostics, 1 unparsed", k.Diags, k.Unparsed())
	}
}
