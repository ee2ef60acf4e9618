package parse

import "strings"

// Name knowledge. Without the headers bamgen cannot know every type, so it
// combines what this file declares (a prescan before parsing, so order does
// not matter) with the names CUDA and the C++ library make common.

// specifierWords are declaration specifiers kept in FuncDecl/VarDecl.Specifiers.
var specifierWords = map[string]bool{
	"__global__": true, "__device__": true, "__host__": true, "__forceinline__": true,
	"__noinline__": true, "__inline__": true, "static": true, "inline": true, "extern": true,
	"constexpr": true, "consteval": true, "constinit": true, "thread_local": true,
	"__shared__": true, "__constant__": true, "__managed__": true, "__grid_constant__": true,
	"mutable": true, "register": true, "virtual": true, "explicit": true, "friend": true,
	"__inline": true, "__forceinline": true, "_Thread_local": true, "__thread": true,
}

// builtinTypeWords combine into fundamental types ("unsigned long long").
var builtinTypeWords = map[string]bool{
	"void": true, "bool": true, "char": true, "char8_t": true, "char16_t": true, "char32_t": true,
	"wchar_t": true, "short": true, "int": true, "long": true, "signed": true, "unsigned": true,
	"float": true, "double": true, "__int128": true, "_Bool": true, "__int64": true,
	"__signed__": true, "_Complex": true,
}

// wellKnownTypes are library and CUDA type names that appear without a
// declaration in the file.
var wellKnownTypes = map[string]bool{
	"dim3": true, "half": true, "__half": true, "__half2": true, "__nv_bfloat16": true, "__nv_bfloat162": true,
	"cudaError": true, "cudaStream_t": true, "cudaEvent_t": true, "cudaDeviceProp": true,
	"cudaError_t": true, "cudaGraph_t": true, "cudaGraphExec_t": true, "cudaMemcpyKind": true,
	"cudaPointerAttributes": true, "cudaChannelFormatDesc": true, "cudaTextureObject_t": true,
	"FILE": true, "string": true, "thread_block": true, "grid_group": true, "thread_group": true,
	"coalesced_group": true, "char1": true, "uchar1": true,
}

// cudaVectorTypes builds "float2", "uint4", ... lazily into wellKnownTypes.
func init() {
	for _, base := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "ulonglong", "float", "double"} {
		for n := '1'; n <= '4'; n++ {
			wellKnownTypes[base+string(n)] = true
		}
	}
}

// keywords cannot name a type or a variable.
var keywords = map[string]bool{
	"if": true, "else": true, "for": true, "while": true, "do": true, "switch": true, "case": true,
	"default": true, "break": true, "continue": true, "goto": true, "return": true, "try": true,
	"catch": true, "throw": true, "asm": true, "__asm__": true, "__asm": true, "using": true,
	"typedef": true, "namespace": true, "template": true, "static_assert": true, "this": true,
	"nullptr": true, "true": true, "false": true, "sizeof": true, "alignof": true, "new": true,
	"delete": true, "static_cast": true, "dynamic_cast": true, "const_cast": true,
	"reinterpret_cast": true, "typeid": true, "noexcept": true, "operator": true, "public": true,
	"private": true, "protected": true, "co_await": true, "co_return": true, "co_yield": true,
	"requires": true, "concept": true, "__alignof__": true, "_Alignof": true, "enum": true,
	"struct": true, "class": true, "union": true, "typename": true, "const": true, "volatile": true,
	"decltype": true, "auto": true, "__restrict__": true, "__restrict": true, "restrict": true,
	"__attribute__": true, "__declspec": true, "alignas": true, "__align__": true,
	"__launch_bounds__": true, "export": true, "__typeof__": true, "typeof": true,
	"__builtin_align__": true,
}

// Word classes, computed once per identifier token (p.cls) so that the hot
// paths test a byte instead of looking words up in several maps.
const (
	clsSpec     = 1 << iota // specifierWords
	clsBuiltin              // builtinTypeWords
	clsKeyword              // keywords
	clsMacro                // a macro #defined in this file (set by notInType only; see isMacroTok)
	clsOpWord               // offsetof, __builtin_offsetof, _Generic: operator-like names that are no keywords
	clsExprWord             // clsOpWord and __func__, __FUNCTION__, __PRETTY_FUNCTION__ (see parseIdentExpr)
)

// wordEntry is what the lexer records in the view for a reserved word:
// its class bits and its token id (tokid.go; kwNone if it has none).
type wordEntry struct{ cls, kw uint8 }

