#pragma once
// Layout arithmetic shared by core views and op validation: axes, permutations,
// slices, reshape strides, broadcasting, overlap.
#include "core/internal_check.hpp"

#include <span>
#include <string_view>
#include <utility>

#include "tenferro/shape.hpp"

namespace tenferro::detail {

/// Axis in [-rank, rank) normalized to [0, rank); AxisError otherwise.
int normalize_axis(std::int64_t axis, int rank, std::string_view op);
/// Validates a permutation of 0..rank-1 (RankError on length, AxisError otherwise).
void check_permutation(std::span<const std::int64_t> perm, int rank, std::string_view op);
/// Normalized, sorted, duplicate-free axis set as a bit mask; AxisError for a bad or
/// repeated axis.
std::uint64_t axis_mask(std::span<const std::int64_t> axes, int rank, std::string_view op);

/// Python slice semantics: first index and element count of start:stop:step over n.
std::pair<std::int64_t, std::int64_t> python_slice(std::int64_t start, std::int64_t stop, std::int64_t step, std::int64_t n);

/// Note [Sliced strides]: the element stride of a sliced axis with `count` result
/// elements, step `step` over an axis of stride `stride` and elements of `esize` bytes.
/// Kernels scale strides by the element size unchecked, so every view's byte strides
/// must fit in int64. For count > 1 the product is bounded by the storage (the step is
/// smaller than the axis) and only checked; an axis of 0 or 1 elements never steps, so
/// a step beyond the axis (up to INT64_MAX) keeps step * stride (NumPy's stride) when
/// that fits in bytes and the parent's stride otherwise, instead of overflowing.
std::int64_t sliced_stride(std::int64_t stride, std::int64_t step, std::int64_t count, std::int64_t esize, std::string_view op);

/// Shape with one -1 resolved against `numel`; ShapeError when counts differ.
Dims infer_reshape(std::span<const std::int64_t> shape, std::int64_t numel, std::string_view op);
/// Strides viewing (shape, strides) as `new_shape` in column-major element order, if
/// possible without a copy (NumPy's no-copy reshape, read first-axis-fastest).
bool reshape_strides(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides,
                     std::span<const std::int64_t> new_shape, Dims& new_strides);

/// Compact column-major strides for `shape`.
Dims compact_strides(std::span<const std::int64_t> shape);

/// Smallest and largest element offset reached by (shape, strides), shape non-empty.
std::pair<std::int64_t, std::int64_t> offset_range(std::span<const std::int64_t> shape,
                                                   std::span<const std::int64_t> strides, std::string_view op);

/// True when no two in-range indices map to the same element (sufficient test: sorted by
/// |stride|, each stride exceeds the span of the smaller ones).
bool is_non_overlapping(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides);

/// Broadcast result of two shapes under tenferro's rule (NumPy's rule read in column-major
/// order: shapes align at the first axis, a missing trailing axis counts as 1, an extent
/// of 1 stretches). ShapeError naming both shapes otherwise.
Dims broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b, std::string_view op);

}  // namespace tenferro::detail
