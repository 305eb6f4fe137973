// The automatic optimizer, the chain solver, the time model and slice planning
// (einsum_path.hpp): generated networks of the kinds users contract (matrix chains, MPS
// environments, PEPS norms, random regular graphs, tree tensor networks), hand-checked
// model values, and every bad option.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "einsum/factor_graph.hpp"
#include "einsum/path_internal.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using tenferro::testing::expect_error;
using tenferro::testing::regular_graph;

namespace {

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

int add_label(ContractionNetwork& net, std::int64_t extent) {
  net.extents.push_back(extent);
  return static_cast<int>(net.extents.size()) - 1;
}

// Matrix chain A0·A1·…·A(n-1) with random extents, operands listed in `perm` order.
ContractionNetwork matrix_chain(std::mt19937_64& rng, int n, std::int64_t lo, std::int64_t hi, bool shuffle) {
  ContractionNetwork net;
  std::vector<int> dims;
  for (int i = 0; i <= n; ++i) dims.push_back(add_label(net, draw(rng, lo, hi)));
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  if (shuffle) std::shuffle(perm.begin(), perm.end(), rng);
  for (int i : perm) net.inputs.push_back({dims[i], dims[i + 1]});
  net.output = {dims[0], dims[n]};
  return net;
}

// <psi|O|psi> environment of an MPS (bond D, physical d) with an MPO (bond w): 3n tensors.
ContractionNetwork mps_mpo(int n, std::int64_t D, std::int64_t d, std::int64_t w) {
  ContractionNetwork net;
  std::vector<int> top(n + 1), mid(n + 1), bot(n + 1);
  for (int i = 0; i <= n; ++i) {
    const std::int64_t edge = (i == 0 || i == n) ? 1 : 0;
    top[i] = add_label(net, edge ? 1 : D);
    mid[i] = add_label(net, edge ? 1 : w);
    bot[i] = add_label(net, edge ? 1 : D);
  }
  for (int i = 0; i < n; ++i) {
    const int up = add_label(net, d), down = add_label(net, d);
    net.inputs.push_back({top[i], up, top[i + 1]});
    net.inputs.push_back({mid[i], up, down, mid[i + 1]});
    net.inputs.push_back({bot[i], down, bot[i + 1]});
  }
  return net;
}

// Norm of an Lx×Ly PEPS (bond D, physical d): ket and bra per site, physical legs summed.
ContractionNetwork peps_norm(int lx, int ly, std::int64_t D, std::int64_t d) {
  ContractionNetwork net;
  auto site = [&](int x, int y) { return y * lx + x; };
  std::vector<std::vector<int>> ket(lx * ly), bra(lx * ly);
  for (int y = 0; y < ly; ++y)
    for (int x = 0; x < lx; ++x) {
      const int p = add_label(net, d);
      ket[site(x, y)].push_back(p);
      bra[site(x, y)].push_back(p);
      if (x + 1 < lx) {
        const int k = add_label(net, D), b = add_label(net, D);
        ket[site(x, y)].push_back(k), ket[site(x + 1, y)].push_back(k);
        bra[site(x, y)].push_back(b), bra[site(x + 1, y)].push_back(b);
      }
      if (y + 1 < ly) {
        const int k = add_label(net, D), b = add_label(net, D);
        ket[site(x, y)].push_back(k), ket[site(x, y + 1)].push_back(k);
        bra[site(x, y)].push_back(b), bra[site(x, y + 1)].push_back(b);
      }
    }
  for (auto& k : ket) net.inputs.push_back(k);
  for (auto& b : bra) net.inputs.push_back(b);
  return net;
}

// Binary tree tensor network of `levels` levels (leaves carry open physical legs of d).
ContractionNetwork tree_network(int levels, std::int64_t chi, std::int64_t d) {
  ContractionNetwork net;
  std::vector<int> frontier;  // the up-bond of each node of the current level
  const int leaves = 1 << levels;
  for (int i = 0; i < leaves; ++i) {
    const int p = add_label(net, d), up = add_label(net, chi);
    net.inputs.push_back({p, up});
    net.output.push_back(p);
    frontier.push_back(up);
  }
  while (frontier.size() > 1) {
    std::vector<int> next;
    for (std::size_t i = 0; i + 1 < frontier.size(); i += 2) {
      const int up = add_label(net, frontier.size() == 2 ? 1 : chi);
      net.inputs.push_back({frontier[i], frontier[i + 1], up});
      next.push_back(up);
    }
    frontier = next;
  }
  net.output.resize(std::min<std::size_t>(net.output.size(), 4));  // a few open legs, the rest summed
  return net;
}

double seconds(const ContractionNetwork& net, const ContractionTree& t) { return contraction_cost(net, t).predicted_seconds; }

ContractionTree with(const ContractionNetwork& net, EinsumOptimizer opt, PlanObjective obj = PlanObjective::time) {
  PlanOptions o;
  o.optimizer = opt;
  o.objective = obj;
  o.progress = [](const PlanProgress&) {};
  return plan_contraction(net, o);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Time model
// ---------------------------------------------------------------------------------------

TEST(TimeModel, MatrixProductByHand) {
  // ij,jk->ik with 30×40 by 40×50: one GEMM, M = 30, N = 50, K = 40.
  ContractionNetwork net{{{0, 1}, {1, 2}}, {0, 2}, {30, 40, 50}};
  CostModel m;
  m.gemm_rate = 1e9;
  m.gemm_half_extent = 10;
  m.bytes_rate = 1e9;
  m.read_factor = 2;
  m.write_factor = 1;
  m.step_seconds = 1e-6;
  m.element_bytes = 8;
  const auto c = contraction_cost(net, ContractionTree{{{0, 1}}}, m);
  const double eff = 30.0 / 40 * (50.0 / 60) * (40.0 / 50);
  const double bytes = 8 * (2 * (1200 + 2000) + 1500);
  EXPECT_DOUBLE_EQ(c.flops, 30 * 40 * 50);
  EXPECT_DOUBLE_EQ(c.bytes, bytes);
  EXPECT_NEAR(c.predicted_seconds, 1e-6 + 60000 / (1e9 * eff) + bytes / 1e9, 1e-15);
}

TEST(TimeModel, ElementwiseStepsPayNoGemmAndBatchesMultiply) {
  // ij,jk->ijk contracts nothing: only the fixed cost and the traffic.
  ContractionNetwork outer{{{0, 1}, {1, 2}}, {0, 1, 2}, {4, 5, 6}};
  CostModel m;
  const auto c = contraction_cost(outer, ContractionTree{{{0, 1}}}, m);
  const double bytes = m.element_bytes * (m.read_factor * (20 + 30) + m.write_factor * 120);
  EXPECT_NEAR(c.predicted_seconds, m.step_seconds + bytes / m.bytes_rate, 1e-15);
  // bij,bjk->bik: B = 7 GEMMs of 4×5 by 5×6.
  ContractionNetwork batched{{{3, 0, 1}, {3, 1, 2}}, {3, 0, 2}, {4, 5, 6, 7}};
  const auto b = contraction_cost(batched, ContractionTree{{{0, 1}}}, m);
  const double h = m.gemm_half_extent, eff = 4 / (4 + h) * (6 / (6 + h)) * (5 / (5 + h));
  const double bb = m.element_bytes * (m.read_factor * (140 + 210) + m.write_factor * 168);
  EXPECT_NEAR(b.predicted_seconds, m.step_seconds + 840 / (m.gemm_rate * eff) + bb / m.bytes_rate, 1e-15);
}

TEST(TimeModel, AStepWithoutMultiplyAddsPaysNoGemm) {
  // ij,jk->ik with i = 0: no multiply-add, so only the fixed cost and the traffic of
  // the 40×50 operand (the quotient madds / (rate · efficiency) was 0/0 here).
  ContractionNetwork net{{{0, 1}, {1, 2}}, {0, 2}, {0, 40, 50}};
  CostModel m;
  const auto c = contraction_cost(net, ContractionTree{{{0, 1}}}, m);
  EXPECT_EQ(c.flops, 0);
  EXPECT_NEAR(c.predicted_seconds, m.step_seconds + m.element_bytes * m.read_factor * 2000 / m.bytes_rate, 1e-15);
}

TEST(TimeModel, BadModelsAreArgumentErrors) {
  ContractionNetwork net{{{0, 1}, {1, 2}}, {0, 2}, {3, 4, 5}};
  for (int field = 0; field < 7; ++field) {
    for (double bad : {-1.0, std::nan(""), HUGE_VAL, 0.0}) {
      CostModel m;
      double* f[] = {&m.gemm_rate, &m.bytes_rate, &m.element_bytes, &m.gemm_half_extent, &m.read_factor, &m.write_factor,
                     &m.step_seconds};
      *f[field] = bad;
      if (bad == 0.0 && field >= 3) continue;  // zero is allowed for these
      expect_error<ArgumentError>([&] { contraction_cost(net, ContractionTree{{{0, 1}}}, m); }, "contraction_cost");
      PlanOptions o;
      o.cost_model = m;
      expect_error<ArgumentError>([&] { plan_contraction(net, o); }, "plan_contraction");
    }
  }
}

TEST(TimeModel, TimeObjectivePrefersFewerLargeIntermediatesAtEqualFlops) {
  // The exact DP under the time objective never predicts slower than under flops, and
  // the flops objective never counts more flops.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const auto net = mps_mpo(3, draw(rng, 2, 40), draw(rng, 2, 4), draw(rng, 1, 6));
    const auto t = with(net, EinsumOptimizer::optimal, PlanObjective::time);
    const auto f = with(net, EinsumOptimizer::optimal, PlanObjective::flops);
    EXPECT_LE(seconds(net, t), seconds(net, f) * (1 + 1e-12));
    EXPECT_LE(contraction_cost(net, f).flops, contraction_cost(net, t).flops * (1 + 1e-12));
  }
}

TEST(TimeModel, SizedStepEqualsTheLabelByLabelStep) {
  // StepModel::step_sized (the DP's form: operand sizes known, only shared labels
  // visited) gives exactly step()'s cost, under both objectives, for label sets over
  // three words with extent-1 labels (a contraction over extent 1 still counts as a GEMM)
  // while the extents' products fit in a double's 53 bits; above, to rounding.
  using einsum_detail::StepModel;
  using einsum_detail::Word;
  std::mt19937_64 rng(11);
  constexpr int W = 3;
  std::vector<double> ext(64 * W);
  for (double& e : ext) e = static_cast<double>(draw(rng, 1, 9));
  int exact = 0;
  for (PlanObjective objective : {PlanObjective::time, PlanObjective::flops}) {
    const StepModel model(objective, CostModel{});
    for (int trial = 0; trial < 2000; ++trial) {
      Word a[W], b[W], c[W];
      for (int w = 0; w < W; ++w) {
        const Word sparse = rng() & rng() & rng() & rng();  // about 4 labels a word
        a[w] = sparse & rng();
        b[w] = (sparse | (rng() & rng() & rng())) & rng();
        c[w] = (a[w] | b[w]) & rng();  // the result keeps some labels of either side
      }
      const double sa = einsum_detail::set_size(a, W, ext.data()), sb = einsum_detail::set_size(b, W, ext.data());
      const double sized = model.step_sized(a, b, c, W, ext.data(), sa, sb), plain = model.step(a, b, c, W, ext.data());
      if (sa * sb < 0x1p53) {
        ++exact;
        EXPECT_EQ(sized, plain) << trial;
      } else {
        EXPECT_NEAR(sized, plain, 1e-12 * plain) << trial;
      }
    }
  }
  EXPECT_GT(exact, 2000);  // most trials are in the exact range
}

// ---------------------------------------------------------------------------------------
// Chain solver
// ---------------------------------------------------------------------------------------

TEST(Chain, DetectsChainsInAnyOperandOrder) {
  std::mt19937_64 rng(1);
  const auto net = matrix_chain(rng, 9, 2, 30, true);
  einsum_detail::PreparedNetwork p;
  einsum_detail::prepare_network(net, p);
  const auto order = einsum_detail::chain_order(p);
  ASSERT_EQ(order.size(), 9u);
  for (int i = 0; i + 1 < 9; ++i) {  // neighbours along the order share a label
    const auto& a = net.inputs[order[i]];
    const auto& b = net.inputs[order[i + 1]];
    EXPECT_TRUE(std::find(a.begin(), a.end(), b[0]) != a.end() || std::find(a.begin(), a.end(), b[1]) != a.end());
  }
  // A ring, a star and a PEPS are not chains.
  ContractionNetwork ring{{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, {}, {2, 2, 2, 2}};
  ContractionNetwork star{{{0, 1, 2}, {0}, {1}, {2}}, {}, {2, 2, 2}};
  for (const auto& n : {ring, star, peps_norm(2, 2, 2, 2)}) {
    einsum_detail::prepare_network(n, p);
    EXPECT_TRUE(einsum_detail::chain_order(p).empty());
  }
}

TEST(Chain, EqualsTheExactDpOnSmallChains) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 9));
    const auto net = matrix_chain(rng, n, 1, 40, trial % 2 == 1);
    for (auto obj : {PlanObjective::flops, PlanObjective::time}) {
      const auto c = with(net, EinsumOptimizer::chain, obj);
      const auto o = with(net, EinsumOptimizer::optimal, obj);
      const auto cc = contraction_cost(net, c), oc = contraction_cost(net, o);
      if (obj == PlanObjective::flops) EXPECT_NEAR(cc.flops, oc.flops, 1e-9 * oc.flops) << "trial " << trial;
      else EXPECT_NEAR(cc.predicted_seconds, oc.predicted_seconds, 1e-9 * oc.predicted_seconds) << "trial " << trial;
      auto root = net.output;
      EXPECT_NO_THROW(validate_contraction_tree(n, c));
    }
  }
}

