// Lanes (Note [Lanes] in tenferro/cpu_backend.hpp): fan-out of user work on a held or
// scoped session's workers, each lane a real session with private resources.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/test_util.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using tenferro::testing::entry_error_kind;
using namespace std::chrono_literals;

namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double d = 0;
  for (std::int64_t i = 0; i < a.shape()[0]; ++i)
    for (std::int64_t j = 0; j < (a.rank() > 1 ? a.shape()[1] : 1); ++j) {
      const double x = a.rank() > 1 ? a.item<double>({i, j}) : a.item<double>({i});
      const double y = b.rank() > 1 ? b.item<double>({i, j}) : b.item<double>({i});
      d = std::max(d, std::abs(x - y));
    }
  return d;
}

// The work of one item: an 8×8 SVD and two contractions (the benchmark's item).
Tensor item_work(Session& s, const Tensor& a, const Tensor& b) {
  const SvdResult r = svd(s, a);
  const Tensor us = mul(s, r.U, reshape(s, r.S, {1, 8}));
  const Tensor t = einsum(s, "ij,jk->ik", std::vector<Tensor>{us, r.Vh});
  return einsum(s, "ij,jk->ik", std::vector<Tensor>{t, b});
}

struct Inputs {
  std::vector<Tensor> a, b;
  explicit Inputs(int n) {
    std::mt19937_64 rng(7);
    for (int i = 0; i < n; ++i) {
      a.push_back(tenferro::testing::random_tensor(rng, Shape{8, 8}, DType::f64));
      b.push_back(tenferro::testing::random_tensor(rng, Shape{8, 8}, DType::f64));
    }
  }
};

}  // namespace

TEST(Lanes, EveryLaneRunsOnceWithCorrectResults) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  const int n = 64;
  const Inputs in(n);
  std::vector<Tensor> out(n);
  std::vector<int> runs(n, 0);
  s.run_lanes(n, [&](Session& lane, int i) {
    ++runs[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(i)] = item_work(lane, in.a[static_cast<std::size_t>(i)], in.b[static_cast<std::size_t>(i)]);
  });
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(runs[static_cast<std::size_t>(i)], 1) << i;
    // (U·diag(S)·Vh)·B = A·B up to rounding.
    EXPECT_LT(max_diff(out[static_cast<std::size_t>(i)], matmul(s, in.a[static_cast<std::size_t>(i)], in.b[static_cast<std::size_t>(i)])), 1e-12) << i;
  }
  const LaneStats st = [&] {
    s.close();
    return backend.lane_stats();
  }();
  EXPECT_EQ(st.calls, 1u);
  EXPECT_EQ(st.lanes_run, static_cast<std::uint64_t>(n));
  EXPECT_EQ(st.lanes_failed, 0u);
  EXPECT_EQ(st.lanes_cancelled, 0u);
  ASSERT_EQ(st.slots.size(), 2u);
  EXPECT_EQ(st.slots[0].lanes_run + st.slots[1].lanes_run, static_cast<std::uint64_t>(n));
}

TEST(Lanes, LaneIsARealSessionWithBudgetOne) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  backend.with_session([&](Session& parent) {
    std::atomic<int> ok{0};
    run_lanes(parent, 8, [&](Session& lane, int i) {
      EXPECT_EQ(lane.num_threads(), 1);
      EXPECT_EQ(&current_session(), &lane);  // operator sugar uses the lane
      const Tensor x = Tensor::full({3}, Scalar(double(i)), DType::f64);
      const Tensor y = x + 1.0;
      EXPECT_EQ(y.item<double>({2}), i + 1.0);
      EXPECT_NO_THROW((void)lane.pool_stats());
      ++ok;
    });
    EXPECT_EQ(ok.load(), 8);
    EXPECT_EQ(&current_session(), &parent);  // restored after the join
    EXPECT_EQ(add(parent, Tensor::ones({2}, DType::f64), Tensor::ones({2}, DType::f64)).item<double>({0}), 2.0);
  });
}

TEST(Lanes, CallingThreadTakesPartAndWorkersToo) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  std::mutex m;
  std::set<std::thread::id> threads;
  s.run_lanes(32, [&](Session&, int) {
    std::this_thread::sleep_for(2ms);
    std::lock_guard<std::mutex> g(m);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));
  EXPECT_EQ(threads.size(), 2u);
}

