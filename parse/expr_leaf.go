package parse

import "unsafe"

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
	toks, i := p.toks, p.i
	if p.depth >= maxDepth || uint(i)+1 >= uint(len(toks)) {
		return nil, followOther
	}
	// t and its follower through one pointer (i+1 < len(toks) was just
	// tested): &toks[i] made the compiler compute each field's address
	// from the base and index again (three instructions per byte load).
	t := (*ptok)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(toks)), uintptr(i)*unsafe.Sizeof(ptok{})))
	switch kind := t.Kind; kind {
	case Identifier:
		if t.cls&(clsKeyword|clsExprWord|clsBuiltin|clsOpWord) != 0 ||
			t.End-t.Start == 9 && p.word() == "__alignof" {
			return nil, followOther
		}
		n := (*ptok)(unsafe.Add(unsafe.Pointer(t), unsafe.Sizeof(ptok{})))
		f := follower(n)
		if f == followOther {
			return p.leafName() // '<', '::' or '{' after the name
		}
		start, end := int(t.Start), int(t.End)
		p.lastEnd = end
		p.i = i + 1
		// The node goes into its slab's next slot, as newIdent and slot
		// do; a full slab is refilled by leafSlow, a tail call, so that
		// no value of this path lives across a call (the compiler spilled
		// five registers on every leaf for two makeslice calls). Each
		// kind's path is written out: a shared tail tested the kind again.
		s := p.identSlab
		k := len(s)
		if k >= cap(s) {
			return p.leafSlow(kind, start, end, f)
		}
		p.identSlab = s[:k+1]
		id := (*Ident)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), uintptr(k)*unsafe.Sizeof(Ident{})))
		id.Span, id.Name = Span{start, end}, srcString(p.src, start, end)
		return id, f
	case Number, Char:
		f := follower((*ptok)(unsafe.Add(unsafe.Pointer(t), unsafe.Sizeof(ptok{}))))
		if f == followOther {
			return nil, f
		}
		start, end := int(t.Start), int(t.End)
		p.lastEnd = end
		p.i = i + 1
		s := p.slabs.sBasicLit.buf
		k := len(s)
		if k >= cap(s) {
			return p.leafSlow(kind, start, end, f)
		}
		p.slabs.sBasicLit.buf = s[:k+1]
		lit := (*BasicLit)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), uintptr(k)*unsafe.Sizeof(BasicLit{})))
		lit.Span, lit.Kind, lit.Value = Span{start, end}, kind, srcString(p.src, start, end)
		return lit, f
	}
	return nil, followOther
}

// leafName is leaf for an identifier it takes (see leaf; the current
// token) followed by a token that follower sends to the general path: '<'
// (see leafBeforeLess), '::' (see leafQualified) or '{'. It is out of line
// and takes no arguments, so that leaf's common path does not pay for its
// cases (with arguments, the compiler's register choice in leaf changed and
// its jumps took ~4 more alignment NOPs per leaf).
//
//go:noinline
func (p *parser) leafName() (Expr, uint8) {
	i := p.i
	switch n := &p.toks[i+1]; {
	case n.pb == '<':
		return p.leafBeforeLess(int(p.toks[i].Start), int(p.toks[i].End))
	case n.kw == tkScope:
		return p.leafQualified(i)
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
	name := srcString(p.src, start, end)
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

// leafSlow builds leaf's node when its slab is full (newIdent and slot
// start a new chunk).
//
//go:noinline
func (p *parser) leafSlow(kind TokenKind, start, end int, f uint8) (Expr, uint8) {
	text := srcString(p.src, start, end)
	if kind == Identifier {
		return p.newIdent(Span{start, end}, text), f
	}
	lit := slot(&p.slabs.sBasicLit)
	lit.Span, lit.Kind, lit.Value = Span{start, end}, kind, text
	return lit, f
}

// srcString returns src[start:end] as a string viewing the source bytes,
// as p.view does, without its tests (and without unsafe.String's checks):
// for a token's bounds, which lie inside src and are never empty.
func srcString(src []byte, start, end int) string {
	return *(*string)(unsafe.Pointer(&stringHeader{unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), start), end - start}))
}

// stringHeader is a string's representation.
type stringHeader struct {
	data unsafe.Pointer
	len  int
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
