// svd / svdvals: reconstruction A = U·diag(S)·Vh, orthonormal factors, descending real
// S, over dtypes, layouts (contiguous, transposed, negative-stride), shapes (tall, wide,
// batched, zero-size) and bad inputs; the batch driver on two threads.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

void check_svd(const Tensor& a, const SvdResult& r, SvdMode mode) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const DType d = a.dtype();
  const double tol = tol_for(d, std::max(m, n));
  ASSERT_EQ(r.S.dtype(), real_dtype(d));
  ASSERT_EQ(r.S.extent(0), k);
  for (std::int64_t b = 0; b < batch_count(a); ++b) {
    const Mat A = get(a, b), S = get_vec(r.S, b);
    for (std::int64_t i = 0; i < k; ++i) {
      EXPECT_GE(S(i, 0).real(), 0.0);
      if (i) {
        EXPECT_GE(S(i - 1, 0).real(), S(i, 0).real() - tol);
      }
    }
    if (mode == SvdMode::values) continue;
    const Mat U = get(r.U, b), Vh = get(r.Vh, b);
    const std::int64_t uc = mode == SvdMode::full ? m : k, vr = mode == SvdMode::full ? n : k;
    ASSERT_EQ(U.n, uc);
    ASSERT_EQ(Vh.m, vr);
    EXPECT_LE(max_diff(mul(adj(U), U), eye(uc)), tol);
    EXPECT_LE(max_diff(mul(Vh, adj(Vh)), eye(vr)), tol);
    EXPECT_LE(max_diff(mul(mul(U, diag(S, uc, vr)), Vh), A), tol * (1 + max_abs(A)));
  }
}

TEST(Svd, ReconstructsOverDtypesLayoutsAndShapes) {
  std::mt19937_64 rng(1);
  HeldSession s = backend1().open_session();
  const Shape shapes[] = {{4, 3}, {3, 5}, {5, 5, 3}, {1, 1}, {6, 2, 2, 2}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Shape& sh : shapes)
        for (SvdMode mode : {SvdMode::thin, SvdMode::full, SvdMode::values}) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + sh.to_string() + " layout " + std::to_string(int(l)) + " mode " + std::to_string(int(mode)));
          const Tensor a = random_in(rng, sh, d, l);
          const SvdResult r = svd(s, a, mode);
          check_svd(a, r, mode);
          if (mode == SvdMode::values) {
            EXPECT_FALSE(r.U.defined());
            const SvdResult t = svd(s, a, SvdMode::thin);
            const Tensor sv = svdvals(s, a);
            for (std::int64_t b = 0; b < batch_count(a); ++b) {
              EXPECT_LE(max_diff(get_vec(r.S, b), get_vec(t.S, b)), tol_for(d, 8));
              EXPECT_LE(max_diff(get_vec(sv, b), get_vec(t.S, b)), tol_for(d, 8));
            }
          }
        }
}

TEST(Svd, KnownSingularValuesOfADiagonalMatrix) {
  HeldSession s = backend1().open_session();
  // diag(1, -3, 2) has singular values 3, 2, 1 whatever the signs.
  const Tensor a = Tensor::from_data<double>({3, 3}, {1, 0, 0, 0, -3, 0, 0, 0, 2});
  const Tensor sv = svdvals(s, a);
  EXPECT_NEAR(sv.item<double>({0}), 3.0, 1e-14);
  EXPECT_NEAR(sv.item<double>({1}), 2.0, 1e-14);
  EXPECT_NEAR(sv.item<double>({2}), 1.0, 1e-14);
}

TEST(Svd, ZeroSizeMatricesAndBatches) {
  HeldSession s = backend1().open_session();
  const Tensor a = Tensor::zeros({0, 3}, DType::f64);
  SvdResult t = svd(s, a, SvdMode::thin);
  EXPECT_EQ(t.U.shape(), Shape({0, 0}));
  EXPECT_EQ(t.S.shape(), Shape({0}));
  EXPECT_EQ(t.Vh.shape(), Shape({0, 3}));
  SvdResult f = svd(s, a, SvdMode::full);
  EXPECT_EQ(f.Vh.shape(), Shape({3, 3}));
  EXPECT_LE(max_diff(get(f.Vh), eye(3)), 0.0);
  const Tensor e = Tensor::zeros({3, 2, 0}, DType::c64);
  SvdResult z = svd(s, e);
  EXPECT_EQ(z.U.shape(), Shape({3, 2, 0}));
  EXPECT_EQ(z.S.shape(), Shape({2, 0}));
  EXPECT_EQ(z.S.dtype(), DType::f32);
}

TEST(Svd, BadInputs) {
  HeldSession s = backend1().open_session();
  Tensor a = Tensor::ones({3, 3}, DType::f64);
  a.set<double>({1, 2}, std::nan(""));
  EXPECT_THROW(svd(s, a), ArgumentError);
  a.set<double>({1, 2}, INFINITY);
  EXPECT_THROW(svdvals(s, a), ArgumentError);
  EXPECT_THROW(svd(s, Tensor::ones({3, 3}, DType::i32)), DTypeError);
  EXPECT_THROW(svd(s, Tensor::ones({3, 3}, DType::b8)), DTypeError);
  EXPECT_THROW(svd(s, Tensor::ones({3}, DType::f64)), RankError);
  EXPECT_THROW(svd(s, Tensor()), ArgumentError);
  try {
    svd(s, a);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "svd");
  }
}

TEST(Svd, BatchedOnTwoThreadsMatchesOneByOne) {
  std::mt19937_64 rng(7);
  CpuBackend two(CpuBackendOptions{.num_threads = 2});
  HeldSession s = two.open_session();
  const Tensor a = random_tensor(rng, Shape{6, 5, 300}, DType::f64, -1, 1);
  const SvdResult r = svd(s, a);
  check_svd(a, r, SvdMode::thin);
  for (std::int64_t b : {0, 137, 299}) {
    const Tensor one = svdvals(s, a.slice_view(2, b, b + 1));
    EXPECT_LE(max_diff(get_vec(one), get_vec(r.S, b)), 1e-13);
  }
}

TEST(Svd, WorkspaceSizesAreCachedPerShape) {
  std::mt19937_64 rng(3);
  CpuBackend b(CpuBackendOptions{.num_threads = 1});
  HeldSession s = b.open_session();
  const Tensor a = random_tensor(rng, Shape{7, 4}, DType::f64);
  svd(s, a);
  const PlanCacheStats first = linalg_plan_cache_stats(s);
  svd(s, a);
  const PlanCacheStats second = linalg_plan_cache_stats(s);
  EXPECT_EQ(second.misses, first.misses);
  EXPECT_EQ(second.hits, first.hits + 1);
  EXPECT_GE(second.entries, 1u);
}

TEST(Svd, BroadcastBatchViewIsReadDirectly) {
  // A zero-stride batch axis: every batch is the same matrix.
  std::mt19937_64 rng(21);
  HeldSession s = backend1().open_session();
  const Tensor base = random_tensor(rng, Shape{3, 2, 1}, DType::c128, -1, 1);
  const Tensor a = base.broadcast_view({3, 2, 4});
  const SvdResult r = svd(s, a);
  check_svd(a, r, SvdMode::thin);
  for (std::int64_t b = 1; b < 4; ++b) EXPECT_LE(max_diff(get_vec(r.S, b), get_vec(r.S, 0)), 0.0);
}

}  // namespace
