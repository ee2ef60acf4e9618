package parse_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
	old "github.com/bamgen/bamgen/parse/zz_old"
)

func walk(b *strings.Builder, v reflect.Value, seen map[uintptr]int, depth int) {
	if depth > 400 {
		b.WriteString("<deep>")
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if id, ok := seen[v.Pointer()]; ok {
			fmt.Fprintf(b, "@%d", id)
			return
		}
		seen[v.Pointer()] = len(seen)
		b.WriteString("&")
		walk(b, v.Elem(), seen, depth+1)
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		b.WriteString(v.Elem().Type().Name())
		walk(b, v.Elem(), seen, depth+1)
	case reflect.Struct:
		b.WriteString("{")
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Name == "Src" {
				continue
			}
			b.WriteString(v.Type().Field(i).Name + ":")
			walk(b, v.Field(i), seen, depth+1)
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			walk(b, v.Index(i), seen, depth+1)
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.Map:
		fmt.Fprintf(b, "map%d", v.Len())
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

func show(x any) string {
	var b strings.Builder
	walk(&b, reflect.ValueOf(x), map[uintptr]int{}, 0)
	return b.String()
}

func TestDiffOld(t *testing.T) {
	var files []string
	filepath.Walk("../testdata", func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && (strings.HasSuffix(p, ".cu") || strings.HasSuffix(p, ".cuh") || strings.HasSuffix(p, ".h") || strings.HasSuffix(p, ".cpp")) {
			files = append(files, p)
		}
		return nil
	})
	fz, _ := filepath.Glob("testdata/fuzz/FuzzParse/*")
	t.Logf("%d files, %d fuzz", len(files), len(fz))
	n := 0
	check := func(name string, src []byte) {
		a := show(old.ParseFile(name, src))
		b := show(parse.ParseFile(name, src))
		if a != b {
			n++
			if n < 5 {
				i := 0
				for i < len(a) && i < len(b) && a[i] == b[i] {
					i++
				}
				t.Errorf("%s differs at %d:\nold %.300s\nnew %.300s", name, i, a[max(0, i-100):], b[max(0, i-100):])
			}
		}
	}
	for _, f := range files {
		src, _ := os.ReadFile(f)
		check(f, src)
		// truncations and byte mutations exercise recovery paths
		for k := 1; k < 40; k++ {
			cut := len(src) * k / 40
			check(fmt.Sprintf("%s[:%d]", f, cut), src[:cut])
			m := append([]byte(nil), src...)
			if len(m) > 0 {
				m[(cut*7)%len(m)] = "><(){};*&:#\n\"'"[k%14]
				check(fmt.Sprintf("%s mut%d", f, k), m)
			}
		}
	}
	t.Logf("%d diffs", n)
}
