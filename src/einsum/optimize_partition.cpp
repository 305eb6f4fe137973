// Contraction trees by recursive bisection of the network (the partition optimizer).
//
// Note [Partition trees]
// A contraction tree is a hierarchy of operand sets: the step at the top joins two
// halves of the network, and it costs the product of the extents of the labels they
// share (the cut) and of those both keep for the rest of the network. Cutting the
// network where its bonds are thinnest, then each half the same way, builds the trees
// greedy cannot find on loopy networks (random regular graphs, circuits, grids), where
// every pairwise choice looks alike and the tree's top cuts decide the cost: the idea of
// cotengra's hypergraph-partitioned trees (Gray & Kourtis, "Hyper-optimized tensor
// network contraction", Quantum 5, 410 (2021)), which partition with KaHyPar. Ours
// bisects the hypergraph whose vertices are the operands and whose hyperedges are the
// labels two or more of them hold, weighted by log2 of their extents, so a cut's weight
// is log2 of the extents it multiplies into the top step:
//  - A set of k operands splits into parts of at least ⌊(1 − imbalance) k / 2⌋ (at
//    least one) operands each, so the tree is O(log n) deep.
//  - Multilevel, as METIS and KaHyPar do (Karypis & Kumar, "A fast and high quality
//    multilevel scheme for partitioning irregular graphs", SIAM J. Sci. Comput. 20
//    (1998)): operands are paired with the neighbour they share the heaviest labels
//    with (a hyperedge of p pins rates each pair w / (p − 1)), pairs become one vertex
//    (of at most 1.5 times the coarsest level's average weight), and so on while that
//    shrinks the hypergraph by a tenth, down to kCoarsest vertices; the coarsest
//    hypergraph is bisected `tries` times (one part grown breadth-first from a random
//    vertex to half the weight, then refined), and the best partition is projected back
//    level by level and refined at each (at most kProjectedPasses passes).
//  - Refinement is Fiduccia–Mattheyses (DAC 1982): one vertex moves at a time, the best
//    gain first, each vertex once per pass, rolling back to the best partition seen; a
//    pass starts from the vertices on cut edges, ends after max(kPatience, k / 16)
//    moves without a better one, and passes repeat while they improve (at most
//    kMaxPasses). A partition scores its cut plus, per operand a part lacks of the
//    balance, more than any cut weighs, so every balanced partition beats every
//    unbalanced one and the passes also restore balance the coarse vertices lost.
//    Weights are integers (1/kGainScale bit), so gains index buckets of doubly linked
//    lists (FM's own structure) and change only when an edge's pin count on a side
//    passes 0 or 1 (FM's update rule). Fewer passes (3, patience 4, one at each
//    projected level) cut the 6 × 10 lattice of plan_partition_test across 10 bonds
//    instead of its 6, in two thirds of the time.
//  - Labels the rest of the network (or the output) also holds cross the set's
//    boundary whatever the split: they weigh `outer_weight` of their log2 extent. At
//    0.5 the score is half the sum of the two parts' label counts: a cut label enlarges
//    both intermediates, an outer label split between the parts both, an outer label
//    on one side one.
// Where it helps and where it does not: Note [Starting trees] in optimize_eliminate.cpp.
// The work counted for automatic's budget (Note [Planning work]) is one unit per pin
// visited and per bucket operation (about 8 ns each, 70-90 per n·log2 n operands on the
// bench's graphs: partition_seconds).
#include <algorithm>
#include <cmath>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

