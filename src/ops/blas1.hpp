#pragma once
// The BLAS-1 family's op layer (vdot, norm_squared, axpby): pure inference.
//
// Note [BLAS-1 in the op layer]
// vdot(a, b) = Σ conj(a)·b and norm_squared(x) = Σ |x|² are full reductions to a rank-0
// result; axpby(alpha, x, beta, y) updates y in place. Inference below takes shapes,
// dtypes and (for axpby) the host scalars alpha and beta, and answers the result dtype
// or the typed error; the front end (blas1.cpp) prepares the rank-0 output once for both
// forms of vdot and norm_squared and checks y's layout for axpby, then calls the kernel
// from the session's table (VdotKernel, ReduceKernel over every axis, AxpbyKernel).
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>

#include "tenferro/dtype.hpp"
#include "tenferro/scalar.hpp"

namespace tenferro::detail {

/// vdot's result dtype: the promotion of a's and b's. DTypeError unless both are
/// numeric, ShapeError unless the shapes are equal.
DType infer_vdot(std::span<const std::int64_t> a, DType ad, std::span<const std::int64_t> b, DType bd);

/// norm_squared's result dtype: x's real dtype, f64 for integers. DTypeError for bool.
DType infer_norm_squared(DType xd);

/// axpby's checks: y numeric, x numeric and promoting to y's dtype (DTypeError), equal
/// shapes (ShapeError), alpha and beta representable in y's dtype (ArgumentError: a
/// complex scalar for a real y; for an integer y a float that is not an integer in
/// range, or an integer out of range).
void infer_axpby(const Scalar& alpha, std::span<const std::int64_t> x, DType xd, const Scalar& beta, std::span<const std::int64_t> y, DType yd);

}  // namespace tenferro::detail
