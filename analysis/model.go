package analysis

import (
	"fmt"
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// GPU is what the first-principles model needs to know about a GPU.
type GPU struct {
	Name       string
	SMs        int
	WarpsPerSM int // resident warps per SM at full occupancy
	WarpSize   int
	MemBytes   int64 // GPU memory, nominal (the placement model's default budget)
}

// GPUs are the presets of --gpu (the 80 GB A100 and H100).
var GPUs = map[string]GPU{
	"a100": {Name: "a100", SMs: 108, WarpsPerSM: 64, WarpSize: 32, MemBytes: 80e9},
	"h100": {Name: "h100", SMs: 132, WarpsPerSM: 64, WarpSize: 32, MemBytes: 80e9},
	"h200": {Name: "h200", SMs: 132, WarpsPerSM: 64, WarpSize: 32, MemBytes: 141e9},
}

// Storage is the device behind the cache: per-request latency and an IOPS
// ceiling (the thesis's Optane SSD: about 10 us and 1.5M IOPS each).
type Storage struct {
	LatencyUS float64
	IOPS      float64
}

// ModelConfig is the input of the model.
type ModelConfig struct {
	GPU       GPU
	LineBytes int
	Storage   Storage
	AvgDegree float64 // average neighbour-list length, for CSR kernels
	// Placement, when a dataset size is given: where each array is read
	// from (placement.go); nil for none.
	Placement *PlacementConfig
}

// Estimate is the model's answer for one kernel under one work assignment.
type Estimate struct {
	Assignment string  `json:"assignment"` // "as written", "claware", "odt", ...
	Formula    string  `json:"formula"`    // how the number is formed, in the thesis's symbols
	Lines      float64 `json:"lines_in_flight"`
	IOPS       float64 `json:"iops"` // Little's law: min(cap, lines / latency)
	GBps       float64 `json:"gb_per_s"`
}

// Model estimates, per work assignment that applies to the kernel, the
// maximum number of cache-line requests in flight (thesis §6.2) and what
// Little's law makes of it against the storage.
func Model(fn *Function, cfg ModelConfig) (shape string, out []Estimate) {
	m := KernelMapping(fn)
	g := cfg.GPU
	sw := float64(g.SMs * g.WarpsPerSM) // SM*W
	cl := float64(cfg.LineBytes)
	est := func(name, formula string, lines float64) {
		lines = max(1, lines)
		iops := lines / (cfg.Storage.LatencyUS * 1e-6)
		if cfg.Storage.IOPS > 0 {
			iops = min(iops, cfg.Storage.IOPS)
		}
		out = append(out, Estimate{Assignment: name, Formula: formula, Lines: lines, IOPS: iops, GBps: iops * cl / 1e9})
	}
	switch walk := FindCSRWalk(fn, m); {
	case walk != nil:
		elem := float64(ElemSize(fn, walk.Edges))
		list := cfg.AvgDegree * elem // bytes of one neighbour list
		if walk.WarpForm {
			shape = "warp-per-vertex CSR walk over " + walk.Edges
			est("as written", "SM*W*d*sizeof(T)/CL (tiny lists share lines)", sw*min(1, list/cl))
		} else {
			shape = "thread-per-vertex CSR walk over " + walk.Edges
			est("as written", "SM*W*WS*d*sizeof(T)/CL", sw*float64(g.WarpSize)*list/cl)
		}
		est("transpose", "SM*W (warps a stride apart touch distinct lines)", sw)
		est("coarsen=8", "SM*W*min(1, 8*d*sizeof(T)/CL)", sw*min(1, 8*list/cl))
		est("odt", "SM*W (one tile = one line per warp)", sw)
	case m.Tid != nil && m.Warp == nil:
		elem := float64(maxThreadIndexedElem(fn))
		shape = "element-wise (one thread per element)"
		est("as written", "SM*W*WS*sizeof(T)/CL", sw*float64(g.WarpSize)*elem/cl)
		est("claware", "SM*W", sw)
		est("claware/16", "SM*W*WS/16", sw*float64(g.WarpSize)/16)
		est("claware/8", "SM*W*WS/8", sw*float64(g.WarpSize)/8)
	case m.Warp != nil:
		shape = "warp-per-item"
		est("as written", "SM*W", sw)
	default:
		shape = "no recognised thread mapping"
	}
	return shape, out
}

// maxThreadIndexedElem is the largest element size among pointer
// parameters indexed by the thread id (4 when none is known).
func maxThreadIndexedElem(fn *Function) int {
	best := 0
	for _, a := range fn.Arrays {
		for _, s := range a.Forms() {
			if a.Param && s.Form == Thread {
				best = max(best, ElemSize(fn, a.Name))
			}
		}
	}
	if best == 0 {
		return 4
	}
	return best
}

// ElemSize is sizeof(T) for the pointer parameter name, from its base type
// (typedefs of the file resolved); 4 when unknown (template parameters).
func ElemSize(fn *Function, name string) int {
	for _, p := range fn.Decl.Params {
		if p.Name == name && p.Type != nil {
			return sizeOfType(p.Type.Base, fn.typedefs, 0)
		}
	}
	return 4
}

func sizeOfType(base string, typedefs map[string]string, depth int) int {
	b := strings.TrimSpace(strings.TrimPrefix(base, "std::"))
	switch b {
	case "char", "signed char", "unsigned char", "uint8_t", "int8_t", "bool":
		return 1
	case "short", "unsigned short", "int16_t", "uint16_t", "half", "__half", "__nv_bfloat16":
		return 2
	case "int", "unsigned", "unsigned int", "float", "int32_t", "uint32_t":
		return 4
	case "double", "long", "unsigned long", "long long", "unsigned long long", "size_t", "int64_t", "uint64_t", "ptrdiff_t":
		return 8
	case "float2", "int2", "double2", "float4", "int4", "double4":
		return map[string]int{"float2": 8, "int2": 8, "double2": 16, "float4": 16, "int4": 16, "double4": 32}[b]
	}
	if t, ok := typedefs[b]; ok && depth < 8 {
		return sizeOfType(t, typedefs, depth+1)
	}
	return 4
}

// typedefMap collects `typedef T name;` and `using name = T;` of the file.
func typedefMap(pf *parse.File) map[string]string {
	out := map[string]string{}
	var visit func(ds []parse.Decl)
	visit = func(ds []parse.Decl) {
		for _, d := range ds {
			switch d := d.(type) {
			case *parse.TypedefDecl:
				if d.Type != nil && d.Type.Pointers == 0 {
					out[d.Name] = d.Type.Base
				}
			case *parse.NamespaceDecl:
				visit(d.Decls)
			case *parse.LinkageDecl:
				visit(d.Decls)
			}
		}
	}
	visit(pf.Decls)
	return out
}

// FormatEstimates renders the model for people.
func FormatEstimates(cfg ModelConfig, shape string, es []Estimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    model (%s: %d SMs x %d warps, %d B lines, %.0f us per request, cap %.2fM IOPS): %s\n",
		cfg.GPU.Name, cfg.GPU.SMs, cfg.GPU.WarpsPerSM, cfg.LineBytes, cfg.Storage.LatencyUS, cfg.Storage.IOPS/1e6, shape)
	for _, e := range es {
		pct := ""
		if cfg.Storage.IOPS > 0 {
			pct = fmt.Sprintf(" (%.0f%% of cap)", 100*e.IOPS/cfg.Storage.IOPS)
		}
		fmt.Fprintf(&b, "      %-11s %8.0f lines in flight = %-45s -> %6.2fM IOPS%s, %.1f GB/s\n",
			e.Assignment, e.Lines, e.Formula, e.IOPS/1e6, pct, e.GBps)
	}
	return b.String()
}
