package parse

// Expressions: precedence climbing for binary operators, recursive descent
// for the rest. Template-argument lists set noGT so that '>' closes them
// instead of comparing.

// parseExpr parses a full expression, comma operator included.
func (p *parser) parseExpr() Expr {
	x := p.parseAssign()
	for p.is(",") {
		opPos := p.curStart()
		p.next()
		y := p.parseAssign()
		x = p.newBinary(Span{x.Pos(), y.End()}, ",", opPos, x, y)
	}
	return x
}

// parseAssign parses an assignment-expression (right associative), a
// conditional or a throw. The conditional and binary levels are parsed
// here (parseCond remains for callers that want a conditional-expression
// only), and most expressions end after their first operand.
func (p *parser) parseAssign() Expr {
	if !p.enter() {
		p.leave()
		return p.deepExpr()
	}
	defer p.leave()
	if p.isK(kwThrow) {
		return p.parseThrow()
	}
	x := p.unaryOperand()
	switch pb := p.toks[p.i].pb; {
	case closesExpr[pb]:
		return x
	case pb == '=':
		// `x = ...`: '=' is neither a binary nor the conditional operator.
	default:
		x = p.binaryRest(x, 1)
		switch pb := p.toks[p.i].pb; {
		case closesExpr[pb]:
			return x // no '?' and no assignment operator
		case pb == '?':
			x = p.parseCondRest(x)
		}
	}
	t := &p.toks[p.i]
	if t.Kind != Punct || p.src[t.End-1] != '=' && p.src[t.End-1] != 'q' {
		return x // every assignment operator ends in '=' (or "_eq": and_eq, ...)
	}
	return p.parseAssignRest(x)
}

// parseThrow parses `throw [expr]` at the keyword.
func (p *parser) parseThrow() Expr {
	start := p.curStart()
	p.next()
	u := newNode(&p.slabs.sUnaryExpr, UnaryExpr{Op: "throw"})
	if !p.is(";") && !p.is(")") && !p.is(",") {
		u.X = p.parseAssign()
	}
	u.Span = p.spanFrom(start)
	return u
}

// parseAssignRest parses the assignment operator (if the current token is
// one) and the right-hand side after the left operand x.
func (p *parser) parseAssignRest(x Expr) Expr {
	op := "=" // a one-byte '=' (pb is exact: a '>=' split by closeAngle is "=" too)
	if p.toks[p.i].pb != '=' {
		op = assignOp(p.textOf(p.tok()))
	}
	if op == "" || p.noGT > 0 && op == ">>=" {
		return x
	}
	opPos := p.curStart()
	p.next()
	var y Expr
	if p.is("{") {
		y = p.parseInitList(nil)
	} else {
		y = p.parseAssign()
	}
	return p.newBinary(Span{x.Pos(), y.End()}, op, opPos, x, y)
}

// assignOp returns the canonical operator string for an assignment token.
func assignOp(b string) string {
	switch b {
	case "=":
		return "="
	case "+=":
		return "+="
	case "-=":
		return "-="
	case "*=":
		return "*="
	case "/=":
		return "/="
	case "%=":
		return "%="
	case "&=", "and_eq":
		return "&="
	case "|=", "or_eq":
		return "|="
	case "^=", "xor_eq":
		return "^="
	case "<<=":
		return "<<="
	case ">>=":
		return ">>="
	}
	return ""
}

// parseCond parses a conditional-expression `c ? a : b`.
func (p *parser) parseCond() Expr {
	x := p.parseBinary(1)
	if !p.is("?") {
		return x
	}
	return p.parseCondRest(x)
}

// parseCondRest parses `? a : b` after the condition x.
func (p *parser) parseCondRest(x Expr) Expr {
	p.next()
	save := p.noGT
	p.noGT = 0 // `a ? b > c : d` inside template args is fine
	then := p.parseExpr()
	p.noGT = save
	if !p.got(":") {
		return p.badExpr(x.Pos(), "expected ':' in conditional expression")
	}
	els := p.parseAssign()
	c := slot(&p.slabs.sCondExpr)
	c.Span, c.Cond, c.Then, c.Else = Span{x.Pos(), els.End()}, x, then, els
	return c
}

// binaryOp returns the canonical operator and its precedence (higher binds
// tighter), or 0 when b is not a binary operator.
func binaryOp(b string) (string, int) {
	switch b {
	case "||", "or":
		return "||", 1
	case "&&", "and":
		return "&&", 2
	case "|":
		return "|", 3
	case "^":
		return "^", 4
	case "&":
		return "&", 5
	case "==":
		return "==", 6
	case "!=", "not_eq":
		return "!=", 6
	case "<":
		return "<", 7
	case ">":
		return ">", 7
	case "<=":
		return "<=", 7
	case ">=":
		return ">=", 7
	case "<=>":
		return "<=>", 8
	case "<<":
		return "<<", 9
	case ">>":
		return ">>", 9
	case "+":
		return "+", 10
	case "-":
		return "-", 10
	case "*":
		return "*", 11
	case "/":
		return "/", 11
	case "%":
		return "%", 11
	case ".*":
		return ".*", 12
	case "->*":
		return "->*", 12
	}
	return "", 0
}

