#pragma once
// Internals of contraction-order planning (einsum_path.hpp): the network as label
// bitsets, the pairwise label rule, and the optimizers' entry points.
//
// Note [Label bitsets]
// Every label set (an operand, an intermediate, the output) is a bitset of `words`
// 64-bit words stored in flat arrays, so the union, intersection and "does this pair
// share a label" tests of all optimizers are a few word operations and no optimizer
// allocates per step. Sizes are products of extents taken in double: exact up to 2^53,
// never undefined behaviour (integer products of hundreds of extents overflow int64),
// and comparisons that need more range (anneal's acceptance) work on log2 of them.
// Extents of 0 plan as 1 (an empty tensor costs nothing whatever the order, and a zero
// would hide every other difference); contraction_cost reports the true products.
//
// Note [Intermediate labels]
// Contracting nodes A and B keeps a label of A ∪ B when it is in the output or some
// leaf outside A ∪ B holds it. Sequential optimizers (greedy) count the live nodes
// holding each label: the label dies when no live node but A and B holds it. Tree
// evaluation (contraction_cost, anneal) computes, for every node, the union of the
// labels below it and the union of the labels of all leaves outside it; a node keeps
// below ∩ (output ∪ outside). Leaves keep their labels as given. Both give the same
// sets: a node holds a label exactly when one of its leaves does and it is still needed.
#include "core/internal_check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "tenferro/einsum_path.hpp"

namespace tenferro::einsum_detail {

using Word = std::uint64_t;
using Step = std::pair<int, int>;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// A validated network in bitset form (Note [Label bitsets]).
struct PreparedNetwork {
  int n = 0;           ///< operands
  int num_labels = 0;
  int words = 1;       ///< words per label set (at least 1)
  std::vector<Word> inputs;   ///< n * words
  std::vector<Word> output;   ///< words
  std::vector<double> extent; ///< planning extent of each label (max(extent, 1))

  const Word* input(int i) const { return inputs.data() + static_cast<std::size_t>(i) * words; }
};

// The products below alternate between two accumulators, which halves the chain of
// dependent multiplications (perf: a fifth of the subset DP's samples were on one such
// chain per subset). Products of integer extents are exact below 2^53, so the
// order changes nothing there.
/// Multiplies `ext` over the bits of x into p and q, alternately.
inline void word_product(Word x, const double* ext, double& p, double& q) {
  while (x != 0) {
    p *= ext[std::countr_zero(x)];
    x &= x - 1;
    if (x == 0) break;
    q *= ext[std::countr_zero(x)];
    x &= x - 1;
  }
}
/// Product of `ext` over the labels of `s`.
inline double set_size(const Word* s, int words, const double* ext) {
  double p = 1.0, q = 1.0;
  for (int w = 0; w < words; ++w) word_product(s[w], ext + w * 64, p, q);
  return p * q;
}

/// Product of `ext` over the labels of a ∪ b.
inline double union_size(const Word* a, const Word* b, int words, const double* ext) {
  double p = 1.0, q = 1.0;
  for (int w = 0; w < words; ++w) word_product(a[w] | b[w], ext + w * 64, p, q);
  return p * q;
}

inline bool intersects(const Word* a, const Word* b, int words) {
  for (int w = 0; w < words; ++w)
    if (a[w] & b[w]) return true;
  return false;
}

/// Throws ArgumentError (message starting "<op>: ") for a malformed network.
void validate_network(std::string_view op, const ContractionNetwork& net);
/// Fills `out` from a validated network, reusing its storage.
void prepare_network(const ContractionNetwork& net, PreparedNetwork& out);
/// Throws ArgumentError for a tree that is not a valid tree over n operands.
void validate_tree(std::string_view op, int n, const ContractionTree& tree);

/// Labels of every node of a valid tree (Note [Intermediate labels]): `labels` receives
/// (2n - 1) * words words, node k of the tree at offset k * words. `scratch` is reused.
void tree_labels(const PreparedNetwork& net, const std::vector<Step>& steps, std::vector<Word>& labels,
                 std::vector<Word>& scratch);

/// Sum over steps of the planning product-space size.
double tree_flops(const PreparedNetwork& net, const std::vector<Step>& steps);

// --- objective (cost_model.cpp) -----------------------------------------------------

/// The optimizers' step cost: flops, or the CostModel's seconds (Note [Einsum time
/// model] in cost_model.cpp). A step contracts nodes with labels A and B into C.
struct StepModel {
  bool time = true;
  CostModel m;
  double lower_scale = 0;  ///< bound(): seconds per element of the largest operand

