// The structural re-indexing ops (structural.hpp: transpose, broadcast_in_dim,
// extract_diagonal, reverse, each a view plus one copy, and iota; Note [Structural ops
// as views plus one copy]): the views and checks (pure), then the front ends, which
// dispatch the copy (ConvertKernel) or iota's kernel through the session's table. The
// fill-writing ops are in structural_fill.cpp, the joining ops in structural_join.cpp.
#include "ops/structural.hpp"

#include <cstring>
#include <string>

#include "core/convert.hpp"
#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/structural.hpp"

namespace tenferro {

// ---------------------------------------------------------------- views and checks (pure)
namespace detail {

Tensor diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2, std::string_view op) {
  const int r = x.rank();
  if (r < 2) throw RankError(op, "needs rank >= 2, got " + describe(x));
  const int a = normalize_axis(axis1, r, op), b = normalize_axis(axis2, r, op);
  if (a == b)
    throw AxisError(op, "axis1 " + std::to_string(axis1) + " and axis2 " + std::to_string(axis2) + " are the same axis of rank " +
                            std::to_string(r));
  Dims shape, strides;
  for (int k = 0; k < r; ++k) {
    if (k == a || k == b) continue;
    shape.push_back(x.extent(k));
    strides.push_back(x.stride(k));
  }
  const std::int64_t d = std::min(x.extent(a), x.extent(b));
  shape.push_back(d);
  // The diagonal steps by the sum of the two strides. x's strides on extent-1 or empty
  // axes may be large enough that the sum overflows (UB; found by fuzz_views): a
  // diagonal of at most one element never steps, so axis a's stride (valid in x) stands
  // in; a longer one's overflow is an IndexError.
  std::int64_t step = 0;
  if (__builtin_add_overflow(x.stride(a), x.stride(b), &step)) step = d <= 1 ? x.stride(a) : checked_add(x.stride(a), x.stride(b), op);
  strides.push_back(step);
  return x.as_strided_view(shape, strides, x.offset());
}

void scalar_to_bytes(const Scalar& v, DType d, std::string_view op, unsigned char* buf) {
  if (v.kind() == Scalar::Kind::complex && !is_complex(d) && v.to<c128>().imag() != 0.0)
    throw ArgumentError(op, "value " + v.to_string() + " has a non-zero imaginary part; it does not fit dtype " + std::string(dtype_name(d)));
  visit_dtype(op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_inexact(dtype_of<T>)) {
      const bool exact = visit_dtype(op, v.natural_dtype(), [&](auto stag) { return exact_value<T>(v.template to<typename decltype(stag)::type>()); });
      if (!exact) throw ArgumentError(op, "value " + v.to_string() + " does not fit dtype " + std::string(dtype_name(d)));
    }
    const T x = v.to<T>();
    std::memcpy(buf, &x, sizeof(T));
  });
}

Tensor broadcast_view_of(const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> dims, std::string_view op) {
  const int r = static_cast<int>(shape.size());
  if (r > kMaxRank) throw RankError(op, "result rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  checked_numel(shape, op);
  if (static_cast<int>(dims.size()) != x.rank())
    throw RankError(op, "broadcast_dimensions " + dims_string(dims) + " has " + std::to_string(dims.size()) + " entries for an operand of rank " +
                            std::to_string(x.rank()));
  if (x.rank() > r) throw RankError(op, "operand rank " + std::to_string(x.rank()) + " exceeds the result rank " + std::to_string(r));
  Dims strides(r, 0);
  std::uint64_t seen = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const int d = normalize_axis(dims[i], r, op);
    if (seen >> d & 1) throw AxisError(op, "broadcast_dimensions " + dims_string(dims) + " repeats result axis " + std::to_string(d));
    seen |= std::uint64_t{1} << d;
    const std::int64_t e = x.extent(i);
    if (e == shape[d]) {
      strides[d] = x.stride(i);
    } else if (e != 1) {
      throw ShapeError(op, "operand axis " + std::to_string(i) + " has extent " + std::to_string(e) + ", result axis " + std::to_string(d) +
                               " has extent " + std::to_string(shape[d]) + " (operand " + x.shape().to_string() + ", result " +
                               dims_string(shape) + ")");
    }
  }
  return x.as_strided_view(shape, strides, x.offset());
}

Tensor reverse_view_of(const Tensor& x, std::span<const std::int64_t> axes, std::string_view op) {
  const std::uint64_t mask = axis_mask(axes, x.rank(), op);
  Tensor v = x;
  for (int i = 0; i < x.rank(); ++i)
    if (mask >> i & 1) v = v.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  return v;
}

