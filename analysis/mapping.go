package analysis

import (
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// Mapping is how a kernel maps threads to work: the local variables that
// hold the global thread id, the warp id and the lane id, and the
// statements that tie one thread to another (which forbid remapping work
// between threads). The access-pattern rewrites are legal only when every
// thread-dependent value flows from these variables.
type Mapping struct {
	Tid  *parse.VarDecl // `i = blockIdx.x * blockDim.x + threadIdx.x`
	Warp *parse.VarDecl // `w = tid / 32` (or >> 5)
	Lane *parse.VarDecl // `l = tid % 32` (or & 31, or threadIdx.x % 32)

	// Blockers are constructs that make the work of one thread depend on
	// another thread or on the physical thread layout.
	Blockers []Blocker
	// WarpSync lists warp-level intrinsics: legal when a whole warp moves
	// together (transpose, coarsen), not when lanes are remapped (claware).
	WarpSync []Blocker
	// StrayIndex lists uses of threadIdx/blockIdx outside the id variables.
	StrayIndex []Blocker
	// GridStride: the thread id is a grid-stride loop variable.
	GridStride bool
	// TidUses counts uses of the thread-id variable other than deriving the
	// warp and lane ids.
	TidUses int
	// Unsure lists what made the thread mapping unreadable: a local derived
	// from the thread id by an operand bamgen cannot evaluate (`tid >>
	// WARP_SHIFT` with the macro unknown). No rewrite may be chosen then.
	Unsure []Blocker

	env          *idEnv
	parts        map[string]IDPart // locals the thread id is written through
	tidCanonical bool
	tidPoly      poly
}

// Blocker is a statement or expression that prevents a rewrite.
type Blocker struct {
	Pos, End int
	Reason   string
}

// KernelMapping analyses fn (a kernel with a body).
func KernelMapping(fn *Function) *Mapping {
	m := &Mapping{}
	body := fn.Decl.Body
	if body == nil {
		return m
	}
	m.findIndexVars(fn)
	m.findBlockers(body)
	m.findStrayIndex(body)
	return m
}

// findIndexVars looks at each local with a single definition.
func (m *Mapping) findIndexVars(fn *Function) {
	counts, strides := defCounts(fn), gridStrides(fn)
	m.env = &idEnv{fn: fn.Decl, macros: fn.macros, parts: map[string]parse.Expr{}}
	candidates := map[string]*parse.VarDecl{}
	parse.Inspect(fn.Decl.Body, func(n parse.Node) bool {
		if v, ok := n.(*parse.VarDecl); ok && v.Init != nil && counts[v.Name] == 1 && m.env.idPartCandidate(initValue(v.Init)) {
			if _, dup := candidates[v.Name]; !dup {
				candidates[v.Name] = v
				m.env.parts[v.Name] = initValue(v.Init)
			}
		}
		return true
	})
	parse.Inspect(fn.Decl.Body, func(n parse.Node) bool {
		v, ok := n.(*parse.VarDecl)
		if !ok || v.Init == nil {
			return true
		}
		init := initValue(v.Init)
		if m.Tid == nil && counts[v.Name] == 1+strides[v.Name] {
			if p, ok := m.env.idPoly(init); ok && isThreadID(p) {
				m.Tid, m.GridStride, m.tidCanonical, m.tidPoly = v, strides[v.Name] > 0, isCanonicalID(p), p
				m.parts = map[string]IDPart{}
				m.collectParts(init, candidates)
				return true
			}
		}
		if counts[v.Name] != 1 {
			return true
		}
		switch {
		case m.Warp == nil && m.derivesFromTid(init, "/", ">>", fn.macros):
			m.Warp = v
		case m.Lane == nil && (m.derivesFromTid(init, "%", "&", fn.macros) || isThreadIdxLane(init, fn.macros)):
			m.Lane = v
		default:
			m.checkUnsure(v, init, fn.macros)
		}
		return true
	})
	if m.Tid != nil {
		m.TidUses = m.countTidUses(fn.Decl.Body)
	}
}

// collectParts records the locals e (the thread id's initialiser) is
// written through, transitively.
func (m *Mapping) collectParts(e parse.Expr, candidates map[string]*parse.VarDecl) {
	parse.Inspect(e, func(n parse.Node) bool {
		if id, ok := n.(*parse.Ident); ok {
			if v, ok := candidates[id.Name]; ok && v != m.Tid {
				if _, seen := m.parts[id.Name]; !seen {
					m.parts[id.Name] = IDPart{Decl: v}
					m.collectParts(initValue(v.Init), candidates)
				}
			}
		}
		return true
	})
}

// PartInit returns the initialiser of the local name when the thread id is
// written through it (`bx = blockIdx.x`), else nil.
func (m *Mapping) PartInit(name string) parse.Expr {
	if p, ok := m.parts[name]; ok {
		return initValue(p.Decl.Init)
	}
	return nil
}

// checkUnsure records a local derived from the thread id by a division,
// shift or mask whose operand does not fold to a constant: it may be a
// warp or lane id bamgen cannot see, so the kernel's shape is unknown.
func (m *Mapping) checkUnsure(v *parse.VarDecl, init parse.Expr, macros map[string]string) {
	b, ok := parse.UnparenCasts(init).(*parse.BinaryExpr)
	if !ok || (b.Op != "/" && b.Op != ">>" && b.Op != "%" && b.Op != "&") {
		return
	}
	if !m.isTidExpr(b.X) && !isThreadIdxX(b.X) {
		return
	}
	if _, ok := foldConst(b.Y, macros, 0); ok || isWarpSizeName(b.Y) {
		return
	}
	m.Unsure = append(m.Unsure, Blocker{v.Pos(), v.End(), "derives " + v.Name + " from the thread id by " + b.Op +
		" an operand bamgen cannot evaluate (a macro not defined in this file or a local header?), so it cannot tell a warp or lane id"})
}

func isThreadIdxX(e parse.Expr) bool { return parse.IsBuiltinX(e, "threadIdx") }

// gridStrides counts, per local, the `x += uniform` steps of grid-stride
// loops: a thread id advanced that way still names one virtual thread.
func gridStrides(fn *Function) map[string]int {
	out := map[string]int{}
	for _, d := range collectDefs(fn.Decl, fn.refs) {
		if d.op == "+=" && fn.ShapeOf(d.rhs).Form == Uniform {
			out[d.sym.Name]++
		}
	}
	return out
}

// Definitions counts the definitions (initialisers and assignments) of the
// local `name`: a value defined once keeps its initialiser's meaning.
func (fn *Function) Definitions(name string) int { return defCounts(fn)[name] }

// defCounts counts the definitions (initialisers and assignments) of each
// local name; index variables must be defined exactly once.
func defCounts(fn *Function) map[string]int {
	counts := map[string]int{}
	for _, d := range collectDefs(fn.Decl, fn.refs) {
		counts[d.sym.Name]++
	}
	return counts
}

// derivesFromTid matches `tid OP 32` (or the shift/mask equivalent) where
// tid is the thread-id variable or the thread-id expression itself.
func (m *Mapping) derivesFromTid(e parse.Expr, divOp, shiftOp string, macros map[string]string) bool {
	b, ok := parse.UnparenCasts(e).(*parse.BinaryExpr)
	if !ok || (b.Op != divOp && b.Op != shiftOp) || !m.isTidExpr(b.X) {
		return false
	}
	return isWarpOperand(b, macros)
}

func (m *Mapping) isTidExpr(e parse.Expr) bool {
	if id, ok := parse.UnparenCasts(e).(*parse.Ident); ok && m.Tid != nil {
		return id.Name == m.Tid.Name
	}
	if m.env == nil {
		return false
	}
	p, ok := m.env.idPoly(e)
	return ok && isThreadID(p)
}

// isThreadIdxLane matches threadIdx.x % 32 and threadIdx.x & 31: the lane
// id whenever blocks are whole warps (the rewrites check that at run time).
func isThreadIdxLane(e parse.Expr, macros map[string]string) bool {
	b, ok := parse.UnparenCasts(e).(*parse.BinaryExpr)
	if !ok || !parse.IsBuiltinX(b.X, "threadIdx") {
		return false
	}
	return (b.Op == "%" || b.Op == "&") && isWarpOperand(b, macros)
}

// countTidUses counts reads of the thread-id variable outside the warp and
// lane definitions.
func (m *Mapping) countTidUses(body parse.Node) int {
	n := 0
	parse.Inspect(body, func(x parse.Node) bool {
		if x == m.Warp || x == m.Lane || x == m.Tid {
			return false
		}
		if id, ok := x.(*parse.Ident); ok && id.Name == m.Tid.Name {
			n++
		}
		return true
	})
	return n
}

// findBlockers records barriers, shared memory, spin-waits and inline asm.
func (m *Mapping) findBlockers(body parse.Node) {
	parse.Inspect(body, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.CallExpr:
			m.classifyCall(n)
		case *parse.VarDecl:
			if hasSpecifier(n.Specifiers, "__shared__") {
				m.block(n, "declares __shared__ memory, which threads of a block share")
			}
		case *parse.OpaqueStmt:
			if strings.Contains(n.Reason, "asm") {
				m.block(n, "contains inline assembly")
			} else {
				m.block(n, "contains a statement bamgen could not parse")
			}
		case *parse.WhileStmt:
			if WaitsOnOthers(n.Cond) {
				m.block(n, "spin-waits on memory other threads write")
			}
		case *parse.DoStmt:
			if WaitsOnOthers(n.Cond) {
				m.block(n, "spin-waits on memory other threads write")
			}
		}
		return true
	})
}

