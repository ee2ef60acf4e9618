package transform

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/opt"
	"github.com/bamgen/bamgen/transform/port"
	"github.com/bamgen/bamgen/udiff"
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
	flags, err := parseGoldenFlags(string(gc.expected["flags"]))
	if err == nil && (flags.usage != nil || flags.quiet) {
		err = fmt.Errorf("usage errors and -q belong in testdata/opt cases")
	}
	if err != nil {
		t.Fatalf("%s: flags: %v", file, err)
	}
	gc.opts = flags.opts
	if cfg, ok := gc.expected[".bamgen.yaml"]; ok {
		gc.opts.Port.Config, err = port.ParseConfig(".bamgen.yaml", cfg)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return gc
}

// goldenFlags is what an archive's flags ask for.
type goldenFlags struct {
	opts  Options
	quiet bool  // -q / --quiet: notes are not printed
	usage error // a value the CLI rejects before reading any file (a bad --opt)
}

// parseGoldenFlags understands the port flags that change the result:
// --array, --auto, --ref, --count, --opt with --lanes-per-line, and -q.
// Any other flag is an error of the archive: add it here (the CLI's own
// flags, -o/-w/-d/--json, are tested in cmd/bamgen).
func parseGoldenFlags(s string) (goldenFlags, error) {
	var g goldenFlags
	o := &g.opts
	optSpec, lanes := "", 32
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "--auto":
			o.Port.Auto = true
			continue
		case "--ref":
			o.Port.Ref = true
			continue
		case "-q", "--quiet":
			g.quiet = true
			continue
		}
		if i+1 >= len(f) {
			return g, fmt.Errorf("%s needs a value", f[i])
		}
		i++
		v := f[i]
		switch f[i-1] {
		case "--array":
			o.Port.Arrays = append(o.Port.Arrays, v)
		case "--count":
			name, expr, _ := strings.Cut(v, "=")
			if o.Port.Counts == nil {
				o.Port.Counts = map[string]string{}
			}
			o.Port.Counts[name] = expr
		case "--opt":
			optSpec = v
		case "--lanes-per-line":
			n, err := strconv.Atoi(v)
			if err != nil {
				return g, err
			}
			lanes = n
		default:
			return g, fmt.Errorf("flag %q is not understood by the golden runner (parseGoldenFlags in transform/golden_test.go)", f[i-1])
		}
	}
	if optSpec != "" {
		rw, err := opt.Parse(optSpec, lanes)
		if err != nil {
			g.usage = err
		} else {
			o.Opt = &rw
		}
	}
	return g, nil
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
		got["output.diff"] = udiff.Unified("input.cu", "output.cu", gc.input, res.Output)
	}
	if *update {
		writeGolden(t, file, gc, got)
	} else {
		for _, name := range sortedNames(got) {
			if want := gc.expected[name]; !bytes.Equal(want, got[name]) {
				t.Errorf("%s differs (run go test ./transform -update to accept):\n%s",
					name, udiff.Unified("want/"+name, "got/"+name, want, got[name]))
			}
		}
	}
	checkIdempotent(t, res.Output, gc.opts)
	return res.Output
}

// portForTest runs src named input.cu through the pipeline (without the
// parser's diagnostics, as the port goldens always have) and renders its
// diagnostics.
func portForTest(t *testing.T, src []byte, opts Options) (*Result, string) {
	t.Helper()
	res, err := RunParsed(parse.ParseFile("input.cu", src), opts)
	if err != nil {
		t.Fatalf("Port: %v", err)
	}
	var b strings.Builder
	res.Src.Print(&b, res.Diags)
	return res, b.String()
}

// checkIdempotent ports the output again with the same choices: nothing may
// change and no error may appear.
func checkIdempotent(t *testing.T, out []byte, opts Options) {
	t.Helper()
	res, diags := portForTest(t, out, opts)
	if !bytes.Equal(res.Output, out) {
		t.Errorf("porting the output again changes it:\n%s", udiff.Unified("once", "twice", out, res.Output))
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

// TestOptGolden runs the access-pattern rewrite cases, testdata/opt/*.txtar,
// through the pipeline as `bamgen port ARGS input.cu` would. Each archive
// holds:
//
//	-- args --       the flags after `bamgen port` (the input path is appended)
//	-- input.cu --   the file to port
//	-- output.cu --  the expected stdout (the ported file; empty on errors)
//	-- stderr --     the expected diagnostics, with the file named input.cu
//	-- exit --       the expected exit status (0 when absent)
//
// A flag the CLI would reject is rendered as the CLI prints it
// ("bamgen: error: ...", exit 2). `go test ./transform -run TestOptGolden
// -update` rewrites the expectations. BAMGEN_GOLDEN_OUT=DIR also writes
// each output to DIR/opt_NAME.cu for bench/difftest/compile_golden.sh.
func TestOptGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/opt/*.txtar")
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
	args := string(sections["args"])
	stdout, stderr, code := runLikeCLI(t, args, sections["input.cu"])
	got := map[string][]byte{"output.cu": stdout, "stderr": stderr, "exit": []byte(strconv.Itoa(code) + "\n")}
	if *update {
		writeOptGolden(t, file, ar, got)
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
		if err := os.WriteFile(filepath.Join(out, "opt_"+name+".cu"), stdout, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code == 0 {
		again, stderr, code := runLikeCLI(t, args, stdout)
		if code != 0 || !bytes.Equal(again, stdout) {
			t.Errorf("porting the output again changed it (exit %d):\n%s", code, stderr)
		}
	}
}

// runLikeCLI runs src, named input.cu, through Run with the options args
// gives, and renders stdout, stderr and the exit status as `bamgen port`
// prints them.
func runLikeCLI(t *testing.T, args string, src []byte) (stdout, stderr []byte, code int) {
	t.Helper()
	flags, err := parseGoldenFlags(args)
	if err != nil {
		t.Fatalf("args: %v", err)
	}
	if flags.usage != nil {
		return nil, []byte("bamgen: error: " + flags.usage.Error() + "\n"), 2
	}
	res, err := Run("input.cu", src, flags.opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b bytes.Buffer
	ds := res.Diags
	if flags.quiet {
		ds = diag.WithoutNotes(ds)
	}
	res.Src.Print(&b, ds)
	if diag.HasErrors(res.Diags) {
		return nil, b.Bytes(), 2
	}
	return res.Output, b.Bytes(), 0
}

func writeOptGolden(t *testing.T, file string, ar *txtar.Archive, got map[string][]byte) {
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
