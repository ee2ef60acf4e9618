package analysis

import "github.com/bamgen/bamgen/parse"

// CSRWalk is a CSR neighbour walk inside a kernel:
//
//	for (E e = rowptr[v] (+ lane); e < rowptr[v + 1]; e += step) ... edges[e] ...
//
// with v the warp id (step 32: the warp's lanes share the list) or the
// thread id (step 1: one thread walks the list).
type CSRWalk struct {
	Loop     *parse.ForStmt
	IVar     string     // the loop variable
	Init     parse.Expr // its first value
	RowPtr   string     // the offsets array bounding the walk
	Edges    string     // the array indexed by the loop variable (tiles are its lines)
	Vertex   *parse.VarDecl
	WarpForm bool // step 32, lanes share the list; else step 1, one thread walks it
}

// FindCSRWalk returns the kernel's first CSR neighbour walk, or nil.
func FindCSRWalk(fn *Function, m *Mapping) *CSRWalk {
	var found *CSRWalk
	parse.Inspect(fn.Decl.Body, func(n parse.Node) bool {
		if found != nil {
			return false
		}
		if loop, ok := n.(*parse.ForStmt); ok {
			found = matchCSRLoop(fn, m, loop)
		}
		return found == nil
	})
	return found
}

func matchCSRLoop(fn *Function, m *Mapping, loop *parse.ForStmt) *CSRWalk {
	ivar, init := loopVar(loop.Init)
	if ivar == "" || !boundedBy(loop.Cond, ivar) {
		return nil
	}
	step, ok := loopStep(fn, loop.Post, ivar)
	if !ok {
		return nil
	}
	rowptr := commonLoad(fn.ShapeOf(init), fn.ShapeOf(condBound(loop.Cond)))
	edges := indexedBy(fn, loop.Body, ivar)
	if rowptr == "" || edges == "" {
		return nil
	}
	w := &CSRWalk{Loop: loop, IVar: ivar, Init: init, RowPtr: rowptr, Edges: edges}
	switch {
	case step == 32 && m.Warp != nil:
		w.Vertex, w.WarpForm = m.Warp, true
	case step == 1 && m.Tid != nil && m.Warp == nil:
		w.Vertex = m.Tid
	default:
		return nil
	}
	return w
}

// loopVar returns the variable a for-init defines and its initial value.
func loopVar(init parse.Stmt) (string, parse.Expr) {
	switch s := init.(type) {
	case *parse.DeclStmt:
		if len(s.Vars) >= 1 && s.Vars[0].Init != nil { // `E e = rowptr[v], end = rowptr[v+1]` too
			return s.Vars[0].Name, initValue(s.Vars[0].Init)
		}
	case *parse.ExprStmt:
		if b, ok := s.X.(*parse.BinaryExpr); ok && b.Op == "=" {
			if id, ok := unparen(b.X).(*parse.Ident); ok {
				return id.Name, b.Y
			}
		}
	}
	return "", nil
}

// boundedBy matches `ivar < END` (or `!=`).
func boundedBy(cond parse.Expr, ivar string) bool {
	b, ok := unparen(cond).(*parse.BinaryExpr)
	if !ok || (b.Op != "<" && b.Op != "!=") {
		return false
	}
	id, ok := unparen(b.X).(*parse.Ident)
	return ok && id.Name == ivar
}

func condBound(cond parse.Expr) parse.Expr {
	return unparen(cond).(*parse.BinaryExpr).Y
}

// loopStep returns the constant increment of `ivar++`, `ivar += S`.
func loopStep(fn *Function, post parse.Expr, ivar string) (int64, bool) {
	switch p := unparen(post).(type) {
	case *parse.UnaryExpr:
		if id, ok := unparen(p.X).(*parse.Ident); ok && id.Name == ivar && p.Op == "++" {
			return 1, true
		}
	case *parse.BinaryExpr:
		if id, ok := unparen(p.X).(*parse.Ident); ok && id.Name == ivar && p.Op == "+=" {
			return fn.ConstValue(p.Y)
		}
	}
	return 0, false
}

// commonLoad names the array both the start and the end of the walk were
// loaded from (the CSR offsets), or "".
func commonLoad(start, end Shape) string {
	if start.Form != Loaded || end.Form != Loaded {
		return ""
	}
	for _, a := range start.Loads {
		for _, b := range end.Loads {
			if a == b {
				return a
			}
		}
	}
	return ""
}

// indexedBy names the first pointer parameter subscripted exactly by ivar
// in body: the edge array whose lines become ODT's tiles.
func indexedBy(fn *Function, body parse.Node, ivar string) string {
	params := map[string]bool{}
	for _, p := range fn.Params {
		if p.Pointer {
			params[p.Name] = true
		}
	}
	name := ""
	parse.Inspect(body, func(n parse.Node) bool {
		ix, ok := n.(*parse.IndexExpr)
		if !ok || name != "" {
			return name == ""
		}
		base, ok1 := unparen(ix.X).(*parse.Ident)
		idx, ok2 := unparen(ix.Index).(*parse.Ident)
		if ok1 && ok2 && idx.Name == ivar && params[base.Name] {
			name = base.Name
		}
		return true
	})
	return name
}
