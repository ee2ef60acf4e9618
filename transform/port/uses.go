package port

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// paramPlan is the result of examining every use of one pointer parameter
// inside its function: either the edits that make the body work with a
// bam::array, or the reasons it cannot (then the parameter stays a pointer).
type paramPlan struct {
	fn      *parse.FuncDecl
	idx     int
	refused []diag.Diagnostic // non-empty: the parameter is left alone
	edits   []edit.Edit       // body edits (deref, atomics, reads, aliases)
	calls   []helperCall      // the pointer is passed on to these helpers
	// accesses are the element reads and writes (p[i], *(p + i), q[j]
	// through an alias), kept for the array_ref rewrite (ref.go).
	accesses []*elemAccess
}

// elemAccess is one element access as the use scan saw it: the access
// node, its index (nil: element zero, or the alias offset), the alias
// spelling the rewritten index needs, and the ancestors of the node.
type elemAccess struct {
	node           parse.Node
	index          parse.Expr
	prefix, suffix string
	zero           string     // the index of a bare dereference
	aliasOff       parse.Expr // the offset of the alias the access goes through (nil: none, or `q = p`)
	parents        []parse.Node
}

func (p *paramPlan) ok() bool { return len(p.refused) == 0 }

// helperCall is a call that passes the array on to a __device__ function
// defined in this file, which must then be ported too.
type helperCall struct {
	call   *parse.CallExpr
	callee *parse.FuncDecl
	arg    int
}

// useScanner examines the uses of one array name (the parameter itself or a
// local alias of it) in one function body.
type useScanner struct {
	c     *portCtx
	fn    *parse.FuncDecl
	plan  *paramPlan
	array string // the bam::array the rewritten code indexes (the parameter)
	// For an alias `T *q = p + off`, uses of q become p[q + (i)]: prefix
	// is "q + (" and suffix ")"; both are empty for the parameter itself.
	prefix, suffix string
	aliasName      string       // q for an alias scanner, "" for the parameter
	aliasOff       parse.Expr   // off in `T *q = p + off`, nil for the parameter or `q = p`
	seen           map[int]bool // offsets of identifier uses the walk understood
	lambdas        []*parse.LambdaExpr
}

// zeroIndex is the array index a bare dereference reaches: 0 through the
// parameter, the alias's element offset through an alias.
func (s *useScanner) zeroIndex() string {
	if s.aliasName != "" {
		return s.aliasName
	}
	return "0"
}

func (s *useScanner) refuse(n parse.Node, code, format string, args ...any) {
	msg := fmt.Sprintf("%s: %s; %s is left a plain pointer", s.fn.Name, fmt.Sprintf(format, args...), s.paramName())
	s.plan.refused = append(s.plan.refused, diag.Diagnostic{Pos: n.Pos(), End: n.End(), Severity: diag.Warning, Code: code, Message: msg})
}

func (s *useScanner) paramName() string { return s.fn.Params[s.plan.idx].Name }

func (s *useScanner) edit(rw RewriteKind, start, end int, text string) {
	s.plan.edits = append(s.plan.edits, edit.Edit{Start: start, End: end, New: text, Rewrite: rw.String()})
}

// analyzeParam examines parameter idx of fn. It never looks at callers.
func (c *portCtx) analyzeParam(fn *parse.FuncDecl, idx int) *paramPlan {
	key := paramKey{fn, idx}
	if p, ok := c.plans[key]; ok {
		return p
	}
	plan := &paramPlan{fn: fn, idx: idx}
	c.plans[key] = plan
	prm := fn.Params[idx]
	if why := unsupportedType(prm.Type); why != "" {
		plan.refused = append(plan.refused, diag.Diagnostic{Pos: prm.Pos(), End: prm.End(), Severity: diag.Warning, Code: CodeNotPointer,
			Message: fmt.Sprintf("%s: parameter %s has type %q: %s; it is left as it is", fn.Name, prm.Name, prm.Type.Text, why)})
		return plan
	}
	if fn.Body == nil {
		return plan
	}
	s := &useScanner{c: c, fn: fn, plan: plan, array: prm.Name, seen: map[int]bool{}}
	s.scan(prm.Name, prm)
	return plan
}

