// Caller-owned executors (Note [Caller-owned executors] in tenferro/cpu_backend.hpp)
// and CpuBackend::execution_info.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/context.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using tenferro::testing::entry_error_kind;

namespace {

// A host executor: task 0 on the calling thread, the others on threads of its own
// (started per run, as a runtime with its own scheduler might hand them out).
class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(int concurrency) : concurrency_(concurrency) {}
  int concurrency() const noexcept override { return concurrency_; }
  void run(int n, TaskRef task) override {
    if (refuse) throw std::runtime_error("host scheduler is shutting down");
    ++runs;
    tasks += n;
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i)
      threads.emplace_back([this, task, i] {
        note_thread();
        task(i);
      });
    note_thread();
    task(0);
    for (std::thread& t : threads) t.join();
  }
  void note_thread() {
    std::lock_guard<std::mutex> g(m);
    seen.insert(std::this_thread::get_id());
  }
  std::atomic<int> runs{0}, tasks{0};
  std::atomic<bool> refuse{false};
  std::mutex m;
  std::set<std::thread::id> seen;

 private:
  int concurrency_;
};

CpuBackend executor_backend(const std::shared_ptr<HostExecutor>& ex, int threads = 0) {
  CpuBackendOptions o;
  o.num_threads = threads;
  o.executor = ex;
  return CpuBackend(o);
}

}  // namespace

TEST(Executor, ParallelOpsRunOnTheHostsThreadsAndNoPoolStarts) {
  auto ex = std::make_shared<HostExecutor>(2);
  CpuBackend backend = executor_backend(ex);
  EXPECT_EQ(backend.num_threads(), 2);
  const std::int64_t n = 1 << 22;
  backend.with_session([&](Session& s) {
    const Tensor x = Tensor::arange(n, DType::f64);
    const Tensor y = exp(s, mul(s, x, Scalar(1e-7)));  // large enough to fork
    EXPECT_NEAR(y.item<double>({n - 1}), std::exp((n - 1) * 1e-7), 1e-12);
    EXPECT_NEAR(sum(s, x).item<double>(), double(n) * double(n - 1) / 2, 1.0);
  });
  EXPECT_GT(ex->runs.load(), 0);
  EXPECT_GE(ex->seen.size(), 2u);  // the calling thread and at least one of the host's
  EXPECT_EQ(backend.state().workers.load(), nullptr);  // never started its own pool
}

TEST(Executor, AdmissionIsCallerManaged) {
  auto ex = std::make_shared<HostExecutor>(2);
  CpuBackend backend = executor_backend(ex);
  HeldSession s = backend.open_session();
  // Same thread: Reentered, as always.
  EXPECT_EQ(entry_error_kind([&] { backend.with_session([](Session&) {}); }), SessionEntryKind::Reentered);
  // Another thread: Contended at once, for the waiting entries too (never a wait).
  std::vector<SessionEntryKind> kinds;
  std::thread t([&] {
    kinds.push_back(entry_error_kind([&] { (void)backend.open_session(); }));
    kinds.push_back(entry_error_kind([&] { backend.with_session([](Session&) {}); }));
    kinds.push_back(entry_error_kind([&] { (void)backend.enter_scope(); }));
    kinds.push_back(entry_error_kind([&] { (void)backend.try_open_session(); }));
  });
  t.join();
  for (SessionEntryKind k : kinds) EXPECT_EQ(k, SessionEntryKind::Contended);
  s.close();
  // Free again: another thread enters.
  std::thread u([&] { EXPECT_NO_THROW(backend.with_session([](Session& inner) { EXPECT_EQ(inner.num_threads(), 2); })); });
  u.join();
}

TEST(Executor, LanesRunOnTheExecutor) {
  auto ex = std::make_shared<HostExecutor>(3);
  CpuBackend backend = executor_backend(ex);
  HeldSession s = backend.open_session();
  std::vector<double> out(30);
  s.run_lanes(30, [&](Session& lane, int i) {
    EXPECT_EQ(lane.num_threads(), 1);
    const Tensor a = Tensor::full({4, 4}, Scalar(double(i)), DType::f64);
    out[static_cast<std::size_t>(i)] = matmul(lane, a, a).item<double>({0, 0});
  });
  for (int i = 0; i < 30; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], 4.0 * i * i);
  EXPECT_EQ(ex->runs.load(), 1);
  EXPECT_EQ(ex->tasks.load(), 3);
}

