package parse

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
	"unsafe"

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
	l := lexAll(src, nil)
	return l.toks, l.diags
}

// lexAll lexes src. With a non-nil view (ParseFile) it also appends the
// parser's view of each non-trivia token to it while the token is fresh in
// cache; a second pass over all the tokens would cost as much as lexing.
func lexAll(src []byte, view []ptok) *lexer {
	l := &lexer{src: src, view: view, parse: view != nil}
	// Real code averages 2.5 to 3 bytes per token. A small file gets room
	// for one token per 2 bytes at once; a large one starts with a sample
	// and grow extrapolates from it (see grow).
	l.toks = newToks(0, min(len(src)/2, firstToks)+16)
	if l.parse {
		run[withView](l)
	} else {
		run[tokensOnly](l)
	}
	l.closeConditionals()
	l.pos = len(src)
	l.emit(EOF, len(src))
	return l
}

type lexer struct {
	src      []byte
	pos      int
	toks     []Token
	directs  []int32 // indices in toks of the Directive tokens
	parse    bool    // build view (ParseFile)
	view     []ptok  // the parser's view of the non-trivia tokens
	digraphs []int32 // indices in view of digraph punctuators ("<:" ...)
	prescans []int32 // indices in view of the words prescan looks at (prescanWord)
	diags    []diag.Diagnostic
	conds    []condFrame // open #if groups

	// words lists the byte offsets in view (index * ptokSize: no
	// division in run) of identifiers that may be reserved words (see
	// run); nwords wraps to 0 when words is full.
	words  [256]uint32
	nwords uint8
}

// condFrame is one open #if group; taken says whether one of its branches
// has been taken already, so every later #elif/#else branch is inactive.
type condFrame struct {
	start int
	taken bool
}

// firstToks is the token capacity reserved for the start of a large file.
const firstToks = 1 << 16

func (l *lexer) emit(k TokenKind, start int) {
	if len(l.toks) == cap(l.toks) {
		l.grow()
	}
	l.toks = append(l.toks, Token{Kind: k, Start: start, End: l.pos})
	// k is a constant at most call sites, so the kind test folds away.
	if (k == Invalid || k >= Identifier) && l.parse {
		l.addView(k, start)
	}
}

// addView appends the parser's view of the token just emitted: its class
// if it is a reserved word, its byte if it is a one-byte punctuator.
func (l *lexer) addView(k TokenKind, start int) {
	pt := ptok{Start: int32(start), End: int32(l.pos), Kind: k}
	if start < len(l.src) {
		c := l.src[start]
		switch {
		case k == Punct && l.pos-start == 1:
			pt.pb = c
		case k == Punct:
			pt.kw = punctID(l.src[start:l.pos])
			if l.pos-start == 2 && isDigraph(c, l.src[start+1]) {
				l.digraphs = append(l.digraphs, int32(len(l.view)))
			}
		case k == Identifier && (c >= 'a' && c <= 'z' || c == '_'):
			// Every reserved word starts with a lower-case letter or '_'.
			// The words run listed come first in prescans.
			l.flushWords()
			pt.cls, pt.kw = wordInfo(l.src[start:l.pos])
			if prescanWord[pt.kw] {
				l.prescans = append(l.prescans, int32(len(l.view)))
			}
		}
	}
	l.view = append(l.view, pt)
}

// isDigraph reports whether cd is one of the digraphs the parser maps to
// a bracket ("<:", ":>", "<%", "%>"; see noteDigraph, which leaves every
// other token as it is).
func isDigraph(c, d byte) bool {
	return c == '<' && (d == ':' || d == '%') || d == '>' && (c == ':' || c == '%')
}

// grow makes room for the rest of the file by extrapolating the token
// density of the part lexed so far, plus 1/8 slack. Reserving one token per
// 2 bytes up front would waste a third of the largest allocation on typical
// code (~3 bytes per token), and the garbage collector runs per allocated
// byte. It grows at least 1.5x, so dense input (one token per byte) copies
// the slice only a few times.
func (l *lexer) grow() {
	n := len(l.toks)
	est := n
	if l.pos > 0 {
		est = int(int64(n) * int64(len(l.src)) / int64(l.pos))
	}
	newCap := max(est+est/8+1024, n+n/2+16)
	grown := newToks(n, newCap)
	copy(grown, l.toks)
	l.toks = grown
}

