// query: filter/aggregate over a columnar trip table (NYC-taxi-like).
//
//   Q1: SELECT payment_type, COUNT(*), SUM(fare_amount), SUM(passenger_count)
//       FROM trips WHERE trip_distance > :min_dist GROUP BY payment_type
//   Q2: SELECT COUNT(*), SUM(trip_distance), SUM(tip_amount)
//       FROM trips WHERE passenger_count = :n AND payment_type = 1
//
// Only the filter column is read for every row; the other columns are read
// only for the rows that pass (data-dependent, sparse accesses).  Money and
// distances are aggregated as integer cents / hundredths in 64-bit
// accumulators, so the result does not depend on the order of the atomics.
//
// Storage arrays (nrows elements each): trip_distance, fare_amount,
//                tip_amount, passenger_count, payment_type.
//
// usage: query [nrows] [seed] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(ans)                                                       \
    do {                                                                      \
        cudaError_t rc_ = (ans);                                              \
        if (rc_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA: %s (%s:%d)\n", cudaGetErrorString(rc_),    \
                    __FILE__, __LINE__);                                      \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

#define BLOCK 256
#define NUM_PAYMENT_TYPES 8   // 1..6 used, 0 = unknown

typedef unsigned long long u64;

struct Q1Result {
    u64 count[NUM_PAYMENT_TYPES];
    u64 fare_cents[NUM_PAYMENT_TYPES];
    u64 passengers[NUM_PAYMENT_TYPES];
};

// Per-block partial aggregates in shared memory, flushed with one global
// atomic per group at the end.
__global__ void q1_distance_filter(const float* __restrict__ trip_distance,
                                   const float* __restrict__ fare_amount,
                                   const uint8_t* __restrict__ passenger_count,
                                   const uint8_t* __restrict__ payment_type,
                                   size_t nrows, float min_dist,
                                   Q1Result* __restrict__ out)
{
    __shared__ u64 s_count[NUM_PAYMENT_TYPES];
    __shared__ u64 s_fare[NUM_PAYMENT_TYPES];
    __shared__ u64 s_pass[NUM_PAYMENT_TYPES];
    if (threadIdx.x < NUM_PAYMENT_TYPES) {
        s_count[threadIdx.x] = 0;
        s_fare[threadIdx.x] = 0;
        s_pass[threadIdx.x] = 0;
    }
    __syncthreads();

    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nrows;
         i += (size_t)gridDim.x * blockDim.x) {
        if (trip_distance[i] > min_dist) {
            const unsigned pt = payment_type[i] & (NUM_PAYMENT_TYPES - 1);
            const long long cents = __float2ll_rn(fare_amount[i] * 100.0f);
            atomicAdd(&s_count[pt], 1ull);
            atomicAdd(&s_fare[pt], (u64)cents);
            atomicAdd(&s_pass[pt], (u64)passenger_count[i]);
        }
    }
    __syncthreads();

    if (threadIdx.x < NUM_PAYMENT_TYPES && s_count[threadIdx.x]) {
        atomicAdd(&out->count[threadIdx.x], s_count[threadIdx.x]);
        atomicAdd(&out->fare_cents[threadIdx.x], s_fare[threadIdx.x]);
        atomicAdd(&out->passengers[threadIdx.x], s_pass[threadIdx.x]);
    }
}

// One thread per row, straight global atomics.
__global__ void q2_passenger_filter(const uint8_t* __restrict__ passenger_count,
                                    const uint8_t* __restrict__ payment_type,
                                    const float* __restrict__ trip_distance,
                                    const float* __restrict__ tip_amount,
                                    size_t nrows, uint8_t want_passengers,
                                    u64* __restrict__ acc /* [3] */)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= nrows) return;
    if (passenger_count[i] != want_passengers) return;
    if (payment_type[i] != 1) return;
    atomicAdd(&acc[0], 1ull);
    atomicAdd(&acc[1], (u64)__float2ll_rn(trip_distance[i] * 100.0f));
    atomicAdd(&acc[2], (u64)__float2ll_rn(tip_amount[i] * 100.0f));
}

// --------------------------------------------------------------------------

static uint64_t g_rng;
static inline uint32_t rnd32()
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

