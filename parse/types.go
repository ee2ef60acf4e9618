package parse

import "sort"

// Types and declarators. A declaration is split the C++ way: a specifier
// sequence (storage and CUDA specifiers, cv, the base type) shared by all
// declarators, then per declarator its pointer/reference operators, name,
// array dimensions or parameter list.

// declSpec is the parsed specifier sequence of a declaration.
type declSpec struct {
	specs      []string
	launch     *Span
	base       string
	baseSpan   Span
	typeStart  int // token index of the first type token (cv or base)
	typeOff    int // offset of that token (its Start; a type's first token is never split)
	typeEnd    int // token index after the last type token
	typeEndOff int // offset just past the last type token
	declared   int // declarators finished so far
	hasType    bool
	isConst    bool
	restrict   bool
	baseView   bool // base is the source text of baseSpan (a view)
	baseKept   bool // no word of base is one a type's text leaves out (see finishType)
	record     Decl // a struct/class/union/enum defined inside the specifiers
	startTok   int
}

// parseDeclSpecs parses specifiers and the base type. It stops at the first
// token that cannot continue the sequence (normally the declarator).
//
// ds must be zero: every caller declares a fresh one (`var dsv declSpec`),
// so only the two fields that do not start zero are set here, not the
// whole struct cleared a second time.
func (p *parser) parseDeclSpecs(ds *declSpec, ctx *declCtx) {
	ds.startTok, ds.typeStart = p.i, -1
	for p.specStep(ds, ctx) {
	}
}

// specStep consumes one specifier-sequence element; false ends the
// sequence: nothing was consumed, or (after a one-word or builtin base
// type) nothing more can be (endsAfterType), which spares the call that
// would end it at the declarator.
func (p *parser) specStep(ds *declSpec, ctx *declCtx) bool {
	t := &p.toks[p.i]
	if t.Kind != Identifier {
		switch {
		case p.is("[") && p.pbAt(1, '['):
			p.skipBalanced() // [[attribute]]
			return true
		case p.isK(tkScope) && !ds.hasType:
			p.parseNamedBase(ds)
			return true
		}
		return false
	}
	c := t.cls
	if c&(clsSpec|clsBuiltin|clsKeyword) == 0 {
		if ds.hasType {
			if !p.maybeMacro(p.src[t.Start], int(t.End-t.Start)) {
				// After the type, an ordinary word that names no macro
				// (normally the declarator name) ends the sequence:
				// nameSpec would return false.
				return false
			}
		} else if took, ends := p.oneWordBase(ds); took {
			return !ends
		}
		return p.nameSpec(ds, p.word())
	}
	switch {
	case c&clsSpec != 0:
		p.addSpec(ds, p.word()) // a view of the source, as p.keep returns it
		p.next()
		return true
	case c&clsBuiltin != 0:
		return p.builtinBase(ds)
	}
	return p.keywordSpec(ds, ctx)
}

// endsAfterType reports whether specStep, called at the current token
// once ds has a type, would return false at once: at a punctuator other
// than '[' (no attribute; '::' continues only a sequence without a type),
// or at EOF, or at an identifier of no specifier, builtin or keyword class
// that the macro filter rules out (normally the declarator name).
func (p *parser) endsAfterType() bool { return p.endsAt(&p.toks[p.i]) }

// endsAt is endsAfterType at token t.
func (p *parser) endsAt(t *ptok) bool {
	if t.Kind != Identifier {
		return t.pb != '['
	}
	return t.cls&(clsSpec|clsBuiltin|clsKeyword) == 0 && !p.maybeMacro(p.src[t.Start], int(t.End-t.Start))
}

// oneWordBase takes the common base type of one ordinary word (`float4`,
// `T`, `VertexT`) before any type, when no '<' or '::' follows it, as the
// path through nameSpec, parseNamedBase and setBase would: the word has no
// specifier, builtin or keyword class and names no macro (specStep goes to
// nameSpec, where p.macro is nil), it is not all caps or no identifier
// follows (unknownQualifier is false), so parseNamedBase consumes just it
// and setBase records it; baseText views its one token, which it keeps
// (mayDropFromType: whole, no specifier class, no calling convention
// skipped while specifiers are parsed, no macro; a 17-byte word other
// than the keyword __launch_bounds__ is no specifier, attribute or macro
// for notInType).
//
// specStep calls it for an identifier of none of those classes while ds
// has no type.
//
// ends reports, when it took the word, whether the sequence ends right
// after it (endsAfterType at the next token, which it has read already).
func (p *parser) oneWordBase(ds *declSpec) (took, ends bool) {
	toks := p.toks
	i := p.i
	if i+1 >= len(toks) {
		return false, false
	}
	t, n := &toks[i], &toks[i+1]
	if n.pb == '<' || n.kw == tkScope {
		return false, false
	}
	start, end := int(t.Start), int(t.End)
	w := p.src[start:end]
	if p.maybeMacro(w[0], len(w)) || n.Kind == Identifier && isAllCaps(w) {
		return false, false
	}
	p.takeWordBase(ds, i, start, w)
	return true, p.endsAt(n)
}

// takeWordBase consumes token i, the word w at offset start, as the whole
// base type, and records it as setBase would: baseText views the token
// and keeps it, as the callers have ruled out what mayDropFromType looks
// for (a specifier class, a macro, a 17-byte word: no builtin or ordinary
// word of that length is the keyword __launch_bounds__; no calling
// convention is skipped while specifiers are parsed).
func (p *parser) takeWordBase(ds *declSpec, i, start int, w string) {
	end := start + len(w)
	if ds.typeStart < 0 {
		ds.typeStart, ds.typeOff = i, start
	}
	p.i, p.lastEnd = i+1, end // p.next()
	ds.hasType = true
	ds.baseSpan = Span{start, end}
	ds.baseKept = false
	if p.noText == 0 {
		ds.base, ds.baseView, ds.baseKept = w, true, true
	}
	ds.typeEnd, ds.typeEndOff = i+1, end
}

// keywordSpec handles a keyword in a specifier sequence.
func (p *parser) keywordSpec(ds *declSpec, ctx *declCtx) bool {
	switch kw := p.toks[p.i].kw; kw {
	case kwLaunchBoundsUU:
		start := p.curStart()
		p.next()
		if p.is("(") {
			p.skipBalanced()
		}
		sp := p.spanFrom(start)
		ds.launch = &sp
	case kwAttributeUU, kwDeclspecU, kwAlignas, kwAlignUU, kwBuiltinAlignUU:
		p.next()
		if p.is("(") {
			p.skipBalanced()
		}
	case kwConst, kwVolatile:
		p.noteTypeTok(ds)
		ds.isConst = ds.isConst || kw == kwConst
		p.next()
	case kwRestrictUU, kwRestrictU, kwRestrict:
		ds.restrict = true
		p.next()
	case kwAuto:
		return p.builtinBase(ds)
	case kwStruct, kwClass, kwUnion, kwEnum:
		return p.tagBase(ds, ctx)
	case kwTypename:
		if ds.hasType {
			return false
		}
		p.noteTypeTok(ds)
		p.next()
		p.parseNamedBase(ds)
	case kwDecltype, kwTypeofUU, kwTypeof:
		if ds.hasType {
			return false
		}
		p.noteTypeTok(ds)
		start, k := p.curStart(), p.i
		p.next()
		p.skipBalanced()
		p.setBase(ds, start, k)
	default:
		return false
	}
	return true
}

// nameSpec handles an ordinary identifier in a specifier sequence: a macro
// standing for specifiers or attributes, the type name, or (after the
// type) the end of the sequence.
func (p *parser) nameSpec(ds *declSpec, w string) bool {
	// w is the current identifier: isMacroTok.
	if d := p.macroDefOf(w); d != nil {
		if isDeclAttr(d.attr) {
			if sp := p.skipAttrMacro(&ds.restrict); sp != nil {
				ds.launch = sp
			}
			return true
		}
		if m := d.m; d.spec != nil || !m.IsFunc && m.Body == "" && !ds.hasType {
			for _, s := range d.spec {
				p.addSpec(ds, s)
			}
			p.next()
			return true
		}
	}
	switch {
	case ds.hasType:
		return false
	case p.unknownQualifier(w):
		p.addSpec(ds, w)
		p.next()
	default:
		p.parseNamedBase(ds)
	}
	return true
}

