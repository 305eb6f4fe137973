// Fuzz target: the einsum subscript parser, the planners and, for small sizes, einsum
// itself. The bytes give
// - the form: a subscript string (raw bytes: any characters, UTF-8 or not, commas,
//   arrows, ellipses, parentheses) or the integer form (label lists, an optional output);
// - the operand shapes: read from the bytes (ranks and extents that need not match the
//   labels, extents up to INT64_MAX for planning-only calls), or derived from the labels
//   (one extent per label, so that most inputs are valid and reach the planner);
// - the options: optimizer (every enumerator and a few outside the enum), objective,
//   a linear path or tree given by the bytes, a memory limit that forces slicing.
// Planning (einsum_path, EinsumPlan) always runs; when the operands and the predicted
// work are small, the plan is executed, einsum is run with another optimizer, and the
// sliced execution is summed over its slices. The checks: every refusal is a
// tenferro::Error (Note [Fuzz contract]); a returned tree is a valid tree over the
// operands; execution gives the plan's output shape and dtype; the different orders and
// the slices agree.
#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>

#include "fuzz_support.hpp"

namespace tenferro::fuzz {
namespace {

constexpr const char* kHarness = "fuzz_einsum";

// Number of labels the string form gives each operand (spaces and parentheses are not
// labels, "..." stands for `ellipsis_axes` axes, a UTF-8 code point is one label) and
// the labels themselves (the code unit that starts them).
struct Term {
  std::vector<std::uint32_t> labels;
  bool ellipsis = false;
};

std::vector<Term> split_terms(std::string_view subs) {
  const std::size_t arrow = subs.find("->");
  const std::string_view in = subs.substr(0, arrow);
  std::vector<Term> terms(1);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c == ',') {
      terms.emplace_back();
    } else if (c == '.') {
      if (in.substr(i, 3) == "...") {
        terms.back().ellipsis = true;
        i += 2;
      }
    } else if (c == ' ' || c == '(' || c == ')') {
    } else if (c < 0x80 || c >= 0xC0) {  // ASCII or a UTF-8 lead byte
      terms.back().labels.push_back(c);
    }
  }
  return terms;
}

// Shapes for the string form. Derived: one extent per label (from a table the bytes
// fill), ellipsis axes from the bytes; sometimes one axis is perturbed so that the
// shapes disagree. Read: ranks and extents straight from the bytes.
std::vector<Shape> string_shapes(Bytes& in, std::string_view subs, bool derive) {
  std::vector<Shape> shapes;
  if (derive) {
    std::int64_t table[16];
    for (auto& e : table) e = in.range(0, 3);
    const std::vector<Term> terms = split_terms(subs);
    const int ell = static_cast<int>(in.range(0, 2));
    for (const Term& t : terms) {
      Shape s;
      for (std::uint32_t l : t.labels) s.push_back(table[l % 16]);
      if (t.ellipsis)
        for (int k = 0; k < ell; ++k) s.push_back(in.range(1, 3));
      shapes.push_back(s);
    }
    if (!shapes.empty() && in.u8() % 8 == 0) {
      Shape& s = shapes[static_cast<std::size_t>(in.range(0, static_cast<std::int64_t>(shapes.size()) - 1))];
      if (s.size() > 0) s[static_cast<int>(in.range(0, s.size() - 1))] = in.wide();
      else s.push_back(in.wide());
    }
  } else {
    const int n = static_cast<int>(in.range(0, 5));
    for (int i = 0; i < n; ++i) {
      Shape s;
      const int r = static_cast<int>(in.range(0, 6));
      for (int k = 0; k < r; ++k) s.push_back(in.u8() % 4 == 0 ? in.wide() : in.range(0, 4));
      shapes.push_back(s);
    }
  }
  return shapes;
}

