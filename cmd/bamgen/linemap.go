package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/bamgen/bamgen/udiff"
)

// withLineDirectives returns out (the port of orig, a file named name)
// with #line directives, so that compiler messages about the ported copy
// name the original file and line: one at the top, and one before each
// run of unchanged lines that follows lines bamgen inserted or removed.
// Lines bamgen inserted take the numbers that follow the line before them.
//
// A directive is never put right after a line ending in a backslash (it
// would join a macro definition). In a file with a raw string literal
// (R"...") only the top directive is written: a directive inside one
// would change the string.
func withLineDirectives(name string, orig, out []byte) []byte {
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name)
	directive := func(line int) string { return fmt.Sprintf("#line %d \"%s\"\n", line, quoted) }
	var b bytes.Buffer
	b.WriteString(directive(1))
	if bytes.Contains(out, []byte(`R"`)) {
		b.Write(out)
		return b.Bytes()
	}
	origOf := lineOrigins(orig, out)
	next := 1 // the line number the compiler gives the next line
	prevContinues := false
	for i, line := range udiff.SplitLines(out) {
		if n, ok := lineDirective(line); ok && !prevContinues {
			// The port keeps lines itself where it inserts some: name
			// the file as the other directives do.
			b.WriteString(directive(n))
			next = n
			continue
		}
		if o := origOf[i]; o != 0 && o != next && !prevContinues {
			b.WriteString(directive(o))
			next = o
		}
		b.WriteString(line)
		next++
		prevContinues = strings.HasSuffix(strings.TrimRight(line, "\r\n"), `\`)
	}
	return b.Bytes()
}

// lineDirective reads a "#line N ..." line.
func lineDirective(line string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "#line ")
	if !ok {
		return 0, false
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	return n, err == nil && n > 0
}

// lineOrigins maps each line of out (0-based) to its 1-based line in orig
// when it is an unchanged line, or 0 when bamgen inserted or changed it.
// It reads the unified diff that `bamgen port -d` prints.
func lineOrigins(orig, out []byte) []int {
	nOut := len(udiff.SplitLines(out))
	origOf := make([]int, nOut)
	o, n := 1, 1 // next line of orig and of out (1-based)
	equalUntil := func(newStart int) {
		for ; n < newStart && n <= nOut; o, n = o+1, n+1 {
			origOf[n-1] = o
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(udiff.Unified("a", "b", orig, out)))
	sc.Buffer(nil, 1<<30)
	header := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case header && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
		case strings.HasPrefix(line, "@@ "):
			header = false
			oldStart, newStart := hunkStarts(line)
			equalUntil(newStart)
			o = oldStart
		case strings.HasPrefix(line, " "):
			if n <= nOut {
				origOf[n-1] = o
			}
			o, n = o+1, n+1
		case strings.HasPrefix(line, "-"):
			o++
		case strings.HasPrefix(line, "+"):
			n++
		}
	}
	equalUntil(nOut + 1)
	return origOf
}

// hunkStarts reads "@@ -A[,L] +B[,M] @@" and returns the 1-based first
// line of each side; a side of length 0 names the line before it.
func hunkStarts(h string) (oldStart, newStart int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 1, 1
	}
	start := func(r string) int {
		s, l, hasLen := strings.Cut(r[1:], ",")
		v, _ := strconv.Atoi(s)
		if hasLen && l == "0" {
			v++
		}
		return v
	}
	return start(f[1]), start(f[2])
}
