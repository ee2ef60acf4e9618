package parse

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/bamgen/bamgen/diag"
)

// The parser is a recursive descent over the non-trivia tokens. It never
// fails a file: a construct it does not understand becomes an Opaque node
// with an exact byte range (resynchronised at the next ';' or the matching
// '}' at the same nesting) plus a diagnostic, and parsing goes on.
//
// C++ is ambiguous without a symbol table of the whole program, so a few
// decisions are heuristics over names seen in this file (see names.go):
// whether `a<b` opens template arguments, whether `(T)x` is a cast, whether
// a statement is a declaration.

// maxDepth caps syntactic nesting (expressions, statements, types) so that
// hostile input cannot exhaust the stack; deeper input becomes Opaque.
const maxDepth = 500

// ParseFile parses one CUDA C++ translation unit. It always returns a File;
// problems are in File.Diags. The File keeps src, so src must not be
// modified afterwards; the parser reads a string copy of it, which the
// names in the tree share.
func ParseFile(name string, src []byte) *File { return parseFile(name, src, false) }

// parseFile is ParseFile; general makes the parser take no fast path
// (TestFastPathsAgree compares the two).
func parseFile(name string, src []byte, general bool) *File {
	text := string(src)
	l := lexAll(text, spareView(len(src)))
	f := &File{Src: diag.NewSource(name, src), Tokens: l.toks, Diags: l.diags}
	if len(src) > math.MaxInt32 {
		// The parser keeps offsets as int32 (see ptok): keep such a file
		// as written rather than misparse it.
		f.Decls = []Decl{&Opaque{Span: Span{0, len(src)}, Reason: "file of 2 GiB or more"}}
		f.Diags = append(f.Diags, diag.Diagnostic{Pos: 0, End: len(src), Severity: diag.Error, Code: "PARSE010",
			Message: "declaration not understood (file of 2 GiB or more); kept as written"})
		return f
	}
	p := newParser(f, text)
	p.general = general
	p.toks, p.directs, p.digraphIdx, p.prescans = l.view, l.directs, l.digraphs, l.prescans
	p.parseFile()
	f.Diags = p.diags
	p.release()
	return f
}

type parser struct {
	src        string // the source (File.Src as a string)
	file       *File
	toks       []ptok  // non-trivia tokens, EOF last; may be split (see closeAngle)
	directs    []int32 // index in File.Tokens of each Directive token
	digraphIdx []int32 // indices in toks of possible digraphs (see finishToks)
	prescans   []int32 // indices in toks of the words prescan looks at
	i          int
	lastEnd    int // end offset of the last consumed token (or half token)
	diags      []diag.Diagnostic

	general      bool // take no fast path: each gives what the general path gives (TestFastPathsAgree)
	depth        int
	deepReported bool
	noGT         int      // >0 while parsing template arguments: '>' closes them
	noText       int      // >0 while parsing template arguments that are discarded
	splits       []split  // undo log of '>>' splits, for backtracking
	scope        *Scope   // innermost function or lambda scope, nil at file scope
	outer        []*Scope // enclosing scopes of a lambda's, innermost last
	buf          []byte   // scratch for building type texts
	bufSrc       int      // the text being built is src[bufSrc:bufEnd], or p.buf if -1 (see appendSrc)
	bufEnd       int      // end of that source range while bufSrc >= 0
	inGroup      bool     // building a function pointer's text: "void (*)(int)"
	callConvSkip bool     // building declarator text: drop calling-convention macros

	slabs slabs

	names     map[string]string // interned type texts and other built strings (see keep)
	types     *nameSet          // names declared as types in this file
	templates *nameSet          // names declared as templates in this file
	macroIdx  strIndex          // names of the macros #defined in this file (see macro)
	macroDefs []macroDef        // the #defines of each name in macroIdx.keys (see macroDefOf)
	macroLens [32][256]bool     // [n%32][c]: a macro name of n bytes starts with c (see maybeMacro)
	digraphs  map[int]string    // token index -> canonical punctuator
	badAngle  []uint64          // bit set of the token indices of '<' that do not open template arguments
	symNames  uint64            // filter of the symbol names inScope can find (see symBit)
	sawLaunch bool              // a launch was parsed (see markLaunchedKernels)
}

