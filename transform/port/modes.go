package port

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// Buffers allocated per memory mode. Graph benchmarks choose where a large
// array lives at run time:
//
//	switch (mode) {
//	case GPU: cudaMalloc(&e, bytes); cudaMemcpy(e, h, bytes, H2D); break;
//	case UVM: cudaMallocManaged(&e, bytes); memcpy(e, h, bytes); break;
//	case ZC:  cudaHostAlloc(&e, bytes, cudaHostAllocMapped); fill e on the host; break;
//	}
//
// (or the same as an if / else-if chain). Every mode becomes the same
// bam::array, declared just before the switch: the cudaMalloc branch makes
// it as a cudaMalloc'd buffer is made (from its upload, or zeros and then
// in-place writes); a host-visible branch keeps its allocation as a staging
// buffer, fills it on the host as before, then makes the array from it and
// frees it; a branch that takes the device view of a host buffer
// (cudaHostGetDevicePointer) makes the array from that buffer. After the
// switch the pointer is only launched, copied from or to, and freed: the
// launches pass the array and every free (cudaFree or cudaFreeHost, per mode
// or not) becomes one rt.free. Anything else refuses the buffer, saying why.

// modeBranch is one branch of a mode switch or if chain that allocates v.
type modeBranch struct {
	label      string       // "case MEM_DEVICE", "if (mode == GPU)", "else"
	stmts      []parse.Stmt // the branch's statements, in order
	start, end int          // its byte range (labels included)
	alloc      *hostOp      // the allocation (or device view) in the branch
	closeAt    int          // the offset of the branch block's `}`, or -1 (a case's statements)
	ops        []hostOp     // v's other uses inside the branch
}

// modeStmt is the switch, or the outermost if of the chain, that chooses
// the allocation, and the block holding it.
type modeStmt struct {
	stmt  parse.Stmt
	block *parse.BlockStmt
}

// allocCount counts v's allocations (cudaMalloc, managed, pinned, device
// views).
func allocCount(v *hostVar) int {
	n := 0
	for _, op := range v.ops {
		switch op.kind {
		case opMalloc, opManaged, opPinned, opDevPtr:
			n++
		case opNone, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opOther:
		}
	}
	return n
}

// isModeAllocated reports whether v is allocated more than once and is not
// copied to or from another buffer: the per-mode plan's case. Buffers that
// are pointer copies of others stay with the device groups (which refuse
// two allocations with their own message).
func isModeAllocated(v *hostVar) bool {
	if allocCount(v) < 2 {
		return false
	}
	for _, op := range v.ops {
		reassigned := op.kind == opCopy && op.dst == v.sym && op.node != parse.Node(v.sym.Decl) // v = tmp: maybe a re-allocation (realloc.go)
		if (op.kind == opCopy && !reassigned) || op.kind == opSwap || op.kind == opD2D {
			return false
		}
	}
	return true
}

// parentOfNode returns the parent of n inside fn's body (nil for the body).
func (c *portCtx) parentOfNode(fn *parse.FuncDecl, n parse.Node) parse.Node {
	if c.parentMaps == nil {
		c.parentMaps = map[*parse.FuncDecl]map[parse.Node]parse.Node{}
	}
	m := c.parentMaps[fn]
	if m == nil {
		m = map[parse.Node]parse.Node{}
		parse.WithStack(fn.Body, func(x parse.Node, parents []parse.Node) bool {
			if len(parents) > 0 {
				m[x] = parents[len(parents)-1]
			}
			return true
		})
		c.parentMaps[fn] = m
	}
	return m[n]
}

// branchOf finds the branch of a switch or if chain that holds s, a
// statement directly in block.
func (c *portCtx) branchOf(fn *parse.FuncDecl, s parse.Stmt, block *parse.BlockStmt) (*modeBranch, modeStmt, string) {
	parent := c.parentOfNode(fn, block)
	if body, ok := parent.(*parse.BlockStmt); ok { // case X: { ... }
		if sw, ok := c.parentOfNode(fn, body).(*parse.SwitchStmt); ok && sw.Body == parse.Stmt(body) {
			return c.caseBranch(fn, sw, body, block, block.Stmts)
		}
	}
	switch p := parent.(type) {
	case *parse.SwitchStmt:
		if p.Body != parse.Stmt(block) {
			break
		}
		return c.caseBranch(fn, p, block, s, nil)
	case *parse.IfStmt:
		var label string
		switch parse.Stmt(block) {
		case p.Then:
			label = "if (" + oneLine(c.text(p.Cond)) + ")"
		case p.Else:
			label = "else"
		default:
			return nil, modeStmt{}, "not a branch"
		}
		top := parse.Stmt(p)
		for {
			q, ok := c.parentOfNode(fn, top).(*parse.IfStmt)
			if !ok || q.Else != top {
				break
			}
			top = q
		}
		outer, ok := c.parentOfNode(fn, top).(*parse.BlockStmt)
		if !ok {
			break
		}
		return &modeBranch{label: label, stmts: block.Stmts, start: block.Pos(), end: block.End(), closeAt: block.End() - 1}, modeStmt{top, outer}, ""
	}
	return nil, modeStmt{}, "not a branch"
}

