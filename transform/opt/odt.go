package opt

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// odt rewrites a CSR neighbour walk to On-demand Implicit Tiling (thesis
// §6.3.4): each warp takes one tile (one cache line of the edge array) and
// walks every vertex whose list overlaps it, starting from the first vertex
// list the runtime builds on the GPU.
//
// Legality. Tiles partition the edges, so per-edge work runs exactly once,
// but the per-vertex code around the walk runs once per tile the vertex's
// list overlaps (and not at all for empty lists). The rewrite is therefore
// legal when that code is idempotent: it reads, stores constants, and
// combines per-edge results only through flags set to constants (`found =
// 1` in the walk, `if (found) *changed = 1` after it) — the shape of BFS,
// CC and SSSP. Per-vertex sums (PageRank, SpMV) are refused.
func (r *rewriter) odt() {
	m := r.mapping
	w := analysis.FindCSRWalk(r.fn, m)
	if w == nil {
		r.refuse(CodeNotCSR, r.fn.Decl.NameSpan.Start, r.fn.Decl.NameSpan.End(),
			"odt does not apply to kernel %s: no CSR neighbour walk `for (e = rowptr[v] (+lane); e < rowptr[v+1]; e += 32 or ++e) ... edges[e]` "+
				"with v the warp id or the thread id", r.name())
		return
	}
	ok := r.checkBlockers(ODT, m.Blockers, m.StrayIndex)
	if !w.WarpForm {
		ok = r.checkBlockers(ODT, nil, nil, m.WarpSync) && ok
	}
	ok = r.odtArraysOK(w) && ok
	ok = r.odtLoopOK(w) && ok
	ok = r.odtOutsideOK(w, r.fn.Decl.Body) && ok
	ok = r.odtLaunchesOK() && ok
	ok = r.odtBlockSizeOK() && ok
	nIndex := r.vertexCountParam(w)
	if nIndex < 0 {
		r.refuse(CodeNotCSR, w.Vertex.Pos(), w.Vertex.End(),
			"odt does not apply to kernel %s: no bound check `%s < n` (or `%s >= n`) against a parameter gives the vertex count the first vertex list needs",
			r.name(), w.Vertex.Name, w.Vertex.Name)
		ok = false
	}
	if !ok || !r.odtLaunchArgsPure(w, nIndex) {
		return
	}
	r.odtEdits(w, nIndex)
	form := "warp-per-vertex"
	if !w.WarpForm {
		form = "thread-per-vertex"
	}
	r.note(r.fn.Decl.NameSpan.Start, "kernel %s: odt applied (%s walk over %s bounded by %s); each warp now takes one cache line of %s, "+
		"so line requests in flight are SM*W and the cache needs only SM*W lines", r.name(), form, w.Edges, w.RowPtr, w.Edges)
}

// odtLaunchesOK: odt adds a parameter to the kernel, so every launch of it
// must be in this file, where the port updates them.
func (r *rewriter) odtLaunchesOK() bool {
	launches := r.file.LaunchesOf(r.name())
	if len(launches) == 0 {
		r.refuse(CodeNotCSR, r.fn.Decl.NameSpan.Start, r.fn.Decl.NameSpan.End(), "odt does not apply to kernel %s: it adds a "+
			"parameter (the first vertex list) and no launch of the kernel is in this file to pass it; port the file that launches it", r.name())
		return false
	}
	for _, l := range launches {
		if l.Expr == nil {
			r.refuse(CodeNotCSR, l.Pos(), l.End(), "odt does not apply to kernel %s: it is launched through %s here, and bamgen "+
				"adds the first vertex list only to <<<>>> launches; launch it with <<<>>> to apply odt", r.name(), l.Via)
			return false
		}
		if _, explicit := l.Expr.Kernel.(*parse.TemplateIdent); r.fn.Decl.Template != nil && !explicit {
			// bam::odt_block(k, block) takes the kernel itself, and a
			// template's name alone names no function.
			r.refuse(CodeNotCSR, l.Expr.Pos(), l.Expr.End(), "odt does not apply to kernel %s: this launch deduces the template's arguments, "+
				"and odt passes the kernel itself to the runtime (bam::odt_block); name them (%s<...><<<...>>>) to apply odt", r.name(), r.name())
			return false
		}
		if len(l.Expr.Args) != len(r.fn.Decl.Params) || len(l.Expr.Config) < 2 {
			r.refuse(CodeNotCSR, l.Expr.Pos(), l.Expr.End(), "odt does not apply to kernel %s: this launch passes %d arguments "+
				"for %d parameters, so bamgen cannot add the first vertex list to it", r.name(), len(l.Expr.Args), len(r.fn.Decl.Params))
			return false
		}
	}
	return true
}

