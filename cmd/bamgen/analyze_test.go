package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bamgen/bamgen/analysis"
)

// runMain runs bamgen with args and returns exit code, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const bfsKernel = `#define WARP_SHIFT 5
__global__ void bfs(const unsigned long long *rowptr, const unsigned *colidx, unsigned *label, unsigned long long n) {
  const unsigned long long tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long w = tid >> WARP_SHIFT;
  const unsigned lane = tid & 31;
  if (w >= n) return;
  for (unsigned long long e = rowptr[w] + lane; e < rowptr[w + 1]; e += 32) label[colidx[e]] = 1;
}
int main() { bfs<<<1, 32>>>(0, 0, 0, 0); }
`

func TestAnalyzeText(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfs.cu", []byte(bfsKernel))
	code, out, errOut := runMain(t, "analyze", "--model", p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"kernel bfs", "array colidx", "data-dependent (from rowptr)", "affine(warp)",
		"launch  9:14 in main", "warp-per-vertex CSR walk over colidx", "odt"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyzeJSON(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfs.cu", []byte(bfsKernel))
	code, out, _ := runMain(t, "analyze", "--json", "--model", p)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep analysis.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	fn := rep.Files[0].Functions[0]
	if fn.Name != "bfs" || fn.Kind != "kernel" || len(fn.Params) != 4 || len(fn.Launches) != 1 || fn.Model == nil {
		t.Errorf("unexpected function report: %+v", fn)
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		args     []string
		code     int
		wantErr  string
		contains string
	}{
		{"missing file", []string{"analyze", filepath.Join(dir, "nope.cu")}, 2, "no such file; check the path [IO001]", ""},
		{"directory", []string{"analyze", dir}, 2, "is a directory", ""},
		{"no args", []string{"analyze"}, 2, "requires at least 1 arg", ""},
		{"bad flag", []string{"analyze", "--bogus", "x.cu"}, 2, "unknown flag: --bogus", ""},
		{"bad gpu", []string{"analyze", "--model", "--gpu", "z9", "x.cu"}, 2, "--gpu \"z9\" is not a known GPU", ""},
		{"bad line size", []string{"analyze", "--model", "--line-bytes", "1000", "x.cu"}, 2, "--line-bytes 1000", ""},
		{"unterminated comment in kernel", []string{"analyze", writeFile(t, dir, "c.cu", []byte("__global__ void k(int *a) { a[0] = 1; /* oops\n"))},
			1, "", "kernel k"},
		{"empty file", []string{"analyze", writeFile(t, dir, "e.cu", nil)}, 0, "", ""},
		// nothing in it could be parsed, and the errors say so
		{"binary junk", []string{"analyze", writeFile(t, dir, "j.cu", []byte{0, 1, 2, 0xff, '{', '{', '"', 0xfe})}, 1, "error: invalid character", ""},
	}
	for _, c := range cases {
		code, out, errOut := runMain(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.wantErr) || !strings.Contains(out, c.contains) {
			t.Errorf("%s: exit %d (want %d)\nstdout: %s\nstderr: %s", c.name, code, c.code, out, errOut)
		}
	}
}

// A 50 MB file must finish in bounded time with no panic.
func TestAnalyzeLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	var b bytes.Buffer
	for b.Len() < 50<<20 {
		b.WriteString(bfsKernel)
		b.WriteString("{{{ ( [ \"unbalanced\n")
	}
	p := writeFile(t, t.TempDir(), "big.cu", b.Bytes())
	start := time.Now()
	code, _, errOut := runMain(t, "analyze", "--json", p)
	if code == 2 {
		t.Fatalf("exit 2: %s", errOut[:min(len(errOut), 500)])
	}
	t.Logf("50 MB analysed in %v (exit %d)", time.Since(start), code)
}

const apiLaunchSrc = `template <typename T> __global__ void fill(T *a, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}
int main() {
  float *d; float v = 1; int n = 64;
  void *args[] = {&d, &v, &n};
  cudaLaunchKernel((const void*)&fill<float>, dim3(1), dim3(64), args, 0, 0);
  cudaLaunchKernelEx(&cfg, fill<float>, d, v, n);
}
`

// Launches through the runtime API are listed with the kernel's other
// launch sites, in text and JSON.
func TestAnalyzeRuntimeAPILaunches(t *testing.T) {
	p := writeFile(t, t.TempDir(), "api.cu", []byte(apiLaunchSrc))
	code, out, errOut := runMain(t, "analyze", p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"launch  8:3 in main: cudaLaunchKernel((const void*)&fill<float>, dim3(1), dim3(64), args, 0, 0)",
		"launch  9:3 in main: cudaLaunchKernelEx(&cfg, fill<float>, d, v, n)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runMain(t, "analyze", "--json", p)
	if code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	var rep analysis.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	ls := rep.Files[0].Functions[0].Launches
	if len(ls) != 2 {
		t.Fatalf("launches = %+v", ls)
	}
	if l := ls[0]; l.Via != "cudaLaunchKernel" || l.ArgsArray != "args" || len(l.Args) != 0 || strings.Join(l.Config, ",") != "dim3(1),dim3(64),0,0" {
		t.Errorf("cudaLaunchKernel launch = %+v", l)
	}
	if l := ls[1]; l.Via != "cudaLaunchKernelEx" || l.LaunchConfig != "&cfg" || strings.Join(l.Args, ",") != "d,v,n" || len(l.Config) != 0 {
		t.Errorf("cudaLaunchKernelEx launch = %+v", l)
	}
	if !strings.Contains(out, `"launch_config": "&cfg"`) {
		t.Errorf("JSON escapes expressions:\n%s", out)
	}
}

// A <<<>>> launch has no via, launch_config or args_array: old readers of
// the schema see what they always saw.
func TestAnalyzeJSONLaunchCompat(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfs.cu", []byte(bfsKernel))
	_, out, _ := runMain(t, "analyze", "--json", p)
	for _, field := range []string{`"via"`, `"launch_config"`, `"args_array"`} {
		if strings.Contains(out, field) {
			t.Errorf("<<<>>> launch has %s:\n%s", field, out)
		}
	}
}

// severityCases are inputs with error-, warning- or no diagnostics, for the
// rule both commands follow: an error-severity diagnostic is never printed
// with exit status 0; warnings and notes alone never change the status.
var severityCases = []struct {
	name, src string
	errors    bool
}{
	{"clean", portSrc, false},
	{"unparsed statement in kernel body", strings.Replace(portSrc, "if (i < n) out[i]", "for (int j = 0; j < n j++) out[i]", 1), true},
	{"unparsed expression in kernel body", strings.Replace(portSrc, "2.0f * *(in + i)", "(2.0f + ", 1), true},
	{"bad kernel parameter", strings.Replace(portSrc, "int n)", "int n, int @)", 1), true},
	{"unparsed host statement", strings.Replace(portSrc, "cudaFree(d_in);", "cudaFree(d_in;", 1), true},
	{"recovered missing ';' in kernel", strings.Replace(portSrc, "if (i < n) out[i] = 2.0f * *(in + i);",
		"do { if (i < n) out[i] = 2.0f * *(in + i); } while (0)", 1), false},
	{"#endif without #if in kernel", strings.Replace(portSrc, "    int i =", "#endif\n    int i =", 1), false},
}

func TestAnalyzeExitFollowsSeverity(t *testing.T) {
	dir := t.TempDir()
	for _, c := range severityCases {
		p := writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_")+".cu", []byte(c.src))
		code, out, errOut := runMain(t, "analyze", p)
		printed := strings.Contains(errOut, ": error: ")
		if printed != c.errors {
			t.Errorf("%s: error diagnostics printed = %v, want %v:\n%s", c.name, printed, c.errors, errOut)
		}
		if want := map[bool]int{true: 1, false: 0}[c.errors]; code != want {
			t.Errorf("%s: exit %d, want %d\nstderr: %s", c.name, code, want, errOut)
		}
		// warnings are regions the parser recovered, not unparsed ones
		if strings.Contains(out, "unparsed regions") && !strings.Contains(c.name, "kernel body") {
			t.Errorf("%s: reports unparsed regions:\n%s", c.name, out)
		}
		jcode, jout, _ := runMain(t, "analyze", "--json", p)
		var rep analysis.JSONReport
		if err := json.Unmarshal([]byte(jout), &rep); err != nil || jcode != code {
			t.Errorf("%s: --json exit %d (text %d), %v", c.name, jcode, code, err)
		}
	}
}

// The unparsed_regions count of a kernel is its body's error diagnostics.
func TestAnalyzeUnparsedRegionsCountErrors(t *testing.T) {
	src := strings.Replace(portSrc, "if (i < n) out[i] = 2.0f * *(in + i);",
		"do { if (i < n) out[i] = 2.0f * *(in + i); } while (0)\n    for (int j = 0; j < n j++) out[j] = 0;", 1)
	p := writeFile(t, t.TempDir(), "u.cu", []byte(src))
	_, out, _ := runMain(t, "analyze", "--json", p)
	var rep analysis.JSONReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.Files[0].Functions[0].Unparsed; got != 1 {
		t.Errorf("unparsed_regions = %d, want 1 (one error, one warning)\n%s", got, out)
	}
}

// placementOf returns the placement line of array name in a text report.
func placementOf(t *testing.T, out, name string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 3 && f[0] == name && strings.Contains(out, "  placement (") {
			return l
		}
	}
	t.Fatalf("no placement line for %s in:\n%s", name, out)
	return ""
}

func TestAnalyzeModelPlacement(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfs.cu", []byte(bfsKernel))
	// n = 1M vertices, degree 16: colidx 64 MiB (unsigned), rowptr 8 MiB, label 4 MiB.
	cases := []struct {
		args []string
		want map[string]string // array -> placement
	}{
		{[]string{"--n", "1M"}, map[string]string{"colidx": "resident", "rowptr": "resident", "label": "resident"}},
		// 16 MiB budget: the two small ones stay, the largest leaves.
		{[]string{"--n", "1M", "--gpu-budget", "16M"}, map[string]string{"colidx": "hbm-cache", "rowptr": "resident", "label": "resident"}},
		// 10 MiB: label (4) + rowptr (8) do not both fit; the smaller stays.
		{[]string{"--n", "1M", "--gpu-budget", "10M"}, map[string]string{"colidx": "hbm-cache", "rowptr": "hbm-cache", "label": "resident"}},
		{[]string{"--n", "1M", "--backend", "emu"}, map[string]string{"colidx": "ssd-cache", "rowptr": "ssd-cache", "label": "ssd-cache"}},
		{[]string{"--n", "1M", "--backend", "emu", "--gpu-budget", "16M"}, map[string]string{"colidx": "ssd-cache", "rowptr": "resident", "label": "resident"}},
		// host: what fits the GPU (the default budget) is copied there, as UVM would migrate it.
		{[]string{"--n", "1M", "--backend", "host"}, map[string]string{"colidx": "resident", "rowptr": "resident", "label": "resident"}},
		{[]string{"--n", "1M", "--backend", "host", "--gpu-budget", "16M", "--cache-bytes", "32M"}, map[string]string{"colidx": "host-direct", "rowptr": "resident", "label": "resident"}},
		// host without a budget, auto: larger than half the cache -> zero-copy, else cached.
		{[]string{"--n", "1M", "--backend", "host", "--gpu-budget", "0", "--cache-bytes", "32M"}, map[string]string{"colidx": "host-direct", "rowptr": "host-cache", "label": "host-cache"}},
		{[]string{"--n", "1M", "--backend", "host", "--gpu-budget", "0", "--host-placement", "direct"}, map[string]string{"colidx": "host-direct", "label": "host-direct"}},
		// --size beats --n: label made the largest array.
		{[]string{"--n", "1M", "--size", "label=1G", "--gpu-budget", "100M"}, map[string]string{"colidx": "resident", "label": "hbm-cache"}},
		{[]string{"--elems", "colidx=1k"}, map[string]string{"colidx": "resident", "rowptr": "unknown"}},
	}
	for _, c := range cases {
		code, out, errOut := runMain(t, append(append([]string{"analyze", "--model"}, c.args...), p)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for name, want := range c.want {
			if f := strings.Fields(placementOf(t, out, name)); !strings.Contains(strings.Join(f, " "), " "+want+" ") {
				t.Errorf("%v: %s: want %s, got %q", c.args, name, want, strings.Join(f, " "))
			}
		}
	}
	// The reason names the budget; an edge array sized from --n says so.
	_, out, _ := runMain(t, "analyze", "--model", "--n", "1M", "--gpu-budget", "16M", p)
	if l := placementOf(t, out, "colidx"); !strings.Contains(l, "64.0 MiB") || !strings.Contains(l, "does not fit the GPU budget") {
		t.Errorf("colidx line: %q", l)
	}
	_, js, _ := runMain(t, "analyze", "--json", "--model", "--n", "1M", "--gpu-budget", "16M", p)
	var rep analysis.JSONReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	pl := rep.Files[0].Placement
	if pl == nil || pl.GPUBudget != 16<<20 || len(pl.Arrays) != 3 || pl.Arrays[2].Array != "colidx" ||
		pl.Arrays[2].Bytes != 64<<20 || pl.Arrays[2].Placement != "hbm-cache" || !strings.Contains(pl.Arrays[2].SizeFrom, "avg-degree") {
		t.Errorf("JSON placement: %+v", pl)
	}
	// Without a size there is no placement section.
	_, out, _ = runMain(t, "analyze", "--model", p)
	if strings.Contains(out, "placement (") {
		t.Errorf("placement without a dataset size:\n%s", out)
	}
}

func TestAnalyzeModelPlacementErrors(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bfs.cu", []byte(bfsKernel))
	for _, args := range [][]string{
		{"--backend", "emu"},                   // no size
		{"--n", "1M", "--backend", "ssd"},      // unknown backend
		{"--n", "12Q"},                         // bad suffix
		{"--size", "colidx"},                   // no =
		{"--size", "colidx=0"},                 // zero
		{"--n", "1M", "--host-placement", "x"}, // bad policy
		{"--n", "99999999999999999999"},        // too large
	} {
		code, _, errOut := runMain(t, append(append([]string{"analyze", "--model"}, args...), p)...)
		if code != 2 || !strings.Contains(errOut, "error") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
