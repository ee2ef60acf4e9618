package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	bamcmake "github.com/bamgen/bamgen/cmake"
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

It also writes bamgen's CMake package (DIR/lib/cmake/bamgen): with
CMAKE_PREFIX_PATH=DIR, find_package(bamgen) gives bamgen_port(), which ports
a target's sources at build time with this bamgen, and bam::bam, the
runtime built for the project's CUDA architectures (docs/cmake.md).

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
			m, err := installCMakePackage(prefix)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "bamgen: runtime installed in %s (%d files written); build it with: make -C %s, or from CMake: find_package(bamgen) with CMAKE_PREFIX_PATH=%s\n", prefix, n+m, prefix, prefix)
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

// installCMakePackage writes bamgen's CMake package under prefix, with
// bamgenTool.cmake naming this executable (the bamgen whose runtime was
// installed), and returns how many files it wrote.
func installCMakePackage(prefix string) (int, error) {
	dir := filepath.Join(prefix, filepath.FromSlash(bamcmake.InstallDir))
	n, err := installRuntime(bamcmake.Files(), dir)
	if err != nil {
		return n, err
	}
	exe, err := os.Executable()
	if err != nil {
		return n, fmt.Errorf("cannot find the bamgen executable for the CMake package: %v", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`).Replace(filepath.ToSlash(exe))
	tool := []byte("# Written by bamgen runtime install: the bamgen these runtime sources came from.\n" +
		"set(_bamgen_installed_by \"" + quoted + "\")\n")
	p := filepath.Join(dir, "bamgenTool.cmake")
	if old, err := os.ReadFile(p); err == nil && string(old) == string(tool) {
		return n, nil
	}
	return n + 1, writeFileAtomic(p, tool)
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
--prefix DIR' then 'make -C DIR': the library is DIR/build/libbam.a; or
'make install PREFIX=DIR': DIR/lib/libbam.a); default ` + defaultPrefix + `.
The flags are the same before and after the library is built; until it is,
a warning on stderr says how to build it.

    nvcc -arch=sm_80 $(bamgen flags --prefix DIR) ported.cu -o app
    nvcc -arch=sm_80 $(bamgen flags --cflags --prefix DIR) -c ported.cu   # compile only
    nvcc -arch=sm_80 ported.o $(bamgen flags --libs --prefix DIR) -o app  # link`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cflagsOnly && libsOnly {
				return fmt.Errorf("--cflags and --libs cannot be combined; give neither for both")
			}
			cflags, libs, lib, built := runtimeFlags(prefix)
			if !cflagsOnly && !built {
				how := "make -C " + prefix
				if !isSourceTree(prefix) {
					how = "'bamgen runtime install --prefix " + prefix + "' then 'make -C " + prefix + "'"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "bamgen: warning: %s does not exist yet; build it with %s (compiling with -c needs only --cflags)\n", lib, how)
			}
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

// runtimeFlags returns compile and link flags for a runtime under prefix,
// and where libbam.a is (built: whether it exists there yet). An installed
// runtime ('make install', or CMake's install) has it in DIR/lib; a source
// tree ('bamgen runtime install', or the repository's runtime/cuda) gets it
// in DIR/build from 'make -C DIR'. The flags name that directory before the
// library is built too, so they stay the same afterwards.
func runtimeFlags(prefix string) (cflags, libs []string, lib string, built bool) {
	libDir := filepath.Join(prefix, "lib")
	switch {
	case exists(filepath.Join(libDir, "libbam.a")):
	case exists(filepath.Join(prefix, "build", "libbam.a")) || isSourceTree(prefix):
		libDir = filepath.Join(prefix, "build")
	}
	lib = filepath.Join(libDir, "libbam.a")
	cflags = []string{"-std=c++17", "-I" + filepath.Join(prefix, "include")}
	libs = []string{"-L" + libDir, "-lbam", "-lpthread"}
	return cflags, libs, lib, exists(lib)
}

// isSourceTree reports whether dir holds the runtime's sources and Makefile
// (where 'make -C dir' builds dir/build/libbam.a).
func isSourceTree(dir string) bool {
	return exists(filepath.Join(dir, "Makefile")) && exists(filepath.Join(dir, "src", "runtime.cu"))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
