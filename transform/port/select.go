package port

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// Choice is one kernel parameter chosen for porting, why, and what became
// of it. The CLI prints these as the port report.
type Choice struct {
	Kernel string `json:"kernel"`
	Param  string `json:"param"`
	Reason string `json:"reason"` // why it was chosen
	Ported bool   `json:"ported"`
	Why    string `json:"why,omitempty"` // why it was not ported
	key    paramKey
}

// selectArrays resolves --array, config and --auto choices to kernel
// parameters. Names that match nothing are errors; the message lists what
// could have been meant.
func (c *portCtx) selectArrays() map[paramKey]string {
	chosen := map[paramKey]string{}
	specs := append([]string(nil), c.opts.Arrays...)
	reasons := make([]string, len(specs))
	for i := range specs {
		reasons[i] = "--array " + specs[i]
	}
	if cfg := c.opts.Config; cfg != nil {
		for _, a := range cfg.Arrays {
			specs = append(specs, a.Name)
			reasons = append(reasons, "config "+cfg.Path())
		}
	}
	for i, spec := range specs {
		c.resolveSpec(spec, reasons[i], chosen)
	}
	if c.opts.Auto || (c.opts.Config != nil && c.opts.Config.Auto) {
		c.autoSelect(chosen)
		c.chooseSharedBuffers(chosen)
		c.dropNeverPortable(chosen)
	}
	for key := range chosen {
		if c.isDirectClone(key.fn) {
			delete(chosen, key) // a clone follows its kernel (clones.go): porting the output again changes nothing
		}
	}
	return chosen
}

// chooseSharedBuffers makes --auto choose per buffer, not per parameter: a
// buffer passed to a chosen parameter and also to a pointer parameter of
// another kernel of this file gets that parameter chosen too. Otherwise the
// host could not make the buffer one bam::array for one launch and a raw
// pointer for the other, and both would be refused.
//
// Likewise per helper parameter: a __device__ helper is ported one way
// only, so a kernel parameter passed to the same helper parameter as a
// chosen one is chosen too (else both would be refused, PORT020).
func (c *portCtx) chooseSharedBuffers(chosen map[paramKey]string) {
	reach := c.helperReach()
	for changed := true; changed; {
		changed = false
		for _, key := range sortedKeys(chosen) {
			for _, h := range reach.of[key] {
				for _, other := range reach.by[h] {
					if chosen[other] != "" || !c.choosable(other) {
						continue
					}
					chosen[other] = fmt.Sprintf("--auto: it is passed to %s:%s like %s:%s, which is chosen (a helper is ported one way)",
						h.fn.Name, h.fn.Params[h.idx].Name, key.fn.Name, key.fn.Params[key.idx].Name)
					changed = true
				}
			}
			for _, v := range c.argVarsOf(key) {
				for _, other := range c.launchKeysOf(v) {
					k, p := other.fn, other.fn.Params[other.idx]
					if chosen[other] != "" || k.Body == nil || p.Type == nil || p.Type.Pointers != 1 || isBamArray(p.Type) {
						continue
					}
					chosen[other] = fmt.Sprintf("--auto: the buffer %s is also passed to %s:%s, which is chosen",
						v.sym.Name, key.fn.Name, key.fn.Params[key.idx].Name)
					changed = true
				}
			}
		}
	}
}

// choosable: a kernel pointer parameter --auto may choose.
func (c *portCtx) choosable(key paramKey) bool {
	p := key.fn.Params[key.idx]
	return key.fn.Body != nil && p.Type != nil && p.Type.Pointers == 1 && !isBamArray(p.Type)
}

// helperParams maps kernel parameters to the helper parameters their
// array reaches (through helpers calling helpers), and back.
type helperParams struct {
	of map[paramKey][]paramKey
	by map[paramKey][]paramKey
}

