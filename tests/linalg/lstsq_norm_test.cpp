// lstsq (QR and SVD drivers), pinv (Moore–Penrose conditions), matrix and vector norms
// against plain references, over dtypes, layouts, batches; bad inputs.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

TEST(Lstsq, NormalEquationsHoldForBothDrivers) {
  std::mt19937_64 rng(1);
  HeldSession s = backend1().open_session();
  const std::pair<Shape, Shape> cases[] = {{{6, 3}, {6, 2}}, {{5, 5, 2}, {5, 1, 2}}, {{3, 5}, {3, 2}}, {{6, 3}, {6}}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const auto& [as, bs] : cases)
        for (LstsqDriver drv : {LstsqDriver::qr, LstsqDriver::svd}) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + as.to_string() + " layout " + std::to_string(int(l)) + " driver " + std::to_string(int(drv)));
          const Tensor a = random_in(rng, as, d, l), b = random_in(rng, bs, d, l);
          const LstsqResult r = lstsq(s, a, b, drv);
          const bool vec = bs.size() == 1;
          ASSERT_EQ(r.X.extent(0), as[1]);
          for (std::int64_t k = 0; k < batch_count(a); ++k) {
            const Mat A = get(a, k), X = vec ? get_vec(r.X) : get(r.X, k), B = vec ? get_vec(b) : get(b, k);
            const Mat res = mul(A, X);
            Mat diff(res.m, res.n);
            for (std::size_t i = 0; i < diff.v.size(); ++i) diff.v[i] = res.v[i] - B.v[i];
            // Aᴴ (A X − B) = 0 (normal equations) for the least-squares solution.
            EXPECT_LE(max_abs(mul(adj(A), diff)), tol_for(d, 6) * 100);
            if (as[0] < as[1]) {  // underdetermined: exact fit
              EXPECT_LE(max_abs(diff), tol_for(d, 6) * 100);
            }
            EXPECT_EQ(r.rank.item<std::int64_t>(index_of(r.rank, 0, 0, k, 0).span()), std::min(as[0], as[1]));
          }
          EXPECT_EQ(r.S.defined(), drv == LstsqDriver::svd);
        }
}

TEST(Lstsq, RankDeficientNeedsSvdDriver) {
  HeldSession s = backend1().open_session();
  const Tensor a = Tensor::from_row_major<double>({3, 2}, {1, 2, 2, 4, 3, 6});  // rank 1
  const Tensor b = Tensor::from_data<double>({3}, {1, 2, 3});
  // gels reports an exactly zero diagonal of R (here: a zero second column).
  try {
    lstsq(s, Tensor::from_row_major<double>({3, 2}, {1, 0, 2, 0, 3, 0}), b, LstsqDriver::qr);
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_NE(std::string(e.what()).find("gels"), std::string::npos);
  }
  const LstsqResult r = lstsq(s, a, b, LstsqDriver::svd);
  EXPECT_EQ(r.rank.item<std::int64_t>(), 1);
  // Minimum-norm solution of x1 + 2 x2 = 1: x = (1, 2) / 5.
  EXPECT_NEAR(r.X.item<double>({0}), 0.2, 1e-14);
  EXPECT_NEAR(r.X.item<double>({1}), 0.4, 1e-14);
  Tensor bad = Tensor::ones({3}, DType::f64);
  bad.set<double>({1}, std::nan(""));
  EXPECT_THROW(lstsq(s, a, bad, LstsqDriver::svd), ArgumentError);
  EXPECT_THROW(lstsq(s, a, Tensor::ones({2}, DType::f64)), ShapeError);
  EXPECT_THROW(lstsq(s, a, Tensor::ones({3}, DType::f32)), DTypeError);
}

TEST(Pinv, PenroseConditions) {
  std::mt19937_64 rng(2);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : {Shape{5, 3}, Shape{3, 5, 2}, Shape{4, 4}}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)));
        const Tensor a = random_in(rng, sh, d, l);
        const Tensor p = pinv(s, a);
        ASSERT_EQ(p.extent(0), sh[1]);
        ASSERT_EQ(p.extent(1), sh[0]);
        for (std::int64_t k = 0; k < batch_count(a); ++k) {
          const Mat A = get(a, k), P = get(p, k);
          const double tol = tol_for(d, 5) * 1000;
          EXPECT_LE(max_diff(mul(mul(A, P), A), A), tol);
          EXPECT_LE(max_diff(mul(mul(P, A), P), P), tol);
          const Mat AP = mul(A, P), PA = mul(P, A);
          EXPECT_LE(max_diff(AP, adj(AP)), tol);
          EXPECT_LE(max_diff(PA, adj(PA)), tol);
        }
      }
  // Rank-deficient with rtol: the tiny singular value is dropped.
  const Tensor a = Tensor::from_row_major<double>({2, 2}, {1, 0, 0, 1e-20});
  EXPECT_EQ(pinv(s, a).item<double>({1, 1}), 0.0);
  EXPECT_EQ(pinv(s, Tensor::zeros({0, 3}, DType::f64)).shape(), Shape({3, 0}));
}