namespace {

// FM passes per refinement at most, and the moves without a better cut after which a
// pass ends.
constexpr int kMaxPasses = 8;
constexpr int kPatience = 16;
// FM passes at each level of the projection (the partition is already good there).
constexpr int kProjectedPasses = 4;
// Coarsening stops at this many vertices, or when a level shrinks by less than a tenth.
constexpr int kCoarsest = 16;
// Hyperedges with more pins than this do not rate pairs (a label on every operand says
// nothing about which two belong together).
constexpr int kMaxRatedPins = 16;
// Edge weights (log2 extents) are kept in units of 1/kGainScale bit, as integers, so
// gains index buckets.
constexpr double kGainScale = 8;
// partition_suits: networks deeper than this times √n are long and thin (Note
// [Starting trees]: 2D lattices ~2, PEPS norms 1.2-1.4, random regular graphs 0.7-0.9;
// MPS-MPO sandwiches 2.7-3.3, MERA 2.0-2.5, chains √n).
constexpr double kShallowDepth = 2.2;

}  // namespace

void PartitionPlanner::setup(const PreparedNetwork& net) {
  const int n = net.n, W = net.words, L = net.num_labels;
  weight_.assign(static_cast<std::size_t>(L), 0.0);
  holders_.assign(static_cast<std::size_t>(L), 0);
  node_start_.assign(static_cast<std::size_t>(n) + 1, 0);
  node_labels_.clear();
  for (int i = 0; i < n; ++i) {
    const Word* I = net.input(i);
    for (int w = 0; w < W; ++w)
      for (Word x = I[w]; x != 0; x &= x - 1) {
        const int l = w * 64 + std::countr_zero(x);
        if (net.extent[l] <= 1) continue;  // weightless: never part of a cut
        node_labels_.push_back(l);
        ++holders_[l];
      }
    node_start_[i + 1] = static_cast<int>(node_labels_.size());
  }
  for (int l = 0; l < L; ++l) {
    weight_[l] = std::log2(net.extent[l]);
    if ((net.output[l / 64] >> (l % 64)) & 1) holders_[l] = -1;  // always outer
  }
  order_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order_[i] = i;
  label_count_.assign(static_cast<std::size_t>(L), 0);
  label_edge_.assign(static_cast<std::size_t>(L), -1);
}

void PartitionPlanner::run(const PreparedNetwork& net, const PartitionParams& params, std::vector<Step>& steps) {
  const int n = net.n;
  steps.clear();
  if (n < 2) return;
  setup(net);
  params_ = params;
  params_.imbalance = std::clamp(params.imbalance, 0.0, 0.9);
  params_.tries = std::max(1, params.tries);
  rng_ = params.seed ^ 0xB15EC7104AD5EEDull;
  steps.reserve(static_cast<std::size_t>(n - 1));
  // Explicit stack of ranges of order_: a range is split once (its halves pushed), and
  // joined once both halves are done (post-order; each range leaves its node id on ids_).
  stack_.assign(1, {0, n, -1});
  ids_.clear();
  while (!stack_.empty()) {
    Range& f = stack_.back();
    if (f.hi - f.lo == 1) {
      ids_.push_back(order_[f.lo]);
      stack_.pop_back();
      continue;
    }
    if (f.mid < 0) {
      f.mid = bisect(f.lo, f.hi);
      const Range left{f.lo, f.mid, -1}, right{f.mid, f.hi, -1};
      stack_.push_back(right);
      stack_.push_back(left);  // `f` is dangling from here on
      continue;
    }
    stack_.pop_back();
    const int b = ids_.back();
    ids_.pop_back();
    const int a = ids_.back();
    ids_.pop_back();
    steps.emplace_back(a, b);
    ids_.push_back(n + static_cast<int>(steps.size()) - 1);
  }
}

