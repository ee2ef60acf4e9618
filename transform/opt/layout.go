package opt

import (
	"strings"
)

// The rewrites wrap a kernel's body in a lambda and call a driver after
// it. The code they add goes on lines of its own, indented like the body
// (the indent unit is the file's), and the body's lines stay as they were.
// edit.Apply numbers the lines after each insertion with a `#line`
// directive, so compiler messages about the body still name its original
// lines.

// codeLine is one line of inserted code, depth indent units deeper than
// the body's statements.
type codeLine struct {
	depth int
	text  string
}

// wrapBody inserts open after the body's `{` and close before its `}`,
// each on lines of their own.
func (r *rewriter) wrapBody(open, close []codeLine, kind Kind) {
	src := r.file.Parse.Src.Bytes
	body := r.fn.Decl.Body
	lb, rb := body.Pos(), body.End()-1
	indent, unit := r.bodyIndent(), indentUnit(src)
	nl := "\n"
	if e := lineEndAt(src, lb); e >= 2 && src[e-2] == '\r' {
		nl = "\r\n" // the file's line ends
	}
	render := func(lines []codeLine) string {
		var b strings.Builder
		for _, l := range lines {
			for _, part := range strings.Split(l.text, "\n") {
				b.WriteString(indent + strings.Repeat(unit, l.depth) + strings.TrimSpace(part) + nl)
			}
		}
		return b.String()
	}
	// After the `{`: on the next line when nothing but a comment follows
	// it, else the rest of the line moves to a line of its own.
	rest := lb + 1
	for rest < len(src) && (src[rest] == ' ' || src[rest] == '\t' || src[rest] == '\r') {
		rest++
	}
	if rest >= len(src) || src[rest] == '\n' || hasPrefixAt(src, rest, "//") {
		at := lineEndAt(src, lb)
		r.edit(at, at, render(open), kind)
	} else {
		r.edit(lb+1, rest, nl+render(open)+indent, kind)
	}
	// Before the `}`: from the start of its line when only blanks precede
	// it, else after the last code before it, on new lines.
	start := lineStartAt(src, rb)
	if strings.TrimSpace(string(src[start:rb])) == "" {
		r.edit(start, start, render(close), kind)
	} else {
		last := rb
		for last > lb+1 && (src[last-1] == ' ' || src[last-1] == '\t') {
			last--
		}
		r.edit(last, rb, nl+render(close)+leadingBlanks(src, lineStartAt(src, lb)), kind)
	}
}

// bodyIndent is the indentation of the body's first statement when it
// starts a line, else the `{` line's indentation and one unit.
func (r *rewriter) bodyIndent() string {
	src := r.file.Parse.Src.Bytes
	body := r.fn.Decl.Body
	if len(body.Stmts) > 0 {
		p := body.Stmts[0].Pos()
		s := lineStartAt(src, p)
		if strings.TrimSpace(string(src[s:p])) == "" && s > body.Pos() {
			return string(src[s:p])
		}
	}
	return leadingBlanks(src, lineStartAt(src, body.Pos())) + indentUnit(src)
}

// indentUnit is the step by which the file indents nested code: a tab when
// most indented lines start with one, else the most common increase in
// leading spaces from one line to the next (4 when none is found).
func indentUnit(src []byte) string {
	tabs, spaces := 0, 0
	steps := map[int]int{}
	prev := 0
	for _, line := range strings.Split(string(src), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasPrefix(line, "\t") {
			tabs++
			continue
		}
		n := len(line) - len(strings.TrimLeft(line, " "))
		if n > 0 {
			spaces++
		}
		if d := n - prev; d >= 2 && d <= 8 {
			steps[d]++
		}
		prev = n
	}
	if tabs > spaces {
		return "\t"
	}
	best, count := 4, 0
	for d := 2; d <= 8; d++ {
		if steps[d] > count {
			best, count = d, steps[d]
		}
	}
	return strings.Repeat(" ", best)
}

func hasPrefixAt(src []byte, at int, p string) bool {
	return strings.HasPrefix(string(src[at:min(len(src), at+len(p))]), p)
}

// lineStartAt is the offset of the start of the line holding off.
func lineStartAt(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

// lineEndAt is the offset just past the newline ending the line of off.
func lineEndAt(src []byte, off int) int {
	for off < len(src) && src[off] != '\n' {
		off++
	}
	if off < len(src) {
		off++
	}
	return off
}

// leadingBlanks is the run of spaces and tabs at start.
func leadingBlanks(src []byte, start int) string {
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}