// noteTypeTok records the current token as part of the type's range.
func (p *parser) noteTypeTok(ds *declSpec) {
	if ds.typeStart < 0 {
		ds.typeStart, ds.typeOff = p.i, p.curStart()
	}
	ds.typeEnd = p.i + 1
	ds.typeEndOff = p.curEnd()
}

// builtinBase consumes fundamental type words ("unsigned long long int").
// As a specStep, it returns whether the sequence may go on: false when it
// takes nothing (a builtin word after a type of other words), or when the
// token after the words ends the sequence (endsAfterType), sparing the
// specStep call that would end it.
func (p *parser) builtinBase(ds *declSpec) bool {
	if !ds.hasType {
		// One word (`int`, `float`) that no builtin word follows: the loop
		// below would consume just it, and setBase record it as
		// takeWordBase does when the macro filter rules it out. (An
		// identifier is never the last token: EOF is.)
		toks, i := p.toks, p.i
		if i+1 < len(toks) {
			t, n := &toks[i], &toks[i+1]
			start, end := int(t.Start), int(t.End)
			if !(n.Kind == Identifier && n.cls&clsBuiltin != 0) && !p.maybeMacro(p.src[start], end-start) {
				p.takeWordBase(ds, i, start, p.src[start:end])
				return !p.endsAt(n)
			}
		}
	} else if !ds.builtinOnly(p) {
		return false
	}
	start, k := p.curStart(), p.i
	if ds.hasType {
		start, k = ds.baseSpan.Start, -1
	}
	p.noteTypeTok(ds)
	p.next()
	for p.isIdent() && p.toks[p.i].cls&clsBuiltin != 0 {
		p.noteTypeTok(ds)
		p.next()
	}
	p.setBase(ds, start, k)
	return !p.endsAfterType()
}

// builtinOnly reports whether the base so far is made of builtin words, so
// `long` after `unsigned` extends it but `int` after `Foo` does not.
func (ds *declSpec) builtinOnly(p *parser) bool {
	for _, w := range splitWords(ds.base) {
		if !builtinTypeWords[w] {
			return false
		}
	}
	return ds.base != ""
}

func splitWords(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ' ' {
			i++
		}
		out = append(out, s[:i])
		for i < len(s) && s[i] == ' ' {
			i++
		}
		s = s[i:]
	}
	return out
}

// setBase sets the base type to the tokens from offset start to lastEnd;
// k is the index of the token that starts at start, or -1 if unknown.
func (p *parser) setBase(ds *declSpec, start, k int) {
	ds.hasType = true
	ds.baseSpan = p.spanFrom(start)
	ds.baseKept = false
	if p.noText == 0 {
		ds.base, ds.baseView, ds.baseKept = p.baseText(start, p.lastEnd, k)
	}
	ds.typeEnd = p.i
	ds.typeEndOff = p.lastEnd
}

// baseText is spanText for a base type, which also reports whether the
// text views the source and whether every word of it is kept in a type's
// text (appendTextFrom with skipSpecs drops none), so that finishType can
// start from it instead of joining the same tokens again.
func (p *parser) baseText(start, end, first int) (text string, view, kept bool) {
	// One token: first, when known, is the token just consumed (its End is
	// lastEnd), else the last token must span [start,end).
	if k := p.i - 1; first >= 0 && first == k || first < 0 && k >= 0 && int(p.toks[k].Start) == start && int(p.toks[k].End) == end {
		t := &p.toks[k]
		dropped := t.Kind == Identifier && p.mayDropFromType(t, start, end, true) && p.notInType(k, p.src[start:end], true)
		return p.view(start, end), true, !dropped
	}
	// More tokens (`std::size_t`, `unsigned int`, `std::vector<float>`),
	// which mostly read as their source and drop no word: viewFrom says so
	// without building the text.
	if k := p.i - 1; k >= 0 && int(p.toks[k].End) == end {
		if first >= 0 {
			if first < k && int(p.toks[first].Start) == start && int(p.toks[first].End) > start && p.viewRun(first, k) {
				return p.view(start, end), true, true
			}
		} else if _, ok := p.viewFrom(k, start, true); ok {
			return p.view(start, end), true, true
		}
	}
	if first < 0 {
		first = p.toksEndingAfter(start)
	}
	p.startText()
	kept = p.appendTextFrom(first, start, end, false)
	return p.bufText(), p.bufSrc == start && p.bufEnd == end, kept
}

// tagBase handles `struct X`, `enum class E : int { ... }`, `union { ... }`.
func (p *parser) tagBase(ds *declSpec, ctx *declCtx) bool {
	if ds.hasType {
		return false
	}
	if p.isRecordDef() {
		p.noteTypeTok(ds)
		start := p.curStart()
		rec, name := p.parseTagDef(ctx)
		ds.record = rec
		ds.hasType = true
		ds.base = name
		if name == "" {
			ds.base = p.wordIdx(ds.typeStart) // anonymous: "struct", "union", "enum"
		}
		ds.baseSpan = p.spanFrom(start)
		ds.typeEnd = p.i
		ds.typeEndOff = p.lastEnd
		return true
	}
	p.noteTypeTok(ds)
	p.next()
	if p.isK(kwClass) || p.isK(kwStruct) {
		p.next()
	}
	for p.isK(kwAlignUU) || p.isK(kwAlignas) || p.isK(kwAttributeUU) {
		p.next()
		p.skipBalanced()
	}
	p.parseNamedBase(ds)
	return true
}

// unknownQualifier decides that an unknown ALL_CAPS identifier in specifier
// position is a macro standing for specifiers (`DEVICE_FN float f()`), when
// a type and a declarator still follow it.
func (p *parser) unknownQualifier(w string) bool {
	if !isAllCaps(w) || p.types.has(w) || p.peek(1).Kind != Identifier {
		return false
	}
	next := p.wordAt(1)
	cls := p.at(1).cls // the word classes of next: no map lookups
	if cls&(clsSpec|clsBuiltin) != 0 || next == "const" || next == "auto" || next == "struct" {
		return true
	}
	if cls&clsKeyword != 0 {
		return false
	}
	// `MACRO Type name` or `MACRO Type *name`, `MACRO ns::Type`, `MACRO T<...>`.
	after := p.peek(2)
	if after.Kind == Identifier {
		return true
	}
	return p.pbAt(2, '*') || p.pbAt(2, '&') || p.isAtK(2, tkScope) || p.pbAt(2, '<')
}

// parseNamedBase parses a possibly qualified, possibly templated type name
// (`std::vector<int>`, `::cub::BlockReduce<T, 128>::TempStorage`).
func (p *parser) parseNamedBase(ds *declSpec) {
	start, k := p.curStart(), p.i
	p.noteTypeTok(ds)
	p.gotK(tkScope)
	for {
		if !p.isIdent() {
			break
		}
		p.next()
		if p.is("<") {
			m := p.mark()
			if !p.skipTemplateArgs() {
				p.reset(m)
			}
		}
		if !p.isK(tkScope) || !(p.peek(1).Kind == Identifier) {
			break
		}
		p.next()
		if p.isK(kwTemplate) {
			p.next()
		}
	}
	p.setBase(ds, start, k)
}

// skipTemplateArgs parses `<...>` in a type and discards the arguments.
func (p *parser) skipTemplateArgs() bool {
	if !p.general && p.skipWordArgs() {
		return true
	}
	// The arguments are thrown away, so their types need no text: building
	// it at every nesting level would cost depth x length.
	p.noText++
	_, _, ok := p.parseTemplateArgs()
	p.noText--
	return ok
}

