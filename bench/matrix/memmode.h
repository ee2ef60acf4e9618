// bench/matrix/memmode.h: run an unmodified CUDA program with its data in
// GPU memory, in managed memory (UVM) or in mapped host memory (zero-copy).
//
// Force-included, never #included by the program itself:
//
//   nvcc -include bench/matrix/memmode.h prog.cu -o prog
//   BENCH_MEM=gpu|uvm|zerocopy|asis ./prog ...
//
// The header includes <cuda_runtime.h> first and then defines function-like
// macros for cudaMalloc, cudaMallocManaged, cudaHostAlloc, cudaFree,
// cudaFreeHost, cudaMemcpy, cudaMemcpyAsync, cudaHostGetDevicePointer and
// (prefetch points only) cudaGetLastError, cudaDeviceSynchronize,
// cudaEventRecord, cudaStreamSynchronize, so the program's calls go through
// the functions below. Only allocations of at
// least BENCH_MIN_BYTES (default 1 MiB) change place: flags, counters and
// small result buffers stay where the program puts them. The modes:
//
//   gpu       the data in GPU memory. cudaMalloc is left alone. A program
//             that allocates its data host-visibly by design (cc:
//             cudaMallocManaged filled on the host; pagerank: the in-edge
//             list in cudaHostAlloc mapped memory) gets managed memory with
//             the GPU as preferred location, prefetched to the GPU before
//             the first kernel (see "prefetch points" below).
//   uvm       cudaMallocManaged for every data allocation, with
//             cudaMemAdviseSetReadMostly on the arrays the host fills (or
//             cudaMemAdviseSetPreferredLocation=GPU on the others) and
//             cudaMemPrefetchAsync to the GPU once their content is in place.
//             Never oversubscribed: when the managed bytes would not fit in
//             the GPU memory that was free when the program started, the
//             program stops at that allocation with exit status 77 and a line
//             "memmode: skip: ..." on stderr (nothing was touched yet).
//   zerocopy  cudaHostAlloc(cudaHostAllocMapped) for the data allocations the
//             host fills (BENCH_HOST_SEQS, else every data allocation): the
//             kernels read them over PCIe. Arrays the GPU fills itself (levels,
//             distances, outputs) stay in GPU memory, as in EMOGI-style
//             zero-copy code.
//   asis      the program exactly as written (the shim only counts).
//
// Which allocations "the host fills" is learnt from a run in gpu mode with
// BENCH_ALLOC_LOG=FILE: one line per data allocation, `seq bytes api
// host_filled` (seq counts the program's allocation calls from 0; the
// program is deterministic, so the same seq names the same array in every
// mode). A cudaMemcpy from host memory into an allocation marks it
// host-filled; an allocation the program itself makes host-visible
// (cudaMallocManaged, cudaHostAlloc) counts as host-filled unless it is
// listed in BENCH_GPU_SEQS (the runner knows that cc's labels, managed,
// are filled by a kernel: the shim cannot see host stores). The runner
// passes the host-filled seqs to the uvm and zerocopy runs as
// BENCH_HOST_SEQS=1,2,5 or BENCH_HOST_SEQS=@FILE (the log itself).
//
// cudaMemcpy / cudaMemcpyAsync: a copy that touches an allocation this shim
// moved gets cudaMemcpyDefault (unified addressing: the runtime finds out
// where each side lives; managed and mapped pinned memory are valid
// cudaMemcpy endpoints). cudaMemset / cudaMemsetAsync are not wrapped: they
// are valid on managed and on mapped pinned host memory as they are.
//
// Prefetch points (uvm, and gpu for host-visible allocations): a managed
// allocation is advised when it is made and prefetched (cudaMemPrefetchAsync
// on the legacy stream, then cudaStreamSynchronize) (a) right after a
// cudaMemcpy/cudaMemcpyAsync from the host into it and (b) at the first
// wrapped call that is not an allocation, after it was made (a program that
// fills managed memory on the host, like cc, calls cudaGetLastError after
// its first launch). So no prefetch lands inside a timed loop unless the
// program copies a data array from the host inside it.
//
// The first wrapped call is also the fork point of forkpoint.h (BENCH_JOBS:
// generate the input once, run many jobs from here).
//
// At exit the shim prints one line on stderr:
//   memmode: mode=uvm data_allocs=5 peak_data_bytes=N moved_bytes=N prefetches=N free_at_start=N
// (the runner reads the footprint from it). Errors of the shim itself:
// "memmode: error: ..." and exit status 3.
#pragma once

