package parse

import (
	"strings"
	"unicode/utf8"

	"github.com/bamgen/bamgen/diag"
)

// The lexer is lossless: every byte of the input lands in exactly one token,
// so concatenating the token texts reproduces the input for any bytes,
// including binary junk. Malformed input never stops it; it emits an Invalid
// token (or a literal that runs to the end of its line) and a diagnostic.

// Lex splits src into tokens, trivia included, ending in a zero-length EOF.
func Lex(src []byte) []Token {
	toks, _ := LexDiags(src)
	return toks
}

// LexDiags is Lex that also returns the lexical diagnostics (PARSE001..006).
func LexDiags(src []byte) ([]Token, []diag.Diagnostic) {
	l := lexAll(string(src), nil)
	return l.toks, l.diags
}

// lexAll lexes src. With a non-nil view (ParseFile) it also appends the
// parser's view of each non-trivia token (see ptok) to it.
func lexAll(src string, view []ptok) *lexer {
	l := &lexer{src: src, view: view, parse: view != nil}
	// Real code averages 2.5 to 3 bytes per token, trivia included;
	// denser input grows the slice.
	l.toks = make([]Token, 0, len(src)*2/5+16)
	for l.pos < len(l.src) {
		l.next()
	}
	l.closeConditionals()
	l.emit(EOF, len(src))
	return l
}

type lexer struct {
	src      string
	pos      int
	toks     []Token
	directs  []int32 // indices in toks of the Directive tokens
	parse    bool    // build view (ParseFile)
	view     []ptok  // the parser's view of the non-trivia tokens
	digraphs []int32 // indices in view of digraph punctuators ("<:" ...)
	prescans []int32 // indices in view of the words prescan looks at (prescanWord)
	diags    []diag.Diagnostic
	conds    []condFrame // open #if groups
	spaced   bool        // a spaced launch opener `<< <` was seen and not yet closed (see spacedLaunch)
}

// condFrame is one open #if group; taken says whether one of its branches
// has been taken already, so every later #elif/#else branch is inactive.
type condFrame struct {
	start int
	taken bool
}

// emit appends the token [start, l.pos) of kind k.
func (l *lexer) emit(k TokenKind, start int) {
	l.toks = append(l.toks, Token{Kind: k, Start: start, End: l.pos})
	if l.parse && !k.IsTrivia() {
		l.addView(k, start)
	}
}

// addView appends the parser's view of the token [start, l.pos) of kind k
// (no trivia).
func (l *lexer) addView(k TokenKind, start int) {
	switch {
	case k == Identifier:
		l.addWordView(start, l.pos)
	case k == Punct:
		l.addPunctView(start, l.pos)
	default:
		l.view = append(l.view, ptok{Start: int32(start), End: int32(l.pos), Kind: k})
	}
}

// addWordView appends the view of the identifier [start, end): its word
// class and token id if it is a reserved word.
func (l *lexer) addWordView(start, end int) {
	if n := end - start; n >= 2 && n <= 6 && altTokenFirst[l.src[start]] {
		if op, ok := altTokens[l.src[start:end]]; ok {
			l.addAltTokenView(start, end, op)
			return
		}
	}
	cls, kw := wordInfo(l.src[start:end])
	if prescanWord[kw] {
		l.prescans = append(l.prescans, int32(len(l.view)))
	}
	l.view = append(l.view, ptok{Start: int32(start), End: int32(end), Kind: Identifier, cls: cls, kw: kw})
}

// altTokens are C++'s alternative tokens and the operators they spell.
var altTokens = map[string]string{
	"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^", "compl": "~",
	"not_eq": "!=", "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=",
}

// altTokenFirst marks the first bytes of altTokens' words.
var altTokenFirst = func() (t [256]bool) {
	for w := range altTokens {
		t[w[0]] = true
	}
	return t
}()

// addAltTokenView appends the view of the alternative token [start, end)
// (`and`, `not`, `bitor`, ...) as the punctuator op it spells: a
// one-byte operator gets its byte, a longer one its token id (the
// grammar code that reads the text of a multi-byte operator maps the
// words too: binaryOp, assignOp). The token itself stays an identifier.
func (l *lexer) addAltTokenView(start, end int, op string) {
	pt := ptok{Start: int32(start), End: int32(end), Kind: Punct}
	if len(op) == 1 {
		pt.pb = op[0]
	} else {
		pt.kw = punctID(op)
	}
	l.view = append(l.view, pt)
}

