package port

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	// go.yaml.in/yaml/v3 is the YAML project's maintained home of the
	// gopkg.in/yaml.v3 API and is already in cobra's module graph, so it
	// adds no new code to the build. YAML (not JSON) because the file is
	// written and reviewed by people next to their sources, with comments.
	"go.yaml.in/yaml/v3"
)

// ConfigFileName is the per-directory port configuration, found next to
// the ported file when --config is not given.
const ConfigFileName = ".bamgen.yaml"

// Config records the choices of a port so they are versioned with the code:
//
//	auto: false
//	arrays:
//	  - name: graph_edges        # or kernel:name
//	    count: num_edges         # element count expression (host code)
//	    source: file:edges.bin@0 # host | zeros | file:PATH[@OFFSET]
//	    ref: true                # read it through bam::array_ref in sequential scans
//	ref: true                    # array_ref for every eligible array (like --ref)
//	rewrites: [kernel-params, deref, atomics, aliases, helpers, launches, host-memory]
type Config struct {
	Auto     bool          `yaml:"auto,omitempty"`
	Ref      bool          `yaml:"ref,omitempty"` // like --ref: array_ref in per-thread sequential scans
	Arrays   []ArrayConfig `yaml:"arrays,omitempty"`
	Rewrites []string      `yaml:"rewrites,omitempty"` // empty: all
	path     string
}

// ArrayConfig is one chosen array and what the host side needs to know
// about it when the source does not say.
type ArrayConfig struct {
	Name   string `yaml:"name"`             // NAME or KERNEL:NAME
	Count  string `yaml:"count,omitempty"`  // host expression for the element count
	Source string `yaml:"source,omitempty"` // host (default), zeros, file:PATH[@OFFSET]
	// Ref asks for (true) or rules out (false) bam::array_ref for this
	// array whatever --ref and the top-level ref say; nil follows them.
	Ref *bool `yaml:"ref,omitempty"`
}

// LoadConfig reads a config file. Unknown keys are errors: a typo must not
// silently drop a choice.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, b)
}

// ParseConfig decodes config bytes; path is used in error messages.
func ParseConfig(path string, b []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // io.EOF: empty file, empty config
		return nil, fmt.Errorf("%s: %v", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c.path = path
	for i, a := range c.Arrays {
		if a.Name == "" {
			return nil, fmt.Errorf("%s: arrays[%d]: missing name", path, i)
		}
		if _, err := ParseSource(a.Source); err != nil {
			return nil, fmt.Errorf("%s: arrays[%d] (%s): %v", path, i, a.Name, err)
		}
	}
	for _, r := range c.Rewrites {
		if !slices.Contains(rewriteNames(), r) {
			return nil, fmt.Errorf("%s: unknown rewrite %q (known: %s)", path, r, strings.Join(rewriteNames(), ", "))
		}
	}
	return &c, nil
}

// FindConfig returns the config next to file, or nil when there is none.
func FindConfig(file string) (*Config, error) {
	p := filepath.Join(filepath.Dir(file), ConfigFileName)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return LoadConfig(p)
}

// Path is where the config was read from ("" for flags only).
func (c *Config) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

// Source says where a bam::array's initial contents come from.
type Source struct {
	Kind   string // "host", "zeros", "file"
	Path   string // for "file"
	Offset string // byte offset expression for "file"
}

// ParseSource parses "host", "zeros" or "file:PATH[@OFFSET]" ("" is host).
func ParseSource(s string) (Source, error) {
	switch {
	case s == "" || s == "host":
		return Source{Kind: "host"}, nil
	case s == "zeros":
		return Source{Kind: "zeros"}, nil
	case strings.HasPrefix(s, "file:"):
		path, off, _ := strings.Cut(strings.TrimPrefix(s, "file:"), "@")
		if path == "" {
			return Source{}, fmt.Errorf("source %q: missing path after file:", s)
		}
		if off == "" {
			off = "0"
		}
		return Source{Kind: "file", Path: path, Offset: off}, nil
	}
	return Source{}, fmt.Errorf("bad source %q: want host, zeros or file:PATH[@OFFSET]", s)
}
