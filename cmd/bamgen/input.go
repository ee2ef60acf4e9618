package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/bamgen/bamgen/diag"
)

// maxSourceBytes bounds what bamgen reads: generous for any real .cu file
// (the largest hand-written CUDA sources are a few MB) while refusing
// accidental inputs such as data files or devices before reading them.
const maxSourceBytes = 256 << 20

// readSources reads every path, or returns one error naming each path that
// could not be read and why (all of them, not only the first).
func readSources(paths []string) ([]*diag.Source, error) {
	var out []*diag.Source
	var errs []error
	for _, p := range paths {
		b, err := readSource(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, diag.NewSource(p, b))
	}
	return out, errors.Join(errs...)
}

// readSource reads one file with messages that say how to fix the problem.
func readSource(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file; check the path [IO001]", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%s: permission denied; make the file readable [IO002]", path)
	case err != nil:
		return nil, fmt.Errorf("%s: cannot read: %v [IO003]", path, err)
	case st.IsDir():
		return nil, fmt.Errorf("%s: is a directory; pass the .cu files in it, e.g. %s/*.cu [IO004]", path, path)
	case !st.Mode().IsRegular() && st.Mode()&fs.ModeNamedPipe == 0:
		return nil, fmt.Errorf("%s: not a regular file [IO005]", path)
	case st.Size() > maxSourceBytes:
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d MiB bamgen reads; is this a CUDA source file? [IO006]",
			path, st.Size(), maxSourceBytes>>20)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%s: permission denied; make the file readable [IO002]", path)
		}
		return nil, fmt.Errorf("%s: cannot read: %v [IO003]", path, err)
	}
	return b, nil
}