TEST(Chain, LongChainsArePlannedByTheChainSolverQuickly) {
  std::mt19937_64 rng(3);
  // Extents large enough (a predicted run of about a second) that the automatic
  // planner's budget (10% of it) covers the DP however long greedy took on a loaded
  // machine: with 50..400 (20 ms predicted, 2 ms of budget) it fell back to greedy there.
  const auto net = matrix_chain(rng, 100, 200, 1600, true);
  PlanOptions o;
  o.optimizer = EinsumOptimizer::chain;
  const auto chain = plan_sliced_contraction(net, o);
  std::printf("chain DP over 100 operands: %.3f ms, predicted %.3f ms\n", chain.planning_seconds * 1e3,
              chain.cost.predicted_seconds * 1e3);
  o.optimizer = EinsumOptimizer::automatic;
  const auto plan = plan_sliced_contraction(net, o);
  EXPECT_EQ(plan.chosen, EinsumOptimizer::chain);  // planning speed itself: bench_einsum_instances
  EXPECT_LE(plan.cost.predicted_seconds, seconds(net, with(net, EinsumOptimizer::greedy)) * (1 + 1e-12));
}

TEST(Chain, NonChainIsAnArgumentError) {
  const auto net = peps_norm(2, 2, 2, 2);
  PlanOptions o;
  o.optimizer = EinsumOptimizer::chain;
  expect_error<ArgumentError>([&] { plan_contraction(net, o); }, "plan_contraction");
}

