#pragma once
// Typed wrappers over OpenBLAS's CBLAS gemm/gemv, and the BLAS thread budget.
#include "core/internal_check.hpp"

#include <cblas.h>

#include <complex>

namespace tenferro::detail::blas {

/// BLAS operation of a stored matrix.
enum class Op : std::uint8_t { none, trans, conj_trans };

inline CBLAS_TRANSPOSE cblas_op(Op o) noexcept {
  return o == Op::none ? CblasNoTrans : o == Op::trans ? CblasTrans : CblasConjTrans;
}

// Note [BLAS threads]
// OpenBLAS has one global thread count. Every call sets it to the calling session's
// budget (1 when the caller already parallelizes over batches), so BLAS never runs more
// threads than the session owns. The last value set is remembered so the call is
// skipped when nothing changes. Two sessions on disjoint CPU sets that call BLAS at the
// same moment with different budgets race on this global; OpenBLAS offers no per-call
// thread count (known limitation, noted in docs/design.md).
void set_threads(int n) noexcept;

/// C = alpha op(A) op(B) + beta C, column-major, all dims > 0.
template <class T>
void gemm(Op ta, Op tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    cblas_cgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  } else {
    cblas_zgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  }
}

/// y = alpha op(A) x + beta y, A stored m×n column-major, incx/incy > 0.
template <class T>
void gemv(Op ta, int m, int n, T alpha, const T* a, int lda, const T* x, int incx, T beta, T* y, int incy) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasColMajor, cblas_op(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemv(CblasColMajor, cblas_op(ta), m, n, alpha, a, lda, x, incx, beta, y, incy);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    cblas_cgemv(CblasColMajor, cblas_op(ta), m, n, &alpha, a, lda, x, incx, &beta, y, incy);
  } else {
    cblas_zgemv(CblasColMajor, cblas_op(ta), m, n, &alpha, a, lda, x, incx, &beta, y, incy);
  }
}

}  // namespace tenferro::detail::blas
