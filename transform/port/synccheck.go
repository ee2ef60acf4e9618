package port

import (
	"strings"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// syncKind says whether a call of the CUDA runtime makes the host wait for
// kernels, so that data a failed storage read zero-filled could reach the
// program right after it: the device-, stream- and event-wide waits, and
// the synchronous copies to the host (cudaMemcpyDefault may be one).
func (c *portCtx) isSyncCall(call *parse.CallExpr) bool {
	name := parse.ShortFuncName(call.Fun)
	kindAt := -1
	switch name {
	case "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cudaMemcpyFromSymbol":
		return true
	case "cudaMemcpy":
		kindAt = 3
	case "cudaMemcpy2D":
		kindAt = 6
	}
	if kindAt < 0 || len(call.Args) <= kindAt {
		return false
	}
	switch strings.TrimSpace(c.text(call.Args[kindAt])) {
	case "cudaMemcpyDeviceToHost", "cudaMemcpyDefault":
		return true
	}
	return false
}

// syncStmt finds the statement a synchronizing call is part of: the call
// itself, wrapped in error-check macros or calls (`CHECK(cudaMemcpy(...))`),
// compared or assigned (`err = ...`, `if (cudaDeviceSynchronize() !=
// cudaSuccess) ...`), or the initializer of a declaration. It returns the
// statement and its parent, or nil where a check cannot follow the call
// (a loop header, a return, a condition of ?:).
func syncStmt(call *parse.CallExpr, parents []parse.Node) (parse.Node, parse.Node) {
	var cur parse.Node = call
	for i := len(parents) - 1; i >= 0; i-- {
		switch p := parents[i].(type) {
		case *parse.ParenExpr, *parse.CastExpr, *parse.CallExpr, *parse.UnaryExpr, *parse.VarDecl:
		case *parse.BinaryExpr:
			if p.Op == "&&" || p.Op == "||" || p.Op == "," { // the call may not run
				return nil, nil
			}
		case *parse.ExprStmt, *parse.DeclStmt:
			return stmtIn(p, parents[:i])
		case *parse.IfStmt:
			if p.Cond != cur {
				return nil, nil
			}
			return stmtIn(p, parents[:i])
		default:
			return nil, nil
		}
		cur = parents[i]
	}
	return nil, nil
}

// stmtIn returns the statement and its parent when a statement can follow
// it there: in a block, or as the body of an if, else or loop (which then
// gets braces); not in a for header or a switch's bare body.
func stmtIn(stmt parse.Node, parents []parse.Node) (parse.Node, parse.Node) {
	if len(parents) == 0 {
		return nil, nil
	}
	parent := parents[len(parents)-1]
	var body bool
	switch p := parent.(type) {
	case *parse.BlockStmt:
		body = true
	case *parse.IfStmt:
		body = p.Then == stmt || p.Else == stmt
	case *parse.ForStmt:
		body = p.Body == stmt
	case *parse.RangeForStmt:
		body = p.Body == stmt
	case *parse.WhileStmt:
		body = p.Body == stmt
	case *parse.DoStmt:
		body = p.Body == stmt
	}
	if !body {
		return nil, nil
	}
	return stmt, parent
}

// emitSyncChecks puts `bam_rt.check_sync(__FILE__, __LINE__);` after every
// host synchronization of a function that uses bam arrays: a storage error
// a kernel recorded (a permanent NVMe error, or one still failing after the
// retries) then stops the program there, with the failed line, the array
// and the NVMe status, before it can use data read from zero-filled lines.
// Copies the port rewrote (copy_to_host, read_bytes) check by themselves.
// When nothing failed the check reads one word of mapped host memory.
func (c *portCtx) emitSyncChecks(hp *hostPlan) {
	for _, fn := range c.funcs {
		if !hp.fns[fn] || fn.Body == nil || fn.IsDevice() {
			continue
		}
		if _, bad := c.unparsedFn(fn); bad {
			continue
		}
		done := map[parse.Node]bool{} // one check per statement (two copies in one call's arguments)
		parse.WithStack(fn.Body, func(n parse.Node, parents []parse.Node) bool {
			call, ok := n.(*parse.CallExpr)
			if !ok || !c.isSyncCall(call) {
				return true
			}
			stmt, parent := syncStmt(call, parents)
			if stmt == nil || done[stmt] || rewritten(hp.edits, stmt) || c.checkedAfter(stmt) {
				return true
			}
			done[stmt] = true
			d := templates.Runtime{RT: rtName}
			for _, p := range parents {
				if _, ok := p.(*parse.LambdaExpr); ok { // bam_rt may not be captured
					d.RT = "bam::default_runtime()"
				}
			}
			check := templates.Render("check_sync", d)
			// the body of an if/else/for/while without braces gets braces
			hp.edits = append(hp.edits, c.insertAfter(stmt, parent, check, !isBlock(parent), Launches.String())...)
			return true
		})
	}
}

// rewritten reports whether an edit replaces part of stmt (a copy the port
// turned into a runtime call, which checks by itself).
func rewritten(edits []edit.Edit, stmt parse.Node) bool {
	for _, e := range edits {
		if e.End > e.Start && e.Start < stmt.End() && stmt.Pos() < e.End {
			return true
		}
	}
	return false
}

// checkedAfter reports whether the statement is already followed by a
// check (a file ported before).
func (c *portCtx) checkedAfter(stmt parse.Node) bool {
	return c.followedBy(stmt, "check_sync")
}
