package opt

import (
	"strings"
	"testing"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// runOpt applies kind to src with every named array ported in every kernel.
func runOpt(t *testing.T, src, kind string, ported ...string) (string, []diag.Diagnostic) {
	t.Helper()
	pf := parse.ParseFile("k.cu", []byte(src))
	af := analysis.Analyze(pf)
	p := map[string][]string{}
	for _, k := range af.Kernels() {
		p[k.Decl.Name] = ported
	}
	opts, err := Parse(kind, 0)
	if err != nil {
		t.Fatalf("Parse(%q): %v", kind, err)
	}
	res := Run(af, opts, Ported{Params: p})
	out, err := edit.Apply([]byte(src), res.Edits, "k.cu")
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return string(out), res.Diags
}

// expectRewrite checks that the output contains each of wants and that the
// line count did not change (compiler messages must keep pointing at the
// original lines).
func expectRewrite(t *testing.T, src, kind string, ported []string, wants ...string) {
	t.Helper()
	out, diags := runOpt(t, src, kind, ported...)
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q\noutput:\n%s\ndiags: %v", kind, w, out, diags)
		}
	}
	if strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Errorf("%s: line count changed from %d to %d", kind, strings.Count(src, "\n"), strings.Count(out, "\n"))
	}
}

// expectRefusal checks that the kernel is left unchanged with code.
func expectRefusal(t *testing.T, src, kind, code string, ported ...string) {
	t.Helper()
	out, diags := runOpt(t, src, kind, ported...)
	if out != src {
		t.Errorf("%s: refused kernel was changed:\n%s", kind, out)
	}
	for _, d := range diags {
		if d.Code == code && d.Severity == diag.Warning {
			return
		}
	}
	t.Errorf("%s: no %s warning; diags: %v", kind, code, diags)
}

const vecAdd = `__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`

func TestClaware(t *testing.T) {
	expectRewrite(t, vecAdd, "claware", []string{"a", "b", "c"},
		"{ auto bam_body = [&](const unsigned long long bam_v) {",
		"int i = static_cast<int>(bam_v);",
		"}; bam::for_each_thread_by_line<32>(bam::min_elems_per_line(c, a, b), bam_body); }")
	expectRewrite(t, `__global__ void f(float *p, float v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}
`, "claware", []string{"p"},
		"for (int i = static_cast<int>(bam::by_line_first<32>(bam::min_elems_per_line(p))); i < n; "+
			"i = static_cast<int>(bam::by_line_next<32>(i, bam::min_elems_per_line(p), gridDim.x * blockDim.x))) p[i] = v;")
	// A stride kept in a local, `n > i`, continue and nested loops as written.
	expectRewrite(t, `__global__ void f(float *p, const float *q, unsigned n) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; n > i; i += stride) {
    if (q[i] < 0) continue;
    for (int k = 0; k < 4; k++) { if (k == 2) continue; if (q[i] > k) break; p[i] += k; }
  }
}
`, "claware", []string{"p", "q"}, "n > i; i = static_cast<unsigned>(bam::by_line_next<32>(i, bam::min_elems_per_line(q, p), stride))) {",
		"if (q[i] < 0) continue;")
	// A step that is not the thread count (overlapping per-thread ranges):
	// each virtual thread keeps its own loop.
	expectRewrite(t, `__global__ void f(float *p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 1) p[i] += 1;
}
`, "claware", []string{"p"}, "for (int i = static_cast<int>(bam_v); i < n; i += 1)", "bam::for_each_thread_by_line<32>")
}

// Grid-stride loops whose indices cannot be dealt out to other threads.
func TestClawareLoopRefusals(t *testing.T) {
	loop := func(body string) string {
		return "__global__ void f(float *p, float *out, int n, int *m) {\n  float acc = 0;\n" +
			"  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) { " + body + " }\n" +
			"  atomicAdd(out, acc);\n}\n"
	}
	for _, body := range []string{"acc += p[i];", "if (p[i] < 0) break; p[i] = 1;", "if (p[i] < 0) return; p[i] = 1;", "n = 3; p[i] = 1;"} {
		expectRefusal(t, loop(body), "claware", CodeUnsafeWrites, "p")
	}
	// The bound must be the same for every thread, with no side effects.
	for _, cond := range []string{"i < p[0]", "i < (*m)++", "i != n"} {
		src := strings.Replace(loop("p[i] = 1;"), "i < n;", cond+";", 1)
		expectRefusal(t, src, "claware", CodeNoThreadID, "p")
	}
}