// addPunctView appends the view of the punctuator [start, end): its byte
// if it is one byte long, else its token id.
func (l *lexer) addPunctView(start, end int) {
	pt := ptok{Start: int32(start), End: int32(end), Kind: Punct}
	if end-start == 1 {
		if c := l.src[start]; (c == '<' || c == '>') && l.spacedLaunch(start, c) {
			return
		}
		pt.pb = l.src[start]
	} else {
		pt.kw = punctID(l.src[start:end])
		if end-start == 2 && isDigraph(l.src[start], l.src[start+1]) {
			l.digraphs = append(l.digraphs, int32(len(l.view)))
		}
	}
	l.view = append(l.view, pt)
}

// spacedLaunch joins a launch spelled `k << < g, b >> > (...)` (nvcc
// accepts it) into the view entries of `<<<` and `>>>`: the '<' (or '>')
// at start, separated by blanks only from a preceding `<<` (`>>`), extends
// that entry. `<< <` is no expression otherwise; `>> >` is joined only
// after such an opener (else it closes nested template arguments). The
// tokens in File.Tokens stay as written.
func (l *lexer) spacedLaunch(start int, c byte) bool {
	n := len(l.view)
	if n == 0 || (c == '>') != l.spaced {
		return false
	}
	last := &l.view[n-1]
	if last.End-last.Start != 2 || l.src[last.Start] != c || l.src[last.Start+1] != c {
		return false
	}
	for i := int(last.End); i < start; i++ {
		if l.src[i] != ' ' && l.src[i] != '\t' {
			return false
		}
	}
	last.End = int32(start + 1)
	if c == '<' {
		last.kw = tkLaunchOpen
	} else {
		last.kw = tkLaunchClose
	}
	l.spaced = c == '<'
	return true
}

// isDigraph reports whether cd is one of the digraphs the parser maps to
// a bracket ("<:", ":>", "<%", "%>"; see noteDigraph, which leaves every
// other token as it is).
func isDigraph(c, d byte) bool {
	return c == '<' && (d == ':' || d == '%') || d == '>' && (c == ':' || c == '%')
}

func (l *lexer) errorf(start, end int, code, msg string) {
	l.diags = append(l.diags, diag.Diagnostic{Pos: start, End: end, Severity: diag.Error, Code: code, Message: msg})
}

func (l *lexer) warnf(start, end int, code, msg string) {
	l.diags = append(l.diags, diag.Diagnostic{Pos: start, End: end, Severity: diag.Warning, Code: code, Message: msg})
}

func (l *lexer) peekAt(i int) byte {
	if i < len(l.src) {
		return l.src[i]
	}
	return 0
}

// Byte classes for the lexer's dispatch and identifier loops.
const (
	bOther = iota
	bIdent // letters, '_', '$'
	bDigit // '0'-'9'
	bSpace // ' ', '\t', '\f', '\v' ('\r' is handled apart: "\r\n" is a newline)
	bNonASCII
	bNewline // '\n'
	bPunct   // bytes that start a punctuator and nothing else (not '.', '/', '%', '#')
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t[c] = bIdent
		case c >= '0' && c <= '9':
			t[c] = bDigit
		case c == ' ' || c == '\t' || c == '\f' || c == '\v':
			t[c] = bSpace
		case c >= utf8.RuneSelf:
			t[c] = bNonASCII
		case c == '\n':
			t[c] = bNewline
		case strings.IndexByte("()[]{};,?~*^=!+-&|<>:", byte(c)) >= 0:
			t[c] = bPunct
		}
	}
	return t
}()

// next lexes one token at l.pos.
func (l *lexer) next() {
	start := l.pos
	c := l.src[start]
	switch byteClass[c] {
	case bIdent:
		l.word(start)
	case bSpace:
		l.whitespace()
	case bDigit:
		l.number()
	case bNewline:
		l.pos++
		l.toks = append(l.toks, Token{Kind: Newline, Start: start, End: l.pos})
	case bPunct:
		end := start + punctLen(l.src, start)
		l.pos = end
		l.toks = append(l.toks, Token{Kind: Punct, Start: start, End: end})
		if l.parse {
			l.addPunctView(start, end)
		}
	default:
		if !l.trivia(c, start) {
			l.other(c, start)
		}
	}
}