// ---------------------------------------------------------------------------------------
// Automatic
// ---------------------------------------------------------------------------------------

TEST(Automatic, GeneratedNetworksNeverPredictedSlowerThanGreedyAndDeterministic) {
  std::mt19937_64 rng(4);
  std::vector<ContractionNetwork> nets = {mps_mpo(8, 32, 2, 5),  mps_mpo(30, 64, 2, 4), peps_norm(3, 3, 3, 2),
                                          peps_norm(4, 4, 2, 2), regular_graph(rng, 40, 2), regular_graph(rng, 120, 2),
                                          tree_network(4, 8, 2), matrix_chain(rng, 30, 2, 100, true)};
  for (std::size_t i = 0; i < nets.size(); ++i) {
    PlanOptions o;
    o.max_trials = 400;  // with time to spare the trial budget decides: deterministic
    o.time_budget_s = 60;
    o.planning_fraction = 1e9;
    const auto a = plan_sliced_contraction(nets[i], o);
    const auto b = plan_sliced_contraction(nets[i], o);
    EXPECT_EQ(a.tree.steps, b.tree.steps) << i;
    EXPECT_LE(a.cost.predicted_seconds, seconds(nets[i], with(nets[i], EinsumOptimizer::greedy)) * (1 + 1e-12)) << i;
    EXPECT_NO_THROW(validate_contraction_tree(static_cast<int>(nets[i].inputs.size()), a.tree));
  }
}

