// The CPU's singular value decomposition kernel (LAPACK gesdd; cpu::svd_kernel, the
// SvdKernel of the front ends in src/ops/linalg_svd.cpp), shared by pinv and the
// SVD-based norms.
#include <algorithm>
#include <limits>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

// gesdd's real workspace for complex types is not queried; LAPACK 3.x documents
// LRWORK >= 7·mn (jobz = 'N', older bound; 5·mn since 3.7) and
// max(5·mn² + 5·mn, 2·mx·mn + 2·mn² + mn) otherwise.
std::int64_t gesdd_lrwork(char jobz, std::int64_t m, std::int64_t n) {
  const std::int64_t mn = std::min(m, n), mx = std::max(m, n);
  if (jobz == 'N') return 7 * mn;
  return std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
}

}  // namespace

/// svd of validated, finite `a` (shared by svd, pinv and the SVD norms).
template <class T> SvdResult svd_typed(Session& s, const Tensor& a, SvdMode mode, std::string_view op) {
  using R = real_t<T>;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  const char jobz = mode == SvdMode::values ? 'N' : mode == SvdMode::thin ? 'S' : 'A';
  const std::int64_t ucols = mode == SvdMode::thin ? k : m, vrows = mode == SvdMode::thin ? k : n;
  SvdResult r;
  r.S = new_result(vector_shape(k, a).span(), dtype_of<R>);
  if (mode != SvdMode::values) {
    r.U = new_result(matrix_shape(m, ucols, a).span(), dtype_of<T>);
    r.Vh = new_result(matrix_shape(vrows, n, a).span(), dtype_of<T>);
  }
  if (nb == 0) return r;
  T* U = mode != SvdMode::values ? static_cast<T*>(r.U.mutable_data()) : nullptr;
  T* Vh = mode != SvdMode::values ? static_cast<T*>(r.Vh.mutable_data()) : nullptr;
  R* S = static_cast<R*>(r.S.mutable_data());
  if (k == 0) {  // no singular values; a full U or Vh is the identity of its side
    if (mode == SvdMode::full)
      for (std::int64_t b = 0; b < nb; ++b) {
        set_identity(U + b * m * m, m, m, m);
        set_identity(Vh + b * n * n, n, n, n);
      }
    return r;
  }
  const lapack::lint lm = static_cast<lapack::lint>(m), ln = static_cast<lapack::lint>(n);
  const lapack::lint ldu = static_cast<lapack::lint>(std::max<std::int64_t>(1, m));
  const lapack::lint ldvt = static_cast<lapack::lint>(std::max<std::int64_t>(1, vrows));
  const LinalgWorkspace w = cached_workspace(s, op, Routine::gesdd, dtype_of<T>, static_cast<std::uint32_t>(jobz), m, n, 0, [&](lapack::lint& info) {
    T a1{}, u1{}, v1{}, q{};
    R s1{}, rw{};
    lapack::lint iw{};
    info = lapack::gesdd<T>(jobz, lm, ln, &a1, ldu, &s1, &u1, ldu, &v1, ldvt, &q, -1, &rw, &iw);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), is_complex_v<T> ? gesdd_lrwork(jobz, m, n) : 0, 8 * k};
  });
  const std::size_t slot = Carve::bytes<T>(m * n) + Carve::bytes<T>(w.lwork) + Carve::bytes<R>(w.lrwork) + Carve::bytes<lapack::lint>(w.liwork);
  const BatchFailure f = run_batches(s, nb, 12 * m * n * k + 256, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(m * n);
    T* work = c.take<T>(w.lwork);
    R* rwork = c.take<R>(w.lrwork);
    lapack::lint* iwork = c.take<lapack::lint>(w.liwork);
    pack_matrix(a, b, A, m);
    T* u = U ? U + b * m * ucols : nullptr;
    T* vt = Vh ? Vh + b * vrows * n : nullptr;
    T u1{}, v1{};
    return lapack::gesdd<T>(jobz, lm, ln, A, ldu, S + b * k, u ? u : &u1, ldu, vt ? vt : &v1, ldvt, work,
                            static_cast<lapack::lint>(w.lwork), rwork, iwork);
  });
  if (f) throw_numerical(op, is_complex_v<T> ? "gesdd (complex)" : "gesdd", "the SVD did not converge", f);
  return r;
}

template SvdResult svd_typed<float>(Session&, const Tensor&, SvdMode, std::string_view);
template SvdResult svd_typed<double>(Session&, const Tensor&, SvdMode, std::string_view);
template SvdResult svd_typed<c64>(Session&, const Tensor&, SvdMode, std::string_view);
template SvdResult svd_typed<c128>(Session&, const Tensor&, SvdMode, std::string_view);

}  // namespace detail::linalg

namespace cpu {

SvdResult svd_kernel(Session& s, const Tensor& a, SvdMode mode, std::string_view op) {
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::svd_typed<typename decltype(tag)::type>(s, a, mode, op);
  });
}

}  // namespace cpu
}  // namespace tenferro