int iota_dimension(std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension, std::string_view op) {
  const int r = static_cast<int>(shape.size());
  if (r > kMaxRank) throw RankError(op, "rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  checked_numel(shape, op);
  const int d = normalize_axis(dimension, r, op);
  const std::int64_t n = shape[d];
  const std::int64_t limit = dtype == DType::i32 ? std::int64_t{INT32_MAX} + 1 : INT64_MAX;
  if (n > limit)
    throw ArgumentError(op, "extent " + std::to_string(n) + " along dimension " + std::to_string(d) + " does not fit dtype " +
                                std::string(dtype_name(dtype)));
  return d;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;  // the views above and the output helpers

/// Views need no session and no device: only a defined tensor (the metadata is all they touch).
void check_view_input(const Tensor& x, std::string_view op) {
  if (!x.defined()) throw ArgumentError(op, "input tensor is undefined");
}

/// A compact copy of `view` through the backend's kernel for `op`.
Tensor materialize(Session& s, OpId op, const Tensor& view) {
  const ConvertKernel k = kernel_for(s, op, view.dtype()).fn.convert;
  Tensor r = new_output(s, view.shape(), view.dtype(), op_name(op));
  k(s, view, r);
  return r;
}

/// Validates `out` against `view` (dtype, shape, writable, non-overlapping; aliasing
/// allowed only when out is element for element the view's memory), then copies.
void copy_view_into(Session& s, OpId op, const Tensor& view, const Tensor& out) {
  const std::string_view name = op_name(op);
  const ConvertKernel k = kernel_for(s, op, view.dtype()).fn.convert;
  require_output(out, name, view.dtype(), view.shape(), s.device());
  check_overlap(out, view, name, true);
  k(s, view, out);
}

}  // namespace

Tensor transpose(Session& s, const Tensor& x, std::span<const std::int64_t> perm) {
  check_input(s, x, "transpose");
  check_permutation(perm, x.rank(), "transpose");
  return materialize(s, OpId::transpose, x.permute_view(perm));
}

void transpose_into(Session& s, const Tensor& x, std::span<const std::int64_t> perm, const Tensor& out) {
  check_input(s, x, "transpose");
  check_permutation(perm, x.rank(), "transpose");
  copy_view_into(s, OpId::transpose, x.permute_view(perm), out);
}

Tensor broadcast_in_dim(Session& s, const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> broadcast_dimensions) {
  constexpr std::string_view op = "broadcast_in_dim";
  check_input(s, x, op);
  return materialize(s, OpId::broadcast_in_dim, broadcast_view_of(x, shape, broadcast_dimensions, op));
}

void broadcast_in_dim_into(Session& s, const Tensor& x, std::span<const std::int64_t> broadcast_dimensions, const Tensor& out) {
  constexpr std::string_view op = "broadcast_in_dim";
  check_input(s, x, op);
  require_tensor_on(out, s.device(), op, "out");
  copy_view_into(s, OpId::broadcast_in_dim, broadcast_view_of(x, out.shape(), broadcast_dimensions, op), out);
}

Tensor broadcast_in_dim_view(const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> broadcast_dimensions) {
  constexpr std::string_view op = "broadcast_in_dim_view";
  check_view_input(x, op);
  return broadcast_view_of(x, shape, broadcast_dimensions, op);
}

Tensor extract_diagonal(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "extract_diagonal";
  check_input(s, x, op);
  return materialize(s, OpId::extract_diagonal, diagonal_view(x, axis1, axis2, op));
}

void extract_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out) {
  constexpr std::string_view op = "extract_diagonal";
  check_input(s, x, op);
  copy_view_into(s, OpId::extract_diagonal, diagonal_view(x, axis1, axis2, op), out);
}

Tensor extract_diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "extract_diagonal_view";
  check_view_input(x, op);
  return diagonal_view(x, axis1, axis2, op);
}

Tensor reverse(Session& s, const Tensor& x, std::span<const std::int64_t> axes) {
  constexpr std::string_view op = "reverse";
  check_input(s, x, op);
  return materialize(s, OpId::reverse, reverse_view_of(x, axes, op));
}

void reverse_into(Session& s, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out) {
  constexpr std::string_view op = "reverse";
  check_input(s, x, op);
  copy_view_into(s, OpId::reverse, reverse_view_of(x, axes, op), out);
}

Tensor reverse_view(const Tensor& x, std::span<const std::int64_t> axes) {
  constexpr std::string_view op = "reverse_view";
  check_view_input(x, op);
  return reverse_view_of(x, axes, op);
}

Tensor iota(Session& s, std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension) {
  constexpr std::string_view op = "iota";
  s.check(op);
  require_valid_dtype(dtype, op);  // Note [Enums at the API boundary]
  const int d = iota_dimension(shape, dtype, dimension, op);
  const IotaKernel k = kernel_for(s, OpId::iota, dtype).fn.iota;
  Tensor r = new_output(s, shape, dtype, op);
  k(s, r, d);
  return r;
}

void iota_into(Session& s, std::int64_t dimension, const Tensor& out) {
  constexpr std::string_view op = "iota";
  s.check(op);
  require_tensor_on(out, s.device(), op, "out");
  const Shape shape = out.shape();
  const int d = iota_dimension(shape, out.dtype(), dimension, op);
  const IotaKernel k = kernel_for(s, OpId::iota, out.dtype()).fn.iota;
  require_output(out, op, out.dtype(), shape, s.device());
  k(s, out, d);
}

}  // namespace tenferro
