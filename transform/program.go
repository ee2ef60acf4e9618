package transform

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/port"
)

// Whole programs. A kernel defined in one file is declared in a header and
// launched, with the buffers passed to it allocated, in another. Porting
// each file alone would change the definition and leave the prototype and
// the launch with raw pointers: the program would not link. RunProgram
// ports such files as one program:
//
//   - Files are grouped: two files belong to one program when one names a
//     kernel the other defines or declares (a definition, prototype,
//     launch or any other mention); a kernel defined in several files no
//     other file names leaves them apart (variants, each with its main).
//     A local header with device code or a kernel-qualifier macro joins
//     the one group that includes it; one several groups include is read
//     by each as a read-only file (attachHeaders). A file linked to no
//     other is ported alone, exactly as Run ports it.
//   - The files of a group are laid end to end in one text, headers first
//     (what the preprocessor would have put before the code), each
//     framed by its -D defines. That text is parsed, analysed and ported
//     once, so every stage sees the kernel, its prototypes, its launches
//     and the host code behind them together, and the port's own fixpoint
//     keeps them consistent: a parameter refused at any site (a host use
//     in main.cu, a helper in a header) is ported nowhere.
//   - Every edit is then mapped back to the file it lands in and applied
//     there; each changed file gets the runtime include it needs (each is
//     compiled on its own). An edit that would land in a read-only file (a
//     header outside the project root, a system header) blocks the kernels
//     it belongs to: they are excluded and the group is planned again
//     (PORT040), so what is written always links.

// CodeProgramSite is the warning for a kernel that a whole-program port
// leaves unported because one of its sites is in a file bamgen may not
// write, or because two files define it.
const CodeProgramSite = port.CodeProgramSite

// Unit is one file of a program.
type Unit struct {
	Name string
	Src  []byte
	// ReadOnly files are read (macros, typedefs, prototypes, helpers)
	// but never written: headers outside the project root, system and
	// third-party headers. A kernel with a site that would need an edit
	// in one is not ported.
	ReadOnly bool
	// Input marks a file the user named (on the command line, by a
	// compilation database, or as context). A group of files none of
	// which is an input (headers found through the inputs, linked to
	// nothing) is read but not ported.
	Input bool
	// Defines are the -D definitions in effect for this file (NAME or
	// NAME=VALUE): the analysis sees them as #defines before the file.
	Defines []string
}

// ProgramResult is the outcome of RunProgram.
type ProgramResult struct {
	// Files has one result per unit, in the order of the units.
	Files []*Result
	// Groups lists the units ported together, by index (headers several
	// groups read are in none of them); a group of one that reads no
	// shared header was ported alone (Run).
	Groups [][]int
}

