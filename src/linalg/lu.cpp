// The CPU's LU kernels (cpu/provider_kernels.hpp; the front ends in
// src/ops/linalg_lu.cpp). LU factorizations: partial pivoting (LAPACK getrf) as (P, L, U)
// or packed with pivots,
// lu_solve (getrs), det and slogdet from the LU diagonal, and full-pivot LU (complete
// pivoting as LAPACK getc2 does, written here so it runs on any batch).
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/provider_kernels.hpp"
#include "linalg/solve_common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

std::int64_t count_batches(const Tensor& a) {
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  return nb;
}

// Row order after applying LAPACK's interchanges (1-based ipiv) to 0..m-1: (P·A) row i
// is A row perm[i].
void rows_from_pivots(const lapack::lint* ipiv, std::int64_t k, std::int64_t m, std::int64_t* perm) noexcept {
  for (std::int64_t i = 0; i < m; ++i) perm[i] = i;
  for (std::int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[ipiv[i] - 1]);
}

template <class T> LuResult lu_typed(Session& s, const Tensor& a) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n), nb = count_batches(a);
  LuResult r;
  r.P = new_result(matrix_shape(m, m, a).span(), dtype_of<T>);
  r.L = new_result(matrix_shape(m, k, a).span(), dtype_of<T>);
  r.U = new_result(matrix_shape(k, n, a).span(), dtype_of<T>);
  if (nb == 0) return r;
  T* P = static_cast<T*>(r.P.mutable_data());
  T* L = static_cast<T*>(r.L.mutable_data());
  T* U = static_cast<T*>(r.U.mutable_data());
  const auto lm = static_cast<lapack::lint>(m), ln = static_cast<lapack::lint>(n);
  const std::size_t slot = Carve::bytes<T>(m * n) + Carve::bytes<lapack::lint>(k) + Carve::bytes<std::int64_t>(m);
  const BatchFailure fail = run_batches(s, nb, m * n * k + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* F = c.take<T>(m * n);
    lapack::lint* ipiv = c.take<lapack::lint>(k);
    std::int64_t* perm = c.take<std::int64_t>(m);
    if (k) {
      pack_matrix(a, b, F, m);
      // info > 0 (singular U) is not an error here; info < 0 is (Note [LAPACK info codes]).
      if (const lapack::lint info = lapack::getrf<T>(lm, ln, F, lm, ipiv); info < 0) return info;
    }
    rows_from_pivots(ipiv, k, m, perm);
    T* Pb = P + b * m * m;
    T* Lb = L + b * m * k;
    T* Ub = U + b * k * n;
    for (std::int64_t i = 0; i < m * m; ++i) Pb[i] = T(0);
    for (std::int64_t i = 0; i < m; ++i) Pb[i + perm[i] * m] = T(1);
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < m; ++i) Lb[i + j * m] = i > j ? F[i + j * m] : i == j ? T(1) : T(0);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < k; ++i) Ub[i + j * k] = i <= j ? F[i + j * m] : T(0);
    return 0;
  });
  if (fail) throw_numerical("lu", "getrf", "failed", fail);
  return r;
}

template <class T> LuFactorResult lu_factor_typed(Session& s, const Tensor& a) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n), nb = count_batches(a);
  LuFactorResult r;
  r.LU = new_result(a.shape().span(), dtype_of<T>);
  r.pivots = new_result(vector_shape(k, a).span(), DType::i64);
  if (nb == 0 || k == 0) return r;
  T* F = static_cast<T*>(r.LU.mutable_data());
  std::int64_t* piv = static_cast<std::int64_t*>(r.pivots.mutable_data());
  const auto lm = static_cast<lapack::lint>(m), ln = static_cast<lapack::lint>(n);
  const BatchFailure fail = run_batches(s, nb, m * n * k + 64, Carve::bytes<lapack::lint>(k), [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    lapack::lint* ipiv = Carve(ws).take<lapack::lint>(k);
    T* Fb = F + b * m * n;
    pack_matrix(a, b, Fb, m);
    if (const lapack::lint info = lapack::getrf<T>(lm, ln, Fb, lm, ipiv); info < 0) return info;  // > 0: singular, fine
    for (std::int64_t i = 0; i < k; ++i) piv[b * k + i] = ipiv[i] - 1;
    return 0;
  });
  if (fail) throw_numerical("lu_factor", "getrf", "failed", fail);
  return r;
}

