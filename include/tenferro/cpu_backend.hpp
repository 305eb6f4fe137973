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
///
/// Note [Lanes]
/// `run_lanes(session, n, fn)` lends a root session's workers to a caller-driven phase:
/// fn(lane, i) runs for every lane i in [0, n) on min(n, num_threads) runners (the
/// calling thread is one), each lane on a real Session with a thread budget of 1 and
/// private resources (buffer pool and every cache) from a per-runner slot, under the
/// parent's admission. Lanes are handed out in index order as runners become free. The
/// parent session is unusable (Poisoned on its thread, IncompatibleContext elsewhere)
/// until every lane has returned. Inside a lane, opening a session or a scope, entering
/// with_session, or running nested lanes is SessionEntryError(Reentered), raised before
/// anything blocks. When a lane throws, lanes not yet started are cancelled, running
/// ones finish, and the first exception to be thrown (in time) is rethrown unchanged in
/// the caller (its lane index through `failed_lane`); the parent session stays usable.
/// Lane slots persist in the backend's resources: a second run_lanes finds warm pools
/// and plan caches. Each slot's pool is bounded by pool_byte_limit / num_threads, so
/// all lanes together stay within the backend's limit; trim_pool, clear_cache and
/// set_cache_limits apply to the lane slots too, and lane_stats reports them.
///
/// Note [Caller-owned executors]
/// With CpuBackendOptions::executor set, the host owns the threads: every parallel
/// region (op kernels, FFTW jobs, lanes) is handed to Executor::run, no worker pool is
/// ever started, provider libraries (OpenBLAS) run single-threaded inside each task, and
/// admission is caller-managed: the backend is one domain, and entering it while a
/// session or scope of it is active is SessionEntryError(Contended) at once, never a
/// wait (the host schedules its work; tenferro does not queue it). CPU ids are then
/// informational (nothing is pinned, no per-CPU lock is taken).

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
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

/// A reference to a task body `void(int index)` (not owning; no allocation).
struct TaskRef {
  void* object;                      ///< the callable
  void (*call)(void* object, int i); ///< invokes it
  /// Runs task i.
  void operator()(int i) const { call(object, i); }
};

/// A host-supplied executor (Note [Caller-owned executors]).
class TENFERRO_API Executor {
 public:
  virtual ~Executor();
  /// Tasks the executor runs at once (the calling thread included); at least 1.
  virtual int concurrency() const noexcept = 0;
  /// Runs task(0) ... task(n - 1), each exactly once, on any of its threads (the
  /// calling thread may run some), and returns when every task has returned. Tasks do
  /// not throw. For one backend it is called from one thread at a time. An exception it
  /// throws before running the tasks becomes SessionEntryError(Executor).
  virtual void run(int n, TaskRef task) = 0;
};

/// The default CpuBackendOptions::pool_byte_limit: a quarter of physical memory (100 MiB
/// where that cannot be read).
TENFERRO_API std::size_t default_pool_byte_limit() noexcept;

/// Construction options of a CpuBackend.
struct CpuBackendOptions {
  /// Worker threads a session may use. 0: TENFERRO_NUM_THREADS, else OMP_NUM_THREADS,
  /// else the size of `cpus` when given, else the CPUs in the process affinity mask.
  int num_threads = 0;
  /// CPU ids the backend's sessions are admitted to (and its workers pinned to).
  /// Empty: the process affinity mask.
  std::vector<int> cpus;
  /// Byte limit of the buffer pool (cached, not in use). Within it the pool caches at
  /// most the larger of 100 MiB and twice the most bytes its blocks held in use at
  /// once, so a repeated contraction finds its large intermediates cached while the pool
  /// stays in proportion to what the program had live (Note [Pool limit follows the
  /// peak] in src/cpu/buffer_pool.hpp). 0: no caching.
  std::size_t pool_byte_limit = default_pool_byte_limit();
  /// A host-owned executor (Note [Caller-owned executors]); null: the backend's own
  /// worker pool (oneTBB, pinned to `cpus`) and FIFO admission per CPU. With one, the
  /// thread count is `num_threads` when given, else the executor's concurrency.
  std::shared_ptr<Executor> executor = nullptr;
};

