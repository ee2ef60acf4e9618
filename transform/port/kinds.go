package port

import "fmt"

// hostOpKind classifies one use of a host buffer variable (hostOp.kind).
type hostOpKind int

const (
	opNone     hostOpKind = iota // not classified (declInitOp: no initialiser bamgen handles)
	opMalloc                     // cudaMalloc
	opManaged                    // cudaMallocManaged
	opPinned                     // cudaHostAlloc / cudaMallocHost / new T[n] of a host buffer
	opUpload                     // cudaMemcpy host to device
	opDownload                   // cudaMemcpy device to host
	opMemset0                    // cudaMemset to zero
	opMemset                     // cudaMemset to another value
	opFree                       // cudaFree
	opLaunch                     // passed to a kernel launch
	opNull                       // compared with or set to a null pointer
	opForeign                    // allocated by the program's own function: adopted
	opCopy                       // pointer copy between buffer variables
	opSwap                       // std::swap of two buffer variables
	opD2D                        // cudaMemcpy device to device between two buffer variables
	opForward                    // passed whole to a host function that forwards it to launches (forward.go)
	opDevPtr                     // cudaHostGetDevicePointer(&d, h, flags): d is the device view of host buffer h
	opOther                      // anything else: the buffer cannot be ported
)

var hostOpNames = [...]string{opNone: "none", opMalloc: "malloc", opManaged: "managed", opPinned: "pinned",
	opUpload: "upload", opDownload: "download", opMemset0: "memset0", opMemset: "memset", opFree: "free",
	opLaunch: "launch", opNull: "null", opForeign: "foreign", opCopy: "copy", opSwap: "swap", opD2D: "d2d", opForward: "forward", opDevPtr: "devptr", opOther: "other"}

func (k hostOpKind) String() string {
	if k >= 0 && int(k) < len(hostOpNames) {
		return hostOpNames[k]
	}
	return fmt.Sprintf("hostOpKind(%d)", int(k))
}

// RewriteKind names one step of the port (a Rewrite). The names are the
// ones .bamgen.yaml's `rewrites:` list and docs/port.md use, and the ones
// an invalid edit is blamed on.
type RewriteKind int

const (
	KernelParams RewriteKind = iota // kernel-params
	Deref                           // deref
	Atomics                         // atomics
	Reads                           // reads
	Aliases                         // aliases
	Refs                            // refs
	Helpers                         // helpers
	Versions                        // versions
	Launches                        // launches
	HostMemory                      // host-memory
	Runtime                         // runtime
)

var rewriteKindNames = [...]string{KernelParams: "kernel-params", Deref: "deref", Atomics: "atomics", Reads: "reads",
	Aliases: "aliases", Refs: "refs", Helpers: "helpers", Versions: "versions", Launches: "launches", HostMemory: "host-memory", Runtime: "runtime"}

func (k RewriteKind) String() string {
	if k >= 0 && int(k) < len(rewriteKindNames) {
		return rewriteKindNames[k]
	}
	return fmt.Sprintf("RewriteKind(%d)", int(k))
}
