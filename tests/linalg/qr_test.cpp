// qr (reduced/complete, positive-diagonal gauge) and qr_pivoted: A = Q·R, QᴴQ = I, R
// upper triangular; over dtypes, layouts, batched and zero-size shapes; bad inputs.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

void check_qr(const Tensor& a, const Tensor& Q, const Tensor& R, QrMode mode, bool positive) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const std::int64_t qc = mode == QrMode::complete ? m : k;
  ASSERT_EQ(Q.extent(0), m);
  ASSERT_EQ(Q.extent(1), qc);
  ASSERT_EQ(R.extent(0), qc);
  ASSERT_EQ(R.extent(1), n);
  const double tol = tol_for(a.dtype(), std::max(m, n));
  for (std::int64_t b = 0; b < batch_count(a); ++b) {
    const Mat A = get(a, b), q = get(Q, b), r = get(R, b);
    EXPECT_LE(max_diff(mul(adj(q), q), eye(qc)), tol);
    EXPECT_LE(max_diff(mul(q, r), A), tol * (1 + max_abs(A)));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j + 1; i < qc; ++i) EXPECT_EQ(r(i, j), cd(0)) << i << "," << j;
    if (positive)
      for (std::int64_t i = 0; i < k; ++i) {
        EXPECT_GE(r(i, i).real(), 0.0);
        EXPECT_EQ(r(i, i).imag(), 0.0);
      }
  }
}

TEST(Qr, ReconstructsOverDtypesLayoutsAndModes) {
  std::mt19937_64 rng(2);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{5, 3}, {3, 5}, {4, 4, 3}, {1, 1}, {6, 2, 2, 2}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : shapes)
        for (QrMode mode : {QrMode::reduced, QrMode::complete})
          for (bool pos : {false, true}) {
            SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)) + " mode " +
                         std::to_string(int(mode)) + " positive " + std::to_string(pos));
            const Tensor a = random_in(rng, sh, d, l);
            const QrResult r = qr(s, a, mode, pos);
            EXPECT_EQ(r.Q.dtype(), d);
            check_qr(a, r.Q, r.R, mode, pos);
          }
}

TEST(Qr, PositiveGaugeIsUnique) {
  // Two full-rank inputs differing by a column scaling give R's with equal |diag|, and
  // with the gauge fixed Q·diag is unique: Q from A and from A·D (D positive) agree.
  std::mt19937_64 rng(5);
  HeldSession s = backend1().open_session();
  const Tensor a = random_tensor(rng, Shape{5, 3}, DType::c128, -1, 1);
  const QrResult r1 = qr(s, a, QrMode::reduced, true);
  const Tensor a2 = mul(s, a, 2.0);
  const QrResult r2 = qr(s, a2, QrMode::reduced, true);
  EXPECT_LE(max_diff(get(r1.Q), get(r2.Q)), 1e-13);
}

TEST(Qr, ZeroSize) {
  HeldSession s = backend1().open_session();
  QrResult r = qr(s, Tensor::zeros({3, 0}, DType::f64), QrMode::complete);
  EXPECT_EQ(r.Q.shape(), Shape({3, 3}));
  EXPECT_LE(max_diff(get(r.Q), eye(3)), 0.0);
  EXPECT_EQ(r.R.shape(), Shape({3, 0}));
  r = qr(s, Tensor::zeros({0, 4}, DType::f32));
  EXPECT_EQ(r.Q.shape(), Shape({0, 0}));
  EXPECT_EQ(r.R.shape(), Shape({0, 4}));
  r = qr(s, Tensor::zeros({4, 2, 0}, DType::c64));
  EXPECT_EQ(r.Q.shape(), Shape({4, 2, 0}));
}

TEST(Qr, BadInputs) {
  HeldSession s = backend1().open_session();
  EXPECT_THROW(qr(s, Tensor::ones({3, 3}, DType::i64)), DTypeError);
  EXPECT_THROW(qr(s, Tensor::ones({3}, DType::f64)), RankError);
  EXPECT_THROW(qr(s, Tensor()), ArgumentError);
  EXPECT_THROW(qr(s, Tensor::ones({3, 3}, DType::f64), static_cast<QrMode>(9)), ArgumentError);
}