// binaryOp1 is binaryOp for the one-byte punctuators, indexed by ptok.pb.
var binaryOp1 = func() (t [256]struct {
	op   string
	prec uint8
}) {
	for c := range t {
		op, prec := binaryOp(string(rune(c)))
		t[c].op, t[c].prec = op, uint8(prec)
	}
	return t
}()

// prefixOp1 is prefixOp for the one-byte punctuators, indexed by ptok.pb.
var prefixOp1 = func() (t [256]string) {
	for c := range t {
		t[c] = prefixOp(string(rune(c)))
	}
	return t
}()

// parseBinary parses binary operators of precedence >= minPrec.
func (p *parser) parseBinary(minPrec int) Expr {
	return p.binaryRest(p.unaryOperand(), minPrec)
}

// binaryRest parses the binary operators of precedence >= minPrec and
// their right operands after the left operand x.
func (p *parser) binaryRest(x Expr, minPrec int) Expr {
	for {
		t := &p.toks[p.i]
		if t.Kind != Punct {
			return x
		}
		var op string
		var prec int
		if pb := t.pb; pb != 0 {
			// A one-byte punctuator (or a canonical digraph, never an
			// operator).
			op, prec = binaryOp1[pb].op, int(binaryOp1[pb].prec)
		} else {
			op, prec = binaryOp(p.src[t.Start:t.End])
		}
		if prec < minPrec || prec == 0 || p.noGT > 0 && op[0] == '>' {
			return x
		}
		opPos := int(t.Start)
		p.next()
		y := p.unaryOperand()
		if !closesExpr[p.toks[p.i].pb] {
			y = p.binaryRest(y, prec+1)
		}
		x = p.newBinary(Span{x.Pos(), y.End()}, op, opPos, x, y)
	}
}

// parseUnary parses prefix operators, casts, sizeof, new and delete. It
// runs once per operand: the depth guard is released without a defer.
func (p *parser) parseUnary() Expr {
	if !p.enter() {
		p.leave()
		return p.deepExpr()
	}
	x := p.parseUnaryIn()
	p.leave()
	return x
}

// parseUnaryIn is parseUnary inside the depth guard.
func (p *parser) parseUnaryIn() Expr {
	pt := &p.toks[p.i]
	start := int(pt.Start)
	switch pt.Kind {
	case Punct:
		var op string
		if pt.pb != 0 {
			op = prefixOp1[pt.pb]
		} else {
			op = prefixOp(p.textOf(p.tok()))
		}
		if op != "" {
			p.next()
			x := p.unaryOperand()
			u := slot(&p.slabs.sUnaryExpr)
			u.Span, u.Op, u.X = Span{start, x.End()}, op, x
			return u
		}
		if p.isK(tkScope) && (p.isAtK(1, kwNew) || p.isAtK(1, kwDelete)) {
			p.next()
			if p.isK(kwNew) {
				return p.parseNew(start)
			}
			return p.parseDelete(start)
		}
		if pt.pb == '(' {
			if t, ok := p.castAhead(); ok {
				return p.parseCCast(start, t)
			}
		}
	case Identifier:
		// The words below are all keywords but "__alignof": most operands
		// skip the string switch.
		if pt.cls&clsKeyword != 0 || pt.End-pt.Start == 9 && p.word() == "__alignof" {
			switch w := p.word(); w {
			case "sizeof", "alignof", "__alignof__", "_Alignof", "__alignof":
				return p.parseSizeof(start, w)
			case "new":
				return p.parseNew(start)
			case "delete":
				return p.parseDelete(start)
			case "co_await", "co_yield":
				p.next()
				x := p.unaryOperand()
				return newNode(&p.slabs.sUnaryExpr, UnaryExpr{Span: Span{start, x.End()}, Op: w, X: x})
			}
		}
		return p.parsePostfix(p.parseIdentExpr()) // parsePrimary's Identifier case
	}
	return p.parsePostfix(p.parsePrimary())
}

func prefixOp(b string) string {
	switch b {
	case "+":
		return "+"
	case "-":
		return "-"
	case "!":
		return "!"
	case "~":
		return "~"
	case "*":
		return "*"
	case "&":
		return "&"
	case "++":
		return "++"
	case "--":
		return "--"
	case "&&":
		return "&&" // GNU label address
	}
	return ""
}

