package parse

import (
	"os"
	"testing"
)

// FuzzParse checks that no input panics the lexer or parser, that the
// tokens always reproduce the input, and that every node's span lies within
// the source and within its parent's span.
func FuzzParse(f *testing.F) {
	for _, path := range corpusFiles(f) {
		if src, err := os.ReadFile(path); err == nil {
			for _, chunk := range chunks(src, 2048) {
				f.Add(chunk)
			}
		}
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file := ParseFile("fuzz.cu", src)
		if err := verify(file); err != "" {
			t.Fatal(err)
		}
		Launches := file.Launches()
		_ = Launches
		_ = Dump(file)
	})
}

// chunks splits src at line boundaries into pieces of about n bytes: the
// fuzzer minimises and mutates small inputs much faster than whole files.
func chunks(src []byte, n int) [][]byte {
	var out [][]byte
	for len(src) > n {
		cut := n
		for cut < len(src) && src[cut-1] != '\n' {
			cut++
		}
		out = append(out, src[:cut])
		src = src[cut:]
	}
	return append(out, src)
}

// fuzzSeeds are small inputs that reach the error paths.
var fuzzSeeds = []string{
	"", "{", "}", "(", ")", "<", ">", "<<<", ">>>", "#if 0", "#else", "/*", "\"", "'", "R\"(",
	"void f() { x = (((( 1; }", "template <", "template <typename T> struct", "struct { int",
	"k<<<a, b>>>(", "f(a, b", "a<b<c<d>>>(e)", "int a[] = {1, {2, {3", "namespace {",
	"extern \"C\" {", "auto l = [&](int x) { return x;", "if (x) else", "for (;;", "switch (x) { case",
	"#define F(x) \\\n x\nF(", "x = y ? : z;", "operator", "~", "::", "a::b::", "typedef", "using x =",
	"enum class E : int {", "__global__ void __launch_bounds__(", "\x00\xff\xfe", "int x = sizeof(",
	"new int[", "delete[", "static_cast<", "T(x)(y)(z)", "a.b->c.*d->*e", "[[", "__attribute__((",
}

// TestFuzzSeeds runs the fuzz seeds as a plain test, so `go test` covers them.
func TestFuzzSeeds(t *testing.T) {
	for _, s := range fuzzSeeds {
		if err := verify(ParseFile("seed.cu", []byte(s))); err != "" {
			t.Errorf("%q: %s", s, err)
		}
	}
}
