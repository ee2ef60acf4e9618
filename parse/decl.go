package parse

import "strings"

// Declarations at namespace and class scope.

// declCtx carries what the enclosing construct tells a declaration.
type declCtx struct {
	className string // inside a class body: its name, for constructors
	template  *Span  // the `template <...>` header just before, if any
}

// parseDecls parses declarations up to a '}' (not consumed) or EOF.
func (p *parser) parseDecls(ctx *declCtx) []Decl {
	var out []Decl
	for !p.atEOF() && !p.is("}") {
		before := p.i
		out = p.parseDecl(ctx, out)
		if p.i == before {
			// Every path consumes something; this is belt and braces.
			t := p.tok()
			p.next()
			out = append(out, &Opaque{Span: Span{t.Start, t.End}, Reason: "unexpected token"})
			p.errorf(t.Start, t.End, "PARSE010", "unexpected token at declaration level")
		}
	}
	return out
}

// parseDecl parses one declaration and appends what it declares to out.
// The depth guard is released after parseDeclIn returns, not by a defer
// (as parseStmt's: a panic ends the parse in recoverPanic, so the depth
// after it does not matter).
func (p *parser) parseDecl(ctx *declCtx, out []Decl) []Decl {
	start := p.curStart()
	if !p.enter() {
		p.leave()
		return append(out, p.harmless(start, "nesting too deep"))
	}
	out = p.parseDeclIn(ctx, out, start)
	p.leave()
	return out
}

// parseDeclIn is parseDecl inside the depth guard.
func (p *parser) parseDeclIn(ctx *declCtx, out []Decl, start int) []Decl {
	// The words are told apart by token id (tokid.go), not by spelling.
	switch kw := p.toks[p.i].kw; {
	case p.is(";"):
		p.next()
		return out
	case kw == kwNone && p.toks[p.i].Kind == Identifier:
		// An ordinary name: none of the cases below (the common case),
		// but for an object-like macro alone on its line before a
		// template (`EXPORT_API\ntemplate <...> ...`, its definition in
		// a header): kept as a macro invocation, the template parsed.
		if p.isAtK(1, kwTemplate) && !p.isTypeName(p.word()) {
			m := p.mark()
			p.next()
			if !p.newlineBefore() {
				p.reset(m)
				break
			}
			return append(out, &Opaque{Span: p.spanFrom(start), Reason: "macro invocation"})
		}
	case kw == kwNamespace:
		return append(out, p.parseNamespace())
	case kw == kwInline && p.isAtK(1, kwNamespace):
		p.next()
		return append(out, p.parseNamespace())
	case kw == kwExtern && p.peek(1).Kind == String:
		return append(out, p.parseLinkage(ctx))
	case kw == kwTemplate:
		return p.parseTemplate(ctx, out)
	case kw == kwTypedef:
		return p.parseTypedef(out)
	case kw == kwUsing:
		return append(out, p.parseUsing(ctx))
	case kw == kwStaticAssert || kw == kwAsm || kw == kwAsmUU || kw == kwAsmU:
		return append(out, p.harmless(start, p.word()))
	case (kw == kwPublic || kw == kwPrivate || kw == kwProtected) && p.pbAt(1, ':'):
		p.next()
		p.next()
		return out
	case p.toks[p.i].Kind != Identifier && !p.isK(tkScope) && !p.is("~") && !(p.is("[") && p.pbAt(1, '[')):
		return append(out, p.opaqueDecl(start, "unexpected '"+string(p.textOf(p.tok()))+"'"))
	}
	return p.parseDeclaration(ctx, out)
}

// parseNamespace parses `namespace a::b { ... }` or an alias.
func (p *parser) parseNamespace() Decl {
	start := p.curStart()
	p.next()
	name := ""
	if p.isIdent() {
		nameStart := p.curStart()
		for p.isIdent() || p.isK(tkScope) || p.isK(kwInline) {
			p.next()
		}
		name = p.spanText(nameStart, p.lastEnd)
	}
	for p.isK(kwAttributeUU) || p.is("[") {
		p.next()
		p.skipBalanced()
	}
	if !p.is("{") {
		p.syncStmt() // namespace alias `namespace fs = std::filesystem;`
		return &UsingDecl{Span: p.spanFrom(start)}
	}
	ns := &NamespaceDecl{Name: name}
	ns.Decls = p.parseBraced(&declCtx{})
	ns.Span = p.spanFrom(start)
	return ns
}

