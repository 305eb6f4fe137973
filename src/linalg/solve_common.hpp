#pragma once
// Right-hand-side validation shared by lu_solve and lstsq (the CPU check on rhs_infer).
#include "core/internal_check.hpp"

#include "linalg/common.hpp"

namespace tenferro::detail::linalg {

/// The CPU's right-hand-side check: b defined and on the CPU, then rhs_infer.
Rhs check_rhs(const Tensor& a, const Tensor& b, std::string_view op, std::int64_t rows, bool right_side);

/// Element offset of batch `b` of a vector operand [N, batch...] (axes 1...).
std::int64_t batch_offset_vec(const Tensor& v, std::int64_t b) noexcept;

}  // namespace tenferro::detail::linalg