func (m *Mapping) classifyCall(c *parse.CallExpr) {
	switch kind, reason := SyncCall(parse.CalleeName(c.Fun)); kind {
	case SyncBarrier:
		m.block(c, reason)
	case SyncWarp:
		m.WarpSync = append(m.WarpSync, Blocker{c.Pos(), c.End(), reason})
	}
}

// Kinds of synchronising calls (SyncCall).
const (
	SyncNone    = iota
	SyncBarrier // waits for, or orders against, the other threads of a block (or grid)
	SyncWarp    // exchanges values between the lanes of a warp
)

// SyncCall classifies a call by the callee's name: a barrier, cooperative
// groups, a warp-level intrinsic, or none; reason completes "this
// statement ...". The access-pattern rewrites and the port's array_ref
// rule share it, so both refuse the same calls.
func SyncCall(name string) (kind int, reason string) {
	switch {
	case name == "__syncthreads" || strings.HasPrefix(name, "__syncthreads_") || name == "sync" || name == "__threadfence_block":
		return SyncBarrier, "calls " + name + ", a barrier across the threads of a block"
	case name == "this_grid" || name == "grid_group" || name == "this_thread_block":
		return SyncBarrier, "uses cooperative groups (" + name + ")"
	case strings.HasPrefix(name, "__shfl") || strings.HasPrefix(name, "__ballot") || strings.HasPrefix(name, "__any") ||
		strings.HasPrefix(name, "__all") || name == "__activemask" || strings.HasPrefix(name, "__match") ||
		strings.HasPrefix(name, "__reduce_") || name == "__syncwarp":
		return SyncWarp, "calls " + name + ", which exchanges values between the lanes of a warp"
	}
	return SyncNone, ""
}

