// The QR front ends: qr (Householder, optionally with a positive diagonal), qr_pivoted
// (column pivoting with a numerical rank) and qr_append_columns (updating a reduced QR
// by new columns), both forms. Metadata and options
// are checked, the kernel taken from the session's table (and, for qr_pivoted, whose
// rank decision compares magnitudes, the finiteness data check run) before any output
// is touched (on the CPU, LAPACK geqrf/orgqr and geqp3: src/linalg/qr.cpp; the
// append update: src/linalg/qr_update.cpp).
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

detail::QrKernel qr_checked(Session& s, const Tensor& a, QrMode mode) {
  constexpr std::string_view op = "qr";
  detail::linalg::check_matrix_operand(s, a, op);
  detail::require_enum(mode, QrMode::complete, op, "QrMode");  // Note [Enums at the API boundary]
  return detail::kernel_for(s, OpId::qr, a.dtype()).fn.qr;
}

detail::PivotedQrKernel qr_pivoted_checked(Session& s, const Tensor& a, double rtol) {
  constexpr std::string_view op = "qr_pivoted";
  detail::linalg::check_matrix_operand(s, a, op);
  if (std::isnan(rtol)) throw ArgumentError(op, "rtol must not be NaN");
  const detail::PivotedQrKernel k = detail::kernel_for(s, OpId::qr_pivoted, a.dtype()).fn.qr_pivoted;
  detail::linalg::require_finite(s, a, op);
  return k;
}

detail::QrAppendKernel check_append(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C) {
  constexpr std::string_view op = "qr_append_columns";
  s.check(op);
  for (const auto& [t, what] : {std::pair<const Tensor*, const char*>{&Q, "Q"}, {&R, "R"}, {&C, "C"}}) {
    detail::require_tensor_on(*t, s.device(), op, what);
    detail::linalg::matrix_infer(*t, op, what);
  }
  for (const Tensor* t : {&Q, &R, &C})
    if (t->rank() != 2) throw RankError(op, "operands must be unbatched matrices, got " + detail::describe(*t));
  if (Q.dtype() != R.dtype() || Q.dtype() != C.dtype())
    throw DTypeError(op, "Q, R and C must have the same dtype, got " + detail::describe(Q) + ", " + detail::describe(R) + ", " + detail::describe(C));
  if (Q.extent(1) > Q.extent(0)) throw ShapeError(op, "Q must have at most as many columns as rows, got " + detail::describe(Q));
  if (R.extent(0) != Q.extent(1)) throw ShapeError(op, "R must have Q's column count as rows, got " + detail::describe(Q) + " and " + detail::describe(R));
  if (C.extent(0) != Q.extent(0)) throw ShapeError(op, "C must have Q's row count, got " + detail::describe(Q) + " and " + detail::describe(C));
  return detail::kernel_for(s, OpId::qr_append_columns, Q.dtype()).fn.qr_append;
}

}  // namespace

QrResult qr(Session& s, const Tensor& a, QrMode mode, bool positive_diagonal) {
  return qr_checked(s, a, mode)(s, a, mode, positive_diagonal);
}

void qr_into(Session& s, const Tensor& a, const Tensor& Q, const Tensor& R, QrMode mode, bool positive_diagonal) {
  using detail::linalg::IntoOut;
  const detail::QrKernel k = qr_checked(s, a, mode);
  const std::int64_t m = a.extent(0), n = a.extent(1), qcols = mode == QrMode::reduced ? std::min(m, n) : m;
  const IntoOut oq{&Q, "Q", a.dtype(), detail::linalg::matrix_shape(m, qcols, a)};
  const IntoOut orr{&R, "R", a.dtype(), detail::linalg::matrix_shape(qcols, n, a)};
  detail::linalg::check_into(s, "qr", {oq, orr}, {&a});
  const QrResult r = k(s, a, mode, positive_diagonal);
  detail::linalg::commit_into(s, {oq, orr}, {&r.Q, &r.R});
}

PivotedQrResult qr_pivoted(Session& s, const Tensor& a, double rtol) {
  return qr_pivoted_checked(s, a, rtol)(s, a, rtol);
}

void qr_pivoted_into(Session& s, const Tensor& a, const Tensor& Q, const Tensor& R, const Tensor& perm, const Tensor& rank, double rtol) {
  using detail::linalg::IntoOut;
  const detail::PivotedQrKernel kernel = qr_pivoted_checked(s, a, rtol);
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const IntoOut oq{&Q, "Q", a.dtype(), detail::linalg::matrix_shape(m, k, a)};
  const IntoOut orr{&R, "R", a.dtype(), detail::linalg::matrix_shape(k, n, a)};
  const IntoOut op{&perm, "perm", DType::i64, detail::linalg::vector_shape(n, a)};
  const IntoOut ok{&rank, "rank", DType::i64, detail::linalg::batch_shape(a)};
  detail::linalg::check_into(s, "qr_pivoted", {oq, orr, op, ok}, {&a});
  const PivotedQrResult r = kernel(s, a, rtol);
  detail::linalg::commit_into(s, {oq, orr, op, ok}, {&r.Q, &r.R, &r.perm, &r.rank});
}

QrResult qr_append_columns(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C) {
  return check_append(s, Q, R, C)(s, Q, R, C);
}

void qr_append_columns_into(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C, const Tensor& Q_out, const Tensor& R_out) {
  using detail::linalg::IntoOut;
  const detail::QrAppendKernel kernel = check_append(s, Q, R, C);
  const std::int64_t m = Q.extent(0), k = Q.extent(1), n = R.extent(1), p = C.extent(1), kk = k + std::min(m - k, p);
  const IntoOut oq{&Q_out, "Q_out", Q.dtype(), Dims{m, kk}};
  const IntoOut orr{&R_out, "R_out", Q.dtype(), Dims{kk, n + p}};
  detail::linalg::check_into(s, "qr_append_columns", {oq, orr}, {&Q, &R, &C});
  const QrResult r = kernel(s, Q, R, C);
  detail::linalg::commit_into(s, {oq, orr}, {&r.Q, &r.R});
}

}  // namespace tenferro
