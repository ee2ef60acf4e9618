// Package inline sees through a program's own one-statement wrappers of
// the CUDA memory API, so that the port can rewrite the buffers they
// handle. Real programs wrap cudaMalloc, cudaMemcpy and cudaFree in small
// helpers of their own (rodinia's cfd:
//
//	template <typename T> T* alloc(int N) { T* t; check(cudaMalloc((void**)&t, sizeof(T)*N)); return t; }
//	template <typename T> void upload(T* dst, T* src, int N) { check(cudaMemcpy((void*)dst, (void*)src, N*sizeof(T), cudaMemcpyHostToDevice)); }
//
// and `areas = alloc<float>(nelr); upload<float>(areas, h_areas, nelr);` in
// main). To the port such a call is an unknown host use of the buffer, so
// every kernel parameter it reaches stayed a plain pointer. Find lists the
// calls of such wrappers that can be replaced by the wrapper's statement
// with the call's arguments in place (`check(cudaMalloc((void**)&areas,
// sizeof(float)*nelr));`); Apply makes the replaced text, which the port
// then plans like any CUDA call. Which replacements are kept (only those
// the port rewrites) is the pipeline's decision (transform.Run).
//
// A wrapper is a host function defined in the file, not overloaded, not a
// member, with named parameters that are neither references nor
// defaulted, and template parameters (if any) that are types, whose body
// is either
//   - one expression statement holding exactly one cudaMemcpy,
//     cudaMemcpyAsync, cudaMemset, cudaMemsetAsync, cudaFree, cudaFreeHost
//     or allocation (cudaMalloc, cudaMallocManaged, cudaMallocHost,
//     cudaHostAlloc: `dev_alloc(&d, n)`) call, every
//     other call in it a one-argument wrapper of that call (an error check)
//     and every parameter used only in the call's arguments; or
//   - `T *t; <one such statement around cudaMalloc((void**)&t, bytes)>;
//     return t;`, the parameters used only in bytes.
//
// A call is replaced only where it is a statement of its own (`f(a, b);`,
// `p = f(n);`, `T *p = f(n);`; a status wrapper's anywhere), every template parameter is given or
// deduced from a `T *` parameter whose argument is a variable, every
// argument is free of side effects (a parameter may appear more than once
// in the body), and no name of the body means something else at the call
// (a local of the caller shadowing it).
package inline

