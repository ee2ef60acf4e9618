package port

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// The refs rewrite (--ref, `ref:` in .bamgen.yaml): a read-only ported
// array that a thread scans in a loop is read through a
// bam::array_ref, which keeps the thread's last line pinned, so the reads
// that stay on that line are plain loads instead of a pin and release
// each. bamgen opens a block around the loop for the refs:
//
//	{ bam::array_ref<const int> col_ref(col); for (e = b; e < f; ++e) use(col_ref[e]); }
//
// The block is the innermost scope holding every rewritten read, and it
// ends with the loop, so the pins go when the loop ends; before a barrier
// inside the loop the refs drop() their lines (refsync.go). A ref is always
// correct for an array nobody writes; the rules below keep a held pin from
// hurting other threads. A refused ref is a note: the array is ported
// either way and reads through a[i].

// refPlan is the result of planning: the edits of the refs rewrite, and
// the edits of the use rewrites (reads, deref, aliases) that they replace.
type refPlan struct {
	edits []edit.Edit
	skip  map[[2]int]bool
}

// refLoop is one loop that gets refs, with one array per ref.
type refLoop struct {
	fn     *parse.FuncDecl
	loop   *parse.ForStmt
	arrays []*refArray  // in parameter order
	drops  []parse.Stmt // statements the refs drop their lines before (they wait for other threads)
}

// refArray is one array scanned in one loop.
type refArray struct {
	idx   int
	loop  *parse.ForStmt
	scans []*scanAccess
}

func (r *refArray) name(fn *parse.FuncDecl) string { return fn.Params[r.idx].Name }

// refStage is the planning of the refs rewrite: it reads the port's plan
// (which parameters are ported) and produces a refPlan; nothing else in
// the port sees its working state.
type refStage struct {
	*portCtx
	refs      *refPlan                      // the result, shadowing portCtx.refs while planning
	loopFacts map[*parse.ForStmt]*loopFacts // memoised by loopFactsOf
}

// planRefs decides the refs of every ported kernel and prepares the edits;
// nil when refs were not asked for.
func planRefs(pc *portCtx) *refPlan {
	c := &refStage{portCtx: pc, loopFacts: map[*parse.ForStmt]*loopFacts{}}
	if !c.refsRequested() || !c.enabled(Refs) {
		return nil
	}
	c.refs = &refPlan{skip: map[[2]int]bool{}}
	for _, fn := range c.kernels() {
		for _, l := range c.kernelRefLoops(fn) {
			if c.refLoopOK(l) {
				c.emitRefs(l)
			}
		}
	}
	return c.refs
}

// refsRequested: --ref, `ref: true`, or some array's `ref: true`.
func (c *refStage) refsRequested() bool {
	cfg := c.opts.Config
	if c.opts.Ref || (cfg != nil && cfg.Ref) {
		return true
	}
	for _, a := range configArrays(cfg) {
		if a.Ref != nil && *a.Ref {
			return true
		}
	}
	return false
}

func configArrays(cfg *Config) []ArrayConfig {
	if cfg == nil {
		return nil
	}
	return cfg.Arrays
}

// refWanted says whether the parameter may get refs: an array's own `ref:`
// in the config wins (KERNEL:NAME over NAME), else --ref or the top-level
// `ref:`.
func (c *refStage) refWanted(key paramKey) bool {
	want := c.opts.Ref || (c.opts.Config != nil && c.opts.Config.Ref)
	name := key.fn.Params[key.idx].Name
	for _, qualified := range []bool{false, true} {
		for _, a := range configArrays(c.opts.Config) {
			spec := name
			if qualified {
				spec = key.fn.Name + ":" + name
			}
			if a.Ref != nil && a.Name == spec {
				want = *a.Ref
			}
		}
	}
	return want
}

