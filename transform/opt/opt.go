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
	"strconv"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// Kind is an access-pattern rewrite, as --opt names it.
type Kind int

const (
	None      Kind = iota // no rewrite (what auto chooses when none applies)
	Claware               // cache-line-aware work assignment (thesis §6.2)
	Transpose             // transposed warp order (§6.3.2)
	Coarsen               // warp coarsening (§6.3.3)
	ODT                   // on-demand implicit tiling (§6.3.4)
	Auto                  // choose by the kernel's shape
)

// Kinds lists the rewrites --opt accepts, in the order help texts name them.
var Kinds = []Kind{Claware, Transpose, Coarsen, ODT, Auto}

func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Claware:
		return "claware"
	case Transpose:
		return "transpose"
	case Coarsen:
		return "coarsen"
	case ODT:
		return "odt"
	case Auto:
		return "auto"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// Options selects the rewrite and its parameters. Make it with Parse, which
// validates it and fills in the defaults.
type Options struct {
	Kind         Kind
	LanesPerLine int // claware: lanes per cache line (32, 16, 8)
	Stride       int // transpose: vertex stride
	Coarsen      int // coarsen: vertices per warp
}

// Ported is what the port decided, handed to the rewrites as data: they
// run on the same original bytes, and their edits are applied together
// with the port's.
type Ported struct {
	// Params maps each kernel to the parameters that became bam::array;
	// only those kernels are rewritten, and line geometry comes from them.
	Params map[string][]string
	// LaunchArgs holds, per launch, the text each argument has after the
	// port (odt adds arguments built from them). A launch that is not in
	// the map keeps its arguments as written.
	LaunchArgs map[*parse.LaunchExpr][]string
	// Edited are the byte ranges the port changes (e.g. --ref reads an
	// access through an array_ref); a rewrite leaves them alone.
	Edited []edit.Span
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
	CodeBadOption    = "OPT009" // an option value is out of range; Parse reports it as a usage error before any file is read, so no diagnostic carries it
	CodeNoBody       = "OPT010" // kernel has no body in this file
)

// Result is what running the rewrites on one file produced.
type Result struct {
	Diags []diag.Diagnostic
	Edits []edit.Edit
	// Applied maps each rewritten kernel to the rewrite applied to it.
	Applied map[string]Kind
	// HiddenWalks maps kernels whose odt walk would read the edge array
	// through its tile view but finds those reads rewritten by the port
	// (--ref gave it an array_ref) to the walk loop's byte offset.
	HiddenWalks map[string]int
}

// Run applies opts.Kind to every kernel of the file that has ported
// parameters and explains each decision. af is the file's analysis, made
// once by the pipeline; opts comes from Parse.
func Run(af *analysis.File, opts Options, ported Ported) Result {
	res := Result{Applied: map[string]Kind{}}
	for _, k := range af.Kernels() {
		if len(ported.Params[k.Decl.Name]) == 0 {
			continue // only ported kernels touch storage; the others are left alone
		}
		r := &rewriter{file: af, fn: k, opts: opts, ported: ported, mapping: analysis.KernelMapping(k), hiddenWalk: -1}
		kind := opts.Kind
		if kind == Auto {
			kind = r.choose()
		}
		if kind != None {
			r.run(kind)
		}
		if opts.Kind == Auto && kind != None && len(r.edits) == 0 {
			kind = r.fallback(kind)
		}
		res.Diags = append(res.Diags, r.diags...)
		if len(r.edits) > 0 {
			res.Edits = append(res.Edits, r.edits...)
			res.Applied[k.Decl.Name] = kind
			if r.hiddenWalk >= 0 {
				if res.HiddenWalks == nil {
					res.HiddenWalks = map[string]int{}
				}
				res.HiddenWalks[k.Decl.Name] = r.hiddenWalk
			}
		}
	}
	return res
}

// Parse reads --opt (KIND, transpose=STRIDE or coarsen=K) and
// --lanes-per-line into checked options with defaults filled in. The
// errors are usage errors, worded for the command line.
func Parse(spec string, lanesPerLine int) (Options, error) {
	name, arg, hasArg := strings.Cut(spec, "=")
	o := Options{LanesPerLine: lanesPerLine}
	for _, k := range Kinds {
		if k.String() == name {
			o.Kind = k
		}
	}
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("--opt %s: %q is not a positive whole number", spec, arg)
		}
		switch o.Kind {
		case Transpose:
			o.Stride = n
		case Coarsen:
			o.Coarsen = n
		case None, Claware, ODT, Auto:
			return o, fmt.Errorf("--opt %s: only transpose=STRIDE and coarsen=K take a number", spec)
		default:
			panic("opt.Parse: unhandled kind " + o.Kind.String())
		}
	}
	return o, o.validate(name)
}

// validate checks the options and fills in defaults; name is the kind as
// written, for the message when it is unknown.
func (o *Options) validate(name string) error {
	if o.Kind == None {
		names := make([]string, len(Kinds))
		for i, k := range Kinds {
			names[i] = k.String()
		}
		return fmt.Errorf("unknown --opt %q; use one of %s", name, strings.Join(names, ", "))
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
