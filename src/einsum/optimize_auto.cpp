// The automatic optimizer (what einsum uses without options) and the chain solver.
//
// Note [Automatic planning]
// A plan is worth what it saves: planning a 1 ms contraction for 2 s is as bad as
// running a greedy tree 100× slower than the best. `automatic` therefore scores every
// tree with the time model (Note [Einsum time model]) and spends on planning at most
// PlanOptions::planning_fraction of the predicted time of the best tree found so far
// (never more than time_budget_s):
//  1. n <= 3: the exact answer directly (two operands need no planning at all).
//  2. The starting tree (Note [Starting trees]: the best of greedy's two rules, of
//     label elimination by size and by fill, and on shallow graphs of a partition
//     tree), as the baseline and the yardstick for the
//     budget. The elimination trees are built when the hard budget of step 5 (not the
//     fraction itself, as until 2026-12-06) covers what the greedy trees took and what
//     they will take: they are part of the same search. matrix_chain_n200 of the
//     bench's generated networks then starts from elimination's tree, 1.05 ms predicted
//     against greedy's 1.47, which a short anneal had not improved (planning 0.37 →
//     0.30 ms), and ttn_levels5_chi16 from a 0.24 ms tree instead of 0.31.
//  3. A chain (each operand shares summed labels with at most two others, the graph is
//     a path: matrix chains, MPS-like rows): the exact interval DP along the chain,
//     O(n^3) steps (the matrix-chain algorithm, Cormen et al. §15.2), when its estimated
//     cost fits the budget.
//  4. Up to kAutoDpMax operands (and optimal_max_operands), the exact subset DP when its
//     estimated cost (3^n / 2 splits at a measured cost per split) fits the budget; up
//     to kAutoDpAlways always.
//  5. Otherwise anneal (randomized greedy restarts, then subtree reconfiguration) with
//     the dynamic budget, from the fixed seed PlanOptions::seed. Every budget here is
//     counted in estimated seconds of work, not read from the clock (Note [Planning
//     work]), so the plan is the same on every run unless time_budget_s, the one limit
//     on the clock, ends the search first. It stops softly once its gains no longer
//     pay for its time (Note [Anneal budget]: from the fraction of the best tree's
//     predicted time on) and at the latest after kHardFactor times the fraction of the
//     starting tree's predicted time. The hard limit was the fraction itself until
//     2026-12-06: the starting tree is often far from the trees a short search finds,
//     and stopping there cut off searches that were still paying (peps_norm_4x4_D3:
//     planning plus predicted time 1.36 → 0.85 ms, tensornetwork_permutation_focus_
//     step409_316 23.0 → 15.7 ms; a factor of 10 cost the small tree tensor networks
//     and MPS-MPO sandwiches up to 30%; docs/benchmarks.md).
// The result is never predicted slower than greedy's tree. Above kAutoDpAlways
// operands automatic plans the network left after absorbing subset operands (Note
// [Absorbed subsets] in absorb.cpp), and the steps above apply to that network.
#include <array>
#include <chrono>
#include <cmath>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

