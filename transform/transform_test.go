package transform

import (
	"os"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/transform/opt"
	"github.com/bamgen/bamgen/transform/port"
)

// TestAnalyzeOncePerFile: the port (with --auto, which reads the analysis)
// and the rewrites (--opt auto) share one analysis of the file.
func TestAnalyzeOncePerFile(t *testing.T) {
	src, err := os.ReadFile("../testdata/kernels/bfs_warp/bfs_warp.cu")
	if err != nil {
		t.Fatal(err)
	}
	rw, err := opt.Parse("auto", 32)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{Port: port.Options{Auto: true}, Opt: &rw},
		{Port: port.Options{Auto: true, Ref: true}, Opt: &rw},
		{Port: port.Options{Arrays: []string{"nope"}}},
		{},
	} {
		before := analysis.Analyses()
		res, err := Run("bfs_warp.cu", src, opts)
		if err != nil {
			t.Fatal(err)
		}
		if n := analysis.Analyses() - before; n != 1 {
			t.Errorf("options %+v: %d analyses of one file, want 1", opts.Port, n)
		}
		if opts.Opt != nil && !res.Changed {
			t.Errorf("options %+v: nothing was ported, so the count proves little", opts.Port)
		}
	}
}

// TestRunHandsPortToRewrites checks the typed hand-off: odt reads the
// launch arguments as the port leaves them and the whole result applies.
func TestRunHandsPortToRewrites(t *testing.T) {
	src, err := os.ReadFile("../testdata/kernels/bfs_warp/bfs_warp.cu")
	if err != nil {
		t.Fatal(err)
	}
	rw, err := opt.Parse("odt", 32)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run("bfs_warp.cu", src, Options{Port: port.Options{Auto: true}, Opt: &rw})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Output), "bam::odt_plan_of(") {
		t.Errorf("odt was not applied:\n%s", res.Output)
	}
	plain, err := Run("bfs_warp.cu", src, Options{Port: port.Options{Auto: true}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Output), "bam::odt") {
		t.Error("without --opt the pipeline must not rewrite access patterns")
	}
}

// TestODTLaunchGuardedByClone: a template warp-per-vertex kernel odt
// rewrites keeps its direct clone, and each launch chooses it, with its template arguments
// and the launch's configuration and arguments as written, when every
// array is direct; porting the output again changes nothing.
func TestODTLaunchGuardedByClone(t *testing.T) {
	const kernel = `#include <cuda_runtime.h>
template <typename T>
__global__ void walk(const unsigned *rowptr, const T *colidx, unsigned *level, unsigned n, unsigned cur)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned v = tid / 32;
    const unsigned lane = threadIdx.x % 32;
    if (v < n && level[v] == cur)
        for (unsigned e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32)
            if (level[colidx[e]] == 0xffffffffu) level[colidx[e]] = cur + 1;
}
`
	rw, err := opt.Parse("odt", 32)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Port: port.Options{Arrays: []string{"colidx"}}, Opt: &rw}
	src := kernel + `int main()
{
    const unsigned n = 1024;
    unsigned *rowptr, *colidx, *level;
    cudaMalloc(&rowptr, (n + 1) * sizeof(unsigned));
    cudaMalloc(&colidx, 4 * n * sizeof(unsigned));
    cudaMalloc(&level, n * sizeof(unsigned));
    walk<unsigned><<<n * 32 / 128, 128, 0, 0>>>(rowptr, colidx, level, n, 0);
    return 0;
}
`
	res, err := Run("walk.cu", []byte(src), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	for _, want := range []string{
		"if (bam::all_direct(colidx_bam)) { walk_bam_direct<unsigned><<<n * 32 / 128, 128, 0, 0>>>(rowptr, colidx_bam, level, n, 0); } else {\n",
		"    walk<unsigned><<<bam::odt_grid(",
		"level, n, 0, bam::odt_plan_of(rowptr, n, colidx_bam)); }\n",
		"__global__ void walk_bam_direct(const unsigned *rowptr, bam::array<const T> colidx,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	again, err := Run("walk.cu", res.Output, opts)
	if err != nil || string(again.Output) != out {
		t.Errorf("porting the output again changes it (%v)", err)
	}

	// Thread per vertex: odt hands out only the frontier's vertices, which
	// beats the original also on direct data: no clone, a note says why.
	thread := strings.NewReplacer(
		"const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;\n    const unsigned v = tid / 32;\n    const unsigned lane = threadIdx.x % 32;\n",
		"const unsigned v = blockIdx.x * blockDim.x + threadIdx.x;\n",
		"rowptr[v] + lane; e < rowptr[v + 1]; e += 32", "rowptr[v]; e < rowptr[v + 1]; e++").Replace(src)
	res, err = Run("walk.cu", []byte(thread), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Output); strings.Contains(out, "walk_bam_direct") || !strings.Contains(out, "bam::odt_plan_of(") {
		t.Errorf("a thread-per-vertex odt kernel got a clone, or lost odt:\n%s", out)
	}
	noted := false
	for _, d := range res.Diags {
		noted = noted || (d.Code == port.CodeNoDirectClone && strings.Contains(d.Message, "frontier"))
	}
	if !noted {
		t.Errorf("no PORT095 note says why the thread-per-vertex odt kernel has no clone: %v", res.Diags)
	}
}
