package port

import (
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// reflow lays out text, the one-line replacement of statement s, over the
// lines s spanned: an argument of the new call goes on the line where the
// original argument it came from was (`cudaMemcpy(d, h,\n  n * sizeof(T),
// ...)` becomes `bam_rt.array_from_host<T>(h,\n  n)`), indented as that
// line was, and a statement the template adds after another
// (`{ a; b; }`) breaks the same way. Lines left over stay blank at the
// end, so the statement keeps its line count and the lines after it keep
// their numbers without a #line directive. A statement on one line is
// returned as it is.
func (c *portCtx) reflow(s parse.Stmt, text string) string {
	orig := c.text(s)
	n := strings.Count(orig, "\n")
	if n == 0 {
		return text
	}
	origLines := strings.Split(orig, "\n")
	args := c.argLines(s)
	var b strings.Builder
	cur, breaks := 0, 0
	for i, seg := range splitArgs(text) {
		if i > 0 && breaks < n {
			if l := matchLine(args, argText(seg), cur); l > cur {
				out := strings.TrimRight(b.String(), " ")
				b.Reset()
				b.WriteString(out)
				b.WriteString("\n")
				b.WriteString(leadingBlanksOf(origLines[l]))
				cur = l
				breaks++
			}
		}
		b.WriteString(seg)
	}
	return b.String() + strings.Repeat("\n", n-breaks)
}

// origArg is an argument of a call in the original statement and the
// line of the statement (0-based) it starts on.
type origArg struct {
	text string // on one line
	line int
}

// argLines lists the arguments of every call in s, in source order.
func (c *portCtx) argLines(s parse.Stmt) []origArg {
	var out []origArg
	base := s.Pos()
	parse.Inspect(s, func(n parse.Node) bool {
		if call, ok := n.(*parse.CallExpr); ok {
			for _, a := range call.Args {
				out = append(out, origArg{oneLine(c.text(a)), strings.Count(string(c.src[base:a.Pos()]), "\n")})
			}
		}
		return true
	})
	return out
}

// matchLine is the line of the original argument seg came from: one
// equal to it, else the shortest one that holds it as a whole word, else
// one that seg holds. Lines never go back up (from, the current line, is
// the least); with no match the segment stays on the current line.
func matchLine(args []origArg, seg string, from int) int {
	if seg == "" {
		return from
	}
	best, bestRank, bestLen := -1, 4, 0
	for _, a := range args {
		rank := 3
		switch {
		case a.text == seg:
			rank = 0
		case containsWord(a.text, seg):
			rank = 1
		case containsWord(seg, a.text):
			rank = 2
		}
		if rank < bestRank || rank == bestRank && rank == 1 && len(a.text) < bestLen {
			best, bestRank, bestLen = a.line, rank, len(a.text)
		}
	}
	if best < from {
		return from
	}
	return best
}

// splitArgs cuts text after the opening parenthesis of a call of several
// arguments at the outermost parentheses of a statement, after each of
// its argument separators (`, `) and after each statement (`; `): the
// places a line may break. Joined, the parts are text.
func splitArgs(text string) []string {
	var out []string
	depth, start := 0, 0
	eachCodeByte(text, func(i int) int {
		switch ch := text[i]; {
		case ch == '(' && depth == 0 && hasTopComma(text[i:]):
			// before the first argument of a call of several
			out = append(out, text[start:i+1])
			start = i + 1
			depth++
		case ch == '(' || ch == '[':
			depth++
		case ch == ')' || ch == ']':
			depth--
		case (ch == ',' && depth == 1 || ch == ';' && depth == 0) && i+1 < len(text) && text[i+1] == ' ':
			out = append(out, text[start:i+2])
			start = i + 2
			return 1
		}
		return 0
	})
	return append(out, text[start:])
}

// eachCodeByte calls f with the index of each byte of text outside string
// and character literals, in order; f returns how many of the following
// bytes to skip, or -1 to stop.
func eachCodeByte(text string, f func(i int) int) {
	var quote byte
	for i := 0; i < len(text); i++ {
		switch ch := text[i]; {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		default:
			n := f(i)
			if n < 0 {
				return
			}
			i += n
		}
	}
}

// argText is a segment without its separator, its statement's end and the
// closing parentheses of calls it does not open.
func argText(seg string) string {
	s := strings.TrimSpace(seg)
	s = strings.TrimLeft(s, "{ ")
	for {
		t := strings.TrimRight(s, ",; }")
		if strings.HasSuffix(t, ")") && strings.Count(t, ")") > strings.Count(t, "(") {
			t = t[:len(t)-1]
		}
		if t == s {
			return s
		}
		s = t
	}
}

// containsWord reports whether s holds w, not as part of a longer name or
// number.
func containsWord(s, w string) bool {
	for at := 0; ; {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		i += at
		before := i == 0 || !isWordByte(s[i-1])
		after := i+len(w) == len(s) || !isWordByte(s[i+len(w)])
		if before && after {
			return true
		}
		at = i + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func leadingBlanksOf(line string) string {
	return line[:len(line)-len(strings.TrimLeft(line, " \t"))]
}

// hasTopComma: the parenthesised group text starts with holds a comma of
// its own (not one of a nested group).
func hasTopComma(text string) bool {
	depth, found := 0, false
	eachCodeByte(text, func(i int) int {
		switch text[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return -1
			}
		case ',':
			if depth == 1 {
				found = true
				return -1
			}
		}
		return 0
	})
	return found
}