// The hypergraph of the set order_[lo, hi) into levels_[0]: labels two or more of its
// operands hold, CSR both ways, local operand numbers, unit vertex weights.
void PartitionPlanner::build_edges(int lo, int hi) {
  const int k = hi - lo;
  Hypergraph& g = level(0);
  touched_.clear();
  for (int i = 0; i < k; ++i) {
    const int v = order_[lo + i];
    for (int p = node_start_[v]; p < node_start_[v + 1]; ++p) {
      const int l = node_labels_[p];
      if (label_count_[l]++ == 0) touched_.push_back(l);
    }
  }
  work_ += static_cast<std::int64_t>(touched_.size());
  g.edge_weight.clear();
  g.edge_start.assign(1, 0);
  for (int l : touched_) {
    const int c = label_count_[l];
    if (c >= 2) {
      label_edge_[l] = static_cast<int>(g.edge_weight.size());
      const bool outer = holders_[l] < 0 || c < holders_[l];
      const double w = weight_[l] * (outer ? params_.outer_weight : 1.0) * kGainScale;
      g.edge_weight.push_back(std::max(1, static_cast<int>(std::lround(w))));
      g.edge_start.push_back(g.edge_start.back() + c);
    }
  }
  g.pins.resize(static_cast<std::size_t>(g.edge_start.back()));
  fill_.assign(g.edge_start.begin(), g.edge_start.end() - 1);
  g.vertex_start.assign(static_cast<std::size_t>(k) + 1, 0);
  g.vertex_edges.clear();
  for (int i = 0; i < k; ++i) {
    const int v = order_[lo + i];
    for (int p = node_start_[v]; p < node_start_[v + 1]; ++p) {
      const int e = label_edge_[node_labels_[p]];
      if (e < 0) continue;
      g.pins[fill_[e]++] = i;
      g.vertex_edges.push_back(e);
    }
    g.vertex_start[i + 1] = static_cast<int>(g.vertex_edges.size());
  }
  g.vertex_weight.assign(static_cast<std::size_t>(k), 1);
  work_ += static_cast<std::int64_t>(g.vertex_edges.size());
  for (int l : touched_) {
    label_count_[l] = 0;
    label_edge_[l] = -1;
  }
}

PartitionPlanner::Hypergraph& PartitionPlanner::level(int i) {
  if (static_cast<int>(levels_.size()) <= i) levels_.resize(static_cast<std::size_t>(i) + 1);
  return levels_[static_cast<std::size_t>(i)];
}

// One level of coarsening: pairs of levels_[i] into levels_[i + 1] (maps_[i]: the
// coarse vertex of each fine one). Returns false when it would shrink by less than a
// tenth (nothing built).
bool PartitionPlanner::coarsen(int i, int max_weight) {
  const Hypergraph& f = level(i);
  const int k = f.vertices();
  auto& map = maps_.size() <= static_cast<std::size_t>(i) ? maps_.emplace_back() : maps_[static_cast<std::size_t>(i)];
  map.assign(static_cast<std::size_t>(k), -1);
  visit_.resize(static_cast<std::size_t>(k));
  for (int v = 0; v < k; ++v) visit_[v] = v;
  for (int v = k - 1; v > 0; --v)
    std::swap(visit_[v], visit_[static_cast<int>(next_random(rng_) % static_cast<std::uint64_t>(v + 1))]);
  rating_.assign(static_cast<std::size_t>(k), 0.0);
  int coarse = 0;
  for (int u : visit_) {
    if (map[u] >= 0) continue;
    // Rate the unmatched neighbours by the labels shared with u.
    rated_.clear();
    for (int p = f.vertex_start[u]; p < f.vertex_start[u + 1]; ++p) {
      const int e = f.vertex_edges[p];
      const int q0 = f.edge_start[e], q1 = f.edge_start[e + 1];
      if (q1 - q0 > kMaxRatedPins) continue;
      const double r = static_cast<double>(f.edge_weight[e]) / (q1 - q0 - 1);
      work_ += q1 - q0;
      for (int q = q0; q < q1; ++q) {
        const int v = f.pins[q];
        if (v == u || map[v] >= 0 || f.vertex_weight[u] + f.vertex_weight[v] > max_weight) continue;
        if (rating_[v] == 0) rated_.push_back(v);
        rating_[v] += r;
      }
    }
    int best = -1;
    for (int v : rated_) {
      if (best < 0 || rating_[v] > rating_[best]) best = v;
      rating_[v] = 0;
    }
    map[u] = coarse;
    if (best >= 0) map[best] = coarse;
    ++coarse;
  }
  if (coarse > k - k / 10 - 1) return false;
  Hypergraph& c = level(i + 1);
  const Hypergraph& fine = level(i);  // level() may have moved the levels
  const auto& m = maps_[static_cast<std::size_t>(i)];
  c.vertex_weight.assign(static_cast<std::size_t>(coarse), 0);
  for (int v = 0; v < k; ++v) c.vertex_weight[m[v]] += fine.vertex_weight[v];
  // Edges with their pins mapped and deduplicated; those left with one pin go.
  c.edge_weight.clear();
  c.edge_start.assign(1, 0);
  c.pins.clear();
  stamp_.assign(static_cast<std::size_t>(coarse), -1);
  for (int e = 0; e < fine.edges(); ++e) {
    const std::size_t start = c.pins.size();
    for (int q = fine.edge_start[e]; q < fine.edge_start[e + 1]; ++q) {
      const int v = m[fine.pins[q]];
      if (stamp_[v] == e) continue;
      stamp_[v] = e;
      c.pins.push_back(v);
    }
    work_ += fine.edge_start[e + 1] - fine.edge_start[e];
    if (c.pins.size() - start < 2) {
      c.pins.resize(start);
      continue;
    }
    c.edge_weight.push_back(fine.edge_weight[e]);
    c.edge_start.push_back(static_cast<int>(c.pins.size()));
  }
  // Vertex → edges.
  c.vertex_start.assign(static_cast<std::size_t>(coarse) + 1, 0);
  for (int v : c.pins) ++c.vertex_start[v + 1];
  for (int v = 0; v < coarse; ++v) c.vertex_start[v + 1] += c.vertex_start[v];
  c.vertex_edges.resize(c.pins.size());
  fill_.assign(c.vertex_start.begin(), c.vertex_start.end() - 1);
  for (int e = 0; e < c.edges(); ++e)
    for (int q = c.edge_start[e]; q < c.edge_start[e + 1]; ++q) c.vertex_edges[fill_[c.pins[q]]++] = e;
  return true;
}

