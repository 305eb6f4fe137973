// Contraction-order planning (einsum_path.hpp): linear paths ↔ trees, the cost model
// checked by hand, the optimizers against each other and against brute force over all
// trees, and every malformed network, path and tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "einsum/factor_graph.hpp"
#include "einsum/path_internal.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

using Path = std::vector<std::pair<int, int>>;

// Network from einsum-like strings of single-letter labels: "ij,jk,kl->il" with extents
// per letter ('a' → extents['a' - 'a']).
ContractionNetwork network(const std::string& eq, const std::vector<std::int64_t>& extents) {
  ContractionNetwork net;
  const auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), rhs = eq.substr(arrow + 2);
  net.inputs.emplace_back();
  for (char c : lhs) {
    if (c == ',') net.inputs.emplace_back();
    else net.inputs.back().push_back(c - 'a');
  }
  for (char c : rhs) net.output.push_back(c - 'a');
  net.extents = extents;
  return net;
}

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// Random network over n operands: bonds (two holders), hyper labels (three or four),
// single-holder legs, labels kept in the output (batch labels when several hold them),
// extents 1..6. Operands may end up with no label and the network may be disconnected.
ContractionNetwork random_network(std::mt19937_64& rng, int n) {
  ContractionNetwork net;
  net.inputs.resize(n);
  const int num_labels = static_cast<int>(draw(rng, n, 2 * n + 2));
  for (int l = 0; l < num_labels; ++l) {
    const auto kind = draw(rng, 0, 9);
    int holders = kind < 6 ? 2 : kind < 8 ? static_cast<int>(draw(rng, 3, 4)) : 1;
    holders = std::min(holders, n);
    std::vector<int> ops(n);
    for (int i = 0; i < n; ++i) ops[i] = i;
    for (int i = 0; i < holders; ++i) std::swap(ops[i], ops[draw(rng, i, n - 1)]);
    for (int i = 0; i < holders; ++i) net.inputs[ops[i]].push_back(l);
    net.extents.push_back(draw(rng, 1, 6));
    if (draw(rng, 0, 3) == 0 || (holders == 1 && draw(rng, 0, 1) == 0)) net.output.push_back(l);
  }
  return net;
}

ContractionTree plan(const ContractionNetwork& net, EinsumOptimizer opt) {
  PlanOptions o;
  o.objective = PlanObjective::flops;  // these tests check flops properties
  o.optimizer = opt;
  return plan_contraction(net, o);
}

double flops(const ContractionNetwork& net, const ContractionTree& t) { return contraction_cost(net, t).flops; }

// Random valid tree over n operands: contract random pairs of live nodes.
ContractionTree random_tree(std::mt19937_64& rng, int n) {
  std::vector<int> live(n);
  for (int i = 0; i < n; ++i) live[i] = i;
  ContractionTree t;
  for (int k = 0; k < n - 1; ++k) {
    const auto i = draw(rng, 0, static_cast<std::int64_t>(live.size()) - 1);
    auto j = draw(rng, 0, static_cast<std::int64_t>(live.size()) - 2);
    if (j >= i) ++j;
    t.steps.emplace_back(live[i], live[j]);
    live.erase(live.begin() + std::max(i, j));
    live.erase(live.begin() + std::min(i, j));
    live.push_back(n + k);
  }
  return t;
}

// Minimum (flops, then largest intermediate) over every contraction sequence.
std::pair<double, double> brute_force(const ContractionNetwork& net) {
  const int n = static_cast<int>(net.inputs.size());
  std::pair<double, double> best{INFINITY, INFINITY};
  ContractionTree t;
  std::function<void(std::vector<int>&)> rec = [&](std::vector<int>& live) {
    if (live.size() == 1) {
      const auto c = contraction_cost(net, t);
      best = std::min(best, std::make_pair(c.flops, c.largest_intermediate));
      return;
    }
    for (std::size_t i = 0; i < live.size(); ++i)
      for (std::size_t j = i + 1; j < live.size(); ++j) {
        std::vector<int> next;
        for (std::size_t q = 0; q < live.size(); ++q)
          if (q != i && q != j) next.push_back(live[q]);
        next.push_back(n + static_cast<int>(t.steps.size()));
        t.steps.emplace_back(live[i], live[j]);
        rec(next);
        t.steps.pop_back();
      }
  };
  std::vector<int> live(n);
  for (int i = 0; i < n; ++i) live[i] = i;
  rec(live);
  return best;
}

