package parse

import "strings"

// The preprocessor: directive lines in the lexer, and (below, Macros) what
// the parser learns from the file's #defines. bamgen does not run the
// preprocessor:
// a directive is one trivia token, and of each #if group the parser sees one
// branch only (the first, or the #else of an `#if 0`) so that both arms of
// an #ifdef never reach it as one run of code. The other branches are
// Inactive trivia, kept byte for byte.

// directive lexes a whole preprocessor line at l.pos ('#'), continuations
// and multi-line block comments included, the newline excluded.
func (l *lexer) directive() {
	start := l.pos
	// Most directives have no '/' on their logical line: then the line's
	// end (continuations joined, found by lineEnd with IndexByte) is the
	// directive's end. Otherwise directiveEnd scans from the first '/',
	// the first byte where it does more than skip.
	i := l.lineEnd(start + 1)
	if slash := strings.IndexByte(l.src[start+1:i], '/'); slash >= 0 {
		i = l.directiveEnd(start + 1 + slash)
	}
	l.pos = i
	l.emit(Directive, start)
	l.directs = append(l.directs, int32(len(l.toks)-1))
	l.conditional(start, i)
}

// directiveEnd returns the end of the directive line that goes on at i:
// the newline after it, continuations and block comments skipped.
func (l *lexer) directiveEnd(i int) int {
	for i < len(l.src) {
		// Only '\\', '\n', '\r' and '/' can end the line or start
		// something that does: skip the other bytes with one table load.
		for i < len(l.src) && !directiveStop[l.src[i]] {
			i++
		}
		if i >= len(l.src) {
			break
		}
		if n := l.continuationLen(i); n > 0 {
			i += n
			continue
		}
		c := l.src[i]
		if c == '\n' || (c == '\r' && l.peekAt(i+1) == '\n') {
			break
		}
		if c == '/' && l.peekAt(i+1) == '*' {
			if end := indexFrom(l.src, i+2, "*/"); end >= 0 {
				i = end + 2
				continue
			}
			l.errorf(i, len(l.src), "PARSE001", "unterminated /* comment")
			return len(l.src)
		}
		if c == '/' && l.peekAt(i+1) == '/' {
			return l.lineEnd(i)
		}
		i++
	}
	return i
}

// directiveStop marks the bytes directive must look at.
var directiveStop = [256]bool{'\\': true, '\n': true, '\r': true, '/': true}

// directiveName returns the directive's name ("if", "define", ...) and the
// offset just after it.
func directiveName(src string, start, end int) (string, int) {
	i, j := directiveNameAt(src, start, end)
	return string(src[i:j]), j
}

// directiveNameAt returns the bounds of the directive's name. The lexer
// compares the name without making it a string (an allocation per
// directive).
func directiveNameAt(src string, start, end int) (int, int) {
	i := directiveNameStart(src, start, end)
	j := i
	for j < end && isIdentChar(src[j]) {
		j++
	}
	return i, j
}

// directiveNameStart returns the offset of the directive's name (after
// '#' or "%:" and blanks).
func directiveNameStart(src string, start, end int) int {
	i := start + 1
	if src[start] == '%' {
		i++ // "%:" digraph
	}
	for i < end && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// conditional updates the #if stack for the directive [start,end) and skips
// the branches the parser will not take.
func (l *lexer) conditional(start, end int) {
	// The names it looks for start with "if", "el" or "en": the other
	// directives (#include, #define, #pragma, ...) leave without a scan
	// of their name and a string switch.
	if i := directiveNameStart(l.src, start, end); i+1 >= end || !isCondPrefix(l.src[i], l.src[i+1]) {
		return
	}
	i, rest := directiveNameAt(l.src, start, end)
	name := l.src[i:rest]
	switch string(name) {
	case "if", "ifdef", "ifndef":
		zero := string(name) == "if" && isZeroCond(l.src[rest:end])
		l.conds = append(l.conds, condFrame{start: start, taken: !zero})
		if zero {
			l.skipInactive()
		}
	case "elif", "else", "elifdef", "elifndef":
		if len(l.conds) == 0 {
			l.warnf(start, end, "PARSE006", "#"+string(name)+" without #if")
			return
		}
		top := &l.conds[len(l.conds)-1]
		if top.taken || (string(name) == "elif" && isZeroCond(l.src[rest:end])) {
			l.skipInactive()
			return
		}
		top.taken = true
	case "endif":
		if len(l.conds) == 0 {
			l.warnf(start, end, "PARSE006", "#endif without #if")
			return
		}
		l.conds = l.conds[:len(l.conds)-1]
	}
}

// isCondPrefix reports whether cd starts a name conditional looks for
// ("if", "ifdef", "ifndef", "elif", "else", "elifdef", "elifndef",
// "endif").
func isCondPrefix(c, d byte) bool {
	return c == 'i' && d == 'f' || c == 'e' && (d == 'l' || d == 'n')
}

// isZeroCond reports whether an #if condition is the literal 0 (comments
// and blanks around it allowed).
func isZeroCond(b string) bool {
	seen := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\':
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := indexFrom(b, i+2, "*/")
			if end < 0 {
				return seen
			}
			i = end + 1
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			return seen
		case c == '0' && !seen:
			seen = true
		default:
			return false
		}
	}
	return seen
}

