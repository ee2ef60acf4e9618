// Package runtime embeds the bundled BaM runtime sources (runtime/cuda:
// headers, library sources, build files) so that `bamgen runtime install`
// can write them anywhere without a checkout. The runtime itself is C++/CUDA
// built with nvcc; this package only carries its files.
package runtime

import (
	"embed"
	"io/fs"
)

// The patterns name what an install needs. Build outputs (cuda/build/) and
// tests stay out: they are large, machine-specific, or only useful in the
// repository.
//
//go:embed cuda/include cuda/src cuda/cmake cuda/Makefile cuda/*.mk
var files embed.FS

// Files returns the runtime tree rooted at its top directory (paths like
// "include/bam/bam.cuh", "Makefile").
func Files() fs.FS {
	sub, err := fs.Sub(files, "cuda")
	if err != nil { // "cuda" is a literal embedded directory: cannot fail
		panic(err)
	}
	return sub
}
