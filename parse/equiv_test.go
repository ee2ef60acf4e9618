package parse

// TestEquivalence pins the parser's complete output: for every CUDA/C++
// source of the repository, truncations and one-byte mutations of each, and
// seeded random token soups, it hashes everything ParseFile, Lex and
// LexDiags return (every exported field of every node reached from the
// File, Spans, TypeRef texts, scopes and symbols, Tokens, Diags, Macros,
// pointer sharing and nil-versus-empty slices) and compares the hash with
// testdata/equiv.golden. Performance work must leave it green; a change
// that is meant to alter parse results regenerates the golden with
//
//	go test -run TestEquivalence -equiv.update ./parse
//
// and says so in its commit. Entries are keyed by a hash of the input, so
// a source file edited later merely drops out (its count is logged).
// -equiv.dump DIR writes each input and its serialization to DIR, to diff
// two versions of the parser on the inputs whose hashes differ.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var (
	equivUpdate = flag.Bool("equiv.update", false, "rewrite testdata/equiv.golden from the current parser")
	equivDump   = flag.String("equiv.dump", "", "directory to write each equivalence input and its serialization to")
)

const equivGolden = "testdata/equiv.golden"

type equivInput struct {
	name string // where it comes from, for messages
	src  []byte
}

func TestEquivalence(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	inputs := equivInputs(t)
	want := map[string]string{}
	if !*equivUpdate {
		b, err := os.ReadFile(equivGolden)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok {
				want[k] = v
			}
		}
	}
	got := map[string]string{}
	checked, missing, failed := 0, 0, 0
	for i, in := range inputs {
		key := shortHash(in.src)
		sum := equivHash(in, *equivDump, i)
		got[key] = sum
		if *equivUpdate {
			continue
		}
		w, ok := want[key]
		if !ok {
			missing++
			continue
		}
		checked++
		if w != sum {
			failed++
			if failed <= 20 {
				t.Errorf("%s (input %d, key %s): output hash %s, golden %s", in.name, i, key, sum, w)
			}
		}
	}
	if *equivUpdate {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s\n", k, got[k])
		}
		if err := os.WriteFile(equivGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d entries", len(keys))
		return
	}
	t.Logf("%d inputs checked, %d not in the golden (sources edited since it was made), %d differ", checked, missing, failed)
	if checked < len(want)/2 {
		t.Errorf("only %d of %d golden entries were checked: regenerate %s from a trusted parser", checked, len(want), equivGolden)
	}
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// equivHash serialises everything the package returns for in.src.
func equivHash(in equivInput, dumpDir string, i int) string {
	h := sha256.New()
	var w io.Writer = h
	var dump *bytes.Buffer
	if dumpDir != "" {
		dump = &bytes.Buffer{}
		w = io.MultiWriter(h, dump)
	}
	bw := bufio.NewWriter(w)
	s := &serializer{w: bw, seen: map[ptrKey]int{}}
	s.value(reflect.ValueOf(ParseFile("equiv.cu", in.src)))
	bw.WriteString("\nLEX ")
	s.value(reflect.ValueOf(Lex(in.src)))
	toks, diags := LexDiags(in.src)
	bw.WriteString("\nLEXDIAGS ")
	s.value(reflect.ValueOf(toks))
	s.value(reflect.ValueOf(diags))
	bw.Flush()
	if dump != nil {
		base := filepath.Join(dumpDir, fmt.Sprintf("%05d", i))
		os.MkdirAll(dumpDir, 0o755)
		os.WriteFile(base+".in", in.src, 0o644)
		os.WriteFile(base+".out", dump.Bytes(), 0o644)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// serializer writes a value's exported contents one field per line;
// pointers are numbered on first sight so sharing is part of the output.
type serializer struct {
	w    *bufio.Writer
	seen map[ptrKey]int
}

// ptrKey tells a struct from its first field at the same address.
type ptrKey struct {
	p uintptr
	t reflect.Type
}

func (s *serializer) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			s.w.WriteString("nil")
			return
		}
		key := ptrKey{v.Pointer(), v.Type()}
		if n, ok := s.seen[key]; ok {
			fmt.Fprintf(s.w, "@%d", n)
			return
		}
		n := len(s.seen)
		s.seen[key] = n
		fmt.Fprintf(s.w, "&%d", n)
		s.value(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			s.w.WriteString("nilif")
			return
		}
		s.w.WriteString(v.Elem().Type().String())
		s.w.WriteByte(':')
		s.value(v.Elem())
	case reflect.Struct:
		t := v.Type()
		s.w.WriteString("{")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			s.w.WriteString("\n")
			s.w.WriteString(f.Name)
			s.w.WriteByte('=')
			s.value(v.Field(i))
		}
		s.w.WriteString("}")
	case reflect.Slice:
		if v.IsNil() {
			s.w.WriteString("N")
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s.w.WriteString(strconv.Quote(string(v.Bytes())))
			return
		}
		fmt.Fprintf(s.w, "[%d", v.Len())
		for i := 0; i < v.Len(); i++ {
			s.w.WriteByte(' ')
			s.value(v.Index(i))
		}
		s.w.WriteString("]")
	case reflect.String:
		s.w.WriteString(strconv.Quote(v.String()))
	case reflect.Bool:
		s.w.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s.w.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s.w.WriteString(strconv.FormatUint(v.Uint(), 10))
	default:
		panic("equiv: unhandled kind " + v.Kind().String() + " in " + v.Type().String())
	}
}

