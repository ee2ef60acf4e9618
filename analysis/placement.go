package analysis

import (
	"fmt"
	"sort"
	"strings"
)

// Placements, as the runtime decides them (docs/runtime-api.md,
// "Placement"): where each array's elements are read from.
const (
	PlaceResident   = "resident"    // in GPU memory, plain loads, no cache
	PlaceHBMCache   = "hbm-cache"   // in GPU memory (hbm backend) but through the cache: over the budget
	PlaceHostDirect = "host-direct" // mapped pinned host memory, zero-copy loads
	PlaceHostCache  = "host-cache"  // host memory, lines copied into the cache
	PlaceSSDCache   = "ssd-cache"   // storage (emu, nvme), through the cache and the NVMe queues
	PlaceUnknown    = "unknown"     // no size given
)

// PlacementConfig is the input of the placement model: the dataset's size
// (bytes or elements per array, or a vertex count for every array) and
// the runtime's settings.
type PlacementConfig struct {
	Backend    string           // hbm, host, emu, nvme (BAM_BACKEND)
	GPUBudget  int64            // BAM_GPU_BUDGET; < 0: the runtime's default for the backend
	CacheBytes int64            // BAM_CACHE_BYTES
	HostPolicy string           // auto, direct, cache (BAM_HOST_PLACEMENT)
	Bytes      map[string]int64 // --size NAME=BYTES
	Elems      map[string]int64 // --elems NAME=COUNT
	N          int64            // --n: elements of every other array (CSR edges: N x average degree)
}

// ArrayPlacement is the model's answer for one array of the file.
type ArrayPlacement struct {
	Array     string `json:"array"`
	ElemBytes int    `json:"elem_bytes"`
	Bytes     int64  `json:"bytes"` // 0 when unknown
	SizeFrom  string `json:"size_from"`
	Placement string `json:"placement"` // resident, hbm-cache, host-direct, host-cache, ssd-cache, unknown
	Reason    string `json:"reason"`
}

// PlacementReport is the placement of every array of a file (--model).
type PlacementReport struct {
	Backend    string           `json:"backend"`
	GPUBudget  int64            `json:"gpu_budget"`
	CacheBytes int64            `json:"cache_bytes"`
	Arrays     []ArrayPlacement `json:"arrays"`
}

// DefaultBudget is BAM_GPU_BUDGET's default: on hbm and host the GPU's
// memory less the cache (the runtime takes what is free once the cache is
// allocated; on host an array that fits is copied into GPU memory); on the
// storage backends 0 (their data is read through the cache unless a budget
// is given).
func DefaultBudget(g GPU, backend string, cacheBytes int64) int64 {
	if backend != "hbm" && backend != "host" {
		return 0
	}
	if backend == "host" { // the runtime keeps 1/16 of what is free, at least 256 MiB, for the program
		free := max(0, g.MemBytes-cacheBytes)
		return max(0, free-max(256<<20, free/16))
	}
	return max(0, g.MemBytes-cacheBytes)
}

