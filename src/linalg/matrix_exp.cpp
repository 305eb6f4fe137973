// Matrix exponential by scaling and squaring with Padé approximants: N. J. Higham, "The
// scaling and squaring method for the matrix exponential revisited", SIAM J. Matrix
// Anal. Appl. 26(4):1179–1193, 2005, Algorithm 2.3 (degrees 3, 5, 7, 9, 13 chosen from
// ‖A‖₁ against the θ_m of Table 2.3). Single precision uses the single-precision θ_m of
// the same paper (degrees 3, 5, 7). Products are BLAS gemm; the final rational step is
// one LAPACK gesv.
#include <algorithm>
#include <cmath>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

// Padé coefficients b_0..b_m of r_m(x) = p_m(x) / p_m(−x).
constexpr double kB3[] = {120, 60, 12, 1};
constexpr double kB5[] = {30240, 15120, 3360, 420, 30, 1};
constexpr double kB7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
constexpr double kB9[] = {17643225600, 8821612800, 2075673600, 302702400, 30270240, 2162160, 110880, 3960, 90, 1};
constexpr double kB13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
                           10559470521600.0,    670442572800.0,      33522128640.0,      1323241920.0,       40840800.0,
                           960960.0,            16380.0,             182.0,              1.0};
// θ_m: largest ‖A‖₁ for which degree m needs no scaling (Higham 2005, Table 2.3).
constexpr double kTheta64[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1, 2.097847961257068e0, 5.371920351148152e0};
constexpr double kTheta32[] = {4.258730016922831e-1, 1.880152677804762e0, 3.925724783138660e0};

template <class T> void mm(std::int64_t n, const T* x, const T* y, T* z) noexcept {
  const int k = static_cast<int>(n);
  blas::gemm<T>(blas::Op::none, blas::Op::none, k, k, k, T(1), x, k, y, k, T(0), z, k);
}

// z = sum_i c_i · X_i (+ c_id · I), elementwise over n² entries.
template <class T> void combine(std::int64_t n, T* z, std::initializer_list<std::pair<double, const T*>> terms, double c_id) noexcept {
  using R = real_t<T>;
  const std::int64_t nn = n * n;
  for (std::int64_t e = 0; e < nn; ++e) {
    T acc(0);
    for (const auto& [c, x] : terms) acc += static_cast<R>(c) * x[e];
    z[e] = acc;
  }
  for (std::int64_t i = 0; i < n; ++i) z[i + i * n] += static_cast<R>(c_id);
}

