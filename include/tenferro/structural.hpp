#pragma once
/// \file structural.hpp
/// Structural operations: transpose, broadcast_in_dim, extract/embed_diagonal, tril,
/// triu, concatenate, stack, reverse, pad, iota. Semantics follow StableHLO unless a
/// declaration says otherwise; axes are column-major (first axis fastest) and negative
/// axes count from the end.
///
/// Forms: `op` returns a new compact tensor; `op_into` writes into a caller tensor of
/// the result shape and dtype, which may be any writable strided view (elements outside
/// it are never touched); `op_view` (where the result is a pure re-indexing) returns a
/// view sharing x's storage, read-only exactly when it repeats elements (broadcast) or x
/// is read-only. Inputs may be any strided view (transposed, negative-stride, broadcast)
/// and are read in place, never materialized first. Views take the session only to
/// check it: they run nothing.
///
/// Validation is complete before anything is written: on any error `out` is untouched.
/// Common errors (every op, in this order): SessionEntryError when the session is not
/// usable on this thread; ArgumentError for an undefined tensor;
/// SessionEntryError(IncompatibleContext) for a tensor not on the CPU; the op's own
/// errors listed below; then, for `_into`, DTypeError for a wrong `out` dtype,
/// ShapeError for a wrong `out` shape, ArgumentError for a read-only `out`, an `out`
/// whose elements overlap each other, or an `out` overlapping an input in memory (ops
/// that only re-index — transpose, broadcast_in_dim, extract_diagonal, reverse — and
/// tril/triu accept an `out` that is element for element the same memory as the input
/// they read, i.e. in place).

#include <initializer_list>
#include <span>

#include "tenferro/ops.hpp"

namespace tenferro {

// ---------------------------------------------------------------- transpose
/// Result axis i is x's axis perm[i] (StableHLO transpose), copied compactly; the
/// metadata-only form is Tensor::permute_view. The copy is cache-blocked when it
/// changes memory order. RankError when perm's length is not x's rank; AxisError for an
/// entry out of range or repeated.
TENFERRO_API Tensor transpose(Session& s, const Tensor& x, std::span<const std::int64_t> perm);
inline Tensor transpose(Session& s, const Tensor& x, std::initializer_list<std::int64_t> perm) {
  return transpose(s, x, std::span(perm.begin(), perm.size()));
}
/// transpose into `out` (shape: x's extents permuted).
TENFERRO_API void transpose_into(Session& s, const Tensor& x, std::span<const std::int64_t> perm, const Tensor& out);
inline void transpose_into(Session& s, const Tensor& x, std::initializer_list<std::int64_t> perm, const Tensor& out) {
  transpose_into(s, x, std::span(perm.begin(), perm.size()), out);
}

// ---------------------------------------------------------------- broadcast_in_dim
/// StableHLO broadcast_in_dim: x's axis i becomes result axis broadcast_dimensions[i];
/// result axes not named are new (stretched); x's extent on axis i must equal
/// shape[broadcast_dimensions[i]] or be 1 (stretched). The dimensions must be distinct
/// but need not be sorted (a transpose is allowed). Example: x [3], shape [4, 3], dims
/// {1} gives rows of x repeated: r[i, j] = x[j].
/// ShapeError for a negative extent in `shape` or an extent that neither matches nor is
/// 1; IndexError when the element count overflows; RankError when the number of
/// dimensions is not x's rank or exceeds the result rank; AxisError for a dimension
/// out of range [-rank(shape), rank(shape)) or repeated.
TENFERRO_API Tensor broadcast_in_dim(Session& s, const Tensor& x, std::span<const std::int64_t> shape,
                                     std::span<const std::int64_t> broadcast_dimensions);
inline Tensor broadcast_in_dim(Session& s, const Tensor& x, std::initializer_list<std::int64_t> shape,
                               std::initializer_list<std::int64_t> broadcast_dimensions) {
  return broadcast_in_dim(s, x, std::span(shape.begin(), shape.size()),
                          std::span(broadcast_dimensions.begin(), broadcast_dimensions.size()));
}
/// broadcast_in_dim into `out`; the result shape is out's shape.
TENFERRO_API void broadcast_in_dim_into(Session& s, const Tensor& x, std::span<const std::int64_t> broadcast_dimensions,
                                        const Tensor& out);
inline void broadcast_in_dim_into(Session& s, const Tensor& x, std::initializer_list<std::int64_t> broadcast_dimensions,
                                  const Tensor& out) {
  broadcast_in_dim_into(s, x, std::span(broadcast_dimensions.begin(), broadcast_dimensions.size()), out);
}
/// broadcast_in_dim as a view (zero strides on stretched axes: read-only when any axis
/// of extent > 1 is stretched). Metadata only: no session. Same validation errors as
/// broadcast_in_dim (ArgumentError for an undefined x).
TENFERRO_API Tensor broadcast_in_dim_view(const Tensor& x, std::span<const std::int64_t> shape,
                                          std::span<const std::int64_t> broadcast_dimensions);
inline Tensor broadcast_in_dim_view(const Tensor& x, std::initializer_list<std::int64_t> shape,
                                    std::initializer_list<std::int64_t> broadcast_dimensions) {
  return broadcast_in_dim_view(x, std::span(shape.begin(), shape.size()),
                               std::span(broadcast_dimensions.begin(), broadcast_dimensions.size()));
}

// ---------------------------------------------------------------- diagonals
/// The diagonal over axes axis1 and axis2 (NumPy's diagonal, offset 0): both axes are
/// removed, the other axes keep their order, and the diagonal, of length
/// min(extent(axis1), extent(axis2)), is appended as the LAST axis:
/// r[k..., d] = x[..., d (at axis1), ..., d (at axis2), ...].
/// Example: x [N, N, B] with axes (0, 1) gives [B, N]; x [M, N] gives [min(M, N)].
/// RankError when x has rank < 2; AxisError for an axis out of range or axis1 == axis2
/// (after normalization).
TENFERRO_API Tensor extract_diagonal(Session& s, const Tensor& x, std::int64_t axis1 = 0, std::int64_t axis2 = 1);
/// extract_diagonal into `out`.
TENFERRO_API void extract_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out);
/// extract_diagonal as a strided view (diagonal stride = stride(axis1) + stride(axis2));
/// writable when x is. Metadata only: no session. Same validation errors as
/// extract_diagonal.
TENFERRO_API Tensor extract_diagonal_view(const Tensor& x, std::int64_t axis1 = 0, std::int64_t axis2 = 1);

