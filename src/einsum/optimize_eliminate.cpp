// Trees by label elimination: GreedyPlanner::eliminate.
//
// Note [Label elimination]
// A pairwise greedy (optimize_greedy.cpp) scores pairs of tensors. On networks where a
// summed label sits on three or more tensors (hyperedges: the suite's factor graphs
// gm_queen5_5_3 and tensornetwork_permutation_*, where every variable is a label held by
// up to 16 factors) no single pair removes that label, so every pair looks like a
// batched outer product and greedy builds huge intermediates (10^11 multiply-adds on
// gm_queen5_5_3 against 10^9.5 for the suite's path). Variable elimination, the
// classic order for graphical models and tree decompositions, scores labels instead:
//  1. Pick the summed label whose elimination is cheapest: the smallest result (the
//     labels of all its holders that the output or another live tensor keeps;
//     EliminationParams::fill = false) or the fewest new pairs of co-held labels
//     (min-fill: the result joins its labels into one tensor, and each pair of them no
//     live tensor held together before grows every later step that meets them), with
//     Gumbel noise of the given temperature when randomized.
//  2. Contract every live tensor holding it pairwise, the pair with the smallest result
//     first; the last result no longer holds the label.
//  3. When no summed label is held by two live tensors, join the rest as greedy does
//     (outer products, smallest first).
// A label's score changes only when its holders change, i.e. when it sits on a tensor
// of the eliminated group; those scores are recomputed (min-fill's two-hop changes are
// ignored: a heuristic score either way). The adjacency of labels only grows (merging
// keeps every co-held pair co-held), so it is kept as one bit set per label.
// Measured on the suite (docs/benchmarks.md, 2026-12-06 third sitting): as starting trees
// for anneal's subtree reconfiguration they bring automatic to the 2 s anneal's tree on
// lm_batch_likelihood_brackets_4_4d after 1.4 ms of planning (was 9.8 ms, and a worse
// tree) and cut gm_queen5_5_3's planning from 724 to 16-45 ms at a better tree; on the
// 316/415-tensor factor graphs they do not help (their trees are predicted 90-580 ms).
#include <algorithm>
#include <bit>
#include <cmath>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

double GreedyPlanner::elimination_score(int l, const PreparedNetwork& net, const EliminationParams& params) {
  const int W = words_;
  // The union of the holders' labels; holders are stamped with l (a live node holding l
  // keeps holding it until it is merged, and merged nodes get a fresh stamp).
  tmp_.assign(static_cast<std::size_t>(2 * W), Word{0});
  Word* U = tmp_.data();
  Word* R = U + W;
  work_ += static_cast<std::int64_t>(holders_[l].size()) + 2;
  for (int t : holders_[l]) {
    stamp_[t] = l;
    const Word* T = &bits_[static_cast<std::size_t>(t) * W];
    for (int w = 0; w < W; ++w) U[w] |= T[w];
  }
  double size = 1.0;
  for (int w = 0; w < W; ++w)
    for (Word x = U[w]; x != 0; x &= x - 1) {
      const int bit = std::countr_zero(x);
      const int y = w * 64 + bit;
      bool outside = (net.output[w] >> bit) & 1;
      for (std::size_t i = 0; !outside && i < holders_[y].size(); ++i) outside = stamp_[holders_[y][i]] != l;
      if (outside) {
        R[w] |= Word{1} << bit;
        size *= net.extent[y];
      }
    }
  double s = std::log2(size);
  if (params.fill) {
    int missing = 0;
    for (int w = 0; w < W; ++w)
      for (Word x = R[w]; x != 0; x &= x - 1) {
        const Word* A = &adjacent_[static_cast<std::size_t>(w * 64 + std::countr_zero(x)) * W];
        for (int v = 0; v < W; ++v) missing += std::popcount(R[v] & ~A[v]);
      }
    s = missing / 2 + 1e-3 * s;  // ties: the smaller result
  }
  if (params.temperature > 0) s -= params.temperature * -std::log(-std::log(next_uniform(*params.rng)));
  return s;
}

