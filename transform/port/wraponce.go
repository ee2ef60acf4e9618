package port

import (
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// Wrapping GPU-addressable host-visible memory once. A buffer from
// cudaMallocManaged, cudaHostAlloc or cudaMallocHost (or the device view
// cudaHostGetDevicePointer gives) is memory the GPU already reaches, so
// its bam::array is made over it in place (runtime array_wrap: no copy, no
// ownership) right after the allocation, passed to every launch, and its
// handle freed just before the program frees the memory. Host code between
// launches keeps reading and writing the pointer: kernels and host share
// one copy, as in the original, and no launch pays an upload, a download
// or an allocation. Pageable memory (malloc, new[]) is not addressable and
// keeps being wrapped around each launch (planWrapVar).

// wrapOncePlan is where v's array is made and freed.
type wrapOncePlan struct {
	after parse.Stmt       // the allocation (or cudaHostGetDevicePointer) statement
	block *parse.BlockStmt // after's block, which holds every launch and free
	frees []parse.Stmt     // the statements that free the memory
}

// gpuAddressable reports whether alloc gives memory kernels can address:
// managed, pinned by the CUDA API, or a device view of host memory.
func gpuAddressable(alloc *hostOp) bool {
	switch alloc.kind {
	case opManaged, opDevPtr:
		return true
	case opPinned:
		if alloc.call == nil {
			return false // malloc / new[] in a declaration: pageable
		}
		name := parse.ShortFuncName(alloc.call.Fun)
		return name == "cudaHostAlloc" || name == "cudaMallocHost"
	case opNone, opMalloc, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opOther:
	}
	return false
}

// planWrapOnce returns where v's array can be made once, or false when
// bamgen cannot prove one array is right for every launch (the caller then
// wraps each launch). own is v's own allocation op (the devptr op for a
// device view); h is the variable that owns the memory (v, or the host
// buffer of a device view), whose frees end the array.
func (c *portCtx) planWrapOnce(v *hostVar, own *hostOp, h *hostVar) (wrapOncePlan, bool) {
	var p wrapOncePlan
	if !gpuAddressable(own) || own.stmt == nil || own.block == nil {
		return p, false
	}
	blk := own.block
	inside := func(n parse.Node) bool {
		return n.Pos() >= own.stmt.End() && n.End() <= blk.End()
	}
	for _, w := range []*hostVar{v, h} {
		for _, op := range w.ops {
			if c.reassigns(w, op) {
				return p, false
			}
		}
	}
	// The declaration must not be jumped over: no goto in the function, and
	// no case label of a switch body after it.
	jumped := false
	parse.WithStack(v.fn.Body, func(n parse.Node, parents []parse.Node) bool {
		switch x := n.(type) {
		case *parse.BranchStmt:
			jumped = jumped || x.Keyword == "goto"
		case *parse.CaseStmt:
			jumped = jumped || len(parents) > 0 && parents[len(parents)-1] == parse.Node(blk) && x.Pos() >= own.stmt.End()
		}
		return !jumped
	})
	if jumped {
		return p, false
	}
	for _, op := range v.ops {
		if op.kind == opForward {
			return p, false // through a host function to its launch: planWrapVar says why not
		}
		if op.kind != opLaunch {
			continue
		}
		if op.launch == nil || op.launch.fn != v.fn || !inside(op.launch.node()) {
			return p, false
		}
		if op.entry != nil && (op.entry.decl == nil || !inside(op.entry.decl)) {
			return p, false // `void* args[] = {&v}` before the array exists
		}
		for _, q := range op.launch.parents {
			if _, ok := q.(*parse.LambdaExpr); ok {
				return p, false // a capture list may not name the array
			}
		}
	}
	for _, op := range h.ops {
		if op.kind != opFree {
			continue
		}
		if op.stmt == nil || op.block != blk || !inside(op.stmt) {
			return p, false
		}
		p.frees = append(p.frees, op.stmt)
	}
	if len(p.frees) == 0 && v.fn.Name != "main" {
		// never freed here: a function called again would leave a handle
		// behind on each call
		return p, false
	}
	p.after, p.block = own.stmt, blk
	return p, true
}

// emitWrapOnce makes v's array after the allocation and frees the handle
// before each free of the memory, on their own lines; each launch passes it.
func (c *portCtx) emitWrapOnce(hp *hostPlan, v *hostVar, p wrapOncePlan, elem, count string) {
	a := templates.Array{RT: rtName, Bam: bamName(v), Elem: elem, Src: v.sym.Name, Count: count}
	hp.edits = append(hp.edits, c.insertAfter(p.after, nil, templates.Render("wrap_in_place", a), false, HostMemory.String())...)
	for _, f := range p.frees {
		hp.edits = append(hp.edits, c.insertBefore(f, templates.Render("wrap_free", a), HostMemory.String()))
	}
	for _, op := range v.ops {
		if op.kind == opLaunch {
			emitLaunchArg(hp, op, bamName(v), elem)
		}
	}
	hp.fns[v.fn] = true
}

// planStage decides whether a read-only buffer (every kernel parameter it
// feeds is const) is staged instead: copied once into a bam::array
// (array_from_host) after its fill (the last statement of its allocation
// block before the first launch that may write it, else the allocation),
// and freed before the memory. That is the
// rule for big host-filled inputs such as an edge array: the runtime then
// places the copy by size and backend (resident in GPU memory when it fits
// BAM_GPU_BUDGET, else host memory or storage through the cache), where
// the program's managed memory would have been migrated or oversubscribed.
// It holds only when the host is done with the buffer by then: after that
// statement the buffer (and the host buffer of a device view) is only
// passed to launches and freed; nothing before it aliases the pointer; and
// nothing between the allocation and that statement changes the count.
// It returns the statement the copy follows, or nil (the buffer is then
// wrapped once).
func (c *portCtx) planStage(v, h *hostVar, p wrapOncePlan, count string) parse.Stmt {
	blk := p.block
	var first parse.Node
	for _, op := range v.ops {
		if op.kind == opLaunch && (first == nil || op.launch.node().Pos() < first.Pos()) {
			first = op.launch.node()
		}
	}
	if first == nil {
		return nil
	}
	var stage parse.Stmt
	for _, s := range blk.Stmts {
		if s.Pos() <= first.Pos() && first.End() <= s.End() {
			stage = s
		}
	}
	if stage == nil || stage.Pos() < p.after.End() {
		return nil
	}
	// The copy is made right after the last statement of blk, before the
	// first launch, that may write the buffer (its fill), or else right
	// after the allocation: as early as possible, outside the timed loops
	// programs put around their launches.
	after := p.after
	topOf := func(n parse.Node) parse.Stmt {
		for _, s := range blk.Stmts {
			if s.Pos() <= n.Pos() && n.End() <= s.End() {
				return s
			}
		}
		return nil
	}
	for _, w := range []*hostVar{v, h} {
		for _, op := range w.ops {
			at := op.node
			if op.stmt != nil {
				at = op.stmt
			}
			if at.Pos() >= stage.Pos() {
				if !c.hostReads(w, op) {
					return nil // the host may still write it
				}
				continue
			}
			if at.Pos() < p.after.End() {
				continue
			}
			if !noAlias(w, op) {
				return nil
			}
			if !c.hostReads(w, op) {
				top := topOf(at)
				if top == nil {
					return nil
				}
				if top.End() > after.End() {
					after = top
				}
			}
		}
	}
	stage = after
	names := map[string]bool{}
	for _, n := range identRE.FindAllString(count, -1) {
		names[n] = true
	}
	changed := false
	parse.WithStack(blk, func(n parse.Node, parents []parse.Node) bool {
		if changed || n.End() <= p.after.End() || n.Pos() >= stage.End() {
			return !changed && n.Pos() < stage.End()
		}
		switch x := n.(type) {
		case *parse.VarDecl:
			changed = names[x.Name]
		case *parse.Ident:
			changed = names[x.Name] && mayWrite(x, parents)
		}
		return !changed
	})
	if changed {
		return nil
	}
	return stage
}

// emitStage makes the staged array after stage and frees it before each
// free of the memory; each launch passes it.
func (c *portCtx) emitStage(hp *hostPlan, v *hostVar, p wrapOncePlan, stage parse.Stmt, elem, src, count string) {
	a := templates.Array{RT: rtName, Bam: bamName(v), Elem: elem, Src: src, Count: count}
	hp.edits = append(hp.edits, c.insertAfter(stage, nil, templates.Render("stage_once", a), false, HostMemory.String())...)
	for _, f := range p.frees {
		hp.edits = append(hp.edits, c.insertBefore(f, templates.Render("wrap_free", a), HostMemory.String()))
	}
	for _, op := range v.ops {
		if op.kind == opLaunch {
			emitLaunchArg(hp, op, bamName(v), elem)
		}
	}
	hp.fns[v.fn] = true
}

// hostReads reports whether op, a host use of w after its array was
// staged, only reads the buffer (so the staged copy stays equal to it): an
// element read `w[i]` (not assigned, incremented, its address taken or
// bound to a reference; as a call argument only to the printf family), a
// device-to-host copy from it, or w passed to a function of this file
// whose parameter is a pointer to const.
func (c *portCtx) hostReads(w *hostVar, op hostOp) bool {
	switch op.kind {
	case opLaunch, opFree, opDownload:
		return true
	case opOther:
	case opNone, opMalloc, opManaged, opPinned, opUpload, opMemset0, opMemset, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr:
		return false
	}
	id, ok := op.node.(*parse.Ident)
	if !ok {
		return false
	}
	reads := false
	withParentsOf(w.fn.Body, id, func(parents []parse.Node) {
		p, i, child := enclosing(parents, id)
		switch x := p.(type) {
		case *parse.CallExpr:
			if f := c.hostCallee(x); f != nil {
				for j, a := range x.Args {
					if parse.Node(a) == child && j < len(f.Params) {
						t := f.Params[j].Type
						reads = t != nil && t.Const && t.Pointers == 1 && !t.Ref && !t.RRef
					}
				}
			}
		case *parse.IndexExpr:
			if parse.Node(x.X) == child {
				reads = elementRead(x, parents[:i])
			}
		}
	})
	return reads
}

// elementRead reports whether the element access e (with its parents) is
// only read.
func elementRead(e *parse.IndexExpr, parents []parse.Node) bool {
	p, _, child := enclosing(parents, e)
	switch x := p.(type) {
	case *parse.BinaryExpr:
		return !(parse.IsAssign(x.Op) && parse.Node(x.X) == child)
	case *parse.UnaryExpr:
		return x.Op != "++" && x.Op != "--" && x.Op != "&"
	case *parse.CallExpr:
		switch parse.ShortFuncName(x.Fun) {
		case "printf", "fprintf", "snprintf", "sprintf":
			return parse.Node(x.Fun) != child
		}
		return false
	case *parse.VarDecl:
		return x.Type != nil && !x.Type.Ref && !x.Type.RRef
	case *parse.IndexExpr: // `c[e[i]]`: the element is an index
		return parse.Node(x.X) != child
	case *parse.ReturnStmt, *parse.IfStmt, *parse.ExprStmt:
		return true
	}
	return false
}
