package parse

import "unsafe"

// The operand fast path: a plain identifier or a number or character
// literal (a leaf) becomes its node without the calls through parseUnary,
// parseUnaryIn, parsePrimary, parseIdentExpr and parseName and their tests
// (see simpleOperand and parseAssign).

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
	if p.depth >= maxDepth || uint(i+1) >= uint(len(toks)) {
		return nil, followOther
	}
	t := &toks[i]
	switch t.Kind {
	case Identifier:
		if t.cls&(clsKeyword|clsExprWord|clsBuiltin|clsOpWord) != 0 ||
			t.End-t.Start == 9 && p.word() == "__alignof" {
			return nil, followOther
		}
	case Number, Char:
	default:
		return nil, followOther
	}
	var f uint8
	if n := &toks[i+1]; n.pb != 0 { // a one-byte punctuator (pb is 0 for every other kind)
		f = followerPB[n.pb]
	} else if n.Kind == Punct {
		f = followerKW[n.kw]
	}
	if f == followOther {
		return nil, f
	}
	start, end, kind := int(t.Start), int(t.End), t.Kind
	text := unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(p.src)), start)), end-start)
	p.lastEnd = end
	p.i = i + 1
	if kind == Identifier {
		return p.newIdent(Span{start, end}, text), f
	}
	lit := slot(&p.slabs.sBasicLit)
	lit.Span, lit.Kind, lit.Value = Span{start, end}, kind, text
	return lit, f
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
var followerKW = func() (t [numTokIDs]uint8) {
	for _, k := range []uint8{tkArrow, tkInc, tkDec, tkLaunchOpen} {
		t[k] = followPostfix
	}
	t[tkScope] = followOther
	return t
}()
