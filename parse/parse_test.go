package parse

import (
	"strings"
	"testing"
)

func TestDeclarations(t *testing.T) {
	expectParse(t, "int a = 1, *b, c[3] = {1, 2, 3};",
		`(vars (var a "int" 1) (var b "int *") (var c "int" (init 1 2 3)))`)
	expectParse(t, "static __device__ __constant__ float cc[16]; extern __shared__ int sh[];",
		`(vars (var static __device__ __constant__ cc "float")) (vars (var extern __shared__ sh "int"))`)
	expectParse(t, "__device__ int counter = 0;", `(vars (var __device__ counter "int" 0))`)
	expectParse(t, "namespace A { namespace B::C { int x; } } namespace { int y; }",
		`(namespace A (namespace B::C (vars (var x "int")))) (namespace (vars (var y "int")))`)
	expectParse(t, `extern "C" { void foo(int); } extern "C" int bar;`,
		`(extern "C" (func foo "void" (params (param "int")) proto)) (extern "C" (vars (var bar "int")))`)
	expectParse(t, "typedef unsigned long long u64; using V = const u64 *; using namespace std; using std::vector;",
		`(typedef u64 "unsigned long long") (typedef V "const u64 *") (using) (using)`)
	expectParse(t, "typedef struct { int a; } Foo; typedef void (*fn_t)(int, float);",
		`(struct (vars (var a "int"))) (typedef Foo "struct") (typedef fn_t "void (*)(int, float)")`)
	expectParse(t, "enum class Color : int { Red, Green }; enum { A, B };", `(enum Color) (enum)`)
	expectParse(t, "static_assert(sizeof(int) == 4, \"int\"); ;", `(opaque "static_assert")`)
	expectParse(t, "struct Fwd; class C;", `(opaque "forward declaration") (opaque "forward declaration")`)
}

func TestFunctions(t *testing.T) {
	expectParse(t, "__global__ void k(const float *__restrict__ in, float *out, int n) {}",
		`(func __global__ k "void" (params (param "const float * __restrict__" in) (param "float *" out) (param "int" n)) (block))`)
	expectParse(t, "__host__ __device__ __forceinline__ static inline constexpr int sq(int x) { return x * x; }",
		`(func __host__ __device__ __forceinline__ static inline constexpr sq "int" (params (param "int" x)) (block (return (* x x))))`)
	expectParse(t, "__global__ void __launch_bounds__(256, 2) k(void);",
		`(func __global__ launch_bounds k "void" (params) proto)`)
	expectParse(t, "__launch_bounds__(128) __global__ void k2() {}",
		`(func __global__ launch_bounds k2 "void" (params) (block))`)
	expectParse(t, "void A::B::f(int a = 3) const noexcept {}",
		`(func A::B::f "void" (params (param "int" a = 3)) (block))`)
	expectParse(t, "int main(int argc, char **argv) { return 0; }",
		`(func main "int" (params (param "int" argc) (param "char **" argv)) (block (return 0)))`)
	expectParse(t, "auto f(int x) -> decltype(x) { return x; }",
		`(func f "auto" (params (param "int" x)) (block (return x)))`)
	expectParse(t, "[[nodiscard]] __attribute__((always_inline)) int g(void) { return 1; }",
		`(func g "int" (params) (block (return 1)))`)
	expectParse(t, "void (*get_handler(int))(int);", `(func get_handler "void (*)(int)" (params (param "int")) proto)`)
	expectParse(t, "void v(int, ...);", `(func v "void" (params (param "int")) proto)`)
	expectParse(t, "Foo g_foo(42);", `(vars (var g_foo "Foo" (args 42)))`)
	expectParse(t, "std::vector<int> gv(10, 1);", `(vars (var gv "std::vector<int>" (args 10 1)))`)
}