// ptok is the parser's copy of one non-trivia token: 12 bytes holding all
// the grammar asks about a token. (A Token alone is 24 bytes; the token
// view is the parser's largest allocation, written once per token by the
// lexer and read for every decision.) Offsets fit in int32: ParseFile does
// not parse sources of 2 GiB or more. The original bounds of a token that
// lost bytes to a closing '>' are recomputed by origStart.
type ptok struct {
	Start, End int32
	Kind       TokenKind
	cls        uint8 // word class of an identifier (clsSpec, ...)
	pb         byte  // a one-byte punctuator (digraphs canonical), else 0
	kw         uint8 // token id of a listed word or punctuator (tokid.go), else 0
}

// token converts t back to a Token with the same (possibly split) bounds.
func (t ptok) token() Token { return Token{Kind: t.Kind, Start: int(t.Start), End: int(t.End)} }

// split records that toks[idx] lost its first byte to a closing '>'.
type split struct {
	idx, start int
	pb, kw     byte
}

// newParser returns a parser for f, whose source is src; the caller sets
// toks and directs.
func newParser(f *File, src string) *parser {
	p := &parser{
		src:       src,
		file:      f,
		diags:     f.Diags,
		names:     make(map[string]string, 256),
		types:     newNameSet(),
		templates: newNameSet(),
	}
	return p
}

// spareView returns an empty token view for a source of n bytes: the one
// the last parse left in spareToks when it is big enough, else a new one
// with room for one token per 4 bytes (real code has about 4.5).
func spareView(n int) []ptok {
	if b := spareToks.Swap(nil); b != nil && cap(*b) >= n/5 {
		return (*b)[:0]
	}
	return make([]ptok, 0, n/4+16)
}

// spareToks keeps the token view of the last parse for the next one. The
// view is the parser's largest allocation (12 bytes per token) and nothing
// in the tree refers to it; a fresh one costs page faults and garbage
// collection work for every file. A sync.Pool loses it at most collections
// (a 2 MB file allocates enough to trigger one or two), so this is one
// slot: concurrent parses that find it empty allocate, and at most one
// view (the size of the largest recent file's) stays allocated between
// parses.
var spareToks atomic.Pointer[[]ptok]

// release hands p's token view to spareToks; p must not be used after.
func (p *parser) release() {
	b := p.toks[:0]
	p.toks = nil
	spareToks.Store(&b)
}

// finishToks completes the view the lexer built: the canonical byte of
// each digraph.
func (p *parser) finishToks() {
	for _, k := range p.digraphIdx {
		p.toks[k].pb = p.noteDigraph(int(k), p.toks[k].token())
	}
}

// isMacroTok reports whether p.toks[k] names a macro #defined in this file.
// It is asked at a few places only, so it is not precomputed per token (a
// pass over the whole view). Macro names are few and mostly capitalised:
// the first-byte filter spares most identifiers the table lookup.
func (p *parser) isMacroTok(k int) bool {
	t := &p.toks[k]
	return t.Kind == Identifier && p.maybeMacro(p.src[t.Start], int(t.End-t.Start)) && p.macroIdx.find(p.src[t.Start:t.End]) >= 0
}

// noteDigraph maps digraph tokens to the punctuator they spell, so the
// grammar code only ever compares against the canonical spelling. It
// returns the punctuator byte for p.toks, or 0.
func (p *parser) noteDigraph(idx int, t Token) byte {
	canon := ""
	switch string(p.src[t.Start:t.End]) {
	case "<:":
		canon = "["
	case ":>":
		canon = "]"
	case "<%":
		canon = "{"
	case "%>":
		canon = "}"
	default:
		return 0
	}
	if p.digraphs == nil {
		p.digraphs = make(map[int]string)
	}
	p.digraphs[idx] = canon
	return canon[0]
}

func (p *parser) parseFile() {
	defer p.recoverPanic()
	p.collectMacros()
	p.finishToks()
	p.prescan()
	p.file.Decls = p.parseDecls(&declCtx{})
	for !p.atEOF() {
		// A stray '}' at file level: report it and keep going.
		t := p.tok()
		p.errorf(t.Start, t.End, "PARSE003", "unbalanced '}'")
		p.next()
		p.file.Decls = append(p.file.Decls, p.parseDecls(&declCtx{})...)
	}
	if p.sawLaunch {
		markLaunchedKernels(p.file)
	}
}