// unsupportedType says why a parameter type cannot become a bam::array, or "".
func unsupportedType(t *parse.TypeRef) string {
	switch {
	case t == nil:
		return "no type"
	case t.Pointers != 1 || t.Ref || t.RRef || len(t.Array) > 0:
		return "only single-level pointers (T *p) become bam::array"
	case strings.Contains(" "+t.Text+" ", " volatile "):
		return "volatile elements have no bam::array equivalent"
	case t.Base == "void":
		return "void * has no element type"
	}
	return ""
}

// scan walks the body and classifies every use of name that resolves to
// decl, then checks the token stream for uses the syntax tree hid.
func (s *useScanner) scan(name string, decl parse.Node) {
	parse.WithStack(s.fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if !ok || id.Name != name || !s.resolves(id, decl) {
			return true
		}
		s.seen[id.Pos()] = true
		s.classify(id, parents)
		return true
	})
	s.checkHiddenUses(name, decl)
}

func (s *useScanner) resolves(id *parse.Ident, decl parse.Node) bool {
	sym := s.lookup(id.Name, id.Pos())
	return sym != nil && sym.Decl == decl
}

// lookup resolves name at pos: in the scopes of the lambdas around pos,
// innermost first (their locals are not in the function's scope: a kernel
// body wrapped in `auto body = [&](...) {...}` keeps its locals there),
// then in the function's.
func (s *useScanner) lookup(name string, pos int) *parse.Symbol {
	if s.lambdas == nil {
		s.lambdas = []*parse.LambdaExpr{}
		parse.Inspect(s.fn.Body, func(n parse.Node) bool {
			if l, ok := n.(*parse.LambdaExpr); ok && l.Scope != nil {
				s.lambdas = append(s.lambdas, l)
			}
			return true
		})
	}
	for i := len(s.lambdas) - 1; i >= 0; i-- { // later in preorder = nested deeper
		if l := s.lambdas[i]; l.Pos() <= pos && pos < l.End() {
			if sym := l.Scope.Lookup(name, pos); sym != nil {
				return sym
			}
		}
	}
	return s.fn.Scope.Lookup(name, pos)
}

// classify decides what one use of the array needs.
func (s *useScanner) classify(id *parse.Ident, parents []parse.Node) {
	parent, pi := upParens(parents, len(parents)-1)
	switch p := parent.(type) {
	case *parse.IndexExpr:
		if parse.Unparen(p.X) == parse.Expr(id) {
			s.element(p, p.Index, parents[:pi])
			return
		}
	case *parse.UnaryExpr:
		s.unaryUse(id, p, parents[:pi])
		return
	case *parse.BinaryExpr:
		s.binaryUse(id, p, parents[:pi])
		return
	case *parse.CallExpr:
		s.callArg(id, nil, p, parents[:pi])
		return
	case *parse.CastExpr:
		s.refuse(p, CodePointerCast, "%s is cast to %s", id.Name, typeText(p.Type))
		return
	case *parse.CondExpr:
		if parse.Unparen(p.Cond) == parse.Expr(id) {
			s.refuse(p, CodePointerCompared, "%s is tested as a condition", id.Name)
			return
		}
	case *parse.IfStmt, *parse.WhileStmt, *parse.ForStmt, *parse.DoStmt:
		s.refuse(id, CodePointerCompared, "%s is tested as a condition", id.Name)
		return
	case *parse.MemberExpr:
		s.refuse(p, CodeOtherUse, "%s->%s accesses a member through the pointer", id.Name, p.Name)
		return
	case *parse.VarDecl:
		s.alias(p, nil, parents[:pi])
		return
	case *parse.LaunchExpr:
		s.refuse(id, CodeUnknownCall, "%s is passed to a kernel launched from device code", id.Name)
		return
	}
	s.refuse(id, CodeOtherUse, "bamgen does not understand this use of %s", id.Name)
}

