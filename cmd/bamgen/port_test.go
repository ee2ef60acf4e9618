package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const portSrc = `#include <cuda_runtime.h>

__global__ void scale(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * *(in + i);
}

int main()
{
    int n = 1024;
    float h[1024] = {0};
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<4, 256>>>(d_in, d_out, n);
    cudaMemcpy(h, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
`

func TestPortStdout(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.cu", []byte(portSrc))
	code, out, errOut := runMain(t, "port", "--array", "in", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"bam::array<const float> in", "in[i]", "auto d_in_bam = bam_rt.array_from_host<float>(h, n);",
		"(bam::all_direct(d_in_bam) ? scale_bam_direct : scale)<<<4, 256>>>(d_in_bam, d_out, n);", "#include <bam/bam.cuh>"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "note: scale: in becomes bam::array<const float> (--array in) [PORT090]") {
		t.Errorf("report lacks the reason:\n%s", errOut)
	}
	if got, _ := os.ReadFile(p); string(got) != portSrc {
		t.Error("stdout mode changed the input file")
	}
}

func TestPortNoSelectionIsIdentity(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.cu", []byte(portSrc))
	code, out, _ := runMain(t, "port", p)
	if code != 0 || out != portSrc {
		t.Fatalf("exit %d; output differs from input: %q", code, out)
	}
}

func TestPortWriteAtomicKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.cu", []byte(portSrc))
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runMain(t, "port", "-w", "--array", "out", p); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := os.ReadFile(p)
	if !strings.Contains(string(got), "bam::array<float> out") {
		t.Fatalf("file not ported:\n%s", got)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	// Second run: nothing pending, file untouched.
	before, _ := os.Stat(p)
	if code, _, _ := runMain(t, "port", "--check", "--array", "out", p); code != 0 {
		t.Errorf("--check on a ported file: exit %d, want 0", code)
	}
	runMain(t, "port", "-w", "--array", "out", p)
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("-w rewrote an unchanged file")
	}
}

func TestPortOutputFileAndDiff(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.cu", []byte(portSrc))
	o := filepath.Join(dir, "out.cu")
	if code, _, errOut := runMain(t, "port", "-o", o, "--array", "in", p); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(o); !strings.Contains(string(got), "bam::array<const float> in") {
		t.Errorf("-o file not ported")
	}
	code, out, _ := runMain(t, "port", "-d", "--array", "in", p)
	if code != 0 || !strings.HasPrefix(out, "--- "+p+".orig\n+++ "+p+"\n@@ ") || !strings.Contains(out, "-    if (i < n) out[i] = 2.0f * *(in + i);\n+    if (i < n) out[i] = 2.0f * in[i];\n") {
		t.Errorf("exit %d, diff:\n%s", code, out)
	}
}

func TestPortCheck(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.cu", []byte(portSrc))
	code, out, _ := runMain(t, "port", "--check", "--array", "in", p)
	if code != exitFindings || strings.TrimSpace(out) != p {
		t.Errorf("--check: exit %d out %q, want 1 and the file name", code, out)
	}
}