func (m *Mapping) block(n parse.Node, reason string) {
	m.Blockers = append(m.Blockers, Blocker{n.Pos(), n.End(), reason})
}

// WaitsOnOthers: a loop whose condition reads memory through an atomic or
// a volatile access is waiting for another thread; serialising threads
// could then deadlock.
func WaitsOnOthers(cond parse.Expr) bool {
	found := false
	parse.Inspect(cond, func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.CallExpr:
			if strings.HasPrefix(parse.CalleeName(n.Fun), "atomic") {
				found = true
			}
		case *parse.CastExpr:
			if n.Type != nil && strings.Contains(n.Type.Text, "volatile") {
				found = true
			}
		}
		return !found
	})
	return found
}

// findStrayIndex records threadIdx/blockIdx uses outside the id variables.
func (m *Mapping) findStrayIndex(body parse.Node) {
	parse.Inspect(body, func(n parse.Node) bool {
		if n == m.Tid || n == m.Warp || n == m.Lane {
			return false
		}
		if v, ok := n.(*parse.VarDecl); ok && m.isPart(v) {
			return false
		}
		if id, ok := n.(*parse.Ident); ok {
			if _, ok := m.parts[id.Name]; ok {
				m.StrayIndex = append(m.StrayIndex, Blocker{id.Pos(), id.End(), "uses " + id.Name + ", a local copy of a thread or block index, directly"})
			}
		}
		if me, ok := n.(*parse.MemberExpr); ok {
			if id, ok := parse.UnparenCasts(me.X).(*parse.Ident); ok && (id.Name == "threadIdx" || id.Name == "blockIdx") {
				m.StrayIndex = append(m.StrayIndex, Blocker{me.Pos(), me.End(), "uses " + id.Name + "." + me.Name + " directly"})
			}
		}
		return true
	})
}

func (m *Mapping) isPart(v *parse.VarDecl) bool {
	p, ok := m.parts[v.Name]
	return ok && p.Decl == v
}

func hasSpecifier(specs []string, s string) bool {
	for _, x := range specs {
		if x == s {
			return true
		}
	}
	return false
}