// The labels of the tree's last node, through the internal evaluator.
std::vector<int> root_labels(const ContractionNetwork& net, const ContractionTree& t) {
  einsum_detail::PreparedNetwork p;
  einsum_detail::prepare_network(net, p);
  std::vector<einsum_detail::Word> labels, scratch;
  einsum_detail::tree_labels(p, t.steps, labels, scratch);
  const auto* root = &labels[static_cast<std::size_t>(2 * p.n - 2) * p.words];
  std::vector<int> out;
  for (int l = 0; l < p.num_labels; ++l)
    if (root[l / 64] >> (l % 64) & 1) out.push_back(l);
  return out;
}

template <class F>
void expect_argument_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no ArgumentError";
  } catch (const ArgumentError& e) {
    for (const auto& p : parts) EXPECT_THAT(std::string(e.what()), HasSubstr(p));
  }
}

constexpr EinsumOptimizer kOptimizers[] = {EinsumOptimizer::automatic, EinsumOptimizer::greedy,
                                           EinsumOptimizer::optimal,   EinsumOptimizer::anneal,
                                           EinsumOptimizer::eliminate, EinsumOptimizer::partition};

PlanOptions anneal_options(std::uint64_t seed, std::int64_t trials) {
  PlanOptions o;
  o.objective = PlanObjective::flops;  // these tests check flops properties
  o.optimizer = EinsumOptimizer::anneal;
  o.seed = seed;
  o.max_trials = trials;
  o.time_budget_s = 600;  // the trial budget ends the search (determinism)
  o.progress = [](const PlanProgress&) {};
  return o;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Linear paths and trees
// ---------------------------------------------------------------------------------------

TEST(LinearPath, DocumentedExample) {
  // "ij,jk,kl->il" as (0·1)·2: opt_einsum writes [(0, 1), (1, 0)]... with the new node at
  // the end of the list, the second step names positions of 3 (1) and 2 (0).
  const Path path{{0, 1}, {1, 0}};
  const auto t = ContractionTree::from_linear_path(3, path);
  EXPECT_EQ(t.steps, (Path{{0, 1}, {3, 2}}));
  EXPECT_EQ(t.to_linear_path(3), path);
  // opt_einsum's usual spelling names the remaining positions in increasing order.
  const Path sorted{{0, 1}, {0, 1}};
  EXPECT_EQ(ContractionTree::from_linear_path(3, sorted).steps, (Path{{0, 1}, {2, 3}}));
}

TEST(LinearPath, RoundTrips) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = static_cast<int>(draw(rng, 1, 12));
    const auto t = random_tree(rng, n);
    const auto path = t.to_linear_path(n);
    ASSERT_EQ(path.size(), static_cast<std::size_t>(n - 1));
    EXPECT_EQ(ContractionTree::from_linear_path(n, path).steps, t.steps);
    // A random linear path → tree → the same path.
    Path lin;
    for (int m = n; m > 1; --m) {
      const auto i = static_cast<int>(draw(rng, 0, m - 1));
      auto j = static_cast<int>(draw(rng, 0, m - 2));
      if (j >= i) ++j;
      lin.emplace_back(i, j);
    }
    EXPECT_EQ(ContractionTree::from_linear_path(n, lin).to_linear_path(n), lin);
  }
}

TEST(LinearPath, SingleOperandStepsOnlyMoveTheOperand) {
  // [(0, -1), (0, 1), (0, 1)]: operand 0 moves to the end: list [1, 2, 0]; then 1·2 → 3:
  // list [0, 3]; then 0·3.
  const Path path{{0, -1}, {0, 1}, {0, 1}};
  EXPECT_EQ(ContractionTree::from_linear_path(3, path).steps, (Path{{1, 2}, {0, 3}}));
  EXPECT_TRUE(ContractionTree::from_linear_path(1, Path{}).steps.empty());
  EXPECT_TRUE(ContractionTree::from_linear_path(1, Path{{0, -1}}).steps.empty());
}

