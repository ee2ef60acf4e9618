package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	bamruntime "github.com/bamgen/bamgen/runtime"
)

func init() {
	subcommands = append(subcommands, newRuntimeCmd, newFlagsCmd)
}

// defaultPrefix is where `make install` of the runtime puts it by default.
const defaultPrefix = "/usr/local"

func newRuntimeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runtime",
		Short: "Install the bundled BaM runtime sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("missing subcommand; try '%s install --prefix DIR'", cmd.CommandPath())
		},
	}
	cmd.AddCommand(newRuntimeInstallCmd())
	return cmd
}

func newRuntimeInstallCmd() *cobra.Command {
	var prefix string
	var list bool
	cmd := &cobra.Command{
		Use:   "install --prefix DIR",
		Short: "Write the runtime's headers, sources and build files into DIR",
		Long: `install writes the BaM runtime bundled in this bamgen (headers under
DIR/include/bam, library sources under DIR/src, the Makefile and CMake/pkg-config
files) so ported code can be built without a bamgen checkout:

    bamgen runtime install --prefix third_party/bam
    make -C third_party/bam            # builds third_party/bam/build/libbam.a
    nvcc $(bamgen flags --prefix third_party/bam) ported.cu -o app

Each file is written atomically and only when its content changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				return listRuntime(cmd)
			}
			if prefix == "" {
				return fmt.Errorf("--prefix DIR is required (where to write the runtime)")
			}
			n, err := installRuntime(bamruntime.Files(), prefix)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "bamgen: runtime installed in %s (%d files written); build it with: make -C %s\n", prefix, n, prefix)
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "", "directory to write the runtime into (created if missing)")
	cmd.Flags().BoolVar(&list, "list", false, "list the bundled files instead of writing them")
	return cmd
}

func listRuntime(cmd *cobra.Command) error {
	return fs.WalkDir(bamruntime.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fmt.Fprintln(cmd.OutOrStdout(), p)
		}
		return err
	})
}

// installRuntime copies every file of src under prefix and returns how many
// it wrote (unchanged files are skipped).
func installRuntime(src fs.FS, prefix string) (int, error) {
	if st, err := os.Stat(prefix); err == nil && !st.IsDir() {
		return 0, fmt.Errorf("--prefix %s: exists and is not a directory", prefix)
	}
	written := 0
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(prefix, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %v", filepath.Dir(dst), err)
		}
		if old, err := os.ReadFile(dst); err == nil && string(old) == string(data) {
			return nil
		}
		written++
		return writeFileAtomic(dst, data)
	})
	return written, err
}

func newFlagsCmd() *cobra.Command {
	var prefix string
	var cflagsOnly, libsOnly bool
	cmd := &cobra.Command{
		Use:   "flags [--prefix DIR]",
		Short: "Print the nvcc flags that build ported code against the runtime",
		Long: `flags prints the nvcc compile and link flags for code produced by
'bamgen port': the C++ standard the runtime needs, its include directory and
its library. DIR is where the runtime was installed ('bamgen runtime install
--prefix DIR' then 'make -C DIR', or 'make install PREFIX=DIR'); default ` + defaultPrefix + `.

    nvcc -arch=sm_80 $(bamgen flags --prefix DIR) ported.cu -o app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cflagsOnly && libsOnly {
				return fmt.Errorf("--cflags and --libs cannot be combined; give neither for both")
			}
			cflags, libs := runtimeFlags(prefix)
			switch {
			case cflagsOnly:
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(cflags, " "))
			case libsOnly:
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(libs, " "))
			default:
				fmt.Fprintln(cmd.OutOrStdout(), strings.Join(append(cflags, libs...), " "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", defaultPrefix, "where the runtime is installed")
	cmd.Flags().BoolVar(&cflagsOnly, "cflags", false, "print only the compile flags")
	cmd.Flags().BoolVar(&libsOnly, "libs", false, "print only the link flags")
	return cmd
}

// runtimeFlags returns compile and link flags for a runtime under prefix.
// The library is in DIR/lib after `make install`, in DIR/build after
// `make -C DIR` on an installed source tree; the existing one wins.
func runtimeFlags(prefix string) (cflags, libs []string) {
	libDir := filepath.Join(prefix, "lib")
	if _, err := os.Stat(filepath.Join(libDir, "libbam.a")); err != nil {
		if _, err := os.Stat(filepath.Join(prefix, "build", "libbam.a")); err == nil {
			libDir = filepath.Join(prefix, "build")
		}
	}
	cflags = []string{"-std=c++17", "-I" + filepath.Join(prefix, "include")}
	libs = []string{"-L" + libDir, "-lbam", "-lpthread"}
	return cflags, libs
}