namespace {

using Clock = std::chrono::steady_clock;

// The anneal's hard budget, in units of the planning fraction of the starting tree's
// predicted time (Note [Automatic planning], step 5).
constexpr double kHardFactor = 3;
// Exact DP when its estimated cost fits the budget up to this many operands.
constexpr int kAutoDpMax = 16;
// Measured cost of one DP split under the time objective (release build, one core,
// plan_auto_test's SubsetDpTimeUnderTheTimeObjective: 8 operands 0.11 ms, 10: 2.2 ms
// with every split tried; 12: 0.44 ms, 14: 3.8 ms, 16: 10 ms with connected splits on
// sparse networks) and of one chain-DP step (100 matrices: 1.15 ms). Above 10 operands
// the estimate is kept well above the sparse measurements: dense networks prune less.
constexpr double kDpAllSplitSeconds = 80e-9;
constexpr double kDpSplitSeconds = 20e-9;
constexpr double kChainStepSeconds = 8e-9;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::vector<int> chain_order(const PreparedNetwork& net) {
  const int n = net.n, W = net.words;
  std::vector<int> order;
  if (n < 3) return order;
  // Holders of each summed label; more than two makes a triangle: not a chain.
  std::vector<int> first(static_cast<std::size_t>(net.num_labels), -1), second(static_cast<std::size_t>(net.num_labels), -1);
  std::vector<std::array<int, 2>> adj(static_cast<std::size_t>(n), {-1, -1});
  auto link = [&](int a, int b) {
    for (int x : {a, b}) {
      const int y = x == a ? b : a;
      auto& s = adj[static_cast<std::size_t>(x)];
      if (s[0] == y || s[1] == y) continue;
      if (s[0] < 0) s[0] = y;
      else if (s[1] < 0) s[1] = y;
      else return false;  // degree 3
    }
    return true;
  };
  for (int i = 0; i < n; ++i) {
    const Word* I = net.input(i);
    for (int w = 0; w < W; ++w)
      for (Word x = I[w] & ~net.output[w]; x != 0; x &= x - 1) {
        const int l = w * 64 + std::countr_zero(x);
        if (first[l] < 0) first[l] = i;
        else if (second[l] < 0) second[l] = i;
        else return order;
      }
  }
  for (int l = 0; l < net.num_labels; ++l)
    if (second[l] >= 0 && !link(first[l], second[l])) return order;
  int start = -1;
  for (int i = 0; i < n; ++i) {
    const auto& s = adj[static_cast<std::size_t>(i)];
    if (s[0] < 0) return order;  // isolated operand
    if (s[1] < 0 && start < 0) start = i;
  }
  if (start < 0) return order;  // a ring
  order.push_back(start);
  int prev = -1, cur = start;
  while (static_cast<int>(order.size()) < n) {
    const auto& s = adj[static_cast<std::size_t>(cur)];
    const int next = s[0] != prev ? s[0] : s[1];
    if (next < 0) break;
    prev = cur;
    cur = next;
    order.push_back(cur);
  }
  if (static_cast<int>(order.size()) != n) order.clear();  // not connected
  return order;
}

// Interval DP: best[i][j] over the operands order[i..j] = min over k of best[i][k] +
// best[k+1][j] + step([i..k], [k+1..j] → [i..j]). An interval keeps the labels of its
// operands that the output or an operand outside it holds (Note [Intermediate labels]),
// from prefix and suffix unions.
void chain_tree(const PreparedNetwork& net, const std::vector<int>& order, std::vector<Step>& steps, const StepModel& model) {
  const int n = net.n, W = net.words;
  const double* ext = net.extent.data();
  const auto idx = [n](int i, int j) { return static_cast<std::size_t>(i) * n + j; };
  std::vector<Word> labels(static_cast<std::size_t>(n) * n * W), prefix(static_cast<std::size_t>(n + 1) * W, 0),
      suffix(static_cast<std::size_t>(n + 1) * W, 0), uni(W);
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < W; ++w) prefix[(i + 1) * W + w] = prefix[i * W + w] | net.input(order[i])[w];
  for (int i = n - 1; i >= 0; --i)
    for (int w = 0; w < W; ++w) suffix[i * W + w] = suffix[(i + 1) * W + w] | net.input(order[i])[w];
  for (int i = 0; i < n; ++i) {
    std::fill(uni.begin(), uni.end(), Word{0});
    for (int j = i; j < n; ++j) {
      Word* L = &labels[idx(i, j) * W];
      const Word* I = net.input(order[j]);
      for (int w = 0; w < W; ++w) {
        uni[w] |= I[w];
        // prefix[i] holds operands before i, suffix[j + 1] those after j.
        L[w] = i == j ? I[w] : uni[w] & (net.output[w] | prefix[i * W + w] | suffix[(j + 1) * W + w]);
      }
    }
  }
  std::vector<double> best(static_cast<std::size_t>(n) * n, 0);
  std::vector<int> split(static_cast<std::size_t>(n) * n, -1);
  for (int len = 2; len <= n; ++len) {
    for (int i = 0; i + len - 1 < n; ++i) {
      const int j = i + len - 1;
      const Word* C = &labels[idx(i, j) * W];
      double b = kInf;
      int s = i;
      for (int k = i; k < j; ++k) {
        const double base = best[idx(i, k)] + best[idx(k + 1, j)];
        if (base >= b) continue;
        const double t = base + model.step(&labels[idx(i, k) * W], &labels[idx(k + 1, j) * W], C, W, ext);
        if (t < b) b = t, s = k;
      }
      best[idx(i, j)] = b;
      split[idx(i, j)] = s;
    }
  }
  steps.clear();
  steps.reserve(static_cast<std::size_t>(n - 1));
  // Post-order emission with an explicit stack (chains can be long).
  struct Frame {
    int i, j;
    bool expanded;
  };
  std::vector<Frame> stack{{0, n - 1, false}};
  std::vector<int> node_of;  // results, in stack order
  while (!stack.empty()) {
    Frame f = stack.back();
    stack.pop_back();
    if (f.i == f.j) {
      node_of.push_back(order[f.i]);
      continue;
    }
    if (!f.expanded) {
      const int k = split[idx(f.i, f.j)];
      stack.push_back({f.i, f.j, true});
      stack.push_back({k + 1, f.j, false});
      stack.push_back({f.i, k, false});
      continue;
    }
    const int b = node_of.back();
    node_of.pop_back();
    const int a = node_of.back();
    node_of.pop_back();
    steps.emplace_back(a, b);
    node_of.push_back(n + static_cast<int>(steps.size()) - 1);
  }
}

