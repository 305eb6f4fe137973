// The ops along one axis (ops.hpp: cumsum, cumprod, softmax, log_softmax): pure
// inference (x's shape and dtype out, the axis normalized), then one front end for both
// forms that dispatches through the session's kernel table (AxisKernel).
#include "ops/along_axis.hpp"

#include <string>

#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

namespace detail {

int infer_along_axis(OpId op, std::span<const std::int64_t> shape, DType dtype, const AxisAttrs& attrs) {
  const std::string_view name = op_name(op);
  if (op_info(op).family != OpFamily::along_axis) throw InternalError(name, "not an op along one axis");
  const DTypeSet set = op_info(op).dtypes;
  if (!in_set(dtype, set)) throw_dtype_not_in_set(name, dtype, set);
  const auto r = static_cast<std::int64_t>(shape.size());
  if (attrs.axis < -r || attrs.axis >= r)
    throw AxisError(name, "axis " + std::to_string(attrs.axis) + " out of range for x of shape " + dims_string(shape) + " (rank " +
                              std::to_string(r) + ")");
  return static_cast<int>(attrs.axis < 0 ? attrs.axis + r : attrs.axis);
}

}  // namespace detail

namespace {

/// One call, both forms (`out` null: allocate into `result`).
template <OpId op> void along_axis(Session& s, const Tensor& x, std::int64_t axis, const Tensor* out, Tensor& result) {
  constexpr std::string_view name = op_name(op);
  s.check(name);
  detail::require_tensor_on(x, s.device(), name, "x");
  std::int64_t buf[kMaxRank];
  const std::span<const std::int64_t> shape = detail::extents_of(x, buf);
  const int a = detail::infer_along_axis(op, shape, x.dtype(), AxisAttrs{.axis = axis});
  const detail::AxisKernel k = detail::kernel_for(s, op, x.dtype()).fn.along_axis;
  if (out) {
    detail::require_output(*out, name, x.dtype(), shape, s.device());
    detail::check_overlap(*out, x, name, /*same_ok=*/true);
  } else {
    result = detail::new_output(s, shape, x.dtype(), name);
  }
  k(s, x, out ? *out : result, a);
}

}  // namespace

#define TENFERRO_DEFINE_AXIS_OP(name)                                                  \
  Tensor name(Session& s, const Tensor& x, std::int64_t axis) {                        \
    Tensor r;                                                                          \
    along_axis<OpId::name>(s, x, axis, nullptr, r);                                    \
    return r;                                                                          \
  }                                                                                    \
  void name##_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& out) { \
    Tensor unused;                                                                     \
    along_axis<OpId::name>(s, x, axis, &out, unused);                                  \
  }
TENFERRO_DEFINE_AXIS_OP(cumsum)
TENFERRO_DEFINE_AXIS_OP(cumprod)
TENFERRO_DEFINE_AXIS_OP(softmax)
TENFERRO_DEFINE_AXIS_OP(log_softmax)
#undef TENFERRO_DEFINE_AXIS_OP

}  // namespace tenferro
