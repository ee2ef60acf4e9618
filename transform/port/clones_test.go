package port

import (
	"strings"
	"testing"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/parse"
)

// TestCloneLaunchGuards: where a launch statement can become the choice
// between the clone's launch and its own (used where odt changes the
// launch), and why not elsewhere.
func TestCloneLaunchGuards(t *testing.T) {
	const kernel = "__global__ void k(float* p, int n) {\n    if (n) p[0] = 1;\n}\n"
	cases := []struct {
		name, body string
		guard      string // how the guard's first edit ends, or "" (why says why not)
		why        string
	}{
		{"a statement", "    k<<<1, 32>>>(p, n);\n",
			"if (bam::all_direct(p_bam)) { k_bam_direct<<<1, 32>>>(p_bam, n); } else {\n    k", ""},
		{"a multi-line statement keeps its lines", "    k<<<1,\n      32, 0, s>>>(p,\n      n);\n",
			"if (bam::all_direct(p_bam)) { k_bam_direct<<<1,\n      32, 0, s>>>(p_bam,\n      n); } else {\n    k", ""},
		{"an unbraced if branch", "    if (n) k<<<1, 32>>>(p, n); else n = 0;\n",
			"if (bam::all_direct(p_bam)) { k_bam_direct<<<1, 32>>>(p_bam, n); } else {\n    k", ""},
		{"inside an expression", "    int e = (k<<<1, 32>>>(p, n), 0);\n", "", "not a statement of its own"},
		{"a prototype", "", "", "prototype"},
	}
	for _, c := range cases {
		main := "int main() {\n    int n = 16;\n    cudaStream_t s = 0;\n    float* p;\n    cudaMalloc(&p, n * sizeof(float));\n"
		src := kernel + main + c.body + "}\n"
		if c.name == "a prototype" {
			src = "__global__ void k(float* p, int n);\n" + main + "    k<<<1, 32>>>(p, n);\n}\n" + kernel
		}
		f := parse.ParseFile("input.cu", []byte(src))
		res, err := Port(f, analysis.AnalyzeDevice(f), Options{Arrays: []string{"p"}})
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "a prototype" {
			if len(res.Clones) != 0 || len(res.NoClones) != 1 || !strings.Contains(res.NoClones[0].Why, "prototype") {
				t.Errorf("%s: want no clone, got %d clones, %+v", c.name, len(res.Clones), res.NoClones)
			}
			continue
		}
		var launches []CloneLaunch
		for _, cl := range res.Clones {
			launches = append(launches, cl.Launches...)
		}
		if c.guard == "" {
			// The picking form still works inside an expression.
			if len(launches) != 1 || launches[0].Pick == nil || launches[0].Guard != nil || !strings.Contains(launches[0].NoGuard, c.why) {
				t.Errorf("%s: want a picking launch that cannot be guarded because %q, got %+v", c.name, c.why, launches)
			}
			continue
		}
		if len(launches) != 1 || len(launches[0].Guard) != 2 {
			t.Fatalf("%s: want one guarded launch, got %+v (no clones %+v)", c.name, launches, res.NoClones)
		}
		g := launches[0].Guard
		if !strings.HasSuffix(g[0].New, c.guard) || !g[0].Repeats || g[1].New != "; }" || src[g[1].Start] != ';' {
			t.Errorf("%s: guard edits %+v, want the first ending %q", c.name, g, c.guard)
		}
	}
}