int main(int argc, char** argv)
{
    size_t nrows = (1u << 20) + 7;
    uint64_t seed = 17;
    bool verify = true;
    int np = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--no-verify")) verify = false;
        else if (np++ == 0) nrows = (size_t)strtoull(argv[i], nullptr, 10);
        else seed = strtoull(argv[i], nullptr, 10);
    }
    g_rng = seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull;

    // Columns.  Distances in hundredths of a mile (mostly short trips, a tail
    // of long ones), fares and tips in cents, converted to float like the
    // original parquet columns.
    std::vector<float> h_dist(nrows), h_fare(nrows), h_tip(nrows);
    std::vector<uint8_t> h_pass(nrows), h_ptype(nrows);
    for (size_t i = 0; i < nrows; ++i) {
        uint32_t r = rnd32();
        uint32_t hundredths = (r % 16 == 0) ? rnd32() % 5000 : rnd32() % 400;
        h_dist[i] = hundredths / 100.0f;
        uint32_t fare_cents = 250 + hundredths * 2 + rnd32() % 300;
        h_fare[i] = fare_cents / 100.0f;
        h_pass[i] = (uint8_t)((r >> 8) % 10 < 7 ? 1 : 1 + (r >> 12) % 6);
        uint32_t p = (r >> 16) % 100;
        h_ptype[i] = (uint8_t)(p < 60 ? 1 : p < 95 ? 2 : 3 + p % 4);
        h_tip[i] = (h_ptype[i] == 1) ? (float)(fare_cents / 5 + rnd32() % 100) / 100.0f : 0.0f;
    }

    float *trip_distance, *fare_amount, *tip_amount;
    uint8_t *passenger_count, *payment_type;
    Q1Result* d_q1;
    u64* d_q2;
    CUDA_CHECK(cudaMalloc(&trip_distance, nrows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&fare_amount, nrows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&tip_amount, nrows * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&passenger_count, nrows * sizeof(uint8_t)));
    CUDA_CHECK(cudaMalloc(&payment_type, nrows * sizeof(uint8_t)));
    CUDA_CHECK(cudaMalloc(&d_q1, sizeof(Q1Result)));
    CUDA_CHECK(cudaMalloc(&d_q2, 3 * sizeof(u64)));
    CUDA_CHECK(cudaMemcpy(trip_distance, h_dist.data(), nrows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(fare_amount, h_fare.data(), nrows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(tip_amount, h_tip.data(), nrows * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(passenger_count, h_pass.data(), nrows, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(payment_type, h_ptype.data(), nrows, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_q1, 0, sizeof(Q1Result)));
    CUDA_CHECK(cudaMemset(d_q2, 0, 3 * sizeof(u64)));

    const float min_dist = 10.0f;
    const uint8_t want_passengers = 2;

    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    auto t0 = std::chrono::steady_clock::now();
    q1_distance_filter<<<sms * 4, BLOCK>>>(trip_distance, fare_amount, passenger_count,
                                           payment_type, nrows, min_dist, d_q1);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    q2_passenger_filter<<<(unsigned)((nrows + BLOCK - 1) / BLOCK), BLOCK>>>(
        passenger_count, payment_type, trip_distance, tip_amount, nrows, want_passengers, d_q2);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t2 = std::chrono::steady_clock::now();
    fprintf(stderr, "rows=%zu q1 %.3f ms q2 %.3f ms\n", nrows,
            std::chrono::duration<double, std::milli>(t1 - t0).count(),
            std::chrono::duration<double, std::milli>(t2 - t1).count());

    Q1Result q1;
    u64 q2[3];
    CUDA_CHECK(cudaMemcpy(&q1, d_q1, sizeof(q1), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(q2, d_q2, sizeof(q2), cudaMemcpyDeviceToHost));

    for (int p = 0; p < NUM_PAYMENT_TYPES; ++p)
        if (q1.count[p])
            fprintf(stderr, "q1 payment_type=%d count=%llu fare=%llu.%02llu passengers=%llu\n", p,
                    q1.count[p], q1.fare_cents[p] / 100, q1.fare_cents[p] % 100, q1.passengers[p]);
    fprintf(stderr, "q2 count=%llu distance=%llu.%02llu tips=%llu.%02llu\n", q2[0],
            q2[1] / 100, q2[1] % 100, q2[2] / 100, q2[2] % 100);

    int rc = 0;
    if (verify) {
        Q1Result r1;
        memset(&r1, 0, sizeof(r1));
        u64 r2[3] = {0, 0, 0};
        for (size_t i = 0; i < nrows; ++i) {
            if (h_dist[i] > min_dist) {
                unsigned pt = h_ptype[i] & (NUM_PAYMENT_TYPES - 1);
                r1.count[pt]++;
                r1.fare_cents[pt] += (u64)llrintf(h_fare[i] * 100.0f);
                r1.passengers[pt] += h_pass[i];
            }
            if (h_pass[i] == want_passengers && h_ptype[i] == 1) {
                r2[0]++;
                r2[1] += (u64)llrintf(h_dist[i] * 100.0f);
                r2[2] += (u64)llrintf(h_tip[i] * 100.0f);
            }
        }
        bool ok = memcmp(&r1, &q1, sizeof(r1)) == 0 && memcmp(r2, q2, sizeof(r2)) == 0;
        fprintf(stderr, "verify %s\n", ok ? "ok" : "FAILED");
        rc = ok ? 0 : 1;
    }

    u64 checksum = q2[0] * 3 + q2[1] * 5 + q2[2] * 7;
    for (int p = 0; p < NUM_PAYMENT_TYPES; ++p)
        checksum += (q1.count[p] + q1.fare_cents[p] * 11 + q1.passengers[p] * 13) * (u64)(p + 1);
    printf("checksum: %llu\n", checksum);

    CUDA_CHECK(cudaFree(trip_distance));
    CUDA_CHECK(cudaFree(fare_amount));
    CUDA_CHECK(cudaFree(tip_amount));
    CUDA_CHECK(cudaFree(passenger_count));
    CUDA_CHECK(cudaFree(payment_type));
    CUDA_CHECK(cudaFree(d_q1));
    CUDA_CHECK(cudaFree(d_q2));
    return rc;
}