func TestPortJSON(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.cu", []byte(portSrc))
	code, out, _ := runMain(t, "port", "--json", "--array", "in", "--array", "nope", p)
	if code != exitUsage {
		t.Errorf("exit %d, want 2 (unknown array)", code)
	}
	// Decode as a client would, with the field names of docs/json.md.
	var doc struct {
		Files []struct {
			File        string `json:"file"`
			Changed     bool   `json:"changed"`
			Diagnostics []struct {
				File     string `json:"file"`
				Line     int    `json:"line"`
				Col      int    `json:"col"`
				Severity string `json:"severity"`
				Code     string `json:"code"`
			} `json:"diagnostics"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if len(doc.Files) != 1 || len(doc.Files[0].Diagnostics) == 0 {
		t.Fatalf("unexpected document: %+v", doc)
	}
	d := doc.Files[0].Diagnostics[0]
	if d.Code != "PORT001" || d.Line != 1 || d.Col != 1 || d.File != p || d.Severity != "error" {
		t.Errorf("first diagnostic %+v", d)
	}
}

func TestPortErrorsNeverPartial(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.cu", []byte(portSrc))
	emptyDir := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"port", "--array", "x", good}, `no kernel parameter named "x"; kernels with pointer parameters: scale(in, out) [PORT001]`},
		{[]string{"port", "--array", "nokernel:in", good}, `no kernel named "nokernel"`},
		{[]string{"port", "--array", "a:b:c", good}, `want NAME or KERNEL:NAME`},
		{[]string{"port", "--array", "1x", good}, `not an identifier`},
		{[]string{"port", "--count", "in", good}, `want NAME=EXPR`},
		{[]string{"port", "--array", "in", filepath.Join(dir, "missing.cu")}, `no such file`},
		{[]string{"port", "--array", "in", emptyDir}, `no .cu, .cuh, .h or .hpp file under this directory [IO004]`},
		{[]string{"port", "-o", filepath.Join(dir, "o.cu"), good, good}, `-o takes exactly one input file`},
		{[]string{"port", "-w", "-d", good}, `cannot be combined`},
		{[]string{"port", "--config", filepath.Join(dir, "none.yaml"), good}, `--config`},
		{[]string{"port", "--bogus", good}, `unknown flag`},
	}
	for _, c := range cases {
		code, out, errOut := runMain(t, append(c.args, "-w")[:len(c.args)]...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errOut, c.want)
		}
		if out != "" {
			t.Errorf("%v: partial output %q", c.args, out)
		}
	}
	if got, _ := os.ReadFile(good); string(got) != portSrc {
		t.Error("a failing run changed the input")
	}
}

func TestPortConfigNextToFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.cu", []byte(portSrc))
	writeFile(t, dir, ".bamgen.yaml", []byte("arrays:\n  - name: scale:out\n"))
	code, out, errOut := runMain(t, "port", p)
	if code != 0 || !strings.Contains(out, "bam::array<float> out") || !strings.Contains(errOut, "(config "+filepath.Join(dir, ".bamgen.yaml")+")") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	writeFile(t, dir, ".bamgen.yaml", []byte("arays:\n  - name: out\n"))
	if code, _, errOut := runMain(t, "port", p); code != exitUsage || !strings.Contains(errOut, "arays") {
		t.Errorf("typo in config: exit %d, stderr %q", code, errOut)
	}
}

func TestPortParallelOrder(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"c.cu", "a.cu", "b.cu"} {
		src := strings.ReplaceAll(portSrc, "scale", "scale_"+strings.TrimSuffix(n, ".cu"))
		paths = append(paths, writeFile(t, dir, n, []byte(src)))
	}
	_, out, _ := runMain(t, append([]string{"port", "--array", "in"}, paths...)...)
	ic, ia, ib := strings.Index(out, "scale_c"), strings.Index(out, "scale_a"), strings.Index(out, "scale_b")
	if !(ic < ia && ia < ib) {
		t.Errorf("outputs not in argument order: %d %d %d", ic, ia, ib)
	}
}

func TestRuntimeInstallAndFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bam")
	code, _, errOut := runMain(t, "runtime", "install", "--prefix", dir)
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"include/bam/bam.cuh", "Makefile"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("install lacks %s: %v", f, err)
		}
	}
	if code, _, errOut := runMain(t, "runtime", "install", "--prefix", dir); code != 0 || !strings.Contains(errOut, "(0 files written)") {
		t.Errorf("reinstall: exit %d: %s", code, errOut)
	}
	code, out, _ := runMain(t, "flags", "--prefix", dir)
	want := "-std=c++17 -I" + filepath.Join(dir, "include") + " -L" + filepath.Join(dir, "build") + " -lbam -lpthread\n"
	if code != 0 || out != want {
		t.Errorf("flags: exit %d %q, want %q", code, out, want)
	}
	if code, _, _ := runMain(t, "runtime", "install"); code != exitUsage {
		t.Errorf("install without --prefix: exit %d", code)
	}
	f := writeFile(t, t.TempDir(), "file", nil)
	if code, _, errOut := runMain(t, "runtime", "install", "--prefix", f); code != exitUsage || !strings.Contains(errOut, "not a directory") {
		t.Errorf("install onto a file: exit %d %s", code, errOut)
	}
}

func TestPortUnparsableKernel(t *testing.T) {
	src := "__global__ void k(const float* in, float* out) { out[0] = ({ float t = in[0]; t; }); }\n"
	p := writeFile(t, t.TempDir(), "bad.cu", []byte(src))
	code, out, errOut := runMain(t, "port", "--array", "in", p)
	if code != exitUsage || out != "" {
		t.Errorf("exit %d, stdout %q: want 2 and no output", code, out)
	}
	if !strings.Contains(errOut, "bad.cu:1:") || !strings.Contains(errOut, "[PORT017]") {
		t.Errorf("stderr lacks positioned parse diagnostics and PORT017:\n%s", errOut)
	}
}

// port follows the same rule as analyze: an error-severity diagnostic is
// never printed with exit status 0 (it exits 2 and writes nothing), in text
// and in --json; warnings and notes alone leave the status 0.
func TestPortExitFollowsSeverity(t *testing.T) {
	dir := t.TempDir()
	for _, c := range severityCases {
		p := writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_")+".cu", []byte(c.src))
		for _, flags := range [][]string{{"--array", "in"}, {"--auto"}, {"--array", "out", "-q"}} {
			args := append(append([]string{"port"}, flags...), p)
			code, out, errOut := runMain(t, args...)
			if strings.Contains(errOut, ": error: ") != (code != 0) {
				t.Errorf("%s %v: exit %d with stderr:\n%s", c.name, flags, code, errOut)
			}
			if code != 0 && out != "" {
				t.Errorf("%s %v: exit %d but wrote output", c.name, flags, code)
			}
			code, out, _ = runMain(t, append([]string{"port", "--json"}, args[1:]...)...)
			if strings.Contains(out, `"severity": "error"`) != (code != 0) {
				t.Errorf("%s %v --json: exit %d with:\n%s", c.name, flags, code, out)
			}
		}
	}
}