// deepExpr is returned when nesting exceeds maxDepth: the rest of the
// innermost group is kept as an OpaqueExpr.
func (p *parser) deepExpr() Expr {
	start := p.curStart()
	for !p.atEOF() && !p.is(";") && !p.is(")") && !p.is("]") && !p.is("}") && !p.is(",") {
		if p.is("(") || p.is("[") || p.is("{") {
			p.skipBalanced()
			continue
		}
		p.next()
	}
	return &OpaqueExpr{Span: p.spanFrom(start), Reason: "nesting too deep"}
}

// badExpr reports an expression error and returns an OpaqueExpr from start
// to the current position; it consumes one token unless that token closes
// an enclosing construct, so callers always progress.
func (p *parser) badExpr(start int, msg string) Expr {
	t := p.tok()
	if !p.atEOF() && !p.is(";") && !p.is(")") && !p.is("]") && !p.is("}") && !p.is(",") && !p.is(":") {
		p.next()
	}
	sp := p.spanFrom(start)
	// An error inside this construct was already reported: one diagnostic
	// per problem, not one per enclosing parenthesis.
	if n := len(p.diags); n == 0 || p.diags[n-1].Pos < start {
		p.errorf(min(sp.Start, t.Start), max(sp.Stop, t.Start), "PARSE012", msg)
	}
	return &OpaqueExpr{Span: sp, Reason: msg}
}

// ---------------------------------------------------------------------------
// Casts, sizeof, new, delete

// castAhead decides whether the '(' at the current token starts a C-style
// cast: the parenthesised tokens form a type and either the type is known to
// be one (builtin, declared in the file, `_t`, pointer, cv) or a plain name
// not in scope is followed by an operand. For a cast it returns the type
// it parsed and leaves the parser at the ')' after it, so that parseCCast
// need not parse the type again (see sideState); otherwise, or when
// the type must be parsed again, it returns nil and the parser is back at
// the '('.
func (p *parser) castAhead() (*TypeRef, bool) { return p.keepTypeLookahead(p.castType) }

// keepTypeLookahead runs lookahead, a test that parses a parenthesised
// type, and keeps the type it parsed when the test says yes and changed
// no state a second parse would see (sideState); otherwise it returns nil
// with the parser back where it was. castAhead and typeInParens share it.
func (p *parser) keepTypeLookahead(lookahead func() (*TypeRef, bool)) (*TypeRef, bool) {
	m := p.mark()
	side := p.sideState()
	t, ok := lookahead()
	if !ok || p.sideState() != side {
		p.reset(m)
		return nil, ok
	}
	return t, true
}

// castType is castAhead's test from the '(' on. On true the parser is at
// the ')' after the type it returns.
func (p *parser) castType() (*TypeRef, bool) {
	p.next()
	known := p.startsType()
	if !known && !p.typeTailAhead() {
		return nil, false // `(a + b)`, `(x[i])`, `(f(x))`: no parse needed
	}
	name := p.typeNameAhead()
	if !known && (!p.isIdent() && !p.isK(tkScope) || p.isKeyword()) {
		return nil, false
	}
	if !known && p.isIdent() && p.pbAt(1, '*') {
		// `(A * (B * 2))`: `A *(...)` would be a function type, which no
		// cast names; a product of variables from elsewhere.
		k := 1
		for p.pbAt(k, '*') {
			k++
		}
		if p.pbAt(k, '(') {
			return nil, false
		}
	}
	t := p.parseTypeID()
	if t == nil || !p.is(")") || !known && len(t.Array) > 0 {
		return nil, false
	}
	if known || t.Pointers > 0 || t.Ref || t.Const {
		return t, p.inScope(name) == nil
	}
	if p.inScope(name) != nil || p.macro(name) != nil {
		return nil, false
	}
	m := p.mark() // at the ')'
	p.next()
	k := p.toks[p.i].Kind
	ok := k == Identifier && !binaryWord(p.word()) || k == Number || k == Char || k == String ||
		p.is("~") || p.is("!") || p.is("{") || p.is("(") && (p.isTypeName(name) || p.castFollows())
	p.reset(m)
	return t, ok
}

// castFollows reports whether the '(' at the current token opens a cast
// to a known type, `(intptr_t)` or `(int *)`: `(H)(intptr_t)x` with H from
// a header is then a chain of casts.
func (p *parser) castFollows() bool {
	t := p.peek(1)
	if t.Kind != Identifier {
		return false
	}
	k := &p.toks[p.i+1]
	if k.cls&clsBuiltin == 0 && (k.cls&clsKeyword != 0 || !p.isTypeName(p.textOf(t))) {
		return false
	}
	return p.pbAt(2, ')') || p.pbAt(2, '*')
}

