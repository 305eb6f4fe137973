#pragma once
/// \file indexing.hpp
/// Indexing operations: slice, dynamic_slice, dynamic_update_slice, gather and scatter
/// with StableHLO semantics, take_along_axis (NumPy) and index_select (PyTorch).
///
/// Axes are numbered as everywhere in tenferro (column-major: axis 0 varies fastest).
/// StableHLO states gather/scatter per axis index, so its semantics carry over
/// unchanged; only its printed examples are row-major. Dimension numbers are plain axis
/// numbers in [0, rank): no negative axes, as in StableHLO (except the `axis` argument
/// of take_along_axis and index_select, which may count from the end).
///
/// Every op runs on a Session; allocating forms return a new compact tensor, `_into`
/// forms write into a caller tensor that may be any writable strided view. Inputs may
/// be any strided view (transposed, negative-stride, broadcast) and are read in place.
/// Validation is complete before anything is written: on any error no output is touched.
///
/// Common errors (every op): SessionEntryError when the session is not usable on this
/// thread; ArgumentError for an undefined tensor; SessionEntryError(IncompatibleContext)
/// for a tensor not on the CPU; for `_into` forms DTypeError for an output dtype other
/// than the operand's, ShapeError for a wrong output shape, ArgumentError for a
/// read-only output, an output with self-overlapping elements, or an output that
/// overlaps an input in memory (the in-place forms of dynamic_update_slice and scatter
/// are the only ones where the output may be the operand itself).
///
/// Index tensors (start_indices, scatter_indices, indices) must be i32 or i64
/// (DTypeError otherwise) and may be strided views. The operand may have any dtype.
///
/// Out-of-range indices, by op:
///  - slice: starts and limits must lie in [0, extent]: IndexError.
///  - dynamic_slice, dynamic_update_slice, gather: each start is clamped to
///    [0, extent - window size] so the whole window lies inside (StableHLO).
///  - scatter: a window that does not lie entirely inside the operand is skipped, all
///    of it (XLA's behaviour; StableHLO leaves it implementation-defined).
///  - take_along_axis, index_select: an index outside [-extent, extent) is an IndexError
///    naming the first offending index, thrown before anything is written; negative
///    indices count from the end.

#include <cstdint>

#include "tenferro/ops.hpp"

