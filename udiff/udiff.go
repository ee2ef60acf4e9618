// Package udiff prints unified diffs (the format of diff -u and patch(1)).
// It is a leaf: it imports only the standard library.
package udiff

import (
	"bytes"
	"fmt"
)

// Unified returns a unified diff (3 lines of context) turning a into b,
// or nil when they are equal.
//
// Written here rather than imported: the standard library's diff is
// internal, x/tools' is internal too, and a port changes few lines in large
// files, which the O((N+M)·D) Myers algorithm below handles in linear time
// for small D without any dependency.
func Unified(aName, bName string, a, b []byte) []byte {
	if bytes.Equal(a, b) {
		return nil
	}
	al, bl := SplitLines(a), SplitLines(b)
	ops := myers(al, bl)
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for _, h := range hunks(ops, 3) {
		writeHunk(&out, h, al, bl)
	}
	return out.Bytes()
}

// SplitLines splits after each newline, keeping it; a last line without
// one is kept. The diff compares these lines (edit.Lines counts lines
// the same way).
func SplitLines(b []byte) []string {
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

// diffOp is one line of the edit script: ' ' keep, '-' delete, '+' insert;
// a and b are line indexes in the old and new file.
type diffOp struct {
	kind byte
	a, b int
}

// myers computes a shortest edit script between two line lists.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	max := n + m
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[max+k-1] < v[max+k+1]) {
				x = v[max+k+1]
			} else {
				x = v[max+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[max+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d)
			}
		}
	}
	return nil
}

// backtrack walks the saved frontiers back from (n, m) to (0, 0).
func backtrack(trace [][]int, a, b []string, dEnd int) []diffOp {
	n, m := len(a), len(b)
	max := n + m
	x, y := n, m
	var rev []diffOp
	for d := dEnd; d >= 0; d-- {
		vd := trace[d] // the frontier before step d
		k := x - y
		var prevK int
		if k == -d || (k != d && vd[max+k-1] < vd[max+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := vd[max+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, diffOp{' ', x, y})
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, diffOp{'+', x, y - 1})
			} else {
				rev = append(rev, diffOp{'-', x - 1, y})
			}
			x, y = prevX, prevY
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// hunks groups the script into ranges of changes with ctx lines around.
func hunks(ops []diffOp, ctx int) [][]diffOp {
	var out [][]diffOp
	start, lastChange := -1, -1
	for i, op := range ops {
		if op.kind == ' ' {
			continue
		}
		if start >= 0 && i-lastChange > 2*ctx {
			out = append(out, ops[start:min(len(ops), lastChange+ctx+1)])
			start = -1
		}
		if start < 0 {
			start = max(0, i-ctx)
		}
		lastChange = i
	}
	if start >= 0 {
		out = append(out, ops[start:min(len(ops), lastChange+ctx+1)])
	}
	return out
}

func writeHunk(out *bytes.Buffer, h []diffOp, a, b []string) {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, op := range h {
		if op.kind != '+' {
			if aStart < 0 {
				aStart = op.a
			}
			aLen++
		}
		if op.kind != '-' {
			if bStart < 0 {
				bStart = op.b
			}
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen, h[0].a), hunkRange(bStart, bLen, h[0].b))
	for _, op := range h {
		line := ""
		switch op.kind {
		case '+':
			line = b[op.b]
		default:
			line = a[op.a]
		}
		out.WriteByte(op.kind)
		out.WriteString(line)
		if len(line) == 0 || line[len(line)-1] != '\n' {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange renders "start,len" with 1-based start (len 0 names the line before).
func hunkRange(start, n, fallback int) string {
	if start < 0 {
		start = fallback
	}
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
