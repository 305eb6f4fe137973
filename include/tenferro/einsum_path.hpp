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
#include <string>
#include <string_view>
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

/// A model of the time a contraction takes, step by step (Note [Einsum time model] in
/// src/einsum/cost_model.cpp). A pairwise step that contracts a label runs as a GEMM of
/// M×K by K×N, B times (M, N, K, B: products of the free, contracted and batch extents);
/// one that contracts none is an elementwise product. Its predicted time is
///
///   step_seconds + madds / (gemm_rate · e(M) · e(N) · e(K)) + bytes / bytes_rate,
///   e(x) = x / (x + gemm_half_extent),
///
/// with madds = M·N·K·B (0 for elementwise steps) and bytes = element_bytes ·
/// (read_factor · (|A| + |B|) + write_factor · |C|): the operands are read (and, when not
/// BLAS-ready, packed: read_factor > 1 accounts for the copy), the result written. The
/// defaults are calibrated once on the development machine (docs/benchmarks.md); any
/// field can be overridden, and calibrate_cost_model (einsum.hpp) scales the rates and
/// the step cost to the running machine.
struct CostModel {
  double gemm_rate = 2.8e10;           ///< multiply-adds per second of a large GEMM, one thread
  double gemm_half_extent = 4.0;       ///< an extent where a GEMM runs at half rate in that dimension
  double bytes_rate = 1.5e10;          ///< bytes per second of memory traffic (read, pack, write)
  double read_factor = 1.5;            ///< each operand byte is read this many times (read + packing)
  double write_factor = 1.0;           ///< each result byte is written this many times
  double step_seconds = 1.5e-6;        ///< fixed cost of one pairwise step
  double element_bytes = 8.0;          ///< bytes per element (einsum uses its result dtype)
};

/// The text form of a model, "gemm_rate=2.8e+10 gemm_half_extent=4 ..." (every field,
/// exact to the last bit), to store a calibrated model (calibrate_cost_model in
/// einsum.hpp) in a file or an environment variable.
TENFERRO_API std::string to_string(const CostModel& model);
/// Reads the text form: name=value fields separated by spaces, commas, semicolons or
/// newlines, in any order; a field left out keeps its default. Throws ArgumentError
/// (op "parse_cost_model") for an unknown name, a value that is not a number, or a
/// constant out of range (rates and element_bytes must be > 0, the others >= 0, all
/// finite).
TENFERRO_API CostModel parse_cost_model(std::string_view text);

/// Cost of contracting a network along a tree. Counts are doubles: large networks
/// exceed 2^63 operations. flops counts one multiply-add per element of the pairwise
/// product space (the product of the extents of all labels either side holds), as
/// opt_einsum's "flops" without its factor for additions. For a sliced plan the counts
/// are totals over all slices (largest_intermediate: within one slice).
struct ContractionCost {
  double flops = 0;                 ///< sum over steps of the product-space size
  double largest_intermediate = 0;  ///< most elements of any intermediate (the result included)
  double elements_written = 0;      ///< total elements of all intermediates and the result
  double bytes = 0;                 ///< memory traffic under the CostModel (reads, packing, writes)
  double predicted_seconds = 0;     ///< the CostModel's time for all steps
};

