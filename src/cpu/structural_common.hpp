#pragma once
// Helpers shared by the structural op files (structural.cpp, structural_fill.cpp,
// structural_join.cpp): input checks, "view plus one copy" (Note [Structural ops as
// views plus one copy] in structural.cpp), and fill values.
#include "core/internal_check.hpp"

#include <cstring>
#include <string_view>

#include "core/convert.hpp"
#include "cpu/op_common.hpp"
#include "cpu/transpose_copy.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::detail {

/// s.check(op), then `x` defined and on the CPU.
void check_input(Session& s, const Tensor& x, std::string_view op);

/// A compact copy of `view`.
Tensor materialize(Session& s, const Tensor& view, std::string_view op);

/// Validates `out` against `view` (dtype, shape, writable, non-overlapping; aliasing
/// allowed only when out is element for element the view's memory), then copies.
void copy_view_into(Session& s, const Tensor& view, const Tensor& out, std::string_view op);

/// The diagonal view of extract_diagonal (validation included: RankError, AxisError).
Tensor diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2, std::string_view op);

/// `v` converted to dtype `d` into `buf` (16 bytes). ArgumentError when it does not fit
/// an integer or bool dtype exactly, or has a non-zero imaginary part for a real dtype.
void scalar_to_bytes(const Scalar& v, DType d, std::string_view op, unsigned char* buf);

/// Sixteen zero bytes: the zero of every dtype (IEEE +0.0 is all zero bits).
inline constexpr unsigned char kZeroBytes[16] = {};

}  // namespace tenferro::detail
