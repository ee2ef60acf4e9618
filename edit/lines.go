package edit

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Lines is the line map of an output of ApplyLines: Lines[i] says which
// original line output line i+1 shows.
//
//	n > 0      original line n (unchanged, or changed in place)
//	0          a line bamgen inserted, or an original line that starts
//	           inside a block comment or raw string literal, where no
//	           #line directive may go
//	Directive  a `#line` directive Apply wrote
//
// Lines an edit inserts as whole lines (an insertion at the start of a
// line whose text ends with a newline) are inserted lines (0), except the
// first line of an edit that Follows (the line before). A
// replacement that keeps the line count maps its lines one to one onto
// the lines it replaced; the first line of an edit's text takes the line
// the edit starts on, its last line the line the edit ends on, and the
// lines in between the replaced lines in order while there are any (then
// they are inserted lines). A replacement that Repeats (a statement
// copied into the line it starts on) shows, on its lines between the
// first and the last, the original lines after the one holding RepeatsAt.
type Lines []int

// Directive marks a `#line` line in Lines.
const Directive = -1

// lineBuilder writes an output and the origin of each of its lines.
type lineBuilder struct {
	src     []byte
	starts  []int  // offset of each original line
	safe    []bool // by 1-based original line: a directive may precede it
	out     bytes.Buffer
	origins []int
}

// lineOf is the 1-based original line holding offset off.
func (b *lineBuilder) lineOf(off int) int {
	return sort.Search(len(b.starts), func(i int) bool { return b.starts[i] > off })
}

func (b *lineBuilder) atLineStart() bool {
	n := b.out.Len()
	return n == 0 || b.out.Bytes()[n-1] == '\n'
}

func (b *lineBuilder) origin(line int) int {
	if b.safe == nil {
		b.safe = directiveSafe(b.src, b.starts)
	}
	if line > 0 && line < len(b.safe) && !b.safe[line] {
		return 0
	}
	return line
}

// copySrc copies src[from:to] unchanged.
func (b *lineBuilder) copySrc(from, to int) {
	for p := from; p < to; {
		if b.atLineStart() {
			b.origins = append(b.origins, b.origin(b.lineOf(p)))
		}
		q := bytes.IndexByte(b.src[p:to], '\n')
		if q < 0 {
			b.out.Write(b.src[p:to])
			return
		}
		b.out.Write(b.src[p : p+q+1])
		p += q + 1
	}
}

// insert writes e's text in place of src[e.Start:e.End].
func (b *lineBuilder) insert(e Edit) {
	first, last := b.lineOf(e.Start), b.lineOf(e.End)
	k := strings.Count(e.New, "\n")
	text := e.New
	// Whole lines inserted before a line (a statement on a line of its
	// own, the runtime include) show no original line.
	whole := e.Start == e.End && strings.HasSuffix(text, "\n") && (e.Start == 0 || b.src[e.Start-1] == '\n')
	for j := 0; text != ""; j++ {
		if b.atLineStart() {
			o := 0
			switch {
			case whole && e.Repeats:
				if r := b.lineOf(e.RepeatsAt) + j; r < len(b.starts) {
					o = r
				}
			case whole:
				if e.Follows && j == 0 {
					o = first - 1
				}
			case j == 0:
				o = first
			case j == k:
				o = last
			case e.Repeats:
				if r := b.lineOf(e.RepeatsAt) + j; r < len(b.starts) {
					o = r
				}
			case first+j < last:
				o = first + j
			}
			b.origins = append(b.origins, b.origin(o))
		}
		q := strings.IndexByte(text, '\n')
		if q < 0 {
			b.out.WriteString(text)
			return
		}
		b.out.WriteString(text[:q+1])
		text = text[q+1:]
	}
}

// lineStarts returns the offset of each line of src (and of the empty
// line after a final newline, where an insertion at the end goes).
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Directives returns out (an output of ApplyLines, whose line map is
// lines; nil for an unchanged file) with `#line` directives naming file
// name: one at the top and one before every original line the compiler
// would otherwise misnumber. The directives Apply wrote are replaced, so
// the result holds each directive once.
func Directives(out []byte, lines Lines, name string) []byte {
	if lines == nil {
		n := len(splitLines(out))
		lines = make(Lines, n)
		for i := range lines {
			lines[i] = i + 1
		}
	}
	if len(out) == 0 {
		return []byte(lineDirective(1, name))
	}
	res, _ := withDirectives(out, lines, name, true)
	return res
}

// withDirectives writes out with a `#line` directive before each line
// whose origin is not the number the compiler gives it (never after a
// line ending in a backslash: it would join a macro definition or a
// string), dropping the directives already in it (origin Directive).
// top adds one for line 1.
func withDirectives(out []byte, origins Lines, name string, top bool) ([]byte, Lines) {
	var res bytes.Buffer
	res.Grow(len(out) + 64)
	var lm Lines
	next := 1 // the number the compiler gives the next line
	prevContinues := false
	for i, line := range splitLines(out) {
		o := 0
		if i < len(origins) {
			o = origins[i]
		}
		if o == Directive {
			continue
		}
		if top && o <= 0 {
			res.WriteString(lineDirective(1, name))
			lm = append(lm, Directive)
		}
		if o > 0 && (o != next || top) && !prevContinues {
			res.WriteString(lineDirective(o, name))
			lm = append(lm, Directive)
			next = o
		}
		top = false
		res.WriteString(line)
		lm = append(lm, o)
		next++
		prevContinues = strings.HasSuffix(strings.TrimRight(line, "\r\n"), `\`)
	}
	return res.Bytes(), lm
}

// lineDirective is `#line N "name"` and its newline.
func lineDirective(n int, name string) string {
	return fmt.Sprintf("#line %d \"%s\"\n", n, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name))
}

// splitLines splits b after each newline; a last line without one is kept.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// directiveSafe reports, by 1-based line of src, whether a `#line`
// directive may be put before the line: it does not start inside a block
// comment, a raw string literal or a line continued by a backslash. (The
// edit package does not see tokens, so this is a small scan of its own:
// comments, string and character literals, raw strings.)
func directiveSafe(src []byte, starts []int) []bool {
	safe := make([]bool, len(starts)+1)
	for i := range safe {
		safe[i] = true
	}
	unsafeFrom := func(from, to int) { // lines starting in src(from, to)
		for p := from; p < to; p++ {
			if src[p] == '\n' && p+1 < len(src) {
				safe[lineIndex(starts, p+1)] = false
			}
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			unsafeFrom(i+1, i+2)
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			j := i
			for j < len(src) && (src[j] != '\n' || src[j-1] == '\\') {
				j++
			}
			unsafeFrom(i, j)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := bytes.Index(src[i+2:], []byte("*/"))
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			unsafeFrom(i, end)
			i = end - 1
		case c == 'R' && i+1 < len(src) && src[i+1] == '"' && rawPrefixOK(src, i):
			open := bytes.IndexByte(src[i+2:], '(')
			if open < 0 || open > 16 {
				continue
			}
			delim := ")" + string(src[i+2:i+2+open]) + `"`
			j := bytes.Index(src[i+3+open:], []byte(delim))
			end := len(src)
			if j >= 0 {
				end = i + 3 + open + j + len(delim)
			}
			unsafeFrom(i, end)
			i = end - 1
		case c == '"' || c == '\'' && !(i > 0 && isIdentByte(src[i-1])):
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(src) {
				j = len(src)
			}
			unsafeFrom(i, j)
			i = j
		}
	}
	return safe
}

// lineIndex is the 1-based line starting at offset off.
func lineIndex(starts []int, off int) int {
	return sort.SearchInts(starts, off) + 1
}

// rawPrefixOK: the R at i begins a raw string literal (R"...", u8R"...",
// uR, UR, LR), not the end of an identifier.
func rawPrefixOK(src []byte, i int) bool {
	j := i
	for j > 0 && isIdentByte(src[j-1]) {
		j--
	}
	switch string(src[j:i]) {
	case "", "u8", "u", "U", "L":
		return true
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