// unaryUse handles `*p`, `&p`, `p++`, `!p`.
func (s *useScanner) unaryUse(id *parse.Ident, u *parse.UnaryExpr, parents []parse.Node) {
	switch {
	case u.Op == "*" && !u.Postfix:
		s.element(u, nil, parents)
	case u.Op == "&" && !u.Postfix:
		s.refuse(u, CodeAddressTaken, "the address of %s is taken", id.Name)
	case u.Op == "!":
		s.refuse(u, CodePointerCompared, "%s is tested with !", id.Name)
	case u.Op == "++" || u.Op == "--":
		s.refuse(u, CodePointerArith, "%s is moved with %s", id.Name, u.Op)
	default:
		s.refuse(u, CodeOtherUse, "bamgen does not understand %s%s", u.Op, id.Name)
	}
}

// binaryUse handles `p + i` (under *, atomics, __ldg), comparisons and
// assignments to or from the pointer.
func (s *useScanner) binaryUse(id *parse.Ident, b *parse.BinaryExpr, parents []parse.Node) {
	switch {
	case b.Op == "+" || (b.Op == "-" && parse.Unparen(b.X) == parse.Expr(id)):
		s.offsetUse(id, b, parents)
	case parse.IsAssign(b.Op) && parse.Unparen(b.X) == parse.Expr(id):
		s.refuse(b, CodePointerArith, "%s is reassigned", id.Name)
	case b.Op == "=":
		s.refuse(b, CodeAddressTaken, "%s is stored in %s", id.Name, s.c.text(b.X))
	case isComparison(b.Op) || b.Op == "&&" || b.Op == "||":
		s.refuse(b, CodePointerCompared, "%s is compared (%s)", id.Name, s.c.text(b))
	default:
		s.refuse(b, CodeOtherUse, "bamgen does not understand %s", s.c.text(b))
	}
}

// offsetUse handles `p + i` / `i + p`: allowed under a dereference, as the
// address argument of an atomic or __ldg, and as a local alias initializer.
func (s *useScanner) offsetUse(id *parse.Ident, b *parse.BinaryExpr, parents []parse.Node) {
	if b.Op == "-" {
		s.refuse(b, CodePointerArith, "%s - offset is pointer arithmetic bamgen does not rewrite", id.Name)
		return
	}
	index := b.Y
	if parse.Unparen(b.Y) == parse.Expr(id) {
		index = b.X
	}
	parent, pi := upParens(parents, len(parents)-1)
	// p + a + c (also p + a - c) is p + (a + c): the chain's other operands
	// are one offset, spelled as written.
	for cur := parse.Node(b); ; {
		outer, ok := parent.(*parse.BinaryExpr)
		if !ok || (outer.Op != "+" && outer.Op != "-") || parse.Unparen(outer.X) != cur {
			break
		}
		index = &parse.BinaryExpr{Span: parse.Span{Start: index.Pos(), Stop: outer.End()}, Op: outer.Op, X: index, Y: outer.Y}
		cur = outer
		parents = parents[:pi]
		parent, pi = upParens(parents, len(parents)-1)
	}
	switch p := parent.(type) {
	case *parse.UnaryExpr:
		if p.Op == "*" && !p.Postfix {
			s.element(p, index, parents[:pi])
			return
		}
	case *parse.CallExpr:
		s.callArg(id, index, p, parents[:pi])
		return
	case *parse.VarDecl:
		s.alias(p, index, parents[:pi])
		return
	}
	s.refuse(b, CodePointerArith, "pointer arithmetic %s is used as a pointer", s.c.text(b))
}