// trivia lexes newlines, '\r', continuations, comments and directives;
// false when c starts none of them.
func (l *lexer) trivia(c byte, start int) bool {
	switch {
	case c == '\n':
		l.pos++
		l.emit(Newline, start)
	case c == '\r' && l.peekAt(start+1) == '\n':
		l.pos += 2
		l.emit(Newline, start)
	case c == '\r':
		l.whitespace()
	case c == '\\' && l.continuationLen(start) > 0:
		l.pos += l.continuationLen(start)
		l.emit(Continuation, start)
	case c == '/' && l.peekAt(start+1) == '/':
		l.lineComment()
	case c == '/' && l.peekAt(start+1) == '*':
		l.blockComment()
	case (c == '#' || c == '%' && l.peekAt(start+1) == ':' && l.peekAt(start+2) != '%') && l.atLineStart():
		l.directive() // "%:" is the digraph for '#'
	default:
		return false
	}
	return true
}

// atLineStart reports whether only trivia other than directives precede
// l.pos on its line, so that a '#' there starts a directive. It is asked
// for '#' and "%:" only, so it looks back over the tokens instead of every
// token keeping a flag up to date.
func (l *lexer) atLineStart() bool {
	for i := len(l.toks) - 1; i >= 0; i-- {
		switch l.toks[i].Kind {
		case Newline:
			return true
		case Whitespace, Continuation, LineComment, BlockComment, Inactive:
		default:
			return false
		}
	}
	return true
}

// other lexes literals, punctuators and invalid bytes.
func (l *lexer) other(c byte, start int) {
	switch {
	case c == '.' && isDigit(l.peekAt(start+1)):
		l.number()
	case c == '"':
		l.quoted('"', start)
	case c == '\'':
		l.quoted('\'', start)
	case c >= utf8.RuneSelf:
		l.nonASCII()
	default:
		if n := punctLen(l.src, start); n > 0 {
			l.pos += n
			l.emit(Punct, start)
			return
		}
		l.invalid()
	}
}

// continuationLen returns the length of a backslash-newline at i (the
// backslash, optional "\r", and "\n"), or 0.
func (l *lexer) continuationLen(i int) int {
	if l.peekAt(i) != '\\' {
		return 0
	}
	if l.peekAt(i+1) == '\n' {
		return 2
	}
	if l.peekAt(i+1) == '\r' && l.peekAt(i+2) == '\n' {
		return 3
	}
	return 0
}

func (l *lexer) whitespace() {
	start := l.pos
	src, i := l.src, l.pos
	for i < len(src) {
		c := src[i]
		if byteClass[c] == bSpace {
			i++
			continue
		}
		if c != '\r' || i+1 < len(src) && src[i+1] == '\n' {
			break // "\r\n" is a Newline token
		}
		i++
	}
	l.pos = i
	l.toks = append(l.toks, Token{Kind: Whitespace, Start: start, End: i})
}

// lineComment runs to the end of the line; a backslash-newline continues the
// comment onto the next line, as in the C preprocessor.
func (l *lexer) lineComment() {
	start := l.pos
	l.pos = l.lineEnd(l.pos)
	l.emit(LineComment, start)
}

// lineEnd returns the offset of the newline ending the logical line that
// contains i (continuations joined), or len(src).
func (l *lexer) lineEnd(i int) int {
	// Lines are found with IndexByte (vectorised); only the bytes just
	// before each '\n' decide whether it is a continuation ("\\\n",
	// "\\\r\n") or the line's end ("\n", "\r\n"). The first '\n' at or
	// after i ends the first continuation, so no byte-by-byte scan is needed.
	src := l.src
	for i < len(src) {
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			return len(src)
		}
		e := i + j
		if j == 0 {
			return e
		}
		// The byte before the '\n' decides; most lines end in neither
		// '\\' nor '\r'.
		switch src[e-1] {
		case '\\':
			i = e + 1 // a continuation: the line goes on
		case '\r':
			if j >= 2 && src[e-2] == '\\' {
				i = e + 1 // "\\\r\n": a continuation too
				continue
			}
			return e - 1
		default:
			return e
		}
	}
	return i
}

func (l *lexer) blockComment() {
	start := l.pos
	end := indexFrom(l.src, start+2, "*/")
	if end < 0 {
		l.pos = len(l.src)
		l.emit(BlockComment, start)
		l.errorf(start, l.pos, "PARSE001", "unterminated /* comment")
		return
	}
	l.pos = end + 2
	l.emit(BlockComment, start)
}