// Breadth-first growth of side 0 of g from a random vertex to `target` weight.
void PartitionPlanner::grow(const Hypergraph& g, int target) {
  const int k = g.vertices();
  side_.assign(static_cast<std::size_t>(k), 1);
  queue_.clear();
  int grown = 0;
  std::size_t head = 0;
  while (grown < target) {
    if (head == queue_.size()) {  // a new component (or the start)
      int v = static_cast<int>(next_random(rng_) % static_cast<std::uint64_t>(k));
      int left = k;
      while (side_[v] == 0 && --left > 0) v = (v + 1) % k;
      if (side_[v] == 0) break;
      side_[v] = 0;
      grown += g.vertex_weight[v];
      queue_.push_back(v);
      continue;
    }
    const int v = queue_[head++];
    for (int p = g.vertex_start[v]; p < g.vertex_start[v + 1] && grown < target; ++p) {
      const int e = g.vertex_edges[p];
      for (int q = g.edge_start[e]; q < g.edge_start[e + 1] && grown < target; ++q) {
        const int u = g.pins[q];
        ++work_;
        if (side_[u] == 0) continue;
        side_[u] = 0;
        grown += g.vertex_weight[u];
        queue_.push_back(u);
      }
    }
  }
}

// The cut weight of side_ on g (pin counts and gains from scratch).
std::int64_t PartitionPlanner::count(const Hypergraph& g) {
  const int k = g.vertices(), E = g.edges();
  pins_on_.assign(static_cast<std::size_t>(2) * E, 0);
  std::int64_t cut = 0;
  for (int e = 0; e < E; ++e) {
    for (int q = g.edge_start[e]; q < g.edge_start[e + 1]; ++q) ++pins_on_[2 * e + side_[g.pins[q]]];
    if (pins_on_[2 * e] > 0 && pins_on_[2 * e + 1] > 0) cut += g.edge_weight[e];
  }
  gain_.assign(static_cast<std::size_t>(k), 0);
  boundary_.assign(static_cast<std::size_t>(k), 0);
  max_gain_ = 0;
  penalty_ = 1;  // above every cut: the total edge weight, plus one
  for (int e = 0; e < E; ++e) penalty_ += g.edge_weight[e];
  for (int i = 0; i < k; ++i) {
    const int s = side_[i];
    int incident = 0;
    for (int p = g.vertex_start[i]; p < g.vertex_start[i + 1]; ++p) {
      const int e = g.vertex_edges[p];
      incident += g.edge_weight[e];
      if (pins_on_[2 * e + s] == 1) gain_[i] += g.edge_weight[e];
      if (pins_on_[2 * e + 1 - s] == 0) gain_[i] -= g.edge_weight[e];
      else boundary_[i] = 1;
    }
    max_gain_ = std::max(max_gain_, incident);
  }
  work_ += static_cast<std::int64_t>(g.pins.size() + g.vertex_edges.size());
  return cut;
}

