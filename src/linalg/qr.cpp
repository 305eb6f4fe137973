// Householder QR (LAPACK geqrf + orgqr/ungqr) and QR with column pivoting (geqp3).
#include <algorithm>
#include <limits>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

template <class T> real_t<T> abs_of(T v) noexcept {
  if constexpr (is_complex_v<T>) return std::abs(v);
  else return v < 0 ? -v : v;
}

// Positive-diagonal gauge: D = diag(phase(R_ii)); Q·R = (Q·D)(D⁻¹·R) and D⁻¹·R has
// real non-negative diagonal.
template <class T> void fix_gauge(T* Q, std::int64_t m, T* R, std::int64_t rrows, std::int64_t n, std::int64_t k) noexcept {
  for (std::int64_t i = 0; i < k; ++i) {
    const T d = R[i + i * rrows];
    const real_t<T> ad = abs_of(d);
    if (ad == 0) continue;
    const T ph = d / ad;
    if (ph == T(1)) continue;
    T cph;
    if constexpr (is_complex_v<T>) cph = std::conj(ph);
    else cph = ph;
    for (std::int64_t j = i; j < n; ++j) R[i + j * rrows] *= cph;
    R[i + i * rrows] = T(ad);
    for (std::int64_t r = 0; r < m; ++r) Q[r + i * m] *= ph;
  }
}

// geqp3's real workspace for complex types: 2·N (documented, not queried).
template <class T> QrResult qr_typed(Session& s, const Tensor& a, QrMode mode, bool positive, bool pivoted, Tensor* perm, std::string_view op) {
  using R = real_t<T>;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  const std::int64_t qcols = mode == QrMode::reduced ? k : m, rrows = qcols;
  QrResult r;
  r.Q = new_result(matrix_shape(m, qcols, a).span(), dtype_of<T>);
  r.R = new_result(matrix_shape(rrows, n, a).span(), dtype_of<T>);
  if (pivoted) *perm = new_result(vector_shape(n, a).span(), DType::i64);
  if (nb == 0) return r;
  T* Q = static_cast<T*>(r.Q.mutable_data());
  T* Rt = static_cast<T*>(r.R.mutable_data());
  std::int64_t* P = pivoted ? static_cast<std::int64_t*>(perm->mutable_data()) : nullptr;
  if (k == 0) {  // Q is an identity (complete) or empty; R is all zeros or empty
    for (std::int64_t b = 0; b < nb; ++b) {
      set_identity(Q + b * m * qcols, m, qcols, std::max<std::int64_t>(1, m));
      for (std::int64_t i = 0; i < rrows * n; ++i) Rt[b * rrows * n + i] = T(0);
      if (P)
        for (std::int64_t j = 0; j < n; ++j) P[b * n + j] = j;
    }
    return r;
  }
  const auto lm = static_cast<lapack::lint>(m), ln = static_cast<lapack::lint>(n), lk = static_cast<lapack::lint>(k);
  const auto lq = static_cast<lapack::lint>(qcols);
  const LinalgWorkspace wf = cached_workspace(s, op, pivoted ? Routine::geqp3 : Routine::geqrf, dtype_of<T>, 0, m, n, 0, [&](lapack::lint& info) {
    T a1{}, t1{}, q{};
    R rw{};
    lapack::lint jp{};
    if (pivoted) info = lapack::geqp3<T>(lm, ln, &a1, lm, &jp, &t1, &q, -1, &rw);
    else info = lapack::geqrf<T>(lm, ln, &a1, lm, &t1, &q, -1);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), pivoted && is_complex_v<T> ? 2 * n : 0, pivoted ? n : 0};
  });
  const LinalgWorkspace wo = cached_workspace(s, op, Routine::orgqr, dtype_of<T>, 0, m, qcols, k, [&](lapack::lint& info) {
    T a1{}, t1{}, q{};
    info = lapack::orgqr<T>(lm, lq, lk, &a1, lm, &t1, &q, -1);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), 0, 0};
  });
  // Factor in place in Q when Q has room for A's columns (M >= N, or square).
  const bool in_place = !pivoted && qcols >= n;
  const std::int64_t lwork = std::max(wf.lwork, wo.lwork);
  const std::size_t slot = (in_place ? 0 : Carve::bytes<T>(m * n)) + Carve::bytes<T>(k) + Carve::bytes<T>(lwork) + Carve::bytes<R>(wf.lrwork) +
                           Carve::bytes<lapack::lint>(wf.liwork);
  const BatchFailure f = run_batches(s, nb, 4 * m * n * k + 256, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* Qb = Q + b * m * qcols;
    T* Rb = Rt + b * rrows * n;
    T* F = in_place ? Qb : c.take<T>(m * n);
    T* tau = c.take<T>(k);
    T* work = c.take<T>(lwork);
    R* rwork = c.take<R>(wf.lrwork);
    lapack::lint* jpvt = c.take<lapack::lint>(wf.liwork);
    pack_matrix(a, b, F, m);
    lapack::lint info;
    if (pivoted) {
      for (std::int64_t j = 0; j < n; ++j) jpvt[j] = 0;
      info = lapack::geqp3<T>(lm, ln, F, lm, jpvt, tau, work, static_cast<lapack::lint>(lwork), rwork);
      for (std::int64_t j = 0; j < n; ++j) P[b * n + j] = jpvt[j] - 1;
    } else {
      info = lapack::geqrf<T>(lm, ln, F, lm, tau, work, static_cast<lapack::lint>(lwork));
    }
    if (info) return info;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < rrows; ++i) Rb[i + j * rrows] = i <= j ? F[i + j * m] : T(0);
    if (!in_place) std::memcpy(Qb, F, static_cast<std::size_t>(m * std::min(qcols, n)) * sizeof(T));
    info = lapack::orgqr<T>(lm, lq, lk, Qb, lm, tau, work, static_cast<lapack::lint>(lwork));
    if (info) return info;
    if (positive) fix_gauge(Qb, m, Rb, rrows, n, k);
    return 0;
  });
  if (f) throw_numerical(op, pivoted ? "geqp3/orgqr" : "geqrf/orgqr", "invalid argument", f);
  return r;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

