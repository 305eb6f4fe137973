// Partition trees (Note [Partition trees] in src/einsum/optimize_partition.cpp) and
// where they join the starting trees (Note [Starting trees]): valid trees whose root
// holds the output for every setting, on random factor graphs (hyperedges, open labels,
// scalars, extents of 1, disconnected parts) and graphs; deterministic for a seed; a
// lattice cut along its thinnest line; far below greedy on a random regular graph;
// partition_suits true on shallow graphs only; the partition optimizer the best of its
// sweep and, with einsum, equal to the plain reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "einsum/factor_graph.hpp"
#include "einsum/path_internal.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::plan_partition_test {
namespace {

using einsum_detail::PartitionParams;
using einsum_detail::PartitionPlanner;
using einsum_detail::PreparedNetwork;
using einsum_detail::Step;
using einsum_detail::StepModel;
using einsum_detail::Word;
using testing::factor_graph;
using testing::pick;
using testing::regular_graph;
using testing::set_labels;

PreparedNetwork prepared(const ContractionNetwork& net) {
  PreparedNetwork p;
  einsum_detail::prepare_network(net, p);
  return p;
}

std::vector<Step> partition(const PreparedNetwork& p, const PartitionParams& params) {
  PartitionPlanner planner;
  std::vector<Step> steps;
  planner.run(p, params, steps);
  return steps;
}

// The labels of every node of the tree (Note [Intermediate labels]).
std::vector<Word> node_labels(const PreparedNetwork& p, const std::vector<Step>& steps) {
  std::vector<Word> labels, scratch;
  einsum_detail::tree_labels(p, steps, labels, scratch);
  return labels;
}

double cost(const PreparedNetwork& p, const std::vector<Step>& steps) { return einsum_detail::tree_cost(p, steps, StepModel{}); }

// An lx × ly lattice of tensors with bonds of `bond` between neighbours, closed.
ContractionNetwork lattice(int lx, int ly, std::int64_t bond) {
  ContractionNetwork net;
  net.inputs.resize(static_cast<std::size_t>(lx * ly));
  auto link = [&](int a, int b) {
    const int l = static_cast<int>(net.extents.size());
    net.extents.push_back(bond);
    net.inputs[static_cast<std::size_t>(a)].push_back(l);
    net.inputs[static_cast<std::size_t>(b)].push_back(l);
  };
  for (int x = 0; x < lx; ++x)
    for (int y = 0; y < ly; ++y) {
      if (x + 1 < lx) link(x * ly + y, (x + 1) * ly + y);
      if (y + 1 < ly) link(x * ly + y, x * ly + y + 1);
    }
  return net;
}

}  // namespace

TEST(Partition, TreesAreValidEndInTheOutputAndAreDeterministic) {
  std::mt19937_64 rng(71);
  for (int trial = 0; trial < 300; ++trial) {
    const auto net = trial % 3 == 2 ? regular_graph(rng, 2 * pick(rng, 2, 30), pick(rng, 1, 3))
                                    : factor_graph(rng, pick(rng, 1, 14), pick(rng, 1, 60), trial % 2 == 1);
    const PreparedNetwork p = prepared(net);
    auto out = net.output;
    std::sort(out.begin(), out.end());
    PartitionParams params;
    params.imbalance = 0.9 * pick(rng, 0, 10) / 10.0;
    params.tries = pick(rng, 1, 3);
    params.outer_weight = pick(rng, 0, 4) / 4.0;
    params.seed = static_cast<std::uint64_t>(trial);
    const auto steps = partition(p, params);
    ContractionTree t;
    t.steps = steps;
    ASSERT_NO_THROW(validate_contraction_tree(p.n, t)) << "trial " << trial;
    if (p.n > 1) {
      const auto labels = node_labels(p, steps);
      EXPECT_EQ(set_labels(&labels[static_cast<std::size_t>(2 * p.n - 2) * p.words], p.num_labels), out) << "trial " << trial;
    }
    EXPECT_EQ(partition(p, params), steps) << "same seed, trial " << trial;
    // One planner reused across networks gives the same tree as a fresh one.
    thread_local PartitionPlanner reused;
    std::vector<Step> again;
    reused.run(p, params, again);
    EXPECT_EQ(again, steps) << "reused planner, trial " << trial;
  }
}

