package port

import (
	"fmt"
	"sort"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// Rewrite is one named step of the port. Run reads the plan (decided once
// for all rewrites, because whether an array can be ported depends on all
// of them) and returns its diagnostics and edits on the original bytes.
type Rewrite struct {
	Kind RewriteKind
	Doc  string
	Run  func(c *portCtx) ([]diag.Diagnostic, []edit.Edit)
}

// Rewrites lists every rewrite in the order they run. The order only
// matters for insertions at the same offset, which Apply keeps in order.
var Rewrites = []*Rewrite{
	{Kind: KernelParams, Doc: "T *p becomes bam::array<T> p, const T *p becomes bam::array<const T> p (__restrict__ dropped)", Run: runKernelParams},
	{Kind: Deref, Doc: "*(p + i) becomes p[i], *p becomes p[0]; cache-hint stores __stcs(&p[i], v) (__stcg, __stwb, __stwt) become p.write(i, v)", Run: bodyEditsOf(Deref)},
	{Kind: Atomics, Doc: "atomicAdd(&p[i], v) and the other CUDA atomics become p.atomic_add(i, v) etc.", Run: bodyEditsOf(Atomics)},
	{Kind: Reads, Doc: "p[i] where a proxy would leak (auto, call arguments, ?:, members, sizeof) and __ldg(&p[i]) (and the other cache-hint loads, __ldcs ...) become p.read(i)", Run: bodyEditsOf(Reads)},
	{Kind: Aliases, Doc: "T *q = p + off becomes an element offset; q[i] becomes p[q + (i)]", Run: bodyEditsOf(Aliases)},
	{Kind: Refs, Doc: "with --ref: a read-only array a thread scans in a loop is read through bam::array_ref NAME_ref in a block around the loop", Run: runRefs},
	{Kind: Helpers, Doc: "__device__ helpers receiving arrays are ported too; cloned as NAME_bam when also called with plain pointers", Run: runHelpers},
	{Kind: Versions, Doc: "each ported kernel's body is compiled twice, through bam::by_placement: over plain pointers when every array is in GPU memory or zero-copy host memory, over the bam::arrays otherwise", Run: runVersions},
	{Kind: Launches, Doc: "launch arguments of ported parameters pass the bam::array", Run: hostEditsOf(Launches)},
	{Kind: HostMemory, Doc: "cudaMalloc/cudaMemcpy/cudaMemset/cudaFree of ported buffers become runtime calls; host-visible buffers are wrapped around launches", Run: hostEditsOf(HostMemory)},
	{Kind: Runtime, Doc: "#include <bam/bam.cuh>, the runtime variable in each host function, statistics at the end of main", Run: runRuntime},
}

func rewriteNames() []string {
	out := make([]string, len(Rewrites))
	for i, r := range Rewrites {
		out[i] = r.Kind.String()
	}
	return out
}

// enabled reports whether the config lets rewrite k run (all by default).
func (c *portCtx) enabled(k RewriteKind) bool {
	if c.opts.Config == nil || len(c.opts.Config.Rewrites) == 0 {
		return true
	}
	for _, n := range c.opts.Config.Rewrites {
		if n == k.String() {
			return true
		}
	}
	return false
}

// inPlace lists the functions whose ported variant replaces their text,
// with the parameters ported in each, in source order.
func (c *portCtx) inPlace() []paramSet {
	var out []paramSet
	for _, fn := range c.funcs {
		if ps := c.ported[fn]; len(ps) > 0 {
			out = append(out, paramSet{fn, ps})
		} else if h := c.helpers[fn]; h != nil && len(h.sets) == 1 && !h.plain {
			out = append(out, paramSet{fn, h.sets[0]})
		}
	}
	return out
}

type paramSet struct {
	fn  *parse.FuncDecl
	set []int
}

func runKernelParams(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	var edits []edit.Edit
	for _, ps := range c.inPlace() {
		edits = append(edits, c.paramTypeEdits(ps)...)
		// Forward declarations must agree, or a launch placed before the
		// definition would see only the pointer version.
		for _, proto := range c.prototypesOf(ps.fn) {
			edits = append(edits, c.paramTypeEdits(paramSet{proto, ps.set})...)
		}
	}
	return nil, edits
}

// prototypesOf returns the declarations without body that declare fn (same
// name, same number of parameters, same pointer parameters).
func (c *portCtx) prototypesOf(fn *parse.FuncDecl) []*parse.FuncDecl {
	var out []*parse.FuncDecl
	for _, d := range c.funcs {
		if d.Body != nil || d.Name != fn.Name || len(d.Params) != len(fn.Params) {
			continue
		}
		same := true
		for i, p := range d.Params {
			same = same && p.Type != nil && fn.Params[i].Type != nil && p.Type.Pointers == fn.Params[i].Type.Pointers
		}
		if same {
			out = append(out, d)
		}
	}
	return out
}

// paramTypeEdits replaces the type of each ported parameter.
func (c *portCtx) paramTypeEdits(ps paramSet) []edit.Edit {
	var edits []edit.Edit
	for _, idx := range ps.set {
		t := ps.fn.Params[idx].Type
		text := bamType(c, t)
		if t.End() < len(c.src) && isIdentByte(c.src[t.End()]) {
			text += " " // `T *p`: the type ended at `*`, the name follows directly
		}
		edits = append(edits, edit.Edit{Start: t.Pos(), End: t.End(), New: text, Rewrite: KernelParams.String()})
	}
	return edits
}

// bodyEditsOf returns a Run emitting the body edits of one kind in the
// functions ported in place.
func bodyEditsOf(k RewriteKind) func(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	return func(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
		var edits []edit.Edit
		for _, ps := range c.inPlace() {
			for _, e := range c.bodyEdits(ps) {
				if e.Rewrite == k.String() {
					edits = append(edits, e)
				}
			}
		}
		return nil, edits
	}
}

// bodyEdits are the use edits of every ported parameter of a function.
func (c *portCtx) bodyEdits(ps paramSet) []edit.Edit {
	var edits []edit.Edit
	for _, idx := range ps.set {
		for _, e := range c.analyzeParam(ps.fn, idx).edits {
			if c.refs == nil || !c.refs.skip[[2]int{e.Start, e.End}] { // the refs rewrite spells this read itself
				edits = append(edits, e)
			}
		}
	}
	return edits
}

// renameEdits points calls that pass arrays at cloned helpers' clones.
func (c *portCtx) renameEdits(ps paramSet) []edit.Edit {
	var edits []edit.Edit
	for _, pc := range c.portedCalls(ps.fn, ps.set) {
		h := c.helpers[pc.callee]
		if h == nil || !h.plain {
			continue
		}
		name := parse.ShortFuncName(pc.call.Fun)
		end := pc.call.Fun.End()
		if ti, ok := parse.Unparen(pc.call.Fun).(*parse.TemplateIdent); ok {
			end = ti.ArgsSpan.Start
			for end > 0 && (c.src[end-1] == ' ' || c.src[end-1] == '\t') {
				end--
			}
		}
		edits = append(edits, edit.Edit{Start: end - len(name), End: end, New: h.name(), Rewrite: Helpers.String()})
	}
	return edits
}

func runHelpers(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	var edits []edit.Edit
	for _, ps := range c.inPlace() {
		edits = append(edits, c.renameEdits(ps)...)
	}
	for _, fn := range c.funcs {
		if h := c.helpers[fn]; h != nil && h.plain && len(h.sets) == 1 {
			e, err := c.cloneEdit(h)
			if err != nil {
				return nil, []edit.Edit{{Start: -1, End: -1, Rewrite: Helpers.String() + ": " + err.Error()}}
			}
			edits = append(edits, e)
		}
	}
	return nil, edits
}

// cloneEdit inserts the ported copy of a helper after the original.
func (c *portCtx) cloneEdit(h *helperPlan) (edit.Edit, error) {
	fn := h.fn
	text, err := c.portedCopy(paramSet{fn, h.sets[0]}, h.name(), Helpers)
	if err != nil {
		return edit.Edit{}, err
	}
	at := lineEnd(c.src, fn.End())
	note := "// bamgen: " + h.name() + " is " + fn.Name + " taking bam::array; " + fn.Name + " is also called with plain pointers\n"
	lead := ""
	if at > 0 && c.src[at-1] != '\n' {
		lead = "\n"
	}
	return edit.Edit{Start: at, End: at, New: lead + note + text + "\n", Rewrite: Helpers.String(), Reline: lead == ""}, nil
}

// portedCopy is the text of ps.fn (its template header included) with the
// port's edits of its parameters and body applied, renamed to name, plus
// extra edits inside it: the copy a helper clone or a kernel's direct
// clone inserts after the original.
func (c *portCtx) portedCopy(ps paramSet, name string, k RewriteKind, extra ...edit.Edit) (string, error) {
	fn := ps.fn
	start, end := funcStart(fn), fn.End()
	var edits []edit.Edit
	edits = append(edits, c.paramTypeEdits(ps)...)
	edits = append(edits, c.bodyEdits(ps)...)
	edits = append(edits, c.renameEdits(ps)...)
	edits = append(edits, edit.Edit{Start: fn.NameSpan.Start, End: fn.NameSpan.Stop, New: name, Rewrite: k.String()})
	edits = append(edits, extra...)
	local := make([]edit.Edit, 0, len(edits))
	for _, e := range edits {
		if e.Start < start || e.End > end {
			return "", fmt.Errorf("%s: an edit of %s lies outside it", k, fn.Name)
		}
		e.Start -= start
		e.End -= start
		local = append(local, e)
	}
	text, err := edit.Apply(c.src[start:end], local, "") // numbered by the outer Apply: a directive here would count from the copy
	return string(text), err
}

// funcStart is where fn's text starts: its template header, if any.
func funcStart(fn *parse.FuncDecl) int {
	if fn.Template != nil && fn.Template.Start < fn.Pos() {
		return fn.Template.Start
	}
	return fn.Pos()
}

// lineEnd returns the offset just past the newline ending the line of off.
func lineEnd(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' {
		off++
	}
	if off < len(src) {
		off++
	}
	return off
}

