package parse

import (
	"strings"
	"testing"
)

func TestMacros(t *testing.T) {
	expectParse(t, "#define DEVICE_FN __device__ __forceinline__\nDEVICE_FN float f() { return 0.f; }",
		`(func __device__ __forceinline__ f "float" (params) (block (return 0.f)))`)
	expectParse(t, "HOST_DEVICE inline float g(float x) { return x; }",
		`(func HOST_DEVICE inline g "float" (params (param "float" x)) (block (return x)))`)
	expectParse(t, "#define REAL float\nREAL h(REAL x);", `(func h "REAL" (params (param "REAL" x)) proto)`)
	expectParse(t, "DECLARE_THING(foo)\nint x;", `(opaque "macro invocation") (vars (var x "int"))`)
	expectParse(t, "KERNEL_SIG(foo)\n{ x[0] = 1; }", `(opaque "function defined by a macro")`)
	f := ParseFile("m.cu", []byte("#define A 1\n#define F(a, b) \\\n  ((a) + (b))\n#define E\n"))
	if len(f.Macros) != 3 || !f.Macros[1].IsFunc || f.Macros[1].Body != "((a) + (b))" || len(f.Macros[1].Params) != 2 || f.Macros[2].Body != "" {
		t.Errorf("macros: %+v", f.Macros)
	}
}

func TestScope(t *testing.T) {
	src := "__global__ void k(int *a, int n) { int i = threadIdx.x; for (int j = 0; j < n; j++) { float v = a[j]; } auto l = [](int q) { int r = q; return r; }; }"
	f := ParseFile("t.cu", []byte(src))
	fn := f.Kernels()[0]
	var names []string
	for _, s := range fn.Scope.Symbols {
		names = append(names, s.Name)
	}
	if got := join(names); got != "a n i j v l" {
		t.Errorf("scope: %s", got)
	}
	if s := fn.Scope.Lookup("a", len(src)); s == nil || !s.Param || s.Type.Pointers != 1 {
		t.Errorf("lookup a: %+v", s)
	}
	if s := fn.Scope.Lookup("v", 0); s != nil {
		t.Errorf("v visible before its declaration")
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestDiagnostics(t *testing.T) {
	expectDiag(t, "/* open", "PARSE001")
	expectDiag(t, "char *s = \"open;\n", "PARSE002")
	expectDiag(t, "void f() {", "PARSE003")
	expectDiag(t, "}", "PARSE003")
	expectDiag(t, "int a @ b;", "PARSE004")
	expectDiag(t, "int \xff;", "PARSE005")
	expectDiag(t, "#if X\nint a;", "PARSE006")
	expectDiag(t, "void f() { x = "+strings.Repeat("(", 2000)+"1; }", "PARSE007")
	expectDiag(t, "int 3;", "PARSE010")
	expectDiag(t, "void f() { a b c d; }", "PARSE011")
	expectDiag(t, "void f() { x = ); }", "PARSE012")
	expectDiag(t, "void f() { do {} while (x) }", "PARSE013")
	expectNoDiag(t, "void f() { int x = 1; }\n#if 0\n@@@ garbage\n#endif\n")
}

// TestFastPathsAgree checks that the parser's fast paths (leaf, plainName,
// the one-identifier member, the plain declarator and abstract
// declarator, one-word type texts, appendPlain, skipWordArgs) give
// exactly what the general path gives: the whole tree, spans, texts,
// scopes, diagnostics and pointer sharing, on every equivalence input
// (the corpus, its truncations and mutations, token soups).
func TestFastPathsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	failed := 0
	for _, in := range equivInputs(t) {
		fast, general := parseFile("x.cu", in.src, false), parseFile("x.cu", in.src, true)
		if treeHash(fast) != treeHash(general) {
			failed++
			if failed <= 10 {
				t.Errorf("%s: the fast paths give another tree than the general path", in.name)
			}
		}
	}
}

// TestLaunchedKernels: a function launched with <<< >>> whose qualifier
// is hidden in a macro from an unread header is a kernel.
func TestLaunchedKernels(t *testing.T) {
	src := "MY_KERNEL void scale(float *x, int n) { x[0] = 1; }\nvoid host(int n) {}\nint helper() { return 0; }\n" +
		"int main() { float *x; scale<<<1, 256>>>(x, 256); host(3); }"
	f := ParseFile("k.cu", []byte(src))
	var names []string
	for _, k := range f.Kernels() {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, ","); got != "scale" {
		t.Errorf("kernels: got %q, want scale", got)
	}
	checkTree(t, f)
	f = ParseFile("k.cu", []byte("MY_KERNEL void scale(float *x) {}\nint main() { scale(0); }"))
	if len(f.Kernels()) != 0 {
		t.Errorf("a function that is never launched is no kernel")
	}
}

// TestMacroBeforeTemplate: an object-like macro alone on a line before a
// template keeps the template.
func TestMacroBeforeTemplate(t *testing.T) {
	expectParse(t, "EXPORT_API\ntemplate <typename T>\n__global__ void k(T *x) { x[0] = 1; }",
		`(opaque "macro invocation") (func template __global__ k "void" (params (param "T *" x)) (block (= (index x 0) 1)))`)
	expectNoDiag(t, "SOME_MACRO\ntemplate <typename T> struct S { T v; };")
}

// TestProductNotCast: `(A * (B * 2))` with A and B variables from
// elsewhere is a product, not a cast to a function type.
func TestProductNotCast(t *testing.T) {
	expectStmt(t, "int x = (A * (B * 2));", `(decl (var x "int" (paren (* A (paren (* B 2))))))`)
	expectNoDiag(t, "int nreps;\nvoid r(float t) { printf(\"%f\", (nreps * (memsize * 2e-6)) / t); }")
}