TEST(Lanes, ParentIsUnusableUntilJoined) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  const Tensor one = Tensor::ones({2}, DType::f64);
  std::mutex m;
  std::vector<SessionEntryKind> kinds;
  s.run_lanes(8, [&](Session&, int) {
    const SessionEntryKind k = entry_error_kind([&] { (void)add(s, one, one); });
    std::lock_guard<std::mutex> g(m);
    kinds.push_back(k);
  });
  ASSERT_EQ(kinds.size(), 8u);
  for (SessionEntryKind k : kinds) EXPECT_TRUE(k == SessionEntryKind::Poisoned || k == SessionEntryKind::IncompatibleContext);
  EXPECT_EQ(add(s, one, one).item<double>({1}), 2.0);
}

TEST(Lanes, EntriesInsideALaneAreReenteredBeforeBlocking) {
  // Disjoint CPU sets (where the machine has two CPUs): another thread holds `other`, so
  // an entry into it that waited would block; Reentered must come first.
  const std::vector<int> cpus = CpuBackend().cpus();
  CpuBackendOptions ob, oo;
  ob.num_threads = 2;
  oo.num_threads = 1;
  if (cpus.size() >= 2) ob.cpus = {cpus[0]}, oo.cpus = {cpus[1]};
  CpuBackend backend(ob);
  CpuBackend other(oo);
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  std::atomic<bool> held{false}, done{false};
  std::thread holder([&] {
    HeldSession o = other.open_session();
    held = true;
    while (!done) std::this_thread::sleep_for(1ms);
  });
  while (!held) std::this_thread::sleep_for(1ms);
  {
    HeldSession s = backend.open_session();
    std::atomic<int> checked{0};
    s.run_lanes(4, [&](Session& lane, int) {
      EXPECT_EQ(entry_error_kind([&] { (void)backend.open_session(); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { (void)backend.try_open_session(); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { (void)backend.enter_scope(); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { backend.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { (void)other.open_session(); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { other.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
      EXPECT_EQ(entry_error_kind([&] { run_lanes(lane, 2, [](Session&, int) {}); }), SessionEntryKind::Reentered);
      ++checked;
    });
    EXPECT_EQ(checked.load(), 4);
  }
  done = true;
  holder.join();
}

TEST(Lanes, ClosingTheParentFromALaneIsRefused) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});  // one runner: the lane runs on this thread
  HeldSession s = backend.open_session();
  s.run_lanes(1, [&](Session&, int) { EXPECT_EQ(entry_error_kind([&] { s.close(); }), SessionEntryKind::Reentered); });
  EXPECT_TRUE(s.is_open());
  EXPECT_NO_THROW(s.check("test"));
}

TEST(Lanes, AFailingLaneCancelsTheRestAndIsRethrownWithItsIndex) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  const int n = 200;
  std::atomic<int> ran{0};
  int failed = -1;
  EXPECT_THROW(s.run_lanes(
                   n,
                   [&](Session& lane, int i) {
                     ++ran;
                     if (i == 5) (void)solve(lane, Tensor::zeros({2, 2}, DType::f64), Tensor::ones({2}, DType::f64));  // singular
                     std::this_thread::sleep_for(200us);
                   },
                   &failed),
               NumericalError);
  EXPECT_EQ(failed, 5);
  EXPECT_LT(ran.load(), n);  // lanes not yet started were cancelled
  // The session stays usable, and so do the lanes.
  EXPECT_EQ(add(s, Tensor::ones({1}, DType::f64), Tensor::ones({1}, DType::f64)).item<double>({0}), 2.0);
  std::atomic<int> again{0};
  s.run_lanes(10, [&](Session&, int) { ++again; });
  EXPECT_EQ(again.load(), 10);
  // A foreign exception type comes back unchanged too.
  EXPECT_THROW(s.run_lanes(3, [](Session&, int i) {
    if (i == 2) throw std::out_of_range("lane 2");
  }),
               std::out_of_range);
  s.close();
  const LaneStats st = backend.lane_stats();
  EXPECT_EQ(st.calls, 3u);
  EXPECT_EQ(st.lanes_failed, 2u);
  EXPECT_EQ(st.lanes_run + st.lanes_cancelled, static_cast<std::uint64_t>(n + 10 + 3));
  EXPECT_GT(st.lanes_cancelled, 0u);
}

TEST(Lanes, BadCountsAndEmptyRuns) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  EXPECT_THROW(s.run_lanes(-1, [](Session&, int) {}), ArgumentError);
  s.run_lanes(0, [](Session&, int) { ADD_FAILURE() << "no lane expected"; });
  std::thread::id where;
  s.run_lanes(1, [&](Session&, int) { where = std::this_thread::get_id(); });
  EXPECT_EQ(where, std::this_thread::get_id());  // one lane: inline, no fork
}

TEST(Lanes, ResourcesPersistAcrossCallsAndStayBounded) {
  CpuBackendOptions o;
  o.num_threads = 2;
  o.pool_byte_limit = std::size_t{8} << 20;
  CpuBackend backend(o);
  const Inputs in(32);
  auto sweep = [&](HeldSession& s) {
    s.run_lanes(32, [&](Session& lane, int i) {
      (void)item_work(lane, in.a[static_cast<std::size_t>(i)], in.b[static_cast<std::size_t>(i)]);
      // Heavy allocation: 1 MiB blocks, more than a slot may cache.
      for (int k = 0; k < 8; ++k) (void)Tensor::zeros({1 << 17}, DType::f64);
      std::vector<Tensor> keep;
      for (int k = 0; k < 6; ++k) keep.push_back(Tensor::zeros({1 << 17}, DType::f64));
    });
  };
  {
    HeldSession s = backend.open_session();
    sweep(s);
  }
  const LaneStats first = backend.lane_stats();
  {
    HeldSession s = backend.open_session();
    sweep(s);
  }
  const LaneStats second = backend.lane_stats();
  ASSERT_EQ(second.slots.size(), 2u);
  const auto einsum_kind = static_cast<std::size_t>(CacheKind::einsum_programs);
  std::uint64_t hits_before = 0, hits_after = 0, plan_hits_before = 0, plan_hits_after = 0;
  for (std::size_t k = 0; k < 2; ++k) {
    const LaneSlotStats& a = first.slots[k];
    const LaneSlotStats& b = second.slots[k];
    hits_before += a.pool.hits;
    hits_after += b.pool.hits;
    plan_hits_before += a.caches[einsum_kind].hits;
    plan_hits_after += b.caches[einsum_kind].hits;
    EXPECT_LE(b.pool.cached_bytes, b.pool.byte_limit);
    EXPECT_EQ(b.pool.byte_limit, o.pool_byte_limit / 2);  // the slots share the backend's limit
    EXPECT_GT(b.pool.evictions, 0u);                      // heavy lanes hit the bound
  }
  EXPECT_GT(hits_after, hits_before);            // warm pools on the second call
  EXPECT_GT(plan_hits_after, plan_hits_before);  // and warm plan caches
  // Management reaches the slots.
  backend.trim_pool();
  backend.clear_cache(CacheKind::einsum_programs);
  for (const LaneSlotStats& st : backend.lane_stats().slots) {
    EXPECT_EQ(st.pool.cached_bytes, 0u);
    EXPECT_EQ(st.caches[einsum_kind].entries, 0u);
  }
  backend.set_pool_byte_limit(std::size_t{2} << 20);
  for (const LaneSlotStats& st : backend.lane_stats().slots) EXPECT_EQ(st.pool.byte_limit, std::size_t{1} << 20);
}

TEST(Lanes, ManagementDuringLanesDoesNotWait) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  HeldSession s = backend.open_session();
  std::atomic<bool> refused{false};
  s.run_lanes(2, [&](Session&, int i) {
    if (i == 0) {
      std::thread t([&] {
        try {
          (void)backend.lane_stats();
        } catch (const RuntimeStateError&) {
          refused = true;
        }
      });
      t.join();
    }
  });
  EXPECT_TRUE(refused.load());
}

TEST(Lanes, WorkInsideAnExecutionScope) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  ExecutionScope scope = backend.enter_scope();
  for (int round = 0; round < 3; ++round) {
    backend.with_session([&](Session& s) {
      std::atomic<int> n{0};
      run_lanes(s, 16, [&](Session& lane, int i) {
        const Tensor x = Tensor::full({4}, Scalar(double(i)), DType::f64);
        EXPECT_EQ(sum(lane, x).item<double>(), 4.0 * i);
        ++n;
      });
      EXPECT_EQ(n.load(), 16);
    });
  }
}