template <class T> Tensor lu_solve_typed(Session& s, const LuFactorResult& f, const Rhs& rhs, const Tensor& b) {
  const Tensor& a = f.LU;
  const std::int64_t n = a.extent(0), k = rhs.cols, nb = count_batches(a);
  Tensor x = new_result(b.shape().span(), dtype_of<T>);
  if (nb == 0 || n == 0) return x;
  T* X = static_cast<T*>(x.mutable_data());
  const auto ln = static_cast<lapack::lint>(n), lk = static_cast<lapack::lint>(k);
  const Tensor& pv = f.pivots;
  const std::size_t slot = Carve::bytes<T>(n * n) + Carve::bytes<lapack::lint>(n);
  const BatchFailure fail = run_batches(s, nb, 2 * n * n * k + 64, slot, [&](std::int64_t bi, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(n * n);
    lapack::lint* ipiv = c.take<lapack::lint>(n);
    pack_matrix(a, bi, A, n);
    const std::int64_t* p = pv.data_ptr<std::int64_t>() + batch_offset_vec(pv, bi);
    for (std::int64_t i = 0; i < n; ++i) ipiv[i] = static_cast<lapack::lint>(p[i * pv.stride(0)] + 1);
    for (std::int64_t i = 0; i < n; ++i)  // getrs would divide by the zero: report it as trtrs does
      if (A[i + i * n] == T(0)) return i + 1;
    T* Xb = X + bi * n * k;
    pack_matrix(rhs.mat(), bi, Xb, n);
    if (k) lapack::getrs<T>('N', ln, lk, A, ln, ipiv, Xb, ln);
    return 0;
  });
  if (fail) throw_numerical("lu_solve", "getrs", "U has an exact zero on its diagonal", fail);
  return x;
}

// det and slogdet: U's diagonal after getrf, with the sign of the row permutation.
template <class T> void det_typed(Session& s, const Tensor& a, Tensor* det, Tensor* sign, Tensor* logabs) {
  using R = real_t<T>;
  const std::int64_t n = a.extent(0), nb = count_batches(a);
  const Dims bs = batch_shape(a);
  if (det) *det = new_result(bs.span(), dtype_of<T>);
  if (sign) *sign = new_result(bs.span(), dtype_of<T>);
  if (logabs) *logabs = new_result(bs.span(), dtype_of<R>);
  T* D = det ? static_cast<T*>(det->mutable_data()) : nullptr;
  T* S = sign ? static_cast<T*>(sign->mutable_data()) : nullptr;
  R* LA = logabs ? static_cast<R*>(logabs->mutable_data()) : nullptr;
  const auto ln = static_cast<lapack::lint>(n);
  const std::size_t slot = Carve::bytes<T>(n * n) + Carve::bytes<lapack::lint>(n);
  const BatchFailure fail = run_batches(s, nb, n * n * n + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* F = c.take<T>(n * n);
    lapack::lint* ipiv = c.take<lapack::lint>(n);
    if (n) {
      pack_matrix(a, b, F, n);
      if (const lapack::lint info = lapack::getrf<T>(ln, ln, F, ln, ipiv); info < 0) return info;  // > 0: det 0, fine
    }
    T prod(1), ph(1);
    R la(0);
    bool neg = false;
    for (std::int64_t i = 0; i < n; ++i) {
      const T u = F[i + i * n];
      if (ipiv[i] != i + 1) neg = !neg;
      prod *= u;
      const R au = std::abs(u);
      la += std::log(au);
      if (au == 0) ph = T(0);
      else ph *= u / au;
    }
    if (neg) {
      prod = -prod;
      ph = -ph;
    }
    if (D) D[b] = prod;
    if (S) S[b] = ph;
    if (LA) LA[b] = ph == T(0) ? -std::numeric_limits<R>::infinity() : la;
    return 0;
  });
  if (fail) throw_numerical(det ? "det" : "slogdet", "getrf", "failed", fail);
}