// reservedWords maps every word that has a class or a token id to them.
// init builds it from the word tables above and tokIDText.
var reservedWords = map[string]wordEntry{}

// reservedFirst[c] (reservedLast[c]) has bit n set when a reserved word
// of n bytes starts (ends) with byte c: most identifiers are no reserved
// word, and these reject most of them before the map lookup.
var reservedFirst, reservedLast [256]uint32

// addWord adds class bits c and, if not kwNone, token id kw to word w.
func addWord(w string, c, kw uint8) {
	if len(w) >= 32 {
		panic("parse: reserved word too long for reservedFirst: " + w)
	}
	reservedFirst[w[0]] |= 1 << len(w)
	reservedLast[w[len(w)-1]] |= 1 << len(w)
	e := reservedWords[w]
	e.cls |= c
	if kw != kwNone {
		e.kw = kw
	}
	reservedWords[w] = e
}

// wordClassOf returns the class bits of identifier w (0 for ordinary names).
func wordClassOf(w string) uint8 {
	cls, _ := wordInfo(w)
	return cls
}

// wordInfo returns the class bits and the token id of identifier w (0, 0
// for ordinary names).
func wordInfo(w string) (cls, kw uint8) {
	if len(w) == 0 || len(w) >= 32 || reservedFirst[w[0]]&reservedLast[w[len(w)-1]]&(1<<len(w)) == 0 {
		return 0, 0
	}
	e := reservedWords[w]
	return e.cls, e.kw
}

func init() {
	for w := range specifierWords {
		addWord(w, clsSpec, kwNone)
	}
	for w := range builtinTypeWords {
		addWord(w, clsBuiltin, kwNone)
	}
	for w := range keywords {
		addWord(w, clsKeyword, kwNone)
	}
	for _, w := range []string{"offsetof", "__builtin_offsetof", "_Generic"} {
		addWord(w, clsOpWord|clsExprWord, kwNone)
	}
	for _, w := range []string{"__func__", "__FUNCTION__", "__PRETTY_FUNCTION__"} {
		addWord(w, clsExprWord, kwNone)
	}
	for id, w := range tokIDText {
		if w != "" && (w[0] == '_' || w[0] >= 'a' && w[0] <= 'z') {
			addWord(w, 0, uint8(id))
		}
	}
	registerStmtKeywords()
}

// wellKnownTemplatePrefixes mark qualified names whose '<' opens template
// arguments: these libraries are template libraries.
var wellKnownTemplatePrefixes = []string{"std::", "thrust::", "cub::", "cuda::", "cooperative_groups::", "cg::", "bam::", "::std::", "at::", "c10::", "torch::"}

// wellKnownTemplates are unqualified names commonly used after `using namespace std`.
var wellKnownTemplates = map[string]bool{
	"vector": true, "array": true, "pair": true, "tuple": true, "map": true, "unordered_map": true,
	"set": true, "unique_ptr": true, "shared_ptr": true, "numeric_limits": true, "function": true,
	"tiled_partition": true, "thread_block_tile": true, "min": false, "max": false,
	"make_pair": true, "make_tuple": true, "get": true, "move": false,
}

// isTypeName reports whether a (possibly qualified) name names a type as far
// as this file and common knowledge tell.
func (p *parser) isTypeName(name string) bool {
	if p.types.has(name) || knownTypeNames.has(name) || strings.HasSuffix(name, "_t") {
		return true
	}
	// Most names are unqualified: IndexByte (vectorised) rules them out
	// for a fraction of what LastIndex costs.
	if strings.IndexByte(name, ':') < 0 {
		return false
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		last := name[i+2:]
		return p.types.has(last) || strings.HasSuffix(last, "_t") || (strings.HasPrefix(name, "std::") && stdTypes[last])
	}
	return false
}

// knownTypeNames is wellKnownTypes and builtinTypeWords in one set (one
// lookup instead of two per isTypeName).
var knownTypeNames = newNameSet()

// wellKnownTemplateSet is wellKnownTemplates with a length filter.
var wellKnownTemplateSet = newNameSet()

func init() {
	m := map[string]bool{}
	for w, v := range wellKnownTypes {
		m[w] = v
	}
	for w, v := range builtinTypeWords {
		m[w] = m[w] || v
	}
	for w, v := range m {
		knownTypeNames.set(w, v)
	}
	for w, v := range wellKnownTemplates {
		wellKnownTemplateSet.set(w, v)
	}
}

