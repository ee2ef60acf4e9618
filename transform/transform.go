// Package transform is bamgen's pipeline: it runs one file through every
// stage, in one direction, with typed hand-offs between them:
//
//	parse.ParseFile            the lossless tree
//	analysis.AnalyzeDevice     once per file; both planners read it
//	port.Port                  plans the port: choices, diagnostics, edits
//	opt.Run                    plans the access-pattern rewrites, given the
//	                           port's decisions as data (opt.Ported)
//	edit.Apply                 applies every edit once, on the original bytes
//
// No stage calls back into another; the CLI (cmd/bamgen) only turns flags
// into Options and prints the Result. See docs/architecture.md.
package transform

import (
	"bytes"
	"fmt"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/opt"
	"github.com/bamgen/bamgen/transform/port"
)

// Options are every choice of one run of the pipeline.
type Options struct {
	Port port.Options
	// Opt selects an access-pattern rewrite (--opt); nil runs none.
	Opt *opt.Options
	// FindConfig reads the .bamgen.yaml next to the input when
	// Port.Config is nil (the CLI sets it unless --config was given).
	FindConfig bool
}

// Result is the outcome for one file.
type Result struct {
	Src    *diag.Source // the input, for printing diagnostics
	Output []byte       // the ported file (the input when nothing was ported)
	// Lines maps each line of Output to the input line it shows (see
	// edit.Lines); nil when Output is the input.
	Lines   edit.Lines
	Diags   []diag.Diagnostic
	Choices []port.Choice
	Changed bool
}

// Run parses src (named name) and runs it through the pipeline. The error
// is reserved for bamgen bugs (an invalid edit, a panic) and for an
// unreadable config; problems with the input are diagnostics, and when any
// is an error Output is the unchanged input.
func Run(name string, src []byte, opts Options) (*Result, error) {
	if opts.FindConfig && opts.Port.Config == nil {
		cfg, err := port.FindConfig(name)
		if err != nil {
			return nil, err
		}
		opts.Port.Config = cfg
	}
	pf := parse.ParseFile(name, src)
	res, err := RunParsed(pf, opts)
	if err != nil {
		return nil, err
	}
	res.Diags = append(portRelevantParseDiags(pf, res.Choices), res.Diags...)
	if diag.HasErrors(res.Diags) {
		// A parser error inside a ported function: no partial output,
		// as for the port's own errors (found by FuzzPort).
		res.Output, res.Lines, res.Changed = pf.Src.Bytes, nil, false
	}
	return res, nil
}

// RunParsed runs an already parsed file through analysis, planning and
// Apply; it does not modify pf, and it reports no parser diagnostics (Run
// adds those that matter).
func RunParsed(pf *parse.File, opts Options) (*Result, error) {
	return runSeeingWrappers(pf, opts)
}

// runPlanned is RunParsed that also returns the edits it applied.
func runPlanned(pf *parse.File, opts Options) (res *Result, edits []edit.Edit, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, edits, err = nil, nil, fmt.Errorf("internal error while porting %s: %v", pf.Src.Name, r)
		}
	}()
	res, edits, err = planParsed(pf, opts)
	if err != nil || edits == nil {
		return res, nil, err
	}
	out, lines, err := edit.ApplyLines(pf.Src.Bytes, edits, pf.Src.Name)
	if err != nil {
		return nil, nil, err
	}
	res.Output, res.Lines = out, lines
	res.Changed = !bytes.Equal(out, pf.Src.Bytes)
	return res, edits, nil
}

