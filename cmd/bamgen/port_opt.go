package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform"
	"github.com/bamgen/bamgen/transform/opt"
)

// optFlags are the access-pattern rewrite flags of `bamgen port`.
type optFlags struct {
	opt          string // claware | transpose[=STRIDE] | coarsen[=K] | odt | auto
	lanesPerLine int
}

func (f *optFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.opt, "opt", "", "access-pattern rewrite for ported kernels: claware, transpose[=STRIDE], coarsen[=K], odt or auto (docs/rewrites.md)")
	cmd.Flags().IntVar(&f.lanesPerLine, "lanes-per-line", 32, "claware: lanes that share one cache line (32, 16 or 8)")
}

// options parses --opt; it returns nil when no rewrite was asked for.
func (f *optFlags) options() (*opt.Options, error) {
	if f.opt == "" {
		return nil, nil
	}
	kind, arg, hasArg := strings.Cut(f.opt, "=")
	o := &opt.Options{Kind: kind, LanesPerLine: f.lanesPerLine}
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--opt %s: %q is not a positive whole number", f.opt, arg)
		}
		switch kind {
		case "transpose":
			o.Stride = n
		case "coarsen":
			o.Coarsen = n
		default:
			return nil, fmt.Errorf("--opt %s: only transpose=STRIDE and coarsen=K take a number", f.opt)
		}
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// optHook runs the rewrites on the file being ported, with the port's
// choices and launch arguments.
func optHook(pf *parse.File, o opt.Options) transform.OptHook {
	return func(ported map[string][]string, launchArg func(*parse.LaunchExpr, int) string,
		edited func(start, end int) bool) ([]diag.Diagnostic, []transform.Edit) {
		o.Ported, o.LaunchArg, o.Edited = ported, launchArg, edited
		res := opt.Run(analysis.AnalyzeDevice(pf), o)
		return res.Diags, res.Edits
	}
}