// Note [Anneal budget]: the rewrite phase is judged only after two frontier growths. On
// a PEPS norm (sub-millisecond) the stall test had stopped the search before the
// frontier grew, at trees predicted 2-4× slower than a short explicit anneal finds.
TEST(Automatic, RewritesRunUntilTheFrontierHasGrown) {
  const auto net = peps_norm(4, 4, 3, 2);
  double automatic = 0, anneal = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    PlanOptions o;
    o.seed = seed;
    automatic += plan_sliced_contraction(net, o).cost.predicted_seconds;
    o.optimizer = EinsumOptimizer::anneal;
    o.time_budget_s = 0.05;
    anneal += plan_sliced_contraction(net, o).cost.predicted_seconds;
  }
  std::printf("peps_norm 4x4 D3, mean predicted over 6 seeds: automatic %.3f ms, anneal 50 ms %.3f ms\n",
              automatic / 6 * 1e3, anneal / 6 * 1e3);
  EXPECT_LE(automatic, 1.5 * anneal);
}

// Note [Rewrite rounds]: on a random 3-regular graph the rewrites' end depends on their
// path, so automatic runs them again from the same start while the budget allows. Over
// 8 seeds, one round gave trees predicted 8.9 ms on average (the worst 25.8 ms); with
// the rounds, 6.4 ms (the worst 13.2 ms). Planning is counted in work, so the trees are
// the same on every machine.
TEST(Automatic, RewriteRoundsOnALoopyNetwork) {
  std::mt19937_64 rng(21);
  const auto net = regular_graph(rng, 120, 2);
  double mean = 0, worst = 0;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    PlanOptions o;
    o.seed = seed;
    const double p = plan_sliced_contraction(net, o).cost.predicted_seconds;
    mean += p / 8;
    worst = std::max(worst, p);
  }
  std::printf("random 3-regular graph, 120 tensors, bond 2, over 8 seeds: mean %.3f ms, worst %.3f ms\n", mean * 1e3,
              worst * 1e3);
  EXPECT_LT(mean, 7.5e-3);
  EXPECT_LT(worst, 18e-3);
}