// parseBraced parses `{ decls }` and reports a missing '}'.
func (p *parser) parseBraced(ctx *declCtx) []Decl {
	open := p.tok()
	p.next()
	decls := p.parseDecls(ctx)
	if !p.got("}") {
		p.errorf(open.Start, open.End, "PARSE003", "unbalanced '{': no matching '}' before end of file")
	}
	return decls
}

// parseLinkage parses `extern "C" { ... }` and `extern "C" decl`.
func (p *parser) parseLinkage(ctx *declCtx) Decl {
	start := p.curStart()
	p.next()
	lang := strings.Trim(string(p.textOf(p.tok())), `"`)
	p.next()
	ld := &LinkageDecl{Lang: lang}
	if p.is("{") {
		ld.Decls = p.parseBraced(&declCtx{})
	} else {
		ld.Decls = p.parseDecl(ctx, nil)
	}
	ld.Span = p.spanFrom(start)
	return ld
}

// parseTemplate parses `template <...>` headers and the declaration they
// introduce; explicit instantiations are kept as harmless Opaque.
func (p *parser) parseTemplate(ctx *declCtx, out []Decl) []Decl {
	start := p.curStart()
	p.next()
	if !p.is("<") {
		return append(out, p.harmless(start, "explicit instantiation"))
	}
	for p.is("<") {
		p.i = p.skipAnglesIdx(p.i)
		p.lastEnd = int(p.toks[p.i-1].End)
		if !p.isK(kwTemplate) || !p.pbAt(1, '<') {
			break
		}
		p.next()
	}
	if p.isK(kwRequires) {
		p.skipRequires()
	}
	sub := *ctx
	sub.template = newNode(&p.slabs.sSpan, p.spanFrom(start))
	return p.parseDecl(&sub, out)
}

// skipRequires skips a requires-clause up to the declaration it constrains.
func (p *parser) skipRequires() {
	p.next()
	for !p.atEOF() {
		if p.is("(") {
			p.skipBalanced()
		} else {
			p.next()
		}
		if !p.isK(tkAndAnd) && !p.isK(tkOrOr) && !p.isK(tkScope) && !p.is("<") {
			if p.isIdent() && (p.pbAt(1, '<') || p.isAtK(1, tkScope)) && p.toks[p.i-1].Kind == Punct {
				continue
			}
			return
		}
		p.next()
	}
}

// parseTypedef parses `typedef T a, *b;` (each name gets a TypedefDecl).
func (p *parser) parseTypedef(out []Decl) []Decl {
	start := p.curStart()
	p.next()
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, &declCtx{})
	if ds.record != nil {
		out = append(out, ds.record)
	}
	if !ds.hasType {
		return append(out, p.opaqueDecl(start, "typedef without a type"))
	}
	var tds []*TypedefDecl
	for {
		var dv declarator
		d := &dv
		p.parseDeclarator(d, ds, declFile)
		if d.name == "" {
			return append(out, p.opaqueDecl(start, "typedef without a name"))
		}
		p.types.add(d.name)
		tds = append(tds, newNode(&p.slabs.sTypedef, TypedefDecl{Name: d.name, Type: d.typ}))
		if !p.got(",") {
			break
		}
	}
	if !p.got(";") {
		return append(out, p.opaqueDecl(start, "typedef"))
	}
	for _, td := range tds {
		td.Span = p.spanFrom(start)
		out = append(out, td)
	}
	return out
}

// parseUsing parses `using namespace x;`, `using x::y;`, `using T = type;`.
func (p *parser) parseUsing(ctx *declCtx) Decl {
	start := p.curStart()
	if ctx.template != nil {
		start = ctx.template.Start
	}
	p.next()
	if p.isIdent() && p.pbAt(1, '=') {
		name := p.word()
		p.next()
		p.next()
		p.types.add(name)
		if t := p.parseTypeID(); t != nil && p.got(";") {
			return &TypedefDecl{Span: p.spanFrom(start), Name: name, Type: t}
		}
		return p.opaqueDecl(start, "using alias")
	}
	p.syncStmt()
	return &UsingDecl{Span: p.spanFrom(start)}
}