void GreedyPlanner::eliminate(const PreparedNetwork& net, const EliminationParams& params, std::vector<Step>& steps) {
  start(net, steps);
  const int n = net.n, W = net.words, L = net.num_labels;
  if (n < 2) return;
  adjacent_.assign(static_cast<std::size_t>(L) * W, Word{0});
  auto join_adjacent = [&](const Word* S) {
    for (int w = 0; w < W; ++w)
      for (Word x = S[w]; x != 0; x &= x - 1) {
        Word* A = &adjacent_[static_cast<std::size_t>(w * 64 + std::countr_zero(x)) * W];
        for (int v = 0; v < W; ++v) A[v] |= S[v];
      }
  };
  if (params.fill)
    for (int i = 0; i < n; ++i) join_adjacent(net.input(i));
  label_score_.assign(static_cast<std::size_t>(L), 0.0);
  dirty_.assign(static_cast<std::size_t>(L), 1);
  std::vector<int>& candidates = candidates_;  // summed labels with two or more holders
  candidates.clear();
  for (int l = 0; l < L; ++l)
    if (!((net.output[l / 64] >> (l % 64)) & 1) && holders_[l].size() >= 2) candidates.push_back(l);
  std::vector<int>& group = group_;
  std::vector<Word>& touched = touched_;
  touched.resize(static_cast<std::size_t>(W));
  for (;;) {
    int best = -1;
    double best_score = 0;
    for (std::size_t i = 0; i < candidates.size();) {
      const int l = candidates[i];
      if (holders_[l].size() < 2) {  // eliminated with another label's group
        candidates[i] = candidates.back();
        candidates.pop_back();
        continue;
      }
      if (dirty_[l]) {
        label_score_[l] = elimination_score(l, net, params);
        dirty_[l] = 0;
      }
      if (best < 0 || label_score_[l] < best_score || (label_score_[l] == best_score && l < best))
        best = l, best_score = label_score_[l];
      ++i;
    }
    if (best < 0) break;
    group.assign(holders_[best].begin(), holders_[best].end());
    std::fill(touched.begin(), touched.end(), Word{0});
    for (int t : group)
      for (int w = 0; w < W; ++w) touched[w] |= bits_[static_cast<std::size_t>(t) * W + w];
    while (group.size() > 1) {
      std::size_t bi = 0, bj = 1;
      double bs = kInf;
      for (std::size_t i = 0; i < group.size(); ++i)
        for (std::size_t j = i + 1; j < group.size(); ++j)
          if (const double s = result_size(group[i], group[j], net); s < bs) bs = s, bi = i, bj = j;
      const int a = std::min(group[bi], group[bj]), b = std::max(group[bi], group[bj]);
      const int c = merge(a, b, net);
      steps.emplace_back(a, b);
      if (params.fill) join_adjacent(&bits_[static_cast<std::size_t>(c) * W]);
      group[bj] = group.back();
      group.pop_back();
      group[bi] = c;
    }
    for (int w = 0; w < W; ++w)
      for (Word x = touched[w]; x != 0; x &= x - 1) dirty_[w * 64 + std::countr_zero(x)] = 1;
  }
  join_rest(net, steps);
}

// Note [Starting trees]
// Anneal and automatic start from the cheapest of four deterministic trees: greedy with
// either candidate rule (GreedyParams::bonds_only; only where two operands share an
// output label: elsewhere both rules build the same tree) and label elimination by
// smallest result and by fewest fill pairs. None dominates: on the suite greedy wins on
// the MERA networks (elimination's trees run 1.3-50× slower), elimination on the
// language models (34 ms predicted against greedy's 2 s on brackets) and the factor
// graph gm_queen5_5_3 (3 s against 18 s), and a good start saves most of the search
// that follows. Under automatic the elimination trees (each about as costly as a greedy
// run) are built only when the planning budget (the anneal's hard limit) covers the
// greedy trees and them: a tree tensor network of 255 operands contracts in 0.13 ms, and
// the four starting trees took 0.75 ms; a 60-tensor random regular graph contracting in
// 40 µs paid 30 µs for a tree 2 µs faster.
// A fifth, a partition tree (Note [Partition trees] in optimize_partition.cpp;
// kStartPartition: imbalance 0.6, outer labels at half weight), joins them on the
// networks whose shape it suits (partition_suits: graphs, every label on at most two
// operands, whose breadth-first depth is at most kShallowDepth·√n: random regular
// graphs, PEPS norms, lattices) and, under automatic, only within a quarter of the
// budget (partition_seconds), as the search after it needs the rest. There greedy and
// elimination can end far from the good trees (rrg3_n120_bond2: elimination 71 ms
// predicted, the partition tree 2.1 ms), and the search from them does not reach the
// trees a partition tree starts near. One partition tree is a draw, though (over the
// partition optimizer's 15 settings one random regular graph's trees range 6-330 ms),
// and on the bench's PEPS norms this one loses (peps_norm_4x4_D3: 31 ms against
// greedy's 1.2). Over 16 more loopy networks (six rrg3_n120_bond2, three
// rrg3_n200_bond2, three 3-regular n80 bond 3, four PEPS norms 3×3 to 6×6) automatic's
// planning plus predicted time fell by 25% in geometric mean (0.29-1.27× each), by 70%
// on the bench's rrg3_n120_bond2, and moved less than 8% on the other 13 networks of
// the suite and the generated set (docs/benchmarks.md, 2026-12-07 fifth sitting).
// Elsewhere partition trees lose by far: on hypergraphs (labels on four operands:
// tensornetwork_permutation_light_415 89 ms predicted against elimination's 33), batch
// labels (the language models) and long networks (chains, MPS-MPO sandwiches, MERA: a
// balanced cut crosses them where they are widest; str_nw_mera_closed_120 5·10^7 ms
// against greedy's 1047), so there it is not built.
double elimination_tree(const PreparedNetwork& net, GreedyPlanner& planner, std::vector<Step>& steps,
                        const StepModel& model) {
  thread_local std::vector<Step> other;
  planner.eliminate(net, {}, steps);
  double best = tree_cost(net, steps, model);
  EliminationParams fill;
  fill.fill = true;
  planner.eliminate(net, fill, other);
  if (const double c = tree_cost(net, other, model); c < best) {
    best = c;
    steps.swap(other);
  }
  return best;
}

