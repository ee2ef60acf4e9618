// bam::array<T>: the device-side handle generated code indexes like a
// pointer, and bam::array_ref<T>, per-thread reuse of the last line.
//
//   T v = a[i];  a[i] = v;  a[i] += v;  a.atomic_add(i, v);
//
// Placement (decided per array by the runtime when the array is made): an
// array whose data is resident in GPU memory, or is read zero-copy from
// mapped host memory, carries a direct pointer, and every access is a plain
// load, store or atomic on it behind one uniform branch. Otherwise reads
// try the cache's hit path first (detail/warp_cache.cuh, hit_read: no
// atomics, no warp vote) and fall back to the pinned path out of line;
// writes and atomics are warp-coalesced (the lanes of a warp that touch the
// same line pin it once, through one leader).
//
// Element types must have a power-of-two size no larger than a line, so
// lines hold whole elements and a file or host buffer maps onto lines
// without padding.
#ifndef BAM_ARRAY_CUH
#define BAM_ARRAY_CUH

#include <bam/detail/cache_types.cuh>
#include <bam/detail/config.cuh>
#include <bam/detail/element_atomics.cuh>
#include <bam/detail/warp_cache.cuh>

#include <type_traits>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

template <class T>
class array;
template <class T>
class array_ref;
template <class T>
class odt_tile;
template <class T, bool ReadOnlyPath = false>
class direct_array;

namespace detail {
struct array_factory;

[[nodiscard]] BAM_HD constexpr uint32_t log2_exact(uint64_t v) noexcept
{
  uint32_t s = 0;
  while ((uint64_t(1) << s) < v)
    ++s;
  return s;
}

// What a[i] returns for writable arrays: reads convert, writes assign.
// Holds the index, not a pointer, so no line stays pinned between uses.
template <class A>
class element_ref {
public:
  using value_type = typename A::value_type;

  BAM_HD element_ref(const A& a, size_t i) noexcept : a_(a), i_(i) {}

#if BAM_HAS_DEVICE_CODE
  __device__ operator value_type() const { return a_.read(i_); }
  __device__ const element_ref& operator=(value_type v) const
  {
    a_.write(i_, v);
    return *this;
  }
  __device__ const element_ref& operator=(const element_ref& o) const { return *this = value_type(o); }

#  define BAM_COMPOUND(op)                                                                                \
    __device__ value_type operator op##=(value_type v) const                                              \
    {                                                                                                     \
      return a_.update(i_, [v](value_type x) { return value_type(x op v); });                             \
    }
  BAM_COMPOUND(+)
  BAM_COMPOUND(-)
  BAM_COMPOUND(*)
  BAM_COMPOUND(/)
  BAM_COMPOUND(%)
  BAM_COMPOUND(&)
  BAM_COMPOUND(|)
  BAM_COMPOUND(^)
  BAM_COMPOUND(<<)
  BAM_COMPOUND(>>)
#  undef BAM_COMPOUND

  __device__ value_type operator++() const { return a_.update(i_, [](value_type x) { return value_type(x + 1); }); }
  __device__ value_type operator--() const { return a_.update(i_, [](value_type x) { return value_type(x - 1); }); }
  __device__ value_type operator++(int) const { return value_type(++*this - 1); }
  __device__ value_type operator--(int) const { return value_type(--*this + 1); }
#endif

private:
  const A& a_;
  size_t i_;
};
} // namespace detail

template <class T>
class array {
public:
  using value_type = std::remove_const_t<T>;
  static constexpr bool writable = !std::is_const<T>::value;
  static_assert(sizeof(value_type) > 0 && (sizeof(value_type) & (sizeof(value_type) - 1)) == 0,
                "bam::array<T>: sizeof(T) must be a power of two");
  static_assert(std::is_trivially_copyable<value_type>::value, "bam::array<T>: T must be trivially copyable");

  array() = default;

