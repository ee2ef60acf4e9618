package port

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// The host side: every launch of a ported kernel must pass a bam::array,
// so the buffer behind each such argument is traced to its allocation and
// the allocation/copy idioms around it are rewritten to runtime calls.
//
// Two strategies, picked by how the buffer was allocated:
//   - device: cudaMalloc'd memory only the GPU sees. The bam::array replaces
//     the buffer for good: cudaMalloc+cudaMemcpy(H2D) -> array_from_host (or
//     array_zeros), cudaMemcpy(D2H) -> copy_to_host, cudaMemset(0) ->
//     array_zeros, cudaFree -> free. Any other use of the buffer refuses it.
//   - wrap: host-visible memory (cudaMallocManaged, cudaHostAlloc,
//     cudaMallocHost, malloc, new[]) stays the data's home; each launch is
//     wrapped: array_from_host before, copy_to_host (unless read-only) and
//     free after. Host code keeps using the pointer unchanged.

// rtName is the runtime variable inserted into each host function.
const rtName = "bam_rt"

// launchSite is one launch in some function body: `kernel<<<...>>>(args)`
// or a runtime API call (cudaLaunchKernel and friends, see apilaunch.go).
type launchSite struct {
	expr    *parse.LaunchExpr // nil for a runtime API launch
	fn      *parse.FuncDecl   // the enclosing function
	kernel  *parse.FuncDecl
	parents []parse.Node
	// args holds the argument for each kernel parameter: the launch's own
	// arguments (<<<>>>, cudaLaunchKernelEx), or for the void** forms the
	// entries of the local argument array (`&d_a`), when it can be rewritten.
	args []parse.Expr
	api  *apiSite // nil for <<<>>>
}

// node is the launch expression: the <<<>>> launch or the API call.
func (l *launchSite) node() parse.Node {
	if l.api != nil {
		return l.api.call
	}
	return l.expr
}

// kernelExpr is the kernel as the launch names it (for messages).
func (l *launchSite) kernelName() string {
	if l.api != nil {
		return l.api.launch.Kernel
	}
	return parse.ShortFuncName(l.expr.Kernel)
}

// hostOp is one use of a host buffer variable.
type hostOp struct {
	kind   hostOpKind
	node   parse.Node
	call   *parse.CallExpr
	stmt   parse.Stmt       // the statement that holds it (nil if none)
	block  *parse.BlockStmt // stmt's parent when it is a block
	launch *launchSite
	arg    int        // launch argument index
	entry  *argsArray // the launch reads v through this argument array's &v entry
	bytes  parse.Expr // size argument of allocations and copies
	other  parse.Expr // the host pointer of a copy; the fill value of a memset
	offset parse.Expr // element offset of a copy or memset at `d + offset`
	// offsetText is the whole offset as written (`n - 4` in `d + n - 4`).
	offsetText string
	where      parse.Stmt // innermost statement around the use (for messages)
	// Pointer copies between buffer variables (`a = b`, `T *t = a`,
	// std::swap(a, b)): the buffers then form one group, ported together.
	dst, src *parse.Symbol
}

// hostVar is a host variable passed to ported kernel parameters, or
// copied to or from one.
type hostVar struct {
	fn    *parse.FuncDecl
	sym   *parse.Symbol
	keys  []paramKey // ported parameters it feeds
	ops   []hostOp
	group *hostVar // union-find parent: buffers connected by pointer copies
}

// root returns the representative of v's copy group.
func (v *hostVar) root() *hostVar {
	for v.group != nil && v.group != v {
		v = v.group
	}
	return v
}

// hostPlan is the host side's result: edits, and parameters to drop.
type hostPlan struct {
	drops []drop
	edits []edit.Edit
	notes []diag.Diagnostic        // what was done (per-mode allocations, modes.go)
	fns   map[*parse.FuncDecl]bool // host functions that now use bam_rt
	// placed lists the buffers made into arrays for good (not wrapped
	// around a launch), for the placement plan (placeplan.go).
	placed []deviceVarPlan
	// fwds are the forwarding host functions' parameters (forward.go) that
	// launch arguments were traced through, in the order first reached.
	fwds    []*forwarder
	fwdSeen map[*forwarder]bool
}

// hostVarOf returns the local variable passed as launch argument idx, or nil.
func (c *portCtx) hostVarOf(l *launchSite, idx int) *hostVar {
	id := argIdent(l, idx)
	if id == nil {
		return nil
	}
	sym := l.fn.Scope.Lookup(id.Name, id.Pos())
	if sym == nil || sym.Param {
		return nil
	}
	return c.hostVarFor(l.fn, sym)
}

// hostVarFor returns the (cached, per planning round) buffer variable.
func (c *portCtx) hostVarFor(fn *parse.FuncDecl, sym *parse.Symbol) *hostVar {
	if v := c.hostVars[sym]; v != nil {
		return v
	}
	v := &hostVar{fn: fn, sym: sym}
	c.hostVars[sym] = v
	// The uses of a variable do not depend on the plan: classify them once
	// per file, not once per planning round.
	ops, ok := c.opsCache[sym]
	if !ok {
		ops = c.hostOps(v)
		c.opsCache[sym] = ops
	}
	v.ops = ops
	return v
}

