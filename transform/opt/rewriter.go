package opt

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// rewriter applies one access-pattern rewrite to one kernel.
type rewriter struct {
	file    *analysis.File
	fn      *analysis.Function
	opts    Options
	ported  Ported
	mapping *analysis.Mapping
	diags   []diag.Diagnostic
	edits   []edit.Edit
	// hiddenWalk: the byte offset of the walk loop whose edge reads odt
	// would read through its tile view, had the port not rewritten them
	// (a --ref); -1 when none.
	hiddenWalk int
}

func (r *rewriter) name() string { return r.fn.Decl.Name }

// choose picks a rewrite by the kernel's shape and says why.
func (r *rewriter) choose() Kind {
	m := r.mapping
	if len(m.Unsure) > 0 {
		u := m.Unsure[0]
		r.refuse(CodeNoWarpID, u.Pos, u.End, "kernel %s: no access-pattern rewrite chosen: this statement %s", r.name(), u.Reason)
		return None
	}
	switch {
	case analysis.FindCSRWalk(r.fn, m) != nil:
		r.note(r.fn.Decl.NameSpan.Start, "kernel %s walks CSR neighbour lists: choosing odt (one warp per edge-list tile)", r.name())
		return ODT
	case m.Warp != nil:
		r.note(r.fn.Decl.NameSpan.Start, "kernel %s assigns one warp per item: choosing transpose (stride %d)", r.name(), r.opts.Stride)
		return Transpose
	case m.Tid != nil:
		r.note(r.fn.Decl.NameSpan.Start, "kernel %s is element-wise (one thread per element): choosing claware", r.name())
		return Claware
	default:
		r.note(r.fn.Decl.NameSpan.Start, "kernel %s: no variable holds the thread id (blockIdx.x * blockDim.x + threadIdx.x) "+
			"or the warp id, so no access-pattern rewrite can be shown legal; it is ported as written", r.name())
		return None
	}
}

// fallback tries the next best rewrite when --opt auto's first choice was
// refused: a warp-per-vertex walk that odt cannot tile can still be
// transposed. It returns the kind applied, or None.
func (r *rewriter) fallback(refused Kind) Kind {
	if refused != ODT || r.mapping.Warp == nil {
		r.note(r.fn.Decl.NameSpan.Start, "kernel %s: no access-pattern rewrite applies; it is ported as written", r.name())
		return None
	}
	r.note(r.fn.Decl.NameSpan.Start, "kernel %s: falling back to transpose (stride %d)", r.name(), r.opts.Stride)
	r.run(Transpose)
	if len(r.edits) == 0 {
		return None
	}
	return Transpose
}

func (r *rewriter) run(kind Kind) {
	if r.fn.Decl.Body == nil {
		r.refuse(CodeNoBody, r.fn.Decl.Pos(), r.fn.Decl.End(), "kernel %s has no body in this file", r.name())
		return
	}
	switch kind {
	case Claware:
		r.claware()
	case Transpose:
		r.warpRemap(fmt.Sprintf("bam::for_each_warp_transposed(%dull, bam_body)", r.opts.Stride), Transpose)
	case Coarsen:
		r.warpRemap(fmt.Sprintf("bam::for_each_warp_coarsened<%d>(bam_body)", r.opts.Coarsen), Coarsen)
	case ODT:
		r.odt()
	case None, Auto:
		panic("opt: run called with " + kind.String())
	default:
		panic("opt: unhandled kind " + kind.String())
	}
}