TEST(LinearPath, MalformedPathsAreArgumentErrors) {
  const std::string op = "ContractionTree::from_linear_path";
  expect_argument_error([] { ContractionTree::from_linear_path(3, Path{{0, 3}, {0, 1}}); },
                        {op, "step 0 (0, 3)", "position 3", "3 operands remain"});
  expect_argument_error([] { ContractionTree::from_linear_path(3, Path{{0, 1}, {0, 2}}); },
                        {"step 1 (0, 2)", "position 2", "2 operands remain"});
  expect_argument_error([] { ContractionTree::from_linear_path(3, Path{{-2, 1}, {0, 1}}); }, {"step 0", "position -2"});
  expect_argument_error([] { ContractionTree::from_linear_path(3, Path{{1, 1}, {0, 1}}); },
                        {"step 0 (1, 1)", "position 1 twice"});
  expect_argument_error([] { ContractionTree::from_linear_path(3, Path{{0, 1}}); }, {"1 steps", "leaves 2 operands"});
  expect_argument_error([] { ContractionTree::from_linear_path(2, Path{{0, 1}, {0, 1}}); },
                        {"step 1 (0, 1)", "position 1", "1 operands remain"});
  expect_argument_error([] { ContractionTree::from_linear_path(0, Path{}); }, {"num_operands is 0"});
}

TEST(Tree, MalformedTreesAreArgumentErrors) {
  const std::string op = "validate_contraction_tree";
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{0, 1}}}); },
                        {op, "tree has 1 steps", "3 operands need 2"});
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{0, 1}, {4, 2}}}); },
                        {"step 1 (4, 2)", "node 4", "nodes 0..3"});
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{0, 3}, {1, 2}}}); },
                        {"step 0 (0, 3)", "node 3", "nodes 0..2"});
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{0, 1}, {0, 3}}}); },
                        {"step 1 (0, 3)", "node 0", "already contracted at step 0"});
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{1, 1}, {0, 3}}}); },
                        {"step 0 (1, 1)", "node 1 with itself"});
  expect_argument_error([] { validate_contraction_tree(3, ContractionTree{{{0, -1}, {2, 3}}}); }, {"node -1"});
  expect_argument_error([] { validate_contraction_tree(0, ContractionTree{}); }, {"num_operands is 0"});
  expect_argument_error([] { ContractionTree{{{0, 1}, {0, 3}}}.to_linear_path(3); },
                        {"ContractionTree::to_linear_path", "already contracted"});
  // contraction_cost validates with its own name.
  const auto net = network("ij,jk,kl->il", {0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 5});
  expect_argument_error([&] { contraction_cost(net, ContractionTree{{{0, 1}, {0, 3}}}); },
                        {"contraction_cost", "step 1 (0, 3)"});
  expect_argument_error([&] { contraction_cost(net, ContractionTree{{{0, 1}}}); }, {"contraction_cost", "tree has 1 steps"});
}

// ---------------------------------------------------------------------------------------
// Cost model by hand
// ---------------------------------------------------------------------------------------

// extents by letter: i=2, j=3, k=4, l=5 (and a, b, c = 2, 3, 4 below).
std::vector<std::int64_t> letters() {
  std::vector<std::int64_t> e(26, 1);
  e['a' - 'a'] = 2, e['b' - 'a'] = 3, e['c' - 'a'] = 4;
  e['i' - 'a'] = 2, e['j' - 'a'] = 3, e['k' - 'a'] = 4, e['l' - 'a'] = 5;
  e['x' - 'a'] = 7;
  return e;
}

TEST(Cost, MatrixChainByHand) {
  const auto net = network("ij,jk,kl->il", letters());
  // (0·1)·2: ijk = 24, result ik = 8; then ikl = 40, result il = 10.
  auto c = contraction_cost(net, ContractionTree{{{0, 1}, {3, 2}}});
  EXPECT_EQ(c.flops, 24 + 40);
  EXPECT_EQ(c.largest_intermediate, 10);
  EXPECT_EQ(c.elements_written, 8 + 10);
  // 0·(1·2): jkl = 60, result jl = 15; then ijl = 30, result il = 10.
  c = contraction_cost(net, ContractionTree{{{1, 2}, {0, 3}}});
  EXPECT_EQ(c.flops, 60 + 30);
  EXPECT_EQ(c.largest_intermediate, 15);
  EXPECT_EQ(c.elements_written, 15 + 10);
  // (0·2) is an outer product: ijkl = 120, result ijkl = 120 (j and k still needed);
  // then ijkl · jk = 120, result il.
  c = contraction_cost(net, ContractionTree{{{0, 2}, {3, 1}}});
  EXPECT_EQ(c.flops, 120 + 120);
  EXPECT_EQ(c.largest_intermediate, 120);
  EXPECT_EQ(c.elements_written, 120 + 10);
  // The optimal tree is (0·1)·2. Greedy scores size(result) − sizes of the sides:
  // 0·1: ik − ij − jk = 8 − 6 − 12 = −10; 1·2: jl − jk − kl = 15 − 12 − 20 = −17; so it
  // takes 1·2 first and ends at 90.
  EXPECT_EQ(flops(net, plan(net, EinsumOptimizer::greedy)), 90);
  for (auto opt : {EinsumOptimizer::automatic, EinsumOptimizer::optimal, EinsumOptimizer::anneal})
    EXPECT_EQ(flops(net, plan(net, opt)), 64);
}

