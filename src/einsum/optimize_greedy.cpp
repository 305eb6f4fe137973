// Greedy contraction order, after opt_einsum's `greedy` (opt_einsum/paths.py,
// _ssa_greedy_optimize): repeatedly contract the pair of live nodes that share a label
// and minimize size(A·B) − size(A) − size(B); once no live pair shares a label, join the
// remaining nodes by outer products, smallest two first.
//
// Candidates live in a binary heap with lazy deletion: a node's size never changes while
// it is live, so a score stays valid until one side is contracted, and popped pairs with a
// dead side are skipped. Ties break on the node ids (smaller first), so the order is
// deterministic. With a temperature, each pushed score gets Gumbel noise on a log scale
// and the size term is weighted by `costmod` (cotengra's randomized greedy, used by
// anneal's restarts).
#include <algorithm>
#include <cmath>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

namespace {

struct CandidateGreater {
  template <class C>
  bool operator()(const C& x, const C& y) const {
    if (x.score != y.score) return x.score > y.score;
    if (x.a != y.a) return x.a > y.a;
    return x.b > y.b;
  }
};

}  // namespace

// Result labels of a·b and their size (result_size): a label of a ∪ b stays when it is in
// the output or a live node other than a and b holds it (Note [Intermediate labels]).
// A summed label of A ∪ B goes when a and b are its only holders: held by one of them
// and by no other node (once_), or by both and no other (twice_).
double GreedyPlanner::result_size(int a, int b, const PreparedNetwork& net) const {
  const int W = words_;
  const Word* A = &bits_[static_cast<std::size_t>(a) * W];
  const Word* B = &bits_[static_cast<std::size_t>(b) * W];
  work_ += 3;
  double result = 1.0;
  for (int w = 0; w < W; ++w) {
    const Word kept = (A[w] | B[w]) & ~((A[w] ^ B[w]) & once_[w]) & ~(A[w] & B[w] & twice_[w]);
    for (Word x = kept; x != 0; x &= x - 1) result *= net.extent[w * 64 + std::countr_zero(x)];
  }
  return result;
}

void GreedyPlanner::count_holders(int l, const PreparedNetwork& net) {
  const Word m = Word{1} << (l % 64);
  const std::size_t w = static_cast<std::size_t>(l / 64);
  const std::size_t h = (net.output[w] & m) ? 0 : holders_[l].size();
  once_[w] = h == 1 ? once_[w] | m : once_[w] & ~m;
  twice_[w] = h == 2 ? twice_[w] | m : twice_[w] & ~m;
}

double GreedyPlanner::score(int a, int b, const PreparedNetwork& net, const GreedyParams& params) {
  double s = result_size(a, b, net) - params.costmod * (size_[a] + size_[b]);
  if (params.temperature > 0) {
    // Gumbel-perturbed log score: softmin sampling among the candidates of similar score.
    s = std::copysign(std::log2(1.0 + std::fabs(s)), s);
    s -= params.temperature * -std::log(-std::log(next_uniform(*params.rng)));
  }
  return s;
}

void GreedyPlanner::push_pairs_of(int node, int min_other, const PreparedNetwork& net, const GreedyParams& params) {
  const int W = words_;
  const Word* N = &bits_[static_cast<std::size_t>(node) * W];
  for (int w = 0; w < W; ++w) {
    for (Word x = params.bonds_only ? N[w] & ~net.output[w] : N[w]; x != 0; x &= x - 1) {
      const int l = w * 64 + std::countr_zero(x);
      for (int other : holders_[l]) {
        if (other == node || other < min_other || stamp_[other] == node) continue;
        stamp_[other] = node;
        const int a = std::min(node, other), b = std::max(node, other);
        heap_.push_back({score(a, b, net, params), a, b});
        std::push_heap(heap_.begin(), heap_.end(), CandidateGreater{});
      }
    }
  }
}

