package parse

// TokenKind classifies a token. Trivia kinds (whitespace, newlines, comments,
// preprocessor lines, line continuations, inactive #if branches) are kept in
// the token stream so the stream reproduces the source byte for byte; the
// parser skips them.
type TokenKind uint8

const (
	Invalid      TokenKind = iota // a byte that starts no token (reported)
	Whitespace                    // spaces, tabs, form feeds, \r
	Newline                       // "\n" (a "\r\n" pair is one Newline token)
	Continuation                  // backslash-newline outside a directive
	LineComment                   // "// ..." up to (not including) the newline
	BlockComment                  // "/* ... */"
	Directive                     // a whole preprocessor line, continuations included, newline excluded
	Inactive                      // source in a preprocessor branch the parser does not take
	Identifier                    // identifiers and keywords
	Number                        // integer and floating literals with suffixes, digit separators
	Char                          // character literals with prefixes
	String                        // string literals with prefixes, raw strings
	Punct                         // operators and punctuators, digraphs, "<<<" and ">>>"
	EOF                           // zero-length, last token
)

// Token is one lexeme: its kind and byte range in the source.
type Token struct {
	Kind       TokenKind
	Start, End int
}

// IsTrivia reports whether the parser skips tokens of kind k.
// It is a table load because the parser calls it for every token.
func (k TokenKind) IsTrivia() bool { return triviaKinds[k] }

var triviaKinds = [256]bool{
	Whitespace: true, Newline: true, Continuation: true, LineComment: true,
	BlockComment: true, Directive: true, Inactive: true,
}
