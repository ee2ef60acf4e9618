package parse

import "testing"

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

// TestMacroRegistrationChain: a file-scope macro call configured through
// member calls (benchmark registration).
func TestMacroRegistrationChain(t *testing.T) {
	expectParse(t, "BENCHMARK(bm).Arg(1).Unit(benchmark::kMillisecond);\nint z;", `(opaque "macro invocation") (vars (var z "int"))`)
	expectParse(t, "NVBENCH_BENCH(parallel_for).set_name(\"parallel_for\");\nBENCHMARK(bm)->Arg(8)->Arg(64);",
		`(opaque "macro invocation") (opaque "macro invocation")`)
	expectNoDiag(t, "BENCHMARK(bm).Arg(1).Unit(benchmark::kMillisecond);\nint z;")
}
