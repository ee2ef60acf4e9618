package parse

import (
	"testing"
)

func TestIntLit(t *testing.T) {
	good := map[string]int64{
		"0": 0, "42": 42, "42u": 42, "42UL": 42, "42ull": 42, "42LL": 42,
		"8uz": 8, "8z": 8, "8ZU": 8, "8zu": 8, // C++23 size_t literals
		"0x1F": 31, "0X1fu": 31, "017": 15, "0b101": 5, "0B11": 3,
		"1'000'000": 1000000, " 64 ": 64, "-1": -1,
	}
	for s, want := range good {
		if got, ok := IntLit(s); !ok || got != want {
			t.Errorf("IntLit(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "u", "x", "1.0", "1e3", "0o17", "1_000", "'1", "1'", "n", "99999999999999999999", "0x", "08"} {
		if got, ok := IntLit(s); ok {
			t.Errorf("IntLit(%q) = %d, true; want false", s, got)
		}
	}
}

// exprOf parses `void f() { return SRC; }` and returns the expression.
func exprOf(t *testing.T, src string) Expr {
	t.Helper()
	f := ParseFile("t.cu", []byte("void f() { return "+src+"; }"))
	ret, ok := f.Funcs()[0].Body.Stmts[0].(*ReturnStmt)
	if !ok {
		t.Fatalf("%q: no return statement", src)
	}
	return ret.X
}

func TestUnparen(t *testing.T) {
	f := ParseFile("t.cu", []byte("void f() { return ((int)(x)); }"))
	e := f.Funcs()[0].Body.Stmts[0].(*ReturnStmt).X
	if _, ok := Unparen(e).(*CastExpr); !ok {
		t.Errorf("Unparen: %T, want the cast", Unparen(e))
	}
	if id, ok := UnparenCasts(e).(*Ident); !ok || id.Name != "x" {
		t.Errorf("UnparenCasts: %T, want x", UnparenCasts(e))
	}
	if Unparen(nil) != nil || UnparenCasts(nil) != nil {
		t.Error("nil must stay nil")
	}
}

func TestCalleeNames(t *testing.T) {
	cases := []struct{ src, fn, short, callee string }{
		{"atomicAdd(p, 1)", "atomicAdd", "atomicAdd", "atomicAdd"},
		{"std::min<int>(a, b)", "std::min", "min", "std::min"},
		{"(ns::g)(a)", "ns::g", "g", "ns::g"},
		{"a.atomic_add(i, v)", "", "", "atomic_add"},
		{"p->f(1)", "", "", "f"},
		{"fp[0](1)", "", "", ""},
	}
	for _, c := range cases {
		call, ok := exprOf(t, c.src).(*CallExpr)
		if !ok {
			t.Fatalf("%q: not a call", c.src)
		}
		if got := FuncName(call.Fun); got != c.fn {
			t.Errorf("FuncName(%s) = %q, want %q", c.src, got, c.fn)
		}
		if got := ShortFuncName(call.Fun); got != c.short {
			t.Errorf("ShortFuncName(%s) = %q, want %q", c.src, got, c.short)
		}
		if got := CalleeName(call.Fun); got != c.callee {
			t.Errorf("CalleeName(%s) = %q, want %q", c.src, got, c.callee)
		}
	}
	if LastName("a::b::c") != "c" || LastName("c") != "c" || LastName("::c") != "c" {
		t.Error("LastName")
	}
}

func TestWithin(t *testing.T) {
	f := ParseFile("t.cu", []byte("void f() { return (a + b); }"))
	ret := f.Funcs()[0].Body.Stmts[0].(*ReturnStmt)
	sum := Unparen(ret.X).(*BinaryExpr)
	if !Within(sum.X, ret) || !Within(sum, sum) || Within(ret, sum) {
		t.Error("Within disagrees with the byte ranges")
	}
	var body *BlockStmt
	if Within(sum, body) || Within(sum, nil) {
		t.Error("a nil outer node holds nothing")
	}
}

func TestIsBuiltinX(t *testing.T) {
	for src, want := range map[string]bool{
		"threadIdx.x": true, "(int)(threadIdx).x": true, "((threadIdx.x))": true,
		"threadIdx.y": false, "p->x": false, "blockIdx.x": false,
	} {
		if got := IsBuiltinX(exprOf(t, src), "threadIdx"); got != want {
			t.Errorf("IsBuiltinX(%s) = %v, want %v", src, got, want)
		}
	}
}

func TestSideEffectFree(t *testing.T) {
	cases := []struct {
		src  string
		free bool
	}{
		{"n * sizeof(float) + 4", true},
		{"(size_t)v.size() * 2", true},
		{"h.data()", true},
		{"std::size(a) - s.length()", true},
		{"a[i] == b", true},
		{"k++", false},
		{"--k", false},
		{"n += 2", false},
		{"x = y", false},
		{"count()", false},
		{"v.push_back(1)", false},
		{"new int[4]", false},
	}
	for _, c := range cases {
		if got := SideEffectFree(exprOf(t, c.src)); got != c.free {
			t.Errorf("SideEffectFree(%s) = %v, want %v", c.src, got, c.free)
		}
	}
}
