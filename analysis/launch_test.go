package analysis

import (
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

func TestLaunches(t *testing.T) {
	f := Analyze(parse.ParseFile("t.cu", []byte(`template <int B> __global__ void k(float *a) {}
		namespace ns { __global__ void j(int *x) {} }
		int main() { float *d; k<256><<<1, 256>>>(d); ns::j<<<2, 32, 0, 0>>>(0); }`)))
	if got := len(f.LaunchesOf("k")); got != 1 {
		t.Errorf("launches of k = %d, want 1", got)
	}
	l := f.LaunchesOf("j")
	if len(l) != 1 || l[0].Caller != "main" || len(l[0].Expr.Config) != 4 {
		t.Errorf("launches of j = %+v", l)
	}
}

// Launches through the runtime API are launch sites too: the kernel is
// named through casts, & and template arguments; the configuration and
// the arguments are mapped where the call spells them out.
func TestRuntimeAPILaunches(t *testing.T) {
	f := Analyze(parse.ParseFile("t.cu", []byte(`template <typename T> __global__ void kern(T *a, int n) {}
		namespace ns { __global__ void k2(float *a, int n) {} }
		int main() {
		  void *args[] = {&d, &n};
		  cudaLaunchKernel((void*)ns::k2, grid, block, args, 0, stream);
		  cudaLaunchKernel(ns::k2, dim3(4), dim3(256), args);
		  cudaLaunchCooperativeKernel((const void*)&kern<float>, grid, block, args, shmem, s);
		  CHECK(cudaLaunchKernel(reinterpret_cast<void*>(&kern<int>), grid, block, args, 0, 0));
		  cudaLaunchKernelEx(&cfg, kern<float>, d, n);
		  cudaLaunchKernelExC(&cfg, (const void*)kern<float>, args);
		  err = ::cudaLaunchCooperativeKernel<float>(kern<float>, grid, block, args);
		  cudaLaunchKernel(table[0], grid, block, args);
		  kern<float><<<grid, block>>>(d, n);
		}`)))
	var got []string
	for _, l := range f.Launches {
		got = append(got, launchSummary(f, l))
	}
	want := []string{
		"k2 via cudaLaunchKernel config=[grid block 0 stream] args=[] array=args",
		"k2 via cudaLaunchKernel config=[dim3(4) dim3(256)] args=[] array=args",
		"kern via cudaLaunchCooperativeKernel config=[grid block shmem s] args=[] array=args",
		"kern via cudaLaunchKernel config=[grid block 0 0] args=[] array=args",
		"kern via cudaLaunchKernelEx config=[] struct=&cfg args=[d n]",
		"kern via cudaLaunchKernelExC config=[] struct=&cfg args=[] array=args",
		"kern via cudaLaunchCooperativeKernel config=[grid block] args=[] array=args",
		"kern config=[grid block] args=[d n]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("launches\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	if l := f.LaunchesOf("kern"); len(l) != 6 || l[0].Caller != "main" || l[0].Pos() == 0 {
		t.Errorf("launches of kern = %+v", l)
	}
}

// A port's launches that choose a kernel's direct clone are launches of
// the kernel: the picking form and both launches of the guarded form (an
// odt launch and its clone's). A clone launched on its own, or guarded by
// another condition, is a launch of the clone.
func TestCloneLaunches(t *testing.T) {
	f := Analyze(parse.ParseFile("t.cu", []byte(`__global__ void k(int *a) {}
		__global__ void k_bam_direct(int *a) {}
		int main() {
		  (bam::all_direct(a) ? k_bam_direct : k)<<<1, 32>>>(a);
		  if (bam::all_direct(a)) { k_bam_direct<<<1, 32>>>(a); } else {
		  k<<<2, 64>>>(a, plan); }
		  k_bam_direct<<<1, 32>>>(a);
		  if (fits(a)) { k_bam_direct<<<1, 32>>>(a); } else { k<<<2, 64>>>(a); }
		  if (bam::all_direct(a)) { k_bam_direct<<<1, 32>>>(a); } else { other<<<2, 64>>>(a); }
		}`)))
	var got []string
	for _, l := range f.Launches {
		got = append(got, l.Kernel)
	}
	want := "k k k k_bam_direct k_bam_direct k k_bam_direct other"
	if strings.Join(got, " ") != want {
		t.Errorf("launched kernels %q, want %q", strings.Join(got, " "), want)
	}
}