// caseBranch is the case region of switch sw (body: its block) holding
// the statement s of body. inner is the statement list of a braced case
// body (`case X: { ... }`, s is that block), else nil: the region's
// statements are then the branch's.
func (c *portCtx) caseBranch(fn *parse.FuncDecl, sw *parse.SwitchStmt, body *parse.BlockStmt, s parse.Stmt, inner []parse.Stmt) (*modeBranch, modeStmt, string) {
	idx := -1
	for i, x := range body.Stmts {
		if x == s {
			idx = i
		}
	}
	first := idx
	for first >= 0 {
		if _, ok := body.Stmts[first].(*parse.CaseStmt); ok {
			break
		}
		first--
	}
	if idx < 0 || first < 0 {
		return nil, modeStmt{}, "not a branch"
	}
	labelStart := first
	for labelStart > 0 {
		if _, ok := body.Stmts[labelStart-1].(*parse.CaseStmt); !ok {
			break
		}
		labelStart--
	}
	last := idx
	for last+1 < len(body.Stmts) {
		if _, ok := body.Stmts[last+1].(*parse.CaseStmt); ok {
			break
		}
		last++
	}
	var labels []string
	for _, l := range body.Stmts[labelStart : first+1] {
		labels = append(labels, strings.TrimSuffix(oneLine(c.text(l)), ":"))
	}
	stmts := inner
	if stmts == nil {
		stmts = body.Stmts[first+1 : last+1]
	}
	b := &modeBranch{label: strings.Join(labels, ", "), stmts: stmts, start: body.Stmts[labelStart].Pos(), end: body.Stmts[last].End(), closeAt: -1}
	if blk, ok := s.(*parse.BlockStmt); ok && inner != nil {
		b.closeAt = blk.End() - 1
	}
	ends := endsBranch(body.Stmts[last])
	if blk, ok := body.Stmts[last].(*parse.BlockStmt); ok && len(blk.Stmts) > 0 {
		ends = ends || endsBranch(blk.Stmts[len(blk.Stmts)-1])
	}
	if last+1 < len(body.Stmts) && !ends {
		return nil, modeStmt{}, fmt.Sprintf("`%s` falls through into the next case; end it with break", b.label)
	}
	outer, ok := c.parentOfNode(fn, sw).(*parse.BlockStmt)
	if !ok {
		return nil, modeStmt{}, "not a branch"
	}
	return b, modeStmt{sw, outer}, ""
}

// endsBranch reports whether s leaves the switch (break, return, throw, exit).
func endsBranch(s parse.Stmt) bool {
	switch x := s.(type) {
	case *parse.BranchStmt:
		return x.Keyword == "break"
	case *parse.ReturnStmt:
		return true
	case *parse.ExprStmt:
		if call, ok := parse.Unparen(x.X).(*parse.CallExpr); ok {
			switch parse.ShortFuncName(call.Fun) {
			case "exit", "abort", "_Exit", "quick_exit":
				return true
			}
		}
	}
	return false
}

// hostFillCalls are C and C++ library functions that read or write through
// a pointer argument without keeping it: host fills of a staging buffer.
// `read` is istream::read (`file.read((char*)p, bytes)`) and POSIX read;
// cudaMemAdvise and cudaMemPrefetchAsync are hints about the staging
// buffer, harmless before it is copied into the array.
var hostFillCalls = map[string]bool{"memcpy": true, "memmove": true, "memset": true, "fread": true, "read": true,
	"copy": true, "copy_n": true, "fill": true, "fill_n": true, "cudaMemAdvise": true, "cudaMemPrefetchAsync": true}