// indexFrom returns the index of the first sep at or after i, or -1.
func indexFrom(src string, i int, sep string) int {
	if i >= len(src) {
		return -1
	}
	if j := strings.Index(src[i:], sep); j >= 0 {
		return i + j
	}
	return -1
}

// word lexes an identifier at start, or a literal with an encoding prefix
// (u8"...", L'x', R"(...)").
func (l *lexer) word(start int) {
	end := l.identEnd(start)
	l.pos = end
	if end < len(l.src) && (l.src[end] == '"' || l.src[end] == '\'') {
		switch l.src[start:end] {
		case "u8", "u", "U", "L":
			l.quoted(l.src[end], start)
			return
		case "R", "u8R", "uR", "UR", "LR":
			if l.src[end] == '"' {
				l.rawString(start)
				return
			}
		}
	}
	l.toks = append(l.toks, Token{Kind: Identifier, Start: start, End: end})
	if l.parse {
		l.addWordView(start, end)
	}
}

// identEnd returns the end of the identifier starting at i. Valid UTF-8
// sequences are identifier characters (C++ allows most of them); invalid
// bytes end the identifier and are reported by nonASCII.
func (l *lexer) identEnd(i int) int {
	src := l.src
	for {
		for i < len(src) && identCharTab[src[i]] {
			i++
		}
		if i == len(src) || src[i] < utf8.RuneSelf {
			return i
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError {
			return i
		}
		i += n
	}
}

// number lexes a preprocessing number: it covers every C++ literal form
// (hex, binary, octal, floats, hex floats with p exponents, suffixes, user
// literal suffixes and ' digit separators) without validating it.
func (l *lexer) number() {
	start := l.pos
	i := start
	for i < len(l.src) {
		c := l.src[i]
		switch {
		case (c == 'e' || c == 'E' || c == 'p' || c == 'P') && (l.peekAt(i+1) == '+' || l.peekAt(i+1) == '-'):
			i += 2
		case isIdentChar(c) || c == '.':
			i++
		case c == '\'' && isIdentChar(l.peekAt(i+1)):
			i += 2
		default:
			l.pos = i
			l.emit(Number, start)
			return
		}
	}
	l.pos = i
	l.emit(Number, start)
}

// quoted lexes a string or character literal whose opening quote is at
// l.pos (start includes any prefix). An unterminated literal ends at the end
// of its line so the next line lexes normally.
func (l *lexer) quoted(q byte, start int) {
	kind := String
	if q == '\'' {
		kind = Char
	}
	i := l.pos + 1
	src := l.src
	for i < len(src) {
		// Most bytes are none that the tests below look at: skip them
		// with one table load each.
		for i < len(src) && quoteStop[src[i]] == 0 {
			i++
		}
		if i == len(src) {
			break
		}
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			if n := l.continuationLen(i); n > 0 {
				i += n
				continue
			}
			i += 2
			continue
		}
		if c == '\n' || (c == '\r' && l.peekAt(i+1) == '\n') {
			break
		}
		i++
		if c == q {
			l.pos = l.identEnd(i) // user-defined literal suffix
			l.emit(kind, start)
			return
		}
	}
	l.pos = i
	l.emit(kind, start)
	l.errorf(start, i, "PARSE002", "unterminated "+kind.literalWord()+" literal")
}

// quoteStop marks the bytes quoted tests: a quote, a backslash, the
// bytes of a newline.
var quoteStop = [256]uint8{'"': 1, '\'': 1, '\\': 1, '\n': 1, '\r': 1}

func (k TokenKind) literalWord() string {
	if k == Char {
		return "character"
	}
	return "string"
}

// rawString lexes R"delim( ... )delim" with any prefix; start is the prefix.
func (l *lexer) rawString(start int) {
	open := l.pos + 1 // after the quote
	i := open
	for i < len(l.src) && i-open <= 16 && l.src[i] != '(' && isRawDelimChar(l.src[i]) {
		i++
	}
	if i >= len(l.src) || l.src[i] != '(' || i-open > 16 {
		// Not a raw string after all: lex the prefix as an identifier and
		// let the quote start an ordinary (probably broken) string.
		l.emit(Identifier, start)
		return
	}
	delim := l.src[open:i]
	for j := i + 1; j < len(l.src); j++ {
		if l.src[j] == ')' && hasPrefixAt(l.src, j+1, delim) && l.peekAt(j+1+len(delim)) == '"' {
			l.pos = l.identEnd(j + 2 + len(delim))
			l.emit(String, start)
			return
		}
	}
	l.pos = len(l.src)
	l.emit(String, start)
	l.errorf(start, l.pos, "PARSE002", "unterminated raw string literal")
}

