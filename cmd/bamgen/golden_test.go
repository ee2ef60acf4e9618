package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// End-to-end golden tests of `bamgen port` with access-pattern rewrites
// (testdata/opt/*.txtar). Each archive holds:
//
//	-- args --     the command line after `bamgen port` (the input path is appended)
//	-- input.cu -- the file to port
//	-- output.cu -- the expected stdout (the ported file)
//	-- stderr --   the expected diagnostics, with the file named input.cu
//	-- exit --     the expected exit status (0 when absent)
//
// `go test ./cmd/bamgen -run TestOptGolden -update` rewrites the expectations.
// BAMGEN_GOLDEN_OUT=DIR also writes each output to DIR/NAME.cu, which
// bench/difftest/compile_golden.sh (SRC_DIR=DIR) compiles with nvcc.

var update = flag.Bool("update", false, "rewrite the golden files")

func TestOptGolden(t *testing.T) {
	files, err := filepath.Glob("../../testdata/opt/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) { runOptGolden(t, file, name) })
	}
}

func runOptGolden(t *testing.T, file, name string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "input.cu")
	if err := os.WriteFile(input, sections["input.cu"], 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"port"}, strings.Fields(string(sections["args"]))...)
	code, stdout, stderr := runMainIn(t, dir, append(args, "input.cu")...)
	got := map[string][]byte{
		"output.cu": []byte(stdout),
		"stderr":    []byte(stderr),
		"exit":      []byte(strconv.Itoa(code) + "\n"),
	}
	if *update {
		writeGolden(t, file, ar, got)
		return
	}
	for _, sec := range []string{"output.cu", "stderr", "exit"} {
		want := sections[sec]
		if sec == "exit" && want == nil {
			want = []byte("0\n")
		}
		if !bytes.Equal(got[sec], want) {
			t.Errorf("%s: %s differs (run with -update to accept)\n--- got ---\n%s\n--- want ---\n%s", name, sec, got[sec], want)
		}
	}
	if out := os.Getenv("BAMGEN_GOLDEN_OUT"); out != "" && code == 0 {
		if err := os.WriteFile(filepath.Join(out, "opt_"+name+".cu"), []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code == 0 {
		checkIdempotent(t, dir, args, stdout)
	}
}

// checkIdempotent ports the output again with the same flags: nothing may change.
func checkIdempotent(t *testing.T, dir string, args []string, out string) {
	again := filepath.Join(dir, "again.cu")
	if err := os.WriteFile(again, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMainIn(t, dir, append(args, "again.cu")...)
	if code != 0 || stdout != out {
		t.Errorf("porting the output again changed it (exit %d):\n%s", code, stderr)
	}
}

// runMainIn runs bamgen in dir, so file names in messages are relative.
func runMainIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	return runMain(t, args...)
}

func writeGolden(t *testing.T, file string, ar *txtar.Archive, got map[string][]byte) {
	var files []txtar.File
	for _, f := range ar.Files {
		if f.Name == "args" || f.Name == "input.cu" {
			files = append(files, f)
		}
	}
	for _, sec := range []string{"output.cu", "stderr", "exit"} {
		files = append(files, txtar.File{Name: sec, Data: got[sec]})
	}
	ar.Files = files
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}
