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
	if !loadsRowAt(fn, init, rowptr, w.Vertex.Name, 0) || !loadsRowAt(fn, condBound(loop.Cond), rowptr, w.Vertex.Name, 0) {
		return nil // the walk is over another vertex's list (`u = frontier[t]; rowptr[u]`)
	}
	return w
}

// loadsRowAt reports whether e loads rowptr, and only ever at v or v + 1,
// following locals defined once (`start = rowptr[v]`) up to a small depth.
// ODT hands each tile to the vertex that owns it; a walk over the list of
// some other vertex (one read from a frontier, say) is not that shape.
func loadsRowAt(fn *Function, e parse.Expr, rowptr, v string, depth int) bool {
	found, ok := false, true
	parse.Inspect(e, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.IndexExpr:
			if base, isID := parse.UnparenCasts(n.X).(*parse.Ident); isID && base.Name == rowptr {
				found = true
				ok = ok && isVertexIndex(n.Index, v)
				return false
			}
		case *parse.Ident:
			if init := singleInit(fn, n); init != nil && n.Name != v && depth < 4 && loadsAny(init, fn, rowptr, depth+1) {
				found = true
				ok = ok && loadsRowAt(fn, init, rowptr, v, depth+1)
			}
		}
		return ok
	})
	return found && ok
}

// loadsAny reports whether e loads rowptr at all, through locals too.
func loadsAny(e parse.Expr, fn *Function, rowptr string, depth int) bool {
	if depth > 4 {
		return false
	}
	found := false
	parse.Inspect(e, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.IndexExpr:
			if base, ok := parse.UnparenCasts(n.X).(*parse.Ident); ok && base.Name == rowptr {
				found = true
			}
		case *parse.Ident:
			if init := singleInit(fn, n); init != nil && loadsAny(init, fn, rowptr, depth+1) {
				found = true
			}
		}
		return !found
	})
	return found
}

// isVertexIndex matches `v`, `v + 1` and `1 + v`.
func isVertexIndex(e parse.Expr, v string) bool {
	isV := func(x parse.Expr) bool { id, ok := parse.UnparenCasts(x).(*parse.Ident); return ok && id.Name == v }
	if isV(e) {
		return true
	}
	b, ok := parse.UnparenCasts(e).(*parse.BinaryExpr)
	if !ok || b.Op != "+" {
		return false
	}
	one := func(x parse.Expr) bool {
		l, ok := parse.UnparenCasts(x).(*parse.BasicLit)
		return ok && (l.Value == "1" || l.Value == "1u" || l.Value == "1ull")
	}
	return (isV(b.X) && one(b.Y)) || (one(b.X) && isV(b.Y))
}

// singleInit returns the initialiser of the local id names, when the local
// is defined exactly once; otherwise nil.
func singleInit(fn *Function, id *parse.Ident) parse.Expr {
	if fn.Decl.Scope == nil {
		return nil
	}
	sym := fn.Decl.Scope.Lookup(id.Name, id.Pos())
	if sym == nil || sym.Param {
		return nil
	}
	vd, ok := sym.Decl.(*parse.VarDecl)
	if !ok || vd.Init == nil || defCounts(fn)[sym.Name] != 1 {
		return nil
	}
	return initValue(vd.Init)
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
			if id, ok := parse.UnparenCasts(b.X).(*parse.Ident); ok {
				return id.Name, b.Y
			}
		}
	}
	return "", nil
}

// boundedBy matches `ivar < END` (or `!=`).
func boundedBy(cond parse.Expr, ivar string) bool {
	b, ok := parse.UnparenCasts(cond).(*parse.BinaryExpr)
	if !ok || (b.Op != "<" && b.Op != "!=") {
		return false
	}
	id, ok := parse.UnparenCasts(b.X).(*parse.Ident)
	return ok && id.Name == ivar
}

func condBound(cond parse.Expr) parse.Expr {
	return parse.UnparenCasts(cond).(*parse.BinaryExpr).Y
}

// loopStep returns the constant increment of `ivar++`, `ivar += S`.
func loopStep(fn *Function, post parse.Expr, ivar string) (int64, bool) {
	switch p := parse.UnparenCasts(post).(type) {
	case *parse.UnaryExpr:
		if id, ok := parse.UnparenCasts(p.X).(*parse.Ident); ok && id.Name == ivar && p.Op == "++" {
			return 1, true
		}
	case *parse.BinaryExpr:
		if id, ok := parse.UnparenCasts(p.X).(*parse.Ident); ok && id.Name == ivar && p.Op == "+=" {
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
		base, ok1 := parse.UnparenCasts(ix.X).(*parse.Ident)
		idx, ok2 := parse.UnparenCasts(ix.Index).(*parse.Ident)
		if ok1 && ok2 && idx.Name == ivar && params[base.Name] {
			name = base.Name
		}
		return true
	})
	return name
}