// equivInputs returns the repository's sources, 30 truncations and 30
// one-byte mutations of each, 3,000 token soups and 1,000 line soups, all deterministic.
func equivInputs(t *testing.T) []equivInput {
	var files []string
	filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if n := d.Name(); path != ".." && (strings.HasPrefix(n, ".") || n == "build" || n == "scratch") {
				return filepath.SkipDir
			}
			return nil
		}
		if isCUDASource(path) {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	if len(files) < 10 {
		t.Fatalf("only %d sources found", len(files))
	}
	mutBytes := []byte("\r\\%/#'\"<>{}()[];:,.*&-+=!?~^|@ \n\tx0\xc3\x00")
	var in []equivInput
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, equivInput{path, src})
		if len(src) == 0 {
			continue
		}
		r := rand.New(rand.NewSource(int64(len(src))))
		for k := 0; k < 30; k++ {
			n := r.Intn(len(src))
			in = append(in, equivInput{fmt.Sprintf("%s[:%d]", path, n), src[:n]})
		}
		for k := 0; k < 30; k++ {
			m := append([]byte(nil), src...)
			i := r.Intn(len(m))
			m[i] = mutBytes[r.Intn(len(mutBytes))]
			in = append(in, equivInput{fmt.Sprintf("%s[%d]=%q", path, i, m[i]), m})
		}
	}
	r := rand.New(rand.NewSource(42))
	for k := 0; k < 3000; k++ {
		in = append(in, equivInput{fmt.Sprintf("soup %d", k), tokenSoup(r, k%2 == 1)})
	}
	// Line soups: lines of the sources shuffled into a kernel body, so that
	// statements meet unfamiliar names and half-finished constructs.
	var lines []string
	for _, path := range files {
		src, _ := os.ReadFile(path)
		lines = append(lines, strings.Split(string(src), "\n")...)
	}
	for k := 0; k < 1000; k++ {
		var b strings.Builder
		if k%2 == 0 {
			b.WriteString("__global__ void k(float *a, int n) {\n")
		}
		for n := 1 + r.Intn(12); n > 0; n-- {
			b.WriteString(lines[r.Intn(len(lines))])
			b.WriteByte('\n')
		}
		in = append(in, equivInput{fmt.Sprintf("line soup %d", k), []byte(b.String())})
	}
	return in
}

// soupWords are the pieces token soups are made of: the grammar's
// keywords and punctuators, CUDA words, digraphs, split-angle cases,
// macro-like and type-like names, literals of every kind, trivia.
var soupWords = strings.Fields(`
	int float double char void unsigned long short signed const volatile auto bool size_t
	struct class union enum namespace template typename using typedef static extern inline
	constexpr if else for while do switch case default break continue return goto
	sizeof alignof new delete this operator public private protected virtual friend
	static_cast reinterpret_cast const_cast dynamic_cast decltype noexcept throw try catch
	__global__ __device__ __host__ __shared__ __constant__ __forceinline__ __restrict__
	__launch_bounds__ __syncthreads threadIdx blockIdx blockDim gridDim x y z
	a b c d i j k n p q s t T U V std vector array cudaMalloc cudaMemcpy
	CUDA_CHECK MAX API DEVICE kernel f g h offsetof _Generic co_await __attribute__
	0 1 42 0x1F 1.5f 2e10 1'000 'c' L'x' "str" u8"s" R"(raw)" .5
	+ - * / % ^ & | ~ ! = < > += -= *= /= %= ^= &= |= << >> >>= <<= == != <= >= && || ++ --
	, ; : :: ? . -> .* ->* ( ) [ ] { } ... # ## <<< >>> <: :> <% %> %: [[ ]]
	\ @ $
`)

var soupTrivia = []string{" ", "\n", "\t", "/* c */", "// c\n", "\\\n", "\r\n", "\n#define CHECK(x) x\n",
	"\n#if 0\nint z;\n#endif\n", "\n#define API __device__\n", "\n#include <x.h>\n", "\n#define N 4\n"}

var soupHeads = []string{"", "typedef int T;\n", "template <class T> struct V;\n", "struct S { int m; };\n",
	"#define CUDA_CHECK(x) x\n", "using U = float;\n"}

func tokenSoup(r *rand.Rand, inKernel bool) []byte {
	var b bytes.Buffer
	b.WriteString(soupHeads[r.Intn(len(soupHeads))])
	if inKernel {
		b.WriteString("__global__ void k(float *a, int n) {\n")
	}
	for n := 1 + r.Intn(40); n > 0; n-- {
		if r.Intn(6) == 0 {
			b.WriteString(soupTrivia[r.Intn(len(soupTrivia))])
		} else {
			b.WriteString(soupWords[r.Intn(len(soupWords))])
			if r.Intn(3) > 0 {
				b.WriteByte(' ')
			}
		}
	}
	if inKernel && r.Intn(4) > 0 {
		b.WriteString("\n}\n")
	}
	return b.Bytes()
}
