package opt

import (
	"strings"
	"testing"
)

// The lambda, the guard and the driver go on lines of their own, indented
// like the body with the file's indent unit, whatever the layout of the
// kernel's braces; the body's lines are left as they were.
func TestWrapLayout(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"brace on its own line, tabs", "__global__ void add(float *c, int n)\n{\n\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n\tif (i < n)\n\t\tc[i] = 0;\n}\n",
			"__global__ void add(float *c, int n)\n{\n\tauto bam_body = [&](const unsigned long long bam_v) {\n#line 3 \"k.cu\"\n" +
				"\tint i = static_cast<int>(bam_v);\n\tif (i < n)\n\t\tc[i] = 0;\n" +
				"\t};\n\tbam::for_each_thread_by_line<32>(bam::min_elems_per_line(c), bam_body);\n#line 6 \"k.cu\"\n}\n"},
		{"one-line body", "__global__ void add(float *c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = 0; }\n",
			"__global__ void add(float *c, int n) {\n    auto bam_body = [&](const unsigned long long bam_v) {\n#line 1 \"k.cu\"\n" +
				"    int i = static_cast<int>(bam_v); if (i < n) c[i] = 0;\n" +
				"    };\n    bam::for_each_thread_by_line<32>(bam::min_elems_per_line(c), bam_body);\n#line 1 \"k.cu\"\n}\n"},
		{"comment after the brace, closing brace after code", "__global__ void add(float *c, int n) { // add\n   int i = blockIdx.x * blockDim.x + threadIdx.x;\n   c[i] = 0; }\n",
			"__global__ void add(float *c, int n) { // add\n   auto bam_body = [&](const unsigned long long bam_v) {\n#line 2 \"k.cu\"\n" +
				"   int i = static_cast<int>(bam_v);\n   c[i] = 0;\n" +
				"   };\n   bam::for_each_thread_by_line<32>(bam::min_elems_per_line(c), bam_body);\n#line 3 \"k.cu\"\n}\n"},
		{"CRLF line ends", "__global__ void add(float *c, int n)\r\n{\r\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\r\n  c[i] = 0;\r\n}\r\n",
			"__global__ void add(float *c, int n)\r\n{\r\n  auto bam_body = [&](const unsigned long long bam_v) {\r\n#line 3 \"k.cu\"\n" +
				"  int i = static_cast<int>(bam_v);\r\n  c[i] = 0;\r\n" +
				"  };\r\n  bam::for_each_thread_by_line<32>(bam::min_elems_per_line(c), bam_body);\r\n#line 5 \"k.cu\"\n}\r\n"},
	} {
		src := tc.src + "void run(float *c, int n) { add<<<n / 256, 256>>>(c, n); }\n"
		out, _ := runOpt(t, src, "claware", "c")
		if !strings.HasPrefix(out, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, out, tc.want)
		}
	}
}

func TestIndentUnit(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"f() {\n  a;\n  if (x) {\n    b;\n  }\n}\n", "  "},
		{"f() {\n    a;\n    g(1,\n      2);\n    if (x) {\n        b;\n    }\n}\n", "    "},
		{"f() {\n\ta;\n\tif (x) {\n\t\tb;\n\t}\n}\n", "\t"},
		{"f();\n", "    "},
	} {
		if got := indentUnit([]byte(tc.src)); got != tc.want {
			t.Errorf("indentUnit(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
