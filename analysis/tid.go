package analysis

import (
	"slices"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// A thread id in any affine form: the global id a kernel computes is a sum
// of products of CUDA's index built-ins, constants (literals and macros
// that fold), __umul24/__mul24, and identifiers the same in every thread
// (macros that do not fold, globals, scalar parameters); locals defined
// once as such an expression (`bx = blockIdx.x`) stand for it. idPoly
// expands an expression into that sum; isThreadID decides whether it is a
// global thread id: threadIdx.x with coefficient 1, plus terms that each
// multiply a block index by a block size (blockDim.x, a constant, a macro).

// monomial is coef * the product of atoms (sorted, with repeats).
type monomial struct {
	coef  int64
	atoms []string
}

// poly is a sum of monomials keyed by their joined atoms.
type poly map[string]monomial

// maxPolyTerms bounds the expansion of products of sums.
const maxPolyTerms = 32

func constPoly(v int64) poly { return poly{"": {coef: v}} }

func atomPoly(a string) poly { return poly{a: {coef: 1, atoms: []string{a}}} }

func (p poly) add(q poly, sign int64) poly {
	out := poly{}
	for k, m := range p {
		out[k] = m
	}
	for k, m := range q {
		o := out[k]
		o.atoms = m.atoms
		o.coef += sign * m.coef
		if o.coef == 0 {
			delete(out, k)
			continue
		}
		out[k] = o
	}
	return out
}

func (p poly) mul(q poly) (poly, bool) {
	if len(p)*len(q) > maxPolyTerms {
		return nil, false
	}
	out := poly{}
	for _, a := range p {
		for _, b := range q {
			atoms := append(append([]string{}, a.atoms...), b.atoms...)
			sort.Strings(atoms)
			k := strings.Join(atoms, "*")
			o := out[k]
			o.atoms = atoms
			o.coef += a.coef * b.coef
			if o.coef == 0 {
				delete(out, k)
				continue
			}
			out[k] = o
		}
	}
	return out, true
}

// idEnv is what idPoly needs of the function: its scope, its macros, and
// the locals that stand for an index expression.
type idEnv struct {
	fn     *parse.FuncDecl
	macros map[string]string
	parts  map[string]parse.Expr // local name -> its single initialiser
	depth  int
}

// idPoly expands e; ok is false for anything outside the affine forms.
func (env *idEnv) idPoly(e parse.Expr) (poly, bool) {
	if env.depth > maxMacroDepth {
		return nil, false
	}
	switch e := parse.UnparenCasts(e).(type) {
	case *parse.BasicLit:
		if v, ok := parse.IntLit(e.Value); ok {
			return constPoly(v), true
		}
	case *parse.Ident:
		return env.identPoly(e)
	case *parse.MemberExpr:
		if id, ok := parse.UnparenCasts(e.X).(*parse.Ident); ok && !e.Arrow && isIndexBuiltin(id.Name) &&
			(e.Name == "x" || e.Name == "y" || e.Name == "z") {
			return atomPoly(id.Name + "." + e.Name), true
		}
	case *parse.BinaryExpr:
		return env.binaryPoly(e)
	case *parse.CallExpr:
		if name := parse.CalleeName(e.Fun); (name == "__umul24" || name == "__mul24") && len(e.Args) == 2 {
			x, okx := env.idPoly(e.Args[0])
			y, oky := env.idPoly(e.Args[1])
			if okx && oky {
				return x.mul(y)
			}
		}
	}
	return nil, false
}

func isIndexBuiltin(name string) bool {
	return name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim"
}

func (env *idEnv) identPoly(id *parse.Ident) (poly, bool) {
	if init, ok := env.parts[id.Name]; ok {
		env.depth++
		defer func() { env.depth-- }()
		return env.idPoly(init)
	}
	if v, ok := foldConst(id, env.macros, 0); ok {
		return constPoly(v), true
	}
	if env.fn != nil && env.fn.Scope != nil {
		if sym := env.fn.Scope.Lookup(id.Name, id.Pos()); sym != nil {
			if !sym.Param || sym.Type == nil || sym.Type.IsPointer() {
				return nil, false // a local: its value is not known here
			}
		}
	}
	return atomPoly("=" + id.Name), true // a macro, global or scalar parameter: uniform
}

func (env *idEnv) binaryPoly(b *parse.BinaryExpr) (poly, bool) {
	x, okx := env.idPoly(b.X)
	if !okx {
		return nil, false
	}
	switch b.Op {
	case "+", "-", "*":
		y, oky := env.idPoly(b.Y)
		if !oky {
			return nil, false
		}
		switch b.Op {
		case "+":
			return x.add(y, 1), true
		case "-":
			return x.add(y, -1), true
		}
		return x.mul(y)
	case "<<":
		if s, ok := foldConst(b.Y, env.macros, 0); ok && s >= 0 && s < 31 {
			return x.mul(constPoly(1 << s))
		}
	}
	return nil, false
}

// isThreadID: threadIdx.x once with coefficient 1; every other term
// multiplies a block index by a block size; blockIdx.x appears; no other
// thread index.
func isThreadID(p poly) bool {
	if m, ok := p["threadIdx.x"]; !ok || m.coef != 1 {
		return false
	}
	sawBlockX := false
	for k, m := range p {
		if k == "threadIdx.x" {
			continue
		}
		blocks, sizes := 0, m.coef > 1
		for _, a := range m.atoms {
			switch {
			case strings.HasPrefix(a, "threadIdx."):
				return false
			case strings.HasPrefix(a, "blockIdx."):
				blocks++
				sawBlockX = sawBlockX || a == "blockIdx.x"
			case a == "blockDim.x" || strings.HasPrefix(a, "="):
				sizes = true
			}
		}
		if blocks != 1 || !sizes || m.coef < 1 {
			return false
		}
	}
	return sawBlockX
}

// isCanonicalID: exactly blockIdx.x * blockDim.x + threadIdx.x, so the
// rewrites may put the virtual thread id in its place as it is.
func isCanonicalID(p poly) bool {
	if len(p) != 2 {
		return false
	}
	a, b := p["threadIdx.x"], p["blockDim.x*blockIdx.x"]
	return a.coef == 1 && b.coef == 1
}

// IDPart is a local defined once as a piece of the thread id (`bx =
// blockIdx.x`, `tx = threadIdx.x`): the id may be written through it.
type IDPart struct {
	Decl *parse.VarDecl
}

// idPartCandidate: a local whose initialiser reads an index built-in and
// expands to an affine form (it may be one of the id's pieces).
func (env *idEnv) idPartCandidate(init parse.Expr) bool {
	if !mentionsIndexBuiltin(init) {
		return false
	}
	_, ok := env.idPoly(init)
	return ok
}

func mentionsIndexBuiltin(e parse.Expr) bool {
	found := false
	parse.Inspect(e, func(n parse.Node) bool {
		if m, ok := n.(*parse.MemberExpr); ok {
			if id, ok := parse.UnparenCasts(m.X).(*parse.Ident); ok && (id.Name == "threadIdx" || id.Name == "blockIdx") {
				found = true
			}
		}
		return !found
	})
	return found
}

// IsCanonicalTid reports whether the thread-id variable's initialiser is
// exactly blockIdx.x * blockDim.x + threadIdx.x (up to order, locals and
// __umul24): its value is the launch's flat 1-D thread id.
func (m *Mapping) IsCanonicalTid() bool { return m.Tid != nil && m.tidCanonical }

// IDParts lists the locals the id is written through.
func (m *Mapping) IDParts() []*parse.VarDecl {
	out := make([]*parse.VarDecl, 0, len(m.parts))
	for _, p := range m.parts {
		out = append(out, p.Decl)
	}
	slices.SortFunc(out, func(a, b *parse.VarDecl) int { return a.Pos() - b.Pos() })
	return out
}

// CanonicalWarp reports whether the warp-id variable divides the launch's
// flat 1-D thread id (blockIdx.x * blockDim.x + threadIdx.x) itself.
func (m *Mapping) CanonicalWarp() bool {
	if m.Warp == nil || m.env == nil {
		return false
	}
	b, ok := parse.UnparenCasts(initValue(m.Warp.Init)).(*parse.BinaryExpr)
	if !ok {
		return false
	}
	p, ok := m.env.idPoly(b.X)
	return ok && isCanonicalID(p)
}

// BlockSizeConst returns k when the thread id multiplies blockIdx.x by the
// constant k (`blockIdx.x * 256 + threadIdx.x`, `BLOCK_SIZE * blockIdx.x
// + threadIdx.x` with the macro known): the id is the launch's flat id only
// for blocks of k threads.
func (m *Mapping) BlockSizeConst() (int64, bool) {
	if m.Tid == nil || m.tidPoly == nil {
		return 0, false
	}
	t, ok := m.tidPoly["blockIdx.x"]
	return t.coef, ok
}
