// Structural ops that only re-index their input: transpose, broadcast_in_dim,
// extract_diagonal, reverse (each a view plus a copy), and iota (a broadcast view of a
// small arange). The fill-writing ops (embed_diagonal, tril, triu, pad) and the joining
// ops (concatenate, stack) live in structural_fill.cpp and structural_join.cpp.
//
// Note [Structural ops as views plus one copy]
// Every re-indexing op is "build the strided view the op describes, then copy it":
// transpose(x, {1, 0}) on a compact [M, N] x is the view with strides {M, 1} copied into
// a compact [N, M] output. The view is built from metadata only (no element is read),
// all validation happens while building it, and the copy runs through one same-dtype
// LoopPlan (transpose_copy.hpp), so strided, negative-stride and broadcast inputs are
// read in place and a copy that changes memory order takes the blocked kernel. An
// `_into` output identical to the view, element for element, makes the copy a no-op,
// which is why these ops accept an output aliasing their input exactly.
#include "cpu/structural_common.hpp"

#include <string>

namespace tenferro {

namespace detail {

void check_input(Session& s, const Tensor& x, std::string_view op) {
  s.check(op);
  require_cpu_tensor(x, op, "input");
}

// Views need no session and no device: only a defined tensor (the metadata is all they touch).
void check_view_input(const Tensor& x, std::string_view op) {
  if (!x.defined()) throw ArgumentError(op, "input tensor is undefined");
}

Tensor materialize(Session& s, const Tensor& view, std::string_view op) {
  Tensor r = new_output(view.shape(), view.dtype(), op);
  copy_same_dtype(s, view, r);
  return r;
}

void copy_view_into(Session& s, const Tensor& view, const Tensor& out, std::string_view op) {
  require_output(out, op, view.dtype(), view.shape());
  check_overlap(out, view, op, true);
  copy_same_dtype(s, view, out);
}

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
  shape.push_back(std::min(x.extent(a), x.extent(b)));
  strides.push_back(x.stride(a) + x.stride(b));
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

}  // namespace detail

using namespace detail;  // this file implements the public structural ops

namespace {

// ---------------------------------------------------------------- broadcast_in_dim

/// The view of broadcast_in_dim (validation included).
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

/// The view of reverse (validation included).
Tensor reverse_view_of(const Tensor& x, std::span<const std::int64_t> axes, std::string_view op) {
  const std::uint64_t mask = axis_mask(axes, x.rank(), op);
  Tensor v = x;
  for (int i = 0; i < x.rank(); ++i)
    if (mask >> i & 1) v = v.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  return v;
}

// ---------------------------------------------------------------- iota

/// Validates iota's arguments; returns the normalized dimension.
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

/// out[idx] = idx[d]: a compact arange of extent(d) values broadcast along the other
/// axes and copied (Note [Structural ops as views plus one copy]).
void iota_run(Session& s, int d, const Tensor& out) {
  if (out.numel() == 0) return;  // also keeps an arange of a huge extent from being built
  const std::int64_t n = out.extent(d);
  const Tensor line = Tensor::empty({n}, out.dtype());
  visit_dtype("iota", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(line.mutable_data("iota"));
    for (std::int64_t k = 0; k < n; ++k) p[k] = cast_value<T>(k);
  });
  Dims strides(out.rank(), 0);
  strides[d] = 1;
  copy_same_dtype(s, line.as_strided_view(out.shape(), strides, 0), out);
}

}  // namespace

// ---------------------------------------------------------------- transpose

Tensor transpose(Session& s, const Tensor& x, std::span<const std::int64_t> perm) {
  constexpr std::string_view op = "transpose";
  check_input(s, x, op);
  check_permutation(perm, x.rank(), op);
  return materialize(s, x.permute_view(perm), op);
}

void transpose_into(Session& s, const Tensor& x, std::span<const std::int64_t> perm, const Tensor& out) {
  constexpr std::string_view op = "transpose";
  check_input(s, x, op);
  check_permutation(perm, x.rank(), op);
  copy_view_into(s, x.permute_view(perm), out, op);
}

// ---------------------------------------------------------------- broadcast_in_dim

Tensor broadcast_in_dim(Session& s, const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> broadcast_dimensions) {
  constexpr std::string_view op = "broadcast_in_dim";
  check_input(s, x, op);
  return materialize(s, broadcast_view_of(x, shape, broadcast_dimensions, op), op);
}

void broadcast_in_dim_into(Session& s, const Tensor& x, std::span<const std::int64_t> broadcast_dimensions, const Tensor& out) {
  constexpr std::string_view op = "broadcast_in_dim";
  check_input(s, x, op);
  require_cpu_tensor(out, op, "out");
  copy_view_into(s, broadcast_view_of(x, out.shape(), broadcast_dimensions, op), out, op);
}

Tensor broadcast_in_dim_view(const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> broadcast_dimensions) {
  constexpr std::string_view op = "broadcast_in_dim_view";
  check_view_input(x, op);
  return broadcast_view_of(x, shape, broadcast_dimensions, op);
}

// ---------------------------------------------------------------- extract_diagonal

Tensor extract_diagonal(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "extract_diagonal";
  check_input(s, x, op);
  return materialize(s, diagonal_view(x, axis1, axis2, op), op);
}

void extract_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out) {
  constexpr std::string_view op = "extract_diagonal";
  check_input(s, x, op);
  copy_view_into(s, diagonal_view(x, axis1, axis2, op), out, op);
}

Tensor extract_diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "extract_diagonal_view";
  check_view_input(x, op);
  return diagonal_view(x, axis1, axis2, op);
}

// ---------------------------------------------------------------- reverse

Tensor reverse(Session& s, const Tensor& x, std::span<const std::int64_t> axes) {
  constexpr std::string_view op = "reverse";
  check_input(s, x, op);
  return materialize(s, reverse_view_of(x, axes, op), op);
}

void reverse_into(Session& s, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out) {
  constexpr std::string_view op = "reverse";
  check_input(s, x, op);
  copy_view_into(s, reverse_view_of(x, axes, op), out, op);
}

Tensor reverse_view(const Tensor& x, std::span<const std::int64_t> axes) {
  constexpr std::string_view op = "reverse_view";
  check_view_input(x, op);
  return reverse_view_of(x, axes, op);
}

// ---------------------------------------------------------------- iota

Tensor iota(Session& s, std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension) {
  constexpr std::string_view op = "iota";
  s.check(op);
  require_valid_dtype(dtype, op);  // Note [Enums at the API boundary]
  const int d = iota_dimension(shape, dtype, dimension, op);
  Tensor r = new_output(shape, dtype, op);
  iota_run(s, d, r);
  return r;
}

void iota_into(Session& s, std::int64_t dimension, const Tensor& out) {
  constexpr std::string_view op = "iota";
  s.check(op);
  require_cpu_tensor(out, op, "out");
  const Shape shape = out.shape();
  const int d = iota_dimension(shape, out.dtype(), dimension, op);
  require_output(out, op, out.dtype(), shape);
  iota_run(s, d, out);
}

}  // namespace tenferro
