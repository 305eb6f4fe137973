// Absorbed subsets (Note [Absorbed subsets] in src/einsum/absorb.cpp): a hand-checked
// chain of absorptions; nothing to absorb on a ring; on random factor graphs the core
// and the absorption steps form a valid tree whose steps never grow their superset and
// whose core operands hold the labels the full tree gives them; eliminate, anneal and
// automatic plan the core and their trees execute to the plain reference; on a factor
// graph of the suite's tensornetwork_permutation kind (vectors and matrices on a cubic
// graph) elimination over the core is far cheaper than over the full network; a plan
// made on the same thread from a progress callback leaves anneal's core alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "einsum/factor_graph.hpp"
#include "einsum/path_internal.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::plan_absorb_test {
namespace {

using einsum_detail::AbsorbedNetwork;
using einsum_detail::PreparedNetwork;
using einsum_detail::Step;
using einsum_detail::StepModel;
using einsum_detail::Word;
using testing::factor_graph;
using testing::pick;

// The labels of node k among `labels` (tree_labels' layout), sorted.
std::vector<int> node_labels(const std::vector<Word>& labels, int words, int k, int num_labels) {
  return testing::set_labels(&labels[static_cast<std::size_t>(k) * words], num_labels);
}

std::vector<int> operand_labels(const PreparedNetwork& p, int i) { return testing::set_labels(p.input(i), p.num_labels); }

// The suite's tensornetwork_permutation kind: a vector per variable and a matrix per
// edge of a random cubic multigraph without loops (a random perfect matching of 3 stubs
// per vertex, redrawn until no stub meets its own vertex), extents 2.
ContractionNetwork vectors_on_cubic_graph(std::mt19937_64& rng, int vertices) {
  std::vector<int> stubs;
  for (int v = 0; v < vertices; ++v) stubs.insert(stubs.end(), 3, v);
  bool ok = false;
  while (!ok) {
    std::shuffle(stubs.begin(), stubs.end(), rng);
    ok = true;
    for (std::size_t e = 0; e < stubs.size(); e += 2) ok = ok && stubs[e] != stubs[e + 1];
  }
  ContractionNetwork net;
  net.extents.assign(static_cast<std::size_t>(vertices), 2);
  for (int v = 0; v < vertices; ++v) net.inputs.push_back({v});
  for (std::size_t e = 0; e < stubs.size(); e += 2) net.inputs.push_back({stubs[e], stubs[e + 1]});
  return net;
}

}  // namespace

TEST(Absorb, AChainOfAbsorptionsByHand) {
  // Labels i j k p q (extents 2 3 4 P 2); operands 0: ij, 1: ijk, 2: i, 3: j, 4: kp (p
  // its own), 5: kq; output q. In order: 0 ⊆ 1 → node 6 = ijk; 2 → 7 = jk (i dies);
  // 3 → 8 = k (j dies). With P = 5, 4 stays (its own label would make its step span
  // 8's labels times 5), and the next pass absorbs 8 into the smaller of 4 (kp, 20
  // elements) and 5 (kq, 8): 9 = kq; the core is 4 and 9. With P = 1, 4 (needing only
  // k) goes into 8 (k, smaller than kq): 9 = k, then 9 ⊆ 5: 10 = q, one operand left.
  for (std::int64_t p_extent : {5, 1}) {
    ContractionNetwork net;
    net.extents = {2, 3, 4, p_extent, 2};
    net.inputs = {{0, 1}, {0, 1, 2}, {0}, {1}, {2, 3}, {2, 4}};
    net.output = {4};
    PreparedNetwork p;
    einsum_detail::prepare_network(net, p);
    AbsorbedNetwork a;
    ASSERT_TRUE(einsum_detail::absorb_subsets(p, a));
    std::vector<Step> tree;
    if (p_extent == 5) {
      EXPECT_EQ(a.prefix, (std::vector<Step>{{1, 0}, {6, 2}, {7, 3}, {5, 8}}));
      EXPECT_EQ(a.ids, (std::vector<int>{4, 9}));
      ASSERT_EQ(a.core.n, 2);
      EXPECT_EQ(operand_labels(a.core, 0), (std::vector<int>{2, 3}));
      EXPECT_EQ(operand_labels(a.core, 1), (std::vector<int>{2, 4}));
      tree = a.prefix;
      tree.emplace_back(4, 9);
    } else {
      EXPECT_EQ(a.prefix, (std::vector<Step>{{1, 0}, {6, 2}, {7, 3}, {8, 4}, {5, 9}}));
      EXPECT_EQ(a.ids, std::vector<int>{10});
      ASSERT_EQ(a.core.n, 1);
      EXPECT_EQ(operand_labels(a.core, 0), std::vector<int>{4});
      tree = a.prefix;
    }
    // eliminate and anneal return the absorption steps and then the core's; automatic
    // (6 operands: the exact DP over the full network) an optimal tree of its own.
    for (auto opt : {EinsumOptimizer::eliminate, EinsumOptimizer::anneal}) {
      PlanOptions o;
      o.optimizer = opt;
      o.time_budget_s = 0.01;
      EXPECT_EQ(plan_contraction(net, o).steps, tree) << static_cast<int>(opt) << " P " << p_extent;
    }
    EXPECT_EQ(plan_sliced_contraction(net, {}).chosen, EinsumOptimizer::optimal);
  }
}

