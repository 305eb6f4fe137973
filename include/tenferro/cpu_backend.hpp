#pragma once
/// \file cpu_backend.hpp
/// The CPU backend, its held sessions and execution scopes (Session itself is
/// backend-neutral: tenferro/session.hpp).
///
/// Note [Session admission]
/// One root session per CPU at a time: entering a session admits the calling thread to
/// every CPU of its backend's CPU set, through one FIFO ticket lock per CPU taken in
/// ascending CPU order (so overlapping sets cannot deadlock, disjoint sets never wait
/// on each other, and threads queued on the same set are admitted in arrival order).
/// Re-entry on the same thread is detected from thread-local state before any lock is
/// touched. While admitted, the session owns the backend's resources (buffer pool,
/// plan caches): they are moved out of the backend under a short compare-and-swap and
/// moved back before admission is released. Management calls (pool stats, trim,
/// limits) never wait: while the resources are out they throw RuntimeStateError.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tenferro/error.hpp"
#include "tenferro/export.hpp"
#include "tenferro/session.hpp"

namespace tenferro {

namespace detail {
struct BackendState;
struct CpuContext;
class EntryGuard;
}  // namespace detail

/// Construction options of a CpuBackend.
struct CpuBackendOptions {
  /// Worker threads a session may use. 0: TENFERRO_NUM_THREADS, else OMP_NUM_THREADS,
  /// else the size of `cpus` when given, else the CPUs in the process affinity mask.
  int num_threads = 0;
  /// CPU ids the backend's sessions are admitted to (and its workers pinned to).
  /// Empty: the process affinity mask.
  std::vector<int> cpus;
  /// Byte limit of the buffer pool (cached, not in use).
  std::size_t pool_byte_limit = std::size_t{100} << 20;
};

class CpuBackend;

/// A session held across calls: move-only and thread-affine.
class TENFERRO_API HeldSession : public Session {
 public:
  HeldSession(HeldSession&& o) noexcept;
  HeldSession& operator=(HeldSession&& o) noexcept;
  /// Releases best-effort; never throws (on a foreign thread it releases nothing: the
  /// admission is then released when the owning thread exits).
  ~HeldSession();
  /// Ends the session: returns resources, releases admission. Throws
  /// SessionEntryError(IncompatibleContext) when called from a thread other than the
  /// one that opened it (the session stays open). Closing twice is a no-op.
  void close();
  /// True until closed or moved from.
  bool is_open() const noexcept { return epoch_ != 0; }

 private:
  HeldSession(detail::CpuContext* ctx, std::uint64_t epoch) noexcept;
  friend class CpuBackend;
};

/// Holds admission (and the resources) across many scoped entries on one thread;
/// `with_session` inside it costs a few thread-local stores. Move-only, thread-affine.
class TENFERRO_API ExecutionScope {
 public:
  ExecutionScope(ExecutionScope&& o) noexcept : ctx_(o.ctx_), epoch_(o.epoch_) { o.epoch_ = 0; }
  ExecutionScope& operator=(ExecutionScope&& o) noexcept;
  ExecutionScope(const ExecutionScope&) = delete;
  ExecutionScope& operator=(const ExecutionScope&) = delete;
  ~ExecutionScope();
  /// Leaves the scope. Same failure rules as HeldSession::close.
  void close();
  bool is_open() const noexcept { return epoch_ != 0; }

 private:
  ExecutionScope(detail::CpuContext* ctx, std::uint64_t epoch) noexcept : ctx_(ctx), epoch_(epoch) {}
  detail::CpuContext* ctx_;
  std::uint64_t epoch_;
  friend class CpuBackend;
};

namespace detail {
/// The session of one scoped entry (constructed only by EntryGuard).
class TENFERRO_API ScopedSession : public Session {
 private:
  explicit ScopedSession(SessionContext* ctx) noexcept : Session(ctx, 0, DeviceKind::cpu) {}
  friend class EntryGuard;
};

/// Scoped entry: enters in the constructor, leaves in the destructor.
class TENFERRO_API EntryGuard {
 public:
  EntryGuard(BackendState& backend, bool try_only);
  ~EntryGuard();
  EntryGuard(const EntryGuard&) = delete;
  EntryGuard& operator=(const EntryGuard&) = delete;
  Session& session() noexcept { return session_; }

 private:
  ScopedSession session_;
  bool inside_scope_;
};
}  // namespace detail

/// The CPU backend: a thread budget, a CPU set, and the resources its sessions check out.
/// Not copyable or movable. Destroying it while sessions are open, or while other
/// threads are inside or waiting in with_session, is allowed: the shared state lives
/// until the last session, scope or scoped entry ends. (Starting a call on it while it
/// is being destroyed is a data race, as for any object.)
class TENFERRO_API CpuBackend {
 public:
  /// Default options (see CpuBackendOptions).
  CpuBackend();
  /// ArgumentError for a CPU id outside the process affinity mask, a repeated CPU id,
  /// or a negative thread count.
  explicit CpuBackend(CpuBackendOptions options);
  ~CpuBackend();
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  int num_threads() const noexcept;
  const std::vector<int>& cpus() const noexcept;

  /// Scoped entry: admits this thread (waiting in FIFO order), runs f(Session&), leaves.
  /// Throws SessionEntryError(Reentered) when this thread is already inside a session
  /// (or inside a scope of another backend), before waiting.
  template <class F> decltype(auto) with_session(F&& f) {
    detail::EntryGuard g(*state_, false);
    return std::forward<F>(f)(g.session());
  }
  /// Like with_session, but throws SessionEntryError(Contended) instead of waiting.
  template <class F> decltype(auto) try_with_session(F&& f) {
    detail::EntryGuard g(*state_, true);
    return std::forward<F>(f)(g.session());
  }
  /// Opens a held session (waits in FIFO order). Reentered as for with_session,
  /// including inside an execution scope.
  HeldSession open_session();
  /// Non-waiting open: SessionEntryError(Contended) when the CPU set is busy.
  HeldSession try_open_session();
  /// Enters an execution scope (waits in FIFO order); Reentered inside any entry.
  ExecutionScope enter_scope();
  /// Non-waiting scope entry: SessionEntryError(Contended) when busy.
  ExecutionScope try_enter_scope();

  // ---- management: never waits; RuntimeStateError while a session holds resources ----
  /// Buffer pool counters.
  BufferPoolStats pool_stats() const;
  /// Frees every cached block.
  void trim_pool();
  /// Sets the pool's byte limit, evicting cached blocks above it.
  void set_pool_byte_limit(std::size_t bytes);
  /// Counters and limits of one cache (ArgumentError for a kind outside the enum).
  PlanCacheStats cache_stats(CacheKind kind) const;
  /// Drops every entry of one cache.
  void clear_cache(CacheKind kind);
  /// New limits for one cache (most entries, most bytes); drops its entries. A limit of
  /// 0 entries turns caching off (each call plans afresh).
  void set_cache_limits(CacheKind kind, std::size_t max_entries, std::size_t max_bytes);

  /// Internal: shared state.
  detail::BackendState& state() const noexcept { return *state_; }

 private:
  detail::BackendState* state_;
};

}  // namespace tenferro
