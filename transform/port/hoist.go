package port

import (
	"regexp"
	"sort"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// Hoisting wrapped arrays out of loops. A host-visible buffer is normally
// wrapped around each launch (array_from_host before, free after), which
// inside a loop re-uploads the whole buffer every iteration and starts each
// launch with a cold cache. When the kernel only reads the buffer and the
// loop does nothing else with it, the array is made once before the
// outermost such loop and freed after it; every launch inside passes it.

// hoistLoops maps a loop statement to the read-only arrays made before it
// and freed after it.
type hoistLoops map[parse.Stmt][]templates.Array

// add records a (once per loop and buffer).
func (h hoistLoops) add(loop parse.Stmt, a templates.Array) {
	for _, e := range h[loop] {
		if e.Bam == a.Bam {
			return
		}
	}
	h[loop] = append(h[loop], a)
}

// hoistLoop returns the outermost loop around launch l, in l's function and
// not across a lambda, that v's read-only array may be hoisted out of; nil
// when there is none. count is the array's element count expression, which
// is then evaluated once before the loop instead of at each launch.
func (c *portCtx) hoistLoop(v *hostVar, l *launchSite, count string) parse.Stmt {
	start := 0
	for i, p := range l.parents {
		if _, ok := p.(*parse.LambdaExpr); ok {
			start = i + 1
		}
	}
	for _, p := range l.parents[start:] {
		switch p.(type) {
		case *parse.ForStmt, *parse.WhileStmt, *parse.DoStmt, *parse.RangeForStmt:
			loop := p.(parse.Stmt)
			if c.canHoist(v, loop, count) {
				return loop
			}
		}
	}
	return nil
}

// canHoist reports whether v's array may live across all of loop: v is
// declared before it; inside it v appears only as an argument of launches
// (all of which read a ported const parameter, checked by the caller); the
// loop cannot leave the function by an explicit return or goto (which would
// skip the free); and nothing in the loop can change the count.
func (c *portCtx) canHoist(v *hostVar, loop parse.Stmt, count string) bool {
	if v.sym.Decl == nil || v.sym.Decl.Pos() >= loop.Pos() {
		return false
	}
	for _, op := range v.ops {
		inside := op.node.Pos() < loop.End() && op.node.End() > loop.Pos()
		if inside && (op.kind != opLaunch || op.launch == nil) {
			return false
		}
		if op.node.End() <= loop.Pos() && !noAlias(v, op) {
			return false
		}
	}
	names := map[string]bool{}
	for _, n := range identRE.FindAllString(count, -1) {
		names[n] = true
	}
	ok := true
	parse.WithStack(loop, func(n parse.Node, parents []parse.Node) bool {
		if !ok {
			return false
		}
		switch x := n.(type) {
		case *parse.ReturnStmt:
			ok = false
		case *parse.BranchStmt:
			ok = x.Keyword != "goto"
		case *parse.VarDecl:
			ok = !names[x.Name]
		case *parse.Ident:
			if names[x.Name] && mayWrite(x, parents) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// noAlias reports whether op, a use of v before the loop, cannot leave
// another pointer into the buffer behind (through which the loop could
// write it unseen): allocations, copies to and from it, fills, element
// accesses `v[i]` and `*v`, and passing v to a call are fine; pointer copies,
// swaps and other pointer arithmetic are not.
func noAlias(v *hostVar, op hostOp) bool {
	switch op.kind {
	case opMalloc, opManaged, opPinned, opUpload, opDownload, opMemset0, opMemset, opFree, opNull, opLaunch, opForeign:
		return true
	case opOther:
		if op.call != nil {
			return true
		}
	case opNone, opCopy, opSwap, opD2D, opForward, opDevPtr:
		return false
	}
	id, ok := op.node.(*parse.Ident)
	if !ok {
		return false
	}
	safe := false
	withParentsOf(v.fn.Body, id, func(parents []parse.Node) {
		p, _, child := enclosing(parents, id)
		switch x := p.(type) {
		case *parse.IndexExpr:
			safe = parse.Node(x.X) == child
		case *parse.UnaryExpr:
			safe = x.Op == "*"
		}
	})
	return safe
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z_0-9]*`)

// mayWrite reports whether the use of id might change it: assigned,
// incremented, its address taken, a member or method of it used, or passed
// to a call (perhaps by reference). Launch arguments are copied.
func mayWrite(id *parse.Ident, parents []parse.Node) bool {
	cur := parse.Node(id)
	for i := len(parents) - 1; i >= 0; i-- {
		switch p := parents[i].(type) {
		case *parse.ParenExpr:
			cur = p
			continue
		case *parse.BinaryExpr:
			if p.X == cur && parse.IsAssign(p.Op) {
				return true
			}
			return false
		case *parse.UnaryExpr:
			return p.Op == "++" || p.Op == "--" || p.Op == "&"
		case *parse.CallExpr, *parse.MemberExpr:
			return true
		case *parse.LaunchExpr:
			return false
		default:
			return false
		}
	}
	return false
}

// emitHoists makes each hoisted array just before its loop and frees it
// just after, on the loop's own first and last lines. Nested loops that
// end at the same offset close innermost first; emitted after the launch
// wraps so a wrap ending with the loop closes before the loop's block.
func emitHoists(hp *hostPlan, h hoistLoops) {
	loops := make([]parse.Stmt, 0, len(h))
	for l := range h {
		loops = append(loops, l)
	}
	sort.Slice(loops, func(i, j int) bool { return loops[i].Pos() > loops[j].Pos() })
	for _, l := range loops {
		w := templates.Wrap{Arrays: h[l]}
		hp.edits = append(hp.edits,
			edit.Edit{Start: l.Pos(), End: l.Pos(), New: templates.Render("wrap_begin", w), Rewrite: HostMemory.String()},
			edit.Edit{Start: l.End(), End: l.End(), New: templates.Render("wrap_end", w), Rewrite: HostMemory.String()})
	}
}