// odtBlockSizeOK: odt walks every vertex the thread id names on a launch
// of the blocks it assumes; a thread id written with a constant block size
// (`blockIdx.x * 256 + threadIdx.x`) launched with blocks of another size
// names other vertices (gaps or repeats), so odt would not be exact.
func (r *rewriter) odtBlockSizeOK() bool {
	k, ok := r.mapping.BlockSizeConst()
	if !ok {
		return true
	}
	for _, l := range r.file.LaunchesOf(r.name()) {
		if l.Expr == nil || len(l.Expr.Config) < 2 {
			continue
		}
		if b, ok := r.fn.ConstValue(l.Expr.Config[1]); ok && b != k {
			r.refuse(CodeNoThreadID, l.Expr.Config[1].Pos(), l.Expr.Config[1].End(), "odt does not apply to kernel %s: its thread id "+
				"assumes blocks of %d threads, and this launch runs blocks of %d, so the ids do not cover the vertices one by one", r.name(), k, b)
			return false
		}
	}
	return true
}

// odtLaunchArgsPure: the port evaluates a launch's offsets, vertex count,
// edge array and block expressions more than once (to find the ODT plan
// and to size the grid and block), so they must be free of side effects.
func (r *rewriter) odtLaunchArgsPure(w *analysis.CSRWalk, nIndex int) bool {
	for _, l := range r.file.LaunchesOf(r.name()) {
		exprs := []parse.Expr{l.Expr.Config[1]}
		for _, i := range []int{r.paramPos(w.RowPtr), nIndex, r.paramPos(w.Edges)} {
			exprs = append(exprs, l.Expr.Args[i])
		}
		for _, e := range exprs {
			if !r.pureQuiet(e) {
				r.refuse(CodeNotCSR, e.Pos(), e.End(), "odt does not apply to kernel %s: the port evaluates `%s` of this launch "+
					"more than once (to find the ODT plan), and it has side effects; compute it into a variable before the launch",
					r.name(), strings.TrimSpace(r.file.Parse.Text(e)))
				return false
			}
		}
	}
	return true
}

// odtArraysOK: the edge array must be a bam::array (its lines are the
// tiles). The offsets may be ported too: the runtime stages them once to
// build the first vertex list, and the walk reads them through the cache.
func (r *rewriter) odtArraysOK(w *analysis.CSRWalk) bool {
	for _, p := range r.ported.Params[r.name()] {
		if p == w.Edges {
			return true
		}
	}
	r.refuse(CodeNotPorted, w.Loop.Pos(), w.Loop.End(), "odt does not apply to kernel %s: the edge array %s is not ported; port it (--array %s:%s)",
		r.name(), w.Edges, r.name(), w.Edges)
	return false
}

// odtLoopOK: inside the walk, outer locals may only be set to constants
// (flags), and nothing may leave the walk early (a break would stop only
// this tile's part of the list).
func (r *rewriter) odtLoopOK(w *analysis.CSRWalk) bool {
	ok := true
	nested := nestedBreaks(w.Loop.Body)
	parse.Inspect(w.Loop.Body, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.BranchStmt:
			if (n.Keyword == "break" && !nested[n]) || n.Keyword == "goto" {
				r.refuse(CodeUnsafeWrites, n.Pos(), n.End(), "odt does not apply to kernel %s: `%s` leaves the neighbour walk early, "+
					"which would stop only one tile's part of the list", r.name(), n.Keyword)
				ok = false
			}
		case *parse.ReturnStmt:
			r.refuse(CodeUnsafeWrites, n.Pos(), n.End(), "odt does not apply to kernel %s: `return` inside the neighbour walk "+
				"would stop only one tile's part of the list", r.name())
			ok = false
		case *parse.BinaryExpr:
			if parse.IsAssign(n.Op) && !r.flagStore(w, n) {
				ok = false
			}
		case *parse.UnaryExpr:
			if (n.Op == "++" || n.Op == "--") && r.outerLocal(w, n.X) != "" {
				r.refuse(CodeUnsafeWrites, n.Pos(), n.End(), "odt does not apply to kernel %s: %s accumulates across the neighbour list, "+
					"and the list may be split over several tiles", r.name(), r.file.Parse.Text(n))
				ok = false
			}
		}
		return true
	})
	return ok
}

