// Calibrating the einsum time model on the running machine (calibrate_cost_model) and
// the text form that stores it (to_string, parse_cost_model).
//
// Note [Cost model calibration]
// CostModel's defaults were fitted on the development machine at one thread (Note
// [Einsum time model] in cost_model.cpp), on the suite's networks, and the automatic
// planner's budgets were tuned with them. Another machine, or a session of more threads,
// multiplies at another rate, moves bytes at another rate and pays another fixed cost
// per step; the planners then weigh flops, traffic and steps against each other wrongly.
// calibrate_cost_model measures the three through the session it is given, each with
// the contraction that isolates it, run as an EinsumPlan:
//  - the fixed cost of a step: a chain of 33 matrices of 2 × 2 (32 steps of 8
//    multiply-adds), its time over 32;
//  - the GEMM rate: a 512³ matrix product, multiply-adds over time;
//  - the memory rate: a Hadamard product of 2048 × 2048 (three times 32 MiB moved),
//    bytes over time;
// each the median of batches of at least 0.2 ms over a third of the budget (medians,
// not minima: the planners should expect what a sweep meets on a shared machine). The
// calibrated model is the shipped one with step_seconds, gemm_rate and bytes_rate each
// scaled by the ratio of this machine's measurement to the development machine's
// (kReference); the shape terms (gemm_half_extent, read_factor, write_factor) stay as
// fitted on real networks.
// Why ratios and not an absolute fit of every constant to calibration contractions: the
// first version fitted all seven to eleven small contractions (thin GEMMs, outer and
// batched products, packing copies). On the development machine that fit ranked the
// suite's trees as well as the defaults (Spearman 0.981 against 0.983) and the generated
// networks better (0.980 against 0.955), but it charged a quarter of the defaults'
// packing traffic and a fifteenth of their step cost, and automatic's plans got worse
// where the budgets those had funded mattered: tensornetwork_permutation_light_415 22 →
// 67 ms planning plus execution, lm_batch_likelihood_brackets_4_4d 12.4 → 17.5 (and
// rrg3_n120_bond2 15.5 → 4.3); docs/benchmarks.md, 2026-12-07 second sitting. On the
// development machine the ratios are 1 up to noise, so the plans there do not change.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>

#include "einsum/path_internal.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/error.hpp"

