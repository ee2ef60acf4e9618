package port

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// planDeviceGroup ports cudaMalloc'd buffers connected by pointer copies:
// the bam::arrays replace them for good. Either all of the group is ported
// or none (a copy between a bam::array and a pointer cannot be written).
func (c *portCtx) planDeviceGroup(hp *hostPlan, g []*hostVar) {
	keys := groupKeys(g)
	elem := ""
	for _, v := range g {
		at, code, why := c.deviceVarProblem(v, &elem)
		if why != "" {
			c.hostDrop(hp, keys, at, code, why)
			return
		}
	}
	plans := make([]deviceVarPlan, len(g))
	for i, v := range g {
		p, at, why := c.planDeviceVar(v, elem)
		if why != "" {
			c.hostDrop(hp, keys, at, CodeHostScope, why)
			return
		}
		plans[i] = p
	}
	hp.placed = append(hp.placed, plans...)
	for _, p := range plans {
		if p.declAt != nil {
			hp.edits = append(hp.edits, c.insertBefore(p.declAt, templates.Render("mode_decl", p.data), HostMemory.String()))
		}
	}
	done := map[int]bool{} // statements shared by two buffers (copies, swaps) are rewritten once
	for _, p := range plans {
		for _, op := range p.v.ops {
			if op.stmt != nil && op.kind != opLaunch {
				if done[op.stmt.Pos()] {
					continue
				}
				done[op.stmt.Pos()] = true
			}
			c.emitDeviceOp(hp, p, op)
		}
		hp.fns[p.v.fn] = true
	}
}

// deviceVarProblem checks one buffer of a device group; elem collects the
// group's element type.
func (c *portCtx) deviceVarProblem(v *hostVar, elem *string) (parse.Node, string, string) {
	if why := c.conflictingLaunch(v); why != "" {
		return v.sym.Decl, CodeHostUse, why
	}
	e := c.elemType(v)
	switch {
	case e == "":
		return v.sym.Decl, CodeNoElemType, noElemMessage(v)
	case *elem != "" && e != *elem:
		return v.sym.Decl, CodeHostUse, fmt.Sprintf("%s (%s *) is copied to or from a buffer of %s", v.sym.Name, e, *elem)
	}
	*elem = e
	alloc := findAllocation(v)
	for _, op := range v.ops {
		if why := c.deviceOpProblem(v, op, alloc); why != "" {
			return op.node, CodeHostUse, why
		}
	}
	if alloc == nil && declCopy(v) == nil && foreignAlloc(v) != nil && c.countOverride(v) == "" {
		f := foreignAlloc(v)
		return f.node, CodeNoCount, fmt.Sprintf(
			"%s is allocated by `%s`, so bamgen cannot tell its element count; give --count %s=EXPR or `count:` under `arrays: - name: %s` in %s, and bamgen adopts the buffer with array_from_device",
			v.sym.Name, oneLine(c.text(f.stmt)), v.sym.Name, keyName(v), ConfigFileName)
	}
	if alloc == nil && declCopy(v) == nil && foreignAlloc(v) == nil {
		return v.sym.Decl, CodeNoCount, fmt.Sprintf(
			"cannot find the allocation of %s in %s, so its element count and contents are unknown; allocate it in %s with cudaMalloc/cudaMallocManaged/cudaHostAlloc, or give --count %s=EXPR and `source:` under `arrays: - name: %s` in %s",
			v.sym.Name, v.fn.Name, v.fn.Name, v.sym.Name, keyName(v), ConfigFileName)
	}
	return nil, "", ""
}

// foreignAlloc returns the single statement where the program's own code
// allocates v (`my_alloc(&d, n)`, `d = my_alloc(n)`), if that is how v
// gets memory.
func foreignAlloc(v *hostVar) *hostOp {
	var found *hostOp
	for i := range v.ops {
		if v.ops[i].kind == opForeign {
			if found != nil {
				return nil
			}
			found = &v.ops[i]
		}
	}
	return found
}

// declCopy returns the op declaring v as a copy of another buffer, if any.
func declCopy(v *hostVar) *hostOp {
	for i := range v.ops {
		if op := &v.ops[i]; op.kind == opCopy && op.node == v.sym.Decl {
			return op
		}
	}
	return nil
}

