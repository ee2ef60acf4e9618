package port

import (
	"fmt"
	"sort"

	"github.com/bamgen/bamgen/parse"
)

// helperPlan says how one __device__ helper is ported. A helper that only
// ever receives bam::arrays (in the same parameters) is ported in place;
// one that is also called with plain pointers (or from host code) is
// cloned under a new name and only the calls passing arrays use the clone.
type helperPlan struct {
	fn    *parse.FuncDecl
	sets  [][]int // distinct sets of parameters that receive arrays
	plain bool    // also called with plain pointers: clone instead of editing
}

// name is the ported variant's name.
func (h *helperPlan) name() string {
	if h.plain {
		return h.fn.Name + "_bam"
	}
	return h.fn.Name
}

// portedCall is a call in a ported body that passes arrays to a helper.
type portedCall struct {
	call   *parse.CallExpr
	callee *parse.FuncDecl
	args   []int
}

// planHelpers propagates arrays from ported kernels into helpers (to a
// fixpoint: helpers call helpers), then finds helpers that must be cloned.
func (c *portCtx) planHelpers() {
	c.helpers = map[*parse.FuncDecl]*helperPlan{}
	type context struct {
		fn  *parse.FuncDecl
		set []int
	}
	var work []context
	for _, k := range c.kernels() {
		if ps := c.ported[k]; len(ps) > 0 {
			work = append(work, context{k, ps})
		}
	}
	for len(work) > 0 {
		ctx := work[0]
		work = work[1:]
		for _, pc := range c.portedCalls(ctx.fn, ctx.set) {
			h := c.helperFor(pc.callee)
			if !containsSet(h.sets, pc.args) {
				h.sets = append(h.sets, pc.args)
				work = append(work, context{pc.callee, pc.args})
			}
		}
	}
	c.markPlainCalls()
}

func (c *portCtx) helperFor(fn *parse.FuncDecl) *helperPlan {
	h := c.helpers[fn]
	if h == nil {
		h = &helperPlan{fn: fn}
		c.helpers[fn] = h
	}
	return h
}

func containsSet(sets [][]int, s []int) bool {
	for _, t := range sets {
		if setKey(t) == setKey(s) {
			return true
		}
	}
	return false
}

// portedCalls lists the calls in fn's ported variant (parameters set
// ported) that pass arrays on, grouped per call, in source order.
func (c *portCtx) portedCalls(fn *parse.FuncDecl, set []int) []portedCall {
	byCall := map[*parse.CallExpr]map[int]bool{}
	callee := map[*parse.CallExpr]*parse.FuncDecl{}
	for _, idx := range set {
		for _, hc := range c.analyzeParam(fn, idx).calls {
			if byCall[hc.call] == nil {
				byCall[hc.call] = map[int]bool{}
			}
			byCall[hc.call][hc.arg] = true
			callee[hc.call] = hc.callee
		}
	}
	out := make([]portedCall, 0, len(byCall))
	for call, args := range byCall {
		out = append(out, portedCall{call: call, callee: callee[call], args: sortedInts(args)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].call.Pos() < out[j].call.Pos() })
	return out
}

// markPlainCalls finds helpers that are also reached without arrays: from
// any body that stays as it is, or by a call in a ported body that passes
// no array. Those are cloned. Iterated because marking a helper plain
// makes its original body live, and its calls plain too.
func (c *portCtx) markPlainCalls() {
	for changed := true; changed; {
		changed = false
		for _, fn := range c.funcs {
			if fn.Body == nil {
				continue
			}
			if c.hasOriginalBody(fn) {
				changed = c.markRefs(fn, nil) || changed
			}
			if set := c.portedSet(fn); len(set) > 0 {
				changed = c.markRefs(fn, c.portedCalls(fn, set)) || changed
			}
		}
	}
}

// hasOriginalBody reports whether fn's unported body stays in the output.
func (c *portCtx) hasOriginalBody(fn *parse.FuncDecl) bool {
	if len(c.ported[fn]) > 0 {
		return false
	}
	h := c.helpers[fn]
	return h == nil || h.plain || len(h.sets) == 0
}

// markRefs marks as plain every helper referenced in fn's body other than
// by the given array-passing calls. It reports whether anything changed.
func (c *portCtx) markRefs(fn *parse.FuncDecl, passing []portedCall) bool {
	skip := map[parse.Node]bool{}
	for _, pc := range passing {
		skip[pc.call.Fun] = true
	}
	changed := false
	parse.WithStack(fn.Body, func(n parse.Node, _ []parse.Node) bool {
		if skip[n] {
			return false
		}
		name := ""
		switch v := n.(type) {
		case *parse.Ident:
			name = parse.LastName(v.Name)
		case *parse.TemplateIdent:
			name = parse.LastName(v.Name)
		default:
			return true
		}
		for _, d := range c.deviceDefs(name) {
			if h := c.helpers[d]; h != nil && len(h.sets) > 0 && !h.plain && d != fn {
				h.plain, changed = true, true
			}
		}
		return true
	})
	return changed
}

// helperConflicts refuses kernels whose arrays would need two different
// ports of one helper (different parameters receive arrays in different
// calls); bamgen makes at most one ported variant of a helper.
func (c *portCtx) helperConflicts() []drop {
	var drops []drop
	for _, fn := range c.funcs {
		h := c.helpers[fn]
		if h == nil || len(h.sets) < 2 {
			continue
		}
		for _, k := range c.kernels() {
			for _, idx := range c.ported[k] {
				if c.reaches(paramKey{k, idx}, fn, map[paramKey]bool{}) {
					why := fmt.Sprintf("%s: %s reaches helper %s, which is called with arrays in different parameters; bamgen ports a helper one way only",
						k.Name, k.Params[idx].Name, fn.Name)
					drops = append(drops, drop{paramKey{k, idx}, why})
					c.addDiagOnce(diagAt(fn.NameSpan, CodeHelperConflict, why))
				}
			}
		}
	}
	return drops
}

// reaches reports whether the array of key is passed (transitively) to target.
func (c *portCtx) reaches(key paramKey, target *parse.FuncDecl, seen map[paramKey]bool) bool {
	if seen[key] {
		return false
	}
	seen[key] = true
	for _, hc := range c.analyzeParam(key.fn, key.idx).calls {
		if hc.callee == target || c.reaches(paramKey{hc.callee, hc.arg}, target, seen) {
			return true
		}
	}
	return false
}
