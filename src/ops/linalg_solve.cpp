// The linear-solve front ends: solve, triangular_solve, cholesky and inv, both forms.
// Metadata and options are checked (ops/linalg.hpp: matrix_infer, rhs_infer), the
// kernel taken from the session's table, and an `_into` output validated before the
// kernel runs; the result is computed compact and copied into the output only on
// success (on the CPU, LAPACK getrf/getrs, trsm, potrf, getri: src/linalg/solve.cpp).
#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {
namespace {

using detail::linalg::Rhs;

/// s.check(op); a defined, on the session's device, a square matrix.
void check_square(Session& s, const Tensor& a, std::string_view op) {
  detail::linalg::check_matrix_operand(s, a, op);
  detail::linalg::require_square(a, op);
}

/// b on the session's device, then rhs_infer.
Rhs check_b(Session& s, const Tensor& a, const Tensor& b, std::string_view op, bool right_side) {
  detail::require_tensor_on(b, s.device(), op, "b");
  return detail::linalg::rhs_infer(a, b, op, a.extent(0), right_side);
}

Rhs check_trsm(Session& s, const Tensor& a, const Tensor& b, const TriangularSolveOptions& o) {
  constexpr std::string_view op = "triangular_solve";
  check_square(s, a, op);
  detail::require_enum(o.side, Side::right, op, "Side");  // Note [Enums at the API boundary]
  detail::require_enum(o.tri, Triangle::upper, op, "Triangle");
  detail::require_enum(o.op, MatOp::adjoint, op, "MatOp");
  return check_b(s, a, b, op, o.side == Side::right);
}

}  // namespace

Tensor solve(Session& s, const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "solve";
  check_square(s, a, op);
  const Rhs rhs = check_b(s, a, b, op, false);
  return detail::kernel_for(s, OpId::solve, a.dtype()).fn.solve(s, a, rhs, b, op);
}

void solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out) {
  constexpr std::string_view op = "solve";
  check_square(s, a, op);
  const Rhs rhs = check_b(s, a, b, op, false);
  const detail::SolveKernel k = detail::kernel_for(s, OpId::solve, a.dtype()).fn.solve;
  detail::require_output(out, op, b.dtype(), b.shape().span(), s.device());
  copy_into(s, k(s, a, rhs, b, op), out);
}

Tensor triangular_solve(Session& s, const Tensor& a, const Tensor& b, const TriangularSolveOptions& opt) {
  const Rhs rhs = check_trsm(s, a, b, opt);
  return detail::kernel_for(s, OpId::triangular_solve, a.dtype()).fn.triangular_solve(s, a, rhs, b, opt);
}

void triangular_solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out, const TriangularSolveOptions& opt) {
  const Rhs rhs = check_trsm(s, a, b, opt);
  const detail::TriangularSolveKernel k = detail::kernel_for(s, OpId::triangular_solve, a.dtype()).fn.triangular_solve;
  detail::require_output(out, "triangular_solve", b.dtype(), b.shape().span(), s.device());
  copy_into(s, k(s, a, rhs, b, opt), out);
}

Tensor cholesky(Session& s, const Tensor& a, Triangle tri) {
  constexpr std::string_view op = "cholesky";
  check_square(s, a, op);
  detail::require_enum(tri, Triangle::upper, op, "Triangle");
  return detail::kernel_for(s, OpId::cholesky, a.dtype()).fn.cholesky(s, a, tri);
}

void cholesky_into(Session& s, const Tensor& a, const Tensor& out, Triangle tri) {
  constexpr std::string_view op = "cholesky";
  check_square(s, a, op);
  detail::require_enum(tri, Triangle::upper, op, "Triangle");
  const detail::CholeskyKernel k = detail::kernel_for(s, OpId::cholesky, a.dtype()).fn.cholesky;
  detail::require_output(out, op, a.dtype(), a.shape().span(), s.device());
  copy_into(s, k(s, a, tri), out);
}

Tensor inv(Session& s, const Tensor& a) {
  check_square(s, a, "inv");
  return detail::kernel_for(s, OpId::inv, a.dtype()).fn.inv(s, a);
}

void inv_into(Session& s, const Tensor& a, const Tensor& out) {
  check_square(s, a, "inv");
  const detail::InvKernel k = detail::kernel_for(s, OpId::inv, a.dtype()).fn.inv;
  detail::require_output(out, "inv", a.dtype(), a.shape().span(), s.device());
  copy_into(s, k(s, a), out);
}

}  // namespace tenferro
