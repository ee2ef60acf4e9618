package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A three-file program: kernel in src/scale.cu, prototype in
// include/scale.cuh (found through -I), launch and buffers in src/main.cu.
var programFiles = map[string]string{
	"include/scale.cuh": `#pragma once
__global__ void scale(float* data, float k, int n);
`,
	"src/scale.cu": `#include "scale.cuh"

__global__ void scale(float* data, float k, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= k;
}
`,
	"src/main.cu": `#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "scale.cuh"

int main()
{
  const int n = 1 << 20;
  std::vector<float> h(n, 1.0f);
  float* d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  printf("%f\n", h[0]);
  return 0;
}
`,
}

func writeProgram(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Dir(p), filepath.Base(p), []byte(text))
	}
	return dir
}

func readAll(t *testing.T, dir string, files map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}

// TestPortProgramWrite: `port -w -I include src/*.cu` rewrites the kernel,
// the header found through -I and the launch together; a second run
// changes nothing.
func TestPortProgramWrite(t *testing.T) {
	dir := writeProgram(t, programFiles)
	args := []string{"port", "--array", "data", "-w", "-I", filepath.Join(dir, "include"),
		filepath.Join(dir, "src/scale.cu"), filepath.Join(dir, "src/main.cu")}
	if code, _, errOut := runMain(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := readAll(t, dir, programFiles)
	for name, want := range map[string]string{
		"include/scale.cuh": "__global__ void scale(bam::array<float> data, float k, int n);",
		"src/scale.cu":      "__global__ void scale(bam::array<float> data, float k, int n)\n",
		"src/main.cu":       "scale<<<(n + 255) / 256, 256>>>(d_bam, 2.0f, n);",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s lacks %q:\n%s", name, want, got[name])
		}
		if !strings.Contains(got[name], "#include <bam/bam.cuh>") {
			t.Errorf("%s lacks the runtime include:\n%s", name, got[name])
		}
	}
	if code, _, errOut := runMain(t, args...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	if again := readAll(t, dir, programFiles); again["src/main.cu"] != got["src/main.cu"] || again["include/scale.cuh"] != got["include/scale.cuh"] {
		t.Errorf("a second port changed the program")
	}
}

// TestPortProgramAllOrNone: when one file of the program cannot be
// written, no file changes and no temporary file is left behind.
func TestPortProgramAllOrNone(t *testing.T) {
	dir := writeProgram(t, programFiles)
	before := readAll(t, dir, programFiles)
	old := createTemp
	defer func() { createTemp = old }()
	createTemp = func(d, pattern string) (*os.File, error) {
		if strings.Contains(pattern, "scale.cuh") {
			return nil, errors.New("read-only file system")
		}
		return old(d, pattern)
	}
	code, _, errOut := runMain(t, "port", "--array", "data", "-w", dir)
	if code == 0 || !strings.Contains(errOut, "scale.cuh: cannot write: read-only file system; no file was changed") {
		t.Fatalf("exit %d, stderr %q; want the failed write reported", code, errOut)
	}
	if after := readAll(t, dir, programFiles); after["src/scale.cu"] != before["src/scale.cu"] || after["src/main.cu"] != before["src/main.cu"] {
		t.Errorf("a file changed although the write of another failed")
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".bamgen-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestPortProgramOutputModes: stdout and -o cannot hold a program of
// several changed files; -d prints one diff of them all.
func TestPortProgramOutputModes(t *testing.T) {
	dir := writeProgram(t, programFiles)
	inc := filepath.Join(dir, "include")
	scale, main := filepath.Join(dir, "src/scale.cu"), filepath.Join(dir, "src/main.cu")
	code, _, errOut := runMain(t, "port", "--array", "data", "-I", inc, scale, main)
	if code != 2 || !strings.Contains(errOut, "form one program") || !strings.Contains(errOut, "use -w") {
		t.Errorf("stdout with a program: exit %d, %q", code, errOut)
	}
	code, _, errOut = runMain(t, "port", "--array", "data", "-I", inc, "-o", filepath.Join(dir, "o.cu"), scale, main)
	if code != 2 || !strings.Contains(errOut, "-o takes exactly one input file, got 2") {
		t.Errorf("-o with two inputs: exit %d, %q", code, errOut)
	}
	// -o holds one file: the header with the prototype is only read, so
	// the kernel is ported nowhere (PORT040) instead of in scale.cu alone.
	o := filepath.Join(t.TempDir(), "o.cu") // not in dir: -d dir below would read it

	code, _, errOut = runMain(t, "port", "--array", "data", "-I", inc, "-o", o, "--context", main, scale)
	if b, _ := os.ReadFile(o); code != 0 || !strings.Contains(errOut, "scale.cuh:2:") || !strings.Contains(errOut, "[PORT040]") || strings.Contains(string(b), "bam::array") {
		t.Errorf("-o whose port would change a header: exit %d, %q\n%s", code, errOut, b)
	}
	code, out, errOut := runMain(t, "port", "--array", "data", "-d", dir)
	if code != 0 {
		t.Fatalf("-d: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"include/scale.cuh", "src/scale.cu", "src/main.cu"} {
		if !strings.Contains(out, "+++ "+filepath.Join(dir, f)+"\n") {
			t.Errorf("-d lacks %s:\n%s", f, out)
		}
	}
}

// TestPortContextOutput: a build that ports file by file (-o) gives the
// program's other sources as --context: the one output agrees with them.
func TestPortContextOutput(t *testing.T) {
	files := map[string]string{"src/main.cu": programFiles["src/main.cu"], "src/scale.cu": programFiles["src/scale.cu"],
		"src/scale.cuh": "#pragma once\n#include <bam/bam.cuh>\n__global__ void scale(bam::array<float> data, float k, int n);\n"}
	dir := writeProgram(t, files)
	o := filepath.Join(dir, "main_bam.cu")
	code, _, errOut := runMain(t, "port", "--array", "data", "-o", o, "--context", filepath.Join(dir, "src/scale.cu"), filepath.Join(dir, "src/main.cu"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(o)
	if !strings.Contains(string(b), "(d_bam, 2.0f, n)") {
		t.Errorf("main.cu ported alone, without its kernel:\n%s", b)
	}
	if got := readAll(t, dir, files); got["src/scale.cu"] != files["src/scale.cu"] {
		t.Errorf("a --context file was written")
	}
}

// TestPortCompileCommands: -p reads the files, -I and -D of a compilation
// database. The warp macros of the kernel come only from -D: with them
// --opt auto sees a warp-per-vertex walk and picks odt.
func TestPortCompileCommands(t *testing.T) {
	files := map[string]string{
		"include/walk.cuh": "#pragma once\n__global__ void walk(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n);\n",
		"src/walk.cu": `#include "walk.cuh"
__global__ void walk(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned w = tid >> WARP_SHIFT, lane = tid & (WARP_SIZE - 1);
  if (w < n && label[w] == 0)
    for (unsigned e = rowptr[w] + lane; e < rowptr[w + 1]; e += WARP_SIZE) label[col[e]] = 0;
}
`,
		"src/main.cu": `#include <cuda_runtime.h>
#include "walk.cuh"
int main()
{
  const unsigned n = 1 << 16, m = 1 << 20;
  unsigned *rowptr, *col, *label;
  cudaMalloc(&rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&col, sizeof(unsigned) * m);
  cudaMalloc(&label, sizeof(unsigned) * n);
  walk<<<n / 8, 256>>>(rowptr, col, label, n);
  return 0;
}
`,
	}
	dir := writeProgram(t, files)
	type entry struct {
		Directory string   `json:"directory"`
		File      string   `json:"file"`
		Command   string   `json:"command,omitempty"`
		Arguments []string `json:"arguments,omitempty"`
	}
	db := []entry{
		{Directory: dir, File: "src/walk.cu", Command: `nvcc -I include "-DWARP_SHIFT=5" -DWARP_SIZE=32 -c src/walk.cu -o walk.o`},
		{Directory: filepath.Join(dir, "src"), File: "main.cu", Arguments: []string{"nvcc", "-I../include", "-c", "main.cu"}},
	}
	b, _ := json.Marshal(db)
	cc := writeFile(t, dir, "compile_commands.json", b)
	code, _, errOut := runMain(t, "port", "--auto", "--opt", "auto", "-w", "-p", cc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "choosing odt") {
		t.Errorf("the -D warp macros were not seen (no odt):\n%s", errOut)
	}
	got := readAll(t, dir, files)
	if !strings.Contains(got["include/walk.cuh"], "bam::array<const unsigned> col") || !strings.Contains(got["include/walk.cuh"], "bam::odt_plan bam_plan") {
		t.Errorf("the header found through the database's -I was not ported:\n%s", got["include/walk.cuh"])
	}
	if !strings.Contains(got["src/main.cu"], "col_bam") {
		t.Errorf("main.cu not ported:\n%s", got["src/main.cu"])
	}
	// Without the database's -D the same program gets no odt.
	dir2 := writeProgram(t, files)
	code, _, errOut = runMain(t, "port", "--auto", "--opt", "auto", "-d", "-I", filepath.Join(dir2, "include"), filepath.Join(dir2, "src"))
	if code != 0 || strings.Contains(errOut, "choosing odt") {
		t.Errorf("without -D: exit %d, odt chosen anyway:\n%s", code, errOut)
	}
}

// TestPortDirectoryOfPrograms: a directory holding independent programs
// and a header with nothing to port: --array and .bamgen.yaml names go to
// the program that has them, the others are not errors, and each file
// that is a program of its own is ported as before.
func TestPortDirectoryOfPrograms(t *testing.T) {
	other := strings.ReplaceAll(strings.ReplaceAll(portSrc, "scale", "shift"), "in[", "src[")
	files := map[string]string{"a.cu": portSrc, "b.cu": other, "util.h": "#pragma once\nint util(int);\n",
		".bamgen.yaml": "arrays:\n  - name: shift:out\n"}
	dir := writeProgram(t, files)
	code, _, errOut := runMain(t, "port", "--array", "scale:in", "-w", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := readAll(t, dir, files)
	if !strings.Contains(got["a.cu"], "bam::array<const float> in") || strings.Contains(got["a.cu"], "bam::array<float> out") {
		t.Errorf("a.cu: want in ported (--array scale:in), out not:\n%s", got["a.cu"])
	}
	if !strings.Contains(got["b.cu"], "bam::array<float> out") || strings.Contains(got["b.cu"], "bam::array<const float> in") {
		t.Errorf("b.cu: want out ported (config shift:out), in not:\n%s", got["b.cu"])
	}
	if got["util.h"] != files["util.h"] {
		t.Errorf("util.h changed")
	}
	code, _, errOut = runMain(t, "port", "--array", "nosuch", "-d", dir)
	if code != 2 || strings.Count(errOut, "[PORT001]") != 1 {
		t.Errorf("a name no program has: exit %d, want one PORT001:\n%s", code, errOut)
	}
}

// TestPortHeaderDir: a build that ports each source into its own tree
// (-o, the others as --context) gets the headers the port changes under
// --header-dir, at their place relative to the root; the originals stay.
func TestPortHeaderDir(t *testing.T) {
	files := map[string]string{"src/main.cu": programFiles["src/main.cu"], "src/scale.cu": programFiles["src/scale.cu"],
		"src/inc/scale.cuh": programFiles["include/scale.cuh"]}
	files["src/main.cu"] = strings.Replace(files["src/main.cu"], `"scale.cuh"`, `"inc/scale.cuh"`, 1)
	files["src/scale.cu"] = strings.Replace(files["src/scale.cu"], `"scale.cuh"`, `"inc/scale.cuh"`, 1)
	dir := writeProgram(t, files)
	out := t.TempDir()
	src := filepath.Join(dir, "src")
	code, _, errOut := runMain(t, "port", "--array", "data", "--root", src, "--header-dir", out, "-o", filepath.Join(out, "scale.cu"),
		"--context", filepath.Join(src, "main.cu"), filepath.Join(src, "scale.cu"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	h, err := os.ReadFile(filepath.Join(out, "inc/scale.cuh"))
	if err != nil || !strings.Contains(string(h), "bam::array<float> data") {
		t.Errorf("the ported header is not under --header-dir (%v):\n%s", err, h)
	}
	if got := readAll(t, dir, files); got["src/inc/scale.cuh"] != files["src/inc/scale.cuh"] {
		t.Errorf("the original header was written")
	}
	if code, _, errOut := runMain(t, "port", "--array", "data", "--header-dir", out, "-w", src); code != 2 || !strings.Contains(errOut, "--header-dir goes with -o") {
		t.Errorf("--header-dir with -w: exit %d, %q", code, errOut)
	}
}
