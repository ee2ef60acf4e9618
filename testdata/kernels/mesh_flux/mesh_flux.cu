// mesh_flux: explicit time stepping of a cell-centred scheme on an
// unstructured mesh, in the shape of rodinia's cfd solver: every buffer is
// allocated, filled, copied and freed through the program's own template
// wrappers of the CUDA memory API (alloc<T>, upload<T>, download<T>,
// copy<T>, dealloc<T>) and reaches the kernels through host functions
// that launch them. Each cell holds NVAR integer quantities; a step moves
// each quantity towards its neighbours' values (the neighbours come from a
// table: a data-dependent gather), in RK sub-steps from the step's start.
// Integer arithmetic, so the result does not depend on the order of
// anything.
//
// Storage arrays: neighbors (cells * NNB), weights (cells), values,
// old_values, fluxes (cells * NVAR), step_factors (cells).
//
// usage: mesh_flux [cells] [iterations] [seed] [--no-verify] [--reference-only]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
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

#define NNB 4
#define NVAR 3
#define RK 3
#define BLOCK 128

// The program's wrappers of the CUDA memory API.
template <typename T>
T* alloc(size_t N)
{
    T* t;
    checkCudaErrors(cudaMalloc((void**)&t, sizeof(T) * N));
    return t;
}

template <typename T>
void dealloc(T* array)
{
    checkCudaErrors(cudaFree((void*)array));
}

template <typename T>
void copy(T* dst, T* src, size_t N)
{
    checkCudaErrors(cudaMemcpy((void*)dst, (void*)src, N * sizeof(T), cudaMemcpyDeviceToDevice));
}

template <typename T>
void upload(T* dst, T* src, size_t N)
{
    checkCudaErrors(cudaMemcpy((void*)dst, (void*)src, N * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T>
void download(T* dst, T* src, size_t N)
{
    checkCudaErrors(cudaMemcpy((void*)dst, (void*)src, N * sizeof(T), cudaMemcpyDeviceToHost));
}

void clear_ints(int* d, size_t n)
{
    checkCudaErrors(cudaMemset(d, 0, n * sizeof(int)));
}

__global__ void init_values(int cells, uint32_t seed, int* values)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= cells) return;
    for (int v = 0; v < NVAR; v++) {
        uint32_t h = (uint32_t)i * 2654435761u ^ (seed + 97u * v);
        h ^= h >> 15;
        values[i + v * cells] = (int)(h % 100000u);
    }
}

void initialize_values(int cells, uint32_t seed, int* values)
{
    dim3 grid((cells + BLOCK - 1) / BLOCK), block(BLOCK);
    init_values<<<grid, block>>>(cells, seed, values);
    checkCudaErrors(cudaGetLastError());
}

__global__ void compute_step_factor(int cells, const int* values, const int* weights, int* step_factors)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= cells) return;
    step_factors[i] = 1 + (weights[i] + values[i]) % 4;
}

void step_factor(int cells, int* values, int* weights, int* step_factors)
{
    dim3 grid((cells + BLOCK - 1) / BLOCK), block(BLOCK);
    compute_step_factor<<<grid, block>>>(cells, values, weights, step_factors);
    checkCudaErrors(cudaGetLastError());
}

__global__ void compute_flux(int cells, const int* neighbors, const int* values, int* fluxes)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= cells) return;
    for (int v = 0; v < NVAR; v++) {
        const int mine = values[i + v * cells];
        int flux = 0;
        for (int j = 0; j < NNB; j++) {
            const int nb = neighbors[i + j * cells];
            if (nb >= 0)
                flux += values[nb + v * cells] - mine;
        }
        fluxes[i + v * cells] = flux;
    }
}

void flux(int cells, int* neighbors, int* values, int* fluxes)
{
    dim3 grid((cells + BLOCK - 1) / BLOCK), block(BLOCK);
    compute_flux<<<grid, block>>>(cells, neighbors, values, fluxes);
    checkCudaErrors(cudaGetLastError());
}

__global__ void time_step(int j, int cells, const int* old_values, int* values, const int* step_factors, const int* fluxes)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= cells) return;
    const int div = NNB * step_factors[i] * (RK - j);
    for (int v = 0; v < NVAR; v++)
        values[i + v * cells] = old_values[i + v * cells] + fluxes[i + v * cells] / div;
}

void advance(int j, int cells, int* old_values, int* values, int* step_factors, int* fluxes)
{
    dim3 grid((cells + BLOCK - 1) / BLOCK), block(BLOCK);
    time_step<<<grid, block>>>(j, cells, old_values, values, step_factors, fluxes);
    checkCudaErrors(cudaGetLastError());
}

// Reads the solution back through the download wrapper, as rodinia's dump().
long long checksum_of(int* values, int cells, std::vector<int>& h_values)
{
    h_values.resize((size_t)cells * NVAR);
    download(h_values.data(), values, (size_t)cells * NVAR);
    long long sum = 0;
    for (size_t k = 0; k < h_values.size(); ++k) sum += (long long)h_values[k] * (long long)(k % 7 + 1);
    return sum;
}

