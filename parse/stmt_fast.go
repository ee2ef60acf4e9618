package parse

// Statement dispatch without the macro lookups of stmtHead.

// isPragmaWord reports whether the current word is _Pragma or __pragma,
// which macroStmt takes whether or not they are macros.
func (p *parser) isPragmaWord() bool {
	t := &p.toks[p.i]
	switch t.End - t.Start {
	case 7, 8:
		w := p.word()
		return w == "_Pragma" || w == "__pragma"
	}
	return false
}

// plainWordStmt parses a statement that starts with a word that is no
// macro of the file (maybeMacro rules it out), no _Pragma or __pragma, and
// starts no keyword statement (parseKeywordStmt returned nil). It takes
// the path parseStmtIn's general case takes for such a word, where
// stmtHead would find no macro (so attr is attrNone): macroStmt returns
// nil, a label needs a non-keyword, tryDeclStmtAt's keyword and
// exprFollows tests are as written here, and macroCallStmt is false
// without a macro.
func (p *parser) plainWordStmt(start int) Stmt {
	t := &p.toks[p.i]
	if t.cls&clsKeyword == 0 {
		if p.pbAt(1, ':') {
			return p.parseLabeled(start)
		}
		if t.cls&^(clsOpWord|clsExprWord) == 0 && (p.exprFollows() || p.comparisonFollows()) {
			return p.parseExprStmt(start)
		}
	} else if !startsDeclKeyword(t.kw) {
		return p.parseExprStmt(start)
	}
	if d := p.declStmt(false); d != nil {
		return d
	}
	return p.parseExprStmt(start)
}
