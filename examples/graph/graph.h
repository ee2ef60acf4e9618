// graph.h: the CSR graph and the GPU entry points shared by main.cu,
// bfs.cu and degree.cu.
#ifndef GRAPH_EXAMPLE_GRAPH_H
#define GRAPH_EXAMPLE_GRAPH_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                   \
  do {                                                                  \
    cudaError_t e__ = (x);                                              \
    if (e__ != cudaSuccess) {                                           \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,   \
              cudaGetErrorString(e__));                                 \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)

typedef unsigned int EdgeT;
typedef unsigned int VertexT;
#define BLOCK 256
#define UNVISITED 0xffffffffu

struct Csr {
  std::vector<EdgeT> rowptr; // n + 1 offsets into col
  std::vector<VertexT> col;  // m neighbour ids
  VertexT vertices() const { return VertexT(rowptr.size() - 1); }
};

// A random directed graph: n vertices, about n * deg edges, every vertex
// reachable from vertex 0 through a ring.
inline Csr make_graph(VertexT n, unsigned deg, uint64_t seed)
{
  Csr g;
  g.rowptr.assign(n + 1, 0);
  uint64_t s = seed;
  auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return unsigned(s >> 33);
  };
  std::vector<std::vector<VertexT>> adj(n);
  for (VertexT v = 0; v < n; v++) {
    adj[v].push_back((v + 1) % n);
    for (unsigned k = 1; k < deg; k++)
      adj[v].push_back(next() % n);
  }
  for (VertexT v = 0; v < n; v++) {
    g.rowptr[v + 1] = g.rowptr[v] + EdgeT(adj[v].size());
    g.col.insert(g.col.end(), adj[v].begin(), adj[v].end());
  }
  return g;
}

// bfs.cu: BFS depth of every vertex from source (UNVISITED if unreached).
std::vector<unsigned> gpu_bfs(const Csr& g, VertexT source);

// degree.cu: in-degree of every vertex.
std::vector<unsigned> gpu_in_degrees(const Csr& g);

#endif // GRAPH_EXAMPLE_GRAPH_H
