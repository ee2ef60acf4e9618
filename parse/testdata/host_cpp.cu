// Host-heavy C++ in the way real CUDA projects write it: file loading,
// std containers, threads, exceptions, streams and callbacks.
#pragma once
#include <atomic>
#include <cassert>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#ifndef NDEBUG
#define DBG(...) fprintf(stderr, __VA_ARGS__)
#else
#define DBG(...)
#endif

typedef struct {
  unsigned long long nodes;
  unsigned long long edges;
} header_t;

enum class Mode : int { Bfs = 1, Sssp = 2, Pr = 4 };

static const char *const kModeNames[] = {"bfs", "sssp", "pr"};

__device__ __managed__ int g_counter;
__constant__ float c_weights[32] = {0.5f, 0.25f};

struct Options {
  std::string path;
  Mode mode = Mode::Bfs;
  int source = 0;
  bool verbose{false};
  std::function<void(int)> on_level;
};

std::ostream &operator<<(std::ostream &os, const Options &o) {
  return os << "Options{" << o.path << ", " << static_cast<int>(o.mode) << "}";
}

__device__ int atomic_max_float(float *addr, float val) {
  int *iaddr = (int *)addr;
  int old = *iaddr, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val) break;
    old = atomicCAS(iaddr, assumed, __float_as_int(val));
  } while (assumed != old);
  return old;
}

__global__ void level_kernel(const unsigned long long *__restrict__ offsets,
                             const unsigned *__restrict__ edges, int *dist, int level,
                             unsigned long long n, int *frontier_size) {
  unsigned long long v = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (v >= n || dist[v] != level) return;
  for (auto e = offsets[v]; e < offsets[v + 1]; ++e) {
    const unsigned u = __ldg(&edges[e]);
    if (atomicCAS(&dist[u], -1, level + 1) == -1) {
      atomicAdd(frontier_size, 1);
    }
  }
  unsigned active = __activemask();
  if (__any_sync(active, dist[v] > 0)) __syncwarp(active);
  assert(level >= 0);
  if (threadIdx.x == 0 && blockIdx.x == 0) printf("level %d done\n", level);
  switch (level & 3) {
  case 0:
    atomicAdd(&g_counter, 1);
    [[fallthrough]];
  case 1:
    break;
  default:
    goto done;
  }
done:
  return;
}

class Graph {
 public:
  explicit Graph(const std::string &path) { load(path); }
  Graph(Graph &&other) noexcept = default;
  ~Graph() = default;
  unsigned long long nodes() const noexcept { return header_.nodes; }
  const std::vector<unsigned long long> &offsets() const { return offsets_; }
  template <typename F> void for_each_edge(unsigned long long v, F &&f) const {
    for (auto e = offsets_[v]; e < offsets_[v + 1]; ++e) f(edges_[e]);
  }

 private:
  void load(const std::string &path);
  header_t header_{};
  std::vector<unsigned long long> offsets_;
  std::vector<unsigned> edges_;
};

void Graph::load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  in.read(reinterpret_cast<char *>(&header_), sizeof(header_));
  offsets_.resize(header_.nodes + 1);
  edges_.resize(header_.edges);
  in.read(reinterpret_cast<char *>(offsets_.data()), offsets_.size() * sizeof(offsets_[0]));
  in.read(reinterpret_cast<char *>(edges_.data()), static_cast<std::streamsize>(edges_.size() * sizeof(unsigned)));
  char line[256];
  std::snprintf(line, sizeof line, "%llu nodes", header_.nodes);
  DBG("%s\n", line);
}

static Options parse_args(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-s" && i + 1 < argc) {
      o.source = std::stoi(argv[++i]);
    } else if (a.rfind("--mode=", 0) == 0) {
      const auto m = a.substr(7);
      o.mode = m == "sssp" ? Mode::Sssp : m == "pr" ? Mode::Pr : Mode::Bfs;
    } else if (a == "-v") {
      o.verbose = true;
    } else {
      o.path = a;
    }
  }
  return o;
}

int main(int argc, char **argv) try {
  const Options opts = parse_args(argc, argv);
  std::cout << opts << std::endl;
  Graph g(opts.path);
  std::unordered_map<int, std::vector<int>> buckets;
  std::mutex mu;
  std::atomic<int> done{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t]() {
      std::lock_guard<std::mutex> lock(mu);
      buckets[t].push_back(t * 2);
      done.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto &w : workers) w.join();
  for (const auto &[k, v] : buckets) {
    std::cout << k << ": " << v.size() << '\n';
  }
  unsigned long long *d_off = nullptr;
  unsigned *d_edges = nullptr;
  int *d_dist = nullptr, *d_size = nullptr;
  cudaMalloc((void **)&d_off, g.offsets().size() * sizeof(unsigned long long));
  cudaMalloc(reinterpret_cast<void **>(&d_edges), sizeof(unsigned) * 1024);
  cudaMalloc(&d_dist, g.nodes() * sizeof(int));
  cudaMalloc(&d_size, sizeof(int));
  cudaMemcpy(d_off, g.offsets().data(), g.offsets().size() * sizeof(*d_off), cudaMemcpyHostToDevice);
  cudaMemset(d_dist, 0xff, g.nodes() * sizeof(int));
  const int threads = 256;
  const unsigned blocks = static_cast<unsigned>((g.nodes() + threads - 1) / threads);
  int level = 0, h_size = 1;
  while (h_size > 0) {
    cudaMemset(d_size, 0, sizeof(int));
    level_kernel<<<blocks, threads>>>(d_off, d_edges, d_dist, level, g.nodes(), d_size);
    cudaMemcpy(&h_size, d_size, sizeof(int), cudaMemcpyDeviceToHost);
    if (opts.on_level) opts.on_level(level);
    ++level;
  }
  int (*cmp)(const void *, const void *) = nullptr;
  (void)cmp;
  std::cout << kModeNames[static_cast<int>(opts.mode) >> 1] << " levels=" << level << '\n';
  cudaFree(d_off);
  return EXIT_SUCCESS;
} catch (const std::exception &e) {
  std::cerr << "error: " << e.what() << std::endl;
  return 1;
}