// element handles an access to one element: `p[i]` (index set), `*p`
// (index nil, node the dereference) or `*(p + i)`.
func (s *useScanner) element(node parse.Node, index parse.Expr, parents []parse.Node) {
	parent, pi := upParens(parents, len(parents)-1)
	if u, ok := parent.(*parse.UnaryExpr); ok && u.Op == "&" && !u.Postfix {
		s.addressOfElement(u, index, parents[:pi])
		return
	}
	ctx := s.readContext(node, parents)
	switch ctx {
	case ctxRefuseRef:
		s.refuse(node, CodeAddressTaken, "a reference to an element of %s is kept", s.paramName())
		return
	case ctxRefuseMember:
		s.refuse(node, CodeElementMember, "a member of an element of %s is written; bam::array elements are written whole", s.paramName())
		return
	}
	s.plan.accesses = append(s.plan.accesses, &elemAccess{node: node, index: index, prefix: s.prefix, suffix: s.suffix,
		zero: s.zeroIndex(), aliasOff: s.aliasOff, parents: append([]parse.Node(nil), parents...)})
	_, isIndex := node.(*parse.IndexExpr)
	switch {
	case isIndex && s.aliasName == "" && ctx == ctxSafe:
		// p[i] stays as written: the proxy reads and writes.
	case ctx == ctxValue:
		s.rewriteElement(node, index, ".read(", ")")
	default:
		s.rewriteElement(node, index, "[", "]")
	}
}

// rewriteElement replaces the access node with array<open>prefix index
// suffix<close>, keeping the index text (and any edits inside it) intact.
func (s *useScanner) rewriteElement(node parse.Node, index parse.Expr, open, close string) {
	rw := Deref
	if open == ".read(" {
		rw = Reads
	}
	if s.aliasName != "" {
		rw = Aliases
	}
	if index == nil {
		s.edit(rw, node.Pos(), node.End(), s.array+open+s.zeroIndex()+close)
		return
	}
	s.edit(rw, node.Pos(), index.Pos(), s.array+open+s.prefix)
	s.edit(rw, index.End(), node.End(), s.suffix+close)
}

// atomicMethods maps CUDA atomics to bam::array members.
var atomicMethods = map[string]string{
	"atomicAdd": "atomic_add", "atomicSub": "atomic_sub", "atomicMin": "atomic_min", "atomicMax": "atomic_max",
	"atomicCAS": "atomic_cas", "atomicOr": "atomic_or", "atomicAnd": "atomic_and", "atomicXor": "atomic_xor",
	"atomicExch": "atomic_exch",
}

// addressOfElement handles `&p[i]`: fine as the address of an atomic or
// __ldg, refused anywhere else.
func (s *useScanner) addressOfElement(addr *parse.UnaryExpr, index parse.Expr, parents []parse.Node) {
	parent, _ := upParens(parents, len(parents)-1)
	if call, ok := parent.(*parse.CallExpr); ok && len(call.Args) > 0 && parse.Unparen(call.Args[0]) == parse.Expr(addr) {
		if s.knownPointerBuiltin(call, index) {
			return
		}
	}
	if vd, ok := parent.(*parse.VarDecl); ok && index != nil {
		_, pi := upParens(parents, len(parents)-1)
		s.alias(vd, index, parents[:pi])
		return
	}
	s.refuse(addr, CodeAddressTaken, "the address of an element (%s) is taken", s.c.text(addr))
}

// callArg handles the array (or p + i when index is set) passed to a call.
func (s *useScanner) callArg(id *parse.Ident, index parse.Expr, call *parse.CallExpr, parents []parse.Node) {
	if len(call.Args) > 0 && argIs(call.Args[0], id, index) && s.knownPointerBuiltin(call, index) {
		return
	}
	name := parse.ShortFuncName(call.Fun)
	switch {
	case s.c.macros[name] != nil:
		s.refuse(call, CodeMacroUse, "%s is passed to macro %s, whose expansion bamgen cannot see", id.Name, name)
	case index != nil:
		s.refuse(call, CodePointerArith, "%s + offset is passed to %s", id.Name, name)
	case s.aliasName != "":
		s.refuse(call, CodeUnknownCall, "alias %s of %s is passed to %s", id.Name, s.array, name)
	default:
		s.helperArg(id, call, name)
	}
}