// One matrix: A (packed, overwritten) → E. Scratch: 7 n² elements + n pivots.
template <class T> std::int64_t expm_one(std::int64_t n, T* A, T* E, T* scratch, lapack::lint* ipiv) noexcept {
  using R = real_t<T>;
  const std::int64_t nn = n * n;
  T *A2 = scratch, *A4 = A2 + nn, *A6 = A4 + nn, *U = A6 + nn, *V = U + nn, *W = V + nn, *Z = W + nn;
  R norm1 = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    R c = 0;
    for (std::int64_t i = 0; i < n; ++i) c += std::abs(A[i + j * n]);
    norm1 = std::max(norm1, c);
  }
  const bool single = std::is_same_v<R, float>;
  const double* theta = single ? kTheta32 : kTheta64;
  const int degrees = single ? 3 : 5;
  int m = -1;
  for (int i = 0; i < degrees - 1; ++i)
    if (norm1 <= theta[i]) {
      m = i;
      break;
    }
  int squarings = 0;
  if (m < 0) {
    m = degrees - 1;
    const double ratio = static_cast<double>(norm1) / theta[m];
    if (ratio > 1) squarings = static_cast<int>(std::ceil(std::log2(ratio)));
    const R scale = static_cast<R>(std::ldexp(1.0, -squarings));
    for (std::int64_t e = 0; e < nn; ++e) A[e] *= scale;
  }
  mm(n, A, A, A2);
  const int degree = single ? (3 + 2 * m) : (m < 4 ? 3 + 2 * m : 13);
  if (degree == 13) {
    const double* b = kB13;
    mm(n, A2, A2, A4);
    mm(n, A4, A2, A6);
    combine<T>(n, W, {{b[13], A6}, {b[11], A4}, {b[9], A2}}, 0);
    mm(n, A6, W, Z);
    combine<T>(n, W, {{1.0, Z}, {b[7], A6}, {b[5], A4}, {b[3], A2}}, b[1]);
    mm(n, A, W, U);
    combine<T>(n, W, {{b[12], A6}, {b[10], A4}, {b[8], A2}}, 0);
    mm(n, A6, W, Z);
    combine<T>(n, V, {{1.0, Z}, {b[6], A6}, {b[4], A4}, {b[2], A2}}, b[0]);
  } else {
    const double* b = degree == 3 ? kB3 : degree == 5 ? kB5 : degree == 7 ? kB7 : kB9;
    if (degree >= 5) mm(n, A2, A2, A4);
    if (degree >= 7) mm(n, A4, A2, A6);
    T* A8 = Z;
    if (degree >= 9) mm(n, A6, A2, A8);
    // W = b_m A^{m-1} + ... + b_1 I (odd coefficients); V = even ones.
    switch (degree) {
      case 3: combine<T>(n, W, {{b[3], A2}}, b[1]); combine<T>(n, V, {{b[2], A2}}, b[0]); break;
      case 5: combine<T>(n, W, {{b[5], A4}, {b[3], A2}}, b[1]); combine<T>(n, V, {{b[4], A4}, {b[2], A2}}, b[0]); break;
      case 7:
        combine<T>(n, W, {{b[7], A6}, {b[5], A4}, {b[3], A2}}, b[1]);
        combine<T>(n, V, {{b[6], A6}, {b[4], A4}, {b[2], A2}}, b[0]);
        break;
      default:
        combine<T>(n, W, {{b[9], A8}, {b[7], A6}, {b[5], A4}, {b[3], A2}}, b[1]);
        combine<T>(n, V, {{b[8], A8}, {b[6], A6}, {b[4], A4}, {b[2], A2}}, b[0]);
        break;
    }
    mm(n, A, W, U);
  }
  // (V − U) E = (V + U).
  for (std::int64_t e = 0; e < nn; ++e) {
    E[e] = V[e] + U[e];
    W[e] = V[e] - U[e];
  }
  const auto ln = static_cast<lapack::lint>(n);
  if (const lapack::lint info = lapack::gesv<T>(ln, ln, W, ln, ipiv, E, ln)) return info;
  for (int i = 0; i < squarings; ++i) {
    mm(n, E, E, Z);
    std::copy(Z, Z + nn, E);
  }
  return 0;
}

template <class T> Tensor expm_typed(Session& s, const Tensor& a) {
  const std::int64_t n = a.extent(0);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  Tensor e = new_result(a.shape().span(), dtype_of<T>);
  if (nb == 0 || n == 0) return e;
  T* E = static_cast<T*>(e.mutable_data());
  const std::size_t slot = Carve::bytes<T>(n * n) + Carve::bytes<T>(7 * n * n) + Carve::bytes<lapack::lint>(n);
  const BatchFailure f = run_batches(s, nb, 20 * n * n * n + 64, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(n * n);
    T* scratch = c.take<T>(7 * n * n);
    lapack::lint* ipiv = c.take<lapack::lint>(n);
    pack_matrix(a, b, A, n);
    return expm_one<T>(n, A, E + b * n * n, scratch, ipiv);
  });
  if (f) throw_numerical("matrix_exp", "gesv", "the Padé denominator is singular", f);
  return e;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

Tensor matrix_exp_kernel(Session& s, const Tensor& a) {
  return visit_dtype<DTypeSet::inexact>("matrix_exp", a.dtype(), [&](auto tag) { return detail::linalg::expm_typed<typename decltype(tag)::type>(s, a); });
}

}  // namespace cpu
}  // namespace tenferro