// skipWordArgs is skipTemplateArgs for arguments that are one word or
// number each, before a one-byte '>' (`std::vector<VertexT>`, `<float,
// 4>`; ~1.2k per parse): it consumes them and the '>' and returns true,
// or consumes nothing and returns false for any other.
//
// Exactness: parseTemplateArgs at this '<' fails at once if the memo
// (badAngle) says so, and templateArgs needs p.depth+1 <= maxDepth to
// enter; both are tested here, with one level more, which leaf needs
// (below). Then templateArgList takes each argument by parseTemplateArg,
// each at a word or number (not '>', EOF, ';', '{', '}' or ')'), and
// after each, no '...', a ',' that it consumes, or the '>', which
// closeAngle consumes whole (one byte: no split). For each argument:
//   - a word of builtin and no specifier class that the macro filter
//     rules out: wordTypeArg takes it (wordType);
//   - a word of no class that the macro filter rules out, other than
//     __alignof (no class: leaf sends it to parseUnary): wordTypeArg takes
//     it if isTypeName knows it; else startsType is false (no '::'
//     follows, isTypeName said no) and parseCond takes it: leaf makes its
//     Ident (depth < maxDepth, no class leaf tests, ',' or '>' after it
//     makes no postfix or other follower), binaryRest stops at ',' (no
//     binary operator) or '>' (noGT > 0), no '?' follows;
//   - a number: wordTypeArg (no identifier) and startsType (no '::') say
//     no, and parseCond takes it the same way (leaf's BasicLit).
//
// The arguments are discarded (skipTemplateArgs), so the nodes those paths
// make need not be made; none of them reports anything or changes state
// but the position, which ends after the '>' with lastEnd at its end.
func (p *parser) skipWordArgs() bool {
	toks, i := p.toks, p.i
	if w := i >> 6; w < len(p.badAngle) && p.badAngle[w]&(1<<(i&63)) != 0 || p.depth+1 >= maxDepth {
		return false
	}
	for j := i + 1; j+1 < len(toks); j += 2 {
		t, n := &toks[j], &toks[j+1]
		switch {
		case t.Kind == Number:
		case t.Kind != Identifier || p.maybeMacro(p.src[t.Start], int(t.End-t.Start)):
			return false
		case t.cls&clsBuiltin != 0:
			if t.cls&clsSpec != 0 {
				return false
			}
		case t.cls != 0 || t.End-t.Start == 9 && p.wordIdx(j) == "__alignof":
			return false
		}
		switch {
		case n.pb == ',':
		case n.pb == '>' && n.End-n.Start == 1:
			p.i, p.lastEnd = j+2, int(n.End) // p.next() at each token
			return true
		default:
			return false
		}
	}
	return false
}

// parseTemplateArgs parses `< arg, ... >` (current token '<'), each argument
// a type or an expression. On failure the caller resets.
func (p *parser) parseTemplateArgs() ([]Node, Span, bool) {
	// A '<' that failed to open template arguments fails again: remembering
	// it keeps nested speculation (type, then expression, at every level)
	// linear instead of exponential on hostile input.
	// A bit set over the token indices, not a map: no hashing per '<'.
	at := p.i
	if w := at >> 6; w < len(p.badAngle) && p.badAngle[w]&(1<<(at&63)) != 0 {
		return nil, Span{}, false
	}
	args, sp, ok := p.templateArgs()
	if !ok {
		if p.badAngle == nil {
			p.badAngle = make([]uint64, (len(p.toks)+63)>>6)
		}
		p.badAngle[at>>6] |= 1 << (at & 63)
	}
	return args, sp, ok
}

// templateArgs does the work of parseTemplateArgs. (The depth and noGT
// are restored without defers: a panic ends the parse, see recoverPanic.)
func (p *parser) templateArgs() ([]Node, Span, bool) {
	start := p.curStart()
	p.next()
	if !p.enter() {
		p.leave()
		return nil, Span{}, false
	}
	p.noGT++
	args, ok := p.templateArgList()
	p.noGT--
	p.leave()
	if !ok {
		return nil, Span{}, false
	}
	return args, p.spanFrom(start), true
}

// templateArgList parses template arguments up to and including the
// closing '>'; false when they are not template arguments.
func (p *parser) templateArgList() ([]Node, bool) {
	var args []Node
	for !p.closeAngle() {
		if p.atEOF() || p.is(";") || p.is("{") || p.is("}") || p.is(")") {
			return nil, false
		}
		a := p.parseTemplateArg()
		if a == nil {
			return nil, false
		}
		if args == nil {
			args = carve(&p.slabs.nodeChunk, 4)
		}
		args = append(args, a)
		p.gotK(tkEllipsis)
		if !p.got(",") && !p.isCloseAngle() {
			return nil, false
		}
	}
	return args, true
}

func (p *parser) isCloseAngle() bool {
	t := p.tok()
	return t.Kind == Punct && p.src[t.Start] == '>'
}

// parseTemplateArg parses one template argument as a type when it starts
// like one, else as an expression (where '>' is not an operator).
func (p *parser) parseTemplateArg() Node {
	if t := p.wordTypeArg(); t != nil {
		return t
	}
	if p.startsType() {
		m := p.mark()
		if t := p.parseTypeID(); t != nil && (p.is(",") || p.isCloseAngle() || p.isK(tkEllipsis)) {
			return t
		}
		p.reset(m)
	}
	if p.pointerTypeArgAhead() {
		m := p.mark()
		if t := p.parseTypeID(); t != nil && (p.is(",") || p.isCloseAngle() || p.isK(tkEllipsis)) {
			return t
		}
		p.reset(m)
	}
	x := p.parseCond()
	if _, bad := x.(*OpaqueExpr); bad {
		return nil
	}
	return x
}

// pointerTypeArgAhead reports whether the template argument at the
// current token is a name the parser does not know as a type followed by
// pointer or reference operators and then ',' or '>' (`vector<Ctrl *>`,
// `pair<ns::Node *, int>`, with the type from a header): as an expression
// `Ctrl * >` would lack an operand.
func (p *parser) pointerTypeArgAhead() bool {
	k := p.i
	if p.toks[k].kw == tkScope {
		k++
	}
	for {
		t := &p.toks[k]
		if t.Kind != Identifier || t.cls&(clsKeyword|clsOpWord|clsExprWord) != 0 {
			return false
		}
		k++
		if p.toks[k].kw != tkScope {
			break
		}
		k++
	}
	ops := 0
	for ; k < len(p.toks)-1; k++ {
		t := &p.toks[k]
		switch {
		case t.pb == '*' || t.pb == '&' || t.kw == tkAndAnd:
			ops++
		case t.kw == kwConst:
		case t.pb == ',' || t.pb == '>' || t.Kind == Punct && p.src[t.Start] == '>':
			return ops > 0
		default:
			return false
		}
	}
	return false
}

// wordTypeArg takes a template argument that is one type word before ','
// or '>' (`<float>`, `<T, N>`; ~2.4k per parse), as parseTemplateArg
// would, and returns nil for any other. Exactness: for a word of builtin
// class and no specifier class, or of no specifier, builtin or keyword
// class that isTypeName knows, that the macro filter rules out,
// startsType is true and parseTypeID takes its type path: specStep's
// builtinBase or oneWordBase takes the word alone (no builtin word, '<' or
// '::' follows; no macro; the follower is no identifier) by takeWordBase,
// endsAfterType ends the sequence at the ',' or '>', the path of
// operators alone makes the TypeRef, and finishType gives it the base's
// text and span (baseIsType: the type is the one kept word), or nothing
// inside discarded template arguments (noText), where takeWordBase
// records no base text either. parseTemplateArg returns it at the ',' or
// '>'.
func (p *parser) wordTypeArg() *TypeRef {
	toks, i := p.toks, p.i
	if i+1 >= len(toks) {
		return nil
	}
	t, n := &toks[i], &toks[i+1]
	if t.Kind != Identifier || n.pb != '>' && n.pb != ',' {
		return nil
	}
	start, end := int(t.Start), int(t.End)
	if p.maybeMacro(p.src[start], end-start) {
		return nil
	}
	w := p.src[start:end]
	switch c := t.cls; {
	case c&clsSpec != 0:
		return nil
	case c&clsBuiltin != 0:
	case c&clsKeyword != 0 || !p.isTypeName(w):
		return nil
	}
	return p.wordType(i, start, w)
}

