package opt

import (
	"strings"
	"testing"
)

func TestClaware(t *testing.T) {
	expectRewrite(t, vecAdd, "claware", []string{"a", "b", "c"},
		"int n) {\n  auto bam_body = [&](const unsigned long long bam_v) {\n#line 2 \"k.cu\"\n  int i = static_cast<int>(bam_v);",
		"c[i] = a[i] + b[i];\n  };\n  bam::for_each_thread_by_line<32>(bam::min_elems_per_line(c, a, b), bam_body);\n#line 4 \"k.cu\"\n}\n")
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

func TestTransposeAndCoarsen(t *testing.T) {
	expectRewrite(t, bfsWarp, "transpose", []string{"colidx"},
		"const unsigned long long tid = static_cast<unsigned long long>(bam_v * 32ull + (threadIdx.x & 31u));",
		"  bam::for_each_warp_transposed(128ull, bam_body);\n#line 17 \"k.cu\"\n}")
	out, _ := runOpt(t, bfsWarp, "coarsen", "colidx")
	if !strings.Contains(out, "bam::for_each_warp_coarsened<8>(bam_body)") {
		t.Errorf("coarsen output:\n%s", out)
	}
	expectRefusal(t, vecAdd, "transpose", CodeNoWarpID, "a")
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
