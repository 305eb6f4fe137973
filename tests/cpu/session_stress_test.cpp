// A bounded session stress test (issue 14, item 2): threads mixing held sessions,
// scoped entries, execution scopes (with scoped entries inside), try_ entries,
// exceptions thrown inside callbacks, threads exiting while holding a session or a
// scope, and management calls from other threads, against one backend, for about a
// second. Checks: mutual exclusion (never two threads admitted at once), every thread
// makes progress (no starvation), no deadlock (a watchdog aborts after 60 s), and the
// pool and management calls work afterwards. Run it under ThreadSanitizer as well.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tenferro/tenferro.hpp"

using namespace tenferro;
using namespace std::chrono_literals;

namespace {

struct Inside {
  std::atomic<int>& n;
  explicit Inside(std::atomic<int>& c) : n(c) {
    if (n.fetch_add(1) != 0) ADD_FAILURE() << "two threads admitted at once";
  }
  ~Inside() { n.fetch_sub(1); }
};

TEST(SessionStress, MixedEntriesExceptionsExitsAndManagement) {
  CpuBackend b;
  constexpr int kThreads = 6;
  constexpr auto kDuration = 1000ms;
  std::atomic<int> inside{0};
  std::atomic<bool> stop{false}, finished{false};
  std::atomic<std::int64_t> progress[kThreads] = {};
  std::atomic<std::int64_t> management_ok{0}, management_busy{0}, contended{0}, thrown{0};
  std::atomic<std::int64_t> worst_wait_us{0};
  // Watchdog: a deadlock fails loudly instead of hanging the suite.
  std::thread watchdog([&] {
    for (int i = 0; i < 600 && !finished; ++i) std::this_thread::sleep_for(100ms);
    if (!finished) {
      std::fprintf(stderr, "SessionStress: no progress for 60 s (deadlock)\n");
      std::abort();
    }
  });
  auto work = [&](Session& s) {
    Inside guard(inside);
    const Tensor x = Tensor::ones({16}, DType::f64);
    const Tensor y = add(s, x, x);
    EXPECT_EQ(y.item<double>({3}), 2.0);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) * 7919u + 1u);
      while (!stop) {
        const auto t0 = std::chrono::steady_clock::now();
        switch (rng() % 7) {
          case 0: b.with_session(work); break;
          case 1: {
            HeldSession h = b.open_session();
            work(h);
            work(h);
            h.close();
            break;
          }
          case 2: {
            ExecutionScope sc = b.enter_scope();
            for (int k = 0; k < 3; ++k) b.with_session(work);
            break;
          }
          case 3:
            try {
              b.try_with_session(work);
            } catch (const SessionEntryError& e) {
              EXPECT_EQ(e.kind(), SessionEntryKind::Contended);
              ++contended;
            }
            break;
          case 4:
            try {
              b.with_session([&](Session& s) {
                work(s);
                throw std::runtime_error("callback failed");
              });
            } catch (const std::runtime_error&) {
              ++thrown;
            }
            break;
          case 5: {  // a thread that exits while holding a session or a scope
            std::thread([&, held = rng() % 2 == 0] {
              alignas(HeldSession) static thread_local unsigned char hs[sizeof(HeldSession)];
              alignas(ExecutionScope) static thread_local unsigned char es[sizeof(ExecutionScope)];
              if (held) {
                auto* h = new (hs) HeldSession(b.open_session());
                work(*h);
              } else {
                new (es) ExecutionScope(b.enter_scope());
                b.with_session(work);
              }
            }).join();
            break;
          }
          default:
            try {
              (void)b.pool_stats();
              ++management_ok;
            } catch (const RuntimeStateError&) {
              ++management_busy;
            }
            break;
        }
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
        std::int64_t w = worst_wait_us.load();
        while (us > w && !worst_wait_us.compare_exchange_weak(w, us)) {
        }
        ++progress[t];
      }
    });
  std::this_thread::sleep_for(kDuration);
  stop = true;
  for (auto& th : threads) th.join();
  finished = true;
  watchdog.join();
  std::int64_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_GT(progress[t].load(), 0) << "thread " << t << " starved";
    total += progress[t].load();
  }
  std::printf("[ stress ] %lld iterations over %d threads, worst iteration %lld us, %lld contended, %lld thrown, "
              "management %lld ok / %lld busy\n",
              static_cast<long long>(total), kThreads, static_cast<long long>(worst_wait_us.load()), static_cast<long long>(contended.load()),
              static_cast<long long>(thrown.load()), static_cast<long long>(management_ok.load()), static_cast<long long>(management_busy.load()));
  EXPECT_EQ(inside.load(), 0);
  // Consistent at the end: nothing is checked out, the pool answers and still works.
  EXPECT_NO_THROW((void)b.pool_stats());
  EXPECT_NO_THROW(b.trim_pool());
  EXPECT_EQ(b.try_with_session([](Session& s) { return add(s, Tensor::ones({2}, DType::f64), 1.0).item<double>({0}); }), 2.0);
}

}  // namespace
