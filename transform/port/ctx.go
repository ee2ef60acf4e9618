package port

import (
	"sort"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// paramKey names one parameter of one function.
type paramKey struct {
	fn  *parse.FuncDecl
	idx int
}

// portCtx is what every rewrite of one file sees: the parsed file, the
// options, indexes over the file, and the plan decided before any edit is
// emitted.
type portCtx struct {
	source
	*launchIndex
	an     *analysis.File // the file's analysis, made once by the pipeline
	opts   Options
	macros map[string]*parse.Macro
	funcs  []*parse.FuncDecl // every function definition or prototype, in source order
	// unparsedList caches unparsedRegions (unparsed.go).
	unparsedList []unparsed
	unparsedDone bool
	byName       map[string][]*parse.FuncDecl // definitions (with a body) by unqualified name
	plans        map[paramKey]*paramPlan      // memoised use analyses

	// The decisions, filled by plan():
	ported  map[*parse.FuncDecl][]int       // kernel -> ported parameter indexes (sorted)
	helpers map[*parse.FuncDecl]*helperPlan // helper -> how it is ported
	host    *hostPlan
	refs    *refPlan // bam::array_ref loops (--ref, planRefs), nil when not asked for

	hostVars map[*parse.Symbol]*hostVar
	// fwds caches forwarderOf (forward.go), headerTexts the local headers
	// it checks for declarations of a forwarding function.
	fwds        map[paramKey]*forwarder
	never       map[paramKey]string // neverPortable (limits.go)
	headerTexts map[string]string
	opsCache    map[*parse.Symbol][]hostOp // uses of each host variable, classified once
	// parentMaps: each statement's and expression's parent, per function (modes.go)
	parentMaps map[*parse.FuncDecl]map[parse.Node]parse.Node
	choices    []Choice
	diags      []diag.Diagnostic
	clones     []Clone   // direct clones of kernels (clones.go)
	noClones   []NoClone // versioned kernels without one, and why
}

func newPortCtx(f *parse.File, an *analysis.File, opts Options) *portCtx {
	c := &portCtx{source: source{file: f, src: f.Src.Bytes}, an: an, opts: opts,
		macros: map[string]*parse.Macro{}, byName: map[string][]*parse.FuncDecl{},
		plans: map[paramKey]*paramPlan{}, ported: map[*parse.FuncDecl][]int{},
		helpers: map[*parse.FuncDecl]*helperPlan{}, hostVars: map[*parse.Symbol]*hostVar{},
		opsCache: map[*parse.Symbol][]hostOp{}, fwds: map[paramKey]*forwarder{}, never: map[paramKey]string{}}
	for _, m := range f.Macros {
		c.macros[m.Name] = m
	}
	c.funcs = f.Funcs()
	c.launchIndex = &launchIndex{source: &c.source, an: an, funcs: c.funcs}
	for _, fd := range c.funcs {
		if fd.Body != nil {
			c.byName[fd.Name] = append(c.byName[fd.Name], fd)
		}
	}
	return c
}

// kernels returns the __global__ definitions in source order.
func (c *portCtx) kernels() []*parse.FuncDecl { return kernelsIn(c.funcs) }

// kernelsIn returns the __global__ definitions among funcs.
func kernelsIn(funcs []*parse.FuncDecl) []*parse.FuncDecl {
	var out []*parse.FuncDecl
	for _, fd := range funcs {
		if fd.IsKernel() && fd.Body != nil {
			out = append(out, fd)
		}
	}
	return out
}

// deviceDefs returns the device-callable definitions named name.
func (c *portCtx) deviceDefs(name string) []*parse.FuncDecl {
	var out []*parse.FuncDecl
	for _, fd := range c.byName[name] {
		if fd.IsDevice() && !fd.IsKernel() {
			out = append(out, fd)
		}
	}
	return out
}

// source is the file being ported as bytes and tokens: the queries on it
// every stage of the port shares.
type source struct {
	file *parse.File
	src  []byte
}

func (c *source) text(n parse.Node) string {
	if n == nil {
		return ""
	}
	return string(c.src[n.Pos():n.End()])
}

// firstToken returns the index of the first token starting at or after off.
func (c *source) firstToken(off int) int {
	toks := c.file.Tokens
	return sort.Search(len(toks), func(i int) bool { return toks[i].Start >= off })
}

// prevSignificant returns the index of the last non-trivia token before i, or -1.
func (c *source) prevSignificant(i int) int {
	for i--; i >= 0; i-- {
		if !c.file.Tokens[i].Kind.IsTrivia() {
			return i
		}
	}
	return -1
}

func (c *source) tokText(i int) string {
	t := c.file.Tokens[i]
	return string(c.src[t.Start:t.End])
}

// afterMember reports whether token i follows `.` or `->` (a member name,
// not a use of a variable).
func (c *source) afterMember(i int) bool {
	p := c.prevSignificant(i)
	if p < 0 {
		return false
	}
	t := c.tokText(p)
	return t == "." || t == "->" || t == "::"
}

// inAsm reports whether token i is inside an asm statement: an `asm`
// keyword appears since the previous statement boundary.
func (c *source) inAsm(i, limit int) bool {
	for j := c.prevSignificant(i); j >= 0 && c.file.Tokens[j].Start >= limit; j = c.prevSignificant(j) {
		switch c.tokText(j) {
		case "asm", "__asm__", "__asm":
			return true
		case ";", "{", "}":
			return false
		}
	}
	return false
}

func (c *portCtx) addDiag(d diag.Diagnostic) { c.diags = append(c.diags, d) }
