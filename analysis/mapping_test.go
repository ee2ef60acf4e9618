package analysis

import (
	"testing"

	"github.com/bamgen/bamgen/parse"
)

func TestMapping(t *testing.T) {
	cases := []struct {
		src              string
		tid, warp, lane  string
		blockers, strays int
	}{
		{`__global__ void k(int *a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] = 0; }`, "i", "", "", 0, 0},
		{`#define WS 32
		__global__ void k(int *a) { unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
		  unsigned long long w = g / WS; int l = threadIdx.x % 32; a[w] = l; }`, "g", "w", "l", 0, 0},
		{`__global__ void k(int *a) { __shared__ int s[32]; int i = blockIdx.x * blockDim.x + threadIdx.x;
		  s[threadIdx.x] = a[i]; __syncthreads(); a[i] = s[0]; }`, "i", "", "", 2, 1},
		{`__global__ void k(int *a) { int i = blockIdx.x * blockDim.x + threadIdx.x; i += 1; a[i] = 0; }`, "i", "", "", 0, 0},
	}
	for _, c := range cases {
		f := Analyze(parse.ParseFile("t.cu", []byte(c.src)))
		m := KernelMapping(f.Kernels()[0])
		if name(m.Tid) != c.tid || name(m.Warp) != c.warp || name(m.Lane) != c.lane ||
			len(m.Blockers) != c.blockers || len(m.StrayIndex) != c.strays {
			t.Errorf("mapping of %s:\n got tid=%q warp=%q lane=%q blockers=%d strays=%d", c.src,
				name(m.Tid), name(m.Warp), name(m.Lane), len(m.Blockers), len(m.StrayIndex))
		}
	}
}
