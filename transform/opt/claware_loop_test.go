package opt

import (
	"strings"
	"testing"
)

// Grid-stride loops whose indices cannot be dealt out to other threads.
func TestClawareLoopRefusals(t *testing.T) {
	loop := func(body string) string {
		return "__global__ void f(float *p, float *out, int n, int *m) {\n  float acc = 0;\n" +
			"  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) { " + body + " }\n" +
			"  atomicAdd(out, acc);\n}\n"
	}
	for _, body := range []string{"acc += p[i];", "if (p[i] < 0) break; p[i] = 1;", "if (p[i] < 0) return; p[i] = 1;", "n = 3; p[i] = 1;"} {
		expectRefusal(t, loop(body), "claware", CodeUnsafeWrites, "p")
	}
	// The bound must be the same for every thread, with no side effects.
	for _, cond := range []string{"i < p[0]", "i < (*m)++", "i != n"} {
		src := strings.Replace(loop("p[i] = 1;"), "i < n;", cond+";", 1)
		expectRefusal(t, src, "claware", CodeNoThreadID, "p")
	}
}