  // array<T> -> array<const T>, like T* -> const T*.
  template <class U, std::enable_if_t<std::is_same<const U, T>::value && !std::is_same<U, T>::value, int> = 0>
  BAM_HD array(const array<U>& o) noexcept
      : ctx_(o.ctx_), meta_(o.meta_), slots_(o.slots_), n_(o.n_), line_shift_(o.line_shift_),
        epl_shift_(o.epl_shift_)
  {}

  [[nodiscard]] BAM_HD size_t size() const noexcept { return n_; }
  [[nodiscard]] BAM_HD uint32_t elems_per_line() const noexcept { return 1u << epl_shift_; }
  [[nodiscard]] BAM_HD size_t line_of(size_t i) const noexcept { return i >> epl_shift_; }
  [[nodiscard]] BAM_HD size_t line_bytes() const noexcept { return size_t(1) << line_shift_; }
  // Runtime-wide array id (stats and error messages name arrays by it).
  [[nodiscard]] BAM_HD uint32_t id() const noexcept { return meta_.id; }
  // How elements are reached: through the cache, or directly (resident in
  // GPU memory, or zero-copy host memory). Decided when the array was made.
  [[nodiscard]] BAM_HD bam::placement placement() const noexcept { return bam::placement(meta_.placement); }

#if BAM_HAS_DEVICE_CODE
  // The index and the context pointer are opaque (detail::opaque): the
  // line, the element's offset in it and the addresses of the hit path are
  // computed at each access instead of being hoisted out of the kernel's
  // loops, where they sat in callee-saved registers across every slow-path
  // call of the loop (issue 18's register budget; a few integer
  // instructions per access instead).
  __device__ value_type read(size_t i) const
  {
    BAM_ASSERT(i < n_, "bam::array::read: index out of range");
    i = detail::opaque(i);
    if (meta_.direct != nullptr)
      return reinterpret_cast<const value_type*>(meta_.direct)[i];
    const size_t line = i >> epl_shift_;
    return detail::element_read<value_type>(detail::opaque_ptr(ctx_), meta_, slots_, line_shift_, line,
                                            i - (line << epl_shift_));
  }

  __device__ void write(size_t i, value_type v) const
  {
    static_assert(writable, "bam::array<const T>::write: array is read-only");
    access<true>(i, [v](value_type* p) {
      *p = v;
      return 0;
    });
  }

  __device__ auto operator[](size_t i) const
  {
    if constexpr (writable)
      return detail::element_ref<array>(*this, i);
    else
      return read(i);
  }

  // *p = f(*p) while the line is pinned (not atomic); returns the new value.
  template <class F>
  __device__ value_type update(size_t i, F f) const
  {
    static_assert(writable, "bam::array<const T>::update: array is read-only");
    return access<true>(i, [f](value_type* p) {
      value_type v = f(*p);
      *p = v;
      return v;
    });
  }

