// lu (P·A = L·U), lu_factor / lu_solve, lu_full_pivot (P·A·Q = L·U), det and slogdet
// over dtypes, layouts, rectangular, batched and zero-size shapes; bad inputs.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

bool is_permutation(const Mat& p) {
  for (std::int64_t i = 0; i < p.m; ++i) {
    int ones_row = 0, ones_col = 0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      if (p(i, j) == cd(1)) ++ones_row;
      else if (p(i, j) != cd(0)) return false;
      if (p(j, i) == cd(1)) ++ones_col;
    }
    if (ones_row != 1 || ones_col != 1) return false;
  }
  return true;
}

// Reference determinant by cofactor-free Gaussian elimination in complex<double>.
cd ref_det(Mat a) {
  cd d = 1;
  const std::int64_t n = a.m;
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t p = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (std::abs(a(i, k)) > std::abs(a(p, k))) p = i;
    if (a(p, k) == cd(0)) return 0;
    if (p != k) {
      for (std::int64_t j = 0; j < n; ++j) std::swap(a(k, j), a(p, j));
      d = -d;
    }
    d *= a(k, k);
    for (std::int64_t i = k + 1; i < n; ++i) {
      const cd f = a(i, k) / a(k, k);
      for (std::int64_t j = k; j < n; ++j) a(i, j) -= f * a(k, j);
    }
  }
  return d;
}

TEST(Lu, PermutedProductReconstructs) {
  std::mt19937_64 rng(1);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{4, 4}, {5, 3}, {3, 5}, {4, 4, 3}, {1, 1}, {3, 0}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : shapes) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)));
        const Tensor a = random_in(rng, sh, d, l);
        const LuResult r = lu(s, a);
        const std::int64_t m = sh[0], n = sh[1], k = std::min(m, n);
        ASSERT_EQ(r.L.extent(1), k);
        ASSERT_EQ(r.U.extent(0), k);
        for (std::int64_t b = 0; b < batch_count(a); ++b) {
          const Mat P = get(r.P, b), L = get(r.L, b), U = get(r.U, b), A = get(a, b);
          EXPECT_TRUE(is_permutation(P));
          EXPECT_LE(max_diff(mul(P, A), mul(L, U)), tol_for(d, 5) * 10);
          for (std::int64_t j = 0; j < k; ++j) {
            EXPECT_EQ(L(j, j), cd(1));
            for (std::int64_t i = 0; i < j; ++i) EXPECT_EQ(L(i, j), cd(0));
            // partial pivoting: |l_ij| <= 1 (LAPACK measures complex pivots by |re| + |im|: <= sqrt 2)
            for (std::int64_t i = j + 1; i < m; ++i) EXPECT_LE(std::abs(L(i, j)), (is_complex(d) ? std::sqrt(2.0) : 1.0) + 1e-6);
          }
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = j + 1; i < k; ++i) EXPECT_EQ(U(i, j), cd(0));
        }
        // lu_factor + lu_solve on square inputs.
        if (m == n && m > 0) {
          const LuFactorResult f = lu_factor(s, a);
          EXPECT_EQ(f.pivots.dtype(), DType::i64);
          Shape rs = sh;
          rs[1] = 2;
          const Tensor rhs = random_in(rng, rs, d, l);
          const Tensor x = lu_solve(s, f, rhs);
          for (std::int64_t b = 0; b < batch_count(a); ++b)
            EXPECT_LE(max_diff(mul(get(a, b), get(x, b)), get(rhs, b)), tol_for(d, n) * 100 * (1 + max_abs(get(x, b))));
        }
      }
}

TEST(Lu, SolveErrorsAndVectorRhs) {
  HeldSession s = backend1().open_session();
  const Tensor a = Tensor::from_row_major<double>({2, 2}, {2, 1, 1, 3});
  LuFactorResult f = lu_factor(s, a);
  const Tensor x = lu_solve(s, f, Tensor::from_data<double>({2}, {3, 4}));
  EXPECT_NEAR(x.item<double>({0}), 1.0, 1e-14);
  EXPECT_NEAR(x.item<double>({1}), 1.0, 1e-14);
  LuFactorResult bad = f;
  bad.pivots = Tensor::from_data<std::int64_t>({2}, {5, 1});
  EXPECT_THROW(lu_solve(s, bad, Tensor::ones({2}, DType::f64)), ArgumentError);
  bad.pivots = Tensor::from_data<std::int64_t>({3}, {0, 1, 2});
  EXPECT_THROW(lu_solve(s, bad, Tensor::ones({2}, DType::f64)), ShapeError);
  bad.pivots = Tensor::ones({2}, DType::i32);
  EXPECT_THROW(lu_solve(s, bad, Tensor::ones({2}, DType::f64)), DTypeError);
  const LuFactorResult sing = lu_factor(s, Tensor::zeros({2, 2}, DType::f64));
  try {
    lu_solve(s, sing, Tensor::ones({2}, DType::f64));
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 1);
    EXPECT_EQ(e.batch_index(), 0);
  }
  EXPECT_THROW(lu(s, Tensor::ones({2, 2}, DType::i32)), DTypeError);
}

