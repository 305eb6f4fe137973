// CpuBackend construction, session entry and exit, management calls.
// See Note [Session admission] in tenferro/cpu_backend.hpp.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "core/thread_allocator.hpp"
#include "cpu/admission.hpp"
#include "cpu/context.hpp"
#include "cpu/parallel.hpp"

namespace tenferro {

namespace detail {

namespace {
thread_local CpuContext tls_context;

// Note [Session check]
// Session::check runs first in every op, so it must be a handful of instructions. The
// thread's context has a destructor, so each access to `tls_context` tests a per-thread
// "constructed yet" flag; the check compares against `tls_self` instead, a trivially
// initialized pointer the context sets when it is constructed (on the thread's first
// entry, before any session of the thread exists) and clears when it is destroyed.
constinit thread_local CpuContext* tls_self = nullptr;

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE && c < kMaxCpus; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

int env_threads(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (end && *end == '\0' && n > 0 && n < 4096) ? static_cast<int>(n) : 0;
}

[[noreturn]] void throw_reentered(const char* op, const CpuContext& c) {
  const char* where = c.state == CpuContext::State::held    ? "a held session"
                      : c.state == CpuContext::State::scope ? "an execution scope"
                      : c.state == CpuContext::State::lane  ? "a lane"
                      : c.state == CpuContext::State::trace ? "a trace"
                                                            : "a scoped session";
  throw SessionEntryError(SessionEntryKind::Reentered, op, std::string("this thread is already inside ") + where);
}

[[noreturn]] void throw_contended(const char* op, const BackendState& b) {
  if (b.executor)
    throw SessionEntryError(SessionEntryKind::Contended, op,
                            "the backend is in use by another session (caller-managed admission refuses a second entry instead of waiting)");
  std::string ids;
  for (int c : b.cpus) ids += (ids.empty() ? "" : ",") + std::to_string(c);
  throw SessionEntryError(SessionEntryKind::Contended, op, "CPU set {" + ids + "} is in use by another session");
}

// Note [Unforgeable epochs]
// A Session is usable when it points at the calling thread's context and carries that
// context's current epoch. The context is a thread_local at a fixed offset in the
// thread's TLS block, and glibc hands a finished thread's stack and TLS block to the
// next thread it creates: a HeldSession or ExecutionScope left behind by a thread that
// exited while holding it points at the *new* thread's context. With epochs counted per
// thread from 0, that stale handle carried epoch 1, the new thread's first session had
// epoch 1 too, and the stale handle ran ops on it and, when destroyed, closed it.
// So every root entry takes its epoch from one process-wide counter (g_next_epoch; one
// relaxed increment beside the admission's own atomics), and entries inside an
// execution scope count on from the scope's epoch in the thread's context. A handle
// that can outlive its thread (HeldSession, ExecutionScope) carries a root epoch, and
// every root epoch of an exited thread is smaller than every root epoch issued after
// its TLS block was reused, so than every epoch the new thread uses (its in-scope ones
// count up from a root one): a stale handle never matches, acts on nothing (ops throw
// Poisoned), and its destructor releases nothing. Closing also compares the epoch, not
// only the context's state.
std::atomic<std::uint64_t> g_next_epoch{0};

// Admits this thread to `b` and checks out its resources; the context moves to `state`.
// Every check that can fail runs before anything blocks or changes.
std::uint64_t enter_root(CpuContext& c, BackendState& b, CpuContext::State state, bool try_only, const char* op) {
  if (c.state != CpuContext::State::idle) throw_reentered(op, c);
  if (b.executor) {  // Note [Caller-owned executors]: one domain, never a wait
    if (b.domain_busy.exchange(true, std::memory_order_acquire)) throw_contended(op, b);
  } else if (try_only) {
    if (!try_admit(b.cpus)) throw_contended(op, b);
  } else {
    admit(b.cpus);
  }
  c.resources = b.checkout();
  c.backend = &b;
  c.threads = b.num_threads;
  c.prev_allocator = swap_thread_allocator(&c.resources->pool);
  c.state = state;
  c.epoch_counter = next_root_epoch();  // Note [Unforgeable epochs]
  return c.epoch_counter;
}

// Returns the resources, then releases admission (in that order: the next session
// must find them in the slot).
void leave_root(CpuContext& c) noexcept {
  swap_thread_allocator(c.prev_allocator);
  c.prev_allocator = nullptr;
  BackendState* b = c.backend;
  b->checkin(c.resources);
  c.resources = nullptr;
  c.backend = nullptr;
  c.state = CpuContext::State::idle;
  c.epoch = 0;
  c.scope_epoch = 0;
  c.active = nullptr;
  c.threads = 1;
  if (b->executor)
    b->domain_busy.store(false, std::memory_order_release);
  else
    release(b->cpus);
}
}  // namespace

CpuContext& this_context() noexcept { return tls_context; }

std::uint64_t next_root_epoch() noexcept { return g_next_epoch.fetch_add(1, std::memory_order_relaxed) + 1; }

CpuContext::CpuContext() noexcept { tls_self = this; }

CpuContext::~CpuContext() {
  if (state != State::idle && backend) {
    BackendState* b = backend;
    leave_root(*this);
    b->release_ref();  // every root entry holds one (a scoped one: EntryGuard's)
  }
  tls_self = nullptr;
}

BackendState::BackendState(std::vector<int> cpus_in, int threads, std::size_t pool_limit)
    : cpus(std::move(cpus_in)), num_threads(threads), owned(std::make_unique<CpuResources>(pool_limit)) {
  slot.store(owned.get(), std::memory_order_release);
}

BackendState::~BackendState() { destroy_workers(*this); }

CpuResources* BackendState::checkout() noexcept {
  CpuResources* r = slot.load(std::memory_order_acquire);
  for (;;) {
    if (r == busy() || r == nullptr) {  // a management call is reading them: a few ns
      r = slot.load(std::memory_order_acquire);
      continue;
    }
    if (slot.compare_exchange_weak(r, nullptr, std::memory_order_acquire, std::memory_order_acquire)) return r;
  }
}

CpuResources* BackendState::borrow(const char* op) const {
  auto& s = slot;
  CpuResources* r = s.load(std::memory_order_acquire);
  for (;;) {
    if (r == nullptr) throw RuntimeStateError(op, "resources are checked out by an open session");
    if (r == busy()) {  // another management call: it holds them for nanoseconds
      r = s.load(std::memory_order_acquire);
      continue;
    }
    if (s.compare_exchange_weak(r, busy(), std::memory_order_acquire, std::memory_order_acquire)) return r;
  }
}

// A root scoped entry holds a reference on the backend state from before it waits until
// after it has left, so the CpuBackend may be destroyed by another thread while this
// one waits for admission or runs inside with_session (the state, CPU set included,
// lives until the entry has released them). An entry inside a scope needs none: the
// scope holds one.
EntryGuard::EntryGuard(BackendState& b, bool try_only) : session_(&tls_context), inside_scope_(false) {
  CpuContext& c = tls_context;
  const char* op = try_only ? "try_with_session" : "with_session";
  if (c.state == CpuContext::State::scope && c.backend == &b) {
    inside_scope_ = true;
    c.state = CpuContext::State::scope_scoped;
    session_.epoch_ = c.epoch = ++c.epoch_counter;
  } else {
    b.retain();
    try {
      session_.epoch_ = c.epoch = enter_root(c, b, CpuContext::State::scoped, try_only, op);
    } catch (...) {
      b.release_ref();
      throw;
    }
  }
  c.active = &session_;
}

EntryGuard::~EntryGuard() {
  CpuContext& c = tls_context;
  if (inside_scope_) {
    c.state = CpuContext::State::scope;
    c.epoch = 0;
    c.active = nullptr;
  } else {
    BackendState* b = c.backend;
    leave_root(c);
    b->release_ref();
  }
}

}  // namespace detail

// ---- Session ----

// Session's members are defined here, beside the thread-local entry record they read
// (Note [Neutral session]); a device backend's session uses the same host record.
int Session::num_threads() const noexcept { return static_cast<const detail::CpuContext&>(*ctx_).threads; }

bool Session::usable() const noexcept { return ctx_ == detail::tls_self && epoch_ != 0 && ctx_->epoch == epoch_; }

void Session::throw_unusable(std::string_view op) const {
  if (ctx_ != &detail::tls_context)
    throw SessionEntryError(SessionEntryKind::IncompatibleContext, op, "session used from a thread other than the one that opened it");
  throw SessionEntryError(SessionEntryKind::Poisoned, op, "session is closed or was moved from");
}

BufferPoolStats Session::pool_stats() const {
  check("pool_stats");
  return detail::cpu_context(*this).resources->pool.stats();
}

Session& current_session() {
  detail::CpuContext& c = detail::tls_context;
  if (!c.active || c.epoch == 0)
    throw SessionEntryError(SessionEntryKind::Poisoned, "current_session", "this thread is not inside a session (nothing opens one implicitly)");
  return *c.active;
}

// ---- HeldSession ----

HeldSession::HeldSession(detail::CpuContext* ctx, std::uint64_t epoch) noexcept : Session(ctx, epoch, DeviceKind::cpu) { ctx->active = this; }

HeldSession::HeldSession(HeldSession&& o) noexcept : Session(std::move(o)) {
  if (epoch_ && ctx_ == &detail::tls_context && ctx_->active == &o) ctx_->active = this;
}

HeldSession& HeldSession::operator=(HeldSession&& o) noexcept {
  if (this != &o) {
    this->~HeldSession();
    new (this) HeldSession(std::move(o));
  }
  return *this;
}

HeldSession::~HeldSession() {
  if (epoch_ && ctx_ == &detail::tls_context) {
    try {
      close();
    } catch (...) {
    }
  }
}

void HeldSession::close() {
  if (!epoch_) return;
  if (ctx_ != &detail::tls_context)
    throw SessionEntryError(SessionEntryKind::IncompatibleContext, "close", "held session closed from a thread other than the one that opened it");
  detail::CpuContext& c = detail::cpu_context(*this);
  if (c.state == detail::CpuContext::State::lane)
    throw SessionEntryError(SessionEntryKind::Reentered, "close", "held session closed from inside one of its lanes");
  const std::uint64_t e = epoch_;
  epoch_ = 0;
  // Already released (its thread exited), or a stale handle of an exited thread whose
  // context this thread reuses: not this thread's session (Note [Unforgeable epochs]).
  if (c.state != detail::CpuContext::State::held || c.epoch != e) return;
  detail::BackendState* b = c.backend;
  detail::leave_root(c);
  b->release_ref();
}

// ---- ExecutionScope ----

ExecutionScope& ExecutionScope::operator=(ExecutionScope&& o) noexcept {
  if (this != &o) {
    this->~ExecutionScope();
    new (this) ExecutionScope(std::move(o));
  }
  return *this;
}

ExecutionScope::~ExecutionScope() {
  if (epoch_ && ctx_ == &detail::tls_context) {
    try {
      close();
    } catch (...) {
    }
  }
}

void ExecutionScope::close() {
  if (!epoch_) return;
  if (ctx_ != &detail::tls_context)
    throw SessionEntryError(SessionEntryKind::IncompatibleContext, "close", "execution scope closed from a thread other than the one that entered it");
  detail::CpuContext& c = *ctx_;
  if (c.state == detail::CpuContext::State::scope_scoped || c.state == detail::CpuContext::State::lane)
    throw SessionEntryError(SessionEntryKind::Reentered, "close", "execution scope closed from inside one of its sessions");
  const std::uint64_t e = epoch_;
  epoch_ = 0;
  // As HeldSession::close: only this thread's own scope (Note [Unforgeable epochs]).
  if (c.state != detail::CpuContext::State::scope || c.scope_epoch != e) return;
  detail::BackendState* b = c.backend;
  detail::leave_root(c);
  b->release_ref();
}

// ---- CpuBackend ----

std::size_t default_pool_byte_limit() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return detail::BufferPool::kPoolFloorBytes;
  return static_cast<std::size_t>(pages) / 4 * static_cast<std::size_t>(page);
}

