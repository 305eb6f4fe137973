// The "anneal" optimizer for large networks (hundreds of tensors).
//
// Note [Anneal: restarts, then subtree reconfiguration]
// Two phases, both randomized from PlanOptions::seed with splitmix64:
//  1. Randomized restarts from the best starting tree (Note [Starting trees]: greedy
//     with both candidate rules, label elimination by size and by fill), so the result
//     is never worse than greedy. Of every four restarts, two run greedy (cotengra's
//     hyper-greedy: a size weight `costmod` in [0.1, 4] and a temperature log-uniform in
//     [0.001, 1], Gumbel noise on the scores; one of them with the bonds-only rule) and
//     two run label elimination (by size, by fill) with a Gumbel temperature in
//     [0.1, 1.5]: on gm_queen5_5_3 that took a 20 ms anneal from 1.2 s predicted to
//     0.49 s. A quarter of the budget (under automatic 3%).
// Trees are compared by the objective (PlanOptions::objective: the time model of
// Note [Einsum time model] or flops); "flops" below means the objective's step cost.
//  2. Subtree reconfiguration (cotengra's subtree_reconfigure; Gray & Kourtis,
//     "Hyper-optimized tensor network contraction", Quantum 5, 410 (2021)) of the best
//     tree: pick an internal node (half the time weighted by its flops, which aims the
//     search at the steps that dominate the cost), grow a frontier below it to at most
//     4–10 nodes (Note [Growing frontiers]) by expanding frontier nodes (the largest or
//     a random one), and replace the steps between the node and its frontier by the
//     exact optimum of that small network (SubsetDp: the frontier's labels as
//     operands, the node's labels as output).
//     The node's labels and every node outside the subtree are unchanged, so only the
//     new internal steps need new labels and flops. The optimum is never worse than the
//     current subtree; equal-cost rewrites are kept too, which lets the tree drift over
//     plateaus.
//
// Note [Growing frontiers]
// A rewrite solves its frontier exactly, in 3^k splits: 10 nodes cost about 1.4 ms, 5
// nodes 10 µs (light_415, whose 675 labels make every set operation 11 words). Small
// rewrites find most early gains, large ones the gains small ones cannot reach. The
// frontier therefore starts at kMinFrontier (or one more, at random) and grows by one
// after every kGrowAfter rewrites in a row without a gain, back to the start at each
// gain. Against the earlier fixed mix (10, 8 or 6 nodes), a 20 ms anneal of
// gm_queen5_5_3 went from 3.4 to 1.2 s predicted and of light_415 from 21 to 14 ms; at
// 1 s both end within 5% of the fixed mix (docs/benchmarks.md, 2026-12-06 third sitting).
// Note [Rewrite rounds]
// On loopy networks of uniform small bonds the rewrites end in a local optimum that
// depends on their random path: on a random 3-regular graph of 120 bond-2 tensors,
// automatic's rewrites from the same starting tree ended anywhere between 1.6 and 66 ms
// predicted over 16 seeds (frontiers of at most 10 nodes cannot move the tree's top
// cuts). Under automatic, a rewrite phase that stops by the stall rule is therefore run
// again from the same starting tree (a round; the rounds share the random stream and
// the budget, the best round's tree is kept) while another round of the last one's
// length fits both the hard budget and the fraction of the best tree's predicted time.
// Rounds follow only a first round that made its starting tree kRoundGain times faster
// (a long way, whose end depends on the path; the rewrites of the suite's MERA
// networks, light_415 and matrix chain mostly make theirs 4-24% faster, and another
// round would reach the same tree), and end when a round's tree is within kSameRound of
// the best round's (the rewrites lead to one tree). Over 32 seeds (the bench's label
// numbering), planning plus predicted time: rrg3_n120_bond2 16.1 → 11.1 ms,
// gm_queen5_5_3 625 → 599 ms, tensornetwork_permutation_light_415 25.5 → 24.5 ms,
// str_nw_mera_open_26 +0.8% (one round more), focus_316,
// lm_batch_likelihood_brackets_4_4d, peps_norm_4x4_D3 and mps_mpo_n30 within 1%; over
// 16 seeds, six random 3-regular graphs of 120 tensors 0.55-1.00× and six of 200
// tensors 0.69-1.00× (docs/benchmarks.md, 2026-12-06 sixth sitting).
// A trial is one greedy restart or one subtree rewrite. Both phases stop at whichever of
// the time budget and the trial budget comes first, so for a given seed and max_trials
// (with time to spare) the tree is deterministic.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "einsum/path_internal.hpp"

