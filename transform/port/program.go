package port

import (
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// IncludeEdit returns the edit that adds the runtime headers to f, placed
// as a port of f alone would place them (after the last top-level
// #include, inside an include guard, or at the top); false when f already
// includes <bam/bam.cuh>. kernelsOnly asks for the runtime header alone
// (a file with no host code edited, e.g. a header whose prototypes
// change). A whole-program port (transform.RunProgram) calls it once per
// file it changes, since each file is compiled on its own.
func IncludeEdit(f *parse.File, kernelsOnly bool) (edit.Edit, bool) {
	c := &portCtx{source: source{file: f, src: f.Src.Bytes}}
	if c.hasDirective("bam/bam.cuh") {
		return edit.Edit{}, false
	}
	return c.includeEdit(kernelsOnly)
}
