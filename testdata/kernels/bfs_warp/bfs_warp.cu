/*
 * bfs_warp -- level-synchronous BFS, one warp per vertex (EMOGI style).
 *
 * A warp owns one vertex.  Lanes start at the neighbour-list offset rounded
 * down to a 32-element boundary, so every load of the warp falls in aligned
 * 128-byte segments, and skip the leading elements that belong to the
 * previous vertex.  Edge offsets are 64-bit.
 *
 * Input: either generated (R-MAT-like) or read from a binary file:
 *     uint64 n, uint64 m, uint64 rowptr[n+1], uint32 colidx[m]
 * `-w FILE` writes the generated graph in that format.
 *
 * usage: bfs_warp [n] [seed] [-d avg_degree] [-f graph.bin] [-w out.bin]
 *                 [-s source] [--no-verify]
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <chrono>
#include <cuda_runtime.h>

#define cuda_err_chk(ans) { gpuAssert((ans), __FILE__, __LINE__); }
inline void gpuAssert(cudaError_t code, const char *file, int line, bool abort = true)
{
    if (code != cudaSuccess) {
        fprintf(stderr, "GPUassert: %s %s %d\n", cudaGetErrorString(code), file, line);
        if (abort) exit(code);
    }
}

typedef uint64_t EdgeT;
typedef uint32_t VertexT;
typedef uint32_t LevelT;

#define WARP_SHIFT 5
#define WARP_SIZE 32
#define MEM_ALIGN (~(0x1FULL))   /* round an edge offset down to 32 elements */
#define BLOCK_SIZE 512
#define MYINFINITY 0xFFFFFFFFu

__global__ void kernel_bfs_warp(const EdgeT *rowptr, const VertexT *colidx,
                                LevelT *label, const LevelT level,
                                const uint64_t vertex_count, bool *changed)
{
    const uint64_t tid = blockDim.x * (uint64_t)blockIdx.x + threadIdx.x;
    const uint64_t warpIdx = tid >> WARP_SHIFT;
    const uint64_t laneIdx = tid & ((1 << WARP_SHIFT) - 1);

    if (warpIdx < vertex_count && label[warpIdx] == level) {
        const EdgeT start = rowptr[warpIdx];
        const EdgeT shift_start = start & MEM_ALIGN;
        const EdgeT end = rowptr[warpIdx + 1];

        for (EdgeT i = shift_start + laneIdx; i < end; i += WARP_SIZE) {
            if (i >= start) {
                const VertexT next = colidx[i];
                if (label[next] == MYINFINITY) {
                    label[next] = level + 1;
                    *changed = true;
                }
            }
        }
    }
}

/* ------------------------------------------------------------------ input */

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* R-MAT-like directed graph, hub vertex n/2+1 points at every 8th vertex. */
static void gen_graph(uint64_t n, unsigned deg, uint64_t seed,
                      EdgeT **rowptr_out, VertexT **col_out, uint64_t *m_out)
{
    int scale = 1;
    while ((1ull << scale) < n) scale++;
    const uint64_t hub = n / 2 + 1;
    EdgeT *rowptr = (EdgeT *)calloc(n + 1, sizeof(EdgeT));
    VertexT *col = NULL;
    EdgeT *fill = NULL;
    for (int pass = 0; pass < 2; pass++) {
        rng_state = seed;
        for (uint64_t i = 0; i < n * deg; i++) {
            uint64_t u = 0, v = 0, bits = 0;
            for (int l = 0; l < scale; l++) {
                if ((l & 7) == 0) bits = rng_next();
                unsigned p = (unsigned)(bits & 0xff);
                bits >>= 8;
                u = (u << 1) | (p >= 195 ? 1 : 0);
                v = (v << 1) | ((p >= 146 && p < 195) || p >= 244 ? 1 : 0);
            }
            u %= n;
            v %= n;
            if (u == v) continue;
            if (pass == 0) rowptr[u + 1]++;
            else col[fill[u]++] = (VertexT)v;
        }
        for (uint64_t v = 0; v < n; v += 8) {
            if (v == hub) continue;
            if (pass == 0) rowptr[hub + 1]++;
            else col[fill[hub]++] = (VertexT)v;
        }
        if (pass == 0) {
            for (uint64_t v = 0; v < n; v++) rowptr[v + 1] += rowptr[v];
            col = (VertexT *)malloc(rowptr[n] * sizeof(VertexT) + 1);
            fill = (EdgeT *)malloc(n * sizeof(EdgeT));
            memcpy(fill, rowptr, n * sizeof(EdgeT));
        }
    }
    free(fill);
    *rowptr_out = rowptr;
    *col_out = col;
    *m_out = rowptr[n];
}