QrResult qr_kernel(Session& s, const Tensor& a, QrMode mode, bool positive_diagonal) {
  return visit_dtype<DTypeSet::inexact>("qr", a.dtype(), [&](auto tag) {
    return detail::linalg::qr_typed<typename decltype(tag)::type>(s, a, mode, positive_diagonal, false, nullptr, "qr");
  });
}

PivotedQrResult qr_pivoted_kernel(Session& s, const Tensor& a, double rtol) {
  constexpr std::string_view op = "qr_pivoted";
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    PivotedQrResult r;
    QrResult q = detail::linalg::qr_typed<T>(s, a, QrMode::reduced, false, true, &r.perm, op);
    r.Q = std::move(q.Q);
    r.R = std::move(q.R);
    const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
    const double tol = rtol < 0 ? static_cast<double>(std::max(m, n)) * std::numeric_limits<real_t<T>>::epsilon() : rtol;
    r.rank = detail::linalg::new_result(detail::linalg::batch_shape(a).span(), DType::i64);
    std::int64_t* rk = static_cast<std::int64_t*>(r.rank.mutable_data());
    const T* R = r.R.data_ptr<T>();
    const std::int64_t nb = r.rank.numel();
    for (std::int64_t b = 0; b < nb; ++b) {
      const T* Rb = R + b * k * n;
      const double r00 = k ? static_cast<double>(std::abs(Rb[0])) : 0.0;
      std::int64_t count = 0;
      for (std::int64_t i = 0; i < k; ++i)
        if (static_cast<double>(std::abs(Rb[i + i * k])) > tol * r00) ++count;
      rk[b] = count;
    }
    return r;
  });
}

}  // namespace cpu
}  // namespace tenferro
