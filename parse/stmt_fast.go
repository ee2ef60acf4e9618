package parse

// Statement dispatch without the macro lookups of stmtHead (see
// parseStmtIn).

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