/// Which optimizer plans the order. eliminate, anneal and automatic (above six operands)
/// first multiply every operand whose labels another operand all holds (labels of
/// extent 1 held by no other operand aside) into the smallest such operand, and plan
/// the network that remains (Note [Absorbed subsets] in src/einsum/absorb.cpp): no
/// intermediate of any tree grows by it.
enum class EinsumOptimizer : std::uint8_t {
  automatic,  ///< chooses by network size and predicted time (Note [Automatic planning] in
              ///< src/einsum/optimize_auto.cpp): no planning for two operands, the exact
              ///< DP where it is cheap, the O(n^3) chain solver for chains, else anneal
              ///< with a planning budget proportional to the predicted contraction time,
              ///< starting from the best of the greedy, elimination and (on shallow
              ///< graphs: random regular graphs, lattices, PEPS) partition trees; the budget
              ///< counts estimated work, not the clock, so a network gets the same plan on
              ///< every run unless time_budget_s ends the search
  greedy,     ///< repeatedly contracts the pair with the best size/cost score
  optimal,    ///< exact dynamic programming over subsets (practical up to ~16 operands)
  anneal,     ///< for large networks: randomized greedy restarts, then exact rewrites of
              ///< random subtrees (see optimize_anneal.cpp); never worse than greedy on
              ///< the network it plans; up to 10 operands there it returns that
              ///< network's optimal tree
  chain,      ///< for a chain (the operands sharing summed labels form a path, in any
              ///< operand order): the matrix-chain interval DP, O(n^3), the best tree
              ///< among those that contract contiguous runs of the chain (all trees
              ///< without outer products between non-neighbours); plan_contraction
              ///< throws ArgumentError for a network that is not a chain
  eliminate,  ///< variable elimination (Note [Label elimination] in
              ///< src/einsum/optimize_eliminate.cpp): summed labels one at a time, the
              ///< cheapest by result size or by fill first (the better of both trees);
              ///< fast and good on factor graphs (labels held by many operands)
  partition,  ///< recursive bisection (Note [Partition trees] in
              ///< src/einsum/optimize_partition.cpp): the network is cut where its bonds
              ///< are thinnest, each half likewise; the best tree of a fixed sweep of 15
              ///< balance settings under the objective, deterministic for a seed (about
              ///< 9 ms for 120 operands). Good on graphs of small uniform bonds (random
              ///< regular graphs, lattices, PEPS), where greedy's pairwise choices all
              ///< look alike; poor on hyperedges (labels on three or more operands) and on
              ///< long, thin networks (chains, MPS-MPO sandwiches, MERA)
};

/// What the optimizers minimise.
enum class PlanObjective : std::uint8_t {
  time,   ///< the CostModel's predicted seconds
  flops,  ///< multiply-adds (opt_einsum's "flops"); ties broken by the largest intermediate
};

/// Progress reported by long-running optimizers (at most about once per second).
struct PlanProgress {
  double seconds = 0;          ///< time spent so far
  std::int64_t trials = 0;     ///< trees evaluated so far
  double best_flops = 0;       ///< objective of the best tree so far (flops, or predicted seconds)
};

/// Planner settings.
struct PlanOptions {
  EinsumOptimizer optimizer = EinsumOptimizer::automatic;
  /// What optimal, chain, anneal and automatic minimise (greedy is a heuristic either way).
  PlanObjective objective = PlanObjective::time;
  /// The time model used for the objective, the automatic planning budget, slicing and
  /// ContractionCost::predicted_seconds.
  CostModel cost_model;
  /// anneal: wall-clock budget in seconds and maximum number of trials (0: no limit on
  /// trials); the optimizer stops at whichever comes first. plan_contraction throws
  /// ArgumentError for a negative or NaN budget, a negative trial count, or an infinite
  /// budget without a trial limit. automatic: the most it spends planning.
  double time_budget_s = 1.0;
  std::int64_t max_trials = 0;
  std::uint64_t seed = 0;  ///< anneal / randomized choices
  /// automatic: planning stops once it has spent this fraction of the predicted
  /// contraction time of the best tree so far and its gains no longer pay for its time,
  /// and at the latest after three times this fraction of the starting tree's predicted
  /// time (never after time_budget_s).
  /// ArgumentError when negative or NaN.
  double planning_fraction = 0.1;  // (einsum.cpp default_options() mirrors these defaults)
  /// Called when an optimizer runs longer than a second (then about once per second).
  /// When empty, progress is printed to stderr instead.
  std::function<void(const PlanProgress&)> progress;
  /// optimal: throws ArgumentError above this many operands (the DP is exponential).
  int optimal_max_operands = 20;
  /// Memory limit (Note [Einsum slicing] in src/einsum/slicing.cpp): the largest
  /// intermediate (the result of every step within one slice) may hold at most this many
  /// elements / bytes (bytes: cost_model.element_bytes per element; einsum uses its
  /// dtype's size). 0: no limit. When a tree exceeds the limit, labels are sliced.
  /// ArgumentError when negative or NaN; plan_sliced_contraction throws ArgumentError
  /// when no slicing meets the limit (a step's result within one slice exceeds it even
  /// with every sliceable label cut to extent 1).
  double max_intermediate_elements = 0;
  double max_intermediate_bytes = 0;
  /// Sliced execution (Note [Einsum slice execution]): how many slices may run at once,
  /// each in its own lane of the session (Note [Lanes], one thread and its own pooled
  /// buffers). 0: the session's thread count; 1: one slice after another. Peak memory
  /// grows with it: every running slice holds its own intermediates, and when the
  /// sliced labels are all summed each lane but the first also holds a partial result.
  /// ArgumentError when negative.
  int slice_lanes = 0;
};