func TestTemplates(t *testing.T) {
	expectParse(t, "template <typename T, int BLOCK> __global__ void k(T *p) { p[0] = T(BLOCK); }",
		`(func template __global__ k "void" (params (param "T *" p)) (block (= (index p 0) (call T BLOCK))))`)
	expectParse(t, "template <typename T> struct Vec { T *data; }; template <> struct Vec<bool> {};",
		`(template struct Vec (vars (var data "T *"))) (template struct Vec<bool>)`)
	expectParse(t, "template <class T, int N = 4> T sum(const Vec<T> &v);",
		`(func template sum "T" (params (param "const Vec<T> &" v)) proto)`)
	expectParse(t, "template <typename T> template <typename U> void Box<T>::put(U u) {}",
		`(func template Box<T>::put "void" (params (param "U" u)) (block))`)
	expectParse(t, "template <typename T> using Ptr = T *;", `(typedef Ptr "T *")`)
	expectParse(t, "template class Vec<int>;", `(opaque "explicit instantiation")`)
	expectParse(t, "std::map<int, std::vector<std::pair<int, int>>> m;",
		`(vars (var m "std::map<int, std::vector<std::pair<int, int>>>"))`)
}

func TestClasses(t *testing.T) {
	expectParse(t, "struct S { int x; S(int a) : x(a) {} ~S() {} void f() const; static int g(); };",
		`(struct S (vars (var x "int")) (func S _ (params (param "int" a)) (block)) (func ~S _ (params) (block)) (func f "void" (params) proto) (func static g "int" (params) proto))`)
	expectParse(t, "class C : public Base { public: virtual ~C(); C &operator=(const C &) = default; bool operator<(const C &o) const { return x < o.x; } private: int x = 0; };",
		`(class C (func virtual ~C _ (params) proto) (func operator= "C &" (params (param "const C &")) proto) (func operator< "bool" (params (param "const C &" o)) (block (return (< x (. o x))))) (vars (var x "int" 0)))`)
	expectParse(t, "S::S(int a) : x(a), y{a} {} S::~S() {}",
		`(func S::S _ (params (param "int" a)) (block)) (func S::~S _ (params) (block))`)
	expectParse(t, "struct __align__(16) P { float x, y; };", `(struct P (vars (var x "float") (var y "float")))`)
	expectParse(t, "union U { int i; float f; } u;", `(union U (vars (var i "int")) (vars (var f "float"))) (vars (var u "U"))`)
	expectParse(t, "struct B { unsigned flag : 1; };", `(struct B (vars (var flag "unsigned")))`)
}

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

