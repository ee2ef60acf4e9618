// bam::error, the one exception type of the host library.
//
// Host-only header. Named error.h (not .cuh) because the emu controller,
// which is plain C++, includes it too.
#ifndef BAM_ERROR_H
#define BAM_ERROR_H

#include <stdexcept>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

// Every failure the runtime reports: the message names what failed and how
// to fix it ("BAM_CACHE_BYTES: 'abc' is not a size; use ...").
class error : public std::runtime_error {
public:
  explicit error(const std::string& what) : std::runtime_error(what) {}
};

BAM_NAMESPACE_END // namespace bam

#endif // BAM_ERROR_H
