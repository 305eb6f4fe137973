// Exact contraction order by dynamic programming over subsets of operands (the
// "optimal" optimizer), after opt_einsum's `dp` optimizer (Fried, Hankel-Hantke & al.;
// opt_einsum/path_dp.py) but over bitmask subsets in increasing integer order: every
// proper subset of S is smaller than S, so one pass fills the table.
//
// best[S] = min over splits S = A ∪ B of best[A] + best[B] + step(A, B → S), where step
// is the product-space size size(labels(A) ∪ labels(B)) (flops) or the CostModel's
// seconds (Note [Einsum time model]), ties broken by the largest intermediate. Splits are enumerated as the submasks A of S
// holding S's lowest member (each unordered split once): about 3^k / 2 pairs in all.
// Pruning, cheapest first: a subset larger than the cap (the greedy tree's cost) is never
// built; with connected splits only, a subset whose operands are not connected is never
// built; a split is skipped before any label work when its two sides' cost plus a lower
// bound of its own step (StepModel::bound of size(A), size(B), size(S): the product space
// holds all three label sets) exceeds the best found or the cap. Under the time objective
// a split that passes is costed only if its sides plus its step's fixed cost and traffic
// (StepModel::traffic, exact from the three sizes; on the shipped model its size term is
// at least 15 times the first bound's) do not exceed them either. It is counted as
// costed all the same (Note [Planning work]): automatic's budgets, and so its trees, stay
// as they were, and less time is spent on them. Subsets that only trees above the cap
// reach stay at infinity and prune every split that uses them.
#include <algorithm>
#include <numeric>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro::einsum_detail {

double SubsetDp::solve(int k, const Word* inputs, const Word* output, int W, const double* ext, bool connected_only,
                       double cap, std::vector<Step>& steps, const StepModel& model) {
  const std::uint32_t N = std::uint32_t{1} << k, full = N - 1;
  union_.resize(static_cast<std::size_t>(N) * W);
  labels_.resize(static_cast<std::size_t>(N) * W);
  flops_.assign(N, kInf);
  largest_.assign(N, kInf);
  size_.resize(N);
  split_.assign(N, 0);
  std::fill_n(union_.begin(), W, Word{0});
  work_ += N;
  for (std::uint32_t s = 1; s < N; ++s) {
    const int low = std::countr_zero(s);
    const Word* prev = &union_[static_cast<std::size_t>(s & (s - 1)) * W];
    for (int w = 0; w < W; ++w) union_[static_cast<std::size_t>(s) * W + w] = prev[w] | inputs[low * W + w];
  }
  for (std::uint32_t s = 1; s < N; ++s) {
    Word* L = &labels_[static_cast<std::size_t>(s) * W];
    if ((s & (s - 1)) == 0) {
      const int leaf = std::countr_zero(s);
      std::copy_n(inputs + leaf * W, W, L);
      flops_[s] = 0;
      largest_[s] = 0;
    } else {
      const Word* U = &union_[static_cast<std::size_t>(s) * W];
      const Word* O = &union_[static_cast<std::size_t>(full ^ s) * W];
      for (int w = 0; w < W; ++w) L[w] = U[w] & (output[w] | O[w]);
    }
    size_[s] = set_size(L, W, ext);
  }
  // Connected-only: a subset whose operands do not form a connected graph (edges: shared
  // labels) has no tree of connected splits, so its submasks need no enumeration. On
  // sparse networks (chains, trees, lattices) this skips most of the 3^k work.
  std::uint32_t adj[32] = {};
  if (connected_only) {
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        if (i != j && intersects(inputs + i * W, inputs + j * W, W)) adj[i] |= std::uint32_t{1} << j;
  }
  for (std::uint32_t s = 3; s < N; ++s) {
    if ((s & (s - 1)) == 0) continue;
    const std::uint32_t low = s & (~s + 1), rest = s ^ low;
    // The step that creates S costs at least bound(S): above the cap, S is unreachable.
    if (model.bound(0, 0, size_[s]) > cap) continue;
    if (connected_only) {
      std::uint32_t seen = low, frontier = low;
      while (frontier != 0) {
        const int i = std::countr_zero(frontier);
        frontier &= frontier - 1;
        const std::uint32_t next = adj[i] & s & ~seen;
        seen |= next;
        frontier |= next;
      }
      if (seen != s) continue;
    }
    double best = kInf, best_largest = kInf;
    std::uint32_t best_split = 0;
    for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
      ++work_;
      const std::uint32_t a = low | sub, b = s ^ a;
      if (b != 0) {
        const double base = flops_[a] + flops_[b];
        // The step's product space holds the labels of A, of B and of S, so it is at
        // least the largest of the three: a cheap bound before any label work.
        if (base < kInf && base + model.bound(size_[a], size_[b], size_[s]) <= std::min(best, cap)) {
          const Word* A = &labels_[static_cast<std::size_t>(a) * W];
          const Word* B = &labels_[static_cast<std::size_t>(b) * W];
          if (!connected_only || intersects(A, B, W)) {
            work_ += 2;
            const Word* S = &labels_[static_cast<std::size_t>(s) * W];
            // The traffic bound (see the top of the file): counted, not costed.
            const bool hopeless = model.time && base + model.traffic(size_[a], size_[b], size_[s]) > std::min(best, cap);
            const double total = hopeless ? kInf : base + model.step_sized(A, B, S, W, ext, size_[a], size_[b]);
            if (total <= cap) {
              const double largest = std::max({size_[s], largest_[a], largest_[b]});
              if (total < best || (total == best && largest < best_largest)) {
                best = total;
                best_largest = largest;
                best_split = a;
              }
            }
          }
        }
      }
      if (sub == 0) break;
    }
    flops_[s] = best;
    largest_[s] = best_largest;
    split_[s] = best_split;
  }
  steps.clear();
  step_masks_.clear();
  if (flops_[full] == kInf) return kInf;
  steps.reserve(static_cast<std::size_t>(k - 1));
  last_largest_ = largest_[full];
  emit(full, k, steps);
  return flops_[full];
}