// wordTypeID is parseTypeID for a type-id of one word before ')', '>' or
// ',' (`(float)x`, `sizeof(T)`, `<int>`), and nil, with nothing consumed,
// for any other. Exactness: for a word of builtin class and no specifier
// class, or of no specifier, builtin or keyword class, that the macro
// filter rules out, parseTypeID's specStep takes the word alone by
// builtinBase or oneWordBase (takeWordBase; no builtin word, '<' or '::'
// follows, and the follower is no identifier), which ends the sequence
// at the punctuator (endsAt), and the path of operators alone makes the
// TypeRef that wordType makes.
func (p *parser) wordTypeID() *TypeRef {
	toks, i := p.toks, p.i
	if i+1 >= len(toks) {
		return nil
	}
	t, n := &toks[i], &toks[i+1]
	if c := t.cls; t.Kind != Identifier || c&clsSpec != 0 || c&clsKeyword != 0 && c&clsBuiltin == 0 ||
		n.pb != ')' && n.pb != '>' && n.pb != ',' {
		return nil
	}
	start, end := int(t.Start), int(t.End)
	if p.maybeMacro(p.src[start], end-start) {
		return nil
	}
	return p.wordType(i, start, p.src[start:end])
}

// wordType consumes token i, the word w at offset start, as a whole
// type-id and returns its TypeRef as parseTypeID's path would make it:
// newTypeRef with the base takeWordBase records (no text inside discarded
// template arguments), no operators, and finishType's text and span of a
// type that is its base (baseIsType), or none under noText.
func (p *parser) wordType(i, start int, w string) *TypeRef {
	end := start + len(w)
	ty := slot(&p.slabs.sTypeRef)
	ty.BaseSpan = Span{start, end}
	if p.noText == 0 {
		ty.Span, ty.Text, ty.Base = Span{start, end}, w, w
	}
	p.i, p.lastEnd = i+1, end // p.next()
	return ty
}

// startsType reports whether the current token begins a type for sure:
// a fundamental type, cv, an elaborated keyword, or a known type name.
// The words are told by their class and token id (typeKeyword), with no
// string compares.
func (p *parser) startsType() bool {
	t := &p.toks[p.i]
	if t.Kind != Identifier {
		return p.isK(tkScope) && p.peek(1).Kind == Identifier && p.isTypeName(p.qualifiedNameAhead())
	}
	switch {
	case t.cls&clsBuiltin != 0:
		return true
	case t.cls&clsKeyword != 0:
		return typeKeyword(t.kw)
	case !p.isAtK(1, tkScope):
		return p.isTypeName(p.word()) // unqualified: qualifiedNameAhead would return the word
	}
	return p.isTypeName(p.qualifiedNameAhead())
}

// typeKeyword reports whether a keyword's token id is one that starts a
// type (cv, an elaborated keyword, typename, decltype, auto); the
// fundamental type words have the builtin class (init checks both).
func typeKeyword(kw uint8) bool {
	switch kw {
	case kwConst, kwVolatile, kwStruct, kwClass, kwUnion, kwEnum, kwTypename, kwDecltype, kwAuto:
		return true
	}
	return false
}

func init() {
	for _, w := range []string{"const", "volatile", "struct", "class", "union", "enum", "typename", "decltype", "auto", "unsigned"} {
		if cls, kw := wordInfo(w); cls&clsBuiltin == 0 && !(cls&clsKeyword != 0 && typeKeyword(kw)) {
			panic("parse: startsType misses type word " + w)
		}
	}
}

// qualifiedNameAhead returns the qualified name starting at the current
// token without consuming it ("a::b::c"; template arguments end it).
func (p *parser) qualifiedNameAhead() string {
	k := 0
	if p.isAtK(0, tkScope) {
		k = 1
	}
	end := k
	for p.peek(end).Kind == Identifier && p.isAtK(end+1, tkScope) && p.peek(end+2).Kind == Identifier {
		end += 2
	}
	if k == end && k == 0 {
		return p.wordAt(0)
	}
	start, stop := int(p.toks[p.i].Start), int(p.toks[p.i+end].End) // identifiers: not past EOF
	if s, ok := p.spanView(p.i+end, start, stop); ok {
		return s
	}
	return p.spanText(start, stop)
}

// parseTypeID parses a type with an abstract declarator (`const T *`,
// `int (*)(int)`), as in casts, sizeof, template arguments, new.
func (p *parser) parseTypeID() *TypeRef {
	if t := p.wordTypeID(); t != nil {
		return t
	}
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, nil)
	if !ds.hasType {
		return nil
	}
	// The most frequent abstract declarator is its operators alone
	// (`(float *)p`, `<int>`, `sizeof(T)`), then a ')', '>' or ',': in
	// parseDeclarator, ptrOperator takes each operator and returns false
	// there (a punctuator of none of its kinds), no '(' starts a group, no
	// name is parsed, declSuffixes finds neither '[' nor '(', and the type
	// has no group: the path below does just that, without the
	// declarator.
	toks, i := p.toks, p.i
	if j := p.plainOpsEnd(i); !p.general && (toks[j].pb == ')' || toks[j].pb == '>' || toks[j].pb == ',') {
		t := p.newTypeRef(ds)
		sh := p.plainOps(t, i, j, int(toks[j].Start))
		p.finishType(t, ds, sh.first, sh.last, sh.namePos)
		return t
	}
	var dv declarator
	d := &dv
	p.parseDeclarator(d, ds, declAbstract)
	if d.name != "" {
		return nil
	}
	return d.typ
}

// ---------------------------------------------------------------------------
// Declarators

// declMode says where a declarator appears, which decides what '(' means.
type declMode int

const (
	declFile     declMode = iota // namespace or class scope: '(' opens parameters
	declBlock                    // block scope: '(' opens an initializer
	declParam                    // parameter: name optional
	declAbstract                 // type-id: no name
)

// declarator is one declarator of a declaration.
type declarator struct {
	typ        *TypeRef
	name       string
	nameSpan   Span
	qualifier  string
	isFunc     bool
	params     []*Param
	paramsSpan Span
	launch     *Span
	specs      []string // specifiers written after the type (`void __global__ k()`)
	group      Span     // `(*name)(params)` of a function pointer declarator, if any
	bindings   []Span   // names of a structured binding `auto [a, b]`
}

// parseDeclarator parses pointer operators, the name and suffixes, building
// the declarator's full TypeRef from ds.
func (p *parser) parseDeclarator(d *declarator, ds *declSpec, mode declMode) {
	sh := p.declaratorShape(d, ds, mode)
	p.finishDeclarator(d, ds, sh)
}

// declShape is what finishDeclarator needs to know of a declarator's
// tokens: the range of its own type operators and where its name starts.
type declShape struct{ first, last, namePos int }