// deviceVarPlan is one buffer of a device group, ready to emit.
type deviceVarPlan struct {
	v      *hostVar
	alloc  *hostOp // nil for a buffer declared as a copy
	create hostOp  // the statement that declares the bam::array
	merged bool    // creation is the first upload, the cudaMalloc is removed
	// adopted: the program allocates the buffer itself; the array is made
	// from it with array_from_device and the buffer is freed as before.
	adopted bool
	// declAt, when set, is where the bam::array is declared (empty): the
	// statement holding the creation in the block that encloses every use
	// (`float *d; { ... cudaMalloc(&d, ...); ... } k<<<...>>>(d)`, cfd);
	// the creation then assigns it.
	declAt parse.Stmt
	data   templates.Array
	src    Source
}

// creation is the text that creates p's bam::array: a declaration
// (`auto d_bam = ...;`), or an assignment where the array is declared
// before the block that creates it (declAt).
func (p deviceVarPlan) creation(text string) string {
	if p.declAt == nil {
		return text
	}
	return strings.TrimPrefix(text, "auto ")
}

// planDeviceVar picks where v's bam::array is declared and checks that
// the declaration encloses every use.
func (c *portCtx) planDeviceVar(v *hostVar, elem string) (deviceVarPlan, parse.Node, string) {
	p := deviceVarPlan{v: v, alloc: findAllocation(v), src: c.sourceFor(v)}
	p.data = templates.Array{RT: rtName, Bam: bamName(v), Elem: elem}
	if p.alloc != nil {
		p.create, p.merged = c.creationOp(v, p.alloc)
		p.data.Count = c.countFor(v, p.alloc.bytes, elem)
	} else if f := foreignAlloc(v); f != nil {
		p.create, p.adopted = *f, true
		p.data.Count = c.countOverride(v)
	} else {
		p.create = *declCopy(v)
	}
	if p.create.block == nil {
		return p, p.create.node, fmt.Sprintf("the statement that creates %s's bam::array (%s) is not directly in a { } block",
			v.sym.Name, oneLine(c.text(p.create.node)))
	}
	var outside parse.Node
	for _, op := range v.ops {
		before := op.node.Pos() < p.create.node.Pos() && op.kind != opMalloc
		if op.entry != nil && before {
			at := parse.Node(p.create.node)
			if p.create.stmt != nil {
				at = p.create.stmt
			}
			return p, op.node, fmt.Sprintf("%s takes &%s before %s's bam::array is created (at `%s`); declare %s after that statement",
				op.entry.sym.Name, v.sym.Name, v.sym.Name, oneLine(c.text(at)), op.entry.sym.Name)
		}
		if before {
			return p, op.node, fmt.Sprintf("%s is used before its bam::array is created; allocate it before every use", v.sym.Name)
		}
		if outside == nil && op.node.End() > p.create.block.End() {
			outside = op.node
		}
	}
	if outside != nil {
		if p.declAt = c.declarationPoint(v, p.create); p.declAt == nil {
			return p, outside, fmt.Sprintf("%s is used outside the block where its bam::array is created, and no enclosing block of both can declare it "+
				"(the creation is in a loop or a lambda); allocate it where it encloses every use", v.sym.Name)
		}
	}
	return p, nil, ""
}

// declarationPoint returns the statement before which v's bam::array can
// be declared when uses follow the block that creates it: the statement
// holding the creation in the innermost block that encloses every use,
// reached through blocks, ifs and switches only (a creation in a loop or
// a lambda would be assigned again each time, where the original
// allocates anew). nil when there is none.
func (c *portCtx) declarationPoint(v *hostVar, create hostOp) parse.Stmt {
	if create.stmt == nil {
		return nil
	}
	var path []parse.Node
	parse.WithStack(v.fn.Body, func(n parse.Node, parents []parse.Node) bool {
		if path == nil && n == parse.Node(create.stmt) {
			path = append(append([]parse.Node(nil), parents...), n)
		}
		return path == nil
	})
	for i := len(path) - 2; i >= 0; i-- {
		switch b := path[i].(type) {
		case *parse.BlockStmt:
			if c.enclosesOps(b, v) {
				st, _ := path[i+1].(parse.Stmt)
				return st
			}
		case *parse.IfStmt, *parse.SwitchStmt, *parse.LabeledStmt:
		default:
			return nil // a loop, a lambda, a try block: see above
		}
	}
	return nil
}

// enclosesOps reports whether every use of v lies inside b.
func (c *portCtx) enclosesOps(b *parse.BlockStmt, v *hostVar) bool {
	for _, op := range v.ops {
		if op.node.Pos() < b.Pos() || op.node.End() > b.End() {
			return false
		}
	}
	return true
}

