package parse

// Primary expressions: literals, names (qualified, templated), parentheses,
// lambdas, braced lists, named and functional casts.

import "strings"

// parsePrimary parses a primary expression. It reads the view entry once
// and dispatches on its kind and punctuator byte or id (the Token it
// built, and a p.is per punctuator, reloaded the entry for each test).
func (p *parser) parsePrimary() Expr {
	pt := &p.toks[p.i]
	switch pt.Kind {
	case Identifier:
		return p.parseIdentExpr()
	case Number, Char:
		start, end, kind := int(pt.Start), int(pt.End), pt.Kind
		p.next()
		return newNode(&p.slabs.sBasicLit, BasicLit{Span: Span{start, end}, Kind: kind, Value: p.view(start, end)})
	case String:
		return p.parseStrings()
	case Punct:
		switch pt.pb {
		case '(':
			return p.parseParen()
		case '[':
			return p.parseLambda()
		case '{':
			return p.parseInitList(nil)
		}
		switch pt.kw {
		case tkScope:
			return p.parseName()
		case tkEllipsis:
			// The pack in a fold expression `(xs + ... + 0)`.
			start, end := int(pt.Start), int(pt.End)
			p.next()
			return &Ident{Span: Span{start, end}, Name: "..."}
		}
	}
	return p.badExpr(int(pt.Start), "expected an expression")
}

// parseStrings joins adjacent string literals, and macros between them as
// in `"%" PRIu64 "\n"`, into one BasicLit.
func (p *parser) parseStrings() Expr {
	start := p.curStart()
	n := 0
	for p.toks[p.i].Kind == String || n > 0 && p.isIdent() && p.peek(1).Kind == String {
		p.next()
		n++
	}
	lit := slot(&p.slabs.sBasicLit)
	lit.Span, lit.Kind = p.spanFrom(start), String
	if n == 1 {
		lit.Value = p.view(start, p.lastEnd)
	} else {
		lit.Value = p.spanTextSpaced(start, p.lastEnd)
	}
	return lit
}

// spanTextSpaced joins the tokens in [start,end) with single spaces.
func (p *parser) spanTextSpaced(start, end int) string {
	var b []byte
	for k := p.tokIndexAt(start); k < len(p.toks) && int(p.toks[k].Start) < end; k++ {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, p.textAt(k)...)
	}
	return string(b)
}

// parseIdentExpr parses an expression starting with an identifier or keyword.
func (p *parser) parseIdentExpr() Expr {
	if p.toks[p.i].cls&(clsKeyword|clsExprWord|clsBuiltin) == 0 {
		// An ordinary name (no keyword, and "auto" is one; no
		// expression word; no builtin type): none of the tests below
		// applies, and the Token and word they read are not needed.
		x := p.parseName()
		if p.toks[p.i].pb == '{' && p.typedBraceOK(x) {
			return p.typedInitList(x)
		}
		return x
	}
	t := p.tok()
	w := p.word()
	c := p.toks[p.i].cls
	// Every word below is a keyword or has the clsExprWord class: most
	// names skip the string switch.
	if c&(clsKeyword|clsExprWord) != 0 {
		switch w {
		case "this", "nullptr", "true", "false", "__func__", "__FUNCTION__", "__PRETTY_FUNCTION__":
			p.next()
			return p.newIdent(Span{t.Start, t.End}, w)
		case "static_cast", "dynamic_cast", "const_cast", "reinterpret_cast":
			return p.parseNamedCast(w)
		case "typename", "template":
			p.next()
			return p.parseName()
		case "typeid":
			if p.pbAt(1, '(') {
				return p.parseTypeid(t.Start)
			}
			return p.parseName()
		case "decltype", "noexcept", "__builtin_offsetof", "offsetof", "__typeof__", "typeof", "_Generic":
			return p.parseName()
		case "operator":
			return p.parseName()
		}
	}
	if c&clsBuiltin != 0 || w == "auto" {
		return p.parseFunctionalCast()
	}
	if c&clsKeyword != 0 {
		if w != "const" {
			return p.badExpr(t.Start, "unexpected '"+w+"' in expression")
		}
		return p.parseFunctionalCast()
	}
	x := p.parseName()
	if p.is("{") && p.typedBraceOK(x) {
		return p.typedInitList(x)
	}
	return x
}

// typedBraceOK reports whether `Name{...}` is a typed braced initializer:
// the name is a known type or has template arguments.
func (p *parser) typedBraceOK(x Expr) bool {
	switch n := x.(type) {
	case *TemplateIdent:
		return true
	case *Ident:
		if p.inScope(n.Name) != nil {
			return false
		}
		return p.isTypeName(n.Name) || p.braceTemporaryAt(n.Start)
	}
	return false
}

