// The eigenproblem front ends: eigh, eigvalsh (Hermitian), eig, eigvals (general) and
// their `_into` forms. The operand's metadata (a square matrix) and the triangle are
// checked, the kernel taken from the session's table, then the finiteness data check
// runs, all before any output is touched (on the CPU, LAPACK syevd/heevd and geev:
// src/linalg/eigen.cpp).
#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {
namespace {

/// Checks a square matrix operand from its metadata and returns the kernel of `op`,
/// after the finiteness data check.
template <class K> K square_finite(Session& s, const Tensor& a, OpId id, K detail::KernelFn::*member, std::string_view op) {
  detail::linalg::check_matrix_operand(s, a, op);
  detail::linalg::require_square(a, op);
  const K k = detail::kernel_for(s, id, a.dtype()).fn.*member;
  detail::linalg::require_finite(s, a, op);
  return k;
}

detail::EighKernel eigh_checked(Session& s, const Tensor& a, Triangle tri, std::string_view op) {
  detail::require_enum(tri, Triangle::upper, op, "Triangle");  // Note [Enums at the API boundary]
  return square_finite(s, a, OpId::eigh, &detail::KernelFn::eigh, op);
}

detail::EigKernel eig_checked(Session& s, const Tensor& a, std::string_view op) {
  return square_finite(s, a, OpId::eig, &detail::KernelFn::eig, op);
}

}  // namespace

EighResult eigh(Session& s, const Tensor& a, Triangle tri) {
  return eigh_checked(s, a, tri, "eigh")(s, a, tri, true, "eigh");
}

void eigh_into(Session& s, const Tensor& a, const Tensor& W, const Tensor& V, Triangle tri) {
  using detail::linalg::IntoOut;
  constexpr std::string_view op = "eigh";
  const detail::EighKernel k = eigh_checked(s, a, tri, op);
  const std::int64_t n = a.extent(0);
  const IntoOut ow{&W, "W", real_dtype(a.dtype()), detail::linalg::vector_shape(n, a)}, ov{&V, "V", a.dtype(), a.shape()};
  detail::linalg::check_into(s, op, {ow, ov}, {&a});
  const EighResult r = k(s, a, tri, true, op);
  detail::linalg::commit_into(s, {ow, ov}, {&r.W, &r.V});
}

Tensor eigvalsh(Session& s, const Tensor& a, Triangle tri) {
  return eigh_checked(s, a, tri, "eigvalsh")(s, a, tri, false, "eigvalsh").W;
}

void eigvalsh_into(Session& s, const Tensor& a, const Tensor& W, Triangle tri) {
  constexpr std::string_view op = "eigvalsh";
  const detail::EighKernel k = eigh_checked(s, a, tri, op);
  const detail::linalg::IntoOut ow{&W, "W", real_dtype(a.dtype()), detail::linalg::vector_shape(a.extent(0), a)};
  detail::linalg::check_into(s, op, {ow}, {&a});
  const EighResult r = k(s, a, tri, false, op);
  detail::linalg::commit_into(s, {ow}, {&r.W});
}

EigResult eig(Session& s, const Tensor& a) {
  return eig_checked(s, a, "eig")(s, a, true, "eig");
}

void eig_into(Session& s, const Tensor& a, const Tensor& W, const Tensor& V) {
  using detail::linalg::IntoOut;
  constexpr std::string_view op = "eig";
  const detail::EigKernel k = eig_checked(s, a, op);
  const DType c = complex_dtype(a.dtype());
  const IntoOut ow{&W, "W", c, detail::linalg::vector_shape(a.extent(0), a)}, ov{&V, "V", c, a.shape()};
  detail::linalg::check_into(s, op, {ow, ov}, {&a});
  const EigResult r = k(s, a, true, op);
  detail::linalg::commit_into(s, {ow, ov}, {&r.W, &r.V});
}

Tensor eigvals(Session& s, const Tensor& a) {
  return eig_checked(s, a, "eigvals")(s, a, false, "eigvals").W;
}

void eigvals_into(Session& s, const Tensor& a, const Tensor& W) {
  constexpr std::string_view op = "eigvals";
  const detail::EigKernel k = eig_checked(s, a, op);
  const detail::linalg::IntoOut ow{&W, "W", complex_dtype(a.dtype()), detail::linalg::vector_shape(a.extent(0), a)};
  detail::linalg::check_into(s, op, {ow}, {&a});
  const EigResult r = k(s, a, false, op);
  detail::linalg::commit_into(s, {ow}, {&r.W});
}

}  // namespace tenferro
