package port

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// Re-allocating a buffer to empty the GPU's page cache. Benchmarks that
// time several runs over managed memory start each run cold by moving the
// data to a fresh allocation:
//
//	cudaMallocManaged(&tmp, bytes);
//	memcpy(tmp, v, bytes);
//	cudaFree(v);
//	v = tmp;
//	cudaMemAdvise(v, bytes, cudaMemAdviseSetReadMostly, dev);   // optional hints
//
// The contents do not change, only where they live. For a buffer ported
// per mode (modes.go) the sequence becomes rt.drop_cache(), which writes the
// cache back and empties it (the same cold start), and the rest of the
// statements become comments (hints on the buffer anywhere after the mode
// statement too). Anything that does not have this shape, in one block, is
// refused with the part that differs.

// realloc is one recognised re-allocation of v through tmp.
type realloc struct {
	tmp   *hostVar
	stmts []parse.Stmt // alloc, copy, free, assignment: in order
}

type reallocSet []realloc

// covers reports whether op is a use of v inside one of the sequences.
func (rs reallocSet) covers(op hostOp) bool {
	for _, r := range rs {
		for _, s := range r.stmts {
			if op.node.Pos() >= s.Pos() && op.node.End() <= s.End() {
				return true
			}
		}
	}
	return false
}

// isHint reports whether op passes v to cudaMemAdvise or
// cudaMemPrefetchAsync as a statement of its own.
func isHint(op hostOp) bool {
	if op.kind != opOther || op.call == nil || op.stmt == nil {
		return false
	}
	name := parse.ShortFuncName(op.call.Fun)
	return name == "cudaMemAdvise" || name == "cudaMemPrefetchAsync"
}

// reallocsOf finds every `v = tmp;` after the mode statement and checks
// that it ends a re-allocation sequence.
func (c *portCtx) reallocsOf(v *hostVar, ms modeStmt) (reallocSet, parse.Node, string) {
	var out reallocSet
	for _, op := range v.ops {
		if op.kind != opCopy || op.dst != v.sym || op.node == parse.Node(v.sym.Decl) {
			continue
		}
		if op.node.Pos() < ms.stmt.End() {
			return nil, op.node, fmt.Sprintf("%s is reassigned in `%s` before or inside the %s that allocates it per mode; bamgen cannot follow that", v.sym.Name, oneLine(c.text(op.node)), stmtWord(ms.stmt))
		}
		r, why := c.reallocAt(v, op)
		if why != "" {
			return nil, op.node, fmt.Sprintf("%s is reassigned in `%s`: %s", v.sym.Name, oneLine(c.text(op.node)), why)
		}
		out = append(out, r)
	}
	return out, nil, ""
}

// reallocAt checks the statements before `v = tmp;` (op): in the same
// block, tmp's one allocation, then the copy of v into tmp, then the free of
// v, with no other use of v or tmp among them (another buffer's sequence
// may be interleaved).
func (c *portCtx) reallocAt(v *hostVar, op hostOp) (realloc, string) {
	const shape = "bamgen follows a re-allocation only in the form `alloc(&tmp, bytes); memcpy(tmp, v, bytes); free(v); v = tmp;` in one block, with tmp used nowhere else"
	if op.stmt == nil || op.block == nil || op.src == nil {
		return realloc{}, shape
	}
	tmp := c.hostVarFor(v.fn, op.src)
	a := findAllocation(tmp)
	if a == nil || a.kind == opDevPtr || a.stmt == nil || a.block != op.block {
		return realloc{}, fmt.Sprintf("%s has no single allocation in the block of the assignment; %s", tmp.sym.Name, shape)
	}
	var copyS, freeS parse.Stmt
	for _, s := range op.block.Stmts {
		if s.Pos() <= a.stmt.Pos() || s.Pos() >= op.stmt.Pos() {
			continue
		}
		switch {
		case copyS == nil && c.copiesInto(v, tmp, s):
			copyS = s
		case copyS != nil && freeS == nil && hasOp(v, s, opFree):
			freeS = s
		}
	}
	if copyS == nil || freeS == nil {
		return realloc{}, fmt.Sprintf("no copy of %s into %s followed by a free of %s between `%s` and the assignment; %s",
			v.sym.Name, tmp.sym.Name, v.sym.Name, oneLine(c.text(a.stmt)), shape)
	}
	r := realloc{tmp: tmp, stmts: []parse.Stmt{a.stmt, copyS, freeS, op.stmt}}
	for _, o := range v.ops {
		if o.node.Pos() > a.stmt.Pos() && o.node.End() <= op.stmt.End() && !(reallocSet{r}).covers(o) && !isHint(o) {
			return realloc{}, fmt.Sprintf("%s is also used in `%s` during the re-allocation; %s", v.sym.Name, oneLine(c.text(whereOf(o))), shape)
		}
	}
	for _, o := range tmp.ops {
		if !(reallocSet{r}).covers(o) {
			return realloc{}, fmt.Sprintf("%s is also used in `%s`; %s", tmp.sym.Name, oneLine(c.text(whereOf(o))), shape)
		}
	}
	return r, ""
}

// hasOp reports whether v has a use of kind k that is statement s.
func hasOp(v *hostVar, s parse.Stmt, k hostOpKind) bool {
	for _, o := range v.ops {
		if o.stmt == s && o.kind == k {
			return true
		}
	}
	return false
}

// copiesInto reports whether s is memcpy/memmove(tmp, v, ...) or
// cudaMemcpy(tmp, v, ...): the whole statement, tmp first.
func (c *portCtx) copiesInto(v, tmp *hostVar, s parse.Stmt) bool {
	for _, o := range v.ops {
		if o.stmt != s || o.call == nil || len(o.call.Args) < 3 {
			continue
		}
		switch parse.ShortFuncName(o.call.Fun) {
		case "memcpy", "memmove", "cudaMemcpy":
			return symbolOf(v.fn, parse.UnparenCasts(o.call.Args[0])) == tmp.sym && symbolOf(v.fn, parse.UnparenCasts(o.call.Args[1])) == v.sym
		}
	}
	return false
}

// emitRealloc turns the sequence into rt.drop_cache() and comments, each
// statement keeping its lines.
func (c *portCtx) emitRealloc(hp *hostPlan, v *hostVar, r realloc) {
	for i, s := range r.stmts {
		text := templates.Render("removed", templates.Note{Note: commentSafe(oneLine(c.text(s)))})
		if i == 0 {
			text = templates.Render("drop_cache", templates.DropCache{RT: rtName,
				Note: fmt.Sprintf("%s keeps its contents; moving %s to %s only emptied the cache", bamName(v), v.sym.Name, r.tmp.sym.Name)})
		}
		c.replaceStmt(hp, HostMemory, s, text)
	}
}

// commentSafe keeps statement text quoted in a /* */ comment from ending it.
func commentSafe(s string) string { return strings.ReplaceAll(s, "*/", "* /") }

// whereOf is the statement around a use, for messages (the use itself when
// it is in none).
func whereOf(op hostOp) parse.Node {
	if op.where != nil {
		return op.where
	}
	return op.node
}
