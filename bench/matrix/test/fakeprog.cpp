// A stand-in for a corpus program in bench/matrix/test/e2e_test.sh: built
// once as an "original" (memmode.h force-included, mock CUDA runtime) and
// once as a "port" (forkpoint.h, -DFAKE_PORT). It "generates" its input,
// reaches the fork point, allocates like a program, prints every timing
// line format bench/matrix/matrix.py knows and a checksum made from its
// arguments. FAKE_BAD=NAME.BACKEND (NAME from argv[0], BACKEND from BENCH_MEM
// or BAM_BACKEND) prints a wrong checksum; FAKE_FAIL=... exits 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <unistd.h>
#ifdef FAKE_PORT
#include <cuda_runtime.h>
#endif

int main(int argc, char** argv)
{
  std::string name = argv[0];
  name = name.substr(name.rfind('/') + 1);
  name = name.substr(0, name.find('.'));
  unsigned long long sum = 1469598103934665603ull;
  for (int i = 1; i < argc; i++)
    for (const char* c = argv[i]; *c; c++)
      sum = (sum ^ (unsigned char)*c) * 1099511628211ull;
  std::vector<float> h(1 << 20, 1.0f); // the "input"
#ifdef FAKE_PORT
  bench_fork::point();
  const char* be = std::getenv("BAM_BACKEND");
  if (const char* g = std::getenv("BAM_GPU_BUDGET")) // what the runtime would get
    std::fprintf(stderr, "fake: BAM_GPU_BUDGET=%s\n", g);
  void* d = nullptr;
  cudaMalloc(&d, 64); // the runtime's own small allocations
  cudaFree(d);
#else
  float* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(float)); // the fork point is here
  cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  float* out = nullptr;
  cudaMalloc(&out, h.size() * sizeof(float));
  const char* be = std::getenv("BENCH_MEM");
#endif
  const std::string me = name + "." + (be ? be : "?");
  if (const char* st = std::getenv("FAKE_STATE")) { // what the fake blocker leaves free now (empty: none runs)
    char buf[64] = "";
    if (FILE* f = std::fopen(st, "r")) {
      if (!std::fgets(buf, sizeof buf, f))
        buf[0] = 0;
      std::fclose(f);
    }
    buf[std::strcspn(buf, "\n")] = 0;
    std::fprintf(stderr, "fake: blocker_free=%s\n", buf);
  }
  if (const char* f = std::getenv("FAKE_FAIL"); f && me == f)
    return 1;
  if (const char* f = std::getenv("FAKE_SLEEP"); f && me == f) // a job that hangs
    sleep(120);
  // kernel time: depends on the backend, so ratios are not all 1
  double ms = 10.0;
  if (be && !std::strcmp(be, "uvm")) ms = 20;
  if (be && !std::strcmp(be, "zerocopy")) ms = 25;
  if (be && !std::strcmp(be, "hbm")) ms = 11;
  if (be && !std::strcmp(be, "host")) ms = 30;
  if (be && !std::strcmp(be, "emu")) ms = 90;
  std::fprintf(stderr, "bfs: 5 levels, %.3f ms\nlevels 5 time %.3f ms\nlevels=5 time=%.3f ms\n", ms, ms, ms);
  std::fprintf(stderr, "iterations=3 time=%.3f ms sweeps=%.3f ms\nrounds=4 time=%.3f ms\n", ms, ms, ms);
  std::fprintf(stderr, "time=%.3f ms (1.0 ms/iter)\n", ms);
  std::fprintf(stderr, "scalar %.3f ms, vector<32> %.3f ms, vector<4> %.3f ms\n", ms, ms, ms);
  std::fprintf(stderr, "rows=1 q1 %.3f ms q2 %.3f ms\n", ms, ms);
  std::fprintf(stderr, "nodes=1 batch=1 dim=128  %.3f ms\n", ms);
  std::fprintf(stderr, "n=1  vector_add %.3f ms  gridstride %.3f ms\n", ms, ms);
  if (const char* b = std::getenv("FAKE_BAD"); b && me == b)
    sum ^= 1;
  std::printf("checksum: %llu\n", sum);
#ifndef FAKE_PORT
  cudaFree(d);
  cudaFree(out);
#endif
  return 0;
}