namespace {

// Whether some output label is held by two or more operands.
bool shares_output_label(const PreparedNetwork& net) {
  for (int w = 0; w < net.words; ++w) {
    Word seen = 0;
    for (int i = 0; i < net.n; ++i) {
      const Word x = net.input(i)[w] & net.output[w];
      if (seen & x) return true;
      seen |= x;
    }
  }
  return false;
}

}  // namespace

double starting_tree(const PreparedNetwork& net, GreedyPlanner& planner, std::vector<Step>& steps,
                     const StepModel& model, EinsumOptimizer* chosen, double fraction, double* spent,
                     double* one_run) {
  thread_local std::vector<Step> other;
  const std::int64_t w0 = planner.work();
  // Estimated seconds so far: the planner's work and a walk over the tree per cost.
  int costs = 0;
  auto seconds = [&] { return work_seconds(planner.work() - w0 + costs * net.n, 0); };
  planner.run(net, {}, steps);
  double best = tree_cost(net, steps, model);
  ++costs;
  const double first_run = seconds();  // an elimination tree costs about as much
  EinsumOptimizer which_best = EinsumOptimizer::greedy;
  auto keep = [&](double c, EinsumOptimizer which) {
    ++costs;
    if (c < best) {
      best = c;
      steps.swap(other);
      which_best = which;
    }
  };
  // The bonds-only rule differs only where two operands share an output label (a pair
  // sharing one is a candidate of the plain rule alone, and a label held once stays on
  // one node): a closed network, a PEPS norm, a matrix chain or a tree tensor network
  // would get the same tree twice.
  if (shares_output_label(net)) {
    GreedyParams bonds;
    bonds.bonds_only = true;
    planner.run(net, bonds, other);
    keep(tree_cost(net, other, model), EinsumOptimizer::greedy);
  }
  const double predicted = model.time ? best : tree_cost(net, steps, StepModel(PlanObjective::time, model.m));
  if (fraction <= 0 || fraction * predicted >= seconds() + 2 * first_run) {
    keep(elimination_tree(net, planner, other, model), EinsumOptimizer::eliminate);
    ++costs;  // elimination_tree costs both of its trees
  }
  // A partition tree where its shape suits (partition_suits; Note [Starting trees]).
  std::int64_t partition_work = 0;
  // Under automatic at most a quarter of the budget: the search after it needs the rest.
  const double each = partition_seconds(net.n);
  if (partition_suits(net) &&
      (fraction <= 0 || fraction * predicted >= std::max(seconds() + each, 4 * each))) {
    thread_local PartitionPlanner partition;
    const std::int64_t p0 = partition.work();
    partition.run(net, kStartPartition, other);
    partition_work = partition.work() - p0;
    keep(tree_cost(net, other, model), EinsumOptimizer::partition);
  }
  if (chosen) *chosen = which_best;
  if (spent) *spent = seconds() + work_seconds(0, 0, partition_work);
  if (one_run) *one_run = first_run;
  return best;
}

}  // namespace tenferro::einsum_detail