// nameSet is a set of names with a filter on the lengths of its names per
// first byte (as macroLens): most names that are not in it are rejected
// with two loads, without hashing. The names declared as types in a file
// are few, and isTypeName is asked for most identifiers in declarations.
// The names are in a strIndex (see infra_strtab.go), not a Go map.
type nameSet struct {
	m    []bool   // the value of each name of idx.keys; len(m) is the set's size (sideState)
	idx  strIndex // the names, in the order added
	lens [256]uint64
}

func newNameSet() *nameSet { return &nameSet{} }

// add puts w in the set.
func (s *nameSet) add(w string) { s.set(w, true) }

// set records w with value v (has reports v).
func (s *nameSet) set(w string, v bool) {
	if k := s.idx.find(w); k >= 0 {
		s.m[k] = v
	} else {
		s.idx.add(w)
		s.m = append(s.m, v)
	}
	if w != "" {
		s.lens[w[0]] |= lenBit(len(w))
	}
}

// has reports the value recorded for w, false if none.
func (s *nameSet) has(w string) bool {
	if w != "" && s.lens[w[0]]&lenBit(len(w)) == 0 {
		return false
	}
	return s.value(w)
}

// value is has without the filter.
func (s *nameSet) value(w string) bool {
	if k := s.idx.find(w); k >= 0 {
		return s.m[k]
	}
	return false
}

var stdTypes = map[string]bool{"string": true, "vector": true, "size_t": true, "ptrdiff_t": true, "nullptr_t": true}

// isTemplateName reports whether '<' after name surely opens template arguments.
func (p *parser) isTemplateName(name string) bool {
	if p.templates.has(name) || wellKnownTemplateSet.has(name) {
		return true
	}
	// Every prefix below ends in "::": an unqualified name (most) matches
	// none of them.
	if strings.IndexByte(name, ':') < 0 {
		return false
	}
	for _, pre := range wellKnownTemplatePrefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		return p.templates.has(name[i+2:])
	}
	return false
}