// Reference: apply the interchanges to 0..m-1 one by one.
std::vector<std::int64_t> ref_perm(const Tensor& pivots, std::int64_t m, std::int64_t b) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) r[i] = i;
  for (std::int64_t i = 0; i < pivots.extent(0); ++i) {
    const std::int64_t v = pivots.rank() == 1 ? pivots.item<std::int64_t>({i}) : pivots.item<std::int64_t>({i, b});
    std::swap(r[i], r[v]);
  }
  return r;
}

TEST(LuPivots, PermutationMatchesLuAndReference) {
  std::mt19937_64 rng(3);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{4, 4}, {5, 3}, {3, 5}, {4, 4, 3}, {1, 1}, {3, 0, 2}};
  for (const Shape& sh : shapes) {
    SCOPED_TRACE(sh.to_string());
    const Tensor a = random_in(rng, sh, DType::f64, Lay::contiguous);
    const LuFactorResult f = lu_factor(s, a);
    const std::int64_t m = sh[0];
    const Tensor perm = lu_pivots_to_permutation(s, f.pivots, m);
    ASSERT_EQ(perm.dtype(), DType::i64);
    ASSERT_EQ(perm.extent(0), m);
    const LuResult r = lu(s, a);
    for (std::int64_t b = 0; b < batch_count(a); ++b) {
      const Mat P = get(r.P, b);
      const std::vector<std::int64_t> want = ref_perm(f.pivots, m, b);
      for (std::int64_t i = 0; i < m; ++i) {
        const std::int64_t got = perm.rank() == 1 ? perm.item<std::int64_t>({i}) : perm.item<std::int64_t>({i, b});
        EXPECT_EQ(got, want[i]);
        EXPECT_EQ(P(i, got), cd(1));  // (P·A) row i = A row perm[i]
      }
    }
  }
  // Strided pivots (a reversed batch axis) and a strided output view.
  const Tensor piv = Tensor::from_data<std::int64_t>({3, 2}, {2, 1, 2, 1, 2, 2});
  const Tensor rev = piv.slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  const Tensor perm = lu_pivots_to_permutation(s, rev, 4);
  const Tensor big = Tensor::zeros({8, 2}, DType::i64);
  const Tensor out = big.slice_view(0, 0, 8, 2);
  lu_pivots_to_permutation_into(s, rev, 4, out);
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::vector<std::int64_t> want = ref_perm(rev, 4, b);
    for (std::int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(perm.item<std::int64_t>({i, b}), want[i]);
      EXPECT_EQ(out.item<std::int64_t>({i, b}), want[i]);
    }
  }
}

// i32 pivots (LAPACK's lapack_int, as outside code holds them) widen to i64.
TEST(LuPivots, I32PivotsGiveTheSamePermutation) {
  HeldSession s = backend1().open_session();
  const Tensor p64 = Tensor::from_data<std::int64_t>({3}, {2, 2, 2});
  const Tensor p32 = Tensor::from_data<std::int32_t>({3}, {2, 2, 2});
  const Tensor want = lu_pivots_to_permutation(s, p64, 3);
  const Tensor got = lu_pivots_to_permutation(s, p32, 3);
  ASSERT_EQ(got.dtype(), DType::i64);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(got.at({i}).to<std::int64_t>(), want.at({i}).to<std::int64_t>());
}

TEST(LuPivots, BadInputsThrowAndLeaveOutputUntouched) {
  HeldSession s = backend1().open_session();
  const Tensor out = Tensor::full({3}, Scalar(std::int64_t{7}), DType::i64);
  const auto before = snapshot(out);
  const Tensor ok = Tensor::from_data<std::int64_t>({2}, {1, 2});
  EXPECT_THROW(lu_pivots_to_permutation_into(s, Tensor::from_data<std::int64_t>({2}, {1, 5}), 3, out), ArgumentError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, Tensor::from_data<std::int64_t>({2}, {1, 0}), 3, out), ArgumentError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, Tensor::ones({2}, DType::f64), 3, out), DTypeError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, Tensor::from_data<std::int32_t>({2}, {1, 0}), 3, out), ArgumentError);  // i32 is checked too
  EXPECT_THROW(lu_pivots_to_permutation_into(s, Tensor::zeros({}, DType::i64), 3, out), RankError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, ok, 1, out), ShapeError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, ok, 4, out), ShapeError);  // out must be [4]
  EXPECT_THROW(lu_pivots_to_permutation_into(s, ok, 3, Tensor::zeros({3}, DType::i32)), DTypeError);
  EXPECT_THROW(lu_pivots_to_permutation_into(s, ok, 3, Tensor::zeros({1}, DType::i64).broadcast_view({3})), ArgumentError);  // self-overlapping
  expect_untouched(out, before);
  try {
    lu_pivots_to_permutation(s, Tensor::from_data<std::int64_t>({2}, {1, 5}), 3);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("lu_pivots_to_permutation"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("pivot 5 at position 1"), std::string::npos);
  }
  lu_pivots_to_permutation_into(s, ok, 3, out);
  EXPECT_EQ(out.item<std::int64_t>({0}), 1);
  EXPECT_EQ(out.item<std::int64_t>({1}), 2);
  EXPECT_EQ(out.item<std::int64_t>({2}), 0);
}