int SubsetDp::emit(std::uint32_t s, int k, std::vector<Step>& steps) {
  if ((s & (s - 1)) == 0) return std::countr_zero(s);
  const std::uint32_t a = split_[s];
  const int ia = emit(a, k, steps);
  const int ib = emit(s ^ a, k, steps);
  steps.emplace_back(ia, ib);
  step_masks_.push_back(s);
  return k + static_cast<int>(steps.size()) - 1;
}

namespace {

// Up to this many operands the DP tries every split, outer products included, and is
// exact over all trees (3^10 = 59049 pairs). Above it, splits must share a label.
constexpr int kAllSplitsMax = 10;
// Up to this many operands the DP runs without the greedy cap (3^5 / 2 = 121 splits):
// measured, the cap pays for its greedy run from 6 operands on.
constexpr int kNoCapMax = 5;
// Most connected components joined by the DP (3^12 / 2 splits); more join greedily.
constexpr int kJoinDpMax = 12;

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

// Labels held by the same operands (and equally in or out of the output) appear together
// in every label set, so for the DP they are one label whose extent is their product.
// Merging them bounds the bitsets by the number of distinct holder sets: a network of 20
// operands with thousands of labels would otherwise need 2^20 sets of many words each.
void merge_parallel_labels(const PreparedNetwork& net, PreparedNetwork& out) {
  const int n = net.n;
  if (n > 31) throw InternalError("plan_contraction", "optimal planner called with more than 31 operands");
  std::vector<std::pair<std::uint64_t, int>> keys;  // (holder mask | output bit << 32, label)
  for (int l = 0; l < net.num_labels; ++l) {
    std::uint64_t key = 0;
    for (int i = 0; i < n; ++i)
      if (net.input(i)[l / 64] >> (l % 64) & 1) key |= std::uint64_t{1} << i;
    if (key == 0) continue;  // in no operand (and so not in the output)
    if (net.output[l / 64] >> (l % 64) & 1) key |= std::uint64_t{1} << 32;
    keys.emplace_back(key, l);
  }
  std::sort(keys.begin(), keys.end());
  out.n = n;
  out.extent.clear();
  std::vector<std::uint64_t> masks;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (k == 0 || keys[k].first != keys[k - 1].first) {
      masks.push_back(keys[k].first);
      out.extent.push_back(1.0);
    }
    out.extent.back() *= net.extent[keys[k].second];
  }
  out.num_labels = static_cast<int>(masks.size());
  out.words = std::max(1, (out.num_labels + 63) / 64);
  out.inputs.assign(static_cast<std::size_t>(n) * out.words, 0);
  out.output.assign(static_cast<std::size_t>(out.words), 0);
  for (int l = 0; l < out.num_labels; ++l) {
    const Word bit = Word{1} << (l % 64);
    for (int i = 0; i < n; ++i)
      if (masks[l] >> i & 1) out.inputs[static_cast<std::size_t>(i) * out.words + l / 64] |= bit;
    if (masks[l] >> 32 & 1) out.output[l / 64] |= bit;
  }
}