// newToks returns a token slice of length n and capacity c; the caller
// overwrites the first n tokens. A large slice comes from memory that is
// not cleared first: clearing the 20 MB of a 2 MB file's tokens (memory of
// an earlier file's tokens, reused) was ~5% of ParseFile's time. That is
// sound because Token holds no pointers (the garbage collector never reads
// the old bytes) and nothing reads a token past len: the lexer extends the
// length by one and writes that token at once (append, or toks[:n+1] then
// toks[n] = ...). strings.Builder.Grow is the standard library's way to
// get uncleared memory; a later Go that clears it would only be slower.
func newToks(n, c int) []Token {
	if c < noClearToks {
		return make([]Token, n, c)
	}
	var b strings.Builder
	b.Grow(c * tokenSize)
	b.WriteByte(0) // String needs one byte; the slice covers the whole buffer
	return unsafe.Slice((*Token)(unsafe.Pointer(unsafe.StringData(b.String()))), c)[:n]
}

// tokenSize is the size of a Token; its 8-byte alignment is met by the
// Builder's buffer, which for noClearToks tokens and more is a large,
// page-aligned allocation.
const tokenSize = int(unsafe.Sizeof(Token{}))

// noClearToks is the capacity (64 KiB of tokens) from which newToks skips
// clearing; below it the saving is not worth the detour.
const noClearToks = 64 << 10 / tokenSize

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

// lexMode is run's mode as a type parameter, so that each mode gets its own
// compiled copy of run in which "build the view?" is a constant: as a bool
// it was one more value live in a loop that has no register to spare, and
// was reloaded from the stack on most paths of every token.
type lexMode interface{ tokensOnly | withView }

type (
	tokensOnly [0]struct{} // Lex, LexDiags: the tokens only
	withView   [1]struct{} // ParseFile: the parser's view too
)