TEST(LuFullPivot, ReconstructsWithBothPermutations) {
  std::mt19937_64 rng(2);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      const Tensor a = random_in(rng, Shape{5, 5, 2}, d, l);
      const FullPivLuResult r = lu_full_pivot(s, a);
      for (std::int64_t b = 0; b < 2; ++b) {
        const Mat P = get(r.P, b), Q = get(r.Q, b), L = get(r.L, b), U = get(r.U, b), A = get(a, b);
        EXPECT_TRUE(is_permutation(P));
        EXPECT_TRUE(is_permutation(Q));
        EXPECT_LE(max_diff(mul(mul(P, A), Q), mul(L, U)), tol_for(d, 5) * 10);
        // complete pivoting: each pivot dominates its row of U and its column of L
        for (std::int64_t k = 0; k < 5; ++k)
          for (std::int64_t j = k + 1; j < 5; ++j) {
            EXPECT_LE(std::abs(U(k, j)), std::abs(U(k, k)) * (1 + 1e-5));
            EXPECT_LE(std::abs(L(j, k)), 1.0 + 1e-5);
          }
      }
    }
  // Rank-deficient: rank 1 leaves U's trailing block zero.
  const Tensor r1 = Tensor::from_row_major<double>({3, 3}, {1, 2, 3, 2, 4, 6, 3, 6, 9});
  const FullPivLuResult f = lu_full_pivot(s, r1);
  EXPECT_LE(max_diff(mul(mul(get(f.P), get(r1)), get(f.Q)), mul(get(f.L), get(f.U))), 1e-14);
  EXPECT_NEAR(std::abs(f.U.item<double>({1, 1})), 0.0, 1e-14);
  EXPECT_THROW(lu_full_pivot(s, Tensor::ones({2, 3}, DType::f64)), ShapeError);
}

TEST(Det, MatchesReferenceAndSlogdetAgrees) {
  std::mt19937_64 rng(3);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " layout " + std::to_string(int(l)));
      const Tensor a = random_in(rng, Shape{4, 4, 3}, d, l);
      const Tensor dt = det(s, a);
      const SlogdetResult sl = slogdet(s, a);
      ASSERT_EQ(dt.shape(), Shape({3}));
      ASSERT_EQ(dt.dtype(), d);
      ASSERT_EQ(sl.logabsdet.dtype(), real_dtype(d));
      for (std::int64_t b = 0; b < 3; ++b) {
        const cd ref = ref_det(get(a, b));
        const cd got = value_at(dt, {b});
        EXPECT_LE(std::abs(got - ref), tol_for(d, 4) * 10 * (1 + std::abs(ref)));
        const cd viaslog = value_at(sl.sign, {b}) * std::exp(value_at(sl.logabsdet, {b}).real());
        EXPECT_LE(std::abs(viaslog - ref), tol_for(d, 4) * 10 * (1 + std::abs(ref)));
      }
    }
  // Singular: det 0, sign 0, logabsdet -inf; empty matrix: det 1.
  const Tensor z = Tensor::from_row_major<double>({2, 2}, {1, 2, 2, 4});
  EXPECT_EQ(det(s, z).item<double>(), 0.0);
  const SlogdetResult sz = slogdet(s, z);
  EXPECT_EQ(sz.sign.item<double>(), 0.0);
  EXPECT_EQ(sz.logabsdet.item<double>(), -INFINITY);
  EXPECT_EQ(det(s, Tensor::zeros({0, 0}, DType::f64)).item<double>(), 1.0);
  EXPECT_EQ(det(s, Tensor::zeros({2, 2, 0}, DType::f64)).shape(), Shape({0}));
  // A permutation matrix with one swap has det -1.
  EXPECT_NEAR(det(s, Tensor::from_row_major<double>({2, 2}, {0, 1, 1, 0})).item<double>(), -1.0, 1e-15);
  EXPECT_THROW(det(s, Tensor::ones({2, 3}, DType::f64)), ShapeError);
  EXPECT_THROW(slogdet(s, Tensor::ones({2, 2}, DType::i64)), DTypeError);
}

}  // namespace
