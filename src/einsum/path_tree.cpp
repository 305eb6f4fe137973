// Contraction trees: conversion from and to opt_einsum's linear paths, validation of
// networks and trees, tree evaluation (Note [Intermediate labels] in path_internal.hpp),
// contraction_cost, and plan_contraction's choice of optimizer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/enum_check.hpp"
#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro {

using einsum_detail::PreparedNetwork;
using einsum_detail::Step;
using einsum_detail::Word;

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

[[noreturn]] void fail(std::string_view op, const std::string& message) { throw ArgumentError(op, message); }

}  // namespace

ContractionTree ContractionTree::from_linear_path(int num_operands, std::span<const std::pair<int, int>> path) {
  constexpr std::string_view op = "ContractionTree::from_linear_path";
  if (num_operands < 1) fail(op, "num_operands is " + str(num_operands) + ", must be at least 1");
  // `current` is opt_einsum's operand list: node ids in list order.
  std::vector<int> current(static_cast<std::size_t>(num_operands));
  for (int i = 0; i < num_operands; ++i) current[i] = i;
  ContractionTree tree;
  tree.steps.reserve(static_cast<std::size_t>(num_operands - 1));
  for (std::size_t k = 0; k < path.size(); ++k) {
    const auto [i, j] = path[k];
    const int m = static_cast<int>(current.size());
    const std::string where = "step " + str(static_cast<std::int64_t>(k)) + " (" + str(i) + ", " + str(j) + ")";
    if (i < 0 || i >= m) fail(op, where + " names position " + str(i) + ", but " + str(m) + " operands remain");
    if (j == -1) {  // single-operand step: the operand moves to the end
      const int node = current[i];
      current.erase(current.begin() + i);
      current.push_back(node);
      continue;
    }
    if (j < 0 || j >= m) fail(op, where + " names position " + str(j) + ", but " + str(m) + " operands remain");
    if (i == j) fail(op, where + " names position " + str(i) + " twice");
    const int a = current[i], b = current[j];
    current.erase(current.begin() + std::max(i, j));
    current.erase(current.begin() + std::min(i, j));
    current.push_back(num_operands + static_cast<int>(tree.steps.size()));
    tree.steps.emplace_back(a, b);
  }
  if (current.size() != 1)
    fail(op, "path of " + str(static_cast<std::int64_t>(path.size())) + " steps leaves " +
                 str(static_cast<std::int64_t>(current.size())) + " operands, expected 1");
  return tree;
}

std::vector<std::pair<int, int>> ContractionTree::to_linear_path(int num_operands) const {
  constexpr std::string_view op = "ContractionTree::to_linear_path";
  einsum_detail::validate_tree(op, num_operands, *this);
  std::vector<int> current(static_cast<std::size_t>(num_operands));
  for (int i = 0; i < num_operands; ++i) current[i] = i;
  std::vector<std::pair<int, int>> path;
  path.reserve(steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto [a, b] = steps[k];
    const auto pa = std::find(current.begin(), current.end(), a) - current.begin();
    const auto pb = std::find(current.begin(), current.end(), b) - current.begin();
    if (pa == static_cast<std::ptrdiff_t>(current.size()) || pb == static_cast<std::ptrdiff_t>(current.size()))
      throw InternalError(op, "validated tree lost a node");
    path.emplace_back(static_cast<int>(pa), static_cast<int>(pb));
    current.erase(current.begin() + std::max(pa, pb));
    current.erase(current.begin() + std::min(pa, pb));
    current.push_back(num_operands + static_cast<int>(k));
  }
  return path;
}

