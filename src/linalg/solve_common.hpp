#pragma once
// Helpers of the CPU solve kernels (solve, lu_solve, lstsq): the right-hand side is
// validated by rhs_infer (ops/linalg.hpp).
#include "core/internal_check.hpp"

#include "linalg/common.hpp"

namespace tenferro::detail::linalg {

/// Element offset of batch `b` of a vector operand [N, batch...] (axes 1...).
std::int64_t batch_offset_vec(const Tensor& v, std::int64_t b) noexcept;

}  // namespace tenferro::detail::linalg