/// Where a backend's thread count came from.
enum class ThreadSource : std::uint8_t {
  option,        ///< CpuBackendOptions::num_threads
  env_tenferro,  ///< TENFERRO_NUM_THREADS
  env_omp,       ///< OMP_NUM_THREADS
  cpu_list,      ///< the size of CpuBackendOptions::cpus
  affinity,      ///< the CPUs of the process affinity mask
  executor,      ///< the caller-owned executor's concurrency
};
/// Who runs a backend's parallel regions.
enum class ExecutorKind : std::uint8_t {
  worker_pool,  ///< the backend's own oneTBB arena, pinned to its CPUs
  caller,       ///< a caller-owned Executor
};
/// How sessions are admitted.
enum class AdmissionMode : std::uint8_t {
  fifo_per_cpu,    ///< one FIFO ticket lock per CPU; entries wait their turn
  caller_managed,  ///< one domain; a second entry is SessionEntryError(Contended)
};
/// "option", "env_tenferro", ... ("?" outside the enum).
TENFERRO_API std::string_view thread_source_name(ThreadSource s) noexcept;
/// "worker_pool" or "caller" ("?" outside the enum).
TENFERRO_API std::string_view executor_kind_name(ExecutorKind k) noexcept;
/// "fifo_per_cpu" or "caller_managed" ("?" outside the enum).
TENFERRO_API std::string_view admission_mode_name(AdmissionMode m) noexcept;

/// A provider library and its thread settings.
struct ProviderInfo {
  std::string name;       ///< "OpenBLAS", "LAPACK", "FFTW3", "oneTBB"
  std::string version;    ///< as the library reports it
  int threads = 1;        ///< threads it may use now (process-wide where the library is)
  std::string threading;  ///< how its threads are governed, in words
};

/// How a backend executes (CpuBackend::execution_info).
struct ExecutionInfo {
  int num_threads = 1;
  ThreadSource thread_source = ThreadSource::affinity;
  std::vector<int> cpus;             ///< the backend's CPU set (ascending)
  bool pinned = false;               ///< workers are pinned to `cpus`
  ExecutorKind executor = ExecutorKind::worker_pool;
  AdmissionMode admission = AdmissionMode::fifo_per_cpu;
  std::vector<ProviderInfo> providers;
  /// A readable multi-line summary.
  std::string to_string() const;
};

/// One lane slot's counters (CpuBackend::lane_stats).
struct LaneSlotStats {
  std::uint64_t lanes_run = 0;  ///< lanes this slot's runner has run
  BufferPoolStats pool;         ///< the slot's buffer pool
  std::array<PlanCacheStats, kNumCacheKinds> caches{};  ///< indexed by CacheKind
};

/// Counters of a backend's lanes (Note [Lanes]).
struct LaneStats {
  std::uint64_t calls = 0;           ///< run_lanes calls that ran lanes
  std::uint64_t lanes_run = 0;       ///< lanes started
  std::uint64_t lanes_failed = 0;    ///< lanes that threw
  std::uint64_t lanes_cancelled = 0; ///< lanes skipped after a failure
  std::vector<LaneSlotStats> slots;  ///< the persistent slots (created on first use)
};

namespace detail {
/// A lane body reference (see run_lanes).
struct LaneFn {
  void* object;
  void (*call)(void* object, Session& lane, int index);
};
/// Type-erased run_lanes.
TENFERRO_API void run_lanes(Session& parent, int n, LaneFn fn, int* failed_lane);
}  // namespace detail

/// Runs fn(Session& lane, int index) for every index in [0, n) on `parent`'s workers
/// (Note [Lanes]). `parent` is a root CPU session (held or scoped) usable on this
/// thread. ArgumentError for n < 0; SessionEntryError(Reentered) from inside a lane.
/// When a lane throws, its exception is rethrown here and *failed_lane (when given)
/// is set to its index.
template <class F> void run_lanes(Session& parent, int n, F&& fn, int* failed_lane = nullptr) {
  using Fn = std::remove_reference_t<F>;
  detail::LaneFn erased{const_cast<void*>(static_cast<const void*>(std::addressof(fn))),
                        [](void* o, Session& lane, int i) { (*static_cast<Fn*>(o))(lane, i); }};
  detail::run_lanes(parent, n, erased, failed_lane);
}

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
  /// run_lanes(*this, n, fn, failed_lane) (Note [Lanes]).
  template <class F> void run_lanes(int n, F&& fn, int* failed_lane = nullptr) {
    tenferro::run_lanes(*this, n, std::forward<F>(fn), failed_lane);
  }

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
  /// Thread count and its source, CPU set, executor, admission mode, and the provider
  /// libraries with their thread settings. Never waits.
  ExecutionInfo execution_info() const;

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
  /// Opens a held session (waits in FIFO order; Contended at once under caller-managed
  /// admission, Note [Caller-owned executors]). Reentered as for with_session,
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
  /// Counters of the lanes and their persistent slots (Note [Lanes]).
  LaneStats lane_stats() const;

  /// Internal: shared state.
  detail::BackendState& state() const noexcept { return *state_; }

 private:
  detail::BackendState* state_;
};

}  // namespace tenferro