TEST(Absorb, NothingOnARingOrBelowThreeOperands) {
  ContractionNetwork ring;
  for (int k = 0; k < 8; ++k) {
    ring.extents.push_back(3);
    ring.inputs.push_back({k, (k + 1) % 8});
  }
  PreparedNetwork p;
  einsum_detail::prepare_network(ring, p);
  AbsorbedNetwork a;
  EXPECT_FALSE(einsum_detail::absorb_subsets(p, a));
  EXPECT_TRUE(a.prefix.empty());
  ContractionNetwork two;
  two.extents = {2, 3};
  two.inputs = {{0}, {0, 1}};
  einsum_detail::prepare_network(two, p);
  EXPECT_FALSE(einsum_detail::absorb_subsets(p, a));
}

TEST(Absorb, RandomFactorGraphsGiveValidTreesThatNeverGrowASuperset) {
  std::mt19937_64 rng(71);
  int absorbed_some = 0, to_one = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto net = factor_graph(rng, pick(rng, 1, 10), pick(rng, 3, 30), true);
    PreparedNetwork p;
    einsum_detail::prepare_network(net, p);
    AbsorbedNetwork a;
    if (!einsum_detail::absorb_subsets(p, a)) continue;
    ++absorbed_some;
    to_one += a.core.n == 1;
    ASSERT_EQ(a.core.n + static_cast<int>(a.prefix.size()), p.n) << "trial " << trial;
    // Any tree over the core (here a left-deep one) completes the full tree.
    std::vector<Step> steps;
    for (int k = 1; k < a.core.n; ++k) steps.emplace_back(k == 1 ? 0 : a.core.n + k - 2, k);
    einsum_detail::expand_core_tree(a, p.n, steps);
    ASSERT_NO_THROW(validate_contraction_tree(p.n, ContractionTree{steps})) << "trial " << trial;
    std::vector<Word> labels, scratch;
    einsum_detail::tree_labels(p, steps, labels, scratch);
    auto out = net.output;
    std::sort(out.begin(), out.end());
    if (p.n > 1) {
      EXPECT_EQ(node_labels(labels, p.words, 2 * p.n - 2, p.num_labels), out) << "trial " << trial;
    }
    for (std::size_t k = 0; k < a.prefix.size(); ++k) {
      const auto [sup, sub] = a.prefix[k];
      const auto result = node_labels(labels, p.words, p.n + static_cast<int>(k), p.num_labels);
      const auto superset = node_labels(labels, p.words, sup, p.num_labels);
      EXPECT_TRUE(std::includes(superset.begin(), superset.end(), result.begin(), result.end()))
          << "trial " << trial << " step " << k << " grew its superset";
      // The step spans no more than its superset: the absorbed node's labels of its
      // own (summed in the step) have extent 1.
      auto span = superset;
      for (int l : node_labels(labels, p.words, sub, p.num_labels))
        if (!std::binary_search(superset.begin(), superset.end(), l)) span.push_back(l);
      double span_size = 1, superset_size = 1;
      for (int l : span) span_size *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
      for (int l : superset) superset_size *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
      EXPECT_EQ(span_size, superset_size) << "trial " << trial << " step " << k;
    }
    for (int i = 0; i < a.core.n; ++i)  // the core holds the labels the full tree gives
      EXPECT_EQ(operand_labels(a.core, i), node_labels(labels, p.words, a.ids[i], p.num_labels))
          << "trial " << trial << " core operand " << i;
  }
  EXPECT_GE(absorbed_some, 300);
  EXPECT_GE(to_one, 5);
}