namespace tenferro {

namespace {

constexpr std::string_view kParseOp = "parse_cost_model";

/// The development machine's measurements (2-core AMD EPYC Zen 4 VM, one thread,
/// OpenBLAS 0.3.21 with its SkylakeX kernels; the medians of five calibrations): the
/// machine the shipped constants describe.
struct Measured {
  double step_seconds, gemm_rate, bytes_rate;
};
constexpr Measured kReference = {1.17e-7, 2.24e10, 2.69e10};

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Median seconds of one execution of `labels` → `output` over f64 operands of
/// `extents`, in batches of at least 0.2 ms for about `budget` seconds.
double time_contraction(Session& s, const std::vector<std::vector<std::int64_t>>& labels,
                        const std::vector<std::int64_t>& output, const std::vector<std::int64_t>& extents, double budget) {
  std::vector<Shape> shapes;
  std::vector<Tensor> ops;
  for (const auto& in : labels) {
    Shape shape;
    for (std::int64_t l : in) shape.push_back(extents[static_cast<std::size_t>(l)]);
    shapes.push_back(shape);
    ops.push_back(Tensor::full(shape.span(), 0.5, DType::f64));
  }
  const std::vector<DType> dtypes(ops.size(), DType::f64);
  const EinsumPlan plan(EinsumLabels(labels), std::span<const std::int64_t>(output), shapes, dtypes);
  const Tensor out = Tensor::empty(plan.output_shape().span(), DType::f64);
  plan.execute_into(s, ops, out);  // warm: pool blocks, BLAS buffers
  auto t0 = Clock::now();
  plan.execute_into(s, ops, out);
  const int per_batch = static_cast<int>(std::clamp(2e-4 / std::max(since(t0), 1e-9), 1.0, 1e5));
  std::vector<double> batches;
  const auto start = Clock::now();
  do {
    t0 = Clock::now();
    for (int k = 0; k < per_batch; ++k) plan.execute_into(s, ops, out);
    batches.push_back(since(t0) / per_batch);
  } while (batches.size() < 3 || (since(start) < budget && batches.size() < 1000));
  const auto mid = batches.begin() + static_cast<std::ptrdiff_t>(batches.size() / 2);
  std::nth_element(batches.begin(), mid, batches.end());
  return *mid;
}

}  // namespace

CostModel calibrate_cost_model(Session& s, double seconds) {
  constexpr std::string_view op = "calibrate_cost_model";
  if (!(seconds > 0) || std::isinf(seconds))
    throw ArgumentError(op, "seconds is " + std::to_string(seconds) + ", must be finite and > 0");
  const double share = seconds / 3;
  std::vector<std::vector<std::int64_t>> chain;
  for (std::int64_t i = 0; i < 33; ++i) chain.push_back({i, i + 1});
  const double step = time_contraction(s, chain, {0, 33}, std::vector<std::int64_t>(34, 2), share) / 32;
  constexpr std::int64_t n = 512, side = 2048;
  const double gemm = static_cast<double>(n * n * n) / time_contraction(s, {{0, 1}, {1, 2}}, {0, 2}, {n, n, n}, share);
  const double bytes =
      static_cast<double>(3 * 8 * side * side) / time_contraction(s, {{0, 1}, {0, 1}}, {0, 1}, {side, side}, share);
  CostModel m;
  m.step_seconds *= step / kReference.step_seconds;
  m.gemm_rate *= gemm / kReference.gemm_rate;
  m.bytes_rate *= bytes / kReference.bytes_rate;
  einsum_detail::validate_cost_model(op, m);
  return m;
}

namespace {

/// CostModel's fields by name, in the text form's order (to_string, parse_cost_model).
constexpr std::pair<std::string_view, double CostModel::*> kFields[] = {
    {"gemm_rate", &CostModel::gemm_rate},     {"gemm_half_extent", &CostModel::gemm_half_extent},
    {"bytes_rate", &CostModel::bytes_rate},   {"read_factor", &CostModel::read_factor},
    {"write_factor", &CostModel::write_factor}, {"step_seconds", &CostModel::step_seconds},
    {"element_bytes", &CostModel::element_bytes}};

}  // namespace

std::string to_string(const CostModel& m) {
  std::string text;
  for (const auto& [name, field] : kFields) {
    char value[32];
    std::snprintf(value, sizeof value, "%.17g", m.*field);
    text += (text.empty() ? "" : " ") + std::string(name) + "=" + value;
  }
  return text;
}

CostModel parse_cost_model(std::string_view text) {
  CostModel m;
  std::size_t i = 0;
  auto separator = [](char c) { return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == ';'; };
  while (i < text.size()) {
    if (separator(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !separator(text[end])) ++end;
    const std::string_view item = text.substr(i, end - i);
    i = end;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw ArgumentError(kParseOp, "field '" + std::string(item) + "' has no '=' (expected name=value)");
    const std::string name(item.substr(0, eq)), value(item.substr(eq + 1));
    const auto* known = std::find_if(std::begin(kFields), std::end(kFields), [&](const auto& f) { return f.first == name; });
    if (known == std::end(kFields)) {
      std::string expected;
      for (const auto& f : kFields) expected += (expected.empty() ? "" : ", ") + std::string(f.first);
      throw ArgumentError(kParseOp, "unknown field '" + name + "' (expected one of " + expected + ")");
    }
    char* stop = nullptr;
    const double v = value.empty() ? 0 : std::strtod(value.c_str(), &stop);
    if (value.empty() || stop != value.c_str() + value.size())
      throw ArgumentError(kParseOp, "field " + name + " has value '" + value + "', not a number");
    m.*(known->second) = v;
  }
  einsum_detail::validate_cost_model(kParseOp, m);
  return m;
}

}  // namespace tenferro
