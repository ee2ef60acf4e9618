package analysis

import (
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// evaluator computes the Shape of expressions inside one function, given
// the shapes of its local variables (env) and its pointer aliases.
type evaluator struct {
	fn      *parse.FuncDecl
	env     map[*parse.Symbol]Shape
	aliases map[*parse.Symbol]alias
	macros  map[string]string // object-like macros of the file: name -> body
}

// alias is a local pointer that points into an array: `T *row = p + off`.
// Its steps (`row++`, `row += k`) are not part of offset: they are the
// local's own shape in env, joined in by pointerOf.
type alias struct {
	array  string
	offset Shape
	// conflict: the local is aimed at two different arrays; accesses
	// through it are reported under its own name, at an unknown index.
	conflict bool
}

// shape returns the abstract value of e.
func (ev *evaluator) shape(e parse.Expr) Shape {
	switch e := e.(type) {
	case nil:
		return uniform()
	case *parse.BasicLit, *parse.SizeofExpr, *parse.LambdaExpr:
		return uniform()
	case *parse.Ident:
		return ev.identShape(e)
	case *parse.MemberExpr:
		return ev.memberShape(e)
	case *parse.ParenExpr:
		return ev.shape(e.X)
	case *parse.CastExpr:
		return ev.shape(e.X)
	case *parse.UnaryExpr:
		return ev.unaryShape(e)
	case *parse.BinaryExpr:
		return ev.binaryShape(e)
	case *parse.CondExpr:
		return join(ev.shape(e.Cond), join(ev.shape(e.Then), ev.shape(e.Else)))
	case *parse.IndexExpr:
		return ev.loadShape(e.X)
	case *parse.CallExpr:
		return ev.callShape(e)
	}
	return formed(Unknown)
}

// identShape: locals come from env, scalar parameters and constants are uniform.
func (ev *evaluator) identShape(id *parse.Ident) Shape {
	switch id.Name {
	case "warpSize":
		return uniform()
	}
	if sym := ev.lookup(id); sym != nil {
		if s, ok := ev.env[sym]; ok {
			return s
		}
		return uniform() // parameters and never-assigned locals
	}
	return uniform() // enumerators, macros, globals: the same in every thread
}

func (ev *evaluator) lookup(id *parse.Ident) *parse.Symbol {
	if ev.fn == nil || ev.fn.Scope == nil {
		return nil
	}
	return ev.fn.Scope.Lookup(id.Name, id.Pos())
}

// memberShape knows CUDA's built-in index variables.
func (ev *evaluator) memberShape(m *parse.MemberExpr) Shape {
	if id, ok := m.X.(*parse.Ident); ok && !m.Arrow {
		switch id.Name {
		case "threadIdx":
			return formed(Thread)
		case "blockIdx":
			return formed(Block)
		case "blockDim", "gridDim":
			return uniform()
		}
	}
	if m.Arrow {
		return ev.loadShape(m.X)
	}
	s := ev.shape(m.X)
	if s.Form == Uniform || s.Form == Block {
		return s // a field of a by-value parameter struct
	}
	return join(s, formed(Unknown))
}

func (ev *evaluator) unaryShape(u *parse.UnaryExpr) Shape {
	switch u.Op {
	case "*":
		return ev.loadShape(u.X)
	case "&":
		return formed(Unknown)
	case "-", "+", "++", "--":
		return ev.shape(u.X)
	}
	s := ev.shape(u.X) // !, ~: thread-dependent values stop being affine
	if s.Form >= Lane && s.Form <= Thread {
		return formed(Nonlinear)
	}
	return s
}

func (ev *evaluator) binaryShape(b *parse.BinaryExpr) Shape {
	if parse.IsAssign(b.Op) {
		return ev.shape(b.Y)
	}
	x, y := ev.shape(b.X), ev.shape(b.Y)
	switch b.Op {
	case "+", "-":
		return addShapes(x, y)
	case "*":
		return mulShapes(x, y)
	case "<<":
		return mulShapes(x, y)
	case "/", ">>":
		return ev.divShape(x, y, b)
	case "%", "&":
		return ev.modShape(x, y, b)
	case ",":
		return y
	}
	return nonAffine(x, y) // comparisons, logic, |, ^
}

// divisionByUniform handles what / and % share: loads stay loads, a
// thread-dependent divisor is nonlinear, uniform by uniform stays uniform.
func divisionByUniform(x, y Shape) (Shape, bool) {
	switch {
	case x.Form == Loaded || y.Form == Loaded:
		return addShapes(x, y), true
	case y.Form > Block:
		return formed(Nonlinear), true
	case x.Form <= Block:
		return formed(max(x.Form, y.Form)), true
	}
	return Shape{}, false
}

// divShape: tid / warpSize (or >> 5) is the warp id.
func (ev *evaluator) divShape(x, y Shape, b *parse.BinaryExpr) Shape {
	if s, done := divisionByUniform(x, y); done {
		return s
	}
	switch x.Form {
	case Thread, Warp:
		if ev.isWarpDivisor(b) {
			return formed(Warp)
		}
		return formed(x.Form) // tid / k for another uniform k still groups consecutive threads
	case Lane:
		return formed(Lane)
	}
	return formed(Nonlinear)
}

// modShape: tid % warpSize (or & 31) is the lane id.
func (ev *evaluator) modShape(x, y Shape, b *parse.BinaryExpr) Shape {
	if s, done := divisionByUniform(x, y); done {
		return s
	}
	switch x.Form {
	case Thread, Warp, Lane:
		if ev.isWarpDivisor(b) || x.Form == Lane {
			return formed(Lane)
		}
	}
	return formed(Nonlinear)
}

// isWarpDivisor reports whether the right operand of b is the warp size in
// the form b's operator needs.
func (ev *evaluator) isWarpDivisor(b *parse.BinaryExpr) bool { return isWarpOperand(b, ev.macros) }

// isWarpOperand: 32 (or warpSize, WARP_SIZE) for / and %, 5 for >>, 31 for &,
// with macros folded: the operand that turns a thread id into a warp or lane id.
func isWarpOperand(b *parse.BinaryExpr, macros map[string]string) bool {
	v, ok := foldConst(b.Y, macros, 0)
	if !ok {
		return (b.Op == "/" || b.Op == "%") && isWarpSizeName(b.Y)
	}
	switch b.Op {
	case "/", "%":
		return v == 32
	case ">>":
		return v == 5
	case "&":
		return v == 31
	}
	return false
}

func isWarpSizeName(e parse.Expr) bool {
	id, ok := parse.UnparenCasts(e).(*parse.Ident)
	if !ok {
		return false
	}
	n := strings.ToUpper(id.Name)
	return id.Name == "warpSize" || n == "WARP_SIZE" || n == "WARPSIZE" || n == "WS"
}

// constValue folds integer constant expressions: literals, object-like
// macros that expand to one (`#define WARP_SHIFT 5`), and arithmetic on them
// (`(1 << WARP_SHIFT) - 1`).
func (ev *evaluator) constValue(e parse.Expr) (int64, bool) {
	return foldConst(e, ev.macros, 0)
}

// maxMacroDepth stops macros that expand to each other forever.
const maxMacroDepth = 16

func foldConst(e parse.Expr, macros map[string]string, depth int) (int64, bool) {
	switch e := parse.UnparenCasts(e).(type) {
	case *parse.BasicLit:
		return parse.IntLit(e.Value)
	case *parse.Ident:
		return foldMacro(e.Name, macros, depth)
	case *parse.UnaryExpr:
		v, ok := foldConst(e.X, macros, depth)
		return foldUnary(e.Op, v, ok)
	case *parse.BinaryExpr:
		x, okx := foldConst(e.X, macros, depth)
		y, oky := foldConst(e.Y, macros, depth)
		if !okx || !oky {
			return 0, false
		}
		return foldBinary(e.Op, x, y)
	}
	return 0, false
}

// foldMacro parses an object-like macro's body as an expression and folds it.
func foldMacro(name string, macros map[string]string, depth int) (int64, bool) {
	body, ok := macros[name]
	if !ok || depth >= maxMacroDepth {
		return 0, false
	}
	if v, ok := parse.IntLit(strings.TrimSpace(body)); ok {
		return v, true
	}
	pf := parse.ParseFile("", []byte("int bam_v = ("+body+");"))
	if len(pf.Decls) != 1 || len(pf.Diags) > 0 {
		return 0, false
	}
	g, ok := pf.Decls[0].(*parse.VarDeclGroup)
	if !ok || len(g.Vars) != 1 || g.Vars[0].Init == nil {
		return 0, false
	}
	return foldConst(g.Vars[0].Init, macros, depth+1)
}

func foldUnary(op string, v int64, ok bool) (int64, bool) {
	if !ok {
		return 0, false
	}
	switch op {
	case "-":
		return -v, true
	case "+":
		return v, true
	case "~":
		return ^v, true
	}
	return 0, false
}

func foldBinary(op string, x, y int64) (int64, bool) {
	switch op {
	case "+":
		return x + y, true
	case "-":
		return x - y, true
	case "*":
		return x * y, true
	case "/", "%":
		if y == 0 {
			return 0, false
		}
		if op == "/" {
			return x / y, true
		}
		return x % y, true
	case "<<":
		return x << (uint64(y) & 63), true
	case ">>":
		return x >> (uint64(y) & 63), true
	case "&":
		return x & y, true
	case "|":
		return x | y, true
	case "^":
		return x ^ y, true
	}
	return 0, false
}

// callShape knows index helpers, math functions and loads through intrinsics.
func (ev *evaluator) callShape(c *parse.CallExpr) Shape {
	name := parse.CalleeName(c.Fun)
	switch {
	case name == "__ldg" || strings.HasPrefix(name, "__ldcg") || strings.HasPrefix(name, "__ldca"):
		if len(c.Args) == 1 {
			return ev.loadShape(derefTarget(c.Args[0]))
		}
	case strings.HasPrefix(name, "__shfl"):
		if len(c.Args) >= 2 {
			return join(ev.shape(c.Args[1]), formed(Unknown))
		}
	case strings.HasPrefix(name, "atomic"):
		return loadedFromArgs(ev, c.Args)
	case (name == "__umul24" || name == "__mul24") && len(c.Args) == 2:
		return mulShapes(ev.shape(c.Args[0]), ev.shape(c.Args[1])) // a 24-bit product: a product on ids

	case isPureFunc(name):
		var s Shape
		for _, a := range c.Args {
			s = nonAffine(s, ev.shape(a))
		}
		return s
	}
	return formed(Unknown)
}

// loadedFromArgs: an atomic returns the old value of the element it touched.
func loadedFromArgs(ev *evaluator, args []parse.Expr) Shape {
	if len(args) == 0 {
		return formed(Unknown)
	}
	return ev.loadShape(derefTarget(args[0]))
}

// loadShape is the shape of a value loaded through pointer expression p.
func (ev *evaluator) loadShape(p parse.Expr) Shape {
	if arr := ev.rootArray(p); arr != "" {
		return loaded(arr)
	}
	return formed(Unknown)
}

// rootArray names the array a pointer expression points into: the base
// identifier after parentheses, casts, pointer arithmetic and aliases.
func (ev *evaluator) rootArray(p parse.Expr) string {
	switch p := parse.UnparenCasts(p).(type) {
	case *parse.Ident:
		if sym := ev.lookup(p); sym != nil {
			if a, ok := ev.aliases[sym]; ok && !a.conflict {
				return a.array
			}
		}
		return p.Name
	case *parse.BinaryExpr:
		if p.Op == "+" || p.Op == "-" {
			return ev.rootArray(p.X)
		}
	case *parse.IndexExpr:
		return ev.rootArray(p.X) // a[i][j] on a 2-D array
	case *parse.UnaryExpr:
		if isStep(p.Op) {
			return ev.rootArray(p.X) // *q++ loads where q points
		}
	case *parse.MemberExpr:
		return ev.rootArray(p.X) + "." + p.Name
	}
	return ""
}

// nonAffine: the result depends on both operands but no longer linearly.
func nonAffine(x, y Shape) Shape {
	s := join(x, y)
	if s.Form >= Lane && s.Form <= Thread {
		s.Form = Nonlinear
	}
	return s
}

func isPureFunc(name string) bool {
	switch name {
	case "min", "max", "abs", "fabs", "fabsf", "fminf", "fmaxf", "sqrt", "sqrtf", "exp", "expf", "log", "logf",
		"std::min", "std::max", "umin", "umax", "llmin", "llmax", "__popc", "__popcll", "__clz", "__ffs", "__float2int_rn":
		return true
	}
	return false
}

// derefTarget turns `&a[i]` into `a[i]`'s pointer `a` form for loadShape.
func derefTarget(e parse.Expr) parse.Expr {
	if u, ok := parse.UnparenCasts(e).(*parse.UnaryExpr); ok && u.Op == "&" {
		if ix, ok := parse.UnparenCasts(u.X).(*parse.IndexExpr); ok {
			return ix.X
		}
		return u.X
	}
	return e
}

// IsPureCall reports whether a call to name has no side effects: math
// helpers and warp votes/shuffles, which only exchange values.
func IsPureCall(name string) bool {
	return isPureFunc(name) || name == "__umul24" || name == "__mul24" || strings.HasPrefix(name, "__shfl") || strings.HasPrefix(name, "__any") ||
		strings.HasPrefix(name, "__all") || strings.HasPrefix(name, "__ballot") || name == "__activemask" ||
		strings.HasPrefix(name, "__ldg") || strings.HasPrefix(name, "__popc")
}
