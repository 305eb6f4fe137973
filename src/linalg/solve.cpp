// Linear solves: solve (getrf + getrs), triangular_solve (trsm), cholesky (potrf) and
// inv (getrf + getri).
#include <algorithm>

#include "linalg/solve_common.hpp"

namespace tenferro {
namespace detail::linalg {

Rhs check_rhs(const Tensor& a, const Tensor& b, std::string_view op, std::int64_t rows, bool right_side) {
  require_cpu_tensor(b, op, "b");
  if (!is_inexact(b.dtype())) throw DTypeError(op, "b must have a float or complex dtype, got " + describe(b));
  if (a.dtype() != b.dtype()) throw DTypeError(op, "a and b must have the same dtype, got " + describe(a) + " and " + describe(b));
  Rhs r;
  if (b.rank() == 1 && a.rank() == 2 && !right_side) {
    r.vector = true;
    r.rows = b.extent(0);
    r.cols = 1;
    r.owned = b.reshape_view({b.extent(0), 1});
  } else {
    if (b.rank() < 2) throw RankError(op, "b must be a matrix [N, K, batch...] (or a vector [N] for unbatched a), got " + describe(b));
    require_same_batch(a, b, op);
    r.rows = b.extent(0);
    r.cols = b.extent(1);
    r.view = &b;
  }
  const std::int64_t have = right_side ? r.cols : r.rows;
  if (have != rows)
    throw ShapeError(op, std::string("b must have ") + (right_side ? "columns" : "rows") + " matching a's order " + std::to_string(rows) +
                             ", got " + describe(a) + " and " + describe(b));
  if (r.rows > INT32_MAX / 2 || r.cols > INT32_MAX / 2 || r.rows * r.cols > INT32_MAX / 2)
    throw ShapeError(op, "b is too large for LAPACK's 32-bit indices: " + describe(b));
  return r;
}

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
    blas::set_threads(s.num_threads());
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
  const LinalgWorkspace w = cached_workspace(s, Routine::getri, dtype_of<T>, 0, n, 0, 0, [&] {
    T a1{}, q{};
    lapack::lint ip{};
    lapack::getri<T>(ln, &a1, ln, &ip, &q, -1);
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

void check_square(Session& s, const Tensor& a, std::string_view op) {
  s.check(op);
  check_matrix(a, op);
  require_square(a, op);
}

}  // namespace
}  // namespace detail::linalg

Tensor solve(Session& s, const Tensor& a, const Tensor& b) {
  constexpr std::string_view op = "solve";
  detail::linalg::check_square(s, a, op);
  const auto rhs = detail::linalg::check_rhs(a, b, op, a.extent(0), false);
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::solve_typed<typename decltype(tag)::type>(s, a, rhs, b, op);
  });
}

void solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out) {
  constexpr std::string_view op = "solve";
  detail::linalg::check_square(s, a, op);
  const auto rhs = detail::linalg::check_rhs(a, b, op, a.extent(0), false);
  detail::linalg::require_into(out, op, b.dtype(), b.shape().span());
  const Tensor x = visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::solve_typed<typename decltype(tag)::type>(s, a, rhs, b, op);
  });
  copy_into(s, x, out);
}

namespace {
detail::linalg::Rhs check_trsm(Session& s, const Tensor& a, const Tensor& b, const TriangularSolveOptions& o) {
  constexpr std::string_view op = "triangular_solve";
  detail::linalg::check_square(s, a, op);
  detail::require_enum(o.side, Side::right, op, "Side");
  detail::require_enum(o.tri, Triangle::upper, op, "Triangle");
  detail::require_enum(o.op, MatOp::adjoint, op, "MatOp");
  return detail::linalg::check_rhs(a, b, op, a.extent(0), o.side == Side::right);
}
}  // namespace

Tensor triangular_solve(Session& s, const Tensor& a, const Tensor& b, const TriangularSolveOptions& opt) {
  const auto rhs = check_trsm(s, a, b, opt);
  return visit_dtype<DTypeSet::inexact>("triangular_solve", a.dtype(), [&](auto tag) {
    return detail::linalg::trsm_typed<typename decltype(tag)::type>(s, a, rhs, b, opt);
  });
}

void triangular_solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out, const TriangularSolveOptions& opt) {
  const auto rhs = check_trsm(s, a, b, opt);
  detail::linalg::require_into(out, "triangular_solve", b.dtype(), b.shape().span());
  const Tensor x = visit_dtype<DTypeSet::inexact>("triangular_solve", a.dtype(), [&](auto tag) {
    return detail::linalg::trsm_typed<typename decltype(tag)::type>(s, a, rhs, b, opt);
  });
  copy_into(s, x, out);
}

Tensor cholesky(Session& s, const Tensor& a, Triangle tri) {
  constexpr std::string_view op = "cholesky";
  detail::linalg::check_square(s, a, op);
  detail::require_enum(tri, Triangle::upper, op, "Triangle");
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::cholesky_typed<typename decltype(tag)::type>(s, a, tri);
  });
}

void cholesky_into(Session& s, const Tensor& a, const Tensor& out, Triangle tri) {
  constexpr std::string_view op = "cholesky";
  detail::linalg::check_square(s, a, op);
  detail::require_enum(tri, Triangle::upper, op, "Triangle");
  detail::linalg::require_into(out, op, a.dtype(), a.shape().span());
  const Tensor l = visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::cholesky_typed<typename decltype(tag)::type>(s, a, tri);
  });
  copy_into(s, l, out);
}

Tensor inv(Session& s, const Tensor& a) {
  detail::linalg::check_square(s, a, "inv");
  return visit_dtype<DTypeSet::inexact>("inv", a.dtype(), [&](auto tag) { return detail::linalg::inv_typed<typename decltype(tag)::type>(s, a); });
}

void inv_into(Session& s, const Tensor& a, const Tensor& out) {
  detail::linalg::check_square(s, a, "inv");
  detail::linalg::require_into(out, "inv", a.dtype(), a.shape().span());
  const Tensor x =
      visit_dtype<DTypeSet::inexact>("inv", a.dtype(), [&](auto tag) { return detail::linalg::inv_typed<typename decltype(tag)::type>(s, a); });
  copy_into(s, x, out);
}

}  // namespace tenferro
