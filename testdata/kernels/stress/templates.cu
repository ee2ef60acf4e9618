// Parser stress: templates.  Valid CUDA C++17; compile-check only.
#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <cuda_runtime.h>

namespace stress { namespace tmpl {

template <typename T> struct identity { using type = T; };
template <typename T> using identity_t = typename identity<T>::type;

template <typename T, int N = 4, typename Index = unsigned long long>
struct Vec {
    T v[N];
    using value_type = T;
    static constexpr int size = N;
    __host__ __device__ constexpr T& operator[](Index i) { return v[i]; }
    __host__ __device__ constexpr const T& operator[](Index i) const { return v[i]; }
    template <int I> __host__ __device__ constexpr T get() const { return v[I]; }
};

// Partial specialisation and a template template parameter.
template <typename T> struct is_vec : std::false_type {};
template <typename T, int N, typename I> struct is_vec<Vec<T, N, I>> : std::true_type {};

template <template <typename, int, typename> class V, typename T>
using Vec2 = V<T, 2, unsigned long long>;

template <typename... Ts>
__host__ __device__ constexpr auto sum_all(Ts... xs) -> decltype((xs + ... + 0))
{
    return (xs + ... + 0);   // fold expression
}

template <typename T>
__host__ __device__ constexpr std::enable_if_t<std::is_integral<T>::value, T>
ceil_div(T a, T b) { return (a + b - 1) / b; }

template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
__device__ T half_of(T x) { return x * T(0.5); }

template <typename T, typename U = identity_t<T>>
__device__ inline U widen(T x) { return static_cast<U>(x); }

// Non-type template parameters with expressions; `>>` closing nested lists.
template <int A, int B, bool Big = (A > B)>
struct Pick { static constexpr int value = Big ? A : B; };

template <typename V, int Shift = (8 >> 1)>
__global__ void __launch_bounds__(Pick<128, 256>::value)
shift_kernel(const typename V::value_type* __restrict__ in,
             typename V::value_type* __restrict__ out,
             unsigned long long n)
{
    const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) {
        V tmp{};
        tmp[0] = in[i];
        out[i] = tmp.template get<0>() << Shift;
    }
}

template <typename T, int ITEMS, template <typename, int, typename> class Holder = Vec>
__global__ void items_kernel(const T* __restrict__ in, T* __restrict__ out, unsigned long long n)
{
    Holder<T, ITEMS, unsigned long long> h{};
    const unsigned long long base = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) * ITEMS;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        h[k] = base + k < n ? in[base + k] : T();
    if constexpr (std::is_floating_point<T>::value) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) h[k] = half_of(h[k]);
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) h[k] = h[k] >> 1;
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        if (base + k < n) out[base + k] = h[k] + sum_all(1, 2, 3) - 6;
}

template <class Functor, class... Args>
__global__ void apply_kernel(Functor f, Args... args) { f(threadIdx.x, args...); }

struct Scale {
    float s;
    __device__ void operator()(unsigned t, float* __restrict__ p, int n) const
    {
        if ((int)t < n) p[t] *= s;
    }
};

template <typename T> struct Traits;
template <> struct Traits<float> { static constexpr const char* name = "float"; };
template <> struct Traits<int> { static constexpr const char* name = "int"; };

template <typename T, int N>
void launch_items(const T* in, T* out, unsigned long long n, cudaStream_t s)
{
    const unsigned grid = (unsigned)ceil_div<unsigned long long>(n, 128ull * N);
    items_kernel<T, N><<<grid, 128, 0, s>>>(in, out, n);
}

}}  // namespace stress::tmpl

using namespace stress::tmpl;

int main()
{
    static_assert(is_vec<Vec2<Vec, int>>::value, "Vec2 is a Vec");
    static_assert(Pick<3, 7>::value == 7 && Pick<(9 > 2) ? 9 : 2, 1>::value == 9, "pick");
    const unsigned long long n = 1000;
    int *a, *b;
    float* f;
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, n * sizeof(int));
    cudaMalloc(&f, n * sizeof(float));
    shift_kernel<Vec<int, 1>><<<ceil_div<unsigned long long>(n, 128), 128>>>(a, b, n);
    shift_kernel<Vec<int, 1>, (1 << 2)><<<dim3(8), dim3(128)>>>(a, b, n);
    launch_items<float, 4>(f, f, n, 0);
    launch_items<int, (2 > 1) ? 2 : 1>(a, b, n, 0);
    apply_kernel<<<1, 256>>>(Scale{2.0f}, f, (int)n);
    std::printf("%s %s %d\n", Traits<float>::name, Traits<int>::name, sum_all(1, 2, 3, 4));
    cudaFree(a);
    cudaFree(b);
    cudaFree(f);
    return 0;
}
