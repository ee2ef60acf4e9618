// A CPU stand-in for the part of the CUDA runtime API that
// bench/matrix/memmode.h uses, for bench/matrix/test/shim_test.sh: every
// call is appended to a log (mock_log) that the test prints, memory comes
// from malloc, and the free GPU memory is MOCK_FREE_MIB (default 1024).
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaMemoryAdvise { cudaMemAdviseSetReadMostly = 1, cudaMemAdviseSetPreferredLocation = 3 };
enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
struct CUstream_st;
typedef CUstream_st* cudaStream_t;
struct CUevent_st;
typedef CUevent_st* cudaEvent_t;
#define cudaMemAttachGlobal 0x01
#define cudaHostAllocMapped 0x02

inline std::string& mock_log()
{
  static std::string s;
  return s;
}
struct mock_block {
  cudaMemoryType type;
  size_t bytes;
};
inline std::map<void*, mock_block>& mock_mem()
{
  static std::map<void*, mock_block> m;
  return m;
}
// The block that contains p, or end().
inline std::map<void*, mock_block>::iterator mock_find(const void* p)
{
  auto& m = mock_mem();
  auto it = m.upper_bound(const_cast<void*>(p));
  if (it == m.begin())
    return m.end();
  --it;
  const char* b = static_cast<const char*>(it->first);
  if (static_cast<const char*>(p) < b + it->second.bytes)
    return it;
  return m.end();
}
inline void mock_call(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#include <cstdarg>
inline void mock_call(const char* fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  mock_log() += buf;
  mock_log() += '\n';
}
inline const char* mock_type(const void* p)
{
  auto it = mock_find(p);
  if (it == mock_mem().end())
    return "pageable";
  switch (it->second.type) {
  case cudaMemoryTypeDevice: return "device";
  case cudaMemoryTypeManaged: return "managed";
  case cudaMemoryTypeHost: return "pinned";
  default: return "?";
  }
}
inline void* mock_new(size_t n, cudaMemoryType t)
{
  void* p = std::calloc(1, n ? n : 1);
  mock_mem()[p] = mock_block{t, n ? n : 1};
  return p;
}
#include <unistd.h>
inline cudaError_t cudaGetDevice(int* d)
{
  if (const char* v = std::getenv("MOCK_SLEEP_S")) // a slow job, for the timeout test
    sleep(unsigned(std::atoi(v)));
  *d = 0;
  return cudaSuccess;
}
// The stack limit (the fork point must leave it as it is): the mock keeps
// it, and MOCK_STACK_COST_MIB per KiB of stack comes off the free memory
// the mock reports, as the driver's reservation would.
enum cudaLimit { cudaLimitStackSize = 0 };
inline size_t& mock_stack_limit()
{
  static size_t v = 1024;
  return v;
}
inline cudaError_t cudaDeviceGetLimit(size_t* v, cudaLimit)
{
  *v = mock_stack_limit();
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSetLimit(cudaLimit, size_t v)
{
  mock_stack_limit() = v;
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total)
{
  const char* v = std::getenv("MOCK_FREE_MIB");
  const char* c = std::getenv("MOCK_STACK_COST_MIB");
  *free_b = (size_t(v ? std::atol(v) : 1024) - (c ? std::atol(c) : 0) * (mock_stack_limit() >> 10)) << 20;
  *total = size_t(80) << 30;
  return cudaSuccess;
}
inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "mock error"; }
inline cudaError_t cudaMalloc(void** p, size_t n)
{
  *p = mock_new(n, cudaMemoryTypeDevice);
  mock_call("cudaMalloc %zu", n);
  return cudaSuccess;
}
inline cudaError_t cudaMallocManaged(void** p, size_t n, unsigned flags = cudaMemAttachGlobal)
{
  *p = mock_new(n, cudaMemoryTypeManaged);
  mock_call("cudaMallocManaged %zu flags=%u", n, flags);
  return cudaSuccess;
}
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned flags)
{
  *p = mock_new(n, cudaMemoryTypeHost);
  mock_call("cudaHostAlloc %zu flags=%u", n, flags);
  return cudaSuccess;
}
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned)
{
  *d = h;
  return cudaSuccess;
}
inline cudaError_t mock_release(void* p, const char* api, cudaMemoryType want1, cudaMemoryType want2)
{
  if (!p)
    return cudaSuccess;
  auto it = mock_mem().find(p);
  if (it == mock_mem().end() || (it->second.type != want1 && it->second.type != want2)) {
    mock_call("%s %s: WRONG FREE", api, mock_type(p));
    return cudaErrorInvalidValue;
  }
  mock_call("%s %s", api, mock_type(p));
  mock_mem().erase(it);
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) { return mock_release(p, "cudaFree", cudaMemoryTypeDevice, cudaMemoryTypeManaged); }
inline cudaError_t cudaFreeHost(void* p) { return mock_release(p, "cudaFreeHost", cudaMemoryTypeHost, cudaMemoryTypeHost); }
inline const char* mock_kind(cudaMemcpyKind k)
{
  static const char* names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice", "Default"};
  return names[k];
}
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k)
{
  mock_call("cudaMemcpy %s <- %s %zu %s", mock_type(d), mock_type(s), n, mock_kind(k));
  std::memcpy(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t = 0)
{
  mock_call("cudaMemcpyAsync %s <- %s %zu %s", mock_type(d), mock_type(s), n, mock_kind(k));
  std::memcpy(d, s, n);
  return cudaSuccess;
}
enum cudaMemLocationType { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1 };
struct cudaMemLocation { // declared by CUDA 11.2 and later
  cudaMemLocationType type;
  int id;
};
#ifdef MOCK_CUDA13 // CUDA 13's signatures: a cudaMemLocation, not a device number
#define CUDART_VERSION 13000
inline cudaError_t cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise a, cudaMemLocation loc)
{
  if (loc.type != cudaMemLocationTypeDevice)
    mock_call("cudaMemAdvise: NOT TO A DEVICE");
  mock_call("cudaMemAdvise %s %zu %s", mock_type(p), n, a == cudaMemAdviseSetReadMostly ? "ReadMostly" : "PreferredLocation");
  return cudaSuccess;
}
inline cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, cudaMemLocation loc, unsigned flags, cudaStream_t = 0)
{
  if (loc.type != cudaMemLocationTypeDevice || flags != 0)
    mock_call("cudaMemPrefetchAsync: NOT TO A DEVICE");
  mock_call("cudaMemPrefetchAsync %s %zu", mock_type(p), n);
  return cudaSuccess;
}
#else
#define CUDART_VERSION 11080
inline cudaError_t cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise a, int)
{
  mock_call("cudaMemAdvise %s %zu %s", mock_type(p), n, a == cudaMemAdviseSetReadMostly ? "ReadMostly" : "PreferredLocation");
  return cudaSuccess;
}
inline cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, int, cudaStream_t = 0)
{
  mock_call("cudaMemPrefetchAsync %s %zu", mock_type(p), n);
  return cudaSuccess;
}
#endif
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { mock_call("cudaStreamSynchronize"); return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { mock_call("cudaDeviceSynchronize"); return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = 0) { mock_call("cudaEventRecord"); return cudaSuccess; }
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p)
{
  auto it = mock_find(p);
  a->type = it == mock_mem().end() ? cudaMemoryTypeUnregistered : it->second.type;
  return cudaSuccess;
}
