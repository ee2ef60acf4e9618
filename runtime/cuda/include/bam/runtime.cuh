// bam::runtime: owns one cache, one backend and the arrays made on it.
//
//   bam::runtime rt;                                  // from BAM_* variables
//   bam::array<float> a = rt.array_from_host(h, n);
//   kernel<<<g, b>>>(a);
//   rt.copy_to_host(a, h, n);                         // flush + copy out + check
//
// Arrays are handles into the runtime: they stay valid until rt.free(a) or
// the runtime is destroyed. Host calls are not thread-safe against each
// other; kernels using the arrays may run on any stream, but flush(),
// copy_to_host(), free() and drop_cache() synchronize the device first.
#ifndef BAM_RUNTIME_CUH
#define BAM_RUNTIME_CUH

#include <bam/array.cuh>
#include <bam/config.h>
#include <bam/error.h>
#include <bam/stats.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

namespace detail {
template <class U>
struct same { // keeps a parameter out of template deduction (T comes from the array)
  using type = U;
};
} // namespace detail

class runtime {
public:
  runtime();                          // config::from_env()
  explicit runtime(const config& cfg);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  template <class T>
  array<T> array_from_host(const T* src, size_t n, const char* name = nullptr)
  {
    return make<T>(n, source::host, src, std::string(), 0, name);
  }
  template <class T>
  array<T> array_from_file(const std::string& path, size_t offset_bytes, size_t n, const char* name = nullptr)
  {
    return make<T>(n, source::file, nullptr, path, offset_bytes, name);
  }
  template <class T>
  array<T> array_from_device(const T* dptr, size_t n, const char* name = nullptr)
  {
    return make<T>(n, source::device, dptr, std::string(), 0, name);
  }
  template <class T>
  array<T> array_zeros(size_t n, const char* name = nullptr)
  {
    return make<T>(n, source::zeros, nullptr, std::string(), 0, name);
  }
  // An array over memory the GPU can already address, read and written in
  // place with plain loads and stores (like a resident array): managed
  // memory (cudaMallocManaged), pinned host memory with a device mapping
  // (cudaHostAlloc, cudaMallocHost, cudaHostGetDevicePointer's pointer) or
  // device memory of the current GPU. No copy and no ownership: the program
  // keeps using and freeing ptr; free(a) releases only the handle (free it
  // before the memory). n elements from ptr. Pageable host memory (malloc,
  // new) throws bam::error. `bamgen port` makes one right after a
  // host-visible buffer's allocation and passes it to every launch.
  template <class T>
  array<T> array_wrap(T* ptr, size_t n, const char* name = nullptr)
  {
    detail::array_meta m = create_wrapped(n, sizeof(T), const_cast<std::remove_const_t<T>*>(ptr), name);
    return detail::array_factory::make<T>(device_ctx(), m, slots(), n, line_shift());
  }

  // n elements whose every byte is (unsigned char)byte, as after
  // cudaMalloc + cudaMemset(p, byte, n * sizeof(T)) (what `bamgen port`
  // makes of that pair). The contents are staged on the host, as
  // array_from_host does.
  template <class T>
  array<T> array_filled(size_t n, int byte, const char* name = nullptr)
  {
    if (n > SIZE_MAX / sizeof(T))
      throw error("bam::runtime: array_filled: " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                  " bytes overflow size_t");
    std::unique_ptr<unsigned char[]> tmp(new unsigned char[n ? n * sizeof(T) : 1]);
    std::memset(tmp.get(), static_cast<unsigned char>(byte), n * sizeof(T));
    return make<T>(n, source::host, tmp.get(), std::string(), 0, name);
  }

  // Replace a's contents as a whole by making it again: a is freed, then
  // becomes a new array of n elements, copied from src (remake_from_host)
  // or zero (remake_zeros). What `bamgen port` makes of a whole-buffer
  // cudaMemcpy host-to-device or cudaMemset(p, 0, ...) after the first:
  //   cudaMemcpy(p, h, n * sizeof(T), cudaMemcpyHostToDevice) -> rt.remake_from_host(p_bam, h, n)
  //   cudaMemset(p, 0, n * sizeof(T))                         -> rt.remake_zeros(p_bam, n)
  // (src converts to const T* as for array_from_host<T>; a partial copy or
  // set keeps the array: write_bytes, fill_bytes.)
  //
  // An array of the same size read in place (resident or zero-copy, not
  // cached: no lines to drop) is overwritten where it is instead: remaking
  // it off hbm would allocate pinned host memory and a GPU copy again on
  // every call (sssp's per-round frontier reset: 2 ms a round on the host
  // backend).
  template <class T>
  void remake_from_host(array<T>& a, const typename detail::same<T>::type* src, size_t n, const char* name = nullptr)
  {
    if (reusable(a, n)) {
      write_bytes(a, 0, src, n * sizeof(T));
      return;
    }
    free(a);
    a = array_from_host<T>(src, n, name);
  }
  template <class T>
  void remake_zeros(array<T>& a, size_t n, const char* name = nullptr)
  {
    if (reusable(a, n)) {
      fill_bytes(a, 0, 0, n * sizeof(T));
      return;
    }
    free(a);
    a = array_zeros<T>(n, name);
  }

