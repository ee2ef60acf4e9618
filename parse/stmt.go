package parse

import "sort"

// Statements. Each parser consumes the statement whole; on a malformed
// statement it falls back to an OpaqueStmt that ends at the statement's ';'
// or closing '}' so the rest of the body still parses.

// parseBlock parses `{ stmts }` at the current '{'.
//
// Only p, the list mark and the '{' token's index live across the
// statement loop (the node is taken after it, the '{' bounds read again
// from the view, where a '{' never changes): each value live across the
// loop's call is reloaded at every statement.
func (p *parser) parseBlock() *BlockStmt {
	open := p.i
	p.next()
	mark := len(p.slabs.stmts.items)
	for {
		if t := &p.toks[p.i]; t.Kind == EOF || t.pb == '}' { // atEOF, is("}")
			break
		}
		before := p.i
		if s := p.parseStmt(); s != nil {
			p.slabs.stmts.push(s)
		}
		if p.i == before {
			p.unexpectedStmtToken()
		}
	}
	b := slot(&p.slabs.sBlockStmt)
	b.Stmts = p.slabs.stmts.finish(mark)
	start := int(p.toks[open].Start)
	if !p.got("}") {
		p.errorf(start, int(p.toks[open].End), "PARSE003", "unbalanced '{': no matching '}' before end of file")
	}
	b.Span = Span{start, p.lastEnd}
	return b
}

// unexpectedStmtToken consumes a token no statement takes, as an
// OpaqueStmt of its own on the statement stack.
func (p *parser) unexpectedStmtToken() {
	t := p.tok()
	p.next()
	p.slabs.stmts.push(&OpaqueStmt{Span: Span{t.Start, t.End}, Reason: "unexpected token"})
	p.errorf(t.Start, t.End, "PARSE011", "unexpected token in statement")
}

// parseStmt parses one statement. The depth guard is released at each
// return, not by a defer: parseStmt is on the recursion path of every
// nested statement, and a panic (a parser bug) unwinds to recoverPanic in
// parseFile, which ends the parse, so the depth after it does not matter.
func (p *parser) parseStmt() Stmt {
	s := p.parseStmtIn()
	p.depth--
	return s
}

// parseStmtIn is parseStmt inside the depth guard: it is entered with the
// depth not yet raised, raises it, and parseStmt lowers it again.
func (p *parser) parseStmtIn() Stmt {
	// t is the current token's view entry, read once for the tests below
	// (the view does not move while the file is parsed).
	t := &p.toks[p.i]
	start := int(t.Start)
	if !p.enter() {
		p.syncStmt()
		return &OpaqueStmt{Span: p.spanFrom(start), Reason: "nesting too deep"}
	}
	if t.pb == '[' && p.pbAt(1, '[') {
		for p.is("[") && p.pbAt(1, '[') {
			p.skipBalanced() // [[likely]], [[maybe_unused]]
		}
		t = &p.toks[p.i]
	}
	switch {
	case t.Kind == Identifier:
		if parse := stmtByID[t.kw]; parse != nil {
			if s := parse(p, start); s != nil {
				return s
			}
		}
		return p.wordStmt(start)
	case t.pb == '{':
		return p.parseBlock()
	case t.pb == ';':
		p.next()
		return &EmptyStmt{p.spanFrom(start)}
	case t.kw == tkScope:
		if d := p.tryDeclStmt(false); d != nil {
			return d
		}
	}
	return p.parseExprStmt(start)
}

// stmtKeywords maps each keyword that starts a statement to the function
// that parses the statement from the keyword on (start is the keyword's
// offset). A function returns nil where its keyword starts no statement
// of its own (`default` without ':', a record type that also declares
// variables); parseStmt then goes on as for any other word. Every word
// here is a keyword (clsKeyword) with a token id: tokid.go's, or one
// that registerStmtKeywords gives it.
var stmtKeywords = map[string]func(p *parser, start int) Stmt{
	"if":            (*parser).parseIf,
	"for":           (*parser).parseFor,
	"while":         (*parser).parseWhile,
	"do":            (*parser).parseDo,
	"switch":        (*parser).parseSwitch,
	"case":          (*parser).parseCase,
	"default":       (*parser).parseDefault,
	"break":         (*parser).parseBranch,
	"continue":      (*parser).parseBranch,
	"goto":          (*parser).parseBranch,
	"return":        (*parser).parseReturn,
	"co_return":     (*parser).parseReturn,
	"try":           (*parser).parseTry,
	"asm":           (*parser).parseAsm,
	"__asm__":       (*parser).parseAsm,
	"__asm":         (*parser).parseAsm,
	"static_assert": (*parser).declInStmt,
	"typedef":       (*parser).declInStmt,
	"using":         (*parser).declInStmt,
	"template":      (*parser).declInStmt,
	"namespace":     (*parser).declInStmt,
	"struct":        (*parser).parseRecordStmt,
	"class":         (*parser).parseRecordStmt,
	"union":         (*parser).parseRecordStmt,
	"enum":          (*parser).parseRecordStmt,
}

