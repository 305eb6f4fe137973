#pragma once
// The structural family's op layer (Note [Structural ops as views plus one copy]): the
// views that describe the re-indexing ops, their validation, and the fill-value check,
// all from metadata and host values only.
//
// Note [Structural ops as views plus one copy]
// Every re-indexing op is "build the strided view the op describes, then copy it":
// transpose(x, {1, 0}) on a compact [M, N] x is the view with strides {M, 1} copied into
// a compact [N, M] output. The view is built from metadata only (no element is read),
// all validation happens while building it, and the copy is the backend's conversion
// kernel (ConvertKernel, same dtype), so strided, negative-stride and broadcast inputs
// are read in place and, on the CPU, a copy that changes memory order takes the blocked
// kernel. An `_into` output identical to the view, element for element, makes the copy
// a no-op, which is why these ops accept an output aliasing their input exactly. The
// `_view` forms return the view itself and need no session.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>
#include <string_view>

#include "tenferro/scalar.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// The diagonal view of extract_diagonal over axes axis1 and axis2 (the diagonal last):
/// RankError below rank 2, AxisError for a bad or repeated axis.
Tensor diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2, std::string_view op);

/// The view of broadcast_in_dim: RankError for a bad rank or dimension count, AxisError
/// for a bad or repeated dimension, ShapeError for an extent that does not stretch.
Tensor broadcast_view_of(const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> dims, std::string_view op);

/// The view of reverse over `axes` (AxisError for a bad or repeated axis).
Tensor reverse_view_of(const Tensor& x, std::span<const std::int64_t> axes, std::string_view op);

/// iota's dimension normalized (RankError, AxisError, ArgumentError when the extent along
/// it does not fit the dtype).
int iota_dimension(std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension, std::string_view op);

/// `v` converted to dtype `d` into `buf` (16 bytes). ArgumentError when it does not fit
/// an integer or bool dtype exactly, or has a non-zero imaginary part for a real dtype.
void scalar_to_bytes(const Scalar& v, DType d, std::string_view op, unsigned char* buf);

}  // namespace tenferro::detail