#include <cuda_runtime.h>

#include "forkpoint.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench_memmode {

enum class mode { gpu, uvm, zerocopy, asis };

// Where an allocation was put.
enum class where { device, managed, host_mapped, untouched_host };

struct alloc {
  void* p;
  size_t bytes;
  int seq;          // index among the program's allocation calls
  const char* api;  // what the program called
  where w;
  bool data;        // >= min_bytes: the shim may place it elsewhere
  bool moved;       // placed differently from what the program asked for
  bool hinted;      // managed memory the shim advises and prefetches
  bool host_filled; // a copy from the host wrote into it (or host-visible by design)
  bool pending;     // hinted: still to be prefetched at the next non-allocation call
  bool read_mostly; // hinted: advised read-mostly (else preferred location = GPU)
  bool live;
};

struct state {
  mode m = mode::asis;
  bool inited = false;
  size_t min_bytes = size_t(1) << 20;
  size_t margin = size_t(256) << 20;
  size_t free_at_start = 0;
  size_t live_managed = 0; // managed bytes made by the shim, live (the oversubscription guard)
  size_t live_device = 0;  // data bytes in cudaMalloc, live
  size_t live_data = 0, peak_data = 0, moved_bytes = 0;
  int next_seq = 0;
  int device = 0;
  int prefetches = 0;
  bool have_host_seqs = false;
  std::vector<int> host_seqs;
  std::vector<int> gpu_seqs; // BENCH_GPU_SEQS: filled on the GPU, whatever the program's allocator says
  std::vector<alloc> allocs;
  std::string log_path;
  bool verbose = false;
};

inline state& st()
{
  static state s;
  return s;
}

inline const char* mode_name(mode m)
{
  switch (m) {
  case mode::gpu: return "gpu";
  case mode::uvm: return "uvm";
  case mode::zerocopy: return "zerocopy";
  case mode::asis: return "asis";
  }
  return "?";
}

inline const char* where_name(where w)
{
  switch (w) {
  case where::device: return "device";
  case where::managed: return "managed";
  case where::host_mapped: return "host";
  case where::untouched_host: return "host";
  }
  return "?";
}

[[noreturn]] inline void fail(const char* what, cudaError_t e)
{
  std::fprintf(stderr, "memmode: error: %s: %s\n", what, cudaGetErrorString(e));
  std::fflush(stderr);
  std::exit(3);
}

// At exit: the allocation log (BENCH_ALLOC_LOG) and the summary line.
inline void report()
{
  state& s = st();
  if (!s.log_path.empty()) {
    if (FILE* f = std::fopen(s.log_path.c_str(), "w")) {
      for (const auto& a : s.allocs)
        if (a.data)
          std::fprintf(f, "%d %zu %s %d\n", a.seq, a.bytes, a.api, a.host_filled ? 1 : 0);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "memmode: error: BENCH_ALLOC_LOG=%s: cannot open for writing\n", s.log_path.c_str());
    }
  }
  int n = 0;
  for (const auto& a : s.allocs)
    n += a.data ? 1 : 0;
  std::fprintf(stderr,
               "memmode: mode=%s data_allocs=%d peak_data_bytes=%zu moved_bytes=%zu prefetches=%d "
               "free_at_start=%zu\n",
               mode_name(s.m), n, s.peak_data, s.moved_bytes, s.prefetches, s.free_at_start);
  std::fflush(stderr);
}