// isAllCaps reports whether w looks like a macro name (FOO_BAR, DEVICE2).
func isAllCaps(w string) bool {
	upper := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c == '_' || (c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return upper && len(w) >= 2
}

// ---------------------------------------------------------------------------
// Prescan

// prescan walks the tokens once and records the names the file declares as
// types and templates, so uses before the declaration parse the same way.
// The lexer lists the tokens it has to look at (prescanWord), so it does
// not walk the whole view.
func (p *parser) prescan() {
	for _, k := range p.prescans {
		i := int(k)
		switch p.toks[i].kw {
		case kwStruct, kwClass, kwUnion, kwEnum, kwTypename:
			p.prescanTag(i)
		case kwUsing:
			if p.toks[i+1].Kind == Identifier && p.textByte(i+2) == '=' {
				p.types.add(p.wordIdx(i + 1))
			}
		case kwTypedef:
			p.prescanTypedef(i)
		case kwTemplate:
			p.prescanTemplate(i)
		}
	}
}

// prescanWord marks the token ids of the words prescan dispatches on.
var prescanWord = [256]bool{kwStruct: true, kwClass: true, kwUnion: true, kwEnum: true, kwTypename: true,
	kwUsing: true, kwTypedef: true, kwTemplate: true}

// wordIdx returns the identifier text of toks[i], or "".
func (p *parser) wordIdx(i int) string {
	if i >= len(p.toks) || p.toks[i].Kind != Identifier {
		return ""
	}
	t := &p.toks[i]
	return p.src[t.Start:t.End] // see wordAt
}

// keywordIdx reports whether p.toks[i] is one of keywords: the class the
// lexer gave it, not a map lookup.
func (p *parser) keywordIdx(i int) bool {
	return i < len(p.toks) && p.toks[i].Kind == Identifier && p.toks[i].cls&clsKeyword != 0
}

func (p *parser) textIs(i int, s string) bool {
	return i < len(p.toks) && string(p.textAt(i)) == s
}

// prescanTag records `struct X`, `enum class X`, `typename T`. Words are
// told by token id (tokid.go), as the spellings they stand for.
func (p *parser) prescanTag(i int) {
	j := i + 1
	if p.textIsK(j, kwClass) || p.textIsK(j, kwStruct) {
		j++ // enum class X
	}
	if p.textIsK(j, tkEllipsis) {
		j++ // typename... Ts
	}
	for p.textIsK(j, kwAlignUU) || p.textIsK(j, kwAlignas) || p.textIsK(j, kwAttributeUU) {
		j = p.skipParensIdx(j + 1)
	}
	if w := p.wordIdx(j); w != "" && !p.keywordIdx(j) && !p.textIsK(j+1, tkScope) {
		p.types.add(w)
	}
}

// textByte returns the byte of p.toks[i]'s text when that text is one
// byte, else 0: textIs(i, s) for a one-byte s is textByte(i) == s[0]
// (the raw source byte, so a digraph is none).
func (p *parser) textByte(i int) byte {
	if i < len(p.toks) {
		if t := &p.toks[i]; t.End-t.Start == 1 {
			return p.src[t.Start]
		}
	}
	return 0
}

// skipParensIdx returns the index after the balanced group starting at i
// (or i when toks[i] is not '(').
func (p *parser) skipParensIdx(i int) int {
	if p.textByte(i) != '(' {
		return i
	}
	depth := 0
	for ; i < len(p.toks)-1; i++ {
		switch p.textByte(i) {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// prescanTypedef records the name a typedef declares: the identifier in
// `(*name)` for function pointers, else the last identifier before ';'.
func (p *parser) prescanTypedef(i int) {
	last := ""
	depth := 0
	for j := i + 1; j < len(p.toks) && j < i+512; j++ {
		switch p.textByte(j) {
		case ';':
			if depth <= 0 {
				if last != "" {
					p.types.add(last)
				}
				return
			}
		case '{', '(', '[':
			if p.textByte(j) == '(' && p.textByte(j+1) == '*' && p.wordIdx(j+2) != "" && depth == 0 {
				p.types.add(p.wordIdx(j + 2))
				return
			}
			depth++
		case '}', ')', ']':
			depth--
		default:
			if p.toks[j].Kind == Identifier && depth == 0 && !p.keywordIdx(j) {
				last = p.wordIdx(j)
			}
		}
	}
}

// prescanTemplate records the name a `template <...>` declares: the class
// after it, or the function name before the first '(' at depth 0.
func (p *parser) prescanTemplate(i int) {
	j := i + 1
	for p.textByte(j) == '<' {
		j = p.skipAnglesIdx(j)
		if p.textIsK(j, kwTemplate) {
			j++
		}
	}
	last := ""
	for k := j; k < len(p.toks) && k < j+64; k++ {
		if t := &p.toks[k]; t.Kind == Identifier {
			// Words by token id (tokid.go), as the spellings they
			// stand for; `using` is a keyword, so without its '=' it
			// is no name either.
			switch t.kw {
			case kwStruct, kwClass, kwUnion:
				for p.textIsK(k+1, kwAlignUU) || p.textIsK(k+1, kwAlignas) {
					k = p.skipParensIdx(k+2) - 1
				}
				if n := p.wordIdx(k + 1); n != "" {
					p.templates.add(n)
					p.types.add(n)
				}
				return
			case kwUsing:
				if p.textByte(k+2) == '=' {
					p.templates.add(p.wordIdx(k + 1))
					p.types.add(p.wordIdx(k + 1))
					return
				}
			}
			if t.cls&clsKeyword == 0 {
				last = p.wordIdx(k)
			}
			continue
		}
		switch p.textByte(k) {
		case '(':
			if last != "" {
				p.templates.add(last)
			}
			return
		case '<':
			k = p.skipAnglesIdx(k) - 1
		case ';', '{':
			return
		}
	}
}

// skipAnglesIdx returns the index after the '<...>' group at i, counting
// '>>' as two closers.
//
// It tells the tokens by their text as a string switch on it would (the
// raw source bytes within the token's current bounds, so a digraph such
// as "<%" is none of them), by length and bytes: no string compares.
func (p *parser) skipAnglesIdx(i int) int {
	depth := 0
	for ; i < len(p.toks)-1; i++ {
		switch t := &p.toks[i]; t.End - t.Start {
		case 1:
			switch p.src[t.Start] {
			case '<':
				depth++
			case '>':
				depth--
			case '(':
				i = p.skipParensIdx(i) - 1
			case ';', '{', '}':
				return i
			}
		case 2:
			if p.src[t.Start] == '>' && p.src[t.Start+1] == '>' {
				depth -= 2
			}
		}
		if depth <= 0 {
			return i + 1
		}
	}
	return i
}

// strIndex numbers strings in the order they are added.
type strIndex struct {
	keys []string       // the strings, in the order added
	pos  map[string]int // the position of each in keys
}

// find returns the position of s in x.keys, or -1.
func (x *strIndex) find(s string) int {
	if k, ok := x.pos[s]; ok {
		return k
	}
	return -1
}

// add adds s, which must not be in x.keys (find(s) < 0), and returns its
// position.
func (x *strIndex) add(s string) int {
	if x.pos == nil {
		x.pos = make(map[string]int)
	}
	k := len(x.keys)
	x.keys = append(x.keys, s)
	x.pos[s] = k
	return k
}
