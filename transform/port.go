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
	// Ref reads read-only ported arrays through bam::array_ref in loops
	// where each thread scans them sequentially (--ref; see ref.go).
	Ref bool
	// Opt, when set, runs the access-pattern rewrites (transform/opt) on the
	// same original bytes: it gets the ported parameters of each kernel and
	// the text each launch argument will have after the port, and returns
	// more edits, applied together with the port's own.
	Opt OptHook
}

// OptHook is the signature of Options.Opt (a hook, because transform/opt
// builds on this package).
// edited reports whether the port's own edits change bytes in [start, end).
type OptHook func(ported map[string][]string, launchArg func(l *parse.LaunchExpr, i int) string,
	edited func(start, end int) bool) ([]diag.Diagnostic, []Edit)

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
	c.dropHiddenUses(chosen)
	c.checkCounts(chosen)
	if diag.HasErrors(c.diags) || len(chosen) == 0 {
		res.Diags = c.diags
		return res, nil
	}
	c.plan(chosen)
	c.planRefs()
	diags, edits := c.runRewrites()
	if opts.Opt != nil {
		od, oe := opts.Opt(portedParams(c.choices), func(l *parse.LaunchExpr, i int) string {
			return applyWithin(f.Src.Bytes, edits, l.Args[i])
		}, func(start, end int) bool { return overlapsAny(edits, start, end) })
		diags, edits = append(diags, od...), append(edits, oe...)
	}
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

// portedParams lists, per kernel, the parameters that became bam::array.
func portedParams(choices []Choice) map[string][]string {
	out := map[string][]string{}
	for _, ch := range choices {
		if ch.Ported {
			out[ch.Kernel] = append(out[ch.Kernel], ch.Param)
		}
	}
	return out
}

// overlapsAny reports whether an edit changes bytes in [start, end) (an
// insertion counts when it falls strictly inside).
func overlapsAny(edits []Edit, start, end int) bool {
	for _, e := range edits {
		if e.Start < end && start < e.End || e.Start == e.End && start < e.Start && e.Start < end {
			return true
		}
	}
	return false
}

// applyWithin returns the text of n after the edits that fall inside it.
func applyWithin(src []byte, edits []Edit, n parse.Node) string {
	var inner []Edit
	for _, e := range edits {
		if e.Start >= n.Pos() && e.End <= n.End() && !(e.Start == e.End && (e.Start == n.Pos() || e.Start == n.End())) {
			inner = append(inner, Edit{Start: e.Start - n.Pos(), End: e.End - n.Pos(), New: e.New, Rewrite: e.Rewrite})
		}
	}
	out, err := Apply(src[n.Pos():n.End()], inner, "")
	if err != nil {
		return string(src[n.Pos():n.End()])
	}
	return string(out)
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
			if key.idx < len(l.args) && oneLine(c.text(l.args[key.idx])) == name {
				return true
			}
			if id := argIdent(l, key.idx); id != nil && id.Name == name {
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