inline void init()
{
  state& s = st();
  if (s.inited)
    return;
  s.inited = true;
  // The program has built its input and not yet touched CUDA: with
  // BENCH_JOBS set, run the jobs from here (forkpoint.h).
  bench_fork::point();
  const char* m = std::getenv("BENCH_MEM");
  const std::string ms = m ? m : "";
  if (ms == "gpu")
    s.m = mode::gpu;
  else if (ms == "uvm")
    s.m = mode::uvm;
  else if (ms == "zerocopy")
    s.m = mode::zerocopy;
  else if (ms == "asis" || ms.empty())
    s.m = mode::asis;
  else {
    std::fprintf(stderr, "memmode: error: BENCH_MEM=%s: expected gpu, uvm, zerocopy or asis\n", ms.c_str());
    std::exit(3);
  }
  if (const char* v = std::getenv("BENCH_MIN_BYTES"); v && *v)
    s.min_bytes = std::strtoull(v, nullptr, 10);
  if (const char* v = std::getenv("BENCH_MARGIN_BYTES"); v && *v)
    s.margin = std::strtoull(v, nullptr, 10);
  s.verbose = std::getenv("BENCH_MEM_VERBOSE") != nullptr;
  if (const char* v = std::getenv("BENCH_HOST_SEQS"); v && v[0] == '@') {
    // @FILE: the host-filled allocations of an allocation log (BENCH_ALLOC_LOG)
    s.have_host_seqs = true;
    FILE* f = std::fopen(v + 1, "r");
    if (!f) {
      std::fprintf(stderr, "memmode: error: BENCH_HOST_SEQS=%s: cannot read the allocation log\n", v);
      std::exit(3);
    }
    int seq = 0, filled = 0;
    unsigned long long bytes = 0;
    char api[64];
    while (std::fscanf(f, "%d %llu %63s %d", &seq, &bytes, api, &filled) == 4)
      if (filled)
        s.host_seqs.push_back(seq);
    std::fclose(f);
  } else if (const char* v = std::getenv("BENCH_HOST_SEQS"); v) {
    s.have_host_seqs = true;
    const char* q = v;
    while (*q) {
      char* end = nullptr;
      const long n = std::strtol(q, &end, 10);
      if (end == q || (*end != ',' && *end != '\0')) {
        std::fprintf(stderr, "memmode: error: BENCH_HOST_SEQS=%s: expected numbers separated by commas\n", v);
        std::exit(3);
      }
      s.host_seqs.push_back(int(n));
      q = *end == ',' ? end + 1 : end;
    }
  }
  if (const char* v = std::getenv("BENCH_GPU_SEQS"); v && *v) {
    const char* q = v;
    while (*q) {
      char* end = nullptr;
      const long n = std::strtol(q, &end, 10);
      if (end == q || (*end != ',' && *end != '\0')) {
        std::fprintf(stderr, "memmode: error: BENCH_GPU_SEQS=%s: expected numbers separated by commas\n", v);
        std::exit(3);
      }
      s.gpu_seqs.push_back(int(n));
      q = *end == ',' ? end + 1 : end;
    }
  }
  if (const char* v = std::getenv("BENCH_ALLOC_LOG"); v && *v)
    s.log_path = v;
  cudaError_t e = cudaGetDevice(&s.device);
  if (e != cudaSuccess)
    fail("cudaGetDevice", e);
  size_t total = 0;
  e = cudaMemGetInfo(&s.free_at_start, &total);
  if (e != cudaSuccess)
    fail("cudaMemGetInfo", e);
  std::atexit(report);
}

inline alloc* find(const void* p)
{
  for (auto& a : st().allocs)
    if (a.live && a.p == p)
      return &a;
  return nullptr;
}

