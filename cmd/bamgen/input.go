package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

// sourceExts are the files a directory argument contributes.
var sourceExts = map[string]bool{".cu": true, ".cuh": true, ".h": true, ".hpp": true}

// expandInputs replaces each directory among paths by the CUDA sources
// and headers under it (.cu, .cuh, .h, .hpp; hidden directories skipped),
// in lexical order, and drops repeated paths.
func expandInputs(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		key := filepath.Clean(p)
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			add(p) // readSource says what is wrong with it
			continue
		}
		n := len(out)
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if q != p && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if sourceExts[strings.ToLower(filepath.Ext(q))] && d.Type().IsRegular() {
				add(q)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: cannot list the directory: %v [IO003]", p, err)
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no .cu, .cuh, .h or .hpp file under this directory [IO004]", p)
		}
	}
	return out, nil
}

// compileCommand is what bamgen takes from one compile_commands.json entry.
type compileCommand struct {
	file      string
	directory string   // the entry's working directory
	include   []string // -I directories, absolute
	system    []string // -isystem directories, absolute (read, never written)
	defines   []string // -D NAME[=VALUE]
}

// readCompileCommands reads a compilation database (a compile_commands.json
// file, or a build directory holding one).
func readCompileCommands(path string) ([]compileCommand, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "compile_commands.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the compilation database: %v; pass the compile_commands.json your build wrote (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) [IO001]", path, err)
	}
	var entries []struct {
		Directory string   `json:"directory"`
		File      string   `json:"file"`
		Command   string   `json:"command"`
		Arguments []string `json:"arguments"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("%s: not a compilation database (a JSON array of {directory, file, command|arguments}): %v [IO007]", path, err)
	}
	var out []compileCommand
	for i, e := range entries {
		if e.File == "" {
			return nil, fmt.Errorf("%s: entry %d has no \"file\" [IO007]", path, i+1)
		}
		args := e.Arguments
		if len(args) == 0 {
			args = splitCommand(e.Command)
		}
		abs := func(p string) string {
			if filepath.IsAbs(p) || e.Directory == "" {
				return filepath.Clean(p)
			}
			return filepath.Join(e.Directory, p)
		}
		cc := compileCommand{file: abs(e.File), directory: e.Directory}
		for k := 0; k < len(args); k++ {
			a := args[k]
			val := func(flag string) (string, bool) {
				switch {
				case a == flag && k+1 < len(args):
					k++
					return args[k], true
				case strings.HasPrefix(a, flag+"=") && strings.HasPrefix(flag, "--"):
					return a[len(flag)+1:], true
				case strings.HasPrefix(a, flag) && len(a) > len(flag) && !strings.HasPrefix(flag, "--"):
					return a[len(flag):], true
				}
				return "", false
			}
			if v, ok := val("-isystem"); ok {
				cc.system = append(cc.system, abs(v))
			} else if v, ok := val("-I"); ok {
				cc.include = append(cc.include, abs(v))
			} else if v, ok := val("--include-path"); ok {
				cc.include = append(cc.include, abs(v))
			} else if v, ok := val("-D"); ok {
				cc.defines = append(cc.defines, v)
			} else if v, ok := val("--define-macro"); ok {
				cc.defines = append(cc.defines, v)
			}
		}
		out = append(out, cc)
	}
	return out, nil
}

// splitCommand splits a shell command line into words: blanks separate,
// single and double quotes group, a backslash escapes the next byte.
func splitCommand(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			cur.WriteByte(c)
			esc = false
		case c == '\\' && quote != '\'':
			esc, in = true, true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// commonDir returns the deepest directory holding every path.
func commonDir(paths []string) string {
	var dir string
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		d := filepath.Dir(abs)
		if i == 0 || dir == "" {
			dir = d
			continue
		}
		for !within(d, dir) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return dir
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
