package port

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// What --auto never chooses. --auto picks the arrays that matter (indexed
// data-dependently, or allocated at the input's size); a few of those can
// never be a bam::array, whatever bamgen learns to rewrite, because code
// bamgen cannot see or change needs the memory itself:
//
//   - the parameter's type has no bam::array form (T **, void *, volatile);
//   - in the kernel, a raw address into the array (p, p + off, &p[i], or a
//     local pointer made from them) is given to a CUDA library function
//     (wmma::load_matrix_sync, cuda::memcpy_async, curand_init, __ldcs,
//     atomicAdd_system: one in a CUDA namespace or with a CUDA name, and not
//     defined in this file or a local header), or is cast to a
//     pointer to another type (`*(int4 *)&p[i]`, `reinterpret_cast<unsigned
//     long long *>(&res[i])`): a bam::array element has no address, and its
//     line holds T, not int4;
//   - on the host, the buffer is given to a library call (thrust::, cub::,
//     cuFFT, cuBLAS, cuSPARSE, cuRAND, NCCL, cuDNN), which reads and writes
//     the device memory itself;
//   - the buffer is also passed to a kernel parameter that is never
//     portable for one of these reasons (a buffer is one bam::array for
//     every launch, or none).
//
// Choosing such a parameter only ever produced a refusal warning. --auto
// now leaves it out with a note (PORT092) that says why; --array still
// chooses it, and the port then refuses it with the warning as before.

// libraryCallPrefixes are host API families that take raw device memory.
var libraryCallPrefixes = []string{"thrust::", "cub::", "cufft", "cublas", "cusparse", "curand", "nccl", "cudnn", "cusolver", "nvshmem", "cudaBindTexture"}

// neverPortable says why the kernel parameter key can never become a
// bam::array (see above), or "". Memoised per file.
func (c *portCtx) neverPortable(key paramKey) string {
	if why, ok := c.never[key]; ok {
		return why
	}
	c.never[key] = ""
	why := c.neverPortableUncached(key)
	c.never[key] = why
	return why
}

func (c *portCtx) neverPortableUncached(key paramKey) string {
	p := key.fn.Params[key.idx]
	if why := unsupportedType(p.Type); why != "" {
		return fmt.Sprintf("its type %s has no bam::array form (%s)", typeText(p.Type), why)
	}
	if key.fn.Body != nil {
		if why := c.rawKernelUse(key.fn, p, map[*parse.FuncDecl]bool{}); why != "" {
			return why
		}
	}
	for _, v := range c.copyGroupOf(c.argVarsOf(key)) {
		if why := c.libraryHostUse(v); why != "" {
			return why
		}
	}
	return ""
}

// copyGroupOf adds the buffers the given ones are pointer-copied or
// swapped with (ping-pong buffers): the port makes such a group bam::arrays
// together or not at all (host.go addCopyPartners).
func (c *portCtx) copyGroupOf(vars []*hostVar) []*hostVar {
	in := map[*hostVar]bool{}
	for _, v := range vars {
		in[v] = true
	}
	for i := 0; i < len(vars); i++ {
		v := vars[i]
		for _, op := range v.ops {
			if op.kind != opCopy && op.kind != opSwap {
				continue
			}
			for _, sym := range []*parse.Symbol{op.dst, op.src} {
				if sym == nil || sym == v.sym {
					continue
				}
				if w := c.hostVarFor(v.fn, sym); !in[w] {
					in[w] = true
					vars = append(vars, w)
				}
			}
		}
	}
	return vars
}