// planHost checks every launch of a ported kernel and plans the host edits.
func (c *portCtx) planHost() *hostPlan {
	hp := &hostPlan{fns: map[*parse.FuncDecl]bool{}, fwdSeen: map[*forwarder]bool{}}
	c.hostVars = map[*parse.Symbol]*hostVar{}
	var vars []*hostVar
	seen := map[*hostVar]bool{}
	for _, k := range c.kernels() {
		for _, idx := range c.ported[k] {
			key := paramKey{k, idx}
			for _, v := range c.launchVars(hp, key) {
				if !seen[v] {
					seen[v] = true
					vars = append(vars, v)
				}
				v.keys = appendKey(v.keys, key)
			}
		}
	}
	vars = c.addCopyPartners(vars)
	sort.SliceStable(vars, func(i, j int) bool { return vars[i].sym.Decl.Pos() < vars[j].sym.Decl.Pos() })
	wraps := map[*launchSite][]templates.Array{}
	hoists := hoistLoops{}
	groups := map[*hostVar][]*hostVar{}
	// A host-visible buffer is wrapped around its launches and keeps its
	// pointer, so it cannot be passed to a forwarding function whose
	// parameter becomes a bam::array: nor can any buffer passed there with
	// it (one parameter type).
	mixed := map[*hostVar]*hostVar{}
	mixedAt := map[*hostVar]*parse.CallExpr{}
	for _, v := range vars {
		if isModeAllocated(v.root()) || !c.isHostVisible(v) {
			continue
		}
		for _, op := range v.ops {
			if op.kind == opForward && mixed[v.root()] == nil {
				mixed[v.root()], mixedAt[v.root()] = v, op.call
			}
		}
	}
	for root, hv := range mixed {
		var keys []paramKey
		for _, v := range vars {
			if v.root() == root {
				for _, k := range v.keys {
					keys = appendKey(keys, k)
				}
			}
		}
		call := mixedAt[root]
		c.hostDrop(hp, keys, call, CodeHostUse, fmt.Sprintf(
			"%s is host-visible memory passed to %s; bamgen makes such a buffer's bam::array around each launch, so the launch must be in the function that holds the buffer (and the buffers passed to %s with it stay pointers too)",
			hv.sym.Name, parse.ShortFuncName(call.Fun), parse.ShortFuncName(call.Fun)))
	}
	modeGroups := map[*hostVar][]*hostVar{} // a per-mode buffer with the temporaries it is re-allocated through (realloc.go)
	for _, v := range vars {
		if isModeAllocated(v.root()) {
			modeGroups[v.root()] = append(modeGroups[v.root()], v)
		}
	}
	for _, v := range vars {
		if mixed[v.root()] != nil {
			continue
		}
		if g := modeGroups[v.root()]; g != nil {
			if v.root() == v {
				c.planModes(hp, v, groupKeys(g))
			}
			continue
		}
		if c.isHostVisible(v) {
			c.planWrapped(hp, v, wraps, hoists)
		} else {
			groups[v.root()] = append(groups[v.root()], v)
		}
	}
	for _, v := range vars {
		if g := groups[v]; g != nil {
			c.planDeviceGroup(hp, g)
		}
	}
	c.emitPlacementPlans(hp)
	c.emitWraps(hp, wraps)
	emitHoists(hp, hoists)
	c.emitForwarders(hp)
	c.emitLaunchChecks(hp, wraps)
	c.emitSyncChecks(hp)
	return hp
}

// addCopyPartners adds the variables that buffers are copied to or from
// (ping-pong buffers, temporaries of a swap) and joins them into groups.
func (c *portCtx) addCopyPartners(vars []*hostVar) []*hostVar {
	in := map[*hostVar]bool{}
	for _, v := range vars {
		in[v] = true
		v.group = v
	}
	for i := 0; i < len(vars); i++ {
		v := vars[i]
		for _, op := range v.ops {
			if op.kind == opForward {
				// Every buffer passed to one forwarding function is ported
				// with the others or not at all: its parameter has one type.
				vs, _, _, _ := c.forwardedVars(c.forwarderOf(c.hostCallee(op.call), op.arg))
				for _, w := range vs {
					if !in[w] {
						in[w] = true
						w.group = w
						vars = append(vars, w)
					}
					w.root().group = v.root()
				}
				continue
			}
			for _, sym := range []*parse.Symbol{op.dst, op.src} {
				if sym == nil || sym == v.sym {
					continue
				}
				w := c.hostVarFor(v.fn, sym)
				if !in[w] {
					in[w] = true
					w.group = w
					vars = append(vars, w)
				}
				w.root().group = v.root()
			}
		}
	}
	return vars
}

// isHostVisible reports whether v's memory is host-accessible (managed,
// pinned, malloc'd): such buffers are wrapped around each launch.
func (c *portCtx) isHostVisible(v *hostVar) bool {
	a := findAllocation(v)
	return a != nil && a.kind != opMalloc
}

