// embedding: GNN feature gather.
//
//   gather:     out[i][:] = features[ids[i]][:]                  (one warp per row)
//   gather_sum: agg[i][:] = sum_k features[nbrs[i*K + k]][:]     (one thread per element)
//
// The feature table is the big array; rows are picked by a skewed (hot-node)
// id list, so accesses are data-dependent but each row is read contiguously.
// Features are multiples of 1/8 with small magnitude, so the K-term sums are
// exact in float and match the host reference bit for bit.
//
// Storage arrays: features (num_nodes * dim), ids (batch), nbrs (batch * K).
//
// usage: embedding [num_nodes] [batch] [dim=64|128] [seed] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
              cudaGetErrorString(e_));                                         \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

typedef int64_t NodeId;
#define BLOCK 256
#define FANOUT 10

namespace gnn {

constexpr int kWarp = 32;

// One warp per output row; each lane copies DIM / 32 consecutive-by-stride
// elements, so a warp reads one feature row in DIM*4/128 coalesced segments.
template <int DIM>
__global__ void gather_rows(const float* __restrict__ features,
                            const NodeId* __restrict__ ids,
                            float* __restrict__ out, int64_t batch)
{
  static_assert(DIM % kWarp == 0, "DIM must be a multiple of 32");
  const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= batch) return;
  const NodeId src = ids[row];
#pragma unroll
  for (int j = lane; j < DIM; j += kWarp)
    out[row * DIM + j] = features[src * DIM + j];
}

// One thread per output element; sums FANOUT sampled neighbour rows.
template <int DIM>
__global__ void gather_sum(const float* __restrict__ features,
                           const NodeId* __restrict__ nbrs,
                           float* __restrict__ agg, int64_t batch)
{
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch * DIM) return;
  const int64_t i = t / DIM;
  const int j = (int)(t % DIM);
  float acc = 0.0f;
  for (int k = 0; k < FANOUT; ++k)
    acc += features[nbrs[i * FANOUT + k] * DIM + j];
  agg[t] = acc;
}

}  // namespace gnn

struct Rand {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  // Skewed id in [0, n): cube of a uniform variate concentrates on low ids.
  NodeId hot(int64_t n) {
    double u = (double)(next() >> 11) * (1.0 / 9007199254740992.0);
    NodeId id = (NodeId)(u * u * u * (double)n);
    return id < n ? id : n - 1;
  }
};

int main(int argc, char** argv)
{
  int64_t num_nodes = 100003, batch = 4099;
  int dim = 64;
  uint64_t seed = 23;
  bool verify = true;
  int p = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    long long v = atoll(argv[i]);
    switch (p++) {
      case 0: num_nodes = v; break;
      case 1: batch = v; break;
      case 2: dim = (int)v; break;
      case 3: seed = (uint64_t)v; break;
    }
  }
  if (dim != 64 && dim != 128) {
    fprintf(stderr, "dim must be 64 or 128\n");
    return 2;
  }

  Rand rng{seed | 1};
  std::vector<float> h_features((size_t)num_nodes * dim);
  for (auto& f : h_features) f = (float)((int)(rng.next() >> 56) - 128) / 8.0f;
  std::vector<NodeId> h_ids(batch), h_nbrs((size_t)batch * FANOUT);
  for (auto& id : h_ids) id = rng.hot(num_nodes);
  for (auto& id : h_nbrs) id = rng.hot(num_nodes);

  const size_t feat_bytes = h_features.size() * sizeof(float);
  const size_t out_bytes = (size_t)batch * dim * sizeof(float);
  float* features = nullptr;
  NodeId* ids = nullptr;
  NodeId* nbrs = nullptr;
  float* out = nullptr;
  float* agg = nullptr;
  CUDA_CHECK(cudaMalloc(&features, feat_bytes));
  CUDA_CHECK(cudaMalloc(&ids, batch * sizeof(NodeId)));
  CUDA_CHECK(cudaMalloc(&nbrs, batch * FANOUT * sizeof(NodeId)));
  CUDA_CHECK(cudaMalloc(&out, out_bytes));
  CUDA_CHECK(cudaMalloc(&agg, out_bytes));
  CUDA_CHECK(cudaMemcpy(features, h_features.data(), feat_bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ids, h_ids.data(), batch * sizeof(NodeId), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(nbrs, h_nbrs.data(), batch * FANOUT * sizeof(NodeId), cudaMemcpyHostToDevice));

  const dim3 block(BLOCK);
  const dim3 grid_rows((unsigned)((batch * gnn::kWarp + BLOCK - 1) / BLOCK));
  const dim3 grid_elems((unsigned)((batch * dim + BLOCK - 1) / BLOCK));

  auto t0 = std::chrono::high_resolution_clock::now();
  switch (dim) {
    case 64:
      gnn::gather_rows<64><<<grid_rows, block>>>(features, ids, out, batch);
      gnn::gather_sum<64><<<grid_elems, block>>>(features, nbrs, agg, batch);
      break;
    case 128:
      gnn::gather_rows<128><<<grid_rows, block>>>(features, ids, out, batch);
      gnn::gather_sum<128><<<grid_elems, block>>>(features, nbrs, agg, batch);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  auto t1 = std::chrono::high_resolution_clock::now();
  fprintf(stderr, "nodes=%lld batch=%lld dim=%d  %.3f ms\n", (long long)num_nodes,
          (long long)batch, dim, std::chrono::duration<double, std::milli>(t1 - t0).count());

  float *h_out, *h_agg;   // pinned host buffers for the results
  CUDA_CHECK(cudaMallocHost(&h_out, out_bytes));
  CUDA_CHECK(cudaMallocHost(&h_agg, out_bytes));
  CUDA_CHECK(cudaMemcpy(h_out, out, out_bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_agg, agg, out_bytes, cudaMemcpyDeviceToHost));

  int rc = 0;
  if (verify) {
    size_t bad = 0;
    for (int64_t i = 0; i < batch; ++i)
      for (int j = 0; j < dim; ++j) {
        const float g = h_features[h_ids[i] * dim + j];
        float s = 0.0f;
        for (int k = 0; k < FANOUT; ++k) s += h_features[h_nbrs[i * FANOUT + k] * dim + j];
        if (h_out[i * dim + j] != g || h_agg[i * dim + j] != s) {
          if (bad < 5)
            fprintf(stderr, "[%lld][%d]: gather %g (ref %g) sum %g (ref %g)\n", (long long)i, j,
                    h_out[i * dim + j], g, h_agg[i * dim + j], s);
          ++bad;
        }
      }
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }

  // Values are multiples of 1/8: scale to integers and sum exactly.
  long long checksum = 0;
  for (size_t t = 0; t < (size_t)batch * dim; ++t)
    checksum += (long long)(h_out[t] * 8.0f) * (long long)(t % 17 + 1) + (long long)(h_agg[t] * 8.0f);
  printf("checksum: %lld\n", checksum);

  CUDA_CHECK(cudaFreeHost(h_out));
  CUDA_CHECK(cudaFreeHost(h_agg));
  CUDA_CHECK(cudaFree(features));
  CUDA_CHECK(cudaFree(ids));
  CUDA_CHECK(cudaFree(nbrs));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(agg));
  return rc;
}
