package opt

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/parse"
)

// clawareLoop rewrites a grid-stride kernel, `for (i = tid; i < n; i +=
// stride) body` with stride the launch's thread count, so that its indices
// are walked line by line: the header becomes `for (i =
// bam::by_line_first<L>(epl); i < n; i = bam::by_line_next<L>(i, epl,
// stride))`. Dealing out the launch's threads instead, as for a kernel
// without a loop, would leave each thread's loop in place: a lane group
// would touch one element of n / threads different lines before coming
// back for the next element of the first, and each line would be fetched
// once per element group (32 times per line for vectoradd's grid-stride
// kernel: 18 s instead of 0.3 s on emu).
//
// Legal when which thread runs an index does not matter: the body neither
// leaves the loop (break, return, goto: they would stop a different set of
// indices) nor writes locals declared outside it (a per-thread accumulator
// would combine other elements than before). Every index runs once, as
// before. Returns false (having said why) when it does not apply.
func (r *rewriter) clawareLoop(loop *parse.ForStmt, epl string) bool {
	if !r.loopBoundOK(loop) || !r.clawareLoopBodyOK(loop) {
		return false
	}
	v := loop.Init.(*parse.DeclStmt).Vars[0]
	lanes := r.opts.LanesPerLine
	r.replaceInit(v, fmt.Sprintf("bam::by_line_first<%d>(%s)", lanes, epl), Claware)
	step := parse.UnparenCasts(loop.Post).(*parse.BinaryExpr)
	next := fmt.Sprintf("bam::by_line_next<%d>(%s, %s, %s)", lanes, v.Name, epl, r.file.Parse.Text(step.Y))
	r.edit(loop.Post.Pos(), loop.Post.End(), v.Name+" = "+r.convertTo(v, v.Init, next), Claware)
	return true
}

// gridStrideLoop finds the for loop that declares the thread id and steps
// it by the launch's thread count, or nil. A loop with another step (`i +=
// 1`: overlapping per-thread ranges) is not one: claware then deals out the
// launch's threads, each keeping its loop, which is always legal.
func (r *rewriter) gridStrideLoop() *parse.ForStmt {
	tid := r.mapping.Tid
	var loop *parse.ForStmt
	parse.Inspect(r.fn.Decl.Body, func(n parse.Node) bool {
		if f, ok := n.(*parse.ForStmt); ok && loop == nil {
			if d, ok := f.Init.(*parse.DeclStmt); ok && len(d.Vars) == 1 && d.Vars[0] == tid && r.stepsByThreadCount(f.Post, tid.Name) {
				loop = f
			}
		}
		return loop == nil
	})
	return loop
}

// loopBoundOK: the indices a grid-stride loop covers are [0, n) for a
// bound `i < n` (or `n > i`) that is the same for every thread and free of
// side effects. It refuses, saying why, otherwise.
func (r *rewriter) loopBoundOK(loop *parse.ForStmt) bool {
	name := r.mapping.Tid.Name
	bound := loopBound(loop.Cond, name)
	if bound != nil && r.fn.ShapeOf(bound).Form == analysis.Uniform && r.pureQuiet(bound) {
		return true
	}
	at := parse.Node(loop)
	if loop.Cond != nil {
		at = loop.Cond
	}
	r.refuse(CodeNoThreadID, at.Pos(), at.End(), "claware does not apply to kernel %s: the grid-stride loop's condition is not "+
		"`%s < n` with n the same for every thread and free of side effects, so the indices it covers are unknown", r.name(), name)
	return false
}

// stepsByThreadCount reports whether post is `name += S` with S the
// launch's thread count: gridDim.x * blockDim.x (either order, casts
// allowed), or a local initialised to it and never changed.
func (r *rewriter) stepsByThreadCount(post parse.Expr, name string) bool {
	b, ok := parse.UnparenCasts(post).(*parse.BinaryExpr)
	if !ok || b.Op != "+=" {
		return false
	}
	id, ok := parse.UnparenCasts(b.X).(*parse.Ident)
	return ok && id.Name == name && r.isThreadCount(b.Y)
}