TEST(QrPivoted, PermutationAndRank) {
  std::mt19937_64 rng(11);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " layout " + std::to_string(int(l)));
      // Rank 2 by construction: a = X·Y with X [6, 2], Y [2, 5].
      const Tensor x = random_tensor(rng, Shape{6, 2, 2}, d, -1, 1), y = random_tensor(rng, Shape{2, 5, 2}, d, -1, 1);
      Tensor a0 = matmul(s, x, y);
      Tensor a = l == Lay::contiguous ? a0 : random_in(rng, Shape{6, 5, 2}, d, l);
      if (l != Lay::contiguous) copy_into(s, a0, a);
      const PivotedQrResult r = qr_pivoted(s, a);
      ASSERT_EQ(r.perm.dtype(), DType::i64);
      for (std::int64_t b = 0; b < 2; ++b) {
        EXPECT_EQ(r.rank.item<std::int64_t>({b}), 2);
        const Mat A = get(a, b), Q = get(r.Q, b), R = get(r.R, b);
        Mat AP(6, 5);
        std::vector<bool> seen(5, false);
        for (std::int64_t j = 0; j < 5; ++j) {
          const std::int64_t p = r.perm.item<std::int64_t>({j, b});
          ASSERT_GE(p, 0);
          ASSERT_LT(p, 5);
          EXPECT_FALSE(seen[static_cast<std::size_t>(p)]);
          seen[static_cast<std::size_t>(p)] = true;
          for (std::int64_t i = 0; i < 6; ++i) AP(i, j) = A(i, p);
        }
        EXPECT_LE(max_diff(mul(Q, R), AP), tol_for(d, 6) * 10);
        EXPECT_LE(max_diff(mul(adj(Q), Q), eye(5)), tol_for(d, 6));
        for (std::int64_t i = 1; i < 5; ++i) EXPECT_LE(std::abs(R(i, i)), std::abs(R(i - 1, i - 1)) + tol_for(d, 6));
      }
    }
  Tensor bad = Tensor::ones({2, 2}, DType::f64);
  bad.set<double>({0, 0}, INFINITY);
  EXPECT_THROW(qr_pivoted(s, bad), ArgumentError);
}

TEST(QrAppend, AppendsColumnsKeepingOrthonormality) {
  std::mt19937_64 rng(13);
  HeldSession s = backend1().open_session();
  struct Case {
    std::int64_t m, n, p;
  };
  for (DType d : kInexactDTypes)
    for (const Case& c : {Case{7, 3, 2}, Case{5, 3, 4}, Case{4, 4, 2}, Case{6, 0, 3}, Case{5, 2, 0}})
      for (bool in_range : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " p=" + std::to_string(c.p) +
                     (in_range ? " C in range(A)" : ""));
        const Tensor a = random_tensor(rng, Shape{c.m, c.n}, d, -1, 1);
        const QrResult f = qr(s, a);
        Tensor cc = random_tensor(rng, Shape{c.m, c.p}, d, -1, 1);
        if (in_range && c.n > 0) cc = matmul(s, a, random_tensor(rng, Shape{c.n, c.p}, d, -1, 1));  // no new directions
        const QrResult g = qr_append_columns(s, f.Q, f.R, cc);
        const std::int64_t k = std::min(c.m, c.n), kk = std::min(c.m, k + c.p);
        ASSERT_EQ(g.Q.shape(), Shape({c.m, kk}));
        ASSERT_EQ(g.R.shape(), Shape({kk, c.n + c.p}));
        const Mat Q = get(g.Q), R = get(g.R), A = get(a), C = get(cc);
        Mat AC(c.m, c.n + c.p);
        for (std::int64_t j = 0; j < c.n; ++j)
          for (std::int64_t i = 0; i < c.m; ++i) AC(i, j) = A(i, j);
        for (std::int64_t j = 0; j < c.p; ++j)
          for (std::int64_t i = 0; i < c.m; ++i) AC(i, c.n + j) = C(i, j);
        const double tol = tol_for(d, c.m) * 10;
        EXPECT_LE(max_diff(mul(adj(Q), Q), eye(kk)), tol);
        EXPECT_LE(max_diff(mul(Q, R), AC), tol * (1 + max_abs(AC)));
        for (std::int64_t j = 0; j < c.n + c.p; ++j)
          for (std::int64_t i = j + 1; i < kk; ++i) EXPECT_EQ(R(i, j), cd(0));
      }
  const Tensor q = Tensor::eye(3, DType::f64);
  EXPECT_THROW(qr_append_columns(s, q, Tensor::eye(3, DType::f64), Tensor::ones({2, 1}, DType::f64)), ShapeError);
  EXPECT_THROW(qr_append_columns(s, q, Tensor::eye(2, DType::f64), Tensor::ones({3, 1}, DType::f64)), ShapeError);
  EXPECT_THROW(qr_append_columns(s, q, Tensor::eye(3, DType::f64), Tensor::ones({3, 1}, DType::f32)), DTypeError);
  EXPECT_THROW(qr_append_columns(s, Tensor::ones({3, 3, 2}, DType::f64), Tensor::eye(3, DType::f64), Tensor::ones({3, 1}, DType::f64)), RankError);
}

}  // namespace