// braceTemporaryAt reports whether an unknown name starting at offset start
// and followed by '{' is a brace temporary (`ns::plus{}`,
// `cudaExtent{n, 1, 1}`, types from headers the parser does not read): the
// token before the name is an operator, '(', ',', '[' or `return`, where
// no statement begins. At the start of a statement (after ';', '{', '}',
// ')', ':' or `else`) `NAME {` is left to the macro rules.
func (p *parser) braceTemporaryAt(start int) bool {
	k := p.i
	for k > 0 && int(p.toks[k-1].Start) >= start {
		k--
	}
	if k == 0 {
		return false
	}
	t := &p.toks[k-1]
	if t.kw == kwReturn {
		return true
	}
	if t.Kind != Punct {
		return false
	}
	switch t.pb {
	case ';', '{', '}', ')', ':', ']':
		return false
	}
	return true
}

// typedInitList parses `T{...}` after the name T.
func (p *parser) typedInitList(x Expr) Expr {
	t := newNode(&p.slabs.sTypeRef, TypeRef{Span: Span{x.Pos(), x.End()}, BaseSpan: Span{x.Pos(), x.End()}})
	switch n := x.(type) {
	case *Ident:
		t.Base, t.Text = n.Name, n.Name
	case *TemplateIdent:
		t.Base = p.spanText(n.Start, n.Stop)
		t.Text = t.Base
	}
	il := p.parseInitList(t)
	il.Start = x.Pos()
	return il
}

// parseName parses a possibly qualified name with template arguments:
// `x`, `::x`, `std::max`, `f<T, 8>`, `std::numeric_limits<float>::max`.
func (p *parser) parseName() Expr {
	if !p.general {
		if x := p.plainName(); x != nil {
			return x
		}
	}
	start := p.curStart()
	p.gotK(tkScope)
	for {
		t := &p.toks[p.i]
		switch {
		case t.kw == kwTemplate:
			p.next()
			continue
		case t.kw == kwOperator:
			p.operatorName()
		case t.pb == '~' && p.peek(1).Kind == Identifier:
			p.next()
			p.next()
		case t.Kind == Identifier && t.cls&(clsKeyword|clsOpWord) != 0 && isOperatorWord(p.word()):
			// isOperatorWord's words are all keywords or clsOpWord (see
			// plainName): other names skip its string switch.
			p.next()
			if p.word() == "decltype" || p.is("(") && (p.wordAt(-1) == "decltype" || p.wordAt(-1) == "__typeof__" || p.wordAt(-1) == "typeof") {
				p.skipBalanced()
			}
		case t.Kind == Identifier:
			p.next()
		default:
			if p.lastEnd <= start {
				return p.badExpr(start, "expected a name")
			}
		}
		if p.toks[p.i].pb == '<' { // else maybeTemplateArgs returns nil
			if ti := p.maybeTemplateArgs(start); ti != nil {
				if p.isK(tkScope) && p.qualifierFollows() {
					p.next()
					continue
				}
				return ti
			}
		}
		if p.isK(tkScope) && p.qualifierFollows() {
			p.next()
			continue
		}
		return p.newIdent(p.spanFrom(start), p.spanText(start, p.lastEnd))
	}
}

// plainName is parseName's fast path for the most frequent name: one
// ordinary identifier followed by neither '<' nor '::'. It returns nil
// (consuming nothing) when the general loop must decide.
func (p *parser) plainName() *Ident {
	t := &p.toks[p.i]
	if t.Kind != Identifier || t.cls&(clsKeyword|clsOpWord) != 0 {
		return nil // keywords, and offsetof and kin (isOperatorWord)
	}
	n := &p.toks[p.i+1] // an identifier is never the last (EOF) token
	if n.pb == '<' || n.Kind == Punct && n.End-n.Start == 2 && p.src[n.Start] == ':' && p.src[n.Start+1] == ':' {
		return nil
	}
	start, end := int(t.Start), int(t.End)
	p.next()
	return p.newIdent(Span{start, end}, p.src[start:end])
}

// qualifierFollows reports whether the token after the current '::' can
// continue a qualified name.
func (p *parser) qualifierFollows() bool {
	t := p.peek(1)
	return t.Kind == Identifier || p.pbAt(1, '~') || p.pbAt(1, '*')
}

// maybeTemplateArgs parses template arguments after the name [start,
// lastEnd) when '<' opens them; nil otherwise (nothing consumed).
func (p *parser) maybeTemplateArgs(start int) *TemplateIdent {
	if !p.is("<") {
		return nil
	}
	name := p.spanText(start, p.lastEnd)
	if !p.templateAhead(name) {
		return nil
	}
	m := p.mark()
	args, as, ok := p.parseTemplateArgs()
	if !ok {
		p.reset(m)
		return nil
	}
	ti := slot(&p.slabs.sTmplIdent)
	ti.Span, ti.Name, ti.Args, ti.ArgsSpan = p.spanFrom(start), name, args, as
	return ti
}

