// The C ABI's einsum: string and integer-label forms, and prepared plans
// (tenferro::EinsumPlan). Options map to EinsumOptions: the optimizer, the memory limit
// (PlanOptions::max_intermediate_elements) and a fixed opt_einsum linear path.
#include "capi/capi_common.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenferro/einsum.hpp"

using namespace tenferro;
using namespace tenferro::capi;

namespace {

EinsumOptions to_options(const tf_einsum_options* o, const char* op) {
  EinsumOptions options;
  if (o == nullptr) return options;
  const auto opt = static_cast<std::int32_t>(o->optimizer);
  if (opt < TF_OPTIMIZE_AUTO || opt > TF_OPTIMIZE_PARTITION)
    throw ArgumentError(op, "optimizer " + std::to_string(opt) +
                                " is outside the enum (TF_OPTIMIZE_AUTO .. TF_OPTIMIZE_PARTITION, 0 .. 6)");
  static_assert(static_cast<int>(EinsumOptimizer::automatic) == TF_OPTIMIZE_AUTO &&
                    static_cast<int>(EinsumOptimizer::greedy) == TF_OPTIMIZE_GREEDY &&
                    static_cast<int>(EinsumOptimizer::optimal) == TF_OPTIMIZE_OPTIMAL &&
                    static_cast<int>(EinsumOptimizer::anneal) == TF_OPTIMIZE_ANNEAL &&
                    static_cast<int>(EinsumOptimizer::chain) == TF_OPTIMIZE_CHAIN &&
                    static_cast<int>(EinsumOptimizer::eliminate) == TF_OPTIMIZE_ELIMINATE &&
                    static_cast<int>(EinsumOptimizer::partition) == TF_OPTIMIZE_PARTITION,
                "tf_einsum_optimizer must mirror tenferro::EinsumOptimizer");
  options.plan.optimizer = static_cast<EinsumOptimizer>(opt);
  options.plan.max_intermediate_elements = o->max_intermediate_elements;  // einsum validates it
  if (o->path_steps > 0) {
    need(o->path, op, "options->path");
    options.path.reserve(o->path_steps);
    for (std::size_t k = 0; k < o->path_steps; ++k) options.path.emplace_back(o->path[2 * k], o->path[2 * k + 1]);
  }
  return options;
}

std::string_view subscripts_of(const char* subscripts, const char* op) { return need(subscripts, op, "subscripts"); }

// The per-operand label lists of the integer form.
std::vector<std::vector<std::int64_t>> label_lists(const std::int64_t* const* labels, const std::size_t* counts, std::size_t n,
                                                   const char* op) {
  if (n > 0) {
    need(labels, op, "labels");
    need(counts, op, "label_counts");
  }
  std::vector<std::vector<std::int64_t>> lists(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (counts[i] > 0 && labels[i] == nullptr) throw ArgumentError(op, "labels[" + std::to_string(i) + "] is null");
    lists[i].assign(labels[i], labels[i] + counts[i]);
  }
  return lists;
}

// The explicit output labels, or nullopt (the implicit rule) for a null `output`.
std::optional<std::span<const std::int64_t>> output_labels(const std::int64_t* output, std::size_t count, const char* op) {
  if (output == nullptr) {
    if (count != 0) throw_null(op, "output");
    return std::nullopt;
  }
  return std::span<const std::int64_t>(output, count);
}

// The operand shapes and dtypes a plan is prepared for.
struct Signature {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};
Signature signature(std::size_t n, const std::size_t* ranks, const std::int64_t* const* shapes, const tf_dtype* dtypes,
                    const char* op) {
  if (n > 0) {
    need(ranks, op, "ranks");
    need(shapes, op, "shapes");
    need(dtypes, op, "dtypes");
  }
  Signature sig;
  for (std::size_t i = 0; i < n; ++i) {
    if (ranks[i] > 0 && shapes[i] == nullptr) throw ArgumentError(op, "shapes[" + std::to_string(i) + "] is null");
    sig.shapes.emplace_back(std::span<const std::int64_t>(shapes[i], ranks[i]));
    sig.dtypes.push_back(to_dtype(dtypes[i], op));
  }
  return sig;
}

const EinsumPlan& plan_of(const tf_einsum_plan* p, const char* op) { return need(p, op, "plan")->plan; }

}  // namespace

tf_status tf_einsum(tf_session* session, const char* subscripts, const tf_tensor* const* operands, size_t num_operands,
                    const tf_einsum_options* options, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum";
    Session& s = session_of(session, op);
    const std::string_view sub = subscripts_of(subscripts, op);
    const std::vector<Tensor> ops = operand_list(operands, num_operands, op);
    const EinsumOptions opts = to_options(options, op);
    need(out, op, "out");
    publish(out, einsum(s, sub, std::span<const Tensor>(ops), opts));
  });
}

