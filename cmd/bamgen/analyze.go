package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/parse"
)

func init() { subcommands = append(subcommands, newAnalyzeCmd) }

func newAnalyzeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Report kernels, their arrays, how each is indexed, and launch sites",
		Long: `analyze parses each CUDA file and reports, per kernel: its parameters, the
arrays it subscripts and how each index is formed (affine in the thread,
warp or lane id; data-dependent, i.e. loaded from another array; or other),
and the kernel's launch sites. --json prints the schema documented in
docs/analyze.md. Exit status 1 when a kernel body has regions the parser
could not understand (they are listed as diagnostics), 2 on errors.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (schema: docs/analyze.md)")
	return cmd
}

func runAnalyze(cmd *cobra.Command, paths []string, asJSON bool) error {
	sources, err := readSources(paths)
	if err != nil {
		return err
	}
	files := make([]*analysis.File, len(sources))
	parallelEach(len(sources), func(i int) {
		files[i] = analysis.Analyze(parse.ParseFile(sources[i].Name, sources[i].Bytes))
	})
	if asJSON {
		if err := writeAnalyzeJSON(cmd, files); err != nil {
			return err
		}
	} else {
		for _, f := range files {
			f.WriteText(cmd.OutOrStdout())
			f.Parse.Src.Print(cmd.ErrOrStderr(), f.Parse.Diags)
		}
	}
	if kernelBodiesUnparsed(files) {
		return exitError{exitFindings}
	}
	return nil
}

func writeAnalyzeJSON(cmd *cobra.Command, files []*analysis.File) error {
	rep := analysis.JSONReport{Files: []analysis.JSONFile{}}
	for _, f := range files {
		rep.Files = append(rep.Files, f.JSON())
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %v", err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
	return err
}

// kernelBodiesUnparsed reports whether any kernel has regions the parser
// could not understand: the report for it is incomplete.
func kernelBodiesUnparsed(files []*analysis.File) bool {
	for _, f := range files {
		for _, k := range f.Kernels() {
			if len(k.Diags) > 0 {
				return true
			}
		}
	}
	return false
}
