// driver.cu: host driver of kernel_only/gather.cu.  Declares the kernels
// itself (no shared header), builds inputs, launches, checks against a host
// reference and prints the checksum.  Build: nvcc driver.cu gather.cu
//
// Storage arrays: table (rows*dim, float), ids (count, i64), vals (m, u32),
// offsets (segments+1, u64).
//
// usage: kernel_only [rows] [seed] [--no-verify] [--reference-only]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

__global__ void gather_rows(const float* table, const int64_t* ids, float* out,
                            int64_t count, int dim);
__global__ void segment_max(const uint64_t* offsets, const uint32_t* vals,
                            uint32_t* result, uint32_t segments);

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e__ = (x);                                                     \
    if (e__ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,          \
              cudaGetErrorString(e__));                                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static const int DIM = 16;
static const int64_t COUNT = 40000;

struct Inputs {
  std::vector<float> table;
  std::vector<int64_t> ids;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> vals;
};

static Inputs make_inputs(int64_t rows, uint64_t seed)
{
  uint64_t s = seed * 2654435761ull + 11;
  auto next = [&s]() {
    s ^= s << 7;
    s ^= s >> 9;
    return s;
  };
  Inputs in;
  in.table.resize(rows * DIM);
  for (size_t i = 0; i < in.table.size(); i++) in.table[i] = (float)(next() % 2001) - 1000.0f;
  in.ids.resize(COUNT);
  for (auto& id : in.ids) id = (int64_t)(next() % 4 == 0 ? next() % 64 : next() % rows);
  const uint32_t segments = (uint32_t)(rows / 2);
  in.offsets.assign(segments + 1, 0);
  for (uint32_t sgm = 0; sgm < segments; sgm++) {
    const unsigned len = (unsigned)(next() % 24);
    for (unsigned k = 0; k < len; k++) in.vals.push_back((uint32_t)(next() % 1000003));
    in.offsets[sgm + 1] = in.vals.size();
  }
  return in;
}

static void reference(const Inputs& in, std::vector<float>& out, std::vector<uint32_t>& mx)
{
  out.resize(COUNT * DIM);
  for (int64_t i = 0; i < COUNT * DIM; i++) out[i] = in.table[in.ids[i / DIM] * DIM + i % DIM];
  mx.assign(in.offsets.size() - 1, 0);
  for (size_t sgm = 0; sgm + 1 < in.offsets.size(); sgm++)
    for (uint64_t j = in.offsets[sgm]; j < in.offsets[sgm + 1]; j++) mx[sgm] = in.vals[j] > mx[sgm] ? in.vals[j] : mx[sgm];
}

static long long checksum(const std::vector<float>& out, const std::vector<uint32_t>& mx)
{
  long long sum = 0;
  for (size_t i = 0; i < out.size(); i++) sum += (long long)out[i] * (long long)(i % 13 + 1);
  for (size_t i = 0; i < mx.size(); i++) sum += (long long)mx[i] * (long long)(i % 7 + 1);
  return sum;
}

int main(int argc, char** argv)
{
  int64_t rows = 50000;
  uint64_t seed = 5;
  bool verify = true, reference_only = false;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    if (!strcmp(argv[i], "--reference-only")) { reference_only = true; continue; }
    switch (npos++) {
      case 0: rows = strtoll(argv[i], nullptr, 10); break;
      case 1: seed = strtoull(argv[i], nullptr, 10); break;
      default:
        fprintf(stderr, "usage: %s [rows] [seed] [--no-verify] [--reference-only]\n", argv[0]);
        return 2;
    }
  }
  const Inputs in = make_inputs(rows, seed);
  const uint32_t segments = (uint32_t)(in.offsets.size() - 1);
  std::vector<float> ref_out;
  std::vector<uint32_t> ref_max;
  if (reference_only || verify) reference(in, ref_out, ref_max);
  if (reference_only) {
    printf("checksum: %lld\n", checksum(ref_out, ref_max));
    return 0;
  }

  float *table, *out;
  int64_t* ids;
  uint64_t* offsets;
  uint32_t *vals, *result;
  CUDA_CHECK(cudaMalloc(&table, sizeof(float) * in.table.size()));
  CUDA_CHECK(cudaMalloc(&ids, sizeof(int64_t) * COUNT));
  CUDA_CHECK(cudaMalloc(&out, sizeof(float) * COUNT * DIM));
  CUDA_CHECK(cudaMalloc(&offsets, sizeof(uint64_t) * (segments + 1)));
  CUDA_CHECK(cudaMalloc(&vals, sizeof(uint32_t) * in.vals.size()));
  CUDA_CHECK(cudaMalloc(&result, sizeof(uint32_t) * segments));
  CUDA_CHECK(cudaMemcpy(table, in.table.data(), sizeof(float) * in.table.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ids, in.ids.data(), sizeof(int64_t) * COUNT, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(offsets, in.offsets.data(), sizeof(uint64_t) * (segments + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(vals, in.vals.data(), sizeof(uint32_t) * in.vals.size(), cudaMemcpyHostToDevice));

  gather_rows<<<(unsigned)((COUNT * DIM + 255) / 256), 256>>>(table, ids, out, COUNT, DIM);
  CUDA_CHECK(cudaGetLastError());
  segment_max<<<(segments + 127) / 128, 128>>>(offsets, vals, result, segments);
  CUDA_CHECK(cudaGetLastError());

  std::vector<float> h_out(COUNT * DIM);
  std::vector<uint32_t> h_max(segments);
  CUDA_CHECK(cudaMemcpy(h_out.data(), out, sizeof(float) * h_out.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_max.data(), result, sizeof(uint32_t) * segments, cudaMemcpyDeviceToHost));

  int rc = 0;
  if (verify) {
    size_t bad = 0;
    for (size_t i = 0; i < h_out.size(); i++)
      if (h_out[i] != ref_out[i] && bad++ < 5) fprintf(stderr, "out[%zu]: gpu %g cpu %g\n", i, h_out[i], ref_out[i]);
    for (size_t i = 0; i < h_max.size(); i++)
      if (h_max[i] != ref_max[i] && bad++ < 5) fprintf(stderr, "max[%zu]: gpu %u cpu %u\n", i, h_max[i], ref_max[i]);
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }
  printf("checksum: %lld\n", checksum(h_out, h_max));

  CUDA_CHECK(cudaFree(table));
  CUDA_CHECK(cudaFree(ids));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(offsets));
  CUDA_CHECK(cudaFree(vals));
  CUDA_CHECK(cudaFree(result));
  return rc;
}