func argIs(arg parse.Expr, id *parse.Ident, index parse.Expr) bool {
	a := parse.Unparen(arg)
	if index == nil {
		return a == parse.Expr(id)
	}
	b, ok := a.(*parse.BinaryExpr)
	if ok && index != nil && index.Pos() > b.Pos() && parse.Unparen(b.Y) != parse.Expr(id) {
		for { // p + a + c: the leftmost operand of the chain
			x, ok := parse.Unparen(b.X).(*parse.BinaryExpr)
			if !ok || (x.Op != "+" && x.Op != "-") {
				break
			}
			b = x
		}
	}
	return ok && (parse.Unparen(b.X) == parse.Expr(id) || parse.Unparen(b.Y) == parse.Expr(id))
}

// knownPointerBuiltin rewrites atomics and __ldg whose first argument is the
// address of an element (index nil means element 0).
func (s *useScanner) knownPointerBuiltin(call *parse.CallExpr, index parse.Expr) bool {
	name := parse.ShortFuncName(call.Fun)
	if method, ok := atomicMethods[name]; ok && len(call.Args) >= 2 {
		s.rewriteCallToMethod(call, index, Atomics, method, call.Args[1].Pos())
		return true
	}
	if cacheHintLoads[name] && len(call.Args) == 1 {
		s.rewriteCallToMethod(call, index, Reads, "read", call.Rparen)
		return true
	}
	if cacheHintStores[name] && len(call.Args) == 2 {
		s.rewriteCallToMethod(call, index, Deref, "write", call.Args[1].Pos())
		return true
	}
	return false
}

// cacheHintLoads and cacheHintStores are the CUDA loads and stores that
// only add a cache hint to a plain element read or write (__ldg through
// the read-only path, __ldcs streaming, __stcs ...): on a bam::array they
// are p.read(i) and p.write(i, v), the array's cache deciding where the
// line lives.
var cacheHintLoads = map[string]bool{"__ldg": true, "__ldca": true, "__ldcg": true, "__ldcs": true, "__ldlu": true, "__ldcv": true}
var cacheHintStores = map[string]bool{"__stwb": true, "__stcg": true, "__stcs": true, "__stwt": true}

// rewriteCallToMethod turns `f(&p[i], rest)` into `p.method(i, rest)`.
// restPos is where the arguments after the address start (or the `)`).
func (s *useScanner) rewriteCallToMethod(call *parse.CallExpr, index parse.Expr, rw RewriteKind, method string, restPos int) {
	sep := ", "
	if restPos == call.Rparen {
		sep = ""
	}
	head := s.array + "." + method + "("
	if index == nil {
		s.edit(rw, call.Pos(), restPos, head+s.zeroIndex()+sep)
		return
	}
	s.edit(rw, call.Pos(), index.Pos(), head+s.prefix)
	s.edit(rw, index.End(), restPos, s.suffix+sep)
}

// helperArg handles the array passed whole to a function: only a
// __device__ function defined once in this file can be ported along.
func (s *useScanner) helperArg(id *parse.Ident, call *parse.CallExpr, name string) {
	defs := s.c.deviceDefs(name)
	argIdx := -1
	for i, a := range call.Args {
		if parse.Unparen(a) == parse.Expr(id) {
			argIdx = i
		}
	}
	switch {
	case len(defs) == 0:
		s.refuse(call, CodeUnknownCall, "%s is passed to %s, which is not a __device__ function defined in this file", id.Name, name)
	case len(defs) > 1:
		s.refuse(call, CodeUnknownCall, "%s is passed to %s, which has %d overloads in this file", id.Name, name, len(defs))
	case argIdx < 0 || argIdx >= len(defs[0].Params):
		s.refuse(call, CodeUnknownCall, "%s is passed to %s in a position bamgen cannot match to a parameter", id.Name, name)
	default:
		s.plan.calls = append(s.plan.calls, helperCall{call: call, callee: defs[0], arg: argIdx})
	}
}

// Read contexts of an element access.
const (
	ctxSafe         = iota // the proxy behaves like the element (arithmetic, assignment)
	ctxValue               // the proxy would leak (auto, call argument, ?:, member): use .read(i)
	ctxRefuseRef           // a reference to the element is kept
	ctxRefuseMember        // a member of the element is written
)

