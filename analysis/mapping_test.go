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

// TestMappingAffineIDs: the thread id in the forms real kernels write it,
// and forms that are not a global thread id.
func TestMappingAffineIDs(t *testing.T) {
	const k = `#define BS 256
#define WARP_SHIFT 5
#define WARP_SIZE 32
__global__ void k(int *a, int n) { `
	cases := []struct {
		body            string
		tid, warp, lane string
		canonical       bool
		strays, unsure  int
	}{
		{`int i = blockIdx.x * 256 + threadIdx.x; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int i = threadIdx.x + BS * blockIdx.x; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int i = threadIdx.x + blockDim.x * blockIdx.x; a[i] = 0;`, "i", "", "", true, 0, 0},
		{`int i = __umul24(blockIdx.x, blockDim.x) + threadIdx.x; a[i] = 0;`, "i", "", "", true, 0, 0},
		{`int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int i = blockDim.x * BLOCK_SIZE * blockIdx.y + blockDim.x * blockIdx.x + threadIdx.x; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int i = (blockIdx.x << 8) + threadIdx.x; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int bx = blockIdx.x; int tx = threadIdx.x; int i = bx * BS + tx; a[i] = 0;`, "i", "", "", false, 0, 0},
		{`int bx = blockIdx.x, tx = threadIdx.x; int i = bx * blockDim.x + tx; a[i] = tx;`, "i", "", "", true, 1, 0},
		{`int t = blockIdx.x * blockDim.x + threadIdx.x; int w = t >> WARP_SHIFT; int l = t & (WARP_SIZE - 1); a[w] = l;`, "t", "w", "l", true, 0, 0},
		{`int t = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x; int w = t / WARP_SIZE; int l = t % 32; a[w] = l;`, "t", "w", "l", false, 0, 0},
		{`int t = blockIdx.x * blockDim.x + threadIdx.x; int w = t >> SHIFT_FROM_NOWHERE; a[w] = 0;`, "t", "", "", true, 0, 1},
		// not a global thread id
		{`int i = blockIdx.x + threadIdx.x; a[i] = 0;`, "", "", "", false, 2, 0},
		{`int i = blockIdx.x * blockDim.x + 2 * threadIdx.x; a[i] = 0;`, "", "", "", false, 2, 0},
		{`int i = blockIdx.x * blockDim.x + threadIdx.x + threadIdx.y; a[i] = 0;`, "", "", "", false, 3, 0},
		{`int i = blockIdx.x * n + threadIdx.x * n; a[i] = 0;`, "", "", "", false, 2, 0},
		{`int j = n; int i = blockIdx.x * j + threadIdx.x; a[i] = 0;`, "", "", "", false, 2, 0},
	}
	for _, c := range cases {
		src := k + c.body + " }"
		f := Analyze(parse.ParseFile("t.cu", []byte(src)))
		m := KernelMapping(f.Kernels()[0])
		if name(m.Tid) != c.tid || name(m.Warp) != c.warp || name(m.Lane) != c.lane || m.IsCanonicalTid() != c.canonical ||
			len(m.StrayIndex) != c.strays || len(m.Unsure) != c.unsure {
			t.Errorf("mapping of %s:\n got tid=%q warp=%q lane=%q canonical=%v strays=%d unsure=%d", c.body,
				name(m.Tid), name(m.Warp), name(m.Lane), m.IsCanonicalTid(), len(m.StrayIndex), len(m.Unsure))
		}
	}
}