TEST(MatrixNorm, AllKindsMatchReferences) {
  std::mt19937_64 rng(3);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      const Tensor a = random_in(rng, Shape{4, 3, 2}, d, l);
      const SvdResult sv = svd(s, a);
      for (MatrixNorm kind : {MatrixNorm::frobenius, MatrixNorm::nuclear, MatrixNorm::spectral, MatrixNorm::one, MatrixNorm::inf}) {
        const Tensor nrm = matrix_norm(s, a, kind);
        ASSERT_EQ(nrm.dtype(), real_dtype(d));
        for (std::int64_t k = 0; k < 2; ++k) {
          const Mat A = get(a, k), S = get_vec(sv.S, k);
          double ref = 0;
          switch (kind) {
            case MatrixNorm::frobenius:
              for (const cd& x : A.v) ref += std::norm(x);
              ref = std::sqrt(ref);
              break;
            case MatrixNorm::nuclear:
              for (const cd& x : S.v) ref += x.real();
              break;
            case MatrixNorm::spectral: ref = S(0, 0).real(); break;
            case MatrixNorm::one:
              for (std::int64_t j = 0; j < 3; ++j) {
                double c = 0;
                for (std::int64_t i = 0; i < 4; ++i) c += std::abs(A(i, j));
                ref = std::max(ref, c);
              }
              break;
            case MatrixNorm::inf:
              for (std::int64_t i = 0; i < 4; ++i) {
                double c = 0;
                for (std::int64_t j = 0; j < 3; ++j) c += std::abs(A(i, j));
                ref = std::max(ref, c);
              }
              break;
          }
          EXPECT_NEAR(value_at(nrm, {k}).real(), ref, tol_for(d, 4) * 10 * (1 + ref)) << int(kind);
        }
      }
    }
  // No overflow for huge entries.
  const Tensor big = Tensor::full({2, 2}, 1e300, DType::f64);
  EXPECT_NEAR(matrix_norm(s, big).item<double>() / 2e300, 1.0, 1e-14);
  EXPECT_EQ(matrix_norm(s, Tensor::zeros({0, 3}, DType::f64), MatrixNorm::spectral).item<double>(), 0.0);
  EXPECT_THROW(matrix_norm(s, Tensor::ones({3}, DType::f64)), RankError);
  EXPECT_THROW(matrix_norm(s, Tensor::ones({3, 3}, DType::i32)), DTypeError);
  Tensor nan = Tensor::ones({2, 2}, DType::f64);
  nan.set<double>({0, 0}, std::nan(""));
  EXPECT_THROW(matrix_norm(s, nan, MatrixNorm::nuclear), ArgumentError);
  EXPECT_TRUE(std::isnan(matrix_norm(s, nan).item<double>()));
}

TEST(VectorNorm, PNormsAlongAxisZero) {
  std::mt19937_64 rng(4);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      const Tensor x = random_in(rng, Shape{5, 3}, d, l);
      for (double p : {2.0, 1.0, 3.0, 0.5, 0.0, double(INFINITY), -double(INFINITY)}) {
        const Tensor nrm = vector_norm(s, x, p);
        ASSERT_EQ(nrm.shape(), Shape({3}));
        for (std::int64_t k = 0; k < 3; ++k) {
          double ref = 0;
          if (std::isinf(p)) ref = p > 0 ? 0 : INFINITY;
          for (std::int64_t i = 0; i < 5; ++i) {
            const double a = std::abs(value_at(x, {i, k}));
            if (p == 0) ref += a != 0;
            else if (std::isinf(p)) ref = p > 0 ? std::max(ref, a) : std::min(ref, a);
            else ref += std::pow(a, p);
          }
          if (p != 0 && !std::isinf(p)) ref = std::pow(ref, 1 / p);
          EXPECT_NEAR(value_at(nrm, {k}).real(), ref, tol_for(d, 5) * 10 * (1 + ref)) << p;
        }
      }
    }
  EXPECT_NEAR(vector_norm(s, Tensor::from_data<double>({2}, {3, 4})).item<double>(), 5.0, 1e-15);
  EXPECT_THROW(vector_norm(s, Tensor::ones({2}, DType::f64), std::nan("")), ArgumentError);
  EXPECT_THROW(vector_norm(s, Tensor::ones({2}, DType::i64)), DTypeError);
  EXPECT_THROW(vector_norm(s, Tensor::scalar(1.0)), RankError);
}

}  // namespace
