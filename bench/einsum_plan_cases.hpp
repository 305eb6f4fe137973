#pragma once
// Contraction-order planning benchmarks (include/tenferro/einsum_path.hpp). Google
// Benchmark registrations only (no main): bench/bench_einsum.cpp includes this file.
//
//   plan/greedy/random10    greedy on a fixed 10-tensor random network
//   plan/optimal/random10   exact DP on the same network
//   plan/greedy/regular200  greedy on the network below (planning time of the baseline)
//   plan/anneal/regular200  anneal (2 s budget) on a random 3-regular graph of 200
//                           tensors, bond dimension 2, closed; counters: log10 flops of
//                           greedy and anneal and greedy_over_anneal (target >= 10)
//
// Run: bench_einsum --benchmark_filter='plan/' (anneal runs one 2 s iteration).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "tenferro/einsum_path.hpp"

namespace tenferro_plan_bench {

// Raw mt19937_64 outputs are specified by the standard (distributions are not), so the
// networks are the same on every platform.
inline std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// A connected random network: a random spanning tree of bonds, a few extra bonds, one
// batch label on three operands kept in the output, and open legs in the output.
inline tenferro::ContractionNetwork random_network(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  tenferro::ContractionNetwork net;
  net.inputs.resize(n);
  auto add_label = [&](std::int64_t extent) {
    net.extents.push_back(extent);
    return static_cast<int>(net.extents.size()) - 1;
  };
  auto bond = [&](int a, int b) {
    const int l = add_label(draw(rng, 2, 16));
    net.inputs[a].push_back(l);
    net.inputs[b].push_back(l);
  };
  for (int i = 1; i < n; ++i) bond(i, static_cast<int>(draw(rng, 0, i - 1)));
  for (int e = 0; e < n / 2; ++e) {
    const int a = static_cast<int>(draw(rng, 0, n - 1)), b = static_cast<int>(draw(rng, 0, n - 1));
    if (a != b) bond(a, b);
  }
  const int batch = add_label(draw(rng, 2, 4));
  for (int k = 0; k < 3; ++k) {
    const int a = static_cast<int>(draw(rng, 0, n - 1));
    if (std::find(net.inputs[a].begin(), net.inputs[a].end(), batch) == net.inputs[a].end()) net.inputs[a].push_back(batch);
  }
  net.output.push_back(batch);
  for (int k = 0; k < 3; ++k) {
    const int l = add_label(draw(rng, 2, 16));
    net.inputs[draw(rng, 0, n - 1)].push_back(l);
    net.output.push_back(l);
  }
  return net;
}

// A random 3-regular graph on n vertices (configuration model, redrawn until simple):
// one operand per vertex, one label of extent `bond` per edge, empty output.
inline tenferro::ContractionNetwork regular_network(int n, int degree, std::int64_t bond, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (;;) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v)
      for (int d = 0; d < degree; ++d) stubs.push_back(v);
    for (std::size_t i = stubs.size(); i > 1; --i) std::swap(stubs[i - 1], stubs[rng() % i]);
    std::vector<std::pair<int, int>> edges;
    bool simple = true;
    for (std::size_t i = 0; i + 1 < stubs.size() && simple; i += 2) {
      const std::pair<int, int> e(std::min(stubs[i], stubs[i + 1]), std::max(stubs[i], stubs[i + 1]));
      if (e.first == e.second || std::find(edges.begin(), edges.end(), e) != edges.end()) simple = false;
      edges.push_back(e);
    }
    if (!simple) continue;
    tenferro::ContractionNetwork net;
    net.inputs.resize(n);
    for (std::size_t l = 0; l < edges.size(); ++l) {
      net.inputs[edges[l].first].push_back(static_cast<int>(l));
      net.inputs[edges[l].second].push_back(static_cast<int>(l));
      net.extents.push_back(bond);
    }
    return net;
  }
}

inline const tenferro::ContractionNetwork& random10() {
  static const auto net = random_network(10, 20261129);
  return net;
}

inline const tenferro::ContractionNetwork& regular200() {
  static const auto net = regular_network(200, 3, 2, 20261129);
  return net;
}

inline void plan_random10(benchmark::State& state, tenferro::EinsumOptimizer optimizer) {
  const auto& net = random10();
  tenferro::PlanOptions options;
  options.optimizer = optimizer;
  for (auto _ : state) {
    auto tree = tenferro::plan_contraction(net, options);
    benchmark::DoNotOptimize(tree.steps.data());
  }
  const double flops = tenferro::contraction_cost(net, tenferro::plan_contraction(net, options)).flops;
  state.counters["log10_flops"] = std::log10(flops);
}

inline void plan_greedy_random10(benchmark::State& state) { plan_random10(state, tenferro::EinsumOptimizer::greedy); }
inline void plan_optimal_random10(benchmark::State& state) { plan_random10(state, tenferro::EinsumOptimizer::optimal); }

inline void plan_greedy_regular200(benchmark::State& state) {
  tenferro::PlanOptions options;
  options.optimizer = tenferro::EinsumOptimizer::greedy;
  for (auto _ : state) {
    auto tree = tenferro::plan_contraction(regular200(), options);
    benchmark::DoNotOptimize(tree.steps.data());
  }
}

inline void plan_anneal_regular200(benchmark::State& state) {
  const auto& net = regular200();
  tenferro::PlanOptions greedy_options;
  greedy_options.optimizer = tenferro::EinsumOptimizer::greedy;
  const double greedy = tenferro::contraction_cost(net, tenferro::plan_contraction(net, greedy_options)).flops;
  tenferro::PlanOptions options;
  options.optimizer = tenferro::EinsumOptimizer::anneal;
  options.time_budget_s = 2.0;
  options.seed = 1;
  options.progress = [](const tenferro::PlanProgress&) {};  // quiet: the counters report
  double anneal = 0;
  for (auto _ : state) {
    auto tree = tenferro::plan_contraction(net, options);
    state.PauseTiming();
    anneal = tenferro::contraction_cost(net, tree).flops;
    state.ResumeTiming();
  }
  state.counters["greedy_log10_flops"] = std::log10(greedy);
  state.counters["anneal_log10_flops"] = std::log10(anneal);
  state.counters["greedy_over_anneal"] = greedy / anneal;
}

}  // namespace tenferro_plan_bench

BENCHMARK(tenferro_plan_bench::plan_greedy_random10)->Name("plan/greedy/random10");
BENCHMARK(tenferro_plan_bench::plan_optimal_random10)->Name("plan/optimal/random10");
BENCHMARK(tenferro_plan_bench::plan_greedy_regular200)->Name("plan/greedy/regular200")->Unit(benchmark::kMicrosecond);
BENCHMARK(tenferro_plan_bench::plan_anneal_regular200)
    ->Name("plan/anneal/regular200")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