// The live allocation whose bytes contain p (copies may start inside an array).
inline alloc* containing(const void* p)
{
  const char* c = static_cast<const char*>(p);
  for (auto& a : st().allocs) {
    const char* b = static_cast<const char*>(a.p);
    if (a.live && c >= b && c < b + a.bytes)
      return &a;
  }
  return nullptr;
}

// Whether allocation seq goes to host memory in zerocopy mode and is advised
// read-mostly in uvm mode: listed in BENCH_HOST_SEQS, or every data
// allocation when the list is not given.
inline bool gpu_filled(int seq)
{
  for (int q : st().gpu_seqs)
    if (q == seq)
      return true;
  return false;
}

inline bool listed_host(int seq)
{
  state& s = st();
  if (gpu_filled(seq))
    return false;
  if (!s.have_host_seqs)
    return true;
  for (int q : s.host_seqs)
    if (q == seq)
      return true;
  return false;
}

// Refuses (exit 77) a managed allocation that would oversubscribe the GPU
// memory that was free when the program started. Nothing was touched yet.
inline void guard_managed(size_t bytes, const char* api)
{
  state& s = st();
  const size_t data = s.live_managed + s.live_device + bytes;
  if (data + s.margin > s.free_at_start) {
    std::fprintf(stderr,
                 "memmode: skip: %s of %zu MiB would make %zu MiB of managed + device data (+%zu MiB margin) on a "
                 "GPU with %zu MiB free at start; managed memory is never oversubscribed here\n",
                 api, bytes >> 20, data >> 20, s.margin >> 20, s.free_at_start >> 20);
    std::fflush(stderr);
    std::_Exit(77);
  }
}

// CUDA 13 takes a cudaMemLocation where CUDA 12 and earlier took a device
// number. Whichever cudaMemAdvise / cudaMemPrefetchAsync the headers declare
// is picked by overload resolution (the int form is in a template with a
// dependent argument type, so a CUDA 13 build never checks it).
template <class T> struct dep {
  using int_t = int;
};

template <class Loc>
auto advise_with(const void* p, size_t n, cudaMemoryAdvise a, int, Loc loc, int)
    -> decltype(cudaMemAdvise(p, n, a, loc))
{
  return cudaMemAdvise(p, n, a, loc);
}
template <class Loc>
cudaError_t advise_with(const void* p, size_t n, cudaMemoryAdvise a, int device, Loc, long)
{
  const typename dep<Loc>::int_t d = device;
  return cudaMemAdvise(p, n, a, d);
}
template <class Loc>
auto prefetch_with(const void* p, size_t n, int, Loc loc, cudaStream_t stream, int)
    -> decltype(cudaMemPrefetchAsync(p, n, loc, 0u, stream))
{
  return cudaMemPrefetchAsync(p, n, loc, 0u, stream);
}
template <class Loc>
cudaError_t prefetch_with(const void* p, size_t n, int device, Loc, cudaStream_t stream, long)
{
  const typename dep<Loc>::int_t d = device;
  return cudaMemPrefetchAsync(p, n, d, stream);
}

inline cudaMemLocation gpu_location(int device)
{
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  return where;
}

inline cudaError_t prefetch_to_gpu(const void* p, size_t bytes, int device, cudaStream_t stream)
{
  return prefetch_with(p, bytes, device, gpu_location(device), stream, 0);
}

inline cudaError_t advise_gpu(const void* p, size_t bytes, cudaMemoryAdvise advice, int device)
{
  return advise_with(p, bytes, advice, device, gpu_location(device), 0);
}

inline void prefetch(alloc& a, cudaStream_t stream, bool sync)
{
  state& s = st();
  cudaError_t e = prefetch_to_gpu(a.p, a.bytes, s.device, stream);
  if (e != cudaSuccess)
    fail("cudaMemPrefetchAsync", e);
  s.prefetches++;
  if (sync) {
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
      fail("cudaStreamSynchronize after a prefetch", e);
  }
  a.pending = false;
}