// Three operands have three trees, (a·b)·c for each choice of c: compare them directly
// (flops, then largest intermediate, then the order below). The commonest einsum of 3+
// operands pays a few hundred instructions for planning instead of the DP's setup.
void three_operand_tree(const PreparedNetwork& net, std::vector<Step>& steps, const StepModel& model) {
  const int W = net.words;
  const double* ext = net.extent.data();
  const double out_size = set_size(net.output.data(), W, ext);
  constexpr int kPairs[3][3] = {{0, 1, 2}, {0, 2, 1}, {1, 2, 0}};
  Word ab[64];  // labels of a·b, for networks of at most 64 * 64 labels
  int best = -1;
  double best_flops = kInf, best_largest = kInf;
  for (int p = 0; p < 3; ++p) {
    const Word *A = net.input(kPairs[p][0]), *B = net.input(kPairs[p][1]), *C = net.input(kPairs[p][2]);
    for (int w = 0; w < W; ++w) ab[w] = (A[w] | B[w]) & (net.output[w] | C[w]);
    const double mid = set_size(ab, W, ext);
    const double flops = model.step(A, B, ab, W, ext) + model.step(ab, C, net.output.data(), W, ext);
    const double largest = std::max(mid, out_size);
    if (flops < best_flops || (flops == best_flops && largest < best_largest)) {
      best = p;
      best_flops = flops;
      best_largest = largest;
    }
  }
  steps.assign({{kPairs[best][0], kPairs[best][1]}, {3, kPairs[best][2]}});
}

