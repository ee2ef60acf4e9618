package parse

// appendPlain is the common case of appendTextFrom: it takes the tokens
// from k on while each one is plain, and returns the index of the first
// token it did not take, with done set when appendTextFrom's general loop
// would stop right there (the range or the tokens ended), so that it need
// not run at all.
//
// Exactness: a token is plain when it lies wholly in [start,end) (so the
// general loop neither stops at it nor clips it), is not empty, is not a
// punctuator that origStart could move (one right after a '>' byte that no
// earlier token covers), and is not an identifier that mayDropFromType lets
// through to notInType. For such a token the general loop does nothing but
// appendSrc(off, stop), which appendPlain does inline with the source range
// (p.bufSrc, p.bufEnd) in locals: start the range, or extend it when the
// piece is adjacent, or one blank away where spaceBefore puts a space; at
// the first piece that leaves the range, copy the range to p.buf and
// append from then on. kept stays true: no token taken here is dropped.
// The token where it stops is the general loop's first: if that loop would
// stop at it (its start, after origStart, at or past end, or EOF), done.
//
// With callConvSkip, mayDropFromType passes every identifier to
// notInType, which can drop one only if it is a specifier, the 17-byte
// __launch_bounds__, a macro, or all caps (then isTypeName decides). A
// word that starts in lower case, or is a keyword or builtin type word
// (each has a lower-case letter: checked in init), is none of these
// unless the tests without callConvSkip say so.
func (p *parser) appendPlain(k, start, end int) (int, bool) {
	toks, src := p.toks, p.src
	vs, ve := p.bufSrc, p.bufEnd
	if vs < 0 && len(p.buf) > 0 {
		vs = -2 // building in p.buf
	}
	skip := p.callConvSkip
	for ; k < len(toks); k++ {
		t := &toks[k]
		off, stop := int(t.Start), int(t.End)
		if t.Kind == Punct && off > 0 && src[off-1] == '>' && (k == 0 || int(toks[k-1].End) != off) {
			break // origStart may move it: the general loop decides
		}
		if off >= end || t.Kind == EOF {
			p.plainDone(vs, ve)
			return k, true
		}
		if off < start || stop > end || off >= stop {
			break // clipped or empty
		}
		if t.Kind == Identifier {
			c := src[off]
			if t.cls&clsSpec != 0 || stop-off == len("__launch_bounds__") || p.maybeMacro(c, stop-off) ||
				skip && !(c >= 'a' && c <= 'z') && t.cls&(clsKeyword|clsBuiltin) == 0 {
				break // maybe not in the type: the general loop decides
			}
		}
		switch {
		case vs == -1: // empty
			vs, ve = off, stop
			continue
		case vs >= 0:
			space := p.spaceBefore(src[ve-1], src[off], stop-off)
			if !space && off == ve || space && off == ve+1 && src[ve] == ' ' {
				ve = stop
				continue
			}
			p.buf = append(p.buf[:0], src[vs:ve]...)
			vs = -2
		}
		if p.spaceBefore(p.buf[len(p.buf)-1], src[off], stop-off) {
			p.buf = append(p.buf, ' ')
		}
		p.buf = append(p.buf, src[off:stop]...)
	}
	p.plainDone(vs, ve)
	return k, k == len(toks)
}

// plainDone stores appendPlain's state: the source range, or -1 when the
// text is in p.buf or still empty.
func (p *parser) plainDone(vs, ve int) {
	if vs >= 0 {
		p.bufSrc, p.bufEnd = vs, ve
	} else {
		p.bufSrc = -1
	}
}

func init() {
	for w := range keywords {
		if isAllCaps(w) {
			panic("parse: appendPlain assumes no keyword is all caps: " + w)
		}
	}
	for w := range builtinTypeWords {
		if isAllCaps(w) {
			panic("parse: appendPlain assumes no builtin type word is all caps: " + w)
		}
	}
}

// spanView returns spanText(start, end) for a range that ends with token
// k (its End is end) when that text is the source range itself (see
// viewFrom); ok is false otherwise, and spanText builds the text.
func (p *parser) spanView(k, start, end int) (string, bool) {
	if _, ok := p.viewFrom(k, start, false); ok {
		return p.src[start:end], true
	}
	return "", false
}

// viewFrom reports whether the tokens of a range [start, end) that ends
// with token k (its End is end) read as the source range: walking back
// from token k to the one that starts at start (returned), each token is
// not empty and follows the one before it directly where spaceBefore puts
// no space, or after exactly one blank where it puts one. With words, each
// identifier must also be one that mayDropFromType lets through (then
// appendTextFrom keeps every word), and no calling convention is skipped.
// ok is false otherwise (the range starts inside a token, a token is
// empty, a word may be dropped, or the text differs from the source).
//
// Exactness: appendTextFrom starts at the token that starts at start (the
// one before it ends at or before start) and takes every token up to
// token k whole (each lies in [start,end)); with skipSpecs false a
// dropped word only clears kept, it is still appended. No token of the
// range after the first is moved by origStart: it starts at the previous
// token's End, or after a blank, so no '>' byte precedes it that no token
// covers (a token split by closeAngle starts after such a byte, which
// fails both tests). Each piece extends the source range exactly when the
// tests here hold (appendSrc, appendPlain), and the token after k starts,
// even by origStart, at or after token k's End: the text is
// src[start:end], and with words appendTextFrom returns kept true.
func (p *parser) viewFrom(k, start int, words bool) (int, bool) {
	toks, src := p.toks, p.src
	if words && p.callConvSkip {
		return 0, false
	}
	for ; k >= 0; k-- {
		t := &toks[k]
		off, stop := int(t.Start), int(t.End)
		if off >= stop || t.Kind == EOF || off < start {
			return 0, false
		}
		if words && t.Kind == Identifier && (t.cls&clsSpec != 0 || stop-off == len("__launch_bounds__") || p.maybeMacro(src[off], stop-off)) {
			return 0, false // mayDropFromType: notInType decides
		}
		if off == start {
			return k, true
		}
		if k == 0 {
			return 0, false
		}
		pe := int(toks[k-1].End)
		if pe <= start {
			return 0, false // the text would start after start
		}
		space := p.spaceBefore(src[pe-1], src[off], stop-off)
		if !(!space && off == pe || space && off == pe+1 && src[pe] == ' ') {
			return 0, false
		}
	}
	return 0, false
}

// viewRun is viewFrom with words for a range whose first token j is known:
// it reports whether tokens j..k (j <= k, token j not empty) read as the
// source from token j's Start to token k's End, each identifier one that
// mayDropFromType lets through (no calling convention skipped). Walking
// forward from a known first token needs neither viewFrom's start tests
// nor its end test. Exactness: as viewFrom's, whose tests it makes per
// token (token j's own word test included).
func (p *parser) viewRun(j, k int) bool {
	toks, src := p.toks, p.src
	if p.callConvSkip {
		return false
	}
	t := &toks[j]
	pe := int(t.End)
	for {
		if t.Kind == Identifier {
			off, stop := int(t.Start), int(t.End)
			if t.cls&clsSpec != 0 || stop-off == len("__launch_bounds__") || p.maybeMacro(src[off], stop-off) {
				return false // mayDropFromType: notInType decides
			}
		}
		if j == k {
			return true
		}
		j++
		t = &toks[j]
		off, stop := int(t.Start), int(t.End)
		if off >= stop || t.Kind == EOF {
			return false
		}
		space := p.spaceBefore(src[pe-1], src[off], stop-off)
		if !(!space && off == pe || space && off == pe+1 && src[pe] == ' ') {
			return false
		}
		pe = stop
	}
}
