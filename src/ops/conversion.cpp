// The conversion family (ops.hpp: convert, cast, copy_into, to_contiguous, reshape and
// their `_into` forms; Note [Conversions in the op layer]): inference, then the front
// ends, which prepare outputs once and dispatch through the session's kernel table.
#include "ops/conversion.hpp"

#include <string>

#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {

ConversionSignature infer_conversion(OpId op, std::span<const std::int64_t> shape, DType dtype, const ConvertAttrs& attrs) {
  const std::string_view name = op_name(op);
  require_valid_dtype(dtype, name);
  require_valid_dtype(attrs.dtype, name);  // Note [Enums at the API boundary]
  if (op == OpId::copy && attrs.dtype != dtype)
    throw DTypeError(name, "copy keeps the dtype: " + std::string(dtype_name(dtype)) + " to " + std::string(dtype_name(attrs.dtype)) +
                               " (use convert or cast)");
  return {Dims(shape), attrs.dtype};
}

ConversionSignature infer_reshape_op(std::span<const std::int64_t> shape, DType dtype, const ReshapeAttrs& attrs) {
  std::int64_t numel = 1;
  for (std::int64_t e : shape) numel *= e;
  return {infer_reshape(attrs.shape.span(), numel, "reshape"), dtype};
}

void infer_copy_into(std::span<const std::int64_t> src, DType src_dtype, std::span<const std::int64_t> dst, DType dst_dtype) {
  constexpr std::string_view op = "copy_into";
  if (src_dtype != dst_dtype)
    throw DTypeError(op, "src dtype " + std::string(dtype_name(src_dtype)) + " differs from dst dtype " + std::string(dtype_name(dst_dtype)) +
                             " (use convert_into or cast_into)");
  const Dims b = broadcast_shapes(dst, src, op);
  if (b.span().size() != dst.size() || !std::equal(dst.begin(), dst.end(), b.span().begin()))
    throw ShapeError(op, "source shape " + dims_string(src) + " does not broadcast to destination " + dims_string(dst));
}

void check_exact_conversion(Session& s, const Tensor& x, DType to) {
  // While tracing there is no data: the graph's convert node runs this check when it
  // runs (compile.cpp; Note [Tracing] in tenferro/graph.hpp).
  if (x.dtype() == to || s.device() == DeviceKind::trace) return;
  const std::int64_t k = data_checks(s, "convert").first_inexact(s, x, to);
  if (k < 0) return;
  const Dims idx = position_index(x, k);
  throw ArgumentError("convert", "element " + idx.to_string() + " = " + x.at(idx.span()).to_string() + " does not convert exactly to " +
                                     std::string(dtype_name(to)) + " (use cast for a lossy conversion)");
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

/// The session's conversion kernel for `op` on x's dtype.
detail::ConvertKernel kernel(Session& s, OpId op, const Tensor& x) { return detail::kernel_for(s, op, x.dtype()).fn.convert; }

/// convert / cast, both forms (`out` null: allocate into `result`).
template <OpId op> void convert_to(Session& s, const Tensor& x, DType to, const Tensor* out, Tensor& result) {
  constexpr std::string_view name = op_name(op);
  s.check(name);
  detail::require_tensor_on(x, s.device(), name, "input");
  std::int64_t buf[kMaxRank];
  const detail::ConversionSignature g = detail::infer_conversion(op, detail::extents_of(x, buf), x.dtype(), ConvertAttrs{.dtype = to});
  const detail::ConvertKernel k = kernel(s, op, x);
  if (out) {
    detail::require_output(*out, name, g.dtype, g.shape.span(), s.device());
    detail::check_overlap(*out, x, name, /*same_ok=*/true);
  }
  if constexpr (op == OpId::convert) detail::check_exact_conversion(s, x, to);
  if (!out) result = detail::new_output(s, g.shape.span(), g.dtype, name);
  k(s, x, out ? *out : result);
}

/// The `_into` forms of convert and cast take the result dtype from out.
template <OpId op> void convert_into_out(Session& s, const Tensor& x, const Tensor& out) {
  if (!out.defined()) throw ArgumentError(op_name(op), "out tensor is undefined");
  Tensor unused;
  convert_to<op>(s, x, out.dtype(), &out, unused);
}

}  // namespace

