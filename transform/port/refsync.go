package port

import (
	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/parse"
)

// Barriers and warp intrinsics inside a loop with refs (rule PORT052).
//
// A thread waiting at __syncthreads (or in a warp-synchronous call) while
// its refs hold pinned lines keeps those lines from everyone; with a small
// cache, the threads it waits for may be waiting for a free line, and the
// kernel hangs. So before each statement that waits, the refs call
// drop(): the thread holds no ref pin while it waits, and the next read
// through the ref pins the line again (drop only releases; a read always
// returns the element, so values never change).
//
// The drop is provably before the wait and nothing re-pins in between
// when the statement holding the wait sits directly in a block inside
// the loop (so a statement can go before it) and reads nothing through
// the refs. Otherwise the loop gets no refs.

// planDrops finds the statements to drop before; it reports the first
// wait it cannot handle and returns false.
func (c *refStage) planDrops(l *refLoop) bool {
	ok := true
	parse.WithStack(l.loop, func(x parse.Node, parents []parse.Node) bool {
		if !ok {
			return false
		}
		why := c.waits(x)
		if why == "" {
			return true
		}
		stmt, reason := c.dropPoint(l, append(parents, x))
		if stmt == nil {
			c.refNote(x, CodeRefSync, "%s: no bam::array_ref for %s in this loop: this statement %s, and %s; a thread would hold "+
				"pinned lines while it waits for others, which can exhaust a small cache", l.fn.Name, l.names(), why, reason)
			ok = false
			return false
		}
		if len(l.drops) == 0 || l.drops[len(l.drops)-1] != stmt {
			l.drops = append(l.drops, stmt)
		}
		return true
	})
	return ok
}

// waits says how n may wait for other threads, or "": a barrier or warp
// intrinsic (or a helper calling one), a spin-wait on memory others write,
// or code bamgen cannot see into (inline asm may hold bar.sync).
func (c *refStage) waits(n parse.Node) string {
	switch x := n.(type) {
	case *parse.CallExpr:
		return c.waitReason(x, map[*parse.FuncDecl]bool{})
	case *parse.WhileStmt:
		if analysis.WaitsOnOthers(x.Cond) {
			return "spin-waits on memory other threads write"
		}
	case *parse.DoStmt:
		if analysis.WaitsOnOthers(x.Cond) {
			return "spin-waits on memory other threads write"
		}
	case *parse.OpaqueStmt:
		return "is inline assembly or code bamgen could not parse, which may wait for other threads"
	}
	return ""
}

// waitReason says what a call does that waits for other threads (directly,
// or in a __device__ function it calls), or "".
func (c *refStage) waitReason(call *parse.CallExpr, seen map[*parse.FuncDecl]bool) string {
	name := parse.ShortFuncName(call.Fun)
	if kind, reason := analysis.SyncCall(name); kind != analysis.SyncNone {
		return reason
	}
	for _, def := range c.deviceDefs(name) {
		if seen[def] || def.Body == nil {
			continue
		}
		seen[def] = true
		if why := c.waitInside(def.Body, seen); why != "" {
			return "calls " + name + ", which " + why
		}
	}
	return ""
}

// waitInside is waitReason for the first waiting call in n.
func (c *refStage) waitInside(n parse.Node, seen map[*parse.FuncDecl]bool) string {
	why := ""
	parse.WithStack(n, func(x parse.Node, _ []parse.Node) bool {
		if call, ok := x.(*parse.CallExpr); ok && why == "" {
			why = c.waitReason(call, seen)
		}
		return why == ""
	})
	return why
}

// dropPoint returns the statement of a block inside the loop that holds
// the waiting call (chain: the loop down to the call), or nil and why not.
func (c *refStage) dropPoint(l *refLoop, chain []parse.Node) (parse.Stmt, string) {
	for _, n := range chain {
		if _, ok := n.(*parse.LambdaExpr); ok {
			return nil, "it is inside a lambda, which may run where no drop can reach"
		}
	}
	for i := len(chain) - 1; i >= 1; i-- {
		stmt, isStmt := chain[i].(parse.Stmt)
		if _, inBlock := chain[i-1].(*parse.BlockStmt); !isStmt || !inBlock {
			continue
		}
		switch {
		case l.readsWithin(stmt):
			return nil, "the statement holding it also reads through the ref"
		case c.directiveBefore(stmt) != nil:
			return nil, "a preprocessor line before its statement must stay next to it"
		}
		return stmt, ""
	}
	return nil, "it is not inside a block of the loop's body (the loop header, or a body without braces)"
}

// readsWithin reports whether a read through one of the loop's refs lies
// inside n.
func (l *refLoop) readsWithin(n parse.Node) bool {
	for _, a := range l.arrays {
		for _, s := range a.scans {
			if parse.Within(s.acc.node, n) {
				return true
			}
		}
	}
	return false
}