TEST(Absorb, PlansOfTheCoreExecuteToTheReference) {
  std::mt19937_64 rng(72);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (int i = 0; i < 8; ++i) {
    const auto net = factor_graph(rng, 7, pick(rng, 8, 16), true);
    const auto c = testing::network_operands(rng, net);
    for (auto opt : {EinsumOptimizer::eliminate, EinsumOptimizer::anneal, EinsumOptimizer::automatic}) {
      EinsumOptions o;
      o.plan.optimizer = opt;
      o.plan.time_budget_s = 0.005;
      testing::expect_matches(einsum(s, c.ops, c.labels, std::span<const std::int64_t>(c.output), o), c.want, 1e-12,
                              "network " + std::to_string(i) + " optimizer " + std::to_string(static_cast<int>(opt)));
    }
  }
}

TEST(Absorb, VectorsAndMatricesOnACubicGraph) {
  // Greedy and elimination over the full network
  // mix the vectors into the loops; over the core (the matrices with the vectors
  // absorbed) elimination's tree is predicted 4.3-18× cheaper (12 graphs of 120 vertices).
  std::mt19937_64 rng(73);
  for (int graph = 0; graph < 4; ++graph) {
    const ContractionNetwork net = vectors_on_cubic_graph(rng, 120);
    PreparedNetwork p;
    einsum_detail::prepare_network(net, p);
    einsum_detail::GreedyPlanner g;
    std::vector<Step> full;
    const double on_full = einsum_detail::elimination_tree(p, g, full, StepModel{});
    PlanOptions o;
    o.optimizer = EinsumOptimizer::eliminate;
    const double on_core = contraction_cost(net, plan_contraction(net, o)).predicted_seconds;
    EXPECT_LT(on_core * 3, on_full) << "graph " << graph << ": core " << on_core << " s, full " << on_full << " s";
  }
}

TEST(Absorb, APlanOnTheSameThreadDuringAProgressCallbackLeavesTheCoreAlone) {
  // anneal reports progress after a second; the callback plans another network with
  // absorbed operands on this thread, which reuses the thread-local absorbed network:
  // anneal's tree must still start with its own network's absorption steps.
  std::mt19937_64 rng(74);
  const ContractionNetwork net = vectors_on_cubic_graph(rng, 40), other = vectors_on_cubic_graph(rng, 30);
  PreparedNetwork p;
  einsum_detail::prepare_network(net, p);
  AbsorbedNetwork a;
  ASSERT_TRUE(einsum_detail::absorb_subsets(p, a));
  int calls = 0;
  PlanOptions o;
  o.optimizer = EinsumOptimizer::anneal;
  o.time_budget_s = 1.2;
  o.progress = [&](const PlanProgress&) {
    PlanOptions e;
    e.optimizer = EinsumOptimizer::eliminate;
    ASSERT_EQ(plan_contraction(other, e).steps.size(), other.inputs.size() - 1);
    ++calls;
  };
  const auto t = plan_contraction(net, o);
  EXPECT_GE(calls, 1);
  ASSERT_NO_THROW(validate_contraction_tree(p.n, t));
  ASSERT_GE(t.steps.size(), a.prefix.size());
  EXPECT_TRUE(std::equal(a.prefix.begin(), a.prefix.end(), t.steps.begin()));
}

}  // namespace tenferro::plan_absorb_test