// sideState is the parser state that a speculative parse may change and
// reset does not restore: names declared as types or templates (a
// typedef or using in a lambda body, say; the sets only grow) and the
// one-time depth report.
//
// castAhead and typeInParens parse a type speculatively, and their callers
// used to reset and parse it again. The second parse starts from the same
// position and state (reset restores the position, diagnostics, '>>'
// splits and scope symbols; interned names and slab nodes are only
// storage; the memo of '<' tokens that open no template arguments gives
// the answer the first parse computed), so it yields the same type and
// leaves the same state. So they keep the first parse, unless the
// sideState changed during it, which a second parse would see.
type sideState struct {
	types, templates int
	deepReported     bool
}

func (p *parser) sideState() sideState {
	return sideState{len(p.types.m), len(p.templates.m), p.deepReported}
}

// typeNameAhead is qualifiedNameAhead for castType and parenType, whose
// name is most often one word (`(float)x`, `sizeof(int)`): where neither
// the current token nor the next is '::', qualifiedNameAhead's loop takes
// nothing and it returns the current word (wordAt(0): "" for a
// non-identifier, else the identifier's source view), read here without
// the loop's token copies.
func (p *parser) typeNameAhead() string {
	toks, i := p.toks, p.i
	if t := &toks[i]; t.kw != tkScope && (i+1 >= len(toks) || toks[i+1].kw != tkScope) {
		if t.Kind != Identifier {
			return ""
		}
		return p.src[t.Start:t.End] // an identifier is not empty
	}
	return p.qualifiedNameAhead()
}

// typeTailAhead reports whether the token after the current identifier can
// continue a type inside parentheses (`T)`, `T *`, `T &`, `ns::T`, `T<`).
func (p *parser) typeTailAhead() bool {
	if !p.isIdent() {
		return p.isK(tkScope)
	}
	switch p.punctByte(1) {
	case ')', '*', '&', '<':
		return true
	}
	return p.isAtK(1, tkScope) || p.isAtK(1, tkAndAnd) || p.peek(1).Kind == Identifier
}

// binaryWord reports identifiers that cannot start an operand.
func binaryWord(w string) bool { return w == "and" || w == "or" || w == "xor" || w == "bitand" }

// parseCCast parses `(T)x` and the compound literal `(T){...}`. t is the
// type castAhead kept, or nil when it must be parsed (again) from the '('.
func (p *parser) parseCCast(start int, t *TypeRef) Expr {
	if t == nil {
		p.next()
		t = p.parseTypeID()
	}
	p.next() // ')', checked by castAhead
	if p.is("{") {
		il := p.parseInitList(t)
		il.Start = start
		return il
	}
	x := p.unaryOperand()
	c := slot(&p.slabs.sCastExpr)
	c.Span, c.Kind, c.Type, c.X = Span{start, x.End()}, "c", t, x
	return c
}

// parseSizeof parses sizeof/alignof of a type or an expression, and
// `sizeof...(pack)`.
func (p *parser) parseSizeof(start int, kw string) Expr {
	p.next()
	se := slot(&p.slabs.sSizeofExpr)
	se.Keyword = kw
	if p.gotK(tkEllipsis) {
		se.Keyword = p.keep(kw + "...")
	}
	isType := false
	if p.is("(") {
		se.Type, isType = p.typeInParens()
	}
	switch {
	case !isType:
		se.X = p.unaryOperand()
	case se.Type != nil: // kept by typeInParens: the parser is at the ')'
		p.got(")")
	default:
		p.next()
		se.Type = p.parseTypeID()
		p.got(")")
	}
	se.Span = p.spanFrom(start)
	return se
}

// typeInParens reports whether `( ... )` at the current token holds a type
// (for sizeof): a type-like start, or a name that is not a variable. For a
// type it returns the type it parsed and leaves the parser at the ')'
// after it (see sideState); otherwise, or when the type must be
// parsed again, it returns nil and the parser is back at the '('.
func (p *parser) typeInParens() (*TypeRef, bool) { return p.keepTypeLookahead(p.parenType) }

// parenType is typeInParens' test from the '(' on. On true the parser is
// at the ')' after the type it returns.
func (p *parser) parenType() (*TypeRef, bool) {
	p.next()
	name := p.typeNameAhead()
	known := p.startsType()
	if !known && (p.inScope(name) != nil || !p.isIdent() || p.isKeyword()) {
		return nil, false
	}
	if p.inScope(name) != nil {
		return nil, false
	}
	t := p.parseTypeID()
	if t == nil || !p.is(")") {
		return nil, false
	}
	// An unknown plain name (`sizeof(header_)`, `sizeof(x[0])`) is more
	// likely a variable than a type from an unseen header; `sizeof(Foo *)`
	// can only be a type.
	return t, known || t.Pointers > 0 || t.Ref
}

