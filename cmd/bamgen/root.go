package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes, as gofmt and compilers use them.
const (
	exitOK       = 0 // done, nothing to report
	exitFindings = 1 // the command ran but found something (--check pending, unparsed regions, error diagnostics)
	exitUsage    = 2 // bad flags, unreadable files, internal failure
)

// exitError carries an exit code through cobra without printing anything:
// the command has already printed its diagnostics.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs bamgen with args and returns the process exit code. Errors are
// printed once, here, prefixed with "bamgen: ".
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "bamgen: error: %v\n", err)
	return exitUsage
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "bamgen",
		Short: "Port CUDA kernels to BaM storage-backed arrays",
		Long: `bamgen reads CUDA C++ files, rewrites chosen arrays to bam::array accesses
(GPU-initiated storage access through a GPU software cache), applies
access-pattern rewrites where they are provably legal, and emits code that
builds against the bundled BaM runtime.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	// Flag errors are usage errors: say which flag and show how to get help.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%v (see '%s --help')", err, c.CommandPath())
	})
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands lists the constructors of every subcommand; each lives in its
// own file and registers itself in an init function.
var subcommands []func() *cobra.Command
