package port

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

// One-line expectations of the refs rewrite: what gets NAME_ref and how
// each read form is spelled through it.
func TestRefRewrites(t *testing.T) {
	ref := Options{Arrays: []string{"p"}, Ref: true}
	const head = "__global__ void k(const float* p, float* o, int n) { float s = 0; "
	const phead = "__global__ void k(bam::array<const float> p, float* o, int n) { float s = 0; "
	cases := []struct{ in, out string }{
		// A plain read: only the name changes.
		{"for (int i = 0; i < n; ++i) s += p[i]; o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; ++i) s += p_ref[i]; } o[0] = s; }"},
		// Where the use rewrite writes p.read(i), the ref spells it p_ref[i].
		{"for (int i = 0; i < n; i++) { auto v = p[i]; s += v; } o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) { auto v = p_ref[i]; s += v; } } o[0] = s; }"},
		// *(p + i) and a stencil of one stream.
		{"for (int i = 1; i + 1 < n; i += 1) s += *(p + i) + p[i - 1] + p[i + 1]; o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 1; i + 1 < n; i += 1) s += p_ref[i] + p_ref[i - 1] + p_ref[i + 1]; } o[0] = s; }"},
		// A descending scan, a factor on the variable, casts, macros-free constants.
		{"for (int i = n - 1; i >= 0; i = i - 2) s += p[(long)n - 1 - (long)i]; o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = n - 1; i >= 0; i = i - 2) s += p_ref[(long)n - 1 - (long)i]; } o[0] = s; }"},
		{"for (int i = 0; i < n; i++) s += p[2 * i]; o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) s += p_ref[2 * i]; } o[0] = s; }"},
		// An alias declared in the loop: *r is element i.
		{"for (int i = 0; i < n; i++) { const float *r = p + i; s += *r + r[1]; } o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) { const auto r = (i); s += p_ref[r] + p_ref[r + (1)]; } } o[0] = s; }"},
		// An outer loop's scan read inside an inner loop it does not depend on.
		{"for (int i = 0; i < n; i++) for (int j = 0; j < 4; j++) s += p[i] * j; o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) for (int j = 0; j < 4; j++) s += p_ref[i] * j; } o[0] = s; }"},
		// A barrier in the loop: the ref lets its line go before it.
		{"for (int i = 0; i < n; i++) { s += p[i]; __syncthreads(); } o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) { s += p_ref[i]; p_ref.drop(); __syncthreads(); } } o[0] = s; }"},
		// Inline asm (it may hold bar.sync) and a spin-wait count as waits too.
		{"for (int i = 0; i < n; i++) { s += p[i]; asm volatile(\"bar.sync 0;\"); while (atomicAdd((int*)o, 0) == 0) { } } o[0] = s; }",
			"{ bam::array_ref<const float> p_ref(p); for (int i = 0; i < n; i++) { s += p_ref[i]; p_ref.drop(); asm volatile(\"bar.sync 0;\"); p_ref.drop(); while (atomicAdd((int*)o, 0) == 0) { } } } o[0] = s; }"},
		// Not scans: data-dependent, loop-invariant, a varying offset, a grid stride.
		{"for (int i = 0; i < n; i++) s += p[(int)o[i]]; o[0] = s; }", ""},
		{"for (int i = 0; i < n; i++) s += p[n]; o[0] = s; }", ""},
		{"for (int i = 0; i < n; i++) { int m = i * i; s += p[m + i]; } o[0] = s; }", ""},
		{"for (int i = threadIdx.x; i < n; i += blockDim.x) s += p[i]; o[0] = s; }", ""},
		// Reads in the loop header stay plain.
		{"for (int i = 0; p[i] > 0; i++) s += 1; o[0] = s; }", ""},
	}
	for _, c := range cases {
		want := phead + c.out
		if c.out == "" {
			want = phead + c.in
		}
		expectPort(t, ref, head+c.in, want)
	}
}

