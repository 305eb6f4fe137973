#pragma once
// The conversion family's op layer (Note [Conversions in the op layer]): the pure
// inference functions of convert, cast, copy and reshape.
//
// Note [Conversions in the op layer]
// convert (checked), cast (lossy), copy (copy_into, to_contiguous) and reshape are one
// kernel signature, ConvertKernel: copy x, broadcast to out's shape, into out converting
// each element to out's dtype. The front end (conversion.cpp) checks the session and
// devices, infers (below: pure, shapes and dtypes only), prepares the output once for
// both forms, runs convert's exactness check through the backend's data checks
// (`first_inexact`: the position of the first element that does not convert exactly,
// which the front end turns into "element [1, 0] = 2.5 does not convert exactly to i32")
// and calls the kernel from the session's table. Layout decisions stay in the front
// end: to_contiguous and reshape answer x itself (or a view) when its layout allows,
// without a kernel.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>

#include "ops/catalog.hpp"
#include "tenferro/op_attrs.hpp"
#include "tenferro/session.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// The output of a conversion.
struct ConversionSignature {
  Dims shape;
  DType dtype = DType::f64;
};

/// convert and cast to attrs.dtype, copy (attrs.dtype must be x's dtype) on x of
/// `shape` and `dtype`: x's shape. DTypeError, naming the op, for a result dtype that is
/// not a dtype, or for copy to another dtype.
ConversionSignature infer_conversion(OpId op, std::span<const std::int64_t> shape, DType dtype, const ConvertAttrs& attrs);

/// reshape of x (`shape`, `dtype`) to attrs.shape, one extent of which may be -1
/// (inferred): ShapeError when the element counts differ or the target is malformed.
ConversionSignature infer_reshape_op(std::span<const std::int64_t> shape, DType dtype, const ReshapeAttrs& attrs);

/// copy_into(src, dst): DTypeError when the dtypes differ (convert_into and cast_into
/// convert), ShapeError unless src broadcasts to dst's shape.
void infer_copy_into(std::span<const std::int64_t> src, DType src_dtype, std::span<const std::int64_t> dst, DType dst_dtype);

/// convert's data check, before anything is written: ArgumentError naming the first
/// element of x (column-major) that does not convert exactly to `to`, and its value.
/// While tracing x has no data, so the check passes; the graph's convert node runs it
/// when the graph runs (compile.cpp).
void check_exact_conversion(Session& s, const Tensor& x, DType to);

}  // namespace tenferro::detail
