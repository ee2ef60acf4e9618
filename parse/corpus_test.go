package parse

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFiles returns the CUDA sources under testdata/kernels (shared with
// the other stages) and parse/testdata.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, root := range []string{"../testdata/kernels", "testdata"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "build" {
				return filepath.SkipDir // build outputs, not sources
			}
			if err == nil && !d.IsDir() && isCUDASource(path) {
				files = append(files, path)
			}
			return nil
		})
	}
	return files
}

func isCUDASource(path string) bool {
	for _, ext := range []string{".cu", ".cuh", ".h", ".hpp", ".cpp"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

// TestCorpus parses every corpus file: invariants must hold, and function
// bodies must produce no diagnostics (PARSE_STRICT=0 only logs them).
func TestCorpus(t *testing.T) {
	for _, path := range corpusFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := ParseFile(path, src)
		checkTree(t, f)
		for _, d := range f.Diags {
			if strings.Contains(path, "/invalid") || strings.Contains(path, "junk") {
				continue
			}
			t.Errorf("%s", f.Src.Format(d))
		}
	}
}

// TestBuildHeaders parses real headers: the bundled runtime's
// (runtime/cuda/include, always in the tree) and whatever a local build left
// under testdata/kernels/build. Invariants must hold on each; diagnostics
// are logged (headers use C++ the parser may keep opaque). It fails when it
// finds no header at all, so a moved folder cannot turn it into a no-op.
func TestBuildHeaders(t *testing.T) {
	n, diags := 0, 0
	for _, root := range []string{"../runtime/cuda/include", "../testdata/kernels/build"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !isCUDASource(path) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			f := ParseFile(path, src)
			checkTree(t, f)
			n++
			diags += len(f.Diags)
			for _, d := range f.Diags {
				t.Log(f.Src.Format(d))
			}
			return nil
		})
	}
	if n == 0 {
		t.Fatal("no headers found under ../runtime/cuda/include or ../testdata/kernels/build; the test parsed nothing")
	}
	t.Logf("%d files, %d diagnostics", n, diags)
}
