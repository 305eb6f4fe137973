#pragma once
/// \file einsum_path.hpp
/// Contraction-order planning for einsum: the contraction tree, its cost model, and the
/// optimizers (greedy, optimal, anneal). Planning needs no session: it only looks at
/// labels and extents. einsum.hpp runs the plans.
///
/// A network has n operands, each a list of labels (distinct within the operand once
/// repeated labels have been reduced), an output label list, and one extent per label.
/// A label that appears in several operands and not in the output is summed when the
/// last two operands holding it meet; a label kept in the output stays on every
/// intermediate that holds it (a batch label when both sides of a step hold it).

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "tenferro/export.hpp"

namespace tenferro {

/// A binary contraction tree in single-assignment form: leaves are the operands 0..n-1;
/// step k contracts the two nodes `steps[k]` into the new node n + k. A tree over n >= 1
/// operands has n - 1 steps and its last node is the result.
///
/// Example: "ij,jk,kl->il" contracted as (0·1)·2 is {{0, 1}, {3, 2}}.
struct ContractionTree {
  std::vector<std::pair<int, int>> steps;

  /// The tree of an opt_einsum "linear" path: each pair names two positions in the
  /// current operand list; both are removed and the result is appended at the end.
  /// A step naming one position ({i, -1}, opt_einsum's single-operand step) only moves
  /// that operand to the end: einsum reduces single operands before contracting.
  /// Throws ArgumentError naming the step for out-of-range or repeated positions, or a
  /// path that leaves more than one operand.
  TENFERRO_API static ContractionTree from_linear_path(int num_operands, std::span<const std::pair<int, int>> path);
  /// The same tree as an opt_einsum "linear" path (step k names the positions of
  /// steps[k]'s nodes, in that order). Throws ArgumentError for a malformed tree.
  TENFERRO_API std::vector<std::pair<int, int>> to_linear_path(int num_operands) const;
};

/// The labels and extents a planner sees. Labels are 0..num_labels-1.
struct ContractionNetwork {
  std::vector<std::vector<int>> inputs;  ///< labels of each operand (distinct within one operand)
  std::vector<int> output;               ///< labels of the result
  std::vector<std::int64_t> extents;     ///< extent of each label
};

/// Cost of contracting a network along a tree. Counts are doubles: large networks
/// exceed 2^63 operations. flops counts one multiply-add per element of the pairwise
/// product space (the product of the extents of all labels either side holds), as
/// opt_einsum's "flops" without its factor for additions.
struct ContractionCost {
  double flops = 0;                 ///< sum over steps of the product-space size
  double largest_intermediate = 0;  ///< most elements of any intermediate (the result included)
  double elements_written = 0;      ///< total elements of all intermediates and the result
};

/// Which optimizer plans the order.
enum class EinsumOptimizer : std::uint8_t {
  automatic,  ///< two operands: none needed; up to 12 operands: optimal; else greedy
  greedy,     ///< repeatedly contracts the pair with the best size/cost score
  optimal,    ///< exact dynamic programming over subsets (practical up to ~16 operands)
  anneal,     ///< for large networks: randomized greedy restarts, then exact rewrites of
              ///< random subtrees (see optimize_anneal.cpp); never worse than greedy;
              ///< up to 10 operands it returns the optimal tree
};

/// Progress reported by long-running optimizers (at most about once per second).
struct PlanProgress {
  double seconds = 0;          ///< time spent so far
  std::int64_t trials = 0;     ///< trees evaluated so far
  double best_flops = 0;       ///< flops of the best tree so far
};

/// Planner settings.
struct PlanOptions {
  EinsumOptimizer optimizer = EinsumOptimizer::automatic;
  /// anneal: wall-clock budget in seconds and maximum number of trials (0: no limit on
  /// trials); the optimizer stops at whichever comes first. plan_contraction throws
  /// ArgumentError for a negative or NaN budget, a negative trial count, or an infinite
  /// budget without a trial limit.
  double time_budget_s = 1.0;
  std::int64_t max_trials = 0;
  std::uint64_t seed = 0;  ///< anneal / randomized choices
  /// Called when an optimizer runs longer than a second (then about once per second).
  /// When empty, progress is printed to stderr instead.
  std::function<void(const PlanProgress&)> progress;
  /// optimal: throws ArgumentError above this many operands (the DP is exponential).
  int optimal_max_operands = 20;
};

/// Checks a network: at least one operand, every label in 0..extents.size()-1, no label
/// repeated within one operand or in the output, every output label in some operand,
/// extents >= 0. Throws ArgumentError naming the operand, label and value.
TENFERRO_API void validate_contraction_network(const ContractionNetwork& net);

/// Checks that `tree` is a tree over `num_operands` operands: num_operands - 1 steps,
/// each naming two distinct nodes that exist and were not contracted before. Throws
/// ArgumentError naming the step and the node.
TENFERRO_API void validate_contraction_tree(int num_operands, const ContractionTree& tree);

/// The cost of contracting `net` along `tree` (one operand: no steps, all zero). Throws
/// ArgumentError for a malformed network (as validate_contraction_network) or tree (as
/// validate_contraction_tree: wrong step count, node used twice or before it exists).
TENFERRO_API ContractionCost contraction_cost(const ContractionNetwork& net, const ContractionTree& tree);

/// Plans a contraction order. Throws ArgumentError for a malformed network (label out of
/// range, label repeated in one operand, output label in no operand, negative extent),
/// too many operands for the optimal optimizer (above optimal_max_operands, and never
/// more than 20), or bad anneal budgets. Reentrant; each thread reuses its own buffers.
/// The last node of the returned tree holds exactly the output labels.
TENFERRO_API ContractionTree plan_contraction(const ContractionNetwork& net, const PlanOptions& options = {});

}  // namespace tenferro