TEST(Cost, HyperedgeStaysUntilTheLastHolder) {
  // a=2, b=3, c=4, i=2. "ai,bi,ci->abc": i is held by three operands. (0·1): abi = 12
  // flops, i stays (operand 2 holds it) → abi = 12; then abi·ci: abci = 48 → abc = 24.
  auto net = network("ai,bi,ci->abc", letters());
  const ContractionTree t{{{0, 1}, {3, 2}}};
  auto c = contraction_cost(net, t);
  EXPECT_EQ(c.flops, 12 + 48);
  EXPECT_EQ(c.largest_intermediate, 24);
  EXPECT_EQ(c.elements_written, 12 + 24);
  // "ai,bi,ci->": a and b are summed at the first step (no one else holds them), i stays:
  // abi = 12 → i = 2; then ci = 8 → scalar.
  net = network("ai,bi,ci->", letters());
  c = contraction_cost(net, t);
  EXPECT_EQ(c.flops, 12 + 8);
  EXPECT_EQ(c.largest_intermediate, 2);
  EXPECT_EQ(c.elements_written, 2 + 1);
  // i in the output (a batch label): every node keeps it.
  net = network("ai,bi,ci->i", letters());
  c = contraction_cost(net, t);
  EXPECT_EQ(c.flops, 12 + 8);
  EXPECT_EQ(c.elements_written, 2 + 2);
  EXPECT_EQ(root_labels(net, t), std::vector<int>{'i' - 'a'});
  // "ai,bi,ci,d->d": after 0·1·2 meet, i is gone although the scalar-like operand 3 remains.
  net = network("ai,bi,ci,d->d", letters());
  c = contraction_cost(net, ContractionTree{{{0, 1}, {4, 2}, {5, 3}}});
  EXPECT_EQ(c.flops, 12 + 8 + 1);
  EXPECT_EQ(c.elements_written, 2 + 1 + 1);
}

TEST(Cost, LabelOfOneOperandIsSummedAtItsFirstStep) {
  // "ax,ab->b": x only in operand 0: the step's product space is axb = 42, result b = 3.
  const auto net = network("ax,ab->b", letters());
  const auto c = contraction_cost(net, ContractionTree{{{0, 1}}});
  EXPECT_EQ(c.flops, 42);
  EXPECT_EQ(c.largest_intermediate, 3);
  EXPECT_EQ(c.elements_written, 3);
}

TEST(Cost, ZeroExtentAndHugeNetworks) {
  auto e = letters();
  e['j' - 'a'] = 0;
  const auto net = network("ij,jk,kl->il", e);
  const auto c = contraction_cost(net, ContractionTree{{{0, 1}, {3, 2}}});
  EXPECT_EQ(c.flops, 0 + 40);  // ijk is empty; ikl is not
  for (auto opt : kOptimizers) EXPECT_NO_THROW(validate_contraction_tree(3, plan(net, opt)));
  // A chain of 40 matrices with extents 2^40: 40 · 2^120 flops, far beyond int64.
  ContractionNetwork chain;
  for (int i = 0; i < 40; ++i) chain.inputs.push_back({i, i + 1});
  chain.output = {0, 40};
  chain.extents.assign(41, std::int64_t{1} << 40);
  const auto t = plan(chain, EinsumOptimizer::greedy);
  const auto cc = contraction_cost(chain, t);
  EXPECT_DOUBLE_EQ(cc.flops, 39 * std::ldexp(1.0, 120));
  EXPECT_DOUBLE_EQ(cc.largest_intermediate, std::ldexp(1.0, 80));
}

// ---------------------------------------------------------------------------------------
// Optimizers
// ---------------------------------------------------------------------------------------

TEST(Plan, SingleAndTwoOperands) {
  const auto one = network("ij->i", letters());
  const auto two = network("ij,jk->ik", letters());
  for (auto opt : kOptimizers) {
    EXPECT_TRUE(plan(one, opt).steps.empty());
    EXPECT_EQ(plan(two, opt).steps, (Path{{0, 1}}));
  }
  const auto c = contraction_cost(one, ContractionTree{});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.largest_intermediate, 0);
  EXPECT_EQ(c.elements_written, 0);
}

