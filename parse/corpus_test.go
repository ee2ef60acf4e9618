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

// TestBuildHeaders parses whatever headers a local build left under
// testdata/kernels/build (vendor C headers): invariants must hold.
func TestBuildHeaders(t *testing.T) {
	n, diags := 0, 0
	filepath.WalkDir("../testdata/kernels/build", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isCUDASource(path) {
			return nil
		}
		src, _ := os.ReadFile(path)
		f := ParseFile(path, src)
		checkTree(t, f)
		n++
		diags += len(f.Diags)
		for _, d := range f.Diags {
			t.Log(f.Src.Format(d))
		}
		return nil
	})
	t.Logf("%d files, %d diagnostics", n, diags)
}