// isHostFill reports whether op, a use of v in a host-visible branch, only
// reads or writes the buffer's elements: `v[i] = x`, `*v`, or v passed to
// memcpy / memset / fread / std::copy / std::fill.
func (c *portCtx) isHostFill(v *hostVar, op hostOp) bool {
	switch op.kind {
	case opUpload, opDownload, opMemset0, opMemset:
		return op.stmt != nil
	case opOther:
	case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opDevPtr, opForward:
		return false
	}
	if op.call != nil {
		return hostFillCalls[parse.LastName(parse.CalleeName(op.call.Fun))]
	}
	id, ok := op.node.(*parse.Ident)
	if !ok {
		return false
	}
	cur := parse.Node(id)
	p := c.parentOfNode(v.fn, cur)
	for {
		if _, paren := p.(*parse.ParenExpr); !paren {
			break
		}
		cur, p = p, c.parentOfNode(v.fn, p)
	}
	switch x := p.(type) {
	case *parse.IndexExpr:
		if x.X != cur {
			return false
		}
		up := c.parentOfNode(v.fn, x)
		for {
			if _, paren := up.(*parse.ParenExpr); !paren {
				break
			}
			up = c.parentOfNode(v.fn, up)
		}
		u, isUnary := up.(*parse.UnaryExpr)
		return !isUnary || u.Op != "&"
	case *parse.UnaryExpr:
		return x.Op == "*"
	}
	return false
}

