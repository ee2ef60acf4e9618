package port

import (
	"reflect"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("auto: true\narrays:\n  - name: k:a\n    count: n\n    source: file:x.bin@64\nrewrites: [kernel-params, runtime]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ArrayConfig{{Name: "k:a", Count: "n", Source: "file:x.bin@64"}}
	if !c.Auto || !reflect.DeepEqual(c.Arrays, want) || len(c.Rewrites) != 2 {
		t.Errorf("config = %+v", c)
	}
	if s, _ := ParseSource("file:x.bin@64"); s != (Source{Kind: "file", Path: "x.bin", Offset: "64"}) {
		t.Errorf("source = %+v", s)
	}
	for _, bad := range []string{"arays: []", "arrays:\n  - count: 3", "arrays:\n  - name: a\n    source: tape", "rewrites: [nope]", "auto: [1"} {
		if _, err := ParseConfig("c.yaml", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "c.yaml:") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if c, err := ParseConfig("c.yaml", nil); err != nil || len(c.Arrays) != 0 {
		t.Errorf("empty config: %+v %v", c, err)
	}
}
