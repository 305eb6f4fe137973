// Appending columns to a reduced QR factorization: the CPU kernel of qr_append_columns
// (cpu/provider_kernels.hpp; the front end in src/ops/linalg_qr.cpp).
//
// Given A = Q·R (Q [M, K] orthonormal columns) and new columns C [M, P], the QR of
// [A, C] is [Q, Q2] · [[R, R12], [0, R22]] with R12 = Qᴴ·C and Q2·R22 the QR of the part
// of C orthogonal to range(Q). That part is computed in a basis Qc of range(Q)⊥ taken
// from the Householder QR of Q itself (geqrf + orgqr of Q to a full unitary [Q·D, Qc],
// D a diagonal of unit phases): Y = Qcᴴ·C, Y = Qy·R22 (geqrf + orgqr), Q2 = Qc·Qy. Every
// step is a unitary transformation or a Householder QR, so [Q, Q2] stays orthonormal to
// working precision even when C is (nearly) in range(Q) — where classical Gram–Schmidt
// of C against Q would lose orthogonality. Cost O(M²·(K + P)), no refactorization of A.
#include <algorithm>
#include <array>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

template <class T> QrResult append_typed(Session& s, const Tensor& Qt, const Tensor& Rt, const Tensor& Ct) {
  const std::int64_t m = Qt.extent(0), k = Qt.extent(1), n = Rt.extent(1), p = Ct.extent(1);
  const std::int64_t q2 = std::min(m - k, p), kk = k + q2, mk = m - k;
  QrResult r;
  r.Q = new_result(std::array<std::int64_t, 2>{m, kk}, dtype_of<T>);
  r.R = new_result(std::array<std::int64_t, 2>{kk, n + p}, dtype_of<T>);
  T* Qn = static_cast<T*>(r.Q.mutable_data());
  T* Rn = static_cast<T*>(r.R.mutable_data());
  for (std::int64_t i = 0; i < kk * (n + p); ++i) Rn[i] = T(0);
  pack_matrix(Qt, 0, Qn, m);  // Q' = [Q, Q2]: Q first
  {
    // R' top-left block: R.
    const T* src = static_cast<const T*>(Rt.data());
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < k; ++i) Rn[i + j * kk] = src[i * Rt.stride(0) + j * Rt.stride(1)];
  }
  if (m == 0 || p == 0) return r;
  // Workspace: C (m×p), the full unitary H (m×m), tau, Y ((m−k)×p), LAPACK work.
  const auto lm = static_cast<lapack::lint>(m), lk = static_cast<lapack::lint>(k), lmk = static_cast<lapack::lint>(mk),
             lp = static_cast<lapack::lint>(p), lq2 = static_cast<lapack::lint>(q2);
  auto query_geqrf = [&](lapack::lint rows, lapack::lint cols) {
    return cached_workspace(s, "qr_append_columns", Routine::geqrf, dtype_of<T>, 0, rows, cols, 0, [&](lapack::lint& info) {
      T a1{}, t1{}, q{};
      info = lapack::geqrf<T>(rows, cols, &a1, std::max<lapack::lint>(1, rows), &t1, &q, -1);
      return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), 0, 0};
    });
  };
  auto query_orgqr = [&](lapack::lint rows, lapack::lint cols, lapack::lint refl) {
    return cached_workspace(s, "qr_append_columns", Routine::orgqr, dtype_of<T>, 0, rows, cols, refl, [&](lapack::lint& info) {
      T a1{}, t1{}, q{};
      info = lapack::orgqr<T>(rows, cols, refl, &a1, std::max<lapack::lint>(1, rows), &t1, &q, -1);
      return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), 0, 0};
    });
  };
  std::int64_t lwork = 1;
  if (q2 > 0) {
    lwork = std::max({query_geqrf(lm, lk).lwork, query_orgqr(lm, lm, lk).lwork, query_geqrf(lmk, lp).lwork, query_orgqr(lmk, lq2, lq2).lwork});
  }
  const std::size_t bytes = Carve::bytes<T>(m * p) + Carve::bytes<T>(m * m) + Carve::bytes<T>(std::max(m, p)) + Carve::bytes<T>(mk * p) +
                            Carve::bytes<T>(lwork);
  blas::set_threads(provider_threads(s));
  const Tensor ws = Tensor::empty({static_cast<std::int64_t>(bytes / 16 + 4)}, DType::c128);
  Carve c(static_cast<std::byte*>(const_cast<void*>(ws.data())));
  T* C = c.take<T>(m * p);
  T* H = c.take<T>(m * m);
  T* tau = c.take<T>(std::max(m, p));
  T* Y = c.take<T>(mk * p);
  T* work = c.take<T>(lwork);
  pack_matrix(Ct, 0, C, m);
  const int im = static_cast<int>(m), ik = static_cast<int>(k), ip = static_cast<int>(p);
  // R12 = Qᴴ·C into R'[0:k, n:n+p].
  if (k > 0) blas::gemm<T>(blas::Op::conj_trans, blas::Op::none, ik, ip, im, T(1), Qn, im, C, im, T(0), Rn + n * kk, static_cast<int>(kk));
  if (q2 == 0) return r;
  // H = full unitary from the Householder QR of Q; its last m−k columns span range(Q)⊥.
  std::copy(Qn, Qn + m * k, H);
  if (k > 0) {
    lapack::geqrf<T>(lm, lk, H, lm, tau, work, static_cast<lapack::lint>(lwork));
  }
  lapack::orgqr<T>(lm, lm, lk, H, lm, tau, work, static_cast<lapack::lint>(lwork));
  const T* Qc = H + m * k;
  // Y = Qcᴴ·C, then Y = Qy·R22.
  blas::gemm<T>(blas::Op::conj_trans, blas::Op::none, static_cast<int>(mk), ip, im, T(1), Qc, im, C, im, T(0), Y, static_cast<int>(mk));
  lapack::geqrf<T>(lmk, lp, Y, lmk, tau, work, static_cast<lapack::lint>(lwork));
  for (std::int64_t j = 0; j < p; ++j)
    for (std::int64_t i = 0; i < q2 && i <= j; ++i) Rn[(k + i) + (n + j) * kk] = Y[i + j * mk];
  lapack::orgqr<T>(lmk, lq2, lq2, Y, lmk, tau, work, static_cast<lapack::lint>(lwork));
  // Q2 = Qc·Qy into Q'[:, k:].
  blas::gemm<T>(blas::Op::none, blas::Op::none, im, static_cast<int>(q2), static_cast<int>(mk), T(1), Qc, im, Y, static_cast<int>(mk), T(0),
                Qn + m * k, im);
  return r;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

QrResult qr_append_columns_kernel(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C) {
  return visit_dtype<DTypeSet::inexact>("qr_append_columns", Q.dtype(), [&](auto tag) {
    return detail::linalg::append_typed<typename decltype(tag)::type>(s, Q, R, C);
  });
}

}  // namespace cpu
}  // namespace tenferro
