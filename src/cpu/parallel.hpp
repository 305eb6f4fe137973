#pragma once
// Splitting large work across a session's thread budget (oneTBB arena per backend).
//
// Note [Fork cost model]
// Work runs inline on the caller's thread unless the session has more than one thread
// and the estimated work exceeds kForkThreshold "element-operations" (an element-op is
// roughly one simple arithmetic op on one element, ~0.3 ns). Forking into the arena
// costs a few microseconds, so below ~100k element-ops it never pays. Analytic ops pass
// a higher per-element cost (exp ≈ 10) so they fork at smaller sizes.
#include "core/internal_check.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>

#include "tenferro/cpu_backend.hpp"

namespace tenferro::detail {

struct BackendState;

inline constexpr std::int64_t kForkThreshold = 1 << 17;

/// Worker pool of one backend (defined in parallel.cpp).
struct Workers;
void destroy_workers(BackendState& b) noexcept;

/// Threads worth using for `n` items of `cost` element-ops each on session `s` (1: inline).
int fork_threads(const Session& s, std::int64_t n, std::int64_t cost) noexcept;

/// Keeps the first exception (in time) of several concurrent tasks; the others are
/// dropped. Read only after the tasks have been joined.
class FirstException {
 public:
  /// Runs f(); an exception it throws is recorded with `index`.
  template <class F> void run(F&& f, int index = -1) noexcept {
    try {
      f();
    } catch (...) {
      record(std::current_exception(), index);
    }
  }
  void record(std::exception_ptr e, int index) noexcept {
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e), index_ = index;
  }
  /// True once some task failed (any thread, any time).
  bool failed() const noexcept { return claimed_.load(std::memory_order_acquire); }
  /// The index recorded with the first exception (-1 when none).
  int index() const noexcept { return index_; }
  /// Rethrows the first exception, if any.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::atomic<bool> claimed_{false};
  std::exception_ptr error_;
  int index_ = -1;
};

/// A TaskRef to callable `f` (which must outlive the reference).
template <class F> TaskRef task_ref(F& f) noexcept {
  return TaskRef{&f, [](void* o, int i) { (*static_cast<F*>(o))(i); }};
}

/// Runs task(0) ... task(k - 1) on the backend's workers and waits: the oneTBB arena
/// (the calling thread takes part), or the caller-owned executor (Note [Caller-owned
/// executors]). Tasks must not throw. SessionEntryError(Executor) when the pool cannot
/// start or the executor refuses. k <= 1 runs inline.
void run_tasks(BackendState& b, int k, TaskRef task);

/// Threads a provider library (OpenBLAS) may use inside an op of session `s`: the
/// session's budget, or 1 with a caller-owned executor (the host owns the threads).
int provider_threads(const Session& s) noexcept;

/// Runs f(begin, end) over [0, n) in `threads` contiguous chunks (chunk boundaries depend
/// only on n and threads). threads <= 1 runs inline. Exceptions from f propagate.
void parallel_chunks(const Session& s, std::int64_t n, int threads, const std::function<void(std::int64_t, std::int64_t)>& f);

/// Convenience: decides with fork_threads, then runs inline or in parallel.
template <class F> void parallel_for(const Session& s, std::int64_t n, std::int64_t cost, F&& f) {
  const int t = fork_threads(s, n, cost);
  if (t <= 1) {
    if (n > 0) f(std::int64_t{0}, n);
    return;
  }
  parallel_chunks(s, n, t, std::function<void(std::int64_t, std::int64_t)>(std::ref(f)));
}

}  // namespace tenferro::detail
