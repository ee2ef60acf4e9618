package port

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// emitRefs makes the edits of one loop: the block with the refs around
// it, and each scanning read through its ref. Everything stays on the
// loop's lines, so compiler messages keep pointing at the original lines.
func (c *refStage) emitRefs(l *refLoop) {
	decls := make([]string, len(l.arrays))
	var reads []string
	for i, a := range l.arrays {
		name := a.name(l.fn)
		elem := strings.TrimPrefix(bamType(c.portCtx, l.fn.Params[a.idx].Type), "bam::array")
		decls[i] = fmt.Sprintf("bam::array_ref%s %s_ref(%s);", elem, name, name)
		for _, s := range a.scans {
			c.refReadEdits(l.fn, a, s.acc)
		}
		reads = append(reads, fmt.Sprintf("%s (%s per iteration)", name, strideText(a.scans[0])))
	}
	c.openRefBlock(l.loop, "{ "+strings.Join(decls, " ")+" ")
	c.refEdit(l.loop.End(), l.loop.End(), " }")
	c.dropEdits(l)
	drops := ""
	if len(l.drops) > 0 {
		drops = fmt.Sprintf(", and drop() releases them before each of the %d statements in it that wait for other threads", len(l.drops))
	}
	c.refNote(l.loop, CodeRefAdded, "%s: this loop reads %s through bam::array_ref: each thread keeps its current line pinned "+
		"and reads it with plain loads until it moves on; the block around the loop releases the lines when it ends%s",
		l.fn.Name, strings.Join(reads, ", "), drops)
}

// dropEdits releases every ref's line before each waiting statement
// (refsync.go).
func (c *refStage) dropEdits(l *refLoop) {
	var text strings.Builder
	for _, a := range l.arrays {
		text.WriteString(a.name(l.fn) + "_ref.drop(); ")
	}
	for _, stmt := range l.drops {
		c.refEdit(stmt.Pos(), stmt.Pos(), text.String())
	}
}

// openRefBlock puts text before the loop. It replaces the `for` keyword
// rather than inserting before it, so that an access-pattern rewrite
// inserting at the same offset (the kernel body's `{`, when the loop
// follows it directly) keeps its place in front.
func (c *refStage) openRefBlock(loop *parse.ForStmt, text string) {
	if start := loop.Pos(); bytes.HasPrefix(c.src[start:], []byte("for")) {
		c.refEdit(start, start+3, text+"for")
		return
	}
	c.refEdit(loop.Pos(), loop.Pos(), text)
}

// refReadEdits turns one read into NAME_ref[index]. A plain p[i] only
// gets its name changed; a read another rewrite would have changed
// (p.read(i), *(p + i), an alias's p[q + (j)]) gets the ref's spelling at
// the same byte ranges, and that rewrite's edits are dropped.
func (c *refStage) refReadEdits(fn *parse.FuncDecl, a *refArray, acc *elemAccess) {
	ref := a.name(fn) + "_ref"
	open, close := c.useEditsOf(fn, a.idx, acc)
	switch {
	case open == nil:
		ix, ok := acc.node.(*parse.IndexExpr)
		if !ok {
			return // no use edit and not p[i]: left as the port wrote it (a plain read is always correct)
		}
		c.refEdit(ix.X.Pos(), ix.X.End(), strings.Replace(c.text(ix.X), a.name(fn), ref, 1))
	case close == nil:
		c.refEdit(open.Start, open.End, ref+"["+acc.zero+"]")
		c.refs.skip[[2]int{open.Start, open.End}] = true
	default:
		c.refEdit(open.Start, open.End, ref+"["+acc.prefix)
		c.refEdit(close.Start, close.End, acc.suffix+"]")
		c.refs.skip[[2]int{open.Start, open.End}] = true
		c.refs.skip[[2]int{close.Start, close.End}] = true
	}
}

// useEditsOf finds the use rewrite's edits of an access: the one
// replacing its start (through the index, or the whole access when there
// is no index) and the one replacing its end.
func (c *refStage) useEditsOf(fn *parse.FuncDecl, idx int, acc *elemAccess) (open, close *edit.Edit) {
	edits := c.analyzeParam(fn, idx).edits
	for i := range edits {
		e := &edits[i]
		switch {
		case acc.index == nil && e.Start == acc.node.Pos() && e.End == acc.node.End():
			return e, nil
		case acc.index != nil && e.Start == acc.node.Pos() && e.End == acc.index.Pos():
			open = e
		case acc.index != nil && e.Start == acc.index.End() && e.End == acc.node.End():
			close = e
		}
	}
	if open == nil && close != nil {
		panic(fmt.Sprintf("refs: access at %d has a closing edit but no opening one", acc.node.Pos()))
	}
	return open, close
}

func (c *refStage) refEdit(start, end int, text string) {
	c.refs.edits = append(c.refs.edits, edit.Edit{Start: start, End: end, New: text, Rewrite: Refs.String()})
}

func runRefs(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	if c.refs == nil {
		return nil, nil
	}
	return nil, c.refs.edits
}