// parseNew parses `new (place) T(args)`, `new T[n]`, `new T{...}`.
func (p *parser) parseNew(start int) Expr {
	p.next()
	ne := &NewExpr{}
	if p.is("(") {
		p.skipBalanced() // placement arguments
	}
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, nil)
	if !ds.hasType {
		return p.badExpr(start, "expected a type after new")
	}
	d := &declarator{typ: newNode(&p.slabs.sTypeRef, TypeRef{Base: ds.base, BaseSpan: ds.baseSpan, Const: ds.isConst})}
	first, last := -1, -1
	for k := p.i; p.ptrOperator(d); k = p.i {
		if first < 0 {
			first = k
		}
		last = p.i
	}
	p.finishType(d.typ, ds, first, last, p.curStart())
	ne.Type = d.typ
	if p.is("[") {
		p.next()
		ne.Count = p.parseExprIn()
		p.got("]")
		for p.is("[") {
			p.skipBalanced()
		}
	}
	switch {
	case p.is("("):
		ne.Args, _, _ = p.parseArgs()
	case p.is("{"):
		ne.Args = []Expr{p.parseInitList(nil)}
	}
	ne.Span = p.spanFrom(start)
	return ne
}

func (p *parser) parseDelete(start int) Expr {
	p.next()
	de := &DeleteExpr{}
	if p.is("[") && p.pbAt(1, ']') {
		p.next()
		p.next()
		de.Array = true
	}
	de.X = p.unaryOperand()
	de.Span = Span{start, de.X.End()}
	return de
}

// parseExprIn parses an expression inside brackets, where '>' compares
// again even within template arguments.
func (p *parser) parseExprIn() Expr {
	save := p.noGT
	p.noGT = 0
	x := p.parseExpr()
	p.noGT = save
	return x
}

// ---------------------------------------------------------------------------
// Postfix

// parsePostfix parses calls, subscripts, member access, ++/-- and kernel
// launches after a primary expression.
func (p *parser) parsePostfix(x Expr) Expr {
	for {
		t := &p.toks[p.i]
		if t.Kind != Punct {
			return x
		}
		// Most operands end at a one-byte punctuator (')', ';', ','):
		// decide those by the punctuator byte alone.
		switch t.pb {
		case '(':
			var args []Expr
			var lp, rp int
			if p.isMacroCall(x) {
				args, lp, rp = p.parseMacroArgs()
			} else {
				args, lp, rp = p.parseArgs()
			}
			c := slot(&p.slabs.sCallExpr)
			c.Span, c.Fun, c.Args, c.Lparen, c.Rparen = Span{x.Pos(), p.lastEnd}, x, args, lp, rp
			x = c
			continue
		case '[':
			if p.pbAt(1, '[') {
				return x
			}
			x = p.parseIndex(x)
			if _, bad := x.(*OpaqueExpr); bad {
				return x // unclosed '[': stop here
			}
			continue
		case '.':
			x = p.parseMember(x)
			continue
		case 0:
		default:
			return x
		}
		switch {
		case p.isK(tkArrow):
			x = p.parseMember(x)
		case p.isK(tkInc) || p.isK(tkDec):
			op := "++"
			if p.isK(tkDec) {
				op = "--"
			}
			p.next()
			u := slot(&p.slabs.sUnaryExpr)
			u.Span, u.Op, u.Postfix, u.X = Span{x.Pos(), p.lastEnd}, op, true, x
			x = u
		case p.isK(tkLaunchOpen):
			x = p.parseLaunch(x)
		default:
			return x
		}
	}
}

// parseIndex parses `x[index]` (the index may be a braced list).
func (p *parser) parseIndex(x Expr) Expr {
	lb := p.curStart()
	p.next()
	var idx Expr
	switch {
	case p.is("{"):
		idx = p.parseInitList(nil)
	default:
		idx = p.parseExprIn()
	}
	rb := p.curStart()
	if !p.got("]") {
		return p.badExpr(x.Pos(), "expected ']'")
	}
	ix := slot(&p.slabs.sIndexExpr)
	ix.Span, ix.X, ix.Index, ix.Lbrack, ix.Rbrack = Span{x.Pos(), p.lastEnd}, x, idx, lb, rb
	return ix
}