  StepModel() { set(PlanObjective::time, CostModel{}); }
  StepModel(PlanObjective objective, const CostModel& model) { set(objective, model); }
  void set(PlanObjective objective, const CostModel& model) {
    time = objective == PlanObjective::time;
    m = model;
    lower_scale = std::min(1.0 / m.gemm_rate, m.element_bytes * m.write_factor / m.bytes_rate);
  }

  /// Cost of one step. One pass over A ∪ B classifies each label: batch (in A, B and
  /// C), contracted (in A and B, not C), free of A, free of B.
  double step(const Word* A, const Word* B, const Word* C, int words, const double* ext) const {
    double fm = 1, fn = 1, fk = 1, fb = 1;
    bool dot = false;
    for (int w = 0; w < words; ++w) {
      const Word both = A[w] & B[w];
      for (Word x = A[w] | B[w]; x != 0; x &= x - 1) {
        const int bit = std::countr_zero(x);
        const Word m = Word{1} << bit;
        const double e = ext[w * 64 + bit];
        if (!(both & m)) (A[w] & m ? fm : fn) *= e;
        else if (C[w] & m) fb *= e;
        else {
          fk *= e;
          dot = true;
        }
      }
    }
    if (!time) return fm * fn * fk * fb;
    return seconds(fm, fn, fk, fb, dot);
  }
  /// step() for operands whose sizes are known (sa = size(A), sb = size(B), as the subset
  /// DP keeps them): only the shared labels are visited, and the free
  /// extents are sa and sb divided by the shared ones (exact while the products fit in
  /// a double's 53 bits, as integer extents' products do up to 9·10^15).
  double step_sized(const Word* A, const Word* B, const Word* C, int words, const double* ext, double sa,
                    double sb) const {
    double fk = 1, fb = 1;
    bool dot = false;
    for (int w = 0; w < words; ++w)
      for (Word x = A[w] & B[w]; x != 0; x &= x - 1) {
        const int bit = std::countr_zero(x);
        const double e = ext[w * 64 + bit];
        if ((C[w] >> bit) & 1) fb *= e;
        else {
          fk *= e;
          dot = true;
        }
      }
    const double shared = fk * fb;
    const double fm = sa / shared, fn = sb / shared;
    if (!time) return fm * fn * fk * fb;
    return seconds(fm, fn, fk, fb, dot);
  }
  /// The time model for a step of GEMM extents M, N, K and batch B (a step without a
  /// multiply-add, one of extent 0, pays no GEMM term: it was 0/0).
  double seconds(double fm, double fn, double fk, double fb, bool dot) const {
    const double sc = fm * fn * fb;
    double t = traffic(fm * fk * fb, fn * fk * fb, sc);
    if (dot && sc * fk > 0) {
      const double h = m.gemm_half_extent;
      const double eff = fm / (fm + h) * (fn / (fn + h)) * (fk / (fk + h));
      t += fm * fn * fk * fb / (m.gemm_rate * eff);
    }
    return t;
  }
  /// A lower bound of step() from the sizes of A, B and C: the product space holds all
  /// three, a GEMM does at most gemm_rate multiply-adds a second, and an elementwise
  /// step writes C (which then holds A ∪ B).
  double bound(double sa, double sb, double sc) const {
    const double big = std::max({sa, sb, sc});
    return time ? m.step_seconds + big * lower_scale : big;
  }
  /// step() under the time objective without its GEMM term: the fixed cost and the
  /// traffic, which the sizes give exactly; another lower bound of step() (seconds()
  /// adds the GEMM term to this very value, so the bound holds to the last bit).
  double traffic(double sa, double sb, double sc) const { return m.step_seconds + bytes(sa, sb, sc) / m.bytes_rate; }
  /// The bytes a step moves: its operands of sa and sb elements read (and packed)
  /// read_factor times, its result of sc elements written write_factor times.
  double bytes(double sa, double sb, double sc) const {
    return m.element_bytes * (m.read_factor * (sa + sb) + m.write_factor * sc);
  }
};

/// Sum over steps of the model's step cost.
double tree_cost(const PreparedNetwork& net, const std::vector<Step>& steps, const StepModel& model);

/// Validates the CostModel fields (finite, positive rates). Throws ArgumentError.
void validate_cost_model(std::string_view op, const CostModel& m);
/// contraction_cost of a network, tree and model already validated (plan_impl's own
/// trees): the same counts without checking them again.
ContractionCost checked_cost(const ContractionNetwork& net, const std::vector<Step>& steps, const CostModel& model);

// --- planning work ---------------------------------------------------------------------
//
// Note [Planning work]
// automatic spends on planning a fraction of the predicted contraction time. Measuring
// that spending with the clock made its plans (and so the rounding of einsum's results)
// depend on the machine's load: two runs of one program could differ in the last bits,
// and a search cut short on a busy moment kept a worse tree. automatic therefore counts
// its planning in estimated seconds of work, from counters the planners keep: a greedy
// score or merge is 3 units, an elimination score 2 plus the label's holders, a walk
// over a tree (costing it, building anneal's rewrite state) one per operand; a DP
// subset 1, a split 1, plus 2 when its step is costed. Measured on the suite's networks
// (release build, one core of the development VM; 1-5 label words): 35-42 ns a unit for
// greedy (elimination 29-42, gm_queen5_5_3's long holder lists 13), 14-20 ns for the DP.
// Since the DP costs splits from known sizes (StepModel::step_sized) and rewrites
// compact their labels, a DP unit of anneal's rewrites takes 6-19 ns (median 11); the
// constant stays at 17: at 11 the searches ran longer (up to 90%) and planning plus
// predicted time went down only on lm_batch_likelihood_brackets_4_4d (18.8 → 16.2 ms),
// changing less than 1% on 17 of the other 19 networks of the suite and the generated
// set, up to 5% worse on the rest, so the speed-up is kept as shorter planning. Only
// PlanOptions::time_budget_s is read from the clock (the hard stop the user asked for),
// so a plan is the same on every run unless that limit ends it.
inline constexpr double kGreedyWorkSeconds = 38e-9;
inline constexpr double kDpWorkSeconds = 17e-9;
inline constexpr double kPartitionWorkSeconds = 8e-9;
/// Estimated seconds of `greedy_units` greedy-planner units, `dp_units` DP units and
/// `partition_units` partition units.
inline double work_seconds(std::int64_t greedy_units, std::int64_t dp_units, std::int64_t partition_units = 0) {
  return kGreedyWorkSeconds * static_cast<double>(greedy_units) + kDpWorkSeconds * static_cast<double>(dp_units) +
         kPartitionWorkSeconds * static_cast<double>(partition_units);
}

// --- greedy (optimize_greedy.cpp) ------------------------------------------------------

/// Parameters of one greedy run. costmod = 1 and temperature = 0 is opt_einsum's greedy;
/// anneal's restarts vary both (cotengra's randomized greedy).
struct GreedyParams {
  double costmod = 1.0;      ///< score = size(A·B) − costmod·(size(A) + size(B))
  double temperature = 0.0;  ///< Gumbel noise on the log-score; 0: deterministic
  std::uint64_t* rng = nullptr;  ///< state of a splitmix64 generator when temperature > 0
  /// Pairs are candidates only when they share a summed label (not one kept in the
  /// output): on networks where one batch label sits on every operand (the suite's
  /// language models) every pair shares it, and the plain rule then builds batched
  /// outer products early. The rest is joined as in phase 2.
  bool bonds_only = false;
};

/// Parameters of one elimination run (Note [Label elimination] in optimize_eliminate.cpp).
struct EliminationParams {
  bool fill = false;             ///< next label: fewest new co-held label pairs (else smallest result)
  double temperature = 0.0;      ///< Gumbel noise on the score; 0: deterministic
  std::uint64_t* rng = nullptr;  ///< state of a splitmix64 generator when temperature > 0
};

/// Greedy planners with buffers reused across runs (no allocation once warm).
class GreedyPlanner {
 public:
  /// Plans `net` into `steps` (tree numbering: the k-th step creates node n + k).
  void run(const PreparedNetwork& net, const GreedyParams& params, std::vector<Step>& steps);
  /// Plans `net` by eliminating summed labels one at a time (optimize_eliminate.cpp).
  void eliminate(const PreparedNetwork& net, const EliminationParams& params, std::vector<Step>& steps);
  /// Work done so far in the units of Note [Planning work]; never reset.
  std::int64_t work() const { return work_; }