func (c *portCtx) helperReach() helperParams {
	r := helperParams{of: map[paramKey][]paramKey{}, by: map[paramKey][]paramKey{}}
	for _, k := range c.kernels() {
		for i := range k.Params {
			key := paramKey{k, i}
			if !c.choosable(key) {
				continue
			}
			seen := map[paramKey]bool{}
			var walk func(p paramKey)
			walk = func(p paramKey) {
				for _, hc := range c.analyzeParam(p.fn, p.idx).calls {
					h := paramKey{hc.callee, hc.arg}
					if seen[h] {
						continue
					}
					seen[h] = true
					r.of[key] = append(r.of[key], h)
					r.by[h] = append(r.by[h], key)
					walk(h)
				}
			}
			walk(key)
		}
	}
	return r
}

// resolveSpec adds the parameters matching NAME or KERNEL:NAME.
func (c *portCtx) resolveSpec(spec, reason string, chosen map[paramKey]string) {
	kernel, name, qualified := strings.Cut(spec, ":")
	if !qualified {
		kernel, name = "", spec
	}
	var matches []paramKey
	kernelSeen, anyPointer := false, false
	for _, k := range c.kernels() {
		if kernel != "" && k.Name != kernel {
			continue
		}
		kernelSeen = true
		for i, p := range k.Params {
			if p.Name == name {
				matches = append(matches, paramKey{k, i})
				anyPointer = anyPointer || p.Type.IsPointer()
			}
		}
	}
	for _, key := range matches {
		// An unqualified name means the pointer parameters of that name; a
		// scalar of the same name in another kernel is not an error then.
		if kernel == "" && anyPointer && !key.fn.Params[key.idx].Type.IsPointer() {
			continue
		}
		c.chooseParam(key, reason, chosen)
	}
	matched := len(matches) > 0
	from := "" // flags are on the command line; a config entry says where it is
	if strings.HasPrefix(reason, "config ") {
		from = " (named in " + strings.TrimPrefix(reason, "config ") + ")"
	}
	switch {
	case kernel != "" && !kernelSeen:
		c.addDiag(diag.Diagnostic{Severity: diag.Error, Code: CodeUnknownKernel,
			Message: fmt.Sprintf("no kernel named %q%s; kernels with pointer parameters: %s", kernel, from, c.pointerParamList())})
	case !matched:
		where := "kernel parameter"
		if kernel != "" {
			where = "parameter of " + kernel
		}
		c.addDiag(diag.Diagnostic{Severity: diag.Error, Code: CodeUnknownArray,
			Message: fmt.Sprintf("no %s named %q%s; kernels with pointer parameters: %s", where, name, from, c.pointerParamList())})
	}
}

// chooseParam records one chosen parameter, or says why it cannot be one.
func (c *portCtx) chooseParam(key paramKey, reason string, chosen map[paramKey]string) {
	p := key.fn.Params[key.idx]
	switch {
	case isBamArray(p.Type):
		c.addDiag(diag.Diagnostic{Pos: p.Pos(), End: p.End(), Severity: diag.Note, Code: CodeAlreadyPorted,
			Message: fmt.Sprintf("%s: %s already is a bam::array", key.fn.Name, p.Name)})
	case p.Type == nil || !p.Type.IsPointer():
		c.addDiag(diag.Diagnostic{Pos: p.Pos(), End: p.End(), Severity: diag.Error, Code: CodeNotPointer,
			Message: fmt.Sprintf("%s: parameter %s (%s) is not a pointer; only pointer parameters become bam::array", key.fn.Name, p.Name, typeText(p.Type))})
	default:
		if _, dup := chosen[key]; !dup {
			chosen[key] = reason
		}
	}
}

func isBamArray(t *parse.TypeRef) bool {
	return t != nil && strings.HasPrefix(strings.TrimPrefix(t.Base, "::"), "bam::array")
}

