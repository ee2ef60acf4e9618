package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	bamruntime "github.com/bamgen/bamgen/runtime"
)

func init() { subcommands = append(subcommands, newVersionCmd) }

// buildRevision is the source revision `make build` passes with
// -ldflags -X, for builds where Go records none (a git worktree, or
// GOFLAGS=-buildvcs=false); Go's own vcs.revision wins when present.
var buildRevision string

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bamgen's version, source revision and runtime ABI",
		Long: `version prints the module version bamgen was built from (a release tag
after 'go install github.com/bamgen/bamgen/cmd/bamgen@VERSION', a
pseudo-version or (devel) for a checkout build), the source revision when
the build recorded one, the Go release, and the ABI version of the bundled
BaM runtime: generated code and libbam.a must come from runtimes of the
same ABI (the runtime's symbols live in bam::v<ABI>; a mismatch fails to
link).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abi, err := bamruntime.ABIVersion()
			if err != nil {
				return err
			}
			bi, _ := debug.ReadBuildInfo()
			writeVersion(cmd.OutOrStdout(), bi, abi)
			return nil
		},
	}
}

// writeVersion prints what bi records about the build (nil: nothing was
// recorded) and the runtime's ABI version.
func writeVersion(w io.Writer, bi *debug.BuildInfo, abi int) {
	version, module, goVersion := "(unknown)", "github.com/bamgen/bamgen", "(unknown)"
	settings := map[string]string{}
	if bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.Main.Path != "" {
			module = bi.Main.Path
		}
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
	}
	rev := "(not recorded: built outside a VCS checkout or with -buildvcs=false)"
	if r := settings["vcs.revision"]; r != "" {
		rev = r
		if t := settings["vcs.time"]; t != "" {
			rev += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			rev += " with uncommitted changes"
		}
	} else if buildRevision != "" {
		rev = buildRevision
	} else if bi != nil && bi.Main.Sum != "" {
		rev = "(module " + bi.Main.Sum + ")"
	}
	fmt.Fprintf(w, "bamgen %s\n", version)
	fmt.Fprintf(w, "module:      %s %s\n", module, version)
	fmt.Fprintf(w, "revision:    %s\n", rev)
	fmt.Fprintf(w, "runtime ABI: %d (symbols in bam::v%d)\n", abi, abi)
	fmt.Fprintf(w, "go:          %s\n", goVersion)
}