// markLaunchedKernels makes a function of this file that is launched with
// `f<<<...>>>` but carries no execution-space specifier a kernel (adds
// "__global__" to its Specifiers): its qualifier is hidden in a macro
// from a header the parser does not read (`#define MY_KERNEL
// __attribute__((visibility("hidden"))) __global__`). Only functions
// returning void, as every kernel does.
func markLaunchedKernels(f *File) {
	launched := map[string]bool{}
	for _, l := range f.Launches() {
		if n := LastName(FuncName(l.Kernel)); n != "" {
			launched[n] = true
		}
	}
	if len(launched) == 0 {
		return
	}
	for _, fn := range f.Funcs() {
		if launched[fn.Name] && !fn.IsDevice() && !fn.has("__host__") && fn.Result != nil && fn.Result.Text == "void" {
			fn.Specifiers = append(fn.Specifiers, "__global__")
		}
	}
}

// recoverPanic is the last resort: a bug in the parser must not take the
// whole tool down. The remaining source becomes one Opaque declaration.
func (p *parser) recoverPanic() {
	r := recover()
	if r == nil {
		return
	}
	start := 0
	if p.i < len(p.toks) {
		start = int(p.toks[p.i].Start)
	}
	for _, d := range p.file.Decls {
		start = max(start, d.End())
	}
	if start > len(p.src) {
		start = len(p.src)
	}
	p.file.Decls = append(p.file.Decls, &Opaque{Span: Span{start, len(p.src)}, Reason: "internal parser error"})
	p.errorf(start, len(p.src), "PARSE099", fmt.Sprintf("internal parser error (please report): %v", r))
}

// ---------------------------------------------------------------------------
// Token access

func (p *parser) tok() Token { return p.toks[p.i].token() }

// curStart and curEnd are p.tok().Start and .End without building the
// Token: one load where the grammar needs only a bound.
func (p *parser) curStart() int { return int(p.toks[p.i].Start) }

func (p *parser) curEnd() int { return int(p.toks[p.i].End) }

func (p *parser) peek(k int) Token {
	if p.i+k < 0 {
		return Token{Kind: Invalid}
	}
	return p.at(k).token()
}

