package transform

import (
	"fmt"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/inline"
	"github.com/bamgen/bamgen/transform/port"
)

// runSeeingWrappers is RunParsed for a program that wraps the CUDA memory
// API in functions of its own (`areas = alloc<float>(n); upload<float>(areas,
// h, n);`, package inline). To the port such a call is a host use it does
// not know, so the buffer stays a pointer. The file is planned once more
// with every such call inlined, and again with only the calls that plan
// rewrote (the others stay as written, so the diff holds only what the
// port needs). The inlined port is kept when it ports more parameters than
// the file as written; its diagnostics are mapped back to the file's own
// positions, with a note (PORT096) at each inlined call.
func runSeeingWrappers(pf *parse.File, opts Options) (*Result, error) {
	base, _, err := runPlanned(pf, opts)
	if err != nil || diag.HasErrors(base.Diags) {
		return base, err
	}
	sites := inline.Find(pf)
	if len(sites) == 0 {
		return base, nil
	}
	all, err := runInlined(pf, sites, opts)
	if err != nil {
		return nil, err
	}
	var used []inline.Site
	for i, touched := range all.touched {
		if touched {
			used = append(used, sites[i])
		}
	}
	if len(used) == 0 {
		return base, nil
	}
	best := all
	if len(used) < len(sites) {
		some, err := runInlined(pf, used, opts)
		if err != nil {
			return nil, err
		}
		// Without the calls the port left alone it must plan the same
		// ports and still rewrite every call kept; else keep them all.
		if ported(some.res) == ported(all.res) && allTrue(some.touched) {
			best = some
		}
	}
	if ported(best.res) <= ported(base) || diag.HasErrors(best.res.Diags) {
		return base, nil
	}
	return best.result(pf), nil
}

// inlinedRun is the port of a file with some wrapper calls inlined.
type inlinedRun struct {
	sites   []inline.Site
	mapping inline.Mapping
	res     *Result
	touched []bool // per site: an edit of the plan overlaps its replacement
}

func runInlined(pf *parse.File, sites []inline.Site, opts Options) (*inlinedRun, error) {
	text, m := inline.Apply(pf.Src.Bytes, sites)
	res, edits, err := runPlanned(parse.ParseFile(pf.Src.Name, text), opts)
	if err != nil {
		return nil, err
	}
	r := &inlinedRun{sites: sites, mapping: m, res: res, touched: make([]bool, len(sites))}
	for _, e := range edits {
		for _, i := range m.Touched(e.Start, e.End) {
			r.touched[i] = true
		}
	}
	return r, nil
}

// result is the run's Result as a port of pf itself: positions in pf's
// text, Changed against it, and a note at each inlined call.
func (r *inlinedRun) result(pf *parse.File) *Result {
	res := *r.res
	res.Src = pf.Src
	res.Diags = make([]diag.Diagnostic, 0, len(r.sites)+len(r.res.Diags))
	for _, s := range r.sites {
		res.Diags = append(res.Diags, diag.Diagnostic{Pos: s.Start, End: s.End, Severity: diag.Note, Code: port.CodeWrapperInlined,
			Message: fmt.Sprintf("`%s` calls %s, the program's own wrapper of %s: bamgen inlined the call so that the port rewrites it like the %s it makes",
				s.Call, s.Wrapper, s.API, s.API)})
	}
	for _, d := range r.res.Diags {
		d.Pos, d.End = r.mapping.Back(d.Pos), r.mapping.Back(d.End)
		res.Diags = append(res.Diags, d)
	}
	res.Changed = string(res.Output) != string(pf.Src.Bytes)
	if !res.Changed {
		res.Output, res.Lines = pf.Src.Bytes, nil
	}
	return &res
}

// ported counts the chosen parameters a run ports.
func ported(res *Result) int {
	n := 0
	for _, c := range res.Choices {
		if c.Ported {
			n++
		}
	}
	return n
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}
