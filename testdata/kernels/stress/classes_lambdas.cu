// Parser stress: namespaces, classes with __device__ members, operator
// overloads, lambdas (host and device side), references, casts, auto.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <memory>
#include <algorithm>
#include <numeric>
#include <functional>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace outer {
inline namespace v1 {
namespace detail {

struct Point3 {
    float x, y, z;
    __host__ __device__ Point3() : x(0), y(0), z(0) {}
    __host__ __device__ Point3(float a, float b, float c) : x{a}, y{b}, z{c} {}
    __host__ __device__ Point3 operator+(const Point3& o) const { return {x + o.x, y + o.y, z + o.z}; }
    __host__ __device__ Point3& operator+=(const Point3& o) { x += o.x; y += o.y; z += o.z; return *this; }
    __host__ __device__ Point3 operator*(float s) const { return Point3(x * s, y * s, z * s); }
    __host__ __device__ bool operator<(const Point3& o) const { return x < o.x || (x == o.x && y < o.y); }
    __host__ __device__ bool operator>(const Point3& o) const { return o < *this; }
    __host__ __device__ float operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
    __host__ __device__ explicit operator float() const { return x + y + z; }
};

__host__ __device__ inline Point3 operator*(float s, const Point3& p) { return p * s; }

}  // namespace detail
}  // inline namespace v1
}  // namespace outer

namespace geo = outer::detail;

// A device-side view class: members used only on the device.
template <typename T>
class DeviceSpan {
public:
    DeviceSpan() = default;
    __host__ __device__ DeviceSpan(T* p, std::size_t n) : ptr_(p), n_(n) {}
    __device__ T& operator[](std::size_t i) const { return ptr_[i]; }
    __device__ T& operator()(std::size_t row, std::size_t col, std::size_t ld) const { return ptr_[row * ld + col]; }
    __host__ __device__ std::size_t size() const noexcept { return n_; }
    __device__ T* begin() const { return ptr_; }
    __device__ T* end() const { return ptr_ + n_; }
private:
    T* ptr_ = nullptr;
    std::size_t n_ = 0;
};

class Counter {
    unsigned long long* slot_;
public:
    explicit __host__ __device__ Counter(unsigned long long* s) : slot_(s) {}
    __device__ unsigned long long operator++(int) { return atomicAdd(slot_, 1ull); }
    __device__ Counter& operator+=(unsigned long long v) { atomicAdd(slot_, v); return *this; }
};

struct Base {
    __device__ virtual float weight(int i) const { return (float)i; }
    __device__ virtual ~Base() {}
};
struct Derived final : Base {
    __device__ float weight(int i) const override { return 2.0f * Base::weight(i); }
};

__global__ void centroid_kernel(const geo::Point3* __restrict__ pts, std::size_t n,
                                geo::Point3* __restrict__ out, unsigned long long* hits)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const std::size_t i = block.group_index().x * (std::size_t)block.size() + block.thread_rank();

    // A lambda in device code, capturing by reference and by value.
    auto load = [&](std::size_t k) -> geo::Point3 { return k < n ? pts[k] : geo::Point3{}; };
    auto scaled = [s = 0.5f](const geo::Point3& p) { return s * p; };

    geo::Point3 p = scaled(load(i));
    for (int off = tile.size() / 2; off > 0; off /= 2) {
        geo::Point3 q(tile.shfl_down(p.x, off), tile.shfl_down(p.y, off), tile.shfl_down(p.z, off));
        p += q;
    }
    Counter c{hits};
    if (tile.thread_rank() == 0) {
        atomicAdd(&out->x, p.x);
        atomicAdd(&out->y, p.y);
        atomicAdd(&out->z, p.z);
        c++;
    }
}

__global__ void span_kernel(DeviceSpan<int> s, int rows, int cols)
{
    Derived d;
    const Base& b = d;
    const int r = blockIdx.x, c = threadIdx.x;
    if (r < rows && c < cols)
        s(r, c, cols) = static_cast<int>(b.weight(r)) + reinterpret_cast<const int&>(c);
    if (r == 0 && c == 0) {
        int total = 0;
        for (int& v : s) total += v & 1;   // range-for over a device class
        s[0] = total;
    }
}

int main()
{
    const std::size_t n = 4096;
    std::vector<geo::Point3> host(n);
    std::generate(host.begin(), host.end(), [k = 0]() mutable {
        ++k;
        return geo::Point3(float(k % 7), float(k % 11), float(k % 13));
    });
    std::sort(host.begin(), host.end(), [](const geo::Point3& a, const geo::Point3& b) { return a > b; });

    geo::Point3 *pts, *out;
    unsigned long long* hits;
    cudaMalloc(&pts, n * sizeof(geo::Point3));
    cudaMalloc(&out, sizeof(geo::Point3));
    cudaMalloc(&hits, sizeof(unsigned long long));
    cudaMemcpy(pts, host.data(), n * sizeof(geo::Point3), cudaMemcpyHostToDevice);

    auto launch = [&](cudaStream_t st) {
        centroid_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(pts, n, out, hits);
    };
    launch(nullptr);

    auto deleter = [](int* p) { cudaFree(p); };
    int* raw = nullptr;
    cudaMalloc(&raw, 64 * 32 * sizeof(int));
    std::unique_ptr<int, decltype(deleter)> owned(raw, deleter);
    span_kernel<<<64, 32>>>(DeviceSpan<int>(owned.get(), 64 * 32), 64, 32);

    std::function<float(const geo::Point3&)> norm1 = [](const geo::Point3& p) { return (float)p; };
    std::printf("%f\n", (double)norm1(host[0]));
    cudaFree(pts);
    cudaFree(out);
    cudaFree(hits);
    return 0;
}
