package transform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderMacrosChooseTheRewrite: a warp-per-vertex walk whose shift
// and warp size come from a local header gets odt from --opt auto (the
// header is read for its macros), and without the header it gets no
// rewrite and says why; never claware (issue 17 item 4).
func TestHeaderMacrosChooseTheRewrite(t *testing.T) {
	src := `#include <cuda_runtime.h>
#include "helpers.h"
__global__ void walk(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned w = tid >> WARP_SHIFT, lane = tid & (WARP_SIZE - 1);
  if (w < n && label[w] == 0)
    for (unsigned e = rowptr[w] + lane; e < rowptr[w + 1]; e += WARP_SIZE) label[col[e]] = 0;
}
int main()
{
  const unsigned n = 1 << 16, m = 1 << 20;
  unsigned *rowptr, *col, *label;
  cudaMalloc(&rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&col, sizeof(unsigned) * m);
  cudaMalloc(&label, sizeof(unsigned) * n);
  walk<<<dim3(n / 8, 1), 256>>>(rowptr, col, label, n);
  return 0;
}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "walk.cu")
	flags, err := parseGoldenFlags("--auto --opt auto")
	if err != nil || flags.usage != nil {
		t.Fatalf("flags: %v %v", err, flags.usage)
	}
	messages := func() string {
		res, err := Run(path, []byte(src), flags.opts)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, d := range res.Diags {
			b.WriteString(d.Message + "\n")
		}
		return b.String()
	}
	got := messages()
	if !strings.Contains(got, "cannot tell a warp or lane id") || strings.Contains(got, "claware") || strings.Contains(got, "odt applied") {
		t.Errorf("without helpers.h: want a refusal naming the shift, got:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "helpers.h"), []byte("#pragma once\n#define WARP_SHIFT 5\n#define WARP_SIZE (1 << WARP_SHIFT)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = messages()
	if !strings.Contains(got, "odt applied (warp-per-vertex walk") || strings.Contains(got, "claware") {
		t.Errorf("with helpers.h: want odt on the warp-per-vertex walk, got:\n%s", got)
	}
}
