package port

import (
	"github.com/bamgen/bamgen/edit"
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
	after parse.Stmt   // the allocation (or cudaHostGetDevicePointer) statement
	frees []parse.Stmt // the statements that free the memory
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
	p.after = own.stmt
	return p, true
}

// emitWrapOnce makes v's array after the allocation and frees the handle
// before each free of the memory, on their own lines; each launch passes it.
func (c *portCtx) emitWrapOnce(hp *hostPlan, v *hostVar, p wrapOncePlan, elem, count string) {
	a := templates.Array{RT: rtName, Bam: bamName(v), Elem: elem, Src: v.sym.Name, Count: count}
	hp.edits = append(hp.edits, edit.Edit{Start: p.after.End(), End: p.after.End(), New: templates.Render("wrap_in_place", a), Rewrite: HostMemory.String()})
	for _, f := range p.frees {
		hp.edits = append(hp.edits, edit.Edit{Start: f.Pos(), End: f.Pos(), New: templates.Render("wrap_free", a), Rewrite: HostMemory.String()})
	}
	for _, op := range v.ops {
		if op.kind == opLaunch {
			emitLaunchArg(hp, op, bamName(v), elem)
		}
	}
	hp.fns[v.fn] = true
}
