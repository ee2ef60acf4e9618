package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	bamruntime "github.com/bamgen/bamgen/runtime"
)

func TestWriteVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string
	}{
		{"go install from a module", &debug.BuildInfo{GoVersion: "go1.26.0",
			Main: debug.Module{Path: "github.com/bamgen/bamgen", Version: "v0.4.0", Sum: "h1:abc="}},
			[]string{"bamgen v0.4.0\n", "module:      github.com/bamgen/bamgen v0.4.0\n",
				"revision:    (module h1:abc=)\n", "runtime ABI: 3 (symbols in bam::v3)\n", "go:          go1.26.0\n"}},
		{"checkout build", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Path: "github.com/bamgen/bamgen", Version: "v0.0.0-20261127083000-ae00b6012345+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ae00b60123456789"},
				{Key: "vcs.time", Value: "2026-11-27T08:30:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			[]string{"bamgen v0.0.0-20261127083000-ae00b6012345+dirty\n",
				"revision:    ae00b60123456789 (2026-11-27T08:30:00Z) with uncommitted changes\n"}},
		{"nothing recorded", nil, []string{"bamgen (unknown)\n", "revision:    (not recorded"}},
	} {
		var b bytes.Buffer
		writeVersion(&b, tc.bi, 3)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}

// The command itself reports the bundled runtime's ABI and the module path.
func TestVersionCommand(t *testing.T) {
	abi, err := bamruntime.ABIVersion()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"bamgen ", "module:      github.com/bamgen/bamgen", "runtime ABI: " + string(rune('0'+abi))} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("version output lacks %q:\n%s", w, out.String())
		}
	}
}