CpuBackend::CpuBackend() : CpuBackend(CpuBackendOptions{}) {}

CpuBackend::CpuBackend(CpuBackendOptions o) {
  constexpr const char* op = "CpuBackend";
  const std::vector<int> allowed = detail::affinity_cpus();
  std::vector<int> cpus = o.cpus.empty() ? allowed : o.cpus;
  std::sort(cpus.begin(), cpus.end());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    if (i && cpus[i] == cpus[i - 1]) throw ArgumentError(op, "CPU " + std::to_string(cpus[i]) + " listed twice");
    if (!std::binary_search(allowed.begin(), allowed.end(), cpus[i]))
      throw ArgumentError(op, "CPU " + std::to_string(cpus[i]) + " is not in the process affinity mask");
  }
  if (o.num_threads < 0) throw ArgumentError(op, "num_threads " + std::to_string(o.num_threads) + " is negative");
  int threads = o.num_threads;
  ThreadSource source = ThreadSource::option;
  if (o.executor) {  // the host owns the threads: its concurrency, not the environment
    if (threads == 0) {
      threads = o.executor->concurrency();
      source = ThreadSource::executor;
      if (threads < 1) throw ArgumentError(op, "executor concurrency " + std::to_string(threads) + " is below 1");
    }
  } else {
    auto pick = [&](int t, ThreadSource src) {
      if (threads == 0 && t > 0) threads = t, source = src;
    };
    pick(detail::env_threads("TENFERRO_NUM_THREADS"), ThreadSource::env_tenferro);
    pick(detail::env_threads("OMP_NUM_THREADS"), ThreadSource::env_omp);
    pick(static_cast<int>(cpus.size()), o.cpus.empty() ? ThreadSource::affinity : ThreadSource::cpu_list);
  }
  state_ = new detail::BackendState(std::move(cpus), threads, o.pool_byte_limit);
  state_->thread_source = source;
  state_->executor = std::move(o.executor);
}