void optimal_tree(const PreparedNetwork& original, std::vector<Step>& steps, const StepModel& model) {
  if (original.n == 3 && original.words <= 64) {
    three_operand_tree(original, steps, model);
    return;
  }
  thread_local SubsetDp dp;
  // Small networks (the einsum calls of 4..5 operands): the whole DP is about a hundred
  // splits, cheaper than the greedy run that would cap it.
  if (original.n <= kNoCapMax) {
    dp.solve(original.n, original.inputs.data(), original.output.data(), original.words, original.extent.data(), false,
             kInf, steps, model);
    return;
  }
  thread_local PreparedNetwork merged;
  if (original.words > 1) merge_parallel_labels(original, merged);
  const PreparedNetwork& net = original.words > 1 ? merged : original;
  const int n = net.n, W = net.words;
  thread_local GreedyPlanner greedy;
  thread_local std::vector<Step> greedy_steps;
  greedy.run(net, {}, greedy_steps);
  // Slack for rounding: the DP sums the same products in another order.
  const double cap = tree_cost(net, greedy_steps, model) * (1 + 1e-9);
  if (n <= kAllSplitsMax) {
    if (dp.solve(n, net.inputs.data(), net.output.data(), W, net.extent.data(), false, cap, steps, model) == kInf)
      steps = greedy_steps;
    return;
  }
  // Connected components by shared labels.
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> first_holder(static_cast<std::size_t>(net.num_labels), -1);
  for (int i = 0; i < n; ++i) {
    const Word* I = net.input(i);
    for (int w = 0; w < W; ++w)
      for (Word x = I[w]; x != 0; x &= x - 1) {
        const int l = w * 64 + std::countr_zero(x);
        if (first_holder[l] < 0) first_holder[l] = i;
        else parent[find_root(parent, i)] = find_root(parent, first_holder[l]);
      }
  }
  std::vector<std::vector<int>> components;
  std::vector<int> component_of(n, -1);
  for (int i = 0; i < n; ++i) {
    const int r = find_root(parent, i);
    if (component_of[r] < 0) {
      component_of[r] = static_cast<int>(components.size());
      components.emplace_back();
    }
    components[component_of[r]].push_back(i);
  }
  if (components.size() == 1) {
    if (dp.solve(n, net.inputs.data(), net.output.data(), W, net.extent.data(), true, cap, steps, model) == kInf)
      steps = greedy_steps;
    return;
  }
  // Each component alone (no other component shares a label with it, so its result
  // keeps only output labels), then every way of joining the component results.
  steps.clear();
  std::vector<Word> local_inputs, roots_labels;
  std::vector<Step> local;
  std::vector<int> global_of;
  std::vector<int> roots;
  double components_cost = 0;
  for (const auto& comp : components) {
    const int k = static_cast<int>(comp.size());
    local_inputs.assign(static_cast<std::size_t>(k) * W, 0);
    std::vector<Word> result(W, 0);
    for (int i = 0; i < k; ++i)
      for (int w = 0; w < W; ++w) {
        local_inputs[i * W + w] = net.input(comp[i])[w];
        result[w] |= net.input(comp[i])[w];
      }
    // A component of one operand is a leaf: it keeps its labels as given (one only it
    // holds is summed at its first step); a larger one keeps its output labels only.
    if (k > 1)
      for (int w = 0; w < W; ++w) result[w] &= net.output[w];
    global_of.assign(comp.begin(), comp.end());
    if (k > 1) {
      const double cost = dp.solve(k, local_inputs.data(), result.data(), W, net.extent.data(), k > kAllSplitsMax, cap, local, model);
      if (cost == kInf) {
        steps = greedy_steps;  // rounding put every tree above the cap: keep greedy's
        return;
      }
      components_cost += cost;
      for (const auto& [a, b] : local) {
        steps.emplace_back(global_of[a], global_of[b]);
        global_of.push_back(n + static_cast<int>(steps.size()) - 1);
      }
    }
    roots.push_back(global_of.back());
    roots_labels.insert(roots_labels.end(), result.begin(), result.end());
  }
  // Joining: the DP over every split for up to kJoinDpMax components, capped by what the
  // greedy tree leaves for its join (our components cost no more than greedy's, so its
  // join tree fits under the cap); above that, or if rounding left nothing under the cap,
  // greedy's own rule (outer products, the two smallest first).
  const int c = static_cast<int>(roots.size());
  const double join_cap = (cap - components_cost) * (1 + 1e-9) + 1;
  if (c > kJoinDpMax ||
      dp.solve(c, roots_labels.data(), net.output.data(), W, net.extent.data(), false, join_cap, local, model) == kInf) {
    PreparedNetwork joins;
    joins.n = c;
    joins.num_labels = net.num_labels;
    joins.words = W;
    joins.inputs = roots_labels;
    joins.output = net.output;
    joins.extent = net.extent;
    greedy.run(joins, {}, local);
  }
  // Map the joining steps: local leaves are component roots, local node c + j is the j-th join.
  const int base = static_cast<int>(steps.size());
  for (const auto& [a, b] : local) {
    auto map = [&](int x) { return x < c ? roots[x] : n + base + (x - c); };
    steps.emplace_back(map(a), map(b));
  }
}

}  // namespace tenferro::einsum_detail
