package port

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/udiff"
)

// applied is a port with its edits applied, as the pipeline would.
type applied struct {
	*Result
	Output  []byte
	Changed bool
}

// portFile analyses and ports f and applies the edits (package transform
// does this for bamgen; these tests see the port alone).
func portFile(f *parse.File, opts Options) (*applied, error) {
	res, err := Port(f, analysis.AnalyzeDevice(f), opts)
	if err != nil {
		return nil, err
	}
	edits := res.Edits
	for _, cl := range res.Clones { // no access-pattern rewrite here: every clone applies
		edits = append(edits, cl.Picks()...)
	}
	out, err := edit.Apply(f.Src.Bytes, edits, f.Src.Name)
	if err != nil {
		return nil, err
	}
	return &applied{res, out, !bytes.Equal(out, f.Src.Bytes)}, nil
}

// portForTest ports src named input.cu and renders its diagnostics.
func portForTest(t *testing.T, src []byte, opts Options) (*applied, string) {
	t.Helper()
	f := parse.ParseFile("input.cu", src)
	res, err := portFile(f, opts)
	if err != nil {
		t.Fatalf("Port: %v", err)
	}
	var b strings.Builder
	for _, d := range diag.Sorted(res.Diags) {
		b.WriteString(f.Src.Format(d))
		b.WriteByte('\n')
	}
	return res, b.String()
}

// checkIdempotent ports the output again with the same choices: nothing
// may change and no error may appear.
func checkIdempotent(t *testing.T, out []byte, opts Options) {
	t.Helper()
	again, diags := portForTest(t, out, opts)
	switch {
	case !bytes.Equal(again.Output, out):
		t.Errorf("porting the output again changes it:\n%s", udiff.Unified("once", "twice", out, again.Output))
	case strings.Contains(diags, ": error: ") && !strings.Contains(diags, "[PORT00"):
		t.Errorf("porting the output again reports errors:\n%s", diags)
	}
}

// expectPort ports src with opts and checks the output (esbuild-style
// one-line expectation tests for single rewrites).
//
// The kernel versions (versions.go) wrap every ported kernel's body; they
// have tests of their own (versions_test.go), so these leave them out.
func expectPort(t *testing.T, opts Options, src, want string) {
	t.Helper()
	opts.SingleVersion = true
	res, diags := portForTest(t, []byte(src), opts)
	if strings.Contains(want, "bam::array") && !strings.Contains(src, "bam/bam.cuh") {
		// a file with no host code gets only the runtime header (S1)
		want = "#include <bam/bam.cuh>\n#line 1 \"input.cu\"\n" + want
	}
	if string(res.Output) != want {
		t.Errorf("port of\n%s\ngot\n%s\nwant\n%s\ndiagnostics:\n%s", src, res.Output, want, diags)
	}
}

func TestKernelOnlyRewrites(t *testing.T) {
	arr := Options{Arrays: []string{"p"}}
	// A kernel that is never launched: only the kernel side changes.
	cases := []struct{ in, out string }{
		{"__global__ void k(float *p) { p[0] = 1; }", "__global__ void k(bam::array<float> p) { p[0] = 1; }"},
		{"__global__ void k(float*p) { p[0] = 1; }", "__global__ void k(bam::array<float> p) { p[0] = 1; }"},
		{"__global__ void k(const float* __restrict__ p, float* q) { q[0] = *p; }", "__global__ void k(bam::array<const float> p, float* q) { q[0] = p[0]; }"},
		{"__global__ void k(float const *p, float* q) { q[0] = *(p + 3); }", "__global__ void k(bam::array<const float> p, float* q) { q[0] = p[3]; }"},
		{"__global__ void k(int* p) { atomicAdd(&p[threadIdx.x], 2); }", "__global__ void k(bam::array<int> p) { p.atomic_add(threadIdx.x, 2); }"},
		{"__global__ void k(int* p) { atomicCAS(p + 1, 0, 2); }", "__global__ void k(bam::array<int> p) { p.atomic_cas(1, 0, 2); }"},
		{"__global__ void k(int* p) { auto v = p[1]; p[2] = v; }", "__global__ void k(bam::array<int> p) { auto v = p.read(1); p[2] = v; }"},
		{"__global__ void k(const int* p, int* q) { q[0] = __ldg(&p[4]); }", "__global__ void k(bam::array<const int> p, int* q) { q[0] = p.read(4); }"},
		{"template <class T> __global__ void k(T* p) { p[0] += T(1); }", "template <class T> __global__ void k(bam::array<T> p) { p[0] += T(1); }"},
	}
	for _, c := range cases {
		expectPort(t, arr, c.in, c.out)
	}
}

