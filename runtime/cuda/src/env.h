// Reading BAM_* variables: the helpers config.cpp and the backend registry
// (backends.h) parse values with. Each throws bam::error naming the
// variable, the value and what it accepts. Internal to libbam.
#ifndef BAM_SRC_ENV_H
#define BAM_SRC_ENV_H

#include <bam/version.h>
#include <string>

BAM_NAMESPACE_BEGIN
namespace detail {

// The variable's value, or nullptr when it is unset or empty.
const char* getenv_nonempty(const char* name);
// A decimal integer in [lo, hi].
long parse_int(const char* text, const char* what, long lo, long hi);
// A finite number in [lo, hi] ("1e-3", "2.5").
double parse_double(const char* text, const char* what, double lo, double hi);
// "12.5" rather than std::to_string's "12.500000".
std::string format_number(double v);

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_ENV_H