// pointerParamList renders "k1(a, b), k2(c)" for messages.
func (c *portCtx) pointerParamList() string {
	var parts []string
	for _, k := range c.kernels() {
		var names []string
		for _, p := range k.Params {
			if p.Type.IsPointer() && p.Name != "" {
				names = append(names, p.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, k.Name+"("+strings.Join(names, ", ")+")")
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// autoSelect chooses, in every kernel, the pointer parameters that are
// indexed data-dependently (a value loaded from memory forms the index:
// the irregular accesses BaM exists for) and those whose host allocation
// scales with the input (the big arrays). Constant-size buffers (counters,
// flags, small tables) stay in GPU memory.
func (c *portCtx) autoSelect(chosen map[paramKey]string) {
	for _, fn := range c.an.Kernels() {
		for i, p := range fn.Decl.Params {
			key := paramKey{fn.Decl, i}
			if !p.Type.IsPointer() || isBamArray(p.Type) || chosen[key] != "" {
				continue
			}
			if why := c.dataDependence(fn, p.Name); why != "" {
				chosen[key] = "--auto: " + why
			} else if why := c.scalingAllocation(key); why != "" {
				chosen[key] = "--auto: " + why
			}
		}
	}
}

// dataDependence describes the first data-dependent access of name, or "".
func (c *portCtx) dataDependence(fn *analysis.Function, name string) string {
	for _, a := range fn.Arrays {
		if a.Name != name || !a.DataDependent() {
			continue
		}
		for _, acc := range a.Accesses {
			if acc.Index.Form == analysis.Loaded {
				return fmt.Sprintf("indexed data-dependently (%s)", oneLine(string(c.src[acc.Pos:acc.End])))
			}
		}
	}
	return ""
}

// argVarsOf returns the local host variables passed for the parameter at
// its launches (one per launch that passes a local variable there, or the
// callers' variables where the launch passes a forwarding function's
// parameter, forward.go).
func (c *portCtx) argVarsOf(key paramKey) []*hostVar {
	var out []*hostVar
	for _, l := range c.launchesOf(key.fn) {
		if key.idx >= len(l.args) {
			continue
		}
		if v := c.hostVarOf(l, key.idx); v != nil {
			out = append(out, v)
		} else if f := c.forwarderOfArg(l, key.idx); f != nil && f.why == "" {
			vars, _, _, _ := c.forwardedVars(f)
			out = append(out, vars...)
		}
	}
	return out
}

// launchKeysOf lists the kernel parameters the buffer v is passed to: at
// its launches, and through forwarding functions.
func (c *portCtx) launchKeysOf(v *hostVar) []paramKey {
	var keys []paramKey
	for _, op := range v.ops {
		switch {
		case op.kind == opLaunch && op.launch != nil && op.launch.kernel != nil && op.arg < len(op.launch.kernel.Params):
			keys = appendKey(keys, paramKey{op.launch.kernel, op.arg})
		case op.kind == opForward:
			for _, k := range c.forwardedKeys(c.forwarderOf(c.hostCallee(op.call), op.arg)) {
				keys = appendKey(keys, k)
			}
		}
	}
	return keys
}

// scalingAllocation finds the host allocations behind the parameter's
// launch arguments and reports one whose size is not a constant.
func (c *portCtx) scalingAllocation(key paramKey) string {
	for _, v := range c.argVarsOf(key) {
		if a := findAllocation(v); a != nil && !isConstantExpr(a.bytes) {
			return fmt.Sprintf("its allocation (%s) scales with the input", oneLine(c.text(a.bytes)))
		}
	}
	return ""
}

// isConstantExpr reports whether e is built from literals and sizeof only.
func isConstantExpr(e parse.Expr) bool {
	constant := true
	parse.WithStack(e, func(n parse.Node, _ []parse.Node) bool {
		switch n.(type) {
		case *parse.SizeofExpr:
			return false
		case *parse.Ident, *parse.CallExpr, *parse.MemberExpr, *parse.IndexExpr:
			constant = false
		}
		return constant
	})
	return constant
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// sortedKeys orders chosen parameters by kernel position, then index.
func sortedKeys[V any](m map[paramKey]V) []paramKey {
	keys := make([]paramKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].fn.Pos() != keys[j].fn.Pos() {
			return keys[i].fn.Pos() < keys[j].fn.Pos()
		}
		return keys[i].idx < keys[j].idx
	})
	return keys
}