func TestRefusalsLeaveArray(t *testing.T) {
	cases := map[string]string{
		CodeAddressTaken:    "__device__ void f(float*); __global__ void k(float* p) { f(&p[1]); }",
		CodePointerCompared: "__global__ void k(float* p) { if (p) p[0] = 1; }",
		CodePointerCast:     "__global__ void k(float* p) { ((int*)p)[0] = 1; }",
		CodeInlineAsm:       "__global__ void k(float* p) { asm volatile(\"st.global.f32 [%0], 1.0;\" :: \"l\"(p)); }",
		CodeMacroUse:        "#define Z(x) x[0] = 0\n__global__ void k(float* p) { Z(p); }",
		CodeUnknownCall:     "__device__ void g(float*); __global__ void k(float* p) { g(p); }",
		CodePointerArith:    "__global__ void k(float* p) { p++; p[0] = 1; }",
		CodeElementMember:   "struct S { int x; }; __global__ void k(S* p) { p[0].x = 1; }",
		CodeOtherUse:        "struct S { int x; }; __global__ void k(S* p) { p->x = 1; }",
	}
	for code, src := range cases {
		res, diags := portForTest(t, []byte(src), Options{Arrays: []string{"p"}})
		if res.Changed {
			t.Errorf("%s: a refused array was rewritten:\n%s", code, res.Output)
		}
		if !strings.Contains(diags, "["+code+"]") {
			t.Errorf("%s: diagnostics lack the code:\n%s", code, diags)
		}
	}
}

// TestPortNeverFailsOnCorpusPrefixes ports truncated corpus files: any
// input, however broken, must give diagnostics, not an internal error.
func TestPortNeverFailsOnCorpusPrefixes(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/kernels/*/*.cu")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, frac := range []int{1, 3, 5, 7, 9, 10} {
			cut := src[:len(src)*frac/10]
			pf := parse.ParseFile(f, cut)
			if _, err := portFile(pf, Options{Auto: true}); err != nil {
				t.Errorf("%s cut at %d/10: %v", f, frac, err)
			}
		}
	}
}

// TestPortInSteps ports one array, then another in a second run: the
// runtime set-up must not be inserted twice.
func TestPortInSteps(t *testing.T) {
	src, err := os.ReadFile("../../testdata/kernels/vectoradd/vectoradd.cu")
	if err != nil {
		t.Skip("corpus program missing")
	}
	first, _ := portForTest(t, src, Options{Arrays: []string{"vector_add:a", "vector_add_gridstride:a"}})
	second, diags := portForTest(t, first.Output, Options{Arrays: []string{"c"}})
	out := string(second.Output)
	for _, once := range []string{"#include <bam/bam.cuh>", "bam::runtime& bam_rt =", "bam::stats_at_exit"} {
		if n := strings.Count(out, once); n != 1 {
			t.Errorf("%q appears %d times after two ports\n%s", once, n, diags)
		}
	}
	if !strings.Contains(out, "bam::array<T> c") || !strings.Contains(out, "bam::array<const T> a") {
		t.Errorf("second port lost an array:\n%s", out)
	}
}

func TestPrototypesFollow(t *testing.T) {
	expectPort(t, Options{Arrays: []string{"p"}},
		"__global__ void k(const float* p, int n);\n__global__ void k(const float* p, int n) { float x = p[n]; }\n",
		"__global__ void k(bam::array<const float> p, int n);\n__global__ void k(bam::array<const float> p, int n) { float x = p[n]; }\n")
}

// TestChecksOnceInSteps ports one array, then another of the same kernels in
// a second run: the launch and synchronization checks of the first run (on
// lines of their own after a #line directive, or on the statement's line)
// are not inserted again.
func TestChecksOnceInSteps(t *testing.T) {
	src := `#include <cuda_runtime.h>
__global__ void k(int* a, float* b, int n) { int i = threadIdx.x; if (i < n) b[i] += a[i]; }
int main(int argc, char** argv)
{
    int n = 256;
    int* a;
    float* b;
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, n * sizeof(float));
    k<<<1, 256>>>(a, b, n);
    for (int r = 0; r < 2; r++)
        k<<<1, 256>>>(a, b, n);
    switch (argc) {
    case 1: k<<<1, 256>>>(a, b, n); break;
    }
    cudaDeviceSynchronize();
    if (argc > 2)
        cudaDeviceSynchronize();
    cudaDeviceSynchronize(); n++;
    cudaFree(a);
    cudaFree(b);
    return 0;
}
`
	first, diags := portForTest(t, []byte(src), Options{Arrays: []string{"a"}})
	second, diags2 := portForTest(t, first.Output, Options{Arrays: []string{"b"}})
	out1, out2 := string(first.Output), string(second.Output)
	for _, call := range []string{".check_launch(", ".check_sync("} {
		n1, n2 := strings.Count(out1, call), strings.Count(out2, call)
		if n1 != 3 || n2 != n1 {
			t.Errorf("%s: %d after the first port (want 3), %d after the second (want the same)\n%s%s\n%s", call, n1, n2, diags, diags2, out2)
		}
	}
	if !strings.Contains(out2, "bam::array<float> b") {
		t.Errorf("second port did not port b:\n%s", out2)
	}
}
