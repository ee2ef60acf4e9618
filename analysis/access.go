package analysis

import (
	"sort"
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// collectAccesses records every subscript and dereference in fd's body,
// grouped by array in order of first access.
func collectAccesses(ev *evaluator, fd *parse.FuncDecl) []*Array {
	modes := accessModes(fd.Body)
	byName := map[string]*Array{}
	var order []*Array
	record := func(acc Access) {
		a := byName[acc.Array]
		if a == nil {
			a = &Array{Name: acc.Array, Param: isPointerParam(fd, acc.Array)}
			byName[acc.Array] = a
			order = append(order, a)
		}
		a.Accesses = append(a.Accesses, acc)
	}
	parse.Inspect(fd.Body, func(n parse.Node) bool {
		e, ok := n.(parse.Expr)
		if !ok {
			return true
		}
		if m, marked := modes[e]; marked && m == "" {
			return true // inner part of a[i][j]
		}
		if acc, ok := ev.access(e, modes[e]); ok {
			record(acc)
		}
		return true
	})
	sort.SliceStable(order, func(i, j int) bool { return order[i].Param && !order[j].Param })
	return order
}

// access turns a subscript or dereference into an Access.
func (ev *evaluator) access(e parse.Expr, mode Mode) (Access, bool) {
	if mode == "" {
		mode = Read
	}
	switch x := e.(type) {
	case *parse.IndexExpr:
		base, idx := ev.subscript(x)
		if base == "" {
			return Access{}, false
		}
		return Access{Array: base, Index: idx, Mode: mode, Pos: x.Pos(), End: x.End(), Expr: x}, true
	case *parse.UnaryExpr:
		if x.Op != "*" {
			return Access{}, false
		}
		base, off := ev.splitPointer(x.X)
		if base == "" {
			return Access{}, false
		}
		return Access{Array: base, Index: off, Mode: mode, Pos: x.Pos(), End: x.End(), Expr: x}, true
	case *parse.CallExpr:
		if acc, ok := ev.atomicThroughPointer(x); ok {
			return acc, true
		}
		return ev.loadIntrinsic(x)
	}
	return Access{}, false
}

// atomicThroughPointer: atomicAdd(p + i, v) and atomicAdd(q++, v) update p
// at i (the &p[i] form is already seen as a subscript marked atomic).
func (ev *evaluator) atomicThroughPointer(c *parse.CallExpr) (Access, bool) {
	if !isAtomicCall(c) || len(c.Args) == 0 {
		return Access{}, false
	}
	return ev.pointerArgAccess(c, Atomic)
}

// loadIntrinsic: __ldg(p + i) and the other cache-hinted loads read p at i
// (the &p[i] form is already seen as a subscript).
func (ev *evaluator) loadIntrinsic(c *parse.CallExpr) (Access, bool) {
	name := parse.CalleeName(c.Fun)
	if len(c.Args) != 1 || !(name == "__ldg" || strings.HasPrefix(name, "__ldcg") || strings.HasPrefix(name, "__ldca") ||
		strings.HasPrefix(name, "__ldcs") || strings.HasPrefix(name, "__ldlu") || strings.HasPrefix(name, "__ldcv")) {
		return Access{}, false
	}
	return ev.pointerArgAccess(c, Read)
}

// pointerArgAccess is the access a call makes through its first argument,
// a pointer p + i into an array; &p[i] is skipped because the subscript
// inside it is already an access.
func (ev *evaluator) pointerArgAccess(c *parse.CallExpr, mode Mode) (Access, bool) {
	if u, ok := parse.UnparenCasts(c.Args[0]).(*parse.UnaryExpr); ok && u.Op == "&" {
		return Access{}, false
	}
	base, off := ev.splitPointer(c.Args[0])
	if base == "" {
		return Access{}, false
	}
	return Access{Array: base, Index: off, Mode: mode, Pos: c.Pos(), End: c.End(), Expr: c}, true
}

// subscript resolves a[i] (through aliases and nested subscripts a[i][j])
// to the array and the shape of the whole index.
func (ev *evaluator) subscript(x *parse.IndexExpr) (string, Shape) {
	idx := ev.shape(x.Index)
	if inner, ok := parse.UnparenCasts(x.X).(*parse.IndexExpr); ok {
		base, innerIdx := ev.subscript(inner)
		return base, addShapes(innerIdx, idx)
	}
	if id, ok := parse.UnparenCasts(x.X).(*parse.Ident); ok {
		if base, off := ev.pointerOf(id); base != "" {
			return base, addShapes(off, idx)
		}
		return id.Name, idx // a local or __shared__ array
	}
	base, off := ev.splitPointer(x.X)
	if base != "" {
		return base, addShapes(off, idx)
	}
	return ev.rootArray(x.X), idx
}

// accessModes finds how each subscript is used. A subscript mapped to ""
// is the inner part of a[i][j] and is not an access of its own.
func accessModes(body parse.Node) map[parse.Expr]Mode {
	modes := map[parse.Expr]Mode{}
	parse.Inspect(body, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.BinaryExpr:
			if parse.IsAssign(n.Op) {
				markMode(modes, n.X, assignMode(n.Op))
			}
		case *parse.UnaryExpr:
			switch n.Op {
			case "++", "--":
				markMode(modes, n.X, ReadWrite)
			case "&":
				markMode(modes, n.X, Address)
			}
		case *parse.CallExpr:
			if isAtomicCall(n) && len(n.Args) > 0 {
				if u, ok := parse.UnparenCasts(n.Args[0]).(*parse.UnaryExpr); ok && u.Op == "&" {
					markMode(modes, u.X, Atomic)
				}
			}
		case *parse.IndexExpr:
			if inner, ok := parse.UnparenCasts(n.X).(*parse.IndexExpr); ok {
				modes[inner] = ""
			}
		}
		return true
	})
	return modes
}

func markMode(modes map[parse.Expr]Mode, target parse.Expr, m Mode) {
	t := parse.UnparenCasts(target)
	if old, ok := modes[t]; ok && old == Atomic {
		return // atomicAdd(&a[i]) visits & after the call: keep atomic
	}
	modes[t] = m
}

func assignMode(op string) Mode {
	if op == "=" {
		return Write
	}
	return ReadWrite
}

func isAtomicCall(c *parse.CallExpr) bool {
	return strings.HasPrefix(parse.CalleeName(c.Fun), "atomic")
}

func isPointerParam(fd *parse.FuncDecl, name string) bool {
	for _, p := range fd.Params {
		if p.Name == name && p.Type.IsPointer() {
			return true
		}
	}
	return false
}
