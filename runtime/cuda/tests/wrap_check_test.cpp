// runtime::array_wrap's pointer check (src/wrap_check.h) on the CPU: which
// memory kinds cudaPointerGetAttributes can report are wrapped in place,
// and the message for the ones that are refused.
#include "../src/wrap_check.h"
#include "expect.h"

#include <cstdio>
#include <string>

namespace {

using bam::detail::check_wrap;
using bam::detail::wrap_memory;
using bam::detail::wrap_pointer;

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

int dev_word, host_word;

void pageable_refused()
{
  wrap_pointer p; // cudaMemoryTypeUnregistered: malloc, new, the stack
  p.host_pointer = &host_word;
  auto r = check_wrap(p, 0, "array_wrap(\"labels\")");
  EXPECT(r.direct == nullptr, "pageable memory was accepted");
  EXPECT(has(r.why, "array_wrap(\"labels\")") && has(r.why, "pageable") && has(r.why, "cudaMallocManaged"),
         "message: %s", r.why.c_str());
}

void mapped_pinned_uses_device_view()
{
  wrap_pointer p;
  p.kind = wrap_memory::host;
  p.host_pointer = &host_word;
  p.device_pointer = &dev_word; // a device view that differs from the host address
  auto r = check_wrap(p, 0, "w");
  EXPECT(r.direct == &dev_word, "kernels must get the device view");
  EXPECT(r.host == &host_word, "range copies must use the host address");
  EXPECT(r.why.empty(), "why: %s", r.why.c_str());

  p.device_pointer = nullptr; // pinned, not mapped
  r = check_wrap(p, 0, "w");
  EXPECT(r.direct == nullptr && has(r.why, "no device mapping"), "unmapped pinned: %s", r.why.c_str());
}

void managed_and_device()
{
  wrap_pointer p;
  p.kind = wrap_memory::managed;
  p.device_pointer = &dev_word;
  p.host_pointer = &dev_word;
  auto r = check_wrap(p, 1, "w");
  EXPECT(r.direct == &dev_word && r.host == nullptr, "managed: direct=%p host=%p", r.direct, r.host);

  p.kind = wrap_memory::device;
  p.host_pointer = nullptr;
  p.device = 1;
  r = check_wrap(p, 1, "w");
  EXPECT(r.direct == &dev_word, "device memory of the current GPU was refused: %s", r.why.c_str());
  r = check_wrap(p, 0, "w");
  EXPECT(r.direct == nullptr && has(r.why, "GPU 1") && has(r.why, "current GPU 0"), "other GPU: %s", r.why.c_str());
}
} // namespace

int main()
{
  pageable_refused();
  mapped_pinned_uses_device_view();
  managed_and_device();
  if (test_failures != 0) {
    std::printf("wrap_check_test: %d failure(s)\n", test_failures);
    return 1;
  }
  std::printf("wrap_check_test: ok\n");
  return 0;
}
