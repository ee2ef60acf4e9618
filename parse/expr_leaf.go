package parse

// The operand fast path: a plain identifier or a number or character
// literal (a leaf) becomes its node without the calls through parseUnary,
// parseUnaryIn, parsePrimary, parseIdentExpr and parseName and their tests
// (see unaryOperand and parseAssign).

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
// (parseStrings). A leaf is never the last (EOF) token, so the bounds
// test below only spares the compiler its own, and p.next's test is moot.
// The node's text views the token's source bytes as p.view does (a leaf
// is never empty and lies inside src: no bounds test needed).
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
var followerKW = func() (t [256]uint8) { // 256: indexed by a byte without a bounds test
	for _, k := range []uint8{tkArrow, tkInc, tkDec, tkLaunchOpen} {
		t[k] = followPostfix
	}
	t[tkScope] = followOther
	return t
}()