/// A label split into parts: each slice holds `chunk` consecutive indices of it.
struct SlicedLabel {
  int label = 0;              ///< network label (einsum_path: the subscript's label key)
  std::int64_t extent = 0;    ///< the full extent
  std::int64_t chunk = 0;     ///< indices per slice (divides extent)
  std::int64_t parts = 1;     ///< extent / chunk
};

/// A contraction order with its slicing. Slice s (0 <= s < num_slices) takes, for sliced
/// label j (the last sliced label varying fastest), part
/// (s / prod_{j' > j} parts[j']) % parts[j], i.e. indices [part·chunk, (part+1)·chunk).
/// The full result is the sum over slices of each slice's contraction (for a sliced
/// label kept in the output, each slice fills only its own range of that axis).
struct ContractionPlan {
  ContractionTree tree;
  std::vector<SlicedLabel> sliced;   ///< empty: no slicing
  std::int64_t num_slices = 1;
  ContractionCost cost;              ///< totals over all slices
  double slicing_overhead = 1.0;     ///< flops of all slices / flops unsliced
  EinsumOptimizer chosen = EinsumOptimizer::automatic;  ///< the optimizer that produced the tree
  double planning_seconds = 0;       ///< wall time spent planning the order and the slices (not costing)
};

/// Checks a network: at least one operand, every label in 0..extents.size()-1, no label
/// repeated within one operand or in the output, every output label in some operand,
/// extents >= 0. Throws ArgumentError naming the operand, label and value.
TENFERRO_API void validate_contraction_network(const ContractionNetwork& net);

/// Checks that `tree` is a tree over `num_operands` operands: num_operands - 1 steps,
/// each naming two distinct nodes that exist and were not contracted before. Throws
/// ArgumentError naming the step and the node.
TENFERRO_API void validate_contraction_tree(int num_operands, const ContractionTree& tree);

/// The cost of contracting `net` along `tree` (one operand: no steps, all zero), with
/// bytes and predicted seconds from `model`. Throws ArgumentError for a malformed
/// network (as validate_contraction_network) or tree (as validate_contraction_tree:
/// wrong step count, node used twice or before it exists).
TENFERRO_API ContractionCost contraction_cost(const ContractionNetwork& net, const ContractionTree& tree,
                                              const CostModel& model = {});

/// Plans a contraction order. Throws ArgumentError for a malformed network (label out of
/// range, label repeated in one operand, output label in no operand, negative extent),
/// too many operands for the optimal optimizer (above optimal_max_operands, and never
/// more than 20), a network that is not a chain for the chain optimizer, bad budgets
/// (time_budget_s, max_trials, planning_fraction) or a bad memory limit. Reentrant; each
/// thread reuses its own buffers. The last node of the returned tree holds exactly the
/// output labels. With a memory limit the tree is the one plan_sliced_contraction slices.
TENFERRO_API ContractionTree plan_contraction(const ContractionNetwork& net, const PlanOptions& options = {});

/// Plans the order and, under a memory limit, the labels to slice. Throws as
/// plan_contraction, and ArgumentError when the memory limit cannot be met.
TENFERRO_API ContractionPlan plan_sliced_contraction(const ContractionNetwork& net, const PlanOptions& options = {});

/// Slices a given tree to meet options' memory limit (no limit: no slicing). Throws
/// ArgumentError as validate_contraction_network / validate_contraction_tree, for a bad
/// limit, or when the limit cannot be met.
TENFERRO_API ContractionPlan slice_contraction(const ContractionNetwork& net, const ContractionTree& tree,
                                               const PlanOptions& options = {});

}  // namespace tenferro
