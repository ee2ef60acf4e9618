// CPU test of bench/matrix/memmode.h against mock/cuda_runtime.h: each
// scenario makes the calls a corpus program makes (the shim's macros are in
// force, as with nvcc -include) and prints the mock's call log on stdout.
// bench/matrix/test/shim_test.sh runs the scenarios in every mode and checks
// the logs.
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x)                                                       \
  do {                                                                 \
    cudaError_t e_ = (x);                                              \
    if (e_ != cudaSuccess) {                                           \
      std::printf("FAILED %s = %d\n", #x, int(e_));                   \
      return 1;                                                        \
    }                                                                  \
  } while (0)

static const size_t MB = size_t(1) << 20;

// vectoradd / bfs: cudaMalloc'd arrays, two filled from the host, one the
// GPU fills; a 4-byte flag; a copy back; frees.
static int copyin()
{
  std::vector<float> h(2 * MB / sizeof(float), 1.0f);
  float *a, *b, *c;
  int* flag;
  CHECK(cudaMalloc(&a, 2 * MB));
  CHECK(cudaMalloc((void**)&b, 2 * MB));
  CHECK(cudaMalloc(&c, 2 * MB));
  CHECK(cudaMalloc(&flag, sizeof(int)));
  CHECK(cudaMemcpy(a, h.data(), 2 * MB, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b + 16, h.data(), MB, cudaMemcpyHostToDevice)); // a copy into the middle of b
  int one = 1;
  CHECK(cudaMemcpy(flag, &one, sizeof one, cudaMemcpyHostToDevice));
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h.data(), c, 2 * MB, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpyAsync(h.data(), c, MB, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaFree(flag));
  CHECK(cudaFree(nullptr));
  return 0;
}

// cc: cudaMallocManaged, filled on the host, first prefetch point after.
static int managed()
{
  unsigned long long* off;
  unsigned* nbr;
  int* changed;
  CHECK(cudaMallocManaged(&off, 4 * MB));
  CHECK(cudaMallocManaged(&nbr, 8 * MB));
  CHECK(cudaMallocManaged(&changed, sizeof(int)));
  std::memset(off, 1, 4 * MB); // the host fills managed memory directly
  std::memset(nbr, 2, 8 * MB);
  *changed = 0;
  mock_call("-- host filled");
  CHECK(cudaGetLastError());
  mock_call("-- first launch checked");
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(off));
  CHECK(cudaFree(nbr));
  CHECK(cudaFree(changed));
  return 0;
}

// pagerank: the in-edge list in cudaHostAlloc mapped memory, freed with
// cudaFreeHost; device arrays next to it.
static int hostalloc()
{
  unsigned* src;
  float* rank;
  CHECK(cudaHostAlloc((void**)&src, 4 * MB, cudaHostAllocMapped));
  std::memset(src, 3, 4 * MB);
  CHECK(cudaMalloc(&rank, 2 * MB));
  std::vector<float> h(2 * MB / sizeof(float));
  CHECK(cudaMemcpy(rank, h.data(), 2 * MB, cudaMemcpyHostToDevice));
  void* dptr = nullptr;
  CHECK(cudaHostGetDevicePointer(&dptr, src, 0));
  mock_call("-- device pointer %s host pointer", dptr == (void*)src ? "==" : "!=");
  CHECK(cudaFreeHost(src));
  CHECK(cudaFree(rank));
  return 0;
}

int main(int argc, char** argv)
{
  if (argc != 2)
    return 2;
  int rc = 2;
  if (!std::strcmp(argv[1], "copyin"))
    rc = copyin();
  else if (!std::strcmp(argv[1], "managed"))
    rc = managed();
  else if (!std::strcmp(argv[1], "hostalloc"))
    rc = hostalloc();
  std::fputs(mock_log().c_str(), stdout);
  std::printf("-- leaked %zu\n", mock_mem().size());
  return rc;
}
