#pragma once
// The CPU backend's BLAS-1 kernels (Note [BLAS-1 in the op layer]), listed in
// src/cpu/kernel_table.cpp.
#include "core/internal_check.hpp"

#include <cstdint>

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// VdotKernel: out = Σ conj(a)·b in out's dtype (operands of another dtype are read
/// through a conversion, Note [Mixed-dtype operands]).
void vdot_kernel(Session& s, const Tensor& a, const Tensor& b, const Tensor& out);
/// ReduceKernel of norm_squared: out = Σ |x|² over the axes in `mask` (every axis).
void norm_squared_kernel(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
/// AxpbyKernel: y = alpha·x + beta·y in place (beta == 0 never reads y).
void axpby_kernel(Session& s, const Scalar& alpha, const Tensor& x, const Scalar& beta, const Tensor& y);

}  // namespace tenferro::cpu