tf_status tf_einsum_labels(tf_session* session, const tf_tensor* const* operands, size_t num_operands,
                           const int64_t* const* labels, const size_t* label_counts, const int64_t* output,
                           size_t output_count, const tf_einsum_options* options, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum_labels";
    Session& s = session_of(session, op);
    const std::vector<Tensor> ops = operand_list(operands, num_operands, op);
    const auto lists = label_lists(labels, label_counts, num_operands, op);
    const auto outl = output_labels(output, output_count, op);
    const EinsumOptions opts = to_options(options, op);
    need(out, op, "out");
    publish(out, einsum(s, std::span<const Tensor>(ops), EinsumLabels(lists), outl, opts));
  });
}

tf_status tf_einsum_plan_create(const char* subscripts, size_t num_operands, const size_t* ranks,
                                const int64_t* const* shapes, const tf_dtype* dtypes, const tf_einsum_options* options,
                                tf_einsum_plan** out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum_plan_create";
    const std::string_view sub = subscripts_of(subscripts, op);
    const Signature sig = signature(num_operands, ranks, shapes, dtypes, op);
    const EinsumOptions opts = to_options(options, op);
    need(out, op, "out");
    *out = new tf_einsum_plan{EinsumPlan(sub, sig.shapes, sig.dtypes, opts)};
  });
}

tf_status tf_einsum_plan_create_labels(size_t num_operands, const int64_t* const* labels, const size_t* label_counts,
                                       const int64_t* output, size_t output_count, const int64_t* const* shapes,
                                       const tf_dtype* dtypes, const tf_einsum_options* options, tf_einsum_plan** out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum_plan_create_labels";
    const auto lists = label_lists(labels, label_counts, num_operands, op);
    const auto outl = output_labels(output, output_count, op);
    // Operand i has as many extents as labels (einsum reports a mismatch otherwise).
    const Signature sig = signature(num_operands, label_counts, shapes, dtypes, op);
    const EinsumOptions opts = to_options(options, op);
    need(out, op, "out");
    *out = new tf_einsum_plan{EinsumPlan(EinsumLabels(lists), outl, sig.shapes, sig.dtypes, opts)};
  });
}

tf_status tf_einsum_plan_execute(const tf_einsum_plan* plan, tf_session* session, const tf_tensor* const* operands,
                                 size_t num_operands, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum_plan_execute";
    const EinsumPlan& p = plan_of(plan, op);
    Session& s = session_of(session, op);
    const std::vector<Tensor> ops = operand_list(operands, num_operands, op);
    need(out, op, "out");
    publish(out, p.execute(s, std::span<const Tensor>(ops)));
  });
}

tf_status tf_einsum_plan_execute_into(const tf_einsum_plan* plan, tf_session* session, const tf_tensor* const* operands,
                                      size_t num_operands, tf_tensor* out) {
  return guard([&] {
    constexpr const char* op = "tf_einsum_plan_execute_into";
    const EinsumPlan& p = plan_of(plan, op);
    Session& s = session_of(session, op);
    const std::vector<Tensor> ops = operand_list(operands, num_operands, op);
    const Tensor& o = tensor_of(out, op, "out");
    p.execute_into(s, std::span<const Tensor>(ops), o);
  });
}

tf_status tf_einsum_plan_output_rank(const tf_einsum_plan* plan, size_t* out) {
  return guard([&] {
    const EinsumPlan& p = plan_of(plan, "tf_einsum_plan_output_rank");
    *need(out, "tf_einsum_plan_output_rank", "out") = static_cast<size_t>(p.output_shape().size());
  });
}

tf_status tf_einsum_plan_output_shape(const tf_einsum_plan* plan, int64_t* shape, size_t capacity) {
  return guard([&] {
    const EinsumPlan& p = plan_of(plan, "tf_einsum_plan_output_shape");
    write_dims(p.output_shape(), shape, capacity, "tf_einsum_plan_output_shape", "shape");
  });
}

tf_status tf_einsum_plan_output_dtype(const tf_einsum_plan* plan, tf_dtype* out) {
  return guard([&] {
    const EinsumPlan& p = plan_of(plan, "tf_einsum_plan_output_dtype");
    *need(out, "tf_einsum_plan_output_dtype", "out") = from_dtype(p.output_dtype());
  });
}

void tf_einsum_plan_free(tf_einsum_plan* plan) { delete plan; }