TEST(Executor, ARefusingExecutorIsAnExecutorError) {
  auto ex = std::make_shared<HostExecutor>(2);
  CpuBackend backend = executor_backend(ex);
  HeldSession s = backend.open_session();
  ex->refuse = true;
  const Tensor x = Tensor::arange(1 << 22, DType::f64);
  EXPECT_EQ(entry_error_kind([&] { (void)exp(s, x); }), SessionEntryKind::Executor);
  EXPECT_EQ(entry_error_kind([&] { s.run_lanes(4, [](Session&, int) {}); }), SessionEntryKind::Executor);
  ex->refuse = false;
  EXPECT_NEAR(exp(s, x).item<double>({1}), std::exp(1.0), 1e-12);  // the session stays usable
}

TEST(Executor, ThreadCountOptionWinsOverConcurrency) {
  auto ex = std::make_shared<HostExecutor>(8);
  EXPECT_EQ(executor_backend(ex, 3).num_threads(), 3);
  EXPECT_EQ(executor_backend(ex).num_threads(), 8);
  auto bad = std::make_shared<HostExecutor>(0);
  EXPECT_THROW((void)executor_backend(bad), ArgumentError);
}

TEST(Executor, ProvidersStaySingleThreaded) {
  auto ex = std::make_shared<HostExecutor>(2);
  CpuBackend backend = executor_backend(ex);
  backend.with_session([&](Session& s) {
    const Tensor a = Tensor::ones({256, 256}, DType::f64);
    EXPECT_EQ(matmul(s, a, a).item<double>({3, 4}), 256.0);
  });
  const ExecutionInfo info = backend.execution_info();
  ASSERT_FALSE(info.providers.empty());
  EXPECT_EQ(info.providers[0].name, "OpenBLAS");
  EXPECT_EQ(info.providers[0].threads, 1);
}

TEST(ExecutionInfo, DescribesTheBackend) {
  const ExecutionInfo a = CpuBackend(CpuBackendOptions{.num_threads = 2}).execution_info();
  EXPECT_EQ(a.num_threads, 2);
  EXPECT_EQ(a.thread_source, ThreadSource::option);
  EXPECT_EQ(a.executor, ExecutorKind::worker_pool);
  EXPECT_EQ(a.admission, AdmissionMode::fifo_per_cpu);
  EXPECT_TRUE(a.pinned);
  EXPECT_FALSE(a.cpus.empty());
  std::set<std::string> names;
  for (const ProviderInfo& p : a.providers) {
    names.insert(p.name);
    EXPECT_FALSE(p.version.empty()) << p.name;
    EXPECT_FALSE(p.threading.empty()) << p.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"OpenBLAS", "LAPACK", "FFTW3", "oneTBB"}));
  const std::string text = a.to_string();
  EXPECT_NE(text.find("threads: 2 (from option)"), std::string::npos) << text;
  EXPECT_NE(text.find("admission: fifo_per_cpu"), std::string::npos) << text;

  ::setenv("TENFERRO_NUM_THREADS", "3", 1);
  EXPECT_EQ(CpuBackend().execution_info().thread_source, ThreadSource::env_tenferro);
  ::unsetenv("TENFERRO_NUM_THREADS");
  const char* omp = std::getenv("OMP_NUM_THREADS");
  if (!omp) {
    EXPECT_EQ(CpuBackend().execution_info().thread_source, ThreadSource::affinity);
    CpuBackendOptions one_cpu;
    one_cpu.cpus = {a.cpus[0]};
    EXPECT_EQ(CpuBackend(one_cpu).execution_info().thread_source, ThreadSource::cpu_list);
  }
  auto ex = std::make_shared<HostExecutor>(4);
  const ExecutionInfo b = executor_backend(ex).execution_info();
  EXPECT_EQ(b.thread_source, ThreadSource::executor);
  EXPECT_EQ(b.executor, ExecutorKind::caller);
  EXPECT_EQ(b.admission, AdmissionMode::caller_managed);
  EXPECT_FALSE(b.pinned);
  EXPECT_EQ(thread_source_name(ThreadSource(42)), "?");
  EXPECT_EQ(executor_kind_name(ExecutorKind::caller), "caller");
  EXPECT_EQ(admission_mode_name(AdmissionMode::caller_managed), "caller_managed");
}