// templateAhead decides whether the '<' after name opens template
// arguments: name is a known template, or the '<...>' closes and is
// followed by '(', '::' or '<<<'.
func (p *parser) templateAhead(name string) bool {
	if p.isTemplateName(name) {
		return true
	}
	if p.inScope(name) != nil {
		return false
	}
	close, rest := p.matchAngleIdx(p.i)
	if close < 0 {
		return false
	}
	if rest {
		// `Bar<int>>` inside template arguments: the rest of '>>' closes
		// the enclosing list.
		return p.noGT > 0
	}
	if p.textIs(close, "(") || p.textIsK(close, tkScope) || p.textIsK(close, tkLaunchOpen) {
		return true
	}
	// `base<int>{1}` (a brace temporary), and a variable template used
	// as a value: `tile_size_v<CG>;`, `f(is_pod_v<T>)`. A comparison
	// chain cannot end in '>' before these tokens.
	switch p.toks[close].pb {
	case '{', ';', ')', ',', ']', '}':
		return true
	}
	// A variable template by its conventional name (`tile_size_v<CG> * 2`).
	return strings.HasSuffix(name, "_v")
}

// matchAngleIdx scans from the '<' at index i for its closing '>' and
// returns the index after it. rest is true when the closer was the first
// byte of a longer token ('>>'), so something else follows immediately.
// It gives up (-1) at tokens that cannot appear in template arguments.
func (p *parser) matchAngleIdx(i int) (int, bool) {
	depth := 0
	for ; i < len(p.toks)-1 && i < p.i+256; i++ {
		switch string(p.textAt(i)) {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
			if depth < 0 {
				return i + 1, true
			}
		case ">>>":
			depth -= 3
			if depth < 0 {
				return i + 1, true
			}
		case "(", "[":
			i = p.skipGroupIdx(i) - 1
		case ";", "{", "}", ")", "]", "&&", "||", "=", "<<<", "?", ":":
			return -1, false
		}
		if depth == 0 {
			return i + 1, false
		}
	}
	return -1, false
}

// skipGroupIdx returns the index after the balanced () or [] group at i.
func (p *parser) skipGroupIdx(i int) int {
	depth := 0
	for ; i < len(p.toks)-1; i++ {
		switch string(p.textAt(i)) {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return i + 1
			}
		case ";", "{", "}":
			return i
		}
	}
	return i
}

// parseParen parses `( expr )`.
func (p *parser) parseParen() Expr {
	start := p.curStart()
	p.next()
	x := p.parseExprIn()
	if !p.got(")") {
		return p.badExpr(start, "expected ')'")
	}
	pe := slot(&p.slabs.sParenExpr)
	pe.Span, pe.X = p.spanFrom(start), x
	return pe
}

// parseParenInit parses a declarator's `(args)` initializer.
func (p *parser) parseParenInit() Expr {
	start := p.curStart()
	args, lp, rp := p.parseArgs()
	pl := slot(&p.slabs.sParenList)
	pl.Span, pl.Args, pl.Lparen, pl.Rparen = p.spanFrom(start), args, lp, rp
	return pl
}

// parseNamedCast parses `static_cast<T>(x)` and friends.
// isOperatorWord reports the words that parseName takes with their
// parenthesised operand.
func isOperatorWord(w string) bool {
	switch w {
	case "decltype", "typeid", "noexcept", "offsetof", "__builtin_offsetof", "__typeof__", "typeof", "_Generic":
		return true
	}
	return false
}

func (p *parser) parseNamedCast(kind string) Expr {
	start := p.curStart()
	p.next()
	if !p.is("<") {
		return p.badExpr(start, "expected '<' after "+kind)
	}
	p.next()
	p.noGT++
	t := p.parseTypeID()
	p.noGT--
	if t == nil || !p.closeAngle() || !p.is("(") {
		return p.badExpr(start, "malformed "+kind)
	}
	p.next()
	x := p.parseExprIn()
	if !p.got(")") {
		return p.badExpr(start, "expected ')' after "+kind+" operand")
	}
	return &CastExpr{Span: p.spanFrom(start), Kind: kind, Type: t, X: x}
}

// parseFunctionalCast parses `float(x)`, `unsigned int{}`, `int()`.
func (p *parser) parseFunctionalCast() Expr {
	start := p.curStart()
	t := p.parseTypeID()
	if t == nil {
		return p.badExpr(start, "expected a type")
	}
	switch {
	case p.is("("):
		p.next()
		var x Expr
		if !p.is(")") {
			x = p.parseExprIn()
		}
		if !p.got(")") {
			return p.badExpr(start, "expected ')' after functional cast")
		}
		return &CastExpr{Span: p.spanFrom(start), Kind: "functional", Type: t, X: x}
	case p.is("{"):
		il := p.parseInitList(t)
		il.Start = start
		return il
	}
	return p.badExpr(start, "type name in expression")
}

