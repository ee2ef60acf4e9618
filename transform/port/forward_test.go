package port

import "testing"

func TestCodeOnly(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		want bool
	}{
		{`"pull_vector"`, "pull_vector", false},
		{`run(x, n)`, "run", true},
		{`/* run */ f(x)`, "run", false},
		{"// run(x)\nf(x)", "run", false},
		{"// c\nrun(x)", "run", true},
		{`'r' + run(x)`, "run", true},
		{`"a \" run" + 1`, "run", false},
		{`1'000 + run(x)`, "run", true},
		{`/*/ run */`, "run", false},
	} {
		if got := mentions(codeOnly(tc.in), tc.name); got != tc.want {
			t.Errorf("mentions(codeOnly(%q), %q) = %v, want %v (code %q)", tc.in, tc.name, got, tc.want, codeOnly(tc.in))
		}
	}
}
