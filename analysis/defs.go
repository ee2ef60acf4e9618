package analysis

import (
	"github.com/bamgen/bamgen/parse"
)

// def is one definition of a local variable: an initialiser, an assignment
// or an increment. Op is "=" for plain definitions.
type def struct {
	sym *parse.Symbol
	op  string
	rhs parse.Expr // nil for ++/--
}

// refParams maps each function of a file to which of its parameters are
// non-const references: a call may assign the variables passed there.
type refParams map[string][]bool

func fileRefParams(pf *parse.File) refParams {
	out := refParams{}
	for _, fd := range pf.Funcs() {
		flags := make([]bool, len(fd.Params))
		for i, p := range fd.Params {
			flags[i] = p.Type != nil && p.Type.Ref && !p.Type.Const && p.Type.Pointers == 0
		}
		out[fd.Name] = flags
	}
	return out
}

// refArgDefs: a local passed to a non-const reference parameter of a
// function of this file is (re)defined by the call.
func refArgDefs(fd *parse.FuncDecl, c *parse.CallExpr, refs refParams) []def {
	flags := refs[parse.LastName(parse.CalleeName(c.Fun))]
	var out []def
	for i, a := range c.Args {
		if i < len(flags) && flags[i] {
			if sym := assignedSymbol(fd, a); sym != nil {
				out = append(out, def{sym: sym, op: "escape"})
			}
		}
	}
	return out
}

// collectDefs finds every definition of a local or parameter in fd's body.
func collectDefs(fd *parse.FuncDecl, refs refParams) []def {
	byDecl := map[parse.Node]*parse.Symbol{}
	if fd.Scope != nil {
		for _, s := range fd.Scope.Symbols {
			byDecl[s.Decl] = s
		}
	}
	var defs []def
	parse.Inspect(fd.Body, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.VarDecl:
			if sym := byDecl[n]; sym != nil && n.Init != nil {
				defs = append(defs, def{sym: sym, op: "=", rhs: initValue(n.Init)})
			}
		case *parse.RangeForStmt:
			if sym := byDecl[n.Var]; sym != nil {
				defs = append(defs, def{sym: sym, op: "=", rhs: &parse.IndexExpr{X: n.Range}})
			}
		case *parse.BinaryExpr:
			if sym := assignedSymbol(fd, n.X); sym != nil && parse.IsAssign(n.Op) {
				defs = append(defs, def{sym: sym, op: n.Op, rhs: n.Y})
			}
		case *parse.UnaryExpr:
			if sym := assignedSymbol(fd, n.X); sym != nil && (n.Op == "++" || n.Op == "--") {
				defs = append(defs, def{sym: sym, op: n.Op})
			}
			if sym := assignedSymbol(fd, n.X); sym != nil && n.Op == "&" {
				defs = append(defs, def{sym: sym, op: "escape"}) // written through the pointer, for all we know
			}
		case *parse.CallExpr:
			defs = append(defs, refArgDefs(fd, n, refs)...)
		}
		return true
	})
	return defs
}

// initValue unwraps `{x}` and `(x)` initialisers to x.
func initValue(e parse.Expr) parse.Expr {
	if il, ok := e.(*parse.InitListExpr); ok && len(il.Elems) == 1 {
		return il.Elems[0]
	}
	return e
}

func assignedSymbol(fd *parse.FuncDecl, e parse.Expr) *parse.Symbol {
	id, ok := parse.UnparenCasts(e).(*parse.Ident)
	if !ok || fd.Scope == nil {
		return nil
	}
	return fd.Scope.Lookup(id.Name, id.Pos())
}

// solve iterates the definitions until every variable's shape is stable.
// Shapes only grow (join), and the lattice is finite, so this terminates;
// the bound is a guard against a bug, not a limit real code reaches.
func solve(ev *evaluator, defs []def) {
	for iter := 0; iter < 64; iter++ {
		changed := false
		for _, d := range defs {
			if ev.applyDef(d) {
				changed = true
			}
		}
		if !changed {
			return
		}
	}
}

