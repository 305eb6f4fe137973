// matrix_exp against closed forms (diagonal, nilpotent, rotation generators at norms that
// select every Padé degree and scaling) and a Taylor-series reference with scaling and
// squaring in complex<double>; dtypes, layouts, batches; bad inputs.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

// exp(A) by a 40-term Taylor series of A / 2^s (‖A / 2^s‖ <= 1/2), then s squarings.
Mat taylor_exp(const Mat& a) {
  double nrm = 0;
  for (const cd& x : a.v) nrm += std::abs(x);
  int s = 0;
  while (nrm > 0.5) {
    nrm /= 2;
    ++s;
  }
  Mat as = a;
  for (cd& x : as.v) x = std::ldexp(x.real(), -s) + cd(0, std::ldexp(x.imag(), -s));
  Mat term = eye(a.m), sum = eye(a.m);
  for (int k = 1; k < 40; ++k) {
    term = mul(term, as);
    for (cd& x : term.v) x /= static_cast<double>(k);
    for (std::size_t i = 0; i < sum.v.size(); ++i) sum.v[i] += term.v[i];
  }
  for (int i = 0; i < s; ++i) sum = mul(sum, sum);
  return sum;
}

TEST(MatrixExp, RotationGeneratorsAtEveryDegree) {
  HeldSession s = backend1().open_session();
  for (DType d : {DType::f32, DType::f64})
    for (double t : {1e-3, 0.1, 0.5, 1.5, 4.0, 30.0}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " t=" + std::to_string(t));
      Tensor a = Tensor::zeros({2, 2}, d);
      const Tensor g = Tensor::from_row_major<double>({2, 2}, {0, -t, t, 0});
      cast_into(s, g, a);
      const Mat e = get(matrix_exp(s, a));
      const double tol = tol_for(d, 2) * (1 + t) * 10;
      EXPECT_NEAR(e(0, 0).real(), std::cos(t), tol);
      EXPECT_NEAR(e(1, 0).real(), std::sin(t), tol);
      EXPECT_NEAR(e(0, 1).real(), -std::sin(t), tol);
      EXPECT_NEAR(e(1, 1).real(), std::cos(t), tol);
    }
}

TEST(MatrixExp, DiagonalAndNilpotent) {
  HeldSession s = backend1().open_session();
  const Mat d = get(matrix_exp(s, Tensor::from_row_major<double>({2, 2}, {1, 0, 0, -2})));
  EXPECT_NEAR(d(0, 0).real(), std::exp(1.0), 1e-14);
  EXPECT_NEAR(d(1, 1).real(), std::exp(-2.0), 1e-15);
  EXPECT_EQ(d(0, 1), cd(0));
  const Mat nil = get(matrix_exp(s, Tensor::from_row_major<double>({2, 2}, {0, 1, 0, 0})));
  EXPECT_NEAR(nil(0, 1).real(), 1.0, 1e-15);
  EXPECT_NEAR(nil(0, 0).real(), 1.0, 1e-15);
  EXPECT_NEAR(nil(1, 0).real(), 0.0, 1e-15);
}

TEST(MatrixExp, MatchesTaylorReferenceOverDtypesLayoutsAndScales) {
  std::mt19937_64 rng(5);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (double scale : {0.01, 0.3, 1.0, 3.0, 10.0}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " layout " + std::to_string(int(l)) + " scale " + std::to_string(scale));
        const Tensor a0 = random_in(rng, Shape{4, 4, 2}, d, l);
        Tensor a = random_in(rng, Shape{4, 4, 2}, d, l);
        mul_into(s, a0, scale, a);
        const Tensor e = matrix_exp(s, a);
        for (std::int64_t k = 0; k < 2; ++k) {
          const Mat ref = taylor_exp(get(a, k));
          EXPECT_LE(max_diff(get(e, k), ref), tol_for(d, 4) * 50 * (1 + max_abs(ref)));
        }
      }
}

TEST(MatrixExp, ZeroSizeAndBadInputs) {
  HeldSession s = backend1().open_session();
  EXPECT_EQ(matrix_exp(s, Tensor::zeros({0, 0}, DType::f64)).shape(), Shape({0, 0}));
  EXPECT_EQ(matrix_exp(s, Tensor::zeros({3, 3, 0}, DType::c64)).shape(), Shape({3, 3, 0}));
  EXPECT_THROW(matrix_exp(s, Tensor::ones({2, 3}, DType::f64)), ShapeError);
  EXPECT_THROW(matrix_exp(s, Tensor::ones({2, 2}, DType::i32)), DTypeError);
  Tensor inf = Tensor::ones({2, 2}, DType::f64);
  inf.set<double>({0, 1}, INFINITY);
  EXPECT_THROW(matrix_exp(s, inf), ArgumentError);
}

}  // namespace