namespace einsum_detail {

void validate_network(std::string_view op, const ContractionNetwork& net) {
  if (net.inputs.empty()) fail(op, "network has no operands");
  if (net.extents.size() > static_cast<std::size_t>(1) << 24)
    fail(op, "network has " + str(static_cast<std::int64_t>(net.extents.size())) + " labels, at most 16777216 supported");
  const int num_labels = static_cast<int>(net.extents.size());
  for (int l = 0; l < num_labels; ++l)
    if (net.extents[l] < 0) fail(op, "label " + str(l) + " has extent " + str(net.extents[l]) + ", must be >= 0");
  // `seen[l]` holds the last operand (or -2 for the output) that named l, to catch
  // repeats without clearing; `used[l]` whether an operand holds l.
  // Per-thread buffers: plan_contraction runs on every einsum call of 3+ operands.
  thread_local std::vector<int> seen;
  thread_local std::vector<char> used;
  seen.assign(static_cast<std::size_t>(num_labels), -1);
  used.assign(static_cast<std::size_t>(num_labels), 0);
  // marker: the operand index, or -2 for the output (names built only on failure).
  auto who = [](int marker) { return marker == -2 ? std::string("output") : "operand " + str(marker); };
  auto check_label = [&](int l, int marker) {
    if (l < 0 || l >= num_labels)
      fail(op, who(marker) + " has label " + str(l) + ", but labels are 0.." + str(num_labels - 1) +
                   " (extents.size() is " + str(num_labels) + ")");
    if (seen[l] == marker) fail(op, who(marker) + " repeats label " + str(l));
    seen[l] = marker;
  };
  for (std::size_t i = 0; i < net.inputs.size(); ++i) {
    for (int l : net.inputs[i]) {
      check_label(l, static_cast<int>(i));
      used[l] = 1;
    }
  }
  for (int l : net.output) {
    check_label(l, -2);
    if (!used[l]) fail(op, "output label " + str(l) + " is in no operand");
  }
}

void prepare_network(const ContractionNetwork& net, PreparedNetwork& out) {
  out.n = static_cast<int>(net.inputs.size());
  out.num_labels = static_cast<int>(net.extents.size());
  out.words = std::max(1, (out.num_labels + 63) / 64);
  out.inputs.assign(static_cast<std::size_t>(out.n) * out.words, 0);
  out.output.assign(static_cast<std::size_t>(out.words), 0);
  out.extent.resize(static_cast<std::size_t>(out.num_labels));
  for (int l = 0; l < out.num_labels; ++l) out.extent[l] = static_cast<double>(std::max<std::int64_t>(net.extents[l], 1));
  for (int i = 0; i < out.n; ++i)
    for (int l : net.inputs[i]) out.inputs[static_cast<std::size_t>(i) * out.words + l / 64] |= Word{1} << (l % 64);
  for (int l : net.output) out.output[l / 64] |= Word{1} << (l % 64);
}

void validate_tree(std::string_view op, int n, const ContractionTree& tree) {
  if (n < 1) fail(op, "num_operands is " + str(n) + ", must be at least 1");
  if (tree.steps.size() != static_cast<std::size_t>(n - 1))
    fail(op, "tree has " + str(static_cast<std::int64_t>(tree.steps.size())) + " steps, but " + str(n) +
                 " operands need " + str(n - 1));
  // used_at[node]: the step that consumed the node, or -1.
  std::vector<int> used_at(static_cast<std::size_t>(2 * n - 1), -1);
  for (int k = 0; k < n - 1; ++k) {
    // Plain variables: clang before 16 does not capture structured bindings in lambdas.
    const int a = tree.steps[k].first, b = tree.steps[k].second;
    // The message's prefix, built only on failure (this runs for every planned tree).
    auto where = [&] { return "step " + str(k) + " (" + str(a) + ", " + str(b) + ")"; };
    for (int x : {a, b}) {
      if (x < 0 || x >= n + k)
        fail(op, where() + " names node " + str(x) + ", but nodes 0.." + str(n + k - 1) + " exist before it");
    }
    if (a == b) fail(op, where() + " contracts node " + str(a) + " with itself");
    for (int x : {a, b}) {
      if (used_at[x] >= 0) fail(op, where() + " uses node " + str(x) + ", already contracted at step " + str(used_at[x]));
      used_at[x] = k;
    }
  }
}

void tree_labels(const PreparedNetwork& net, const std::vector<Step>& steps, std::vector<Word>& labels,
                 std::vector<Word>& scratch) {
  const int n = net.n, W = net.words, nodes = 2 * n - 1;
  const std::size_t total = static_cast<std::size_t>(nodes) * W;
  labels.resize(total);
  // Every entry is written before it is read but the root's `outside` (nothing is
  // outside the root), so only that is cleared.
  scratch.resize(2 * total);
  Word* below = scratch.data();
  Word* outside = scratch.data() + total;
  std::fill_n(outside + static_cast<std::size_t>(nodes - 1) * W, W, Word{0});
  std::copy(net.inputs.begin(), net.inputs.end(), below);
  std::copy(net.inputs.begin(), net.inputs.end(), labels.begin());
  for (int k = 0; k < n - 1; ++k) {
    const int c = n + k, a = steps[k].first, b = steps[k].second;
    for (int w = 0; w < W; ++w) below[c * W + w] = below[a * W + w] | below[b * W + w];
  }
  // Top-down: a child's outside is its parent's outside plus everything below its sibling.
  for (int k = n - 2; k >= 0; --k) {
    const int c = n + k, a = steps[k].first, b = steps[k].second;
    for (int w = 0; w < W; ++w) {
      outside[a * W + w] = outside[c * W + w] | below[b * W + w];
      outside[b * W + w] = outside[c * W + w] | below[a * W + w];
      labels[c * W + w] = below[c * W + w] & (net.output[w] | outside[c * W + w]);
    }
  }
}

double tree_flops(const PreparedNetwork& net, const std::vector<Step>& steps) {
  thread_local std::vector<Word> labels, scratch;
  tree_labels(net, steps, labels, scratch);
  double flops = 0;
  const int W = net.words;
  for (const auto& [a, b] : steps) flops += union_size(&labels[a * W], &labels[b * W], W, net.extent.data());
  return flops;
}

}  // namespace einsum_detail

