package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

const sample = `package p

type r struct{ edits []int }

func (x *r) refuse(string) {}
func (x *r) edit(int)      {}

func f(x *r, n int) bool {
	ok := true
	if n < 3 {
		x.refuse("small")
		ok = false
	}
	x.edit(n)
	x.edits = append(x.edits, n)
	return ok && n != 7
}
`

func TestMutantsOf(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := mutantsOf(dir, "p.go")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, m := range ms {
		kinds[m.Kind]++
		// Every mutant must still parse (it may fail to type-check: such
		// mutants are counted as invalid, not as killed).
		src := sample[:m.Start] + m.New + sample[m.End:]
		if src == sample {
			t.Errorf("%s %s changes nothing", m.Kind, m.Desc)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0); err != nil {
			t.Errorf("%s %s does not parse: %v", m.Kind, m.Desc, err)
		}
	}
	want := map[string]int{"cmp": 2, "negate": 1, "refusal": 1, "edit": 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s mutants, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	for _, m := range ms {
		if m.Kind == "refusal" {
			got := sample[m.Start:m.End]
			if want := "x.refuse(\"small\")\n\t\tok = false"; got != want {
				t.Errorf("refusal mutant removes %q, want %q", got, want)
			}
			if want := "if false {\n" + got + "\n}"; m.New != want {
				t.Errorf("refusal mutant writes %q, want %q", m.New, want)
			}
		}
	}
}