// The balance term of a partition's score (pass()): penalty_ per operand either part
// lacks of min_part.
std::int64_t PartitionPlanner::imbalance(const int* part, int min_part) const {
  return penalty_ * (std::max(0, min_part - part[0]) + std::max(0, min_part - part[1]));
}

// Gain buckets: per side, LIFO lists of vertices by gain (index gain + max_gain_).
void PartitionPlanner::insert(int v) {
  auto& heads = bucket_[side_[v]];
  const int b = gain_[v] + max_gain_;
  next_[v] = heads[b];
  prev_[v] = -1;
  if (heads[b] >= 0) prev_[heads[b]] = v;
  heads[b] = v;
  top_[side_[v]] = std::max(top_[side_[v]], b);
  listed_[v] = 1;
}

void PartitionPlanner::remove(int v) {
  if (prev_[v] >= 0) next_[prev_[v]] = next_[v];
  else bucket_[side_[v]][gain_[v] + max_gain_] = next_[v];
  if (next_[v] >= 0) prev_[next_[v]] = prev_[v];
  listed_[v] = 0;
}

// The vertex of side s with the largest gain (-1: none).
int PartitionPlanner::best_of(int s) {
  const auto& heads = bucket_[s];
  while (top_[s] >= 0 && heads[top_[s]] < 0) --top_[s];
  return top_[s] < 0 ? -1 : heads[top_[s]];
}

