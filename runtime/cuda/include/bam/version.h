// The runtime's ABI version and the namespace it versions.
//
// Every declaration of the runtime lives in bam::BAM_ABI_NAMESPACE, an
// inline namespace: code writes bam::array as before, but the symbols it
// links against carry the version (bam::v1::runtime::...). Headers of one
// ABI with a libbam.a of another then fail at link time, naming the
// missing symbol, instead of running with mismatched layouts.
//
// Raise BAM_ABI_VERSION when a change to a public type's layout or to an
// out-of-line function's signature makes old objects incompatible. bamgen
// reads the number from this file (`bamgen version`).
#ifndef BAM_VERSION_H
#define BAM_VERSION_H

#define BAM_ABI_VERSION 1

#define BAM_ABI_CAT_(a, b) a##b
#define BAM_ABI_CAT(a, b) BAM_ABI_CAT_(a, b)
#define BAM_ABI_NAMESPACE BAM_ABI_CAT(v, BAM_ABI_VERSION)

// Open and close namespace bam with its versioned inline namespace. Every
// runtime header and source uses these instead of `namespace bam {`.
#define BAM_NAMESPACE_BEGIN \
  namespace bam {           \
  inline namespace BAM_ABI_NAMESPACE {
#define BAM_NAMESPACE_END \
  }                       \
  }

#endif // BAM_VERSION_H