// Note [Planning work]: automatic counts its budgets in estimated work, so a busy
// machine gets the same plan (and einsum the same bits) as an idle one. Two spinning
// threads on the test's cores slow the second planning of each network down.
TEST(Automatic, DefaultPlansAreTheSameOnABusyMachine) {
  std::mt19937_64 rng(9);
  const std::vector<ContractionNetwork> nets = {peps_norm(4, 4, 3, 2), regular_graph(rng, 120, 2), mps_mpo(30, 64, 2, 4),
                                                tree_network(5, 16, 2), matrix_chain(rng, 30, 2, 100, true)};
  std::vector<ContractionTree> idle;
  for (const auto& net : nets) idle.push_back(plan_contraction(net, {}));
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 2; ++i)
    spinners.emplace_back([&] {
      volatile double x = 1;
      while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
    });
  for (std::size_t i = 0; i < nets.size(); ++i) EXPECT_EQ(plan_contraction(nets[i], {}).steps, idle[i].steps) << i;
  stop = true;
  for (auto& t : spinners) t.join();
}

TEST(Automatic, PlanningTimeFollowsThePredictedTime) {
  std::mt19937_64 rng(5);
  // A cheap contraction (bond 2: predicted microseconds) is planned in about as long.
  const auto cheap = regular_graph(rng, 60, 2);
  const auto c = plan_sliced_contraction(cheap, {});
  std::printf("cheap network (predicted %.3g s): planned in %.3g s\n", c.cost.predicted_seconds, c.planning_seconds);
  EXPECT_LE(c.cost.predicted_seconds, seconds(cheap, with(cheap, EinsumOptimizer::greedy)) * (1 + 1e-12));
  // The budget never exceeds time_budget_s.
  PlanOptions o;
  o.time_budget_s = 0.2;
  const auto big = regular_graph(rng, 200, 16);  // predicted far beyond 4 s
  const auto b = plan_sliced_contraction(big, o);
  // A guard against a runaway search, not a timing target (timings live in bench/): the
  // budget is checked between trials, so one slow trial (sanitizers, load) may overshoot.
  EXPECT_LT(b.planning_seconds, 0.2 + 2.0);
  EXPECT_EQ(b.chosen == EinsumOptimizer::anneal || b.chosen == EinsumOptimizer::greedy, true);
}