// planWrapped plans a host-visible buffer.
func (c *portCtx) planWrapped(hp *hostPlan, v *hostVar, wraps map[*launchSite][]templates.Array, hoists hoistLoops) {
	if why := c.conflictingLaunch(v); why != "" {
		c.hostDrop(hp, v.keys, v.sym.Decl, CodeHostUse, why)
		return
	}
	elem := c.elemType(v)
	if elem == "" {
		c.hostDrop(hp, v.keys, v.sym.Decl, CodeNoElemType, noElemMessage(v))
		return
	}
	own := findAllocation(v)
	alloc, src, owner := own, v.sym.Name, v
	if alloc.kind == opDevPtr {
		h, at, why := c.devPtrSource(v, alloc)
		if why != "" {
			c.hostDrop(hp, v.keys, at, CodeHostUse, why)
			return
		}
		alloc, src, owner = findAllocation(h), h.sym.Name, h
	}
	if p, ok := c.planWrapOnce(v, own, owner); ok {
		count := c.wrapCount(v, alloc, elem)
		readOnly := true
		for _, k := range v.keys {
			readOnly = readOnly && k.fn.Params[k.idx].Type.Const
		}
		if stage := c.planStage(v, owner, p, count); readOnly && stage != nil {
			c.emitStage(hp, v, p, stage, elem, src, count)
			return
		}
		c.emitWrapOnce(hp, v, p, elem, count)
		return
	}
	c.planWrapVar(hp, v, elem, alloc, src, wraps, hoists)
}

// reassigns reports whether op points h somewhere else: a pointer copy or
// swap, an assignment from a call (`h = my_alloc(n)`), or any other `h = x`.
func (c *portCtx) reassigns(h *hostVar, op hostOp) bool {
	switch op.kind {
	case opCopy, opSwap, opForeign:
		return true
	case opOther:
		id, ok := op.node.(*parse.Ident)
		if !ok {
			return false
		}
		cur := parse.Node(id)
		p := c.parentOfNode(h.fn, cur)
		for {
			if _, paren := p.(*parse.ParenExpr); !paren {
				break
			}
			cur, p = p, c.parentOfNode(h.fn, p)
		}
		b, ok := p.(*parse.BinaryExpr)
		return ok && b.X == cur && strings.HasSuffix(b.Op, "=") && b.Op != "==" && b.Op != "!=" && b.Op != "<=" && b.Op != ">="
	case opNone, opMalloc, opManaged, opPinned, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opD2D, opForward, opDevPtr:
	}
	return false
}

// devPtrSource returns the host buffer h behind `cudaHostGetDevicePointer(&v, h, 0)`
// when h is a local variable with one host-visible allocation (cudaHostAlloc,
// cudaMallocHost, cudaMallocManaged) in the same function: v's array is then
// made from h, with h's element count. Otherwise it says why not.
func (c *portCtx) devPtrSource(v *hostVar, op *hostOp) (*hostVar, parse.Node, string) {
	sym := symbolOf(v.fn, parse.UnparenCasts(op.other))
	if sym == nil {
		return nil, op.node, fmt.Sprintf("%s is the device view of `%s` (cudaHostGetDevicePointer), which is not a local variable of %s, so bamgen cannot find its allocation; pass a local pointer variable",
			v.sym.Name, oneLine(c.text(op.other)), v.fn.Name)
	}
	h := c.hostVarFor(v.fn, sym)
	a := findAllocation(h)
	if a == nil || (a.kind != opManaged && a.kind != opPinned) || a.bytes == nil {
		return nil, op.node, fmt.Sprintf("%s is the device view of %s (cudaHostGetDevicePointer), but %s has no single cudaHostAlloc/cudaMallocHost/cudaMallocManaged allocation in %s, so its element count is unknown",
			v.sym.Name, sym.Name, sym.Name, v.fn.Name)
	}
	for _, o := range h.ops {
		if c.reassigns(h, o) {
			where := o.node
			if o.where != nil {
				where = o.where
			}
			return nil, o.node, fmt.Sprintf("%s is the device view of %s, which is also assigned in `%s`, so bamgen cannot tell which buffer (and how many elements) the view covers",
				v.sym.Name, sym.Name, oneLine(c.text(where)))
		}
	}
	if c.elemType(h) != "" && c.elemType(h) != c.elemType(v) {
		return nil, op.node, fmt.Sprintf("%s (%s *) is the device view of %s, a buffer of %s", v.sym.Name, c.elemType(v), sym.Name, c.elemType(h))
	}
	return h, nil, ""
}

func noElemMessage(v *hostVar) string {
	return fmt.Sprintf("cannot tell the element type of %s (declared %q); declare it as T *%s", v.sym.Name, typeText(v.sym.Type), v.sym.Name)
}

// groupKeys collects the ported parameters fed by any buffer of a group.
func groupKeys(g []*hostVar) []paramKey {
	var keys []paramKey
	for _, v := range g {
		for _, k := range v.keys {
			keys = appendKey(keys, k)
		}
	}
	return keys
}

func appendKey(keys []paramKey, k paramKey) []paramKey {
	for _, e := range keys {
		if e == k {
			return keys
		}
	}
	return append(keys, k)
}