// claware: element-wise kernels become warp-per-cache-line (thesis §6.2).
func (r *rewriter) claware() {
	m := r.mapping
	if m.Tid == nil {
		r.refuse(CodeNoThreadID, r.fn.Decl.NameSpan.Start, r.fn.Decl.NameSpan.End(),
			"claware does not apply to kernel %s: no local variable is defined once as blockIdx.x * blockDim.x + threadIdx.x; "+
				"it needs one thread per element", r.name())
		return
	}
	if m.Warp != nil {
		r.refuse(CodeNoThreadID, m.Warp.Pos(), m.Warp.End(),
			"claware does not apply to kernel %s: it assigns one warp per item (%s); use --opt transpose or --opt coarsen", r.name(), m.Warp.Name)
		return
	}
	ok := r.checkBlockers(Claware, m.Blockers, m.StrayIndex, m.WarpSync)
	arrays := r.threadIndexedPorted()
	if len(arrays) == 0 {
		r.refuse(CodeNotPorted, r.fn.Decl.NameSpan.Start, r.fn.Decl.NameSpan.End(),
			"claware does not apply to kernel %s: no ported array is indexed by the thread id, so there is no cache line to assign", r.name())
		ok = false
	}
	if !ok {
		return
	}
	epl := "bam::min_elems_per_line(" + strings.Join(arrays, ", ") + ")"
	if loop := r.gridStrideLoop(); m.GridStride && loop != nil {
		if !m.IsCanonicalTid() {
			r.refuse(CodeNoThreadID, m.Tid.Pos(), m.Tid.End(), "claware does not apply to kernel %s: its grid-stride loop starts at %s, "+
				"not at blockIdx.x * blockDim.x + threadIdx.x, so bamgen cannot walk its indices line by line", r.name(), r.file.Parse.Text(m.Tid.Init))
			return
		}
		if !r.clawareLoop(loop, epl) {
			return
		}
	} else {
		r.wrap(m.Tid, r.remapID(m.Tid.Init, "bam_v", "bam_v"), fmt.Sprintf("bam::for_each_thread_by_line<%d>(%s, bam_body)", r.opts.LanesPerLine, epl), Claware)
	}
	r.note(r.fn.Decl.NameSpan.Start, "kernel %s: claware applied (%d lanes per cache line of %s); line requests in flight "+
		"grow from SM*W*WS*sizeof(T)/CL to SM*W*WS/%d; %s", r.name(), r.opts.LanesPerLine, strings.Join(arrays, ", "), r.opts.LanesPerLine,
		clawareCacheAdvice(len(arrays), r.opts.LanesPerLine))
}

// clawareCacheAdvice: each lane group works through one line of every
// array it reads, so all resident groups' lines must fit in the cache, or
// lines are evicted between the group's passes and fetched again. Sized
// with the model's H100 preset and 4 KiB lines.
func clawareCacheAdvice(arrays int, lanesPerLine int) string {
	const line = 4096
	g := analysis.GPUs["h100"]
	groups := g.SMs * g.WarpsPerSM * g.WarpSize / lanesPerLine
	mib := float64(groups*arrays*line) / (1 << 20)
	return fmt.Sprintf("the cache should hold SM*W*WS/%d groups x %d line(s) each: %.0f MiB with 4 KiB lines on an H100/H200 "+
		"(BAM_CACHE_BYTES), or lines are fetched again between passes", lanesPerLine, arrays, mib)
}

// warpRemap: warp-per-item kernels get a new virtual-warp order (transpose,
// coarsen). The whole warp moves together, so warp intrinsics stay legal.
func (r *rewriter) warpRemap(driver string, kind Kind) {
	m := r.mapping
	if m.Warp == nil {
		r.refuse(CodeNoWarpID, r.fn.Decl.NameSpan.Start, r.fn.Decl.NameSpan.End(),
			"%s does not apply to kernel %s: no local variable is defined once as the warp id (thread id / 32); "+
				"it needs one warp per vertex", kind, r.name())
		return
	}
	if !r.checkBlockers(kind, m.Blockers, m.StrayIndex) {
		return
	}
	lane := "(threadIdx.x & 31u)"
	vtid := "bam_v * 32ull + " + lane
	switch {
	case m.Tid != nil && mentions(m.Warp.Init, m.Tid.Name):
		r.wrap(m.Tid, r.remapID(m.Tid.Init, vtid, vtid), driver, kind) // warp and lane follow from the new thread id
	case m.Tid != nil:
		r.wrap(m.Tid, r.remapID(m.Tid.Init, vtid, vtid), driver, kind)
		r.replaceInit(m.Warp, "bam_v", kind)
	default:
		r.wrap(m.Warp, r.remapID(m.Warp.Init, "bam_v", vtid), driver, kind)
	}
	r.note(r.fn.Decl.NameSpan.Start, "kernel %s: %s applied to warp id %s", r.name(), kind, m.Warp.Name)
}

