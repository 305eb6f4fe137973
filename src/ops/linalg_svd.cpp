// The SVD front ends: svd, svdvals and their `_into` forms. The operand's metadata and
// mode are checked (ops/linalg.hpp), the kernel taken from the session's table, the
// finiteness data check run, and `_into` outputs validated, all before the kernel runs
// (on the CPU, LAPACK gesdd: src/linalg/svd.cpp).
#include <algorithm>

#include "core/enum_check.hpp"
#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "ops/prepare.hpp"

namespace tenferro {

namespace {

/// Validates a (device, matrix metadata, mode), takes the session's SvdKernel, then runs
/// the finiteness data check: everything before any output is touched.
detail::SvdKernel check_svd(Session& s, const Tensor& a, SvdMode mode, std::string_view op) {
  detail::linalg::check_matrix_operand(s, a, op);
  detail::require_enum(mode, SvdMode::values, op, "SvdMode");  // Note [Enums at the API boundary]
  const detail::SvdKernel k = detail::kernel_for(s, OpId::svd, a.dtype()).fn.svd;
  detail::linalg::require_finite(s, a, op);
  return k;
}

// The three outputs of svd_into (Note [Linalg into forms]).
struct SvdOuts {
  detail::linalg::IntoOut U, S, Vh;
};
SvdOuts svd_outs(const Tensor& a, SvdMode mode, const Tensor& U, const Tensor& S, const Tensor& Vh) {
  using namespace detail::linalg;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const bool vectors = mode != SvdMode::values;
  const std::int64_t ucols = mode == SvdMode::thin ? k : m, vrows = mode == SvdMode::thin ? k : n;
  return {{&U, "U", a.dtype(), matrix_shape(m, ucols, a), vectors},
          {&S, "S", real_dtype(a.dtype()), vector_shape(k, a)},
          {&Vh, "Vh", a.dtype(), matrix_shape(vrows, n, a), vectors}};
}

}  // namespace

SvdResult svd(Session& s, const Tensor& a, SvdMode mode) {
  return check_svd(s, a, mode, "svd")(s, a, mode, "svd");
}

void svd_into(Session& s, const Tensor& a, const Tensor& U, const Tensor& S, const Tensor& Vh, SvdMode mode) {
  constexpr std::string_view op = "svd";
  const detail::SvdKernel k = check_svd(s, a, mode, op);
  const SvdOuts o = svd_outs(a, mode, U, S, Vh);
  detail::linalg::check_into(s, op, {o.U, o.S, o.Vh}, {&a});
  const SvdResult r = k(s, a, mode, op);
  detail::linalg::commit_into(s, {o.U, o.S, o.Vh}, {&r.U, &r.S, &r.Vh});
}

Tensor svdvals(Session& s, const Tensor& a) {
  return check_svd(s, a, SvdMode::values, "svdvals")(s, a, SvdMode::values, "svdvals").S;
}

void svdvals_into(Session& s, const Tensor& a, const Tensor& S) {
  constexpr std::string_view op = "svdvals";
  const detail::SvdKernel k = check_svd(s, a, SvdMode::values, op);
  const detail::linalg::IntoOut o{&S, "S", real_dtype(a.dtype()), detail::linalg::vector_shape(std::min(a.extent(0), a.extent(1)), a)};
  detail::linalg::check_into(s, op, {o}, {&a});
  const SvdResult r = k(s, a, SvdMode::values, op);
  detail::linalg::commit_into(s, {o}, {&r.S});
}

}  // namespace tenferro
