// The session contract (DESIGN.md "Sessions"): one test per bullet of the issue's
// section 3, plus the resource checkout rules.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "cpu/admission.hpp"
#include "cpu/context.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using tenferro::testing::entry_error_kind;
using namespace std::chrono_literals;

namespace {

// Waits (bounded) until `pred` holds; false on timeout.
template <class P> bool wait_until(P pred, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::uint32_t queued_on(const CpuBackend& b) { return detail::cpu_lock(b.cpus().front()).queued(); }

}  // namespace

// Operations take Session&, which only the backend constructs (compile-time contract).
static_assert(!std::is_default_constructible_v<Session>);
static_assert(!std::is_copy_constructible_v<Session>);
static_assert(!std::is_move_constructible_v<Session>);
static_assert(!std::is_default_constructible_v<HeldSession>);
static_assert(!std::is_copy_constructible_v<HeldSession>);
static_assert(std::is_nothrow_move_constructible_v<HeldSession>);
static_assert(std::is_nothrow_destructible_v<HeldSession>);
static_assert(!std::is_copy_constructible_v<ExecutionScope>);
static_assert(!std::is_copy_constructible_v<CpuBackend> && !std::is_move_constructible_v<CpuBackend>);

TEST(Backend, ThreadCountFromOptionsEnvAndAffinity) {
  EXPECT_EQ(CpuBackend(CpuBackendOptions{.num_threads = 3}).num_threads(), 3);
  ::setenv("TENFERRO_NUM_THREADS", "5", 1);
  ::setenv("OMP_NUM_THREADS", "7", 1);
  EXPECT_EQ(CpuBackend().num_threads(), 5);
  ::unsetenv("TENFERRO_NUM_THREADS");
  EXPECT_EQ(CpuBackend().num_threads(), 7);
  ::unsetenv("OMP_NUM_THREADS");
  CpuBackend b;
  EXPECT_EQ(b.num_threads(), static_cast<int>(b.cpus().size()));
  EXPECT_GE(b.num_threads(), 1);
  CpuBackend one(CpuBackendOptions{.cpus = {b.cpus().front()}});
  EXPECT_EQ(one.num_threads(), 1);
}

TEST(Backend, BadOptionsAreArgumentErrors) {
  CpuBackend b;
  EXPECT_THROW(CpuBackend(CpuBackendOptions{.cpus = {b.cpus().front(), b.cpus().front()}}), ArgumentError);
  EXPECT_THROW(CpuBackend(CpuBackendOptions{.cpus = {100000}}), ArgumentError);
  EXPECT_THROW(CpuBackend(CpuBackendOptions{.cpus = {-1}}), ArgumentError);
  EXPECT_THROW(CpuBackend(CpuBackendOptions{.num_threads = -2}), ArgumentError);
}

TEST(Session, ScopedEntryRunsAndReturns) {
  CpuBackend b;
  const int v = b.with_session([](Session& s) {
    s.check("test");
    return 42;
  });
  EXPECT_EQ(v, 42);
  // Exceptions leave the session; the next entry works.
  EXPECT_THROW(b.with_session([](Session&) { throw std::runtime_error("x"); }), std::runtime_error);
  EXPECT_EQ(b.with_session([](Session&) { return 1; }), 1);
}

TEST(Session, HeldOpenUseClose) {
  CpuBackend b;
  HeldSession s = b.open_session();
  EXPECT_TRUE(s.is_open());
  auto x = Tensor::ones({2, 2}, DType::f64);
  EXPECT_EQ(add(s, x, x).item<double>({1, 1}), 2.0);
  s.close();
  EXPECT_FALSE(s.is_open());
  s.close();  // no-op
  EXPECT_EQ(entry_error_kind([&] { add(s, x, x); }), SessionEntryKind::Poisoned);
  // Admission was released.
  EXPECT_EQ(b.with_session([](Session&) { return 3; }), 3);
}

TEST(Session, HeldIsMoveOnlyAndMovedFromIsPoisoned) {
  CpuBackend b;
  HeldSession a = b.open_session();
  HeldSession c = std::move(a);
  auto x = Tensor::ones({2}, DType::f64);
  EXPECT_EQ(entry_error_kind([&] { add(a, x, x); }), SessionEntryKind::Poisoned);
  EXPECT_EQ(add(c, x, x).item<double>({0}), 2.0);
  EXPECT_EQ(&current_session(), static_cast<Session*>(&c));
  c.close();
}

TEST(Session, DestructorReleases) {
  CpuBackend b;
  { HeldSession s = b.open_session(); }
  EXPECT_EQ(b.with_session([](Session&) { return 1; }), 1);
}

TEST(Session, HeldSessionIsThreadAffine) {
  CpuBackend b;
  HeldSession s = b.open_session();
  auto x = Tensor::ones({2}, DType::f64);
  SessionEntryKind use_kind{}, close_kind{};
  std::thread t([&] {
    use_kind = entry_error_kind([&] { add(s, x, x); });
    close_kind = entry_error_kind([&] { s.close(); });
  });
  t.join();
  EXPECT_EQ(use_kind, SessionEntryKind::IncompatibleContext);
  EXPECT_EQ(close_kind, SessionEntryKind::IncompatibleContext);
  EXPECT_TRUE(s.is_open());  // a failed close leaves it open
  s.close();
}

TEST(Session, ThreadExitReleasesItsHeldSession) {
  CpuBackend b;
  std::thread t([&] {
    // Move it into storage that is never destroyed: the thread exits with it open.
    alignas(HeldSession) static unsigned char storage[sizeof(HeldSession)];
    new (storage) HeldSession(b.open_session());
  });
  t.join();
  EXPECT_EQ(b.try_with_session([](Session&) { return 5; }), 5);
}

TEST(Session, BackendMayDieBeforeItsHeldSession) {
  auto b = std::make_unique<CpuBackend>();
  HeldSession s = b->open_session();
  b.reset();
  auto x = Tensor::ones({2}, DType::f64);
  EXPECT_EQ(add(s, x, x).item<double>({0}), 2.0);
  s.close();
}

// Note [Unforgeable epochs]: a handle left behind by a thread that exited while holding
// it points at the context of the next thread that reuses its TLS block. It must act on
// nothing there: ops throw Poisoned, and destroying or closing it leaves the new
// thread's own session (and its admission) alone. glibc reuses a joined thread's stack
// and TLS for the next thread almost always; the test retries until it sees the reuse.
template <class Handle, class Open> void check_stale_handle_after_thread_reuse(Open open) {
  CpuBackend b;
  const auto x = Tensor::ones({2}, DType::f64);
  bool reused = false;
  for (int attempt = 0; attempt < 50 && !reused; ++attempt) {
    std::optional<Handle> stale;
    std::thread t1([&] {
      // Moved into storage that outlives the thread: it exits with the handle open.
      stale.emplace(open(b));
    });
    t1.join();
    EXPECT_EQ(b.try_with_session([](Session&) { return 1; }), 1);  // released at thread exit
    std::thread t2([&] {
      HeldSession own = b.open_session();
      if (&stale->context() != &own.context()) {
        // Another TLS block: not the scenario; the stale handle is foreign here.
        return;
      }
      reused = true;
      // Before: the stale handle carried this thread's first epoch and ran ops on `own`.
      EXPECT_EQ(entry_error_kind([&] { (void)add(*stale, x, x); }), SessionEntryKind::Poisoned);
      // Before: destroying it closed `own`, and another thread could then enter.
      stale.reset();
      EXPECT_NO_THROW(own.check("after the stale handle died"));
      EXPECT_EQ(add(own, x, x).item<double>({0}), 2.0);
      std::thread t3([&] { EXPECT_EQ(entry_error_kind([&] { b.try_with_session([](Session&) {}); }), SessionEntryKind::Contended); });
      t3.join();
      own.close();
    });
    t2.join();
    if (stale) std::thread([&] { stale.reset(); }).join();  // foreign everywhere: releases nothing
  }
  if (!reused) GTEST_SKIP() << "no thread reused an exited thread's TLS block in 50 attempts";
}

TEST(Session, StaleHeldSessionOfAnExitedThreadCannotActOnItsSuccessor) {
  check_stale_handle_after_thread_reuse<HeldSession>([](CpuBackend& b) { return b.open_session(); });
}

TEST(Session, StaleExecutionScopeOfAnExitedThreadCannotCloseItsSuccessorsScope) {
  CpuBackend b;
  bool reused = false;
  for (int attempt = 0; attempt < 50 && !reused; ++attempt) {
    std::optional<ExecutionScope> stale;
    const detail::CpuContext* ctx1 = nullptr;
    std::thread t1([&] {
      ctx1 = &detail::this_context();
      stale.emplace(b.enter_scope());
    });
    t1.join();
    std::thread t2([&] {
      if (&detail::this_context() != ctx1) return;
      reused = true;
      ExecutionScope own = b.enter_scope();
      stale.reset();  // before: closed `own`, releasing the CPUs under this thread
      EXPECT_TRUE(own.is_open());
      EXPECT_EQ(b.with_session([](Session& s) { return s.num_threads() > 0; }), true);
      std::thread t3([&] { EXPECT_EQ(entry_error_kind([&] { b.try_with_session([](Session&) {}); }), SessionEntryKind::Contended); });
      t3.join();
      own.close();
    });
    t2.join();
    if (stale) std::thread([&] { stale.reset(); }).join();
  }
  if (!reused) GTEST_SKIP() << "no thread reused an exited thread's TLS block in 50 attempts";
}

// The scoped entry holds a reference on the backend state: destroying the CpuBackend
// while another thread is inside with_session, or waiting to enter it, is allowed (as it
// is with a held session open) and was a use-after-free.
TEST(Session, BackendMayDieWhileAnotherThreadIsInsideOrWaiting) {
  for (int round = 0; round < 20; ++round) {
    auto b = std::make_unique<CpuBackend>();
    CpuBackend* raw = b.get();
    std::atomic<bool> inside{false}, go{false};
    std::atomic<int> done{0};
    std::thread runner([&] {
      raw->with_session([&](Session& s) {
        inside = true;
        while (!go) std::this_thread::sleep_for(100us);
        const auto x = Tensor::ones({4}, DType::f64);
        EXPECT_EQ(add(s, x, x).item<double>({0}), 2.0);
      });
      ++done;
    });
    ASSERT_TRUE(wait_until([&] { return inside.load(); }));
    std::thread waiter([&] {
      raw->with_session([&](Session& s) { EXPECT_GT(s.num_threads(), 0); });
      ++done;
    });
    ASSERT_TRUE(wait_until([&] { return queued_on(*raw) > 1; }));  // the runner holds, the waiter waits
    b.reset();  // the backend object goes while one thread is inside and one waits
    go = true;
    runner.join();
    waiter.join();
    EXPECT_EQ(done.load(), 2);
  }
}

TEST(Session, NestedEntryOfAnyKindIsReentered) {
  CpuBackend b, other;
  b.with_session([&](Session&) {
    EXPECT_EQ(entry_error_kind([&] { b.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { b.try_with_session([](Session&) {}); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { b.open_session(); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { b.enter_scope(); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { other.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
  });
  HeldSession h = b.open_session();
  EXPECT_EQ(entry_error_kind([&] { b.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
  EXPECT_EQ(entry_error_kind([&] { other.open_session(); }), SessionEntryKind::Reentered);
  EXPECT_EQ(entry_error_kind([&] { b.try_open_session(); }), SessionEntryKind::Reentered);
  EXPECT_EQ(entry_error_kind([&] { b.try_enter_scope(); }), SessionEntryKind::Reentered);
  h.close();
}

TEST(Session, ReenteredIsDetectedBeforeBlocking) {
  CpuBackend all;
  if (all.cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  CpuBackend mine(CpuBackendOptions{.cpus = {all.cpus()[0]}});
  CpuBackend theirs(CpuBackendOptions{.cpus = {all.cpus()[1]}});
  std::atomic<bool> held{false}, done{false};
  std::thread t([&] {
    HeldSession s = theirs.open_session();
    held = true;
    wait_until([&] { return done.load(); });
  });
  ASSERT_TRUE(wait_until([&] { return held.load(); }));
  // Entering `theirs` would block on its busy CPU; from inside a session it must fail
  // with Reentered at once instead.
  mine.with_session([&](Session&) {
    EXPECT_EQ(entry_error_kind([&] { theirs.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { theirs.open_session(); }), SessionEntryKind::Reentered);
  });
  done = true;
  t.join();
}

TEST(Session, ExecutionScopeMakesScopedEntriesCheap) {
  CpuBackend b, other;
  ExecutionScope scope = b.enter_scope();
  auto x = Tensor::ones({2}, DType::f64);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(b.with_session([&](Session& s) { return add(s, x, x).item<double>({0}); }), 2.0);
  EXPECT_EQ(entry_error_kind([&] { b.open_session(); }), SessionEntryKind::Reentered);
  EXPECT_EQ(entry_error_kind([&] { b.enter_scope(); }), SessionEntryKind::Reentered);
  EXPECT_EQ(entry_error_kind([&] { other.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
  b.with_session([&](Session&) {
    EXPECT_EQ(entry_error_kind([&] { b.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
    EXPECT_EQ(entry_error_kind([&] { scope.close(); }), SessionEntryKind::Reentered);
  });
  // The scope holds admission: another thread cannot get in.
  SessionEntryKind k{};
  std::thread t([&] { k = entry_error_kind([&] { b.try_with_session([](Session&) {}); }); });
  t.join();
  EXPECT_EQ(k, SessionEntryKind::Contended);
  // ... and the resources: management calls fail without waiting.
  EXPECT_THROW(b.pool_stats(), RuntimeStateError);
  scope.close();
  EXPECT_FALSE(scope.is_open());
  EXPECT_NO_THROW(b.pool_stats());
  EXPECT_EQ(b.try_with_session([](Session&) { return 1; }), 1);
}

TEST(Session, TryEntryReturnsContendedWithoutWaiting) {
  CpuBackend b;
  std::atomic<bool> held{false}, done{false};
  std::thread t([&] {
    b.with_session([&](Session&) {
      held = true;
      wait_until([&] { return done.load(); });
    });
  });
  ASSERT_TRUE(wait_until([&] { return held.load(); }));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(entry_error_kind([&] { b.try_with_session([](Session&) {}); }), SessionEntryKind::Contended);
  EXPECT_EQ(entry_error_kind([&] { b.try_open_session(); }), SessionEntryKind::Contended);
  EXPECT_EQ(entry_error_kind([&] { b.try_enter_scope(); }), SessionEntryKind::Contended);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  // A failed try holds nothing: once the holder leaves, entry succeeds.
  done = true;
  t.join();
  EXPECT_NO_THROW(b.try_open_session().close());
}

TEST(Session, WaitersAreAdmittedInFifoOrder) {
  CpuBackend b;
  HeldSession holder = b.open_session();
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> threads;
  constexpr int kWaiters = 5;
  for (int i = 0; i < kWaiters; ++i) {
    const std::uint32_t before = queued_on(b);
    threads.emplace_back([&, i] {
      b.with_session([&](Session&) {
        std::lock_guard<std::mutex> g(m);
        order.push_back(i);
      });
    });
    // Thread i is queued before thread i+1 starts.
    ASSERT_TRUE(wait_until([&] { return queued_on(b) == before + 1; })) << "waiter " << i << " never queued";
  }
  holder.close();
  for (auto& t : threads) t.join();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kWaiters));
  for (int i = 0; i < kWaiters; ++i) EXPECT_EQ(order[i], i);
}

TEST(Session, DisjointCpuSetsRunConcurrently) {
  CpuBackend all;
  if (all.cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  CpuBackend b0(CpuBackendOptions{.cpus = {all.cpus()[0]}});
  CpuBackend b1(CpuBackendOptions{.cpus = {all.cpus()[1]}});
  std::atomic<int> inside{0};
  std::atomic<bool> both{false};
  auto work = [&](CpuBackend& b) {
    b.with_session([&](Session& s) {
      ++inside;
      // Both sessions must be open at the same time.
      both = wait_until([&] { return inside.load() == 2; });
      auto x = Tensor::ones({4}, DType::f64);
      EXPECT_EQ(add(s, x, x).item<double>({3}), 2.0);
    });
  };
  std::thread t0(work, std::ref(b0)), t1(work, std::ref(b1));
  t0.join();
  t1.join();
  EXPECT_TRUE(both.load());
}

TEST(Session, OverlappingCpuSetsExcludeEachOther) {
  CpuBackend all;
  CpuBackend part(CpuBackendOptions{.cpus = {all.cpus().back()}});
  HeldSession s = part.open_session();
  SessionEntryKind k{};
  std::thread t([&] { k = entry_error_kind([&] { all.try_open_session(); }); });
  t.join();
  EXPECT_EQ(k, SessionEntryKind::Contended);
  s.close();
}

TEST(Resources, ManagementCallsNeverWait) {
  CpuBackend b;
  EXPECT_EQ(b.pool_stats().byte_limit, default_pool_byte_limit());
  std::atomic<bool> held{false}, done{false};
  std::thread t([&] {
    HeldSession s = b.open_session();
    held = true;
    wait_until([&] { return done.load(); });
  });
  ASSERT_TRUE(wait_until([&] { return held.load(); }));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(b.pool_stats(), RuntimeStateError);
  EXPECT_THROW(b.trim_pool(), RuntimeStateError);
  EXPECT_THROW(b.set_pool_byte_limit(1 << 20), RuntimeStateError);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  done = true;
  t.join();
  EXPECT_NO_THROW(b.pool_stats());
  // From inside a session on the same thread too.
  b.with_session([&](Session& s) {
    EXPECT_THROW(b.pool_stats(), RuntimeStateError);
    EXPECT_NO_THROW(s.pool_stats());
  });
}

TEST(Resources, PoolReusesBlocksAndCountsHitsMisses) {
  CpuBackend b;
  HeldSession s = b.open_session();
  auto x = Tensor::ones({64, 64}, DType::f64);
  const BufferPoolStats s0 = s.pool_stats();
  { Tensor y = add(s, x, x); }  // allocated (miss), released into the pool
  const BufferPoolStats s1 = s.pool_stats();
  EXPECT_EQ(s1.misses, s0.misses + 1);
  EXPECT_EQ(s1.cached_blocks, s0.cached_blocks + 1);
  EXPECT_GE(s1.cached_bytes, s0.cached_bytes + 64 * 64 * 8);
  { Tensor y = add(s, x, x); }  // same size class: a hit
  const BufferPoolStats s2 = s.pool_stats();
  EXPECT_EQ(s2.hits, s1.hits + 1);
  EXPECT_EQ(s2.misses, s1.misses);
  s.close();
  // The pool went back to the backend with the session.
  const BufferPoolStats after = b.pool_stats();
  EXPECT_EQ(after.hits, s2.hits);
  EXPECT_GE(after.cached_blocks, 1u);
  b.trim_pool();
  EXPECT_EQ(b.pool_stats().cached_bytes, 0u);
  EXPECT_EQ(b.pool_stats().cached_blocks, 0u);
}

TEST(Resources, ByteLimitEvicts) {
  CpuBackend b(CpuBackendOptions{.pool_byte_limit = 1 << 20});
  b.with_session([&](Session& s) {
    auto x = Tensor::ones({300 * 1024 / 8}, DType::f64);  // 300 KiB
    std::vector<Tensor> keep;
    for (int i = 0; i < 6; ++i) keep.push_back(add(s, x, x));
    keep.clear();  // 6 × ~300 KiB released into a 1 MiB pool
    const BufferPoolStats st = s.pool_stats();
    EXPECT_LE(st.cached_bytes, std::size_t{1} << 20);
    EXPECT_GE(st.evictions, 3u);
    // A block larger than the limit is never cached.
    { Tensor big = Tensor::zeros({(2 << 20) / 8}, DType::f64); }
    EXPECT_LE(s.pool_stats().cached_bytes, std::size_t{1} << 20);
  });
  b.set_pool_byte_limit(0);
  EXPECT_EQ(b.pool_stats().cached_bytes, 0u);
  EXPECT_EQ(b.pool_stats().byte_limit, 0u);
}

// Note [Pool limit follows the peak]
TEST(Resources, PoolLimitFollowsThePeakInUse) {
  using detail::BufferPool;
  constexpr std::size_t MiB = std::size_t{1} << 20;
  BufferPool pool(std::size_t{4} << 30);
  // 150 MiB (a 160 MiB class) is above the 100 MiB floor: cached once it was in use.
  detail::StorageHeader* a = pool.allocate(150 * MiB);
  EXPECT_EQ(pool.stats().peak_bytes, 160 * MiB);
  pool.release(a);
  EXPECT_EQ(pool.stats().cached_bytes, 160 * MiB);
  detail::StorageHeader* b = pool.allocate(150 * MiB);
  EXPECT_EQ(pool.stats().hits, 1u);
  // Two blocks live at once raise the peak; both are cached when they come back.
  detail::StorageHeader* c = pool.allocate(200 * MiB);  // a 224 MiB class
  EXPECT_EQ(pool.stats().peak_bytes, 384 * MiB);
  pool.release(b);
  pool.release(c);
  EXPECT_EQ(pool.stats().cached_bytes, 384 * MiB);
  EXPECT_EQ(pool.stats().evictions, 0u);
  // A trim frees everything and restarts the peak from what is in use (nothing).
  pool.trim();
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  EXPECT_EQ(pool.stats().peak_bytes, 0u);
  // Blocks used one after the other add up to more than the peak: the pool holds up to
  // twice the peak, here both.
  pool.release(pool.allocate(150 * MiB));
  pool.release(pool.allocate(200 * MiB));
  EXPECT_EQ(pool.stats().peak_bytes, 224 * MiB);
  EXPECT_EQ(pool.stats().cached_bytes, 384 * MiB);  // 160 + 224 <= 448
  EXPECT_EQ(pool.stats().evictions, 0u);
  // Two blocks of a 64 MiB class (the cached ones are more than twice that: their own
  // blocks, Note [Larger cached blocks serve smaller requests]): the first fits (448),
  // the second does not, and the largest cached block is evicted.
  detail::StorageHeader* d = pool.allocate(62 * MiB);
  detail::StorageHeader* e = pool.allocate(62 * MiB);
  EXPECT_EQ(pool.stats().misses, 6u);
  pool.release(d);
  EXPECT_EQ(pool.stats().cached_bytes, 448 * MiB);
  pool.release(e);
  EXPECT_EQ(pool.stats().cached_bytes, 288 * MiB);  // 160 + 64 + 64
  EXPECT_EQ(pool.stats().evictions, 1u);
  // Below the floor a limit is the limit; 0 caches nothing.
  pool.set_byte_limit(48 * MiB);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  pool.release(pool.allocate(32 * MiB));
  pool.release(pool.allocate(48 * MiB));
  EXPECT_EQ(pool.stats().cached_bytes, 48 * MiB);
  pool.set_byte_limit(0);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  pool.release(pool.allocate(64));
  EXPECT_EQ(pool.stats().cached_blocks, 0u);
}

// Note [Larger cached blocks serve smaller requests]
TEST(Resources, LargerCachedBlocksServeSmallerRequests) {
  using detail::BufferPool;
  constexpr std::size_t MiB = std::size_t{1} << 20;
  BufferPool pool(std::size_t{4} << 30);
  // Two results in turn, one live at a time: 183 MiB (a 192 MiB class) and 153 MiB (160).
  // The smaller takes the larger's block: one block serves both.
  for (int i = 0; i < 6; ++i) {
    detail::StorageHeader* x = pool.allocate(183 * MiB);
    EXPECT_EQ(x->capacity, 192 * MiB);
    pool.release(x);
    detail::StorageHeader* y = pool.allocate(153 * MiB);
    EXPECT_EQ(y->capacity, 192 * MiB);  // the cached block, not a new 160 MiB one
    EXPECT_EQ(y->bytes, 153 * MiB);
    pool.release(y);
  }
  EXPECT_EQ(pool.stats().misses, 1u);
  EXPECT_EQ(pool.stats().hits, 11u);
  EXPECT_EQ(pool.stats().evictions, 0u);
  EXPECT_EQ(pool.stats().peak_bytes, 192 * MiB);  // a block counts at its own capacity
  // A block more than twice the request's class is left for larger requests.
  detail::StorageHeader* small = pool.allocate(75 * MiB);  // an 80 MiB class
  EXPECT_EQ(small->capacity, 80 * MiB);
  EXPECT_EQ(pool.stats().misses, 2u);
  EXPECT_EQ(pool.stats().cached_bytes, 192 * MiB);
  // The request's own class comes first when it holds a block.
  pool.release(small);
  detail::StorageHeader* again = pool.allocate(78 * MiB);
  EXPECT_EQ(again->capacity, 80 * MiB);
  // 100 MiB (a 112 MiB class) takes the 192 MiB block: three classes up, 1.71 times.
  detail::StorageHeader* mid = pool.allocate(100 * MiB);
  EXPECT_EQ(mid->capacity, 192 * MiB);
  EXPECT_EQ(pool.stats().cached_bytes, 0u);
  pool.release(again);
  pool.release(mid);
  EXPECT_EQ(pool.stats().misses, 2u);
}

TEST(Resources, DefaultPoolLimitIsAQuarterOfMemory) {
  const std::size_t d = default_pool_byte_limit();
  EXPECT_GE(d, detail::BufferPool::kPoolFloorBytes);
  CpuBackend b;
  EXPECT_EQ(b.pool_stats().byte_limit, d);
}

TEST(Resources, TensorsOutliveSessions) {
  CpuBackend b;
  Tensor kept;
  b.with_session([&](Session& s) { kept = add(s, Tensor::ones({3}, DType::f64), 1.0); });
  EXPECT_EQ(kept.item<double>({2}), 2.0);  // freed to the heap later, outside any session
}

TEST(Sugar, OperatorsUseTheCurrentSessionOnly) {
  CpuBackend b;
  auto x = Tensor::ones({2}, DType::f64);
  EXPECT_EQ(entry_error_kind([&] { (void)(x + x); }), SessionEntryKind::Poisoned);
  EXPECT_EQ(entry_error_kind([&] { current_session(); }), SessionEntryKind::Poisoned);
  b.with_session([&](Session& s) {
    EXPECT_EQ(&current_session(), &s);
    EXPECT_EQ(((x + x) * 3.0).item<double>({0}), 6.0);
  });
  HeldSession h = b.open_session();
  EXPECT_EQ((-x).item<double>({1}), -1.0);
  h.close();
  EXPECT_EQ(entry_error_kind([&] { (void)(x * 2.0); }), SessionEntryKind::Poisoned);
}

TEST(Misuse, TensorFromAnotherDeviceIsIncompatibleContext) {
  CpuBackend b;
  auto x = Tensor::ones({2, 2}, DType::f64), out = Tensor::zeros({2, 2}, DType::f64);
  // No CUDA backend yet: relabel a host block as device memory to stand in for one.
  auto foreign = Tensor::ones({2, 2}, DType::f64);
  foreign.block()->device = Device{DeviceKind::cuda, 0};
  b.with_session([&](Session& s) {
    EXPECT_EQ(entry_error_kind([&] { add(s, x, foreign); }), SessionEntryKind::IncompatibleContext);
    EXPECT_EQ(entry_error_kind([&] { add_into(s, x, x, foreign); }), SessionEntryKind::IncompatibleContext);
    EXPECT_EQ(entry_error_kind([&] { exp(s, foreign); }), SessionEntryKind::IncompatibleContext);
    EXPECT_EQ(entry_error_kind([&] { sum(s, foreign); }), SessionEntryKind::IncompatibleContext);
  });
  foreign.block()->device = Device{};
}