// parseInitList parses `{ a, b, .x = c, [2] = d }` (designators dropped).
//
// The elements are pushed on the shared expression stack and finished
// into one exactly sized list, as parseArgs' are (no append growth: 1,
// 2, 4, 8 items were ~1,100 small allocations per parse). finish returns
// nil for no elements, as the appends left it; the list is only read.
func (p *parser) parseInitList(t *TypeRef) *InitListExpr {
	start := p.curStart()
	p.next()
	save := p.noGT
	p.noGT = 0
	il := slot(&p.slabs.sInitList) // zero: only the fields are stored
	il.Type = t
	list := &p.slabs.exprs // see listStack; nested lists push and pop above mark
	mark := len(list.items)
	for !p.atEOF() && !p.is("}") {
		before := p.i
		p.skipDesignator()
		list.push(p.parseArg())
		p.gotK(tkEllipsis)
		if !p.got(",") {
			if p.i == before {
				p.next()
			}
			if !p.is("}") {
				break
			}
		}
	}
	il.Elems = list.finish(mark)
	p.noGT = save
	if !p.got("}") {
		p.errorf(start, p.lastEnd, "PARSE012", "expected '}' to close initializer list")
	}
	il.Span = p.spanFrom(start)
	return il
}

// skipDesignator skips `.x =` and `[i] =` in a braced initializer.
func (p *parser) skipDesignator() {
	for {
		switch {
		case p.is(".") && p.peek(1).Kind == Identifier:
			p.next()
			p.next()
		case p.is("[") && !p.pbAt(1, '['):
			m := p.mark()
			p.skipBalanced()
			if !p.is("=") && !p.is("[") && !p.is(".") {
				p.reset(m)
				return
			}
		default:
			p.got("=")
			return
		}
	}
}

// parseLambda parses `[captures] <tparams> (params) specs -> R { body }`.
func (p *parser) parseLambda() Expr {
	start := p.curStart()
	p.skipBalanced()
	le := &LambdaExpr{Captures: p.spanFrom(start), Scope: &Scope{}}
	if p.is("<") {
		p.i = p.skipAnglesIdx(p.i)
		p.lastEnd = int(p.toks[p.i-1].End)
	}
	saved := p.scope
	if saved != nil {
		p.outer = append(p.outer, saved)
	}
	p.scope = le.Scope
	defer func() {
		p.scope = saved
		if saved != nil {
			p.outer = p.outer[:len(p.outer)-1]
		}
	}()
	p.lambdaSpecifiers() // `[=] __device__ (int i)`: extended lambdas
	if p.is("(") {
		d := &declarator{}
		p.parseParams(d)
		le.Params = d.params
		for _, prm := range d.params {
			p.declareParam(prm, true)
		}
	}
	p.lambdaSpecifiers()
	if !p.is("{") {
		return p.badExpr(start, "expected lambda body")
	}
	le.Body = p.parseBlock()
	le.Span = p.spanFrom(start)
	return le
}

// lambdaSpecifiers skips `mutable constexpr noexcept __device__ -> R`.
func (p *parser) lambdaSpecifiers() {
	for !p.atEOF() && !p.is("{") {
		switch w := p.word(); {
		case w == "mutable" || w == "constexpr" || w == "consteval" || specifierWords[w]:
			p.next()
		case w == "noexcept" || w == "__attribute__" || w == "throw" || w == "requires":
			p.next()
			if p.is("(") {
				p.skipBalanced()
			}
		case p.is("[") && p.pbAt(1, '['):
			p.skipBalanced()
		case p.isK(tkArrow):
			p.next()
			p.parseTypeID()
		default:
			return
		}
	}
}

// parseTypeid parses `typeid(type)` and `typeid(expr)` (a SizeofExpr with
// the keyword "typeid"); postfix operators after the ')' are the caller's.
func (p *parser) parseTypeid(start int) Expr {
	p.next()
	se := slot(&p.slabs.sSizeofExpr)
	se.Keyword = "typeid"
	t, isType := p.typeInParens()
	switch {
	case !isType:
		p.next() // '('
		se.X = p.parseExprIn()
		if !p.got(")") {
			return p.badExpr(start, "expected ')' after typeid operand")
		}
	case t != nil: // kept by typeInParens: the parser is at the ')'
		se.Type = t
		p.got(")")
	default:
		p.next()
		se.Type = p.parseTypeID()
		if !p.got(")") {
			return p.badExpr(start, "expected ')' after typeid operand")
		}
	}
	se.Span = p.spanFrom(start)
	return se
}
