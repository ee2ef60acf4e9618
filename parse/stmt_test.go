package parse

import "testing"

func TestStatements(t *testing.T) {
	expectStmt(t, "int a = 1, *b;", `(decl (var a "int" 1) (var b "int *"))`)
	expectStmt(t, "auto x = 1; const auto &y = x; auto *z = &x;",
		`(decl (var x "auto" 1)) (decl (var y "const auto &" x)) (decl (var z "auto *" (& x)))`)
	expectStmt(t, "dim3 grid((n + 255) / 256); dim3 block{256, 1};",
		`(decl (var grid "dim3" (args (/ (paren (+ n 255)) 256)))) (decl (var block "dim3" (init 256 1)))`)
	expectStmt(t, "for (int i = 0; i < n; ++i) s += i;", `(for (decl (var i "int" 0)) (< i n) (++ i) (+= s i))`)
	expectStmt(t, "for (;;) {}", `(for _ _ _ (block))`)
	expectStmt(t, "for (auto &x : v) x = 0;", `(range-for (var x "auto &") v (= x 0))`)
	expectStmt(t, "for (auto &[k, v] : m) {}", `(range-for (var [k, v] "auto &") m (block))`)
	expectStmt(t, "while (i < n) i++; do { i--; } while (i);", `(while (< i n) (post++ i)) (do (block (post-- i)) i)`)
	expectStmt(t, "if (a) b(); else if (c) d(); else {}", `(if a (call b) (if c (call d) (block)))`)
	expectStmt(t, "if constexpr (N > 4) {}", `(if (> N 4) (block))`)
	expectStmt(t, "if (int x = g(); x > 0) {}", `(if (decl (var x "int" (call g))) (> x 0) (block))`)
	expectStmt(t, "if (auto *p = h()) {}", `(if (call h) (block))`)
	expectStmt(t, "switch (x) { case 1: case A::B: break; default: return; }",
		`(switch x (block (case 1) (case A::B) (break) (default) (return)))`)
	expectStmt(t, "goto out; out: return;", `(goto out) (label out (return))`)
	expectStmt(t, "continue; ;", `(continue) (empty)`)
	expectStmt(t, "asm volatile(\"bar.sync 0;\" ::: \"memory\");", `(opaque-stmt "inline assembly")`)
	expectStmt(t, "try { f(); } catch (const std::exception &e) {} catch (...) {}",
		`(try (block (call f)) (catch (param "const std::exception &" e) (block)) (catch _ (block)))`)
	expectStmt(t, "struct P { int a; }; P p{1}; typedef int I; using J = float;",
		`(struct P (vars (var a "int"))) (decl (var p "P" (init 1))) (typedef I "int") (typedef J "float")`)
	expectStmt(t, "static_assert(N > 0, \"n\");", `(opaque "static_assert")`)
	expectStmt(t, "CUDA_CHECK(cudaMalloc(&p, n));", `(call CUDA_CHECK (call cudaMalloc (& p) n))`)
	expectStmt(t, "CHECK(x)\nint y = 0;", `(call CHECK x) (decl (var y "int" 0))`)
	expectStmt(t, "extern __shared__ float s[];", `(decl (var extern __shared__ s "float"))`)
	expectStmt(t, "std::vector<float> h(n);", `(decl (var h "std::vector<float>" (args n)))`)
	expectStmt(t, "auto start = std::chrono::high_resolution_clock::now();",
		`(decl (var start "auto" (call std::chrono::high_resolution_clock::now)))`)
	expectStmt(t, "T::value_type v; typename T::type w = 0;",
		`(decl (var v "T::value_type")) (decl (var w "typename T::type" 0))`)
	expectStmt(t, "int (*fp)(int) = f;", `(decl (var fp "int (*)(int)" f))`)
	expectStmt(t, "[[maybe_unused]] int u; [[likely]] return;", `(decl (var u "int")) (return)`)
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

// TestStartsDeclKeyword checks startsDeclKeyword, which tests token ids,
// against the keywords it stands for, spelled out: the lexer gives each
// keyword the id of its reservedWords entry (TestTokIDs).
func TestStartsDeclKeyword(t *testing.T) {
	want := map[string]bool{}
	for _, w := range []string{"const", "volatile", "auto", "struct", "class", "union", "enum", "typename", "decltype",
		"__restrict__", "alignas", "__attribute__", "__align__", "__typeof__", "typeof"} {
		want[w] = true
	}
	for w := range keywords {
		e, ok := reservedWords[w]
		if !ok || e.cls&clsKeyword == 0 {
			t.Fatalf("%q: no keyword class", w)
		}
		if got := startsDeclKeyword(e.kw); got != want[w] {
			t.Errorf("startsDeclKeyword(%q) = %v, want %v", w, got, want[w])
		}
	}
	for w := range want {
		if !keywords[w] {
			t.Errorf("%q is no keyword", w)
		}
	}
}

// TestPointerTemplateArgs: `vector<T *>` with T from a header is a type.
func TestPointerTemplateArgs(t *testing.T) {
	expectStmt(t, "std::vector<Ctrl*> v(n);", `(decl (var v "std::vector<Ctrl *>" (args n)))`)
	expectStmt(t, "vector<IndexT *> a(n), b(n);", `(decl (var a "vector<IndexT *>" (args n)) (var b "vector<IndexT *>" (args n)))`)
	expectStmt(t, "std::pair<ns::Node const *, Edge &> e(x, y);", `(decl (var e "std::pair<ns::Node const *, Edge &>" (args x y)))`)
	expectExpr(t, "x = a < b * c", `(= x (< a (* b c)))`)
}

// TestBlockScopeFunctionDecl: `extern __device__ void f(void);` in a body.
func TestBlockScopeFunctionDecl(t *testing.T) {
	expectStmt(t, "extern __device__ void trap_here(void); trap_here();", `(decl (var extern __device__ trap_here "void")) (call trap_here)`)
	expectNoDiag(t, "__device__ void c(int *p) { extern __device__ void error(void); if (!p) error(); }")
}