Tensor convert(Session& s, const Tensor& x, DType dtype) {
  Tensor r;
  convert_to<OpId::convert>(s, x, dtype, nullptr, r);
  return r;
}
void convert_into(Session& s, const Tensor& x, const Tensor& out) { convert_into_out<OpId::convert>(s, x, out); }
Tensor cast(Session& s, const Tensor& x, DType dtype) {
  Tensor r;
  convert_to<OpId::cast>(s, x, dtype, nullptr, r);
  return r;
}
void cast_into(Session& s, const Tensor& x, const Tensor& out) { convert_into_out<OpId::cast>(s, x, out); }

void copy_into(Session& s, const Tensor& src, const Tensor& dst) {
  constexpr std::string_view op = "copy_into";
  s.check(op);
  detail::require_tensor_on(src, s.device(), op, "src");
  detail::require_tensor_on(dst, s.device(), op, "dst");
  std::int64_t bs[kMaxRank], bd[kMaxRank];
  const std::span<const std::int64_t> dst_shape = detail::extents_of(dst, bd);
  detail::infer_copy_into(detail::extents_of(src, bs), src.dtype(), dst_shape, dst.dtype());
  const detail::ConvertKernel k = kernel(s, OpId::copy, src);
  detail::require_output(dst, op, dst.dtype(), dst_shape, s.device());
  detail::check_overlap(dst, src, op, /*same_ok=*/true);
  k(s, src, dst);
}

Tensor to_contiguous(Session& s, const Tensor& x) {
  constexpr std::string_view op = "to_contiguous";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "input");
  if (x.is_contiguous() && !x.read_only()) return x;
  const detail::ConvertKernel k = kernel(s, OpId::copy, x);
  Tensor r = detail::new_like(x, x.dtype());
  k(s, x, r);
  return r;
}

void to_contiguous_into(Session& s, const Tensor& x, const Tensor& out) {
  constexpr std::string_view op = "to_contiguous";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "input");
  std::int64_t buf[kMaxRank];
  const detail::ConvertKernel k = kernel(s, OpId::copy, x);
  detail::require_output(out, op, x.dtype(), detail::extents_of(x, buf), s.device());
  detail::check_overlap(out, x, op, /*same_ok=*/false);
  k(s, x, out);
}

Tensor reshape(Session& s, const Tensor& x, std::span<const std::int64_t> shape) {
  s.check("reshape");
  detail::require_tensor_on(x, s.device(), "reshape", "input");
  std::int64_t buf[kMaxRank];
  const std::span<const std::int64_t> xs = detail::extents_of(x, buf);
  const Dims target = detail::infer_reshape_op(xs, x.dtype(), ReshapeAttrs{.shape = Dims(shape)}).shape;
  Dims strides;
  if (detail::reshape_strides(xs, x.strides(), target, strides) && !x.read_only()) return x.reshape_view(target);
  const detail::ConvertKernel k = kernel(s, OpId::reshape, x);
  Tensor r = detail::new_like(x, x.dtype());
  k(s, x, r);
  return r.reshape_view(target);
}

void reshape_into(Session& s, const Tensor& x, std::span<const std::int64_t> shape, const Tensor& out) {
  constexpr std::string_view op = "reshape";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "input");
  std::int64_t buf[kMaxRank];
  const std::span<const std::int64_t> xs = detail::extents_of(x, buf);
  const Dims target = detail::infer_reshape_op(xs, x.dtype(), ReshapeAttrs{.shape = Dims(shape)}).shape;
  const detail::ConvertKernel k = kernel(s, OpId::reshape, x);
  detail::require_output(out, op, x.dtype(), target, s.device());
  detail::check_overlap(out, x, op, /*same_ok=*/false);
  // One strided copy when either side can be viewed in the other's shape (metadata
  // only); otherwise a compact copy of x (pooled), then a copy.
  Dims strides;
  if (detail::reshape_strides(xs, x.strides(), target, strides)) {
    k(s, x.reshape_view(target), out);
  } else if (detail::reshape_strides(out.shape(), out.strides(), xs, strides)) {
    k(s, x, out.reshape_view(xs));
  } else {
    Tensor c = detail::new_like(x, x.dtype());
    k(s, x, c);
    k(s, c.reshape_view(target), out);
  }
}

}  // namespace tenferro