// run lexes the whole source. The frequent simple tokens (identifiers
// that are not literal prefixes, runs of blanks, newlines, punctuators
// other than '#', numbers of digits and letters) are lexed inline with the
// token and view slices in locals; anything else, any doubt, or a full
// slice goes to next from the token's first byte, which lexes it (and
// grows the slices) exactly as before.
//
// The loop makes no call that returns with the slices or the position
// live in registers: writes go through pointers into the slices' arrays
// (see room; no append, whose growth path is a call), reserved words are
// looked up in batches (classifyWords), and the calls (next, punct,
// classifyWords) are made with the slices stored in l and reloaded
// after. A value live across a call on any path is spilled on every
// iteration (at the loop head). The first byte is read again as
// src[start] where needed: keeping c live over the switch costs a spill
// per token.
//
// The inline cases end in "goto loop", not "continue": continue jumps to
// one block that all of them share, and the register allocator gave the
// loop's values other registers there than at the loop's head, so every
// token paid for a swap of registers (three moves); each goto lands on the
// head with its own, mostly empty, set of moves.
func run[M lexMode](l *lexer) {
	var mode M
	parse := len(mode) != 0 // a constant in each compiled copy
	src := l.src
	pos := l.pos
	tp, tend, vp := l.room(parse)
loop:
	for uint(pos) < uint(len(src)) { // unsigned: src[pos] needs no bounds check
		start := pos
		c := src[pos]
		switch fastClass[c] {
		case fIdent:
			// The byte that ends the name is tested once, where the
			// loops stop (a second load and a reload of spilled values
			// cost more).
			//
			// fastClass, not identCharTab: the dispatch's table address
			// stays in its register (a second table's address took it
			// and was restored per byte). d is tested in place
			// (isNameClass written out) and by an order test, so that
			// one register holds the byte, its class and d: for "d ==
			// fStop-fIdent" the compiler kept the class in a second
			// register, which was restored per byte too. With fStop the
			// last class the test at end also sends the rare fSlow
			// bytes after a name ('#', '\\', '@', controls) to next,
			// which lexes them as before.
			var d uint8 // fastClass[src[i]] where the loops stop (fIdent is 0)
			// Four bytes per bounds test while four are left, read
			// through a pointer because the compiler did not prove the
			// indexes in bounds (four tests per four bytes); then byte
			// by byte, which happens only in the last 3 bytes of src.
			// The loop moves e, the end of the four bytes, instead of
			// i = e-4: for "i+4 <= len(src)" the compiler kept i+4 in a
			// second register and moved it into i on every turn.
			var i int
			e := pos + 5
			for ; e <= len(src); e += 4 {
				w := (*[4]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), e-4)) // 0 < e-4, e <= len(src)
				if d = fastClass[w[0]]; d > fDigit {
					i = e - 4
					goto end
				}
				if d = fastClass[w[1]]; d > fDigit {
					i = e - 3
					goto end
				}
				if d = fastClass[w[2]]; d > fDigit {
					i = e - 2
					goto end
				}
				if d = fastClass[w[3]]; d > fDigit {
					i = e - 1
					goto end
				}
			}
			for i = e - 4; ; i++ {
				if uint(i) >= uint(len(src)) {
					goto slow // a name that ends the source
				}
				if d = fastClass[src[i]]; d > fDigit {
					break
				}
			}
		end:
			if d >= fStop {
				goto slow // a literal prefix or a non-ASCII letter
			}
			if uintptr(tp) >= tend {
				break // next grows the slices
			}
			tp = putTok(tp, Identifier, start, i)
			pos = i
			if parse {
				vp = putView(vp, start, i, identTail)
				// src[i-1] through a pointer: start < i <= len(src),
				// which the compiler does not know.
				last := *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), i-1))
				if classEnds[endsKey(src[start], last)]&(1<<((i-start)&31)) != 0 {
					// Only a name with a reserved word's first and last byte and
					// length is looked up, in batches: a call per name
					// would cost as much as the lookup. The length is
					// taken mod 32 instead of tested: a longer name
					// that passes is only looked up in vain.
					// nw saves a reload: the store into words may
					// alias nwords as far as the compiler knows.
					nw := l.nwords
					// The entry's byte offset, not its index
					// (viewIndex): the division by ptokSize
					// was a multiplication in AX and DX, which
					// cost moves and spills per name.
					l.words[nw] = uint32(uintptr(vp)-uintptr(unsafe.Pointer(unsafe.SliceData(l.view)))) - uint32(ptokSize)
					nw++
					l.nwords = nw
					if nw == 0 { // wrapped: words is full
						l.sync(tp, vp, pos)
						l.classifyWords(len(l.words))
					}
				}
			}
			// A name is often followed by blanks ("int x", "x = y") or
			// by a bracket, ';' or ',': lex them here, as the fSpace and
			// fPunct1 cases do, without the loop's dispatch (d tells
			// the next byte's class). room left space for this second
			// token.
			switch d {
			case fSpace - fIdent:
				if end, cr := blanksEnd(src, pos+1); !cr {
					tp = putTok(tp, Whitespace, pos, end)
					pos = end
				}
			case fPunct1 - fIdent:
				// "f(", "x;", "a,", "i]": the fPunct1 case's token.
				tp = putTok(tp, Punct, pos, pos+1)
				if parse {
					vp = putView(vp, pos, pos+1, punct1Tail[src[pos]])
				}
				pos++
			}
			goto loop
		case fSpace:
			i, cr := blanksEnd(src, pos+1)
			if cr || uintptr(tp) >= tend {
				break // whitespace decides about '\r'
			}
			tp = putTok(tp, Whitespace, start, i)
			pos = i
			goto loop
		case fNewline:
			if uintptr(tp) >= tend {
				break
			}
			tp = putTok(tp, Newline, start, pos+1)
			pos++
			// Most lines start with blanks: lex them here (as the
			// fSpace case does) without the loop's dispatch.
			if uint(pos) >= uint(len(src)) || fastClass[src[pos]] != fSpace { // room: see fIdent
				goto loop
			}
			i, cr := blanksEnd(src, spacesEnd(src, pos+1))
			if cr {
				goto loop // whitespace decides about '\r'
			}
			tp = putTok(tp, Whitespace, pos, i)
			pos = i
			goto loop
		case fPunct:
			// A punctuator that the next byte cannot extend is one byte
			// long (see punctMore); the others take punctLen (what next
			// would do for these bytes), with the slices stored.
			if pos+1 < len(src) && punctMore[src[pos+1]] {
				// The frequent two-byte punctuators no third byte
				// extends ("::", "++", "==", "+=", ...) are written here.
				kw, ok := punct2(src[start], src[pos+1])
				n := 2
				if !ok {
					// Shifts and launch brackets ("<<", ">>=",
					// "<<<", ...: most of the rest) are written
					// here too (see shiftLen).
					n, kw = shiftLen(src, pos)
					ok = n != 0
				}
				if !ok || uintptr(tp) >= tend {
					l.sync(tp, vp, pos)
					l.punct(start)
					tp, tend, vp = l.room(parse)
					pos = l.pos
					goto loop
				}
				tp = putTok(tp, Punct, start, pos+n)
				if parse {
					vp = putView(vp, start, pos+n, punct2Tail[kw])
				}
				pos += n
				goto loop
			}
			// One byte, as in the fPunct1 case (written out: with a
			// fallthrough the compiler loaded this case's table address
			// on the fPunct1 path too).
			if uintptr(tp) >= tend {
				break
			}
			tp = putTok(tp, Punct, start, pos+1)
			if parse {
				vp = putView(vp, start, pos+1, punct1Tail[src[start]])
			}
			pos++
			// Most of these operators ("=", "<", "*", "&") have blanks
			// after them: lex those here, as the fSpace case does
			// (room: see fIdent).
			if uint(pos) < uint(len(src)) && fastClass[src[pos]] == fSpace {
				if end, cr := blanksEnd(src, pos+1); !cr {
					tp = putTok(tp, Whitespace, pos, end)
					pos = end
				}
			}
			goto loop
		case fPunct1:
			// Brackets, ';', ',', '?', '~' never start a longer
			// punctuator: no punctLen call, no digraph test.
			if uintptr(tp) >= tend {
				break
			}
			tp = putTok(tp, Punct, start, pos+1)
			if parse {
				vp = putView(vp, start, pos+1, punct1Tail[src[start]])
			}
			pos++
			goto loop
		case fPunctX:
			// '.', '/', '%' are one byte long unless the next byte may
			// make a number, a comment, a longer punctuator or a
			// directive ("%:"); then next decides.
			if pos+1 < len(src) && punctMoreX[src[pos+1]] {
				break
			}
			if uintptr(tp) >= tend {
				break
			}
			tp = putTok(tp, Punct, start, pos+1)
			if parse {
				vp = putView(vp, start, pos+1, punct1Tail[src[start]])
			}
			pos++
			goto loop
		case fDigit:
			// A number of digits and letters; anything that may continue
			// it otherwise ('.', a digit separator, an exponent's sign)
			// goes to next (number).
			i := pos + 1
			for i < len(src) {
				if b := src[i]; !isNameClass(fastClass[b]) {
					if numberMore[b] {
						goto slow
					}
					break
				}
				i++
			}
			if uintptr(tp) >= tend {
				break
			}
			tp = putTok(tp, Number, start, i)
			if parse {
				vp = putView(vp, start, i, numberTail)
			}
			pos = i
			goto loop
		}
	slow: // next lexes the token at pos, as if run had never looked at it
		l.sync(tp, vp, pos)
		l.next()
		tp, tend, vp = l.room(parse)
		pos = l.pos
	}
	l.sync(tp, vp, pos)
	l.flushWords()
}