static int read_graph(const char *path, uint64_t *n, uint64_t *m,
                      EdgeT **rowptr, VertexT **col)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    uint64_t hdr[2];
    if (fread(hdr, sizeof(uint64_t), 2, f) != 2) goto bad;
    *n = hdr[0];
    *m = hdr[1];
    *rowptr = (EdgeT *)malloc((*n + 1) * sizeof(EdgeT));
    *col = (VertexT *)malloc(*m * sizeof(VertexT) + 1);
    if (fread(*rowptr, sizeof(EdgeT), *n + 1, f) != *n + 1) goto bad;
    if (fread(*col, sizeof(VertexT), *m, f) != *m) goto bad;
    fclose(f);
    return 0;
bad:
    fprintf(stderr, "%s: short read\n", path);
    fclose(f);
    return -1;
}

static int write_graph(const char *path, uint64_t n, uint64_t m,
                       const EdgeT *rowptr, const VertexT *col)
{
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); return -1; }
    uint64_t hdr[2] = { n, m };
    int ok = fwrite(hdr, sizeof(uint64_t), 2, f) == 2 &&
             fwrite(rowptr, sizeof(EdgeT), n + 1, f) == n + 1 &&
             fwrite(col, sizeof(VertexT), m, f) == m;
    fclose(f);
    return ok ? 0 : -1;
}

/* Plain queue BFS on the host, for --verify. */
static void bfs_cpu(uint64_t n, const EdgeT *rowptr, const VertexT *col,
                    VertexT src, LevelT *label)
{
    VertexT *queue = (VertexT *)malloc(n * sizeof(VertexT));
    for (uint64_t v = 0; v < n; v++) label[v] = MYINFINITY;
    uint64_t head = 0, tail = 0;
    label[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        VertexT v = queue[head++];
        for (EdgeT e = rowptr[v]; e < rowptr[v + 1]; e++) {
            VertexT u = col[e];
            if (label[u] == MYINFINITY) {
                label[u] = label[v] + 1;
                queue[tail++] = u;
            }
        }
    }
    free(queue);
}

