// Front ends of the linalg functions without a factorization of their own:
// matrix_exp (a square, finite matrix; on the CPU, scaling and squaring with a Padé
// approximant on LAPACK: src/linalg/matrix_exp.cpp) and lu_pivots_to_permutation
// (LAPACK-style row interchanges to a permutation: src/linalg/pivots.cpp).
#include <string>

#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

detail::MatrixExpKernel matrix_exp_checked(Session& s, const Tensor& a) {
  constexpr std::string_view op = "matrix_exp";
  detail::linalg::check_matrix_operand(s, a, op);
  detail::linalg::require_square(a, op);
  const detail::MatrixExpKernel k = detail::kernel_for(s, OpId::matrix_exp, a.dtype()).fn.matrix_exp;
  detail::linalg::require_finite(s, a, op);
  return k;
}

void check_pivots(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op) {
  s.check(op);
  detail::require_tensor_on(pivots, s.device(), op, "pivots");
  if (!is_integer(pivots.dtype())) throw DTypeError(op, "pivots must be i32 or i64, got " + detail::describe(pivots));
  if (pivots.rank() < 1) throw RankError(op, "pivots must be [K, batch...], got " + detail::describe(pivots));
  if (m < pivots.extent(0))
    throw ShapeError(op, "the permutation size " + std::to_string(m) + " is smaller than the number of pivots " +
                             std::to_string(pivots.extent(0)) + " (" + detail::describe(pivots) + ")");
}

detail::PivotsKernel pivots_kernel(Session& s, const Tensor& pivots) {
  return detail::kernel_for(s, OpId::lu_pivots_to_permutation, pivots.dtype()).fn.pivots;
}

}  // namespace

Tensor matrix_exp(Session& s, const Tensor& a) { return matrix_exp_checked(s, a)(s, a); }

void matrix_exp_into(Session& s, const Tensor& a, const Tensor& out) {
  const detail::MatrixExpKernel k = matrix_exp_checked(s, a);
  const detail::linalg::IntoOut o{&out, "out", a.dtype(), a.shape()};
  detail::linalg::check_into(s, "matrix_exp", {o}, {&a});
  const Tensor e = k(s, a);
  detail::linalg::commit_into(s, {o}, {&e});
}

Tensor lu_pivots_to_permutation(Session& s, const Tensor& pivots, std::int64_t m) {
  check_pivots(s, pivots, m, "lu_pivots_to_permutation");
  return pivots_kernel(s, pivots)(s, pivots, m, "lu_pivots_to_permutation");
}

void lu_pivots_to_permutation_into(Session& s, const Tensor& pivots, std::int64_t m, const Tensor& out) {
  constexpr std::string_view op = "lu_pivots_to_permutation";
  check_pivots(s, pivots, m, op);
  const detail::PivotsKernel k = pivots_kernel(s, pivots);
  const detail::linalg::IntoOut o{&out, "out", DType::i64, detail::linalg::perm_shape(pivots, m)};
  detail::linalg::check_into(s, op, {o}, {&pivots});
  const Tensor r = k(s, pivots, m, op);
  detail::linalg::commit_into(s, {o}, {&r});
}

}  // namespace tenferro