// nestedBreaks collects the breaks that belong to loops or switches nested
// inside the walk: they do not leave the walk.
func nestedBreaks(body parse.Node) map[parse.Node]bool {
	out := map[parse.Node]bool{}
	parse.Inspect(body, func(n parse.Node) bool {
		switch n.(type) {
		case *parse.ForStmt, *parse.RangeForStmt, *parse.WhileStmt, *parse.DoStmt, *parse.SwitchStmt:
			parse.Inspect(n, func(x parse.Node) bool {
				if b, ok := x.(*parse.BranchStmt); ok && b.Keyword == "break" {
					out[b] = true
				}
				return true
			})
			return false
		}
		return true
	})
	return out
}

// flagStore accepts an assignment inside the walk unless it writes an outer
// local with anything but a constant.
func (r *rewriter) flagStore(w *analysis.CSRWalk, b *parse.BinaryExpr) bool {
	name := r.outerLocal(w, b.X)
	if name == "" {
		return true // a store to memory, or to a local of the walk body
	}
	if b.Op == "=" && r.isConst(b.Y) {
		return true
	}
	r.refuse(CodeUnsafeWrites, b.Pos(), b.End(), "odt does not apply to kernel %s: %s combines values across the neighbour list of a vertex, "+
		"which odt may split over several tiles (only flags set to constants can be combined)", r.name(), r.file.Parse.Text(b))
	return false
}

// outerLocal names the local or parameter e refers to if it is declared
// outside the walk, else "".
func (r *rewriter) outerLocal(w *analysis.CSRWalk, e parse.Expr) string {
	id, ok := parse.UnparenCasts(e).(*parse.Ident)
	if !ok || r.fn.Decl.Scope == nil {
		return ""
	}
	sym := r.fn.Decl.Scope.Lookup(id.Name, id.Pos())
	if sym == nil || sym.Name == w.IVar {
		return ""
	}
	if sym.Param || sym.Decl.Pos() < w.Loop.Pos() {
		return sym.Name
	}
	return ""
}

func (r *rewriter) isConst(e parse.Expr) bool {
	if id, ok := parse.UnparenCasts(e).(*parse.Ident); ok && (id.Name == "true" || id.Name == "false") {
		return true
	}
	_, ok := r.fn.ConstValue(e)
	return ok
}

// odtOutsideOK checks every statement outside the walk: ancestors of the
// walk may only branch on pure conditions; the rest must be idempotent.
func (r *rewriter) odtOutsideOK(w *analysis.CSRWalk, s parse.Stmt) bool {
	switch s := s.(type) {
	case nil:
		return true
	case *parse.ForStmt:
		if s == w.Loop {
			return true
		}
	case *parse.BlockStmt:
		ok := true
		for _, c := range s.Stmts {
			ok = r.odtOutsideOK(w, c) && ok
		}
		return ok
	case *parse.IfStmt:
		ok := r.pure(s.Cond, s) && (s.Init == nil || r.idempotent(s.Init))
		return r.odtOutsideOK(w, s.Then) && r.odtOutsideOK(w, s.Else) && ok
	}
	if parse.Within(w.Loop, s) {
		r.refuse(CodeUnsafeWrites, s.Pos(), s.End(), "odt does not apply to kernel %s: the neighbour walk is nested in this loop or switch, "+
			"whose iterations odt cannot split into tiles", r.name())
		return false
	}
	return r.idempotent(s)
}

// idempotent: running s once per tile instead of once per vertex changes
// nothing. Pure declarations and returns, constant stores, flag votes.
func (r *rewriter) idempotent(s parse.Stmt) bool {
	switch s := s.(type) {
	case *parse.EmptyStmt, *parse.ReturnStmt:
		return true
	case *parse.DeclStmt:
		for _, v := range s.Vars {
			if v.Init != nil && !r.pure(v.Init, s) {
				return false
			}
		}
		return true
	case *parse.ExprStmt:
		return r.idempotentExpr(s.X, s)
	case *parse.BlockStmt:
		for _, c := range s.Stmts {
			if !r.idempotent(c) {
				return false
			}
		}
		return true
	case *parse.IfStmt:
		return r.pure(s.Cond, s) && r.idempotent(s.Then) && (s.Else == nil || r.idempotent(s.Else))
	}
	r.refuse(CodeUnsafeWrites, s.Pos(), s.End(), "odt does not apply to kernel %s: this per-vertex statement would run once per tile "+
		"and bamgen cannot show that is harmless", r.name())
	return false
}

