#pragma once
// The reduction family's op layer (Note [Reductions in the op layer]): the typed
// attributes, the pure inference function, and the per-op rules it applies.
//
// Note [Reductions in the op layer]
// A reduction (sum prod max min mean sum_squares argmax argmin logsumexp: the
// catalogue rows of family `reduction`) is three pieces:
//   - infer_reduce (reduce_infer.cpp): x's shape and dtype and ReduceAttrs in, the
//     output signature out (shape, dtype, axis mask), or the typed error. Pure: no
//     data, no session, no device; the catalogue row gives the name and dtype set, and
//     reduce_rule below the result dtype and whether an empty axis is an error.
//   - the front end (reduce.cpp): session check, x on the session's device, infer,
//     kernel_for(session, op, dtype) from the session's backend table, the output
//     prepared once for the allocating and `_into` forms, then the kernel.
//   - the kernels (src/cpu/reduce.cpp, namespace tenferro::cpu), listed in the CPU
//     table (src/cpu/kernel_table.cpp) as ReduceKernel entries, which never re-validate.
// Example: sum(s, x [2, 3, 4] f64, axes {-1, 0}) → mask 0b101, out [3] f64;
// keepdims → out [1, 3, 1].
// The two switches over ops (reduce_rule here, cpu::reduce_kernel) are checked against
// the catalogue at compile time: every reduction row has a rule and a kernel, and no
// other row has a rule.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>

#include "ops/catalog.hpp"
#include "tenferro/dtype.hpp"
#include "tenferro/op_attrs.hpp"
#include "tenferro/shape.hpp"

namespace tenferro::detail {

// The attributes are tenferro::ReduceAttrs (tenferro/op_attrs.hpp, the catalogue's
// struct for every reduction row): negative axes count from the end; `all_axes` reduces
// every axis and ignores `axes`; `keepdims` keeps reduced axes with extent 1.
using tenferro::ReduceAttrs;

/// The output signature of a reduction (a stack array: the `_into` forms allocate
/// nothing).
struct ReduceSignature {
  DType dtype = DType::f64;
  std::uint64_t mask = 0;  ///< bit i set: axis i of x is reduced
  int rank = 0;
  std::int64_t shape[kMaxRank];
  std::span<const std::int64_t> shape_span() const noexcept { return {shape, static_cast<std::size_t>(rank)}; }
};

/// How a reduction's result dtype follows x's.
enum class ReduceResult : std::uint8_t {
  unknown,  ///< not a reduction
  same,     ///< x's dtype (max, min, logsumexp)
  count,    ///< x's dtype, bool → i64 (sum, prod: NumPy's count of true elements)
  mean,     ///< inexact dtypes stay, integers and bool give f64
  real,     ///< x's real dtype (sum_squares: sum of |z|²)
  index,    ///< i64 indices into the reduced axes (argmax, argmin)
};

/// The per-op rule of a reduction.
struct ReduceRule {
  ReduceResult result = ReduceResult::unknown;
  bool needs_elements = false;  ///< no identity: an empty reduced axis is a ShapeError
};

/// The rule of `op` (result `unknown` for an op that is not a reduction).
constexpr ReduceRule reduce_rule(OpId op) noexcept {
  switch (op) {
    case OpId::sum:
    case OpId::prod: return {ReduceResult::count, false};
    case OpId::mean: return {ReduceResult::mean, false};
    case OpId::sum_squares: return {ReduceResult::real, false};
    case OpId::logsumexp: return {ReduceResult::same, false};
    case OpId::max:
    case OpId::min: return {ReduceResult::same, true};
    case OpId::argmax:
    case OpId::argmin: return {ReduceResult::index, true};
    default: return {};
  }
}

/// True when exactly the catalogue's reduction rows have a rule.
constexpr bool reduce_rules_match_catalogue() noexcept {
  for (int i = 0; i < kNumOps; ++i)
    if ((kOps[i].family == OpFamily::reduction) != (reduce_rule(static_cast<OpId>(i)).result != ReduceResult::unknown)) return false;
  return true;
}
static_assert(reduce_rules_match_catalogue(), "reduce_rule and the catalogue's reduction rows disagree (src/ops/reduce.hpp)");

/// The output signature of reduction `op` on x of `shape` and `dtype`. Throws, naming
/// the op: DTypeError for a dtype outside the op's catalogue set (or not a dtype),
/// AxisError for an axis outside [-rank, rank) or a repeated one, ShapeError for an
/// empty reduced axis of an op without an identity. InternalError when `op` is not a
/// reduction.
ReduceSignature infer_reduce(OpId op, std::span<const std::int64_t> shape, DType dtype, const ReduceAttrs& attrs);

}  // namespace tenferro::detail