// spacesEnd returns the end of the run of spaces at i (i > 0), or an
// offset before it (at most 7 bytes from the end of src) from which
// blanksEnd finds it. It reads 8 bytes at a time: indentation averages
// 5.6 spaces, for which blanksEnd's loop alone took 6 instructions per
// byte.
func spacesEnd(src []byte, i int) int {
	for i+8 <= len(src) {
		// 8 bytes through a pointer: 0 < i, i+8 <= len(src).
		w := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), i))[:])
		if w ^= 0x2020202020202020; w != 0 {
			return i + bits.TrailingZeros64(w)>>3 // the first byte that is not ' '
		}
		i += 8
	}
	return i
}

// blanksEnd returns the end of the run of blanks (fSpace bytes) that goes
// on at i, and whether a '\r' follows it (then whitespace lexes the run).
// It tests the byte it stops at once, through fastClass, as run's loops do.
func blanksEnd(src []byte, i int) (end int, cr bool) {
	for uint(i) < uint(len(src)) { // i > 0; unsigned: no bounds check
		if fc := fastClass[src[i]]; fc != fSpace {
			return i, fc == fCR
		}
		i++
	}
	return i, false
}

// room returns run's writers for l.toks and (if parse) l.view: tp and vp
// point to the slots of the next token and view entry, and run may write
// two tokens and two view entries while uintptr(tp) < tend (every token
// run writes is one Token and at most one view entry): a case that lexes
// a second token (a name and the blanks or bracket after it, a newline
// and the blanks after it) tests the room once. tend leaves the last
// slot of each array free, so that tp and vp, moved on after each write,
// still point into their arrays (a pointer past an array's end is not a
// valid pointer for the garbage collector or checkptr). With no room
// (tp == nil, tend == 0) every token goes to next, which grows the slices.
// l keeps the slices; sync stores their new lengths.
//
// Two pointers and a limit instead of three words per slice leave the
// loop, which has no register to spare, two more registers, and a write
// costs no index arithmetic, bounds check or second capacity test.
func (l *lexer) room(parse bool) (tp unsafe.Pointer, tend uintptr, vp unsafe.Pointer) {
	free := cap(l.toks) - len(l.toks)
	if parse {
		free = min(free, cap(l.view)-len(l.view))
	}
	if free <= 2 {
		return nil, 0, nil
	}
	tp = unsafe.Add(unsafe.Pointer(unsafe.SliceData(l.toks)), len(l.toks)*tokenSize)
	if parse {
		vp = unsafe.Add(unsafe.Pointer(unsafe.SliceData(l.view)), len(l.view)*ptokSize)
	}
	return tp, uintptr(tp) + uintptr(free-2)*uintptr(tokenSize), vp
}