// planParsed runs analysis, the port and the rewrites on pf and returns
// their diagnostics and choices (Output still the input) and every edit,
// not applied; edits is nil when nothing was planned.
func planParsed(pf *parse.File, opts Options) (*Result, []edit.Edit, error) {
	res := &Result{Src: pf.Src, Output: pf.Src.Bytes}
	an := analyze(pf)
	planned, err := port.Port(pf, an, opts.Port)
	if err != nil {
		return nil, nil, err
	}
	res.Diags, res.Choices = planned.Diags, planned.Choices
	if !planned.Planned {
		return res, nil, nil
	}
	edits := append([]edit.Edit{}, planned.Edits...)
	rewritten := map[string]opt.Kind{}
	var rwEdits []edit.Edit
	if opts.Opt != nil {
		rw := opt.Run(an, *opts.Opt, handOff(pf, an, planned))
		if len(rw.HiddenWalks) > 0 && opts.Port.ODTWalks == nil {
			// odt reads the edge array through its tile view only where the
			// port left its reads alone: plan once more without refs in
			// those walks (PORT057).
			again := opts
			again.Port.ODTWalks = rw.HiddenWalks
			return planParsed(pf, again)
		}
		res.Diags = append(res.Diags, rw.Diags...)
		edits = append(edits, rw.Edits...)
		edits = append(edits, prototypeParams(pf, rw.Edits)...)
		rewritten = rw.Applied
		rwEdits = rw.Edits
	}
	spans := edit.Spans(rwEdits)
	for _, cl := range planned.Clones {
		kind, ok := rewritten[cl.Kernel]
		if ok && kind == opt.ODT && odtBeatsOriginal(an, cl.Kernel) {
			// No guard: odt runs whatever the placement (see odtBeatsOriginal).
			res.Diags = append(res.Diags, diag.Diagnostic{Pos: cl.Def.Start, End: cl.Def.Start, Severity: diag.Note, Code: port.CodeNoDirectClone,
				Message: fmt.Sprintf("%s: no direct clone: odt runs also when every array is in GPU memory or zero-copy host memory, "+
					"since it hands out only the frontier's vertices where the original's threads each test one "+
					"(measured 1-10x faster than the original there for thread-per-vertex walks)", cl.Kernel)})
			continue
		}
		e, notes := cloneEdits(cl, spans, kind)
		edits = append(edits, e...)
		res.Diags = append(res.Diags, notes...)
	}
	for _, nc := range planned.NoClones {
		if kind, ok := rewritten[nc.Kernel]; ok && launchChanged(an, nc.Kernel, spans) {
			res.Diags = append(res.Diags, diag.Diagnostic{Pos: nc.Pos, End: nc.End, Severity: diag.Note, Code: port.CodeNoDirectClone,
				Message: fmt.Sprintf("%s: no direct clone (%s), so its launches run the %s version also when every array is in GPU memory "+
					"or zero-copy host memory", nc.Kernel, nc.Why, kind)})
		}
	}
	return res, edits, nil
}

// odtBeatsOriginal reports whether odt's version of kernel is kept even
// when every array is direct. odt launches one work item per frontier
// vertex instead of one thread per vertex; measured on an H200 (matrix,
// data in GPU memory) a thread-per-vertex walk (one thread walks a
// vertex's list) ran 2-5x faster under odt than as written: bfs_thread
// 0.21x, sssp 0.20x of the original; in zero-copy host memory 0.09-0.10x.
// A warp-per-vertex walk (lanes stride the list) already reads the list
// coalesced, and odt went either way: bfs_warp 2.46x (many levels, small
// frontiers: a plan per level), cc 0.69x (few sweeps over skewed degrees).
// Warp walks keep the guarded clone, which is never far from the original
// (cc 1.02x, bfs_warp 0.95x): a safe choice where bamgen cannot tell.
func odtBeatsOriginal(an *analysis.File, kernel string) bool {
	for _, fn := range an.Functions {
		if fn.Decl.Name != kernel || fn.Kind != analysis.Kernel || fn.Decl.Body == nil {
			continue
		}
		w := analysis.FindCSRWalk(fn, analysis.KernelMapping(fn))
		return w != nil && !w.WarpForm
	}
	return false
}