  // Placement by size: announces the byte sizes of arrays the program is
  // about to make (`bamgen port` emits it before the first one). The
  // runtime ranks them, smallest first, against BAM_GPU_BUDGET, so only
  // the largest leave GPU memory; each array made later with an announced
  // size (rounded to whole lines) takes that decision. Without it, arrays
  // are resident first come, first served. What the first checked launch
  // (check_launch) finds not yet made is dropped: its room is free again.
  template <class... Bytes>
  void plan_arrays(Bytes... bytes)
  {
    plan_sizes({static_cast<size_t>(bytes)...});
  }
  void plan_sizes(std::initializer_list<size_t> bytes);

  // Flushes dirty lines, copies a[0, n) out, then check()s.
  template <class T>
  void copy_to_host(const array<T>& a, std::remove_const_t<T>* dst, size_t n)
  {
    copy_out(detail::array_factory::meta(a).id, dst, n, a.size(), sizeof(T));
  }

  void flush();   // write back every dirty line, then check()
  void check();   // throw bam::error if a device-side failure was recorded

  // Right after a host synchronization of the program (`bamgen port` adds it
  // after cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize
  // and device-to-host cudaMemcpy in functions that use bam arrays): throws
  // bam::error, naming this place, if a kernel recorded a storage failure,
  // so the program stops before it uses data read from a failed line. When
  // nothing failed it costs one read of mapped host memory (no device call).
  void check_sync(const char* file, int line)
  {
    if (failure_seen())
      check_at(file, line);
  }

  template <class T>
  void free(array<T>& a)
  {
    release_array(detail::array_factory::meta(a).id);
    a = array<T>();
  }

  [[nodiscard]] bam::stats stats();
  // Lines and bytes moved between the backend and the cache for one array
  // (bytes fetched per traversal: issue 18).
  template <class T>
  [[nodiscard]] bam::array_stats stats_of(const array<T>& a)
  {
    return array_stats_of(detail::array_factory::meta(a).id);
  }
  [[nodiscard]] bam::array_stats array_stats_of(uint32_t id);
  void reset_stats();
  void print_stats(FILE* out = stdout);
  void drop_cache(); // flush, then empty the cache (cold-cache measurements)

  [[nodiscard]] const config& cfg() const noexcept;
  [[nodiscard]] size_t cache_lines() const noexcept;
  [[nodiscard]] size_t live_arrays() const noexcept; // arrays made and not yet freed

  // Right after a launch of a ported kernel (`bamgen port` adds it to every
  // one): throws bam::error naming the kernel, the block size and CUDA's
  // reason when the launch failed. A ported kernel needs more registers than
  // the original, so a block size the original could launch may now fail
  // with "too many resources requested for launch". Also reports a storage
  // failure an earlier kernel recorded (check_sync), for programs that
  // launch several kernels before they synchronize.
  void check_launch(const char* kernel, dim3 block)
  {
    end_plan();
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
      return check_sync(nullptr, 0); // an earlier kernel's recorded failure (one mapped-memory read)
    std::string dims = std::to_string(block.x);
    if (block.y != 1 || block.z != 1)
      dims += "x" + std::to_string(block.y) + "x" + std::to_string(block.z);
    std::string msg = std::string("bam: the launch of ") + kernel + " with blocks of " + dims + " threads failed: " +
                      cudaGetErrorString(e);
    if (e == cudaErrorLaunchOutOfResources)
      msg += "; the ported kernel uses more registers than the original: launch it with smaller blocks "
             "(or cap its registers with __launch_bounds__ or -maxrregcount)";
    throw error(msg);
  }
  // Partial copies and sets in place, for ported host code: the array keeps
  // its handle and contents outside the range. `first` is an element index
  // (as in `p + first`), `bytes` a byte count (as cudaMemcpy/cudaMemset
  // take it). Each flushes the cache and checks for device-side failures;
  // a range past the array's end throws bam::error.
  //   cudaMemcpy(&p[i], &x, sizeof x, cudaMemcpyHostToDevice) -> rt.write_bytes(p_bam, i, &x, sizeof x)
  //   cudaMemset(p + off, v, n)                                -> rt.fill_bytes(p_bam, off, v, n)
  //   cudaMemcpy(&x, p + i, sizeof x, cudaMemcpyDeviceToHost) -> rt.read_bytes(p_bam, i, &x, sizeof x)
  template <class T>
  void write_bytes(const array<T>& a, size_t first, const void* src, size_t bytes)
  {
    range_io(detail::array_factory::meta(a).id, element_offset(a, first), bytes, a.size() * sizeof(T), src, nullptr, 0);
  }
  template <class T>
  void fill_bytes(const array<T>& a, size_t first, int value, size_t bytes)
  {
    range_io(detail::array_factory::meta(a).id, element_offset(a, first), bytes, a.size() * sizeof(T), nullptr, nullptr, value);
  }
  template <class T>
  void read_bytes(const array<T>& a, size_t first, void* dst, size_t bytes)
  {
    range_io(detail::array_factory::meta(a).id, element_offset(a, first), bytes, a.size() * sizeof(T), nullptr, dst, 0);
  }
  // The byte offset of element `first`; past the end it is SIZE_MAX, which
  // range_io reports as outside the array (no wrap-around in the multiply).
  template <class T>
  static size_t element_offset(const array<T>& a, size_t first) noexcept
  {
    return first > a.size() ? SIZE_MAX : first * sizeof(T);
  }
  // Device-to-device copy between two arrays (cudaMemcpyDeviceToDevice):
  // `bytes` from src's element `src_first` to dst's element `dst_first`.
  // Where CUDA reaches both arrays' memory (hbm, host, resident copies,
  // wrapped memory) one cudaMemcpy after the cache's dirty lines are written
  // back and dst's are dropped; storage backends go through host memory.
  template <class T, class U>
  void copy_bytes(const array<T>& dst, size_t dst_first, const array<U>& src, size_t src_first, size_t bytes)
  {
    copy_range(detail::array_factory::meta(dst).id, element_offset(dst, dst_first), a_bytes(dst),
               detail::array_factory::meta(src).id, element_offset(src, src_first), a_bytes(src), bytes);
  }