// launchVars returns the host variables passed to key at its launches, and
// drops key when a launch cannot be traced.
func (c *portCtx) launchVars(hp *hostPlan, key paramKey) []*hostVar {
	var out []*hostVar
	name := key.fn.Params[key.idx].Name
	if c.unparsedLaunchDrops(hp, key) {
		return nil
	}
	for _, l := range c.launchesOf(key.fn) {
		why := ""
		switch {
		case l.fn.IsDevice():
			why = fmt.Sprintf("%s is launched from device code (%s); bamgen ports host launches only", key.fn.Name, l.fn.Name)
		case l.api != nil && l.api.why != "":
			c.hostDrop(hp, []paramKey{key}, l.node(), CodeArgsArray, l.api.why)
			continue
		case key.idx >= len(l.args):
			why = fmt.Sprintf("this launch of %s passes no argument for %s", key.fn.Name, name)
		}
		if why == "" {
			if v := c.hostVarOf(l, key.idx); v != nil {
				out = append(out, v)
				continue
			}
			if l.api != nil && l.api.array != nil {
				c.hostDrop(hp, []paramKey{key}, l.args[key.idx], CodeArgsEntry, c.entryMessage(l, key))
				continue
			}
			if f := c.forwarderOfArg(l, key.idx); f != nil {
				if f.why != "" {
					c.hostDrop(hp, []paramKey{key}, l.node(), CodeHostArgument, fmt.Sprintf(
						"the argument for %s:%s (%s) is a parameter of %s, which cannot take a bam::array: %s",
						key.fn.Name, name, oneLine(c.text(l.args[key.idx])), l.fn.Name, f.why))
					continue
				}
				vars, chain, at, why := c.forwardedVars(f)
				if why != "" {
					c.hostDrop(hp, []paramKey{key}, at, CodeHostArgument, why)
					continue
				}
				for _, g := range chain {
					c.addForwarder(hp, g)
				}
				out = append(out, vars...)
				continue
			}
			why = fmt.Sprintf("the argument for %s:%s (%s) is not a local variable of %s, so bamgen cannot find its allocation; pass a local pointer variable",
				key.fn.Name, name, oneLine(c.text(l.args[key.idx])), l.fn.Name)
		}
		c.hostDrop(hp, []paramKey{key}, l.node(), CodeHostArgument, why)
	}
	for _, ref := range c.kernelRefs(key.fn) {
		c.hostDrop(hp, []paramKey{key}, ref, CodeKernelRef,
			fmt.Sprintf("%s is passed to %s, which bamgen cannot read as a launch of %s; name the kernel directly in the call (`(void*)%s`) or launch it with <<<>>>",
				key.fn.Name, parse.ShortFuncName(ref.Fun), key.fn.Name, key.fn.Name))
	}
	return out
}

// kernelRefs finds calls like cudaLaunchKernel(k, ...) that launch the
// kernel with arguments bamgen cannot see: those not recognised as a
// launch of k (a kernel chosen at run time, an overloaded name).
func (c *portCtx) kernelRefs(k *parse.FuncDecl) []*parse.CallExpr {
	var out []*parse.CallExpr
	for _, call := range c.launchAPICalls() {
		if site := c.siteOf(call); site != nil && site.kernel == k {
			continue
		}
		for _, a := range call.Args {
			if mentions(c.text(a), k.Name) {
				out = append(out, call)
				break
			}
		}
	}
	return out
}

func (c *portCtx) hostDrop(hp *hostPlan, keys []paramKey, at parse.Node, code, why string) {
	for _, k := range keys {
		hp.drops = append(hp.drops, drop{k, why})
	}
	c.addDiagOnce(diagAt(at, code, why+"; the kernel parameter stays a plain pointer"))
}

// hostOps classifies every use of v in its function.
func (c *portCtx) hostOps(v *hostVar) []hostOp {
	var ops []hostOp
	if vd, ok := v.sym.Decl.(*parse.VarDecl); ok && vd.Init != nil {
		if src := symbolOf(v.fn, vd.Init); src != nil {
			ops = append(ops, copyDeclOp(v, vd, src))
		} else if op := declInitOp(vd); op.kind != opNone {
			ops = append(ops, op)
		}
	}
	parse.WithStack(v.fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if !ok || id.Name != v.sym.Name || v.fn.Scope.Lookup(id.Name, id.Pos()) != v.sym {
			return true
		}
		if vd, ok := parentOf(parents).(*parse.VarDecl); ok {
			if vd == v.sym.Decl {
				return true
			}
			if dst := v.fn.Scope.Lookup(vd.Name, vd.NameSpan.Stop); dst != nil && dst.Decl == vd && parse.Unparen(vd.Init) == parse.Expr(id) {
				ops = append(ops, copyDeclOp(v, vd, v.sym))
				ops[len(ops)-1].dst = dst
				return true
			}
		}
		if inSizeof(parents) { // `n * sizeof *d`: not evaluated, the pointer is not used
			return true
		}
		if ifs, blk, onCond, ok := guardedFree(v.fn, v.sym, id, parents); ok {
			// `if (d) { cudaFree(d); d = 0; }` is one free: its other uses of
			// d go with the statement.
			if onCond {
				ops = append(ops, hostOp{kind: opFree, node: ifs, stmt: ifs, block: blk, where: ifs})
			}
			return true
		}
		op := c.classifyHostUse(v.fn, id, parents)
		op.where = innermostStmt(parents)
		ops = append(ops, expandEntry(op)...)
		return true
	})
	return ops
}

// inSizeof reports whether the innermost expression around a use, below
// any statement, is the operand of sizeof/alignof.
func inSizeof(parents []parse.Node) bool {
	for i := len(parents) - 1; i >= 0; i-- {
		switch parents[i].(type) {
		case *parse.SizeofExpr:
			return true
		case parse.Stmt, *parse.LambdaExpr:
			return false
		}
	}
	return false
}