func hostEditsOf(k RewriteKind) func(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	return func(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
		var edits []edit.Edit
		for _, e := range c.host.edits {
			if e.Rewrite == k.String() {
				edits = append(edits, e)
			}
		}
		if k == HostMemory {
			return c.host.notes, edits
		}
		return nil, edits
	}
}

func runRuntime(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	return nil, c.runtimeEdits(c.host)
}

// runRewrites runs every enabled rewrite and collects the results.
func (c *portCtx) runRewrites() ([]diag.Diagnostic, []edit.Edit) {
	var diags []diag.Diagnostic
	var edits []edit.Edit
	for _, r := range Rewrites {
		if !c.enabled(r.Kind) {
			continue
		}
		d, e := r.Run(c)
		diags = append(diags, d...)
		edits = append(edits, e...)
	}
	// At one offset, a statement added after the line before goes first,
	// then the runtime set-up (bam_rt is declared before a statement
	// inserted before the body's first line uses it), then the rest in
	// the order of Rewrites.
	// (Replacements starting there come after the insertions, as
	// edit.ApplyLines orders them.)
	rank := func(e edit.Edit) int {
		switch {
		case e.Start != e.End:
			return 3
		case e.Follows:
			return 0
		case e.Rewrite == Runtime.String():
			return 1
		}
		return 2
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].Start != edits[j].Start {
			return edits[i].Start < edits[j].Start
		}
		return rank(edits[i]) < rank(edits[j])
	})
	return diags, edits
}