// sync stores the lengths that run's writers tp and vp (see room) give
// l.toks and l.view, and pos.
func (l *lexer) sync(tp, vp unsafe.Pointer, pos int) {
	l.pos = pos
	if tp == nil {
		return // no room: run wrote nothing
	}
	l.toks = l.toks[:(uintptr(tp)-uintptr(unsafe.Pointer(unsafe.SliceData(l.toks))))/uintptr(tokenSize)]
	if vp != nil {
		l.view = l.view[:l.viewIndex(vp)]
	}
}

// viewIndex returns the index in l.view of the slot vp points to.
func (l *lexer) viewIndex(vp unsafe.Pointer) int32 {
	return int32((uintptr(vp) - uintptr(unsafe.Pointer(unsafe.SliceData(l.view)))) / uintptr(ptokSize))
}

// putTok writes a token at tp (see room) and returns the next slot.
func putTok(tp unsafe.Pointer, kind TokenKind, start, end int) unsafe.Pointer {
	*(*Token)(tp) = Token{Kind: kind, Start: start, End: end}
	return unsafe.Add(tp, tokenSize)
}

// putView writes a view entry at vp (see room), a token [start,end) whose
// other fields are tail (viewTail), and returns the next slot.
func putView(vp unsafe.Pointer, start, end int, tail uint32) unsafe.Pointer {
	w := (*[3]uint32)(vp)
	w[0], w[1], w[2] = uint32(start), uint32(end), tail
	return unsafe.Add(vp, ptokSize)
}

// A ptok is three 32-bit words: Start, End, and its other fields, which
// putView writes as one word: viewTail gives that word, whatever the byte
// order. The declarations below fail to compile if ptok's layout changes.
const ptokSize = int(unsafe.Sizeof(ptok{}))

var (
	_ [0]struct{} = [unsafe.Sizeof(ptok{}) - 12]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(ptok{}.End) - 4]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(ptok{}.Kind) - 8]struct{}{}
)

// viewTail returns the third word of pt (see putView).
func viewTail(pt ptok) uint32 { return (*[3]uint32)(unsafe.Pointer(&pt))[2] }

// The third words of the view entries run writes: an identifier (its
// class and id come later, from classifyWords), a number, a one-byte
// punctuator c (punct1Tail[c]), a two-byte one of id kw (punct2Tail[kw]).
var (
	identTail  = viewTail(ptok{Kind: Identifier})
	numberTail = viewTail(ptok{Kind: Number})
	punct1Tail = func() (t [256]uint32) {
		for c := range t {
			t[c] = viewTail(ptok{Kind: Punct, pb: byte(c)})
		}
		return t
	}()
	punct2Tail = func() (t [256]uint32) {
		for kw := range t {
			t[kw] = viewTail(ptok{Kind: Punct, kw: uint8(kw)})
		}
		return t
	}()
)

// punct lexes the punctuator at start, as next does for run's fPunct
// bytes (they are no trivia and no other literal).
func (l *lexer) punct(start int) {
	l.pos = start + punctLen(l.src, start)
	l.emit(Punct, start)
}

// flushWords classifies the identifiers run has listed in words so far.
func (l *lexer) flushWords() {
	l.classifyWords(int(l.nwords))
	l.nwords = 0
}

