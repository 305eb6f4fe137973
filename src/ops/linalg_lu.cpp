// The LU front ends: lu (P, L, U), lu_factor (packed LU and pivots), lu_solve,
// lu_full_pivot (complete pivoting), det and slogdet, both forms. Metadata is checked
// (ops/linalg.hpp) and `_into` outputs validated before the kernel runs (on the CPU,
// LAPACK getrf/getrs and a batched complete-pivoting LU: src/linalg/lu.cpp). lu_solve's
// pivot values are data: its kernel checks them before computing anything.
#include <algorithm>

#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

/// s.check(op); a on the session's device, a matrix (square when `square`).
void check_lu(Session& s, const Tensor& a, std::string_view op, bool square) {
  detail::linalg::check_matrix_operand(s, a, op);
  if (square) detail::linalg::require_square(a, op);
}

/// The session's entry for `op` on a's dtype.
const detail::KernelFn& fn(Session& s, OpId op, const Tensor& a) { return detail::kernel_for(s, op, a.dtype()).fn; }

detail::linalg::Rhs check_lu_solve(Session& s, const LuFactorResult& f, const Tensor& b) {
  constexpr std::string_view op = "lu_solve";
  check_lu(s, f.LU, op, true);
  const std::int64_t n = f.LU.extent(0);
  detail::require_tensor_on(f.pivots, s.device(), op, "pivots");
  if (f.pivots.dtype() != DType::i64) throw DTypeError(op, "pivots must be i64, got " + detail::describe(f.pivots));
  bool ok = f.pivots.rank() == f.LU.rank() - 1 && f.pivots.extent(0) == n;
  for (int i = 2; ok && i < f.LU.rank(); ++i) ok = f.pivots.extent(i - 1) == f.LU.extent(i);
  if (!ok) throw ShapeError(op, "pivots must be [N, batch...] for LU " + detail::describe(f.LU) + ", got " + detail::describe(f.pivots));
  detail::require_tensor_on(b, s.device(), op, "b");
  return detail::linalg::rhs_infer(f.LU, b, op, n, false);
}

}  // namespace

LuResult lu(Session& s, const Tensor& a) {
  check_lu(s, a, "lu", false);
  return fn(s, OpId::lu, a).lu(s, a);
}

void lu_into(Session& s, const Tensor& a, const Tensor& P, const Tensor& L, const Tensor& U) {
  using detail::linalg::IntoOut;
  using detail::linalg::matrix_shape;
  check_lu(s, a, "lu", false);
  const detail::LuKernel kernel = fn(s, OpId::lu, a).lu;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const IntoOut op{&P, "P", a.dtype(), matrix_shape(m, m, a)}, ol{&L, "L", a.dtype(), matrix_shape(m, k, a)},
      ou{&U, "U", a.dtype(), matrix_shape(k, n, a)};
  detail::linalg::check_into(s, "lu", {op, ol, ou}, {&a});
  const LuResult r = kernel(s, a);
  detail::linalg::commit_into(s, {op, ol, ou}, {&r.P, &r.L, &r.U});
}

LuFactorResult lu_factor(Session& s, const Tensor& a) {
  check_lu(s, a, "lu_factor", false);
  return fn(s, OpId::lu_factor, a).lu_factor(s, a);
}

void lu_factor_into(Session& s, const Tensor& a, const Tensor& LU, const Tensor& pivots) {
  using detail::linalg::IntoOut;
  check_lu(s, a, "lu_factor", false);
  const detail::LuFactorKernel kernel = fn(s, OpId::lu_factor, a).lu_factor;
  const IntoOut olu{&LU, "LU", a.dtype(), a.shape()};
  const IntoOut op{&pivots, "pivots", DType::i64, detail::linalg::vector_shape(std::min(a.extent(0), a.extent(1)), a)};
  detail::linalg::check_into(s, "lu_factor", {olu, op}, {&a});
  const LuFactorResult r = kernel(s, a);
  detail::linalg::commit_into(s, {olu, op}, {&r.LU, &r.pivots});
}

