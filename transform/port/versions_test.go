package port

import (
	"strings"
	"testing"
)

func TestKernelVersions(t *testing.T) {
	cases := []struct {
		name, in string
		opts     Options
		want     string // a line the output must hold ("" : no wrapper at all)
	}{
		{"ported params only, in parameter order",
			"__global__ void k(float* out, int n, const float* in, int* flags) {\n    if (n) out[0] = in[0] + flags[0];\n}\n",
			Options{Arrays: []string{"in", "out"}},
			"    bam::by_placement([&](auto out, auto in) {\n#line 2 \"input.cu\"\n    if (n) out[0] = in[0] + flags[0];\n    }, out, in);\n#line 3 \"input.cu\"\n}\n"},
		{"tabs: the body's indentation",
			"__global__ void k(float* p)\n{\n\tp[0] = 1;\n}\n",
			Options{Arrays: []string{"p"}},
			"{\n\tbam::by_placement([&](auto p) {\n"},
		{"single version on request",
			"__global__ void k(float* p) {\n    p[0] = 1;\n}\n",
			Options{Arrays: []string{"p"}, SingleVersion: true},
			""},
		{"helpers are not wrapped",
			"__device__ void h(float* p) {\n    p[0] = 1;\n}\n__global__ void k(float* p) {\n    h(p);\n}\n",
			Options{Arrays: []string{"p"}},
			"__device__ void h(bam::array<float> p) {\n    p[0] = 1;\n}\n"},
		{"a prototype keeps its shape",
			"__global__ void k(float* p);\n__global__ void k(float* p) {\n    p[0] = 1;\n}\n",
			Options{Arrays: []string{"p"}},
			"__global__ void k(bam::array<float> p);\n"},
	}
	for _, c := range cases {
		res, diags := portForTest(t, []byte(c.in), c.opts)
		out := string(res.Output)
		wrapped := strings.Count(out, "bam::by_placement(")
		switch {
		case c.want == "" && wrapped != 0:
			t.Errorf("%s: wrapped:\n%s", c.name, out)
		case c.want != "" && !strings.Contains(out, c.want):
			t.Errorf("%s: output lacks %q:\n%s\n%s", c.name, c.want, out, diags)
		case c.want != "" && wrapped != 1:
			t.Errorf("%s: %d wrappers, want 1:\n%s", c.name, wrapped, out)
		}
		checkIdempotent(t, res.Output, c.opts)
	}
}