EinsumOptimizer automatic_tree(const PreparedNetwork& net, const PlanOptions& options, std::vector<Step>& steps,
                               const StepModel& model) {
  const int n = net.n;
  const int dp_max = std::min(kAutoDpMax, options.optimal_max_operands);
  if (n <= 3 || (n <= kAutoDpAlways && n <= dp_max)) {
    optimal_tree(net, steps, model);
    return EinsumOptimizer::optimal;
  }
  const auto t0 = Clock::now();
  thread_local GreedyPlanner greedy;
  thread_local std::vector<Step> start_steps;
  EinsumOptimizer chosen = EinsumOptimizer::greedy;
  double spent = 0, one_run = 0;  // estimated seconds of work (Note [Planning work])
  // The elimination trees are built when the hard budget (step 5) covers them.
  const double start_cost = starting_tree(net, greedy, start_steps, model, &chosen,
                                          kHardFactor * options.planning_fraction, &spent, &one_run);
  const StepModel seconds_model(PlanObjective::time, model.m);
  const double predicted = model.time ? start_cost : tree_cost(net, start_steps, seconds_model);
  double budget = std::min(options.time_budget_s, options.planning_fraction * predicted) - spent;
  // Extents whose products overflow predict infinite time; an infinite time_budget_s
  // then would let anneal run forever: fall back to one second.
  if (!std::isfinite(budget)) budget = 1.0;
  const double nn = n;
  steps = start_steps;
  auto keep_if_better = [&](std::vector<Step>& candidate, EinsumOptimizer which) {
    if (tree_cost(net, candidate, model) <= start_cost) {
      steps.swap(candidate);
      chosen = which;
    }
  };
  std::vector<Step> candidate;
  if (nn * nn * nn / 6 * kChainStepSeconds <= budget) {
    const std::vector<int> order = chain_order(net);
    if (!order.empty()) {
      chain_tree(net, order, candidate, model);
      keep_if_better(candidate, EinsumOptimizer::chain);
      return chosen;
    }
  }
  if (n <= dp_max && std::pow(3.0, nn) / 2 * (n <= 10 ? kDpAllSplitSeconds : kDpSplitSeconds) <= budget) {
    optimal_tree(net, candidate, model);
    keep_if_better(candidate, EinsumOptimizer::optimal);
    return chosen;
  }
  // Anneal stops by itself within the budget; it needs some budget to start at all.
  // (Requiring several greedy runs' worth of budget, as a first version did, left the
  // 415-tensor network of the suite with greedy's tree, 40× slower than anneal's, on a
  // loaded machine, when budgets were read from the clock.)
  double hard = std::min(options.time_budget_s, kHardFactor * options.planning_fraction * predicted);
  if (!std::isfinite(hard)) hard = 1.0;  // as `budget` above
  // Its least work is a restart (about a greedy run) and the rewrite state: below two
  // greedy runs of budget it cannot improve the tree (ttn_levels7_chi8 spent 0.12 ms
  // for nothing).
  if (hard - spent < 2 * one_run) return chosen;
  PlanOptions o = options;
  o.time_budget_s = hard - spent;
  candidate = steps;  // the starting tree
  anneal_tree(net, o, candidate, model, options.planning_fraction, true, options.time_budget_s - seconds_since(t0));
  keep_if_better(candidate, EinsumOptimizer::anneal);
  return chosen;
}

}  // namespace tenferro::einsum_detail