Tensor lu_solve(Session& s, const LuFactorResult& f, const Tensor& b) {
  const auto rhs = check_lu_solve(s, f, b);
  return fn(s, OpId::lu_solve, f.LU).lu_solve(s, f, rhs, b);
}

void lu_solve_into(Session& s, const LuFactorResult& f, const Tensor& b, const Tensor& out) {
  const auto rhs = check_lu_solve(s, f, b);
  const detail::LuSolveKernel kernel = fn(s, OpId::lu_solve, f.LU).lu_solve;
  const detail::linalg::IntoOut o{&out, "out", b.dtype(), b.shape()};
  detail::linalg::check_into(s, "lu_solve", {o}, {&f.LU, &f.pivots, &b});
  const Tensor x = kernel(s, f, rhs, b);
  detail::linalg::commit_into(s, {o}, {&x});
}

FullPivLuResult lu_full_pivot(Session& s, const Tensor& a) {
  check_lu(s, a, "lu_full_pivot", true);
  return fn(s, OpId::lu_full_pivot, a).lu_full_pivot(s, a);
}

void lu_full_pivot_into(Session& s, const Tensor& a, const Tensor& P, const Tensor& L, const Tensor& U, const Tensor& Q) {
  using detail::linalg::IntoOut;
  check_lu(s, a, "lu_full_pivot", true);
  const detail::FullPivLuKernel kernel = fn(s, OpId::lu_full_pivot, a).lu_full_pivot;
  const Dims sh = a.shape();
  const IntoOut op{&P, "P", a.dtype(), sh}, ol{&L, "L", a.dtype(), sh}, ou{&U, "U", a.dtype(), sh}, oq{&Q, "Q", a.dtype(), sh};
  detail::linalg::check_into(s, "lu_full_pivot", {op, ol, ou, oq}, {&a});
  const FullPivLuResult r = kernel(s, a);
  detail::linalg::commit_into(s, {op, ol, ou, oq}, {&r.P, &r.L, &r.U, &r.Q});
}

Tensor det(Session& s, const Tensor& a) {
  check_lu(s, a, "det", true);
  Tensor d;
  fn(s, OpId::det, a).det(s, a, &d, nullptr, nullptr, "det");
  return d;
}

void det_into(Session& s, const Tensor& a, const Tensor& out) {
  check_lu(s, a, "det", true);
  const detail::DetKernel kernel = fn(s, OpId::det, a).det;
  const detail::linalg::IntoOut o{&out, "out", a.dtype(), detail::linalg::batch_shape(a)};
  detail::linalg::check_into(s, "det", {o}, {&a});
  Tensor d;
  kernel(s, a, &d, nullptr, nullptr, "det");
  detail::linalg::commit_into(s, {o}, {&d});
}

SlogdetResult slogdet(Session& s, const Tensor& a) {
  check_lu(s, a, "slogdet", true);
  SlogdetResult r;
  fn(s, OpId::slogdet, a).det(s, a, nullptr, &r.sign, &r.logabsdet, "slogdet");
  return r;
}

void slogdet_into(Session& s, const Tensor& a, const Tensor& sign, const Tensor& logabsdet) {
  using detail::linalg::IntoOut;
  check_lu(s, a, "slogdet", true);
  const detail::DetKernel kernel = fn(s, OpId::slogdet, a).det;
  const Dims bs = detail::linalg::batch_shape(a);
  const IntoOut os{&sign, "sign", a.dtype(), bs}, ol{&logabsdet, "logabsdet", real_dtype(a.dtype()), bs};
  detail::linalg::check_into(s, "slogdet", {os, ol}, {&a});
  SlogdetResult r;
  kernel(s, a, nullptr, &r.sign, &r.logabsdet, "slogdet");
  detail::linalg::commit_into(s, {os, ol}, {&r.sign, &r.logabsdet});
}

}  // namespace tenferro