// ---------------------------------------------------------------------------
// Records and enums

// isRecordDef reports whether the struct/class/union/enum keyword at the
// current token starts a definition (a body or base clause follows).
// Words are told by token id and keyword class, one-byte tokens by their
// byte (textByte), as the spellings they stand for.
func (p *parser) isRecordDef() bool {
	k := p.i + 1
	if p.textIsK(k, kwClass) || p.textIsK(k, kwStruct) {
		k++
	}
	for {
		switch {
		case p.textIsK(k, kwAlignUU) || p.textIsK(k, kwAlignas) || p.textIsK(k, kwAttributeUU) || p.textIsK(k, kwDeclspecU):
			k = p.skipParensIdx(k + 1)
			continue
		case p.textByte(k) == '[' && p.textByte(k+1) == '[':
			k = p.skipBracketsIdx(k)
			continue
		}
		break
	}
	// A word that is no keyword (keywords[w] is the keyword class bit).
	for k < len(p.toks) && p.toks[k].Kind == Identifier && p.toks[k].cls&clsKeyword == 0 || p.textIsK(k, tkScope) {
		k++
		if p.textByte(k) == '<' {
			k = p.skipAnglesIdx(k)
		}
	}
	if p.wordIdx(k) == "final" {
		k++
	}
	return p.textByte(k) == '{' || p.textByte(k) == ':' && p.textByte(k+1) != ':'
}