// kernelRefLoops collects, per loop, the arrays of fn that pass the
// per-array rules, in source order.
func (c *refStage) kernelRefLoops(fn *parse.FuncDecl) []*refLoop {
	byLoop := map[*parse.ForStmt]*refLoop{}
	var loops []*refLoop
	for _, idx := range c.ported[fn] {
		if !c.refWanted(paramKey{fn, idx}) {
			continue
		}
		for _, ra := range c.arrayRefs(fn, idx) {
			if c.odtWalk(fn, ra.loop) {
				continue
			}
			l := byLoop[ra.loop]
			if l == nil {
				l = &refLoop{fn: fn, loop: ra.loop}
				byLoop[ra.loop] = l
				loops = append(loops, l)
			}
			l.arrays = append(l.arrays, ra)
		}
	}
	sort.Slice(loops, func(i, j int) bool { return loops[i].loop.Pos() < loops[j].loop.Pos() })
	return loops
}

// odtWalk: the odt rewrite tiles this loop (port.Options.ODTWalks). It
// reads the edge array through its tile view, one pinned line per warp and
// tile, and the walk's lanes read 32 consecutive elements of the other
// arrays at a time (one probe per warp); refs would hide the edge reads
// from odt and keep the walk on the driver without a view, whose inlined
// vertex code set the kernel's registers (sssp's sssp_relax: 80).
func (c *refStage) odtWalk(fn *parse.FuncDecl, loop *parse.ForStmt) bool {
	at, ok := c.opts.ODTWalks[fn.Name]
	if !ok || loop.Pos() != at {
		return false
	}
	c.refNote(loop, CodeRefTileView, "%s: no bam::array_ref in this loop: odt tiles it and reads the edge array through its "+
		"tile view (bam::odt_tile), one pinned line per warp and tile", fn.Name)
	return true
}

// arrayRefs groups the scans of one array by loop and applies the rules
// about the array: read-only, a small step, one ref per array and thread,
// one stream per loop, no lambdas or helpers.
func (c *refStage) arrayRefs(fn *parse.FuncDecl, idx int) []*refArray {
	groups := c.scanGroups(fn, idx)
	if len(groups) == 0 {
		return nil
	}
	if !c.readOnlyForRef(fn, idx, groups) {
		return nil
	}
	var steady []*refArray
	for _, g := range groups {
		if c.smallStride(fn, g) {
			steady = append(steady, g)
		}
	}
	nested := c.nestedRefs(fn, steady)
	var out []*refArray
	for _, g := range steady {
		if !nested[g] && c.oneStream(fn, g) && c.directReads(fn, g) {
			out = append(out, g)
		}
	}
	return out
}

// scanGroups finds the array's scanning accesses and groups them by loop.
func (c *refStage) scanGroups(fn *parse.FuncDecl, idx int) []*refArray {
	byLoop := map[*parse.ForStmt]*refArray{}
	var out []*refArray
	for _, acc := range c.analyzeParam(fn, idx).accesses {
		sa := c.scanOf(acc)
		if sa == nil {
			continue
		}
		g := byLoop[sa.loop]
		if g == nil {
			g = &refArray{idx: idx, loop: sa.loop}
			byLoop[sa.loop] = g
			out = append(out, g)
		}
		g.scans = append(g.scans, sa)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].loop.Pos() < out[j].loop.Pos() })
	return out
}

// readOnlyForRef: only bam::array<const T> gets refs. Nothing in the
// kernel writes such an array, so a read through the ref returns what
// a[i] would, whatever other threads do meanwhile; for a writable array
// that would need reasoning about every write between the reads. Writable
// arrays scanned with a small step are noted.
func (c *refStage) readOnlyForRef(fn *parse.FuncDecl, idx int, groups []*refArray) bool {
	prm := fn.Params[idx]
	if prm.Type.Const {
		return true
	}
	for _, g := range groups {
		if s := g.scans[0]; s.stride >= 1 && s.stride <= maxRefStride {
			c.refNote(s.acc.node, CodeRefWritable, "%s: no bam::array_ref for %s: it is scanned in this loop but is not read-only (%s); "+
				"only bam::array<const T> arrays are read through a ref", fn.Name, prm.Name, bamType(c.portCtx, prm.Type))
			return false
		}
	}
	return false
}