  // Element atomics on the cached line; each returns the old value.
#  define BAM_ATOMIC(name)                                                                   \
    __device__ value_type atomic_##name(size_t i, value_type v) const                       \
    {                                                                                        \
      static_assert(writable, "bam::array<const T>::atomic_" #name ": array is read-only"); \
      return access<true>(i, [v](value_type* p) { return detail::elem_atomic_##name(p, v); }); \
    }
  BAM_ATOMIC(add)
  BAM_ATOMIC(sub)
  BAM_ATOMIC(min)
  BAM_ATOMIC(max)
  BAM_ATOMIC(or)
  BAM_ATOMIC(and)
  BAM_ATOMIC(xor)
  BAM_ATOMIC(exch)
#  undef BAM_ATOMIC

  __device__ value_type atomic_cas(size_t i, value_type cmp, value_type v) const
  {
    static_assert(writable, "bam::array<const T>::atomic_cas: array is read-only");
    return access<true>(i, [cmp, v](value_type* p) { return detail::elem_atomic_cas(p, cmp, v); });
  }
#endif

private:
  template <class>
  friend class array;
  template <class>
  friend class array_ref;
  template <class>
  friend class odt_tile;
  template <class, bool>
  friend class direct_array;
  friend struct detail::array_factory;

#if BAM_HAS_DEVICE_CODE
  // Pin i's line (coalesced with the warp), run f on the element, unpin.
  template <bool Write, class F>
  __device__ auto access(size_t i, F f) const
  {
    BAM_ASSERT(i < n_, "bam::array::access: index out of range");
    i = detail::opaque(i);
    if (meta_.direct != nullptr)
      return f(reinterpret_cast<value_type*>(meta_.direct) + i);
    const size_t line = i >> epl_shift_;
    return BAM_COLD((detail::access_slow<Write, value_type, F>))(*ctx_, meta_.id, line, i - (line << epl_shift_), f,
                                                                 __activemask());
  }
#endif

  const detail::cache_ctx* ctx_ = nullptr; // device memory
  detail::array_meta meta_{};
  unsigned char* slots_ = nullptr;
  size_t n_ = 0;
  uint32_t line_shift_ = 0;
  uint32_t epl_shift_ = 0; // log2(elements per line)
};

// Per-thread reuse of the last line touched (thesis §5.3.3, "cache-line
// reference reuse"): r[i] on the line already held is a plain memory access;
// another line releases the old one and pins the new one (coalesced across
// the warp). The destructor releases. Not copyable: it owns a reference.
template <class T>
class array_ref {
public:
  using value_type = typename array<T>::value_type;
  static constexpr bool writable = array<T>::writable;

  BAM_HD explicit array_ref(const array<T>& a) noexcept : a_(a) {}
  BAM_HD explicit array_ref(const array<T>* a) noexcept : a_(*a) {}
  // Over the direct view bam::by_placement passes to a kernel's direct
  // version: every access is a plain one, as on the kernel's pointer.
  template <bool ReadOnlyPath>
  BAM_HD explicit array_ref(const direct_array<T, ReadOnlyPath>& a) noexcept : a_(a), direct_view_(true)
  {}
  array_ref(const array_ref&) = delete;
  array_ref& operator=(const array_ref&) = delete;

#if BAM_HAS_DEVICE_CODE
  __device__ ~array_ref() { drop(); }

  __device__ value_type read(size_t i) { return *element(i, false); }
  __device__ void write(size_t i, value_type v)
  {
    static_assert(writable, "bam::array_ref<const T>::write: array is read-only");
    *element(i, true) = v;
  }

  __device__ auto operator[](size_t i)
  {
    if constexpr (writable)
      return detail::element_ref<array_ref>(*this, i);
    else
      return read(i);
  }

  template <class F>
  __device__ value_type update(size_t i, F f)
  {
    value_type* p = element(i, true);
    value_type v = f(*p);
    *p = v;
    return v;
  }

  // Pointer to element i inside its line, which this array_ref now holds
  // pinned; valid until the array_ref moves to another line or drops it.
  // Elements [i, end of i's line) are plain memory: a loop over a whole
  // line reads them with ordinary loads, as many in flight as it likes,
  // instead of a line check per element.
  __device__ const value_type* line_ptr(size_t i) { return element(i, false); }

  // Release the held line now (before a long stretch without accesses).
  __device__ void drop()
  {
    if (line_ != none) {
      if (a_.meta_.direct == nullptr) // direct placement: nothing was pinned
        detail::warp_release_each(a_.meta_, line_);
      line_ = none;
    }
  }
#else
  ~array_ref() = default;
#endif

  [[nodiscard]] BAM_HD size_t size() const noexcept { return a_.size(); }
  [[nodiscard]] BAM_HD uint32_t elems_per_line() const noexcept { return a_.elems_per_line(); }
  [[nodiscard]] BAM_HD size_t line_of(size_t i) const noexcept { return a_.line_of(i); }

private:
  template <class>
  friend class detail::element_ref;
  static constexpr uint64_t none = ~0ull;

#if BAM_HAS_DEVICE_CODE
  // Const overloads so element_ref<array_ref> can call through a const&.
  __device__ value_type read(size_t i) const { return const_cast<array_ref*>(this)->read(i); }
  __device__ void write(size_t i, value_type v) const { const_cast<array_ref*>(this)->write(i, v); }
  template <class F>
  __device__ value_type update(size_t i, F f) const
  {
    return const_cast<array_ref*>(this)->update(i, f);
  }

  // A kernel's cached version reaches a direct array (mixed placements)
  // through the same line check as a cached one (switch_to points base_
  // at the line in place, nothing pinned), so the loop keeps no second
  // pointer per ref live across its slow-path calls. The index is opaque
  // (detail::opaque): nothing derived from it is hoisted out of the loop
  // to stay live across those calls either.
  __device__ value_type* element(size_t i, bool write)
  {
    BAM_ASSERT(i < a_.n_, "bam::array_ref::element: index out of range");
    if (direct_view_)
      return reinterpret_cast<value_type*>(a_.meta_.direct) + i;
    i = detail::opaque(i);
    const uint64_t line = i >> a_.epl_shift_;
    if (line != line_)
      switch_to(line);
    if (write && !dirty_)
      mark_dirty();
    return base_ + (i - (line << a_.epl_shift_));
  }

  __device__ void switch_to(uint64_t line)
  {
    drop();
    if (unsigned char* const d = detail::opaque(a_.meta_.direct)) { // direct data: the line in place, no pin, nothing to mark dirty
      base_ = reinterpret_cast<value_type*>(d) + (line << a_.epl_shift_);
      line_ = line;
      dirty_ = true;
      return;
    }
    const detail::cache_ctx* const c = detail::opaque_ptr(a_.ctx_);
    base_ = reinterpret_cast<value_type*>(
        BAM_COLD(detail::warp_hold<false>)(*c, c->arrays[a_.meta_.id], line, sizeof(value_type)));
    line_ = line; // each lane keeps the reference the leader took for it
    dirty_ = false;
  }

  // Writes through an array_ref mark the line dirty once per thread and line;
  // a plain load first keeps most lanes off the atomic.
  __device__ void mark_dirty()
  {
    uint32_t* w = a_.meta_.state + line_;
    detail::line_word::mark_dirty(w, detail::atomic_load(w, detail::order::relaxed));
    dirty_ = true;
  }
#endif

  array<T> a_;
  uint64_t line_ = none;
  value_type* base_ = nullptr;
  bool dirty_ = false;
  bool direct_view_ = false; // made from a direct_array: a[i] is a plain access, no line check
};

// The edge array as an ODT kernel's warp sees it (`bamgen port --opt
// odt`): bam::odt_for_each_tile enters one tile (one line of the array) at
// a time, and t[e] reads edge e of that tile. The first read pins the line
// for the lanes making it (each keeps the reference the leader took for it;
// lanes that first read later pin it again, a hit), every read after that
// is a plain load, and leaving the tile drops the pins. A tile no vertex
// reads is never fetched, so BFS levels that skip most vertices still read
// only the lines they need. Reads only; writes go through the array.
template <class T>
class odt_tile {
public:
  using value_type = typename array<T>::value_type;

  BAM_HD explicit odt_tile(const array<T>& a) noexcept
      : ctx_(a.ctx_), state_(a.meta_.state), direct_(a.meta_.direct), n_(a.n_), id_(a.meta_.id),
        epl_shift_(a.epl_shift_)
  {}
  odt_tile(const odt_tile&) = delete;
  odt_tile& operator=(const odt_tile&) = delete;

  [[nodiscard]] BAM_HD size_t size() const noexcept { return n_; }
  [[nodiscard]] BAM_HD uint32_t elems_per_line() const noexcept { return 1u << epl_shift_; }

#if BAM_HAS_DEVICE_CODE
  __device__ ~odt_tile() { leave(); }

  // Edge e, which must lie in the tile the warp is in.
  __device__ value_type operator[](size_t e)
  {
    BAM_ASSERT((e >> epl_shift_) == line_ && e < n_, "bam::odt_tile: edge outside the current tile");
    if (direct_ != nullptr)
      return reinterpret_cast<const value_type*>(direct_)[e];
    if (base_ == nullptr) {
      const detail::cache_ctx* const c = detail::opaque_ptr(ctx_);
      base_ = reinterpret_cast<const value_type*>(
          BAM_COLD(detail::warp_hold<false>)(*c, c->arrays[id_], line_, sizeof(value_type)));
    }
    return base_[e & ((size_t(1) << epl_shift_) - 1)];
  }

  // Driver hook (odt_for_each_tile): how many of `warps` may hold a tile
  // at once. Each
  // holder keeps its tile's line pinned while its vertex code reads other
  // arrays (or this one outside the tile) through the same cache; with
  // every line held by a tile, those reads found no slot, and the storage
  // backends waited for one (a 16-line cache stalled bfs_thread, cc, sssp
  // and bfs_modes there). Their element reads now read around a full
  // cache, but their writes and atomics still wait for a slot. So at most all but
  // a quarter of the lines (at least one line) are tiles. The host's grid
  // bound (odt_grid) aims at the same, but a grid is whole blocks: this is
  // the bound that holds. Over data read in place (a resident array) it
  // only caps the warps at 2^32 - 1: the result is 32 bits wide, which
  // keeps one register less live across the driver's loop (cc's ODT
  // kernel stays within its known spills), and a grid of 2^32 warps or
  // more would leave the rest idle, still correct.
  __device__ uint32_t holding_warps(unsigned long long warps) const
  {
    uint32_t bound = 0xffffffffu;
    if (direct_ == nullptr) {
      const uint32_t lines = detail::opaque_ptr(ctx_)->n_slots;
      const uint32_t kept = lines / 4 > 0 ? lines / 4 : 1;
      bound = lines > kept ? lines - kept : 1;
    }
    return warps < bound ? uint32_t(warps) : bound;
  }

  // Driver hooks (odt_for_each_tile), called by the whole warp.
  __device__ void enter(unsigned long long tile) { line_ = tile; }
  __device__ void leave()
  {
    if (base_ != nullptr) {
      detail::warp_release_each(state_, line_);
      base_ = nullptr;
    }
  }
#endif

private:
  // What the view needs of the array (not the whole handle: ODT kernels
  // keep their views in the stack frame the out-of-line vertex code reads).
  const detail::cache_ctx* ctx_;
  uint32_t* state_;
  unsigned char* direct_;
  size_t n_;
  uint32_t id_;
  uint32_t epl_shift_;
  uint64_t line_ = ~0ull;
  const value_type* base_ = nullptr;
};

template <class T>
odt_tile(const array<T>&) -> odt_tile<T>;

template <class T>
array_ref(const array<T>&) -> array_ref<T>;
template <class T>
array_ref(const array<T>*) -> array_ref<T>;

// An array known to be direct (resident in GPU memory, or zero-copy host
// memory): every access is a plain load, store or atomic on the pointer,
// with no branch at all, so the compiler treats it exactly like the
// pointer the kernel had before the port (hoists invariant loads out of
// loops, keeps values in registers, vectorises neighbouring reads).
//
// Generated kernels get one only through bam::by_placement, which checks
// placement once at kernel entry. It is still a bam::array<T> (public
// base): a helper taking bam::array<T>, a template deducing T from it, an
// array_ref or a launch argument all accept it unchanged.
//
// ReadOnlyPath: the kernel's pointer was `const T* __restrict__`, which let
// the compiler read it through the read-only (non-coherent) data path
// (LDG.E.CONSTANT); reads of such a view go through a restrict-qualified
// pointer for the same code. The program promised then that nothing writes
// the array during the kernel.
template <class T, bool ReadOnlyPath>
class direct_array : public array<T> {
public:
  using value_type = typename array<T>::value_type;
  static constexpr bool writable = array<T>::writable;
  static_assert(!ReadOnlyPath || !writable, "bam::direct_array: the read-only path is for arrays of const T");
  using pointer = std::conditional_t<writable, value_type*, const value_type*>;

  // a must be direct (a.placement() is not placement::cache).
  BAM_HD explicit direct_array(const array<T>& a) noexcept : array<T>(a) {}

  // The elements themselves, as the kernel's pointer was.
  [[nodiscard]] BAM_HD pointer data() const noexcept { return reinterpret_cast<pointer>(this->meta_.direct); }

#if BAM_HAS_DEVICE_CODE
  // Like p[i] on the original pointer: an lvalue (writable arrays) or a
  // const lvalue, so a[i] += v, a[i]++ and &a[i] mean what they meant (a
  // value on the read-only path).
  __device__ decltype(auto) operator[](size_t i) const
  {
    BAM_ASSERT(i < this->n_, "bam::direct_array: index out of range");
    if constexpr (ReadOnlyPath)
      return ldg_free(i);
    else if constexpr (writable)
      return static_cast<value_type&>(data()[i]);
    else
      return static_cast<const value_type&>(data()[i]);
  }
  __device__ value_type read(size_t i) const { return (*this)[i]; }
  __device__ void write(size_t i, value_type v) const
  {
    static_assert(writable, "bam::array<const T>::write: array is read-only");
    (*this)[i] = v;
  }

private:
  // A read the compiler may send down the read-only path itself: through a
  // restrict-qualified const pointer, like the original's parameter. (Not
  // __ldg: its inline asm keeps loops from being unrolled, so a gather loop
  // had one load in flight per thread: pagerank 4x slower.)
  __device__ value_type ldg_free(size_t i) const
  {
    const value_type* __restrict__ p = data();
    return p[i];
  }

public:
  template <class F>
  __device__ value_type update(size_t i, F f) const
  {
    static_assert(writable, "bam::array<const T>::update: array is read-only");
    value_type& e = (*this)[i];
    return e = f(e);
  }

#  define BAM_DIRECT_ATOMIC(name)                                                            \
    __device__ value_type atomic_##name(size_t i, value_type v) const                       \
    {                                                                                        \
      static_assert(writable, "bam::array<const T>::atomic_" #name ": array is read-only"); \
      return detail::elem_atomic_##name(&(*this)[i], v);                                     \
    }
  BAM_DIRECT_ATOMIC(add)
  BAM_DIRECT_ATOMIC(sub)
  BAM_DIRECT_ATOMIC(min)
  BAM_DIRECT_ATOMIC(max)
  BAM_DIRECT_ATOMIC(or)
  BAM_DIRECT_ATOMIC(and)
  BAM_DIRECT_ATOMIC(xor)
  BAM_DIRECT_ATOMIC(exch)
#  undef BAM_DIRECT_ATOMIC

  __device__ value_type atomic_cas(size_t i, value_type cmp, value_type v) const
  {
    static_assert(writable, "bam::array<const T>::atomic_cas: array is read-only");
    return detail::elem_atomic_cas(&(*this)[i], cmp, v);
  }
#endif
};

namespace detail {
template <class T>
BAM_HD bool is_direct(const array<T>& a) noexcept
{
  return a.placement() != bam::placement::cache;
}
} // namespace detail

// Whether every array is direct (resident in GPU memory, or zero-copy host
// memory): a ported launch then starts the kernel's direct clone
// (`bamgen port`: NAME_bam_direct, compiled over plain pointers only, with
// the registers the original needed) instead of the kernel itself.
template <class... T>
BAM_HD bool all_direct(const array<T>&... arrays) noexcept
{
  return (detail::is_direct(arrays) && ...);
}

// An argument of by_placement / as_direct whose kernel parameter was
// `const T* __restrict__`: its direct view reads through the read-only data
// path, as the original's loads did (`bamgen port` writes
// bam::read_only(p) for such a parameter).
template <class T>
struct read_only_arg {
  array<T> a;
};
template <class T>
BAM_HD read_only_arg<T> read_only(const array<T>& a) noexcept
{
  static_assert(!array<T>::writable, "bam::read_only: for arrays of const T (a const T* __restrict__ parameter)");
  return {a};
}

namespace detail {
template <class T>
BAM_HD const array<T>& array_of(const array<T>& a) noexcept
{
  return a;
}
template <class T>
BAM_HD const array<T>& array_of(const read_only_arg<T>& r) noexcept
{
  return r.a;
}
#if BAM_HAS_DEVICE_CODE
template <class T>
__device__ direct_array<T> direct_view(const array<T>& a) noexcept
{
  return direct_array<T>(a);
}
template <class T>
__device__ direct_array<T, true> direct_view(const read_only_arg<T>& r) noexcept
{
  return direct_array<T, true>(r.a);
}
#endif
} // namespace detail

#if BAM_HAS_DEVICE_CODE
// Kernel versioning by placement (what `bamgen port` emits around a ported
// kernel's body):
//
//   bam::by_placement([&](auto a, auto b) { ...the kernel's body... }, a, b);
//
// The body is compiled twice: once over bam::direct_array views, taken
// when every array is direct, once over the bam::arrays themselves. The
// test reads kernel parameters only, so it is uniform across the grid: no
// divergence, and a __syncthreads() in the body stays where it was. When
// the data fits in GPU memory the kernel runs the plain-pointer version
// (what it was before the port); otherwise the cached one. Arguments are
// bam::arrays or bam::read_only(array).
template <class Body, class... A>
__device__ __forceinline__ void by_placement(Body&& body, const A&... args)
{
  if ((detail::is_direct(detail::array_of(args)) && ...))
    body(detail::direct_view(args)...);
  else
    body(detail::array_of(args)...);
}

// The body of a kernel's direct clone: launched only when all_direct() held
// for its arrays, so it is compiled over direct_array views alone; without
// the cached version (and its out-of-line miss path, whose indirect call
// sets a register floor) the clone needs the registers the original kernel
// needed, and runs at its occupancy.
template <class Body, class... A>
__device__ __forceinline__ void as_direct(Body&& body, const A&... args)
{
  BAM_ASSERT((detail::is_direct(detail::array_of(args)) && ...),
             "bam::as_direct: a direct clone was launched with an array in the cache");
  body(detail::direct_view(args)...);
}
#endif

namespace detail {
// The host library's way to build handles; not for user code.
struct array_factory {
  template <class T>
  static array<T> make(const cache_ctx* ctx, const array_meta& meta, unsigned char* slots, size_t n,
                       uint32_t line_shift) noexcept
  {
    array<T> a;
    a.ctx_ = ctx;
    a.meta_ = meta;
    a.slots_ = slots;
    a.n_ = n;
    a.line_shift_ = line_shift;
    a.epl_shift_ = line_shift - log2_exact(sizeof(T));
    return a;
  }
  template <class T>
  [[nodiscard]] static const array_meta& meta(const array<T>& a) noexcept { return a.meta_; }
  template <class U, class T>
  static array<U> recast(const array<T>& a) noexcept
  {
    return make<U>(a.ctx_, a.meta_, a.slots_, a.n_ * sizeof(T) / sizeof(U), a.line_shift_);
  }
};
} // namespace detail

// The same array seen as elements of another type, like reinterpret_cast of
// a pointer: same lines, same cache state, nothing copied. Lets a
// cache-line-aware kernel read a float array with 16-byte loads. A trailing
// part smaller than one U is not visible through the new view.
template <class U, class T>
array<U> array_cast(const array<T>& a) noexcept
{
  static_assert(std::is_const<U>::value || !std::is_const<T>::value,
                "bam::array_cast: cannot drop const (array<const T> -> array<U>)");
  return detail::array_factory::recast<U>(a);
}

BAM_NAMESPACE_END // namespace bam

#endif // BAM_ARRAY_CUH
