#pragma once
// The elementwise families' op layer (Note [Elementwise in the op layer]): the per-op
// rules and the pure inference function.
//
// Note [Elementwise in the op layer]
// An elementwise op (the catalogue rows of families `elementwise` and `analytic`: the
// unary, binary and ternary ops over tensors and scalars) is three pieces:
//   - infer_elementwise (elementwise_infer.cpp): the operands' shapes and dtypes (or, for
//     a scalar operand, its value) and the attributes in; the output signature out
//     (broadcast shape, compute dtype, result dtype, the dtype each input is read as),
//     or the typed error. Pure: no tensor data, no session, no device. A scalar's value
//     is an input known on the host, so "3e9 does not fit i32" is an inference error.
//   - the front end (elementwise.cpp): session check, operands on the session's device,
//     then either the layout fast path (Note [Elementwise fast path]) or inference; the
//     kernel from the session's table (kernel_for); the output prepared once for the
//     allocating and `_into` forms; inputs brought to their read dtype with `cast`; the
//     integer zero-divisor and negative-exponent checks through the backend's data
//     checks (Note [Data-dependent checks]); then the kernel with an EwCall.
//   - the kernels (src/cpu/elementwise.cpp, namespace tenferro::cpu): one template per
//     arity over the op's functor (src/cpu/elementwise_functors.hpp, OpFn), listed in
//     the CPU table as UnaryKernel / BinaryKernel / TernaryKernel entries.
// Example: add(s, x [2, 3] f32, 2.0) → compute f32 (a float scalar is weak against an
// f32 tensor), out [2, 3] f32; add(s, x [2, 1] i32, y [1, 3] f64) → x is cast to f64,
// out [2, 3] f64. The rule switch below is checked against the catalogue at compile time.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>

#include "ops/catalog.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/shape.hpp"

namespace tenferro::detail {

/// How an elementwise op's result dtype follows its compute dtype.
enum class EwResult : std::uint8_t {
  unknown,  ///< not an elementwise op
  same,     ///< the compute dtype
  real,     ///< the compute dtype's real dtype (abs, real, imag)
  angle,    ///< the real dtype, f64 for integers (angle)
  boolean,  ///< b8 (compare)
};

/// The per-op rule of an elementwise op.
struct EwRule {
  EwResult result = EwResult::unknown;
  /// Whether the op has the layout fast path (Note [Elementwise fast path]), and for
  /// which dtypes: those needing no data check and no dtype change (integer div, rem
  /// and pow need their data checks and take the general path).
  bool fast = false;
  DTypeSet fast_dtypes = DTypeSet::all;
};

/// The rule of `op` (result `unknown` for an op outside the two families).
constexpr EwRule ew_rule(OpId op) noexcept {
  if (op_info(op).family == OpFamily::analytic) return {EwResult::same, true, op_info(op).dtypes};
  switch (op) {
    case OpId::add:
    case OpId::sub:
    case OpId::mul: return {EwResult::same, true, DTypeSet::numeric};
    case OpId::div:
    case OpId::pow: return {EwResult::same, true, DTypeSet::inexact};
    case OpId::rem: return {EwResult::same, true, DTypeSet::floating};
    case OpId::maximum:
    case OpId::minimum: return {EwResult::same, true, DTypeSet::real};
    case OpId::neg:
    case OpId::conj:
    case OpId::sign: return {EwResult::same, true, DTypeSet::numeric};
    case OpId::abs:
    case OpId::real:
    case OpId::imag: return {EwResult::real};
    case OpId::angle: return {EwResult::angle};
    case OpId::compare: return {EwResult::boolean};
    case OpId::select:
    case OpId::clamp: return {EwResult::same};
    default: return {};
  }
}

/// True when exactly the catalogue's elementwise and analytic rows have a rule.
constexpr bool ew_rules_match_catalogue() noexcept {
  for (int i = 0; i < kNumOps; ++i) {
    const bool row = kOps[i].family == OpFamily::elementwise || kOps[i].family == OpFamily::analytic;
    if (row != (ew_rule(static_cast<OpId>(i)).result != EwResult::unknown)) return false;
  }
  return true;
}
static_assert(ew_rules_match_catalogue(), "ew_rule and the catalogue's elementwise/analytic rows disagree (src/ops/elementwise.hpp)");

/// One operand as inference sees it: a tensor's shape and dtype, or a scalar's value.
struct EwOperand {
  const Scalar* scalar = nullptr;  ///< the scalar operand, or nullptr for a tensor
  std::span<const std::int64_t> shape;
  DType dtype = DType::f64;
};

/// The output signature of an elementwise call.
struct EwSignature {
  Dims shape;                  ///< the operands' broadcast shape
  DType compute = DType::f64;  ///< the promoted dtype of the operands (select: of t and f)
  DType out = DType::f64;      ///< the result dtype (EwRule::result)
  DType in[3] = {};            ///< the dtype input k is read as (select's pred: b8)
};

/// The message name of an elementwise call: the op's, or "compare(lt)" for compare.
std::string_view ew_name(OpId op, CompareOp cmp) noexcept;

/// The output signature of elementwise `op` on `ins` (one per catalogue input; `cmp` is
/// compare's attribute). Throws, naming the op: ShapeError when the shapes do not
/// broadcast, DTypeError for a promoted dtype outside the op's catalogue set (an
/// ordered comparison of complex values, a select whose pred is not bool),
/// ArgumentError for a scalar that does not fit an integer or bool compute dtype
/// exactly (3e9 into i32, 2.5 into i64). InternalError for an op outside the families
/// or a wrong operand count.
EwSignature infer_elementwise(OpId op, std::span<const EwOperand> ins, CompareOp cmp = CompareOp::eq);

/// Whether elementwise `op` computing in `compute` checks its operand 1's data
/// (integer div, rem and pow: check_integer_operand).
constexpr bool checks_integer_operand(OpId op, DType compute) noexcept {
  return (op == OpId::div || op == OpId::rem || op == OpId::pow) && is_integer(compute);
}

/// The data check of integer div, rem (NumericalError: division by zero) and pow
/// (ArgumentError: a negative exponent), naming `name`, on the divisor or exponent: the
/// tensor `t`, or the scalar `v` when t is null. Runs before anything is written. While
/// tracing a tensor has no data, so the check passes; the graph's node runs it when the
/// graph runs (compile.cpp).
void check_integer_operand(Session& s, OpId op, std::string_view name, const Tensor* t, const Scalar* v);

}  // namespace tenferro::detail