// skipInactive is called right after a directive that starts a branch the
// parser does not take. It emits the directive's newline, then one Inactive
// token up to the line holding the #elif/#else/#endif that ends the branch
// (nested groups skipped), which the main loop then lexes as a directive.
func (l *lexer) skipInactive() {
	if l.pos < len(l.src) {
		start := l.pos
		if l.src[l.pos] == '\r' {
			l.pos++
		}
		l.pos++
		l.emit(Newline, start)
	}
	start := l.pos
	depth := 0
	for i := l.pos; i < len(l.src); {
		lineEnd := l.lineEnd(i)
		if name, ok := l.lineDirective(i, lineEnd); ok {
			switch name {
			case "if", "ifdef", "ifndef":
				depth++
			case "elif", "else", "elifdef", "elifndef", "endif":
				if depth == 0 {
					l.pos = i
					if l.pos > start {
						l.emit(Inactive, start)
					}
					return
				}
				if name == "endif" {
					depth--
				}
			}
		}
		i = l.skipInactiveLine(i, lineEnd)
	}
	l.pos = len(l.src)
	if l.pos > start {
		l.emit(Inactive, start)
	}
}

// lineDirective reports the directive name if the line [i,end) is a
// directive ('#' after optional blanks).
func (l *lexer) lineDirective(i, end int) (string, bool) {
	for i < end && (l.src[i] == ' ' || l.src[i] == '\t') {
		i++
	}
	if i >= end || l.src[i] != '#' && !(l.src[i] == '%' && i+1 < end && l.src[i+1] == ':') {
		return "", false
	}
	name, _ := directiveName(l.src, i, end)
	return name, true
}

// skipInactiveLine returns the start of the line after the one at i. A block
// comment opened on the line hides directives until it closes, as it does
// for the real preprocessor, so the line then ends after the comment.
func (l *lexer) skipInactiveLine(i, end int) int {
	for j := i; j < end; j++ {
		if l.src[j] != '/' || j+1 >= len(l.src) {
			continue
		}
		if l.src[j+1] == '/' {
			break
		}
		if l.src[j+1] == '*' {
			close := indexFrom(l.src, j+2, "*/")
			if close < 0 {
				return len(l.src)
			}
			j = close + 1
			if j >= end {
				end = l.lineEnd(j + 1)
			}
		}
	}
	if end >= len(l.src) {
		return len(l.src)
	}
	if l.src[end] == '\r' {
		end++
	}
	return end + 1
}

// closeConditionals reports #if groups still open at the end of the file.
func (l *lexer) closeConditionals() {
	for _, c := range l.conds {
		l.warnf(c.start, c.start+1, "PARSE006", "#if without #endif")
	}
}

// ---------------------------------------------------------------------------
// Macros