// smallStride: the loop must move the index by a constant of at most
// maxRefStride elements per iteration.
func (c *refStage) smallStride(fn *parse.FuncDecl, g *refArray) bool {
	for _, s := range g.scans {
		if s.stride < 1 || s.stride > maxRefStride {
			c.refNote(s.acc.node, CodeRefStride, "%s: no bam::array_ref for %s in this loop: its index moves by %s per iteration, "+
				"not a constant of at most %d elements, so a thread leaves each line too soon for a ref to pay",
				fn.Name, g.name(fn), strideText(s), maxRefStride)
			return false
		}
	}
	return true
}

func strideText(s *scanAccess) string {
	switch {
	case s.stride == 1:
		return "1 element"
	case s.stride > 0:
		return fmt.Sprintf("%d elements", s.stride)
	case s.coef == 1:
		return "`" + s.step + "`"
	}
	return fmt.Sprintf("%d times `%s`", s.coef, s.step)
}

// nestedRefs: two refs of one array in nested loops would pin two of its
// lines per thread at once; neither loop gets one.
func (c *refStage) nestedRefs(fn *parse.FuncDecl, groups []*refArray) map[*refArray]bool {
	out := map[*refArray]bool{}
	for _, outer := range groups {
		for _, inner := range groups {
			if inner != outer && parse.Within(inner.loop, outer.loop.Body) {
				out[outer], out[inner] = true, true
				c.refNote(inner.loop, CodeRefPileUp, "%s: no bam::array_ref for %s: this loop scans it inside another loop that scans it too; "+
					"two refs would pin two lines of %s per thread", fn.Name, inner.name(fn), inner.name(fn))
			}
		}
	}
	return out
}

// oneStream: every scanning read in the loop must stay near one position
// (p[i - 1], p[i], p[i + 1]); two streams (p[i], p[i + n]) would make the
// one ref switch lines on every access.
func (c *refStage) oneStream(fn *parse.FuncDecl, g *refArray) bool {
	first := g.scans[0]
	for _, s := range g.scans[1:] {
		if s.stream != first.stream || abs64(s.offset-first.offset) > maxRefStride {
			c.refNote(s.acc.node, CodeRefPileUp, "%s: no bam::array_ref for %s in this loop: it reads %s and %s, two positions "+
				"apart; one ref holds one line per thread and would switch lines on every access", fn.Name, g.name(fn),
				oneLine(c.text(first.acc.node)), oneLine(c.text(s.acc.node)))
			return false
		}
	}
	return true
}

// directReads: reads inside a lambda, or the array passed to a helper
// inside the loop, would not go through the ref (and a helper may pin
// lines of its own while the ref holds one).
func (c *refStage) directReads(fn *parse.FuncDecl, g *refArray) bool {
	for _, s := range g.scans {
		for _, p := range s.acc.parents {
			if lam, ok := p.(*parse.LambdaExpr); ok {
				c.refNote(lam, CodeRefIndirect, "%s: no bam::array_ref for %s: it is read inside this lambda", fn.Name, g.name(fn))
				return false
			}
		}
	}
	for _, hc := range c.analyzeParam(fn, g.idx).calls {
		if parse.Within(hc.call, g.loop) {
			c.refNote(hc.call, CodeRefIndirect, "%s: no bam::array_ref for %s in this loop: it is passed to helper %s here",
				fn.Name, g.name(fn), hc.callee.Name)
			return false
		}
	}
	return true
}