/// The inverse of extract_diagonal (PyTorch's diag_embed): x's LAST axis, of length n,
/// becomes the diagonal of a square n×n pair of result axes axis1 and axis2; the result
/// has rank x.rank() + 1, axis1 and axis2 are result axes (normalized against that
/// rank), and x's other axes fill the remaining result axes in order. Off-diagonal
/// elements are zero. So extract_diagonal(embed_diagonal(x, a1, a2), a1, a2) == x.
/// Example: x [B, N] with axes (0, 1) gives [N, N, B]; x [N] gives the N×N diag(x).
/// RankError when x has rank 0; AxisError for an axis out of range or axis1 == axis2.
TENFERRO_API Tensor embed_diagonal(Session& s, const Tensor& x, std::int64_t axis1 = 0, std::int64_t axis2 = 1);
/// embed_diagonal into `out` (every element of out is written: zeros and the diagonal).
/// `out` may not overlap x at all.
TENFERRO_API void embed_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out);

// ---------------------------------------------------------------- triangles
/// Lower triangle of the matrices over the first two axes (batched over the trailing
/// axes; batch axes trail): keeps x[i, j, ...] where j - i <= offset, zero elsewhere
/// (NumPy's tril with k = offset: 0 the main diagonal, > 0 above it, < 0 below).
/// RankError when x has rank < 2.
TENFERRO_API Tensor tril(Session& s, const Tensor& x, std::int64_t offset = 0);
/// tril into `out`; `out` may be x itself (in place: only the zeroed part is written).
TENFERRO_API void tril_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out);
/// Upper triangle: keeps x[i, j, ...] where j - i >= offset, zero elsewhere. RankError
/// when x has rank < 2.
TENFERRO_API Tensor triu(Session& s, const Tensor& x, std::int64_t offset = 0);
/// triu into `out`; `out` may be x itself (in place).
TENFERRO_API void triu_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out);

// ---------------------------------------------------------------- joining
/// The tensors joined along `axis` (StableHLO concatenate). Every tensor has the same
/// rank (>= 1) and the same extents except along `axis`; dtypes promote
/// (tenferro::promote) and the result has the promoted dtype.
/// ArgumentError for an empty list or an undefined tensor; RankError for differing
/// ranks; AxisError for an axis out of range (every rank-0 list); ShapeError for
/// extents that differ off `axis`; IndexError when the joined extent overflows.
TENFERRO_API Tensor concatenate(Session& s, std::span<const Tensor> tensors, std::int64_t axis);
inline Tensor concatenate(Session& s, std::initializer_list<Tensor> tensors, std::int64_t axis) {
  return concatenate(s, std::span(tensors.begin(), tensors.size()), axis);
}
/// concatenate into `out` (dtype: the promoted dtype). `out` may not overlap any input.
TENFERRO_API void concatenate_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out);
inline void concatenate_into(Session& s, std::initializer_list<Tensor> tensors, std::int64_t axis, const Tensor& out) {
  concatenate_into(s, std::span(tensors.begin(), tensors.size()), axis, out);
}

