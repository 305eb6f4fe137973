#pragma once
// The indexing family's inference (src/ops/indexing.cpp): slice as a view, and the
// result signatures of dynamic_slice, dynamic_update_slice, take_along_axis and
// index_select, all from metadata only. Index values are data: the range check of
// take_along_axis and index_select is the data check `first_out_of_range` (Note
// [Data-dependent checks]), and dynamic_slice's starts are clamped, not checked, so
// they are read only by the kernel.
#include "core/internal_check.hpp"

#include <cstdint>
#include <string_view>

#include "tenferro/indexing.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// DTypeError unless `t` (defined) is i32 or i64; `what` names it ("indices").
void require_index_dtype(const Tensor& t, std::string_view op, std::string_view what);

/// The view of slice (StableHLO slice C2-C5): RankError for lists of the wrong length,
/// ArgumentError for a non-positive step, IndexError for starts/limits out of range.
Tensor slice_view_of(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& steps, std::string_view op);

/// dynamic_slice (the result shape is slice_sizes): start_indices an i32/i64 vector with
/// one entry per operand axis, each size in [0, extent].
void dynamic_slice_infer(const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes, std::string_view op);

/// dynamic_update_slice (the result has x's shape and dtype): update of x's dtype and
/// rank, no extent above x's, start_indices as dynamic_slice's.
void dynamic_update_slice_infer(const Tensor& x, const Tensor& update, const Tensor& start_indices, std::string_view op);

/// A gather along one axis: the result shape and the normalized axis.
struct TakeSignature {
  Dims shape;
  int axis = 0;
};
/// take_along_axis: indices of x's rank, broadcasting against x off the axis.
TakeSignature take_along_axis_infer(const Tensor& x, const Tensor& indices, std::int64_t axis, std::string_view op);
/// index_select: rank-1 indices; the result is x with the axis' extent replaced.
TakeSignature index_select_infer(const Tensor& x, const Tensor& indices, std::int64_t axis, std::string_view op);

}  // namespace tenferro::detail