// One FM pass on g from side_ (counted by count()) whose score is `score`; returns the
// new score (side_ holds the best partition seen). A partition's score is its cut plus
// penalty_ per operand a part lacks of min_part: a balanced partition beats every
// unbalanced one, so passes restore the balance that coarse vertices (too heavy to
// split a set evenly) may have lost.
std::int64_t PartitionPlanner::pass(const Hypergraph& g, int min_part, std::int64_t score) {
  const int k = g.vertices();
  std::int64_t current = score, best = score;
  locked_.assign(static_cast<std::size_t>(k), 0);
  listed_.assign(static_cast<std::size_t>(k), 0);
  next_.resize(static_cast<std::size_t>(k));
  prev_.resize(static_cast<std::size_t>(k));
  for (int s = 0; s < 2; ++s) {
    bucket_[s].assign(static_cast<std::size_t>(2 * max_gain_ + 1), -1);
    top_[s] = -1;
  }
  int part[2] = {0, 0};
  // Boundary vertices only (those on a cut edge); the others join once a move changes
  // their gain.
  for (int i = 0; i < k; ++i) {
    part[side_[i]] += g.vertex_weight[i];
    if (boundary_[i]) insert(i);
  }
  work_ += k;
  moves_.clear();
  std::size_t best_moves = 0;
  const std::size_t patience = static_cast<std::size_t>(std::max(kPatience, k / 16));
  auto change = [&](int u, int d) {
    if (locked_[u]) return;
    if (listed_[u]) remove(u);
    gain_[u] += d;
    insert(u);
    ++work_;
  };
  for (;;) {
    // The best move from each side whose part may shrink by it; the larger gain wins,
    // ties move from the heavier part.
    int from = -1, v = -1;
    for (int s = 0; s < 2; ++s) {
      const int u = best_of(s);
      if (u < 0 || (part[s] - g.vertex_weight[u] < min_part && part[s] <= part[1 - s])) continue;
      if (v < 0 || gain_[u] > gain_[v] || (gain_[u] == gain_[v] && part[s] > part[from])) from = s, v = u;
    }
    if (v < 0) break;
    remove(v);
    const int to = 1 - from;
    current -= gain_[v] + imbalance(part, min_part);
    locked_[v] = 1;
    side_[v] = static_cast<std::uint8_t>(to);
    part[from] -= g.vertex_weight[v];
    part[to] += g.vertex_weight[v];
    current += imbalance(part, min_part);
    moves_.push_back(v);
    // FM's update: only counts passing 0 or 1 change other vertices' gains.
    for (int p = g.vertex_start[v]; p < g.vertex_start[v + 1]; ++p) {
      const int e = g.vertex_edges[p];
      const int w = g.edge_weight[e];
      int& on_from = pins_on_[2 * e + from];
      int& on_to = pins_on_[2 * e + to];
      const int q0 = g.edge_start[e], q1 = g.edge_start[e + 1];
      if (on_to == 0) {
        work_ += q1 - q0;
        for (int q = q0; q < q1; ++q) change(g.pins[q], w);  // the edge becomes cut
      } else if (on_to == 1) {
        work_ += q1 - q0;
        for (int q = q0; q < q1; ++q)
          if (side_[g.pins[q]] == to) change(g.pins[q], -w);
      }
      --on_from;
      ++on_to;
      if (on_from == 0) {
        work_ += q1 - q0;
        for (int q = q0; q < q1; ++q) change(g.pins[q], -w);  // the edge is no longer cut
      } else if (on_from == 1) {
        work_ += q1 - q0;
        for (int q = q0; q < q1; ++q)
          if (side_[g.pins[q]] == from) change(g.pins[q], w);
      }
    }
    if (current < best) {
      best = current;
      best_moves = moves_.size();
    } else if (moves_.size() - best_moves >= patience) {
      break;
    }
  }
  for (std::size_t m = moves_.size(); m > best_moves; --m) side_[moves_[m - 1]] ^= 1;  // roll back
  return best;
}

// FM passes on g from side_ while they improve; returns the score (pass()).
std::int64_t PartitionPlanner::refine(const Hypergraph& g, int min_part, int max_passes) {
  auto score = [&] {
    int part[2] = {0, 0};
    for (int v = 0; v < g.vertices(); ++v) part[side_[v]] += g.vertex_weight[v];
    return count(g) + imbalance(part, min_part);
  };
  std::int64_t best = score();
  for (int p = 0; p < max_passes; ++p) {
    const std::int64_t next = pass(g, min_part, best);
    if (next >= best) break;
    best = next;
    if (p + 1 < max_passes) score();  // the next pass starts from fresh counts
  }
  return best;
}

// Splits order_[lo, hi) into two parts, reordering it so the first part comes first;
// returns where the second starts.
int PartitionPlanner::bisect(int lo, int hi) {
  const int k = hi - lo;
  if (k == 2) return lo + 1;
  build_edges(lo, hi);
  const int min_part = std::max(1, static_cast<int>((1.0 - params_.imbalance) * 0.5 * static_cast<double>(k) + 1e-9));
  // Coarse vertices of at most 1.5 times the average weight at the coarsest level (METIS).
  const int max_weight = std::max(2, (3 * k + 2 * kCoarsest - 1) / (2 * kCoarsest));
  int levels = 0;
  while (level(levels).vertices() > kCoarsest && coarsen(levels, max_weight)) ++levels;
  // The coarsest level: the best of `tries` grown and refined partitions.
  const Hypergraph& top = level(levels);
  std::int64_t best = -1;
  const int tries = levels > 0 ? params_.tries : 1;  // small sets: one try
  for (int t = 0; t < tries; ++t) {
    grow(top, k / 2);
    const std::int64_t cut = refine(top, min_part, kMaxPasses);
    if (best < 0 || cut < best) {
      best = cut;
      best_side_ = side_;
    }
  }
  // Project down and refine at each level.
  for (int i = levels - 1; i >= 0; --i) {
    const Hypergraph& g = level(i);
    const auto& m = maps_[static_cast<std::size_t>(i)];
    side_.resize(static_cast<std::size_t>(g.vertices()));
    for (int v = 0; v < g.vertices(); ++v) side_[v] = best_side_[m[v]];
    refine(g, min_part, kProjectedPasses);
    best_side_ = side_;
  }
  // Stable partition of the range by side (side 0 first).
  scratch_.clear();
  int first = 0;
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < k; ++i)
      if (best_side_[i] == s) scratch_.push_back(order_[lo + i]);
    if (s == 0) first = static_cast<int>(scratch_.size());
  }
  std::copy(scratch_.begin(), scratch_.end(), order_.begin() + lo);
  return lo + first;
}