// deviceOpProblem says why one use of a cudaMalloc'd buffer cannot be
// rewritten, or "".
func (c *portCtx) deviceOpProblem(v *hostVar, op hostOp, alloc *hostOp) string {
	switch op.kind {
	case opLaunch:
		return ""
	case opForward:
		if _, _, _, why := c.forwardedVars(c.forwarderOf(c.hostCallee(op.call), op.arg)); why != "" {
			return why
		}
		return ""
	case opForeign:
		if alloc != nil || op.stmt == nil || foreignAlloc(v) == nil {
			return fmt.Sprintf("%s is passed to `%s`, which bamgen does not know", v.sym.Name, oneLine(c.text(op.node)))
		}
		return ""
	case opMalloc, opUpload, opDownload, opMemset0, opMemset, opFree, opNull, opCopy, opSwap, opD2D:
		if op.stmt == nil {
			return fmt.Sprintf("%s is used in %s, which is not a statement of its own; bamgen rewrites whole statements",
				v.sym.Name, oneLine(c.text(op.node)))
		}
		if (op.kind == opUpload || op.kind == opMemset0 || op.kind == opMemset || op.offset != nil) && alloc == nil {
			return fmt.Sprintf("%s is filled by `%s` but has no allocation of its own", v.sym.Name, oneLine(c.text(op.stmt)))
		}
		return ""
	case opManaged, opPinned, opDevPtr:
		for _, o := range v.ops {
			if (o.kind == opCopy || o.kind == opSwap) && o.stmt != nil {
				return fmt.Sprintf("%s is allocated more than once and is also reassigned from or to another pointer (`%s`); bamgen ports a buffer allocated once per memory mode only when it is not reassigned (re-allocating it is not followed)",
					v.sym.Name, oneLine(c.text(o.stmt)))
			}
		}
		return fmt.Sprintf("%s is allocated twice", v.sym.Name)
	case opNone, opOther: // the message below
	}
	at := op.node
	if op.where != nil {
		at = op.where
	}
	return fmt.Sprintf("%s is used in `%s`; bamgen rewrites only cudaMalloc, cudaMemcpy to or from host, cudaMemset, cudaFree, pointer copies between ported buffers and launches of ported kernels",
		v.sym.Name, oneLine(c.text(at)))
}

// creationOp picks the statement that declares the bam::array: the first
// upload when it directly follows the allocation in the same block with the
// same size (so no zero-filled array is made only to be replaced), else the
// allocation itself.
func (c *portCtx) creationOp(v *hostVar, alloc *hostOp) (hostOp, bool) {
	var next *hostOp
	for i := range v.ops {
		op := &v.ops[i]
		if op.node.Pos() > alloc.node.Pos() && (next == nil || op.node.Pos() < next.node.Pos()) {
			next = op
		}
	}
	fills := next != nil && (next.kind == opUpload || next.kind == opMemset0 || next.kind == opMemset)
	if fills && next.block != nil && next.block == alloc.block && next.offset == nil &&
		c.sameCount(next.bytes, alloc.bytes, c.elemType(v)) && c.sourceFor(v).Kind == "host" {
		return *next, true
	}
	return *alloc, false
}

// emitMergedCreation declares the array at its first whole-buffer fill,
// with that fill's contents (so no array is made only to be replaced).
func (c *portCtx) emitMergedCreation(hp *hostPlan, p deviceVarPlan, op hostOp) {
	d := p.data
	switch op.kind {
	case opUpload:
		d.Src = c.hostPointerText(op.other, d.Elem, false)
		c.replaceStmt(hp, HostMemory, op.stmt, p.creation(templates.Render("from_host", d)))
	case opMemset0:
		c.replaceStmt(hp, HostMemory, op.stmt, p.creation(templates.Render("zeros", d)))
	case opMemset:
		f := templates.Fill{Array: d, Bytes: oneLine(c.text(op.bytes)), Value: oneLine(c.text(op.other))}
		c.replaceStmt(hp, HostMemory, op.stmt, p.creation(templates.Render("fill_create", f)))
	case opNone, opMalloc, opManaged, opPinned, opDownload, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr, opOther:
		// not a whole-buffer fill: never the merged creation (creationOp)
	}
}

