// Fixed costs of session entry and of small ops, and bandwidth of large elementwise ops
// against a memcpy yardstick measured in the same binary. One thread.
// Run: build/release/bench/bench_session --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstring>
#include <memory>

#include "tenferro/tenferro.hpp"

using namespace tenferro;

namespace {

CpuBackend& backend() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

void entry_scoped_empty(benchmark::State& st) {
  CpuBackend& b = backend();
  for (auto _ : st) b.with_session([](Session& s) { benchmark::DoNotOptimize(&s); });
}
BENCHMARK(entry_scoped_empty)->Name("entry/scoped_empty");

void entry_held_open_close(benchmark::State& st) {
  CpuBackend& b = backend();
  for (auto _ : st) {
    HeldSession s = b.open_session();
    benchmark::DoNotOptimize(&s);
    s.close();
  }
}
BENCHMARK(entry_held_open_close)->Name("entry/held_open_close");

void entry_in_scope(benchmark::State& st) {
  CpuBackend& b = backend();
  ExecutionScope scope = b.enter_scope();
  for (auto _ : st) b.with_session([](Session& s) { benchmark::DoNotOptimize(&s); });
  scope.close();
}
BENCHMARK(entry_in_scope)->Name("entry/in_scope");

void add_held_into_2x2(benchmark::State& st) {
  auto a = Tensor::ones({2, 2}, DType::f64), b = Tensor::full({2, 2}, 2.0, DType::f64), out = Tensor::zeros({2, 2}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    add_into(s, a, b, out);
    benchmark::ClobberMemory();
  }
  s.close();
}
BENCHMARK(add_held_into_2x2)->Name("add/held_into/2x2_f64");

void add_held_2x2(benchmark::State& st) {
  auto a = Tensor::ones({2, 2}, DType::f64), b = Tensor::full({2, 2}, 2.0, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor c = add(s, a, b);
    benchmark::DoNotOptimize(c.data());
  }
  s.close();
}
BENCHMARK(add_held_2x2)->Name("add/held/2x2_f64");

void reduce_sum_len1(benchmark::State& st) {
  auto a = Tensor::ones({1}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor c = sum(s, a);
    benchmark::DoNotOptimize(c.data());
  }
  s.close();
}
BENCHMARK(reduce_sum_len1)->Name("reduce_sum/held/len1_f64");

constexpr std::int64_t k16M = std::int64_t{1} << 24, k1M = std::int64_t{1} << 20;

void add_held_into_16M(benchmark::State& st) {
  auto a = Tensor::ones({k16M}, DType::f64), b = Tensor::ones({k16M}, DType::f64), out = Tensor::zeros({k16M}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    add_into(s, a, b, out);
    benchmark::ClobberMemory();
  }
  s.close();
  st.SetBytesProcessed(st.iterations() * k16M * 8 * 3);  // two inputs read, one output written
}
BENCHMARK(add_held_into_16M)->Name("add/held_into/16M_f64")->Unit(benchmark::kMillisecond);

void exp_held_into_1M(benchmark::State& st) {
  auto a = Tensor::full({k1M}, 0.5, DType::f64), out = Tensor::zeros({k1M}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    exp_into(s, a, out);
    benchmark::ClobberMemory();
  }
  s.close();
  st.SetItemsProcessed(st.iterations() * k1M);
}
BENCHMARK(exp_held_into_1M)->Name("exp/held_into/1M_f64")->Unit(benchmark::kMicrosecond);

void copy_raw_memcpy_16M(benchmark::State& st) {
  std::unique_ptr<double[]> src(new double[k16M]), dst(new double[k16M]);
  std::memset(src.get(), 0, k16M * 8);
  std::memset(dst.get(), 0, k16M * 8);
  for (auto _ : st) {
    std::memcpy(dst.get(), src.get(), k16M * 8);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * k16M * 8 * 2);  // one read, one write
}
BENCHMARK(copy_raw_memcpy_16M)->Name("copy/raw_memcpy/16M_f64")->Unit(benchmark::kMillisecond);

// Two results of different size classes (183 and 153 MiB: 192 and 160 MiB classes)
// made in turn, as a sweep's alternating steps make theirs; one live at a time, so the
// pool's limit is 1.5 × 192 MiB and cannot hold both blocks (Note [Larger cached blocks
// serve smaller requests]). Counters: the pool's misses and the page faults per
// iteration. The yardstick pool/alternating_into does the same work into tensors
// allocated once.
constexpr std::int64_t kAltX = 24 << 20, kAltY = 20 << 20;

std::int64_t minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

template <class Body>
void alternating(benchmark::State& st, Body body) {
  auto x = Tensor::ones({kAltX}, DType::f64), y = Tensor::ones({kAltY}, DType::f64);
  HeldSession s = backend().open_session();
  body(s, x, y);  // warm: the blocks are in the pool, if it keeps them
  const std::uint64_t misses = s.pool_stats().misses;
  const std::int64_t faults = minor_faults();
  for (auto _ : st) body(s, x, y);
  const double n = static_cast<double>(st.iterations());
  st.counters["misses"] = static_cast<double>(s.pool_stats().misses - misses) / n;
  st.counters["faults"] = static_cast<double>(minor_faults() - faults) / n;
  s.close();
  st.SetBytesProcessed(st.iterations() * (kAltX + kAltY) * 8 * 2);  // one read, one write
}

void pool_alternating_results(benchmark::State& st) {
  alternating(st, [](Session& s, const Tensor& x, const Tensor& y) {
    benchmark::DoNotOptimize(neg(s, x).data());
    benchmark::DoNotOptimize(neg(s, y).data());
  });
}
BENCHMARK(pool_alternating_results)->Name("pool/alternating_results")->Unit(benchmark::kMillisecond);

void pool_alternating_into(benchmark::State& st) {
  auto ox = Tensor::zeros({kAltX}, DType::f64), oy = Tensor::zeros({kAltY}, DType::f64);
  alternating(st, [&](Session& s, const Tensor& x, const Tensor& y) {
    neg_into(s, x, ox);
    neg_into(s, y, oy);
    benchmark::ClobberMemory();
  });
}
BENCHMARK(pool_alternating_into)->Name("pool/alternating_into")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
