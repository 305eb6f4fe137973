#pragma once
// The ops along one axis (catalogue family `along_axis`: cumsum, cumprod, softmax,
// log_softmax): pure inference. The result has x's shape and dtype; the kernels
// (src/cpu/axis_ops.cpp, Note [Axis plan]) take the axis normalized to [0, rank).
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>

#include "ops/catalog.hpp"
#include "tenferro/op_attrs.hpp"

namespace tenferro::detail {

/// The axis of along-axis op `op` on x of `shape` and `dtype`, normalized to [0, rank).
/// Throws, naming the op: DTypeError for a dtype outside the op's catalogue set,
/// AxisError for an axis outside [-rank, rank) (rank 0 has no axis). InternalError when
/// `op` is not of the family.
int infer_along_axis(OpId op, std::span<const std::int64_t> shape, DType dtype, const AxisAttrs& attrs);

}  // namespace tenferro::detail