func parentOf(parents []parse.Node) parse.Node {
	p, _ := upParens(parents, len(parents)-1)
	return p
}

// declInitOp classifies `T *p = (T*)malloc(bytes)`, `= new T[n]`, `= nullptr`.
func declInitOp(vd *parse.VarDecl) hostOp {
	init := parse.UnparenCasts(vd.Init)
	switch x := init.(type) {
	case *parse.CallExpr:
		if name := parse.ShortFuncName(x.Fun); (name == "malloc" || name == "aligned_alloc") && len(x.Args) > 0 {
			return hostOp{kind: opPinned, node: vd, bytes: x.Args[len(x.Args)-1]}
		}
	case *parse.NewExpr:
		if x.Count != nil {
			return hostOp{kind: opPinned, node: vd, bytes: x.Count, other: x.Count}
		}
	}
	if isNullLiteral(init) {
		return hostOp{}
	}
	return hostOp{kind: opOther, node: vd}
}

// symbolOf resolves an identifier expression to a local variable of fn.
func symbolOf(fn *parse.FuncDecl, e parse.Expr) *parse.Symbol {
	id, ok := parse.Unparen(e).(*parse.Ident)
	if !ok {
		return nil
	}
	sym := fn.Scope.Lookup(id.Name, id.Pos())
	if sym == nil || sym.Param {
		return nil
	}
	if _, isVar := sym.Decl.(*parse.VarDecl); !isVar {
		return nil
	}
	return sym
}

// rangeOf splits a copy's pointer argument into the buffer and the element
// offset as written: `d` (0), `d + off`, `&d[off]`, through casts.
func (c *portCtx) rangeOf(e parse.Expr) (parse.Expr, string) {
	e = parse.UnparenCasts(e)
	if u, ok := e.(*parse.UnaryExpr); ok && u.Op == "&" {
		if ix, ok := parse.Unparen(u.X).(*parse.IndexExpr); ok {
			return parse.Unparen(ix.X), oneLine(c.text(ix.Index))
		}
	}
	if b, ok := e.(*parse.BinaryExpr); ok && (b.Op == "+" || b.Op == "-") {
		// d + n - 4 is (d + n) - 4: the buffer is the leftmost operand of the chain
		first := b
		for {
			x, ok := parse.Unparen(first.X).(*parse.BinaryExpr)
			if !ok || (x.Op != "+" && x.Op != "-") {
				break
			}
			first = x
		}
		if first.Op == "+" {
			return parse.UnparenCasts(first.X), oneLine(string(c.src[first.Y.Pos():b.End()]))
		}
	}
	return e, "0"
}

func isNullLiteral(e parse.Expr) bool {
	switch x := parse.Unparen(e).(type) {
	case *parse.Ident:
		return x.Name == "nullptr" || x.Name == "NULL"
	case *parse.BasicLit:
		return x.Value == "0"
	}
	return false
}

// classifyHostUse decides what one use of a host buffer is.
func (c *portCtx) classifyHostUse(fn *parse.FuncDecl, id *parse.Ident, parents []parse.Node) hostOp {
	i := len(parents) - 1
	addr := false
	indexed := false // d[off], waiting for its &
	var offset parse.Expr
	offEnd := 0
	cur := parse.Node(id)
climb:
	for ; i >= 0; i-- { // climb through (void**)&d, (d), d + off, &d[off]
		switch p := parents[i].(type) {
		case *parse.ParenExpr, *parse.CastExpr:
			if indexed {
				break climb
			}
		case *parse.IndexExpr:
			if addr || offset != nil || p.X != cur {
				break climb
			}
			offset, indexed, offEnd = p.Index, true, p.Index.End()
		case *parse.UnaryExpr:
			if p.Op == "&" && indexed { // &d[off] is d + off
				indexed = false
				break
			}
			if p.Op != "&" || addr || offset != nil {
				break climb
			}
			addr = true
		case *parse.BinaryExpr:
			if offset != nil && !indexed && !addr && (p.Op == "+" || p.Op == "-") && p.X == cur {
				offEnd = p.End() // d + n - 4: the offset is `n - 4`
				break
			}
			if p.Op != "+" || addr || offset != nil || p.X != cur {
				break climb
			}
			offset, offEnd = p.Y, p.Y.End()
		default:
			break climb
		}
		cur = parents[i]
	}
	if indexed { // d[i] read or written on the host: not a range copy
		return hostOp{kind: opOther, node: id}
	}
	if i < 0 {
		return hostOp{kind: opOther, node: id}
	}
	argNode := parse.Node(id)
	if i+1 < len(parents) {
		argNode = parents[i+1]
	}
	switch p := parents[i].(type) {
	case *parse.LaunchExpr:
		for j, a := range p.Args {
			if a == argNode && !addr && offset == nil {
				return hostOp{kind: opLaunch, node: id, arg: j, launch: c.siteOf(p)}
			}
		}
	case *parse.InitListExpr:
		if op, ok := c.entryOp(id, p, argNode, addr && offset == nil); ok {
			return op
		}
	case *parse.CallExpr:
		if site := c.siteOf(p); site != nil && site.api != nil {
			if j := indexOf(site.api.launch.Args, argNode); j >= 0 && !addr && offset == nil {
				return hostOp{kind: opLaunch, node: id, arg: j, launch: site}
			}
		}
		if !addr && offset == nil {
			if op, ok := c.forwardOp(id, p, argNode); ok {
				return op
			}
		}
		op := c.classifyCall(fn, id, p, argNode, addr, parents[:i])
		op.offset = offset
		if offset != nil {
			op.offsetText = oneLine(string(c.src[offset.Pos():offEnd]))
		}
		if offset != nil && op.kind != opUpload && op.kind != opDownload && op.kind != opMemset0 && op.kind != opMemset && op.kind != opD2D {
			op.kind = opOther
		}
		return op
	case *parse.BinaryExpr:
		if offset != nil {
			break
		}
		if p.Op == "=" && p.X == argNode && isNullLiteral(p.Y) {
			return withStmt(hostOp{kind: opNull, node: p}, p, parents[:i])
		}
		if _, isCall := parse.Unparen(p.Y).(*parse.CallExpr); p.Op == "=" && !addr && p.X == argNode && isCall {
			return withStmt(hostOp{kind: opForeign, node: p}, p, parents[:i])
		}
		if p.Op == "=" && !addr {
			dst, src := symbolOf(fn, p.X), symbolOf(fn, p.Y)
			if dst != nil && src != nil {
				return withStmt(hostOp{kind: opCopy, node: p, dst: dst, src: src}, p, parents[:i])
			}
		}
	}
	return withStmt(hostOp{kind: opOther, node: id}, id, parents)
}

