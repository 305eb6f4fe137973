#pragma once
// Typed wrappers over LAPACKE's `_work` entry points (column-major, caller-supplied
// workspace) and CBLAS trsm, templated over the four inexact dtypes. Each wrapper takes
// the same arguments for every T; the complex-only real workspace (`rwork`) is ignored
// for real T. Workspace queries (lwork = -1) go through the same wrappers.
#include "core/internal_check.hpp"

#include <complex>
// LAPACKE's complex types are std::complex (layout-compatible with C99 complex).
#define LAPACK_COMPLEX_CUSTOM
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>

#include <type_traits>

#include "tenferro/dtype.hpp"

namespace tenferro::detail::lapack {

using lint = lapack_int;
constexpr int kCol = LAPACK_COL_MAJOR;

// Picks the s/d/c/z routine for T and forwards the arguments.
#define TENFERRO_LAPACK_PICK(T, s, d, c, z, ...)                          \
  if constexpr (std::is_same_v<T, float>) return s(__VA_ARGS__);           \
  else if constexpr (std::is_same_v<T, double>) return d(__VA_ARGS__);     \
  else if constexpr (std::is_same_v<T, std::complex<float>>) return c(__VA_ARGS__); \
  else return z(__VA_ARGS__)
#define TENFERRO_LAPACK_PICK_R(T, s, d, ...) \
  if constexpr (std::is_same_v<T, float>) return s(__VA_ARGS__); \
  else return d(__VA_ARGS__)
#define TENFERRO_LAPACK_PICK_C(T, c, z, ...) \
  if constexpr (std::is_same_v<T, std::complex<float>>) return c(__VA_ARGS__); \
  else return z(__VA_ARGS__)

/// gesdd: A = U Σ Vᴴ by divide and conquer. jobz 'N', 'S', 'A'.
template <class T>
lint gesdd(char jobz, lint m, lint n, T* a, lint lda, real_t<T>* s, T* u, lint ldu, T* vt, lint ldvt, T* work, lint lwork,
           real_t<T>* rwork, lint* iwork) {
  if constexpr (is_complex_v<T>) {
    TENFERRO_LAPACK_PICK_C(T, LAPACKE_cgesdd_work, LAPACKE_zgesdd_work, kCol, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork);
  } else {
    (void)rwork;
    TENFERRO_LAPACK_PICK_R(T, LAPACKE_sgesdd_work, LAPACKE_dgesdd_work, kCol, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork);
  }
}

/// geqrf: Householder QR, reflectors below the diagonal, R on and above.
template <class T> lint geqrf(lint m, lint n, T* a, lint lda, T* tau, T* work, lint lwork) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgeqrf_work, LAPACKE_dgeqrf_work, LAPACKE_cgeqrf_work, LAPACKE_zgeqrf_work, kCol, m, n, a, lda, tau, work, lwork);
}

/// orgqr/ungqr: forms the m×n Q from k reflectors.
template <class T> lint orgqr(lint m, lint n, lint k, T* a, lint lda, const T* tau, T* work, lint lwork) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sorgqr_work, LAPACKE_dorgqr_work, LAPACKE_cungqr_work, LAPACKE_zungqr_work, kCol, m, n, k, a, lda, tau, work, lwork);
}

/// geqp3: QR with column pivoting (jpvt 1-based, 0 on entry = free column).
template <class T> lint geqp3(lint m, lint n, T* a, lint lda, lint* jpvt, T* tau, T* work, lint lwork, real_t<T>* rwork) {
  if constexpr (is_complex_v<T>) {
    TENFERRO_LAPACK_PICK_C(T, LAPACKE_cgeqp3_work, LAPACKE_zgeqp3_work, kCol, m, n, a, lda, jpvt, tau, work, lwork, rwork);
  } else {
    (void)rwork;
    TENFERRO_LAPACK_PICK_R(T, LAPACKE_sgeqp3_work, LAPACKE_dgeqp3_work, kCol, m, n, a, lda, jpvt, tau, work, lwork);
  }
}

/// syevd/heevd: Hermitian eigenproblem by divide and conquer. jobz 'N' or 'V'.
template <class T>
lint syevd(char jobz, char uplo, lint n, T* a, lint lda, real_t<T>* w, T* work, lint lwork, real_t<T>* rwork, lint lrwork, lint* iwork,
           lint liwork) {
  if constexpr (is_complex_v<T>) {
    TENFERRO_LAPACK_PICK_C(T, LAPACKE_cheevd_work, LAPACKE_zheevd_work, kCol, jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork);
  } else {
    (void)rwork;
    (void)lrwork;
    TENFERRO_LAPACK_PICK_R(T, LAPACKE_ssyevd_work, LAPACKE_dsyevd_work, kCol, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork);
  }
}