// applyDef joins one definition into the environment; it reports a change.
func (ev *evaluator) applyDef(d def) bool {
	if handled, changed := ev.defineAlias(d); handled {
		return changed
	}
	cur, seen := ev.env[d.sym]
	var val Shape
	switch d.op {
	case "=":
		val = ev.shape(d.rhs)
	case "+=", "-=", "++", "--":
		val = addShapes(cur, ev.shape(d.rhs))
	case "*=", "<<=":
		val = mulShapes(cur, ev.shape(d.rhs))
	case "escape":
		val = formed(Unknown)
	default:
		val = nonAffine(cur, ev.shape(d.rhs))
	}
	next := join(cur, val)
	if seen && next.Equal(cur) {
		return false
	}
	ev.env[d.sym] = next
	return true
}

// defineAlias records `T *q = p + off` where p is an array parameter (or
// another alias): accesses through q are accesses to p at off + i. Every
// such definition of q joins into one alias (the analysis is
// flow-insensitive); definitions aiming q at a second array mark it a
// conflict. It reports whether d was an alias definition and whether it
// changed the alias, so that solve iterates until offsets are stable.
func (ev *evaluator) defineAlias(d def) (handled, changed bool) {
	if d.op != "=" || d.sym.Param || !isPointerLike(d.sym.Type) {
		return false, false
	}
	base, off := ev.splitPointer(d.rhs)
	if base == "" {
		return false, false
	}
	old, seen := ev.aliases[d.sym]
	next := alias{array: base, offset: off}
	if seen {
		next = alias{array: old.array, offset: join(old.offset, off), conflict: old.conflict || old.array != base}
	}
	ev.aliases[d.sym] = next
	return true, !seen || !next.offset.Equal(old.offset) || next.conflict != old.conflict
}

func isPointerLike(t *parse.TypeRef) bool {
	return t != nil && (t.Pointers > 0 || t.Base == "auto")
}

// splitPointer splits `p + off`, `&p[off]` or `p` into (array, offset shape)
// when p is a pointer parameter or alias; otherwise it returns "".
func (ev *evaluator) splitPointer(e parse.Expr) (string, Shape) {
	switch e := parse.UnparenCasts(e).(type) {
	case *parse.Ident:
		return ev.pointerOf(e)
	case *parse.BinaryExpr:
		if e.Op == "+" || e.Op == "-" {
			if base, off := ev.splitPointer(e.X); base != "" {
				return base, addShapes(off, ev.shape(e.Y))
			}
		}
	case *parse.UnaryExpr:
		if ix, ok := parse.UnparenCasts(e.X).(*parse.IndexExpr); ok && e.Op == "&" {
			if base, off := ev.splitPointer(ix.X); base != "" {
				return base, addShapes(off, ev.shape(ix.Index))
			}
		}
		if isStep(e.Op) {
			// q++, --q: the step itself is a definition of q, already
			// joined into q's offset by pointerOf.
			return ev.splitPointer(e.X)
		}
	}
	return "", Shape{}
}

func isStep(op string) bool { return op == "++" || op == "--" }

// pointerOf names the array an identifier points into and the shape of
// its offset there: a pointer parameter (offset: its own steps, `p += k`)
// or an alias (offset: its definitions joined with its steps). A local
// aimed at two arrays is reported as itself, at an unknown offset.
func (ev *evaluator) pointerOf(id *parse.Ident) (string, Shape) {
	sym := ev.lookup(id)
	if sym == nil {
		return "", Shape{}
	}
	steps, stepped := ev.env[sym]
	if !stepped {
		steps = uniform()
	}
	if a, ok := ev.aliases[sym]; ok {
		if a.conflict {
			return sym.Name, formed(Unknown)
		}
		return a.array, addShapes(a.offset, steps)
	}
	if sym.Param && sym.Type.IsPointer() {
		return sym.Name, steps
	}
	return "", Shape{}
}