TEST(Automatic, BadFractionIsAnArgumentError) {
  const auto net = peps_norm(2, 2, 2, 2);
  for (double bad : {-0.1, std::nan(""), HUGE_VAL}) {
    PlanOptions o;
    o.planning_fraction = bad;
    expect_error<ArgumentError>([&] { plan_contraction(net, o); }, "plan_contraction");
  }
  PlanOptions o;
  o.time_budget_s = -1;
  expect_error<ArgumentError>([&] { plan_contraction(net, o); }, "plan_contraction");
}

// ---------------------------------------------------------------------------------------
// Slice planning
// ---------------------------------------------------------------------------------------

TEST(SlicePlan, EveryIntermediateFitsAndTheCountsAgree) {
  std::mt19937_64 rng(6);
  std::vector<ContractionNetwork> nets = {peps_norm(3, 3, 4, 2), regular_graph(rng, 30, 4), mps_mpo(6, 32, 2, 4),
                                          tree_network(3, 16, 2)};
  for (std::size_t i = 0; i < nets.size(); ++i) {
    const auto unsliced = plan_sliced_contraction(nets[i], {});
    const double limit = std::max(64.0, std::floor(unsliced.cost.largest_intermediate / 16));
    PlanOptions o;
    o.max_intermediate_elements = limit;
    const auto s = plan_sliced_contraction(nets[i], o);
    EXPECT_LE(s.cost.largest_intermediate, limit) << i;
    EXPECT_FALSE(s.sliced.empty()) << i;
    std::int64_t slices = 1;
    for (const auto& l : s.sliced) {
      EXPECT_EQ(l.extent % l.chunk, 0) << i;
      EXPECT_EQ(l.parts, l.extent / l.chunk) << i;
      EXPECT_LT(l.chunk, l.extent) << i;
      EXPECT_EQ(l.extent, nets[i].extents[l.label]) << i;
      slices *= l.parts;
    }
    EXPECT_EQ(s.num_slices, slices) << i;
    EXPECT_GE(s.slicing_overhead, 1.0 - 1e-12) << i;
    // Slicing the same tree directly gives the same slices.
    const auto again = slice_contraction(nets[i], s.tree, o);
    EXPECT_EQ(again.num_slices, s.num_slices) << i;
    // Bytes: 8-byte elements by default.
    PlanOptions ob;
    ob.max_intermediate_bytes = limit * 8;
    EXPECT_LE(plan_sliced_contraction(nets[i], ob).cost.largest_intermediate, limit) << i;
  }
}

