// First run of a storage backend on a GPU machine (make nvme-smoke):
//
//   BAM_BACKEND=nvme BAM_NVME_DEVICE=/dev/bam_nvme0 build/nvme_smoke
//   BAM_BACKEND=emu build/nvme_smoke           # the same through the software controller
//
// An array made from host data is read by every GPU thread through the
// cache and checked element by element; the kernel then rewrites it,
// the cache is flushed and dropped, and the data read back from storage
// (copy_to_host, and a second kernel through an empty cache) is checked
// again. Exit status 0 and "nvme_smoke: ok" when all matched; a bam::error
// (no device node, permissions, ...) is printed as is.
#include <bam/bam.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__host__ __device__ uint32_t value(uint64_t i, uint32_t round) { return uint32_t(i * 2654435761u) ^ (round * 0x9e3779b9u); }

// Reads every element, counts mismatches, and writes the next round's value.
__global__ void check_and_rewrite(bam::array<uint32_t> a, uint64_t n, uint32_t round, unsigned long long* bad)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    if (a[i] != value(i, round))
      atomicAdd(bad, 1ull);
    a[i] = value(i, round + 1);
  }
}

__global__ void check_only(bam::array<uint32_t> a, uint64_t n, uint32_t round, unsigned long long* bad)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    if (a[i] != value(i, round))
      atomicAdd(bad, 1ull);
}

} // namespace

int main(int argc, char** argv)
{
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (uint64_t(16) << 20); // elements (64 MiB)
  try {
    bam::runtime rt;
    std::vector<uint32_t> h(n);
    for (uint64_t i = 0; i < n; i++)
      h[i] = value(i, 0);
    auto a = rt.array_from_host(h.data(), n);
    unsigned long long* bad = nullptr;
    if (cudaMalloc(&bad, sizeof *bad) != cudaSuccess)
      return std::printf("nvme_smoke: cudaMalloc failed\n"), 1;
    cudaMemset(bad, 0, sizeof *bad);
    check_and_rewrite<<<1024, 256>>>(a, n, 0, bad);
    rt.check();
    rt.drop_cache(); // flush the rewritten lines to storage, start cold
    check_only<<<1024, 256>>>(a, n, 1, bad);
    rt.check();
    unsigned long long nbad = 0;
    cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost);
    std::vector<uint32_t> back(n);
    rt.copy_to_host(a, back.data(), n);
    uint64_t host_bad = 0;
    for (uint64_t i = 0; i < n; i++)
      host_bad += back[i] != value(i, 1);
    rt.print_stats(stdout);
    std::printf("nvme_smoke: %llu elements, %llu wrong on the GPU, %llu wrong read back on the host\n",
                (unsigned long long)n, nbad, (unsigned long long)host_bad);
    if (nbad || host_bad)
      return 1;
    std::printf("nvme_smoke: ok\n");
    return 0;
  } catch (const bam::error& e) {
    std::printf("bam::error: %s\n", e.what());
    return 1;
  }
}