// maxBlockersShown caps the refusals printed per kernel and rewrite: a
// kernel built around shared memory has dozens of blocking statements, and
// the first few say why as well as all of them would.
const maxBlockersShown = 3

// checkBlockers refuses the rewrite for each blocking construct, the first
// maxBlockersShown of them by position, then one line counting the rest.
func (r *rewriter) checkBlockers(kind Kind, lists ...[]analysis.Blocker) bool {
	codes := []string{CodeBlocked, CodeStrayIndex, CodeWarpSync}
	type blocker struct {
		analysis.Blocker
		code string
	}
	var all []blocker
	for i, list := range lists {
		for _, b := range list {
			all = append(all, blocker{b, codes[i]})
		}
	}
	slices.SortStableFunc(all, func(a, b blocker) int { return cmp.Compare(a.Pos, b.Pos) })
	for i, b := range all {
		if i == maxBlockersShown {
			rest := all[i:]
			r.refuse(rest[0].code, rest[0].Pos, rest[len(rest)-1].End, "%s does not apply to kernel %s: %d more statements from here on block it too",
				kind, r.name(), len(rest))
			break
		}
		r.refuse(b.code, b.Pos, b.End, "%s does not apply to kernel %s: this statement %s", kind, r.name(), b.Reason)
	}
	return len(all) == 0
}

// threadIndexedPorted lists the ported arrays the kernel indexes by the
// thread id: their lines are what claware assigns to warps.
func (r *rewriter) threadIndexedPorted() []string {
	ported := map[string]bool{}
	for _, p := range r.ported.Params[r.name()] {
		ported[p] = true
	}
	var out []string
	for _, a := range r.fn.Arrays {
		if !ported[a.Name] {
			continue
		}
		for _, s := range a.Forms() {
			if s.Form == analysis.Thread {
				out = append(out, a.Name)
				break
			}
		}
	}
	return out
}

// wrap puts the body in `auto bam_body = [&](unsigned long long bam_v) {...};`,
// redefines idVar from the virtual id, and hands the lambda to driver.
// The lambda's lines and the driver call are lines of their own
// (wrapBody).
func (r *rewriter) wrap(idVar *parse.VarDecl, newID, driver string, kind Kind) {
	r.wrapBody([]codeLine{{0, "auto bam_body = [&](const unsigned long long bam_v) {"}},
		[]codeLine{{0, "};"}, {0, driver + ";"}}, kind)
	r.replaceInit(idVar, newID, kind)
}

// remapID is the new initialiser of an id variable under a driver that
// hands out virtual thread ids. canonical is used as it is when the
// initialiser is the launch's flat 1-D id (blockIdx.x * blockDim.x +
// threadIdx.x, or that id divided into warps): the driver's virtual id
// means the same. Any other affine form (a 2-D grid, a constant block
// size, locals) is rewritten exactly: the virtual thread vtid plays the
// physical thread (blockIdx.x, threadIdx.x) = (vtid / blockDim.x, vtid %
// blockDim.x), and everything else in the expression (blockIdx.y,
// gridDim.x, macros) keeps its value. On a launch the drivers remap (1-D
// grids) that is the thread the original ran as; on any other launch
// they run the identity, where vtid is the calling thread's own
// blockIdx.x * blockDim.x + threadIdx.x and the expression gives back
// the original id.
func (r *rewriter) remapID(init parse.Expr, canonical, vtid string) string {
	if r.mapping.IsCanonicalTid() || (r.mapping.Tid == nil && r.mapping.CanonicalWarp()) {
		return canonical
	}
	return "(" + r.substituteIndex(initExpr(init), vtid) + ")"
}

