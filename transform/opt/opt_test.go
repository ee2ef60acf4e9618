package opt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// runOpt applies kind to src with every named array ported in every kernel.
func runOpt(t *testing.T, src, kind string, ported ...string) (string, []diag.Diagnostic) {
	t.Helper()
	pf := parse.ParseFile("k.cu", []byte(src))
	af := analysis.Analyze(pf)
	p := map[string][]string{}
	for _, k := range af.Kernels() {
		p[k.Decl.Name] = ported
	}
	opts, err := Parse(kind, 0)
	if err != nil {
		t.Fatalf("Parse(%q): %v", kind, err)
	}
	res := Run(af, opts, Ported{Params: p})
	out, err := edit.Apply([]byte(src), res.Edits, "k.cu")
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return string(out), res.Diags
}

// expectRewrite checks that the output contains each of wants and that
// every original line that is still in it is numbered as before by the
// compiler (#line directives follow the inserted lines).
func expectRewrite(t *testing.T, src, kind string, ported []string, wants ...string) {
	t.Helper()
	out, diags := runOpt(t, src, kind, ported...)
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q\noutput:\n%s\ndiags: %v", kind, w, out, diags)
		}
	}
	checkLineNumbers(t, src, out)
}

// checkLineNumbers: each line of src whose text occurs once in src and
// once in out is given its original number in out, counting the #line
// directives as the compiler does.
func checkLineNumbers(t *testing.T, src, out string) {
	t.Helper()
	orig := strings.Split(src, "\n")
	outLines := strings.Split(out, "\n")
	count := func(lines []string, l string) int {
		n := 0
		for _, x := range lines {
			if x == l {
				n++
			}
		}
		return n
	}
	numberOf := map[string]int{}
	next := 1
	for _, l := range outLines {
		var n int
		if _, err := fmt.Sscanf(l, "#line %d", &n); err == nil {
			next = n
			continue
		}
		numberOf[l] = next
		next++
	}
	checked := 0
	for i, l := range orig {
		if strings.TrimSpace(l) == "" || count(orig, l) != 1 || count(outLines, l) != 1 {
			continue
		}
		checked++
		if numberOf[l] != i+1 {
			t.Errorf("line %q is numbered %d in the output, it is line %d of the input\n%s", l, numberOf[l], i+1, out)
		}
	}
	if checked == 0 {
		t.Errorf("no line of the input is kept:\n%s", out)
	}
}

// expectRefusal checks that the kernel is left unchanged with code.
func expectRefusal(t *testing.T, src, kind, code string, ported ...string) {
	t.Helper()
	out, diags := runOpt(t, src, kind, ported...)
	if out != src {
		t.Errorf("%s: refused kernel was changed:\n%s", kind, out)
	}
	for _, d := range diags {
		if d.Code == code && d.Severity == diag.Warning {
			return
		}
	}
	t.Errorf("%s: no %s warning; diags: %v", kind, code, diags)
}

const vecAdd = `__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`

const bfsWarp = `#define WARP_SIZE 32
__global__ void bfs(const unsigned long long *rowptr, const unsigned *colidx, unsigned *label,
                    unsigned level, unsigned long long n, bool *changed) {
  const unsigned long long tid = blockDim.x * (unsigned long long)blockIdx.x + threadIdx.x;
  const unsigned long long w = tid / WARP_SIZE;
  const unsigned lane = tid % WARP_SIZE;
  if (w < n && label[w] == level) {
    const unsigned long long start = rowptr[w];
    const unsigned long long end = rowptr[w + 1];
    for (unsigned long long e = (start & ~31ull) + lane; e < end; e += WARP_SIZE) {
      if (e >= start) {
        unsigned v = colidx[e];
        if (label[v] == 0xffffffffu) { label[v] = level + 1; *changed = true; }
      }
    }
  }
}
void run(unsigned long long *r, unsigned *c, unsigned *l, unsigned long long n, bool *ch) {
  bfs<<<(n * 32 + 255) / 256, 256>>>(r, c, l, 0, n, ch);
}
`

func TestParse(t *testing.T) {
	good := []struct {
		spec  string
		lanes int
		want  Options
	}{
		{"claware", 0, Options{Kind: Claware, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
		{"claware", 16, Options{Kind: Claware, LanesPerLine: 16, Stride: 128, Coarsen: 8}},
		{"transpose=256", 32, Options{Kind: Transpose, LanesPerLine: 32, Stride: 256, Coarsen: 8}},
		{"coarsen=4", 32, Options{Kind: Coarsen, LanesPerLine: 32, Stride: 128, Coarsen: 4}},
		{"odt", 32, Options{Kind: ODT, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
		{"auto", 32, Options{Kind: Auto, LanesPerLine: 32, Stride: 128, Coarsen: 8}},
	}
	for _, c := range good {
		if got, err := Parse(c.spec, c.lanes); err != nil || got != c.want {
			t.Errorf("Parse(%q, %d) = %+v, %v; want %+v", c.spec, c.lanes, got, err, c.want)
		}
	}
	bad := map[string]string{
		"fast":               `unknown --opt "fast"; use one of claware, transpose, coarsen, odt, auto`,
		"none":               `unknown --opt "none"`,
		"claware=3":          "only transpose=STRIDE and coarsen=K take a number",
		"transpose=x":        `"x" is not a positive whole number`,
		"transpose=-1":       `"-1" is not a positive whole number`,
		"transpose=99999999": "the stride must be between 1 and 1048576",
		"coarsen=5000":       "the factor must be between 1 and 1024",
	}
	for spec, want := range bad {
		if _, err := Parse(spec, 32); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v; want it to contain %q", spec, err, want)
		}
	}
	if _, err := Parse("claware", 12); err == nil || !strings.Contains(err.Error(), "--lanes-per-line 12") {
		t.Errorf("--lanes-per-line 12: error = %v", err)
	}
}

func TestKindString(t *testing.T) {
	seen := map[string]bool{}
	for k := None; k <= Auto; k++ {
		s := k.String()
		if strings.HasPrefix(s, "Kind(") || seen[s] {
			t.Errorf("kind %d has name %q", int(k), s)
		}
		seen[s] = true
	}
	if s := Kind(99).String(); s != "Kind(99)" {
		t.Errorf("Kind(99) = %q", s)
	}
}
