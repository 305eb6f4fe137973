// The CPU's linear-solve kernels (cpu/provider_kernels.hpp; the front ends in
// src/ops/linalg_solve.cpp): solve (getrf + getrs), triangular_solve (trsm), cholesky
// (potrf) and inv (getrf + getri).
#include <algorithm>

#include "cpu/provider_kernels.hpp"
#include "linalg/solve_common.hpp"

namespace tenferro {
namespace detail::linalg {

namespace {

template <class T> Tensor solve_typed(Session& s, const Tensor& a, const Rhs& rhs, const Tensor& b, std::string_view op) {
  const std::int64_t n = a.extent(0), k = rhs.cols;
  Tensor x = new_like(b, dtype_of<T>);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  if (nb == 0 || n == 0) return x;
  T* X = static_cast<T*>(x.mutable_data());
  const auto ln = static_cast<lapack::lint>(n), lk = static_cast<lapack::lint>(k);
  if (nb == 1 && n <= 8 && k > 0) {  // one tiny system: no batch driver, stack buffers
    T A[64];
    lapack::lint ipiv[8];
    pack_matrix(a, 0, A, n);
    pack_matrix(rhs.mat(), 0, X, n);
    blas::set_threads(provider_threads(s));
    if (const lapack::lint info = lapack::gesv<T>(ln, lk, A, ln, ipiv, X, ln))
      throw_numerical(op, "getrf", "the matrix is singular (exact zero pivot)", BatchFailure{0, info});
    return x;
  }
  const std::size_t slot = Carve::bytes<T>(n * n) + Carve::bytes<lapack::lint>(n);
  const BatchFailure f = run_batches(s, nb, n * n * n + 2 * n * n * k + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(n * n);
    lapack::lint* ipiv = c.take<lapack::lint>(n);
    pack_matrix(a, b, A, n);
    T* Xb = X + b * n * k;
    pack_matrix(rhs.mat(), b, Xb, n);
    // gesv = getrf + getrs in one call (one OpenBLAS buffer round trip instead of two);
    // info > 0 is getrf's zero pivot.
    if (k == 0) return lapack::getrf<T>(ln, ln, A, ln, ipiv);
    return lapack::gesv<T>(ln, lk, A, ln, ipiv, Xb, ln);
  });
  if (f) throw_numerical(op, "getrf", "the matrix is singular (exact zero pivot)", f);
  return x;
}

template <class T> Tensor trsm_typed(Session& s, const Tensor& a, const Rhs& rhs, const Tensor& b, const TriangularSolveOptions& o) {
  const std::int64_t n = a.extent(0), rows = rhs.rows, cols = rhs.cols;
  Tensor x = new_result(b.shape().span(), dtype_of<T>);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  if (nb == 0 || n == 0) return x;
  T* X = static_cast<T*>(x.mutable_data());
  const CBLAS_SIDE side = o.side == Side::left ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = o.tri == Triangle::lower ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE tr = o.op == MatOp::none ? CblasNoTrans : o.op == MatOp::transpose ? CblasTrans : CblasConjTrans;
  const CBLAS_DIAG diag = o.unit_diagonal ? CblasUnit : CblasNonUnit;
  const BatchFailure f = run_batches(s, nb, n * n * (o.side == Side::left ? cols : rows) + 64, Carve::bytes<T>(n * n),
                                     [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    T* A = Carve(ws).take<T>(n * n);
    pack_matrix(a, b, A, n);
    if (!o.unit_diagonal)  // LAPACK trtrs's singularity check: an exact zero on the diagonal
      for (std::int64_t i = 0; i < n; ++i)
        if (A[i + i * n] == T(0)) return i + 1;
    T* Xb = X + b * rows * cols;
    pack_matrix(rhs.mat(), b, Xb, rows);
    if (rows && cols)
      lapack::trsm<T>(side, uplo, tr, diag, static_cast<int>(rows), static_cast<int>(cols), T(1), A, static_cast<int>(n), Xb,
                      static_cast<int>(rows));
    return 0;
  });
  if (f) throw_numerical("triangular_solve", "trtrs", "the triangular matrix is singular (zero on the diagonal)", f);
  return x;
}

template <class T> Tensor cholesky_typed(Session& s, const Tensor& a, Triangle tri) {
  const std::int64_t n = a.extent(0);
  Tensor l = new_result(a.shape().span(), dtype_of<T>);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  if (nb == 0 || n == 0) return l;
  T* L = static_cast<T*>(l.mutable_data());
  const char uplo = tri == Triangle::lower ? 'L' : 'U';
  const auto ln = static_cast<lapack::lint>(n);
  const BatchFailure f = run_batches(s, nb, n * n * n / 3 + 64, 64, [&](std::int64_t b, std::byte*) -> std::int64_t {
    T* Lb = L + b * n * n;
    pack_matrix(a, b, Lb, n);
    if (const lapack::lint info = lapack::potrf<T>(uplo, ln, Lb, ln)) return info;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        if (uplo == 'L' ? i < j : i > j) Lb[i + j * n] = T(0);
    return 0;
  });
  if (f) throw_numerical("cholesky", "potrf", "the matrix is not positive definite", f);
  return l;
}

template <class T> Tensor inv_typed(Session& s, const Tensor& a) {
  const std::int64_t n = a.extent(0);
  Tensor x = new_result(a.shape().span(), dtype_of<T>);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  if (nb == 0 || n == 0) return x;
  T* X = static_cast<T*>(x.mutable_data());
  const auto ln = static_cast<lapack::lint>(n);
  const LinalgWorkspace w = cached_workspace(s, "inv", Routine::getri, dtype_of<T>, 0, n, 0, 0, [&](lapack::lint& info) {
    T a1{}, q{};
    lapack::lint ip{};
    info = lapack::getri<T>(ln, &a1, ln, &ip, &q, -1);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), 0, 0};
  });
  const std::size_t slot = Carve::bytes<lapack::lint>(n) + Carve::bytes<T>(w.lwork);
  const BatchFailure f = run_batches(s, nb, 2 * n * n * n + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    lapack::lint* ipiv = c.take<lapack::lint>(n);
    T* work = c.take<T>(w.lwork);
    T* Xb = X + b * n * n;
    pack_matrix(a, b, Xb, n);
    if (const lapack::lint info = lapack::getrf<T>(ln, ln, Xb, ln, ipiv)) return info;
    return lapack::getri<T>(ln, Xb, ln, ipiv, work, static_cast<lapack::lint>(w.lwork));
  });
  if (f) throw_numerical("inv", "getrf", "the matrix is singular (exact zero pivot)", f);
  return x;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

Tensor solve_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, std::string_view op) {
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::solve_typed<typename decltype(tag)::type>(s, a, rhs, b, op);
  });
}

Tensor triangular_solve_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, const TriangularSolveOptions& o) {
  return visit_dtype<DTypeSet::inexact>("triangular_solve", a.dtype(), [&](auto tag) {
    return detail::linalg::trsm_typed<typename decltype(tag)::type>(s, a, rhs, b, o);
  });
}

Tensor cholesky_kernel(Session& s, const Tensor& a, Triangle tri) {
  return visit_dtype<DTypeSet::inexact>("cholesky", a.dtype(), [&](auto tag) {
    return detail::linalg::cholesky_typed<typename decltype(tag)::type>(s, a, tri);
  });
}

Tensor inv_kernel(Session& s, const Tensor& a) {
  return visit_dtype<DTypeSet::inexact>("inv", a.dtype(), [&](auto tag) { return detail::linalg::inv_typed<typename decltype(tag)::type>(s, a); });
}

}  // namespace cpu
}  // namespace tenferro
