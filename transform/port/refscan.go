package port

import (
	"sort"
	"strconv"
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// Finding sequential per-thread scans for the array_ref rewrite (ref.go).
//
// An access p[idx] scans in a for loop when idx is the loop variable (times
// a constant), plus terms the loop never changes, plus constants:
//
//	for (e = rowptr[v]; e < rowptr[v + 1]; ++e) col[e]   // CSR walk
//	for (j = 0; j < n; j++) a[row * n + j]                // a row per thread
//
// This decides only where a ref pays (each line is read several times in a
// row by the thread); it never decides whether a ref is correct, which the
// rules in ref.go do. So it may be approximate: names are compared by
// spelling, and a term that might change is treated as changing.

// maxRefStride is the largest step (elements per iteration) that gets a
// ref. The smallest line the runtime allows is 512 bytes, 64 elements of 8
// bytes: at this step a thread still reads each line at least 8 times
// before it leaves; with larger steps the ref switches lines nearly every
// access and only adds work.
const maxRefStride = 8

// scanAccess is an access whose index advances with a loop's variable.
type scanAccess struct {
	acc    *elemAccess
	loop   *parse.ForStmt
	stride int64  // elements per iteration; 0 when the step is not a constant
	coef   int64  // the factor of the loop variable in the index
	step   string // the loop's step as written, for messages
	stream string // the index without the loop variable and constants
	offset int64  // the constant part of the index
}

// indexTerm is one summand of an index: ±expr.
type indexTerm struct {
	e    parse.Expr
	text string
	sign int64
}

// scanOf returns the loop the access scans, or nil. It looks outward from
// the access: a loop the index does not depend on is skipped (p[i] inside
// an inner loop over j still scans the loop over i); a loop it depends on
// in any other way ends the search.
func (c *refStage) scanOf(acc *elemAccess) *scanAccess {
	terms := c.indexTerms(acc)
	for i := len(acc.parents) - 1; i >= 0; i-- {
		loop, ok := acc.parents[i].(*parse.ForStmt)
		if !ok {
			continue
		}
		if !parse.Within(acc.node, loop.Body) {
			return nil // in a loop header: the access-pattern rewrites may replace it (odt clamps the walk's condition)
		}
		lf := c.loopFactsOf(loop)
		sa, moves := c.linearIn(terms, lf.v, lf.changed)
		if sa != nil {
			sa.acc, sa.loop, sa.step = acc, loop, lf.step
			sa.stride *= lf.stride
			return sa
		}
		if moves {
			return nil
		}
	}
	return nil
}

// loopFacts is what scanOf needs of a loop, worked out once per loop
// (every access in it asks).
type loopFacts struct {
	v       string         // the variable the increment advances ("" if none does regularly)
	stride  int64          // its constant step, or 0
	step    string         // the step as written
	changed map[string]int // names the loop may change between iterations
}

func (c *refStage) loopFactsOf(loop *parse.ForStmt) *loopFacts {
	if lf := c.loopFacts[loop]; lf != nil {
		return lf
	}
	lf := &loopFacts{changed: assignedIn(loop.Body, loop.Cond, loop.Post)}
	lf.v, lf.stride, lf.step = c.loopStep(loop)
	c.loopFacts[loop] = lf
	return lf
}

// indexTerms splits the access's full index into summands. Through an
// alias `T *q = p + off` the index is off + j: the alias's offset terms are
// taken as written at its declaration, so q[k] and p[off + k] are one
// stream (a term changed between the declaration and the read could make
// that wrong, which costs speed, never correctness).
func (c *refStage) indexTerms(acc *elemAccess) []indexTerm {
	var out []indexTerm
	if acc.aliasOff != nil {
		c.addTerms(acc.aliasOff, 1, &out)
	}
	if acc.index != nil {
		c.addTerms(acc.index, 1, &out)
	}
	return out
}

func (c *refStage) addTerms(e parse.Expr, sign int64, out *[]indexTerm) {
	e = parse.Unparen(e)
	if b, ok := e.(*parse.BinaryExpr); ok && (b.Op == "+" || b.Op == "-") {
		c.addTerms(b.X, sign, out)
		if b.Op == "-" {
			sign = -sign
		}
		c.addTerms(b.Y, sign, out)
		return
	}
	*out = append(*out, indexTerm{e: e, text: oneLine(c.text(e)), sign: sign})
}

// linearIn checks that the terms are v times a constant plus unchanging
// terms. It returns the scan (stride = the coefficient of v), or moves =
// true when the index changes in the loop some other way.
func (c *refStage) linearIn(terms []indexTerm, v string, changed map[string]int) (sa *scanAccess, moves bool) {
	var coef, offset int64
	var stream []string
	for _, t := range terms {
		if k, ok := c.varCoefficient(t.e, v); ok {
			coef += t.sign * k
			continue
		}
		if n, ok := c.intConst(t.e); ok {
			offset += t.sign * n
			continue
		}
		if c.mayChange(t, changed) {
			return nil, true
		}
		stream = append(stream, strconv.FormatInt(t.sign, 10)+"*"+t.text)
	}
	switch {
	case coef == 0 && offset == 0 && len(stream) == 0 && v != "" && mentionsName(terms, v):
		return nil, true // i - i, or the like
	case coef == 0:
		return nil, false
	}
	sort.Strings(stream)
	return &scanAccess{stride: abs64(coef), coef: abs64(coef), stream: strings.Join(stream, " "), offset: offset}, false
}

// varCoefficient matches v, (T)v, k * v and v * k (k a constant).
func (c *refStage) varCoefficient(e parse.Expr, v string) (int64, bool) {
	if e == nil || v == "" {
		return 0, false
	}
	if isVarNamed(e, v) {
		return 1, true
	}
	b, ok := parse.Unparen(e).(*parse.BinaryExpr)
	if !ok || b.Op != "*" {
		return 0, false
	}
	if k, ok := c.intConst(b.X); ok && isVarNamed(b.Y, v) {
		return k, true
	}
	if k, ok := c.intConst(b.Y); ok && isVarNamed(b.X, v) {
		return k, true
	}
	return 0, false
}

// isVarNamed matches the variable v, through parentheses and casts.
func isVarNamed(e parse.Expr, v string) bool {
	for {
		switch x := e.(type) {
		case *parse.ParenExpr:
			e = x.X
		case *parse.CastExpr:
			e = x.X
		case *parse.Ident:
			return x.Name == v
		default:
			return false
		}
	}
}

// mayChange reports whether a term can differ between iterations: it names
// something the loop assigns or declares, or calls a function.
func (c *refStage) mayChange(t indexTerm, changed map[string]int) bool {
	moves := false
	parse.WithStack(t.e, func(n parse.Node, _ []parse.Node) bool {
		switch x := n.(type) {
		case *parse.Ident:
			moves = moves || changed[x.Name] > 0
		case *parse.CallExpr, *parse.LambdaExpr:
			moves = true
		case *parse.SizeofExpr:
			return false
		}
		return !moves
	})
	return moves
}

func mentionsName(terms []indexTerm, v string) bool {
	for _, t := range terms {
		if mentions(t.text, v) {
			return true
		}
	}
	return false
}

// loopStep returns the variable the loop's increment advances, the step as
// a constant (0 when it is not one) and as written. A variable the body or
// the condition also assigns does not advance regularly: then v is "".
func (c *refStage) loopStep(loop *parse.ForStmt) (v string, stride int64, step string) {
	v, stride, step = c.postStep(loop.Post)
	if v != "" && assignedIn(loop.Body, loop.Cond)[v] > 0 {
		return "", 0, step
	}
	return v, stride, step
}

// postStep reads i++, ++i, i--, --i, i += k, i -= k, i = i + k.
func (c *refStage) postStep(post parse.Expr) (string, int64, string) {
	switch p := parse.Unparen(post).(type) {
	case *parse.UnaryExpr:
		if id, ok := parse.Unparen(p.X).(*parse.Ident); ok && (p.Op == "++" || p.Op == "--") {
			return id.Name, 1, "1"
		}
	case *parse.BinaryExpr:
		id, ok := parse.Unparen(p.X).(*parse.Ident)
		if !ok {
			return "", 0, ""
		}
		switch p.Op {
		case "+=", "-=":
			return id.Name, c.constOrZero(p.Y), oneLine(c.text(p.Y))
		case "=":
			return c.selfStep(id.Name, p.Y)
		}
	}
	return "", 0, ""
}

// selfStep reads the right side of i = i + k (or k + i, i - k).
func (c *refStage) selfStep(v string, rhs parse.Expr) (string, int64, string) {
	b, ok := parse.Unparen(rhs).(*parse.BinaryExpr)
	if !ok || (b.Op != "+" && b.Op != "-") {
		return "", 0, ""
	}
	switch {
	case isVarNamed(b.X, v):
		return v, c.constOrZero(b.Y), oneLine(c.text(b.Y))
	case b.Op == "+" && isVarNamed(b.Y, v):
		return v, c.constOrZero(b.X), oneLine(c.text(b.X))
	}
	return "", 0, ""
}

func (c *refStage) constOrZero(e parse.Expr) int64 {
	n, _ := c.intConst(e)
	return abs64(n)
}

// intConst evaluates integer literals, negated ones and object-like macros
// defined as one.
func (c *refStage) intConst(e parse.Expr) (int64, bool) {
	switch x := parse.Unparen(e).(type) {
	case *parse.BasicLit:
		if x.Kind == parse.Number {
			return parse.IntLit(x.Value)
		}
	case *parse.UnaryExpr:
		if x.Op == "-" && !x.Postfix {
			n, ok := c.intConst(x.X)
			return -n, ok
		}
	case *parse.Ident:
		if m := c.macros[x.Name]; m != nil && !m.IsFunc {
			return parse.IntLit(strings.TrimSpace(m.Body))
		}
	}
	return 0, false
}

// assignedIn counts, per name, the assignments, increments, address-of
// and declarations inside the nodes: what may change from one iteration
// to the next. A member or element write counts for the whole variable.
func assignedIn(nodes ...parse.Node) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		if parse.IsNil(n) {
			continue
		}
		parse.WithStack(n, func(x parse.Node, _ []parse.Node) bool {
			switch v := x.(type) {
			case *parse.BinaryExpr:
				if parse.IsAssign(v.Op) {
					out[rootName(v.X)]++
				}
			case *parse.UnaryExpr:
				if v.Op == "++" || v.Op == "--" || v.Op == "&" {
					out[rootName(v.X)]++
				}
			case *parse.VarDecl:
				out[v.Name]++
			}
			return true
		})
	}
	delete(out, "")
	return out
}

// rootName is the variable an lvalue expression writes into: a for a,
// a.x, a[i], *a.
func rootName(e parse.Expr) string {
	for {
		switch x := parse.Unparen(e).(type) {
		case *parse.Ident:
			return x.Name
		case *parse.MemberExpr:
			e = x.X
		case *parse.IndexExpr:
			e = x.X
		case *parse.UnaryExpr:
			e = x.X
		case *parse.CastExpr:
			e = x.X
		default:
			return ""
		}
	}
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