TEST(Partition, BalanceBoundsEveryPart) {
  // With imbalance 0 both parts of every set hold half its operands (rounded down for
  // the smaller), so a tree over 64 operands is 6 levels deep; with 0.5, at least a
  // quarter each.
  std::mt19937_64 rng(72);
  const PreparedNetwork p = prepared(regular_graph(rng, 64, 2));
  for (double imbalance : {0.0, 0.5}) {
    PartitionParams params;
    params.imbalance = imbalance;
    const auto steps = partition(p, params);
    // Leaves below each node.
    std::vector<int> size(static_cast<std::size_t>(2 * p.n - 1), 1);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const int a = size[steps[k].first], b = size[steps[k].second];
      size[p.n + k] = a + b;
      const int least = std::max(1, static_cast<int>((1 - imbalance) * (a + b) / 2 + 1e-9));
      EXPECT_GE(std::min(a, b), least) << "imbalance " << imbalance << ", step " << k;
    }
  }
}

TEST(Partition, CutsALatticeAlongItsThinnestLine) {
  // A 6 × 10 lattice: the best balanced cut crosses its 6 short rows (6 bonds); the
  // root's two halves share only the labels of that cut.
  const PreparedNetwork p = prepared(lattice(6, 10, 2));
  PartitionParams params;
  params.imbalance = 0.1;
  const auto steps = partition(p, params);
  const auto labels = node_labels(p, steps);
  const Step top = steps.back();
  std::vector<Word> shared(static_cast<std::size_t>(p.words));
  for (int w = 0; w < p.words; ++w)
    shared[w] = labels[static_cast<std::size_t>(top.first) * p.words + w] & labels[static_cast<std::size_t>(top.second) * p.words + w];
  EXPECT_EQ(set_labels(shared.data(), p.num_labels).size(), 6u);
}

TEST(Partition, FarBelowGreedyOnARandomRegularGraph) {
  // One partition tree is a draw (on this graph 6 to 330 ms predicted over the sweep's
  // settings, greedy 43 ms); the partition optimizer keeps the best of its sweep.
  std::mt19937_64 rng(73);
  const PreparedNetwork p = prepared(regular_graph(rng, 120, 2));
  einsum_detail::GreedyPlanner g;
  std::vector<Step> greedy;
  g.run(p, {}, greedy);
  PartitionPlanner planner;
  std::vector<Step> best;
  const double by_partition = einsum_detail::partition_tree(p, planner, best, StepModel{}, 0);
  EXPECT_LT(by_partition, cost(p, greedy) / 4);
  EXPECT_EQ(cost(p, best), by_partition);
  EXPECT_LE(by_partition, cost(p, partition(p, einsum_detail::kStartPartition)));
}