// parseArgs parses `( args )` and returns them with the paren offsets.
func (p *parser) parseArgs() ([]Expr, int, int) {
	lp := p.curStart()
	p.next()
	save := p.noGT
	p.noGT = 0
	list := &p.slabs.exprs
	mark := len(list.items)
	for t := &p.toks[p.i]; t.Kind != EOF && t.pb != ')'; t = &p.toks[p.i] {
		before := p.i
		list.push(p.parseArg())
		// The argument is followed by ',', or by '...' and maybe ','.
		// Anything else ends the list (a token is skipped where the
		// argument consumed none).
		if p.toks[p.i].pb != ',' {
			p.gotK(tkEllipsis)
			if !p.is(",") {
				if !p.is(")") && p.i == before {
					p.next()
				}
				break
			}
		}
		p.next() // ','
	}
	args := list.finish(mark)
	p.noGT = save
	rp := p.curStart()
	if !p.got(")") {
		p.errorf(lp, p.lastEnd, "PARSE012", "expected ')' to close argument list")
		rp = p.lastEnd
	}
	return args, lp, rp
}

// isMacroCall reports whether x names a function-like macro: defined in
// this file, or spelled in capitals as macros are.
func (p *parser) isMacroCall(x Expr) bool {
	id, ok := x.(*Ident)
	if !ok {
		return false
	}
	if m := p.macro(id.Name); m != nil {
		return m.IsFunc
	}
	return isAllCaps(id.Name)
}

// parseMacroArgs parses the arguments of a macro invocation. An argument
// that is not an expression (`SWAP(int, a, b)`, `STR(a + )`) is kept as an
// OpaqueExpr without a diagnostic: macros take token soup.
func (p *parser) parseMacroArgs() ([]Expr, int, int) {
	lp := p.curStart()
	p.next()
	save := p.noGT
	p.noGT = 0
	list := &p.slabs.exprs // see listStack; arguments push and pop above mark
	mark := len(list.items)
	for !p.atEOF() && !p.is(")") {
		list.push(p.parseMacroArg())
		if !p.got(",") {
			break
		}
	}
	args := list.finish(mark)
	p.noGT = save
	rp := p.curStart()
	if !p.got(")") {
		p.errorf(lp, p.lastEnd, "PARSE012", "expected ')' to close macro arguments")
		rp = p.lastEnd
	}
	return args, lp, rp
}

// parseMacroArg parses one macro argument, falling back to an OpaqueExpr
// up to the next ',' or ')' at depth 0.
func (p *parser) parseMacroArg() Expr {
	m := p.mark()
	x := p.parseArg()
	if len(p.diags) == m.diags && (p.is(",") || p.is(")")) {
		return x
	}
	p.reset(m)
	start := p.curStart()
	for !p.atEOF() && !p.is(",") && !p.is(")") && !p.is(";") && !p.is("}") {
		if p.is("(") || p.is("[") || p.is("{") {
			p.skipBalanced()
			continue
		}
		p.next()
	}
	return &OpaqueExpr{Span: p.spanFrom(start), Reason: "macro argument"}
}

// parseArg parses one call argument (a braced list is allowed).
func (p *parser) parseArg() Expr {
	if p.is("{") {
		return p.parseInitList(nil)
	}
	return p.parseAssign()
}

// parseMember parses `.name`, `->name`, `.template f<T>`, `->~T`.
//
// A member name of one identifier (`.x`, `->next`; no template, operator,
// '~' or '::') is taken here, as memberName would take it.
func (p *parser) parseMember(x Expr) Expr {
	var arrow, ok bool
	var name string
	if i := p.i; !p.general && i+2 < len(p.toks) {
		op, t, n := &p.toks[i], &p.toks[i+1], &p.toks[i+2]
		if t.Kind == Identifier && t.kw != kwTemplate && t.kw != kwOperator && n.kw != tkScope {
			start, end := int(t.Start), int(t.End)
			p.i, p.lastEnd = i+2, end
			arrow, name = op.kw == tkArrow, p.src[start:end]
			goto member
		}
	}
	if arrow, name, ok = p.memberName(); !ok {
		return p.badExpr(x.Pos(), "expected member name")
	}
member:
	me := slot(&p.slabs.sMemberExpr)
	me.Span, me.X, me.Arrow, me.Name = Span{x.Pos(), p.lastEnd}, x, arrow, name
	if p.toks[p.i].pb == '<' && p.templateAhead(name) {
		m := p.mark()
		if args, _, ok := p.parseTemplateArgs(); ok {
			me.Args = args
			me.Stop = p.lastEnd
			return me
		}
		p.reset(m)
	}
	return me
}

