#pragma once
// Backend state shared by a CpuBackend and its open sessions, and the per-thread
// context an entry lives in.
#include "core/internal_check.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/bounded_cache.hpp"
#include "core/session_context.hpp"
#include "cpu/buffer_pool.hpp"
#include "cpu/dot_plan.hpp"
#include "cpu/linalg_cache.hpp"
#include "tenferro/cpu_backend.hpp"

namespace tenferro::detail {

struct CpuResources;

/// One persistent lane slot (Note [Lanes]): its resources and how many lanes it ran.
struct LaneSlot {
  std::unique_ptr<CpuResources> resources;
  std::uint64_t lanes_run = 0;
};

/// The lane slots and counters, kept in the backend's resources so a session owns them
/// exactly while it owns the rest.
struct LaneSlots {
  std::vector<LaneSlot> slots;
  std::uint64_t calls = 0, lanes_run = 0, lanes_failed = 0, lanes_cancelled = 0;
};

/// Everything a session checks out. Every cache is a BoundedCache (Note [Bounded
/// caches]); a family's cache whose values the backend must not see holds
/// ErasedHandles (FFTW plans: destroyed with the resources, under the planner lock).
struct CpuResources {
  explicit CpuResources(std::size_t pool_limit) : pool(pool_limit) {}
  BufferPool pool;
  DotPlanCache dot_plans{64, std::size_t{1} << 20};
  LinalgPlanCache linalg_plans{64, std::size_t{64} << 10};  ///< LAPACK workspace sizes (src/linalg)
  /// FFTW plans (src/fft): fully associative, as replanning costs far more than a scan.
  BoundedCache<ErasedHandle> fft_plans{32, std::size_t{1} << 20, BoundedCache<ErasedHandle>::kFullyAssociative};
  /// One-shot einsum programs (src/einsum, Note [Einsum program cache]): set associative,
  /// as a sweep's hit must cost a handful of compares.
  BoundedCache<ErasedHandle> einsum_programs{32, std::size_t{1} << 20};
  /// Compiled graphs of graph::Function calls (src/runtime/function.cpp), keyed by the
  /// function and the input signature.
  BoundedCache<ErasedHandle> graphs{64, std::size_t{16} << 20};
  /// Lane slots (root resources only; a lane slot's own stays empty).
  LaneSlots lanes;

  /// Calls f(cache) on the cache of kind `k`; ArgumentError naming `op` outside the enum.
  template <class F> decltype(auto) visit_cache(CacheKind k, const char* op, F&& f) {
    switch (k) {
      case CacheKind::dot_plans: return f(dot_plans);
      case CacheKind::linalg_workspaces: return f(linalg_plans);
      case CacheKind::fft_plans: return f(fft_plans);
      case CacheKind::einsum_programs: return f(einsum_programs);
      case CacheKind::graphs: return f(graphs);
    }
    throw ArgumentError(op, "cache kind " + std::to_string(static_cast<int>(k)) + " is not a CacheKind");
  }
};

/// Shared, reference-counted backend state (the CpuBackend holds one reference, each
/// open HeldSession or ExecutionScope another).
struct BackendState {
  BackendState(std::vector<int> cpus, int threads, std::size_t pool_limit);
  ~BackendState();

  std::vector<int> cpus;  ///< ascending, distinct
  int num_threads;
  ThreadSource thread_source = ThreadSource::affinity;
  /// The caller-owned executor (Note [Caller-owned executors]); null: the worker pool.
  std::shared_ptr<Executor> executor;
  /// Caller-managed admission: true while a root entry is active.
  std::atomic<bool> domain_busy{false};
  std::atomic<std::int64_t> refs{1};

  /// The resource slot: the resources, nullptr while a session has them out, or kBusy
  /// while a management call reads them.
  mutable std::atomic<CpuResources*> slot;
  std::unique_ptr<CpuResources> owned;  ///< keeps them alive; slot points into it

  /// Worker pool (created on first parallel use; pinned to `cpus`). See parallel.cpp.
  std::atomic<struct Workers*> workers{nullptr};

  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release_ref() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  /// Moves the resources out (spins only while a management call reads them).
  CpuResources* checkout() noexcept;
  void checkin(CpuResources* r) noexcept { slot.store(r, std::memory_order_release); }
  /// For management calls: the resources, or RuntimeStateError naming `op`.
  CpuResources* borrow(const char* op) const;
  void unborrow(CpuResources* r) const noexcept { slot.store(r, std::memory_order_release); }

  static CpuResources* busy() noexcept { return reinterpret_cast<CpuResources*>(std::uintptr_t{1}); }
};

/// Per-thread entry state of the CPU backend (the neutral part, epoch and active
/// session, is the SessionContext base). Only its own thread reads or writes it.
struct CpuContext : SessionContext {
  enum class State : std::uint8_t { idle, scope, scoped, held, scope_scoped, lane, trace };
  State state = State::idle;
  int threads = 1;                     ///< the active session's thread budget
  BackendState* backend = nullptr;     ///< admitted backend (scope, scoped, held)
  CpuResources* resources = nullptr;   ///< checked-out resources while admitted
  BlockAllocator* prev_allocator = nullptr;
  std::uint64_t scope_epoch = 0;       ///< the active execution scope's epoch
  std::uint64_t epoch_counter = 0;

  CpuContext() noexcept;  // registers itself as the thread's context (Note [Session check])
  ~CpuContext();          // a thread exiting inside a session releases it
};

/// The byte limit of one lane slot's pool when the backend's pool has `limit` (Note [Lanes]).
inline std::size_t lane_pool_limit(const BackendState& b, std::size_t limit) noexcept {
  return limit / static_cast<std::size_t>(b.num_threads > 0 ? b.num_threads : 1);
}

/// This thread's context.
CpuContext& this_context() noexcept;

/// A fresh root epoch from the process-wide counter (Note [Unforgeable epochs]).
std::uint64_t next_root_epoch() noexcept;

/// The CPU context of a session (every Session is a CPU session until another backend
/// lands; a device backend's kernels downcast to their own context the same way).
inline CpuContext& cpu_context(const Session& s) noexcept { return static_cast<CpuContext&>(s.context()); }

}  // namespace tenferro::detail
