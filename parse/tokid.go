package parse

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

// isK reports whether the current token has id k.
func (p *parser) isK(k uint8) bool { return p.toks[p.i].kw == k }

// gotK consumes the current token if it has id k.
func (p *parser) gotK(k uint8) bool {
	if p.toks[p.i].kw == k {
		p.next()
		return true
	}
	return false
}

// isAtK reports whether the token k ahead has id id (false before the
// first token; past the end is the EOF token, which has none).
func (p *parser) isAtK(k int, id uint8) bool {
	return p.i+k >= 0 && p.at(k).kw == id
}

// textIsK reports whether p.toks[i] has id id.
func (p *parser) textIsK(i int, id uint8) bool {
	return i < len(p.toks) && p.toks[i].kw == id
}