// A plain O(n^3) greedy, written from the rule: among live pairs that share a label,
// the smallest (size(result) − size(A) − size(B), A, B) with A < B node ids; then outer
// products of the two smallest (size, id). Result labels follow the label rule directly.
ContractionTree reference_greedy(const ContractionNetwork& net) {
  const int n = static_cast<int>(net.inputs.size());
  std::vector<std::vector<int>> labels(net.inputs.begin(), net.inputs.end());
  std::vector<int> live(n);
  for (int i = 0; i < n; ++i) live[i] = i;
  auto holds = [&](int node, int l) { return std::count(labels[node].begin(), labels[node].end(), l) > 0; };
  auto size = [&](const std::vector<int>& ls) {
    double p = 1;
    for (int l : ls) p *= static_cast<double>(std::max<std::int64_t>(net.extents[l], 1));
    return p;
  };
  auto result = [&](int a, int b) {
    std::vector<int> out;
    for (int l = 0; l < static_cast<int>(net.extents.size()); ++l) {
      if (!holds(a, l) && !holds(b, l)) continue;
      bool keep = std::count(net.output.begin(), net.output.end(), l) > 0;
      for (int x : live)
        if (x != a && x != b && holds(x, l)) keep = true;
      if (keep) out.push_back(l);
    }
    return out;
  };
  ContractionTree t;
  while (live.size() > 1) {
    std::tuple<double, int, int> best{INFINITY, -1, -1};
    for (int a : live)
      for (int b : live) {
        if (a >= b) continue;
        bool share = false;
        for (int l : labels[a]) share = share || holds(b, l);
        if (!share) continue;
        best = std::min(best, std::make_tuple(size(result(a, b)) - size(labels[a]) - size(labels[b]), a, b));
      }
    auto [score, a, b] = best;
    if (a < 0) {  // outer products: the two smallest
      std::vector<std::pair<double, int>> by_size;
      for (int x : live) by_size.emplace_back(size(labels[x]), x);
      std::sort(by_size.begin(), by_size.end());
      a = std::min(by_size[0].second, by_size[1].second);
      b = std::max(by_size[0].second, by_size[1].second);
    }
    labels.push_back(result(a, b));
    t.steps.emplace_back(a, b);
    live.erase(std::find(live.begin(), live.end(), a));
    live.erase(std::find(live.begin(), live.end(), b));
    live.push_back(static_cast<int>(labels.size()) - 1);
  }
  return t;
}

TEST(Plan, GreedyMatchesAPlainReference) {
  std::mt19937_64 rng(10);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 14));
    const auto net = random_network(rng, n);
    EXPECT_EQ(plan(net, EinsumOptimizer::greedy).steps, reference_greedy(net).steps) << "trial " << trial;
  }
}

TEST(Plan, DisconnectedNetworks) {
  // Two components and a scalar operand: every optimizer joins them by outer products.
  const auto net = network("ij,jk,ab,bc,->ikac", letters());
  const auto best = brute_force(net);
  for (auto opt : kOptimizers) {
    const auto t = plan(net, opt);
    EXPECT_NO_THROW(validate_contraction_tree(5, t));
    EXPECT_EQ(root_labels(net, t), (std::vector<int>{0, 2, 8, 10}));
    if (opt != EinsumOptimizer::greedy && opt != EinsumOptimizer::eliminate &&
        opt != EinsumOptimizer::partition) {  // the heuristics
      EXPECT_EQ(flops(net, t), best.first);
    }
  }
}

TEST(Plan, OptimalNeverWorseThanGreedyAndRootIsTheOutput) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 9));
    const auto net = random_network(rng, n);
    const auto g = plan(net, EinsumOptimizer::greedy), o = plan(net, EinsumOptimizer::optimal);
    EXPECT_LE(flops(net, o), flops(net, g) * (1 + 1e-12)) << "trial " << trial;
    auto out = net.output;
    std::sort(out.begin(), out.end());
    EXPECT_EQ(root_labels(net, g), out);
    EXPECT_EQ(root_labels(net, o), out);
  }
}

TEST(Plan, OptimalAboveTheAllSplitsLimitNeverWorseThanGreedy) {
  // 11..14 operands: connected splits per component, then the join of the components.
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 12; ++trial) {
    const int n = static_cast<int>(draw(rng, 11, 14));
    const auto net = random_network(rng, n);
    PlanOptions o;
    o.objective = PlanObjective::flops;  // these tests check flops properties
    o.optimizer = EinsumOptimizer::optimal;
    const auto t = plan_contraction(net, o);
    EXPECT_NO_THROW(validate_contraction_tree(n, t));
    EXPECT_LE(flops(net, t), flops(net, plan(net, EinsumOptimizer::greedy)) * (1 + 1e-12)) << "trial " << trial;
  }
}