// collectMacros records every #define (in active code) and learns which
// object-like macros expand to declaration specifiers or to a type.
//
// The Macros come from a slab (see slot): one allocation per chunk
// instead of one per #define.
func (p *parser) collectMacros() {
	var ms slab[Macro]
	for _, k := range p.directs {
		t := p.file.Tokens[k]
		rest := defineNameEnd(p.src, t.Start, t.End)
		if rest < 0 {
			continue
		}
		raw := p.src[rest:t.End]
		if m := slot(&ms); !defineText(raw, t, m) {
			ms.buf = ms.buf[:len(ms.buf)-1] // m is still zero: the next #define takes it
		} else {
			p.file.Macros = append(p.file.Macros, m)
			// A later #define of a name replaces the earlier one (as the
			// map this table replaced did).
			k := p.macroIdx.find(m.Name)
			if k >= 0 {
				p.macroDefs[k].m = m
			} else {
				k = p.macroIdx.add(m.Name)
				p.macroDefs = append(p.macroDefs, macroDef{m: m})
				// isMacroTok and macro filter on the first byte and
				// length before the table lookup.
				p.macroLens[len(m.Name)&31][m.Name[0]] = true
			}
			p.learnMacro(m, &p.macroDefs[k])
		}
	}
}

// defineNameEnd returns the offset after the name of the directive
// [start,end) when that name is "define", else -1. It decides as
// directiveNameAt's name compared with "define" would, without scanning
// the name of every other directive: the name is "define" exactly when
// its first six bytes spell it and the byte after them (if any before
// end) is no identifier byte.
func defineNameEnd(src string, start, end int) int {
	i := directiveNameStart(src, start, end)
	if end-i < len("define") || string(src[i:i+len("define")]) != "define" {
		return -1
	}
	if j := i + len("define"); j == end || !isIdentChar(src[j]) {
		return j
	}
	return -1
}

// lenBit is the bit of a name length in nameSet.lens (lengths of 63 and
// more share the top bit).
func lenBit(n int) uint64 { return 1 << min(n, 63) }

// maybeMacro reports whether some macro name starts with c and has n
// bytes (modulo 32): macro names are few and mostly capitalised, so this
// table answers for most identifiers without a lookup.
func (p *parser) maybeMacro(c byte, n int) bool { return p.macroLens[n&31][c] }

// macro returns the macro #defined as name in this file, or nil.
func (p *parser) macro(name string) *Macro {
	if d := p.macroDefOf(name); d != nil {
		return d.m
	}
	return nil
}

// macroDef is what the file #defines a macro name as: its last #define,
// and what learnMacro learned from the name's #defines, kept with it so
// that one lookup (macroDefOf) answers every question about the name.
// There is no #undef: a later #define replaces m and leaves the values it
// does not set. collectMacros fills these before the parse.
type macroDef struct {
	m    *Macro
	spec []string // the specifiers an object-like macro expands to; nil when it is not one
	attr int      // the attribute kind the macro expands to (attrLaunch ...); attrNone when none
}

// attrOf returns the attribute kind name expands to; attrNone when name is
// no macro of this file or expands to no attribute.
func (p *parser) attrOf(name string) int {
	if d := p.macroDefOf(name); d != nil {
		return d.attr
	}
	return attrNone
}

// specOf returns the specifiers name expands to; nil when name is no macro
// of this file or expands to anything else.
func (p *parser) specOf(name string) []string {
	if d := p.macroDefOf(name); d != nil {
		return d.spec
	}
	return nil
}

// isDeclAttr reports whether a macro of attribute kind a stands where a
// declaration's attributes go (attrStmt macros start statements).
func isDeclAttr(a int) bool { return a != attrNone && a != attrStmt }

// macroDefOf returns the macroDef of name, or nil when name is not
// #defined in this file (macro(name) == nil).
func (p *parser) macroDefOf(name string) *macroDef {
	if name == "" || !p.maybeMacro(name[0], len(name)) {
		return nil
	}
	if k := p.macroIdx.find(name); k >= 0 {
		return &p.macroDefs[k]
	}
	return nil
}

// defineText parses the text after `#define` of a #define directive t,
// raw, into m, a zero Macro; false (m unchanged) when the text starts with
// no name. The name, parameters and body view the source when the
// directive has no continuation lines (the File keeps the source; see
// ParseFile): no allocation for the ~1,000 directives of a 2 MB file
// (their Macros come from collectMacros' slab).
func defineText(raw string, t Token, m *Macro) bool {
	text := joinContinuations(raw)
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	j := i
	for j < len(text) && isIdentChar(text[j]) {
		j++
	}
	if j == i {
		return false
	}
	m.Span, m.Name = Span{t.Start, t.End}, text[i:j]
	if j < len(text) && text[j] == '(' {
		m.IsFunc = true
		close := strings.IndexByte(text[j:], ')')
		if close < 0 {
			close = len(text) - j - 1
		}
		// strings.Split(list, ",") without the slice of pieces; Params
		// stays nil when no piece is non-empty.
		list := text[j+1 : j+close]
		for {
			prm, more := list, false
			if c := strings.IndexByte(list, ','); c >= 0 {
				prm, list, more = list[:c], list[c+1:], true
			}
			if prm = strings.TrimSpace(prm); prm != "" {
				if m.Params == nil {
					m.Params = make([]string, 0, strings.Count(list, ",")+2)
				}
				m.Params = append(m.Params, prm)
			}
			if !more {
				break
			}
		}
		j += close + 1
	}
	m.Body = strings.TrimSpace(text[min(j, len(text)):])
	return true
}

