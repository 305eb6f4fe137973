#pragma once
// Right-hand-side validation shared by solve, triangular_solve, lu_solve and lstsq.
#include "core/internal_check.hpp"

#include "linalg/common.hpp"

namespace tenferro::detail::linalg {

/// A validated right-hand side: `view` is b as a matrix (a vector [N] becomes [N, 1],
/// held in `owned`; otherwise `view` points at the caller's b).
struct Rhs {
  Tensor owned;
  const Tensor* view = nullptr;
  std::int64_t rows = 0, cols = 0;
  bool vector = false;
  /// b as a matrix.
  const Tensor& mat() const noexcept { return vector ? owned : *view; }
};

/// Validates b against a (dtype, batch axes, `rows` rows — or columns when
/// `right_side`). A rank-1 b is accepted for an unbatched a (left side only).
Rhs check_rhs(const Tensor& a, const Tensor& b, std::string_view op, std::int64_t rows, bool right_side);

/// Element offset of batch `b` of a vector operand [N, batch...] (axes 1...).
std::int64_t batch_offset_vec(const Tensor& v, std::int64_t b) noexcept;

}  // namespace tenferro::detail::linalg
