// EXPECT(cond, printf-args...) for the runtime's small CPU tests: prints the
// place and message of a failed check and counts it in test_failures; the
// test's main reports the count and exits non-zero when it is not 0.
#pragma once

#include <cstdio>

inline int test_failures = 0;

#define EXPECT(cond, ...)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                 \
      std::printf(__VA_ARGS__);                                                                                        \
      std::printf("\n");                                                                                               \
      ++test_failures;                                                                                                 \
    }                                                                                                                  \
  } while (0)