// memberName consumes the operator and member name of parseMember's
// general case (`.template f`, `->~T`, `.operator()`, `.Base::m`); ok is
// false, after the operator and a `template`, where no name follows.
func (p *parser) memberName() (arrow bool, name string, ok bool) {
	arrow = p.isK(tkArrow)
	p.next()
	p.gotK(kwTemplate)
	nameStart := p.curStart()
	if p.is("~") {
		p.next()
	}
	if p.isK(kwOperator) {
		p.operatorName()
	} else if p.isIdent() {
		p.next()
	} else {
		return arrow, "", false
	}
	for p.isK(tkScope) && p.peek(1).Kind == Identifier {
		p.next() // x.Base::member
		p.next()
	}
	return arrow, p.spanText(nameStart, p.lastEnd), true
}

// parseLaunch parses `<<<grid, block[, shmem[, stream]]>>>(args)`.
func (p *parser) parseLaunch(kernel Expr) Expr {
	p.next()
	save := p.noGT
	p.noGT = 0
	le := slot(&p.slabs.sLaunch)
	le.Kernel = kernel
	for !p.atEOF() && !p.isK(tkLaunchClose) {
		if le.Config == nil {
			le.Config = carve(&p.slabs.argChunk, 4)
		}
		le.Config = append(le.Config, p.parseArg())
		if !p.got(",") {
			break
		}
	}
	p.noGT = save
	if !p.gotK(tkLaunchClose) {
		return p.badExpr(kernel.Pos(), "expected '>>>' closing the launch configuration")
	}
	if !p.is("(") {
		return p.badExpr(kernel.Pos(), "expected '(' after launch configuration")
	}
	le.Args, le.Lparen, le.Rparen = p.parseArgs()
	le.Span = Span{kernel.Pos(), p.lastEnd}
	p.sawLaunch = true
	return le
}

// ---------------------------------------------------------------------------
// Simple operands

// unaryOperand is parseUnary with a shortcut for its most frequent operand:
// a plain identifier or a number (or character) literal, possibly followed
// by postfix operators (`x`, `n`, `f(a)`, `v[i].x`). leaf builds the node
// that parseUnary would build, without the calls through parseUnaryIn,
// parsePrimary, parseIdentExpr and parseName and their tests; anything
// else, and an operand that parseUnary's depth guard would not let in
// (leaf leaves it to parseUnary, which reports it), goes to parseUnary.
func (p *parser) unaryOperand() Expr {
	x, f := p.leaf()
	switch f {
	case followOther:
		x = p.parseUnary()
	case followPostfix:
		p.depth++ // parsePostfix runs inside parseUnary's guard
		x = p.parsePostfix(x)
		p.depth--
	}
	return x
}

// closesExpr marks the one-byte punctuators (by ptok.pb) that end an
// assignment-expression after an operand: no binary, conditional or
// assignment operator, nothing that extends the operand.
var closesExpr = func() (t [256]bool) {
	for _, c := range ")],;}:" {
		t[c] = true
	}
	return t
}()

// The operand fast path (see unaryOperand): a plain identifier or a number
// or character literal (a leaf) becomes its node directly instead of
// through parseUnary, parseUnaryIn, parsePrimary, parseIdentExpr and
// parseName. TestFastPathsAgree and TestLeafDeclinesSpecialWords check
// that it builds exactly what they build.

// What the token after a leaf operand does to it.
const (
	followEnds    uint8 = iota // nothing: the operand is complete, an operator may follow
	followClose                // a one-byte punctuator in closesExpr: the assignment-expression ends too
	followPostfix              // a call, subscript, member access, ++/-- or launch (parsePostfix)
	followOther                // not a leaf, or '<', '::' or '{' after one: template arguments, a qualified name or a typed braced list (the general path)
)

// leaf is the operand fast path's first step. When the current token is a
// leaf and the token after it lets it stand alone or take postfix
// operators, it consumes the leaf and returns its node (an Ident or a
// BasicLit, as parsePrimary builds them) and what that next token does to
// it (followEnds, followClose or followPostfix). Otherwise it returns nil
// and followOther, consuming nothing: the token is no leaf, a '<', '::' or
// '{' follows, or parseUnary's depth guard would not let the operand in
// (the general path then reports it).
//
// A leaf is an identifier outside the classes that parseUnaryIn and
// parseIdentExpr dispatch on (keywords include auto, sizeof, new, this,
// throw, ...; "__alignof" is the one word they test that has no class), a
// number or a character literal; strings join with their neighbours
// (parseStrings).
func (p *parser) leaf() (Expr, uint8) {
	if p.general || p.depth >= maxDepth || p.i+1 >= len(p.toks) {
		return nil, followOther
	}
	t, n := &p.toks[p.i], &p.toks[p.i+1]
	start, end := int(t.Start), int(t.End)
	switch t.Kind {
	case Identifier:
		if t.cls&(clsKeyword|clsExprWord|clsBuiltin|clsOpWord) != 0 || p.word() == "__alignof" {
			return nil, followOther
		}
		switch {
		case n.pb == '<':
			return p.leafBeforeLess(start, end)
		case n.kw == tkScope:
			return p.leafQualified(p.i)
		}
		f := follower(n)
		if f == followOther {
			return nil, f // '{': a typed braced list
		}
		p.next()
		return p.newIdent(Span{start, end}, p.src[start:end]), f
	case Number, Char:
		f := follower(n)
		if f == followOther {
			return nil, f
		}
		p.next()
		lit := slot(&p.slabs.sBasicLit)
		lit.Span, lit.Kind, lit.Value = Span{start, end}, t.Kind, p.src[start:end]
		return lit, f
	}
	return nil, followOther
}