CpuBackend::~CpuBackend() { state_->release_ref(); }

int CpuBackend::num_threads() const noexcept { return state_->num_threads; }
const std::vector<int>& CpuBackend::cpus() const noexcept { return state_->cpus; }

HeldSession CpuBackend::open_session() {
  detail::CpuContext& c = detail::tls_context;
  const std::uint64_t e = detail::enter_root(c, *state_, detail::CpuContext::State::held, false, "open_session");
  c.epoch = e;
  state_->retain();
  return HeldSession(&c, e);
}

HeldSession CpuBackend::try_open_session() {
  detail::CpuContext& c = detail::tls_context;
  const std::uint64_t e = detail::enter_root(c, *state_, detail::CpuContext::State::held, true, "try_open_session");
  c.epoch = e;
  state_->retain();
  return HeldSession(&c, e);
}

ExecutionScope CpuBackend::enter_scope() {
  detail::CpuContext& c = detail::tls_context;
  const std::uint64_t e = detail::enter_root(c, *state_, detail::CpuContext::State::scope, false, "enter_scope");
  c.scope_epoch = e;
  state_->retain();
  return ExecutionScope(&c, e);
}

ExecutionScope CpuBackend::try_enter_scope() {
  detail::CpuContext& c = detail::tls_context;
  const std::uint64_t e = detail::enter_root(c, *state_, detail::CpuContext::State::scope, true, "try_enter_scope");
  c.scope_epoch = e;
  state_->retain();
  return ExecutionScope(&c, e);
}

