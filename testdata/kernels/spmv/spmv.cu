// spmv: y = A * x for a CSR matrix, two ways:
//   spmv_csr_scalar   one thread per row
//   spmv_csr_vector   TPR threads per row, shuffle reduction (TPR = 32: a
//                     warp per row; TPR = 4: eight rows per warp)
//
// Matrix values and x are small integers stored as double, so every row sum
// is exact and the result does not depend on the summation order.
//
// Storage arrays: row_ptr (rows+1), col_ind (nnz), val (nnz), x (cols), y (rows).
//
// usage: spmv [rows] [seed] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)
template <typename T>
void check(T result, char const* const func, const char* const file, int const line)
{
    if (result) {
        fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\"\n", file, line,
                static_cast<unsigned int>(result), cudaGetErrorName(result), func);
        exit(EXIT_FAILURE);
    }
}

#define BLOCK 256

template <typename T>
__global__ void spmv_csr_scalar(const int num_rows,
                                const int* __restrict__ row_ptr,
                                const int* __restrict__ col_ind,
                                const T* __restrict__ val,
                                const T* __restrict__ x,
                                T* __restrict__ y)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        T dot = 0;
        const int row_start = row_ptr[row];
        const int row_end = row_ptr[row + 1];
        for (int jj = row_start; jj < row_end; jj++)
            dot += val[jj] * x[col_ind[jj]];
        y[row] = dot;
    }
}

template <typename T, int TPR>
__global__ void spmv_csr_vector(const int num_rows,
                                const int* __restrict__ row_ptr,
                                const int* __restrict__ col_ind,
                                const T* __restrict__ val,
                                const T* __restrict__ x,
                                T* __restrict__ y)
{
    static_assert(TPR > 0 && TPR <= 32 && (TPR & (TPR - 1)) == 0,
                  "TPR must be a power of two <= 32");
    const int thread_id = blockDim.x * blockIdx.x + threadIdx.x;
    const int row = thread_id / TPR;
    const int lane = thread_id & (TPR - 1);

    T sum = 0;
    if (row < num_rows) {
        const int row_end = row_ptr[row + 1];
        for (int jj = row_ptr[row] + lane; jj < row_end; jj += TPR)
            sum += val[jj] * x[col_ind[jj]];
    }
    // Every lane of the warp reaches the shuffles (no early return above).
#pragma unroll
    for (int offset = TPR / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset, TPR);
    if (row < num_rows && lane == 0)
        y[row] = sum;
}

// --------------------------------------------------------------------------

template <typename T>
struct CsrMatrix {
    int rows = 0, cols = 0;
    std::vector<int> row_ptr;
    std::vector<int> col_ind;
    std::vector<T> val;
    size_t nnz() const { return col_ind.size(); }
};

class Lcg {   // 64-bit LCG, top bits only
public:
    explicit Lcg(uint64_t seed) : state_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
    uint32_t next() {
        state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)(state_ >> 33);
    }
    uint32_t below(uint32_t bound) { return (uint32_t)(((uint64_t)next() * bound) >> 31); }
private:
    uint64_t state_;
};

// Skewed row lengths: 20% empty rows, mostly 1..16 entries, 0.1% rows with
// up to 4096 entries and one giant row (rows/3) touching a quarter of the
// columns.  Column indices sorted within a row.
template <typename T>
CsrMatrix<T> make_matrix(int rows, uint64_t seed)
{
    CsrMatrix<T> A;
    A.rows = A.cols = rows;
    A.row_ptr.resize(rows + 1);
    Lcg rng(seed);
    A.row_ptr[0] = 0;
    for (int r = 0; r < rows; ++r) {
        uint32_t len;
        uint32_t pick = rng.below(1000);
        if (r == rows / 3) len = (uint32_t)rows / 4;
        else if (pick == 0) len = rng.below(4096);
        else if (pick < 200) len = 0;
        else len = 1 + rng.below(16);
        for (uint32_t k = 0; k < len; ++k) {
            A.col_ind.push_back((int)rng.below((uint32_t)rows));
            A.val.push_back((T)((int)rng.below(9) - 4));
        }
        std::sort(A.col_ind.begin() + A.row_ptr[r], A.col_ind.end());
        A.row_ptr[r + 1] = (int)A.col_ind.size();
    }
    return A;
}