// joinContinuations returns s without its backslash-newlines.
func joinContinuations(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\\\r\n", ""), "\\\n", "")
}

// learnMacro classifies an object-like macro body: all specifiers (or empty,
// like `#define API`) makes the name a specifier; a type makes it a type.
// d is m.Name's macroDef, which gets the same values as the maps.
func (p *parser) learnMacro(m *Macro, d *macroDef) {
	// defineText trimmed m.Body: only a body that loses a comment (and
	// so gets shorter) can need trimming again.
	body := m.Body
	if b := stripComments(body); len(b) != len(body) {
		body = strings.TrimSpace(b)
	}
	if p.learnAttrMacro(m, body, d) || m.IsFunc {
		return
	}
	var specs []string
	allSpecs, allType, first := true, false, true
	// strings.FieldsSeq splits as strings.Fields does, without the slice.
	for w := range strings.FieldsSeq(body) {
		if first {
			allType, first = true, false // allType starts true when there are words
		}
		switch {
		case specifierWords[w]:
			specs = append(specs, w)
			allType = false
		case w == `"C"` || w == `"C++"`:
			allType = false // `#define KERNEL extern "C" __global__`
		case builtinTypeWords[w] || w == "const" || w == "volatile" || w == "*":
			allSpecs = false
		case w == "__launch_bounds__" || strings.HasPrefix(w, "__launch_bounds__(") || strings.HasPrefix(w, "__attribute__"):
			allType = false
		default:
			allSpecs, allType = false, false
		}
	}
	if allSpecs {
		d.spec = append([]string{}, specs...) // never nil: nil means none
	} else if allType {
		p.types.add(m.Name)
	}
}

// learnAttrMacro classifies macros that stand for attributes, restrict,
// pragmas or statement prefixes; true when m was one of them.
func (p *parser) learnAttrMacro(m *Macro, body string, d *macroDef) bool {
	// Every prefix and word below starts with one of these bytes: any
	// other body (most: numbers, expressions) is none of them.
	if body == "" || !attrMacroFirst[body[0]] {
		return false
	}
	var a int
	switch {
	case strings.HasPrefix(body, "__launch_bounds__"):
		a = attrLaunch
	case hasAnyPrefix(body, "__attribute__", "__declspec", "alignas", "__align__", "[["):
		a = attrOther
	case m.IsFunc:
		return false
	case body == "__restrict__" || body == "__restrict" || body == "restrict":
		a = attrRestrict
	case hasAnyPrefix(body, "_Pragma", "__pragma", "if ", "if(", "for ", "for(", "while ", "while("):
		a = attrStmt
	default:
		return false
	}
	d.attr = a
	return true
}

// attrMacroFirst holds the first bytes of the prefixes and words
// learnAttrMacro looks for.
var attrMacroFirst = [256]bool{'_': true, 'a': true, '[': true, 'r': true, 'i': true, 'f': true, 'w': true}

// Kinds of attribute-like macros.
const (
	attrNone     = iota
	attrLaunch   // expands to __launch_bounds__(...)
	attrOther    // expands to another attribute
	attrRestrict // expands to __restrict__
	attrStmt     // expands to a pragma or a statement prefix (`if (lane == 0)`)
)

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(s, pre) {
			return true
		}
	}
	return false
}

// stripComments drops /* */ and // comments from a macro body.
func stripComments(s string) string {
	if strings.IndexByte(s, '/') < 0 {
		return s // both comment openers start with '/' (most bodies have none)
	}
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "*/")
		if j < 0 {
			s = s[:i]
			break
		}
		s = s[:i] + " " + s[i+2+j+2:]
	}
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[:i]
	}
	return s
}