// classifyWords sets the word class and token id of the view entries
// at the byte offsets l.words[:n], identifiers that passed run's classEnds filter, and lists
// those that are prescan's words. An ordinary name keeps the zero class
// and id run wrote.
//
// classifyFast decides almost every word without a call; it stops before
// the few it leaves to classifyWord (see classifyFast), so that no value
// of its loop lives across a call (a call on any path of the loop made
// the compiler spill five values per word: 76 instructions per word
// instead of about 55). It takes the words that start at least 16 bytes
// before the end of src (loadable), so that it tests no word's start.
func (l *lexer) classifyWords(n int) {
	words := l.words[:n]
	fast := words[:loadable(l.view, len(l.src), words)]
	for i := 0; i < n; i++ {
		j, p := classifyFast(l.view, l.src, fast, i)
		// The prescan words of words[i:j], in view order, before the
		// word classifyWord may list.
		for _, off := range words[i:p] {
			l.prescans = append(l.prescans, int32(off/uint32(ptokSize)))
		}
		if j >= n {
			return
		}
		l.classifyWord(int32(words[j] / uint32(ptokSize)))
		i = j
	}
}

// loadable returns how many of the words (view byte offsets, as in
// l.words) start at least 16 bytes before the end of a source of srcLen
// bytes, so that classifyFast may load 16 bytes at each. They are a
// prefix of words: run lists the words in view order, and view entries
// start in increasing order. Only the words in the last 16 bytes of the
// source fail, so the loop tests the last word and stops.
func loadable(view []ptok, srcLen int, words []uint32) int {
	n := len(words)
	for n > 0 && int(wordAt(view, words[n-1])[0])+16 > srcLen {
		n--
	}
	return n
}

// wordAt returns the view entry at byte offset off (see l.words) as its
// three 32-bit words (see putView): Start, End and the rest.
func wordAt(view []ptok, off uint32) *[3]uint32 {
	return (*[3]uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(view)), uintptr(off))) // run wrote view[off/ptokSize]
}

// classifyWord classifies the view entry k, an identifier, as
// classifyWords does, by classLookup.
func (l *lexer) classifyWord(k int32) {
	pt := &l.view[k]
	e := classLookup(l.src, int(pt.Start), int(pt.End))
	if e == nil {
		return
	}
	pt.cls, pt.kw = e.cls, e.kw
	if prescanWord[e.kw] {
		l.prescans = append(l.prescans, k)
	}
}

// classifyFast classifies the view entries words[i:] (see loadable: each
// starts at least 16 bytes before the end of src) as classifyWord
// does, up to the first that it leaves to classifyWord, a word of more
// than 16 bytes, and returns that word's index j (len(words) if none).
// It moves the prescan words of words[i:j] to words[i:p], in order, and
// returns p: classifyWords lists them (a word is moved to a slot it has
// passed, so no word still to be read is overwritten). For the others it reads the word's bytes as two
// 8-byte loads masked to the word's length (chunkMasks): the first is
// classLookup's wordChunk, the second is zero for a word of at most 8
// bytes, as e.next is for an entry of one, so one comparison stands for
// tailIs. Start and End are read as uint32 (an int32 cost a sign
// extension each).
func classifyFast(view []ptok, src []byte, words []uint32, i int) (j, p int) {
	p = i // the slot for the next prescan word
	for j = i; j < len(words); j++ {
		w := wordAt(view, words[j])
		start, n := uint(w[0]), uint(w[1]-w[0])
		if n > 16 {
			break
		}
		// b through a pointer: the slice's bounds checks were two more
		// tests of start.
		b := (*[16]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(src)), start)) // start+16 <= len(src): loadable
		m := &chunkMasks[n]
		head := binary.LittleEndian.Uint64(b[:8]) & m[0]
		tail := binary.LittleEndian.Uint64(b[8:]) & m[1]
		e := &classTable[classSlot(head, tail, classMul)]
		// No length test: a name's bytes are not 0, so the two masked
		// chunks have as many bytes that are not 0 as the name is long,
		// and as the entry's word is long if they are its chunks (an
		// empty slot's head is 0, a name's is not).
		if head != e.head || tail != e.next {
			continue
		}
		// pt.cls, pt.kw = e.cls, e.kw as one store of the entry's
		// third word (see putView): Kind is Identifier, pb is 0.
		v := e.view
		w[2] = uint32(v)
		if v&viewPrescan != 0 {
			words[p] = words[j] // p <= j; read again: k is not kept live
			p++
		}
	}
	return j, p
}

