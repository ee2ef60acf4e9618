package analysis

import (
	"sort"
	"strings"
)

// Form says how a value depends on the executing thread. The order matters:
// when two definitions of a variable meet, the larger form wins (join).
type Form int

const (
	Uniform   Form = iota // the same in every thread of the grid (constants, parameters, blockDim, gridDim)
	Block                 // depends only on the block (blockIdx): uniform within a block
	Lane                  // affine in the lane id (tid % warpSize)
	Warp                  // affine in the warp id (tid / warpSize), maybe plus a lane term
	Thread                // affine in the thread id (threadIdx, or the global id blockIdx*blockDim+threadIdx)
	Loaded                // loaded from memory: data-dependent
	Nonlinear             // thread-dependent but not affine (tid*tid, tid % 7, hashes)
	Unknown               // the analysis cannot tell (calls to unknown functions, shuffles)
)

var formNames = [...]string{"uniform", "block", "affine(lane)", "affine(warp)", "affine(thread)", "data-dependent", "nonlinear", "unknown"}

func (f Form) String() string { return formNames[f] }

// Shape is the abstract value of an expression: its form and, for
// data-dependent values, the arrays the value was loaded from.
type Shape struct {
	Form  Form
	Loads []string // sorted, deduplicated array names (only for Loaded)
}

func uniform() Shape        { return Shape{Form: Uniform} }
func formed(f Form) Shape   { return Shape{Form: f} }
func loaded(a string) Shape { return Shape{Form: Loaded, Loads: []string{a}} }

// String renders a shape for reports: "data-dependent (from rowptr)".
func (s Shape) String() string {
	if s.Form == Loaded && len(s.Loads) > 0 {
		return s.Form.String() + " (from " + strings.Join(s.Loads, ", ") + ")"
	}
	return s.Form.String()
}

// Equal reports whether two shapes are the same abstract value.
func (s Shape) Equal(t Shape) bool {
	if s.Form != t.Form || len(s.Loads) != len(t.Loads) {
		return false
	}
	for i := range s.Loads {
		if s.Loads[i] != t.Loads[i] {
			return false
		}
	}
	return true
}

// join is the least upper bound: the value may be either s or t.
func join(s, t Shape) Shape {
	out := Shape{Form: max(s.Form, t.Form)}
	out.Loads = unionNames(s.Loads, t.Loads)
	if out.Form != Loaded {
		out.Loads = nil
	}
	return out
}

// addShapes is the shape of a+b or a-b: affine forms stay affine.
func addShapes(s, t Shape) Shape {
	switch {
	case s.Form == Loaded || t.Form == Loaded:
		return Shape{Form: Loaded, Loads: unionNames(s.Loads, t.Loads)}
	case s.Form >= Nonlinear || t.Form >= Nonlinear:
		return formed(max(s.Form, t.Form))
	case s.Form == Warp && t.Form == Lane, s.Form == Lane && t.Form == Warp:
		return formed(Warp) // warp*32 + lane is still warp-structured
	}
	return formed(max(s.Form, t.Form))
}

// mulShapes is the shape of a*b: a uniform factor keeps the other affine.
func mulShapes(s, t Shape) Shape {
	switch {
	case s.Form == Loaded || t.Form == Loaded:
		return Shape{Form: Loaded, Loads: unionNames(s.Loads, t.Loads)}
	case s.Form <= Block:
		return formed(max(s.Form, t.Form))
	case t.Form <= Block:
		return formed(max(s.Form, t.Form))
	}
	return formed(Nonlinear)
}

// unionNames merges two sorted name lists.
func unionNames(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range append(append([]string(nil), a...), b...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
