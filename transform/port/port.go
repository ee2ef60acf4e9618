// Package transform ports CUDA kernels to BaM: it chooses arrays, checks
// that every use of each can be rewritten, and produces byte-range edits on
// the original file (kernel parameters become bam::array, host allocation
// and copy idioms become runtime calls). See docs/port.md.
package port

import (
	"fmt"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
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
	// Exclude names kernels that must not be ported, with the reason: a
	// whole-program port (transform.RunProgram) found a site of the kernel
	// in another file that cannot be rewritten. Their chosen parameters
	// are reported as not ported, with that reason.
	Exclude map[string]string
	// SingleVersion compiles each ported kernel once, through bam::array
	// only (--single-version): no plain-pointer version behind
	// bam::by_placement (versions.go).
	SingleVersion bool
	// ODTWalks gives, per kernel, the byte offset of the walk loop the odt
	// rewrite tiles: that loop gets no array_refs (PORT057), so that odt
	// reads the edge array through its tile view. The pipeline sets it when
	// a first plan shows odt tiling a walk whose edge reads --ref had given
	// a ref.
	ODTWalks map[string]int
	// ProgramFiles are the files a whole-program port (transform.RunProgram)
	// plans and writes together, as absolute paths. A forwarding host
	// function declared in one of these headers can take a bam::array: its
	// declaration there is part of the program's text and changes with the
	// definition (forward.go). Elsewhere (one file, or a header the
	// program may only read) the header's other includers would break.
	ProgramFiles map[string]bool
}

// Result is the port's plan for one file. Its edits are on the original
// bytes and not applied yet: the pipeline (package transform) applies them
// once, together with those of the access-pattern rewrites.
type Result struct {
	Diags   []diag.Diagnostic
	Choices []Choice
	Edits   []edit.Edit
	// Planned is false when nothing was chosen or a diagnostic is an
	// error: then there are no edits and no later stage runs.
	Planned bool
	// Clones are the kernels' direct clones with the launches that pick
	// them (clones.go), not in Edits: the pipeline applies a kernel's
	// unless an access-pattern rewrite changes one of those launches.
	Clones []Clone
	// NoClones are the versioned kernels that got no direct clone, and
	// why (the pipeline reports them where a rewrite changes a launch).
	NoClones []NoClone
}

// Port plans the port of one parsed file; an is the analysis of the same
// file (analysis.AnalyzeDevice), made once by the caller. The error is
// reserved for bamgen bugs; problems with the input are diagnostics.
func Port(f *parse.File, an *analysis.File, opts Options) (*Result, error) {
	c := newPortCtx(f, an, opts)
	res := &Result{}
	chosen := c.selectArrays()
	c.dropHiddenUses(chosen)
	c.checkCounts(chosen)
	if diag.HasErrors(c.diags) || len(chosen) == 0 {
		res.Diags = c.diags
		return res, nil
	}
	c.plan(chosen)
	c.refs = planRefs(c)
	diags, edits := c.runRewrites()
	res.Diags = append(c.diags, diags...)
	res.Choices = c.choices
	res.Edits = edits
	res.Clones = c.clones
	res.NoClones = c.noClones
	res.Planned = true
	return res, nil
}

// Ported lists, per kernel, the parameters that became bam::array.
func (r *Result) Ported() map[string][]string {
	out := map[string][]string{}
	for _, ch := range r.Choices {
		if ch.Ported {
			out[ch.Kernel] = append(out[ch.Kernel], ch.Param)
		}
	}
	return out
}

// checkCounts reports --count names that match no chosen parameter and no
// host variable; a typo must not be ignored.
func (c *portCtx) checkCounts(chosen map[paramKey]string) {
	for name := range c.opts.Counts {
		if !c.countNameKnown(name, chosen) {
			c.addDiag(diag.Diagnostic{Severity: diag.Error, Code: CodeBadCount,
				Message: fmt.Sprintf("--count %s=...: %q is neither a chosen array nor a variable passed to one; chosen: %s", name, name, chosenList(chosen))})
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

func chosenList(chosen map[paramKey]string) string {
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