func TestClawareRefusals(t *testing.T) {
	expectRefusal(t, `__global__ void k(float *a) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = a[i]; __syncthreads(); a[i] = s[0];
}
`, "claware", CodeBlocked, "a")
	expectRefusal(t, `__global__ void k(float *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = __shfl_down_sync(0xffffffff, a[i], 1);
}
`, "claware", CodeWarpSync, "a")
	expectRefusal(t, `__global__ void k(float *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) a[i] = 1;
}
`, "claware", CodeStrayIndex, "a")
	expectRefusal(t, `__global__ void k(float *a) { a[threadIdx.x] = 1; }
`, "claware", CodeNoThreadID, "a")
	expectRefusal(t, vecAdd, "claware", CodeNotPorted, "nothing")
}

const bfsWarp = `#define WARP_SIZE 32
__global__ void bfs(const unsigned long long *rowptr, const unsigned *colidx, unsigned *label,
                    unsigned level, unsigned long long n, bool *changed) {
  const unsigned long long tid = blockDim.x * (unsigned long long)blockIdx.x + threadIdx.x;
  const unsigned long long w = tid / WARP_SIZE;
  const unsigned lane = tid % WARP_SIZE;
  if (w < n && label[w] == level) {
    const unsigned long long start = rowptr[w];
    const unsigned long long end = rowptr[w + 1];
    for (unsigned long long e = (start & ~31ull) + lane; e < end; e += WARP_SIZE) {
      if (e >= start) {
        unsigned v = colidx[e];
        if (label[v] == 0xffffffffu) { label[v] = level + 1; *changed = true; }
      }
    }
  }
}
void run(unsigned long long *r, unsigned *c, unsigned *l, unsigned long long n, bool *ch) {
  bfs<<<(n * 32 + 255) / 256, 256>>>(r, c, l, 0, n, ch);
}
`

func TestTransposeAndCoarsen(t *testing.T) {
	expectRewrite(t, bfsWarp, "transpose", []string{"colidx"},
		"const unsigned long long tid = static_cast<unsigned long long>(bam_v * 32ull + (threadIdx.x & 31u));",
		"bam::for_each_warp_transposed(128ull, bam_body); }")
	out, _ := runOpt(t, bfsWarp, "coarsen", "colidx")
	if !strings.Contains(out, "bam::for_each_warp_coarsened<8>(bam_body)") {
		t.Errorf("coarsen output:\n%s", out)
	}
	expectRefusal(t, vecAdd, "transpose", CodeNoWarpID, "a")
}

func TestODT(t *testing.T) {
	expectRewrite(t, bfsWarp, "odt", []string{"colidx"},
		"bool *changed, const bam::odt_plan bam_plan)",
		"bam::odt_first_strided((start & ~31ull) + lane, bam_lo, WARP_SIZE)",
		"(e < end) && e < bam_hi",
		"{ bam::odt_tile bam_tile(colidx); auto bam_body",
		"unsigned v = bam_tile[e];",
		"auto bam_active = [&](const unsigned long long bam_v) -> bool { const unsigned long long w = static_cast<const unsigned long long>(bam_v); "+
			"return (w < n && label[w] == level); }; bam::odt_for_each_tile(bam_plan, rowptr, bam_tile, bam_body, bam_active); }",
		"bfs<<<bam::odt_grid(bam::odt_plan_of(r, n, c), 256), bam::odt_block(bfs, 256)>>>(r, c, l, 0, n, ch, bam::odt_plan_of(r, n, c));")
	// The edges must be ported; the offsets may be.
	expectRewrite(t, bfsWarp, "odt", []string{"colidx", "rowptr"}, "bam::odt_plan_of(r, n, c)")
	expectRefusal(t, bfsWarp, "odt", CodeNotPorted, "label")
	// The port evaluates the launch's offsets, count, edges and block again.
	for _, impure := range []string{"(r, c, l, 0, n++, ch)", "(next(r), c, l, 0, n, ch)", "<<<(n * 32 + 255) / 256, b = 256>>>"} {
		src := strings.Replace(bfsWarp, "(r, c, l, 0, n, ch)", impure, 1)
		if strings.HasPrefix(impure, "<<<") {
			src = strings.Replace(bfsWarp, "<<<(n * 32 + 255) / 256, 256>>>", impure, 1)
		}
		expectRefusal(t, src, "odt", CodeNotCSR, "colidx")
	}
}