TEST(Partition, SuitsShallowGraphsOnly) {
  std::mt19937_64 rng(74);
  EXPECT_TRUE(einsum_detail::partition_suits(prepared(regular_graph(rng, 60, 2))));
  EXPECT_TRUE(einsum_detail::partition_suits(prepared(lattice(6, 6, 3))));
  // Too small, too long (a chain, a 2 × 30 ladder), a hypergraph (a label on 3 operands).
  EXPECT_FALSE(einsum_detail::partition_suits(prepared(lattice(2, 5, 3))));
  EXPECT_FALSE(einsum_detail::partition_suits(prepared(lattice(1, 40, 3))));
  EXPECT_FALSE(einsum_detail::partition_suits(prepared(lattice(2, 30, 3))));
  auto hyper = lattice(6, 6, 3);
  hyper.inputs[35].push_back(0);  // label 0 joins (0,0)-(1,0) and the far corner
  EXPECT_FALSE(einsum_detail::partition_suits(prepared(hyper)));
  // A batch label of the output on every operand (the suite's language models, where
  // partition trees lose) counts as a hyperedge; open labels on one operand do not.
  auto batched = lattice(6, 6, 3);
  batched.extents.push_back(4);
  for (auto& in : batched.inputs) in.push_back(static_cast<int>(batched.extents.size()) - 1);
  batched.output = {static_cast<int>(batched.extents.size()) - 1};
  EXPECT_FALSE(einsum_detail::partition_suits(prepared(batched)));
  auto open = lattice(6, 6, 3);
  for (int i = 0; i < 36; ++i) {
    open.inputs[static_cast<std::size_t>(i)].push_back(static_cast<int>(open.extents.size()));
    open.output.push_back(static_cast<int>(open.extents.size()));
    open.extents.push_back(2);
  }
  EXPECT_TRUE(einsum_detail::partition_suits(prepared(open)));
}

TEST(Partition, JoinsTheStartingTreesWhereItSuits) {
  std::mt19937_64 rng(75);
  for (int trial = 0; trial < 4; ++trial) {
    const auto net = trial < 3 ? regular_graph(rng, 40 * (trial + 1), 2) : lattice(5, 7, 3);
    const PreparedNetwork p = prepared(net);
    einsum_detail::GreedyPlanner g;
    std::vector<Step> steps, greedy, by_elimination;
    EinsumOptimizer chosen = EinsumOptimizer::automatic;
    const double got = einsum_detail::starting_tree(p, g, steps, StepModel{}, &chosen);
    g.run(p, {}, greedy);
    const double others = std::min(cost(p, greedy), einsum_detail::elimination_tree(p, g, by_elimination, StepModel{}));
    const double by_partition = cost(p, partition(p, einsum_detail::kStartPartition));
    EXPECT_EQ(got, std::min(others, by_partition)) << trial;
    EXPECT_EQ(cost(p, steps), got) << trial;
    EXPECT_EQ(chosen == EinsumOptimizer::partition, by_partition < others) << trial;
    // Under automatic only when the budget covers it: a tiny fraction leaves it out.
    double spent = 0;
    einsum_detail::starting_tree(p, g, steps, StepModel{}, &chosen, 1e-9, &spent);
    EXPECT_NE(chosen, EinsumOptimizer::partition) << trial;
    EXPECT_LT(spent, einsum_detail::partition_seconds(p.n)) << trial;
    // automatic never returns a tree predicted slower than greedy's (its starting trees
    // depend on its budget).
    const auto plan = plan_sliced_contraction(net, PlanOptions{});
    EXPECT_LE(cost(p, plan.tree.steps), cost(p, greedy) * (1 + 1e-12)) << trial;
  }
}

TEST(Partition, OptimizerExecutesToTheReference) {
  std::mt19937_64 rng(76);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<ContractionNetwork> nets = {lattice(3, 4, 2)};
  nets.back().output = {0, 5};  // two bonds open
  for (int i = 0; i < 6; ++i) nets.push_back(factor_graph(rng, 7, 14));
  for (std::size_t i = 0; i < nets.size(); ++i) {
    const auto& net = nets[i];
    const auto c = testing::network_operands(rng, net);
    EinsumOptions o;
    o.plan.optimizer = EinsumOptimizer::partition;
    o.plan.seed = i;
    testing::expect_matches(einsum(s, c.ops, c.labels, std::span<const std::int64_t>(c.output), o), c.want, 1e-12,
                            "partition " + std::to_string(i));
    const auto plan = plan_sliced_contraction(net, o.plan);
    EXPECT_EQ(plan.chosen, EinsumOptimizer::partition) << i;
  }
}

}  // namespace tenferro::plan_partition_test