func (r *rewriter) isThreadCount(e parse.Expr) bool {
	e = parse.UnparenCasts(e)
	if id, ok := e.(*parse.Ident); ok && r.fn.Decl.Scope != nil {
		sym := r.fn.Decl.Scope.Lookup(id.Name, id.Pos())
		if sym == nil || sym.Param {
			return false
		}
		v, ok := sym.Decl.(*parse.VarDecl)
		return ok && v.Init != nil && r.fn.Definitions(id.Name) == 1 && r.isThreadCount(initExpr(v.Init))
	}
	m, ok := e.(*parse.BinaryExpr)
	return ok && m.Op == "*" && ((parse.IsBuiltinX(m.X, "gridDim") && parse.IsBuiltinX(m.Y, "blockDim")) || (parse.IsBuiltinX(m.X, "blockDim") && parse.IsBuiltinX(m.Y, "gridDim")))
}

// initExpr is the value of an initialiser (`= x` or `{x}`).
func initExpr(e parse.Expr) parse.Expr {
	if il, ok := e.(*parse.InitListExpr); ok && len(il.Elems) == 1 {
		return il.Elems[0]
	}
	return e
}

// loopBound returns n of `name < n` or `n > name`.
func loopBound(cond parse.Expr, name string) parse.Expr {
	b, ok := parse.UnparenCasts(cond).(*parse.BinaryExpr)
	if !ok {
		return nil
	}
	isVar := func(e parse.Expr) bool {
		id, ok := parse.UnparenCasts(e).(*parse.Ident)
		return ok && id.Name == name
	}
	switch {
	case b.Op == "<" && isVar(b.X):
		return b.Y
	case b.Op == ">" && isVar(b.Y):
		return b.X
	}
	return nil
}

// clawareLoopBodyOK refuses bodies that leave the loop or carry values
// from one index to the next through locals declared outside it.
func (r *rewriter) clawareLoopBodyOK(loop *parse.ForStmt) bool {
	ok := true
	refuse := func(n parse.Node, why string) {
		r.refuse(CodeUnsafeWrites, n.Pos(), n.End(), "claware does not apply to kernel %s: %s inside the grid-stride loop %s; "+
			"the loop's indices are dealt out to other threads", r.name(), strings.TrimSpace(r.file.Parse.Text(n)), why)
		ok = false
	}
	nested := nestedBreaks(loop.Body)
	parse.Inspect(loop.Body, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.ReturnStmt:
			refuse(n, "would stop one thread's share of the indices, not the loop")
		case *parse.BranchStmt:
			if (n.Keyword == "break" && !nested[n]) || n.Keyword == "goto" {
				refuse(n, "would stop one thread's share of the indices, not the loop")
			}
		case *parse.BinaryExpr:
			if parse.IsAssign(n.Op) && r.declaredBefore(n.X, loop) {
				refuse(n, "carries a value across indices in a local declared outside the loop")
			}
		case *parse.UnaryExpr:
			if (n.Op == "++" || n.Op == "--") && r.declaredBefore(n.X, loop) {
				refuse(n, "carries a value across indices in a local declared outside the loop")
			}
		}
		return true
	})
	return ok
}

// declaredBefore reports whether e names a local (or parameter) declared
// before the loop: writes to it persist from one index to the next.
func (r *rewriter) declaredBefore(e parse.Expr, loop *parse.ForStmt) bool {
	id, ok := parse.UnparenCasts(e).(*parse.Ident)
	if !ok || r.fn.Decl.Scope == nil {
		return false
	}
	sym := r.fn.Decl.Scope.Lookup(id.Name, id.Pos())
	return sym != nil && (sym.Param || sym.Decl.Pos() < loop.Pos())
}
