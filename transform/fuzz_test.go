package transform

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/transform/opt"
	"github.com/bamgen/bamgen/transform/port"
)

// FuzzPort runs mutated corpus programs through the whole pipeline in the
// three modes users run (--auto; --auto --opt auto; --auto --ref --opt
// auto). Whatever the input, Run must not fail: its error is reserved for
// bamgen bugs (a recovered panic, an invalid edit) once the config is
// given. And an error diagnostic must leave the input unchanged (no
// partial output), while a changed output must not be the input again.
//
//	go test ./transform -run '^$' -fuzz FuzzPort -fuzztime 5m
//
// Without -fuzz (as in CI) it runs the seeds: every corpus program whole,
// and each with a few of the constructs real code adds (the issue-17
// shapes) spliced in.
func FuzzPort(f *testing.F) {
	for _, src := range corpusPrograms(f) {
		f.Add(src)
		for _, s := range spliceSeeds {
			f.Add(spliceAfterFirstBrace(src, s))
		}
	}
	autoOpt, err := opt.Parse("auto", 32)
	if err != nil {
		f.Fatal(err)
	}
	modes := []struct {
		name string
		opts Options
	}{
		{"auto", Options{Port: port.Options{Auto: true, Config: &port.Config{}}}},
		{"auto+opt", Options{Port: port.Options{Auto: true, Config: &port.Config{}}, Opt: &autoOpt}},
		{"auto+ref+opt", Options{Port: port.Options{Auto: true, Ref: true, Config: &port.Config{}}, Opt: &autoOpt}},
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, m := range modes {
			res, err := Run("fuzz.cu", src, m.opts)
			if err != nil {
				t.Fatalf("%s: Run failed (a bamgen bug): %v", m.name, err)
			}
			if diag.HasErrors(res.Diags) && res.Changed {
				t.Fatalf("%s: an error diagnostic with a changed output (partial output)", m.name)
			}
			if res.Changed == (string(res.Output) == string(src)) {
				t.Fatalf("%s: Changed=%v disagrees with the output", m.name, res.Changed)
			}
		}
	})
}

// Constructs that real programs put inside kernels and host functions,
// spliced after the first '{' of a corpus program: each is valid or
// invalid CUDA in its own way, and the pipeline must answer with output
// or diagnostics, never an internal error.
var spliceSeeds = []string{
	"\n#define IDX(i) ((i) * 2)\n",
	"\n#if 0\n}\n#endif\n",
	"\nauto lam = [&](int x) { return x + 1; };\n",
	"\nint *p = nullptr; p += 3;\n",
	"\ncudaMemcpy(p, q, n, cudaMemcpyDeviceToDevice);\n",
	"\ntemplate <typename T> T* alloc(int n);\n",
	"\n{ int unbalanced = (1 + ;\n",
	"\nasm volatile(\"membar.gl;\");\n",
}

func spliceAfterFirstBrace(src []byte, s string) []byte {
	i := strings.IndexByte(string(src), '{')
	if i < 0 {
		return append(append([]byte{}, src...), s...)
	}
	out := append([]byte{}, src[:i+1]...)
	out = append(out, s...)
	return append(out, src[i+1:]...)
}

// corpusPrograms reads every single-file corpus program
// (testdata/kernels/P/P.cu).
func corpusPrograms(tb testing.TB) [][]byte {
	var out [][]byte
	root := filepath.Join("..", "testdata", "kernels")
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".cu") {
			return nil
		}
		if filepath.Base(filepath.Dir(path))+".cu" != filepath.Base(path) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, src)
		return nil
	})
	if len(out) == 0 {
		tb.Fatal("no corpus programs under " + root)
	}
	return out
}