namespace tenferro::einsum_detail {

namespace {

using Clock = std::chrono::steady_clock;

// Up to this many operands anneal returns the optimal optimizer's tree (the DP tries
// every split there: see optimize_optimal.cpp).
constexpr int kAnnealExactMax = 10;
// Frontier sizes of a subtree rewrite (Note [Growing frontiers]) and the rewrites
// without a gain after which the frontier grows by one.
constexpr int kMinFrontier = 4;
constexpr int kMaxFrontier = 10;
constexpr std::int64_t kGrowAfter = 64;
// The stall rule of Note [Anneal budget] applies from this fraction of the soft limit on,
// and in the rewrite phase only after this many rewrites (two frontier growths).
constexpr double kStallFloor = 1.0 / 4;
constexpr std::int64_t kStallMinRewrites = 2 * kGrowAfter;
// Rewrite rounds (Note [Rewrite rounds]) follow a first round that made its starting
// tree this many times faster, and end when a round's tree is within kSameRound
// (relative) of the best round's.
constexpr double kRoundGain = 1.5;
constexpr double kSameRound = 0.01;

// Budget and progress reporting (PlanOptions::progress, else stderr), about once a
// second after the first second.
//
// Note [Anneal budget]
// With a planning fraction (automatic; Note [Automatic planning]), `limit` is the hard
// budget (the caller's: at most kHardFactor times the fraction of the starting tree's
// predicted time) and the search also stops softly, once both hold:
//  - the time spent exceeds kStallFloor of the fraction of the best tree's predicted
//    time (`soft`, updated as trees improve), and
//  - planning no longer pays: the second half of the current phase (restarts, or
//    reconfiguration) lowered the best tree's predicted time by less than that half
//    took.
// A search that keeps finding much faster trees thus runs on to the hard budget; one
// whose gains have become smaller than their cost stops (on the suite's language models,
// trees within 1% of a 2 s anneal's after ~2 ms instead of the 12-22 ms a trial-count
// stall rule spent). The stall test starts at kStallFloor of the soft limit into each
// phase, not at the limit itself: the MERA networks found their final trees after 5 ms
// of a 93 ms budget (fraction 0.1 of 0.93 s) and searched on without a gain; they now
// stop after 25 and 17 ms. (Floors of 1/8, 1/4 and 1/2 over 30 seeds of gm_queen5_5_3:
// planning plus predicted time 716, 605 and 591 ms on average; 1/8 saves 0.3-0.9 ms on
// the language models, 1/2 costs them 0.5-2.5 ms.) Every time here is estimated work,
// not the clock (Note [Planning work]): the same network gets the same tree on every
// run, however loaded the machine (only the caller's time_budget_s reads the clock).
// The rewrite phase is judged only after kStallMinRewrites rewrites: its gains come in
// steps, each after the frontier has grown (Note [Growing frontiers]: one size more per
// kGrowAfter rewrites without a gain), and on small networks a quarter of the soft limit
// is shorter than that. peps_norm_4x4_D3 had stopped after 0.17-0.28 ms at trees
// predicted 0.38-0.80 ms where the explicit anneal finds 0.187 within 0.5 ms. With the
// minimum, over 8 seeds: planning plus predicted time 0.85 → 0.53 ms (predicted 0.65 →
// 0.24), peps_norm_3x5_D4 1.05 → 0.91, rrg3_n120 13.0 → 12.8; mps_mpo_n30 and
// matrix_chain_n60 predicted 1-4% lower; the trees of the other 15 networks of the suite
// and the generated set unchanged (docs/benchmarks.md, 2026-12-06 fifth sitting).
// Nothing is printed: the user did not ask for a search.
class Budget {
 public:
  // Under automatic (`quiet`) every limit but `wall` is counted in estimated seconds of
  // work (Note [Planning work]); `wall` (seconds on the clock) is what is left of the
  // caller's time_budget_s.
  Budget(const PlanOptions& o, bool quiet, double wall)
      : options_(o), limit_(o.time_budget_s), soft_(o.time_budget_s), quiet_(quiet), wall_(wall), start_(Clock::now()) {}