/// geev: general eigenproblem; complex T: w holds the values (wi unused); real T: wr/wi.
template <class T>
lint geev(char jobvl, char jobvr, lint n, T* a, lint lda, T* wr, real_t<T>* wi, T* vl, lint ldvl, T* vr, lint ldvr, T* work, lint lwork,
          real_t<T>* rwork) {
  if constexpr (is_complex_v<T>) {
    (void)wi;
    TENFERRO_LAPACK_PICK_C(T, LAPACKE_cgeev_work, LAPACKE_zgeev_work, kCol, jobvl, jobvr, n, a, lda, wr, vl, ldvl, vr, ldvr, work, lwork, rwork);
  } else {
    (void)rwork;
    TENFERRO_LAPACK_PICK_R(T, LAPACKE_sgeev_work, LAPACKE_dgeev_work, kCol, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork);
  }
}

/// getrf: LU with partial pivoting (ipiv 1-based).
template <class T> lint getrf(lint m, lint n, T* a, lint lda, lint* ipiv) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgetrf_work, LAPACKE_dgetrf_work, LAPACKE_cgetrf_work, LAPACKE_zgetrf_work, kCol, m, n, a, lda, ipiv);
}
/// getrs: solve with getrf's factors. trans 'N', 'T', 'C'.
template <class T> lint getrs(char trans, lint n, lint nrhs, const T* a, lint lda, const lint* ipiv, T* b, lint ldb) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgetrs_work, LAPACKE_dgetrs_work, LAPACKE_cgetrs_work, LAPACKE_zgetrs_work, kCol, trans, n, nrhs, a, lda, ipiv, b, ldb);
}
/// gesv: A·X = B by getrf + getrs.
template <class T> lint gesv(lint n, lint nrhs, T* a, lint lda, lint* ipiv, T* b, lint ldb) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgesv_work, LAPACKE_dgesv_work, LAPACKE_cgesv_work, LAPACKE_zgesv_work, kCol, n, nrhs, a, lda, ipiv, b, ldb);
}
/// getri: inverse from getrf's factors.
template <class T> lint getri(lint n, T* a, lint lda, const lint* ipiv, T* work, lint lwork) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgetri_work, LAPACKE_dgetri_work, LAPACKE_cgetri_work, LAPACKE_zgetri_work, kCol, n, a, lda, ipiv, work, lwork);
}
/// potrf: Cholesky. uplo 'L' or 'U'.
template <class T> lint potrf(char uplo, lint n, T* a, lint lda) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_spotrf_work, LAPACKE_dpotrf_work, LAPACKE_cpotrf_work, LAPACKE_zpotrf_work, kCol, uplo, n, a, lda);
}
/// gels: full-rank least squares by QR/LQ. trans 'N'.
template <class T> lint gels(char trans, lint m, lint n, lint nrhs, T* a, lint lda, T* b, lint ldb, T* work, lint lwork) {
  TENFERRO_LAPACK_PICK(T, LAPACKE_sgels_work, LAPACKE_dgels_work, LAPACKE_cgels_work, LAPACKE_zgels_work, kCol, trans, m, n, nrhs, a, lda, b, ldb, work, lwork);
}
/// gelsd: minimum-norm least squares by SVD (divide and conquer).
template <class T>
lint gelsd(lint m, lint n, lint nrhs, T* a, lint lda, T* b, lint ldb, real_t<T>* s, real_t<T> rcond, lint* rank, T* work, lint lwork,
           real_t<T>* rwork, lint* iwork) {
  if constexpr (is_complex_v<T>) {
    TENFERRO_LAPACK_PICK_C(T, LAPACKE_cgelsd_work, LAPACKE_zgelsd_work, kCol, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, rwork, iwork);
  } else {
    (void)rwork;
    TENFERRO_LAPACK_PICK_R(T, LAPACKE_sgelsd_work, LAPACKE_dgelsd_work, kCol, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork);
  }
}

#undef TENFERRO_LAPACK_PICK
#undef TENFERRO_LAPACK_PICK_R
#undef TENFERRO_LAPACK_PICK_C

/// trsm: B = alpha op(A)⁻¹ B (left) or B op(A)⁻¹ (right), column-major.
template <class T>
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n, T alpha, const T* a, int lda, T* b,
          int ldb) noexcept {
  if constexpr (std::is_same_v<T, float>) cblas_strsm(CblasColMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, double>) cblas_dtrsm(CblasColMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
  else if constexpr (std::is_same_v<T, std::complex<float>>) cblas_ctrsm(CblasColMajor, side, uplo, trans, diag, m, n, &alpha, a, lda, b, ldb);
  else cblas_ztrsm(CblasColMajor, side, uplo, trans, diag, m, n, &alpha, a, lda, b, ldb);
}

}  // namespace tenferro::detail::lapack