void validate_contraction_network(const ContractionNetwork& net) {
  einsum_detail::validate_network("validate_contraction_network", net);
}

void validate_contraction_tree(int num_operands, const ContractionTree& tree) {
  einsum_detail::validate_tree("validate_contraction_tree", num_operands, tree);
}

namespace einsum_detail {

double memory_limit_elements(const PlanOptions& o) {
  double limit = kInf;
  if (o.max_intermediate_elements > 0) limit = o.max_intermediate_elements;
  if (o.max_intermediate_bytes > 0) limit = std::min(limit, std::floor(o.max_intermediate_bytes / o.cost_model.element_bytes));
  return limit;
}

void check_plan_options(std::string_view op, const PlanOptions& options) {
  tenferro::detail::require_enum(options.optimizer, EinsumOptimizer::partition, op, "EinsumOptimizer");  // Note [Enums at the API boundary]
  validate_cost_model(op, options.cost_model);
  if (!(options.planning_fraction >= 0) || std::isinf(options.planning_fraction))
    fail(op, "planning_fraction is " + std::to_string(options.planning_fraction) + ", must be finite and >= 0");
  if (!(options.max_intermediate_elements >= 0))
    fail(op, "max_intermediate_elements is " + std::to_string(options.max_intermediate_elements) + ", must be >= 0 (0: no limit)");
  if (!(options.max_intermediate_bytes >= 0))
    fail(op, "max_intermediate_bytes is " + std::to_string(options.max_intermediate_bytes) + ", must be >= 0 (0: no limit)");
  if (options.slice_lanes < 0) fail(op, "slice_lanes is " + str(options.slice_lanes) + ", must be >= 0 (0: the session's threads)");
  const bool budgeted = options.optimizer == EinsumOptimizer::anneal || options.optimizer == EinsumOptimizer::automatic;
  if (budgeted) {
    if (!(options.time_budget_s >= 0)) fail(op, "time_budget_s is " + std::to_string(options.time_budget_s) + ", must be >= 0");
    if (options.max_trials < 0) fail(op, "max_trials is " + str(options.max_trials) + ", must be >= 0");
  }
  if (options.optimizer == EinsumOptimizer::anneal && std::isinf(options.time_budget_s) && options.max_trials == 0)
    fail(op, "time_budget_s is inf and max_trials is 0: the search would never stop");
}

// Plans (or takes `given`), then slices under the memory limit. `with_cost`: fill
// plan.cost also without slicing.
ContractionPlan plan_impl(std::string_view op, const ContractionNetwork& net, const PlanOptions& options,
                          const ContractionTree* given, bool with_cost) {
  const auto t0 = std::chrono::steady_clock::now();
  validate_network(op, net);
  check_plan_options(op, options);
  // The DP keeps 2^n subsets (44 bytes each and more with many labels): 20 operands is 1 M.
  constexpr int kOptimalHardLimit = 20;
  const int n = static_cast<int>(net.inputs.size());
  const int optimal_limit = std::min(options.optimal_max_operands, kOptimalHardLimit);
  const EinsumOptimizer opt = options.optimizer;
  if (!given && opt == EinsumOptimizer::optimal && n > optimal_limit)
    fail(op, "optimal optimizer with " + str(n) + " operands, limit is " + str(optimal_limit) +
                 " (PlanOptions::optimal_max_operands = " + str(options.optimal_max_operands) + ", hard limit " +
                 str(kOptimalHardLimit) + ")");
  ContractionPlan plan;
  plan.chosen = opt;
  thread_local PreparedNetwork prepared;
  prepare_network(net, prepared);
  const StepModel model(options.objective, options.cost_model);
  if (given) {
    validate_tree(op, n, *given);
    plan.tree = *given;
  } else if (n == 1) {
    plan.chosen = opt == EinsumOptimizer::automatic ? EinsumOptimizer::optimal : opt;
  } else if (opt == EinsumOptimizer::chain) {
    const std::vector<int> order = chain_order(prepared);
    if (order.empty() && n >= 3)
      fail(op, "chain optimizer: the network of " + str(n) +
                   " operands is not a chain (the operands sharing summed labels do not form a path)");
    if (n == 2) plan.tree.steps.emplace_back(0, 1);
    else chain_tree(prepared, order, plan.tree.steps, model);
  } else if (n == 2) {
    plan.tree.steps.emplace_back(0, 1);
    if (opt == EinsumOptimizer::automatic) plan.chosen = EinsumOptimizer::optimal;
  } else {
    // eliminate, anneal and automatic plan the network left after absorbing subset
    // operands (Note [Absorbed subsets] in absorb.cpp); greedy stays opt_einsum's
    // greedy, and the exact DP plans the full network, as automatic does where it
    // always runs the DP.
    thread_local AbsorbedNetwork absorbed;
    const bool full = opt == EinsumOptimizer::greedy || opt == EinsumOptimizer::optimal ||
                      (opt == EinsumOptimizer::automatic && n <= kAutoDpAlways);
    const bool core = !full && absorb_subsets(prepared, absorbed);
    // A progress callback (anneal, automatic) may plan on this thread and so reuse the
    // thread-local networks: those optimizers plan on their own copies.
    const bool reentrant = opt == EinsumOptimizer::anneal || (opt == EinsumOptimizer::automatic && options.progress);
    AbsorbedNetwork own;  // that copy: the network planned and, with a core, its absorption
    if (reentrant) {
      own.core = core ? absorbed.core : prepared;
      if (core) {
        own.prefix = absorbed.prefix;
        own.ids = absorbed.ids;
      }
    }
    const AbsorbedNetwork& a = reentrant ? own : absorbed;
    const PreparedNetwork& planned = core || reentrant ? a.core : prepared;
    std::vector<Step>& steps = plan.tree.steps;
    if (planned.n <= 2) {  // everything absorbed into one or two operands
      if (planned.n == 2) steps.emplace_back(0, 1);
      if (opt == EinsumOptimizer::automatic) plan.chosen = EinsumOptimizer::optimal;
    } else {
      switch (opt) {
        case EinsumOptimizer::greedy: {
          thread_local GreedyPlanner greedy;
          greedy.run(planned, {}, steps);
          break;
        }
        case EinsumOptimizer::optimal: optimal_tree(planned, steps, model); break;
        case EinsumOptimizer::eliminate: {
          thread_local GreedyPlanner planner;
          elimination_tree(planned, planner, steps, model);
          break;
        }
        case EinsumOptimizer::partition: {
          thread_local PartitionPlanner planner;
          partition_tree(planned, planner, steps, model, options.seed);
          break;
        }
        case EinsumOptimizer::anneal: anneal_tree(planned, options, steps, model); break;
        case EinsumOptimizer::automatic: plan.chosen = automatic_tree(planned, options, steps, model); break;
        case EinsumOptimizer::chain: throw InternalError(op, "chain optimizer not handled");
      }
    }
    if (core) expand_core_tree(a, n, steps);
  }
  const double limit = memory_limit_elements(options);
  if (limit < kInf && n >= 2) {
    // Prepared again: a progress callback may have planned on this thread since.
    PreparedNetwork own;
    prepare_network(net, own);
    slice_tree(op, own, net.extents, plan.tree.steps, limit, model, plan);
    if (!given && opt == EinsumOptimizer::automatic && n >= 3) {
      // The tree that is best unsliced may slice badly: greedy's too, keep the cheaper.
      ContractionPlan alt;
      GreedyPlanner greedy;
      greedy.run(own, {}, alt.tree.steps);
      try {
        slice_tree(op, own, net.extents, alt.tree.steps, limit, model, alt);
        if (alt.cost.predicted_seconds < plan.cost.predicted_seconds) {
          alt.chosen = EinsumOptimizer::greedy;
          plan = std::move(alt);
        }
      } catch (const ArgumentError&) {
        // greedy's tree cannot meet the limit; the chosen one can
      }
    }
    plan.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    plan.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (with_cost) plan.cost = checked_cost(net, plan.tree.steps, options.cost_model);
  }
  return plan;
}

}  // namespace einsum_detail

ContractionTree plan_contraction(const ContractionNetwork& net, const PlanOptions& options) {
  return einsum_detail::plan_impl("plan_contraction", net, options, nullptr, false).tree;
}

ContractionPlan plan_sliced_contraction(const ContractionNetwork& net, const PlanOptions& options) {
  return einsum_detail::plan_impl("plan_sliced_contraction", net, options, nullptr, true);
}

ContractionPlan slice_contraction(const ContractionNetwork& net, const ContractionTree& tree, const PlanOptions& options) {
  return einsum_detail::plan_impl("slice_contraction", net, options, &tree, true);
}

}  // namespace tenferro