  double real() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double elapsed() const { return quiet_ ? work_ : real(); }
  // Adds the estimated seconds of a trial's work (automatic's clock).
  void spend(double seconds) { work_ += seconds; }
  // Whether the fraction `f` of a hard limit (the trials, the caller's clock, the hard
  // budget) is used up, as opposed to the stall test.
  bool exhausted(double f = 1.0) const {
    return (options_.max_trials > 0 &&
            trials >= static_cast<std::int64_t>(f * static_cast<double>(options_.max_trials))) ||
           (quiet_ && real() >= wall_) || elapsed() >= f * limit_;
  }
  // Whether the fraction `f` of both budgets is used up (or the soft stop applies).
  bool used(double f) const {
    if (exhausted(f)) return true;
    const double s = elapsed() - phase_start_;  // the stall test looks at the current phase only
    if (!quiet_ || s < f * soft_ * kStallFloor || history_.empty() || trials - phase_trials_ < min_trials_)
      return false;
    return predicted_at(phase_start_ + s / 2) - history_.back().second < s / 2;
  }
  // A new phase of the search: the stall test starts afresh, after at least `min_trials`
  // trials of the phase.
  void start_phase(std::int64_t min_trials = 0) {
    phase_start_ = elapsed();
    phase_trials_ = trials;
    min_trials_ = min_trials;
  }
  // A better tree, predicted to take `seconds`: the soft limit becomes `fraction` of it.
  void improved(double fraction, double seconds) {
    soft_ = std::min(limit_, fraction * seconds);
    record(seconds);
  }
  // A tree of the current phase, predicted to take `seconds`, that is not the best so
  // far (a later rewrite round's): the stall test follows it, the soft limit does not.
  void record(double seconds) { history_.emplace_back(elapsed(), seconds); }
  // What is left of the hard budget.
  double hard_left() const { return limit_ - elapsed(); }
  void tick(double best) {
    ++trials;
    if (quiet_ && !options_.progress) return;
    const double t = real();
    if (t < next_report_) return;
    next_report_ = t + 1.0;
    const PlanProgress p{t, trials, best};
    if (options_.progress) options_.progress(p);
    else
      std::fprintf(stderr, "tenferro plan_contraction (anneal): %.1f s, %lld trials, best cost %.4g\n", t,
                   static_cast<long long>(trials), best);
  }

  std::int64_t trials = 0;

 private:
  // The best predicted seconds as of time t (the first record if t precedes it).
  double predicted_at(double t) const {
    auto it = std::upper_bound(history_.begin(), history_.end(), t, [](double x, const auto& h) { return x < h.first; });
    return it == history_.begin() ? history_.front().second : std::prev(it)->second;
  }

  const PlanOptions& options_;
  double limit_, soft_;
  bool quiet_;
  double work_ = 0, wall_;
  Clock::time_point start_;
  std::vector<std::pair<double, double>> history_;  // (elapsed, predicted seconds) per improvement
  double next_report_ = 1.0;
  double phase_start_ = 0;
  std::int64_t phase_trials_ = 0, min_trials_ = 0;
};

// A tree as child links with each node's labels and step flops (rewrites go top-down from
// a chosen node, so no parent links are needed).
struct TreeState {
  int n = 0, W = 1, root = 0;
  std::vector<int> left, right;
  std::vector<Word> labels;
  std::vector<double> flops;  // per internal node: the objective's step cost; 0 for leaves

