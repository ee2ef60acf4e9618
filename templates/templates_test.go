package templates

import (
	"strings"
	"testing"
)

func TestTemplatesRender(t *testing.T) {
	a := Array{RT: "rt", Bam: "d_bam", Elem: "float", Src: "h", Count: "n", Path: "f.bin", Offset: "0"}
	for _, name := range Names() {
		var data any = a
		switch name {
		case "wrap_begin", "wrap_end":
			data = Wrap{Arrays: []Array{a}}
		case "refill", "fill_create":
			data = Fill{Array: a, Bytes: "n * 4", Value: "0xff"}
		case "patch":
			data = Patch{Array: a, Op: "memset", Offset: "3", Bytes: "4"}
		case "drop_cache":
			data = DropCache{RT: "rt", Note: "n"}
		case "stage":
			data = Stage{Array: a, Free: "cudaFree"}
		case "copy", "swap":
			data = Copy{Dst: "a_bam", Src: "b_bam"}
		case "check_launch":
			data = Check{RT: "rt", Kernel: "k", Block: "256"}
		case "copy_bytes":
			data = D2D{RT: "rt", Dst: "a_bam", DstFirst: "0", Src: "b_bam", SrcFirst: "4", Bytes: "16"}
		case "plan_arrays":
			data = Plan{RT: "rt", Sizes: []string{"n * 4", "m"}}
		case "runtime_setup", "check_sync":
			data = Runtime{RT: "rt"}
		case "removed":
			data = Note{Note: "x"}
		case "include", "stats":
			data = nil
		}
		out := Render(name, data)
		if strings.Contains(out, "<no value>") {
			t.Errorf("%s: %q", name, out)
		}
		if name != "include" && strings.Contains(out, "\n") {
			t.Errorf("%s renders more than one line (edits must keep line counts): %q", name, out)
		}
	}
}
