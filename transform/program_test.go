package transform

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/udiff"
)

// A whole-program case is a txtar archive in testdata/program:
//
//	-- flags --          port flags, as in testdata/port
//	-- readonly --       optional: files (one a line) that are read, never
//	                     written (a header outside the project root)
//	-- defines --        optional: NAME[=VALUE] lines, -D for every file
//	-- include --        optional: -I directories, one a line
//	-- FILE --           any other section up to output.diff is a file of
//	                     the program (path relative to the program's root)
//	-- output.diff --    expected: one unified diff of every changed file
//	-- diagnostics --    expected diagnostics of all files, in file order
//
// Every file of the program is an input (as with a directory argument);
// the files are written to a temporary directory, which is the working
// directory while the case runs, so that names and includes resolve as
// on the command line. Each case is ported a second time from its output
// to prove the program port idempotent. `go test ./transform -update`
// rewrites the expected sections. BAMGEN_PROGRAM_OUT=DIR writes each
// ported program to DIR/CASE/ (compile them with nvcc: every .cu with
// -I DIR/CASE, then link the objects).
func TestProgramGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/program/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no program cases: %v", err)
	}
	for _, file := range files {
		abs, _ := filepath.Abs(file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) { runProgramGolden(t, abs) })
	}
}

var programMeta = map[string]bool{"flags": true, "readonly": true, "defines": true, "include": true, "output.diff": true, "diagnostics": true}

func runProgramGolden(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sec := map[string][]byte{}
	for _, f := range ar.Files {
		sec[f.Name] = f.Data
	}
	flags, err := parseGoldenFlags(string(sec["flags"]))
	if err != nil || flags.usage != nil {
		t.Fatalf("flags: %v %v", err, flags.usage)
	}
	readonly := map[string]bool{}
	for _, l := range strings.Fields(string(sec["readonly"])) {
		readonly[l] = true
	}
	dir := t.TempDir()
	t.Chdir(dir)
	old := analysis.IncludeDirs
	analysis.IncludeDirs = strings.Fields(string(sec["include"]))
	defer func() { analysis.IncludeDirs = old }()
	var units []Unit
	for _, f := range ar.Files {
		if programMeta[f.Name] {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.Name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, Unit{Name: f.Name, Src: f.Data, ReadOnly: readonly[f.Name], Input: !readonly[f.Name],
			Defines: strings.Fields(string(sec["defines"]))})
	}
	diffText, diagText, outs := runProgramForTest(t, units, flags.opts)
	got := map[string][]byte{"output.diff": []byte(diffText), "diagnostics": []byte(diagText)}
	if *update {
		out := &txtar.Archive{Comment: ar.Comment}
		for _, f := range ar.Files {
			if _, replaced := got[f.Name]; !replaced {
				out.Files = append(out.Files, f)
			}
		}
		for _, name := range []string{"output.diff", "diagnostics"} {
			out.Files = append(out.Files, txtar.File{Name: name, Data: got[name]})
		}
		if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		for _, name := range []string{"output.diff", "diagnostics"} {
			if want := sec[name]; !bytes.Equal(want, got[name]) {
				t.Errorf("%s differs (run go test ./transform -run TestProgramGolden -update to accept):\n%s",
					name, udiff.Unified("want/"+name, "got/"+name, want, got[name]))
			}
		}
	}
	// BAMGEN_PROGRAM_OUT=DIR writes the ported program to DIR/CASE/ (for
	// compiling it with nvcc).
	if out := os.Getenv("BAMGEN_PROGRAM_OUT"); out != "" {
		for i, u := range units {
			p := filepath.Join(out, strings.TrimSuffix(filepath.Base(file), ".txtar"), u.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, outs[i], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Idempotence: the ported program, ported again, does not change.
	for i := range units {
		units[i].Src = outs[i]
		if err := os.WriteFile(units[i].Name, outs[i], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, againDiags, _ := runProgramForTest(t, units, flags.opts)
	if again != "" {
		t.Errorf("porting the ported program again changes it:\n%s", again)
	}
	if strings.Contains(againDiags, ": error: ") && !strings.Contains(againDiags, "[PORT00") {
		t.Errorf("porting the ported program again reports errors:\n%s", againDiags)
	}
}

// runProgramForTest ports units and returns one diff of every changed
// file, the diagnostics of all files, and each file's output.
func runProgramForTest(t *testing.T, units []Unit, opts Options) (string, string, [][]byte) {
	t.Helper()
	pr, err := RunProgram(units, opts, nil)
	if err != nil {
		t.Fatalf("RunProgram: %v", err)
	}
	var diffs, diags strings.Builder
	outs := make([][]byte, len(units))
	for i, r := range pr.Files {
		outs[i] = r.Output
		if r.Changed {
			if units[i].ReadOnly {
				t.Errorf("%s is read-only and was changed", units[i].Name)
			}
			diffs.Write(udiff.Unified(units[i].Name+".orig", units[i].Name, units[i].Src, r.Output))
		}
		r.Src.Print(&diags, r.Diags)
	}
	return diffs.String(), diags.String(), outs
}
