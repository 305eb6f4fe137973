// Absorbing operands into their supersets before the heuristic optimizers plan.
//
// Note [Absorbed subsets]
// An operand T whose needed labels (those the output or another operand holds) all sit
// on another operand U can be multiplied into U first: T·U holds no label U lacks, so
// no intermediate of any tree grows by it, and the step costs about one pass over U.
// The suite's factor graphs are full of them: tensornetwork_permutation_light_415 has
// 155 vectors on 155 variables of 260 matrices, tensornetwork_permutation_focus_step409_316
// 115 vectors, and labels held by one operand make more (a matrix with a label of its
// own is a vector once einsum has summed that label). The optimizers eliminate, anneal and
// automatic plan the network that remains (the core), and the absorption steps come
// first in the returned tree:
//  1. Repeat until nothing changes: for each live operand T (in order), the smallest
//     live U (fewest elements, then lowest position) that holds all of T's needed
//     labels absorbs it; T·U takes U's place. Not when T holds labels of its own
//     (summed in the step) of extent above 1: T·U's step would then span U times
//     them, where a smaller operand that lacks some of T's labels may be the better
//     partner. einsum sums such labels before it plans (its leaf sums), so there T
//     never holds any.
//  2. The core is the live operands, with T·U's labels as Note [Intermediate labels]
//     gives them; the optimizers' trees over it are mapped back to the full network's
//     node ids after the absorption steps.
// Measured on light_415 (docs/benchmarks.md, 2026-12-06 seventh sitting): 415 operands
// become 227; eliminate's tree 119 → 16.1 ms predicted, a 1 s anneal's 4.0 → 2.4;
// focus_316 (316 → 180): eliminate 338 → 42 (greedy's 423 → 38, but greedy stays
// opt_einsum's greedy, on the full network). The exact optimizers (optimal, chain,
// automatic's DP up to kAutoDpAlways operands) and given trees plan the full network.
#include <algorithm>
#include <bit>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

namespace {

bool contains(const Word* sup, const Word* sub, int words) {
  for (int w = 0; w < words; ++w)
    if (sub[w] & ~sup[w]) return false;
  return true;
}

}  // namespace

bool absorb_subsets(const PreparedNetwork& net, AbsorbedNetwork& out) {
  const int n = net.n, W = net.words;
  out.prefix.clear();
  if (n < 3) return false;
  auto& sets = out.sets_;
  auto& count = out.count_;
  auto& node = out.ids;
  auto& alive = out.alive_;
  auto& need = out.need_;
  sets.assign(net.inputs.begin(), net.inputs.end());
  count.assign(static_cast<std::size_t>(net.num_labels), 0);
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < W; ++w)
      for (Word x = net.input(i)[w]; x != 0; x &= x - 1) ++count[static_cast<std::size_t>(w * 64 + std::countr_zero(x))];
  // Holders of each label (CSR); operands only lose labels, so an entry is current when
  // the operand is alive and still holds the label.
  auto& first = out.first_;
  auto& holder = out.holder_;
  first.assign(static_cast<std::size_t>(net.num_labels) + 1, 0);
  for (int l = 0; l < net.num_labels; ++l) first[l + 1] = first[l] + count[l];
  holder.resize(static_cast<std::size_t>(first[net.num_labels]));
  {
    std::vector<int>& fill = out.fill_;
    fill.assign(first.begin(), first.end() - 1);
    for (int i = 0; i < n; ++i)
      for (int w = 0; w < W; ++w)
        for (Word x = net.input(i)[w]; x != 0; x &= x - 1) holder[fill[w * 64 + std::countr_zero(x)]++] = i;
  }
  node.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) node[i] = i;
  alive.assign(static_cast<std::size_t>(n), 1);
  need.assign(static_cast<std::size_t>(W), 0);
  const Word* output = net.output.data();
  int live = n, next_id = n;
  auto set = [&](int i) { return sets.data() + static_cast<std::size_t>(i) * W; };
  auto held_elsewhere = [&](int l) { return ((output[l / 64] >> (l % 64)) & 1) != 0 || count[l] >= 2; };
  for (bool changed = true; changed && live > 1;) {
    changed = false;
    for (int t = 0; t < n && live > 1; ++t) {
      if (!alive[t]) continue;
      const Word* T = set(t);
      int rarest = -1;  // the needed label with the fewest holders: U is one of them
      double own = 1;   // the extents of T's labels of its own
      for (int w = 0; w < W; ++w) {
        need[w] = 0;
        for (Word x = T[w]; x != 0; x &= x - 1) {
          const int bit = std::countr_zero(x), l = w * 64 + bit;
          if (!held_elsewhere(l)) {
            own *= net.extent[l];
            continue;
          }
          need[w] |= Word{1} << bit;
          if (rarest < 0 || count[l] < count[rarest]) rarest = l;
        }
      }
      if (own > 1) continue;  // T·U would span U times them (einsum sums them first)
      int best = -1;
      double best_size = kInf;
      const int lo = rarest < 0 ? 0 : first[rarest], hi = rarest < 0 ? n : first[rarest + 1];
      for (int e = lo; e < hi; ++e) {
        const int u = rarest < 0 ? e : holder[e];  // no needed label: any operand
        if (u == t || !alive[u] || !contains(set(u), need.data(), W)) continue;
        const double size = set_size(set(u), W, net.extent.data());
        if (size < best_size) {
          best = u;
          best_size = size;
        }
      }
      if (best < 0) continue;
      // T·U keeps a label of T ∪ U that the output or another live operand holds.
      Word* U = set(best);
      for (int w = 0; w < W; ++w) {
        const Word both = T[w] | U[w];
        Word kept = 0;
        for (Word x = both; x != 0; x &= x - 1) {
          const int bit = std::countr_zero(x), l = w * 64 + bit;
          const Word m = Word{1} << bit;
          count[l] -= ((T[w] & m) != 0) + ((U[w] & m) != 0);
          if (((output[w] >> bit) & 1) != 0 || count[l] > 0) {
            kept |= m;
            ++count[l];
          }
        }
        U[w] = kept;
      }
      out.prefix.emplace_back(node[best], node[t]);
      node[best] = next_id++;
      alive[t] = 0;
      --live;
      changed = true;
    }
  }
  if (out.prefix.empty()) return false;
  PreparedNetwork& core = out.core;
  core.n = live;
  core.num_labels = net.num_labels;
  core.words = W;
  core.output = net.output;
  core.extent = net.extent;
  core.inputs.clear();
  int k = 0;
  for (int i = 0; i < n; ++i) {
    if (!alive[i]) continue;
    core.inputs.insert(core.inputs.end(), set(i), set(i) + W);
    node[k++] = node[i];
  }
  node.resize(static_cast<std::size_t>(live));
  return true;
}

void expand_core_tree(const AbsorbedNetwork& absorbed, int n, std::vector<Step>& steps) {
  const int core_n = absorbed.core.n;
  const int first_core_node = n + static_cast<int>(absorbed.prefix.size());
  auto full = [&](int x) { return x < core_n ? absorbed.ids[x] : first_core_node + (x - core_n); };
  std::vector<Step> core_steps;
  core_steps.swap(steps);
  steps.assign(absorbed.prefix.begin(), absorbed.prefix.end());
  for (const auto& [a, b] : core_steps) steps.emplace_back(full(a), full(b));
}

}  // namespace tenferro::einsum_detail
