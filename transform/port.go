// Package transform ports CUDA kernels to BaM: it chooses arrays, checks
// that every use of each can be rewritten, and produces byte-range edits on
// the original file (kernel parameters become bam::array, host allocation
// and copy idioms become runtime calls). See docs/port.md.
package transform

import (
	"bytes"
	"fmt"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// Options are the choices of one port.
type Options struct {
	Arrays []string          // --array NAME or KERNEL:NAME
	Auto   bool              // --auto
	Counts map[string]string // --count NAME=EXPR (kernel parameter, KERNEL:PARAM or host variable)
	Config *Config           // .bamgen.yaml, or nil
}

// Result is the outcome of porting one file.
type Result struct {
	Output  []byte // the ported file (the input when nothing was ported)
	Diags   []diag.Diagnostic
	Choices []Choice
	Changed bool
}

// Port ports one parsed file. The error is reserved for bamgen bugs (an
// invalid edit, a panic); problems with the input are diagnostics, and
// when any is an error Output is the unchanged input.
func Port(f *parse.File, opts Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("internal error while porting %s: %v", f.Src.Name, r)
		}
	}()
	c := newPortCtx(f, opts)
	res = &Result{Output: f.Src.Bytes}
	chosen := c.selectArrays()
	c.checkCounts(chosen)
	if diag.HasErrors(c.diags) || len(chosen) == 0 {
		res.Diags = c.diags
		return res, nil
	}
	c.plan(chosen)
	diags, edits := c.runRewrites()
	res.Diags = append(c.diags, diags...)
	res.Choices = c.choices
	out, err := Apply(f.Src.Bytes, edits, f.Src.Name)
	if err != nil {
		return nil, err
	}
	res.Output = out
	res.Changed = !bytes.Equal(out, f.Src.Bytes)
	return res, nil
}

// checkCounts reports --count names that match no chosen parameter and no
// host variable; a typo must not be ignored.
func (c *portCtx) checkCounts(chosen map[paramKey]string) {
	for name := range c.opts.Counts {
		if !c.countNameKnown(name, chosen) {
			c.addDiag(diag.Diagnostic{Severity: diag.Error, Code: CodeBadCount,
				Message: fmt.Sprintf("--count %s=...: %q is neither a chosen array nor a variable passed to one; chosen: %s", name, name, c.chosenList(chosen))})
		}
	}
}

func (c *portCtx) countNameKnown(name string, chosen map[paramKey]string) bool {
	for key := range chosen {
		p := key.fn.Params[key.idx].Name
		if name == p || name == key.fn.Name+":"+p {
			return true
		}
		for _, l := range c.launchesOf(key.fn) {
			if key.idx < len(l.expr.Args) && oneLine(c.text(l.expr.Args[key.idx])) == name {
				return true
			}
		}
	}
	return false
}

func (c *portCtx) chosenList(chosen map[paramKey]string) string {
	s := ""
	for _, k := range sortedKeys(chosen) {
		if s != "" {
			s += ", "
		}
		s += k.fn.Name + ":" + k.fn.Params[k.idx].Name
	}
	if s == "" {
		return "none"
	}
	return s
}

func diagAt(n parse.Node, code, msg string) diag.Diagnostic {
	return diag.Diagnostic{Pos: n.Pos(), End: n.End(), Severity: diag.Warning, Code: code, Message: msg}
}
