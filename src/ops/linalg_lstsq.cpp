// The least-squares front ends: lstsq (QR or SVD driver) and pinv, both forms. The
// operands' metadata and options are checked, then the finiteness data checks (of a,
// and of b for lstsq), all before any output is touched
// (on the CPU, LAPACK gels / gelsd and the SVD: src/linalg/lstsq.cpp).
#include <algorithm>
#include <cmath>

#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

detail::linalg::Rhs check_lstsq(Session& s, const Tensor& a, const Tensor& b, LstsqDriver driver, double rcond) {
  constexpr std::string_view op = "lstsq";
  detail::linalg::check_matrix_operand(s, a, op);
  detail::require_enum(driver, LstsqDriver::svd, op, "LstsqDriver");
  if (std::isnan(rcond)) throw ArgumentError(op, "rcond must not be NaN");
  detail::require_tensor_on(b, s.device(), op, "b");
  auto rhs = detail::linalg::rhs_infer(a, b, op, a.extent(0), false);
  detail::linalg::require_finite(s, a, op);
  detail::linalg::require_finite(s, rhs.mat(), op);
  return rhs;
}

detail::PinvKernel check_pinv(Session& s, const Tensor& a, double rtol) {
  constexpr std::string_view op = "pinv";
  detail::linalg::check_matrix_operand(s, a, op);
  if (std::isnan(rtol)) throw ArgumentError(op, "rtol must not be NaN");
  const detail::PinvKernel k = detail::kernel_for(s, OpId::pinv, a.dtype()).fn.pinv;
  detail::linalg::require_finite(s, a, op);
  return k;
}

}  // namespace

LstsqResult lstsq(Session& s, const Tensor& a, const Tensor& b, LstsqDriver driver, double rcond) {
  const auto rhs = check_lstsq(s, a, b, driver, rcond);
  return detail::kernel_for(s, OpId::lstsq, a.dtype()).fn.lstsq(s, a, rhs, b, driver, rcond);
}

void lstsq_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& X, const Tensor& rank, const Tensor& S, LstsqDriver driver,
                double rcond) {
  using detail::linalg::IntoOut;
  const auto rhs = check_lstsq(s, a, b, driver, rcond);
  const detail::LstsqKernel k = detail::kernel_for(s, OpId::lstsq, a.dtype()).fn.lstsq;
  Dims xs = b.shape();
  xs[0] = a.extent(1);
  const IntoOut ox{&X, "X", a.dtype(), xs}, ork{&rank, "rank", DType::i64, detail::linalg::batch_shape(a)},
      os{&S, "S", real_dtype(a.dtype()), detail::linalg::vector_shape(std::min(a.extent(0), a.extent(1)), a), driver == LstsqDriver::svd};
  detail::linalg::check_into(s, "lstsq", {ox, ork, os}, {&a, &b});
  const LstsqResult r = k(s, a, rhs, b, driver, rcond);
  detail::linalg::commit_into(s, {ox, ork, os}, {&r.X, &r.rank, &r.S});
}

Tensor pinv(Session& s, const Tensor& a, double rtol) {
  return check_pinv(s, a, rtol)(s, a, rtol);
}

void pinv_into(Session& s, const Tensor& a, const Tensor& out, double rtol) {
  const detail::PinvKernel k = check_pinv(s, a, rtol);
  const detail::linalg::IntoOut o{&out, "out", a.dtype(), detail::linalg::matrix_shape(a.extent(1), a.extent(0), a)};
  detail::linalg::check_into(s, "pinv", {o}, {&a});
  const Tensor x = k(s, a, rtol);
  detail::linalg::commit_into(s, {o}, {&x});
}

}  // namespace tenferro
