package parse

import (
	"strings"
	"testing"
)

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

// TestLeafDeclinesSpecialWords checks that every word the general path
// treats specially (reserved words, operator and expression words,
// __alignof) parses the same with and without the fast paths in every
// operand position; leaf must leave them all to the general path.
func TestLeafDeclinesSpecialWords(t *testing.T) {
	words := []string{"__alignof"}
	for w := range reservedWords {
		words = append(words, w)
	}
	for _, w := range words {
		src := strings.ReplaceAll("void f(int x) { y = W; y = W(1); y = W[2]; W.a; W->b; g(W, W); y = x + W; return W; }\n", "W", w)
		fast, general := parseFile("x.cu", []byte(src), false), parseFile("x.cu", []byte(src), true)
		if a, b := Dump(fast), Dump(general); a != b || treeHash(fast) != treeHash(general) {
			t.Errorf("%q: fast %s\ngeneral %s", w, a, b)
		}
	}
}

// TestBraceTemporaries: `T{...}` with T a qualified name, a template-id or
// a type from a header the parser does not read (issue 17, parser gaps).
func TestBraceTemporaries(t *testing.T) {
	expectExpr(t, "thrust::copy(x, y, thrust::discard_iterator{})", `(call thrust::copy x y (init "thrust::discard_iterator"))`)
	expectExpr(t, "r = reduce(x, ns::plus{})", `(= r (call reduce x (init "ns::plus")))`)
	expectExpr(t, "v = base<int>{1}", `(= v (init "base<int>" 1))`)
	expectExpr(t, "cudaMemAdvise(p, n, a, cudaMemLocation{cudaMemLocationTypeDevice, 0})",
		`(call cudaMemAdvise p n a (init "cudaMemLocation" cudaMemLocationTypeDevice 0))`)
	expectExpr(t, "f(cudaExtent{n, 1, 1})", `(call f (init "cudaExtent" n 1 1))`)
	expectExpr(t, "g(ns::pair<int, float>{1, 2.0f})", `(call g (init "ns::pair<int, float>" 1 2.0f))`)
	expectExpr(t, "return Box{a}", `(return (init "Box" a))`)
	// A name in scope is no type; `NAME {` at a statement start stays a macro.
	expectStmt(t, "int v; g(v);", `(decl (var v "int")) (call g v)`)
	expectStmt(t, "IF_LANE0 { x = 1; }", `IF_LANE0 (block (= x 1))`)
}

// TestVariableTemplates: a variable template used as a value.
func TestVariableTemplates(t *testing.T) {
	expectExpr(t, "t = tile_size_v<CG>", `(= t (tmpl tile_size_v CG))`)
	expectExpr(t, "g(tile_size_v<CG> * 2, is_pod_v<T>)", `(call g (* (tmpl tile_size_v CG) 2) (tmpl is_pod_v T))`)
	expectExpr(t, "launch(stream, kern<B, I, T>, grid)", `(call launch stream (tmpl kern B I T) grid)`)
	expectExpr(t, "n = sizeof(Tmpl<T>)", `(= n (sizeof (paren (tmpl Tmpl T))))`)
	// Comparisons stay comparisons.
	expectExpr(t, "x = a < b > c", `(= x (> (< a b) c))`)
	expectExpr(t, "f(a < b, c > d)", `(call f (< a b) (> c d))`)
}

// TestAlternativeTokens: `and`, `or`, `not` and the other alternative
// spellings are the operators they stand for.
func TestAlternativeTokens(t *testing.T) {
	expectStmt(t, "if (i < n and not (a == 0 or b == 0)) x = 1;", `(if (&& (< i n) (! (paren (|| (== a 0) (== b 0))))) (= x 1))`)
	expectExpr(t, "x = a bitand 3 bitor 4 xor 5", `(= x (| (& a 3) (^ 4 5)))`)
	expectExpr(t, "x = compl a not_eq b", `(= x (!= (~ a) b))`)
	expectExpr(t, "x and_eq 1, y or_eq 2, z xor_eq 3", `(, (, (&= x 1) (|= y 2)) (^= z 3))`)
	expectExpr(t, "ok = not ready", `(= ok (! ready))`)
	// Names that merely start like them stay names.
	expectExpr(t, "android = order + notify + xor_mask", `(= android (+ (+ order notify) xor_mask))`)
}

// TestTypeid: typeid of a type or an expression.
func TestTypeid(t *testing.T) {
	expectExpr(t, "ok = typeid(Real) == typeid(double)", `(= ok (== (typeid Real) (typeid "double")))`)
	expectExpr(t, "puts(typeid(*f).name())", `(call puts (call (. (typeid (* f)) name)))`)
}

// TestSpacedLaunch: `k << < g, b >> > (...)`, which nvcc accepts, is a launch.
func TestSpacedLaunch(t *testing.T) {
	expectExpr(t, "lookup << < n / 256, 256 >> > (table, n)", `(launch lookup (config (/ n 256) 256) table n)`)
	expectExpr(t, "k <<\t< g, b, 0, s >>  > ()", `(launch k (config g b 0 s))`)
	// `>> >` closes nested template arguments elsewhere; `<<` stays a shift.
	expectStmt(t, "std::vector<std::vector<std::vector<int>> > v; x = a << b >> c;",
		`(decl (var v "std::vector<std::vector<std::vector<int>>>")) (= x (>> (<< a b) c))`)
}

// TestChainedCasts: `(H)(intptr_t)x` with H from a header.
func TestChainedCasts(t *testing.T) {
	expectExpr(t, "p = (EGLClientBuffer)(intptr_t)x", `(= p (cast-c "EGLClientBuffer" (cast-c "intptr_t" x)))`)
	expectExpr(t, "f((Handle)(int *)q[0])", `(call f (cast-c "Handle" (cast-c "int *" (index q 0))))`)
	expectStmt(t, "int a; y = (a)(b);", `(decl (var a "int")) (= y (call (paren a) b))`)
}
