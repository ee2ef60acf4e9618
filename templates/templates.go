// Package templates holds the host code `bamgen port` inserts, as
// text/template files embedded in the binary, parsed once at start-up and
// executed with typed data. Keeping the emitted C++ in template files (not
// in Go string concatenation) lets people review the generated code's shape
// in one place.
package templates

import (
	"embed"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// set is parsed once; a template error is a build bug, so Must.
var set = template.Must(template.New("bamgen").ParseFS(files, "*.tmpl"))

// Array describes one bam::array for the host-side templates.
type Array struct {
	RT       string // the runtime variable ("bam_rt")
	Bam      string // the bam::array variable ("d_a_bam")
	Elem     string // element type ("float")
	Src      string // host pointer expression copied in or out
	Count    string // element count expression
	Path     string // file to read from (from_file)
	Offset   string // byte offset in Path
	ReadOnly bool   // the kernel only reads it: nothing to copy back
}

// Fill is the data of refill: cudaMemset(p, Value, Bytes) on a bam::array.
type Fill struct {
	Array
	Bytes string
	Value string
}

// Patch is the data of patch: a copy or fill of part of a bam::array, in
// place (runtime write_bytes / fill_bytes / read_bytes).
type Patch struct {
	Array
	Op     string // "memcpy" (host to array), "memset", "copy_out" (array to host)
	Offset string // element offset
	Bytes  string // bytes copied or filled
}

// Stage is the data of stage: a host-visible staging buffer (one mode of a
// per-mode allocation) copied into the array, then freed with Free
// (cudaFree or cudaFreeHost).
type Stage struct {
	Array
	Free string
}

// DropCache is the data of drop_cache: a buffer's re-allocation (to empty
// the GPU's page cache) becomes an emptied BaM cache.
type DropCache struct{ RT, Note string }

// Copy is the data of copy and swap: pointer copies between buffers.
type Copy struct {
	Dst, Src string
	Decl     bool // `T *dst = src;` declares dst
}

// Wrap is the data of wrap_begin / wrap_end: arrays made from host-visible
// memory around one launch.
type Wrap struct{ Arrays []Array }

// Check is the data of check_launch: the check after a ported launch.
type Check struct {
	RT     string
	Kernel string // the kernel's name, for the message
	Block  string // the launch's block size as written, or "" (side effects)
}

// D2D is the data of copy_bytes: a device-to-device copy between arrays.
type D2D struct {
	RT, Dst, DstFirst, Src, SrcFirst, Bytes string
}

// Plan is the data of plan_arrays: the byte sizes of the arrays a host
// function is about to make, for placement by size.
type Plan struct {
	RT    string
	Sizes []string
}

// Runtime is the data of runtime_setup.
type Runtime struct{ RT string }

// Note is the data of removed.
type Note struct{ Note string }

// Render executes the named template. Template names are constants in the
// callers, so an execution error is a bug and panics with the name.
func Render(name string, data any) string {
	var b strings.Builder
	if err := set.ExecuteTemplate(&b, name, data); err != nil {
		panic("templates: " + name + ": " + err.Error())
	}
	return b.String()
}

// Names lists the defined templates (for tests).
func Names() []string {
	var out []string
	for _, t := range set.Templates() {
		if t.Name() != "bamgen" && t.Name() != "host.tmpl" {
			out = append(out, t.Name())
		}
	}
	return out
}