TEST(Plan, OptimalMatchesTheMatrixChainRecurrence) {
  // Matrix chains of 4..18 matrices against the textbook O(n^3) recurrence
  // m[i][j] = min_k m[i][k] + m[k+1][j] + p[i] p[k+1] p[j+1] (Cormen et al., 15.2):
  // the DP uses every split up to 10 operands and connected splits above.
  std::mt19937_64 rng(19);
  for (int n = 4; n <= 18; ++n) {
    ContractionNetwork net;
    for (int i = 0; i <= n; ++i) net.extents.push_back(draw(rng, 1, 40));
    for (int i = 0; i < n; ++i) net.inputs.push_back({i, i + 1});
    net.output = {0, n};
    const auto& p = net.extents;
    std::vector<std::vector<double>> m(n, std::vector<double>(n, 0));
    for (int len = 2; len <= n; ++len)
      for (int i = 0; i + len - 1 < n; ++i) {
        const int j = i + len - 1;
        m[i][j] = INFINITY;
        for (int k = i; k < j; ++k)
          m[i][j] = std::min(m[i][j], m[i][k] + m[k + 1][j] + static_cast<double>(p[i] * p[k + 1] * p[j + 1]));
      }
    PlanOptions o;
    o.objective = PlanObjective::flops;  // these tests check flops properties
    o.optimizer = EinsumOptimizer::optimal;
    EXPECT_EQ(flops(net, plan_contraction(net, o)), m[0][n - 1]) << n << " matrices";
  }
}

TEST(Plan, OptimalOnManyComponents) {
  // Several random components, singletons with labels of their own (summed when they
  // join) and scalars, above the all-splits limit: never worse than greedy, the root is
  // the output. Then 20 scalars (20 components: joined greedily, no 3^20 search).
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 20; ++trial) {
    ContractionNetwork net;
    const int parts = static_cast<int>(draw(rng, 2, 4));
    for (int p = 0; p < parts; ++p) {
      const auto part = random_network(rng, static_cast<int>(draw(rng, 2, 4)));
      const int offset = static_cast<int>(net.extents.size());
      for (auto in : part.inputs) {
        for (int& l : in) l += offset;
        net.inputs.push_back(in);
      }
      for (int l : part.output) net.output.push_back(l + offset);
      net.extents.insert(net.extents.end(), part.extents.begin(), part.extents.end());
    }
    while (net.inputs.size() < 13) {
      const int l = static_cast<int>(net.extents.size());
      net.extents.push_back(draw(rng, 1, 50));
      if (draw(rng, 0, 2) == 0) {
        net.inputs.push_back({});
      } else {
        net.inputs.push_back({l});
        if (draw(rng, 0, 1) == 0) net.output.push_back(l);
      }
    }
    const auto o = plan(net, EinsumOptimizer::optimal);
    EXPECT_LE(flops(net, o), flops(net, plan(net, EinsumOptimizer::greedy)) * (1 + 1e-12)) << "trial " << trial;
    auto out = net.output;
    std::sort(out.begin(), out.end());
    EXPECT_EQ(root_labels(net, o), out);
  }
  ContractionNetwork scalars;
  scalars.inputs.resize(20);
  const auto t = plan(scalars, EinsumOptimizer::optimal);
  EXPECT_EQ(contraction_cost(scalars, t).flops, 19);
}

// Networks with more than 64 labels (multi-word bitsets; the DP merges labels that have
// the same holders): a random network plus many parallel bonds and open legs.
ContractionNetwork with_many_labels(std::mt19937_64& rng, int n, int extra) {
  auto net = random_network(rng, n);
  for (int e = 0; e < extra; ++e) {
    const int l = static_cast<int>(net.extents.size());
    net.extents.push_back(draw(rng, 1, 2));
    const int a = static_cast<int>(draw(rng, 0, n - 1));
    net.inputs[a].push_back(l);
    if (draw(rng, 0, 2) != 0) {
      int b = static_cast<int>(draw(rng, 0, n - 2));
      if (b >= a) ++b;
      net.inputs[b].push_back(l);
    } else if (draw(rng, 0, 1) == 0) {
      net.output.push_back(l);
    }
  }
  return net;
}

