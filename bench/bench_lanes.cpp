// Lanes (Note [Lanes]): a fan-out of 256 independent small items (an 8×8 SVD and two
// small contractions each) on a held session's two workers, against the same loop in
// one session at one thread (the yardstick, same binary, same run); and the fixed cost
// of run_lanes itself with empty lanes.
// Run: build/release/bench/bench_lanes --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "tenferro/tenferro.hpp"

using namespace tenferro;

namespace {

constexpr int kItems = 256;

struct Items {
  std::vector<Tensor> a, b, out;
  Items() : out(kItems) {
    Generator g(11);
    for (int i = 0; i < kItems; ++i) {
      a.push_back(Tensor::normal(g, {8, 8}, DType::f64));
      b.push_back(Tensor::normal(g, {8, 8}, DType::f64));
    }
  }
};

// One item: A = U S Vh; (U·diag(S))·Vh, then that times B.
void item(Session& s, Items& it, int i) {
  const auto k = static_cast<std::size_t>(i);
  const SvdResult r = svd(s, it.a[k]);
  const Tensor us = mul(s, r.U, reshape(s, r.S, {1, 8}));
  const Tensor t = einsum(s, "ij,jk->ik", std::vector<Tensor>{us, r.Vh});
  it.out[k] = einsum(s, "ij,jk->ik", std::vector<Tensor>{t, it.b[k]});
}

void lanes_svd_contract(benchmark::State& st) {
  static CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  Items it;
  HeldSession s = backend.open_session();
  for (auto _ : st) s.run_lanes(kItems, [&](Session& lane, int i) { item(lane, it, i); });
  st.SetItemsProcessed(st.iterations() * kItems);
}
BENCHMARK(lanes_svd_contract)->Name("lanes/svd_contract_8x8/256")->Unit(benchmark::kMicrosecond)->UseRealTime();

void loop_svd_contract(benchmark::State& st) {
  static CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  Items it;
  HeldSession s = backend.open_session();
  for (auto _ : st)
    for (int i = 0; i < kItems; ++i) item(s, it, i);
  st.SetItemsProcessed(st.iterations() * kItems);
}
BENCHMARK(loop_svd_contract)->Name("lanes/svd_contract_8x8/256/loop_1thread")->Unit(benchmark::kMicrosecond)->UseRealTime();

void lanes_empty(benchmark::State& st) {
  static CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  const int n = static_cast<int>(st.range(0));
  HeldSession s = backend.open_session();
  for (auto _ : st) s.run_lanes(n, [](Session& lane, int i) { benchmark::DoNotOptimize(&lane); });
}
BENCHMARK(lanes_empty)->Name("lanes/run_lanes_empty/2threads")->Arg(2)->Arg(16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
