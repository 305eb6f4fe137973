// Shape and dtype inference of the reductions (Note [Reductions in the op layer]).
#include <string>

#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "ops/reduce.hpp"

namespace tenferro::detail {

namespace {

DType result_dtype(ReduceResult r, DType d) noexcept {
  switch (r) {
    case ReduceResult::count: return is_bool(d) ? DType::i64 : d;
    case ReduceResult::mean: return is_inexact(d) ? d : DType::f64;
    case ReduceResult::real: return real_dtype(d);
    case ReduceResult::index: return DType::i64;
    case ReduceResult::same:
    case ReduceResult::unknown: break;
  }
  return d;
}

}  // namespace

ReduceSignature infer_reduce(OpId op, std::span<const std::int64_t> shape, DType dtype, const ReduceAttrs& attrs) {
  const std::string_view name = op_name(op);
  const ReduceRule rule = reduce_rule(op);
  if (rule.result == ReduceResult::unknown) throw InternalError(name, "infer_reduce called for an op that is not a reduction");
  require_valid_dtype(dtype, name);
  const DTypeSet set = op_info(op).dtypes;
  if (!in_set(dtype, set)) throw_dtype_not_in_set(name, dtype, set);
  const int rank = static_cast<int>(shape.size());
  ReduceSignature sig;
  sig.mask = attrs.all_axes ? (rank == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << rank) - 1) : axis_mask(attrs.axes, rank, name);
  sig.dtype = result_dtype(rule.result, dtype);
  for (int i = 0; i < rank; ++i) {
    const bool reduced = (sig.mask >> i & 1) != 0;
    if (reduced && shape[static_cast<std::size_t>(i)] == 0 && rule.needs_elements)
      throw ShapeError(name, "x has shape " + dims_string(shape) + ": axis " + std::to_string(i) + " is empty and " + std::string(name) +
                                 " of no elements is undefined");
    if (!reduced) sig.shape[sig.rank++] = shape[static_cast<std::size_t>(i)];
    else if (attrs.keepdims) sig.shape[sig.rank++] = 1;
  }
  return sig;
}

}  // namespace tenferro::detail
