package transform

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// update rewrites the expected sections of testdata/port/*.txtar:
// `go test ./transform -update`, or BAMGEN_UPDATE=1 go test ./transform/...
// (a flag cannot be passed to every package of a pattern unless each
// defines it).
var update = flag.Bool("update", os.Getenv("BAMGEN_UPDATE") == "1", "rewrite the expected sections of testdata/port/*.txtar")

// A golden case is a txtar archive in testdata/port:
//
//	-- flags --          port flags: --array X, --auto, --ref, --count N=E (one or more per line)
//	-- input.cu --       the file to port
//	-- .bamgen.yaml --   optional config next to the input
//	-- output.cu --      expected result in full, or
//	-- output.diff --    expected result as a unified diff against input.cu
//	-- diagnostics --    expected diagnostics, one per line, notes included
//
// The comment at the top says what the case is about. `go test
// ./transform -update` rewrites the expected sections. Every case is also
// ported a second time to prove the port is idempotent.
//
// BAMGEN_GOLDEN_OUT=DIR writes each case's ported file to DIR/NAME.cu (for
// bench/difftest/compile_golden.sh, which compiles them with nvcc).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/port/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	outDir := os.Getenv("BAMGEN_GOLDEN_OUT")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			out := runGolden(t, file)
			if outDir != "" {
				if err := os.WriteFile(filepath.Join(outDir, name+".cu"), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// goldenCase is a parsed archive.
type goldenCase struct {
	ar       *txtar.Archive
	input    []byte
	opts     Options
	fullOut  bool // expected output stored whole (output.cu) rather than as a diff
	expected map[string][]byte
}

func loadGolden(t *testing.T, file string) *goldenCase {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gc := &goldenCase{ar: ar, expected: map[string][]byte{}}
	for _, f := range ar.Files {
		gc.expected[f.Name] = f.Data
	}
	gc.input = gc.expected["input.cu"]
	if gc.input == nil {
		t.Fatalf("%s: no input.cu section", file)
	}
	_, gc.fullOut = gc.expected["output.cu"]
	gc.opts, err = parseGoldenFlags(string(gc.expected["flags"]))
	if err != nil {
		t.Fatalf("%s: flags: %v", file, err)
	}
	if cfg, ok := gc.expected[".bamgen.yaml"]; ok {
		gc.opts.Config, err = ParseConfig(".bamgen.yaml", cfg)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return gc
}

// parseGoldenFlags understands the port flags that change the result.
func parseGoldenFlags(s string) (Options, error) {
	var o Options
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		arg := func() (string, error) {
			if i+1 >= len(f) {
				return "", fmt.Errorf("%s needs a value", f[i])
			}
			i++
			return f[i], nil
		}
		switch f[i] {
		case "--auto":
			o.Auto = true
		case "--ref":
			o.Ref = true
		case "--array":
			v, err := arg()
			if err != nil {
				return o, err
			}
			o.Arrays = append(o.Arrays, v)
		case "--count":
			v, err := arg()
			if err != nil {
				return o, err
			}
			name, expr, _ := strings.Cut(v, "=")
			if o.Counts == nil {
				o.Counts = map[string]string{}
			}
			o.Counts[name] = expr
		default:
			return o, fmt.Errorf("unknown flag %q", f[i])
		}
	}
	return o, nil
}

// runGolden ports the case, compares or updates, checks idempotence, and
// returns the ported file.
func runGolden(t *testing.T, file string) []byte {
	gc := loadGolden(t, file)
	res, diagText := portForTest(t, gc.input, gc.opts)
	got := map[string][]byte{"diagnostics": []byte(diagText)}
	if gc.fullOut {
		got["output.cu"] = res.Output
	} else {
		got["output.diff"] = UnifiedDiff("input.cu", "output.cu", gc.input, res.Output)
	}
	if *update {
		writeGolden(t, file, gc, got)
	} else {
		for _, name := range sortedNames(got) {
			if want := gc.expected[name]; !bytes.Equal(want, got[name]) {
				t.Errorf("%s differs (run go test ./transform -update to accept):\n%s",
					name, UnifiedDiff("want/"+name, "got/"+name, want, got[name]))
			}
		}
	}
	checkIdempotent(t, res.Output, gc.opts)
	return res.Output
}

// portForTest ports src named input.cu and renders its diagnostics.
func portForTest(t *testing.T, src []byte, opts Options) (*Result, string) {
	t.Helper()
	f := parse.ParseFile("input.cu", src)
	res, err := Port(f, opts)
	if err != nil {
		t.Fatalf("Port: %v", err)
	}
	var b strings.Builder
	for _, d := range diag.Sorted(res.Diags) {
		b.WriteString(f.Src.Format(d))
		b.WriteByte('\n')
	}
	return res, b.String()
}

// checkIdempotent ports the output again with the same choices: nothing may
// change and no error may appear.
func checkIdempotent(t *testing.T, out []byte, opts Options) {
	t.Helper()
	res, diags := portForTest(t, out, opts)
	if !bytes.Equal(res.Output, out) {
		t.Errorf("porting the output again changes it:\n%s", UnifiedDiff("once", "twice", out, res.Output))
	}
	if strings.Contains(diags, ": error: ") && !strings.Contains(diags, "[PORT00") {
		t.Errorf("porting the output again reports errors:\n%s", diags)
	}
}

func writeGolden(t *testing.T, file string, gc *goldenCase, got map[string][]byte) {
	t.Helper()
	ar := &txtar.Archive{Comment: gc.ar.Comment}
	for _, f := range gc.ar.Files {
		if _, replaced := got[f.Name]; !replaced {
			ar.Files = append(ar.Files, f)
		}
	}
	for _, name := range sortedNames(got) {
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: got[name]})
	}
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