// declaratorShape is parseDeclarator without the type's text and span. A
// block-scope declaration is parsed speculatively and often turns out to
// be an expression (`a * b;`, `x < y;`); building the text only after the
// declarator is accepted spares that work (see blockDeclarators).
//
// d must be zero (every caller declares a fresh one): only its type is
// set here, not the whole struct cleared a second time.
func (p *parser) declaratorShape(d *declarator, ds *declSpec, mode declMode) declShape {
	d.typ = p.newTypeRef(ds)
	// The most frequent declarator is plain: one-byte '*' and '&'
	// operators or none, then a name. Then ptrOperator takes each operator
	// (a pointer more, or a reference) and returns false at the name (see
	// below), no '(' or '[' starts a group or binding there, and the path
	// below does the rest as the general path would. (parseTypeID takes a
	// type-id's operators alone itself.)
	toks, i := p.toks, p.i
	j := p.plainOpsEnd(i)
	if !p.general && mode != declAbstract && j+1 < len(toks) {
		// A name (`x`, `*p`): an identifier of no keyword or specifier
		// class that starts in lower case and that the macro filter rules
		// out (ptrOperator's lower-case case returns false at it), with no
		// '<' or '::' after it: declName's one-identifier path takes it,
		// and declSuffixes is needed only before a '[' or '('.
		t, n := &toks[j], &toks[j+1]
		if t.Kind == Identifier && t.cls&(clsKeyword|clsSpec) == 0 && n.pb != '<' && n.kw != tkScope {
			start, end := int(t.Start), int(t.End)
			if c := p.src[start]; c >= 'a' && c <= 'z' && !p.maybeMacro(c, end-start) {
				sh := p.plainOps(d.typ, i, j, start)
				p.i, p.lastEnd = j+1, end // p.next()
				d.nameSpan = Span{start, end}
				d.name = p.src[start:end]
				if n.pb == '[' || n.pb == '(' {
					p.declSuffixes(d, mode)
				}
				return sh
			}
		}
	}
	first, last := -1, -1 // token range of this declarator's own type operators
	for {
		k := p.i
		if !p.ptrOperator(d) {
			break
		}
		if first < 0 {
			first = k
		}
		last = p.i
	}
	namePos := p.curStart()
	if p.pbAt(0, '(') && (p.pbAt(1, '*') || p.pbAt(1, '&') || p.pbAt(1, '^') || p.pbAt(2, '*') && isAllCaps(p.wordAt(1))) && mode != declBlock || (mode == declBlock && p.pbAt(0, '(') && p.pbAt(1, '*') && p.peek(2).Kind == Identifier && p.pbAt(3, ')') && p.pbAt(4, '(')) {
		p.parenDeclarator(d, mode)
	} else if mode == declBlock && p.is("[") && ds.base == "auto" {
		p.bindingNames(d)
	} else if mode != declAbstract {
		p.declName(d)
	}
	p.declSuffixes(d, mode)
	return declShape{first, last, namePos}
}

// plainOpsEnd returns the index of the first token from i on that is not
// a one-byte '*' or '&' (an operator of a plain declarator).
func (p *parser) plainOpsEnd(i int) int {
	toks := p.toks
	for i < len(toks) && toks[i].Kind == Punct && (toks[i].pb == '*' || toks[i].pb == '&') {
		i++
	}
	return i
}

// plainOps takes the one-byte '*' and '&' operators of tokens i to j-1 of
// a plain declarator (see declaratorShape, parseTypeID) into its type ty
// as ptrOperator would, each a pointer more or a reference, and returns
// the declarator's shape so far.
func (p *parser) plainOps(ty *TypeRef, i, j, namePos int) declShape {
	if j == i {
		return declShape{-1, -1, namePos}
	}
	for _, t := range p.toks[i:j] {
		if t.pb == '*' {
			ty.Pointers++
		} else {
			ty.Ref = true
		}
	}
	p.i, p.lastEnd = j, int(p.toks[j-1].End) // p.next() for each
	return declShape{i, j, namePos}
}

// newTypeRef returns a new TypeRef with ds's base type.
func (p *parser) newTypeRef(ds *declSpec) *TypeRef {
	t := slot(&p.slabs.sTypeRef)
	t.Base, t.BaseSpan, t.Const, t.Restrict = ds.base, ds.baseSpan, ds.isConst, ds.restrict
	return t
}

// finishDeclarator builds the type's text and span of a declarator parsed
// by declaratorShape. It reads the tokens, not the position: the caller
// may look ahead in between, but not consume or split tokens.
func (p *parser) finishDeclarator(d *declarator, ds *declSpec, sh declShape) {
	p.finishType(d.typ, ds, sh.first, sh.last, sh.namePos)
	if d.group.Stop > 0 {
		p.groupText(d)
	}
}

// groupText appends a function pointer's `(*)(params)` to its type text
// (the name left out) and extends the type's span over it.
func (p *parser) groupText(d *declarator) {
	p.startText()
	p.buf = append(p.buf, d.typ.Text...) // copied: the text need not view the source
	p.inGroup = true
	defer func() { p.inGroup = false }()
	switch {
	case d.name == "":
		p.appendText(d.group.Start, d.group.Stop, false)
	case d.isFunc:
		p.appendText(d.group.Start, d.nameSpan.Start, false)
		p.appendText(d.paramsSpan.Stop, d.group.Stop, false)
	default:
		p.appendText(d.group.Start, d.nameSpan.Start, false)
		p.appendText(d.nameSpan.Stop, d.group.Stop, false)
	}
	d.typ.Text = p.bufText()
}

// bindingNames parses a structured binding `[a, b]`; the VarDecl's name is
// the bracketed text and each name becomes a symbol.
func (p *parser) bindingNames(d *declarator) {
	start := p.curStart()
	p.next()
	for p.isIdent() {
		d.bindings = append(d.bindings, Span{p.curStart(), p.curEnd()})
		p.next()
		if !p.got(",") {
			break
		}
	}
	if !p.got("]") {
		d.bindings = nil
		return
	}
	d.nameSpan = p.spanFrom(start)
	d.name = p.spanText(start, p.lastEnd)
}

// ptrOperator consumes one of `*`, `&`, `&&`, a cv or restrict after them,
// or a CUDA specifier written after the type; false when none is there.
func (p *parser) ptrOperator(d *declarator) bool {
	// Most calls end at the declarator name or a ',' ')' '=' ';': rule out
	// the cases below by kind and word class before comparing strings.
	switch t := &p.toks[p.i]; {
	case t.Kind == Punct:
		if t.pb != '*' && t.pb != '&' && !p.isK(tkAndAnd) && !p.isK(tkEllipsis) {
			return false
		}
	case t.Kind != Identifier:
		return false
	case t.cls&(clsKeyword|clsSpec) == 0:
		// Not a cv, restrict, specifier or attribute keyword: only the
		// last two cases can match. A word starting in lower case (most
		// declarator names) is no calling convention (not all caps, not
		// __stdcall and kin) and, if the macro filter rules it out, no
		// attribute macro either.
		if c := p.src[t.Start]; c >= 'a' && c <= 'z' && !p.maybeMacro(c, int(t.End-t.Start)) {
			return false
		}
		if !p.isCallingConvention() && !(p.isMacroTok(p.i) && isDeclAttr(p.attrOf(p.word()))) {
			return false
		}
	}
	switch {
	case p.is("*"):
		d.typ.Pointers++
	case p.is("&"):
		d.typ.Ref = true
	case p.isK(tkAndAnd):
		d.typ.RRef = true
	case p.isK(kwRestrictUU) || p.isK(kwRestrictU) || p.isK(kwRestrict):
		d.typ.Restrict = true
	case p.isK(kwConst) || p.isK(kwVolatile):
		if d.typ.Pointers == 0 && !d.typ.Ref {
			d.typ.Const = d.typ.Const || p.isK(kwConst) // `T const *`
		}
	case p.isK(kwLaunchBoundsUU):
		start := p.curStart()
		p.next()
		if p.is("(") {
			p.skipBalanced()
		}
		sp := p.spanFrom(start)
		d.launch = &sp
		return true
	case p.isIdent() && p.toks[p.i].cls&clsSpec != 0 && p.word() != "friend":
		d.specs = append(d.specs, p.word()) // a view of the source, as p.keep returns it
	case p.isK(kwAttributeUU):
		p.next()
		p.skipBalanced()
		return true
	case p.isK(tkEllipsis):
		// A pack declarator `Ts... xs`.
	case p.isCallingConvention():
		// `SanitizerResult SANITIZERAPI f(...)`: a macro for __stdcall.
	case p.isIdent() && p.isMacroTok(p.i) && isDeclAttr(p.attrOf(p.word())):
		if sp := p.skipAttrMacro(&d.typ.Restrict); sp != nil {
			d.launch = sp
		}
		return true
	default:
		return false
	}
	p.next()
	return true
}

// isCallingConvention reports an unknown capitalised macro between a type
// and a declarator name (`CUDARTAPI`, `WINAPI`), or `__stdcall` and kin.
func (p *parser) isCallingConvention() bool {
	w := p.word()
	if w == "__stdcall" || w == "__cdecl" || w == "__fastcall" {
		return true
	}
	if !isAllCaps(w) || p.types.has(w) || p.macro(w) != nil && p.macro(w).IsFunc {
		return false
	}
	next := p.peek(1)
	return next.Kind == Identifier && p.at(1).cls&clsKeyword == 0 || p.pbAt(1, '*') || p.pbAt(1, '&')
}