TEST(SlicePlan, NoLimitOrAFittingTreeSlicesNothing) {
  const auto net = peps_norm(2, 2, 2, 2);
  PlanOptions o;
  o.max_intermediate_elements = 1e12;
  const auto s = plan_sliced_contraction(net, o);
  EXPECT_TRUE(s.sliced.empty());
  EXPECT_EQ(s.num_slices, 1);
  EXPECT_EQ(s.slicing_overhead, 1.0);
}

TEST(SlicePlan, ImpossibleAndBadLimitsAreArgumentErrors) {
  // ij,jk->ik: the result has 36 elements and no label can be cut below 1 on... the
  // result itself holds i and k; a limit of 0.5 element cannot be met.
  ContractionNetwork net{{{0, 1}, {1, 2}}, {0, 2}, {6, 5, 6}};
  PlanOptions o;
  o.max_intermediate_elements = 0.5;
  expect_error<ArgumentError>([&] { plan_sliced_contraction(net, o); }, "plan_sliced_contraction");
  for (double bad : {-1.0, std::nan("")}) {
    PlanOptions b;
    b.max_intermediate_elements = bad;
    expect_error<ArgumentError>([&] { plan_contraction(net, b); }, "plan_contraction");
    PlanOptions c;
    c.max_intermediate_bytes = bad;
    expect_error<ArgumentError>([&] { slice_contraction(net, ContractionTree{{{0, 1}}}, c); }, "slice_contraction");
  }
  // A prime extent can only be cut to 1.
  ContractionNetwork prime{{{0, 1}, {1, 2}}, {0, 2}, {7, 3, 1}};
  PlanOptions p;
  p.max_intermediate_elements = 1;
  const auto s = plan_sliced_contraction(prime, p);
  ASSERT_EQ(s.sliced.size(), 1u);
  EXPECT_EQ(s.sliced[0].chunk, 1);
  EXPECT_EQ(s.num_slices, 7);
}

// ---------------------------------------------------------------------------------------
// Exact DP under the time objective: planning time by size (printed; the automatic
// optimizer's estimate of 3^n / 2 × 8 ns must not be far below it)
// ---------------------------------------------------------------------------------------

TEST(Automatic, SubsetDpTimeUnderTheTimeObjective) {
  std::mt19937_64 rng(8);
  for (int n : {8, 10, 12}) {  // larger n: bench_einsum_instances (planning time is a benchmark)
    // A connected random network: a spanning tree of bonds plus n/2 extra bonds.
    ContractionNetwork net;
    net.inputs.resize(n);
    for (int i = 1; i < n; ++i) {
      const int l = add_label(net, draw(rng, 2, 8));
      net.inputs[i].push_back(l);
      net.inputs[draw(rng, 0, i - 1)].push_back(l);
    }
    for (int e = 0; e < n / 2; ++e) {
      const int a = static_cast<int>(draw(rng, 0, n - 1)), b = static_cast<int>(draw(rng, 0, n - 1));
      if (a == b) continue;
      const int l = add_label(net, draw(rng, 2, 8));
      net.inputs[a].push_back(l);
      net.inputs[b].push_back(l);
    }
    PlanOptions o;
    o.optimizer = EinsumOptimizer::optimal;
    const auto t0 = std::chrono::steady_clock::now();
    const auto tree = plan_contraction(net, o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("optimal (time objective), %d operands: %.3f ms (estimate %.3f ms)\n", n, s * 1e3,
                std::pow(3.0, n) / 2 * 8e-9 * 1e3);
    EXPECT_NO_THROW(validate_contraction_tree(n, tree));
  }
}
