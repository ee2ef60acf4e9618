// CUB-style block primitives, cooperative groups and a templated host driver.
#include <cstdint>
#include <cstdio>
#include <vector>
#include <numeric>
#include <algorithm>
#include <chrono>
#include <memory>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

#define HD __host__ __device__
#define FORCE_INLINE __forceinline__
#define CHECK_CUDA(expr)                                                    \
  do {                                                                      \
    cudaError_t _e = (expr);                                                \
    if (_e != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,               \
                   cudaGetErrorString(_e));                                 \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

namespace mini_cub {

template <typename T>
struct Sum {
  HD FORCE_INLINE T operator()(const T &a, const T &b) const { return a + b; }
};

template <typename T, int BLOCK_THREADS>
class BlockReduce {
 public:
  static constexpr int WARPS = BLOCK_THREADS / 32;
  struct TempStorage {
    T warp_aggregates[WARPS];
  };

  __device__ explicit BlockReduce(TempStorage &storage) : temp_(storage) {}

  template <typename Op>
  __device__ T Reduce(T input, Op op) {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      T other = __shfl_down_sync(0xffffffffu, input, offset);
      input = op(input, other);
    }
    if (lane == 0) temp_.warp_aggregates[warp] = input;
    __syncthreads();
    T total = threadIdx.x < WARPS ? temp_.warp_aggregates[lane] : T();
    if (warp == 0) {
      for (int i = 1; i < WARPS; ++i) total = op(total, temp_.warp_aggregates[i]);
    }
    return total;
  }

  __device__ T Sum(T input) { return Reduce(input, mini_cub::Sum<T>()); }

 private:
  TempStorage &temp_;
};

}  // namespace mini_cub

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
block_sum_kernel(const T *__restrict__ in, T *__restrict__ out, std::size_t n) {
  using Reduce = mini_cub::BlockReduce<T, BLOCK>;
  __shared__ typename Reduce::TempStorage storage;
  T acc = T(0);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(BLOCK) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * BLOCK) {
    acc += in[i];
  }
  T block_total = Reduce(storage).Sum(acc);
  if (threadIdx.x == 0) atomicAdd(out, block_total);
}

__global__ void cg_sum_kernel(const float *in, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = 0.0f;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n;
       i += gridDim.x * block.size()) {
    v += in[i];
  }
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) atomicAdd(&out[0], v);
  extern __shared__ float smem[];
  smem[threadIdx.x] = v;
  block.sync();
  volatile float *vs = smem;
  if (threadIdx.x < 32) {
    vs[threadIdx.x] += vs[threadIdx.x + 32];
  }
}

__global__ void grid_sync_kernel(int *flags, int rounds) {
  cg::grid_group grid = cg::this_grid();
  for (int r = 0; r < rounds; ++r) {
    if (grid.thread_rank() == 0) flags[r] = r;
    grid.sync();
  }
}

template <typename Kernel, typename... Args>
float time_launch(Kernel k, dim3 grid, dim3 block, std::size_t smem, cudaStream_t s, Args... args) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start, s));
  k<<<grid, block, smem, s>>>(args...);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(stop, s));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

struct DeviceBuffer {
  void *ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t b) : bytes(b) { CHECK_CUDA(cudaMalloc(&ptr, b)); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  template <typename T> T *as() { return static_cast<T *>(ptr); }
};

int main(int argc, char **argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1u << 24);
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 0.0f);
  std::transform(host.begin(), host.end(), host.begin(), [](float x) { return x * 0.5f; });
  auto in = std::make_unique<DeviceBuffer>(n * sizeof(float));
  DeviceBuffer out(sizeof(float));
  CHECK_CUDA(cudaMemcpy(in->as<float>(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(out.ptr, 0, sizeof(float)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  constexpr int kBlock = 256;
  dim3 grid(static_cast<unsigned>((n + kBlock - 1) / kBlock));
  const auto t0 = std::chrono::steady_clock::now();
  block_sum_kernel<float, kBlock><<<grid, kBlock, 0, stream>>>(in->as<float>(), out.as<float>(), n);
  cg_sum_kernel<<<grid, kBlock, kBlock * sizeof(float), stream>>>(in->as<float>(), out.as<float>(), (int)n);
  float ms = time_launch(cg_sum_kernel, grid, dim3(kBlock), kBlock * sizeof(float), stream,
                         in->as<float>(), out.as<float>(), static_cast<int>(n));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const auto t1 = std::chrono::steady_clock::now();
  float result = 0;
  CHECK_CUDA(cudaMemcpy(&result, out.ptr, sizeof(float), cudaMemcpyDeviceToHost));
  const double expect = std::accumulate(host.begin(), host.end(), 0.0);
  std::printf("sum=%f expect=%f kernel=%.3fms total=%.3fms\n", result, expect, ms,
              std::chrono::duration<double, std::milli>(t1 - t0).count());
  void *args[] = {&in, &out};
  (void)args;
  int device = 0, smCount = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device);
  int *flags = nullptr;
  CHECK_CUDA(cudaMallocManaged(&flags, 8 * sizeof(int)));
  void *kargs[] = {(void *)&flags, nullptr};
  cudaLaunchCooperativeKernel((void *)grid_sync_kernel, smCount, 128, kargs, 0, stream);
  cudaFree(flags);
  cudaStreamDestroy(stream);
  return result > 0 ? 0 : 1;
}