  void build(const PreparedNetwork& net, const std::vector<Step>& steps, const StepModel& model) {
    n = net.n;
    W = net.words;
    const int nodes = 2 * n - 1;
    left.assign(nodes, -1);
    right.assign(nodes, -1);
    flops.assign(nodes, 0.0);
    std::vector<Word> scratch;
    tree_labels(net, steps, labels, scratch);
    for (int k = 0; k < n - 1; ++k) {
      const int c = n + k;
      left[c] = steps[k].first;
      right[c] = steps[k].second;
      flops[c] = model.step(&labels[left[c] * W], &labels[right[c] * W], &labels[c * W], W, net.extent.data());
    }
    root = nodes - 1;
  }
  double total() const {
    double t = 0;
    for (int c = n; c < 2 * n - 1; ++c) t += flops[c];
    return t;
  }
  // Steps in single-assignment order: children before parents (post-order from the root),
  // renumbering internal nodes n, n+1, ...
  void to_steps(std::vector<Step>& steps) const {
    steps.clear();
    std::vector<int> id(2 * n - 1, -1), stack{root};
    std::vector<char> expanded(2 * n - 1, 0);
    for (int i = 0; i < n; ++i) id[i] = i;
    while (!stack.empty()) {
      const int x = stack.back();
      if (x < n) {
        stack.pop_back();
        continue;
      }
      if (!expanded[x]) {
        expanded[x] = 1;
        stack.push_back(right[x]);
        stack.push_back(left[x]);
        continue;
      }
      stack.pop_back();
      steps.emplace_back(id[left[x]], id[right[x]]);
      id[x] = n + static_cast<int>(steps.size()) - 1;
    }
  }
};

class Reconfigurer {
 public:
  Reconfigurer(const PreparedNetwork& net, TreeState& t, const StepModel& model) : net_(net), t_(t), model_(model) {}

  std::int64_t work() const { return dp_.work(); }

  // One rewrite around a randomly chosen node; returns the change in total flops (<= 0).
  double trial(std::uint64_t& rng, int grow) {
    const int n = t_.n, W = t_.W;
    const int r = pick_root(rng);
    // Frontier growth.
    const double u = next_uniform(rng);
    const int kmax = std::min(kMaxFrontier, kMinFrontier + grow + (u < 0.5 ? 0 : 1));
    inner_.assign(1, r);
    frontier_.assign({t_.left[r], t_.right[r]});
    while (static_cast<int>(frontier_.size()) < kmax) {
      // Candidates: internal frontier nodes.
      int pick = -1, seen = 0;
      const bool largest = next_uniform(rng) < 0.5;
      double best_size = -1;
      for (int i = 0; i < static_cast<int>(frontier_.size()); ++i) {
        const int x = frontier_[i];
        if (x < n) continue;
        ++seen;
        if (largest) {
          const double s = set_size(&t_.labels[x * W], W, net_.extent.data());
          if (s > best_size) best_size = s, pick = i;
        } else if (next_random(rng) % static_cast<std::uint64_t>(seen) == 0) {
          pick = i;  // reservoir sampling: uniform among internal frontier nodes
        }
      }
      if (pick < 0) break;
      const int x = frontier_[pick];
      inner_.push_back(x);
      frontier_[pick] = t_.left[x];
      frontier_.push_back(t_.right[x]);
    }
    const int k = static_cast<int>(frontier_.size());
    if (k < 3) return 0;
    double old_cost = 0;
    for (int x : inner_) old_cost += t_.flops[x];
    const int V = compact(k, r);
    const double new_cost =
        dp_.solve(k, inputs_.data(), output_.data(), V, dp_ext_, false, old_cost * (1 + 1e-12), local_, model_);
    if (new_cost == kInf) return 0;  // rounding: the current subtree is already optimal
    // Splice: local step j takes inner id ids[j]; the last step is the root r.
    ids_.clear();
    for (int x : inner_)
      if (x != r) ids_.push_back(x);
    ids_.push_back(r);
    auto map = [&](int v) { return v < k ? frontier_[v] : ids_[v - k]; };
    for (int j = 0; j < k - 1; ++j) {
      const int c = ids_[j], a = map(local_[j].first), b = map(local_[j].second);
      t_.left[c] = a;
      t_.right[c] = b;
      expand(dp_.step_labels(j, V), V, &t_.labels[c * W]);
      t_.flops[c] = model_.step(&t_.labels[a * W], &t_.labels[b * W], &t_.labels[c * W], W, net_.extent.data());
    }
    return new_cost - old_cost;
  }