namespace tenferro {

// ---------------------------------------------------------------- slice

/// StableHLO `slice`: result[i] = x[starts + i * strides], extents
/// ceil((limits - starts) / strides). `starts`, `limits` and `strides` have one entry per
/// axis of x; empty `strides` means all 1.
/// Throws RankError when a list's length is not rank(x); IndexError unless
/// 0 <= starts[d] <= limits[d] <= extent(d); ArgumentError for a stride <= 0.
TENFERRO_API Tensor slice(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides = {});
/// slice into `out` (shape: the slice's extents, dtype: x's; must not overlap x).
TENFERRO_API void slice_into(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides,
                             const Tensor& out);
/// The same slice as a view sharing x's storage (metadata only; no session needed;
/// read-only when x is). Same errors as `slice` (op name "slice_view").
TENFERRO_API Tensor slice_view(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides = {});

// ---------------------------------------------------------------- dynamic_slice

/// StableHLO `dynamic_slice`: the window of extents `slice_sizes` of x starting at
/// `start_indices`, a rank-1 i32/i64 tensor with one entry per axis of x (a length-0
/// tensor for a rank-0 x). Each start is clamped to [0, extent(d) - slice_sizes[d]].
/// Throws DTypeError for a non-integer start_indices; RankError when start_indices is
/// not rank 1 or slice_sizes' length is not rank(x); ShapeError when start_indices'
/// length is not rank(x) or unless 0 <= slice_sizes[d] <= extent(d).
TENFERRO_API Tensor dynamic_slice(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes);
/// dynamic_slice into `out` (shape slice_sizes; must not overlap x or start_indices).
TENFERRO_API void dynamic_slice_into(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes,
                                     const Tensor& out);

// ---------------------------------------------------------------- dynamic_update_slice

/// StableHLO `dynamic_update_slice`: a copy of x with the window at `start_indices`
/// replaced by `update`. start_indices as for dynamic_slice; each start is clamped to
/// [0, extent(d) - extent(update, d)].
/// Throws DTypeError when update's dtype differs from x's or start_indices is not
/// integer; RankError when rank(update) != rank(x) or start_indices is not rank 1;
/// ShapeError when an extent of update exceeds x's or start_indices' length is not rank(x).
TENFERRO_API Tensor dynamic_update_slice(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices);
/// dynamic_update_slice into `out` (x's shape and dtype). `out` may be x itself (same
/// layout): then only the window is written. Otherwise out must not overlap x; it must
/// never overlap update or start_indices.
TENFERRO_API void dynamic_update_slice_into(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices,
                                            const Tensor& out);
/// Writes `update` into the window of x in place (x must be writable: ArgumentError for
/// a read-only view). Same as dynamic_update_slice_into(s, x, update, start_indices, x).
TENFERRO_API void dynamic_update_slice_inplace(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices);

// ---------------------------------------------------------------- gather

/// Dimension numbers of `gather` (StableHLO GatherDimensionNumbers).
struct GatherDims {
  /// Result axes holding the slice's (non-collapsed, non-batching) axes; sorted, unique.
  Dims offset_dims;
  /// Operand axes dropped from the slice (their slice size must be <= 1); sorted, unique.
  Dims collapsed_slice_dims;
  /// start_index_map[k]: the operand axis that entry k of an index vector starts.
  Dims start_index_map;
  /// The axis of start_indices holding the index vectors; rank(start_indices) means
  /// an implicit trailing axis of extent 1 (each element is a one-entry index vector).
  std::int64_t index_vector_dim = 0;
  /// Operand axes indexed by the position along start_indices_batching_dims (explicit
  /// batch axes, slice size <= 1); sorted, unique.
  Dims operand_batching_dims;
  /// start_indices axes paired with operand_batching_dims (same extents).
  Dims start_indices_batching_dims;
};

/// StableHLO `gather`: result[r] = operand[full_start + full_batching + full_offset]
/// (spec section "gather"). Batch axes of the result are the axes not in offset_dims,
/// in the order of start_indices' axes without index_vector_dim. Every start is clamped
/// to [0, extent(d) - slice_sizes[d]] (out-of-range starts never throw).
/// Throws, for a malformed configuration, naming the field and its values:
///  AxisError for an axis out of range (index_vector_dim outside [0, rank(start_indices)],
///  offset_dims outside [0, rank(result)), operand axes outside [0, rank(operand)),
///  start_indices_batching_dims outside [0, rank(start_indices)) or equal to
///  index_vector_dim) or repeated (within a field, between collapsed_slice_dims and
///  operand_batching_dims, or between start_index_map and operand_batching_dims);
///  ArgumentError for offset_dims / collapsed_slice_dims / operand_batching_dims not
///  sorted, or batching-dim lists of different lengths;
///  RankError when offset_dims + collapsed_slice_dims + operand_batching_dims do not
///  number rank(operand), slice_sizes' length is not rank(operand), or the result
///  would have more than kMaxRank axes;
///  ShapeError when start_index_map's length is not the index vector length, a batching
///  extent differs between operand and start_indices, a slice size is outside
///  [0, extent], a collapsed or batching slice size exceeds 1, or is 0 while the result
///  has elements; DTypeError for a non-integer start_indices.
TENFERRO_API Tensor gather(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims,
                           const Dims& slice_sizes);
/// gather into `out` (the shape gather_shape returns; must not overlap the inputs).
TENFERRO_API void gather_into(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims,
                              const Dims& slice_sizes, const Tensor& out);
/// Result shape of gather for these shapes; validates the configuration (same errors,
/// op name "gather").
TENFERRO_API Shape gather_shape(const Shape& operand_shape, const Shape& start_indices_shape, const GatherDims& dims,
                                const Dims& slice_sizes);

// ---------------------------------------------------------------- scatter

/// How scatter combines an operand element `a` with an update `u`.
/// replace: u (any dtype); add: a + u, mul: a * u (numeric dtypes; integers wrap);
/// min, max: NaN-propagating minimum/maximum (real dtypes; on bool: and / or).
enum class ScatterCombiner : std::uint8_t { replace, add, mul, min, max };

/// Dimension numbers of `scatter` (StableHLO ScatterDimensionNumbers).
struct ScatterDims {
  /// Axes of updates holding the window's axes; sorted, unique.
  Dims update_window_dims;
  /// Operand axes with an implicit window extent of 1; sorted, unique.
  Dims inserted_window_dims;
  /// scatter_dims_to_operand_dims[k]: the operand axis that entry k of an index vector starts.
  Dims scatter_dims_to_operand_dims;
  /// Axis of scatter_indices holding the index vectors (rank(scatter_indices): implicit
  /// trailing axis of extent 1).
  std::int64_t index_vector_dim = 0;
  /// Operand axes indexed by the position along scatter_indices_batching_dims; sorted, unique.
  Dims input_batching_dims;
  /// scatter_indices axes paired with input_batching_dims (same extents).
  Dims scatter_indices_batching_dims;
};

/// StableHLO `scatter` with one operand: a copy of `operand` where each window of
/// `updates` is combined into the operand window it addresses (spec section "scatter").
/// A window any element of which would fall outside the operand is skipped entirely
/// (no start is clamped). Windows are applied one at a time, in column-major order of
/// their scatter position (the index vectors' order in scatter_indices), on one thread:
/// the result is deterministic, and with `replace` the last window in that order wins
/// where windows overlap.
/// Throws, for a malformed configuration, the errors listed for gather with the scatter
/// field names (update_window_dims checked against rank(updates)); RankError when
/// rank(updates) is not rank(scatter_indices) without the index vector axis plus the
/// number of update_window_dims; ShapeError when an update scatter extent differs from
/// scatter_indices' or an update window extent exceeds the operand's; DTypeError when
/// updates' dtype differs from operand's, for a non-integer scatter_indices, or for a
/// combiner outside its dtype set.
TENFERRO_API Tensor scatter(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates,
                            const ScatterDims& dims, ScatterCombiner combiner);
/// scatter into `out` (operand's shape and dtype). `out` may be operand itself (same
/// layout): the updates are then applied in place. Otherwise out must not overlap
/// operand; it must never overlap scatter_indices or updates.
TENFERRO_API void scatter_into(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates,
                               const ScatterDims& dims, ScatterCombiner combiner, const Tensor& out);
/// Applies the updates to `operand` in place (operand must be writable: ArgumentError
/// for a read-only view). Same as scatter_into(..., operand).
TENFERRO_API void scatter_inplace(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates,
                                  const ScatterDims& dims, ScatterCombiner combiner);

// ---------------------------------------------------------------- take_along_axis, index_select

/// NumPy `take_along_axis`: result[i] = x[i with axis replaced by indices[i]].
/// indices has rank(x) (RankError otherwise); off `axis` the extents of x and indices
/// broadcast (equal, or one of them 1: ShapeError otherwise); along `axis` the result
/// has indices' extent. `axis` in [-rank, rank) (AxisError). Every index must lie in
/// [-n, n) for n = extent(x, axis), negative counting from the end: IndexError naming
/// the first offending index (column-major order) otherwise, before anything is written.
TENFERRO_API Tensor take_along_axis(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis);
/// take_along_axis into `out` (must not overlap x or indices).
TENFERRO_API void take_along_axis_into(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis, const Tensor& out);

/// PyTorch `index_select`: x with `axis` replaced by the entries of the rank-1 tensor
/// `indices` (RankError otherwise): result[..., j, ...] = x[..., indices[j], ...].
/// `axis` in [-rank, rank) (AxisError). Indices in [-n, n), negative counting from the
/// end; IndexError naming the first offending index otherwise, before anything is written.
TENFERRO_API Tensor index_select(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices);
/// index_select into `out` (must not overlap x or indices).
TENFERRO_API void index_select_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices, const Tensor& out);

}  // namespace tenferro