struct Lcg {
    uint64_t s;
    explicit Lcg(uint64_t seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
    uint32_t next() { s = s * 6364136223846793005ULL + 1442695040888963407ULL; return (uint32_t)(s >> 33); }
    uint32_t below(uint32_t n) { return next() % n; }
};

// The host reference: the same steps, in order.
static std::vector<int> reference(int cells, int iterations, uint32_t seed, const std::vector<int>& nbrs, const std::vector<int>& w)
{
    std::vector<int> values((size_t)cells * NVAR), old_values, fluxes((size_t)cells * NVAR), steps(cells);
    for (int i = 0; i < cells; ++i)
        for (int v = 0; v < NVAR; v++) {
            uint32_t h = (uint32_t)i * 2654435761u ^ (seed + 97u * v);
            h ^= h >> 15;
            values[i + (size_t)v * cells] = (int)(h % 100000u);
        }
    for (int it = 0; it < iterations; ++it) {
        old_values = values;
        for (int i = 0; i < cells; ++i) steps[i] = 1 + (w[i] + values[i]) % 4;
        for (int j = 0; j < RK; ++j) {
            for (int i = 0; i < cells; ++i)
                for (int v = 0; v < NVAR; v++) {
                    const int mine = values[i + (size_t)v * cells];
                    int f = 0;
                    for (int k = 0; k < NNB; k++) {
                        const int nb = nbrs[i + (size_t)k * cells];
                        if (nb >= 0) f += values[nb + (size_t)v * cells] - mine;
                    }
                    fluxes[i + (size_t)v * cells] = f;
                }
            for (int i = 0; i < cells; ++i) {
                const int div = NNB * steps[i] * (RK - j);
                for (int v = 0; v < NVAR; v++)
                    values[i + (size_t)v * cells] = old_values[i + (size_t)v * cells] + fluxes[i + (size_t)v * cells] / div;
            }
        }
    }
    return values;
}

int main(int argc, char* argv[])
{
    int cells = 100003;
    int iterations = 4;
    uint32_t seed = 5;
    bool verify = true, reference_only = false;
    int nargs = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-verify") == 0) verify = false;
        else if (std::strcmp(argv[i], "--reference-only") == 0) reference_only = true;
        else if (nargs == 0) { cells = std::atoi(argv[i]); ++nargs; }
        else if (nargs == 1) { iterations = std::atoi(argv[i]); ++nargs; }
        else seed = (uint32_t)std::strtoul(argv[i], nullptr, 10);
    }
    if (cells <= 0 || iterations < 0) {
        fprintf(stderr, "usage: mesh_flux [cells] [iterations] [seed] [--no-verify] [--reference-only]\n");
        return 2;
    }

    // The mesh: NNB neighbours per cell, -1 on the boundary, stored
    // neighbour-major like cfd's elements_surrounding_elements.
    std::vector<int> h_neighbors((size_t)cells * NNB), h_weights(cells);
    Lcg rng(seed);
    for (int i = 0; i < cells; ++i) {
        for (int j = 0; j < NNB; ++j) {
            const uint32_t pick = rng.below(16);
            h_neighbors[i + (size_t)j * cells] = pick == 0 ? -1 : (int)((i + (pick < 12 ? 1 + rng.below(64) : rng.below((uint32_t)cells))) % (uint32_t)cells);
        }
        h_weights[i] = (int)rng.below(1000);
    }
    fprintf(stderr, "cells=%d iterations=%d\n", cells, iterations);
    if (reference_only) {
        std::vector<int> ref = reference(cells, iterations, seed, h_neighbors, h_weights);
        long long sum = 0;
        for (size_t k = 0; k < ref.size(); ++k) sum += (long long)ref[k] * (long long)(k % 7 + 1);
        printf("checksum: %lld\n", sum);
        return 0;
    }

    int* neighbors;
    int* weights;
    neighbors = alloc<int>((size_t)cells * NNB);
    upload<int>(neighbors, h_neighbors.data(), (size_t)cells * NNB);
    weights = alloc<int>(cells);
    upload<int>(weights, h_weights.data(), cells);

    int* values = alloc<int>((size_t)cells * NVAR);
    initialize_values(cells, seed, values);
    int* old_values = alloc<int>((size_t)cells * NVAR);
    int* fluxes = alloc<int>((size_t)cells * NVAR);
    int* step_factors = alloc<int>(cells);
    clear_ints(fluxes, (size_t)cells * NVAR);
    checkCudaErrors(cudaDeviceSynchronize());

    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iterations; ++it) {
        copy<int>(old_values, values, (size_t)cells * NVAR);
        step_factor(cells, values, weights, step_factors);
        for (int j = 0; j < RK; ++j) {
            flux(cells, neighbors, values, fluxes);
            advance(j, cells, old_values, values, step_factors, fluxes);
        }
    }
    checkCudaErrors(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    fprintf(stderr, "time %.3f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());

    std::vector<int> h_values;
    const long long sum = checksum_of(values, cells, h_values);
    int rc = 0;
    if (verify) {
        std::vector<int> ref = reference(cells, iterations, seed, h_neighbors, h_weights);
        size_t bad = 0;
        for (size_t k = 0; k < ref.size(); ++k)
            if (ref[k] != h_values[k] && bad++ < 5)
                fprintf(stderr, "value %zu: %d (ref %d)\n", k, h_values[k], ref[k]);
        fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        rc = bad != 0;
    }
    printf("checksum: %lld\n", sum);

    dealloc<int>(neighbors);
    dealloc<int>(weights);
    dealloc<int>(values);
    dealloc<int>(old_values);
    dealloc<int>(fluxes);
    dealloc<int>(step_factors);
    return rc;
}