  // The same, where the block size is not known (an expression with side effects).
  void check_launch(const char* kernel)
  {
    end_plan();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      throw error(std::string("bam: the launch of ") + kernel + " failed: " + cudaGetErrorString(e));
    check_sync(nullptr, 0);
  }

private:
  template <class T>
  [[nodiscard]] static bool reusable(const array<T>& a, size_t n) noexcept
  {
    return a.size() == n && n != 0 && a.placement() != bam::placement::cache;
  }

  enum class source { host, file, device, zeros };
  struct impl;

  template <class T>
  array<T> make(size_t n, source src, const void* p, const std::string& path, size_t offset, const char* name)
  {
    detail::array_meta m = create(n, sizeof(T), src, p, path, offset, name);
    return detail::array_factory::make<T>(device_ctx(), m, slots(), n, line_shift());
  }

  detail::array_meta create_wrapped(size_t n, size_t elem_bytes, void* ptr, const char* name);
  // n elements of elem_bytes each (the byte counts are overflow-checked).
  detail::array_meta create(size_t n, size_t elem_bytes, source src, const void* p, const std::string& path,
                            size_t offset, const char* name);
  [[nodiscard]] bool failure_seen() const noexcept; // mapped host word: a kernel recorded a device-side failure
  void end_plan() noexcept;                         // drop announced sizes not made (plan_arrays)
  void copy_out(uint32_t id, void* dst, size_t n, size_t array_n, size_t elem_bytes);
  // write_bytes (src), read_bytes (dst) or fill_bytes (neither: value).
  void range_io(uint32_t id, size_t offset, size_t bytes, size_t array_bytes, const void* src, void* dst, int value);
  void copy_range(uint32_t dst_id, size_t dst_offset, size_t dst_bytes, uint32_t src_id, size_t src_offset,
                  size_t src_bytes, size_t bytes);
  template <class T>
  static size_t a_bytes(const array<T>& a) noexcept
  {
    return a.size() * sizeof(T);
  }
  void release_array(uint32_t id);
  // check(), with the place of the program's synchronization in the message (file may be nullptr).
  void check_at(const char* file, int line);
  const detail::cache_ctx* device_ctx() const noexcept;
  unsigned char* slots() const noexcept;
  uint32_t line_shift() const noexcept;

  std::unique_ptr<impl> p_;
};

// The process-wide runtime, built from the environment on first use and
// torn down at exit.
runtime& default_runtime();

// Prints the default runtime's statistics to stderr when it goes out of
// scope, if BAM_STATS=1. `bamgen port` declares one at the top of main, so
// every return path prints them. Never throws (a destructor).
class stats_at_exit {
public:
  stats_at_exit() = default;
  stats_at_exit(const stats_at_exit&) = delete;
  stats_at_exit& operator=(const stats_at_exit&) = delete;
  ~stats_at_exit()
  {
    try {
      runtime& rt = default_runtime();
      if (rt.cfg().stats)
        rt.print_stats(stderr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bam: statistics not printed: %s\n", e.what());
    }
  }
};

BAM_NAMESPACE_END // namespace bam

#endif // BAM_RUNTIME_CUH