// cloneEdits are the edits of a kernel's direct clone (port.Clone) given
// the rewrites' spans. The clone is the kernel as ported, without the
// rewrite: same results, the original's work assignment and registers,
// which is what data in GPU memory wants. A launch no rewrite changes picks
// it (claware, transpose and coarsen change only the body); a launch a
// rewrite changes (odt adds an argument and sizes the grid and block) is
// guarded: the clone's launch as the launch was written when every array
// is direct, the rewritten launch otherwise. A changed launch that cannot
// be guarded always runs the rewritten kernel; a note says why. No launch
// choosing the clone: no clone.
func cloneEdits(cl port.Clone, spans []edit.Span, kind opt.Kind) ([]edit.Edit, []diag.Diagnostic) {
	var out []edit.Edit
	var notes []diag.Diagnostic
	for _, l := range cl.Launches {
		if !edit.Touches(spans, l.Expr.Pos(), l.Expr.End()) {
			if l.Pick != nil {
				out = append(out, *l.Pick)
			}
			continue
		}
		why := l.NoGuard
		for _, g := range l.Guard {
			if why == "" && g.Start != g.End && edit.Touches(spans, g.Start, g.End) {
				why = "the " + kind.String() + " rewrite changes the launch's kernel name or its `;`"
			}
		}
		if why != "" {
			notes = append(notes, diag.Diagnostic{Pos: l.Expr.Pos(), End: l.Expr.End(), Severity: diag.Note, Code: port.CodeNoDirectClone,
				Message: fmt.Sprintf("%s: this launch runs the %s version also when every array is in GPU memory or zero-copy host memory: "+
					"it cannot choose the direct clone %s_bam_direct because %s", cl.Kernel, kind, cl.Kernel, why)})
			continue
		}
		out = append(out, l.Guard...)
	}
	if len(out) == 0 {
		return nil, notes
	}
	return append([]edit.Edit{cl.Def}, out...), notes
}

// launchChanged reports whether a rewrite's edits change a <<<>>> launch
// of kernel.
func launchChanged(an *analysis.File, kernel string, spans []edit.Span) bool {
	for _, l := range an.Launches {
		if l.Kernel == kernel && l.Expr != nil && edit.Touches(spans, l.Expr.Pos(), l.Expr.End()) {
			return true
		}
	}
	return false
}

// prototypeParams repeats, on every prototype of a kernel, the parameters
// a rewrite appends to the kernel's definition (odt's plan): a launch that
// sees only the prototype (in a header, or before the definition) must
// agree with the definition. The port itself rewrites prototypes with the
// parameter types (port.runKernelParams).
func prototypeParams(pf *parse.File, edits []edit.Edit) []edit.Edit {
	var out []edit.Edit
	funcs := pf.Funcs()
	for _, e := range edits {
		if e.Start != e.End {
			continue
		}
		for _, def := range funcs {
			if def.Body == nil || !def.IsKernel() || e.Start != def.ParamsSpan.End()-1 {
				continue
			}
			for _, proto := range funcs {
				if proto.Body == nil && proto.Name == def.Name && len(proto.Params) == len(def.Params) && proto.ParamsSpan.End() > 0 {
					p := e
					p.Start, p.End = proto.ParamsSpan.End()-1, proto.ParamsSpan.End()-1
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// analyze is the one place the pipeline analyses a file.
func analyze(pf *parse.File) *analysis.File { return analysis.AnalyzeDevice(pf) }

// handOff turns the port's plan into what the rewrites need to know of it:
// the ported parameters, the text each <<<>>> launch argument will have
// after the port, and the byte ranges the port edits.
func handOff(pf *parse.File, an *analysis.File, planned *port.Result) opt.Ported {
	h := opt.Ported{Params: planned.Ported(), LaunchArgs: map[*parse.LaunchExpr][]string{}, Edited: edit.Spans(planned.Edits)}
	for _, l := range an.Launches {
		if l.Expr == nil || len(h.Params[l.Kernel]) == 0 {
			continue
		}
		args := make([]string, len(l.Expr.Args))
		for i, a := range l.Expr.Args {
			args[i] = edit.Within(pf.Src.Bytes, planned.Edits, a.Pos(), a.End())
		}
		h.LaunchArgs[l.Expr] = args
	}
	return h
}

// portRelevantParseDiags keeps parser diagnostics inside functions the port
// touches: an unparsed region elsewhere does not affect the result, and
// one inside a ported kernel has already refused the arrays it hides.
func portRelevantParseDiags(pf *parse.File, choices []port.Choice) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range pf.Diags {
		for _, ch := range choices {
			if fn := findFunc(pf, ch.Kernel); fn != nil && d.Pos >= fn.Pos() && d.Pos < fn.End() {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// findFunc returns the definition of the function named name, or nil.
func findFunc(pf *parse.File, name string) *parse.FuncDecl {
	for _, fn := range pf.Funcs() {
		if fn.Name == name && fn.Body != nil {
			return fn
		}
	}
	return nil
}