// planModes ports a buffer allocated per mode, or refuses it saying why;
// a refusal drops keys, the ported parameters fed by v or by any buffer
// joined to it by a pointer copy (a re-allocation's temporary, or a buffer
// assigned to v that then fails the re-allocation check).
func (c *portCtx) planModes(hp *hostPlan, v *hostVar, keys []paramKey) {
	if why := c.conflictingLaunch(v); why != "" {
		c.hostDrop(hp, keys, v.sym.Decl, CodeHostUse, why)
		return
	}
	elem := c.elemType(v)
	if elem == "" {
		c.hostDrop(hp, keys, v.sym.Decl, CodeNoElemType, noElemMessage(v))
		return
	}
	branches, ms, at, why := c.modeBranches(v)
	if why != "" {
		c.hostDrop(hp, keys, at, CodeHostUse, why)
		return
	}
	reallocs, at, why := c.reallocsOf(v, ms)
	if why != "" {
		c.hostDrop(hp, keys, at, CodeHostUse, why)
		return
	}
	var after []hostOp
	for _, op := range v.ops {
		if isAllocKind(op.kind) || reallocs.covers(op) {
			continue
		}
		pos := op.node.Pos()
		if b := branchAt(branches, pos); b != nil {
			b.ops = append(b.ops, op)
			continue
		}
		where := op.node
		if op.where != nil {
			where = op.where
		}
		switch {
		case op.kind == opNull:
			continue // the pointer stays declared: setting it to null is harmless
		case pos < ms.stmt.Pos():
			c.hostDrop(hp, keys, op.node, CodeHostUse, fmt.Sprintf("%s is used in `%s` before the %s that allocates it per mode; bamgen makes its bam::array in that %s",
				v.sym.Name, oneLine(c.text(where)), stmtWord(ms.stmt), stmtWord(ms.stmt)))
			return
		case pos < ms.stmt.End():
			c.hostDrop(hp, keys, op.node, CodeHostUse, fmt.Sprintf("%s is used in `%s`, in a branch of the %s that does not allocate it",
				v.sym.Name, oneLine(c.text(where)), stmtWord(ms.stmt)))
			return
		case op.node.End() > ms.block.End():
			c.hostDrop(hp, keys, op.node, CodeHostScope, fmt.Sprintf("%s is used outside the block of the %s that allocates it per mode; its bam::array is declared in that block",
				v.sym.Name, stmtWord(ms.stmt)))
			return
		}
		if isHint(op) {
			after = append(after, op)
			continue
		}
		switch op.kind {
		case opLaunch, opFree, opUpload, opDownload, opMemset0, opMemset:
			if op.stmt != nil || op.kind == opLaunch {
				after = append(after, op)
				continue
			}
		case opNone, opMalloc, opManaged, opPinned, opNull, opForeign, opCopy, opSwap, opD2D, opDevPtr, opForward, opOther:
		}
		c.hostDrop(hp, keys, where, CodeHostUse, fmt.Sprintf(
			"%s is used in `%s` after the %s that allocates it per mode; there bamgen rewrites only launches of ported kernels, cudaMemcpy to or from the host, cudaMemset and frees (host reads of a managed or mapped buffer: copy it out with cudaMemcpy instead)",
			v.sym.Name, oneLine(c.text(where)), stmtWord(ms.stmt)))
		return
	}
	type stage struct {
		b     *modeBranch
		h     *hostVar // the host buffer behind a device view
		count string
	}
	var stages []stage
	for _, b := range branches {
		s := stage{b: b, count: c.countFor(v, b.alloc.bytes, elem)}
		if at, why := c.branchProblem(v, b); why != "" {
			c.hostDrop(hp, keys, at, CodeHostUse, why)
			return
		}
		if b.alloc.kind == opDevPtr {
			h, at, why := c.devPtrSource(v, b.alloc)
			if why == "" {
				why, at = c.devViewLater(v, h, b.alloc)
			}
			if why != "" {
				c.hostDrop(hp, keys, at, CodeHostUse, why)
				return
			}
			s.h, s.count = h, c.countFor(v, findAllocation(h).bytes, elem)
		}
		stages = append(stages, s)
	}

	// Emit: the array before the mode statement, each branch's creation,
	// then the uses after it.
	data := templates.Array{RT: rtName, Bam: bamName(v), Elem: elem}
	hp.edits = append(hp.edits, c.insertBefore(ms.stmt, templates.Render("mode_decl", data), HostMemory.String()))
	var what []string
	for _, s := range stages {
		d := data
		d.Count = s.count
		b := s.b
		switch b.alloc.kind {
		case opMalloc:
			what = append(what, fmt.Sprintf("%s (cudaMalloc) makes it %s", b.label, c.emitModeDevice(hp, v, b, d)))
		case opManaged, opPinned:
			d.Src = v.sym.Name
			st := templates.Stage{Array: d, Free: "cudaFree"}
			if b.alloc.call != nil && parse.ShortFuncName(b.alloc.call.Fun) != "cudaMallocManaged" {
				st.Free = "cudaFreeHost"
			}
			text := templates.Render("stage", st) // the copy into the array, then the free
			i := strings.Index(text, "; "+st.Free+"(")
			hp.edits = append(hp.edits, c.stageEdit(b, []string{text[:i+1], text[i+2:]}))
			what = append(what, fmt.Sprintf("%s (%s) fills %s on the host as before, then copies it into the array and frees it",
				b.label, parse.ShortFuncName(b.alloc.call.Fun), v.sym.Name))
		case opDevPtr:
			d.Src = s.h.sym.Name
			c.replaceStmt(hp, HostMemory, b.alloc.stmt, templates.Render("assign_from_host", d))
			what = append(what, fmt.Sprintf("%s (cudaHostGetDevicePointer of %s) makes it from %s", b.label, s.h.sym.Name, s.h.sym.Name))
		case opNone, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opOther:
			// not an allocation (modeBranches)
		}
	}
	p := deviceVarPlan{v: v, data: data, src: Source{Kind: "host"}}
	for _, op := range after {
		switch {
		case op.kind == opLaunch:
			emitLaunchArg(hp, op, bamName(v), elem)
		case isHint(op):
			c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("removed", templates.Note{Note: commentSafe(oneLine(c.text(op.call))) + ": a hint about memory the array replaces"}))
		default:
			c.emitDeviceOp(hp, p, op)
		}
	}
	for _, r := range reallocs {
		c.emitRealloc(hp, v, r)
		what = append(what, fmt.Sprintf("its re-allocation through %s becomes %s.drop_cache()", r.tmp.sym.Name, rtName))
	}
	hp.fns[v.fn] = true
	hp.notes = append(hp.notes, diag.Diagnostic{Pos: ms.stmt.Pos(), End: ms.stmt.Pos(), Severity: diag.Note, Code: CodeModesCollapsed,
		Message: fmt.Sprintf("%s is allocated per mode; every mode now makes the same bam::array %s, declared before the %s: %s; the launches pass %s and its frees become %s.free(%s)",
			v.sym.Name, bamName(v), stmtWord(ms.stmt), strings.Join(what, "; "), bamName(v), rtName, bamName(v))})
}