// Complete pivoting (LAPACK getc2's algorithm): at step k, the largest |a_ij| of the
// trailing block moves to (k, k) by a row and a column swap, then one elimination step.
template <class T> FullPivLuResult lu_full_typed(Session& s, const Tensor& a) {
  const std::int64_t n = a.extent(0), nb = count_batches(a);
  FullPivLuResult r;
  r.P = new_result(a.shape().span(), dtype_of<T>);
  r.L = new_result(a.shape().span(), dtype_of<T>);
  r.U = new_result(a.shape().span(), dtype_of<T>);
  r.Q = new_result(a.shape().span(), dtype_of<T>);
  if (nb == 0 || n == 0) return r;
  T* P = static_cast<T*>(r.P.mutable_data());
  T* L = static_cast<T*>(r.L.mutable_data());
  T* U = static_cast<T*>(r.U.mutable_data());
  T* Q = static_cast<T*>(r.Q.mutable_data());
  const std::size_t slot = Carve::bytes<T>(n * n) + 2 * Carve::bytes<std::int64_t>(n);
  run_batches(s, nb, n * n * n + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* F = c.take<T>(n * n);
    std::int64_t* rp = c.take<std::int64_t>(n);
    std::int64_t* cp = c.take<std::int64_t>(n);
    pack_matrix(a, b, F, n);
    for (std::int64_t i = 0; i < n; ++i) rp[i] = cp[i] = i;
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t pi = k, pj = k;
      real_t<T> best = -1;
      for (std::int64_t j = k; j < n; ++j)
        for (std::int64_t i = k; i < n; ++i)
          if (const real_t<T> v = std::abs(F[i + j * n]); v > best) {
            best = v;
            pi = i;
            pj = j;
          }
      if (pi != k) {
        for (std::int64_t j = 0; j < n; ++j) std::swap(F[k + j * n], F[pi + j * n]);
        std::swap(rp[k], rp[pi]);
      }
      if (pj != k) {
        for (std::int64_t i = 0; i < n; ++i) std::swap(F[i + k * n], F[i + pj * n]);
        std::swap(cp[k], cp[pj]);
      }
      const T piv = F[k + k * n];
      if (piv == T(0)) break;  // the trailing block is all zero
      for (std::int64_t i = k + 1; i < n; ++i) F[i + k * n] /= piv;
      for (std::int64_t j = k + 1; j < n; ++j) {
        const T ukj = F[k + j * n];
        for (std::int64_t i = k + 1; i < n; ++i) F[i + j * n] -= F[i + k * n] * ukj;
      }
    }
    T* Pb = P + b * n * n;
    T* Lb = L + b * n * n;
    T* Ub = U + b * n * n;
    T* Qb = Q + b * n * n;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        Lb[i + j * n] = i > j ? F[i + j * n] : i == j ? T(1) : T(0);
        Ub[i + j * n] = i <= j ? F[i + j * n] : T(0);
        Pb[i + j * n] = T(0);
        Qb[i + j * n] = T(0);
      }
    for (std::int64_t i = 0; i < n; ++i) {
      Pb[i + rp[i] * n] = T(1);  // (P·A) row i = A row rp[i]
      Qb[cp[i] + i * n] = T(1);  // (A·Q) column i = A column cp[i]
    }
    return 0;
  });
  return r;
}

}  // namespace

std::int64_t batch_offset_vec(const Tensor& v, std::int64_t b) noexcept {
  std::int64_t off = 0;
  for (int i = 1; i < v.rank() && b; ++i) {
    const std::int64_t e = v.extent(i);
    off += (b % e) * v.stride(i);
    b /= e;
  }
  return off;
}

}  // namespace detail::linalg

namespace cpu {

LuResult lu_kernel(Session& s, const Tensor& a) {
  return visit_dtype<DTypeSet::inexact>("lu", a.dtype(), [&](auto tag) { return detail::linalg::lu_typed<typename decltype(tag)::type>(s, a); });
}

LuFactorResult lu_factor_kernel(Session& s, const Tensor& a) {
  return visit_dtype<DTypeSet::inexact>("lu_factor", a.dtype(),
                                        [&](auto tag) { return detail::linalg::lu_factor_typed<typename decltype(tag)::type>(s, a); });
}

Tensor lu_solve_kernel(Session& s, const LuFactorResult& f, const detail::linalg::Rhs& rhs, const Tensor& b) {
  constexpr std::string_view op = "lu_solve";
  const std::int64_t n = f.LU.extent(0);
  // Pivot values: row i may only be swapped with a row i..n-1 (LAPACK's contract).
  const std::int64_t nb = f.pivots.numel() / std::max<std::int64_t>(1, n);
  for (std::int64_t bi = 0; bi < nb; ++bi) {
    const std::int64_t* p = f.pivots.data_ptr<std::int64_t>() + detail::linalg::batch_offset_vec(f.pivots, bi);
    for (std::int64_t i = 0; i < n; ++i)
      if (const std::int64_t v = p[i * f.pivots.stride(0)]; v < i || v >= n)
        throw ArgumentError(op, "pivot " + std::to_string(v) + " at position " + std::to_string(i) + " of batch " + std::to_string(bi) +
                                    " is out of range [" + std::to_string(i) + ", " + std::to_string(n) + ")");
  }
  return visit_dtype<DTypeSet::inexact>(op, f.LU.dtype(),
                                        [&](auto tag) { return detail::linalg::lu_solve_typed<typename decltype(tag)::type>(s, f, rhs, b); });
}

FullPivLuResult lu_full_pivot_kernel(Session& s, const Tensor& a) {
  return visit_dtype<DTypeSet::inexact>("lu_full_pivot", a.dtype(),
                                        [&](auto tag) { return detail::linalg::lu_full_typed<typename decltype(tag)::type>(s, a); });
}

void det_kernel(Session& s, const Tensor& a, Tensor* d, Tensor* sign, Tensor* logabs, std::string_view op) {
  visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) { detail::linalg::det_typed<typename decltype(tag)::type>(s, a, d, sign, logabs); });
}

}  // namespace cpu
}  // namespace tenferro