// idempotentExpr accepts `x = CONST` stores, `flag = vote(flag)` and pure
// expressions; anything else is reported.
func (r *rewriter) idempotentExpr(e parse.Expr, at parse.Node) bool {
	if b, ok := parse.UnparenCasts(e).(*parse.BinaryExpr); ok && b.Op == "=" {
		if r.isConst(b.Y) && r.pureLvalue(b.X) {
			return true
		}
		if _, isLocal := parse.UnparenCasts(b.X).(*parse.Ident); isLocal && r.pure(b.Y, at) {
			return true // a local recomputed from pure values (e.g. a warp vote of a flag)
		}
	}
	if r.pureQuiet(e) {
		return true
	}
	r.refuse(CodeUnsafeWrites, at.Pos(), at.End(), "odt does not apply to kernel %s: %s would run once per tile of the vertex's list, "+
		"not once per vertex (only constant stores and flag votes are safe to repeat)", r.name(), strings.TrimSpace(r.file.Parse.Text(at)))
	return false
}

func (r *rewriter) pureLvalue(e parse.Expr) bool {
	switch x := parse.UnparenCasts(e).(type) {
	case *parse.UnaryExpr:
		return x.Op == "*" && r.pureQuiet(x.X)
	case *parse.IndexExpr:
		return r.pureQuiet(x.X) && r.pureQuiet(x.Index)
	case *parse.MemberExpr:
		return r.pureQuiet(x.X)
	}
	return false
}

// pure reports (and explains) side effects in e.
func (r *rewriter) pure(e parse.Expr, at parse.Node) bool {
	if r.pureQuiet(e) {
		return true
	}
	r.refuse(CodeUnsafeWrites, at.Pos(), at.End(), "odt does not apply to kernel %s: %s has side effects and would run once per tile",
		r.name(), strings.TrimSpace(r.file.Parse.Text(at)))
	return false
}

func (r *rewriter) pureQuiet(e parse.Expr) bool {
	ok := true
	parse.Inspect(e, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.BinaryExpr:
			ok = ok && !parse.IsAssign(n.Op)
		case *parse.UnaryExpr:
			ok = ok && n.Op != "++" && n.Op != "--"
		case *parse.CallExpr:
			ok = ok && analysis.IsPureCall(parse.CalleeName(n.Fun))
		case *parse.NewExpr, *parse.DeleteExpr, *parse.LambdaExpr, *parse.OpaqueExpr:
			ok = false
		}
		return ok
	})
	return ok
}

// vertexCountParam finds the parameter bounding the vertex id (`v < n`,
// `v >= n`, `n > v`) and returns its index, or -1.
func (r *rewriter) vertexCountParam(w *analysis.CSRWalk) int {
	idx := -1
	parse.Inspect(r.fn.Decl.Body, func(n parse.Node) bool {
		b, ok := n.(*parse.BinaryExpr)
		if !ok || idx >= 0 {
			return idx < 0
		}
		x, y := b.X, b.Y
		switch b.Op {
		case ">", "<=":
			x, y = y, x
		case "<", ">=":
		default:
			return true
		}
		if id, ok := parse.UnparenCasts(x).(*parse.Ident); ok && id.Name == w.Vertex.Name {
			idx = r.paramIndex(y)
		}
		return true
	})
	return idx
}

func (r *rewriter) paramIndex(e parse.Expr) int {
	id, ok := parse.UnparenCasts(e).(*parse.Ident)
	if !ok {
		return -1
	}
	for i, p := range r.fn.Decl.Params {
		if p.Name == id.Name && !p.Type.IsPointer() {
			return i
		}
	}
	return -1
}