// skipAttrMacro consumes an attribute-like macro (with its arguments when
// function-like). It returns the range for a launch-bounds macro and sets
// *restrict for a restrict macro.
func (p *parser) skipAttrMacro(restrict *bool) *Span {
	kind := p.attrOf(p.word())
	start := p.curStart()
	p.next()
	if m := p.macro(p.wordAt(-1)); m != nil && m.IsFunc && p.is("(") {
		p.skipBalanced()
	}
	switch kind {
	case attrRestrict:
		*restrict = true
	case attrLaunch:
		sp := p.spanFrom(start)
		return &sp
	}
	return nil
}

// parenDeclarator handles `(*name)(params)` and `(&arr)[N]`: the name of a
// function pointer or array reference; the type counts one more pointer.
func (p *parser) parenDeclarator(d *declarator, mode declMode) {
	start := p.curStart()
	p.next() // (
	for p.is("*") || p.is("&") || p.is("^") || p.isK(kwConst) || p.isK(kwRestrictUU) || p.isCallingConvention() {
		if p.is("*") {
			d.typ.Pointers++
		} else if p.is("&") {
			d.typ.Ref = true
		}
		p.next()
	}
	if mode != declAbstract && p.isIdent() {
		p.declName(d)
	}
	if p.is("(") && d.name != "" {
		p.parseParams(d) // a function returning a function pointer
	}
	for p.is("[") {
		p.skipBalanced()
	}
	p.got(")")
	if p.is("(") {
		p.skipBalanced() // the pointee's parameter list
	}
	d.group = p.spanFrom(start)
}

// declName parses the declarator name: `x`, `A::f`, `operator+=`, `~A`.
func (p *parser) declName(d *declarator) {
	// The common name is one identifier that no '<' or '::' follows: the
	// loop below would consume just it (no '~', not `operator` or another
	// keyword) and, p.i having moved by one, view it (see the end).
	toks := p.toks
	if i := p.i; i+1 < len(toks) {
		if t, n := &toks[i], &toks[i+1]; t.Kind == Identifier && t.cls&clsKeyword == 0 && n.pb != '<' && n.kw != tkScope {
			start, end := int(t.Start), int(t.End)
			p.i, p.lastEnd = i+1, end // p.next()
			d.nameSpan = Span{start, end}
			d.name = p.src[start:end]
			return
		}
	}
	start := p.curStart()
	k0 := p.i
	qualEnd := -1
	for {
		if p.is("~") && p.peek(1).Kind == Identifier {
			p.next()
		}
		if p.isK(kwOperator) {
			p.operatorName()
			break
		}
		if !p.isIdent() || p.isKeyword() {
			if qualEnd < 0 {
				return
			}
			break
		}
		p.next()
		if p.is("<") && p.pbAt(1, '>') {
			p.next() // `f<>` explicit specialisation name
			p.next()
		} else if p.is("<") {
			// `Box<T>::put`, `f<int>(`: arguments of a template name.
			m := p.mark()
			if !p.skipTemplateArgs() || !p.isK(tkScope) && !p.is("(") {
				p.reset(m)
			}
		}
		if !p.isK(tkScope) {
			break
		}
		qualEnd = p.curStart()
		p.next()
	}
	d.nameSpan = p.spanFrom(start)
	if p.i == k0+1 {
		// One identifier consumed (the common `x`): the name is that
		// token, a view of the source, as spanText would return.
		d.name = p.src[start:p.lastEnd]
		return
	}
	nameStart := start
	if qualEnd >= 0 {
		d.qualifier = p.spanText(start, qualEnd)
		nameStart = qualEnd + 2
		for nameStart < len(p.src) && (p.src[nameStart] == ' ' || p.src[nameStart] == '\t' || p.src[nameStart] == '\n') {
			nameStart++
		}
	}
	d.name = p.spanText(nameStart, p.lastEnd)
}

// operatorName consumes `operator` and its operator or conversion type.
func (p *parser) operatorName() {
	p.next()
	switch {
	case p.is("(") && p.pbAt(1, ')'), p.is("[") && p.pbAt(1, ']'):
		p.next()
		p.next()
	case p.isK(kwNew) || p.isK(kwDelete):
		p.next()
		if p.is("[") && p.pbAt(1, ']') {
			p.next()
			p.next()
		}
	case p.is("\"\"") || p.toks[p.i].Kind == String:
		p.next()
		if p.isIdent() {
			p.next() // operator"" _suffix
		}
	case p.toks[p.i].Kind == Punct:
		p.next()
	default:
		// Conversion operator: a type up to the '('.
		for !p.atEOF() && !p.is("(") && !p.is(";") && !p.is("{") {
			p.next()
		}
	}
}

// declSuffixes parses array dimensions and, where '(' means parameters, the
// parameter list.
func (p *parser) declSuffixes(d *declarator, mode declMode) {
	for p.is("[") {
		start := p.curStart()
		p.skipBalanced()
		d.typ.Array = append(d.typ.Array, p.spanFrom(start))
	}
	if !p.is("(") || d.isFunc {
		return
	}
	switch mode {
	case declBlock:
		return
	case declFile:
		if d.name == "" || !p.looksLikeParams() {
			return
		}
	case declParam, declAbstract:
		if d.name == "" && !p.looksLikeParams() {
			return
		}
	}
	p.parseParams(d)
}

// looksLikeParams decides whether the '(' at the current token opens a
// parameter list rather than a constructor initializer (`Foo g(42);`).
func (p *parser) looksLikeParams() bool {
	if p.pbAt(1, ')') || p.isAtK(1, tkEllipsis) {
		return true
	}
	t := p.peek(1)
	if t.Kind != Identifier {
		return p.isAtK(1, tkScope) || p.pbAt(1, '[') && p.pbAt(2, '[')
	}
	w := p.wordAt(1)
	cls := p.at(1).cls // the word classes of w: no map lookups
	if cls&clsKeyword != 0 {
		return w == "const" || w == "volatile" || w == "struct" || w == "class" || w == "enum" || w == "union" ||
			w == "typename" || w == "auto" || w == "decltype" || w == "__restrict__" || w == "unsigned"
	}
	if cls&(clsBuiltin|clsSpec) != 0 || p.isTypeName(w) || p.maybeMacro(w[0], len(w)) && p.specOf(w) != nil {
		return true
	}
	// `(Type name`, `(Type *`, `(Type &`, `(ns::Type`, `(Tmpl<...>`.
	return p.peek(2).Kind == Identifier || p.pbAt(2, '*') || p.pbAt(2, '&') || p.isAtK(2, tkAndAnd) || p.isAtK(2, tkScope) ||
		p.pbAt(2, '<') || p.isAtK(2, tkEllipsis)
}

// parseParams parses `( param, ... )` into d.
func (p *parser) parseParams(d *declarator) {
	start := p.curStart()
	p.next()
	d.isFunc = true
	if p.isK(kwVoid) && p.pbAt(1, ')') {
		p.next()
	}
	for !p.atEOF() && !p.is(")") {
		if p.isK(tkEllipsis) {
			p.next()
			continue
		}
		before := p.i
		if prm := p.parseParam(); prm != nil {
			if d.params == nil {
				d.params = carve(&p.slabs.paramChunk, 4)
			}
			d.params = append(d.params, prm)
		}
		if !p.got(",") && !p.is(")") {
			p.skipParam()
		}
		if p.i == before {
			p.next()
		}
	}
	p.got(")")
	d.paramsSpan = p.spanFrom(start)
}

// skipParam skips a parameter the parser did not understand, to the next
// ',' or ')' at depth 0.
func (p *parser) skipParam() {
	start := p.curStart()
	for !p.atEOF() && !p.is(")") && !p.is(",") && !p.is(";") && !p.is("{") {
		if p.is("(") || p.is("[") {
			p.skipBalanced()
			continue
		}
		p.next()
	}
	p.errorf(start, max(p.lastEnd, start), "PARSE014", "parameter not understood")
	p.got(",")
}

