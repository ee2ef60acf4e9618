// Package opt holds bamgen's access-pattern rewrites (thesis ch. 6): they
// change which thread does which piece of work so that a ported kernel
// keeps many distinct cache lines in flight and reuses each line it
// fetches. Each rewrite checks its legality rule on the analysis first and
// reports the statement that blocks it; it never rewrites a kernel it
// cannot prove unchanged in meaning.
//
// The rewrites share one shape. The original kernel body is wrapped, as it
// is, in a lambda taking a virtual id; the one definition of the thread (or
// warp) id inside it is changed to take that virtual id; a driver from
// <bam/work_assignment.cuh> then runs the lambda for every virtual id of
// the original launch, in the order the rewrite wants. All edits stay on
// the lines they replace, so compiler messages about the output point at
// the original lines.
package opt

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform"
)

// Options selects the rewrite and its parameters.
type Options struct {
	Kind         string // "claware", "transpose", "coarsen", "odt" or "auto"
	LanesPerLine int    // claware: lanes per cache line (32, 16, 8); 0 means 32
	Stride       int    // transpose: vertex stride; 0 means 128
	Coarsen      int    // coarsen: vertices per warp; 0 means 8
	// Ported maps each kernel to the parameters that became bam::array;
	// line geometry comes from them.
	Ported map[string][]string
	// LaunchArg returns the text argument i of launch l will have after
	// the port (odt adds arguments built from them); nil means unchanged.
	LaunchArg func(l *parse.LaunchExpr, i int) string
	// Edited reports whether the port already changes bytes in [start,
	// end) (e.g. --ref reads an access through an array_ref); a rewrite
	// leaves such spans alone. nil means nothing is edited.
	Edited func(start, end int) bool
}

// Diagnostic codes of this package; docs/rewrites.md explains each.
const (
	CodeApplied      = "OPT000" // note: rewrite applied
	CodeNoThreadID   = "OPT001" // no single global thread id variable
	CodeBlocked      = "OPT002" // barrier, shared memory, asm, spin-wait
	CodeWarpSync     = "OPT003" // warp intrinsics forbid lane remapping
	CodeStrayIndex   = "OPT004" // threadIdx/blockIdx used outside the id variables
	CodeNoWarpID     = "OPT005" // transpose/coarsen need a warp-per-item kernel
	CodeNotPorted    = "OPT006" // no bam::array to take line geometry from
	CodeNotCSR       = "OPT007" // odt: no CSR neighbour walk found
	CodeUnsafeWrites = "OPT008" // odt: per-vertex writes cannot be combined across tiles
	CodeBadOption    = "OPT009" // an option value is out of range
	CodeNoBody       = "OPT010" // kernel has no body in this file
)

// Kinds lists the rewrites --opt accepts.
var Kinds = []string{"claware", "transpose", "coarsen", "odt", "auto"}

// Result is what running the rewrites on one file produced.
type Result struct {
	Diags []diag.Diagnostic
	Edits []transform.Edit
	// Applied maps each rewritten kernel to the rewrite applied to it.
	Applied map[string]string
}

// Run applies opts.Kind to every kernel of the file that has ported arrays
// (or, for an explicit kind, to every kernel) and explains each decision.
func Run(af *analysis.File, opts Options) Result {
	res := Result{Applied: map[string]string{}}
	if err := opts.Validate(); err != nil {
		res.Diags = append(res.Diags, diag.Diagnostic{Severity: diag.Error, Code: CodeBadOption, Message: err.Error()})
		return res
	}
	for _, k := range af.Kernels() {
		if len(opts.Ported[k.Decl.Name]) == 0 {
			continue // only ported kernels touch storage; the others are left alone
		}
		r := &rewriter{file: af, fn: k, opts: opts, mapping: analysis.KernelMapping(k)}
		kind := opts.Kind
		if kind == "auto" {
			kind = r.choose()
		}
		if kind != "" {
			r.run(kind)
		}
		if opts.Kind == "auto" && kind != "" && len(r.edits) == 0 {
			kind = r.fallback(kind)
		}
		res.Diags = append(res.Diags, r.diags...)
		if len(r.edits) > 0 {
			res.Edits = append(res.Edits, r.edits...)
			res.Applied[k.Decl.Name] = kind
		}
	}
	return res
}

// Validate checks the options and fills in defaults.
func (o *Options) Validate() error {
	switch o.Kind {
	case "claware", "transpose", "coarsen", "odt", "auto":
	default:
		return fmt.Errorf("unknown --opt %q; use one of %s", o.Kind, strings.Join(Kinds, ", "))
	}
	switch o.LanesPerLine {
	case 0:
		o.LanesPerLine = 32
	case 32, 16, 8:
	default:
		return fmt.Errorf("--lanes-per-line %d is not supported; use 32, 16 or 8", o.LanesPerLine)
	}
	if o.Stride == 0 {
		o.Stride = 128
	}
	if o.Coarsen == 0 {
		o.Coarsen = 8
	}
	if o.Stride < 1 || o.Stride > 1<<20 {
		return fmt.Errorf("--opt transpose=%d: the stride must be between 1 and 1048576", o.Stride)
	}
	if o.Coarsen < 1 || o.Coarsen > 1024 {
		return fmt.Errorf("--opt coarsen=%d: the factor must be between 1 and 1024", o.Coarsen)
	}
	return nil
}