// classifyCall recognises the CUDA memory API calls on a buffer.
func (c *portCtx) classifyCall(fn *parse.FuncDecl, id *parse.Ident, call *parse.CallExpr, arg parse.Node, addr bool, parents []parse.Node) hostOp {
	pos := -1
	for j, a := range call.Args {
		if a == arg {
			pos = j
		}
	}
	name := parse.ShortFuncName(call.Fun)
	n := len(call.Args)
	op := hostOp{kind: opOther, node: id, call: call}
	switch {
	case addr && pos == 0 && name == "cudaMalloc" && n == 2:
		op.kind, op.bytes = opMalloc, call.Args[1]
	case addr && pos == 0 && name == "cudaMallocManaged" && n >= 2:
		op.kind, op.bytes = opManaged, call.Args[1]
	case addr && pos == 0 && (name == "cudaHostAlloc" || name == "cudaMallocHost") && n >= 2:
		op.kind, op.bytes = opPinned, call.Args[1]
	case addr && pos == 0 && name == "cudaHostGetDevicePointer" && n >= 2:
		op.kind, op.other = opDevPtr, call.Args[1]
	case addr && pos >= 0 && !strings.HasPrefix(name, "cuda"):
		op.kind = opForeign // allocated by the program's own function: adopt it with array_from_device
	case addr:
	case (name == "cudaMemcpy" || name == "cudaMemcpyAsync") && n >= 4:
		kind := strings.TrimSpace(c.text(call.Args[3]))
		switch {
		case pos == 0 && kind == "cudaMemcpyHostToDevice":
			op.kind, op.other, op.bytes = opUpload, call.Args[1], call.Args[2]
		case pos == 1 && kind == "cudaMemcpyDeviceToHost":
			op.kind, op.other, op.bytes = opDownload, call.Args[0], call.Args[2]
		case (pos == 0 || pos == 1) && kind == "cudaMemcpyDeviceToDevice":
			dst, _ := c.rangeOf(call.Args[0])
			src, _ := c.rangeOf(call.Args[1])
			op.kind, op.bytes = opD2D, call.Args[2]
			op.dst, op.src = symbolOf(fn, dst), symbolOf(fn, src)
			if op.dst == nil || op.src == nil || op.dst == op.src {
				op.kind = opOther
			}
		}
	case (name == "cudaMemset" || name == "cudaMemsetAsync") && pos == 0 && n >= 3 && isNullLiteral(call.Args[1]):
		op.kind, op.other, op.bytes = opMemset0, call.Args[1], call.Args[2]
	case (name == "cudaFree" || name == "cudaFreeHost" || name == "free") && pos == 0:
		op.kind = opFree
	case (name == "cudaMemset" || name == "cudaMemsetAsync") && pos == 0 && n >= 3:
		op.kind, op.other, op.bytes = opMemset, call.Args[1], call.Args[2]
	case name == "swap" && n == 2 && !addr:
		op.kind, op.dst, op.src = opSwap, symbolOf(fn, call.Args[0]), symbolOf(fn, call.Args[1])
		if op.dst == nil || op.src == nil {
			op.kind = opOther
		}
	}
	return withStmt(op, call, parents)
}