// emitDeviceOp rewrites one use of a cudaMalloc'd buffer.
func (c *portCtx) emitDeviceOp(hp *hostPlan, p deviceVarPlan, op hostOp) {
	v, data := p.v, p.data
	if p.merged && op.node == p.create.node {
		c.emitMergedCreation(hp, p, op)
		return
	}
	if c.isPartial(p, op) {
		c.emitPatch(hp, p, op)
		return
	}
	switch op.kind {
	case opForeign:
		d := data
		d.Src = v.sym.Name
		hp.edits = append(hp.edits, c.insertAfter(op.stmt, nil, p.creation(templates.Render("from_device", d)), false, HostMemory.String())...)
	case opFree:
		if p.adopted { // release the array, then the program's own buffer as before
			if _, _, own := c.lineBefore(op.stmt.Pos()); own && op.block != nil {
				hp.edits = append(hp.edits, c.insertBefore(op.stmt, templates.Render("free", data), HostMemory.String()))
				return
			}
			hp.edits = append(hp.edits,
				edit.Edit{Start: op.stmt.Pos(), End: op.stmt.Pos(), New: "{ " + templates.Render("free", data) + " ", Rewrite: HostMemory.String()},
				edit.Edit{Start: op.stmt.End(), End: op.stmt.End(), New: " }", Rewrite: HostMemory.String()})
			return
		}
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("free", data))
	case opMalloc:
		c.replaceStmt(hp, HostMemory, op.stmt, p.creation(creationText(v, p.merged, data, p.src)))
	case opUpload:
		d := data
		d.Src = c.hostPointerText(op.other, d.Elem, false)
		switch {
		case p.src.Kind != "host":
			c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("removed", templates.Note{Note: "contents of " + bamName(v) + " come from " + p.src.Kind}))
		default:
			c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("reupload", d))
		}
	case opDownload:
		d := data
		d.Src = c.hostPointerText(op.other, d.Elem, true)
		d.Count = c.countFromBytes(op.bytes, data.Elem)
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("copy_out", d))
	case opMemset0:
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("rezero", data))
	case opMemset:
		d := templates.Fill{Array: data, Bytes: oneLine(c.text(op.bytes)), Value: oneLine(c.text(op.other))}
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("refill", d))
	case opNull:
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("removed", templates.Note{Note: oneLine(c.text(op.stmt))}))
	case opCopy:
		d := templates.Copy{Dst: op.dst.Name + "_bam", Src: op.src.Name + "_bam", Decl: op.node == parse.Node(op.dst.Decl)}
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("copy", d))
	case opSwap:
		d := templates.Copy{Dst: op.dst.Name + "_bam", Src: op.src.Name + "_bam"}
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("swap", d))
	case opD2D:
		dst, dOff := c.rangeOf(op.call.Args[0])
		src, sOff := c.rangeOf(op.call.Args[1])
		d := templates.D2D{RT: rtName, Dst: oneLine(c.text(dst)) + "_bam", DstFirst: dOff, Src: oneLine(c.text(src)) + "_bam", SrcFirst: sOff, Bytes: oneLine(c.text(op.bytes))}
		c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("copy_bytes", d))
	case opLaunch:
		emitLaunchArg(hp, op, bamName(v), data.Elem)
	case opForward:
		arg := op.call.Args[op.arg]
		text := bamName(v)
		if deducesConst(c.hostCallee(op.call), op.arg, op.call) {
			text = "bam::array<const " + data.Elem + ">(" + text + ")"
		}
		hp.edits = append(hp.edits, edit.Edit{Start: arg.Pos(), End: arg.End(), New: text, Rewrite: Launches.String()})
		c.addForwarder(hp, c.forwarderOf(c.hostCallee(op.call), op.arg))
	case opNone, opManaged, opPinned, opDevPtr, opOther:
		// refused before any edit (deviceOpProblem)
	}
}

// creationText renders the statement that declares the bam::array at the
// allocation.
func creationText(v *hostVar, merged bool, data templates.Array, src Source) string {
	switch {
	case merged:
		return templates.Render("removed", templates.Note{Note: v.sym.Name + " is now bam::array " + bamName(v) + ", made below"})
	case src.Kind == "file":
		data.Path, data.Offset = src.Path, src.Offset
		return templates.Render("from_file", data)
	}
	return templates.Render("zeros", data)
}

