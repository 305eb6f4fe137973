#pragma once
/// \file session.hpp
/// The backend-neutral session: the capability every operation takes. A backend
/// (CpuBackend in cpu_backend.hpp; a CUDA backend later) constructs sessions; an op
/// only reads the session's device, its thread budget and whether it is usable on the
/// calling thread. Op headers include this header, never a backend header.
///
/// Note [Neutral session]
/// A Session is a pointer to the calling thread's entry record (one per host thread,
/// shared by every backend: a thread is inside at most one session at a time) and the
/// epoch of the entry it belongs to. `check()` compares the two with the record the
/// thread owns now, so a stale or foreign session is refused before any work. The
/// record's backend part (admitted CPUs, checked-out resources) is the backend's own
/// type deriving from detail::SessionContext; only that backend's kernels downcast it.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tenferro/error.hpp"
#include "tenferro/export.hpp"
#include "tenferro/storage.hpp"

namespace tenferro {

/// Buffer pool counters.
struct BufferPoolStats {
  std::uint64_t hits = 0;          ///< allocations served from the cache
  std::uint64_t misses = 0;        ///< allocations that went to the heap
  std::uint64_t evictions = 0;     ///< cached blocks freed to respect the byte limit
  std::uint64_t cached_blocks = 0; ///< blocks now cached
  std::size_t cached_bytes = 0;    ///< data bytes now cached
  std::size_t byte_limit = 0;      ///< the limit
  std::size_t peak_bytes = 0;      ///< most bytes of its blocks in use at once since the last trim; the pool
                                   ///< caches at most max(100 MiB, 2 × this), within byte_limit
};

/// Counters and limits of one of the caches a session checks out (Note [Bounded caches]).
struct PlanCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t entries = 0;      ///< entries now cached
  std::uint64_t evictions = 0;    ///< entries dropped to respect a limit
  std::size_t bytes = 0;          ///< bytes the cached entries account for (keys and values)
  std::size_t entry_limit = 0;    ///< most entries
  std::size_t byte_limit = 0;     ///< most bytes
};

/// The caches a session checks out with its resources.
enum class CacheKind : std::uint8_t {
  dot_plans,          ///< dot_general analyses
  linalg_workspaces,  ///< LAPACK workspace sizes
  fft_plans,          ///< FFTW plans
  einsum_programs,    ///< parsed and planned one-shot einsum calls (Note [Einsum program cache])
  graphs,             ///< compiled graphs of graph::Function, one per input signature (graph.hpp)
};
/// Number of cache kinds.
inline constexpr int kNumCacheKinds = 5;
/// "dot_plans", "linalg_workspaces", "fft_plans", "einsum_programs", "graphs" ("?" outside the enum).
TENFERRO_API std::string_view cache_kind_name(CacheKind k) noexcept;

namespace detail {
/// The per-thread entry record a session points to (see Note [Neutral session]).
/// Backends derive their own context from it; it is defined in src/core.
struct SessionContext;
}  // namespace detail

/// The capability to run operations. Only a backend constructs sessions; every op takes
/// a `Session&`. A Session is bound to the thread that entered it: using it from
/// another thread throws SessionEntryError(IncompatibleContext); using it after its
/// entry ended throws SessionEntryError(Poisoned).
class TENFERRO_API Session {
 public:
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// The device this session's ops run on.
  DeviceKind device() const noexcept { return device_; }
  /// Worker threads this session may use (1 means everything runs inline).
  int num_threads() const noexcept;
  /// Throws unless this session is usable on the calling thread now. Ops call it first.
  void check(std::string_view op) const {
    if (!usable()) throw_unusable(op);
  }
  /// Stats of the buffer pool this session has checked out (SessionEntryError when the
  /// session is not usable).
  BufferPoolStats pool_stats() const;

  /// Internal: the entry record this session lives in (for backends and families).
  detail::SessionContext& context() const noexcept { return *ctx_; }

 protected:
  Session(detail::SessionContext* ctx, std::uint64_t epoch, DeviceKind device) noexcept
      : ctx_(ctx), epoch_(epoch), device_(device) {}
  Session(Session&& o) noexcept : ctx_(o.ctx_), epoch_(o.epoch_), device_(o.device_) { o.epoch_ = 0; }
  bool usable() const noexcept;
  [[noreturn]] void throw_unusable(std::string_view op) const;

  detail::SessionContext* ctx_;
  std::uint64_t epoch_;  ///< entry this session belongs to; 0 when closed or moved-from
  DeviceKind device_;
};

/// The session the calling thread is inside (held or scoped), for operator sugar.
/// Throws SessionEntryError(Poisoned) when there is none: nothing opens one implicitly.
TENFERRO_API Session& current_session();

}  // namespace tenferro
