package parse

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// One-line expectation helpers in the style of esbuild's expectPrinted.

// expectParse checks the Dump of every top-level declaration of src.
func expectParse(t *testing.T, src, want string) {
	t.Helper()
	f := ParseFile("test.cu", []byte(src))
	var parts []string
	for _, d := range f.Decls {
		parts = append(parts, Dump(d))
	}
	if got := strings.Join(parts, " "); got != want {
		t.Errorf("parse %q\n got: %s\nwant: %s", src, got, want)
	}
	checkTree(t, f)
}

// expectStmt checks the statements of `void f() { src }`.
func expectStmt(t *testing.T, src, want string) {
	t.Helper()
	f := ParseFile("test.cu", []byte("void f() {\n"+src+"\n}"))
	fns := f.Funcs()
	if len(fns) != 1 || fns[0].Body == nil {
		t.Fatalf("stmt %q: no function body", src)
	}
	var parts []string
	for _, s := range fns[0].Body.Stmts {
		parts = append(parts, Dump(s))
	}
	if got := strings.Join(parts, " "); got != want {
		t.Errorf("stmt %q\n got: %s\nwant: %s", src, got, want)
	}
	checkTree(t, f)
}

// expectExpr checks the expression statement `src;` inside a function.
func expectExpr(t *testing.T, src, want string) {
	t.Helper()
	expectStmt(t, src+";", want)
}

// expectDiag checks that parsing src reports code.
func expectDiag(t *testing.T, src, code string) {
	t.Helper()
	f := ParseFile("test.cu", []byte(src))
	for _, d := range f.Diags {
		if d.Code == code {
			checkTree(t, f)
			return
		}
	}
	t.Errorf("parse %q: want diagnostic %s, got %v", src, code, f.Diags)
}

// expectNoDiag checks that src parses without diagnostics.
func expectNoDiag(t *testing.T, src string) {
	t.Helper()
	f := ParseFile("test.cu", []byte(src))
	for _, d := range f.Diags {
		t.Errorf("parse %q: unexpected %s", src, f.Src.Format(d))
	}
	checkTree(t, f)
}

// checkTree verifies the invariants every parse must keep: the tokens
// reproduce the source, every span is in bounds, and children nest in
// their parents.
func checkTree(t testing.TB, f *File) {
	t.Helper()
	if err := verify(f); err != "" {
		t.Errorf("%s", err)
	}
}

func verify(f *File) string {
	src := f.Src.Bytes
	var b strings.Builder
	for _, tk := range f.Tokens {
		b.Write(src[tk.Start:tk.End])
	}
	if b.String() != string(src) {
		return "tokens do not reproduce the source"
	}
	var stack []Node
	var bad string
	var visit func(n Node)
	visit = func(n Node) {
		if bad != "" {
			return
		}
		if n.Pos() < 0 || n.End() > len(src) || n.Pos() > n.End() {
			bad = "span out of bounds: " + Dump(n)
			return
		}
		if len(stack) > 0 {
			par := stack[len(stack)-1]
			if n.Pos() < par.Pos() || n.End() > par.End() {
				bad = "child " + Dump(n) + " outside parent " + Dump(par)
				return
			}
		}
		stack = append(stack, n)
		first := true
		Inspect(n, func(c Node) bool {
			if first {
				first = false
				return true
			}
			visit(c)
			return false
		})
		stack = stack[:len(stack)-1]
	}
	visit(f)
	for _, d := range f.Diags {
		if d.Pos < 0 || d.End > len(src) || d.Pos > d.End {
			return "diagnostic out of bounds: " + d.Code
		}
	}
	return bad
}

// treeHash hashes everything parseFile returns, as TestEquivalence does.
func treeHash(f *File) string {
	h := sha256.New()
	bw := bufio.NewWriter(h)
	s := &serializer{w: bw, seen: map[ptrKey]int{}}
	s.value(reflect.ValueOf(f))
	bw.Flush()
	return hex.EncodeToString(h.Sum(nil))
}
