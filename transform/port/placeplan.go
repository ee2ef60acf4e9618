package port

import (
	"sort"
	"strings"

	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// emitPlacementPlans puts `bam_rt.plan_arrays(BYTES, ...);` before the first
// array a host function makes, with the sizes of the ported buffers the
// function has allocated by then: the runtime ranks them by size against
// BAM_GPU_BUDGET, so the largest arrays are the ones that leave GPU memory
// whatever order the program makes them in (runtime-api.md, "Placement").
//
// A size is announced only where its value there is the one its array gets:
// the cudaMalloc is in the block of the first creation, its size has no side
// effects, and nothing between the cudaMalloc (or, for one after the plan,
// the plan) and both the plan and the array's own creation can change a
// variable of the size (only CUDA API calls mention them there, as value
// arguments); a size allocated after the plan must mean the same there (no
// local of its names declared in between). Arrays not announced are placed first come,
// first served with what the announced ones leave. Nothing is emitted for
// fewer than two announced sizes (nothing to rank).
func (c *portCtx) emitPlacementPlans(hp *hostPlan) {
	byFn := map[*parse.FuncDecl][]deviceVarPlan{}
	var fns []*parse.FuncDecl
	for _, p := range hp.placed {
		if byFn[p.v.fn] == nil {
			fns = append(fns, p.v.fn)
		}
		byFn[p.v.fn] = append(byFn[p.v.fn], p)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].Pos() < fns[j].Pos() })
	for _, fn := range fns {
		plans := byFn[fn]
		var first *hostOp
		for i := range plans {
			if op := plans[i].create; op.stmt != nil && (first == nil || op.stmt.Pos() < first.stmt.Pos()) {
				first = &op
			}
		}
		if first == nil || first.block == nil {
			continue
		}
		var sizes []string
		sort.SliceStable(plans, func(i, j int) bool {
			return plans[i].alloc != nil && plans[j].alloc != nil && plans[i].alloc.node.Pos() < plans[j].alloc.node.Pos()
		})
		for _, p := range plans {
			a := p.alloc
			if a == nil || a.kind != opMalloc || a.stmt == nil || a.block != first.block || a.bytes == nil ||
				p.create.stmt == nil || !parse.SideEffectFree(a.bytes) {
				continue
			}
			if a.stmt.Pos() > first.stmt.Pos() {
				// Allocated after the plan (in the same block): the plan
				// evaluates the size first, so its names must mean the same
				// there and keep their values up to the allocation and the
				// creation.
				if !sameNamesAt(fn, a.bytes, first.stmt.Pos()) ||
					c.changedBetween(fn, a.bytes, first.stmt.Pos(), max(a.stmt.End(), p.create.stmt.Pos())) {
					continue
				}
			} else if c.changedBetween(fn, a.bytes, a.stmt.End(), max(first.stmt.Pos(), p.create.stmt.Pos())) {
				// The size must keep its value up to the plan and up to the
				// array's creation, which evaluates it again.
				continue
			}
			sizes = append(sizes, oneLine(c.text(a.bytes)))
		}
		if len(sizes) < 2 {
			continue
		}
		text := templates.Render("plan_arrays", templates.Plan{RT: rtName, Sizes: sizes})
		hp.edits = append(hp.edits, c.insertBefore(first.stmt, text, HostMemory.String()))
	}
}

// sameNamesAt reports whether every name in e refers at offset pos to what
// it refers to where e is written (no local declared in between).
func sameNamesAt(fn *parse.FuncDecl, e parse.Expr, pos int) bool {
	same := true
	parse.Inspect(e, func(n parse.Node) bool {
		if id, ok := n.(*parse.Ident); ok && fn.Scope.Lookup(id.Name, id.Pos()) != fn.Scope.Lookup(id.Name, pos) {
			same = false
		}
		return same
	})
	return same
}

// changedBetween reports whether a variable of e is mentioned in fn's body
// in [from, to) other than as a value argument of a CUDA API call
// (cudaMalloc, cudaMemcpy, ... take sizes by value): it may be assigned
// there (also through a reference parameter), so e's value at to may
// differ from the one at from.
func (c *portCtx) changedBetween(fn *parse.FuncDecl, e parse.Expr, from, to int) bool {
	names := map[string]bool{}
	parse.Inspect(e, func(n parse.Node) bool {
		if id, ok := n.(*parse.Ident); ok {
			names[id.Name] = true
		}
		return true
	})
	changed := false
	parse.WithStack(fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if changed || !ok || !names[id.Name] || id.Pos() < from || id.Pos() >= to {
			return !changed
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if u, ok := parents[i].(*parse.UnaryExpr); ok && (u.Op == "&" || u.Op == "++" || u.Op == "--") {
				break
			}
			if b, ok := parents[i].(*parse.BinaryExpr); ok && strings.HasSuffix(b.Op, "=") && b.Op != "==" && b.Op != "!=" && b.Op != "<=" && b.Op != ">=" {
				break
			}
			if call, ok := parents[i].(*parse.CallExpr); ok {
				if strings.HasPrefix(parse.ShortFuncName(call.Fun), "cuda") {
					return true
				}
				break
			}
		}
		changed = true
		return false
	})
	return changed
}