int GreedyPlanner::merge(int a, int b, const PreparedNetwork& net) {
  const int W = words_;
  const int c = next_++;
  Word* C = &bits_[static_cast<std::size_t>(c) * W];
  const Word* A = &bits_[static_cast<std::size_t>(a) * W];
  const Word* B = &bits_[static_cast<std::size_t>(b) * W];
  work_ += 3;
  double size = 1.0;
  for (int w = 0; w < W; ++w) {
    Word keep = 0;
    for (Word x = A[w] | B[w]; x != 0; x &= x - 1) {
      const int bit = std::countr_zero(x);
      const int l = w * 64 + bit;
      const Word m = Word{1} << bit;
      auto& h = holders_[l];
      // Remove a and b from the holders (lists are short: the bond's endpoints).
      h.erase(std::remove_if(h.begin(), h.end(), [&](int v) { return v == a || v == b; }), h.end());
      if (!h.empty() || (net.output[w] & m)) {
        keep |= m;
        h.push_back(c);
        size *= net.extent[l];
      }
      count_holders(l, net);
    }
    C[w] = keep;
  }
  size_[c] = size;
  alive_[a] = alive_[b] = 0;
  alive_[c] = 1;
  stamp_[c] = -1;
  return c;
}

void GreedyPlanner::start(const PreparedNetwork& net, std::vector<Step>& steps) {
  const int n = net.n, W = net.words, nodes = 2 * n - 1;
  words_ = W;
  next_ = n;
  steps.clear();
  steps.reserve(static_cast<std::size_t>(std::max(n - 1, 0)));
  bits_.resize(static_cast<std::size_t>(nodes) * W);
  std::copy(net.inputs.begin(), net.inputs.end(), bits_.begin());
  size_.resize(nodes);
  alive_.assign(nodes, 0);
  stamp_.assign(nodes, -1);
  if (holders_.size() < static_cast<std::size_t>(net.num_labels)) holders_.resize(net.num_labels);
  for (int l = 0; l < net.num_labels; ++l) holders_[l].clear();
  for (int i = 0; i < n; ++i) {
    alive_[i] = 1;
    size_[i] = set_size(net.input(i), W, net.extent.data());
    const Word* I = net.input(i);
    for (int w = 0; w < W; ++w)
      for (Word x = I[w]; x != 0; x &= x - 1) holders_[w * 64 + std::countr_zero(x)].push_back(i);
  }
  once_.assign(static_cast<std::size_t>(W), Word{0});
  twice_.assign(static_cast<std::size_t>(W), Word{0});
  for (int l = 0; l < net.num_labels; ++l) count_holders(l, net);
  heap_.clear();
}

void GreedyPlanner::join_rest(const PreparedNetwork& net, std::vector<Step>& steps) {
  heap_.clear();
  for (int i = 0; i < next_; ++i)
    if (alive_[i]) heap_.push_back({size_[i], i, i});
  std::make_heap(heap_.begin(), heap_.end(), CandidateGreater{});
  while (heap_.size() > 1) {
    std::pop_heap(heap_.begin(), heap_.end(), CandidateGreater{});
    const int a = heap_.back().a;
    heap_.pop_back();
    std::pop_heap(heap_.begin(), heap_.end(), CandidateGreater{});
    const int b = heap_.back().a;
    heap_.pop_back();
    const int node = merge(std::min(a, b), std::max(a, b), net);
    steps.emplace_back(std::min(a, b), std::max(a, b));
    heap_.push_back({size_[node], node, node});
    std::push_heap(heap_.begin(), heap_.end(), CandidateGreater{});
  }
}

void GreedyPlanner::run(const PreparedNetwork& net, const GreedyParams& params, std::vector<Step>& steps) {
  start(net, steps);
  if (net.n < 2) return;
  for (int i = 0; i < net.n; ++i) push_pairs_of(i, i + 1, net, params);

  // Phase 1: pairs sharing a label.
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), CandidateGreater{});
    const Candidate c = heap_.back();
    heap_.pop_back();
    if (!alive_[c.a] || !alive_[c.b]) continue;
    const int node = merge(c.a, c.b, net);
    steps.emplace_back(c.a, c.b);
    push_pairs_of(node, 0, net, params);
  }

  // Phase 2: outer products of what is left, the two smallest first (ties: smaller id).
  join_rest(net, steps);
}

}  // namespace tenferro::einsum_detail