/// The tensors stacked along a new axis `axis` of the result (in [-(r+1), r+1) for
/// inputs of rank r): result[..., k (at axis), ...] = tensors[k][...]. Every tensor has
/// the same shape; dtypes promote. ArgumentError for an empty list or an undefined
/// tensor; ShapeError for differing shapes; AxisError for an axis out of range.
TENFERRO_API Tensor stack(Session& s, std::span<const Tensor> tensors, std::int64_t axis = 0);
inline Tensor stack(Session& s, std::initializer_list<Tensor> tensors, std::int64_t axis = 0) {
  return stack(s, std::span(tensors.begin(), tensors.size()), axis);
}
/// stack into `out`. `out` may not overlap any input.
TENFERRO_API void stack_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out);
inline void stack_into(Session& s, std::initializer_list<Tensor> tensors, std::int64_t axis, const Tensor& out) {
  stack_into(s, std::span(tensors.begin(), tensors.size()), axis, out);
}

// ---------------------------------------------------------------- reverse
/// Elements reversed along each listed axis (StableHLO reverse); an empty list copies.
/// AxisError for an axis out of range or repeated.
TENFERRO_API Tensor reverse(Session& s, const Tensor& x, std::span<const std::int64_t> axes);
inline Tensor reverse(Session& s, const Tensor& x, std::initializer_list<std::int64_t> axes) {
  return reverse(s, x, std::span(axes.begin(), axes.size()));
}
/// reverse into `out` (x's shape).
TENFERRO_API void reverse_into(Session& s, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out);
inline void reverse_into(Session& s, const Tensor& x, std::initializer_list<std::int64_t> axes, const Tensor& out) {
  reverse_into(s, x, std::span(axes.begin(), axes.size()), out);
}
/// reverse as a view (negative strides); writable when x is. Metadata only: no session.
/// Same validation errors as reverse.
TENFERRO_API Tensor reverse_view(const Tensor& x, std::span<const std::int64_t> axes);
inline Tensor reverse_view(const Tensor& x, std::initializer_list<std::int64_t> axes) {
  return reverse_view(x, std::span(axes.begin(), axes.size()));
}

// ---------------------------------------------------------------- pad
/// StableHLO pad: along axis i, low[i] padding elements before, high[i] after and
/// interior[i] between neighbouring elements, all equal to `padding_value` (converted
/// to x's dtype). Negative low/high crop (the cropped region may include interior
/// padding). Result extent: low + high + e + max(e - 1, 0) * interior.
/// Example: x = [1, 2, 3], low 1, high -1, interior 1 → [p, 1, p, 2, p].
/// RankError when low, high or interior do not have x's rank entries; ArgumentError for
/// a negative interior entry, or a padding value that does not fit x's dtype (2.5 for
/// i32, 2 for bool, a complex value with a non-zero imaginary part for a real dtype);
/// ShapeError when a result extent would be negative; IndexError on overflow.
TENFERRO_API Tensor pad(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low,
                        std::span<const std::int64_t> high, std::span<const std::int64_t> interior);
inline Tensor pad(Session& s, const Tensor& x, Scalar padding_value, std::initializer_list<std::int64_t> low,
                  std::initializer_list<std::int64_t> high, std::initializer_list<std::int64_t> interior) {
  return pad(s, x, padding_value, std::span(low.begin(), low.size()), std::span(high.begin(), high.size()),
             std::span(interior.begin(), interior.size()));
}
/// pad into `out` (dtype: x's). `out` may not overlap x.
TENFERRO_API void pad_into(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low,
                           std::span<const std::int64_t> high, std::span<const std::int64_t> interior, const Tensor& out);
inline void pad_into(Session& s, const Tensor& x, Scalar padding_value, std::initializer_list<std::int64_t> low,
                     std::initializer_list<std::int64_t> high, std::initializer_list<std::int64_t> interior, const Tensor& out) {
  pad_into(s, x, padding_value, std::span(low.begin(), low.size()), std::span(high.begin(), high.size()),
           std::span(interior.begin(), interior.size()), out);
}

// ---------------------------------------------------------------- iota
/// StableHLO iota: a tensor of `shape` whose element at index idx is idx[dimension]
/// converted to `dtype` (bool: idx != 0; complex: real part). Example: shape [2, 3],
/// dimension 1 → [[0, 1, 2], [0, 1, 2]].
/// ShapeError for a negative extent; IndexError when the element count overflows;
/// AxisError for a dimension out of range (every rank-0 shape); ArgumentError when an
/// index along `dimension` does not fit an integer dtype (extent > 2^31 for i32).
TENFERRO_API Tensor iota(Session& s, std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension);
inline Tensor iota(Session& s, std::initializer_list<std::int64_t> shape, DType dtype, std::int64_t dimension) {
  return iota(s, std::span(shape.begin(), shape.size()), dtype, dimension);
}
/// iota into `out` (its shape and dtype give the result's).
TENFERRO_API void iota_into(Session& s, std::int64_t dimension, const Tensor& out);

}  // namespace tenferro
