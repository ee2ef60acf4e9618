// Where does the first launch of a ported kernel spend its time? (launch call, check_launch, synchronize) bench/firstlaunch/run.sh
#include <bam/bam.cuh>
#include <chrono>
#include <cstdio>
#include <vector>
using clk = std::chrono::high_resolution_clock;
static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
__global__ void add(bam::array<const float> a, bam::array<float> c, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) c.write(i, a[i] + 1.0f); }
__global__ void add2(bam::array<const float> a, bam::array<float> c, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) c.write(i, a[i] + 2.0f); }
__global__ void nop(int* p) { if (p) *p = 1; }
int main(int argc, char** argv) {
  const size_t n = 1 << 21;
  auto t0 = clk::now();
  bam::runtime& rt = bam::default_runtime();
  auto t1 = clk::now();
  std::vector<float> h(n, 1.0f);
  auto a = rt.array_from_host<float>(h.data(), n);
  auto c = rt.array_zeros<float>(n);
  cudaDeviceSynchronize();
  auto t2 = clk::now();
  printf("runtime %.3f ms, arrays %.3f ms\n", ms(t0, t1), ms(t1, t2));
  if (argc > 1) { nop<<<1, 1>>>(nullptr); cudaDeviceSynchronize(); printf("(nop kernel first)\n"); }
  for (int r = 0; r < 3; ++r) {
    auto k = r == 1 ? add2 : add;
    auto s0 = clk::now();
    k<<<n / 256, 256>>>(a, c, n);
    auto s1 = clk::now();
    rt.check_launch("add", 256);
    auto s2 = clk::now();
    cudaDeviceSynchronize();
    auto s3 = clk::now();
    printf("launch %d (%s): call %.3f ms, check_launch %.3f ms, sync %.3f ms\n", r, r == 1 ? "add2" : "add", ms(s0, s1), ms(s1, s2), ms(s2, s3));
  }
  return 0;
}