// readContext decides whether `p[i]` may stay a proxy where it stands.
func (s *useScanner) readContext(node parse.Node, parents []parse.Node) int {
	parent, pi := upParens(parents, len(parents)-1)
	switch p := parent.(type) {
	case *parse.MemberExpr:
		if isWritten(p, parents[:pi]) && !pointerField(s.c.file, p.Name) {
			return ctxRefuseMember
		}
		return ctxValue // a pointer member written through (`p[i].ptr[j] = v`) is read
	case *parse.CondExpr:
		if parse.Unparen(p.Cond) != node {
			return ctxValue
		}
	case *parse.CallExpr, *parse.SizeofExpr, *parse.InitListExpr, *parse.LaunchExpr:
		return ctxValue
	case *parse.VarDecl:
		switch {
		case p.Type != nil && (p.Type.Ref || p.Type.RRef):
			return ctxRefuseRef
		case p.Type == nil || strings.Contains(p.Type.Base, "auto") || strings.Contains(p.Type.Base, "decltype"):
			return ctxValue
		}
	case *parse.ReturnStmt:
		if s.fn.Result == nil || strings.Contains(s.fn.Result.Text, "auto") || s.fn.Result.Ref {
			return ctxValue
		}
	case *parse.LambdaExpr:
		return ctxValue
	}
	return ctxSafe
}

// isWritten reports whether the expression e is assigned, incremented or
// has its address taken.
func isWritten(e parse.Expr, parents []parse.Node) bool {
	parent, _ := upParens(parents, len(parents)-1)
	switch p := parent.(type) {
	case *parse.BinaryExpr:
		return parse.IsAssign(p.Op) && parse.Unparen(p.X) == e
	case *parse.UnaryExpr:
		return p.Op == "++" || p.Op == "--" || p.Op == "&"
	case *parse.IndexExpr:
		if parse.Unparen(p.Index) == e {
			return false // `a[e]`: e is read as the index, whatever a[e] is
		}
		return isWritten(p, parents[:len(parents)-1])
	case *parse.MemberExpr:
		return isWritten(p, parents[:len(parents)-1])
	}
	return false
}

// pointerField reports whether every field named name in the file's
// structs is a pointer (and there is one): `x.name[j] = v` then writes
// through the pointer the element holds, not the element.
func pointerField(f *parse.File, name string) bool {
	found, all := false, true
	var walk func(decls []parse.Decl)
	walk = func(decls []parse.Decl) {
		for _, d := range decls {
			switch d := d.(type) {
			case *parse.RecordDecl:
				for _, m := range d.Members {
					if g, ok := m.(*parse.VarDeclGroup); ok {
						for _, v := range g.Vars {
							if v.Name == name {
								found = true
								all = all && v.Type != nil && v.Type.Pointers > 0 && !strings.Contains(v.Type.Text, "[")
							}
						}
					}
				}
				walk(d.Members)
			case *parse.NamespaceDecl:
				walk(d.Decls)
			case *parse.LinkageDecl:
				walk(d.Decls)
			}
		}
	}
	walk(f.Decls)
	return found && all
}

// checkHiddenUses refuses the array when its name appears in code the walk
// could not see: opaque statements, inline asm, macro bodies expanded here.
func (s *useScanner) checkHiddenUses(name string, decl parse.Node) {
	f := s.c.file
	body := s.fn.Body
	for i := s.c.firstToken(body.Pos()); i < len(f.Tokens) && f.Tokens[i].Start < body.End(); i++ {
		t := f.Tokens[i]
		if t.Kind != parse.Identifier {
			continue
		}
		word := string(f.Src.Bytes[t.Start:t.End])
		if m := s.c.macros[word]; m != nil && mentions(m.Body, name) && s.lookup(name, t.Start) != nil {
			s.refuse(spanOf(t), CodeMacroUse, "macro %s refers to %s; its expansion is hidden from bamgen", word, name)
			continue
		}
		if vd, ok := decl.(*parse.VarDecl); ok && t.Start == vd.NameSpan.Start {
			continue // the alias's own declarator
		}
		if word != name || s.seen[t.Start] || s.c.afterMember(i) {
			continue
		}
		sym := s.lookup(name, t.Start)
		if sym == nil || sym.Decl != decl {
			continue
		}
		if s.c.inAsm(i, body.Pos()) {
			s.refuse(spanOf(t), CodeInlineAsm, "%s is an inline-asm operand", name)
		} else {
			s.refuse(spanOf(t), CodeUnparsedUse, "%s is used in code bamgen's parser did not understand", name)
		}
	}
}