TEST(Plan, ManyLabels) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 6));
    const auto net = with_many_labels(rng, n, 70 + 10 * trial);
    const auto best = brute_force(net);
    const auto c = contraction_cost(net, plan(net, EinsumOptimizer::optimal));
    EXPECT_DOUBLE_EQ(c.flops, best.first) << "trial " << trial;
    EXPECT_DOUBLE_EQ(c.largest_intermediate, best.second) << "trial " << trial;
  }
  for (int trial = 0; trial < 6; ++trial) {
    const int n = static_cast<int>(draw(rng, 7, 14));
    const auto net = with_many_labels(rng, n, 150);
    const auto o = plan(net, EinsumOptimizer::optimal);
    EXPECT_LE(flops(net, o), flops(net, plan(net, EinsumOptimizer::greedy)) * (1 + 1e-12)) << "trial " << trial;
    auto out = net.output;
    std::sort(out.begin(), out.end());
    EXPECT_EQ(root_labels(net, o), out);
    EXPECT_EQ(root_labels(net, plan_contraction(net, anneal_options(trial, 200))), out);
  }
}

TEST(Plan, OptimalEqualsBruteForceOnTinyNetworks) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 120; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 6));
    const auto net = random_network(rng, n);
    const auto best = brute_force(net);
    const auto c = contraction_cost(net, plan(net, EinsumOptimizer::optimal));
    EXPECT_DOUBLE_EQ(c.flops, best.first) << "trial " << trial;
    EXPECT_DOUBLE_EQ(c.largest_intermediate, best.second) << "trial " << trial;
  }
}

TEST(Plan, AutomaticIsExactOnSmallNetworksAndNeverPredictedSlowerThanGreedy) {
  std::mt19937_64 rng(14);
  for (int n : {3, 5, 6, 7, 12, 13, 16, 30}) {
    const auto net = random_network(rng, n);
    PlanOptions o;
    const auto a = plan_sliced_contraction(net, o);
    if (n <= 6) {
      o.optimizer = EinsumOptimizer::optimal;
      EXPECT_EQ(a.tree.steps, plan_contraction(net, o).steps) << n;
      EXPECT_EQ(a.chosen, EinsumOptimizer::optimal) << n;
    }
    EXPECT_LE(a.cost.predicted_seconds, contraction_cost(net, plan(net, EinsumOptimizer::greedy)).predicted_seconds * (1 + 1e-12))
        << n;
    // The default budget is wall-clock (Note [Anneal budget]): deterministic only where no
    // search runs (plan_auto_test checks determinism with a trial budget).
    if (n <= 6) {
      EXPECT_EQ(plan_contraction(net, {}).steps, a.tree.steps) << "deterministic, n = " << n;
    }
  }
  // A lower optimal_max_operands keeps automatic off the subset DP.
  const auto net = random_network(rng, 6);
  PlanOptions o;
  o.optimal_max_operands = 5;
  EXPECT_NE(plan_sliced_contraction(net, o).chosen, EinsumOptimizer::optimal);
}

TEST(Plan, AnnealNeverWorseThanGreedyAndDeterministic) {
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 10; ++trial) {
    const int n = static_cast<int>(draw(rng, 3, 40));
    const auto net = random_network(rng, n);
    const auto o = anneal_options(trial, 300);
    const auto t = plan_contraction(net, o);
    EXPECT_NO_THROW(validate_contraction_tree(n, t));
    EXPECT_LE(flops(net, t), flops(net, plan(net, EinsumOptimizer::greedy)) * (1 + 1e-12)) << "trial " << trial;
    EXPECT_EQ(plan_contraction(net, o).steps, t.steps) << "trial " << trial;
    auto out = net.output;
    std::sort(out.begin(), out.end());
    EXPECT_EQ(root_labels(net, t), out);
  }
}

TEST(Plan, AnnealBeatsGreedyOnRandomRegularGraphs) {
  // Greedy is known to be poor on random 3-regular graphs (it grows many clusters whose
  // boundaries all stay open); 2000 trials already find a much cheaper tree.
  std::mt19937_64 rng(16);
  const auto net = tenferro::testing::regular_graph(rng, 60, 2);
  const double greedy = flops(net, plan(net, EinsumOptimizer::greedy));
  const double anneal = flops(net, plan_contraction(net, anneal_options(3, 2000)));
  EXPECT_LT(anneal, greedy / 4) << "greedy " << greedy << ", anneal " << anneal;
}