// parseParam parses one parameter declaration.
func (p *parser) parseParam() *Param {
	start := p.curStart()
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, nil)
	if !ds.hasType {
		return nil
	}
	var dv declarator
	d := &dv
	p.parseDeclarator(d, ds, declParam)
	prm := slot(&p.slabs.sParam) // zero: only the fields set are stored (see slot)
	prm.Type, prm.Name, prm.NameSpan = d.typ, d.name, d.nameSpan
	if p.got("=") {
		p.noGT++
		save := p.noGT
		p.noGT = 0 // parentheses of the parameter list already delimit
		prm.Default = p.parseAssign()
		p.noGT = save - 1
	}
	prm.Span = p.spanFrom(start)
	return prm
}

// finishType fills the TypeRef's Span and Text. The first declarator's type
// spans from the first type token to its last operator; a later declarator
// (`int a, *b`) covers only its own operators (empty at its name when it
// has none) so that ranges never overlap, which rewrites rely on.
// Inside discarded template arguments no text is built.
func (p *parser) finishType(t *TypeRef, ds *declSpec, first, last, namePos int) {
	if p.noText > 0 {
		ds.declared++
		return // inside discarded template arguments
	}
	end := ds.typeEndOff
	if ds.record == nil && first < 0 && p.baseIsType(ds) {
		// `int i`, `std::size_t n`: the text is the base's, joined by
		// setBase, as typeText would return.
		t.Text = ds.base
	} else {
		t.Text, end = p.typeText(ds, first, last)
	}
	switch {
	case ds.declared == 0 && ds.typeStart >= 0:
		t.Span = Span{ds.typeOff, end}
	case first >= 0:
		t.Span = Span{int(p.toks[first].Start), end}
	default:
		t.Span = Span{namePos, namePos}
	}
	ds.declared++
}

// typeText builds the text of a declarator's type: the specifiers' type
// tokens (cv and base) and the declarator's own operators, tokens first to
// last-1 (none when first < 0). end is the offset just past the type's
// last token.
func (p *parser) typeText(ds *declSpec, first, last int) (text string, end int) {
	p.startText()
	end = ds.typeEndOff
	if !p.general && ds.record == nil && first < 0 && p.oneWordType(ds) {
		// `int i`, `T x`: the text is the one type word, a view of the
		// source, as the general path below would return.
		return p.view(ds.typeOff, end), end
	}
	switch {
	case ds.record != nil:
		p.buf = append(p.buf, ds.base...) // not the whole body
	case p.baseIsType(ds):
		p.startFromBase(ds)
	case ds.typeStart >= 0:
		p.appendTypeTokens(ds)
	}
	if first >= 0 {
		end = int(p.toks[last-1].End)
		if !p.appendOps(first, last) {
			p.callConvSkip = true // `T WINAPI *p`: the macro is not part of the type
			p.appendTextFrom(first, int(p.toks[first].Start), end, true)
			p.callConvSkip = false
		}
	}
	return p.bufText(), end
}

// appendTypeTokens appends the text of the type's tokens (cv and base,
// from ds.typeStart to ds.typeEndOff) as appendTextFrom with skipSpecs
// would. The common `const float`, `const unsigned int` reads as its
// source and drops no word: viewRun says so (as for baseText), and the
// text is that source range, recorded as appendSrc would without joining
// the tokens one by one.
func (p *parser) appendTypeTokens(ds *declSpec) {
	j, k := ds.typeStart, ds.typeEnd-1
	start := ds.typeOff
	if j < k && k < len(p.toks) && int(p.toks[k].End) == ds.typeEndOff && int(p.toks[j].End) > start && p.viewRun(j, k) {
		p.bufSrc, p.bufEnd = start, ds.typeEndOff
		return
	}
	p.appendTextFrom(j, start, ds.typeEndOff, true)
}

// appendOps appends a declarator's own type operators, tokens first to
// last-1, when each is a one-byte '*' or '&' (`int *p`, `char **argv`,
// `T &r`), and reports whether it did; else it appends nothing.
// Exactness: appendTextFrom(first, ...) with callConvSkip, as finishType
// calls it, appends each such token whole by appendSrc (it is no
// identifier, so nothing is dropped, and origStart never moves it: only a
// token that closeAngle split, which starts with '>', can start after a
// '>' byte no token covers), and stops at the token after them, which
// starts at or after the last one's End. Piece by piece, appendSrc puts a
// space before the first operator where spaceBefore asks for one (after a
// word, '>' or ','), none between two operators, and extends the source
// range while each operator continues it: the text is the text so far,
// that space and the operator bytes (pb is the token's one byte). Only
// that value counts (see bufText), so the operators are taken at once:
// the source range grows over them when they continue it together, else
// the text moves to p.buf and they are appended there, byte by byte (no
// appendSrc call and no memmove per operator; `float* p` is common).
func (p *parser) appendOps(first, last int) bool {
	ops := p.toks[first:last]
	for i := range ops {
		if c := ops[i].pb; c != '*' && c != '&' {
			return false
		}
	}
	src := p.src
	if vs := p.bufSrc; vs >= 0 {
		off, stop, end := int(ops[0].Start), int(ops[len(ops)-1].End), p.bufEnd
		if stop-off == len(ops) { // adjacent operators, one byte each
			space := p.spaceBefore(src[end-1], ops[0].pb, 1)
			if !space && off == end || space && off == end+1 && src[end] == ' ' {
				p.bufEnd = stop
				return true
			}
		}
		p.buf = append(p.buf[:0], src[vs:end]...)
		p.bufSrc = -1
	}
	b := p.buf
	if len(b) > 0 && p.spaceBefore(b[len(b)-1], ops[0].pb, 1) {
		b = append(b, ' ')
	}
	for i := range ops {
		b = append(b, ops[i].pb)
	}
	p.buf = b
	return true
}

// baseIsType reports whether the type's tokens are exactly the base's
// (no cv or other word around it) and none of them is left out of a type's
// text: then the text of those tokens is ds.base, joined once by setBase.
func (p *parser) baseIsType(ds *declSpec) bool {
	return ds.baseKept && ds.typeStart >= 0 && ds.typeOff == ds.baseSpan.Start &&
		ds.typeEndOff == ds.baseSpan.Stop
}

// startFromBase makes ds.base the text built so far (empty before).
func (p *parser) startFromBase(ds *declSpec) {
	if ds.baseView && ds.base != "" {
		p.bufSrc, p.bufEnd = ds.baseSpan.Start, ds.baseSpan.Stop
		return
	}
	p.buf = append(p.buf, ds.base...)
}

// oneWordType reports whether the type of ds is exactly one identifier
// token that appendText would keep (not a specifier, __launch_bounds__ or
// a specifier macro).
func (p *parser) oneWordType(ds *declSpec) bool {
	if ds.typeStart < 0 {
		return false
	}
	t := &p.toks[ds.typeStart]
	if t.Kind != Identifier || int(t.End) != ds.typeEndOff || t.cls&clsSpec != 0 {
		return false
	}
	w := p.src[t.Start:t.End]
	return w != "__launch_bounds__" && (!p.maybeMacro(w[0], len(w)) || p.specOf(w) == nil)
}

// spanText returns the non-trivia tokens in [start,end) joined with spaces
// only between words ("std::vector<unsigned int>").
func (p *parser) spanText(start, end int) string {
	if k := p.i - 1; k >= 0 && int(p.toks[k].End) == end {
		// The range ends with the token just consumed, the common case.
		// One token: the name shares the source's memory (ParseFile
		// documents that src must not change afterwards).
		if int(p.toks[k].Start) == start {
			return p.src[start:end]
		}
		// More (a qualified name `std::min`): the same when the text
		// reads as the source (spanView).
		if s, ok := p.spanView(k, start, end); ok {
			return s
		}
	}
	p.startText()
	p.appendText(start, end, false)
	return p.bufText()
}