// at returns the token k ahead (k >= -p.i), or the EOF token past the end.
func (p *parser) at(k int) *ptok {
	if j := p.i + k; j < len(p.toks) {
		return &p.toks[j]
	}
	return &p.toks[len(p.toks)-1]
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

func (p *parser) atEOF() bool { return p.toks[p.i].Kind == EOF }

// next consumes the current token (never the EOF token).
func (p *parser) next() {
	if p.i < len(p.toks)-1 {
		p.lastEnd = int(p.toks[p.i].End)
		p.i++
	}
}

func (p *parser) textOf(t Token) string { return p.src[t.Start:t.End] }

// textAt returns the text of p.toks[i].
func (p *parser) textAt(i int) string { return p.src[p.toks[i].Start:p.toks[i].End] }

// pbAt reports whether the token k ahead is the one-byte punctuator c
// (false past either end of the view).
func (p *parser) pbAt(k int, c byte) bool {
	j := p.i + k
	return j >= 0 && j < len(p.toks) && p.toks[j].pb == c
}

// isAt reports whether the token k ahead spells s (digraphs canonicalised).
func (p *parser) isAt(k int, s string) bool {
	if len(s) == 1 && p.i+k >= 0 && p.i+k < len(p.toks) {
		return p.toks[p.i+k].pb == s[0]
	}
	t := p.peek(k)
	if t.End-t.Start == len(s) && string(p.src[t.Start:t.End]) == s {
		return true
	}
	if p.digraphs != nil && t.Kind == Punct && t.End-t.Start == 2 && (p.src[t.Start] == '<' || p.src[t.Start] == ':' || p.src[t.Start] == '%') {
		if c, ok := p.digraphs[p.i+k]; ok {
			return c == s
		}
	}
	return false
}

// is reports whether the current token spells s. It is the parser's most
// called function, so the common mismatch costs one length comparison.
func (p *parser) is(s string) bool {
	if len(s) == 1 {
		return p.toks[p.i].pb == s[0]
	}
	t := &p.toks[p.i]
	return int(t.End-t.Start) == len(s) && string(p.src[t.Start:t.End]) == s
}

func (p *parser) got(s string) bool {
	if p.is(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) isIdent() bool { return p.toks[p.i].Kind == Identifier }

// isKeyword is keywords[p.word()] without the map lookup: the lexer
// classified every identifier that can be a reserved word.
func (p *parser) isKeyword() bool {
	t := &p.toks[p.i]
	return t.Kind == Identifier && t.cls&clsKeyword != 0
}

// word returns the current token's text if it is an identifier, else "".
func (p *parser) word() string {
	t := &p.toks[p.i]
	if t.Kind != Identifier {
		return ""
	}
	return p.src[t.Start:t.End]
}

// wordAt returns the identifier k tokens ahead, or "".
func (p *parser) wordAt(k int) string {
	if p.i+k < 0 {
		return ""
	}
	t := p.at(k)
	if t.Kind != Identifier {
		return ""
	}
	return p.src[t.Start:t.End]
}

// view returns the source text [start,end) ("" for an empty or reversed
// range).
func (p *parser) view(start, end int) string {
	if end <= start {
		return ""
	}
	return p.src[start:end]
}

// keep returns an interned copy of s, a string the parser built (by
// concatenation): equal texts in the tree share one string. Source text
// needs no interning (see view).
func (p *parser) keep(s string) string {
	if k, ok := p.names[s]; ok {
		return k
	}
	k := strings.Clone(s)
	p.names[k] = k
	return k
}

// intern returns a shared string for b, a text the parser built in a
// scratch buffer; the map lookup does not allocate.
func (p *parser) intern(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	s := string(b)
	p.names[s] = s
	return s
}

// newlineBefore reports whether a newline separates the current token from
// the previous one (used to accept macro invocations without ';').
func (p *parser) newlineBefore() bool {
	if p.i == 0 {
		return true
	}
	for _, c := range p.src[int(p.toks[p.i-1].End):int(p.toks[p.i].Start)] {
		if c == '\n' {
			return true
		}
	}
	return false
}

// inScope returns the variable name declared before the current token in
// the current function or lambda, or in the functions enclosing a lambda.
func (p *parser) inScope(name string) *Symbol {
	if p.symNames&symBit(name) == 0 {
		return nil // no symbol of the searched scopes has this name
	}
	pos := p.curStart()
	if s := p.scope.Lookup(name, pos); s != nil {
		return s
	}
	for i := len(p.outer) - 1; i >= 0; i-- {
		if s := p.outer[i].Lookup(name, pos); s != nil {
			return s
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Node allocation

// The most frequent nodes come from slabs: one allocation per chunk of
// nodes instead of one per node, which keeps the allocator and GC out of
// the profile. Nodes are never freed individually, so this is safe.

// chunkCap returns the capacity of the chunk that follows a full one of
// capacity c and must hold at least n items: chunks start at 8 items and
// double up to maxChunk, so a small file does not pay for large chunks.
func chunkCap(c, n int) int { return max(min(max(2*c, 8), maxChunk), n) }

// maxChunk is the most items of a chunk (unless one list needs more).
const maxChunk = 512

// slab hands out pointers into a chunk of preallocated values. A slot is
// handed out once and never reused, so a new slot is still zero.
type slab[T any] struct{ buf []T }

// slot returns a pointer to the next (zero) slot of s; the caller sets
// the fields it needs.
func slot[T any](s *slab[T]) *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, chunkCap(cap(s.buf), 1))
	}
	s.buf = s.buf[:len(s.buf)+1]
	return &s.buf[len(s.buf)-1]
}

// newNode stores v in the next slot of s and returns a pointer to it.
func newNode[T any](s *slab[T], v T) *T {
	e := slot(s)
	*e = v
	return e
}

// one returns a one-element slice holding x, carved from slab s.
func one[T any](s *slab[T], x T) []T {
	newNode(s, x)
	n := len(s.buf)
	return s.buf[n-1 : n : n]
}

// slabs holds one slab per frequent node type.
type slabs struct {
	sIdent      slab[Ident]
	sBinary     slab[BinaryExpr]
	sCallExpr   slab[CallExpr]
	sExprStmt   slab[ExprStmt]
	sBasicLit   slab[BasicLit]
	sMemberExpr slab[MemberExpr]
	sIndexExpr  slab[IndexExpr]
	sUnaryExpr  slab[UnaryExpr]
	sVarDecl    slab[VarDecl]
	sTypeRef    slab[TypeRef]
	sDeclStmt   slab[DeclStmt]
	sParenExpr  slab[ParenExpr]
	sParam      slab[Param]
	sBlockStmt  slab[BlockStmt]
	sReturnStmt slab[ReturnStmt]
	sSymbol     slab[Symbol]
	sVarPtr     slab[*VarDecl]
	sIfStmt     slab[IfStmt]
	sForStmt    slab[ForStmt]
	sCastExpr   slab[CastExpr]
	sSizeofExpr slab[SizeofExpr]
	sFuncDecl   slab[FuncDecl]
	sScope      slab[Scope]
	sGroup      slab[VarDeclGroup]
	sParenList  slab[ParenListExpr]
	sCondExpr   slab[CondExpr]
	sTmplIdent  slab[TemplateIdent]
	sLaunch     slab[LaunchExpr]
	sBranch     slab[BranchStmt]
	sCase       slab[CaseStmt]
	sWhile      slab[WhileStmt]
	sRangeFor   slab[RangeForStmt]
	sTypedef    slab[TypedefDecl]
	sSpan       slab[Span] // template headers (declCtx.template)
	sInitList   slab[InitListExpr]

	symChunk   []*Symbol  // room for the first symbols of each scope (see addSymbol)
	varChunk   []*VarDecl // room for the declarators of a declaration of several
	paramChunk []*Param   // room for the first parameters of each list
	argChunk   []Expr     // room for launch configurations
	nodeChunk  []Node     // room for template argument lists
	specChunk  []string   // room for specifier lists (see addSpec)

	stmts listStack[Stmt]
	exprs listStack[Expr]
}

// listStack builds node lists without growing a slice per list: a parse
// function pushes its items on one shared stack (lists nested in an item
// push above them and are finished first) and finish copies them into an
// exactly sized slice carved from a chunk.
type listStack[T any] struct {
	items []T
	chunk []T
}

func (s *listStack[T]) push(x T) { s.items = append(s.items, x) }

// finish pops the items pushed since mark (len(s.items) then) as a list;
// nil when there are none, as an appended-to nil slice would be.
func (s *listStack[T]) finish(mark int) []T {
	items := s.items[mark:]
	s.items = s.items[:mark]
	if len(items) == 0 {
		return nil
	}
	return append(carve(&s.chunk, len(items)), items...)
}

// carve returns an empty slice with room for n items, cut from *chunk (a
// new chunk when it has less room). The room belongs to that slice alone,
// so appending to it never touches another list. A list that grows past n
// is reallocated by append as usual.
func carve[T any](chunk *[]T, n int) []T {
	if cap(*chunk)-len(*chunk) < n {
		*chunk = make([]T, 0, chunkCap(cap(*chunk), n))
	}
	k := len(*chunk)
	*chunk = (*chunk)[:k+n]
	return (*chunk)[k : k : k+n]
}

// addSymbol appends the symbol {name, typ, decl, param} to the current
// scope's symbols; the first 16 go to room carved from a chunk. A scope
// without symbols keeps a nil list.
func (p *parser) addSymbol(name string, typ *TypeRef, decl Node, param bool) {
	s := p.scope
	if s.Symbols == nil {
		s.Symbols = carve(&p.slabs.symChunk, 16)
	}
	sym := slot(&p.slabs.sSymbol)
	sym.Name, sym.Type, sym.Decl, sym.Param = name, typ, decl, param
	s.Symbols = append(s.Symbols, sym)
	p.symNames |= symBit(name)
}

// addSpec appends specifier w to ds.specs, the first ones in room carved
// from a chunk.
func (p *parser) addSpec(ds *declSpec, w string) {
	if ds.specs == nil {
		ds.specs = carve(&p.slabs.specChunk, 4)
	}
	ds.specs = append(ds.specs, w)
}

func (p *parser) newIdent(sp Span, name string) *Ident {
	id := slot(&p.slabs.sIdent)
	id.Span, id.Name = sp, name
	return id
}

func (p *parser) newBinary(sp Span, op string, opPos int, x, y Expr) *BinaryExpr {
	b := slot(&p.slabs.sBinary)
	b.Span, b.Op, b.OpPos, b.X, b.Y = sp, op, opPos, x, y
	return b
}

// ---------------------------------------------------------------------------
// Backtracking

// mark is the parser state a backtrack (reset) restores: the position,
// the '>>' splits made, the diagnostics reported and the symbols declared
// since.
type mark struct {
	i, splits, lastEnd, diags, syms int
}

func (p *parser) mark() mark {
	m := mark{i: p.i, splits: len(p.splits), lastEnd: p.lastEnd, diags: len(p.diags)}
	if p.scope != nil {
		m.syms = len(p.scope.Symbols)
	}
	return m
}

func (p *parser) reset(m mark) {
	for len(p.splits) > m.splits {
		s := p.splits[len(p.splits)-1]
		p.toks[s.idx].Start = int32(s.start)
		p.toks[s.idx].pb = s.pb
		p.toks[s.idx].kw = s.kw
		p.splits = p.splits[:len(p.splits)-1]
	}
	p.i, p.lastEnd = m.i, m.lastEnd
	p.diags = p.diags[:m.diags]
	if p.scope != nil && len(p.scope.Symbols) > m.syms {
		p.scope.Symbols = p.scope.Symbols[:m.syms]
	}
}

// closeAngle consumes one '>' closing template arguments. A '>>', '>>>',
// '>=' or '>>=' token is split: its first byte closes the list and the rest
// stays as the current token.
func (p *parser) closeAngle() bool {
	t := p.tok()
	if t.Kind != Punct || p.src[t.Start] != '>' {
		return false
	}
	if t.End-t.Start == 1 {
		p.next()
		return true
	}
	p.splits = append(p.splits, split{p.i, t.Start, p.toks[p.i].pb, p.toks[p.i].kw})
	p.toks[p.i].Start++
	if t.End-t.Start == 2 {
		p.toks[p.i].pb = p.src[t.Start+1] // ">>" leaves '>', ">=" leaves '='
	}
	p.toks[p.i].kw = punctID(p.src[t.Start+1 : t.End]) // ">>>" leaves ">>"
	p.lastEnd = t.Start + 1
	return true
}

// ---------------------------------------------------------------------------
// Nesting guard

// enter guards one level of recursion; on false the caller must not recurse.
func (p *parser) enter() bool {
	p.depth++
	if p.depth <= maxDepth {
		return true
	}
	return p.tooDeep()
}

func (p *parser) tooDeep() bool {
	if !p.deepReported {
		p.deepReported = true
		t := p.tok()
		p.errorf(t.Start, t.End, "PARSE007", fmt.Sprintf("nesting deeper than %d levels; the rest of this construct is kept as written", maxDepth))
	}
	return false
}

func (p *parser) leave() { p.depth-- }

// ---------------------------------------------------------------------------
// Diagnostics and recovery

func (p *parser) errorf(pos, end int, code, msg string) {
	p.diags = append(p.diags, diag.Diagnostic{Pos: pos, End: end, Severity: diag.Error, Code: code, Message: msg})
}

func (p *parser) warnf(pos, end int, code, msg string) {
	p.diags = append(p.diags, diag.Diagnostic{Pos: pos, End: end, Severity: diag.Warning, Code: code, Message: msg})
}

// punctByte returns the single-byte punctuator at the current token, or 0.
func (p *parser) punctByte(k int) byte {
	if p.i+k < 0 || p.i+k >= len(p.toks) {
		return 0
	}
	return p.toks[p.i+k].pb
}

// skipBalanced consumes the bracketed group at the current '(' '[' or '{'
// through its matching closer (or to EOF), iteratively.
func (p *parser) skipBalanced() {
	depth := 0
	for !p.atEOF() {
		switch p.punctByte(0) {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		p.next()
		if depth <= 0 {
			return
		}
	}
}

// syncStmt skips to the end of the current statement or declaration: past
// the next ';' at nesting depth 0, past a '{...}' group at depth 0 (and a
// ';' right after it), or up to (not past) an unmatched '}'.
func (p *parser) syncStmt() {
	start := p.i
	for !p.atEOF() {
		switch p.punctByte(0) {
		case ';':
			p.next()
			return
		case '{':
			p.skipBalanced()
			p.got(";")
			return
		case '(', '[':
			p.skipBalanced()
			continue
		case '}':
			if p.i == start {
				p.next() // never return without progress
			}
			return
		}
		p.next()
	}
}

// spanFrom returns the span of a node that began at offset start (the
// first token it looked at) and ends with the last consumed token. A node
// that consumed nothing is empty at start, and lastEnd moves up to start
// (over trivia only) so that enclosing nodes, which end at lastEnd, still
// contain it.
func (p *parser) spanFrom(start int) Span {
	if p.lastEnd < start {
		p.lastEnd = start
	}
	return Span{start, p.lastEnd}
}

// opaqueDecl wraps [start, lastEnd) after syncing, with a diagnostic.
func (p *parser) opaqueDecl(start int, reason string) *Opaque {
	p.syncStmt()
	o := &Opaque{Span: p.spanFrom(start), Reason: reason}
	p.errorf(o.Start, o.Stop, "PARSE010", "declaration not understood ("+reason+"); kept as written")
	return o
}

// harmless wraps [start, lastEnd) after syncing, without a diagnostic.
func (p *parser) harmless(start int, reason string) *Opaque {
	p.syncStmt()
	return &Opaque{Span: p.spanFrom(start), Reason: reason}
}
