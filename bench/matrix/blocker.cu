// bench/matrix/blocker.cu: hold GPU memory so that only a given amount stays
// free for the programs started after it (a GPU-memory budget for programs
// that cannot be told one), or report the free memory a new process sees.
//
//   blocker --query          print "free_bytes=N total_bytes=N" and exit
//   blocker LEAVE_MIB        cudaMalloc all but LEAVE_MIB of the free memory,
//                            print "blocker: ready held_bytes=N free_bytes=N",
//                            then hold it until stdin closes or SIGTERM/SIGINT
//
// cudaMalloc commits physical memory, so the held bytes are really gone for
// other processes (each of which still creates its own context in what is
// left). Exit 0 after releasing; 1 on a CUDA error; 2 on bad usage.
#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

static volatile sig_atomic_t stop = 0;
static void on_signal(int) { stop = 1; }

static int cuda_fail(const char* what, cudaError_t e)
{
  std::fprintf(stderr, "blocker: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

int main(int argc, char** argv)
{
  if (argc != 2) {
    std::fprintf(stderr, "usage: blocker --query | blocker LEAVE_MIB\n");
    return 2;
  }
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess)
    return cuda_fail("cudaMemGetInfo", e);
  if (std::strcmp(argv[1], "--query") == 0) {
    std::printf("free_bytes=%zu total_bytes=%zu\n", free_b, total_b);
    return 0;
  }
  char* end = nullptr;
  const unsigned long long leave_mib = std::strtoull(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0') {
    std::fprintf(stderr, "blocker: LEAVE_MIB=%s: expected a number of MiB\n", argv[1]);
    return 2;
  }
  const size_t leave = size_t(leave_mib) << 20;
  size_t want = free_b > leave ? free_b - leave : 0;
  // In chunks: one huge cudaMalloc can fail where several smaller ones fit.
  std::vector<void*> held;
  size_t held_b = 0;
  size_t chunk = size_t(1) << 30;
  while (want > 0 && chunk >= (size_t(2) << 20)) {
    const size_t n = want < chunk ? want : chunk;
    void* p = nullptr;
    e = cudaMalloc(&p, n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      chunk /= 2;
      continue;
    }
    held.push_back(p);
    held_b += n;
    want -= n;
  }
  e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess)
    return cuda_fail("cudaMemGetInfo", e);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::printf("blocker: ready held_bytes=%zu free_bytes=%zu\n", held_b, free_b);
  std::fflush(stdout);
  // Hold until stdin closes (the runner's pipe) or a signal.
  char buf[64];
  while (!stop) {
    const ssize_t r = read(0, buf, sizeof buf);
    if (r == 0 || (r < 0 && !stop))
      break;
  }
  for (void* p : held)
    cudaFree(p);
  return 0;
}