// Without --ref (and with a config that does not ask) nothing changes.
func TestRefOffByDefault(t *testing.T) {
	src := "__global__ void k(const float* p, float* o, int n) { float s = 0; for (int i = 0; i < n; ++i) s += p[i]; o[0] = s; }"
	res, _ := portForTest(t, []byte(src), Options{Arrays: []string{"p"}})
	if strings.Contains(string(res.Output), "array_ref") {
		t.Errorf("a ref without --ref:\n%s", res.Output)
	}
	off := false
	cfg := &Config{Ref: true, Arrays: []ArrayConfig{{Name: "k:p", Ref: &off}}}
	res, _ = portForTest(t, []byte(src), Options{Arrays: []string{"p"}, Config: cfg})
	if strings.Contains(string(res.Output), "array_ref") {
		t.Errorf("k:p ref: false was ignored:\n%s", res.Output)
	}
}

// TestRefCorpus pins which corpus kernels get refs with --auto --ref, the
// list docs/port.md gives. (The corpus_ref_* goldens pin the full outputs
// on copies; this follows the corpus itself.)
func TestRefCorpus(t *testing.T) {
	want := map[string][]string{
		"bfs_thread": {"bfs_expand: colidx"},
		"spmv":       {"spmv_csr_scalar: col_ind, val"},
		"sssp":       {"sssp_relax: col_idx, weights"},
		"pagerank":   {"pagerank_pull: in_sources"},
		"bfs_chunk":  {"bfs_chunk_kernel: row_offsets"},
		"embedding":  {"gather_sum: nbrs"},
		"bfs_warp":   nil, "cc": nil, "reduction": nil, "query": nil, "vectoradd": nil,
	}
	for prog, refs := range want {
		src, err := os.ReadFile("../../testdata/kernels/" + prog + "/" + prog + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		res, diags := portForTest(t, src, Options{Auto: true, Ref: true})
		var got []string
		for _, line := range strings.Split(diags, "\n") {
			if strings.Contains(line, "[PORT050]") {
				got = append(got, refNoteArrays(line))
			}
		}
		sort.Strings(got)
		if strings.Join(got, "; ") != strings.Join(refs, "; ") {
			t.Errorf("%s: refs %q, want %q", prog, got, refs)
		}
		checkIdempotent(t, res.Output, Options{Auto: true, Ref: true})
	}
}

// refNoteArrays turns a PORT050 note into "kernel: a, b".
func refNoteArrays(line string) string {
	_, msg, _ := strings.Cut(line, "note: ")
	kernel, rest, _ := strings.Cut(msg, ": this loop reads ")
	list, _, _ := strings.Cut(rest, " through ")
	var names []string
	for _, part := range strings.Split(list, "), ") {
		name, _, _ := strings.Cut(part, " (")
		names = append(names, name)
	}
	return kernel + ": " + strings.Join(names, ", ")
}

// TestRefNeverFailsOnCorpus ports every corpus file (stress cases
// included), whole and truncated, with --auto --ref: diagnostics, never an
// internal error; whole files port idempotently, on as many lines as
// without --ref.
func TestRefNeverFailsOnCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/kernels/*/*.cu")
	opts := Options{Auto: true, Ref: true}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, frac := range []int{3, 5, 7, 9} {
			if _, err := portFile(parse.ParseFile(f, src[:len(src)*frac/10]), opts); err != nil {
				t.Errorf("%s cut at %d/10: %v", f, frac, err)
			}
		}
		res, err := portFile(parse.ParseFile(f, src), opts)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		plain, err := portFile(parse.ParseFile(f, src), Options{Auto: true})
		if err != nil || bytes.Count(res.Output, []byte("\n")) != bytes.Count(plain.Output, []byte("\n")) {
			t.Errorf("%s: the refs changed the line count (%v)", f, err)
		}
		checkIdempotent(t, res.Output, opts)
	}
}