 private:
  struct Candidate {
    double score;
    int a, b;
  };
  void push_pairs_of(int node, int min_other, const PreparedNetwork& net, const GreedyParams& params);
  double score(int a, int b, const PreparedNetwork& net, const GreedyParams& params);
  int merge(int a, int b, const PreparedNetwork& net);
  // Resets the live set to the operands, with their sizes and each label's holders.
  void start(const PreparedNetwork& net, std::vector<Step>& steps);
  // Joins the live nodes by outer products, the two smallest first.
  void join_rest(const PreparedNetwork& net, std::vector<Step>& steps);
  // The size of a·b's result (labels another live node or the output holds): greedy's
  // score and eliminate()'s pairing.
  double result_size(int a, int b, const PreparedNetwork& net) const;
  // Updates label l's bits in once_ and twice_ from its holders.
  void count_holders(int l, const PreparedNetwork& net);
  // eliminate(): the score of summed label l (smaller is eliminated first).
  double elimination_score(int l, const PreparedNetwork& net, const EliminationParams& params);

  int words_ = 1;
  int next_ = 0;
  mutable std::int64_t work_ = 0;
  std::vector<Word> bits_;                 // (2n - 1) * words
  std::vector<double> size_;               // per node
  std::vector<char> alive_;
  std::vector<int> stamp_;
  std::vector<std::vector<int>> holders_;  // live nodes holding each label
  std::vector<Word> once_, twice_;         // summed labels with one / two live holders
  std::vector<Candidate> heap_;
  std::vector<Word> tmp_;
  // eliminate() only.
  std::vector<Word> adjacent_;   // per label: the labels some live node holds with it (num_labels * words)
  std::vector<double> label_score_;
  std::vector<char> dirty_;
  std::vector<int> candidates_, group_;
  std::vector<Word> touched_;
};

/// The better of the elimination trees by size and by fill into `steps` (the
/// eliminate optimizer); returns its cost under `model`.
double elimination_tree(const PreparedNetwork& net, GreedyPlanner& planner, std::vector<Step>& steps,
                        const StepModel& model);
/// The best of the constructive trees (Note [Starting trees] in optimize_eliminate.cpp)
/// into `steps`; returns its cost under `model` and sets `*chosen` (when given) to the
/// optimizer that built it (greedy, eliminate or partition). With `fraction` > 0
/// (automatic) the elimination trees are built only when that fraction of the greedy
/// tree's predicted seconds covers the time the greedy trees took plus theirs (each
/// about one greedy run), and the partition tree (where partition_suits) only when it
/// also takes at most a quarter of it, in estimated seconds of work (Note [Planning
/// work]), which `*spent` (when given) receives for all the trees built and `*one_run`
/// for the first greedy tree.
double starting_tree(const PreparedNetwork& net, GreedyPlanner& planner, std::vector<Step>& steps,
                     const StepModel& model, EinsumOptimizer* chosen = nullptr, double fraction = 0,
                     double* spent = nullptr, double* one_run = nullptr);

// --- partition (optimize_partition.cpp) ------------------------------------------------

/// Parameters of one recursive-bisection tree (Note [Partition trees]).
struct PartitionParams {
  double imbalance = 0.2;     ///< parts hold at least (1 - imbalance) / 2 of their set (clamped to [0, 0.9])
  int tries = 2;              ///< partitions grown and refined at a set's coarsest level (the best is kept; one for sets that need no coarsening)
  double outer_weight = 1.0;  ///< weight of labels held outside the set too, relative to log2 extent
  std::uint64_t seed = 0;
};

/// Recursive bisection with buffers reused across runs (no allocation once warm).
class PartitionPlanner {
 public:
  /// Plans `net` into `steps` (tree numbering: the k-th step creates node n + k).
  void run(const PreparedNetwork& net, const PartitionParams& params, std::vector<Step>& steps);
  /// Work done so far in the units of Note [Planning work]; never reset.
  std::int64_t work() const { return work_; }