// stageEdit puts stmts (a staging buffer copied into the array, then
// freed) after the branch's last use of the buffer: before the next
// statement of the branch (its break); when there is none, after that last
// statement if it is a simple one, else before the branch's closing brace,
// so that they never read as part of a loop or if body written without
// braces. They go on lines of their own where the statement next to them
// has its line (layout.go), else on its line.
func (c *portCtx) stageEdit(b *modeBranch, stmts []string) edit.Edit {
	text := strings.Join(stmts, " ")
	last := b.alloc.stmt.End()
	var lastStmt parse.Stmt = b.alloc.stmt
	for _, op := range b.ops {
		for _, s := range b.stmts {
			if op.node.Pos() >= s.Pos() && op.node.End() <= s.End() && s.End() > last {
				last, lastStmt = s.End(), s
			}
		}
	}
	for _, s := range b.stmts {
		if s.Pos() >= last {
			if _, indent, ok := c.lineBefore(s.Pos()); ok {
				text = strings.Join(stmts, "\n"+indent)
			}
			return c.insertBefore(s, text, HostMemory.String())
		}
	}
	switch lastStmt.(type) {
	case *parse.ExprStmt, *parse.DeclStmt: // a simple statement ends the branch: after it
		if _, ok := c.lineAfter(last); ok {
			text = strings.Join(stmts, "\n"+c.indentAt(lastStmt.Pos()))
		}
		return c.insertAfter(lastStmt, nil, text, false, HostMemory.String())[0]
	}
	if b.closeAt >= 0 {
		if start, _, ok := c.lineBefore(b.closeAt); ok {
			indent := c.indentAt(lastStmt.Pos())
			return edit.Edit{Start: start, End: start, New: indent + strings.Join(stmts, "\n"+indent) + "\n", Rewrite: HostMemory.String()}
		}
		return edit.Edit{Start: b.closeAt, End: b.closeAt, New: text + " ", Rewrite: HostMemory.String()}
	}
	return edit.Edit{Start: last, End: last, New: " " + text, Rewrite: HostMemory.String()}
}

// stmtWordOf names the statement a branch belongs to.
func stmtWordOf(b *modeBranch) string {
	if strings.HasPrefix(b.label, "case") || strings.HasPrefix(b.label, "default") {
		return "switch"
	}
	return "if chain"
}

func isAllocKind(k hostOpKind) bool {
	return k == opMalloc || k == opManaged || k == opPinned || k == opDevPtr
}

func stmtWord(s parse.Stmt) string {
	if _, ok := s.(*parse.SwitchStmt); ok {
		return "switch"
	}
	return "if chain"
}

func branchAt(bs []*modeBranch, pos int) *modeBranch {
	for _, b := range bs {
		if pos >= b.start && pos < b.end {
			return b
		}
	}
	return nil
}

// modeBranches finds the branch of each of v's allocations; all must be in
// different branches of one switch or if chain.
func (c *portCtx) modeBranches(v *hostVar) ([]*modeBranch, modeStmt, parse.Node, string) {
	var bs []*modeBranch
	var ms modeStmt
	var places []string
	for _, op := range v.ops {
		if isAllocKind(op.kind) {
			places = append(places, fmt.Sprintf("`%s`", oneLine(c.text(op.call))))
		}
	}
	for i := range v.ops {
		op := &v.ops[i]
		if !isAllocKind(op.kind) {
			continue
		}
		if op.stmt == nil || op.block == nil {
			return nil, ms, op.node, fmt.Sprintf("%s is allocated more than once, and `%s` is not a statement directly in a { } branch; bamgen ports one allocation per buffer, or one per branch of a switch or if chain over the memory mode",
				v.sym.Name, oneLine(c.text(op.call)))
		}
		b, s, why := c.branchOf(v.fn, op.stmt, op.block)
		if why == "not a branch" {
			why = "bamgen ports one allocation per buffer, or one per branch of a switch or if chain over the memory mode (each branch in { } or ending with break)"
		}
		if why == "" && ms.stmt != nil && s.stmt != ms.stmt {
			why = "its allocations are in different switch or if statements; bamgen ports one allocation per branch of one switch or if chain"
		}
		if why == "" && branchAt(bs, op.node.Pos()) != nil {
			why = fmt.Sprintf("it is allocated twice in `%s`", branchAt(bs, op.node.Pos()).label)
		}
		if why != "" {
			return nil, ms, op.node, fmt.Sprintf("%s is allocated more than once (%s): %s", v.sym.Name, strings.Join(places, ", "), why)
		}
		ms = s
		b.alloc = op
		bs = append(bs, b)
	}
	return bs, ms, nil, ""
}