func spanOf(t parse.Token) parse.Node { return parse.Span{Start: t.Start, Stop: t.End} }

// mentions reports whether text contains name as a whole identifier.
func mentions(text, name string) bool {
	for i := strings.Index(text, name); i >= 0; {
		before := i == 0 || !isIdentByte(text[i-1])
		after := i+len(name) >= len(text) || !isIdentByte(text[i+len(name)])
		if before && after {
			return true
		}
		next := strings.Index(text[i+1:], name)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func isComparison(op string) bool {
	switch op {
	case "==", "!=", "<", ">", "<=", ">=", "<=>":
		return true
	}
	return false
}

// upParens returns the innermost ancestor at or below index i that is not a
// ParenExpr, and its index (nil, -1 when none).
// enclosing returns the nearest of n's parents that is not a parenthesis,
// its index in parents, and the node directly under it on the way down to n
// (n itself when nothing lies between).
func enclosing(parents []parse.Node, n parse.Node) (parent parse.Node, at int, child parse.Node) {
	parent, at = upParens(parents, len(parents)-1)
	child = n
	if at+1 < len(parents) {
		child = parents[at+1]
	}
	return parent, at, child
}

// withParentsOf calls f with the ancestors of id inside body (outermost
// first), once, if id lies in body.
func withParentsOf(body parse.Node, id *parse.Ident, f func(parents []parse.Node)) {
	parse.WithStack(body, func(n parse.Node, parents []parse.Node) bool {
		if n != parse.Node(id) {
			return n.Pos() <= id.Pos() && n.End() >= id.End()
		}
		f(parents)
		return false
	})
}

func upParens(parents []parse.Node, i int) (parse.Node, int) {
	for ; i >= 0; i-- {
		if _, ok := parents[i].(*parse.ParenExpr); !ok {
			return parents[i], i
		}
	}
	return nil, -1
}

func typeText(t *parse.TypeRef) string {
	if t == nil {
		return "another type"
	}
	return t.Text
}

// alias handles a local pointer into the array, `T *q = p + off` (also
// `= &p[off]`, `= p`). The declaration becomes `const auto q = (off)`, an
// element offset evaluated where the pointer was, and every use of q is
// rewritten to index the array: q[i] -> p[q + (i)]. Any use of q that
// would need a real pointer refuses the whole array.
func (s *useScanner) alias(vd *parse.VarDecl, off parse.Expr, parents []parse.Node) {
	stmt, _ := upParens(parents, len(parents)-1)
	ds, ok := stmt.(*parse.DeclStmt)
	switch {
	case s.aliasName != "":
		s.refuse(vd, CodePointerArith, "%s is an alias of alias %s", vd.Name, s.aliasName)
		return
	case !ok || len(ds.Vars) != 1 || vd.Init == nil:
		s.refuse(vd, CodePointerArith, "%s points into %s in a declaration bamgen cannot rewrite", vd.Name, s.array)
		return
	case vd.Type != nil && (vd.Type.Pointers > 1 || vd.Type.Ref):
		s.refuse(vd, CodePointerArith, "%s (%s) refers to the pointer itself", vd.Name, vd.Type.Text)
		return
	}
	head := "const auto " + vd.Name + " = "
	if off == nil {
		s.edit(Aliases, ds.Pos(), vd.Init.End(), head+"0")
	} else {
		s.edit(Aliases, ds.Pos(), off.Pos(), head+"(")
		s.edit(Aliases, off.End(), vd.Init.End(), ")")
	}
	sub := &useScanner{c: s.c, fn: s.fn, plan: s.plan, array: s.array,
		prefix: vd.Name + " + (", suffix: ")", aliasName: vd.Name, aliasOff: off, seen: s.seen}
	sub.scan(vd.Name, vd)
}
