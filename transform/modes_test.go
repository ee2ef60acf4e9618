package transform

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/transform/opt"
	"github.com/bamgen/bamgen/transform/port"
)

// TestBfsModesPortsWithOdt is issue 17's acceptance program as bamgen sees
// it: bfs_modes allocates its edge array per memory mode (a switch over
// cudaMalloc, cudaMallocManaged, cudaHostAlloc and a device view), forms
// its thread id on a 2-D grid and takes its warp macros from a local
// header. `port --auto --opt auto` must port the edge array in every mode,
// pick and apply odt for the warp-per-vertex walk, and be idempotent. (That
// the port gives the original's results is the GPU difftest's job:
// bench/difftest/configs/bfs_modes.args runs each mode.)
func TestBfsModesPortsWithOdt(t *testing.T) {
	const name = "../testdata/kernels/bfs_modes/bfs_modes.cu"
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := opt.Parse("auto", 32)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Port: port.Options{Auto: true}, Opt: &rw}
	res, err := Run(name, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diags {
		if d.Severity != diag.Note {
			t.Errorf("unexpected %s: %s [%s]", d.Severity, d.Message, d.Code)
		}
	}
	ported := map[string]bool{}
	for _, ch := range res.Choices {
		ported[ch.Param] = ch.Ported
	}
	for _, p := range []string{"rowptr", "edges", "label"} {
		if !ported[p] {
			t.Errorf("%s is not ported", p)
		}
	}
	out := string(res.Output)
	for _, want := range []string{
		"bam::odt_tile bam_tile(edges);", // odt applied to the walk over edges
		"bam::odt_plan_of(rowptr_d_bam, n, edges_d_bam)",
		"bam::array<uint32_t> edges_d_bam;\n", // on a line of its own before the switch
		"edges_d_bam = bam_rt.array_from_host<uint32_t>(h_edges.data(), edge_bytes / sizeof(uint32_t));",
		"edges_d_bam = bam_rt.array_from_host<uint32_t>(edges_d, edge_bytes / sizeof(uint32_t));\n    cudaFree(edges_d);\n",
		"edges_d_bam = bam_rt.array_from_host<uint32_t>(edges_d, edge_bytes / sizeof(uint32_t));\n    cudaFreeHost(edges_d);\n",
		"edges_d_bam = bam_rt.array_from_host<uint32_t>(edges_h, edge_bytes / sizeof(uint32_t));",
		"CUDA_CHECK(cudaFreeHost(edges_h));", // the device view's host buffer is the program's to free
		"bam_rt.drop_cache(); /* bamgen: edges_d_bam keeps its contents; moving edges_d to edges_tmp only emptied the cache */",
		"bam_rt.fill_bytes(label_d_bam, 0, 0xFF, sizeof(uint32_t) * n);", // labels reset before each later run
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the port lacks %q", want)
		}
	}
	// Every free of the edge array became the array's free, once per mode.
	if n := strings.Count(out, "bam_rt.free(edges_d_bam);"); n != 2 {
		t.Errorf("%d frees of edges_d_bam, want 2 (one per free statement of the original)", n)
	}
	if regexp.MustCompile(`(?m)^\s*CUDA_CHECK\(cudaFree(Host)?\(edges_d\)\)`).MatchString(out) {
		t.Error("a free of edges_d is left in the port")
	}
	noted := false
	for _, d := range res.Diags {
		if d.Code == port.CodeModesCollapsed {
			noted = strings.Contains(d.Message, "case MEM_DEVICE (cudaMalloc)") && strings.Contains(d.Message, "case MEM_HOST_VIEW (cudaHostGetDevicePointer of edges_h)")
		}
	}
	if !noted {
		t.Errorf("no PORT093 note naming the modes")
	}
	again, err := Run(name, res.Output, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed {
		t.Errorf("a second port changes the output (not idempotent)")
	}
}