// withStmt finds the statement that consists of node (possibly wrapped in
// an error-check call like CUDA_CHECK(...) or checkCuda(...)).
func withStmt(op hostOp, node parse.Node, parents []parse.Node) hostOp {
	cur := node
	for i := len(parents) - 1; i >= 0; i-- {
		switch p := parents[i].(type) {
		case *parse.ParenExpr:
		case *parse.CastExpr:
		case *parse.CallExpr:
			if len(p.Args) != 1 || p.Args[0] != cur {
				return op
			}
		case *parse.BinaryExpr: // err = cudaMalloc(...): replaceStmt keeps err set
			if _, isCall := node.(*parse.CallExpr); p.Op != "=" || p.Y != cur || !isCall {
				return op
			}
		case *parse.VarDecl: // cudaError_t err = cudaMalloc(...);
			if _, isCall := node.(*parse.CallExpr); p.Init != cur || !isCall || i == 0 {
				return op
			}
			ds, ok := parents[i-1].(*parse.DeclStmt)
			if !ok || len(ds.Vars) != 1 {
				return op
			}
			op.stmt = ds
			if i > 1 {
				op.block, _ = parents[i-2].(*parse.BlockStmt)
			}
			return op
		case *parse.ExprStmt:
			op.stmt = p
			if i > 0 {
				op.block, _ = parents[i-1].(*parse.BlockStmt)
			}
			return op
		default:
			return op
		}
		cur = parents[i]
	}
	return op
}

// conflictingLaunch reports a launch passing v where no array is expected.
func (c *portCtx) conflictingLaunch(v *hostVar) string {
	for _, op := range v.ops {
		if op.kind == opForward {
			if why := c.forwardConflict(v, c.forwarderOf(c.hostCallee(op.call), op.arg)); why != "" {
				return why
			}
			continue
		}
		if op.kind != opLaunch || op.launch == nil {
			continue
		}
		k := op.launch.kernel
		if k == nil || !slices.Contains(c.ported[k], op.arg) {
			name := op.launch.kernelName()
			return fmt.Sprintf("%s is also passed to %s, whose parameter there is not ported; choose it too (--array %s:%s) or neither",
				v.sym.Name, name, name, paramNameAt(k, op.arg))
		}
	}
	return ""
}

func paramNameAt(k *parse.FuncDecl, i int) string {
	if k == nil || i >= len(k.Params) {
		return "?"
	}
	return k.Params[i].Name
}

// elemType is the pointee type text of a host pointer variable.
func (c *portCtx) elemType(v *hostVar) string {
	t := v.sym.Type
	if t == nil || t.Pointers != 1 || t.Base == "void" || strings.Contains(t.Base, "auto") {
		return ""
	}
	base := strings.TrimSpace(string(c.src[t.BaseSpan.Start:t.BaseSpan.Stop]))
	if base == "" {
		base = t.Base
	}
	return base
}

// findAllocation returns v's single allocation, or nil.
func findAllocation(v *hostVar) *hostOp {
	var found *hostOp
	for i := range v.ops {
		switch v.ops[i].kind {
		case opMalloc, opManaged, opPinned, opDevPtr:
			if found != nil {
				return nil // allocated twice: bamgen does not follow reallocation
			}
			found = &v.ops[i]
		case opNone, opUpload, opDownload, opMemset0, opMemset, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opOther:
		}
	}
	return found
}

// keyName is how --count and the config refer to v: the kernel parameter.
func keyName(v *hostVar) string {
	if len(v.keys) == 0 {
		return v.sym.Name
	}
	k := v.keys[0]
	return k.fn.Params[k.idx].Name
}

// countFor returns the element count expression for v: from --count or
// the config if given, else derived from a byte-size expression.
func (c *portCtx) countFor(v *hostVar, bytes parse.Expr, elem string) string {
	if expr := c.countOverride(v); expr != "" {
		return expr
	}
	return c.countFromBytes(bytes, elem)
}

func (c *portCtx) countOverride(v *hostVar) string {
	names := []string{v.sym.Name}
	for _, k := range v.keys {
		names = append(names, k.fn.Name+":"+k.fn.Params[k.idx].Name, k.fn.Params[k.idx].Name)
	}
	for _, n := range names {
		if e := c.opts.Counts[n]; e != "" {
			return e
		}
		if a := c.arrayConfig(n); a != nil && a.Count != "" {
			return a.Count
		}
	}
	return ""
}

func (c *portCtx) arrayConfig(name string) *ArrayConfig {
	if c.opts.Config == nil {
		return nil
	}
	for i := range c.opts.Config.Arrays {
		if c.opts.Config.Arrays[i].Name == name {
			return &c.opts.Config.Arrays[i]
		}
	}
	return nil
}

// sourceFor returns the configured source of v's contents.
func (c *portCtx) sourceFor(v *hostVar) Source {
	for _, k := range v.keys {
		for _, n := range []string{k.fn.Name + ":" + k.fn.Params[k.idx].Name, k.fn.Params[k.idx].Name} {
			if a := c.arrayConfig(n); a != nil {
				s, _ := ParseSource(a.Source)
				return s
			}
		}
	}
	return Source{Kind: "host"}
}

// countFromBytes turns `n * sizeof(T)` into `n`, anything else into
// `(bytes) / sizeof(T)`; bytes may also be a `new T[n]` count.
func (c *source) countFromBytes(bytes parse.Expr, elem string) string {
	if b, ok := parse.Unparen(bytes).(*parse.BinaryExpr); ok && b.Op == "*" {
		if c.isSizeofElem(b.Y, elem) {
			return c.operandText(b.X)
		}
		if c.isSizeofElem(b.X, elem) {
			return c.operandText(b.Y)
		}
	}
	text := oneLine(c.text(bytes))
	if byteSized[elem] {
		return c.operandText(bytes)
	}
	if _, simple := parse.Unparen(bytes).(*parse.Ident); !simple {
		text = "(" + text + ")"
	}
	return text + " / sizeof(" + elem + ")"
}

