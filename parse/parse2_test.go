package parse

import "testing"

func TestMoreDeclarations(t *testing.T) {
	expectParse(t, "template <> __device__ float conv<float>(float x) { return x; }",
		`(func template __device__ conv<float> "float" (params (param "float" x)) (block (return x)))`)
	expectParse(t, "struct V { explicit operator float() const { return 0.f; } void *operator new(size_t n); float &operator[](int i); };",
		`(struct V (func explicit operator float _ (params) (block (return 0.f))) (func operator new "void *" (params (param "size_t" n)) proto) (func operator[] "float &" (params (param "int" i)) proto))`)
	expectParse(t, "template <typename... Ts> __device__ auto sum(Ts... xs) { return (xs + ... + 0); }",
		`(func template __device__ sum "auto" (params (param "Ts..." xs)) (block (return (paren (+ (+ xs ...) 0)))))`)
	expectParse(t, "SanitizerResult SANITIZERAPI sanitizerAlloc(CUcontext ctx, void **devPtr);",
		`(func sanitizerAlloc "SanitizerResult" (params (param "CUcontext" ctx) (param "void **" devPtr)) proto)`)
	expectParse(t, "typedef int (CUDAAPI *fn_t)(int);", `(typedef fn_t "int (CUDAAPI *)(int)")`)
	expectParse(t, "#define LB(t) __launch_bounds__(t)\n#define RESTRICT __restrict__\n__global__ void LB(64) k(float *RESTRICT p) {}",
		`(func __global__ launch_bounds k "void" (params (param "float *" p)) (block))`)
	expectParse(t, "#define KERNEL extern \"C\" __global__\nKERNEL void k() {}", `(func extern __global__ k "void" (params) (block))`)
	expectParse(t, "#if 0\nint hidden;\n#else\nint shown;\n#endif\n#ifdef X\nint first;\n#else\nint second;\n#endif",
		`(vars (var shown "int")) (vars (var first "int"))`)
	expectParse(t, "%:define D 1\nint a<:2:> = <%1, 2%>;", `(vars (var a "int" (init 1 2)))`)
	expectParse(t, "namespace fs = std::filesystem; inline namespace v1 { int x; }",
		`(using) (namespace v1 (vars (var x "int")))`)
	expectParse(t, "alignas(16) struct A { int x; }; struct alignas(8) B { };", `(struct A (vars (var x "int"))) (struct B)`)
}

func TestMoreStatements(t *testing.T) {
	expectStmt(t, "#pragma unroll 4\nfor (int i = 0; i < 4; ++i) {}", `(for (decl (var i "int" 0)) (< i 4) (++ i) (block))`)
	expectStmt(t, "_Pragma(\"unroll\") for (;;) {}", `(opaque-stmt "macro _Pragma") (for _ _ _ (block))`)
	src := "#define IF_LANE0 if ((threadIdx.x & 31) == 0)\n#define UNROLL _Pragma(\"unroll\")\n#define SWAP(T, a, b) { T t = a; a = b; b = t; }\n" +
		"void f(int *p) { IF_LANE0 { p[0] = 1; } UNROLL\n for (;;) {} SWAP(int, p[0], p[1])\n FOR_EACH(e, p) { }\n }"
	expectParse(t, src, `(func f "void" (params (param "int *" p)) (block (opaque-stmt "macro IF_LANE0") (block (= (index p 0) 1)) (opaque-stmt "macro UNROLL") (for _ _ _ (block)) (call SWAP (opaque-expr "macro argument") (index p 0) (index p 1)) (call FOR_EACH e p) (block)))`)
	expectStmt(t, "x = a.*pm + b->*pm;", `(= x (+ (.* a pm) (->* b pm)))`)
	expectStmt(t, "n = sizeof...(Ts);", `(= n (sizeof... (paren Ts)))`)
	expectStmt(t, "if !consteval {}", `(if _ (block))`)
	expectStmt(t, "std::vector<int> v{1, 2}; auto p = std::make_pair(1, 2.0); std::array<float, 4> a = {};",
		`(decl (var v "std::vector<int>" (init 1 2))) (decl (var p "auto" (call std::make_pair 1 2.0))) (decl (var a "std::array<float, 4>" (init)))`)
	expectStmt(t, "int x = cond ? static_cast<int>(a) : b < c;", `(decl (var x "int" (? cond (cast-static_cast "int" a) (< b c))))`)
	expectStmt(t, "float v = (float)(a) / 2;", `(decl (var v "float" (/ (cast-c "float" (paren a)) 2)))`)
	expectStmt(t, "new (buf) T(1); p->~T();", `(new "T" 1) (call (-> p ~T))`)
	expectStmt(t, "x = y < z; a = b > c;", `(= x (< y z)) (= a (> b c))`)
}

func TestLambdaScope(t *testing.T) {
	src := "void f(int a) { int b = 0; auto g = [&](int c) { int d = a < b; return d + c; }; }"
	f := ParseFile("t.cu", []byte(src))
	checkTree(t, f)
	if len(f.Diags) != 0 {
		t.Fatalf("diags: %v", f.Diags)
	}
	var lam *LambdaExpr
	Inspect(f, func(n Node) bool {
		if l, ok := n.(*LambdaExpr); ok {
			lam = l
		}
		return true
	})
	if lam == nil || len(lam.Scope.Symbols) != 2 || lam.Scope.Symbols[0].Name != "c" || lam.Scope.Symbols[1].Name != "d" {
		t.Fatalf("lambda scope: %+v", lam)
	}
	if got := Dump(lam.Body.Stmts[0]); got != `(decl (var d "int" (< a b)))` {
		t.Errorf("lambda body: %s", got)
	}
	if s := f.Funcs()[0].Scope; len(s.Symbols) != 3 {
		t.Errorf("function scope has %d symbols, want a b g", len(s.Symbols))
	}
}