import (
	"sort"
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// cudaOps are the CUDA calls a statement wrapper may make (the ones the
// port rewrites on a buffer).
var cudaOps = map[string]bool{
	"cudaMemcpy": true, "cudaMemcpyAsync": true, "cudaMemset": true, "cudaMemsetAsync": true, "cudaFree": true,
	// `void dev_alloc(T **p, size_t n) { check(cudaMalloc((void**)p, n * sizeof(T))); }`, called
	// as `dev_alloc(&d, n)`: inlined, `&d` is what the port reads as an allocation.
	"cudaMalloc": true, "cudaMallocManaged": true, "cudaMallocHost": true, "cudaHostAlloc": true, "cudaFreeHost": true,
}

// Site is one call of a wrapper that can be replaced by the wrapper's body.
type Site struct {
	Start, End int    // the call's statement in the source
	Text       string // what replaces it: the wrapper's statement(s), arguments in place, on one line, then as many newlines as the statement spanned
	Wrapper    string // the wrapper's name
	API        string // the CUDA call it makes ("cudaMemcpy")
	Call       string // the call as written, on one line (for messages)
}

// wrapper is a host function Find can inline.
type wrapper struct {
	fn      *parse.FuncDecl
	tparams []string // template type parameters, in order
	stmt    parse.Stmt
	// body is what a call is replaced by, arguments in place: stmt, or for
	// a status wrapper (`cudaError_t up(...) { return cudaMemcpy(...); }`)
	// the CUDA call it returns, which replaces the call expression itself.
	body     parse.Node
	status   bool
	api      string
	allocVar string // the local an allocating wrapper returns ("" for a statement wrapper)
}

// Find returns the replaceable wrapper calls of pf, in source order.
func Find(pf *parse.File) []Site {
	ws := wrappers(pf)
	if len(ws) == 0 {
		return nil
	}
	var sites []Site
	for _, fn := range pf.Funcs() {
		if fn.Body == nil || fn.IsDevice() {
			continue
		}
		parse.Inspect(fn.Body, func(n parse.Node) bool {
			if s, ok := siteOf(pf, fn, ws, n); ok {
				sites = append(sites, s)
			}
			return true
		})
	}
	sort.Slice(sites, func(i, j int) bool { return sites[i].Start < sites[j].Start })
	return sites
}

// wrappers finds the file's inlinable wrappers by name.
func wrappers(pf *parse.File) map[string]*wrapper {
	count := map[string]int{}
	fns := pf.Funcs()
	for _, fn := range fns {
		count[fn.Name]++
	}
	out := map[string]*wrapper{}
	for _, fn := range fns {
		if count[fn.Name] != 1 {
			continue // overloaded, or declared before its definition: which one a call means is the compiler's business
		}
		if w := asWrapper(pf, fn); w != nil {
			out[fn.Name] = w
		}
	}
	return out
}

// asWrapper returns fn as a wrapper, or nil.
func asWrapper(pf *parse.File, fn *parse.FuncDecl) *wrapper {
	if fn.Body == nil || fn.IsDevice() || fn.Qualifier != "" || fn.Result == nil || fn.Name == "main" {
		return nil
	}
	tparams, ok := templateParams(pf, fn)
	if !ok {
		return nil
	}
	for _, p := range fn.Params {
		if p.Name == "" || p.Default != nil || p.Type == nil || p.Type.Ref || p.Type.RRef || len(p.Type.Array) > 0 {
			return nil
		}
	}
	if hasTrivia(pf, fn.Body, parse.Directive, parse.Inactive) {
		return nil
	}
	w := &wrapper{fn: fn, tparams: tparams}
	stmts := fn.Body.Stmts
	var x parse.Expr // the statement's expression: the CUDA call, maybe inside error checks
	switch {
	case fn.Result.Text == "void" && len(stmts) == 1:
		w.stmt = stmts[0]
	case fn.Result.IsPointer() && len(stmts) == 3:
		w.stmt, w.allocVar = allocStmts(fn, stmts)
		if w.stmt == nil {
			return nil
		}
	case (fn.Result.Text == "cudaError_t" || fn.Result.Text == "cudaError") && len(stmts) == 1:
		ret, ok := stmts[0].(*parse.ReturnStmt)
		if !ok || ret.X == nil {
			return nil
		}
		w.stmt, w.status, x = ret, true, ret.X
	default:
		return nil
	}
	if es, ok := w.stmt.(*parse.ExprStmt); ok {
		x = es.X
	}
	if x == nil {
		return nil
	}
	call := onlyCall(x)
	if call == nil || w.status && parse.Unparen(x) != parse.Expr(call) {
		return nil // a status wrapper returns the CUDA call's status as it is
	}
	w.body = w.stmt
	if w.status {
		w.body = call
	}
	w.api = parse.ShortFuncName(call.Fun)
	switch {
	case w.allocVar == "" && cudaOps[w.api]:
	case w.allocVar != "" && w.api == "cudaMalloc" && len(call.Args) == 2 && isAddrOf(call.Args[0], w.allocVar):
	default:
		return nil
	}
	// Every parameter is used only in the CUDA call's arguments (an
	// allocating wrapper's only in its size), so replacing the call moves
	// no evaluation of an argument out of the CUDA call.
	inArgs := call.Args
	if w.allocVar != "" {
		inArgs = call.Args[1:]
	}
	if !paramsOnlyIn(fn, x, inArgs) {
		return nil
	}
	return w
}

// allocStmts matches `T *t; <stmt>; return t;` and returns the middle
// statement and t.
func allocStmts(fn *parse.FuncDecl, stmts []parse.Stmt) (parse.Stmt, string) {
	ds, ok := stmts[0].(*parse.DeclStmt)
	if !ok || ds.Record != nil || len(ds.Vars) != 1 {
		return nil, ""
	}
	v := ds.Vars[0]
	if v.Init != nil || v.Type == nil || !v.Type.IsPointer() || len(v.Specifiers) > 0 {
		return nil, ""
	}
	ret, ok := stmts[2].(*parse.ReturnStmt)
	if !ok || ret.X == nil {
		return nil, ""
	}
	if id, ok := parse.Unparen(ret.X).(*parse.Ident); !ok || id.Name != v.Name {
		return nil, ""
	}
	for _, p := range fn.Params {
		if p.Name == v.Name {
			return nil, ""
		}
	}
	return stmts[1], v.Name
}

// onlyCall returns the one CUDA call of e when every other call in e is a
// one-argument wrapper around it (`check((cudaMemcpy(...)))`), else nil.
func onlyCall(e parse.Expr) *parse.CallExpr {
	for {
		call, ok := parse.UnparenCasts(e).(*parse.CallExpr)
		if !ok {
			return nil
		}
		if strings.HasPrefix(parse.ShortFuncName(call.Fun), "cuda") {
			for _, a := range call.Args {
				if hasCall(a) {
					return nil
				}
			}
			return call
		}
		if len(call.Args) != 1 {
			return nil
		}
		e = call.Args[0]
	}
}

func hasCall(e parse.Expr) bool {
	found := false
	parse.Inspect(e, func(n parse.Node) bool {
		if _, ok := n.(*parse.CallExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// isAddrOf reports whether e is `&name`, possibly cast (`(void**)&t`).
func isAddrOf(e parse.Expr, name string) bool {
	u, ok := parse.UnparenCasts(e).(*parse.UnaryExpr)
	if !ok || u.Op != "&" || u.Postfix {
		return false
	}
	id, ok := parse.Unparen(u.X).(*parse.Ident)
	return ok && id.Name == name
}

// paramsOnlyIn reports whether every mention of fn's parameters in e lies
// inside one of args.
func paramsOnlyIn(fn *parse.FuncDecl, e parse.Expr, args []parse.Expr) bool {
	ok := true
	parse.Inspect(e, func(n parse.Node) bool {
		id, isID := n.(*parse.Ident)
		if !isID || !ok {
			return ok
		}
		sym := fn.Scope.Lookup(id.Name, id.Pos())
		if sym == nil || !sym.Param {
			return true
		}
		for _, a := range args {
			if parse.Within(id, a) {
				return true
			}
		}
		ok = false
		return false
	})
	return ok
}

// templateParams returns the names of fn's template type parameters;
// false when fn has a template parameter that is not a type (`int N`) or
// one bamgen cannot read.
func templateParams(pf *parse.File, fn *parse.FuncDecl) ([]string, bool) {
	if fn.Template == nil {
		return nil, true
	}
	text := string(pf.Src.Bytes[fn.Template.Start:fn.Template.Stop])
	open, close := strings.Index(text, "<"), strings.LastIndex(text, ">")
	if open < 0 || close < open {
		return nil, false
	}
	inner := strings.TrimSpace(text[open+1 : close])
	if inner == "" {
		return nil, false // an explicit specialisation
	}
	var names []string
	for _, p := range strings.Split(inner, ",") {
		f := strings.Fields(p)
		if len(f) != 2 || (f[0] != "typename" && f[0] != "class") || !isIdent(f[1]) {
			return nil, false
		}
		names = append(names, f[1])
	}
	return names, true
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// hasTrivia reports whether n's tokens include one of kinds.
func hasTrivia(pf *parse.File, n parse.Node, kinds ...parse.TokenKind) bool {
	for _, t := range tokensIn(pf, n.Pos(), n.End()) {
		for _, k := range kinds {
			if t.Kind == k {
				return true
			}
		}
	}
	return false
}

// tokensIn returns the tokens that start in [start, end).
func tokensIn(pf *parse.File, start, end int) []parse.Token {
	i := sort.Search(len(pf.Tokens), func(i int) bool { return pf.Tokens[i].Start >= start })
	j := sort.Search(len(pf.Tokens), func(i int) bool { return pf.Tokens[i].Start >= end })
	return pf.Tokens[i:j]
}
