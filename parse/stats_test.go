package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusStats checks per-file counts of the corpus: every .cu program
// has a kernel and a launch, the parser finds every `<<<` launch of the
// programs (the stress files hide some in comments, strings and #if 0, so
// there it may find fewer, never more), and no statement or expression
// inside a function of a program is left opaque (the stress files and the
// front end's own testdata exercise those on purpose). With
// BAMGEN_PARSE_STATS=1 (go test -run TestCorpusStats -v .) it also prints
// the counts and every Opaque node, to review what the parser keeps without
// understanding.
func TestCorpusStats(t *testing.T) {
	verbose := os.Getenv("BAMGEN_PARSE_STATS") != ""
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Fatal("no corpus files found")
	}
	programs := 0
	// A program may span several files (kernels in one, launches in
	// another) or be kernels only (no main): count per directory.
	type counts struct {
		kernels, launches int
		hasMain           bool
	}
	perDir := map[string]counts{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := ParseFile(path, src)
		launches := len(f.Launches())
		want := bytes.Count(src, []byte("<<<"))
		stress := strings.Contains(filepath.ToSlash(path), "/stress/")
		program := strings.HasPrefix(filepath.ToSlash(path), "../testdata/kernels/") && !stress
		if verbose {
			t.Logf("%s: funcs=%d kernels=%d launches=%d/%d", path, len(f.Funcs()), len(f.Kernels()), launches, want)
		}
		if strings.HasSuffix(path, ".cu") {
			c := perDir[filepath.Dir(path)]
			c.kernels += len(f.Kernels())
			c.launches += launches
			for _, fn := range f.Funcs() {
				c.hasMain = c.hasMain || fn.Name == "main"
			}
			perDir[filepath.Dir(path)] = c
		}
		switch {
		case launches > want:
			t.Errorf("%s: %d launches found but the text has only %d `<<<`", path, launches, want)
		case launches < want && !stress:
			t.Errorf("%s: %d launches found, the text has %d `<<<`", path, launches, want)
		}
		if program {
			programs++
		}
		Inspect(f, func(n Node) bool {
			switch n := n.(type) {
			case *Opaque:
				if verbose {
					t.Logf("  opaque %q: %.60q", n.Reason, f.Text(n))
				}
			case *OpaqueStmt:
				if verbose {
					t.Logf("  opaque-stmt %q: %.60q", n.Reason, f.Text(n))
				}
			case *OpaqueExpr:
				if verbose {
					t.Logf("  opaque-expr %q: %.60q", n.Reason, f.Text(n))
				}
			}
			return true
		})
		if !program {
			continue
		}
		for _, fn := range f.Funcs() {
			Inspect(fn, func(n Node) bool {
				switch n := n.(type) {
				case *OpaqueStmt:
					t.Errorf("%s: opaque statement in %s (%s): %.60q", path, fn.Name, n.Reason, f.Text(n))
				case *OpaqueExpr:
					t.Errorf("%s: opaque expression in %s (%s): %.60q", path, fn.Name, n.Reason, f.Text(n))
				}
				return true
			})
		}
	}
	for dir, c := range perDir {
		if c.kernels == 0 || c.hasMain && c.launches == 0 {
			t.Errorf("%s: %d kernels and %d launches found; every corpus program has a kernel, and one with a main launches one", dir, c.kernels, c.launches)
		}
	}
	if programs < 10 {
		t.Errorf("only %d corpus programs under ../testdata/kernels; expected the 11 benchmark programs", programs)
	}
}