// substituteIndex renders e with blockIdx.x and threadIdx.x (and the
// locals the id is written through) expressed by the virtual thread vtid.
func (r *rewriter) substituteIndex(e parse.Expr, vtid string) string {
	type rep struct {
		pos, end int
		text     string
	}
	var reps []rep
	parse.Inspect(e, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.MemberExpr:
			switch {
			case parse.IsBuiltinX(n, "blockIdx"):
				reps = append(reps, rep{n.Pos(), n.End(), "((" + vtid + ") / blockDim.x)"})
				return false
			case parse.IsBuiltinX(n, "threadIdx"):
				reps = append(reps, rep{n.Pos(), n.End(), "((" + vtid + ") % blockDim.x)"})
				return false
			}
		case *parse.Ident:
			if init := r.mapping.PartInit(n.Name); init != nil {
				reps = append(reps, rep{n.Pos(), n.End(), "(" + r.substituteIndex(init, vtid) + ")"})
			}
		}
		return true
	})
	src := r.file.Parse.Src.Bytes
	var b strings.Builder
	at := e.Pos()
	for _, x := range reps {
		b.Write(src[at:x.pos])
		b.WriteString(x.text)
		at = x.end
	}
	b.Write(src[at:e.End()])
	return b.String()
}

// replaceInit changes the initialiser of v to the new id, converted to
// v's declared type so every expression using v keeps its type (and braced
// initialisers do not become narrowing).
func (r *rewriter) replaceInit(v *parse.VarDecl, newID string, kind Kind) {
	init := v.Init
	if il, ok := init.(*parse.InitListExpr); ok && len(il.Elems) == 1 {
		init = il.Elems[0]
	}
	r.edit(init.Pos(), init.End(), r.convertTo(v, init, newID), kind)
}

// convertTo renders `static_cast<T>(value)` with T the declared type of v,
// or the decayed type of its initialiser when v is declared `auto`.
func (r *rewriter) convertTo(v *parse.VarDecl, init parse.Expr, value string) string {
	t := strings.TrimSpace(strings.ReplaceAll(v.Type.Text, "__restrict__", ""))
	if v.Type.Pointers == 0 { // a cast to `const T` only earns a warning: drop top-level qualifiers
		t = strings.Join(slices.DeleteFunc(strings.Fields(t), func(w string) bool { return w == "const" || w == "volatile" }), " ")
	}
	if v.Type.Base == "auto" || strings.Contains(t, "auto") {
		t = "std::decay_t<decltype(" + r.file.Parse.Text(init) + ")>"
	}
	return fmt.Sprintf("static_cast<%s>(%s)", t, value)
}

func (r *rewriter) edit(start, end int, text string, kind Kind) {
	r.edits = append(r.edits, edit.Edit{Start: start, End: end, New: text, Rewrite: "opt-" + kind.String()})
}

func (r *rewriter) refuse(code string, pos, end int, format string, args ...any) {
	r.diags = append(r.diags, diag.Diagnostic{Pos: pos, End: end, Severity: diag.Warning, Code: code,
		Message: fmt.Sprintf(format, args...) + "; the kernel is left as it was"})
}

func (r *rewriter) note(pos int, format string, args ...any) {
	r.diags = append(r.diags, diag.Diagnostic{Pos: pos, End: pos, Severity: diag.Note, Code: CodeApplied,
		Message: fmt.Sprintf(format, args...)})
}

// mentions reports whether e refers to the identifier name.
func mentions(e parse.Expr, name string) bool {
	found := false
	parse.Inspect(e, func(n parse.Node) bool {
		if id, ok := n.(*parse.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}