// appendText appends the non-trivia source tokens in [start,end) to p.buf.
// It walks p.toks (no trivia to skip). A split '>>' token in p.toks has
// lost its first byte(s), so a token that starts right after a '>' takes
// its original start from origStart. skipSpecs drops declaration
// specifiers and attributes, which are not part of a type's text.
func (p *parser) appendText(start, end int, skipSpecs bool) {
	p.appendTextFrom(p.toksEndingAfter(start), start, end, skipSpecs)
}

// appendTextFrom is appendText for a caller that knows the index k of the
// first token ending after start (finishType does), sparing the search.
// appendPlain takes the common tokens first (types_plain.go); the loop
// below goes on from the first token it leaves.
func (p *parser) appendTextFrom(k, start, end int, skipSpecs bool) (kept bool) {
	if !p.general {
		var done bool
		if k, done = p.appendPlain(k, start, end); done {
			return true
		}
	}
	kept = true
	for ; k < len(p.toks); k++ {
		t := &p.toks[k]
		off, stop := int(t.Start), int(t.End)
		if t.Kind == Punct && off > 0 && p.src[off-1] == '>' {
			off = p.origStart(k) // maybe split: the original bounds
		}
		if off >= end || t.Kind == EOF {
			break
		}
		// The token clipped to [start,end).
		whole := off >= start && stop <= end
		off, stop = max(off, start), min(stop, end)
		if off == stop {
			continue // nothing to append
		}
		if t.Kind == Identifier && p.mayDropFromType(t, off, stop, whole) && p.notInType(k, p.src[off:stop], whole) {
			kept = false
			if skipSpecs {
				continue
			}
		}
		p.appendSrc(off, stop)
	}
	return kept
}

// mayDropFromType is the filter before notInType, which decides whether an
// identifier token t clipped to [off,stop) (whole: not clipped) is left
// out of a type's text. notInType is false for a whole word of no
// specifier class that names no macro while no calling convention is
// dropped, so most type words skip the call.
func (p *parser) mayDropFromType(t *ptok, off, stop int, whole bool) bool {
	return !whole || t.cls&clsSpec != 0 || p.callConvSkip || stop-off == len("__launch_bounds__") ||
		p.maybeMacro(p.src[off], stop-off)
}

// origStart returns the start offset that p.toks[k] had when lexed: its
// Start, or, after closeAngle split it (its End never moves), the first
// of the '>' bytes it lost. Those bytes are covered by no entry of
// p.toks. An unsplit token never has such a gap before it: a '>' right
// before it either ends the previous token (which then ends at its Start)
// or ends trivia, and no trivia kind ends in '>' directly before a token
// (line comments and directives are followed by their newline, inactive
// code ends with one, block comments with '/').
func (p *parser) origStart(k int) int {
	lo := 0
	if k > 0 {
		lo = int(p.toks[k-1].End)
	}
	s := int(p.toks[k].Start)
	for s > lo && p.src[s-1] == '>' {
		s--
	}
	return s
}

// appendSrc appends the source bytes [off,stop) (not empty) to the text
// being built, after a space if spaceBefore asks for one. Most texts read exactly
// as their source range ("const float*", "std::vector<int>", "unsigned
// int"): while each piece continues the range (adjacent, or after exactly
// one blank where a space goes) only the range grows (p.bufSrc, p.bufEnd)
// and nothing is copied; p.buf takes over at the first difference.
func (p *parser) appendSrc(off, stop int) {
	if p.bufSrc >= 0 {
		end := p.bufEnd
		space := p.spaceBefore(p.src[end-1], p.src[off], stop-off)
		if !space && off == end || space && off == end+1 && p.src[end] == ' ' {
			p.bufEnd = stop
			return
		}
		p.buf = append(p.buf[:0], p.src[p.bufSrc:end]...)
		p.bufSrc = -1
	} else if len(p.buf) == 0 {
		p.bufSrc, p.bufEnd = off, stop
		return
	}
	if p.spaceBefore(p.buf[len(p.buf)-1], p.src[off], stop-off) {
		p.buf = append(p.buf, ' ')
	}
	p.buf = append(p.buf, p.src[off:stop]...)
}

// startText empties the text being built (see appendSrc).
func (p *parser) startText() {
	p.buf = p.buf[:0]
	p.bufSrc = -1
}

// bufText returns the text built: a view of the source when it reads as
// its source range, else an interned copy of p.buf.
func (p *parser) bufText() string {
	if p.bufSrc >= 0 {
		return p.view(p.bufSrc, p.bufEnd)
	}
	if len(p.buf) == 0 {
		return ""
	}
	return p.intern(p.buf)
}

// notInType reports whether identifier w, the text of p.toks[k] (whole,
// or clipped by a span's bounds), is a specifier, an attribute or a
// calling convention rather than part of a type's text. The word class of
// a whole token is precomputed, which spares map lookups per type token.
func (p *parser) notInType(k int, w string, whole bool) bool {
	if len(w) == 0 {
		return false
	}
	cls := p.toks[k].cls
	if !whole {
		cls = wordClassOf(w)
	}
	if p.macro(w) != nil {
		cls |= clsMacro
	}
	switch {
	case cls&clsSpec != 0, w == "__launch_bounds__":
		return true
	case cls&clsMacro != 0 && p.specOf(w) != nil:
		return true
	}
	return p.callConvSkip && isAllCaps(w) && !p.isTypeName(w)
}

// toksEndingAfter returns the index in p.toks of the first token ending
// after offset off. Spans are built from recent tokens, so it walks back
// from the current token and searches only when the span is far behind.
// (Splitting a '>>' moves a token's Start, never its End.)
func (p *parser) toksEndingAfter(off int) int {
	k := min(p.i, len(p.toks)-1)
	for n := 0; k > 0 && int(p.toks[k-1].End) > off; n++ {
		if n == 64 {
			return sort.Search(k, func(i int) bool { return int(p.toks[i].End) > off })
		}
		k--
	}
	for k < len(p.toks)-1 && int(p.toks[k].End) <= off {
		k++
	}
	return k
}

// spaceBefore reports whether a space goes between prev, the last byte of
// the text so far, and the next piece, which starts with c and is n bytes
// long, where C++ needs or people write one: between words, and around '*'
// and '&' next to words or '>'.
func (p *parser) spaceBefore(prev, c byte, n int) bool {
	v := spacePairs[(spaceClass[prev]<<3|spaceClass[c])&63]
	return v == spYes || v == spInGroup && n == 1 && p.inGroup
}

// Byte classes for spaceBefore: two table loads instead of a chain of
// byte tests (spaceBefore runs for every piece of every type text).
const (
	spOther = iota
	spIdent
	spPtr   // '*' '&'
	spGT    // '>'
	spComma // ','
	spParen // '('
)

var spaceClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case isIdentChar(byte(c)):
			t[c] = spIdent
		case c == '*' || c == '&':
			t[c] = spPtr
		case c == '>':
			t[c] = spGT
		case c == ',':
			t[c] = spComma
		case c == '(':
			t[c] = spParen
		}
	}
	return t
}()

// Values of spacePairs.
const (
	spNo      = iota
	spYes     // a space
	spInGroup // a space before a one-byte '(' in a function pointer's group
)

// spacePairs[prev<<3|next] is spaceBefore's answer: between words; before '*' and '&' after a word
// or '>'; after '*' and '&' before a word; after ','; and inside a group
// (p.inGroup) between a word and a '(' piece of one byte.
var spacePairs = func() (t [64]uint8) {
	t[spIdent<<3|spIdent] = spYes
	t[spIdent<<3|spPtr] = spYes
	t[spGT<<3|spPtr] = spYes
	t[spPtr<<3|spIdent] = spYes
	for c := range 8 {
		t[spComma<<3|c] = spYes
	}
	t[spIdent<<3|spParen] = spInGroup
	return t
}()

// tokIndexAt returns the index of the non-trivia token starting at or after
// offset off, searching back from the current position (spans are recent).
func (p *parser) tokIndexAt(off int) int {
	k := min(p.i, len(p.toks)-1)
	for k > 0 && int(p.toks[k].Start) > off {
		k--
	}
	for k < len(p.toks)-1 && int(p.toks[k].End) <= off {
		k++
	}
	return k
}

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
