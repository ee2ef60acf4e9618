package port

import (
	"strings"
	"testing"
)

// apiKernel is a kernel with one ported parameter, launched from main
// through whatever launchLines do after d is allocated.
func apiProgram(launchLines string) string {
	return "__global__ void k(float* p, int n) { p[0] = n; }\n" +
		"__global__ void other(float* q, int n) { q[0] = n; }\n" +
		"void note(void**);\n" +
		"int main() {\n int n = 4; float* d;\n cudaMalloc(&d, n * sizeof(float));\n" +
		launchLines + "\n cudaFree(d);\n return 0;\n}\n"
}

// TestAPILaunchPorted checks the rewritten launch lines of the forms that
// are exact.
func TestAPILaunchPorted(t *testing.T) {
	cases := map[string]string{
		" cudaLaunchKernelEx(&cfg, k, d, n);":                                                                          " cudaLaunchKernelEx(&cfg, k, d_bam, n);",
		" void* args[] = {&d, &n}; cudaLaunchKernel((void*)k, 1, 1, args, 0, 0);":                                      " void* args[] = {&d_bam, &n}; cudaLaunchKernel((void*)k, 1, 1, args, 0, 0);",
		" void *a[2] = {(void*)&d, &n}; cudaLaunchCooperativeKernel(k, 1, 1, (void**)a, 0, 0);":                        " void *a[2] = {(void*)&d_bam, &n}; cudaLaunchCooperativeKernel(k, 1, 1, (void**)a, 0, 0);",
		" void* a[] = {&d, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0); cudaLaunchKernel((void*)k, 2, 1, a, 0, 0);": " void* a[] = {&d_bam, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0); cudaLaunchKernel((void*)k, 2, 1, a, 0, 0);",
		" void* a[] = {&d, &n}; cudaLaunchKernelExC(&cfg, (const void*)k, a);":                                         " void* a[] = {&d_bam, &n}; cudaLaunchKernelExC(&cfg, (const void*)k, a);",
	}
	for in, want := range cases {
		res, diags := portForTest(t, []byte(apiProgram(in)), Options{Arrays: []string{"k:p"}})
		if !strings.Contains(string(res.Output), "\n"+want+"\n") {
			t.Errorf("%s\ngot\n%s\ndiagnostics:\n%s", in, res.Output, diags)
		}
		again, _ := portForTest(t, res.Output, Options{Arrays: []string{"k:p"}})
		if again.Changed {
			t.Errorf("%s: porting the output again changed it:\n%s", in, again.Output)
		}
	}
}

// TestAPILaunchRefused checks that every launch bamgen cannot rewrite
// exactly leaves the file unchanged, with the code that says why.
func TestAPILaunchRefused(t *testing.T) {
	cases := map[string]string{
		" static void* a[] = {&d, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                         CodeArgsArray,
		" void* a[2]; a[0] = &d; a[1] = &n; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                    CodeArgsArray,
		" void* a[] = {&d, &n}; void** pa = a; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                 CodeArgsArray,
		" void* a[] = {&d, &n}; note(a); cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                       CodeArgsArray,
		" void* a[] = {&d, &n, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                            CodeArgsArray,
		" cudaLaunchKernel((void*)k, 1, 1, nullptr, 0, 0);":                                                                CodeArgsArray,
		" void* a[] = {d, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                                                 CodeArgsEntry,
		" float* e = d + 1; void* a[] = {&e, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0);":                              CodeHostUse,
		" void* a[] = {&d, &n}; cudaLaunchKernel((void*)k, 1, 1, a, 0, 0); cudaLaunchKernel((void*)other, 1, 1, a, 0, 0);": CodeHostUse,
		" cudaLaunchKernel(n > 1 ? (void*)k : nullptr, 1, 1, nullptr, 0, 0);":                                              CodeKernelRef,
	}
	for in, code := range cases {
		res, diags := portForTest(t, []byte(apiProgram(in)), Options{Arrays: []string{"k:p"}})
		if res.Changed {
			t.Errorf("%s: refused launch was rewritten:\n%s", in, res.Output)
		}
		if !strings.Contains(diags, "["+code+"]") {
			t.Errorf("%s: want %s, got:\n%s", in, code, diags)
		}
	}
}
