#pragma once
// Test support for the linalg family: batch matrices as plain complex<double> arrays,
// reference products, and random inputs in every layout (contiguous, transposed view,
// negative-stride view, batched).
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "support/test_util.hpp"

namespace tenferro::linalg_test {

using cd = std::complex<double>;

/// A dense column-major m×n matrix of complex<double> (reference arithmetic).
struct Mat {
  std::int64_t m = 0, n = 0;
  std::vector<cd> v;
  Mat() = default;
  Mat(std::int64_t r, std::int64_t c) : m(r), n(c), v(static_cast<std::size_t>(r * c)) {}
  cd& operator()(std::int64_t i, std::int64_t j) { return v[static_cast<std::size_t>(i + j * m)]; }
  cd operator()(std::int64_t i, std::int64_t j) const { return v[static_cast<std::size_t>(i + j * m)]; }
};

/// Batch count of a [M, N, B...] tensor (product of axes from `first`).
inline std::int64_t batch_count(const Tensor& t, int first = 2) {
  std::int64_t b = 1;
  for (int i = first; i < t.rank(); ++i) b *= t.extent(i);
  return b;
}

/// Full index of element (i, j) of batch b (flat over axes 2...).
inline Dims index_of(const Tensor& t, std::int64_t i, std::int64_t j, std::int64_t b, int first = 2) {
  Dims idx(t.rank(), 0);
  if (first >= 1) idx[0] = i;
  if (first >= 2) idx[1] = j;
  for (int a = first; a < t.rank(); ++a) {
    idx[a] = b % t.extent(a);
    b /= t.extent(a);
  }
  return idx;
}

/// Matrix b of t (rank >= 2).
inline Mat get(const Tensor& t, std::int64_t b = 0) {
  Mat r(t.extent(0), t.extent(1));
  for (std::int64_t j = 0; j < r.n; ++j)
    for (std::int64_t i = 0; i < r.m; ++i) r(i, j) = testing::value_at(t, index_of(t, i, j, b));
  return r;
}

/// Vector b of t [N, B...] as a column.
inline Mat get_vec(const Tensor& t, std::int64_t b = 0) {
  Mat r(t.extent(0), 1);
  for (std::int64_t i = 0; i < r.m; ++i) r(i, 0) = testing::value_at(t, index_of(t, i, 0, b, 1));
  return r;
}

inline Mat mul(const Mat& a, const Mat& b) {
  Mat r(a.m, b.n);
  for (std::int64_t j = 0; j < b.n; ++j)
    for (std::int64_t k = 0; k < a.n; ++k)
      for (std::int64_t i = 0; i < a.m; ++i) r(i, j) += a(i, k) * b(k, j);
  return r;
}
inline Mat adj(const Mat& a) {
  Mat r(a.n, a.m);
  for (std::int64_t j = 0; j < a.n; ++j)
    for (std::int64_t i = 0; i < a.m; ++i) r(j, i) = std::conj(a(i, j));
  return r;
}
inline Mat transp(const Mat& a) {
  Mat r(a.n, a.m);
  for (std::int64_t j = 0; j < a.n; ++j)
    for (std::int64_t i = 0; i < a.m; ++i) r(j, i) = a(i, j);
  return r;
}
inline Mat eye(std::int64_t n) {
  Mat r(n, n);
  for (std::int64_t i = 0; i < n; ++i) r(i, i) = 1;
  return r;
}
/// diag(d) as a rows×cols matrix.
inline Mat diag(const Mat& d, std::int64_t rows, std::int64_t cols) {
  Mat r(rows, cols);
  for (std::int64_t i = 0; i < d.m; ++i) r(i, i) = d(i, 0);
  return r;
}
inline double max_abs(const Mat& a) {
  double r = 0;
  for (const cd& x : a.v) r = std::max(r, std::abs(x));
  return r;
}
inline double max_diff(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.m, b.m);
  EXPECT_EQ(a.n, b.n);
  if (a.m != b.m || a.n != b.n) return 1e300;
  double r = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) r = std::max(r, std::abs(a.v[i] - b.v[i]));
  return r;
}

/// Tolerance for a backward-stable factorization of order n.
inline double tol_for(DType d, std::int64_t n) { return 50.0 * testing::epsilon_of(d) * static_cast<double>(std::max<std::int64_t>(n, 4)); }

/// Input layouts for linalg tests.
enum class Lay { contiguous, transposed, negative };
inline const Lay kLays[] = {Lay::contiguous, Lay::transposed, Lay::negative};

/// A random [shape] tensor with values in [-1, 1) in layout `l`.
inline Tensor random_in(std::mt19937_64& rng, const Shape& shape, DType d, Lay l) {
  const auto tl = l == Lay::contiguous ? testing::Layout::contiguous : l == Lay::transposed ? testing::Layout::transposed
                                                                                             : testing::Layout::negative_stride;
  return testing::random_layout(rng, shape, d, tl, -1.0, 1.0);
}

/// Writes a Mat into batch b of a compact tensor t.
inline void put(const Tensor& t, std::int64_t b, const Mat& a) {
  visit_dtype("put", t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::int64_t j = 0; j < a.n; ++j)
      for (std::int64_t i = 0; i < a.m; ++i) {
        if constexpr (is_complex_v<T>) t.set<T>(index_of(t, i, j, b).span(), T(a(i, j)));
        else t.set<T>(index_of(t, i, j, b).span(), static_cast<T>(a(i, j).real()));
      }
  });
}

/// A random Hermitian positive-definite [n, n, B...] tensor: G·Gᴴ + n·I.
inline Tensor random_hpd(std::mt19937_64& rng, const Shape& shape, DType d) {
  Tensor g = testing::random_tensor(rng, shape, d, -1, 1);
  Tensor a = Tensor::empty(shape.span(), d);
  for (std::int64_t b = 0; b < batch_count(a); ++b) {
    Mat G = get(g, b);
    Mat A = mul(G, adj(G));
    for (std::int64_t i = 0; i < A.m; ++i) A(i, i) += static_cast<double>(A.m);
    put(a, b, A);
  }
  return a;
}

}  // namespace tenferro::linalg_test