// odtEdits wraps the body, clamps the walk to the tile, and threads the
// first vertex list from every launch site into the kernel.
func (r *rewriter) odtEdits(w *analysis.CSRWalk, nIndex int) {
	reads, hidden := r.tileReadsAndHidden(w)
	if len(reads) == 0 && hidden > 0 {
		r.hiddenWalk = w.Loop.Pos()
	}
	var open []codeLine
	if len(reads) > 0 {
		open = append(open, codeLine{0, fmt.Sprintf("bam::odt_tile bam_tile(%s);", w.Edges)})
	}
	open = append(open, codeLine{0, "auto bam_body = [&](const unsigned long long bam_v, const unsigned long long bam_lo, " +
		"const unsigned long long bam_hi) {"})
	r.redefineVertex(w)
	r.clampWalk(w)
	close := []codeLine{{0, "};"}}
	driver := fmt.Sprintf("bam::odt_for_each_tile(bam_plan, %s, %s.size(), %s.elems_per_line(), bam_body);", w.RowPtr, w.Edges, w.Edges)
	if len(reads) > 0 {
		// The walk's reads of the edge array go through the tile view: one
		// pin per tile instead of a cache probe per vertex.
		for _, ix := range reads {
			r.edit(ix.X.Pos(), ix.X.End(), "bam_tile", ODT)
		}
		driver = fmt.Sprintf("bam::odt_for_each_tile(bam_plan, %s, bam_tile, bam_body);", w.RowPtr)
		if decl, cond := r.vertexGuard(w); cond != "" {
			// The driver tests the guard for 32 candidate vertices at once
			// and runs the body only where it holds (the body still tests it).
			close = append(close,
				codeLine{0, "auto bam_active = [&](const unsigned long long bam_v) -> bool {"},
				codeLine{1, decl},
				codeLine{1, "return " + cond + ";"},
				codeLine{0, "};"})
			driver = fmt.Sprintf("bam::odt_for_each_tile(bam_plan, %s, bam_tile, bam_body, bam_active);", w.RowPtr)
		}
	}
	r.wrapBody(open, append(close, codeLine{0, driver}), ODT)
	ps := r.fn.Decl.ParamsSpan
	r.edit(ps.End()-1, ps.End()-1, ", const bam::odt_plan bam_plan", ODT)
	r.threadPlan(w, nIndex)
}

// tileReads lists the walk's reads `edges[e]` of the edge array at the loop
// variable: after clampWalk, e lies in the warp's tile, so they can read it
// through bam::odt_tile. None when the body changes e (it could leave the
// tile); writes, address-taken elements and accesses the port already
// rewrote (--ref) stay as they are.
func (r *rewriter) tileReads(w *analysis.CSRWalk) []*parse.IndexExpr {
	reads, _ := r.tileReadsAndHidden(w)
	return reads
}

// tileReadsAndHidden is tileReads, and how many such reads the port had
// already rewritten (--ref gave the edge array an array_ref): the pipeline
// plans again without that ref (port.Options.TileViews) so that the walk
// reads its tile through the view.
func (r *rewriter) tileReadsAndHidden(w *analysis.CSRWalk) ([]*parse.IndexExpr, int) {
	if r.fn.Decl.Scope == nil || r.changesVar(w.Loop.Body, w.IVar) {
		return nil, 0
	}
	hidden := 0
	loopVar := r.fn.Decl.Scope.Lookup(w.IVar, w.Loop.Cond.Pos())
	edges := r.fn.Decl.Scope.Lookup(w.Edges, w.Loop.Pos())
	lvalues := lvalueIndexes(w.Loop.Body)
	var out []*parse.IndexExpr
	parse.Inspect(w.Loop.Body, func(n parse.Node) bool {
		ix, ok := n.(*parse.IndexExpr)
		if !ok || lvalues[ix] {
			return true
		}
		arr, okA := parse.UnparenCasts(ix.X).(*parse.Ident)
		idx, okI := parse.UnparenCasts(ix.Index).(*parse.Ident)
		if !okA || !okI || arr.Name != w.Edges || idx.Name != w.IVar ||
			r.fn.Decl.Scope.Lookup(arr.Name, arr.Pos()) != edges || r.fn.Decl.Scope.Lookup(idx.Name, idx.Pos()) != loopVar {
			return true
		}
		if edit.Touches(r.ported.Edited, ix.Pos(), ix.End()) {
			hidden++
			return true
		}
		out = append(out, ix)
		return true
	})
	return out, hidden
}

// changesVar reports an assignment, increment or address-of of name in n.
func (r *rewriter) changesVar(n parse.Node, name string) bool {
	isVar := func(e parse.Expr) bool {
		id, ok := parse.UnparenCasts(e).(*parse.Ident)
		return ok && id.Name == name
	}
	found := false
	parse.Inspect(n, func(x parse.Node) bool {
		switch x := x.(type) {
		case *parse.BinaryExpr:
			found = found || parse.IsAssign(x.Op) && isVar(x.X)
		case *parse.UnaryExpr:
			found = found || (x.Op == "++" || x.Op == "--" || x.Op == "&") && isVar(x.X)
		}
		return !found
	})
	return found
}

