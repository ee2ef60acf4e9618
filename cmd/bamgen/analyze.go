package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

func init() { subcommands = append(subcommands, newAnalyzeCmd) }

// modelFlags are the inputs of the first-principles model (--model).
type modelFlags struct {
	enabled   bool
	gpu       string
	sms       int
	warps     int
	lineBytes int
	latencyUS float64
	iops      float64
	avgDegree float64
	// placement (with a dataset size)
	n          string
	sizes      []string
	elems      []string
	backend    string
	gpuBudget  string
	cacheBytes string
	hostPolicy string
}

func (f *modelFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.enabled, "model", false, "add the first-principles model: cache-line requests in flight per work assignment, and Little's law against the storage")
	fl.StringVar(&f.gpu, "gpu", "h100", "GPU preset for --model: a100, h100 or h200")
	fl.IntVar(&f.sms, "sms", 0, "number of SMs (overrides the --gpu preset)")
	fl.IntVar(&f.warps, "warps-per-sm", 0, "resident warps per SM (overrides the --gpu preset)")
	fl.IntVar(&f.lineBytes, "line-bytes", 4096, "cache line size in bytes (512 to 65536, a power of two)")
	fl.Float64Var(&f.latencyUS, "latency-us", 40, "end-to-end latency of one line request in microseconds (thesis §6.2: ~10 us in the cache and I/O stack + ~30 us storage)")
	fl.Float64Var(&f.iops, "iops", 6e6, "storage IOPS ceiling, 0 for none (default: four Optane SSDs at 1.5M IOPS each)")
	fl.Float64Var(&f.avgDegree, "avg-degree", 16, "average neighbour-list length of CSR inputs")
	fl.StringVar(&f.n, "n", "", "--model placement: elements of every array without --size/--elems (a CSR walk's edge array: n x --avg-degree); k/M/G suffixes")
	fl.StringArrayVar(&f.sizes, "size", nil, "--model placement: bytes of one array, NAME=SIZE (k/M/G/T suffixes, binary), repeatable")
	fl.StringArrayVar(&f.elems, "elems", nil, "--model placement: elements of one array, NAME=COUNT (k/M/G suffixes), repeatable")
	fl.StringVar(&f.backend, "backend", "hbm", "--model placement: the runtime's backend (BAM_BACKEND): hbm, host, emu or nvme")
	fl.StringVar(&f.gpuBudget, "gpu-budget", "", "--model placement: GPU memory arrays may take (BAM_GPU_BUDGET; default: on hbm and host the GPU's memory less the cache, else 0)")
	fl.StringVar(&f.cacheBytes, "cache-bytes", "1G", "--model placement: the cache (BAM_CACHE_BYTES)")
	fl.StringVar(&f.hostPolicy, "host-placement", "auto", "--model placement: host arrays zero-copy or cached (BAM_HOST_PLACEMENT): auto, direct or cache")
}

// parseSize reads a count or byte size the way the runtime reads
// BAM_CACHE_BYTES: digits with an optional k/M/G/T suffix (powers of 1024).
func parseSize(flag, text string) (int64, error) {
	t := strings.TrimSpace(text)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	scale := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
		"mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[strings.ToLower(t[i:])]
	if i == 0 || i > 18 || scale == 0 {
		return 0, fmt.Errorf("%s %q is not a size; use a number with an optional k/M/G/T suffix, e.g. 4G", flag, text)
	}
	v, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || v > math.MaxInt64/scale {
		return 0, fmt.Errorf("%s %q is too large", flag, text)
	}
	return v * scale, nil
}

// placement returns the placement model's input, or nil when no dataset
// size was given.
func (f *modelFlags) placement() (*analysis.PlacementConfig, error) {
	if f.n == "" && len(f.sizes) == 0 && len(f.elems) == 0 {
		for _, set := range []bool{f.gpuBudget != "", f.backend != "hbm", f.cacheBytes != "1G", f.hostPolicy != "auto"} {
			if set {
				return nil, fmt.Errorf("--backend, --gpu-budget, --cache-bytes and --host-placement need a dataset size: give --n, --size NAME=BYTES or --elems NAME=COUNT")
			}
		}
		return nil, nil
	}
	pc := &analysis.PlacementConfig{Backend: f.backend, GPUBudget: -1, HostPolicy: f.hostPolicy,
		Bytes: map[string]int64{}, Elems: map[string]int64{}}
	switch f.backend {
	case "hbm", "host", "emu", "nvme":
	default:
		return nil, fmt.Errorf("--backend %q: use hbm, host, emu or nvme", f.backend)
	}
	switch f.hostPolicy {
	case "auto", "direct", "cache":
	default:
		return nil, fmt.Errorf("--host-placement %q: use auto, direct or cache", f.hostPolicy)
	}
	var err error
	if pc.CacheBytes, err = parseSize("--cache-bytes", f.cacheBytes); err != nil {
		return nil, err
	}
	if f.gpuBudget != "" {
		if pc.GPUBudget, err = parseSize("--gpu-budget", f.gpuBudget); err != nil {
			return nil, err
		}
	}
	if f.n != "" {
		if pc.N, err = parseSize("--n", f.n); err != nil {
			return nil, err
		}
	}
	for _, kv := range []struct {
		flag string
		list []string
		into map[string]int64
	}{{"--size", f.sizes, pc.Bytes}, {"--elems", f.elems, pc.Elems}} {
		for _, item := range kv.list {
			name, val, ok := strings.Cut(item, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				return nil, fmt.Errorf("%s %q: use NAME=VALUE, NAME a kernel's array parameter", kv.flag, item)
			}
			v, err := parseSize(kv.flag, val)
			if err != nil {
				return nil, err
			}
			if v == 0 {
				return nil, fmt.Errorf("%s %q: the size must be positive", kv.flag, item)
			}
			kv.into[name] = v
		}
	}
	return pc, nil
}

// config validates the flags and returns the model's input.
func (f *modelFlags) config() (analysis.ModelConfig, error) {
	g, ok := analysis.GPUs[f.gpu]
	if !ok {
		return analysis.ModelConfig{}, fmt.Errorf("--gpu %q is not a known GPU; use a100, h100 or h200, or give --sms and --warps-per-sm", f.gpu)
	}
	if f.sms < 0 || f.warps < 0 {
		return analysis.ModelConfig{}, fmt.Errorf("--sms and --warps-per-sm must be positive")
	}
	if f.sms > 0 {
		g.SMs, g.Name = f.sms, "custom"
	}
	if f.warps > 0 {
		g.WarpsPerSM, g.Name = f.warps, "custom"
	}
	if f.lineBytes < 512 || f.lineBytes > 65536 || f.lineBytes&(f.lineBytes-1) != 0 {
		return analysis.ModelConfig{}, fmt.Errorf("--line-bytes %d: use a power of two from 512 to 65536", f.lineBytes)
	}
	if !(f.latencyUS > 0) || f.iops < 0 || !(f.avgDegree > 0) {
		return analysis.ModelConfig{}, fmt.Errorf("--latency-us and --avg-degree must be positive and --iops not negative")
	}
	pc, err := f.placement()
	if err != nil {
		return analysis.ModelConfig{}, err
	}
	return analysis.ModelConfig{GPU: g, LineBytes: f.lineBytes, AvgDegree: f.avgDegree,
		Storage: analysis.Storage{LatencyUS: f.latencyUS, IOPS: f.iops}, Placement: pc}, nil
}

func newAnalyzeCmd() *cobra.Command {
	var asJSON bool
	var model modelFlags
	var build buildFlags
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Report kernels, their arrays, how each is indexed, and launch sites",
		Long: `analyze parses each CUDA file and reports, per kernel: its parameters, the
arrays it subscripts and how each index is formed (affine in the thread,
warp or lane id; data-dependent, i.e. loaded from another array; or other),
and the kernel's launch sites. --json prints the schema documented in
docs/analyze.md. Exit status 1 when the parser could not understand part
of a file (an error-severity diagnostic: the report may miss accesses or
launches there), 2 on errors; warnings alone leave it 0.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := build.setupReports(); err != nil {
				return err
			}
			if build.format == "sarif" {
				return runAnalyzeSARIF(cmd, args, &build)
			}
			return runAnalyze(cmd, args, asJSON || build.format == "json", &model, &build)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (schema: docs/analyze.md)")
	model.register(cmd)
	build.registerReports(cmd)
	return cmd
}

func runAnalyze(cmd *cobra.Command, paths []string, asJSON bool, model *modelFlags, build *buildFlags) error {
	var cfg *analysis.ModelConfig
	if model.enabled {
		c, err := model.config()
		if err != nil {
			return err
		}
		cfg = &c
	}
	sources, err := readSources(paths)
	if err != nil {
		return err
	}
	files := make([]*analysis.File, len(sources))
	build.each(cmd, len(sources), "analyzed", func(i int) {
		files[i] = analysis.Analyze(parse.ParseFile(sources[i].Name, sources[i].Bytes))
	})
	if asJSON {
		if err := writeAnalyzeJSON(cmd, files, cfg); err != nil {
			return err
		}
	} else {
		for _, f := range files {
			f.WriteText(cmd.OutOrStdout(), cfg)
			f.Parse.Src.Print(cmd.ErrOrStderr(), f.Parse.Diags)
		}
	}
	if anyErrors(files) {
		return exitError{exitFindings}
	}
	return nil
}

func writeAnalyzeJSON(cmd *cobra.Command, files []*analysis.File, cfg *analysis.ModelConfig) error {
	rep := analysis.JSONReport{Files: []analysis.JSONFile{}}
	for _, f := range files {
		rep.Files = append(rep.Files, f.JSON(cfg))
	}
	// Expressions such as &cfg and a && b are printed as written: the
	// report is read by tools and people, not embedded in HTML.
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("encoding the report: %v", err)
	}
	return nil
}

// anyErrors reports whether any file has an error-severity diagnostic: a
// region the parser kept as written, in a kernel (its accesses are missing
// from the report) or in host code (launches may be). Every diagnostic is
// printed, so exit 0 never comes with an error; warnings alone keep it 0.
func anyErrors(files []*analysis.File) bool {
	for _, f := range files {
		if diag.HasErrors(f.Parse.Diags) {
			return true
		}
	}
	return false
}