int main(int argc, char *argv[])
{
    uint64_t n = 100003, m = 0, seed = 42;
    unsigned deg = 8;
    const char *in_path = NULL, *out_path = NULL;
    long long src_arg = -1;
    int verify = 1, npos = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc) in_path = argv[++i];
        else if (!strcmp(argv[i], "-w") && i + 1 < argc) out_path = argv[++i];
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) src_arg = atoll(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) deg = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-verify")) verify = 0;
        else if (npos == 0) { n = strtoull(argv[i], NULL, 0); npos++; }
        else if (npos == 1) { seed = strtoull(argv[i], NULL, 0); npos++; }
        else { fprintf(stderr, "unexpected argument %s\n", argv[i]); return 2; }
    }

    EdgeT *rowptr_h = NULL;
    VertexT *col_h = NULL;
    if (in_path) {
        if (read_graph(in_path, &n, &m, &rowptr_h, &col_h)) return 1;
    } else {
        gen_graph(n, deg, seed, &rowptr_h, &col_h, &m);
        if (out_path && write_graph(out_path, n, m, rowptr_h, col_h)) return 1;
    }
    const VertexT src = src_arg >= 0 ? (VertexT)src_arg : (VertexT)(n / 2 + 1);
    fprintf(stderr, "vertices %llu edges %llu source %u\n",
            (unsigned long long)n, (unsigned long long)m, src);

    EdgeT *rowptr_d;
    VertexT *col_d;
    LevelT *label_d;
    bool *changed_d;
    cuda_err_chk(cudaMalloc((void **)&rowptr_d, (n + 1) * sizeof(EdgeT)));
    cuda_err_chk(cudaMalloc((void **)&col_d, m * sizeof(VertexT)));
    cuda_err_chk(cudaMalloc((void **)&label_d, n * sizeof(LevelT)));
    cuda_err_chk(cudaMalloc((void **)&changed_d, sizeof(bool)));
    cuda_err_chk(cudaMemcpy(rowptr_d, rowptr_h, (n + 1) * sizeof(EdgeT), cudaMemcpyHostToDevice));
    cuda_err_chk(cudaMemcpy(col_d, col_h, m * sizeof(VertexT), cudaMemcpyHostToDevice));
    cuda_err_chk(cudaMemset(label_d, 0xFF, n * sizeof(LevelT)));
    cuda_err_chk(cudaMemset(label_d + src, 0, sizeof(LevelT)));

    const uint64_t numthreads = BLOCK_SIZE;
    const uint64_t numblocks = (n * WARP_SIZE + numthreads - 1) / numthreads;
    dim3 blockDim(BLOCK_SIZE, 1, 1);
    dim3 gridDim((unsigned)numblocks, 1, 1);

    cudaEvent_t start, end;
    cuda_err_chk(cudaEventCreate(&start));
    cuda_err_chk(cudaEventCreate(&end));
    cuda_err_chk(cudaEventRecord(start, 0));

    LevelT level = 0;
    bool changed_h;
    do {
        changed_h = false;
        cuda_err_chk(cudaMemcpy(changed_d, &changed_h, sizeof(bool), cudaMemcpyHostToDevice));
        kernel_bfs_warp<<<gridDim, blockDim>>>(rowptr_d, col_d, label_d, level, n, changed_d);
        cuda_err_chk(cudaGetLastError());
        cuda_err_chk(cudaMemcpy(&changed_h, changed_d, sizeof(bool), cudaMemcpyDeviceToHost));
        level++;
    } while (changed_h);

    cuda_err_chk(cudaEventRecord(end, 0));
    cuda_err_chk(cudaEventSynchronize(end));
    float ms = 0;
    cuda_err_chk(cudaEventElapsedTime(&ms, start, end));
    fprintf(stderr, "levels %u time %.3f ms\n", level, ms);

    LevelT *label_h = (LevelT *)malloc(n * sizeof(LevelT));
    cuda_err_chk(cudaMemcpy(label_h, label_d, n * sizeof(LevelT), cudaMemcpyDeviceToHost));

    int rc = 0;
    if (verify) {
        LevelT *ref = (LevelT *)malloc(n * sizeof(LevelT));
        bfs_cpu(n, rowptr_h, col_h, src, ref);
        uint64_t bad = 0;
        for (uint64_t v = 0; v < n; v++) {
            if (ref[v] != label_h[v]) {
                if (bad < 5)
                    fprintf(stderr, "vertex %llu: gpu %u cpu %u\n",
                            (unsigned long long)v, label_h[v], ref[v]);
                bad++;
            }
        }
        fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        rc = bad != 0;
        free(ref);
    }

    unsigned long long checksum = 0;
    for (uint64_t v = 0; v < n; v++)
        if (label_h[v] != MYINFINITY)
            checksum += (unsigned long long)(label_h[v] + 1) * (v % 1021 + 1);
    printf("checksum: %llu\n", checksum);

    cuda_err_chk(cudaEventDestroy(start));
    cuda_err_chk(cudaEventDestroy(end));
    cuda_err_chk(cudaFree(rowptr_d));
    cuda_err_chk(cudaFree(col_d));
    cuda_err_chk(cudaFree(label_d));
    cuda_err_chk(cudaFree(changed_d));
    free(label_h);
    free(rowptr_h);
    free(col_h);
    return rc;
}
