// The CPU's least-squares kernels (cpu/provider_kernels.hpp; the front ends in
// src/ops/linalg_lstsq.cpp): LAPACK gels for full rank, gelsd for any rank, and the
// pseudo-inverse through the SVD.
#include <algorithm>
#include <limits>

#include "cpu/provider_kernels.hpp"
#include "linalg/solve_common.hpp"

namespace tenferro {
namespace detail::linalg {

template <class T> SvdResult svd_typed(Session& s, const Tensor& a, SvdMode mode, std::string_view op);

namespace {

template <class T> LstsqResult lstsq_typed(Session& s, const Tensor& a, const Rhs& rhs, const Tensor& b, LstsqDriver driver, double rcond) {
  using R = real_t<T>;
  constexpr std::string_view op = "lstsq";
  const std::int64_t m = a.extent(0), n = a.extent(1), k = rhs.cols, mn = std::min(m, n), mx = std::max(m, n);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  LstsqResult r;
  Dims xs = b.shape();
  xs[0] = n;
  r.X = new_result(xs.span(), dtype_of<T>);
  r.rank = new_result(batch_shape(a).span(), DType::i64);
  const bool svd = driver == LstsqDriver::svd;
  if (svd) r.S = new_result(vector_shape(mn, a).span(), dtype_of<R>);
  if (nb == 0) return r;
  T* X = static_cast<T*>(r.X.mutable_data());
  std::int64_t* rank = static_cast<std::int64_t*>(r.rank.mutable_data());
  R* S = svd ? static_cast<R*>(r.S.mutable_data()) : nullptr;
  if (mn == 0 || k == 0) {  // nothing to fit: the minimum-norm solution is zero
    for (std::int64_t i = 0; i < r.X.numel(); ++i) X[i] = T(0);
    for (std::int64_t i = 0; i < nb; ++i) rank[i] = 0;
    return r;
  }
  const auto lm = static_cast<lapack::lint>(m), ln = static_cast<lapack::lint>(n), lk = static_cast<lapack::lint>(k);
  const auto ldb = static_cast<lapack::lint>(mx);
  const R rc = rcond < 0 ? std::numeric_limits<R>::epsilon() * static_cast<R>(mx) : static_cast<R>(rcond);
  const LinalgWorkspace w = cached_workspace(s, op, svd ? Routine::gelsd : Routine::gels, dtype_of<T>, 0, m, n, k, [&](lapack::lint& info) {
    T a1{}, b1{}, q{};
    R s1{}, rq{};
    lapack::lint iq{}, rk{};
    if (svd) {
      info = lapack::gelsd<T>(lm, ln, lk, &a1, lm, &b1, ldb, &s1, rc, &rk, &q, -1, &rq, &iq);
      std::int64_t lr = 0;
      if constexpr (is_complex_v<T>) lr = static_cast<std::int64_t>(rq);
      return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), std::max<std::int64_t>(1, lr), std::max<std::int64_t>(1, iq)};
    }
    info = lapack::gels<T>('N', lm, ln, lk, &a1, lm, &b1, ldb, &q, -1);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), 0, 0};
  });
  const std::size_t slot = Carve::bytes<T>(m * n) + Carve::bytes<T>(mx * k) + Carve::bytes<T>(w.lwork) + Carve::bytes<R>(w.lrwork) +
                           Carve::bytes<lapack::lint>(w.liwork) + Carve::bytes<R>(mn);
  const BatchFailure f = run_batches(s, nb, 4 * m * n * mn + 2 * m * n * k + 64, slot, [&](std::int64_t bi, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(m * n);
    T* B = c.take<T>(mx * k);
    T* work = c.take<T>(w.lwork);
    R* rwork = c.take<R>(w.lrwork);
    lapack::lint* iwork = c.take<lapack::lint>(w.liwork);
    R* sv = c.take<R>(mn);
    pack_matrix(a, bi, A, m);
    pack_matrix(rhs.mat(), bi, B, mx);
    lapack::lint info, rk = static_cast<lapack::lint>(mn);
    if (svd) info = lapack::gelsd<T>(lm, ln, lk, A, lm, B, ldb, sv, rc, &rk, work, static_cast<lapack::lint>(w.lwork), rwork, iwork);
    else info = lapack::gels<T>('N', lm, ln, lk, A, lm, B, ldb, work, static_cast<lapack::lint>(w.lwork));
    if (info) return info;
    T* Xb = X + bi * n * k;
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < n; ++i) Xb[i + j * n] = B[i + j * mx];
    rank[bi] = rk;
    if (S)
      for (std::int64_t i = 0; i < mn; ++i) S[bi * mn + i] = sv[i];
    return 0;
  });
  if (f) {
    if (svd) throw_numerical(op, "gelsd", "the SVD did not converge", f);
    throw_numerical(op, "gels", "a is rank-deficient (zero on R's diagonal); use LstsqDriver::svd", f);
  }
  return r;
}

template <class T> Tensor pinv_typed(Session& s, const Tensor& a, double rtol) {
  using R = real_t<T>;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  Tensor x = new_result(matrix_shape(n, m, a).span(), dtype_of<T>);
  if (nb == 0) return x;
  T* X = static_cast<T*>(x.mutable_data());
  if (k == 0) {
    for (std::int64_t i = 0; i < x.numel(); ++i) X[i] = T(0);
    return x;
  }
  SvdResult r = svd_typed<T>(s, a, SvdMode::thin, "pinv");
  const R tol = static_cast<R>(rtol < 0 ? std::numeric_limits<R>::epsilon() * static_cast<double>(std::max(m, n)) : rtol);
  T* U = static_cast<T*>(r.U.mutable_data());
  T* Vh = static_cast<T*>(r.Vh.mutable_data());
  const R* S = r.S.data_ptr<R>();
  // pinv = Vhᴴ · diag(1/s) · Uᴴ over the kept singular values: rows of Vh are scaled in
  // place, then one gemm with both operands conjugate-transposed.
  run_batches(s, nb, 2 * m * n * k + 64, 64, [&](std::int64_t b, std::byte*) -> std::int64_t {
    const R* sb = S + b * k;
    T* vb = Vh + b * k * n;
    const R cut = tol * sb[0];
    for (std::int64_t i = 0; i < k; ++i) {
      const R inv = sb[i] > cut && sb[i] > 0 ? R(1) / sb[i] : R(0);
      for (std::int64_t j = 0; j < n; ++j) vb[i + j * k] *= inv;
    }
    blas::gemm<T>(blas::Op::conj_trans, blas::Op::conj_trans, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), T(1), vb,
                  static_cast<int>(k), U + b * m * k, static_cast<int>(m), T(0), X + b * n * m, static_cast<int>(n));
    return 0;
  });
  return x;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

LstsqResult lstsq_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, LstsqDriver driver, double rcond) {
  return visit_dtype<DTypeSet::inexact>("lstsq", a.dtype(), [&](auto tag) {
    return detail::linalg::lstsq_typed<typename decltype(tag)::type>(s, a, rhs, b, driver, rcond);
  });
}

Tensor pinv_kernel(Session& s, const Tensor& a, double rtol) {
  return visit_dtype<DTypeSet::inexact>("pinv", a.dtype(), [&](auto tag) { return detail::linalg::pinv_typed<typename decltype(tag)::type>(s, a, rtol); });
}

}  // namespace cpu
}  // namespace tenferro