// emitLaunchArg passes the bam::array instead of the pointer. A template
// kernel launched without explicit template arguments cannot deduce T in
// bam::array<const T> from bam::array<float>, so then the argument is
// converted explicitly.
//
// An argument array entry `&v` becomes `&v_bam` (the name only), once
// however many launches pass the array. cudaLaunchKernelEx converts its
// arguments to the kernel's parameter types itself.
func emitLaunchArg(hp *hostPlan, op hostOp, bam, elem string) {
	if op.entry != nil {
		if op.launch == op.entry.sites[0] {
			hp.edits = append(hp.edits, edit.Edit{Start: op.node.Pos(), End: op.node.End(), New: bam, Rewrite: Launches.String()})
		}
		return
	}
	arg := op.launch.args[op.arg]
	text := bam
	k := op.launch.kernel
	if k != nil && k.Template != nil && op.arg < len(k.Params) && k.Params[op.arg].Type.Const && op.launch.expr != nil {
		if _, explicit := op.launch.expr.Kernel.(*parse.TemplateIdent); !explicit {
			text = "bam::array<const " + elem + ">(" + bam + ")"
		}
	}
	hp.edits = append(hp.edits, edit.Edit{Start: arg.Pos(), End: arg.End(), New: text, Rewrite: Launches.String()})
}

// planWrapVar ports host-visible memory by wrapping each launch, or, for a
// read-only array launched in a loop that does nothing else with the
// buffer, by making the array once around the loop (see hoist.go).
//
// src names the host buffer the array is made from and copied back to: v
// itself, or for a device view (`cudaHostGetDevicePointer(&v, h, 0)`) h,
// whose allocation alloc then is.
func (c *portCtx) planWrapVar(hp *hostPlan, v *hostVar, elem string, alloc *hostOp, src string, wraps map[*launchSite][]templates.Array, hoists hoistLoops) {
	count := c.wrapCount(v, alloc, elem)
	for _, op := range v.ops {
		if op.kind == opForward {
			c.hostDrop(hp, v.keys, op.call, CodeHostUse, fmt.Sprintf(
				"%s is host-visible memory passed to %s; bamgen makes such a buffer's bam::array around each launch, so the launch must be in the function that holds the buffer",
				v.sym.Name, parse.ShortFuncName(op.call.Fun)))
			return
		}
		if op.kind != opLaunch {
			continue
		}
		if op.entry != nil {
			c.hostDrop(hp, v.keys, op.node, CodeArgsWrapped, wrapEntryMessage(v, op))
			return
		}
		if _, ok := launchStmt(op.launch); !ok {
			c.hostDrop(hp, v.keys, op.launch.node(), CodeHostScope, fmt.Sprintf(
				"the launch passing %s is not a statement of its own, so bamgen cannot wrap it", v.sym.Name))
			return
		}
	}
	readOnly := true
	for _, k := range v.keys {
		readOnly = readOnly && k.fn.Params[k.idx].Type.Const
	}
	for _, op := range v.ops {
		if op.kind != opLaunch {
			continue
		}
		a := templates.Array{RT: rtName, Bam: bamName(v), Elem: elem, Src: src, Count: count, ReadOnly: readOnly}
		if loop := c.hoistLoop(v, op.launch, count); readOnly && loop != nil {
			hoists.add(loop, a)
		} else {
			wraps[op.launch] = append(wraps[op.launch], a)
		}
		emitLaunchArg(hp, op, bamName(v), elem)
	}
	hp.fns[v.fn] = true
}

// wrapCount is the element count of a host-visible buffer's array: from
// the allocation's byte size, or for `new T[n]` n itself (--count and the
// config override both).
func (c *portCtx) wrapCount(v *hostVar, alloc *hostOp, elem string) string {
	count := c.countFor(v, alloc.bytes, elem)
	if alloc.other != nil { // new T[n]: the count itself
		count = oneLine(c.text(alloc.other))
		if e := c.countOverride(v); e != "" {
			count = e
		}
	}
	return count
}

// launchStmt returns the expression statement that is exactly the launch.
func launchStmt(l *launchSite) (*parse.ExprStmt, bool) {
	if l.api != nil {
		return apiLaunchStmt(l)
	}
	if len(l.parents) == 0 {
		return nil, false
	}
	s, ok := l.parents[len(l.parents)-1].(*parse.ExprStmt)
	return s, ok && s.X == parse.Expr(l.expr)
}

// emitWraps puts the array creation before and the copy-back after each
// wrapped launch, all on the launch's own lines.
func (c *portCtx) emitWraps(hp *hostPlan, wraps map[*launchSite][]templates.Array) {
	for _, l := range c.launches() {
		arrays := wraps[l]
		if len(arrays) == 0 {
			continue
		}
		s, _ := launchStmt(l)
		w := templates.Wrap{Arrays: arrays}
		hp.edits = append(hp.edits,
			edit.Edit{Start: s.Pos(), End: s.Pos(), New: templates.Render("wrap_begin", w), Rewrite: HostMemory.String()},
			edit.Edit{Start: s.End(), End: s.End(), New: templates.Render("wrap_end", w), Rewrite: HostMemory.String()})
	}
}

