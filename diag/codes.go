package diag

// Code describes one stable diagnostic code for reference pages and
// machine-readable reports (SARIF rules). The packages that report a code
// own its meaning; this table only names it, and a test checks that every
// code reported anywhere in bamgen is listed here and documented in
// docs/diagnostics.md.
type Code struct {
	ID    string
	Level Severity // the usual severity; a report may differ
	Title string   // one line: what the code means
}

// DocsURL is the reference page with one section per code; HelpURI(code)
// links to the code's section.
const DocsURL = "https://github.com/bamgen/bamgen/blob/main/docs/diagnostics.md"

// HelpURI returns the address of code's section in docs/diagnostics.md
// (GitHub's heading anchors: the code in lower case).
func HelpURI(code string) string {
	b := []byte(code)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return DocsURL + "#" + string(b)
}

// LookupCode returns the table entry of id.
func LookupCode(id string) (Code, bool) {
	for _, c := range Codes {
		if c.ID == id {
			return c, true
		}
	}
	return Code{}, false
}

// Codes lists every diagnostic code bamgen reports, in order.
var Codes = []Code{
	// Reading inputs (cmd/bamgen).
	{"IO001", Error, "the input file does not exist"},
	{"IO002", Error, "the input file is not readable (permission denied)"},
	{"IO003", Error, "the input file could not be read"},
	{"IO004", Error, "the input is a directory with no CUDA source or header under it"},
	{"IO005", Error, "the input is not a regular file"},
	{"IO006", Error, "the input is larger than bamgen reads"},
	{"IO007", Error, "the compilation database is not one bamgen can read"},

	// The parser (parse/): regions it kept as written.
	{"PARSE001", Error, "unterminated /* comment"},
	{"PARSE002", Error, "unterminated string, character or raw string literal"},
	{"PARSE003", Error, "unbalanced braces"},
	{"PARSE004", Error, "invalid character in source"},
	{"PARSE005", Error, "invalid UTF-8 in source"},
	{"PARSE006", Warning, "unbalanced preprocessor conditional (#if/#else/#endif)"},
	{"PARSE007", Error, "nesting deeper than the parser follows"},
	{"PARSE010", Error, "declaration not understood; kept as written"},
	{"PARSE011", Error, "statement not understood; kept as written"},
	{"PARSE012", Error, "expression not understood, or a closing ')' or '}' is missing"},
	{"PARSE013", Warning, "expected ';'"},
	{"PARSE014", Error, "parameter not understood"},
	{"PARSE099", Error, "internal parser error"},

	// bamgen port (transform/): choosing arrays.
	{"PORT001", Error, "--array or the config names no pointer parameter of any kernel"},
	{"PORT002", Error, "--array KERNEL:NAME names no kernel"},
	{"PORT003", Error, "the named parameter is not a single-level pointer to an element type"},
	{"PORT004", Error, "--count or a config count names no chosen array"},
	// Kernel-side uses bamgen refuses to rewrite (the array is left as it was).
	{"PORT010", Warning, "the address of the array or of an element is stored or passed on"},
	{"PORT011", Warning, "the pointer itself is compared or tested"},
	{"PORT012", Warning, "the pointer is cast to another type"},
	{"PORT013", Warning, "the pointer is an inline-asm operand"},
	{"PORT014", Warning, "the pointer is used inside a macro expansion"},
	{"PORT015", Warning, "the pointer is passed to a function bamgen cannot port"},
	{"PORT016", Warning, "pointer arithmetic is stored, or the pointer is reassigned"},
	{"PORT017", Warning, "the pointer appears in code the parser did not understand"},
	{"PORT018", Warning, "a member of an element is written"},
	{"PORT019", Warning, "a use bamgen does not understand"},
	{"PORT020", Warning, "a __device__ helper would need two different ports"},
	// Host side.
	{"PORT030", Warning, "the launch argument is not a variable bamgen can trace"},
	{"PORT031", Warning, "the element count cannot be derived"},
	{"PORT032", Warning, "the device pointer has a host use bamgen does not rewrite"},
	{"PORT033", Warning, "the allocation does not enclose every use"},
	{"PORT034", Warning, "the host variable's element type is unknown"},
	{"PORT035", Warning, "the kernel is passed to a cudaLaunch* call bamgen cannot read as its launch"},
	{"PORT036", Warning, "the kernel or buffer is used in a preprocessor branch the parser does not take"},
	{"PORT037", Warning, "a void** launch's argument array is not a local brace-initialised array passed only to launches"},
	{"PORT038", Warning, "the argument array entry for a ported parameter is not &VAR of a local variable"},
	{"PORT039", Warning, "a host-visible buffer is passed through an argument array"},
	{"PORT040", Warning, "a site of the kernel is in a file bamgen does not write, or two files define it"},
	// bam::array_ref (--ref): notes, a refused ref only costs speed.
	{"PORT050", Note, "a loop reads arrays through bam::array_ref"},
	{"PORT051", Note, "no ref: the scanned array is not read-only"},
	{"PORT052", Note, "no ref: a wait in the loop that the refs cannot drop() before"},
	{"PORT053", Note, "no ref: read inside a lambda, or passed to a helper in the loop"},
	{"PORT054", Note, "no ref: a second pinned line of the same array per thread"},
	{"PORT055", Note, "no ref: bamgen cannot open a block around the loop, or the name is taken"},
	{"PORT056", Note, "no ref: the loop's step is not a small constant"},
	{"PORT057", Note, "no refs in the walk odt tiles: it reads the edge array through its tile view"},
	// What was done.
	{"PORT090", Note, "an array was ported, and why"},
	{"PORT091", Note, "the parameter already is a bam::array"},
	{"PORT092", Note, "--auto does not choose a parameter that can never be a bam::array (its type, a library or a cast needs the raw memory), and says why"},
	{"PORT093", Note, "a buffer allocated per memory mode became one bam::array"},
	{"PORT094", Note, "a ported kernel is compiled once, without its plain-pointer version, and why"},
	{"PORT095", Note, "a launch that an access-pattern rewrite (odt) changes cannot choose the kernel's direct clone, so it runs the rewritten kernel also on data in GPU memory, and why"},
	{"PORT096", Note, "a call of the program's own wrapper of a CUDA memory call (cudaMalloc, cudaMemcpy, cudaMemset, cudaFree) was inlined so that the port rewrites it"},

	// Access-pattern rewrites (transform/opt, --opt).
	{"OPT000", Note, "a rewrite was chosen or applied, and why"},
	{"OPT001", Warning, "no single global thread-id variable"},
	{"OPT002", Warning, "a barrier, shared memory, inline asm, cooperative groups or a spin-wait blocks remapping"},
	{"OPT003", Warning, "warp intrinsics forbid lane remapping"},
	{"OPT004", Warning, "threadIdx/blockIdx used outside the id variables"},
	{"OPT005", Warning, "transpose/coarsen need a warp-per-item kernel"},
	{"OPT006", Warning, "no ported array gives the line geometry"},
	{"OPT007", Warning, "odt: no CSR neighbour walk found"},
	{"OPT008", Warning, "odt: per-vertex writes cannot be combined across tiles"},
	{"OPT009", Error, "an option value is out of range"},
	{"OPT010", Warning, "the kernel has no body in this file"},
}