// The driver gets the checks the body makes before its walk (early returns
// and the walk's enclosing if) when they have no side effects and name no
// local but the vertex; a check naming another local is left out, and
// anything with a side effect before the walk ends the list.
func TestODTVertexGuard(t *testing.T) {
	early := strings.Replace(bfsWarp, "  if (w < n && label[w] == level) {", "  if (w >= n) return;\n  if (label[w] != level) return;\n  {", 1)
	expectRewrite(t, early, "odt", []string{"colidx"}, "return !(w >= n) && !(label[w] != level); };")
	otherLocal := strings.Replace(bfsWarp, "  if (w < n && label[w] == level) {", "  if (lane > 40) return;\n  if (w < n && label[w] == level) {", 1)
	expectRewrite(t, otherLocal, "odt", []string{"colidx"}, "return (w < n && label[w] == level); };")
	effect := strings.Replace(bfsWarp, "  if (w < n && label[w] == level) {", "  *changed = true;\n  if (w < n && label[w] == level) {", 1)
	out, _ := runOpt(t, effect, "odt", "colidx")
	if !strings.Contains(out, "bam_body") || strings.Contains(out, "bam_active") {
		t.Errorf("a store before the guard must keep the driver from testing it early:\n%s", out)
	}
	// Calls known to be pure (__ldg, min, ...) are fine in a guard.
	ldg := strings.Replace(bfsWarp, "label[w] == level", "__ldg(&label[w]) == level", 1)
	expectRewrite(t, ldg, "odt", []string{"colidx"}, "return (w < n && __ldg(&label[w]) == level); };")
}

// Reads of the edge array at the loop variable go through the tile view;
// anything else (another index, a body that moves e) keeps the cache path.
func TestODTTileReads(t *testing.T) {
	other := strings.Replace(bfsWarp, "unsigned v = colidx[e];", "unsigned v = colidx[e] + colidx[start];", 1)
	expectRewrite(t, other, "odt", []string{"colidx"}, "unsigned v = bam_tile[e] + colidx[start];")
	moved := strings.Replace(bfsWarp, "unsigned v = colidx[e];", "unsigned v = colidx[e]; e += 0;", 1)
	expectRewrite(t, moved, "odt", []string{"colidx"}, "unsigned v = colidx[e]; e += 0;",
		"bam::odt_for_each_tile(bam_plan, rowptr, colidx.size(), colidx.elems_per_line(), bam_body); }")
}

func TestODTRefusesPerVertexSums(t *testing.T) {
	expectRefusal(t, `__global__ void spmv(const long *rp, const int *ci, const float *v, const float *x, float *y, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  float dot = 0;
  for (long j = rp[row]; j < rp[row + 1]; j++) dot += v[j] * x[ci[j]];
  y[row] = dot;
}
`, "odt", CodeUnsafeWrites, "ci", "v")
	expectRefusal(t, `__global__ void k(const long *rp, const int *ci, int *out, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  for (long e = rp[v]; e < rp[v + 1]; e++) { if (ci[e] == 7) break; out[ci[e]] = 1; }
}
`, "odt", CodeUnsafeWrites, "ci")
}

func TestAutoExplainsChoice(t *testing.T) {
	_, diags := runOpt(t, bfsWarp, "auto", "colidx")
	var notes []string
	for _, d := range diags {
		notes = append(notes, d.Message)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "choosing odt") || !strings.Contains(joined, "odt applied") {
		t.Errorf("auto notes:\n%s", joined)
	}
}

