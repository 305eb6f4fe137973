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

  /// Calls f(cache) on the cache of kind `k`; ArgumentError naming `op` outside the enum.
  template <class F> decltype(auto) visit_cache(CacheKind k, const char* op, F&& f) {
    switch (k) {
      case CacheKind::dot_plans: return f(dot_plans);
      case CacheKind::linalg_workspaces: return f(linalg_plans);
      case CacheKind::fft_plans: return f(fft_plans);
      case CacheKind::einsum_programs: return f(einsum_programs);
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
  enum class State : std::uint8_t { idle, scope, scoped, held, scope_scoped };
  State state = State::idle;
  BackendState* backend = nullptr;     ///< admitted backend (scope, scoped, held)
  CpuResources* resources = nullptr;   ///< checked-out resources while admitted
  BlockAllocator* prev_allocator = nullptr;
  std::uint64_t scope_epoch = 0;       ///< the active execution scope's epoch
  std::uint64_t epoch_counter = 0;

  CpuContext() noexcept;  // registers itself as the thread's context (Note [Session check])
  ~CpuContext();          // a thread exiting inside a session releases it
};

/// This thread's context.
CpuContext& this_context() noexcept;

/// The CPU context of a session (every Session is a CPU session until another backend
/// lands; a device backend's kernels downcast to their own context the same way).
inline CpuContext& cpu_context(const Session& s) noexcept { return static_cast<CpuContext&>(s.context()); }

}  // namespace tenferro::detail
