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
