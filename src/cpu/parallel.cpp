#include "cpu/parallel.hpp"

#include <sched.h>

#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include "cpu/context.hpp"

namespace tenferro::detail {

namespace {
// Pins the arena's worker threads (never the caller's thread) to the backend's CPUs.
class PinningObserver final : public tbb::task_scheduler_observer {
 public:
  PinningObserver(tbb::task_arena& arena, const std::vector<int>& cpus) : tbb::task_scheduler_observer(arena) {
    CPU_ZERO(&set_);
    for (int c : cpus) CPU_SET(c, &set_);
    observe(true);
  }
  ~PinningObserver() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) sched_setaffinity(0, sizeof set_, &set_);
  }

 private:
  cpu_set_t set_;
};

std::mutex g_workers_mutex;  // creation only (first parallel op of a backend)

// Note [TSan and the worker pool]
// Debian's oneTBB is not instrumented, so ThreadSanitizer does not see the
// happens-before edges of its fork and join: a kernel's reads on a worker and the
// caller's later writes (a block going back to the pool, the next op) are reported as
// races. Under TSan the fork and the join are annotated here, the one place tenferro
// forks: the caller releases before the arena runs and acquires after it returns, each
// chunk acquires at its start and releases at its end. This adds exactly TBB's own
// edges and no others, so races between chunks (two workers writing one element) are
// still reported; no suppression is needed for them.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TENFERRO_TSAN_ANNOTATE 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TENFERRO_TSAN_ANNOTATE 1
#endif
#ifdef TENFERRO_TSAN_ANNOTATE
}  // namespace
}  // namespace tenferro::detail
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
namespace tenferro::detail {
namespace {
inline void fork_release(void* a) noexcept { __tsan_release(a); }
inline void fork_acquire(void* a) noexcept { __tsan_acquire(a); }
#else
inline void fork_release(void*) noexcept {}
inline void fork_acquire(void*) noexcept {}
#endif
}  // namespace

// The arena is initialised before the observer is registered: initialize() allocates
// (and may throw std::bad_alloc), and an observer observing an arena that is still
// being set up crashed inside oneTBB's observe() while the exception unwound, instead
// of reaching workers_of's SessionEntryError(Executor). Members are destroyed in
// reverse order, so the observer stops observing before the arena goes.
struct Workers {
  explicit Workers(const BackendState& b) : arena(b.num_threads) {
    arena.initialize();
    observer.emplace(arena, b.cpus);
  }
  tbb::task_arena arena;
  std::optional<PinningObserver> observer;
};

void destroy_workers(BackendState& b) noexcept { delete b.workers.exchange(nullptr); }

namespace {
Workers& workers_of(BackendState& b) {
  Workers* w = b.workers.load(std::memory_order_acquire);
  if (w) return *w;
  std::lock_guard<std::mutex> lock(g_workers_mutex);
  w = b.workers.load(std::memory_order_acquire);
  if (!w) {
    try {
      w = new Workers(b);
    } catch (const std::exception& e) {
      throw SessionEntryError(SessionEntryKind::Executor, "parallel", std::string("could not start the worker pool: ") + e.what());
    }
    b.workers.store(w, std::memory_order_release);
  }
  return *w;
}
}  // namespace

int fork_threads(const Session& s, std::int64_t n, std::int64_t cost) noexcept {
  const int budget = s.num_threads();
  if (budget <= 1 || n <= 1) return 1;
  const std::int64_t work = n * cost;
  if (work < kForkThreshold) return 1;
  const std::int64_t by_work = work / (kForkThreshold / 2);
  return static_cast<int>(std::min<std::int64_t>({budget, by_work, n}));
}

int provider_threads(const Session& s) noexcept {
  const CpuContext& c = cpu_context(s);
  return c.backend && c.backend->executor ? 1 : c.threads;
}

void run_tasks(BackendState& b, int k, TaskRef task) {
  if (k <= 1) {
    if (k == 1) task(0);
    return;
  }
  char fork_edge = 0, join_edge = 0;  // addresses for Note [TSan and the worker pool]
  auto body = [&](int i) {
    fork_acquire(&fork_edge);
    task(i);
    fork_release(&join_edge);
  };
  fork_release(&fork_edge);
  if (b.executor) {
    try {
      b.executor->run(k, task_ref(body));
    } catch (const std::exception& e) {
      throw SessionEntryError(SessionEntryKind::Executor, "parallel", std::string("the caller-owned executor failed: ") + e.what());
    }
  } else {
    // The worker threads never allocate through the session's pool (the allocator hook
    // is per thread and absent there), except inside lanes, which install their own.
    Workers& w = workers_of(b);
    w.arena.execute([&] { tbb::parallel_for(0, k, 1, body, tbb::simple_partitioner()); });
  }
  fork_acquire(&join_edge);
}

void parallel_chunks(const Session& s, std::int64_t n, int threads, const std::function<void(std::int64_t, std::int64_t)>& f) {
  if (threads <= 1 || n <= 1) {
    if (n > 0) f(0, n);
    return;
  }
  const std::int64_t chunk = (n + threads - 1) / threads;
  FirstException first;
  auto one = [&](int k) {
    const std::int64_t b = k * chunk, e = std::min(n, b + chunk);
    if (b < e) first.run([&] { f(b, e); });
  };
  run_tasks(*cpu_context(s).backend, threads, task_ref(one));
  first.rethrow();
}

}  // namespace tenferro::detail