// Prefetches the hinted allocations made since the last non-allocation call.
inline void flush_pending()
{
  bool any = false;
  for (auto& a : st().allocs)
    if (a.live && a.hinted && a.pending) {
      prefetch(a, 0, false);
      any = true;
    }
  if (any) {
    const cudaError_t e = cudaStreamSynchronize(0);
    if (e != cudaSuccess)
      fail("cudaStreamSynchronize after prefetching", e);
  }
}

inline alloc& record(void* p, size_t bytes, int seq, const char* api, where w, bool moved, bool hinted,
                     bool host_filled)
{
  state& s = st();
  alloc a{p, bytes, seq, api, w, bytes >= s.min_bytes, moved, hinted, host_filled, hinted, false, true};
  if (hinted) {
    cudaError_t e;
    if (s.m == mode::uvm && (host_filled || listed_host(seq))) {
      e = advise_gpu(p, bytes, cudaMemAdviseSetReadMostly, s.device);
      a.read_mostly = true;
    } else {
      e = advise_gpu(p, bytes, cudaMemAdviseSetPreferredLocation, s.device);
    }
    if (e != cudaSuccess)
      fail("cudaMemAdvise", e);
  }
  if (a.data) {
    s.live_data += bytes;
    if (s.live_data > s.peak_data)
      s.peak_data = s.live_data;
    if (moved)
      s.moved_bytes += bytes;
  }
  if (w == where::device && a.data)
    s.live_device += bytes;
  if (w == where::managed && hinted)
    s.live_managed += bytes;
  if (s.verbose)
    std::fprintf(stderr, "memmode: #%d %s %zu bytes -> %s%s%s\n", seq, api, bytes, where_name(w),
                 hinted ? (a.read_mostly ? " read-mostly" : " preferred-gpu") : "", moved ? " (moved)" : "");
  s.allocs.push_back(a);
  return s.allocs.back();
}

inline void forget(alloc& a)
{
  state& s = st();
  a.live = false;
  if (a.data)
    s.live_data -= a.bytes;
  if (a.w == where::device && a.data)
    s.live_device -= a.bytes;
  if (a.w == where::managed && a.hinted)
    s.live_managed -= a.bytes;
}

// cudaHostAlloc(cudaHostAllocMapped) whose device address is its host
// address (unified addressing), as kernels are handed the same pointer.
inline cudaError_t host_mapped(void** p, size_t bytes)
{
  cudaError_t e = cudaHostAlloc(p, bytes, cudaHostAllocMapped);
  if (e != cudaSuccess)
    return e;
  void* d = nullptr;
  e = cudaHostGetDevicePointer(&d, *p, 0);
  if (e != cudaSuccess)
    fail("cudaHostGetDevicePointer", e);
  if (d != *p) {
    std::fprintf(stderr, "memmode: error: mapped host memory has a device address (%p) other than its host address "
                         "(%p): zerocopy mode needs unified addressing\n", d, *p);
    std::exit(3);
  }
  return cudaSuccess;
}

inline cudaError_t malloc_void(void** p, size_t bytes)
{
  init();
  state& s = st();
  const int seq = s.next_seq++;
  const bool data = bytes >= s.min_bytes;
  cudaError_t e;
  if (data && s.m == mode::uvm) {
    guard_managed(bytes, "cudaMalloc");
    e = cudaMallocManaged(p, bytes, cudaMemAttachGlobal);
    if (e == cudaSuccess)
      record(*p, bytes, seq, "cudaMalloc", where::managed, true, true, false);
    return e;
  }
  if (data && s.m == mode::zerocopy && listed_host(seq)) {
    e = host_mapped(p, bytes);
    if (e == cudaSuccess)
      record(*p, bytes, seq, "cudaMalloc", where::host_mapped, true, false, false);
    return e;
  }
  e = cudaMalloc(p, bytes);
  if (e == cudaSuccess)
    record(*p, bytes, seq, "cudaMalloc", where::device, false, false, false);
  return e;
}