bool partition_suits(const PreparedNetwork& net) {
  const int n = net.n, W = net.words;
  if (n <= 10) return false;
  // The holders of each label (a third one: a hypergraph, or a batch label of the
  // output, as the language models of the suite have), then adjacency lists over the
  // summed labels.
  thread_local std::vector<int> first, second, start, adjacent, depth, queue;
  first.assign(static_cast<std::size_t>(net.num_labels), -1);
  second.assign(static_cast<std::size_t>(net.num_labels), -1);
  start.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < W; ++w)
      for (Word x = net.input(i)[w]; x != 0; x &= x - 1) {
        const int l = w * 64 + std::countr_zero(x);
        if (first[l] < 0) first[l] = i;
        else if (second[l] < 0) second[l] = i;
        else return false;
      }
  auto summed = [&](int l) { return second[l] >= 0 && !((net.output[l / 64] >> (l % 64)) & 1); };
  for (int l = 0; l < net.num_labels; ++l)
    if (summed(l)) ++start[first[l] + 1], ++start[second[l] + 1];
  for (int i = 0; i < n; ++i) start[i + 1] += start[i];
  adjacent.resize(static_cast<std::size_t>(start[n]));
  queue.assign(start.begin(), start.end() - 1);  // fill positions
  for (int l = 0; l < net.num_labels; ++l)
    if (summed(l)) adjacent[queue[first[l]]++] = second[l], adjacent[queue[second[l]]++] = first[l];
  // Depth of a breadth-first search from the operand farthest from operand 0 (a
  // pseudo-peripheral one; a disconnected network counts its first component).
  auto farthest = [&](int from) {
    depth.assign(static_cast<std::size_t>(n), -1);
    queue.assign(1, from);
    depth[from] = 0;
    int last = from;
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const int v = queue[h];
      last = v;
      for (int p = start[v]; p < start[v + 1]; ++p)
        if (depth[adjacent[p]] < 0) {
          depth[adjacent[p]] = depth[v] + 1;
          queue.push_back(adjacent[p]);
        }
    }
    return last;
  };
  const int far = farthest(farthest(0));
  return depth[far] <= kShallowDepth * std::sqrt(static_cast<double>(n));
}

double partition_tree(const PreparedNetwork& net, PartitionPlanner& planner, std::vector<Step>& steps,
                      const StepModel& model, std::uint64_t seed) {
  thread_local std::vector<Step> candidate;
  double best = kInf;
  int trial = 0;
  for (double imbalance : {0.05, 0.2, 0.4, 0.6, 0.8})
    for (double outer : {1.0, 0.5, 0.2}) {
      PartitionParams p;
      p.imbalance = imbalance;
      p.outer_weight = outer;
      p.seed = seed + static_cast<std::uint64_t>(trial++);
      planner.run(net, p, candidate);
      const double c = tree_cost(net, candidate, model);
      if (c < best) {
        best = c;
        steps.swap(candidate);
      }
    }
  return best;
}

}  // namespace tenferro::einsum_detail