// rawKernelUse finds a raw address into the parameter's array given to a
// library function or cast to a pointer to another type, in fn or in a
// __device__ helper of this file the address is passed to.
func (c *portCtx) rawKernelUse(fn *parse.FuncDecl, p *parse.Param, seen map[*parse.FuncDecl]bool) string {
	if seen[fn] || fn.Body == nil || p.Type == nil {
		return ""
	}
	seen[fn] = true
	elem := strings.TrimSpace(p.Type.Base)
	names := map[*parse.Symbol]bool{}
	if sym := fn.Scope.Lookup(p.Name, p.NameSpan.Stop); sym != nil {
		names[sym] = true
	}
	// Local pointers made from the parameter (`const T *q = &p[i];`), one
	// level, in source order.
	parse.Inspect(fn.Body, func(n parse.Node) bool {
		vd, ok := n.(*parse.VarDecl)
		if !ok || vd.Init == nil || vd.Type == nil || vd.Type.Pointers != 1 {
			return true
		}
		if base := c.addressBase(fn, vd.Init); base != nil && names[base] {
			if sym := fn.Scope.Lookup(vd.Name, vd.NameSpan.Stop); sym != nil {
				names[sym] = true
			}
		}
		return true
	})
	why := ""
	parse.WithStack(fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if why != "" || !ok {
			return why == ""
		}
		sym := fn.Scope.Lookup(id.Name, id.Pos())
		if sym == nil || !names[sym] {
			return true
		}
		at, ctx := addressContext(id, parents)
		switch x := ctx.(type) {
		case *parse.CastExpr:
			if x.Type != nil && x.Type.Pointers > 0 && strings.TrimSpace(x.Type.Base) != elem && x.Type.Base != "void" {
				why = fmt.Sprintf("%s reads or writes %s's memory as %s (`%s`)", fn.Name, p.Name, x.Type.Text, oneLine(c.text(x)))
			}
		case *parse.CallExpr:
			j := indexOf(x.Args, at)
			if j >= 0 && c.isLibraryCall(x) {
				why = fmt.Sprintf("%s gives a raw address into %s to %s, a library function (`%s`)", fn.Name, p.Name, oneLine(c.text(x.Fun)), oneLine(c.text(x)))
			}
			if defs := c.deviceDefs(parse.ShortFuncName(x.Fun)); j >= 0 && why == "" && len(defs) == 1 && j < len(defs[0].Params) {
				if w := c.rawKernelUse(defs[0], defs[0].Params[j], seen); w != "" {
					why = fmt.Sprintf("%s passes an address into %s to %s, where %s", fn.Name, p.Name, defs[0].Name, w)
				}
			}
		}
		return why == ""
	})
	return why
}

// addressContext climbs from a use of a pointer through the forms that
// still are an address into its array (parentheses, p + off, &p[i], the
// arms of ?:) and returns the outermost such expression and its parent.
func addressContext(id *parse.Ident, parents []parse.Node) (parse.Node, parse.Node) {
	cur := parse.Node(id)
	indexed := false
	for i := len(parents) - 1; i >= 0; i-- {
		switch x := parents[i].(type) {
		case *parse.ParenExpr:
		case *parse.BinaryExpr:
			if indexed || (x.Op != "+" && x.Op != "-") {
				return cur, x
			}
		case *parse.IndexExpr:
			if indexed || x.X != cur {
				return cur, x
			}
			indexed = true
		case *parse.UnaryExpr:
			if !indexed || x.Op != "&" || x.Postfix {
				return cur, x
			}
			indexed = false
		case *parse.CondExpr:
			if indexed || x.Cond == cur {
				return cur, x
			}
		default:
			if indexed {
				return cur, nil // an element, not an address
			}
			return cur, x
		}
		cur = parents[i]
	}
	return cur, nil
}

// addressBase returns the pointer symbol an initialiser takes an address
// into (`p`, `p + off`, `&p[i]`, through parentheses), or nil.
func (c *portCtx) addressBase(fn *parse.FuncDecl, e parse.Expr) *parse.Symbol {
	e = parse.Unparen(e)
	switch x := e.(type) {
	case *parse.Ident:
		return fn.Scope.Lookup(x.Name, x.Pos())
	case *parse.BinaryExpr:
		if x.Op == "+" || x.Op == "-" {
			return c.addressBase(fn, x.X)
		}
	case *parse.UnaryExpr:
		if ix, ok := parse.Unparen(x.X).(*parse.IndexExpr); ok && x.Op == "&" && !x.Postfix {
			return c.addressBase(fn, ix.X)
		}
	}
	return nil
}

// isLibraryCall reports whether a call names a function that is neither an
// atomic bamgen rewrites nor defined in this file or a local header (a
// macro is not a library function either).
func (c *portCtx) isLibraryCall(call *parse.CallExpr) bool {
	name := parse.ShortFuncName(call.Fun)
	if name == "" || atomicMethods[name] != "" || cacheHintLoads[name] || cacheHintStores[name] || c.macros[name] != nil || len(c.byName[name]) > 0 {
		return false
	}
	for _, fd := range c.funcs {
		if fd.Name == name {
			return false
		}
	}
	if c.headerDeclaring(name) != "" {
		return false
	}
	// Only what is known to come from CUDA or its libraries: a function of
	// a project header bamgen did not find (an -I path it was not given)
	// could still be ported with the program.
	full := strings.TrimPrefix(parse.FuncName(call.Fun), "::")
	for _, ns := range deviceLibraryNamespaces {
		if strings.HasPrefix(full, ns) {
			return true
		}
	}
	return full == name && (strings.HasPrefix(name, "__") || strings.HasPrefix(name, "curand") || strings.HasPrefix(name, "cuda") || strings.HasPrefix(name, "atomic"))
}

