// Package cmake embeds bamgen's CMake package (bamgenConfig.cmake), which
// `bamgen runtime install --prefix P` writes into P/lib/cmake/bamgen/ next
// to the runtime's sources: find_package(bamgen) then gives bamgen_port()
// and bam::bam (docs/cmake.md).
package cmake

import (
	"embed"
	"io/fs"
)

//go:embed bamgenConfig.cmake
var files embed.FS

// Files returns the package's files (paths like "bamgenConfig.cmake").
func Files() fs.FS { return files }

// InstallDir is where the package goes under an install prefix, so that
// find_package(bamgen) finds it with CMAKE_PREFIX_PATH=prefix.
const InstallDir = "lib/cmake/bamgen"