namespace {
struct Borrowed {
  const detail::BackendState& b;
  detail::CpuResources* r;
  Borrowed(const detail::BackendState& s, const char* op) : b(s), r(s.borrow(op)) {}
  ~Borrowed() { b.unborrow(r); }
};
}  // namespace

BufferPoolStats CpuBackend::pool_stats() const {
  Borrowed g(*state_, "pool_stats");
  return g.r->pool.stats();
}

namespace {
// Management calls that change resources apply to the lane slots too (Note [Lanes]).
template <class F> void for_lane_slots(detail::CpuResources& r, F&& f) {
  for (detail::LaneSlot& l : r.lanes.slots) f(*l.resources);
}
}  // namespace

void CpuBackend::trim_pool() {
  Borrowed g(*state_, "trim_pool");
  g.r->pool.trim();
  for_lane_slots(*g.r, [](detail::CpuResources& l) { l.pool.trim(); });
}

void CpuBackend::set_pool_byte_limit(std::size_t bytes) {
  Borrowed g(*state_, "set_pool_byte_limit");
  g.r->pool.set_byte_limit(bytes);
  const std::size_t share = detail::lane_pool_limit(*state_, bytes);
  for_lane_slots(*g.r, [&](detail::CpuResources& l) { l.pool.set_byte_limit(share); });
}

PlanCacheStats CpuBackend::cache_stats(CacheKind kind) const {
  Borrowed g(*state_, "cache_stats");
  return g.r->visit_cache(kind, "cache_stats", [](const auto& c) { return c.stats(); });
}

void CpuBackend::clear_cache(CacheKind kind) {
  Borrowed g(*state_, "clear_cache");
  auto clear = [](auto& c) { c.clear(); };
  g.r->visit_cache(kind, "clear_cache", clear);
  for_lane_slots(*g.r, [&](detail::CpuResources& l) { l.visit_cache(kind, "clear_cache", clear); });
}

void CpuBackend::set_cache_limits(CacheKind kind, std::size_t max_entries, std::size_t max_bytes) {
  Borrowed g(*state_, "set_cache_limits");
  auto limit = [&](auto& c) { c.set_limits(max_entries, max_bytes); };
  g.r->visit_cache(kind, "set_cache_limits", limit);
  for_lane_slots(*g.r, [&](detail::CpuResources& l) { l.visit_cache(kind, "set_cache_limits", limit); });
}

LaneStats CpuBackend::lane_stats() const {
  Borrowed g(*state_, "lane_stats");
  const detail::LaneSlots& l = g.r->lanes;
  LaneStats out{l.calls, l.lanes_run, l.lanes_failed, l.lanes_cancelled, {}};
  out.slots.reserve(l.slots.size());
  for (const detail::LaneSlot& slot : l.slots) {
    LaneSlotStats st{slot.lanes_run, slot.resources->pool.stats(), {}};
    for (int k = 0; k < kNumCacheKinds; ++k)
      st.caches[k] = slot.resources->visit_cache(static_cast<CacheKind>(k), "lane_stats", [](const auto& c) { return c.stats(); });
    out.slots.push_back(st);
  }
  return out;
}

}  // namespace tenferro
