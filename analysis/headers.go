package analysis

import (
	"os"
	"path/filepath"
	"strings"
)

// Object-like macros from local headers. A kernel often takes its
// constants from a header next to it (`#include "helpers.h"` with
// `#define WARP_SHIFT 5`); the analysis folds them like the file's own.
// Only quoted includes are read, found next to the including file or on
// IncludeDirs; <...> headers (system, CUDA, third-party) are not read.

// IncludeDirs are extra directories searched for quoted includes (the
// CLI's -I paths, where it has them). Set before analysing.
var IncludeDirs []string

// maxHeaderDepth bounds nested includes; headers already read are not
// read again, so include cycles end.
const maxHeaderDepth = 8

// maxHeaderBytes skips headers too large to be a project's own.
const maxHeaderBytes = 4 << 20

// HeaderMacros collects the object-like macros of the local headers that
// src (the file at path) includes, recursively. The first definition of a
// name wins, in include order; the file's own definitions are added by
// the caller on top.
func HeaderMacros(path string, src []byte, dirs []string) map[string]string {
	macros, _ := localHeaders(path, src, dirs)
	return macros
}

// LocalHeaders lists the local headers HeaderMacros reads for the file at
// path, in include order: what a port of that file depends on besides the
// file itself (bamgen port --depfile lists them, so that a build re-ports
// the file when one changes).
func LocalHeaders(path string, src []byte, dirs []string) []string {
	_, read := localHeaders(path, src, dirs)
	return read
}

func localHeaders(path string, src []byte, dirs []string) (map[string]string, []string) {
	w := &headerWalk{macros: map[string]string{}, seen: map[string]bool{}}
	if path == "" {
		return w.macros, nil
	}
	if abs, err := filepath.Abs(path); err == nil {
		w.seen[abs] = true
	}
	w.readIncludes(filepath.Dir(path), src, dirs, 0)
	return w.macros, w.read
}

// headerWalk is one recursive read of a file's local headers.
type headerWalk struct {
	macros map[string]string // first definition of each name wins
	seen   map[string]bool   // absolute paths already read (cycle guard)
	read   []string          // the headers read, in include order
}

func (w *headerWalk) readIncludes(dir string, src []byte, dirs []string, depth int) {
	if depth >= maxHeaderDepth {
		return
	}
	for _, name := range quotedIncludes(src) {
		p := findHeader(name, dir, dirs)
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil || w.seen[abs] {
			continue
		}
		w.seen[abs] = true
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxHeaderBytes {
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		w.read = append(w.read, p)
		for n, body := range defines(text) {
			if _, ok := w.macros[n]; !ok {
				w.macros[n] = body
			}
		}
		w.readIncludes(filepath.Dir(p), text, dirs, depth+1)
	}
}

func findHeader(name, dir string, dirs []string) string {
	if filepath.IsAbs(name) {
		return "" // not a project-relative header
	}
	for _, d := range append([]string{dir}, dirs...) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// directives yields the preprocessor lines of src, continuations joined,
// as (directive, rest).
func directives(src []byte) [][2]string {
	var out [][2]string
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimSpace(t[1:])
		word := t
		if k := strings.IndexAny(t, " \t\"<"); k >= 0 {
			word = t[:k]
		}
		out = append(out, [2]string{word, strings.TrimSpace(t[len(word):])})
	}
	return out
}

// quotedIncludes lists the names of `#include "name"` lines.
func quotedIncludes(src []byte) []string {
	var out []string
	for _, d := range directives(src) {
		if d[0] != "include" || !strings.HasPrefix(d[1], `"`) {
			continue
		}
		if end := strings.Index(d[1][1:], `"`); end > 0 {
			out = append(out, d[1][1:1+end])
		}
	}
	return out
}

// defines returns the object-like macros of a header: `#define NAME body`
// (not `#define NAME(args) ...`), comments stripped from the body.
func defines(src []byte) map[string]string {
	out := map[string]string{}
	for _, d := range directives(src) {
		if d[0] != "define" {
			continue
		}
		rest := d[1]
		n := 0
		for n < len(rest) && (rest[n] == '_' || rest[n] >= 'a' && rest[n] <= 'z' || rest[n] >= 'A' && rest[n] <= 'Z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
			n++
		}
		if n == 0 || n < len(rest) && rest[n] == '(' {
			continue
		}
		body := rest[n:]
		if k := strings.Index(body, "//"); k >= 0 {
			body = body[:k]
		}
		if k := strings.Index(body, "/*"); k >= 0 {
			body = body[:k]
		}
		if _, dup := out[rest[:n]]; !dup {
			out[rest[:n]] = strings.TrimSpace(body)
		}
	}
	return out
}

// IncludedHeaders resolves the `#include "name"` lines of src (the file at
// path) against the file's directory, then dirs, and returns the paths
// found, in include order (not recursive; names not found are left out).
// A whole-program port uses it to find the local headers of its inputs.
func IncludedHeaders(path string, src []byte, dirs []string) []string {
	var out []string
	for _, name := range quotedIncludes(src) {
		if p := findHeader(name, filepath.Dir(path), dirs); p != "" {
			out = append(out, p)
		}
	}
	return out
}