func TestParse(t *testing.T) {
	good := []struct {
		spec  string
		lanes int
		want  Options
	}{
		{"claware", 0, Options{Kind: Claware, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
		{"claware", 16, Options{Kind: Claware, LanesPerLine: 16, Stride: 128, Coarsen: 8}},
		{"transpose=256", 32, Options{Kind: Transpose, LanesPerLine: 32, Stride: 256, Coarsen: 8}},
		{"coarsen=4", 32, Options{Kind: Coarsen, LanesPerLine: 32, Stride: 128, Coarsen: 4}},
		{"odt", 32, Options{Kind: ODT, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
		{"auto", 32, Options{Kind: Auto, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
	}
	for _, c := range good {
		if got, err := Parse(c.spec, c.lanes); err != nil || got != c.want {
			t.Errorf("Parse(%q, %d) = %+v, %v; want %+v", c.spec, c.lanes, got, err, c.want)
		}
	}
	bad := map[string]string{
		"fast":               `unknown --opt "fast"; use one of claware, transpose, coarsen, odt, auto`,
		"none":               `unknown --opt "none"`,
		"claware=3":          "only transpose=STRIDE and coarsen=K take a number",
		"transpose=x":        `"x" is not a positive whole number`,
		"transpose=-1":       `"-1" is not a positive whole number`,
		"transpose=99999999": "the stride must be between 1 and 1048576",
		"coarsen=5000":       "the factor must be between 1 and 1024",
	}
	for spec, want := range bad {
		if _, err := Parse(spec, 32); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v; want it to contain %q", spec, err, want)
		}
	}
	if _, err := Parse("claware", 12); err == nil || !strings.Contains(err.Error(), "--lanes-per-line 12") {
		t.Errorf("--lanes-per-line 12: error = %v", err)
	}
}

func TestKindString(t *testing.T) {
	seen := map[string]bool{}
	for k := None; k <= Auto; k++ {
		s := k.String()
		if strings.HasPrefix(s, "Kind(") || seen[s] {
			t.Errorf("kind %d has name %q", int(k), s)
		}
		seen[s] = true
	}
	if s := Kind(99).String(); s != "Kind(99)" {
		t.Errorf("Kind(99) = %q", s)
	}
}

func TestODTRefusesOtherShapes(t *testing.T) {
	// The walk is over the list of a vertex read from a frontier, not of the
	// thread's own vertex: tiles could not be handed to owners.
	expectRefusal(t, `__global__ void walk(const int *off, const int *adj, const int *list, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) { int u = list[t]; for (int e = off[u]; e < off[u + 1]; e++) out[adj[e]] = 1; }
}
void run(const int *o, const int *a, const int *l, int *out, int n) { walk<<<1, 32>>>(o, a, l, out, n); }
`, "odt", CodeNotCSR, "adj")
	// No launch in the file: the added parameter could not be passed.
	expectRefusal(t, strings.Split(bfsWarp, "void run(")[0], "odt", CodeNotCSR, "colidx")
	// A launch through the runtime API passes the arguments in an array
	// (or a cudaLaunchConfig_t) bamgen does not extend: refuse, rather
	// than add a parameter that launch would not pass.
	api := strings.Replace(bfsWarp, "bfs<<<(n * 32 + 255) / 256, 256>>>(r, c, l, 0, n, ch);",
		"unsigned lv = 0; void *args[] = {&r, &c, &l, &lv, &n, &ch}; cudaLaunchKernel((void*)bfs, dim3(1), dim3(256), args, 0, 0);", 1)
	expectRefusal(t, api, "odt", CodeNotCSR, "colidx")
	ex := strings.Replace(bfsWarp, "void run(", "void run2(unsigned long long *r, unsigned *c, unsigned *l, unsigned long long n, bool *ch) {\n"+
		"  cudaLaunchKernelEx(&cfg, bfs, r, c, l, 0u, n, ch);\n}\nvoid run(", 1)
	expectRefusal(t, ex, "odt", CodeNotCSR, "colidx")
}
