package parse

import (
	"os"
	"strings"
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
	// The issue-17 gap constructs mixed into corpus files: each inserted
	// at file scope and inside the first function body of a few files.
	for i, path := range corpusFiles(f) {
		if i%16 != 0 {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, g := range gapSeeds {
			f.Add(mixIn(src, g))
		}
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

// gapSeeds are the constructs of issue 17's parser gaps.
var gapSeeds = []string{
	"thrust::copy(x, y, thrust::discard_iterator{});", "auto v = base<int>{1};", "r = reduce(x, ns::plus{});",
	"cudaMemAdvise(p, n, a, cudaMemLocation{cudaMemLocationTypeDevice, 0});", "f(cudaExtent{n, 1, 1});",
	"BENCHMARK(bm).Arg(1).Unit(benchmark::kMillisecond);", "if (i < n and not (a == 0 or b == 0)) x and_eq 1;",
	"x = compl a bitand b bitor c xor d not_eq e;", "std::vector<Ctrl*> v(n), w(n);", "MY_KERNEL void f(int *p) {}",
	"EXPORT_API\ntemplate <typename T> __global__ void k(T *x) {}", "int t = tile_size_v<CG> * 2;",
	"if (typeid(T) == typeid(double)) {}", "int x = (A * (B * 2));", "extern __device__ void trap_here(void);",
	"n = sizeof(Tmpl<T>);", "p = (EGLClientBuffer)(intptr_t)x;", "k << < g, b >> > (d, n);", "k << < g, b",
}

// mixIn puts g into src twice: at file scope before the first line that
// starts a declaration after the includes, and after the first '{'.
func mixIn(src []byte, g string) []byte {
	s := string(src)
	out := s
	if i := strings.Index(s, "\n\n"); i >= 0 {
		out = s[:i+1] + g + "\n" + s[i+1:]
	}
	if j := strings.IndexByte(out, '{'); j >= 0 {
		out = out[:j+1] + "\n" + g + "\n" + out[j+1:]
	}
	return []byte(out)
}

// TestFuzzSeeds runs the fuzz seeds as a plain test, so `go test` covers them.
func TestFuzzSeeds(t *testing.T) {
	for _, s := range fuzzSeeds {
		if err := verify(ParseFile("seed.cu", []byte(s))); err != "" {
			t.Errorf("%q: %s", s, err)
		}
	}
	for _, g := range gapSeeds {
		src := mixIn([]byte("#include <cstdio>\n\nvoid f(int n) {\n  n++;\n}\n"), g)
		if err := verify(ParseFile("gap.cu", src)); err != "" {
			t.Errorf("%q: %s", src, err)
		}
	}
}