 private:
  // A hypergraph in CSR form both ways (one level of the multilevel scheme).
  struct Hypergraph {
    std::vector<int> vertex_weight, vertex_start, vertex_edges, edge_start, pins;
    std::vector<int> edge_weight;  ///< in units of 1/kGainScale of log2 extent
    int vertices() const { return static_cast<int>(vertex_weight.size()); }
    int edges() const { return static_cast<int>(edge_weight.size()); }
  };
  void setup(const PreparedNetwork& net);
  int bisect(int lo, int hi);
  void build_edges(int lo, int hi);
  Hypergraph& level(int i);
  bool coarsen(int i, int max_weight);
  void grow(const Hypergraph& g, int target);
  std::int64_t count(const Hypergraph& g);
  std::int64_t pass(const Hypergraph& g, int min_part, std::int64_t cut);
  std::int64_t refine(const Hypergraph& g, int min_part, int max_passes);
  void insert(int v);
  void remove(int v);
  int best_of(int s);
  std::int64_t imbalance(const int* part, int min_part) const;

  PartitionParams params_;
  std::uint64_t rng_ = 0;
  std::int64_t work_ = 0;
  // The network: each operand's weighted labels (CSR), each label's weight and holders
  // (-1: an output label).
  std::vector<int> node_start_, node_labels_, holders_;
  std::vector<double> weight_;
  // A range of order_ in run()'s recursion, and where it splits (-1: not yet).
  struct Range {
    int lo, hi, mid;
  };
  std::vector<Range> stack_;
  std::vector<int> order_, ids_;  // operands, each range of the recursion contiguous; the node stack
  // The current set's hypergraph (level 0) and its coarsenings, with each level's map
  // to the next.
  std::vector<Hypergraph> levels_;
  std::vector<std::vector<int>> maps_;
  std::vector<int> label_count_, label_edge_, touched_, fill_, visit_, rated_, stamp_;
  std::vector<double> rating_;
  // FM state.
  std::vector<std::uint8_t> side_, best_side_, locked_, boundary_, listed_;
  std::vector<int> pins_on_, moves_, queue_, scratch_, gain_, next_, prev_;
  std::vector<int> bucket_[2];  // per side: the first vertex of each gain's list
  int top_[2] = {-1, -1};       // per side: no list above this bucket is non-empty
  int max_gain_ = 0;            // the largest |gain| of the level (the buckets' offset)
  std::int64_t penalty_ = 1;    // score of an operand a part lacks (pass())
};

/// The partition tree among the starting trees (Note [Starting trees]).
inline constexpr PartitionParams kStartPartition{0.6, 2, 0.5, 0};
/// Whether a partition tree is worth building among the starting trees (Note
/// [Starting trees]): more than 10 operands, every label on at most two of them, and a
/// breadth-first depth of at most kShallowDepth·√n over the summed labels.
bool partition_suits(const PreparedNetwork& net);
/// The estimated seconds of one partition tree of n operands (Note [Planning work]):
/// about 80 units per n·log2(n) (70-90 measured on graphs).
inline double partition_seconds(int n) {
  const double x = n;
  return work_seconds(0, 0, static_cast<std::int64_t>(80 * x * std::log2(std::max(x, 2.0))));
}
/// The partition optimizer: the best tree under `model` of a fixed sweep of
/// PartitionParams from `seed` into `steps`; returns its cost.
double partition_tree(const PreparedNetwork& net, PartitionPlanner& planner, std::vector<Step>& steps,
                      const StepModel& model, std::uint64_t seed);

// --- optimal (optimize_optimal.cpp) ----------------------------------------------------

/// Exact dynamic programming over subsets of k nodes (k ≤ 20) minimising the model's
/// cost (flops or seconds). Reuses its buffers.
class SubsetDp {
 public:
  /// Best tree over `k` nodes whose label sets are `inputs` (k * words) keeping `output`:
  /// minimal cost, then minimal largest intermediate. When `connected_only`, only
  /// splits whose two sides share a label are tried (opt_einsum's dp default). Splits
  /// costing more than `cap` are pruned. Returns the flops, or kInf when no tree costs
  /// at most `cap` (then `steps` is unspecified). Steps use local numbering: leaves
  /// 0..k-1, step j creates node k + j.
  double solve(int k, const Word* inputs, const Word* output, int words, const double* ext, bool connected_only,
               double cap, std::vector<Step>& steps, const StepModel& model);
  /// Largest intermediate of the last solved tree.
  double largest() const { return last_largest_; }
  /// Work done so far (Note [Planning work]): subsets set up, splits enumerated and
  /// steps costed; never reset.
  std::int64_t work() const { return work_; }
  /// Labels of the node created by step j of the last solved tree.
  const Word* step_labels(int j, int words) const {
    return &labels_[static_cast<std::size_t>(step_masks_[j]) * words];
  }

