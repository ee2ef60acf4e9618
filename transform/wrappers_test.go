package transform

import (
	"strings"
	"testing"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/transform/port"
)

const wrappedProgram = `#include <cuda_runtime.h>
template <typename T> void upload(T* d, const T* h, size_t n) { cudaMemcpy((void*)d, (void*)h, n * sizeof(T), cudaMemcpyHostToDevice); }
template <typename T> void dealloc(T* p) { cudaFree((void*)p); }

__global__ void k(const float* a, const int* t, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + t[i % 8];
}

int main()
{
    const int n = 1 << 20;
    float *a, *out; int* t;
    float* h = new float[n]; int ht[8] = {0};
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&a, n * sizeof(float)); upload<float>(a, h, n); printf("%p\n", (void*)out);
    cudaMalloc(&t, 8 * sizeof(int)); upload<int>(t, ht, 8);
    k<<<n / 256, 256>>>(a, t, out, n);
    cudaMemcpy(h, out, n * sizeof(float), cudaMemcpyDeviceToHost);
    dealloc<float>(a); dealloc<int>(t);
    return 0;
}
`

// TestWrapperDiagnosticsAtTheFilesPositions: when the port keeps inlined
// wrapper calls, every diagnostic still points into the file as written,
// also after an inlined call on the same line (the printf); the
// calls on buffers that stay pointers (t, not chosen; out, refused) keep
// their text; and a file without wrappers to inline is ported as before.
func TestWrapperDiagnosticsAtTheFilesPositions(t *testing.T) {
	res, err := Run("w.cu", []byte(wrappedProgram), Options{Port: port.Options{Arrays: []string{"k:a", "k:out"}}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if !strings.Contains(out, "array_from_host<float>((const float *)(h), n)") {
		t.Errorf("a's upload was not inlined and rewritten:\n%s", out)
	}
	if !strings.Contains(out, "upload<int>(t, ht, 8);") || !strings.Contains(out, "dealloc<int>(t);") {
		t.Errorf("the calls on t, which stays a pointer, lost their text:\n%s", out)
	}
	var notes, refusals int
	for _, d := range res.Diags {
		at := wrappedProgram[d.Pos:]
		switch d.Code {
		case port.CodeWrapperInlined:
			notes++
			if !strings.HasPrefix(at, "upload<float>(a, h, n);") && !strings.HasPrefix(at, "dealloc<float>(a);") {
				t.Errorf("PORT096 at %q, not at an inlined call", firstLine(at))
			}
		case port.CodeHostUse:
			refusals++
			// the printf after the inlined upload on the same line
			if want := strings.Index(wrappedProgram, "out);"); d.Pos != want {
				t.Errorf("PORT032 for out at offset %d (%q), want %d, its printf", d.Pos, firstLine(at), want)
			}
		}
		if d.Severity == diag.Error {
			t.Errorf("error: %s", d.Message)
		}
	}
	if notes != 2 || refusals != 1 {
		t.Errorf("%d PORT096 notes (want 2), %d PORT032 (want 1): %v", notes, refusals, res.Diags)
	}
	plain := strings.Replace(strings.Replace(wrappedProgram, "upload<float>(a, h, n);", "cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);", 1),
		"dealloc<float>(a);", "cudaFree(a);", 1)
	res2, err := Run("w.cu", []byte(plain), Options{Port: port.Options{Arrays: []string{"k:a", "k:out"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res2.Diags {
		if d.Code == port.CodeWrapperInlined {
			t.Errorf("PORT096 without a wrapper call: %s", d.Message)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