// deviceLibraryNamespaces are the namespaces of CUDA's device libraries.
var deviceLibraryNamespaces = []string{"wmma::", "nvcuda::", "cuda::", "cooperative_groups::", "cg::", "cub::", "thrust::", "std::"}

// libraryHostUse finds a host statement giving the buffer v to a library
// call, also inside a host function of this file v is passed to.
func (c *portCtx) libraryHostUse(v *hostVar) string {
	return c.libraryUseIn(v, map[*parse.Symbol]bool{})
}

func (c *portCtx) libraryUseIn(v *hostVar, seen map[*parse.Symbol]bool) string {
	if seen[v.sym] {
		return ""
	}
	seen[v.sym] = true
	for _, op := range v.ops {
		if op.kind != opOther || op.where == nil {
			continue
		}
		why := ""
		parse.Inspect(op.where, func(n parse.Node) bool {
			call, ok := n.(*parse.CallExpr)
			if !ok || why != "" {
				return why == ""
			}
			g, j := c.hostCallee(call), indexOf(call.Args, op.node)
			if g == nil || j < 0 || g.Body == nil {
				return true
			}
			if sym := g.Scope.Lookup(g.Params[j].Name, g.Params[j].NameSpan.Stop); sym != nil && sym.Param {
				if w := c.libraryUseIn(c.hostVarFor(g, sym), seen); w != "" {
					why = fmt.Sprintf("the buffer %s is passed to %s, where %s", v.sym.Name, g.Name, w)
				}
			}
			return why == ""
		})
		if why != "" {
			return why
		}
	}
	for _, op := range v.ops {
		if op.kind != opOther || op.where == nil {
			continue
		}
		found := ""
		parse.Inspect(op.where, func(n parse.Node) bool {
			call, ok := n.(*parse.CallExpr)
			if !ok || found != "" {
				return found == ""
			}
			fun := oneLine(c.text(call.Fun))
			for _, pre := range libraryCallPrefixes {
				if strings.HasPrefix(strings.TrimPrefix(fun, "::"), pre) && call.Pos() <= op.node.Pos() && op.node.End() <= call.End() {
					found = fun
				}
			}
			return found == ""
		})
		if found != "" {
			return fmt.Sprintf("the buffer %s is given to %s (`%s`), a library that uses the device memory itself", v.sym.Name, found, oneLine(c.text(op.where)))
		}
	}
	return ""
}

// dropNeverPortable removes the --auto choices that can never be ported,
// and those whose buffer also reaches such a parameter, with a note each.
func (c *portCtx) dropNeverPortable(chosen map[paramKey]string) {
	for _, key := range sortedKeys(chosen) {
		if !strings.HasPrefix(chosen[key], "--auto") {
			continue
		}
		why := c.neverPortable(key)
		if why == "" {
			why = c.sharedWithNeverPortable(key)
		}
		if why == "" {
			continue
		}
		delete(chosen, key)
		p := key.fn.Params[key.idx]
		c.addDiag(diag.Diagnostic{Pos: p.Pos(), End: p.End(), Severity: diag.Note, Code: CodeNotChosen,
			Message: fmt.Sprintf("%s: --auto does not choose %s: %s", key.fn.Name, p.Name, why)})
	}
}

// sharedWithNeverPortable: the parameter's buffer is also passed to a
// kernel parameter that can never be ported.
func (c *portCtx) sharedWithNeverPortable(key paramKey) string {
	for _, v := range c.copyGroupOf(c.argVarsOf(key)) {
		for _, other := range c.launchKeysOf(v) {
			if other == key {
				continue
			}
			if why := c.neverPortable(other); why != "" {
				return fmt.Sprintf("its buffer %s is also passed to %s:%s, which can never be a bam::array (%s)",
					v.sym.Name, other.fn.Name, other.fn.Params[other.idx].Name, why)
			}
		}
	}
	return ""
}