// stmtByID is stmtKeywords indexed by the keyword's token id.
var stmtByID [256]func(p *parser, start int) Stmt

// registerStmtKeywords fills stmtByID and makes every word of
// stmtKeywords a keyword with a token id (new ids follow tokid.go's).
func registerStmtKeywords() {
	words := make([]string, 0, len(stmtKeywords))
	for w := range stmtKeywords {
		words = append(words, w)
	}
	sort.Strings(words) // the same ids in every run
	next := int(numTokIDs)
	for _, w := range words {
		_, kw := wordInfo(w)
		if kw == kwNone {
			if next > 255 {
				panic("parse: more than 255 token ids")
			}
			kw, next = uint8(next), next+1
		}
		addWord(w, clsKeyword, kw)
		stmtByID[kw] = stmtKeywords[w]
	}
}

// parseDefault parses `default:` in a switch body; nil when no ':'
// follows.
func (p *parser) parseDefault(start int) Stmt {
	if !p.pbAt(1, ':') {
		return nil
	}
	p.next()
	p.next()
	return newNode(&p.slabs.sCase, CaseStmt{Span: p.spanFrom(start)})
}

// parseRecordStmt parses a local record definition that declares no
// variable (`struct S { int a; };`) as a declaration; nil for any other
// statement starting with struct, class, union or enum (a declaration
// statement).
func (p *parser) parseRecordStmt(start int) Stmt {
	if p.isRecordDef() && !p.recordDefWithDeclarator() {
		return p.declInStmt(start)
	}
	return nil
}

// wordStmt parses a statement that starts with a word that starts no
// keyword statement: a pragma or statement-prefix macro, a label, a
// declaration or an expression, told apart by what the file #defines the
// word as (stmtHead) and what follows it.
func (p *parser) wordStmt(start int) Stmt {
	h := p.stmtHead()
	if h.attr() == attrStmt || h.w == "_Pragma" || h.w == "__pragma" {
		// macroStmt returns nil for any other word.
		if s := p.macroStmt(start, h); s != nil {
			return s
		}
	}
	if p.pbAt(1, ':') && !p.isKeyword() {
		return p.parseLabeled(start)
	}
	if d := p.tryDeclStmtAt(false, h); d != nil {
		return d
	}
	return p.parseExprStmt(start)
}

// recordDefWithDeclarator reports whether a local record definition also
// declares variables (`struct { int a; } s;`), which makes it a DeclStmt.
func (p *parser) recordDefWithDeclarator() bool {
	k := p.i
	for k < len(p.toks)-1 && p.textByte(k) != '{' {
		k++
	}
	end := p.skipBracesIdx(k)
	return p.textByte(end) != ';'
}

