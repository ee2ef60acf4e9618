package parse

import "testing"

// TestSpaceBefore checks spaceBefore's tables against its definition on
// every pair of bytes.
func TestSpaceBefore(t *testing.T) {
	p := &parser{}
	for _, inGroup := range []bool{false, true} {
		p.inGroup = inGroup
		for prev := range 256 {
			for c := range 256 {
				for n := 1; n <= 2; n++ {
					a, b := byte(prev), byte(c)
					want := isIdentChar(a) && isIdentChar(b) ||
						(b == '*' || b == '&') && (isIdentChar(a) || a == '>') ||
						(a == '*' || a == '&') && isIdentChar(b) ||
						a == ',' ||
						b == '(' && n == 1 && inGroup && isIdentChar(a)
					if got := p.spaceBefore(a, b, n); got != want {
						t.Fatalf("spaceBefore(%q, %q, %d) inGroup=%v = %v, want %v", a, b, n, inGroup, got, want)
					}
				}
			}
		}
	}
}

func TestTypeRefFields(t *testing.T) {
	f := ParseFile("t.cu", []byte("__global__ void k(const float *__restrict__ a, float const &b, int **c, unsigned long long d[4], float *const e, T &&f) {}"))
	ps := f.Funcs()[0].Params
	type want struct {
		base                   string
		cnst, ref, rref, restr bool
		ptrs, arrays           int
	}
	wants := []want{
		{"float", true, false, false, true, 1, 0},
		{"float", true, true, false, false, 0, 0},
		{"int", false, false, false, false, 2, 0},
		{"unsigned long long", false, false, false, false, 0, 1},
		{"float", false, false, false, false, 1, 0},
		{"T", false, false, true, false, 0, 0},
	}
	for i, w := range wants {
		ty := ps[i].Type
		got := want{ty.Base, ty.Const, ty.Ref, ty.RRef, ty.Restrict, ty.Pointers, len(ty.Array)}
		if got != w {
			t.Errorf("param %d: got %+v want %+v", i, got, w)
		}
	}
	if s := f.Text(ps[0].Type); s != "const float *__restrict__" {
		t.Errorf("type span text %q", s)
	}
	if s := f.Text(ps[0].Type.BaseSpan); s != "float" {
		t.Errorf("base span text %q", s)
	}
}
