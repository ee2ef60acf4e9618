package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// nvccLinesInput has an odt kernel (warp per vertex, so its launch is
// guarded by its direct clone's), a claware kernel and host code with a
// multi-line statement, and a deliberate compile error (an undefined
// name, undefined_*) inside each kernel's body, in a kernel after the
// rewritten ones, on the second line of the odt launch (which bamgen
// copies into the launch of the kernel's direct clone), in an unbraced
// loop body that gets braces and a launch check, and in main after the
// rewritten allocation and a synchronization check (statements bamgen
// inserts on lines of their own).
const nvccLinesInput = `#include <cuda_runtime.h>

__global__ void walk(const unsigned *rowptr, const unsigned *colidx, unsigned *level, unsigned n, unsigned cur)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned v = tid / 32;
    const unsigned lane = threadIdx.x % 32;
    if (v < n && level[v] == cur)
        for (unsigned e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32) {
            int bad = undefined_in_walk;
            if (level[colidx[e]] == 0xffffffffu) level[colidx[e]] = cur + 1;
        }
}

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= undefined_in_scale;
}

__global__ void after(int *p) { p[0] = undefined_after_kernels; }

int main()
{
    const unsigned n = 1 << 16, m = 1 << 20;
    unsigned *rowptr, *colidx, *level;
    float *x;
    cudaMalloc(&rowptr, (n + 1) * sizeof(unsigned));
    cudaMalloc(&colidx,
               m * sizeof(unsigned));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&level, n * sizeof(unsigned));
    walk<<<n / 256, 256>>>(rowptr, colidx, level,
                           n, undefined_in_launch);
    scale<<<n / 256, 256>>>(x, n);
    for (int r = 0; r < 2; r++)
        scale<<<n / 256, 256>>>(x, undefined_in_loop_body);
    cudaDeviceSynchronize();
    int bad = undefined_in_main;
    return 0;
}
`

// The lines bamgen inserts (odt's and claware's lambdas, drivers and
// guards, the runtime include) must not move compiler messages: nvcc
// names the original line of every error, in the plain output (the port's
// own #line directives) and with --line-directives -o (the absolute path
// of the input). Runs nvcc (CUDA 11.8 or newer) on two ported files: set
// BAMGEN_NVCC=1 (make test-golden-nvcc does).
func TestNvccReportsOriginalLines(t *testing.T) {
	if os.Getenv("BAMGEN_NVCC") != "1" {
		t.Skip("set BAMGEN_NVCC=1 to compile with nvcc")
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Fatal("BAMGEN_NVCC=1 but no nvcc on PATH")
	}
	include, err := filepath.Abs("../../runtime/cuda/include")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := writeFile(t, dir, "lines.cu", []byte(nvccLinesInput))
	want := map[string]int{}
	for i, l := range strings.Split(nvccLinesInput, "\n") {
		if m := regexp.MustCompile(`undefined_\w+`).FindString(l); m != "" {
			want[m] = i + 1
		}
	}
	plain := filepath.Join(dir, "plain.cu")
	code, out, errOut := runMain(t, "port", "--array", "colidx", "--array", "x", "--opt", "auto", src)
	if code != 0 || !strings.Contains(out, "bam_active") || !strings.Contains(out, "for_each_thread_by_line") ||
		!strings.Contains(out, "if (bam::all_direct(colidx_bam)) { walk_bam_direct<<<") {
		t.Fatalf("port: exit %d, want odt and claware applied, and the odt launch guarded by its clone's\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(plain, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	directives := filepath.Join(dir, "directives.cu")
	if code, _, errOut := runMain(t, "port", "--array", "colidx", "--array", "x", "--opt", "auto", "--line-directives", "-o", directives, src); code != 0 {
		t.Fatalf("port -o: exit %d\n%s", code, errOut)
	}
	cases := []struct{ file, name string }{{plain, src}, {directives, src}}
	logs := make([]string, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := exec.Command(nvcc, "-std=c++17", "-arch=sm_80", "-I"+include, "-c", c.file, "-o", os.DevNull).CombinedOutput()
			logs[i] = string(b)
		}()
	}
	wg.Wait()
	for i, c := range cases {
		// EDG's format: FILE(LINE): error: identifier "NAME" is undefined
		re := regexp.MustCompile(`(?m)^(.*)\((\d+)\): error: identifier "(undefined_\w+)" is undefined`)
		got := map[string]int{}
		copies := map[string]int{}
		for _, m := range re.FindAllStringSubmatch(logs[i], -1) {
			n, _ := strconv.Atoi(m[2])
			if filepath.Base(m[1]) != filepath.Base(c.name) {
				t.Errorf("%s: error names %s, want the input %s", filepath.Base(c.file), m[1], c.name)
			}
			if n != want[m[3]] { // every copy (a kernel and its clone, a launch and its clone's) at the line
				t.Errorf("%s: %s reported at line %d, it is on line %d of the input", filepath.Base(c.file), m[3], n, want[m[3]])
			}
			got[m[3]] = n
			copies[m[3]]++
		}
		if copies["undefined_in_launch"] != 2 {
			t.Errorf("%s: undefined_in_launch reported %d times, want 2 (the odt launch and its clone's)", filepath.Base(c.file), copies["undefined_in_launch"])
		}
		var names []string
		for name := range want {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if got[name] != want[name] {
				t.Errorf("%s: %s reported at line %d, it is on line %d of the input\nnvcc:\n%s", filepath.Base(c.file), name, got[name], want[name], logs[i])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d errors reported, want %d: %v", filepath.Base(c.file), len(got), len(want), fmt.Sprint(got))
		}
	}
}
