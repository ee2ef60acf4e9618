package parse

import (
	"strconv"
	"strings"
)

// Tree helpers every later stage shares, so that "the callee's name" or
// "the value of this literal" means one thing in the analyses, the port
// and the rewrites.

// Unparen strips the parentheses around e. A nil e stays nil.
func Unparen(e Expr) Expr {
	for {
		p, ok := e.(*ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// UnparenCasts strips parentheses and casts around e: what is left is the
// operand whose value flows through, `i` in `(size_t)(i)`. A nil e stays nil.
func UnparenCasts(e Expr) Expr {
	for {
		switch p := e.(type) {
		case *ParenExpr:
			e = p.X
		case *CastExpr:
			e = p.X
		default:
			return e
		}
	}
}

// FuncName is the name a plain call calls, qualified as written:
// "atomicAdd" for `atomicAdd(...)`, "std::min" for `std::min<int>(...)`,
// "ns::k" for `ns::k<<<...>>>`. It is "" for a member call, a call
// through a pointer or any other expression.
func FuncName(fun Expr) string {
	switch f := Unparen(fun).(type) {
	case *Ident:
		return f.Name
	case *TemplateIdent:
		return f.Name
	}
	return ""
}

// ShortFuncName is FuncName without qualifiers: "min" for `std::min(...)`.
func ShortFuncName(fun Expr) string { return LastName(FuncName(fun)) }

// CalleeName is what a call names, as written: FuncName, or the member's
// name for a member call ("atomic_add" for `a.atomic_add(i, v)`).
func CalleeName(fun Expr) string {
	if m, ok := Unparen(fun).(*MemberExpr); ok {
		return m.Name
	}
	return FuncName(fun)
}

// LastName is the last part of a qualified name: "k" for "ns::k".
func LastName(name string) string {
	if i := strings.LastIndex(name, "::"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// IntLit returns the value of a C++ integer literal: decimal, hex (0x),
// octal (0), binary (0b), with ' digit separators and any of the suffixes
// u, l, ll, z (C++23 size_t: 8uz, 8z) in either case. Surrounding space is
// ignored (macro bodies). It reports false for anything else, including
// values that do not fit in int64 and Go-only forms (1_000, 0o17).
func IntLit(s string) (int64, bool) {
	s = strings.TrimRight(strings.TrimSpace(s), "uUlLzZ")
	if s == "" || strings.ContainsAny(s, "_oO") || strings.HasPrefix(s, "'") || strings.HasSuffix(s, "'") {
		return 0, false
	}
	s = strings.ReplaceAll(s, "'", "")
	n, err := strconv.ParseInt(s, 0, 64)
	return n, err == nil
}

// Within reports whether n lies inside outer (byte ranges; equal ranges
// count). A nil outer holds nothing.
func Within(n, outer Node) bool {
	return !IsNil(outer) && outer.Pos() <= n.Pos() && n.End() <= outer.End()
}

// IsBuiltinX reports whether e is `name.x` (threadIdx.x, blockDim.x, ...),
// through parentheses and casts.
func IsBuiltinX(e Expr, name string) bool {
	m, ok := UnparenCasts(e).(*MemberExpr)
	if !ok || m.Arrow || m.Name != "x" {
		return false
	}
	id, ok := UnparenCasts(m.X).(*Ident)
	return ok && id.Name == name
}

// SideEffectFree reports whether evaluating e again, or not at all,
// changes nothing: no assignment, increment, new or lambda, and no call
// other than a container's accessors (`v.size()`, `v.length()`,
// `v.data()`, `std::size(v)`). sizeof and casts are free.
func SideEffectFree(e Expr) bool {
	ok := true
	Inspect(e, func(n Node) bool {
		switch n := n.(type) {
		case *CallExpr:
			switch LastName(CalleeName(n.Fun)) {
			case "size", "length", "data":
			default:
				ok = false
			}
		case *LambdaExpr, *NewExpr:
			ok = false
		case *UnaryExpr:
			if n.Op == "++" || n.Op == "--" {
				ok = false
			}
		case *BinaryExpr:
			if strings.HasSuffix(n.Op, "=") && n.Op != "==" && n.Op != "!=" && n.Op != "<=" && n.Op != ">=" {
				ok = false
			}
		}
		return ok
	})
	return ok
}
