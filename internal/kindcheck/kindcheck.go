// Package kindcheck finds switch statements over bamgen's kind types (Go
// integer types with a String method and named constants, such as
// analysis.FuncKind or opt.Kind) that forget a constant. A kind added later
// must be handled, or at least reach a default clause that reports an
// internal error (calls panic); the compiler alone does not check it.
// The test of this package runs it over the module.
package kindcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// Problem is one switch that misses constants of its kind.
type Problem struct {
	Pos     token.Position
	Kind    string   // the type switched on, package-qualified
	Missing []string // constants no case lists, in declaration order
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: switch on %s lacks %s and has no default that panics",
		p.Pos, p.Kind, strings.Join(p.Missing, ", "))
}

// Check reports the non-exhaustive switches in files over a type in kinds
// (each "pkgpath.Name"). info must have Types, Uses and Defs.
func Check(fset *token.FileSet, files []*ast.File, info *types.Info, kinds map[string]bool) []Problem {
	var out []Problem
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok || sw.Tag == nil {
				return true
			}
			named, ok := types.Unalias(info.TypeOf(sw.Tag)).(*types.Named)
			if !ok || !kinds[qualified(named)] {
				return true
			}
			if missing := missingConsts(sw, info, named); len(missing) > 0 {
				out = append(out, Problem{Pos: fset.Position(sw.Pos()), Kind: qualified(named), Missing: missing})
			}
			return true
		})
	}
	return out
}

func qualified(t *types.Named) string {
	obj := t.Obj()
	if obj.Pkg() == nil {
		return obj.Name()
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

// missingConsts lists the constants of t no case of sw names, or nil when
// a default clause panics.
func missingConsts(sw *ast.SwitchStmt, info *types.Info, t *types.Named) []string {
	listed := map[types.Object]bool{}
	for _, stmt := range sw.Body.List {
		cc := stmt.(*ast.CaseClause)
		if cc.List == nil && panics(cc.Body) {
			return nil
		}
		for _, e := range cc.List {
			if obj := constObject(e, info); obj != nil {
				listed[obj] = true
			}
		}
	}
	var missing []string
	for _, c := range Constants(t) {
		if !listed[c] {
			missing = append(missing, c.Name())
		}
	}
	return missing
}

func constObject(e ast.Expr, info *types.Info) types.Object {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return info.Uses[e]
	case *ast.SelectorExpr:
		return info.Uses[e.Sel]
	}
	return nil
}

// panics reports whether body calls panic at its top level.
func panics(body []ast.Stmt) bool {
	for _, s := range body {
		if es, ok := s.(*ast.ExprStmt); ok {
			if call, ok := es.X.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "panic" {
					return true
				}
			}
		}
	}
	return false
}

// Constants returns the package-level constants of type t, in source order.
func Constants(t *types.Named) []*types.Const {
	scope := t.Obj().Pkg().Scope()
	var out []*types.Const
	for _, name := range scope.Names() {
		if c, ok := scope.Lookup(name).(*types.Const); ok && types.Identical(c.Type(), t) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos() < out[j].Pos() })
	return out
}