EinsumOptions read_options(Bytes& in, int num_operands) {
  EinsumOptions o;
  const std::uint8_t opt = in.u8();
  // Mostly the seven optimizers; 1 in 32 a value outside the enum (must be refused).
  o.plan.optimizer = static_cast<EinsumOptimizer>(opt % 32 == 31 ? 7 + opt % 7 : opt % 7);
  o.plan.objective = in.flag() ? PlanObjective::flops : PlanObjective::time;
  // A bounded budget: the anneal and automatic planners must not turn into hangs.
  o.plan.time_budget_s = 0.002;
  o.plan.max_trials = in.range(0, 64);
  o.plan.seed = in.u8();
  const std::uint8_t extra = in.u8();
  if (extra % 5 == 1) o.plan.max_intermediate_elements = static_cast<double>(in.range(0, 64));
  if (extra % 5 == 2) o.plan.max_intermediate_bytes = static_cast<double>(in.range(0, 512));
  if (extra % 7 == 3) {
    // A linear path from the bytes (often invalid).
    const int steps = static_cast<int>(in.range(0, std::max(0, num_operands)));
    for (int k = 0; k < steps; ++k)
      o.path.emplace_back(static_cast<int>(in.range(-1, 5)), static_cast<int>(in.range(-1, 5)));
  } else if (extra % 7 == 4) {
    ContractionTree t;
    const int steps = static_cast<int>(in.range(0, std::max(0, num_operands)));
    for (int k = 0; k < steps; ++k)
      t.steps.emplace_back(static_cast<int>(in.range(-1, 2 * num_operands)), static_cast<int>(in.range(-1, 2 * num_operands)));
    o.tree = t;
  }
  return o;
}

DType einsum_dtype(Bytes& in) {
  static constexpr DType kTypes[] = {DType::f64, DType::c128, DType::f32, DType::c64, DType::f64, DType::i32};
  return kTypes[in.u8() % 6];
}

// Largest |a - b| allowed between two evaluation orders of the same contraction. The
// operands hold quarters in [-0.5, 2] (pattern_tensor), so f64 sums are exact up to
// rounding of long reductions; f32 gets a looser bound.
bool close(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor ca = to_contiguous(session(), convert(session(), a, DType::c128));
  const Tensor cb = to_contiguous(session(), convert(session(), b, DType::c128));
  const auto* pa = static_cast<const std::complex<double>*>(ca.data());
  const auto* pb = static_cast<const std::complex<double>*>(cb.data());
  const double tol = (a.dtype() == DType::f32 || a.dtype() == DType::c64) ? 1e-3 : 1e-9;
  for (std::int64_t i = 0; i < ca.numel(); ++i) {
    const double scale = 1 + std::abs(pa[i]);
    if (!(std::abs(pa[i] - pb[i]) <= tol * scale) && !(std::isnan(pa[i].real()) && std::isnan(pb[i].real()))) return false;
  }
  return true;
}

// Small enough to run: every operand and the result at most 256 elements, little work.
bool small(const std::vector<Shape>& shapes, const EinsumPlan& plan) {
  for (const Shape& s : shapes)
    if (saturating_numel(s.span()) > 256) return false;
  return saturating_numel(plan.output_shape().span()) <= 256 && plan.path().cost.flops <= 2e4 &&
         plan.num_slices() <= 64;
}

std::vector<Tensor> make_operands(Bytes& in, const std::vector<Shape>& shapes, std::span<const DType> dtypes) {
  std::vector<Tensor> ops;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Tensor t = pattern_tensor(shapes[i].span(), dtypes[i], static_cast<unsigned>(i));
    // Sometimes a strided operand: axis 0 reversed (a negative stride, no copy).
    if (t.rank() > 0 && in.u8() % 3 == 0) t = t.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
    ops.push_back(t);
  }
  return ops;
}

void check_tree(const EinsumPathInfo& info, int n) {
  try {
    validate_contraction_tree(n, info.tree);
  } catch (const Error& e) {
    fail(kHarness, std::string("planner returned an invalid tree: ") + e.what());
  }
}

