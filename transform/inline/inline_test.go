package inline

import (
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

const wrappersSrc = `#include <cuda_runtime.h>
#define CHECK(x) check_((x), __LINE__)
static void check_(cudaError_t e, int line) {}

template <typename T>
T* alloc(size_t n)
{
    T* t;
    CHECK(cudaMalloc((void**)&t, sizeof(T) * n));
    return t;
}

template <typename T>
void upload(T* dst, const T* src, size_t n) { CHECK(cudaMemcpy((void*)dst, src, n * sizeof(T), cudaMemcpyHostToDevice)); }

template <class T>
void dealloc(T* p) { CHECK(cudaFree(p)); }

void clear(int* d, size_t n) { cudaMemset(d, 0, n * sizeof(int)); }

template <typename T>
void dev_alloc(T** p, size_t n) { CHECK(cudaMalloc((void**)p, n * sizeof(T))); }

cudaError_t down(float* h, const float* d, size_t n) { return cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost); }
`

// find parses src and returns its sites by the text of the call.
func find(t *testing.T, src string) map[string]Site {
	t.Helper()
	pf := parse.ParseFile("w.cu", []byte(src))
	out := map[string]Site{}
	for _, s := range Find(pf) {
		if got := src[s.Start:s.End]; strings.Count(got, "\n") != strings.Count(s.Text, "\n") {
			t.Errorf("%q: the replacement %q has another line count", got, s.Text)
		}
		if _, dup := out[s.Call]; dup {
			t.Fatalf("two sites call %s: give each call of a test its own text", s.Call)
		}
		out[s.Call] = s
	}
	return out
}

func TestFindInlinesEachForm(t *testing.T) {
	src := wrappersSrc + `
void run(const float* h, std::vector<int>& hv, size_t n, float* hf)
{
    float* d = alloc<float>(n + 1);
    int* e;
    e = alloc<int>(n);
    upload<float>(d, h, n);
    upload(e, hv.data(), hv.size());
    clear(e,
          n);
    dealloc(d);
    double* g;
    dev_alloc(&g, 2 * n);
    CHECK(down(hf, d, n));
    cudaError_t st = down(hf, d,
                          n + 1);
}
`
	sites := find(t, src)
	want := map[string]string{
		"alloc<float>(n + 1)":             "float* d; CHECK(cudaMalloc((void**)&d, sizeof(float) * (n + 1)));",
		"alloc<int>(n)":                   "CHECK(cudaMalloc((void**)&e, sizeof(int) * n));",
		"upload<float>(d, h, n)":          "CHECK(cudaMemcpy((void*)d, h, n * sizeof(float), cudaMemcpyHostToDevice));",
		"upload(e, hv.data(), hv.size())": "CHECK(cudaMemcpy((void*)e, (hv.data()), (hv.size()) * sizeof(int), cudaMemcpyHostToDevice));",
		"clear(e, n)":                     "cudaMemset(e, 0, n * sizeof(int));\n",
		"dealloc(d)":                      "CHECK(cudaFree(d));",
		"dev_alloc(&g, 2 * n)":            "CHECK(cudaMalloc((void**)(&g), (2 * n) * sizeof(double)));",
		"down(hf, d, n)":                  "cudaMemcpy(hf, d, n * sizeof(float), cudaMemcpyDeviceToHost)",
		"down(hf, d, n + 1)":              "cudaMemcpy(hf, d, (n + 1) * sizeof(float), cudaMemcpyDeviceToHost)\n",
	}
	for call, text := range want {
		s, ok := sites[call]
		if !ok {
			t.Errorf("%s: not inlined; sites: %v", call, sites)
			continue
		}
		if s.Text != text {
			t.Errorf("%s:\n got %q\nwant %q", call, s.Text, text)
		}
	}
	if len(sites) != len(want) {
		t.Errorf("got %d sites, want %d: %v", len(sites), len(want), sites)
	}
	if s := sites["dealloc(d)"]; s.Wrapper != "dealloc" || s.API != "cudaFree" {
		t.Errorf("dealloc(d): wrapper %q, API %q", s.Wrapper, s.API)
	}
}

func TestFindRefuses(t *testing.T) {
	// control, when set, is a call of the same wrapper that is inlined:
	// the case is then refused for the call's reason, not the wrapper's.
	cases := []struct{ name, src, control string }{
		{"two statements", `void up(int* d, const int* h, size_t n) { printf("x"); cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }
void f(int* d, const int* h) { up(d, h, 4); }`, ""},
		{"parameter outside the call", `#define CHECK2(a, b) (b)
void fr(int* p, int n) { CHECK2(n, cudaFree(p)); }
void f(int* d) { fr(d, 1); }`, ""},
		{"overloaded", `void fr(int* p) { cudaFree(p); }
void fr(float* p) { cudaFree(p); }
void f(int* d) { fr(d); }`, ""},
		{"not a type template parameter", `template <int N> void fr(int* p) { cudaFree(p); }
void f(int* d) { fr<4>(d); }`, ""},
		{"argument with a side effect", `void up(int* d, const int* h, size_t n) { cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }
void f(int* d, const int* h, size_t k) { up(d, h + k++, 4); up(d, h + k, 4); }`, "up(d, h + k, 4)"},
		{"call in an argument", `void up(int* d, const int* h, size_t n) { cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }
size_t count();
void f(int* d, const int* h) { up(d, h, count()); up(d, h, 4); }`, "up(d, h, 4)"},
		{"a name of the body shadowed at the call", `cudaStream_t s0;
void up(int* d, const int* h, size_t n) { cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s0); }
void f(int* d, const int* h) { int s0 = 1; up(d, h, 4); }
void g(int* d, const int* h) { up(d, h, 8); }`, "up(d, h, 8)"},
		{"template argument not deducible", `template <typename T> void up(T* d, const T* h, size_t n) { cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice); }
void f(int* d, const int* h) { up(d + 1, h + 2, 4); up(d, h + 2, 4); }`, "up(d, h + 2, 4)"},
		{"directive in the body", `void fr(int* p) {
#ifdef X
    cudaFree(p);
#endif
}
void f(int* d) { fr(d); }`, ""},
		{"not a statement of its own", `void fr(int* p) { cudaFree(p); }
void f(int* d, bool b) { b ? fr(d) : fr(d + 1); fr(d + 2); }`, "fr(d + 2)"},
		{"not a CUDA memory call", `void fr(int* p) { free(p); }
void f(int* d) { fr(d); }`, ""},
		{"status wrapper that checks before it returns", `cudaError_t up(int* d, const int* h, size_t n) { return check(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)); }
void f(int* d, const int* h) { up(d, h, 4); }`, ""},
		{"device function", `__device__ void fr(int* p) { cudaFree(p); }
void f(int* d) { fr(d); }`, ""},
		{"const pointer declaration", `template <typename T> T* alloc(size_t n) { T* t; cudaMalloc(&t, n * sizeof(T)); return t; }
void f(size_t n) { float* const d = alloc<float>(n); float* e = alloc<float>(2 * n); }`, "alloc<float>(2 * n)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sites := find(t, c.src)
			if _, ok := sites[c.control]; c.control != "" && !ok {
				t.Errorf("the control call %s was not inlined: %v", c.control, sites)
			}
			delete(sites, c.control)
			if len(sites) != 0 {
				t.Errorf("inlined %v", sites)
			}
		})
	}
}