// refLoopOK applies the rules about the loop: the refs let their lines go
// before every barrier or warp intrinsic in it (or the loop gets none),
// and bamgen can open a block around it. Arrays whose ref name is taken
// are dropped from the loop.
func (c *refStage) refLoopOK(l *refLoop) bool {
	if !c.planDrops(l) {
		return false
	}
	if n, why := c.blockBlocker(l); n != nil {
		c.refNote(n, CodeRefScope, "%s: no bam::array_ref for %s in this loop: %s", l.fn.Name, l.names(), why)
		return false
	}
	l.arrays = c.freeRefNames(l)
	return len(l.arrays) > 0
}

func (l *refLoop) names() string {
	var out []string
	for _, a := range l.arrays {
		out = append(out, a.name(l.fn))
	}
	return strings.Join(out, ", ")
}

// blockBlocker says why bamgen cannot wrap the loop in a block: a jump
// into the loop (a label, or a case of a switch outside it) would skip the
// refs' construction, which C++ forbids; a preprocessor line (#pragma
// unroll) right before the loop must stay next to it.
func (c *refStage) blockBlocker(l *refLoop) (parse.Node, string) {
	var found parse.Node
	why := ""
	parse.WithStack(l.loop, func(x parse.Node, parents []parse.Node) bool {
		switch s := x.(type) {
		case *parse.LabeledStmt:
			found, why = s, "label "+s.Label+" inside it could be jumped to past the refs' declarations"
		case *parse.CaseStmt:
			if !hasSwitch(parents) {
				found, why = s, "a case label of a switch around it lies inside it"
			}
		}
		return found == nil
	})
	if found != nil {
		return found, why
	}
	if d := c.directiveBefore(l.loop); d != nil {
		return d, "the preprocessor line before it (" + oneLine(c.text(d)) + ") must stay right before the loop"
	}
	return nil, ""
}

func hasSwitch(parents []parse.Node) bool {
	for _, p := range parents {
		if _, ok := p.(*parse.SwitchStmt); ok {
			return true
		}
	}
	return false
}

// directiveBefore returns a preprocessor line between the loop and the
// token before it, or nil.
func (c *refStage) directiveBefore(loop parse.Node) parse.Node {
	toks := c.file.Tokens
	for i := c.firstToken(loop.Pos()) - 1; i >= 0 && toks[i].Kind.IsTrivia(); i-- {
		if toks[i].Kind == parse.Directive {
			return spanOf(toks[i])
		}
	}
	return nil
}

// freeRefNames drops arrays whose NAME_ref is already a name in the kernel
// or a macro (the ref would hide it or clash with it), or whose name does
// not mean the parameter where the block opens.
func (c *refStage) freeRefNames(l *refLoop) []*refArray {
	var out []*refArray
	for _, a := range l.arrays {
		name, ref := a.name(l.fn), a.name(l.fn)+"_ref"
		sym := l.fn.Scope.Lookup(name, l.loop.Pos())
		switch {
		case c.macros[ref] != nil || c.identInFunc(l.fn, ref):
			c.refNote(l.loop, CodeRefScope, "%s: no bam::array_ref for %s in this loop: the name %s is already used in the kernel", l.fn.Name, name, ref)
		case sym == nil || sym.Decl != parse.Node(l.fn.Params[a.idx]):
			c.refNote(l.loop, CodeRefScope, "%s: no bam::array_ref for %s in this loop: a local variable hides the parameter here", l.fn.Name, name)
		default:
			out = append(out, a)
		}
	}
	return out
}

// identInFunc reports whether name occurs as an identifier token in fn.
func (c *refStage) identInFunc(fn *parse.FuncDecl, name string) bool {
	toks := c.file.Tokens
	for i := c.firstToken(fn.Pos()); i < len(toks) && toks[i].Start < fn.End(); i++ {
		if toks[i].Kind == parse.Identifier && c.tokText(i) == name {
			return true
		}
	}
	return false
}

func (c *refStage) refNote(n parse.Node, code, format string, args ...any) {
	c.addDiagOnce(diag.Diagnostic{Pos: n.Pos(), End: n.End(), Severity: diag.Note, Code: code, Message: fmt.Sprintf(format, args...)})
}
