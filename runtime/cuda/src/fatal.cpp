// An uncaught bam::error ends the program with its message and exit status
// 1, instead of "terminate called after throwing an instance of
// 'bam::error'" and an abort (status 134). Installed by default_runtime(),
// which generated code uses: a storage error that check() or copy_to_host()
// reports (permanent, or still failing after the queue's retries) then
// stops a ported program cleanly at the first host synchronization that
// checks, before it prints results computed from zero-filled lines.
#include "fatal.h"

#include <bam/error.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

BAM_NAMESPACE_BEGIN
namespace detail {
namespace {

std::terminate_handler previous = nullptr;

[[noreturn]] void on_terminate()
{
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const bam::error& err) {
      std::fprintf(stderr, "%s\n", err.what());
      std::fflush(stderr);
      std::_Exit(1);
    } catch (...) {
    }
  }
  if (previous)
    previous();
  std::abort();
}

} // namespace

void exit_on_uncaught_error()
{
  static std::once_flag once;
  std::call_once(once, [] { previous = std::set_terminate(on_terminate); });
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam
