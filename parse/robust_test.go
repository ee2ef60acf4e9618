package parse

import (
	"strings"
	"testing"
	"time"
)

// TestHostileInputs feeds pathological sources: deep nesting must be capped
// (PARSE007) without exhausting the stack, long flat chains must stay
// linear, and invariants must hold.
func TestHostileInputs(t *testing.T) {
	cases := map[string]string{
		"parens":      "void f() { x = " + strings.Repeat("(", 30000) + "1" + strings.Repeat(")", 30000) + "; }",
		"braces":      "void f() " + strings.Repeat("{", 30000) + strings.Repeat("}", 30000),
		"open braces": "void f() " + strings.Repeat("{", 30000),
		"namespaces":  strings.Repeat("namespace a { ", 20000),
		"unary":       "int x = " + strings.Repeat("-", 30000) + "1;",
		"angles":      "void f() { a" + strings.Repeat("<b", 20000) + "; }",
		"templates":   "std::vector" + strings.Repeat("<std::vector", 5000) + strings.Repeat(">", 5001) + " v;",
		"plus chain":  "int x = 1" + strings.Repeat(" + 1", 30000) + ";",
		"assign":      "void f() { a" + strings.Repeat(" = a", 30000) + "; }",
		"else if":     "void f() { if (a) {}" + strings.Repeat(" else if (a) {}", 20000) + " }",
		"ternary":     "int x = " + strings.Repeat("a ? b : ", 20000) + "c;",
		"lambdas":     "auto x = " + strings.Repeat("[](){ return ", 20000) + "1" + strings.Repeat("; }()", 20000) + ";",
		"casts":       "int x = " + strings.Repeat("(int)", 30000) + "y;",
		"calls":       "int x = f" + strings.Repeat("(1)", 30000) + ";",
		"brackets":    "int x = a" + strings.Repeat("[", 30000) + ";",
		"junk":        strings.Repeat("@#$%^&*()[]{}<>;:'\"\\\x00\xff", 20000),
		"if 0":        strings.Repeat("#if 0\n", 10000) + "x",
		"continued":   "#define A " + strings.Repeat("x \\\n", 30000),
		"launch":      strings.Repeat("k<<<", 20000),
		"stmts":       "void f() {" + strings.Repeat("x = 1;", 50000) + "}",
	}
	for name, src := range cases {
		start := time.Now()
		f := ParseFile(name, []byte(src))
		if err := verify(f); err != "" {
			t.Errorf("%s: %s", name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}
