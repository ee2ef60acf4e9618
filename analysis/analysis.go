// Package analysis answers, for each function of a parsed CUDA file, the
// questions a port needs: which arrays a kernel indexes, how each index is
// formed (affine in the thread, warp or lane id; loaded from another array,
// i.e. data-dependent; or other), where each kernel is launched, and which
// parts of kernel bodies the parser could not understand.
//
// The thread-index dataflow is flow-insensitive: every local variable gets
// the join of the shapes of all its definitions, iterated to a fixpoint.
// That is exact for the straight-line index arithmetic kernels use and
// conservative (never claims affine when it is not) elsewhere.
package analysis

import (
	"fmt"
	"sync/atomic"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// Mode is how an access uses an element.
type Mode string

const (
	Read      Mode = "read"
	Write     Mode = "write"
	ReadWrite Mode = "read-write" // compound assignment, ++/--
	Atomic    Mode = "atomic"     // atomicAdd(&a[i], v) and friends
	Address   Mode = "address"    // &a[i] used otherwise: the pointer escapes
)

// Access is one subscript (or dereference) of an array in a function body.
type Access struct {
	Array string
	Index Shape
	Mode  Mode
	Pos   int // offset of the subscript expression
	End   int
	Expr  parse.Expr
}

// Param is a function parameter as the report shows it.
type Param struct {
	Name    string
	Type    string
	Pointer bool
	Const   bool
	Node    *parse.Param
}

// Array summarises every access to one array in one function.
type Array struct {
	Name     string
	Param    bool // the array is a pointer parameter (a port candidate)
	Accesses []Access
}

// Forms returns the distinct index forms used, in order of first use.
func (a *Array) Forms() []Shape {
	var out []Shape
	for _, acc := range a.Accesses {
		if !containsShape(out, acc.Index) {
			out = append(out, acc.Index)
		}
	}
	return out
}

// DataDependent reports whether any access indexes a with a loaded value.
func (a *Array) DataDependent() bool {
	for _, acc := range a.Accesses {
		if acc.Index.Form == Loaded {
			return true
		}
	}
	return false
}

// FuncKind is where a function runs, from its CUDA qualifiers.
type FuncKind int

const (
	Host       FuncKind = iota // no qualifier, or __host__
	Kernel                     // __global__
	Device                     // __device__
	HostDevice                 // __host__ __device__
)

// String is the kind as reports and the JSON output spell it.
func (k FuncKind) String() string {
	switch k {
	case Host:
		return "host"
	case Kernel:
		return "kernel"
	case Device:
		return "device"
	case HostDevice:
		return "host-device"
	default:
		return fmt.Sprintf("FuncKind(%d)", int(k))
	}
}

// Function is the analysis of one function.
type Function struct {
	Decl   *parse.FuncDecl
	Kind   FuncKind
	Params []Param
	Arrays []*Array
	Locals map[string]Shape  // the final shape of each local variable, by name
	Diags  []diag.Diagnostic // the parser's diagnostics inside the body (see Unparsed)

	macros   map[string]string // the file's object-like macros, for constant folding
	ev       *evaluator        // the solved dataflow, for ShapeOf
	typedefs map[string]string // the file's typedefs, for element sizes
	refs     refParams         // reference parameters of the file's functions
}

// Unparsed counts the regions of the body the parser could not understand:
// its error diagnostics. Warnings inside the body (a missing ';', an
// unmatched #endif) are recovered from and leave the analysis complete.
func (fn *Function) Unparsed() int {
	n := 0
	for _, d := range fn.Diags {
		if d.Severity == diag.Error {
			n++
		}
	}
	return n
}

// ShapeOf returns the abstract value of an expression inside the function.
func (fn *Function) ShapeOf(e parse.Expr) Shape {
	if fn.ev == nil {
		return formed(Unknown)
	}
	return fn.ev.shape(e)
}

// ConstValue folds an integer constant expression (literals, the file's
// object-like macros and arithmetic on them).
func (fn *Function) ConstValue(e parse.Expr) (int64, bool) { return foldConst(e, fn.macros, 0) }

// File is the analysis of one parsed file.
type File struct {
	Parse     *parse.File
	Functions []*Function
	Launches  []Launch
}

// Kernels returns the analysed __global__ functions.
func (f *File) Kernels() []*Function {
	var out []*Function
	for _, fn := range f.Functions {
		if fn.Kind == Kernel {
			out = append(out, fn)
		}
	}
	return out
}

// LaunchesOf returns the launch sites of the kernel named name.
func (f *File) LaunchesOf(name string) []Launch {
	var out []Launch
	for _, l := range f.Launches {
		if l.Kernel == name {
			out = append(out, l)
		}
	}
	return out
}

// Analyze runs every analysis on a parsed file.
func Analyze(pf *parse.File) *File { return analyze(pf, true) }

// AnalyzeDevice analyses kernels and device functions in full but host
// functions only for their launch sites: what a port needs, at a fraction
// of the cost on files with large host mains.
func AnalyzeDevice(pf *parse.File) *File { return analyze(pf, false) }

// analyses counts the files analysed since the program started; see Analyses.
var analyses atomic.Int64

// Analyses returns how many times Analyze and AnalyzeDevice have run in this
// process. Tests use it to prove that a pipeline analyses each file once.
func Analyses() int64 { return analyses.Load() }

func analyze(pf *parse.File, hostBodies bool) *File {
	analyses.Add(1)
	out := &File{Parse: pf}
	macros, typedefs, refs := objectMacros(pf), typedefMap(pf), fileRefParams(pf)
	for _, fd := range pf.Funcs() {
		var fn *Function
		if hostBodies || fd.IsDevice() {
			fn = analyzeFunc(pf, fd, macros, refs)
		} else {
			fn = analyzeSignature(fd)
		}
		fn.typedefs = typedefs
		out.Functions = append(out.Functions, fn)
		if fd.Body != nil {
			out.Launches = append(out.Launches, launchesIn(fd)...)
		}
	}
	return out
}

// objectMacros: the file's object-like macros, over those of the local
// headers it includes (HeaderMacros).
func objectMacros(pf *parse.File) map[string]string {
	m := map[string]string{}
	if pf.Src != nil {
		m = HeaderMacros(pf.Src.Name, pf.Src.Bytes, IncludeDirs)
	}
	for _, mac := range pf.Macros {
		if !mac.IsFunc {
			m[mac.Name] = mac.Body
		}
	}
	return m
}

// analyzeSignature records a function's kind and parameters only.
func analyzeSignature(fd *parse.FuncDecl) *Function {
	fn := &Function{Decl: fd, Kind: funcKind(fd)}
	for _, p := range fd.Params {
		fn.Params = append(fn.Params, Param{Name: p.Name, Type: p.Type.Text, Pointer: p.Type.IsPointer(),
			Const: p.Type.Const, Node: p})
	}
	return fn
}

func analyzeFunc(pf *parse.File, fd *parse.FuncDecl, macros map[string]string, refs refParams) *Function {
	fn := analyzeSignature(fd)
	fn.macros, fn.refs = macros, refs
	if fd.Body == nil {
		return fn
	}
	ev := &evaluator{fn: fd, env: map[*parse.Symbol]Shape{}, aliases: map[*parse.Symbol]alias{}, macros: macros}
	solve(ev, collectDefs(fd, refs))
	fn.ev = ev
	fn.Locals = localShapes(ev)
	fn.Arrays = collectAccesses(ev, fd)
	fn.Diags = bodyDiags(pf, fd)
	return fn
}

func funcKind(fd *parse.FuncDecl) FuncKind {
	switch {
	case fd.IsKernel():
		return Kernel
	case fd.IsDevice() && fd.IsHost():
		return HostDevice
	case fd.IsDevice():
		return Device
	}
	return Host
}

func localShapes(ev *evaluator) map[string]Shape {
	out := map[string]Shape{}
	for sym, s := range ev.env {
		out[sym.Name] = join(out[sym.Name], s)
	}
	return out
}

// bodyDiags returns the parser's diagnostics that fall inside fd's body:
// regions of a kernel the analysis could not see.
func bodyDiags(pf *parse.File, fd *parse.FuncDecl) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range pf.Diags {
		if d.Pos >= fd.Body.Pos() && d.Pos < fd.Body.End() {
			out = append(out, d)
		}
	}
	return out
}

func containsShape(list []Shape, s Shape) bool {
	for _, t := range list {
		if t.Equal(s) {
			return true
		}
	}
	return false
}