 private:
  int pick_root(std::uint64_t& rng) {
    const int n = t_.n;
    if (next_uniform(rng) < 0.5) return n + static_cast<int>(next_random(rng) % static_cast<std::uint64_t>(n - 1));
    double total = 0;
    for (int c = n; c < 2 * n - 1; ++c) total += t_.flops[c];
    double target = next_uniform(rng) * total;
    for (int c = n; c < 2 * n - 1; ++c) {
      target -= t_.flops[c];
      if (target <= 0) return c;
    }
    return t_.root;  // rounding left target above 0
  }

  // The rewrite's operands (the frontier) and output (the root's labels) for the DP into
  // inputs_ and output_, their extents at dp_ext_; returns their words per set. Networks of more than 64 labels
  // get their sets compacted to the labels the frontier holds (usually one word, against
  // 11 on light_415), in the same order, so every product and every tree is the same.
  int compact(int k, int r) {
    const int W = t_.W;
    inputs_.resize(static_cast<std::size_t>(k) * W);
    output_.resize(static_cast<std::size_t>(W));
    if (W == 1) {
      for (int i = 0; i < k; ++i) inputs_[i] = t_.labels[frontier_[i]];
      output_[0] = t_.labels[r];
      dp_ext_ = net_.extent.data();
      return 1;
    }
    held_.assign(static_cast<std::size_t>(W), Word{0});
    for (int i = 0; i < k; ++i)
      for (int w = 0; w < W; ++w) held_[w] |= t_.labels[frontier_[i] * W + w];
    global_.clear();
    ext_.clear();
    local_of_.resize(net_.extent.size());
    for (int w = 0; w < W; ++w)
      for (Word x = held_[w]; x != 0; x &= x - 1) {
        const int l = w * 64 + std::countr_zero(x);
        local_of_[l] = static_cast<int>(global_.size());
        global_.push_back(l);
        ext_.push_back(net_.extent[l]);
      }
    const int V = std::max<int>(1, static_cast<int>((global_.size() + 63) / 64));
    auto to_local = [&](const Word* S, Word* D) {
      std::fill_n(D, V, Word{0});
      for (int w = 0; w < W; ++w)
        for (Word x = S[w] & held_[w]; x != 0; x &= x - 1) {
          const int j = local_of_[w * 64 + std::countr_zero(x)];
          D[j / 64] |= Word{1} << (j % 64);
        }
    };
    for (int i = 0; i < k; ++i) to_local(&t_.labels[frontier_[i] * W], &inputs_[i * V]);
    to_local(&t_.labels[r * W], output_.data());
    dp_ext_ = ext_.data();
    return V;
  }
  // A DP step's labels (V words per set, as compact() made them) into the tree's W words.
  void expand(const Word* S, int V, Word* D) const {
    const int W = t_.W;
    if (W == 1) {
      D[0] = S[0];
      return;
    }
    std::fill_n(D, W, Word{0});
    for (int v = 0; v < V; ++v)
      for (Word x = S[v]; x != 0; x &= x - 1) {
        const int l = global_[v * 64 + std::countr_zero(x)];
        D[l / 64] |= Word{1} << (l % 64);
      }
  }