// chunkMasks[n] masks the bytes 0-7 and 8-15 of a word of n bytes to
// those that belong to it.
var chunkMasks = func() (t [17][2]uint64) {
	for n := range t {
		for b := 0; b < n; b++ {
			t[n][b/8] |= 0xff << (8 * (b % 8))
		}
	}
	return t
}()

// punct2 reports whether cd is a two-byte punctuator that no third byte
// extends and no digraph (punctLen gives 2 whatever follows; TestPunct2
// checks), and its token id: "X=" for the bytes of punctEq, and "++",
// "--", "&&", "||", "::".
func punct2(c, d byte) (kw uint8, ok bool) {
	if d == '=' {
		return kwNone, punctEq[c]
	}
	kw = punctDouble[c]
	return kw, d == c && kw != kwNone
}

// shiftLen returns the length and token id of the punctuator at
// src[pos:] (pos+1 < len(src)) if it starts with "<<" or ">>", else 0:
// "<<<" and ">>>" (launch brackets), "<<=" and ">>=", else "<<" or ">>",
// as punctLen (ltLen for '<') and punctID have it; none is a digraph.
func shiftLen(src []byte, pos int) (n int, kw uint8) {
	c := src[pos]
	if src[pos+1] != c || c != '<' && c != '>' {
		return 0, kwNone
	}
	if pos+2 < len(src) {
		switch src[pos+2] {
		case c:
			return 3, launchID[c&2]
		case '=':
			return 3, kwNone
		}
	}
	return 2, kwNone
}

// launchID is the token id of "<<<" and ">>>" by the bit 2 of '<' (0)
// and '>' (2).
var launchID = [4]uint8{tkLaunchOpen, 0, tkLaunchClose, 0}

// punctEq marks the bytes c for which "c=" is a punctuator that no third
// byte extends.
var punctEq = [256]bool{'=': true, '!': true, '+': true, '-': true, '*': true, '^': true, '&': true, '|': true, '>': true}

// punctDouble is the token id of the punctuator "cc" for the bytes c for
// which it is one that no third byte extends.
var punctDouble = [256]uint8{'+': tkInc, '-': tkDec, '&': tkAndAnd, '|': tkOrOr, ':': tkScope}

// punctMore marks the bytes that can be the second byte of a punctuator
// of several bytes starting with one of run's fPunct bytes (punctLen):
// before any other byte such a punctuator is one byte long.
var punctMore = [256]bool{'<': true, '=': true, '%': true, ':': true, '>': true, '-': true, '+': true, '&': true, '|': true}

// punctMoreX marks the bytes after '.', '/' or '%' that may make more of
// it than a one-byte punctuator: a number (".5"), a comment, a longer
// punctuator ("...", ".*", "/=", "%=", "%>", "%:") or a directive ("%:").
var punctMoreX = func() (t [256]bool) {
	for _, c := range []byte("0123456789.*/=>:") {
		t[c] = true
	}
	return t
}()

// numberMore marks the bytes after a number's digits and letters that may
// continue it (see number): '.', a digit separator, an exponent's sign.
var numberMore = [256]bool{'.': true, '\'': true, '+': true, '-': true}

// Classes of a token's first byte for run's inline cases; fSlow for the
// rest.
//
// fIdent and fDigit are 0 and 1, so that isNameClass is one comparison
// of the class itself (fc <= fDigit; with fIdent 1 the loops spent a
// DEC per byte on fc-fIdent): run's name and number loops test
// identifier bytes with fastClass too.
// fStop marks the bytes that make a name more than a plain identifier (a
// quote: a literal prefix; a non-ASCII byte); as a first byte it is
// fSlow's. The switch in run has seven cases: with eight the compiler
// makes a jump table, which was slower.
const (
	fIdent = iota // 0 (see above)
	fDigit
	fSlow
	fSpace
	fNewline
	fPunct
	fPunct1
	fPunctX
	fCR   // '\r': as a first byte fSlow's
	fStop // last (see run's name loop)
)

// isNameClass reports whether fc is the class of an identifier byte
// (letter, '_', '$', digit).
func isNameClass(fc uint8) bool { return fc-fIdent <= fDigit-fIdent }

var fastClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		default:
			t[c] = fSlow
		case byteClass[c] == bIdent:
			t[c] = fIdent
		case byteClass[c] == bSpace:
			t[c] = fSpace
		case c == '\n':
			t[c] = fNewline
		case byteClass[c] == bDigit:
			t[c] = fDigit
		case c == '"' || c == '\'' || c >= utf8.RuneSelf:
			t[c] = fStop
		case c == '\r':
			t[c] = fCR
		}
	}
	// Every punctuator but those starting with '.' (maybe a number), '/'
	// (maybe a comment), '%' and '#' (maybe a directive).
	for _, c := range []byte("*^=!+-&|<>:") {
		t[c] = fPunct
	}
	for _, c := range []byte("()[]{};,?~") {
		t[c] = fPunct1
	}
	for _, c := range []byte("./%") {
		t[c] = fPunctX
	}
	return t
}()

// Byte classes for the lexer's dispatch and identifier loops: one table
// load instead of a chain of comparisons per byte.
const (
	bOther = iota
	bIdent // letters, '_', '$'
	bDigit // '0'-'9'
	bSpace // ' ', '\t', '\f', '\v' ('\r' is handled apart: "\r\n" is a newline)
	bNonASCII
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
		}
	}
	return t
}()

// next lexes one token at l.pos.
func (l *lexer) next() {
	start := l.pos
	c := l.src[start]
	// The tokens run leaves to next are mostly directives, strings and
	// line comments: those go first, as trivia and other would lex them.
	switch c {
	case '#':
		if l.atLineStart() {
			l.directive()
			return
		}
	case '"':
		l.quoted('"', start)
		return
	case '/':
		if l.peekAt(start+1) == '/' {
			l.lineComment()
			return
		}
	}
	switch byteClass[c] {
	case bIdent:
		l.identOrPrefixedLiteral()
		return
	case bSpace:
		l.whitespace()
		return
	case bDigit:
		l.number()
		return
	}
	if !l.trivia(c, start) {
		l.other(c, start)
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
			i++ // the common case: one table load per byte
			continue
		}
		if c != '\r' || i+1 < len(src) && src[i+1] == '\n' {
			break // "\r\n" is a Newline token
		}
		i++
	}
	l.pos = i
	l.emit(Whitespace, start)
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
		j := bytes.IndexByte(src[i:], '\n')
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
	end := indexFrom(l.src, start+2, '*', '/')
	if end < 0 {
		l.pos = len(l.src)
		l.emit(BlockComment, start)
		l.errorf(start, l.pos, "PARSE001", "unterminated /* comment")
		return
	}
	l.pos = end + 2
	l.emit(BlockComment, start)
}

// indexFrom returns the index of the first "ab" pair at or after i, or -1.
func indexFrom(src []byte, i int, a, b byte) int {
	if i >= len(src) {
		return -1
	}
	if j := bytes.Index(src[i:], []byte{a, b}); j >= 0 {
		return i + j
	}
	return -1
}

func (l *lexer) identOrPrefixedLiteral() {
	start := l.pos
	l.pos = l.identEnd(start)
	if l.pos < len(l.src) && (l.src[l.pos] == '"' || l.src[l.pos] == '\'') {
		switch string(l.src[start:l.pos]) {
		case "u8", "u", "U", "L":
			l.quoted(l.src[l.pos], start)
			return
		case "R", "u8R", "uR", "UR", "LR":
			if l.src[l.pos] == '"' {
				l.rawString(start)
				return
			}
		}
	}
	l.emit(Identifier, start)
}

// identEnd returns the end of the identifier starting at i. Valid UTF-8
// sequences are identifier characters (C++ allows most of them); invalid
// bytes end the identifier and are reported by nonASCII.
func (l *lexer) identEnd(i int) int {
	src := l.src
	for i < len(src) {
		c := src[i]
		if identCharTab[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(src[i:])
			if r != utf8.RuneError {
				i += n
				continue
			}
		}
		break
	}
	return i
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

func hasPrefixAt(src []byte, i int, p []byte) bool {
	return i+len(p) <= len(src) && string(src[i:i+len(p)]) == string(p)
}

// nonASCII handles a byte >= 0x80 outside any literal: a valid UTF-8 letter
// starts an identifier; anything else is a run of Invalid bytes.
func (l *lexer) nonASCII() {
	start := l.pos
	if r, _ := utf8.DecodeRune(l.src[start:]); r != utf8.RuneError {
		l.pos = l.identEnd(start)
		l.emit(Identifier, start)
		return
	}
	for l.pos < len(l.src) && l.src[l.pos] >= utf8.RuneSelf {
		if r, _ := utf8.DecodeRune(l.src[l.pos:]); r != utf8.RuneError {
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

func isJunk(src []byte, i int) bool {
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
func punctLen(src []byte, i int) int {
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