// branchProblem checks v's uses inside one allocating branch.
func (c *portCtx) branchProblem(v *hostVar, b *modeBranch) (parse.Node, string) {
	for _, op := range b.ops {
		where := op.node
		if op.where != nil {
			where = op.where
		}
		if op.node.Pos() < b.alloc.node.Pos() {
			return op.node, fmt.Sprintf("%s is used in `%s` before its allocation in `%s`", v.sym.Name, oneLine(c.text(where)), b.label)
		}
		if op.kind == opLaunch {
			return where, fmt.Sprintf("%s is passed to a launch (`%s`) inside `%s`, the branch that allocates it per mode; bamgen makes the branch's bam::array at its end, so launch the kernel after the %s",
				v.sym.Name, oneLine(c.text(where)), b.label, stmtWordOf(b))
		}
		switch b.alloc.kind {
		case opMalloc:
			switch op.kind {
			case opUpload, opDownload, opMemset0, opMemset:
				if op.stmt != nil {
					continue
				}
			case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opDevPtr, opForward, opOther:
			}
			return where, fmt.Sprintf("%s is used in `%s` in `%s`; in a cudaMalloc branch bamgen rewrites only cudaMemcpy to or from the host and cudaMemset",
				v.sym.Name, oneLine(c.text(where)), b.label)
		case opManaged, opPinned:
			if c.isHostFill(v, op) {
				continue
			}
			return where, fmt.Sprintf("%s is used in `%s` in `%s`; bamgen cannot tell what that does with the pointer (it may keep it), so the buffer cannot become a bam::array: fill it in this branch with element writes, memcpy, memset, fread or cudaMemcpy",
				v.sym.Name, oneLine(c.text(where)), b.label)
		case opDevPtr:
			return where, fmt.Sprintf("%s is used in `%s` after it is made the device view of another buffer in `%s`; fill that buffer before cudaHostGetDevicePointer",
				v.sym.Name, oneLine(c.text(where)), b.label)
		case opNone, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opOther:
		}
	}
	return nil, ""
}

// devViewLater checks that h, the host buffer behind a device view made in
// one branch, is only freed after the view is taken: the array is a copy
// of h made there, so later host writes would not reach the kernels and
// the kernels' writes would not reach h.
func (c *portCtx) devViewLater(v, h *hostVar, view *hostOp) (string, parse.Node) {
	for _, op := range h.ops {
		if op.node.Pos() < view.call.End() || op.kind == opFree || op.kind == opNull {
			continue
		}
		where := op.node
		if op.where != nil {
			where = op.where
		}
		return fmt.Sprintf("%s is the device view of %s, which is used in `%s` after the view is taken; bamgen makes %s's bam::array from %s where the view is taken, so %s may only be freed after that",
			v.sym.Name, h.sym.Name, oneLine(c.text(where)), v.sym.Name, h.sym.Name, h.sym.Name), where
	}
	return "", nil
}

// emitModeDevice makes the array in a cudaMalloc branch: from the upload
// that follows the allocation (the cudaMalloc is removed), else as zeros,
// with the branch's later copies and fills in place. It returns how.
func (c *portCtx) emitModeDevice(hp *hostPlan, v *hostVar, b *modeBranch, d templates.Array) string {
	var next *hostOp
	for i := range b.ops {
		if op := &b.ops[i]; op.node.Pos() > b.alloc.node.Pos() && (next == nil || op.node.Pos() < next.node.Pos()) {
			next = op
		}
	}
	p := deviceVarPlan{v: v, alloc: b.alloc, data: d, src: Source{Kind: "host"}}
	merged := next != nil && (next.kind == opUpload || next.kind == opMemset0) && next.block == b.alloc.block &&
		next.offset == nil && c.sameCount(next.bytes, b.alloc.bytes, d.Elem) && c.sourceFor(v).Kind == "host"
	how := "from zeros"
	if merged {
		c.replaceStmt(hp, HostMemory, b.alloc.stmt, templates.Render("removed", templates.Note{Note: v.sym.Name + " is now bam::array " + bamName(v) + ", made below"}))
		if next.kind == opUpload {
			d.Src = c.hostPointerText(next.other, d.Elem, false)
			c.replaceStmt(hp, HostMemory, next.stmt, templates.Render("assign_from_host", d))
			how = "from its upload"
		} else {
			c.replaceStmt(hp, HostMemory, next.stmt, templates.Render("assign_zeros", d))
		}
	} else {
		c.replaceStmt(hp, HostMemory, b.alloc.stmt, templates.Render("assign_zeros", d))
	}
	for _, op := range b.ops {
		if merged && op.node == next.node {
			continue
		}
		c.emitDeviceOp(hp, p, op)
	}
	return how
}
