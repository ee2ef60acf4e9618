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

// Token ids. The grammar tests a few dozen reserved words and multi-byte
// punctuators by spelling, thousands of times per file. The lexer stores
// the id of such a token in ptok.kw, so the test is one byte comparison
// instead of a length check and a string comparison, and a dispatch over
// several words is a switch on a byte. 0 means "none of these": every
// other token, including split '>' tokens that spell nothing listed.
const (
	kwNone           uint8 = iota
	tkScope                // ::
	tkEllipsis             // ...
	tkArrow                // ->
	tkAndAnd               // &&
	tkOrOr                 // ||
	tkInc                  // ++
	tkDec                  // --
	tkLaunchOpen           // <<<
	tkLaunchClose          // >>>
	kwAlignUU              // __align__
	kwAsmU                 // __asm
	kwAsmUU                // __asm__
	kwAttributeUU          // __attribute__
	kwBuiltinAlignUU       // __builtin_align__
	kwDeclspecU            // __declspec
	kwLaunchBoundsUU       // __launch_bounds__
	kwRestrictU            // __restrict
	kwRestrictUU           // __restrict__
	kwTypeofUU             // __typeof__
	kwVolatileUU           // __volatile__
	kwAlignas              // alignas
	kwAsm                  // asm
	kwAuto                 // auto
	kwBreak                // break
	kwCase                 // case
	kwCatch                // catch
	kwClass                // class
	kwCoReturn             // co_return
	kwConst                // const
	kwConsteval            // consteval
	kwConstexpr            // constexpr
	kwContinue             // continue
	kwDecltype             // decltype
	kwDefault              // default
	kwDelete               // delete
	kwDo                   // do
	kwElse                 // else
	kwEnum                 // enum
	kwFor                  // for
	kwGoto                 // goto
	kwIf                   // if
	kwInline               // inline
	kwNamespace            // namespace
	kwNew                  // new
	kwOperator             // operator
	kwRequires             // requires
	kwRestrict             // restrict
	kwReturn               // return
	kwStaticAssert         // static_assert
	kwStruct               // struct
	kwSwitch               // switch
	kwTemplate             // template
	kwThrow                // throw
	kwTry                  // try
	kwTypedef              // typedef
	kwTypename             // typename
	kwTypeof               // typeof
	kwUnion                // union
	kwUsing                // using
	kwVoid                 // void
	kwVolatile             // volatile
	kwWhile                // while
	kwExtern               // extern
	kwPublic               // public
	kwPrivate              // private
	kwProtected            // protected
	numTokIDs
)

// tokIDText is the spelling of each id.
var tokIDText = [numTokIDs]string{
	tkScope:          "::",
	tkEllipsis:       "...",
	tkArrow:          "->",
	tkAndAnd:         "&&",
	tkOrOr:           "||",
	tkInc:            "++",
	tkDec:            "--",
	tkLaunchOpen:     "<<<",
	tkLaunchClose:    ">>>",
	kwAlignUU:        "__align__",
	kwAsmU:           "__asm",
	kwAsmUU:          "__asm__",
	kwAttributeUU:    "__attribute__",
	kwBuiltinAlignUU: "__builtin_align__",
	kwDeclspecU:      "__declspec",
	kwLaunchBoundsUU: "__launch_bounds__",
	kwRestrictU:      "__restrict",
	kwRestrictUU:     "__restrict__",
	kwTypeofUU:       "__typeof__",
	kwVolatileUU:     "__volatile__",
	kwAlignas:        "alignas",
	kwAsm:            "asm",
	kwAuto:           "auto",
	kwBreak:          "break",
	kwCase:           "case",
	kwCatch:          "catch",
	kwClass:          "class",
	kwCoReturn:       "co_return",
	kwConst:          "const",
	kwConsteval:      "consteval",
	kwConstexpr:      "constexpr",
	kwContinue:       "continue",
	kwDecltype:       "decltype",
	kwDefault:        "default",
	kwDelete:         "delete",
	kwDo:             "do",
	kwElse:           "else",
	kwEnum:           "enum",
	kwFor:            "for",
	kwGoto:           "goto",
	kwIf:             "if",
	kwInline:         "inline",
	kwNamespace:      "namespace",
	kwNew:            "new",
	kwOperator:       "operator",
	kwRequires:       "requires",
	kwRestrict:       "restrict",
	kwReturn:         "return",
	kwStaticAssert:   "static_assert",
	kwStruct:         "struct",
	kwSwitch:         "switch",
	kwTemplate:       "template",
	kwThrow:          "throw",
	kwTry:            "try",
	kwTypedef:        "typedef",
	kwTypename:       "typename",
	kwTypeof:         "typeof",
	kwUnion:          "union",
	kwUsing:          "using",
	kwVoid:           "void",
	kwVolatile:       "volatile",
	kwWhile:          "while",
	kwExtern:         "extern",
	kwPublic:         "public",
	kwPrivate:        "private",
	kwProtected:      "protected",
}

// punctID returns the id of the punctuator spelled b, or kwNone. It is
// called for multi-byte punctuators only (single bytes are ptok.pb).
func punctID(b string) uint8 {
	switch len(b) {
	case 2:
		switch b {
		case "::":
			return tkScope
		case "->":
			return tkArrow
		case "&&":
			return tkAndAnd
		case "||":
			return tkOrOr
		case "++":
			return tkInc
		case "--":
			return tkDec
		}
	case 3:
		switch b {
		case "...":
			return tkEllipsis
		case "<<<":
			return tkLaunchOpen
		case ">>>":
			return tkLaunchClose
		}
	}
	return kwNone
}
