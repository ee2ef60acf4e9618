package port

// Diagnostic codes of `bamgen port`. They are stable: tools and golden tests
// match on them, so a code is never reused for another meaning.
//
// PORT00x: choosing arrays. PORT01x: kernel-side uses bamgen refuses to
// rewrite (the array is then left as it was). PORT03x: host side.
// PORT05x: bam::array_ref (--ref), all notes: a refused ref only costs
// speed, the array is ported either way. PORT09x: notes about what was done.
const (
	CodeUnknownArray    = "PORT001" // --array / config names no pointer parameter of any kernel
	CodeUnknownKernel   = "PORT002" // --array KERNEL:NAME names no kernel
	CodeNotPointer      = "PORT003" // the named parameter is not a single-level pointer to an element type
	CodeBadCount        = "PORT004" // --count / config count names nothing that was chosen
	CodeAddressTaken    = "PORT010" // &p, &p[i] or a reference to an element is stored or passed on
	CodePointerCompared = "PORT011" // the pointer itself is compared or tested
	CodePointerCast     = "PORT012" // the pointer is cast to another type
	CodeInlineAsm       = "PORT013" // the pointer is an inline-asm operand
	CodeMacroUse        = "PORT014" // the pointer is used inside a macro expansion
	CodeUnknownCall     = "PORT015" // the pointer is passed to a function bamgen cannot port
	CodePointerArith    = "PORT016" // pointer arithmetic is stored, or the pointer is reassigned
	CodeUnparsedUse     = "PORT017" // the pointer appears in code the parser did not understand
	CodeElementMember   = "PORT018" // a member of an element is written (p[i].x = v)
	CodeOtherUse        = "PORT019" // any other use bamgen does not understand
	CodeHelperConflict  = "PORT020" // a __device__ helper would need two different ports
	CodeHostArgument    = "PORT030" // the launch argument is not a variable bamgen can trace
	CodeNoCount         = "PORT031" // the element count cannot be derived
	CodeHostUse         = "PORT032" // the device pointer has a host use bamgen does not rewrite
	CodeHostScope       = "PORT033" // the allocation does not enclose every use
	CodeNoElemType      = "PORT034" // the host variable's element type is unknown
	CodeKernelRef       = "PORT035" // the kernel is passed to a cudaLaunch* call bamgen cannot read as its launch
	CodeHiddenUse       = "PORT036" // the kernel or buffer is used in a preprocessor branch the parser does not take
	CodeArgsArray       = "PORT037" // a void** launch's argument array is not a local brace-initialised array passed only to launches
	CodeArgsEntry       = "PORT038" // the argument array entry for a ported parameter is not &VAR of a local variable
	CodeArgsWrapped     = "PORT039" // a host-visible buffer is passed through an argument array (its array is made at the launch)
	CodeProgramSite     = "PORT040" // whole program: a site of the kernel is in a file bamgen does not write, or two files define it
	CodeRefAdded        = "PORT050" // note: a loop reads arrays through bam::array_ref
	CodeRefWritable     = "PORT051" // note: no ref: the scanned array is not read-only
	CodeRefSync         = "PORT052" // note: no ref: a barrier or warp intrinsic in the loop that the refs cannot drop() before
	CodeRefIndirect     = "PORT053" // note: no ref: read inside a lambda, or passed to a helper in the loop
	CodeRefPileUp       = "PORT054" // note: no ref: a second pinned line of the same array per thread
	CodeRefScope        = "PORT055" // note: no ref: bamgen cannot open a block around the loop, or the name is taken
	CodeRefStride       = "PORT056" // note: no ref: the loop's step is not a small constant
	CodeRefTileView     = "PORT057" // note: no refs in the walk odt tiles: it reads the edge array through its tile view
	CodeArrayPorted     = "PORT090" // note: which array was ported and why
	CodeAlreadyPorted   = "PORT091" // note: the parameter already is a bam::array
	CodeNotChosen       = "PORT092" // note: --auto does not choose a parameter that can never be a bam::array
	CodeModesCollapsed  = "PORT093" // note: a buffer allocated per memory mode became one bam::array, and how each mode makes it
	CodeSingleVersion   = "PORT094" // note: a ported kernel is compiled once (no plain-pointer version), and why
	CodeNoDirectClone   = "PORT095" // note: a launch an access-pattern rewrite changes cannot choose the kernel's direct clone, and why
	CodeWrapperInlined  = "PORT096" // note: a call of the program's own wrapper of a CUDA memory call was inlined so that the port rewrites it
)