func TestApplyAndMapBack(t *testing.T) {
	src := wrappersSrc + `
void run(size_t n)
{
    int* e = alloc<int>(n);   // here
    dealloc(e);
}
`
	pf := parse.ParseFile("w.cu", []byte(src))
	sites := Find(pf)
	if len(sites) != 2 {
		t.Fatalf("got %d sites, want 2", len(sites))
	}
	text, m := Apply([]byte(src), sites)
	out := string(text)
	if strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Errorf("the line count changed")
	}
	comment := strings.Index(out, "// here")
	if got, want := m.Back(comment), strings.Index(src, "// here"); got != want {
		t.Errorf("Back(comment) = %d, want %d", got, want)
	}
	inside := strings.Index(out, "cudaMalloc((void**)&e")
	if got := m.Back(inside); got != sites[0].Start {
		t.Errorf("Back(inside the first site) = %d, want its start %d", got, sites[0].Start)
	}
	if got, want := m.Back(len(out)), len(src); got != want {
		t.Errorf("Back(end) = %d, want %d", got, want)
	}
	if got := m.Touched(inside, inside+3); len(got) != 1 || got[0] != 0 {
		t.Errorf("Touched(inside the first site) = %v", got)
	}
	if got := m.Touched(comment, comment+2); len(got) != 0 {
		t.Errorf("Touched(the comment) = %v", got)
	}
}
