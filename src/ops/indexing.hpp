#pragma once
// The indexing family's inference (src/ops/indexing.cpp): slice as a view, and the
// result signatures of dynamic_slice, dynamic_update_slice, take_along_axis and
// index_select, all from metadata only. Index values are data: the range check of
// take_along_axis and index_select is the data check `first_out_of_range` (Note
// [Data-dependent checks]), and dynamic_slice's starts are clamped, not checked, so
// they are read only by the kernel.
//
// Note [Gather/scatter as batch × window]
// Both ops pair two index spaces: the batch (one index vector per position: the axes of
// the indices tensor without index_vector_dim) and the window (the slice's axes that are
// neither collapsed/inserted nor batching). For gather,
//   result[batch b, window w] = operand[clamp(start(b)) + batching(b) + w],
// and scatter is the same map read backwards. Every term is linear in b and w except
// the start, which is read from the indices tensor. So each op builds two strided plans:
// a window plan (result/updates and operand strides over the window axes), built once
// and rebased for every batch position, and a batch walk over (result/updates, indices,
// operand) pointers, where operand's per-batch stride carries the batching dimensions
// (operand_batching_dims[i] advances with start_indices_batching_dims[i]).
// Example: operand [5, 3], start_indices [4, 1], index_vector_dim 1, start_index_map [0],
// collapsed_slice_dims [0], offset_dims [1], slice_sizes [1, 3]  (NumPy's x[idx, :]):
// batch = 4 positions, window = 3 elements along operand axis 1 / result axis 1, result
// [4, 3].
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

/// The validated map of Note [Gather/scatter as batch × window] (what the kernels walk).
struct IndexMap {
  Dims batch_extent;        ///< per batch axis k
  Dims batch_idx_axis;      ///< indices axis of batch axis k
  Dims batch_data_axis;     ///< result/updates axis of batch axis k
  Dims batch_operand_axis;  ///< operand batching axis advanced by batch axis k, or -1
  int ivd_axis = -1;        ///< indices axis holding the index vectors; -1 when implicit
  Dims start_axis;          ///< operand axis started by index-vector entry k
  Dims window_operand_axis; ///< operand axis of window axis i
  Dims window_data_axis;    ///< result/updates axis of window axis i
  /// The call's dimension numbers, valid during the kernel call (the front end's
  /// argument; a trace kernel keeps a copy for replaying the op).
  const GatherDims* gather_dims = nullptr;
  const ScatterDims* scatter_dims = nullptr;
};

/// gather's result shape and map (StableHLO gather C1-C22): AxisError, RankError,
/// ShapeError or ArgumentError naming the dimension-number field at fault. Also answers
/// the public gather_shape.
Shape gather_infer(const GatherDims& dims, const Shape& operand, const Shape& indices, const Dims& slice_sizes, IndexMap& m);

/// scatter's map (the result has the operand's shape and dtype; StableHLO scatter C2,
/// C4, C7-C22): updates of the operand's dtype, a dtype the combiner accepts, index
/// dtype, the dimension numbers, and the updates' extents against the indices' batch
/// and the operand's window.
IndexMap scatter_infer(const Tensor& operand, const Tensor& indices, const Tensor& updates, const ScatterDims& dims,
                       ScatterCombiner combiner);

/// IndexError naming op and the first index of `indices` outside [-n, n) for n =
/// x.extent(axis) (take_along_axis's and index_select's data check; nothing while
/// tracing: a compiled graph runs it before the kernel).
void check_index_range(Session& s, const Tensor& x, const Tensor& indices, int axis, std::string_view op);

}  // namespace tenferro::detail