TEST(Plan, AnnealReportsProgressAfterASecond) {
  std::mt19937_64 rng(17);
  const auto net = tenferro::testing::regular_graph(rng, 100, 2);
  PlanOptions o;
  o.objective = PlanObjective::flops;  // these tests check flops properties
  o.optimizer = EinsumOptimizer::anneal;
  o.time_budget_s = 1.3;
  std::vector<PlanProgress> seen;
  o.progress = [&](const PlanProgress& p) { seen.push_back(p); };
  const auto t = plan_contraction(net, o);
  ASSERT_FALSE(seen.empty());
  EXPECT_GE(seen.front().seconds, 1.0);
  EXPECT_GT(seen.front().trials, 0);
  EXPECT_LE(seen.back().best_flops, flops(net, plan(net, EinsumOptimizer::greedy)) * (1 + 1e-9));
  EXPECT_NO_THROW(validate_contraction_tree(100, t));
}

// ---------------------------------------------------------------------------------------
// Malformed networks and options
// ---------------------------------------------------------------------------------------

TEST(Plan, MalformedNetworksAreArgumentErrors) {
  const std::vector<std::int64_t> e{2, 3, 4};
  for (const char* op : {"plan_contraction", "contraction_cost", "validate_contraction_network"}) {
    auto run = [&](const ContractionNetwork& net) {
      const std::string name = op;
      if (name == "plan_contraction") plan_contraction(net);
      else if (name == "contraction_cost") contraction_cost(net, ContractionTree{});
      else validate_contraction_network(net);
    };
    expect_argument_error([&] { run(ContractionNetwork{{{0, 1}, {1, 3}}, {0}, e}); },
                          {op, "operand 1 has label 3", "labels are 0..2"});
    expect_argument_error([&] { run(ContractionNetwork{{{0, -1}}, {}, e}); }, {op, "operand 0 has label -1"});
    expect_argument_error([&] { run(ContractionNetwork{{{0, 1, 0}}, {}, e}); }, {op, "operand 0 repeats label 0"});
    expect_argument_error([&] { run(ContractionNetwork{{{0, 1}, {1, 2}}, {0, 0}, e}); }, {op, "output repeats label 0"});
    expect_argument_error([&] { run(ContractionNetwork{{{0}, {0}}, {2}, e}); }, {op, "output label 2 is in no operand"});
    expect_argument_error([&] { run(ContractionNetwork{{{0}, {0}}, {5}, e}); }, {op, "output has label 5"});
    expect_argument_error([&] { run(ContractionNetwork{{{0}}, {}, {2, -3, 4}}); }, {op, "label 1 has extent -3"});
    expect_argument_error([&] { run(ContractionNetwork{{}, {}, e}); }, {op, "no operands"});
  }
}

TEST(Plan, BadOptionsAreArgumentErrors) {
  std::mt19937_64 rng(18);
  const auto net = random_network(rng, 9);
  PlanOptions o;
  o.objective = PlanObjective::flops;  // these tests check flops properties
  o.optimizer = EinsumOptimizer::optimal;
  o.optimal_max_operands = 8;
  expect_argument_error([&] { plan_contraction(net, o); },
                        {"plan_contraction", "9 operands", "limit is 8", "optimal_max_operands = 8"});
  o.optimal_max_operands = 100;  // the hard limit still applies
  const auto big = random_network(rng, 21);
  expect_argument_error([&] { plan_contraction(big, o); }, {"21 operands", "limit is 20"});
  o = anneal_options(0, 10);
  o.time_budget_s = -1;
  expect_argument_error([&] { plan_contraction(net, o); }, {"plan_contraction", "time_budget_s is -1"});
  o = anneal_options(0, -5);
  expect_argument_error([&] { plan_contraction(net, o); }, {"plan_contraction", "max_trials is -5"});
  o = anneal_options(0, 0);
  o.time_budget_s = INFINITY;
  expect_argument_error([&] { plan_contraction(net, o); }, {"plan_contraction", "time_budget_s is inf", "max_trials is 0"});
  o.time_budget_s = NAN;
  expect_argument_error([&] { plan_contraction(net, o); }, {"plan_contraction", "time_budget_s is nan"});
  // An optimizer outside the enum is refused (it used to fall through and return no steps).
  PlanOptions bad;
  bad.optimizer = static_cast<EinsumOptimizer>(9);
  expect_argument_error([&] { plan_contraction(net, bad); }, {"plan_contraction", "unknown EinsumOptimizer value 9"});
}