inline cudaError_t malloc_managed_void(void** p, size_t bytes, unsigned flags)
{
  init();
  state& s = st();
  const int seq = s.next_seq++;
  const bool data = bytes >= s.min_bytes;
  cudaError_t e;
  if (data && s.m == mode::zerocopy && listed_host(seq)) {
    e = host_mapped(p, bytes);
    if (e == cudaSuccess)
      record(*p, bytes, seq, "cudaMallocManaged", where::host_mapped, true, false, true);
    return e;
  }
  const bool hint = data && (s.m == mode::gpu || s.m == mode::uvm);
  if (hint)
    guard_managed(bytes, "cudaMallocManaged");
  e = cudaMallocManaged(p, bytes, flags);
  if (e == cudaSuccess)
    record(*p, bytes, seq, "cudaMallocManaged", where::managed, false, hint, !gpu_filled(seq));
  return e;
}

inline cudaError_t host_alloc_void(void** p, size_t bytes, unsigned flags)
{
  init();
  state& s = st();
  const int seq = s.next_seq++;
  const bool data = bytes >= s.min_bytes;
  cudaError_t e;
  if (data && (s.m == mode::gpu || s.m == mode::uvm)) {
    guard_managed(bytes, "cudaHostAlloc");
    e = cudaMallocManaged(p, bytes, cudaMemAttachGlobal);
    if (e == cudaSuccess)
      record(*p, bytes, seq, "cudaHostAlloc", where::managed, true, true, !gpu_filled(seq));
    return e;
  }
  e = cudaHostAlloc(p, bytes, flags);
  if (e == cudaSuccess)
    record(*p, bytes, seq, "cudaHostAlloc", where::untouched_host, false, false, true);
  return e;
}

inline cudaError_t free_void(void* p, bool program_said_host)
{
  init();
  if (p == nullptr)
    return program_said_host ? cudaFreeHost(p) : cudaFree(p);
  alloc* a = find(p);
  if (!a)
    return program_said_host ? cudaFreeHost(p) : cudaFree(p);
  const where w = a->w;
  forget(*a);
  if (w == where::host_mapped || w == where::untouched_host)
    return cudaFreeHost(p);
  return cudaFree(p);
}

// Whether a copy with this kind reads host memory at src.
inline bool from_host(const void* src, cudaMemcpyKind kind)
{
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost)
    return true;
  if (kind != cudaMemcpyDefault)
    return false;
  if (alloc* a = containing(src))
    return a->w == where::host_mapped || a->w == where::untouched_host;
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, src) != cudaSuccess) {
    cudaGetLastError(); // older runtimes report pageable memory as an error
    return true;
  }
  return at.type == cudaMemoryTypeHost || at.type == cudaMemoryTypeUnregistered;
}

// The kind to pass: cudaMemcpyDefault when either side is memory the shim
// placed elsewhere or made managed, else the program's own kind.
inline cudaMemcpyKind kind_for(void* dst, const void* src, cudaMemcpyKind kind)
{
  const alloc* d = containing(dst);
  const alloc* s = containing(src);
  if ((d && (d->moved || d->hinted)) || (s && (s->moved || s->hinted)))
    return cudaMemcpyDefault;
  return kind;
}

inline cudaError_t memcpy_(void* dst, const void* src, size_t n, cudaMemcpyKind kind)
{
  init();
  flush_pending();
  const bool host_src = from_host(src, kind);
  const cudaError_t e = cudaMemcpy(dst, src, n, kind_for(dst, src, kind));
  if (e != cudaSuccess)
    return e;
  if (alloc* a = containing(dst); a && host_src && a->data) {
    a->host_filled = true;
    if (a->hinted)
      prefetch(*a, 0, true);
  }
  return e;
}