// Placements says where each pointer parameter the file's kernels
// subscript is placed for the given dataset size. The runtime ranks the
// arrays by size, smallest first, and keeps each in GPU memory while the
// running total fits the budget, so only the largest leave GPU memory.
// Arrays of the same name in several kernels are taken to be one buffer.
func Placements(f *File, mc ModelConfig, pc PlacementConfig) PlacementReport {
	budget := pc.GPUBudget
	if budget < 0 {
		budget = DefaultBudget(mc.GPU, pc.Backend, pc.CacheBytes)
	}
	rep := PlacementReport{Backend: pc.Backend, GPUBudget: budget, CacheBytes: pc.CacheBytes, Arrays: []ArrayPlacement{}}
	seen := map[string]bool{}
	for _, fn := range f.Functions {
		if fn.Kind != Kernel || fn.Decl.Body == nil {
			continue
		}
		var edges string
		if w := FindCSRWalk(fn, KernelMapping(fn)); w != nil {
			edges = w.Edges
		}
		for _, a := range fn.Arrays {
			if !a.Param || seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			p := ArrayPlacement{Array: a.Name, ElemBytes: ElemSize(fn, a.Name)}
			switch {
			case pc.Bytes[a.Name] > 0:
				p.Bytes, p.SizeFrom = pc.Bytes[a.Name], "--size"
			case pc.Elems[a.Name] > 0:
				p.Bytes, p.SizeFrom = pc.Elems[a.Name]*int64(p.ElemBytes), "--elems"
			case pc.N > 0 && onlyUniform(a):
				p.Bytes, p.SizeFrom = int64(p.ElemBytes), "one element (only uniform indices: a flag or counter)"
			case pc.N > 0 && a.Name == edges:
				p.Bytes = int64(float64(pc.N)*mc.AvgDegree) * int64(p.ElemBytes)
				p.SizeFrom = fmt.Sprintf("--n x --avg-degree %g (the CSR walk's edges)", mc.AvgDegree)
			case pc.N > 0:
				p.Bytes, p.SizeFrom = pc.N*int64(p.ElemBytes), "--n"
			}
			rep.Arrays = append(rep.Arrays, p)
		}
	}
	// Rank: known sizes, smallest first (ties by name); unknown ones last.
	sort.SliceStable(rep.Arrays, func(i, j int) bool {
		a, b := rep.Arrays[i], rep.Arrays[j]
		if (a.Bytes == 0) != (b.Bytes == 0) {
			return a.Bytes != 0
		}
		if a.Bytes != b.Bytes {
			return a.Bytes < b.Bytes
		}
		return a.Array < b.Array
	})
	used := int64(0)
	for i := range rep.Arrays {
		p := &rep.Arrays[i]
		if p.Bytes == 0 {
			p.Placement = PlaceUnknown
			p.Reason = "no size: give --size " + p.Array + "=BYTES, --elems " + p.Array + "=COUNT or --n"
			continue
		}
		held := p.Bytes // what the runtime counts: whole lines
		if lb := int64(mc.LineBytes); lb > 0 && held%lb != 0 {
			held += lb - held%lb
		}
		if used+held <= budget {
			used += held
			p.Placement = PlaceResident
			p.Reason = fmt.Sprintf("fits the GPU budget (%s of %s used, smallest arrays first)", Bytes(used), Bytes(budget))
			if pc.Backend != "hbm" {
				p.Reason += "; copied into GPU memory when made"
			}
			continue
		}
		over := fmt.Sprintf("does not fit the GPU budget (%s used of %s, this array %s)", Bytes(used), Bytes(budget), Bytes(p.Bytes))
		if budget == 0 {
			over = "no GPU budget on the " + pc.Backend + " backend (give BAM_GPU_BUDGET / --gpu-budget to keep arrays that fit in GPU memory)"
		}
		switch pc.Backend {
		case "hbm":
			p.Placement = PlaceHBMCache
			p.Reason = over + "; the hbm backend reads it through the cache"
		case "host":
			direct := pc.HostPolicy == "direct" || (pc.HostPolicy == "auto" && p.Bytes > pc.CacheBytes/2)
			if direct {
				p.Placement = PlaceHostDirect
				why := "BAM_HOST_PLACEMENT=direct"
				if pc.HostPolicy == "auto" {
					why = fmt.Sprintf("larger than half the cache (%s): little reuse to keep, zero-copy loads move only the sectors touched", Bytes(pc.CacheBytes/2))
				}
				p.Reason = over + "; " + why
			} else {
				p.Placement = PlaceHostCache
				why := "BAM_HOST_PLACEMENT=cache"
				if pc.HostPolicy == "auto" {
					why = fmt.Sprintf("fits in half the cache (%s): its lines stay cached and are reused from GPU memory", Bytes(pc.CacheBytes/2))
				}
				p.Reason = over + "; " + why
			}
		default:
			p.Placement = PlaceSSDCache
			p.Reason = over + "; read through the cache and the NVMe queues"
		}
	}
	return rep
}

// onlyUniform reports whether every access of a uses the same index in
// every thread (a[0], *flag): a flag or a counter, not data.
func onlyUniform(a *Array) bool {
	for _, s := range a.Forms() {
		if s.Form != Uniform {
			return false
		}
	}
	return len(a.Accesses) > 0
}

// Bytes renders a byte count with a binary unit.
func Bytes(n int64) string {
	const k = 1024
	switch {
	case n >= k*k*k:
		return fmt.Sprintf("%.2f GiB", float64(n)/(k*k*k))
	case n >= k*k:
		return fmt.Sprintf("%.1f MiB", float64(n)/(k*k))
	case n >= k:
		return fmt.Sprintf("%.1f KiB", float64(n)/k)
	}
	return fmt.Sprintf("%d B", n)
}

// FormatPlacements renders the placement report for people.
func FormatPlacements(r PlacementReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  placement (%s backend, GPU budget %s, cache %s; arrays ranked by size, smallest first):\n",
		r.Backend, Bytes(r.GPUBudget), Bytes(r.CacheBytes))
	if len(r.Arrays) == 0 {
		b.WriteString("    no kernel subscripts a pointer parameter\n")
	}
	for _, p := range r.Arrays {
		size := "?"
		if p.Bytes > 0 {
			size = Bytes(p.Bytes)
		}
		fmt.Fprintf(&b, "    %-16s %12s  %-11s %s\n", p.Array, size, p.Placement, p.Reason)
	}
	return b.String()
}