// Runs a plan and checks it against the other ways of evaluating the same network.
template <class RunOther>
void execute_and_compare(Bytes& in, const EinsumPlan& plan, const std::vector<Shape>& shapes,
                         std::span<const DType> dtypes, RunOther&& run_other) {
  if (!small(shapes, plan)) return;
  Session& s = session();
  const std::vector<Tensor> ops = make_operands(in, shapes, dtypes);
  const Tensor r = plan.execute(s, ops);
  if (r.shape() != plan.output_shape() || r.dtype() != plan.output_dtype())
    fail(kHarness, "execute gave shape " + r.shape().to_string() + ", the plan says " + plan.output_shape().to_string());
  // The same network with another optimizer (a different order, the same value).
  const Tensor other = run_other(ops);
  if (!close(r, other)) fail(kHarness, "two contraction orders disagree");
  // Sliced execution: slices [0, k) and [k, n) summed give the whole result.
  const std::int64_t n = plan.num_slices();
  if (n > 1) {
    const std::int64_t k = in.range(0, n);
    const Tensor out = Tensor::empty(plan.output_shape().span(), plan.output_dtype());
    plan.execute_slices_into(s, ops, 0, k, out);
    plan.execute_slices_into(s, ops, k, n, out, /*accumulate=*/true);
    if (!close(r, out)) fail(kHarness, "sliced execution disagrees with the whole");
  }
}

void string_form(Bytes& in) {
  const std::string subs = in.text(static_cast<std::size_t>(in.range(0, 48)));
  const bool derive = in.flag();
  const std::vector<Shape> shapes = string_shapes(in, subs, derive);
  const int n = static_cast<int>(shapes.size());
  const EinsumOptions options = read_options(in, n);
  std::vector<DType> dtypes;
  for (int i = 0; i < n; ++i) dtypes.push_back(einsum_dtype(in));

  const EinsumPathInfo info = einsum_path(subs, shapes, options);
  check_tree(info, n);
  const EinsumPlan plan(subs, shapes, dtypes, options);
  check_tree(plan.path(), n);
  EinsumOptions greedy;
  greedy.plan.optimizer = EinsumOptimizer::greedy;
  execute_and_compare(in, plan, shapes, dtypes,
                      [&](const std::vector<Tensor>& ops) { return einsum(session(), subs, ops, greedy); });
}

void integer_form(Bytes& in) {
  const int n = static_cast<int>(in.range(0, 5));
  const bool wide_labels = in.u8() % 8 == 0;
  std::vector<std::vector<std::int64_t>> labels(static_cast<std::size_t>(n));
  for (auto& l : labels) {
    const int r = static_cast<int>(in.range(0, 5));
    for (int k = 0; k < r; ++k) l.push_back(wide_labels ? in.wide() : in.range(0, 7));
  }
  std::optional<std::vector<std::int64_t>> output;
  if (in.flag()) {
    output.emplace();
    const int r = static_cast<int>(in.range(0, 4));
    for (int k = 0; k < r; ++k) output->push_back(wide_labels ? in.wide() : in.range(0, 7));
  }
  std::vector<Shape> shapes;
  std::int64_t table[8];
  for (auto& e : table) e = in.range(0, 3);
  for (const auto& l : labels) {
    Shape s;
    for (std::int64_t lab : l) s.push_back(table[static_cast<std::uint64_t>(lab) % 8]);
    if (in.u8() % 16 == 0) s.push_back(in.wide());  // a rank that does not match
    shapes.push_back(s);
  }
  const EinsumOptions options = read_options(in, n);
  std::vector<DType> dtypes;
  for (int i = 0; i < n; ++i) dtypes.push_back(einsum_dtype(in));
  std::optional<std::span<const std::int64_t>> out_span;
  if (output) out_span = std::span<const std::int64_t>(*output);

  const EinsumPlan plan(labels, out_span, shapes, dtypes, options);
  check_tree(plan.path(), n);
  EinsumOptions optimal;
  optimal.plan.optimizer = EinsumOptimizer::optimal;
  execute_and_compare(in, plan, shapes, dtypes, [&](const std::vector<Tensor>& ops) {
    return einsum(session(), ops, labels, out_span, optimal);
  });
}

}  // namespace
}  // namespace tenferro::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tenferro::fuzz;
  Bytes in(data, size);
  guarded(kHarness, [&] {
    if (in.u8() % 4 == 3) integer_form(in);
    else string_form(in);
  });
  return 0;
}