func isRawDelimChar(c byte) bool {
	return c > ' ' && c < 0x7f && c != '(' && c != ')' && c != '\\' && c != '"'
}

func hasPrefixAt(src string, i int, p string) bool {
	return i <= len(src) && strings.HasPrefix(src[i:], p)
}

// nonASCII handles a byte >= 0x80 outside any literal: a valid UTF-8 letter
// starts an identifier; anything else is a run of Invalid bytes.
func (l *lexer) nonASCII() {
	start := l.pos
	if r, _ := utf8.DecodeRuneInString(l.src[start:]); r != utf8.RuneError {
		l.pos = l.identEnd(start)
		l.emit(Identifier, start)
		return
	}
	for l.pos < len(l.src) && l.src[l.pos] >= utf8.RuneSelf {
		if r, _ := utf8.DecodeRuneInString(l.src[l.pos:]); r != utf8.RuneError {
			break
		}
		l.pos++
	}
	l.emit(Invalid, start)
	l.errorf(start, l.pos, "PARSE005", "invalid UTF-8 in source")
}

// invalid consumes a run of bytes that start no token (`@`, '`', NUL, other
// control bytes), one token per run to keep binary junk cheap.
func (l *lexer) invalid() {
	start := l.pos
	for l.pos < len(l.src) && isJunk(l.src, l.pos) {
		l.pos++
	}
	if l.pos == start {
		l.pos++
	}
	l.emit(Invalid, start)
	l.errorf(start, l.pos, "PARSE004", "invalid character in source")
}

func isJunk(src string, i int) bool {
	c := src[i]
	if c >= utf8.RuneSelf || c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\\' {
		return false
	}
	return !isIdentChar(c) && c != '"' && c != '\'' && c != '#' && punctLen(src, i) == 0
}

func isIdentStart(c byte) bool { return byteClass[c] == bIdent }

// isIdentChar is one table load: it runs for every identifier byte.
func isIdentChar(c byte) bool { return identCharTab[c] }

var identCharTab = func() (t [256]bool) {
	for c := range t {
		t[c] = byteClass[c] == bIdent || byteClass[c] == bDigit
	}
	return t
}()

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// punctLen returns the length of the longest punctuator at src[i:], or 0.
func punctLen(src string, i int) int {
	at := func(k int) byte {
		if i+k < len(src) {
			return src[i+k]
		}
		return 0
	}
	c, d, e := src[i], at(1), at(2)
	switch c {
	case '<':
		return ltLen(d, e, at(3))
	case '>':
		if d == '>' && (e == '>' || e == '=') {
			return 3 // ">>>" closes a launch config; ">>=".
		}
		if d == '>' || d == '=' {
			return 2
		}
		return 1
	case '-':
		if d == '>' && e == '*' {
			return 3
		}
		if d == '>' || d == '-' || d == '=' {
			return 2
		}
		return 1
	case '.':
		if d == '.' && e == '.' {
			return 3
		}
		if d == '*' {
			return 2
		}
		return 1
	case '%':
		if d == ':' && e == '%' && at(3) == ':' {
			return 4 // "%:%:" digraph for "##"
		}
		if d == '=' || d == '>' || d == ':' {
			return 2
		}
		return 1
	case ':':
		if d == ':' || d == '>' {
			return 2
		}
		return 1
	case '+', '&', '|':
		if d == c || d == '=' {
			return 2
		}
		return 1
	case '*', '/', '^', '=', '!':
		if d == '=' {
			return 2
		}
		return 1
	case '#':
		if d == '#' {
			return 2
		}
		return 1
	case '(', ')', '[', ']', '{', '}', ';', ',', '?', '~':
		return 1
	}
	return 0
}

// ltLen handles every punctuator starting with '<'. "<::" is '<' then "::"
// unless followed by ':' or '>' (C++11 [lex.pptoken]), so `vector<::T>`
// keeps working while "<:" is still the '[' digraph elsewhere.
func ltLen(d, e, f byte) int {
	switch {
	case d == '<' && e == '<':
		return 3 // "<<<" opens a launch config
	case d == '<' && e == '=':
		return 3
	case d == '=' && e == '>':
		return 3
	case d == '<' || d == '=' || d == '%':
		return 2
	case d == ':':
		if e == ':' && f != ':' && f != '>' {
			return 1
		}
		return 2
	}
	return 1
}
