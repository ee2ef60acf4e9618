package parse

import "strings"

// Preprocessor handling in the lexer. bamgen does not run the preprocessor:
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
