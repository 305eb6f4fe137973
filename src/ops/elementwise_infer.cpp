// Inference of the elementwise ops (Note [Elementwise in the op layer]): broadcasting,
// promotion with weak scalars, the dtype sets and the scalar fit check. Pure.
#include <string>

#include "core/convert.hpp"
#include "core/layout.hpp"
#include "ops/elementwise.hpp"

namespace tenferro::detail {

namespace {

/// ArgumentError unless scalar `v` is exactly representable in integer or bool dtype `d`.
void require_scalar_fits(const Scalar& v, DType d, std::string_view op) {
  const bool exact = visit_dtype(op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_inexact(dtype_of<T>)) {
      return true;
    } else {
      return visit_dtype(op, v.natural_dtype(), [&](auto stag) { return exact_value<T>(v.template to<typename decltype(stag)::type>()); });
    }
  });
  if (!exact) throw ArgumentError(op, "scalar " + v.to_string() + " does not fit dtype " + std::string(dtype_name(d)));
}

}  // namespace

std::string_view ew_name(OpId op, CompareOp cmp) noexcept {
  if (op != OpId::compare) return op_name(op);
  static constexpr std::string_view names[] = {"compare(eq)", "compare(ne)", "compare(lt)", "compare(le)", "compare(gt)", "compare(ge)"};
  const auto i = static_cast<unsigned>(cmp);
  return i < std::size(names) ? names[i] : op_name(op);
}

EwSignature infer_elementwise(OpId op, std::span<const EwOperand> ins, CompareOp cmp) {
  const EwRule rule = ew_rule(op);
  const OpInfo& info = op_info(op);
  const std::string_view name = ew_name(op, cmp);
  if (rule.result == EwResult::unknown || static_cast<int>(ins.size()) != info.inputs)
    throw InternalError(name, "not an elementwise op with " + std::to_string(ins.size()) + " inputs");
  // select's pred takes no part in promotion (it must be bool); every other input does.
  const std::size_t first = op == OpId::select ? 1 : 0;
  EwSignature sig;
  bool shaped = false, typed = false;
  DType d = DType::b8;
  for (std::size_t k = 0; k < ins.size(); ++k) {
    if (ins[k].scalar) continue;
    sig.shape = shaped ? broadcast_shapes(sig.shape, ins[k].shape, name) : Dims(ins[k].shape);
    shaped = true;
    if (k >= first) {
      d = typed ? promote(d, ins[k].dtype) : ins[k].dtype;
      typed = true;
    }
  }
  for (std::size_t k = first; k < ins.size(); ++k) {  // scalars are weak: they follow the tensors
    if (!ins[k].scalar) continue;
    d = typed ? ins[k].scalar->result_dtype_with(d) : ins[k].scalar->natural_dtype();
    typed = true;
  }
  if (op == OpId::select) {
    const EwOperand& p = ins[0];
    if (p.scalar ? p.scalar->kind() != Scalar::Kind::boolean : p.dtype != DType::b8)
      throw DTypeError(name, "pred must be bool, got " + std::string(p.scalar ? "a non-bool scalar" : dtype_name(p.dtype)));
  }
  if (op == OpId::compare && is_complex(d) && cmp != CompareOp::eq && cmp != CompareOp::ne)
    throw DTypeError(name, "ordered comparison of complex dtype " + std::string(dtype_name(d)) + " (only eq and ne)");
  if (!in_set(d, info.dtypes)) throw_dtype_not_in_set(name, d, info.dtypes);
  for (std::size_t k = first; k < ins.size(); ++k)
    if (ins[k].scalar && !is_inexact(d)) require_scalar_fits(*ins[k].scalar, d, name);
  sig.compute = d;
  for (std::size_t k = 0; k < ins.size(); ++k) sig.in[k] = k < first ? DType::b8 : d;
  switch (rule.result) {
    case EwResult::same: sig.out = d; break;
    case EwResult::real: sig.out = real_dtype(d); break;
    case EwResult::angle: sig.out = is_integer(d) ? DType::f64 : real_dtype(d); break;
    case EwResult::boolean: sig.out = DType::b8; break;
    case EwResult::unknown: break;
  }
  return sig;
}

}  // namespace tenferro::detail
