package opt

import (
	"strings"
	"testing"
)

func TestODT(t *testing.T) {
	expectRewrite(t, bfsWarp, "odt", []string{"colidx"},
		"bool *changed, const bam::odt_plan bam_plan)",
		"bam::odt_first_strided((start & ~31ull) + lane, bam_lo, WARP_SIZE)",
		"(e < end) && e < bam_hi",
		"bool *changed, const bam::odt_plan bam_plan) {\n  bam::odt_tile bam_tile(colidx);\n"+
			"  auto bam_body = [&](const unsigned long long bam_v, const unsigned long long bam_lo, const unsigned long long bam_hi) {\n"+
			"#line 4 \"k.cu\"\n  const unsigned long long tid =",
		"unsigned v = bam_tile[e];",
		"    }\n  }\n  };\n  auto bam_active = [&](const unsigned long long bam_v) -> bool {\n"+
			"    const unsigned long long w = static_cast<unsigned long long>(bam_v);\n"+
			"    return (w < n && label[w] == level);\n  };\n"+
			"  bam::odt_for_each_tile(bam_plan, rowptr, bam_tile, bam_body, bam_active);\n#line 17 \"k.cu\"\n}\n",
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
	expectRewrite(t, early, "odt", []string{"colidx"}, "return !(w >= n) && !(label[w] != level);\n  };")
	otherLocal := strings.Replace(bfsWarp, "  if (w < n && label[w] == level) {", "  if (lane > 40) return;\n  if (w < n && label[w] == level) {", 1)
	expectRewrite(t, otherLocal, "odt", []string{"colidx"}, "return (w < n && label[w] == level);\n  };")
	effect := strings.Replace(bfsWarp, "  if (w < n && label[w] == level) {", "  *changed = true;\n  if (w < n && label[w] == level) {", 1)
	out, _ := runOpt(t, effect, "odt", "colidx")
	if !strings.Contains(out, "bam_body") || strings.Contains(out, "bam_active") {
		t.Errorf("a store before the guard must keep the driver from testing it early:\n%s", out)
	}
	// Calls known to be pure (__ldg, min, ...) are fine in a guard.
	ldg := strings.Replace(bfsWarp, "label[w] == level", "__ldg(&label[w]) == level", 1)
	expectRewrite(t, ldg, "odt", []string{"colidx"}, "return (w < n && __ldg(&label[w]) == level);\n  };")
}

// Reads of the edge array at the loop variable go through the tile view;
// anything else (another index, a body that moves e) keeps the cache path.
func TestODTTileReads(t *testing.T) {
	other := strings.Replace(bfsWarp, "unsigned v = colidx[e];", "unsigned v = colidx[e] + colidx[start];", 1)
	expectRewrite(t, other, "odt", []string{"colidx"}, "unsigned v = bam_tile[e] + colidx[start];")
	moved := strings.Replace(bfsWarp, "unsigned v = colidx[e];", "unsigned v = colidx[e]; e += 0;", 1)
	expectRewrite(t, moved, "odt", []string{"colidx"}, "unsigned v = colidx[e]; e += 0;",
		"  bam::odt_for_each_tile(bam_plan, rowptr, colidx.size(), colidx.elems_per_line(), bam_body);\n#line")
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