int main(int argc, char* argv[])
{
    int rows = 20011;
    uint64_t seed = 11;
    bool verify = true;
    int nargs = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-verify") == 0) verify = false;
        else if (nargs++ == 0) rows = std::atoi(argv[i]);
        else seed = std::strtoull(argv[i], nullptr, 10);
    }

    typedef double real;
    const CsrMatrix<real> A = make_matrix<real>(rows, seed);
    const size_t nnz = A.nnz();
    std::vector<real> h_x(A.cols);
    Lcg xr(seed ^ 0xabcdef);
    for (auto& v : h_x) v = (real)xr.below(16);
    fprintf(stderr, "rows=%d nnz=%zu\n", rows, nnz);

    int *d_row_ptr, *d_col_ind;
    real *d_val, *d_x, *d_y_scalar, *d_y_vector, *d_y_sub;
    checkCudaErrors(cudaMalloc((void**)&d_row_ptr, (rows + 1) * sizeof(int)));
    checkCudaErrors(cudaMalloc((void**)&d_col_ind, nnz * sizeof(int)));
    checkCudaErrors(cudaMalloc((void**)&d_val, nnz * sizeof(real)));
    checkCudaErrors(cudaMalloc((void**)&d_x, A.cols * sizeof(real)));
    checkCudaErrors(cudaMalloc((void**)&d_y_scalar, rows * sizeof(real)));
    checkCudaErrors(cudaMalloc((void**)&d_y_vector, rows * sizeof(real)));
    checkCudaErrors(cudaMalloc((void**)&d_y_sub, rows * sizeof(real)));
    checkCudaErrors(cudaMemcpy(d_row_ptr, A.row_ptr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    checkCudaErrors(cudaMemcpy(d_col_ind, A.col_ind.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    checkCudaErrors(cudaMemcpy(d_val, A.val.data(), nnz * sizeof(real), cudaMemcpyHostToDevice));
    checkCudaErrors(cudaMemcpy(d_x, h_x.data(), A.cols * sizeof(real), cudaMemcpyHostToDevice));

    cudaEvent_t ev[4];
    for (auto& e : ev) checkCudaErrors(cudaEventCreate(&e));

    const dim3 block(BLOCK);
    const dim3 grid_scalar((rows + BLOCK - 1) / BLOCK);
    const dim3 grid_warp((unsigned)(((size_t)rows * 32 + BLOCK - 1) / BLOCK));
    const dim3 grid_sub((unsigned)(((size_t)rows * 4 + BLOCK - 1) / BLOCK));

    checkCudaErrors(cudaEventRecord(ev[0]));
    spmv_csr_scalar<real><<<grid_scalar, block>>>(rows, d_row_ptr, d_col_ind, d_val, d_x, d_y_scalar);
    checkCudaErrors(cudaEventRecord(ev[1]));
    spmv_csr_vector<real, 32><<<grid_warp, block>>>(rows, d_row_ptr, d_col_ind, d_val, d_x, d_y_vector);
    checkCudaErrors(cudaEventRecord(ev[2]));
    spmv_csr_vector<real, 4><<<grid_sub, block>>>(rows, d_row_ptr, d_col_ind, d_val, d_x, d_y_sub);
    checkCudaErrors(cudaEventRecord(ev[3]));
    checkCudaErrors(cudaGetLastError());
    checkCudaErrors(cudaEventSynchronize(ev[3]));
    float ms[3];
    for (int k = 0; k < 3; ++k) checkCudaErrors(cudaEventElapsedTime(&ms[k], ev[k], ev[k + 1]));
    fprintf(stderr, "scalar %.3f ms, vector<32> %.3f ms, vector<4> %.3f ms\n", ms[0], ms[1], ms[2]);

    std::vector<real> y1(rows), y2(rows), y3(rows);
    checkCudaErrors(cudaMemcpy(y1.data(), d_y_scalar, rows * sizeof(real), cudaMemcpyDeviceToHost));
    checkCudaErrors(cudaMemcpy(y2.data(), d_y_vector, rows * sizeof(real), cudaMemcpyDeviceToHost));
    checkCudaErrors(cudaMemcpy(y3.data(), d_y_sub, rows * sizeof(real), cudaMemcpyDeviceToHost));

    int rc = 0;
    if (verify) {
        int bad = 0;
        for (int r = 0; r < rows; ++r) {
            real ref = 0;
            for (int j = A.row_ptr[r]; j < A.row_ptr[r + 1]; ++j) ref += A.val[j] * h_x[A.col_ind[j]];
            if (ref != y1[r] || ref != y2[r] || ref != y3[r]) {
                if (bad < 5) fprintf(stderr, "row %d: %g %g %g (ref %g)\n", r, y1[r], y2[r], y3[r], ref);
                ++bad;
            }
        }
        fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        rc = bad != 0;
    }

    long long checksum = 0;
    for (int r = 0; r < rows; ++r) checksum += (long long)y1[r] * (r % 31 + 1);
    printf("checksum: %lld\n", checksum);

    for (auto& e : ev) checkCudaErrors(cudaEventDestroy(e));
    checkCudaErrors(cudaFree(d_row_ptr));
    checkCudaErrors(cudaFree(d_col_ind));
    checkCudaErrors(cudaFree(d_val));
    checkCudaErrors(cudaFree(d_x));
    checkCudaErrors(cudaFree(d_y_scalar));
    checkCudaErrors(cudaFree(d_y_vector));
    checkCudaErrors(cudaFree(d_y_sub));
    return rc;
}
