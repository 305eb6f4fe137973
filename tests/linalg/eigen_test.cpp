// eigh / eigvalsh (A·V = V·diag(W), VᴴV = I, ascending W, either triangle read) and
// eig / eigvals (A·V = V·diag(W), complex results) over dtypes, layouts, batches; bad inputs.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

// A Hermitian matrix from the `tri` triangle of m (the other triangle is ignored).
Mat hermitian_from(const Mat& m, Triangle tri) {
  Mat h(m.m, m.n);
  for (std::int64_t j = 0; j < m.n; ++j)
    for (std::int64_t i = 0; i < m.m; ++i) {
      const bool in = tri == Triangle::lower ? i >= j : i <= j;
      h(i, j) = in ? m(i, j) : std::conj(m(j, i));
      if (i == j) h(i, j) = m(i, i).real();
    }
  return h;
}

TEST(Eigh, DecomposesOverDtypesLayoutsAndTriangles) {
  std::mt19937_64 rng(3);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{4, 4}, {1, 1}, {5, 5, 3}, {3, 3, 2, 2}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : shapes)
        for (Triangle tri : {Triangle::lower, Triangle::upper}) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)) + " tri " + std::to_string(int(tri)));
          // A general (non-Hermitian) input: only the chosen triangle may be read.
          const Tensor a = random_in(rng, sh, d, l);
          const EighResult r = eigh(s, a, tri);
          const Tensor w_only = eigvalsh(s, a, tri);
          ASSERT_EQ(r.W.dtype(), real_dtype(d));
          const double tol = tol_for(d, sh[0]);
          for (std::int64_t b = 0; b < batch_count(a); ++b) {
            const Mat H = hermitian_from(get(a, b), tri), V = get(r.V, b), W = get_vec(r.W, b);
            EXPECT_LE(max_diff(mul(adj(V), V), eye(sh[0])), tol);
            EXPECT_LE(max_diff(mul(H, V), mul(V, diag(W, sh[0], sh[0]))), tol * (1 + max_abs(H)));
            for (std::int64_t i = 1; i < sh[0]; ++i) EXPECT_LE(W(i - 1, 0).real(), W(i, 0).real());
            EXPECT_LE(max_diff(get_vec(w_only, b), W), tol);
          }
        }
}

TEST(Eig, DecomposesOverDtypesAndLayouts) {
  std::mt19937_64 rng(4);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{4, 4}, {1, 1}, {6, 6, 3}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : shapes) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)));
        const Tensor a = random_in(rng, sh, d, l);
        const EigResult r = eig(s, a);
        const Tensor w = eigvals(s, a);
        ASSERT_EQ(r.W.dtype(), complex_dtype(d));
        ASSERT_EQ(r.V.dtype(), complex_dtype(d));
        const double tol = tol_for(d, sh[0]) * 10;
        for (std::int64_t b = 0; b < batch_count(a); ++b) {
          const Mat A = get(a, b), V = get(r.V, b), W = get_vec(r.W, b);
          EXPECT_LE(max_diff(mul(A, V), mul(V, diag(W, sh[0], sh[0]))), tol * (1 + max_abs(A)));
          for (std::int64_t j = 0; j < sh[0]; ++j) {  // unit columns
            double nrm = 0;
            for (std::int64_t i = 0; i < sh[0]; ++i) nrm += std::norm(V(i, j));
            EXPECT_NEAR(nrm, 1.0, tol);
          }
          EXPECT_LE(max_diff(get_vec(w, b), W), tol);
        }
      }
}

TEST(Eig, RotationHasImaginaryPair) {
  HeldSession s = backend1().open_session();
  const Tensor a = Tensor::from_row_major<double>({2, 2}, {0, -1, 1, 0});
  const Tensor w = eigvals(s, a);
  const cd w0 = value_at(w, {0}), w1 = value_at(w, {1});
  EXPECT_NEAR(std::abs(w0.imag()), 1.0, 1e-14);
  EXPECT_NEAR(w0.real(), 0.0, 1e-14);
  EXPECT_NEAR((w0 - std::conj(w1)).real(), 0.0, 1e-14);
  EXPECT_NEAR((w0 - std::conj(w1)).imag(), 0.0, 1e-14);
}

TEST(Eigen, ZeroSize) {
  HeldSession s = backend1().open_session();
  EXPECT_EQ(eigh(s, Tensor::zeros({0, 0}, DType::f64)).V.shape(), Shape({0, 0}));
  EXPECT_EQ(eigh(s, Tensor::zeros({3, 3, 0}, DType::f64)).W.shape(), Shape({3, 0}));
  EXPECT_EQ(eig(s, Tensor::zeros({2, 2, 0}, DType::f32)).V.dtype(), DType::c64);
}

TEST(Eigen, BadInputs) {
  HeldSession s = backend1().open_session();
  EXPECT_THROW(eigh(s, Tensor::ones({3, 4}, DType::f64)), ShapeError);
  EXPECT_THROW(eig(s, Tensor::ones({3, 4}, DType::f64)), ShapeError);
  EXPECT_THROW(eigvalsh(s, Tensor::ones({3, 3}, DType::i32)), DTypeError);
  EXPECT_THROW(eigvals(s, Tensor::ones({3, 3}, DType::b8)), DTypeError);
  Tensor a = Tensor::ones({3, 3}, DType::c128);
  a.set<c128>({2, 0}, c128(std::nan(""), 0));
  EXPECT_THROW(eigh(s, a), ArgumentError);
  EXPECT_THROW(eig(s, a), ArgumentError);
  EXPECT_THROW(eigvals(s, a), ArgumentError);
  EXPECT_THROW(eigvalsh(s, a), ArgumentError);
}

}  // namespace
