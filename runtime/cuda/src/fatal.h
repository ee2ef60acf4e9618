// Uncaught bam::error: message and exit status 1 (src/fatal.cpp).
#ifndef BAM_SRC_FATAL_H
#define BAM_SRC_FATAL_H

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// Installs, once, a std::terminate handler that prints an uncaught
// bam::error's message to stderr and exits with status 1; any other
// exception goes to the handler that was installed before.
void exit_on_uncaught_error();

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_FATAL_H