// lvalueIndexes collects the subscripts that are written or whose address
// is taken: the target of an assignment, increment or `&`, through member
// accesses and parentheses (`a[i].x = 1`).
func lvalueIndexes(n parse.Node) map[*parse.IndexExpr]bool {
	out := map[*parse.IndexExpr]bool{}
	mark := func(e parse.Expr) {
		for e != nil {
			switch x := e.(type) {
			case *parse.ParenExpr:
				e = x.X
			case *parse.MemberExpr:
				e = x.X
			case *parse.IndexExpr:
				out[x] = true
				e = x.X
			default:
				return
			}
		}
	}
	parse.Inspect(n, func(x parse.Node) bool {
		switch x := x.(type) {
		case *parse.BinaryExpr:
			if parse.IsAssign(x.Op) {
				mark(x.X)
			}
		case *parse.UnaryExpr:
			if x.Op == "++" || x.Op == "--" || x.Op == "&" {
				mark(x.X)
			}
		}
		return true
	})
	return out
}

// redefineVertex makes the per-vertex code see the tile's vertex.
func (r *rewriter) redefineVertex(w *analysis.CSRWalk) {
	m := r.mapping
	switch {
	case !w.WarpForm:
		r.replaceInit(w.Vertex, "bam_v", ODT)
	case m.Tid != nil && mentions(m.Warp.Init, m.Tid.Name):
		r.replaceInit(m.Tid, "bam_v * 32ull + bam::lane_id()", ODT)
	case m.Tid != nil:
		r.replaceInit(m.Tid, "bam_v * 32ull + bam::lane_id()", ODT)
		r.replaceInit(m.Warp, "bam_v", ODT)
	default:
		r.replaceInit(m.Warp, "bam_v", ODT)
	}
}

// clampWalk limits the neighbour walk to the tile [bam_lo, bam_hi).
func (r *rewriter) clampWalk(w *analysis.CSRWalk) {
	src := r.file.Parse
	first := fmt.Sprintf("bam::odt_first_lane(%s, bam_lo)", src.Text(w.Init))
	if w.WarpForm {
		step := src.Text(w.Loop.Post.(*parse.BinaryExpr).Y)
		first = fmt.Sprintf("bam::odt_first_strided(%s, bam_lo, %s)", src.Text(w.Init), step)
	} else {
		r.edit(w.Loop.Post.Pos(), w.Loop.Post.End(), w.IVar+" += 32", ODT)
	}
	r.edit(w.Init.Pos(), w.Init.End(), r.loopVarConversion(w, first), ODT)
	r.edit(w.Loop.Cond.Pos(), w.Loop.Cond.End(), fmt.Sprintf("(%s) && %s < bam_hi", src.Text(w.Loop.Cond), w.IVar), ODT)
}

// loopVarConversion converts the clamped start to the loop variable's type.
func (r *rewriter) loopVarConversion(w *analysis.CSRWalk, value string) string {
	if ds, ok := w.Loop.Init.(*parse.DeclStmt); ok {
		return r.convertTo(ds.Vars[0], w.Init, value)
	}
	return fmt.Sprintf("static_cast<decltype(%s)>(%s)", w.IVar, value)
}

// threadPlan adds the ODT plan (first vertex list and work items; the
// runtime builds it once per offsets and edge array, and caches it) to each
// launch of the kernel, sizes the grid by it (a warp per work item), and
// lets the runtime shrink the block if the ported kernel cannot run the
// original one (bam::odt_block).
func (r *rewriter) threadPlan(w *analysis.CSRWalk, nIndex int) {
	rowIdx, edgeIdx := r.paramPos(w.RowPtr), r.paramPos(w.Edges)
	src := r.file.Parse
	for _, l := range r.file.LaunchesOf(r.name()) {
		arg := func(i int) string { return r.launchArg(l.Expr, i) }
		grid, block := l.Expr.Config[0], l.Expr.Config[1]
		plan := fmt.Sprintf("bam::odt_plan_of(%s, %s, %s)", arg(rowIdx), arg(nIndex), arg(edgeIdx))
		r.edit(grid.Pos(), grid.End(), fmt.Sprintf("bam::odt_grid(%s, %s)", plan, src.Text(block)), ODT)
		r.edit(block.Pos(), block.End(), fmt.Sprintf("bam::odt_block(%s, %s)", src.Text(l.Expr.Kernel), src.Text(block)), ODT)
		r.edit(l.Expr.Rparen, l.Expr.Rparen, ", "+plan, ODT)
	}
}

