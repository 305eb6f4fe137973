// Linalg ops perform no heap allocation inside a held session in steady state:
// workspace sizes come from the session plan cache, workspace and packed copies and the
// results from the session pool (or the stack for tiny workspace). Every global
// operator new/delete of this executable is replaced by a counting version
// (support/alloc_counter.hpp), switched on only around the call under test (after a
// warm-up call with the same shapes). LAPACKE's `_work` entry points in column-major
// order allocate nothing themselves (OpenBLAS's per-call buffer comes from its own
// preallocated arena).
#include "support/alloc_counter.hpp"
#include "support/test_util.hpp"

namespace tenferro::linalg_alloc_test {
namespace {

using testing::random_tensor;
void* volatile g_sink = nullptr;

TEST(LinalgAlloc, CountingIsLive) {
  const testing::AllocCounts c = testing::allocations_in([] {
    std::vector<int> v(100);
    g_sink = v.data();
  });
  EXPECT_GE(c.news, 1);
}

TEST(LinalgAlloc, SteadyStateCallsDoNotAllocate) {
  std::mt19937_64 rng(5);
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  HeldSession s = backend.open_session();
  for (std::int64_t n : {2, 8, 40}) {  // 40: workspace larger than the stack buffer
    SCOPED_TRACE(n);
    Tensor a = random_tensor(rng, {n, n}, DType::f64, -1, 1);
    Tensor spd = Tensor::empty({n, n}, DType::f64);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        for (std::int64_t k = 0; k < n; ++k) v += a.item<double>({i, k}) * a.item<double>({j, k});
        spd.set<double>({i, j}, v + (i == j ? static_cast<double>(n) : 0.0));
      }
    const Tensor b = random_tensor(rng, {n, 2}, DType::f64, -1, 1);
    const Tensor at = random_tensor(rng, {n, n}, DType::c128, -1, 1).transpose_view();  // strided complex
    const Tensor batch = random_tensor(rng, {n, n, 3}, DType::f32, -1, 1);
    Tensor x = Tensor::empty({n, 2}, DType::f64);
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, a).S.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, at, SvdMode::full).U.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, batch).S.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr(s, a).Q.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr(s, at, QrMode::complete, true).R.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eigh(s, spd).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eigh(s, at).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eig(s, a).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(solve(s, spd, b).data()));
    EXPECT_NO_ALLOCATION(solve_into(s, spd, b, x));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(triangular_solve(s, spd, b).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(cholesky(s, spd).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(inv(s, spd).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu(s, a).U.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_factor(s, a).LU.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(det(s, batch).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(slogdet(s, at).sign.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_full_pivot(s, a).Q.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr_pivoted(s, a).R.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lstsq(s, a, b).X.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lstsq(s, a, b, LstsqDriver::svd).X.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(pinv(s, a).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(matrix_norm(s, a, MatrixNorm::spectral).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(vector_norm(s, b, 3.0).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(matrix_exp(s, a).data()));
    const LuFactorResult f = lu_factor(s, spd);
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_solve(s, f, b).data()));
  }
}

// The `_into` forms (Note [Linalg into forms]): output checks, pooled scratch results and
// the final copies into strided views allocate nothing either.
TEST(LinalgAlloc, IntoFormsDoNotAllocate) {
  std::mt19937_64 rng(6);
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  HeldSession s = backend.open_session();
  for (std::int64_t n : {2, 8, 40}) {
    SCOPED_TRACE(n);
    const Tensor a = random_tensor(rng, {n, n}, DType::f64, -1, 1);
    Tensor h = Tensor::empty({n, n}, DType::f64);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) h.set<double>({i, j}, a.item<double>({i, j}) + a.item<double>({j, i}) + (i == j ? 2.0 * n : 0.0));
    const Tensor b = random_tensor(rng, {n, 2}, DType::f64, -1, 1);
    // Outputs as transposed views (strided writes).
    auto tview = [](std::int64_t r, std::int64_t c, DType d) { return Tensor::zeros({c, r}, d).transpose_view(); };
    const Tensor U = tview(n, n, DType::f64), Vh = tview(n, n, DType::f64), M = tview(n, n, DType::f64), M2 = tview(n, n, DType::f64);
    const Tensor M3 = tview(n, n, DType::f64), M4 = tview(n, n, DType::f64);
    const Tensor S = Tensor::zeros({n}, DType::f64), W = Tensor::zeros({n}, DType::f64), Wc = Tensor::zeros({n}, DType::c128);
    const Tensor Vc = tview(n, n, DType::c128), piv = Tensor::zeros({n}, DType::i64), perm = Tensor::zeros({n}, DType::i64);
    const Tensor rank = Tensor::zeros({}, DType::i64), scalar = Tensor::zeros({}, DType::f64), scalar2 = Tensor::zeros({}, DType::f64);
    const Tensor X = tview(n, 2, DType::f64), row = Tensor::zeros({2}, DType::f64);
    EXPECT_NO_ALLOCATION(svd_into(s, a, U, S, Vh));
    EXPECT_NO_ALLOCATION(svdvals_into(s, a, S));
    EXPECT_NO_ALLOCATION(qr_into(s, a, M, M2));
    EXPECT_NO_ALLOCATION(qr_pivoted_into(s, a, M, M2, perm, rank));
    EXPECT_NO_ALLOCATION(lu_into(s, a, M, M2, M3));
    EXPECT_NO_ALLOCATION(lu_factor_into(s, a, M, piv));
    const LuFactorResult f = lu_factor(s, h);
    EXPECT_NO_ALLOCATION(lu_solve_into(s, f, b, X));
    EXPECT_NO_ALLOCATION(lu_full_pivot_into(s, a, M, M2, M3, M4));
    EXPECT_NO_ALLOCATION(eigh_into(s, h, W, M));
    EXPECT_NO_ALLOCATION(eigvalsh_into(s, h, W));
    EXPECT_NO_ALLOCATION(eig_into(s, a, Wc, Vc));
    EXPECT_NO_ALLOCATION(eigvals_into(s, a, Wc));
    EXPECT_NO_ALLOCATION(det_into(s, a, scalar));
    EXPECT_NO_ALLOCATION(slogdet_into(s, a, scalar, scalar2));
    EXPECT_NO_ALLOCATION(lstsq_into(s, h, b, X, rank, Tensor()));
    EXPECT_NO_ALLOCATION(lstsq_into(s, h, b, X, rank, S, LstsqDriver::svd));
    EXPECT_NO_ALLOCATION(pinv_into(s, a, M));
    EXPECT_NO_ALLOCATION(matrix_norm_into(s, a, scalar, MatrixNorm::nuclear));
    EXPECT_NO_ALLOCATION(vector_norm_into(s, b, row, 3.0));
    EXPECT_NO_ALLOCATION(matrix_exp_into(s, a, M));
  }
}

}  // namespace
}  // namespace tenferro::linalg_alloc_test