func TestExpressions(t *testing.T) {
	expectExpr(t, "a = b + c * d - e / f % g", `(= a (- (+ b (* c d)) (% (/ e f) g)))`)
	expectExpr(t, "a += b <<= c", `(+= a (<<= b c))`)
	expectExpr(t, "x = a || b && c | d ^ e & f == g < h << i + j * k",
		`(= x (|| a (&& b (| c (^ d (& e (== f (< g (<< h (+ i (* j k)))))))))))`)
	expectExpr(t, "x = a ? b : c ? d : e", `(= x (? a b (? c d e)))`)
	expectExpr(t, "x = a, y = b", `(, (= x a) (= y b))`)
	expectExpr(t, "-a + !b - ~c * *p + &q", `(+ (- (+ (- a) (! b)) (* (~ c) (* p))) (& q))`)
	expectExpr(t, "p->q.r[3]++ + --i", `(+ (post++ (index (. (-> p q) r) 3)) (-- i))`)
	expectExpr(t, "(float)y + (T *)p + (unsigned long long)z + (size_t)n",
		`(+ (+ (+ (cast-c "float" y) (cast-c "T *" p)) (cast-c "unsigned long long" z)) (cast-c "size_t" n))`)
	expectExpr(t, "(a) + b", `(+ (paren a) b)`)
	expectExpr(t, "(Foo)x", `(cast-c "Foo" x)`)
	expectExpr(t, "static_cast<float>(x) + reinterpret_cast<const int4 *>(p)[i]",
		`(+ (cast-static_cast "float" x) (index (cast-reinterpret_cast "const int4 *" p) i))`)
	expectExpr(t, "float(x) + int{3} + unsigned(y)", `(+ (+ (cast-functional "float" x) (init "int" 3)) (cast-functional "unsigned" y))`)
	expectExpr(t, "sizeof(int) + sizeof x + sizeof(x[0]) + alignof(float4)",
		`(+ (+ (+ (sizeof "int") (sizeof x)) (sizeof (paren (index x 0)))) (alignof "float4"))`)
	expectExpr(t, "std::max<int>(a, b) + std::numeric_limits<float>::max()",
		`(+ (call (tmpl std::max "int") a b) (call std::numeric_limits<float>::max))`)
	expectExpr(t, "f<T, 8>(x) + (a < b) + (c > d)", `(+ (+ (call (tmpl f T 8) x) (paren (< a b))) (paren (> c d)))`)
	expectExpr(t, "kernel<<<grid, block>>>(a, b)", `(launch kernel (config grid block) a b)`)
	expectExpr(t, "k<float, 256><<<g, 256, 0, stream>>>(d, n)", `(launch (tmpl k "float" 256) (config g 256 0 stream) d n)`)
	expectExpr(t, "ns::k<<<dim3(n / 256), 256, smem * sizeof(float)>>>()",
		`(launch ns::k (config (call dim3 (/ n 256)) 256 (* smem (sizeof "float"))))`)
	expectExpr(t, "p = new float[n]; delete[] p; q = new Foo(1, 2); delete q",
		`(= p (new "float" count n)) (delete[] p) (= q (new "Foo" 1 2)) (delete q)`)
	expectExpr(t, "f({1, 2}, {})", `(call f (init 1 2) (init))`)
	expectExpr(t, "std::sort(v.begin(), v.end(), [&](const int &a, int b) { return a < b; })",
		`(call std::sort (call (. v begin)) (call (. v end)) (lambda (params (param "const int &" a) (param "int" b)) (block (return (< a b)))))`)
	expectExpr(t, "[=] __device__ (int i) mutable -> int { return i; }(3)",
		`(call (lambda (params (param "int" i)) (block (return i))) 3)`)
	expectExpr(t, "this->x = nullptr == p", `(= (-> this x) (== nullptr p))`)
	expectExpr(t, "printf(\"a\" \"b\" \"%\" PRIu64 \"\\n\", x)", `(call printf "a" "b" "%" PRIu64 "\n" x)`)
	expectExpr(t, "x = 1.5e-3f + 0x1p4 + 10_km + 'c' + u8\"s\"_sv", `(= x (+ (+ (+ (+ 1.5e-3f 0x1p4) 10_km) 'c') u8"s"_sv))`)
	expectExpr(t, "atomicAdd(&x[i], 1)", `(call atomicAdd (& (index x i)) 1)`)
	expectExpr(t, "v = __shfl_sync(0xffffffff, v, 0)", `(= v (call __shfl_sync 0xffffffff v 0))`)
	expectExpr(t, "a.template get<0>() + ::g(1)", `(+ (call (. a get 0)) (call ::g 1))`)
	expectExpr(t, "throw std::runtime_error(\"x\")", `(throw (call std::runtime_error "x"))`)
	expectExpr(t, "cg::tiled_partition<32>(block).sync()", `(call (. (call (tmpl cg::tiled_partition 32) block) sync))`)
	expectExpr(t, "a[b[c]] = d < e ? f : g", `(= (index a (index b c)) (? (< d e) f g))`)
	expectExpr(t, "x = (T){1, 2}", `(= x (init "T" 1 2))`)
	expectExpr(t, "x = y >> 2 > z", `(= x (> (>> y 2) z))`)
	expectExpr(t, "Foo<Bar<int>>::value + 1", `(+ Foo<Bar<int>>::value 1)`)
}

func TestTypeRefFields(t *testing.T) {
	f := ParseFile("t.cu", []byte("__global__ void k(const float *__restrict__ a, float const &b, int **c, unsigned long long d[4], float *const e, T &&f) {}"))
	ps := f.Funcs()[0].Params
	type want struct {
		base                   string
		cnst, ref, rref, restr bool
		ptrs, arrays           int
	}
	wants := []want{
		{"float", true, false, false, true, 1, 0},
		{"float", true, true, false, false, 0, 0},
		{"int", false, false, false, false, 2, 0},
		{"unsigned long long", false, false, false, false, 0, 1},
		{"float", false, false, false, false, 1, 0},
		{"T", false, false, true, false, 0, 0},
	}
	for i, w := range wants {
		ty := ps[i].Type
		got := want{ty.Base, ty.Const, ty.Ref, ty.RRef, ty.Restrict, ty.Pointers, len(ty.Array)}
		if got != w {
			t.Errorf("param %d: got %+v want %+v", i, got, w)
		}
	}
	if s := f.Text(ps[0].Type); s != "const float *__restrict__" {
		t.Errorf("type span text %q", s)
	}
	if s := f.Text(ps[0].Type.BaseSpan); s != "float" {
		t.Errorf("base span text %q", s)
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
