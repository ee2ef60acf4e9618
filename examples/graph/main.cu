// main.cu: the host program. It makes a graph, runs BFS and in-degrees on
// the GPU (bfs.cu, degree.cu) and checks both against the CPU.
//
// usage: graph [n] [seed]
#include <queue>

#include "graph.h"

static std::vector<unsigned> cpu_bfs(const Csr& g, VertexT source)
{
  std::vector<unsigned> level(g.vertices(), UNVISITED);
  std::queue<VertexT> q;
  level[source] = 0;
  q.push(source);
  while (!q.empty()) {
    VertexT v = q.front();
    q.pop();
    for (EdgeT e = g.rowptr[v]; e < g.rowptr[v + 1]; e++)
      if (level[g.col[e]] == UNVISITED) {
        level[g.col[e]] = level[v] + 1;
        q.push(g.col[e]);
      }
  }
  return level;
}

int main(int argc, char** argv)
{
  const VertexT n = argc > 1 ? VertexT(strtoul(argv[1], nullptr, 10)) : 100000;
  const uint64_t seed = argc > 2 ? strtoull(argv[2], nullptr, 10) : 1;
  const Csr g = make_graph(n, 8, seed);
  fprintf(stderr, "graph: n=%u m=%u\n", n, g.rowptr[n]);

  const std::vector<unsigned> level = gpu_bfs(g, 0);
  const std::vector<unsigned> degree = gpu_in_degrees(g);

  const std::vector<unsigned> ref = cpu_bfs(g, 0);
  std::vector<unsigned> ref_degree(n, 0);
  for (VertexT u : g.col) ref_degree[u]++;
  size_t bad = 0;
  unsigned long long sum = 0;
  for (VertexT v = 0; v < n; v++) {
    bad += (level[v] != ref[v]) + (degree[v] != ref_degree[v]);
    sum += (unsigned long long)(level[v] + 1) * (degree[v] + 1) * (v % 1021 + 1);
  }
  printf("checksum: %llu\n", sum);
  fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
