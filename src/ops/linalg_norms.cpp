// The norm front ends: matrix_norm (Frobenius, nuclear, spectral, 1, inf over the
// first two axes) and vector_norm (p-norms along axis 0), both forms. Metadata and
// options are checked and the kernel taken from the session's table; the SVD-based
// norms also run the finiteness data check (on the CPU: src/linalg/norms.cpp).
#include <cmath>

#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

detail::MatrixNormKernel check_matrix_norm(Session& s, const Tensor& a, MatrixNorm kind) {
  constexpr std::string_view op = "matrix_norm";
  detail::linalg::check_matrix_operand(s, a, op);
  detail::require_enum(kind, MatrixNorm::inf, op, "MatrixNorm");  // Note [Enums at the API boundary]
  const detail::MatrixNormKernel k = detail::kernel_for(s, OpId::matrix_norm, a.dtype()).fn.matrix_norm;
  switch (kind) {
    case MatrixNorm::frobenius:
    case MatrixNorm::one:
    case MatrixNorm::inf: break;
    case MatrixNorm::nuclear:
    case MatrixNorm::spectral: detail::linalg::require_finite(s, a, op); break;
  }
  return k;
}

detail::VectorNormKernel check_vector_norm(Session& s, const Tensor& x, double p) {
  constexpr std::string_view op = "vector_norm";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "x");
  if (x.rank() < 1) throw RankError(op, "x must have rank >= 1 ([N, batch...]), got " + detail::describe(x));
  if (std::isnan(p)) throw ArgumentError(op, "p must not be NaN");
  if (!is_inexact(x.dtype())) detail::throw_dtype_not_in_set(op, x.dtype(), DTypeSet::inexact);
  return detail::kernel_for(s, OpId::vector_norm, x.dtype()).fn.vector_norm;
}

}  // namespace

Tensor matrix_norm(Session& s, const Tensor& a, MatrixNorm kind) {
  return check_matrix_norm(s, a, kind)(s, a, kind);
}

void matrix_norm_into(Session& s, const Tensor& a, const Tensor& out, MatrixNorm kind) {
  const detail::MatrixNormKernel k = check_matrix_norm(s, a, kind);
  const detail::linalg::IntoOut o{&out, "out", real_dtype(a.dtype()), detail::linalg::batch_shape(a)};
  detail::linalg::check_into(s, "matrix_norm", {o}, {&a});
  const Tensor r = k(s, a, kind);
  detail::linalg::commit_into(s, {o}, {&r});
}

Tensor vector_norm(Session& s, const Tensor& x, double p) {
  return check_vector_norm(s, x, p)(s, x, p);
}

void vector_norm_into(Session& s, const Tensor& x, const Tensor& out, double p) {
  const detail::VectorNormKernel k = check_vector_norm(s, x, p);
  Dims shape;
  shape.resize(x.rank() - 1);
  for (int i = 1; i < x.rank(); ++i) shape[i - 1] = x.extent(i);
  const detail::linalg::IntoOut o{&out, "out", real_dtype(x.dtype()), shape};
  detail::linalg::check_into(s, "vector_norm", {o}, {&x});
  const Tensor r = k(s, x, p);
  detail::linalg::commit_into(s, {o}, {&r});
}

}  // namespace tenferro