 private:
  int emit(std::uint32_t s, int k, std::vector<Step>& steps);
  std::vector<Word> union_, labels_;
  std::vector<double> flops_, largest_, size_;
  std::vector<std::uint32_t> split_, step_masks_;
  double last_largest_ = 0;
  std::int64_t work_ = 0;
};

/// opt_einsum-style optimal planner over a whole network: all splits for small
/// networks; above that, connected splits within each connected component and then
/// all ways of joining the components. Never worse than greedy (its cost caps the search).
void optimal_tree(const PreparedNetwork& net, std::vector<Step>& steps, const StepModel& model);

// --- anneal (optimize_anneal.cpp) ------------------------------------------------------

/// Randomized greedy restarts followed by subtree reconfiguration (see the file's notes).
/// `fraction` > 0 (automatic): the soft stop of Note [Anneal budget] (after the
/// fraction of the best tree's predicted seconds, once the search stalls), with its
/// time counted in estimated work (Note [Planning work]) and only `wall` seconds read
/// from the clock; progress is then not printed to stderr. `start_from_steps`: `steps`
/// holds the starting tree (automatic's best greedy tree) instead of running both
/// greedy rules again.
void anneal_tree(const PreparedNetwork& net, const PlanOptions& options, std::vector<Step>& steps, const StepModel& model,
                 double fraction = 0, bool start_from_steps = false, double wall = kInf);

// --- chain and automatic (optimize_auto.cpp) -----------------------------------------

/// The operand order along the chain when `net` is a chain (n >= 3: the operands'
/// graph of shared non-output labels is a path), else empty.
std::vector<int> chain_order(const PreparedNetwork& net);
/// Exact interval DP along `order` (O(n^3) steps of the model).
void chain_tree(const PreparedNetwork& net, const std::vector<int>& order, std::vector<Step>& steps, const StepModel& model);
/// automatic: the exact DP regardless of the budget up to this many operands (at most
/// 3^6 / 2 splits), over the full network (no absorbed subsets).
inline constexpr int kAutoDpAlways = 6;
/// The automatic choice (Note [Automatic planning]); returns the optimizer used.
EinsumOptimizer automatic_tree(const PreparedNetwork& net, const PlanOptions& options, std::vector<Step>& steps,
                               const StepModel& model);

// --- absorbed subsets (absorb.cpp) -----------------------------------------------------

/// A network with its subset operands absorbed (Note [Absorbed subsets] in absorb.cpp).
struct AbsorbedNetwork {
  PreparedNetwork core;     ///< the operands left to plan
  std::vector<Step> prefix; ///< the absorption steps, in the full network's node ids
  std::vector<int> ids;     ///< the full network's node id of each core operand
  // Scratch, reused between calls.
  std::vector<Word> sets_, need_;
  std::vector<int> count_, first_, holder_, fill_;
  std::vector<char> alive_;
};

/// Absorbs every operand whose needed labels another operand holds (Note [Absorbed
/// subsets]) into `out`; false (and nothing to expand) when none is, or n < 3.
bool absorb_subsets(const PreparedNetwork& net, AbsorbedNetwork& out);
/// Replaces `steps`, a tree over `absorbed.core`, by the full network's tree over `n`
/// operands: the absorption steps, then `steps` in the full network's node ids.
void expand_core_tree(const AbsorbedNetwork& absorbed, int n, std::vector<Step>& steps);

// --- plan_contraction (path_tree.cpp) --------------------------------------------------

/// The memory limit of `o` in elements (kInf: none).
double memory_limit_elements(const PlanOptions& o);
/// Throws ArgumentError for bad options (cost model, budgets, fraction, limits).
void check_plan_options(std::string_view op, const PlanOptions& options);
/// Plans `net` (or takes `given`, validated), then slices under the memory limit;
/// `with_cost` fills plan.cost also without slicing. Throws ArgumentError (op).
ContractionPlan plan_impl(std::string_view op, const ContractionNetwork& net, const PlanOptions& options,
                          const ContractionTree* given, bool with_cost);

// --- slicing (slicing.cpp) -------------------------------------------------------------

/// Chooses labels to slice so every intermediate of `steps` holds at most `limit`
/// elements (Note [Einsum slicing]). `true_extents` are the network's extents. Fills
/// plan.sliced / num_slices / slicing_overhead / cost (not tree). Throws ArgumentError
/// (op) when the limit cannot be met.
void slice_tree(std::string_view op, const PreparedNetwork& net, const std::vector<std::int64_t>& true_extents,
                const std::vector<Step>& steps, double limit, const StepModel& model, ContractionPlan& plan);


/// splitmix64: small, fast, and the same sequence on every platform (determinism).
inline std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// Uniform in (0, 1).
inline double next_uniform(std::uint64_t& state) {
  return (static_cast<double>(next_random(state) >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace tenferro::einsum_detail
