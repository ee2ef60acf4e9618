package main

import (
	"github.com/spf13/cobra"

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

// parse reads --opt, once, into the pipeline's typed options; nil when no
// rewrite was asked for.
func (f *optFlags) parse() (*opt.Options, error) {
	if f.opt == "" {
		return nil, nil
	}
	o, err := opt.Parse(f.opt, f.lanesPerLine)
	if err != nil {
		return nil, err
	}
	return &o, nil
}