// skipBracesIdx returns the index after the balanced '{' group at i.
func (p *parser) skipBracesIdx(i int) int {
	depth := 0
	for ; i < len(p.toks)-1; i++ {
		switch p.textByte(i) {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// declInStmt wraps a declaration that appears as a statement.
func (p *parser) declInStmt(start int) Stmt {
	decls := p.parseDecl(&declCtx{}, nil)
	var d Decl
	if len(decls) > 0 {
		d = decls[0]
	} else {
		d = &Opaque{Span: p.spanFrom(start), Reason: "empty declaration"}
	}
	return &DeclInStmt{Span: p.spanFrom(start), Decl: d}
}

// opaqueStmt syncs to the statement's end and reports it.
func (p *parser) opaqueStmt(start int, reason string) Stmt {
	p.syncStmt()
	s := &OpaqueStmt{Span: p.spanFrom(start), Reason: reason}
	p.errorf(s.Start, s.Stop, "PARSE011", "statement not understood ("+reason+"); kept as written")
	return s
}

// expect consumes the one-byte punctuator c and reports whether it was
// there; callers turn a missing token into an OpaqueStmt.
func (p *parser) expect(c byte) bool {
	if p.toks[p.i].pb == c {
		p.next()
		return true
	}
	return false
}

func (p *parser) parseLabeled(start int) Stmt {
	label := p.word()
	p.next()
	p.next()
	ls := &LabeledStmt{Label: label}
	if !p.is("}") {
		ls.Stmt = p.parseStmt()
	}
	ls.Span = p.spanFrom(start)
	return ls
}

// parseIf parses `if [constexpr] ( [init;] cond ) stmt [else stmt]`.
func (p *parser) parseIf(start int) Stmt {
	p.next()
	p.gotK(kwConstexpr)
	if p.is("!") && p.isAtK(1, kwConsteval) || p.isK(kwConsteval) {
		p.got("!")
		p.next()
		s := &IfStmt{Then: p.parseStmt()}
		p.parseElse(s)
		s.Span = p.spanFrom(start)
		return s
	}
	if !p.expect('(') {
		return p.opaqueStmt(start, "expected '(' after if")
	}
	init, cond := p.parseCondition(true)
	if !p.expect(')') {
		return p.opaqueStmt(start, "expected ')' after if condition")
	}
	s := newNode(&p.slabs.sIfStmt, IfStmt{Init: init, Cond: cond, Then: p.parseStmt()})
	p.parseElse(s)
	s.Span = p.spanFrom(start)
	return s
}

func (p *parser) parseElse(s *IfStmt) {
	if p.gotK(kwElse) {
		s.Else = p.parseStmt()
	}
}

// parseCondition parses the inside of `if (...)`, `switch (...)` or
// `while (...)`: an optional init-statement (C++17) and a condition that may
// declare a variable (`if (auto *p = f())`). A declared condition is
// returned as Init with Cond naming the variable.
func (p *parser) parseCondition(allowInit bool) (Stmt, Expr) {
	start := p.curStart()
	if d := p.tryDeclStmt(false); d != nil {
		if !allowInit || p.is(")") {
			return nil, p.declCond(d)
		}
		return d, p.parseCondExpr()
	}
	x := p.parseExpr()
	if allowInit && p.got(";") {
		return newNode(&p.slabs.sExprStmt, ExprStmt{Span: p.spanFrom(start), X: x}), p.parseCondExpr()
	}
	return nil, x
}

// parseCondExpr parses the condition after an init-statement.
func (p *parser) parseCondExpr() Expr {
	if d := p.tryDeclStmt(false); d != nil {
		return p.declCond(d)
	}
	return p.parseExpr()
}

// declCond turns a condition declaration into an expression: the
// initializer when there is one (its variable is in the scope).
func (p *parser) declCond(d Stmt) Expr {
	ds, ok := d.(*DeclStmt)
	if !ok || len(ds.Vars) == 0 {
		return &OpaqueExpr{Span: Span{d.Pos(), d.End()}, Reason: "condition declaration"}
	}
	v := ds.Vars[0]
	if v.Init != nil {
		return v.Init
	}
	return &Ident{Span: v.NameSpan, Name: v.Name}
}

// parseFor parses classic and range-based for loops.
func (p *parser) parseFor(start int) Stmt {
	p.next()
	if !p.expect('(') {
		return p.opaqueStmt(start, "expected '(' after for")
	}
	var init Stmt
	initStart := p.curStart()
	switch d := p.tryDeclStmt(true); {
	case d != nil && p.is(":"):
		return p.parseRangeFor(start, d)
	case d != nil:
		init = d
	case p.got(";"):
	default:
		x := p.parseExpr()
		if !p.expect(';') {
			return p.opaqueStmt(start, "expected ';' in for")
		}
		init = newNode(&p.slabs.sExprStmt, ExprStmt{Span: Span{initStart, p.lastEnd}, X: x})
	}
	fs := newNode(&p.slabs.sForStmt, ForStmt{Init: init})
	if !p.is(";") {
		_, fs.Cond = p.parseCondition(false)
	}
	if !p.expect(';') {
		return p.opaqueStmt(start, "expected ';' after for condition")
	}
	if !p.is(")") {
		fs.Post = p.parseExpr()
	}
	if !p.expect(')') {
		return p.opaqueStmt(start, "expected ')' after for clauses")
	}
	fs.Body = p.parseStmt()
	fs.Span = p.spanFrom(start)
	return fs
}

// parseRangeFor finishes `for (decl : range) body` at the ':'.
func (p *parser) parseRangeFor(start int, d *DeclStmt) Stmt {
	p.next()
	rf := newNode(&p.slabs.sRangeFor, RangeForStmt{Var: d.Vars[0]})
	if p.is("{") {
		rf.Range = p.parseInitList(nil)
	} else {
		rf.Range = p.parseExpr()
	}
	if !p.expect(')') {
		return p.opaqueStmt(start, "expected ')' after range-for")
	}
	rf.Body = p.parseStmt()
	rf.Span = p.spanFrom(start)
	return rf
}

// parseHeadCondition parses the `(condition)` after while or switch; when a
// parenthesis is missing it returns the statement made opaque instead.
func (p *parser) parseHeadCondition(start int, kw string, allowInit bool) (cond Expr, bad Stmt) {
	p.next()
	if !p.expect('(') {
		return nil, p.opaqueStmt(start, "expected '(' after "+kw)
	}
	_, cond = p.parseCondition(allowInit)
	if !p.expect(')') {
		return nil, p.opaqueStmt(start, "expected ')' after "+kw+" condition")
	}
	return cond, nil
}

func (p *parser) parseWhile(start int) Stmt {
	cond, bad := p.parseHeadCondition(start, "while", false)
	if bad != nil {
		return bad
	}
	ws := newNode(&p.slabs.sWhile, WhileStmt{Cond: cond, Body: p.parseStmt()})
	ws.Span = p.spanFrom(start)
	return ws
}

func (p *parser) parseDo(start int) Stmt {
	p.next()
	ds := &DoStmt{Body: p.parseStmt()}
	if !p.gotK(kwWhile) || !p.expect('(') {
		return p.opaqueStmt(start, "expected while after do body")
	}
	ds.Cond = p.parseExpr()
	if !p.expect(')') {
		return p.opaqueStmt(start, "expected ')' after do-while condition")
	}
	p.gotSemi()
	ds.Span = p.spanFrom(start)
	return ds
}

// gotSemi consumes the ';' ending a statement; a missing one is reported
// but costs nothing else.
func (p *parser) gotSemi() {
	if !p.got(";") {
		p.warnf(p.lastEnd, p.lastEnd, "PARSE013", "expected ';'")
	}
}

func (p *parser) parseSwitch(start int) Stmt {
	cond, bad := p.parseHeadCondition(start, "switch", true)
	if bad != nil {
		return bad
	}
	ss := &SwitchStmt{Cond: cond, Body: p.parseStmt()}
	ss.Span = p.spanFrom(start)
	return ss
}

// parseCase parses `case value:` (GNU ranges `case 1 ... 5:` included).
func (p *parser) parseCase(start int) Stmt {
	p.next()
	cs := newNode(&p.slabs.sCase, CaseStmt{Value: p.parseCond()})
	if p.gotK(tkEllipsis) {
		p.parseCond()
	}
	if !p.expect(':') {
		return p.opaqueStmt(start, "expected ':' after case value")
	}
	cs.Span = p.spanFrom(start)
	return cs
}

func (p *parser) parseBranch(start int) Stmt {
	bs := newNode(&p.slabs.sBranch, BranchStmt{Keyword: p.word()})
	p.next()
	if bs.Keyword == "goto" && p.isIdent() {
		bs.Label = p.word()
		p.next()
	}
	p.gotSemi()
	bs.Span = p.spanFrom(start)
	return bs
}

func (p *parser) parseReturn(start int) Stmt {
	p.next()
	rs := newNode(&p.slabs.sReturnStmt, ReturnStmt{})
	switch {
	case p.is(";"):
	case p.is("{"):
		rs.X = p.parseInitList(nil)
	default:
		rs.X = p.parseExpr()
	}
	if !p.got(";") {
		return p.opaqueStmt(start, "expected ';' after return")
	}
	rs.Span = p.spanFrom(start)
	return rs
}

// parseAsm keeps inline assembly as written: bamgen never rewrites it.
func (p *parser) parseAsm(start int) Stmt {
	p.next()
	for p.isK(kwVolatile) || p.isK(kwVolatileUU) || p.isK(kwGoto) || p.isK(kwInline) {
		p.next()
	}
	if p.is("(") {
		p.skipBalanced()
	}
	p.got(";")
	return &OpaqueStmt{Span: p.spanFrom(start), Reason: "inline assembly"}
}

// parseTry parses `try { } catch (decl) { } ...` (host code).
func (p *parser) parseTry(start int) Stmt {
	p.next()
	if !p.is("{") {
		return p.opaqueStmt(start, "expected '{' after try")
	}
	ts := &TryStmt{Body: p.parseBlock()}
	for p.isK(kwCatch) {
		cStart := p.curStart()
		p.next()
		if !p.expect('(') {
			return p.opaqueStmt(start, "expected '(' after catch")
		}
		cc := &CatchClause{}
		if !p.gotK(tkEllipsis) {
			cc.Param = p.parseParam()
			p.declareParam(cc.Param, false)
		}
		if !p.expect(')') || !p.is("{") {
			return p.opaqueStmt(start, "malformed catch clause")
		}
		cc.Body = p.parseBlock()
		cc.Span = Span{cStart, p.lastEnd}
		ts.Handlers = append(ts.Handlers, cc)
	}
	ts.Span = p.spanFrom(start)
	return ts
}

// declareParam adds a lambda parameter (isParam) or a catch parameter.
func (p *parser) declareParam(prm *Param, isParam bool) {
	if prm != nil && prm.Name != "" && p.scope != nil {
		p.addSymbol(prm.Name, prm.Type, prm, isParam)
	}
}

// parseExprStmt parses `expr;`. A function-like macro invocation may lack
// its ';' (`CHECK(x)` at the end of a line); that is accepted silently.
func (p *parser) parseExprStmt(start int) Stmt {
	x := p.parseExpr()
	if p.got(";") {
		s := slot(&p.slabs.sExprStmt) // zero: the fields are stored in place
		s.Span, s.X = p.spanFrom(start), x
		return s
	}
	if p.isMacroStmt(x) && (p.newlineBefore() || p.is("}") || p.is("{")) {
		return newNode(&p.slabs.sExprStmt, ExprStmt{Span: p.spanFrom(start), X: x})
	}
	return p.opaqueStmt(start, "expected ';' after expression")
}

// isMacroStmt reports whether x, missing its ';', is a macro invocation
// that supplies its own: a call (`CHECK(x)`, `FOR_EACH(e) { }`) or a name
// of a macro.
func (p *parser) isMacroStmt(x Expr) bool {
	switch x := x.(type) {
	case *CallExpr:
		return true
	case *Ident:
		return p.macro(x.Name) != nil || isAllCaps(x.Name)
	}
	return false
}

// headWord is what the statement parsers learn about the word a statement
// starts with: its macro and attribute-macro kind, looked up once for
// macroStmt, tryDeclStmt and macroCallStmt (a macro call statement,
// `CUDA_CHECK(...)`, took six map lookups before).
type headWord struct {
	w   string    // the current identifier, or "" at any other token
	def *macroDef // p.macroDefOf(w): nil unless w is #defined in the file
}

// macro is p.macro(w): nil unless w is #defined in the file.
func (h headWord) macro() *Macro {
	if h.def == nil {
		return nil
	}
	return h.def.m
}

// attr is p.attrOf(w); attrNone when w is no macro.
func (h headWord) attr() int {
	if h.def == nil {
		return attrNone
	}
	return h.def.attr
}

// stmtHead looks up the current token as a headWord, by one lookup of
// its macroDef.
func (p *parser) stmtHead() headWord {
	w := p.word()
	return headWord{w: w, def: p.macroDefOf(w)}
}

// macroStmt keeps `_Pragma("unroll")` and macros standing for pragmas or
// statement prefixes (`UNROLL`, `IF_LANE0 { }`) as harmless OpaqueStmts;
// the statement they prefix parses on its own.
func (p *parser) macroStmt(start int, h headWord) Stmt {
	w := h.w
	if w != "_Pragma" && w != "__pragma" && h.attr() != attrStmt {
		return nil
	}
	p.next()
	if p.is("(") && (w == "_Pragma" || w == "__pragma" || h.macro() != nil && h.macro().IsFunc) {
		p.skipBalanced()
	}
	p.got(";")
	return &OpaqueStmt{Span: p.spanFrom(start), Reason: p.keep("macro " + w)}
}

// ---------------------------------------------------------------------------
// Declaration statements

// tryDeclStmt parses a block-scope declaration if the tokens form one and
// returns nil (having consumed nothing) otherwise. In a for-init (forInit)
// the declaration may end at ':' (range-for) instead of ';'.
//
// It decides as tryDeclStmtAt(forInit, p.stmtHead()) does, without the
// lookups where the current token is no macro (see parseStmtIn): a
// token that is no word starts a specifier sequence only as `[[` or '::'
// (specStep stops at any other at once, so parseDeclSpecs finds no type
// and the attempt consumes nothing).
func (p *parser) tryDeclStmt(forInit bool) *DeclStmt {
	t := &p.toks[p.i]
	switch {
	case t.Kind != Identifier:
		if t.kw != tkScope && !(t.pb == '[' && p.pbAt(1, '[')) {
			return nil
		}
	case p.maybeMacro(p.src[t.Start], int(t.End-t.Start)):
		return p.tryDeclStmtAt(forInit, p.stmtHead())
	case t.cls&clsKeyword != 0:
		if !startsDeclKeyword(t.kw) {
			return nil
		}
	case t.cls&^(clsOpWord|clsExprWord) == 0:
		if p.exprFollows() || p.comparisonFollows() {
			return nil
		}
	}
	return p.declStmt(forInit)
}

// tryDeclStmtAt is tryDeclStmt with the current word already looked up.
func (p *parser) tryDeclStmtAt(forInit bool, h headWord) *DeclStmt {
	w := h.w
	if w != "" && p.toks[p.i].cls&clsKeyword != 0 && !startsDeclKeyword(p.toks[p.i].kw) {
		return nil
	}
	if w != "" && p.toks[p.i].cls&^(clsOpWord|clsExprWord) == 0 && h.def == nil && (p.exprFollows() || p.comparisonFollows()) {
		return nil
	}
	if w != "" && p.macroCallStmt(h) {
		return nil
	}
	return p.declStmt(forInit)
}

// declStmt is the speculative part of tryDeclStmt: it parses a
// declaration at the current token or returns nil having consumed nothing.
func (p *parser) declStmt(forInit bool) *DeclStmt {
	m := p.mark()
	start := p.curStart()
	var dsv declSpec // on the stack: specifier sequences are parsed speculatively
	ds := &dsv
	p.parseDeclSpecs(ds, &declCtx{})
	if !ds.hasType {
		p.reset(m)
		return nil
	}
	vars := p.blockDeclarators(ds)
	if vars == nil {
		p.reset(m)
		return nil
	}
	switch {
	case p.is(":") && forInit && len(vars) == 1:
	case p.is(")") && !forInit && len(vars) == 1 && vars[0].Init != nil:
		// A condition declaration: `if (auto x = f())`.
	case p.got(";"):
	default:
		p.reset(m)
		return nil
	}
	d := slot(&p.slabs.sDeclStmt) // zero: only the set fields are stored
	d.Span, d.Vars = p.spanFrom(start), vars
	if ds.record != nil {
		d.Record = ds.record
	}
	return d
}

// macroCallStmt reports whether the statement starts with a use of a
// function-like (or non-empty) macro followed by '(', `CUDA_CHECK(...)`,
// that the speculative declaration parse would reject: the macro is no
// specifier or attribute, so the specifiers end with it as the base type,
// and no block declarator starts with '(' but `(*name)(`. It decides
// exactly as that parse would, without it and its backtracking.
func (p *parser) macroCallStmt(h headWord) bool {
	if p.toks[p.i].cls&(clsSpec|clsBuiltin|clsKeyword) != 0 || !p.pbAt(1, '(') {
		return false
	}
	if p.pbAt(2, '*') && p.at(3).Kind == Identifier && p.pbAt(4, ')') && p.pbAt(5, '(') {
		return false // `T (*fp)(...)`
	}
	d := h.def
	if d == nil || !d.m.IsFunc && d.m.Body == "" || d.spec != nil {
		return false
	}
	return d.attr == attrNone || d.attr == attrStmt
}

// exprFollows reports whether the token after a leading plain identifier
// rules out a declaration (`f(`, `x =`, `a.b`, `i++`), which spares the
// speculative declaration parse for most expression statements.
//
// The identifier may be qualified and its last part may have simple
// template arguments (`std::swap(a, b)`, `kernel<T, 256><<<g, b>>>(x)`):
// the declaration parse consumes such a name whole as the base type
// (parseNamedBase; simpleTemplateArgsEnd says why the arguments always
// parse), exactly as it consumes a single word, and then meets the same
// token. There `[[` is left out: the specifiers would skip it as an
// attribute. (A single word followed by '[' was shortcut before this rule
// and keeps its behaviour.)
//
// The comparisons '>', ">=" and "<=" (`if (i >= n)`) rule out a
// declaration as the other listed operators do: after the base type the
// specifiers end at them (specStep stops at punctuators other than `[[`
// and '::'), and they start no declarator: no pointer operator
// (ptrOperator: '*', '&', '&&', '...'), no `(*name)(`, no name
// (declName), so blockDeclarators returns nil.
func (p *parser) exprFollows() bool {
	t := p.at(1)
	if t.Kind == Punct && t.End-t.Start == 1 && t.pb != '<' {
		// exprFollowsAt(1) for a one-byte punctuator (the common case),
		// spelled out here.
		if t.pb != '(' {
			return exprFollowsByte[t.pb]
		}
		return !(p.pbAt(2, '*') && p.pbAt(4, ')'))
	}
	if t.kw != tkScope && t.pb != '<' {
		return p.exprFollowsAt(1)
	}
	k := p.qualifiedNameEnd()
	if k > 0 && p.pbAt(k, '<') {
		if k = p.simpleTemplateArgsEnd(k); k > 0 && p.isAtK(k, tkScope) {
			return false // the name goes on: `a<T>::b`
		}
	}
	return k > 0 && !(p.pbAt(k, '[') && p.pbAt(k+1, '[')) && p.exprFollowsAt(k)
}

// simpleTemplateArgsEnd returns the offset of the token after the
// template argument list that opens at the '<' k tokens ahead, when each
// argument is one plain word (no keyword, specifier or macro), one
// fundamental type word (`float`: a word of the builtin class alone) or
// one number: `<T>`, `<T, 256>`, `<float, 4>`. Otherwise it returns -1.
//
// Such a list parses as template arguments in any parser state, in a
// type (skipTemplateArgs) as in an expression: each word is a type name
// whose specifiers end at the ',' or '>' after it (parseTypeID; a builtin
// word always starts a type, startsType, and is a base of its own,
// builtinBase), or else an Ident (parseCond), a number a literal, and a
// one-byte '>' closes the list. No argument holds a '<', so the attempt leaves no badAngle bit,
// and the nesting guard is kept out of reach by the depth bound. So the
// declaration parse that exprFollows spares had no lasting effect.
func (p *parser) simpleTemplateArgsEnd(k int) int {
	if p.depth > maxDepth-comparisonDepthRoom {
		return -1
	}
	for n := 0; n < comparisonScanMax; n++ {
		t := p.at(k + 1)
		if !(t.Kind == Number || t.Kind == Identifier && (t.cls == 0 || t.cls == clsBuiltin) && !p.isMacroTok(p.i+k+1)) {
			return -1
		}
		switch {
		case p.pbAt(k+2, '>'):
			return k + 3
		case !p.pbAt(k+2, ','):
			return -1
		}
		k += 2
	}
	return -1
}

// qualifiedNameEnd returns the offset of the token after the qualified
// name `a::b::c` at the current token, or -1 when a part after a '::' is
// no plain word (a keyword: `template`, `operator`; '~', '*').
func (p *parser) qualifiedNameEnd() int {
	k := 1
	for p.isAtK(k, tkScope) {
		if t := p.at(k + 1); t.Kind != Identifier || t.cls&clsKeyword != 0 {
			return -1
		}
		k += 2
	}
	return k
}

// exprFollowsAt is exprFollows' test of the token k ahead, the one after
// the name.
func (p *parser) exprFollowsAt(k int) bool {
	t := p.at(k) // k > 0: as p.peek(k), without building a Token
	if t.Kind != Punct {
		return t.Kind != Identifier
	}
	if t.End-t.Start == 1 {
		// A one-byte punctuator (the common case): a table load, and
		// '(' (a call, the most frequent) decided here too. pb is the
		// byte of every one-byte punctuator (the lexer's view, and
		// closeAngle for the '>' or '=' a split leaves).
		if c := t.pb; c != '(' {
			return exprFollowsByte[c]
		}
		return !(p.pbAt(k+1, '*') && p.pbAt(k+3, ')')) // `T (*fp)(...)`
	}
	switch string(p.src[t.Start:t.End]) {
	case "->", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
		"<<=", ">>=", "<<", ">>", "<<<", "==", "!=", "||", ">=", "<=":
		return true
	}
	return false
}

// comparisonFollows reports whether a leading plain identifier (no
// keyword, no macro: the caller checks) starts `name < operand` that the
// speculative declaration parse would reject, as in `i < n;` or the
// condition of `if (i < n)` and `for (...; i < n; ...)`.
//
// That parse takes name as the base type and tries template arguments at
// the '<' (parseNamedBase). Here the tokens after the '<' up to the first
// ';' or ')' are operands and operators that can neither open nor close a
// template argument list (no '<', no token starting with '>', no '(' or
// '{', no macro and no word of a class (keyword, builtin, specifier,
// offsetof and kin); '[' only as a balanced subscript), and nothing
// in them consumes that ';' or ')' (parsing them consumes a closer only
// after its opener, and skipBalanced starts at '[' only), so closeAngle can
// never succeed: parseTemplateArgs fails in any parser state. Then the
// base type ends at the '<', which starts no declarator (declaratorShape
// finds no name), so the declaration parse returns nil. The only lasting
// effect of that failed attempt is the badAngle bit of this '<', and a
// later attempt at it fails all the same: the bit decides nothing. The
// depth bound keeps the nesting guard (whose first report is sticky) out
// of reach of both parses.
func (p *parser) comparisonFollows() bool {
	if !p.pbAt(1, '<') || p.depth > maxDepth-comparisonDepthRoom {
		return false
	}
	operand, brackets := false, 0 // operand: the previous token ends an operand
	for k := p.i + 2; k < len(p.toks) && k < p.i+2+comparisonScanMax; k++ {
		t := &p.toks[k]
		switch t.Kind {
		case Identifier:
			if t.cls != 0 || p.isMacroTok(k) {
				return false
			}
			operand = true
			continue
		case Number:
			operand = true
			continue
		case Punct:
		default:
			return false
		}
		switch {
		case t.pb == ';' || t.pb == ')':
			return brackets == 0
		case t.pb == '[' && operand: // a subscript, never `[[` or a lambda
			brackets++
		case t.pb == ']' && brackets > 0:
			brackets--
			operand = true
			continue
		case !comparisonOperator(t):
			return false
		}
		operand = false
	}
	return false
}

// comparisonDepthRoom is the nesting room comparisonFollows asks for: more
// than the parses of its at most comparisonScanMax tokens can use.
const (
	comparisonScanMax   = 32
	comparisonDepthRoom = 8 * comparisonScanMax
)

// comparisonOperator reports whether t is an operator comparisonFollows
// lets through: binary or prefix, never '<' or '>' or a bracket.
func comparisonOperator(t *ptok) bool {
	switch t.pb {
	case '.', '+', '-', '*', '/', '%', '&', '|', '^', '!', '~':
		return true
	case 0:
		switch t.kw {
		case tkArrow, tkAndAnd, tkOrOr:
			return true
		}
	}
	return false
}

// exprFollowsByte holds exprFollowsAt's answer for the one-byte
// punctuators other than '(' (its list's one-byte entries).
var exprFollowsByte = [256]bool{'=': true, '.': true, '[': true, ';': true, ',': true, ')': true, '?': true,
	'+': true, '-': true, '/': true, '%': true, '|': true, '^': true, '>': true}

// startsDeclKeyword reports whether the keyword with token id kw can
// begin a declaration: const, volatile, auto, struct, class, union, enum,
// typename, decltype, __restrict__, alignas, __attribute__, __align__,
// __typeof__ or typeof (each has an id; TestStartsDeclKeyword).
func startsDeclKeyword(kw uint8) bool {
	switch kw {
	case kwConst, kwVolatile, kwAuto, kwStruct, kwClass, kwUnion, kwEnum, kwTypename, kwDecltype,
		kwRestrictUU, kwAlignas, kwAttributeUU, kwAlignUU, kwTypeofUU, kwTypeof:
		return true
	}
	return false
}

// blockDeclarators parses the declarators of a block-scope declaration, or
// returns nil when the tokens are not one (then the statement is an
// expression).
func (p *parser) blockDeclarators(ds *declSpec) []*VarDecl {
	var vars []*VarDecl
	for {
		var dv declarator
		d := &dv
		sh := p.declaratorShape(d, ds, declBlock)
		if d.name == "" || d.isFunc || !p.declaratorFollows(len(vars) == 0) {
			return nil // the caller backtracks: no type text needed
		}
		p.finishDeclarator(d, ds, sh)
		v := p.newVar(ds, d)
		p.parseVarInit(v, declBlock)
		p.declareVar(v, d)
		switch len(vars) {
		case 0:
			vars = one(&p.slabs.sVarPtr, v) // most declarations declare one
		case 1:
			// A second declarator (`int i, j;`): room for four carved
			// from a chunk, not append's allocation of a new array.
			vars = append(carve(&p.slabs.varChunk, 4), vars[0], v)
		default:
			vars = append(vars, v)
		}
		if !p.got(",") {
			return vars
		}
	}
}

// declareVar adds v (or each name of a structured binding) to the scope.
func (p *parser) declareVar(v *VarDecl, d *declarator) {
	if p.scope == nil {
		return
	}
	if len(d.bindings) == 0 {
		p.addSymbol(v.Name, v.Type, v, false)
		return
	}
	for _, b := range d.bindings {
		name := p.src[b.Start:b.Stop]
		p.addSymbol(name, v.Type, v, false)
	}
}

// declaratorFollows reports whether the token after a declarator name can
// continue a declaration.
func (p *parser) declaratorFollows(first bool) bool {
	t := &p.toks[p.i]
	switch t.pb {
	case '=', ';', ',', '{', ')', '(':
		return true
	case ':':
		return first && !p.pbAt(1, ':')
	}
	return t.kw == kwAttributeUU
}
