package runtime

import (
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
)

// abiDefine is the line of include/bam/version.h that holds the ABI version.
var abiDefine = regexp.MustCompile(`(?m)^#define BAM_ABI_VERSION ([0-9]+)\s*$`)

// ABIVersion returns the ABI version of the bundled runtime: the number in
// its include/bam/version.h, which also names the inline namespace its
// symbols live in (bam::v<N>).
func ABIVersion() (int, error) {
	return abiVersion(Files())
}

func abiVersion(fsys fs.FS) (int, error) {
	b, err := fs.ReadFile(fsys, "include/bam/version.h")
	if err != nil {
		return 0, fmt.Errorf("bundled runtime: %v", err)
	}
	m := abiDefine.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("bundled runtime: include/bam/version.h has no '#define BAM_ABI_VERSION N' line")
	}
	return strconv.Atoi(string(m[1]))
}