// leafBeforeLess is leaf for an identifier it takes (see leaf) followed by
// '<': a comparison `i < n` when the name is a variable, else possibly
// template arguments `f<T>(x)`. It takes the leaf, with followEnds (the '<'
// is then a binary operator), when the name is no template name and is in
// scope, and otherwise returns nil and followOther, consuming nothing.
//
// Exactness: the general path (parseUnary -> parseUnaryIn -> parseIdentExpr
// -> parseName) takes such a name (no keyword, expression word, builtin or
// operator word) in parseName's loop and asks maybeTemplateArgs, whose
// templateAhead answers false for a name that is no template name and is
// in scope (it looks the name up with the parser at the '<', as here). No
// '::' or '{' follows, so parseName returns Ident{Span{start, end}, name}
// with the parser at the '<', and parsePostfix adds nothing at a '<'. The
// depth guard parseUnary would pass is leaf's.
func (p *parser) leafBeforeLess(start, end int) (Expr, uint8) {
	name := p.src[start:end]
	if p.isTemplateName(name) {
		return nil, followOther
	}
	p.i++ // at the '<'
	if p.inScope(name) == nil {
		p.i--
		return nil, followOther
	}
	p.lastEnd = end
	return p.newIdent(Span{start, end}, name), followEnds
}

// leafQualified is leaf for an identifier it takes (see leaf, at index i)
// followed by '::': it takes `a::b`, where b is an identifier that is no
// keyword or operator word and the token after b lets the name stand alone
// or take postfix operators (follower), as an Ident named as parseName
// names it (spanText of the three tokens). Otherwise (`a::b::c`, `a::b<T>`,
// `a::~b`, ...) it returns nil and followOther, consuming nothing.
//
// Exactness: the general path (parseUnary -> parseUnaryIn ->
// parseIdentExpr -> parseName) takes a (no keyword, expression word,
// builtin or operator word: plainName declines it only for the '::'),
// then the '::' (qualifierFollows: an identifier follows) and b in
// parseName's loop (no template, operator or '~' case applies to such a
// b), finds neither '<' nor '::' after b and returns
// Ident{spanFrom(start), spanText(start, lastEnd)} with the parser after
// b; the token after b is no '{' (follower), so parseIdentExpr returns
// it, and parsePostfix continues as leaf's caller does. The depth guard
// parseUnary would pass is leaf's.
func (p *parser) leafQualified(i int) (Expr, uint8) {
	b := &p.toks[i+2] // '::' at i+1 is not the last (EOF) token
	if b.Kind != Identifier || b.cls&(clsKeyword|clsOpWord) != 0 {
		return nil, followOther
	}
	f := follower(&p.toks[i+3]) // nor is b
	if f == followOther {
		return nil, f
	}
	start, end := int(p.toks[i].Start), int(b.End)
	p.i, p.lastEnd = i+3, end
	return p.newIdent(Span{start, end}, p.spanText(start, end)), f
}

// follower classifies the token n after a leaf: a one-byte punctuator by
// pb, anything else by its token id (followerKW is followEnds for every id
// but the listed punctuators', so the kind need not be tested: pb and kw
// are 0 for the other tokens without an id).
func follower(n *ptok) uint8 {
	f := followerKW[n.kw]
	if n.pb != 0 {
		f = followerPB[n.pb]
	}
	return f
}

// followerPB classifies the one-byte punctuators (by ptok.pb; digraphs are
// canonical) after a leaf operand.
var followerPB = func() (t [256]uint8) {
	for c := range t {
		if closesExpr[c] {
			t[c] = followClose
		}
	}
	for _, c := range "([." {
		t[c] = followPostfix
	}
	for _, c := range "<{" {
		t[c] = followOther
	}
	return t
}()

// followerKW classifies the multi-byte punctuators (by token id; those
// without one, such as "==" or "+=", end the operand) after a leaf operand.
var followerKW = func() (t [256]uint8) {
	for _, k := range []uint8{tkArrow, tkInc, tkDec, tkLaunchOpen} {
		t[k] = followPostfix
	}
	t[tkScope] = followOther
	return t
}()
