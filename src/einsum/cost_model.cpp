// The time model of contraction trees (CostModel in einsum_path.hpp) and
// contraction_cost.
//
// Note [Einsum time model]
// Flops alone rank trees badly on real networks: of two trees of 10^9.456 and 10^9.472
// multiply-adds (gm_queen5_5_3) the first ran 5.4 s and the second 3.4 s, because the
// first writes larger intermediates and runs more small, badly shaped GEMMs. The model
// charges each pairwise step
//   - a fixed cost (step_seconds: dispatch, layout, pool block, the GEMM call),
//   - its multiply-adds at a rate that falls for thin shapes: a GEMM of M×K by K×N runs
//     at gemm_rate · e(M) e(N) e(K), e(x) = x / (x + h) (a matrix-vector product, N = 1,
//     runs at about 1/(1 + h) of the rate: memory bound),
//   - its memory traffic: every operand element read read_factor times (once, plus the
//     packing copy when the operand's axes are not GEMM-ready: the planner does not know
//     the axis orders, so it charges the copy on average) and every result element
//     written write_factor times, at bytes_rate.
// An elementwise step (no contracted label) pays only the fixed cost and the traffic.
// The constants in CostModel's defaults were fitted on the development machine (one
// thread, OpenBLAS; docs/benchmarks.md, "einsum cost model") and can be overridden per
// call through PlanOptions::cost_model, e.g. by a fit to the running machine (Note [Cost
// model calibration] in calibrate.cpp).
#include <cmath>
#include <string>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro {

namespace einsum_detail {

double tree_cost(const PreparedNetwork& net, const std::vector<Step>& steps, const StepModel& model) {
  thread_local std::vector<Word> labels, scratch;
  tree_labels(net, steps, labels, scratch);
  double cost = 0;
  const int W = net.words;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto [a, b] = steps[k];
    const int c = net.n + static_cast<int>(k);
    cost += model.step(&labels[a * W], &labels[b * W], &labels[c * W], W, net.extent.data());
  }
  return cost;
}

void validate_cost_model(std::string_view op, const CostModel& m) {
  auto positive = [&](double v, const char* name) {
    if (!(v > 0) || std::isinf(v))
      throw ArgumentError(op, std::string("cost_model.") + name + " is " + std::to_string(v) + ", must be finite and > 0");
  };
  auto non_negative = [&](double v, const char* name) {
    if (!(v >= 0) || std::isinf(v))
      throw ArgumentError(op, std::string("cost_model.") + name + " is " + std::to_string(v) + ", must be finite and >= 0");
  };
  positive(m.gemm_rate, "gemm_rate");
  positive(m.bytes_rate, "bytes_rate");
  positive(m.element_bytes, "element_bytes");
  non_negative(m.gemm_half_extent, "gemm_half_extent");
  non_negative(m.read_factor, "read_factor");
  non_negative(m.write_factor, "write_factor");
  non_negative(m.step_seconds, "step_seconds");
}

ContractionCost checked_cost(const ContractionNetwork& net, const std::vector<Step>& steps, const CostModel& model) {
  thread_local PreparedNetwork p;
  thread_local std::vector<Word> labels, scratch;
  thread_local std::vector<double> ext;
  prepare_network(net, p);
  tree_labels(p, steps, labels, scratch);
  // Report true products (a zero extent gives zero), not the planning extents.
  ext.assign(net.extents.begin(), net.extents.end());
  const StepModel time(PlanObjective::time, model);
  ContractionCost cost;
  const int W = p.words;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto [a, b] = steps[k];
    const int c = p.n + static_cast<int>(k);
    const Word *A = &labels[a * W], *B = &labels[b * W], *C = &labels[c * W];
    cost.flops += union_size(A, B, W, ext.data());
    const double size = set_size(C, W, ext.data());
    cost.largest_intermediate = std::max(cost.largest_intermediate, size);
    cost.elements_written += size;
    cost.bytes += time.bytes(set_size(A, W, ext.data()), set_size(B, W, ext.data()), size);
    cost.predicted_seconds += time.step(A, B, C, W, ext.data());
  }
  return cost;
}

}  // namespace einsum_detail

ContractionCost contraction_cost(const ContractionNetwork& net, const ContractionTree& tree, const CostModel& model) {
  constexpr std::string_view op = "contraction_cost";
  einsum_detail::validate_network(op, net);
  einsum_detail::validate_tree(op, static_cast<int>(net.inputs.size()), tree);
  einsum_detail::validate_cost_model(op, model);
  return einsum_detail::checked_cost(net, tree.steps, model);
}

}  // namespace tenferro
