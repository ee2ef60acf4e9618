package parse

import (
	"fmt"
	"strings"
	"testing"
)

const inspectSrc = `namespace ns {
struct S { __device__ void m(int *p) { p[0] = 1; } };
__global__ void k1(float *a) { a[threadIdx.x] = 0; }
}
extern "C" __global__ void k2(int n);
template <typename T> __global__ void k3(T *t, int n) {}
void host() {
  ns::k1<<<1, 32>>>(nullptr);
  k3<float><<<dim3(2), 64, 0, 0>>>(nullptr, 4);
  auto f = [&]() { k2<<<1, 1>>>(3); };
}
`

func TestFuncsKernelsLaunches(t *testing.T) {
	f := ParseFile("t.cu", []byte(inspectSrc))
	var names []string
	for _, fn := range f.Funcs() {
		names = append(names, fn.Name)
	}
	if got := strings.Join(names, " "); got != "m k1 k2 k3 host" {
		t.Errorf("Funcs: %s", got)
	}
	names = names[:0]
	for _, fn := range f.Kernels() {
		names = append(names, fn.Name)
	}
	if got := strings.Join(names, " "); got != "k1 k2 k3" {
		t.Errorf("Kernels: %s", got)
	}
	var launches []string
	for _, l := range f.Launches() {
		launches = append(launches, fmt.Sprintf("%s/%d/%d", f.Text(l.Kernel), len(l.Config), len(l.Args)))
	}
	if got := strings.Join(launches, " "); got != "ns::k1/2/1 k3<float>/4/2 k2/2/1" {
		t.Errorf("Launches: %s", got)
	}
	if l := f.Launches()[0]; f.Src.Bytes[l.Lparen] != '(' || f.Src.Bytes[l.Rparen] != ')' {
		t.Errorf("launch paren offsets %d %d", l.Lparen, l.Rparen)
	}
}

// TestInspectOrder checks that Inspect visits nodes in source order and
// that pruning skips children.
func TestInspectOrder(t *testing.T) {
	f := ParseFile("t.cu", []byte("void f(int a, float *b) { b[a] = a + 1; }"))
	var got []string
	last := -1
	Inspect(f, func(n Node) bool {
		if n.Pos() < last {
			t.Errorf("out of order: %s at %d after %d", Dump(n), n.Pos(), last)
		}
		last = n.Pos()
		got = append(got, fmt.Sprintf("%T", n))
		return true
	})
	want := "*parse.File *parse.FuncDecl *parse.TypeRef *parse.Param *parse.TypeRef *parse.Param *parse.TypeRef " +
		"*parse.BlockStmt *parse.ExprStmt *parse.BinaryExpr *parse.IndexExpr *parse.Ident *parse.Ident " +
		"*parse.BinaryExpr *parse.Ident *parse.BasicLit"
	if strings.Join(got, " ") != want {
		t.Errorf("Inspect order:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	n := 0
	Inspect(f, func(n2 Node) bool {
		n++
		_, isFunc := n2.(*FuncDecl)
		return !isFunc
	})
	if n != 2 {
		t.Errorf("pruned walk visited %d nodes, want 2", n)
	}
}

// TestSpans checks byte ranges of the nodes rewrites rely on.
func TestSpans(t *testing.T) {
	src := "template <typename T> __global__ void __launch_bounds__(128) k(const T *__restrict__ in, int n) { int a = 1, *b; }"
	f := ParseFile("t.cu", []byte(src))
	k := f.Kernels()[0]
	checks := [][2]string{
		{f.Text(k), src},
		{f.Text(k.NameSpan), "k"},
		{f.Text(*k.Template), "template <typename T>"},
		{f.Text(*k.LaunchBounds), "__launch_bounds__(128)"},
		{f.Text(k.ParamsSpan), "(const T *__restrict__ in, int n)"},
		{f.Text(k.Params[0]), "const T *__restrict__ in"},
		{f.Text(k.Params[0].NameSpan), "in"},
		{f.Text(k.Result), "void"},
		{f.Text(k.Body), "{ int a = 1, *b; }"},
		{f.Text(k.Body.Stmts[0]), "int a = 1, *b;"},
		{f.Text(k.Scope.Symbols[2].Decl), "int a = 1"},
		{f.Text(k.Scope.Symbols[3].Decl), "*b"},
		{f.Text(k.Scope.Symbols[3].Type), "*"},
		{f.Text(k.Scope.Symbols[2].Type), "int"},
		{k.Scope.Symbols[3].Type.Text, "int *"},
	}
	for i, c := range checks {
		if c[0] != c[1] {
			t.Errorf("check %d: got %q want %q", i, c[0], c[1])
		}
	}
}

// TestWithStack checks the ancestors WithStack reports against the
// containment of byte ranges, and that it visits what Inspect visits, in
// the same order.
func TestWithStack(t *testing.T) {
	f := ParseFile("t.cu", []byte(inspectSrc+"void g(int *p, int n) { for (int i = 0; i < n; i++) int *q = new int[n]{i}; }\n"))
	var inspected, stacked []Node
	Inspect(f, func(n Node) bool { inspected = append(inspected, n); return true })
	WithStack(f, func(n Node, stack []Node) bool {
		stacked = append(stacked, n)
		if len(stack) == 0 && n != Node(f) {
			t.Errorf("%s has no ancestors", Dump(n))
		}
		for _, a := range stack {
			if n.Pos() < a.Pos() || n.End() > a.End() {
				t.Errorf("%s [%d,%d) lies outside its ancestor %T [%d,%d)", Dump(n), n.Pos(), n.End(), a, a.Pos(), a.End())
			}
		}
		return true
	})
	if len(inspected) != len(stacked) {
		t.Fatalf("Inspect visits %d nodes, WithStack %d", len(inspected), len(stacked))
	}
	for i := range inspected {
		if inspected[i] != stacked[i] {
			t.Fatalf("node %d: Inspect %T, WithStack %T", i, inspected[i], stacked[i])
		}
	}
	// Pruning: no node inside a function body is visited.
	WithStack(f, func(n Node, stack []Node) bool {
		for _, a := range stack {
			if _, ok := a.(*BlockStmt); ok {
				t.Errorf("visited %T inside a pruned body", n)
			}
		}
		_, body := n.(*BlockStmt)
		return !body
	})
	// new T[n]{...}: the count comes before the initialiser, as in the source.
	var order []string
	Inspect(f, func(n Node) bool {
		if ne, ok := n.(*NewExpr); ok {
			order = append(order, f.Text(ne.Count))
			for _, a := range ne.Args {
				order = append(order, f.Text(a))
			}
		}
		return true
	})
	if got := strings.Join(order, " "); got != "n {i}" {
		t.Errorf("new children: %q", got)
	}
}