// RunProgram ports units as one program (see the comment above). The
// quoted includes of each unit are resolved against its directory and
// analysis.IncludeDirs. each runs fn(0..n-1), possibly in parallel (nil:
// in order); groups are independent. The error is for bamgen bugs and
// unreadable configs, as with Run.
func RunProgram(units []Unit, opts Options, each func(n int, fn func(i int))) (*ProgramResult, error) {
	if each == nil {
		each = func(n int, fn func(int)) {
			for i := 0; i < n; i++ {
				fn(i)
			}
		}
	}
	pr := &ProgramResult{Files: make([]*Result, len(units))}
	infos := make([]*unitInfo, len(units))
	each(len(units), func(i int) { infos[i] = scanUnit(units[i]) })
	groups, attached := attachHeaders(units, infos, groupUnits(units, infos))
	pr.Groups = groups
	errs := make([]error, len(pr.Groups))
	shared := make([][]*Result, len(pr.Groups)) // results of each group's attached headers
	each(len(pr.Groups), func(k int) {
		g := pr.Groups[k]
		ported := false
		for _, i := range g {
			ported = ported || units[i].Input && !units[i].ReadOnly
		}
		gopts := opts
		gopts.Port.Arrays = specsFor(opts.Port.Arrays, g, infos, len(pr.Groups) > 1, k == 0)
		if len(pr.Groups) > 1 {
			// The config's arrays, like --array, go to the groups they name.
			cfg := opts.Port.Config
			if cfg == nil && opts.FindConfig {
				var err error
				if cfg, err = port.FindConfig(units[primaryOf(units, g)].Name); err != nil {
					errs[k] = err
					return
				}
			}
			if cfg != nil && len(cfg.Arrays) > 0 {
				c := *cfg
				c.Arrays = nil
				for _, a := range cfg.Arrays {
					if len(specsFor([]string{a.Name}, g, infos, true, k == 0)) > 0 {
						c.Arrays = append(c.Arrays, a)
					}
				}
				gopts.Port.Config = &c
			}
		}
		switch {
		case !ported:
			for _, i := range g {
				pr.Files[i] = unchanged(units[i])
			}
		case len(g) == 1 && len(attached[k]) == 0 && len(units[g[0]].Defines) == 0:
			u := units[g[0]]
			pr.Files[g[0]], errs[k] = Run(u.Name, u.Src, gopts)
		default:
			// Headers this group shares with others are read-only here.
			gu := make([]Unit, len(units))
			copy(gu, units)
			for _, h := range attached[k] {
				gu[h].ReadOnly = true
			}
			res, err := runGroup(gu, append(append([]int(nil), g...), attached[k]...), gopts)
			if err != nil {
				errs[k] = err
				return
			}
			for j, i := range g {
				pr.Files[i] = res[j]
			}
			shared[k] = res[len(g):]
		}
	})
	// A shared header's diagnostics from each group that read it (PORT040
	// where it would have had to change) go with the header's own result.
	for k := range pr.Groups {
		for j, h := range attached[k] {
			if j < len(shared[k]) && pr.Files[h] != nil {
				pr.Files[h].Diags = append(pr.Files[h].Diags, shared[k][j].Diags...)
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pr, nil
}

func unchanged(u Unit) *Result {
	return &Result{Src: diag.NewSource(u.Name, u.Src), Output: u.Src}
}

// unitInfo is what grouping needs to know of one file.
type unitInfo struct {
	pf      *parse.File
	idents  map[string]bool // every identifier the file mentions
	kernels []string        // kernels it defines or declares
	defs    []*parse.FuncDecl
	// launchers are the host functions it defines that launch a kernel
	// (`void fwd_reach(int *col, ...) { fwd_step<<<...>>>(col, ...); }`):
	// a file calling one may be part of the same program, since the
	// buffers it passes may become bam::arrays there (linkLaunchers).
	launchers []string
	bodies    map[string]bool // every function it defines (with a body), by name
	includes  []string        // absolute paths of the local headers it includes
	device    bool            // holds device code or a macro expanding to __global__/__device__
}

func scanUnit(u Unit) *unitInfo {
	pf := parse.ParseFile(u.Name, u.Src)
	in := &unitInfo{pf: pf, idents: map[string]bool{}, bodies: map[string]bool{}}
	for _, t := range pf.Tokens {
		if t.Kind == parse.Identifier {
			in.idents[string(u.Src[t.Start:t.End])] = true
		}
	}
	for _, fd := range pf.Funcs() {
		if fd.IsKernel() {
			in.kernels = append(in.kernels, fd.Name)
			if fd.Body != nil {
				in.defs = append(in.defs, fd)
			}
		}
		in.device = in.device || fd.IsDevice()
		if fd.Body != nil {
			in.bodies[fd.Name] = true
		}
		if fd.Body != nil && !fd.IsDevice() && fd.Name != "main" && launches(fd) {
			in.launchers = append(in.launchers, fd.Name)
		}
	}
	for _, m := range pf.Macros {
		in.device = in.device || strings.Contains(m.Body, "__global__") || strings.Contains(m.Body, "__device__")
	}
	for _, h := range analysis.IncludedHeaders(u.Name, u.Src, analysis.IncludeDirs) {
		if abs, err := filepath.Abs(h); err == nil {
			in.includes = append(in.includes, abs)
		}
	}
	return in
}

// linkLaunchers links a file that calls a launcher (a host function that
// launches a kernel) with the file that defines it, when both include a
// header of the program that declares it: the C way of sharing a function
// (gardenia's scc: bitset.h declares fwd_reach, bitset.cu defines it,
// topo.cu calls it). A launcher defined in several files is left alone
// (variants), as is a caller that defines a function of that name itself.
// Without the shared declaration a call may reach another definition
// bamgen does not see (llm.c's train_gpt2.cu calls the cuDNN
// attention_forward_cudnn of a .cpp file, which a dev/cuda benchmark also
// defines for itself).
func linkLaunchers(units []Unit, infos []*unitInfo, union func(a, b int)) {
	byPath := unitIndexByPath(units)
	definedIn := map[string][]int{}
	for i, in := range infos {
		for _, l := range in.launchers {
			definedIn[l] = append(definedIn[l], i)
		}
	}
	for l, where := range definedIn {
		if len(where) > 1 {
			continue
		}
		def := where[0]
		declaring := map[string]bool{} // headers the definer includes that declare l
		for _, h := range infos[def].includes {
			if j, ok := byPath[h]; ok && declares(infos[j].pf, l) {
				declaring[h] = true
				union(j, def) // the declaration changes with the definition
			}
		}
		for i, in := range infos {
			if i == def || !in.idents[l] || in.bodies[l] {
				continue
			}
			for _, h := range in.includes {
				if declaring[h] {
					union(i, def)
					break
				}
			}
		}
	}
}

// unitIndexByPath maps each unit's absolute path (what unitInfo.includes
// holds) to its index.
func unitIndexByPath(units []Unit) map[string]int {
	byPath := map[string]int{}
	for i, u := range units {
		if abs, err := filepath.Abs(u.Name); err == nil {
			byPath[abs] = i
		}
	}
	return byPath
}

// declares reports whether pf declares a function named name without
// defining it (a prototype).
func declares(pf *parse.File, name string) bool {
	for _, fd := range pf.Funcs() {
		if fd.Name == name && fd.Body == nil {
			return true
		}
	}
	return false
}

// launches reports whether fn's body launches a kernel with <<<>>>.
func launches(fn *parse.FuncDecl) bool {
	found := false
	parse.Inspect(fn.Body, func(n parse.Node) bool {
		if _, ok := n.(*parse.LaunchExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// groupUnits returns the connected groups of files, each in unit order,
// ordered by their first unit.
func groupUnits(units []Unit, infos []*unitInfo) [][]int {
	parent := make([]int, len(units))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	declaredIn := map[string][]int{}
	for i, in := range infos {
		for _, k := range in.kernels {
			declaredIn[k] = append(declaredIn[k], i)
		}
	}
	definedIn := map[string]map[int]bool{}
	for i, in := range infos {
		for _, fd := range in.defs {
			if definedIn[fd.Name] == nil {
				definedIn[fd.Name] = map[int]bool{}
			}
			definedIn[fd.Name][i] = true
		}
	}
	for k, where := range declaredIn {
		// A kernel defined in several files that no other file mentions:
		// each definer is a program of its own (a directory of variants,
		// bfs.cu and bfs_32.cu, each with its main). Any other file naming
		// it links them all, and the duplicate is then refused (PORT040).
		var users []int
		for i, in := range infos {
			if in.idents[k] && !definedIn[k][i] {
				users = append(users, i)
			}
		}
		if len(definedIn[k]) > 1 && len(users) == 0 {
			continue
		}
		for _, j := range append(users, where...) {
			union(j, where[0])
		}
	}
	linkLaunchers(units, infos, union)
	at := map[int]int{}
	var groups [][]int
	for i := range units {
		r := find(i)
		k, ok := at[r]
		if !ok {
			k = len(groups)
			at[r] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], i)
	}
	return groups
}

// specsFor keeps the --array specs that name a kernel parameter of the
// group, so that a program of several groups (a directory) does not
// report, in every group, a spec meant for another. A spec no group
// matches is kept in the first group, which reports it as today.
func specsFor(specs []string, g []int, infos []*unitInfo, several, first bool) []string {
	if !several || len(specs) == 0 {
		return specs
	}
	var out []string
	for _, s := range specs {
		if specMatches(s, g, infos) || (first && !specMatchesAny(s, infos)) {
			out = append(out, s)
		}
	}
	return out
}

func specMatches(spec string, g []int, infos []*unitInfo) bool {
	kernel, name, qualified := strings.Cut(spec, ":")
	if !qualified {
		kernel, name = "", spec
	}
	for _, i := range g {
		for _, fd := range infos[i].defs {
			if kernel != "" && fd.Name != kernel {
				continue
			}
			for _, p := range fd.Params {
				if p.Name == name {
					return true
				}
			}
		}
	}
	return false
}

func specMatchesAny(spec string, infos []*unitInfo) bool {
	all := make([]int, len(infos))
	for i := range all {
		all[i] = i
	}
	return specMatches(spec, all, infos)
}

// segment is one stretch of the program text: a unit, or the #define /
// #undef lines framing one (unit -1).
type segment struct {
	unit       int
	start, end int
}

// programText lays the group's units end to end, headers first.
func programText(units []Unit, g []int) ([]byte, []segment) {
	order := append([]int(nil), g...)
	sort.SliceStable(order, func(a, b int) bool { return isHeader(units[order[a]].Name) && !isHeader(units[order[b]].Name) })
	var buf []byte
	var segs []segment
	synth := func(text string) {
		if text != "" {
			segs = append(segs, segment{unit: -1, start: len(buf), end: len(buf) + len(text)})
			buf = append(buf, text...)
		}
	}
	for _, i := range order {
		u := units[i]
		var def, undef strings.Builder
		for _, d := range u.Defines {
			name, val, ok := strings.Cut(d, "=")
			if !ok {
				val = "1"
			}
			fmt.Fprintf(&def, "#define %s %s\n", name, val)
			fmt.Fprintf(&undef, "#undef %s\n", name)
		}
		synth(def.String())
		segs = append(segs, segment{unit: i, start: len(buf), end: len(buf) + len(u.Src)})
		buf = append(buf, u.Src...)
		// Always a newline between files: it ends a last line without one,
		// and keeps an insertion at the end of one file apart from one at
		// the start of the next.
		synth("\n" + undef.String())
	}
	return buf, segs
}

// isHeader reports whether name is a header by its extension.
func isHeader(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc":
		return true
	}
	return false
}

// segmentAt returns the segment holding offset off (an insertion at the
// end of a unit belongs to that unit).
func segmentAt(segs []segment, off int) segment {
	for _, s := range segs {
		if off >= s.start && (off < s.end || off == s.end && s.unit >= 0) {
			return s
		}
	}
	return segment{unit: -1}
}

// runGroup ports the units of g as one program and returns one result per
// unit of g, in g's order.
func runGroup(units []Unit, g []int, opts Options) (out []*Result, err error) {
	text, segs := programText(units, g)
	name := units[primaryOf(units, g)].Name
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error while porting the program of %s: %v", name, r)
		}
	}()
	if opts.FindConfig && opts.Port.Config == nil {
		cfg, err := port.FindConfig(name)
		if err != nil {
			return nil, err
		}
		opts.Port.Config = cfg
	}
	pf := parse.ParseFile(name, text)
	sources := map[int]*diag.Source{}
	for _, i := range g {
		sources[i] = diag.NewSource(units[i].Name, units[i].Src)
	}
	where := func(off int) string {
		s := segmentAt(segs, off)
		if s.unit < 0 {
			return "the command line's -D definitions"
		}
		line, _ := sources[s.unit].LineCol(off - s.start)
		return fmt.Sprintf("%s:%d", units[s.unit].Name, line)
	}
	excluded := map[string]string{}
	var extra []diag.Diagnostic
	extra = append(extra, duplicateKernels(pf, segs, where, excluded)...)
	extra = append(extra, unlaunchedDeclared(pf, segs, units, where, excluded)...)
	// Kernels defined in read-only files (a library's header) are not the
	// program's to port: excluded up front, and what --auto chose of them
	// is not reported (a named --array still gets its refusal).
	foreign := map[string]bool{}
	for _, fd := range pf.Funcs() {
		if s := segmentAt(segs, fd.Pos()); fd.IsKernel() && fd.Body != nil && (s.unit < 0 || units[s.unit].ReadOnly) && excluded[fd.Name] == "" {
			excluded[fd.Name] = fmt.Sprintf("%s is defined in %s, which this program may only read; it is not ported", fd.Name, where(fd.Pos()))
			foreign[fd.Name] = true
		}
	}
	var res *Result
	var edits []edit.Edit
	writable := map[string]bool{}
	for _, i := range g {
		if abs, err := filepath.Abs(units[i].Name); err == nil && !units[i].ReadOnly {
			writable[abs] = true
		}
	}
	for round := 0; ; round++ {
		o := opts
		o.Port.Exclude = excluded
		o.Port.ProgramFiles = writable
		res, edits, err = planParsed(pf, o)
		if err != nil {
			return nil, err
		}
		blocked := blockedKernels(pf, segs, units, edits, res.Choices, excluded)
		if len(blocked) == 0 || round > len(pf.Funcs()) {
			break
		}
		for _, b := range blocked {
			excluded[b.kernel] = fmt.Sprintf("%s: %s would change in %s, which this program may only read (a header outside the project root, a system header, or a header other programs include too); %s is left unported in every file",
				b.kernel, b.what, where(b.at), b.kernel)
			extra = append(extra, diag.Diagnostic{Pos: b.at, End: b.at, Severity: diag.Warning, Code: CodeProgramSite, Message: excluded[b.kernel]})
		}
	}
	var kept []port.Choice
	for _, ch := range res.Choices {
		if !foreign[ch.Kernel] || !strings.HasPrefix(ch.Reason, "--auto") {
			kept = append(kept, ch)
		}
	}
	res.Choices = kept
	diags := append(append(extra, portRelevantParseDiags(pf, res.Choices)...), withoutPrototypeNotes(pf, res.Diags)...)
	return splitResults(units, g, segs, sources, pf, res, edits, diags)
}

// duplicateKernels excludes kernels defined in two files of the group:
// bamgen cannot tell which definition a launch reaches.
func duplicateKernels(pf *parse.File, segs []segment, where func(int) string, excluded map[string]string) []diag.Diagnostic {
	first := map[string]*parse.FuncDecl{}
	var out []diag.Diagnostic
	for _, fd := range pf.Funcs() {
		if !fd.IsKernel() || fd.Body == nil {
			continue
		}
		prev := first[fd.Name]
		if prev == nil {
			first[fd.Name] = fd
			continue
		}
		if segmentAt(segs, prev.Pos()).unit == segmentAt(segs, fd.Pos()).unit || excluded[fd.Name] != "" {
			continue // overloads or templates of one file: the port's own business
		}
		excluded[fd.Name] = fmt.Sprintf("%s is defined in %s and in %s; bamgen cannot tell which definition each launch reaches, so neither is ported (port the programs separately)",
			fd.Name, where(prev.Pos()), where(fd.Pos()))
		out = append(out, diag.Diagnostic{Pos: fd.Pos(), End: fd.Pos(), Severity: diag.Warning, Code: CodeProgramSite, Message: excluded[fd.Name]})
	}
	return out
}

type blockedSite struct {
	kernel, what string
	at           int
}

// blockedKernels finds the edits that land outside a writable unit and the
// kernels they belong to: the kernel whose definition or prototype holds
// the edit, or, for an edit elsewhere (a helper in a read-only header),
// every kernel the plan ports.
func blockedKernels(pf *parse.File, segs []segment, units []Unit, edits []edit.Edit, choices []port.Choice, excluded map[string]string) []blockedSite {
	var out []blockedSite
	seen := map[string]bool{}
	for _, e := range edits {
		if isIncludeEdit(e) {
			continue
		}
		s := segmentAt(segs, e.Start)
		if s.unit >= 0 && !units[s.unit].ReadOnly && e.End <= s.end {
			continue
		}
		var names []string
		what := "a helper it passes an array to"
		helper := ""
		for _, fd := range pf.Funcs() {
			if e.Start < fd.Pos() || e.Start >= fd.End() && !endsLineOf(pf.Src.Bytes, fd.End(), e.Start) {
				continue
			}
			if !fd.IsKernel() {
				helper = fd.Name
				continue
			}
			names = append(names, fd.Name)
			what = "its prototype"
			if fd.Body != nil {
				what = "its definition"
			}
		}
		if len(names) == 0 {
			// A helper (or its clone): the ported kernels that call it,
			// else every ported kernel.
			var all []string
			for _, ch := range choices {
				if !ch.Ported {
					continue
				}
				all = append(all, ch.Kernel)
				if helper != "" && callsName(pf, ch.Kernel, helper) {
					names = append(names, ch.Kernel)
				}
			}
			if len(names) == 0 {
				names = all
			}
			if helper != "" {
				what = "the helper " + helper + " it passes an array to"
			}
		}
		for _, n := range names {
			if !seen[n] && excluded[n] == "" {
				seen[n] = true
				out = append(out, blockedSite{kernel: n, what: what, at: e.Start})
			}
		}
	}
	return out
}

// isIncludeEdit reports whether e is the port's insertion of the runtime
// headers: the group's text gets one, each changed file needs its own.
func isIncludeEdit(e edit.Edit) bool {
	return e.Rewrite == port.Runtime.String() && e.Start == e.End && strings.Contains(e.New, "#include <bam/bam.cuh>")
}

// hostRewrites are the edits that need the host headers of the runtime
// include (not only <bam/bam.cuh>).
var hostRewrites = map[string]bool{port.Launches.String(): true, port.HostMemory.String(): true, port.Runtime.String(): true}

// splitResults maps the group's edits and diagnostics back to its files.
func splitResults(units []Unit, g []int, segs []segment, sources map[int]*diag.Source, pf *parse.File, res *Result, edits []edit.Edit, diags []diag.Diagnostic) ([]*Result, error) {
	perUnit := map[int][]edit.Edit{}
	host := map[int]bool{}
	for _, e := range edits {
		if isIncludeEdit(e) {
			continue
		}
		s := segmentAt(segs, e.Start)
		if s.unit < 0 || e.End > s.end {
			return nil, fmt.Errorf("internal error: a %s edit of the program lands outside its files", e.Rewrite)
		}
		e.Start -= s.start
		e.End -= s.start
		if e.Repeats {
			e.RepeatsAt -= s.start
		}
		perUnit[s.unit] = append(perUnit[s.unit], e)
		host[s.unit] = host[s.unit] || hostRewrites[e.Rewrite]
	}
	out := make([]*Result, len(g))
	index := map[int]int{}
	for k, i := range g {
		index[i] = k
		u := units[i]
		r := &Result{Src: sources[i], Output: u.Src}
		if es := perUnit[i]; len(es) > 0 && !diag.HasErrors(diags) {
			if inc, ok := port.IncludeEdit(parse.ParseFile(u.Name, u.Src), !host[i]); ok {
				es = append(es, inc)
			}
			b, lines, err := edit.ApplyLines(u.Src, es, u.Name)
			if err != nil {
				return nil, err
			}
			r.Output, r.Lines = b, lines
			r.Changed = string(b) != string(u.Src)
		}
		out[k] = r
	}
	for _, d := range diags {
		s := segmentAt(segs, d.Pos)
		k := 0
		if s.unit >= 0 {
			k = index[s.unit]
			d.Pos -= s.start
			d.End = min(max(d.End-s.start, d.Pos), len(units[s.unit].Src))
		} else {
			d.Pos, d.End = 0, 0
		}
		out[k].Diags = append(out[k].Diags, d)
	}
	// Each choice is reported with the file that defines its kernel.
	for _, ch := range res.Choices {
		k := 0
		for _, fd := range pf.Funcs() {
			if fd.Name == ch.Kernel && fd.Body != nil && fd.IsKernel() {
				if s := segmentAt(segs, fd.Pos()); s.unit >= 0 {
					k = index[s.unit]
				}
				break
			}
		}
		out[k].Choices = append(out[k].Choices, ch)
	}
	return out, nil
}

// withoutPrototypeNotes drops the rewrites' notes about a kernel's
// prototypes (a header's declaration has no body to rewrite; the note on
// the definition says what happened).
func withoutPrototypeNotes(pf *parse.File, ds []diag.Diagnostic) []diag.Diagnostic {
	protos := map[int]bool{}
	for _, fd := range pf.Funcs() {
		if fd.Body == nil && fd.IsKernel() {
			for off := fd.Pos(); off <= fd.NameSpan.Stop; off++ {
				protos[off] = true
			}
		}
	}
	var out []diag.Diagnostic
	for _, d := range ds {
		if d.Severity == diag.Note && strings.HasPrefix(d.Code, "OPT") && protos[d.Pos] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// callsName reports whether the definition of kernel mentions name in its
// body (a call of the helper, directly).
func callsName(pf *parse.File, kernel, name string) bool {
	for _, fd := range pf.Funcs() {
		if fd.Name != kernel || fd.Body == nil {
			continue
		}
		for _, t := range pf.Tokens {
			if t.Start >= fd.Body.Pos() && t.End <= fd.Body.End() && t.Kind == parse.Identifier && string(pf.Src.Bytes[t.Start:t.End]) == name {
				return true
			}
		}
	}
	return false
}

// endsLineOf reports whether off is the end of the line on which a
// function ending at end ends (where a cloned helper is inserted).
func endsLineOf(src []byte, end, off int) bool {
	if off < end || off > len(src) {
		return false
	}
	nl := bytes.IndexByte(src[end:off], '\n')
	return nl == off-end-1
}

// primaryOf returns the unit that names the group: its first writable
// source file (not a header), else its first unit. The group's text is
// parsed under this name, and its .bamgen.yaml is the group's config.
func primaryOf(units []Unit, g []int) int {
	for _, i := range g {
		if !isHeader(units[i].Name) && !units[i].ReadOnly {
			return i
		}
	}
	return g[0]
}

// attachHeaders gives each group the local headers with device code its
// files include (transitively) without being linked to them by a kernel
// name. A header only one group includes, and linked to nothing itself,
// joins that group (it is ported with it). A header several groups include
// is read by each as a read-only file (attached[k]): separate programs
// sharing a header must not be merged into one, and must not write it
// differently; a kernel that would need it changed gets PORT040.
func attachHeaders(units []Unit, infos []*unitInfo, groups [][]int) ([][]int, [][]int) {
	byPath := unitIndexByPath(units)
	memberOf := make([]int, len(units))
	for k, g := range groups {
		for _, i := range g {
			memberOf[i] = k
		}
	}
	reach := make([][]int, len(groups))
	reachers := map[int][]int{}
	for k, g := range groups {
		seen := map[int]bool{}
		queue := append([]int(nil), g...)
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			for _, h := range infos[i].includes {
				j, ok := byPath[h]
				if !ok || seen[j] {
					continue
				}
				seen[j] = true
				queue = append(queue, j)
				if memberOf[j] != k && infos[j].device {
					reach[k] = append(reach[k], j)
					reachers[j] = append(reachers[j], k)
				}
			}
		}
	}
	moved := map[int]bool{}
	for h, ks := range reachers {
		if len(ks) == 1 && len(groups[memberOf[h]]) == 1 {
			k := ks[0]
			groups[k] = append(groups[k], h)
			moved[h] = true
		}
	}
	var outGroups, attached [][]int
	for k, g := range groups {
		if len(g) == 1 && moved[g[0]] && memberOf[g[0]] == k {
			continue // joined the one group that includes it
		}
		sort.Ints(g)
		var att []int
		for _, h := range reach[k] {
			if !moved[h] {
				att = append(att, h)
			}
		}
		sort.Ints(att)
		outGroups = append(outGroups, g)
		attached = append(attached, att)
	}
	return outGroups, attached
}

// unlaunchedDeclared excludes a kernel that another file declares (a
// prototype in a header) but that no file of the program launches or
// otherwise names: its launches are in a file not given (`port -w
// kernel.cu` alone), which would keep raw pointers. A kernel nothing
// declares elsewhere (a kernel-only file) is ported as before.
func unlaunchedDeclared(pf *parse.File, segs []segment, units []Unit, where func(int) string, excluded map[string]string) []diag.Diagnostic {
	decls := map[string][]*parse.FuncDecl{}
	for _, fd := range pf.Funcs() {
		decls[fd.Name] = append(decls[fd.Name], fd)
	}
	mentions := map[string]int{}
	for _, t := range pf.Tokens {
		if t.Kind == parse.Identifier {
			mentions[string(pf.Src.Bytes[t.Start:t.End])]++
		}
	}
	var out []diag.Diagnostic
	for _, def := range pf.Funcs() {
		if !def.IsKernel() || def.Body == nil || excluded[def.Name] != "" {
			continue
		}
		s := segmentAt(segs, def.Pos())
		if s.unit < 0 || units[s.unit].ReadOnly {
			continue
		}
		var proto *parse.FuncDecl
		for _, d := range decls[def.Name] {
			if d.Body == nil && segmentAt(segs, d.Pos()).unit != s.unit {
				proto = d
				break
			}
		}
		// Every declaration names the kernel once; any other mention is a
		// launch, a cudaLaunchKernel argument, a pointer taken.
		if proto == nil || mentions[def.Name] > len(decls[def.Name]) {
			continue
		}
		excluded[def.Name] = fmt.Sprintf("%s is declared in %s but no file given launches it: its launches are in a file not given, which would keep raw pointers; give every file that launches it (or the directory), and %s is ported in all of them",
			def.Name, where(proto.Pos()), def.Name)
		out = append(out, diag.Diagnostic{Pos: proto.Pos(), End: proto.Pos(), Severity: diag.Warning, Code: CodeProgramSite, Message: excluded[def.Name]})
	}
	return out
}
