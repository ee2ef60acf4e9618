// GPU check of the work-assignment drivers behind bamgen's rewrites: for
// many launch shapes, every virtual id (claware, transpose, coarsen) and
// every edge (odt) must be visited exactly once. Exit status 0 when all
// pass; prints "N passed, N failed".
#include <bam/odt.cuh>
#include <bam/work_assignment.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

template <unsigned P>
__global__ void by_line(unsigned* count, unsigned long long epl) {
  bam::for_each_thread_by_line<P>(epl, [&](unsigned long long v) { atomicAdd(&count[v], 1u); });
}

__global__ void transposed(unsigned* count, unsigned long long stride) {
  bam::for_each_warp_transposed(stride, [&](unsigned long long w) {
    if ((threadIdx.x & 31) == 0) atomicAdd(&count[w], 1u);
  });
}

template <unsigned K>
__global__ void coarsened(unsigned* count) {
  bam::for_each_warp_coarsened<K>([&](unsigned long long w) {
    if ((threadIdx.x & 31) == 0) atomicAdd(&count[w], 1u);
  });
}

__global__ void odt_walk(const unsigned long long* fvl, const unsigned long long* rowptr, unsigned long long m,
                         unsigned long long tile, unsigned* count, unsigned long long* owner) {
  bam::odt_for_each_tile(fvl, rowptr, m, tile, [&](unsigned long long v, unsigned long long lo, unsigned long long hi) {
    const unsigned long long s = rowptr[v], e = rowptr[v + 1];
    for (unsigned long long i = bam::odt_first_strided((s & ~31ull) + bam::lane_id(), lo, 32); i < e && i < hi; i += 32) {
      if (i >= s) {
        atomicAdd(&count[i], 1u);
        owner[i] = v;
      }
    }
  });
}

static int passed = 0, failed = 0;

static void expect_once(const char* what, unsigned* d_count, size_t n) {
  std::vector<unsigned> h(n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(h.data(), d_count, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += h[i] != 1;
  if (bad) {
    failed++;
    printf("FAIL %s: %zu of %zu ids not visited exactly once\n", what, bad, n);
  } else {
    passed++;
  }
}

static void check_thread_drivers() {
  const unsigned grids[] = {1, 3, 57, 1024};
  const unsigned blocks[] = {32, 96, 256, 1024, 100};
  unsigned* d;
  CHECK(cudaMalloc(&d, 1024ull * 1024 * sizeof(unsigned)));
  char what[128];
  for (unsigned g : grids)
    for (unsigned b : blocks) {
      const size_t total = size_t(g) * b, warps = total / 32;
      for (unsigned long long epl : {128ull, 1024ull, 8ull}) {
        CHECK(cudaMemset(d, 0, total * sizeof(unsigned)));
        by_line<32><<<g, b>>>(d, epl);
        snprintf(what, sizeof what, "claware/32 <<<%u,%u>>> epl %llu", g, b, epl);
        expect_once(what, d, total);
        CHECK(cudaMemset(d, 0, total * sizeof(unsigned)));
        by_line<8><<<g, b>>>(d, epl);
        snprintf(what, sizeof what, "claware/8 <<<%u,%u>>> epl %llu", g, b, epl);
        expect_once(what, d, total);
      }
      if (b % 32 != 0) continue;  // warp drivers fall back to identity there; the original kernel's warps are partial
      for (unsigned long long s : {1ull, 4ull, 128ull, 512ull, 100000ull}) {
        CHECK(cudaMemset(d, 0, warps * sizeof(unsigned)));
        transposed<<<g, b>>>(d, s);
        snprintf(what, sizeof what, "transpose=%llu <<<%u,%u>>>", s, g, b);
        expect_once(what, d, warps);
      }
      CHECK(cudaMemset(d, 0, warps * sizeof(unsigned)));
      coarsened<8><<<g, b>>>(d);
      snprintf(what, sizeof what, "coarsen=8 <<<%u,%u>>>", g, b);
      expect_once(what, d, warps);
      CHECK(cudaMemset(d, 0, warps * sizeof(unsigned)));
      coarsened<3><<<g, b>>>(d);
      snprintf(what, sizeof what, "coarsen=3 <<<%u,%u>>>", g, b);
      expect_once(what, d, warps);
    }
  CHECK(cudaFree(d));
}

// A power-law-ish CSR with empty lists, a giant vertex and n not a multiple of 32.
static std::vector<unsigned long long> make_rowptr(size_t n, unsigned seed) {
  std::vector<unsigned long long> rp(n + 1, 0);
  srand(seed);
  for (size_t v = 0; v < n; ++v) {
    unsigned r = rand() % 100;
    unsigned long long deg = r < 20 ? 0 : r < 90 ? rand() % 8 : rand() % 300;
    if (v == n / 3) deg = 50000;
    rp[v + 1] = rp[v] + deg;
  }
  return rp;
}

static void check_odt() {
  const size_t ns[] = {1, 33, 1000, 20011};
  const unsigned long long tiles[] = {1, 32, 1024, 4096};
  char what[128];
  for (size_t n : ns)
    for (unsigned long long tile : tiles) {
      auto rp = make_rowptr(n, unsigned(n * 7 + tile));
      const unsigned long long m = rp[n];
      if (m == 0) continue;
      unsigned long long *d_rp, *d_fvl;
      unsigned* d_count;
      unsigned long long* d_owner;
      const size_t nt = (m + tile - 1) / tile;
      CHECK(cudaMalloc(&d_rp, rp.size() * sizeof(unsigned long long)));
      CHECK(cudaMalloc(&d_fvl, bam::odt::fvl_entries(m, tile) * sizeof(unsigned long long)));
      CHECK(cudaMalloc(&d_count, m * sizeof(unsigned)));
      CHECK(cudaMalloc(&d_owner, m * sizeof(unsigned long long)));
      CHECK(cudaMemcpy(d_rp, rp.data(), rp.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice));
      CHECK(cudaMemset(d_count, 0, m * sizeof(unsigned)));
      bam::build_first_vertex_list(d_rp, n, m, tile, d_fvl);
      for (unsigned grid : {1u, 7u, 300u}) {
        CHECK(cudaMemset(d_count, 0, m * sizeof(unsigned)));
        odt_walk<<<grid, 128>>>(d_fvl, d_rp, m, tile, d_count, d_owner);
        snprintf(what, sizeof what, "odt n=%zu m=%llu tile=%llu grid=%u", n, m, tile, grid);
        expect_once(what, d_count, m);
      }
      std::vector<unsigned long long> owner(m);
      CHECK(cudaMemcpy(owner.data(), d_owner, m * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      size_t wrong = 0;
      for (size_t v = 0; v < n; ++v)
        for (unsigned long long i = rp[v]; i < rp[v + 1]; ++i) wrong += owner[i] != v;
      if (wrong) {
        failed++;
        printf("FAIL odt n=%zu tile=%llu: %zu edges walked on behalf of the wrong vertex\n", n, tile, wrong);
      } else {
        passed++;
      }
      cudaFree(d_rp), cudaFree(d_fvl), cudaFree(d_count), cudaFree(d_owner);
    }
}

int main() {
  check_thread_drivers();
  check_odt();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