  const PreparedNetwork& net_;
  TreeState& t_;
  const StepModel& model_;
  SubsetDp dp_;
  std::vector<int> inner_, frontier_, ids_, global_, local_of_;
  std::vector<Word> inputs_, output_, held_;
  std::vector<double> ext_;
  const double* dp_ext_ = nullptr;  // the extents compact() numbered the labels for
  std::vector<Step> local_;
};

}  // namespace

void anneal_tree(const PreparedNetwork& net, const PlanOptions& options, std::vector<Step>& steps, const StepModel& model,
                 double fraction, bool start_from_steps, double wall) {
  // Small networks: the exact optimum is cheaper to find than to search for.
  if (net.n <= kAnnealExactMax) {
    optimal_tree(net, steps, model);
    return;
  }
  Budget budget(options, fraction > 0, wall);
  // The predicted seconds of a tree whose objective is `cost` (the objective itself, or
  // the time model for the flops objective).
  const StepModel seconds_model(PlanObjective::time, model.m);
  auto update_limit = [&](double cost, const std::vector<Step>& tree) {
    if (fraction > 0) budget.improved(fraction, model.time ? cost : tree_cost(net, tree, seconds_model));
  };
  std::uint64_t rng = options.seed ^ 0x5EEDC0FFEE123457ull;
  GreedyPlanner greedy;
  double best = start_from_steps ? tree_cost(net, steps, model) : starting_tree(net, greedy, steps, model);
  update_limit(best, steps);
  budget.tick(best);
  // automatic's clock (Note [Planning work]): the planners' work since the last call,
  // and `walks` over the tree (costing one, building the rewrite state).
  std::int64_t greedy_seen = greedy.work(), dp_seen = 0;
  auto account = [&](std::int64_t dp_work, int walks) {
    budget.spend(work_seconds(greedy.work() - greedy_seen + walks * net.n, dp_work - dp_seen));
    greedy_seen = greedy.work();
    dp_seen = dp_work;
  };

  // Phase 1: randomized greedy restarts (automatic: 3% of the budget; subtree
  // reconfiguration improves the hyperedge networks of the suite much faster: on
  // lm_batch_likelihood_brackets_4_4d restarts took 6 ms from 822 to 178 ms predicted,
  // reconfiguration the next 5 ms to 14.5 ms).
  std::vector<Step> candidate;
  const double phase1 = fraction > 0 ? 0.03 : 0.25;
  budget.start_phase();
  while (!budget.used(phase1)) {
    if (budget.trials & 2) {
      EliminationParams e;
      e.fill = (budget.trials & 1) != 0;
      e.temperature = 0.1 + 1.4 * next_uniform(rng);
      e.rng = &rng;
      greedy.eliminate(net, e, candidate);
    } else {
      GreedyParams p;
      p.costmod = 0.1 + 3.9 * next_uniform(rng);
      p.temperature = std::exp2(-10 * next_uniform(rng));  // 2^-10 .. 1
      p.rng = &rng;
      p.bonds_only = (budget.trials & 1) != 0;  // alternate the two candidate rules
      greedy.run(net, p, candidate);
    }
    const double f = tree_cost(net, candidate, model);
    account(0, 1);
    if (f < best) {
      best = f;
      steps.swap(candidate);
      update_limit(best, steps);
    }
    budget.tick(best);
  }

  // Phase 2: subtree reconfiguration of the best tree, in rounds under automatic (Note
  // [Rewrite rounds]).
  if (net.n < 3) return;
  const std::vector<Step> start = steps;
  TreeState tree;
  Reconfigurer re(net, tree, model);
  double best_round = kInf;
  for (;;) {
    const double round_start = budget.elapsed();
    tree.build(net, start, model);
    account(re.work(), 1);
    double current = tree.total();
    // The stall test follows this round's tree (worse than the best until it improves).
    if (best_round < kInf) budget.record(current);
    budget.start_phase(kStallMinRewrites);
    std::int64_t since_resum = 0, stalled = 0;
    while (!budget.used(1.0)) {
      const double delta = re.trial(rng, static_cast<int>(stalled / kGrowAfter));
      account(re.work(), 0);
      stalled = delta < -1e-9 * current ? 0 : stalled + 1;
      if (delta != 0 && ++since_resum >= 64) {
        current = tree.total();  // bound the drift of the running sum
        since_resum = 0;
      } else {
        current += delta;
      }
      if (delta < -1e-3 * current && model.time) {  // a real improvement
        if (current < best_round) update_limit(current, steps);
        else budget.record(current);
      }
      budget.tick(current);
    }
    const double total = tree.total();
    // Another round when this one moved far from its start and did not repeat the best.
    const bool first = best_round == kInf;
    const bool another = first ? best >= kRoundGain * total  // best: the cost of `start`
                               : std::fabs(total - best_round) > kSameRound * best_round;
    if (total < best_round) {
      best_round = total;
      tree.to_steps(steps);
    }
    const double took = budget.elapsed() - round_start;
    if (fraction <= 0 || !another || budget.exhausted() || budget.hard_left() < took ||
        budget.elapsed() + took > fraction * (model.time ? best_round : tree_cost(net, steps, seconds_model)))
      break;
  }
}

}  // namespace tenferro::einsum_detail