// byteSized lists element types whose size is 1 byte by definition, where
// a byte count is an element count.
var byteSized = map[string]bool{"char": true, "signed char": true, "unsigned char": true, "uint8_t": true,
	"int8_t": true, "std::uint8_t": true, "std::int8_t": true, "bool": true, "std::byte": true}

func (c *source) isSizeofElem(e parse.Expr, elem string) bool {
	s, ok := parse.Unparen(e).(*parse.SizeofExpr)
	if !ok || s.Keyword != "sizeof" {
		return false
	}
	if s.Type != nil {
		return oneLine(s.Type.Text) == oneLine(elem) || oneLine(c.text(s.Type)) == oneLine(elem)
	}
	return false
}

// operandText is e's text on one line. Counts are always whole function
// arguments, so no parentheses are added.
func (c *source) operandText(e parse.Expr) string { return oneLine(c.text(e)) }

// hostPointerText is a copy's host pointer as the typed runtime calls take
// it (`array_from_host<T>(const T *)`, `copy_to_host(array<T>, T *)`): as
// written, except that a cast to a void pointer (`(void*)h`, in cfd's
// upload wrapper) becomes a cast to the element type, since C++ does not
// convert void * to T * implicitly. out: the runtime writes through it.
func (c *portCtx) hostPointerText(e parse.Expr, elem string, out bool) string {
	cast, ok := parse.Unparen(e).(*parse.CastExpr)
	if !ok || cast.Type == nil || cast.Type.Base != "void" || cast.Type.Pointers != 1 {
		return oneLine(c.text(e))
	}
	elem = strings.TrimPrefix(elem, "const ")
	if !out {
		elem = "const " + elem
	}
	return "(" + elem + " *)(" + oneLine(c.text(cast.X)) + ")"
}

// bamName is the bam::array variable standing for host variable v.
func bamName(v *hostVar) string { return v.sym.Name + "_bam" }

// replaceStmt replaces a whole statement, keeping its line count: a
// statement written over several lines stays on them (reflow).
func (c *portCtx) replaceStmt(hp *hostPlan, rw RewriteKind, s parse.Stmt, text string) {
	if v := c.statusVar(s); v != "" {
		text += " " + v + " = cudaSuccess;"
	}
	hp.edits = append(hp.edits, edit.Edit{Start: s.Pos(), End: s.End(), New: c.reflow(s, text), Rewrite: rw.String()})
}

// statusVar returns err in a statement `err = cudaCall(...);` (possibly
// inside an error-check macro call): the runtime call that replaces it
// reports failures by exception, so err is set to cudaSuccess for the code
// that tests it afterwards.
func (c *portCtx) statusVar(s parse.Stmt) string {
	if ds, ok := s.(*parse.DeclStmt); ok && len(ds.Vars) == 1 && ds.Vars[0].Init != nil {
		if call, ok := parse.Unparen(ds.Vars[0].Init).(*parse.CallExpr); ok && strings.HasPrefix(parse.ShortFuncName(call.Fun), "cuda") && ds.Vars[0].Type != nil {
			return oneLine(c.text(ds.Vars[0].Type)) + " " + ds.Vars[0].Name
		}
	}
	es, ok := s.(*parse.ExprStmt)
	if !ok {
		return ""
	}
	e := parse.Unparen(es.X)
	for {
		call, ok := e.(*parse.CallExpr)
		if !ok || len(call.Args) != 1 {
			break
		}
		e = parse.Unparen(call.Args[0])
	}
	b, ok := e.(*parse.BinaryExpr)
	if !ok || b.Op != "=" {
		return ""
	}
	if call, ok := parse.Unparen(b.Y).(*parse.CallExpr); ok && strings.HasPrefix(parse.ShortFuncName(call.Fun), "cuda") {
		return oneLine(c.text(b.X))
	}
	return ""
}

// copyDeclOp is `T *dst = src;` where the declared variable is a buffer
// copy: it becomes `auto dst_bam = src_bam;`.
func copyDeclOp(v *hostVar, vd *parse.VarDecl, src *parse.Symbol) hostOp {
	op := hostOp{kind: opCopy, node: vd, dst: v.sym, src: src}
	parse.WithStack(v.fn.Body, func(n parse.Node, parents []parse.Node) bool {
		ds, ok := n.(*parse.DeclStmt)
		if !ok {
			return op.stmt == nil
		}
		for _, d := range ds.Vars {
			if d == vd && len(ds.Vars) == 1 {
				op.stmt = ds
				if len(parents) > 0 {
					op.block, _ = parents[len(parents)-1].(*parse.BlockStmt)
				}
			}
		}
		return false
	})
	return op
}

// innermostStmt returns the closest statement among parents, or nil.
func innermostStmt(parents []parse.Node) parse.Stmt {
	for i := len(parents) - 1; i >= 0; i-- {
		if s, ok := parents[i].(parse.Stmt); ok {
			if _, isBlock := s.(*parse.BlockStmt); !isBlock {
				return s
			}
		}
	}
	return nil
}