inline cudaError_t memcpy_async_(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream = 0)
{
  init();
  flush_pending();
  const bool host_src = from_host(src, kind);
  const cudaError_t e = cudaMemcpyAsync(dst, src, n, kind_for(dst, src, kind), stream);
  if (e != cudaSuccess)
    return e;
  if (alloc* a = containing(dst); a && host_src && a->data) {
    a->host_filled = true;
    if (a->hinted)
      prefetch(*a, stream, false);
  }
  return e;
}

inline cudaError_t host_get_device_pointer_(void** d, void* h, unsigned flags)
{
  init();
  if (alloc* a = containing(h); a && a->w == where::managed && a->moved) {
    *d = h; // managed memory: the same address on both sides
    return cudaSuccess;
  }
  return cudaHostGetDevicePointer(d, h, flags);
}

// Prefetch points that are not copies.
inline cudaError_t get_last_error_()
{
  init();
  flush_pending();
  return cudaGetLastError();
}

inline cudaError_t device_synchronize_()
{
  init();
  flush_pending();
  return cudaDeviceSynchronize();
}

inline cudaError_t event_record_(cudaEvent_t ev, cudaStream_t stream = 0)
{
  init();
  flush_pending();
  return cudaEventRecord(ev, stream);
}

inline cudaError_t stream_synchronize_(cudaStream_t stream)
{
  init();
  flush_pending();
  return cudaStreamSynchronize(stream);
}

template <class T> cudaError_t malloc_(T** p, size_t bytes)
{
  return malloc_void(reinterpret_cast<void**>(p), bytes);
}
template <class T> cudaError_t malloc_managed_(T** p, size_t bytes, unsigned flags = cudaMemAttachGlobal)
{
  return malloc_managed_void(reinterpret_cast<void**>(p), bytes, flags);
}
template <class T> cudaError_t host_alloc_(T** p, size_t bytes, unsigned flags)
{
  return host_alloc_void(reinterpret_cast<void**>(p), bytes, flags);
}
template <class T> cudaError_t free_(T* p)
{
  return free_void(const_cast<void*>(static_cast<const void*>(p)), false);
}
inline cudaError_t free_(std::nullptr_t) { return free_void(nullptr, false); }
inline cudaError_t free_host_(std::nullptr_t) { return free_void(nullptr, true); }
template <class T> cudaError_t free_host_(T* p)
{
  return free_void(const_cast<void*>(static_cast<const void*>(p)), true);
}
template <class T> cudaError_t host_get_device_pointer_(T** d, void* h, unsigned flags)
{
  return host_get_device_pointer_(reinterpret_cast<void**>(d), h, flags);
}

} // namespace bench_memmode

// Variadic, so that arguments with commas inside template brackets pass.
#define cudaMalloc(...) ::bench_memmode::malloc_(__VA_ARGS__)
#define cudaMallocManaged(...) ::bench_memmode::malloc_managed_(__VA_ARGS__)
#define cudaHostAlloc(...) ::bench_memmode::host_alloc_(__VA_ARGS__)
#define cudaFree(...) ::bench_memmode::free_(__VA_ARGS__)
#define cudaFreeHost(...) ::bench_memmode::free_host_(__VA_ARGS__)
#define cudaMemcpy(...) ::bench_memmode::memcpy_(__VA_ARGS__)
#define cudaMemcpyAsync(...) ::bench_memmode::memcpy_async_(__VA_ARGS__)
#define cudaHostGetDevicePointer(...) ::bench_memmode::host_get_device_pointer_(__VA_ARGS__)
#define cudaGetLastError(...) ::bench_memmode::get_last_error_(__VA_ARGS__)
#define cudaDeviceSynchronize(...) ::bench_memmode::device_synchronize_(__VA_ARGS__)
#define cudaEventRecord(...) ::bench_memmode::event_record_(__VA_ARGS__)
#define cudaStreamSynchronize(...) ::bench_memmode::stream_synchronize_(__VA_ARGS__)