// skipBracketsIdx returns the index after the balanced '[' group at i.
func (p *parser) skipBracketsIdx(i int) int {
	depth := 0
	for ; i < len(p.toks)-1; i++ {
		switch p.textByte(i) {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// parseTagDef parses a struct/class/union/enum definition at its keyword
// and returns it with its name ("" for anonymous).
func (p *parser) parseTagDef(ctx *declCtx) (Decl, string) {
	start := p.curStart()
	if ctx != nil && ctx.template != nil {
		start = ctx.template.Start
	}
	kind := p.word()
	p.next()
	if kind == "enum" && (p.isK(kwClass) || p.isK(kwStruct)) {
		p.next()
	}
	for p.isK(kwAlignUU) || p.isK(kwAlignas) || p.isK(kwAttributeUU) || p.isK(kwDeclspecU) || p.is("[") {
		p.next()
		p.skipBalanced()
	}
	name := ""
	if p.isIdent() || p.isK(tkScope) {
		nameStart := p.curStart()
		for p.isIdent() && p.word() != "final" || p.isK(tkScope) {
			p.next()
			if p.is("<") {
				p.i = p.skipAnglesIdx(p.i)
				p.lastEnd = int(p.toks[p.i-1].End)
			}
		}
		name = p.spanText(nameStart, p.lastEnd)
	}
	for !p.atEOF() && !p.is("{") && !p.is(";") {
		p.next() // final, base clause, enum base type
	}
	if kind == "enum" {
		p.skipBalanced()
		return &EnumDecl{Span: p.spanFrom(start), Name: name}, name
	}
	rec := &RecordDecl{Kind: kind, Name: name}
	if ctx != nil {
		rec.Template = ctx.template
	}
	if p.is("{") {
		rec.Members = p.parseBraced(&declCtx{className: lastComponent(name)})
	}
	rec.Span = p.spanFrom(start)
	return rec, name
}

// lastComponent returns "c" for "a::b::c" and strips template arguments.
func lastComponent(name string) string {
	if i := strings.IndexByte(name, '<'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// ---------------------------------------------------------------------------
// Functions and variables

// parseDeclaration parses a declaration that starts with specifiers and a
// type: a function definition or prototype, or variables.
func (p *parser) parseDeclaration(ctx *declCtx, out []Decl) []Decl {
	start := p.curStart()
	if ctx.template != nil {
		start = ctx.template.Start
	}
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, ctx)
	if ds.record != nil {
		if r, ok := ds.record.(*RecordDecl); ok && ctx.template != nil {
			r.Template = ctx.template
		}
		if p.is(";") {
			p.next()
			extendSpan(ds.record, p.lastEnd)
			return append(out, ds.record)
		}
		out = append(out, ds.record)
	}
	if fn := p.tryConstructor(ctx, ds, start); fn != nil {
		return append(out, fn)
	}
	if p.is("(") && ds.hasType && len(ds.specs) == 0 && !p.isTypeName(ds.base) && ds.typeStart == ds.startTok {
		return append(out, p.macroInvocation(start))
	}
	if p.is(";") && ds.hasType {
		return append(out, p.harmless(start, "forward declaration"))
	}
	if !ds.hasType && p.isK(kwOperator) {
		return append(out, p.conversionOperator(ctx, ds, start))
	}
	if !ds.hasType {
		return append(out, p.opaqueDecl(start, "no type"))
	}
	return p.declarators(ctx, ds, start, out)
}

// extendSpan moves a record's end past its trailing ';'.
func extendSpan(d Decl, end int) {
	switch r := d.(type) {
	case *RecordDecl:
		r.Stop = end
	case *EnumDecl:
		r.Stop = end
	}
}

// macroInvocation keeps `SOME_MACRO(args)` at declaration level (with or
// without ';') as a harmless Opaque.
func (p *parser) macroInvocation(start int) Decl {
	p.skipBalanced()
	if p.is("{") {
		// `KERNEL_SIG(name) { ... }`: a macro supplies the signature. No
		// declaration can start with '{', so the body belongs to it.
		p.skipBalanced()
		return &Opaque{Span: p.spanFrom(start), Reason: "function defined by a macro"}
	}
	// `BENCHMARK(fn).Arg(1)->Unit(x);`: a registration macro whose
	// result is configured through member calls.
	for (p.is(".") || p.isK(tkArrow)) && p.peek(1).Kind == Identifier && p.pbAt(2, '(') {
		p.next()
		p.next()
		p.skipBalanced()
	}
	p.got(";")
	return &Opaque{Span: p.spanFrom(start), Reason: "macro invocation"}
}

// declarators parses the declarator list after the specifiers: a function
// (definition or prototype) or a group of variables.
func (p *parser) declarators(ctx *declCtx, ds *declSpec, start int, out []Decl) []Decl {
	var vars []*VarDecl
	for {
		var dv declarator
		d := &dv
		p.parseDeclarator(d, ds, declFile)
		if d.isFunc && len(vars) == 0 {
			return append(out, p.finishFunc(ctx, ds, d, start))
		}
		if d.name == "" {
			return append(out, p.opaqueDecl(start, "declaration without a name"))
		}
		v := p.newVar(ds, d)
		p.parseVarInit(v, declFile)
		if vars == nil {
			vars = one(&p.slabs.sVarPtr, v) // most declare one (a field, a constant)
		} else {
			vars = append(vars, v)
		}
		if !p.got(",") {
			break
		}
	}
	if !p.got(";") {
		return append(out, p.opaqueDecl(start, "expected ';' after declaration"))
	}
	return append(out, newNode(&p.slabs.sGroup, VarDeclGroup{Span: p.spanFrom(start), Vars: vars}))
}

// newVar builds the VarDecl for a declarator (initializer parsed later).
func (p *parser) newVar(ds *declSpec, d *declarator) *VarDecl {
	specs := ds.specs[:len(ds.specs):len(ds.specs)] // shared by the declarators: appending copies
	if len(d.specs) > 0 {
		specs = append(append([]string{}, ds.specs...), d.specs...)
	}
	start := d.nameSpan.Start
	if ts := d.typ.Span; ts.Stop > ts.Start || ts.Start > 0 {
		start = min(start, ts.Start)
	}
	// As newNode, but the fields are stored into the slot, which is still
	// zero (see slot): no VarDecl is built on the stack and copied.
	v := slot(&p.slabs.sVarDecl)
	v.Span = Span{start, d.nameSpan.Stop}
	v.Specifiers, v.Type, v.Name, v.NameSpan = specs, d.typ, d.name, d.nameSpan
	return v
}

// tryConstructor recognises constructors and destructors: `A(...)` inside
// class A, `A::A(...)`, `~A()`, `A::~A()`. Their "type" is the name.
func (p *parser) tryConstructor(ctx *declCtx, ds *declSpec, start int) *FuncDecl {
	var d *declarator
	switch {
	case p.is("~") && p.peek(1).Kind == Identifier && !ds.hasType:
		d = &declarator{}
		p.declName(d)
	case p.isK(tkScope) && p.pbAt(1, '~') && ds.hasType:
		nameStart := ds.baseSpan.Start
		p.next()
		p.next()
		p.next()
		d = &declarator{qualifier: ds.base, name: p.keep("~" + p.wordAt(-1)), nameSpan: Span{nameStart, p.lastEnd}}
	case p.is("(") && ds.hasType && ds.typeStart >= 0 && !ds.isConst && p.isCtorName(ctx, ds.base):
		d = &declarator{nameSpan: ds.baseSpan, name: lastComponent(ds.base)}
		if i := strings.LastIndex(ds.base, "::"); i >= 0 {
			d.qualifier = ds.base[:i]
		}
	default:
		return nil
	}
	if !p.is("(") {
		return nil
	}
	p.parseParams(d)
	d.typ = nil
	return p.finishFunc(ctx, &declSpec{specs: ds.specs, launch: ds.launch}, d, start)
}

// conversionOperator parses `explicit operator float() const { ... }`.
func (p *parser) conversionOperator(ctx *declCtx, ds *declSpec, start int) Decl {
	d := &declarator{}
	p.declName(d)
	if !p.is("(") {
		return p.opaqueDecl(start, "conversion operator")
	}
	p.parseParams(d)
	return p.finishFunc(ctx, ds, d, start)
}

// isCtorName reports whether base names a constructor here.
func (p *parser) isCtorName(ctx *declCtx, base string) bool {
	if ctx != nil && ctx.className != "" && base == ctx.className {
		return true
	}
	i := strings.LastIndex(base, "::")
	if i < 0 {
		return false
	}
	return lastComponent(base[:i]) == base[i+2:]
}

// finishFunc completes a function after its parameter list: trailing
// qualifiers, constructor initializers, and the body or ';'.
func (p *parser) finishFunc(ctx *declCtx, ds *declSpec, d *declarator, start int) *FuncDecl {
	// The node's fields are stored into its slot, which is still zero
	// (see slot), not built on the stack and copied.
	fn := slot(&p.slabs.sFuncDecl)
	fn.Name, fn.NameSpan, fn.Qualifier, fn.Template = d.name, d.nameSpan, d.qualifier, ctx.template
	fn.Specifiers, fn.LaunchBounds, fn.Result = ds.specs[:len(ds.specs):len(ds.specs)], ds.launch, d.typ
	fn.Params, fn.ParamsSpan, fn.Scope = d.params, d.paramsSpan, slot(&p.slabs.sScope)
	if len(d.specs) > 0 {
		fn.Specifiers = append(append([]string{}, ds.specs...), d.specs...)
	}
	if d.launch != nil {
		fn.LaunchBounds = d.launch
	}
	p.funcTrailer()
	switch {
	case p.is("{"):
		fn.Body = p.parseFuncBody(fn)
	case p.isK(kwTry):
		p.next()
		fn.Body = p.parseFuncBody(fn)
		for p.isK(kwCatch) {
			p.next()
			p.skipBalanced()
			p.skipBalanced()
		}
	case p.got(";"):
	default:
		if !p.newlineBefore() || !p.atDeclStartWord() {
			p.syncStmt()
			p.errorf(start, p.lastEnd, "PARSE010", "function declaration not understood; kept as written")
		}
	}
	fn.Span = p.spanFrom(start)
	return fn
}

// atDeclStartWord reports whether the current token can start a new
// declaration (used after a prototype whose ';' a macro may supply).
func (p *parser) atDeclStartWord() bool {
	w := p.word()
	return w != "" && (specifierWords[w] || builtinTypeWords[w] || w == "template" || w == "struct" || w == "class")
}

// funcTrailer skips what may follow a parameter list: cv and ref
// qualifiers, noexcept, override/final, attributes, a trailing return type,
// `= default/delete/0`, and a constructor's member initializers.
func (p *parser) funcTrailer() {
	for !p.atEOF() {
		// specifierWords[w] is the clsSpec bit of an identifier's class:
		// no map lookup (the common end of the loop, at '{' or ';', made
		// one for "").
		switch t, w := &p.toks[p.i], p.word(); {
		case w == "const" || w == "volatile" || w == "override" || w == "final" || w == "mutable" ||
			p.is("&") || p.isK(tkAndAnd) || w != "" && t.cls&clsSpec != 0:
			p.next()
		case w == "noexcept" || w == "throw" || w == "__attribute__" || w == "__launch_bounds__" || w == "requires":
			p.next()
			if p.is("(") {
				p.skipBalanced()
			}
		case p.is("[") && p.pbAt(1, '['):
			p.skipBalanced()
		case p.isK(tkArrow):
			p.next()
			p.parseTypeID()
		case p.is("="):
			p.next()
			p.next() // default, delete, 0
		case p.is(":"):
			p.skipCtorInits()
		default:
			return
		}
	}
}

// skipCtorInits skips `: a(x), b{y}` up to the body's '{'.
func (p *parser) skipCtorInits() {
	p.next()
	for !p.atEOF() && !p.is(";") {
		if p.is("(") || p.is("{") && !p.pbAt(-1, ')') && !p.pbAt(-1, '}') && p.toks[p.i-1].Kind == Identifier {
			p.skipBalanced()
			continue
		}
		if p.is("{") {
			return
		}
		if p.is("<") {
			p.i = p.skipAnglesIdx(p.i)
			p.lastEnd = int(p.toks[p.i-1].End)
			continue
		}
		p.next()
	}
}

// parseFuncBody parses the body with the function's scope active.
func (p *parser) parseFuncBody(fn *FuncDecl) *BlockStmt {
	saved, savedNames := p.scope, p.symNames
	p.scope = fn.Scope
	p.symNames = p.scopeNames(fn.Scope)
	for _, prm := range fn.Params {
		if prm.Name != "" {
			p.addSymbol(prm.Name, prm.Type, prm, true)
		}
	}
	body := p.parseBlock()
	p.scope, p.symNames = saved, savedNames
	return body
}

// scopeNames returns the symNames filter for a function body with scope s:
// the names in s, and inside a lambda (p.outer) also those of the scopes
// inScope searches after s, which the current filter covers.
//
// The filter only grows while a body is parsed (addSymbol; reset, which
// drops symbols, and the end of a lambda leave it a superset, which is
// still exact: a name whose bit is clear is in no searched scope, and a
// set bit only means Lookup runs as before).
func (p *parser) scopeNames(s *Scope) uint64 {
	var names uint64
	if len(p.outer) > 0 {
		names = p.symNames
	}
	if s != nil {
		for _, sym := range s.Symbols {
			names |= symBit(sym.Name)
		}
	}
	return names
}

// symBit is a name's bit in the symNames filter: one of 64, chosen by
// its first byte and length (names of locals differ in both).
func symBit(name string) uint64 {
	if name == "" {
		return 1
	}
	return 1 << ((uint(name[0]) + 7*uint(len(name))) & 63)
}

// parseVarInit parses a declarator's initializer and sets v's span end.
// The current token is read once; what follows '=' is an initializer list
// or an assignment-expression.
func (p *parser) parseVarInit(v *VarDecl, mode declMode) {
	switch p.toks[p.i].pb {
	case '=':
		p.next()
		if p.toks[p.i].pb == '{' {
			v.Init = p.parseInitList(nil)
		} else {
			v.Init = p.parseAssign()
		}
	case '{':
		v.Init = p.parseInitList(nil)
	case '(':
		if mode == declBlock && p.isAtK(1, kwVoid) && p.pbAt(2, ')') {
			// `extern __device__ void trap(void);`: a block-scope
			// function declaration, no initializer.
			p.skipBalanced()
			break
		}
		v.Init = p.parseParenInit()
	case ':':
		if !p.pbAt(1, ':') && mode == declFile {
			p.next() // bit-field width
			p.parseCond()
		}
	}
	for p.isK(kwAttributeUU) {
		p.next()
		p.skipBalanced()
	}
	v.Stop = p.lastEnd
}