// runtimeEdits adds the include (whenever a kernel or helper takes a
// bam::array, also in a file with no host edit) and the runtime variable to
// every host function that uses it, and the statistics print in main.
func (c *portCtx) runtimeEdits(hp *hostPlan) []edit.Edit {
	// A file ported before (another array chosen now) already has the
	// include, the runtime variable and the statistics: never twice.
	var edits []edit.Edit
	if len(hp.fns) == 0 && len(c.inPlace()) == 0 {
		return nil
	}
	if !c.hasDirective("bam/bam.cuh") {
		if e, ok := c.includeEdit(len(hp.fns) == 0); ok {
			edits = append(edits, e)
		}
	}
	if len(hp.fns) == 0 { // kernels only (a kernel file, a header): the include is all
		return edits
	}
	// The statistics guard first: it is destroyed last, after every array.
	if e, ok := c.statsEdit(); ok && !strings.Contains(string(c.src), "print_stats(stderr)") && !strings.Contains(string(c.src), "bam::stats_at_exit") {
		edits = append(edits, e)
	}
	for _, fn := range c.funcs {
		if hp.fns[fn] && fn.Body != nil && !strings.Contains(c.text(fn.Body), "bam::runtime& "+rtName+" =") {
			edits = append(edits, c.insertAtTop(fn.Body, templates.Render("runtime_setup", templates.Runtime{RT: rtName}), Runtime.String()))
		}
	}
	return edits
}

// statsEdit declares a bam::stats_at_exit at the top of main: it prints
// the runtime statistics (when BAM_STATS=1) on every return path. A main
// with parse errors is not edited.
func (c *portCtx) statsEdit() (edit.Edit, bool) {
	for _, fn := range c.funcs {
		if fn.Name != "main" || fn.Body == nil || fn.Qualifier != "" {
			continue
		}
		if _, bad := c.unparsedFn(fn); bad {
			return edit.Edit{}, false
		}
		return c.insertAtTop(fn.Body, templates.Render("stats", nil), Runtime.String()), true
	}
	return edit.Edit{}, false
}

// sameCount reports whether two byte-size expressions give the same element
// count as written (`n * sizeof(T)` and `sizeof(T) * n` agree; `bytes` and
// `n * sizeof(T)` cannot be proved equal and do not).
func (c *source) sameCount(a, b parse.Expr, elem string) bool {
	return c.countFromBytes(a, elem) == c.countFromBytes(b, elem)
}

// isPartial reports whether a copy or fill covers only part of the buffer
// (at an offset, or fewer bytes than allocated as far as bamgen can tell).
func (c *portCtx) isPartial(p deviceVarPlan, op hostOp) bool {
	switch op.kind {
	case opUpload, opMemset0, opMemset:
		return op.offset != nil || p.alloc == nil || !c.sameCount(op.bytes, p.alloc.bytes, p.data.Elem)
	case opDownload:
		return op.offset != nil
	case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr, opOther:
	}
	return false
}

// emitPatch rewrites a partial copy or fill as one runtime call that reads
// or writes the range in place: `cudaMemcpy(&p[i], &x, sz, H2D)` becomes
// `bam_rt.write_bytes(p_bam, i, &x, sz)` (element offset, byte count, as
// the original wrote them).
func (c *portCtx) emitPatch(hp *hostPlan, p deviceVarPlan, op hostOp) {
	d := templates.Patch{Array: p.data, Offset: "0", Bytes: oneLine(c.text(op.bytes))}
	if op.offset != nil {
		d.Offset = op.offsetText
	}
	switch op.kind {
	case opUpload:
		d.Op, d.Src = "memcpy", oneLine(c.text(op.other))
	case opMemset0, opMemset:
		d.Op, d.Src = "memset", oneLine(c.text(op.other))
	case opDownload:
		d.Op, d.Src = "copy_out", oneLine(c.text(op.other))
	case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr, opOther:
		// isPartial holds only for copies and fills
	}
	c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("patch", d))
}

// hasDirective reports whether a preprocessor line mentions text.
func (c *source) hasDirective(text string) bool {
	for _, t := range c.file.Tokens {
		if t.Kind == parse.Directive && strings.Contains(string(c.src[t.Start:t.End]), text) {
			return true
		}
	}
	return false
}
