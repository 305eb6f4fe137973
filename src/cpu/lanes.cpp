// Lanes: a root session lends its workers to a caller-driven fan-out (Note [Lanes] in
// tenferro/cpu_backend.hpp).
#include <algorithm>
#include <atomic>
#include <string>

#include "core/thread_allocator.hpp"
#include "cpu/context.hpp"
#include "cpu/parallel.hpp"

namespace tenferro::detail {

namespace {

// A lane's session: a real Session over the runner thread's context.
class LaneSession final : public Session {
 public:
  LaneSession(CpuContext* c, std::uint64_t epoch) noexcept : Session(c, epoch, DeviceKind::cpu) {}
};

struct LaneRun {
  BackendState& backend;
  LaneSlots& lanes;
  LaneFn fn;
  int n;
  std::atomic<int> next{0};
  std::atomic<int> started{0};
  std::atomic<int> failed{0};
  FirstException first;
};

// The fields of a thread's context a runner replaces, restored when it returns (the
// calling thread's are the suspended parent's; a worker's are idle).
struct SavedContext {
  explicit SavedContext(CpuContext& c) noexcept
      : c(c), state(c.state), backend(c.backend), resources(c.resources), threads(c.threads), epoch(c.epoch), active(c.active) {}
  ~SavedContext() {
    c.state = state;
    c.backend = backend;
    c.resources = resources;
    c.threads = threads;
    c.epoch = epoch;
    c.active = active;
  }
  CpuContext& c;
  CpuContext::State state;
  BackendState* backend;
  CpuResources* resources;
  int threads;
  std::uint64_t epoch;
  Session* active;
};

// Runner `r`: takes lanes in index order until none is left or one has failed, each on
// a fresh lane session over slot r's resources.
void run_runner(LaneRun& run, int r) noexcept {
  LaneSlot& slot = run.lanes.slots[static_cast<std::size_t>(r)];
  CpuContext& c = this_context();
  const SavedContext saved(c);
  c.state = CpuContext::State::lane;
  c.backend = &run.backend;
  c.resources = slot.resources.get();
  c.threads = 1;
  BlockAllocator* const prev = swap_thread_allocator(&slot.resources->pool);
  for (;;) {
    if (run.first.failed()) break;
    const int i = run.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= run.n) break;
    run.started.fetch_add(1, std::memory_order_relaxed);
    ++slot.lanes_run;
    const std::uint64_t e = next_root_epoch();  // unique: a lane's session never outlives its lane
    LaneSession lane(&c, e);
    c.epoch = e;
    c.active = &lane;
    try {
      run.fn.call(run.fn.object, lane, i);
    } catch (...) {
      run.failed.fetch_add(1, std::memory_order_relaxed);
      run.first.record(std::current_exception(), i);
    }
    c.epoch = 0;
    c.active = nullptr;
  }
  swap_thread_allocator(prev);
}

}  // namespace

void run_lanes(Session& parent, int n, LaneFn fn, int* failed_lane) {
  constexpr const char* op = "run_lanes";
  parent.check(op);
  CpuContext& c = cpu_context(parent);
  if (c.state == CpuContext::State::lane) throw SessionEntryError(SessionEntryKind::Reentered, op, "this thread is already inside a lane");
  if (n < 0) throw ArgumentError(op, "lane count " + std::to_string(n) + " is negative");
  if (n == 0) return;
  BackendState& b = *c.backend;
  LaneSlots& lanes = c.resources->lanes;
  const int runners = std::min(n, std::max(b.num_threads, 1));
  // Slots are created here, before anything runs (an allocation failure leaves nothing
  // half done), with the backend's current pool limit shared out.
  const std::size_t share = lane_pool_limit(b, c.resources->pool.stats().byte_limit);
  while (lanes.slots.size() < static_cast<std::size_t>(runners))
    lanes.slots.push_back(LaneSlot{std::make_unique<CpuResources>(share), 0});

  LaneRun run{b, lanes, fn, n};
  {
    // The parent is unusable until the lanes are joined: its epoch leaves the context.
    const SavedContext parent_state(c);
    c.epoch = 0;
    c.active = nullptr;
    auto task = [&](int r) { run_runner(run, r); };
    run_tasks(b, runners, task_ref(task));
  }
  const int started = run.started.load(std::memory_order_relaxed);
  ++lanes.calls;
  lanes.lanes_run += static_cast<std::uint64_t>(started);
  lanes.lanes_cancelled += static_cast<std::uint64_t>(n - started);
  lanes.lanes_failed += static_cast<std::uint64_t>(run.failed.load(std::memory_order_relaxed));
  if (run.first.failed()) {
    if (failed_lane) *failed_lane = run.first.index();
    run.first.rethrow();
  }
}

}  // namespace tenferro::detail