func (r *rewriter) paramPos(name string) int {
	for i, p := range r.fn.Decl.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// launchArg is the text argument i will have after the port.
func (r *rewriter) launchArg(l *parse.LaunchExpr, i int) string {
	if args, ok := r.ported.LaunchArgs[l]; ok {
		return args[i]
	}
	return r.file.Parse.Text(l.Args[i])
}

// vertexGuard returns a predicate on bam_v the driver can test before
// running a vertex's code: the vertex's declaration from bam_v and the
// condition, or "" when there is none. It is the
// conjunction of the checks the body makes on its way to the walk: early
// returns (`if (v >= n || level[v] != cur) return;`, as `!(...)`) and the
// condition of an `if` that holds the walk (`if (v < n && label[v] ==
// level)`), taken from the body's leading statements as long as those are
// free of side effects (declarations, such checks). A check that names
// another local cannot be tested without the body and is left out; the
// predicate is then weaker, still false only where the body does nothing.
// A BFS level kernel thus skips the vertices outside the frontier 32 at a
// time instead of entering each one.
//
// Testing the checks earlier than the body would is one of the orders the
// original kernel allows (its warps run in any order), and the body tests
// them again.
func (r *rewriter) vertexGuard(w *analysis.CSRWalk) (decl, cond string) {
	vt := w.Vertex.Type
	if w.WarpForm && w.Vertex != r.mapping.Warp {
		return "", "" // the vertex is not bam_v itself
	}
	if r.fn.Decl.Scope == nil || vt == nil || strings.Contains(vt.Text, "auto") || strings.ContainsAny(vt.Text, "&[") {
		return "", ""
	}
	src := r.file.Parse
	var checks []string
	add := func(format string, cond parse.Expr) {
		if r.namesOnly(cond, w.Vertex) {
			checks = append(checks, fmt.Sprintf(format, src.Text(cond)))
		}
	}
scan:
	for _, st := range r.fn.Decl.Body.Stmts {
		switch x := st.(type) {
		case *parse.DeclStmt:
			if x.Record != nil || !r.pureDecls(x) {
				break scan
			}
		case *parse.IfStmt:
			if x.Init != nil || x.Else != nil || !r.pureQuiet(x.Cond) {
				break scan
			}
			if parse.Within(w.Loop, x.Then) {
				add("(%s)", x.Cond)
				break scan
			}
			if !isBareReturn(x.Then) {
				break scan
			}
			add("!(%s)", x.Cond)
		default:
			break scan
		}
	}
	if len(checks) == 0 {
		return "", ""
	}
	return fmt.Sprintf("%s %s = static_cast<%s>(bam_v);", vt.Text, w.Vertex.Name, strings.TrimPrefix(vt.Text, "const ")), strings.Join(checks, " && ")
}

// pureDecls: every initializer of the declaration is side-effect free.
func (r *rewriter) pureDecls(d *parse.DeclStmt) bool {
	for _, v := range d.Vars {
		if v.Init != nil && !r.pureQuiet(v.Init) {
			return false
		}
	}
	return true
}

// isBareReturn: `return;` or `{ return; }`.
func isBareReturn(s parse.Stmt) bool {
	if b, ok := s.(*parse.BlockStmt); ok && len(b.Stmts) == 1 {
		s = b.Stmts[0]
	}
	ret, ok := s.(*parse.ReturnStmt)
	return ok && ret.X == nil
}

// namesOnly: every local e names is v (parameters, globals and macros are
// fine), so e means the same inside bam_active as in the body.
func (r *rewriter) namesOnly(e parse.Expr, v *parse.VarDecl) bool {
	ok := true
	parse.Inspect(e, func(n parse.Node) bool {
		if id, isID := n.(*parse.Ident); isID {
			if sym := r.fn.Decl.Scope.Lookup(id.Name, id.Pos()); sym != nil && !sym.Param && sym.Decl != parse.Node(v) {
				ok = false
			}
		}
		return ok
	})
	return ok
}
