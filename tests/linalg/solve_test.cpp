// solve, triangular_solve, inv and cholesky (and their _into forms): residuals and
// reconstructions over dtypes, layouts, batches and zero sizes; every bad input checked
// for its error type and an untouched output.
#include "linalg/linalg_test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

// A well-conditioned random square matrix: random + n·I.
Tensor well_conditioned(std::mt19937_64& rng, const Shape& sh, DType d, Lay l, Session& s) {
  Tensor a = random_in(rng, sh, d, l);
  Tensor c = Tensor::empty(sh.span(), d);
  copy_into(s, a, c);
  for (std::int64_t b = 0; b < batch_count(c); ++b) {
    Mat m = get(c, b);
    for (std::int64_t i = 0; i < m.m; ++i) m(i, i) += static_cast<double>(m.m);
    put(c, b, m);
  }
  copy_into(s, c, a);  // keep a's layout
  return a;
}

TEST(Solve, ResidualOverDtypesLayoutsAndBatches) {
  std::mt19937_64 rng(1);
  HeldSession s = backend1().open_session();
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {{{4, 4}, {4, 3}}, {{1, 1}, {1, 1}}, {{5, 5, 3}, {5, 2, 3}}, {{3, 3, 2, 2}, {3, 1, 2, 2}}, {{4, 4}, {4}}, {{3, 3}, {3, 0}}};
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (const Case& c : cases) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + c.a.to_string() + " " + c.b.to_string() + " layout " + std::to_string(int(l)));
        const Tensor a = well_conditioned(rng, c.a, d, l, s);
        const Tensor b = random_in(rng, c.b, d, l);
        const Tensor x = solve(s, a, b);
        ASSERT_EQ(x.shape(), b.shape());
        Tensor out = Tensor::full(c.b.span(), 7.0, d);
        solve_into(s, a, b, out);
        const bool vec = c.b.size() == 1;
        for (std::int64_t k = 0; k < batch_count(a); ++k) {
          const Mat A = get(a, k), X = vec ? get_vec(x, 0) : get(x, k), B = vec ? get_vec(b, 0) : get(b, k);
          const Mat O = vec ? get_vec(out, 0) : get(out, k);
          EXPECT_LE(max_diff(mul(A, X), B), tol_for(d, c.a[0]) * 10);
          EXPECT_LE(max_diff(O, X), 0.0);
        }
      }
}

TEST(Solve, SingularReportsRoutineInfoAndBatchAndLeavesOutUntouched) {
  HeldSession s = backend1().open_session();
  Tensor a = Tensor::zeros({3, 3, 4}, DType::f64);
  for (std::int64_t b = 0; b < 4; ++b)
    for (std::int64_t i = 0; i < 3; ++i) a.set<double>({i, i, b}, 1.0);
  a.set<double>({1, 1, 2}, 0.0);  // batch 2 singular at pivot 2
  const Tensor b = Tensor::ones({3, 1, 4}, DType::f64);
  Tensor out = Tensor::full({3, 1, 4}, 5.0, DType::f64);
  const auto before = snapshot(out);
  try {
    solve_into(s, a, b, out);
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.op(), "solve");
    EXPECT_EQ(e.info(), 2);
    EXPECT_EQ(e.batch_index(), 2);
    EXPECT_NE(std::string(e.what()).find("getrf"), std::string::npos);
  }
  expect_untouched(out, before);
  Tensor io = Tensor::full({3, 3, 4}, 5.0, DType::f64);
  const auto before2 = snapshot(io);
  try {
    inv_into(s, a, io);
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_EQ(e.batch_index(), 2);
  }
  expect_untouched(io, before2);
  // One unbatched tiny system (the no-driver path) reports batch 0.
  try {
    solve(s, Tensor::from_row_major<double>({2, 2}, {1, 2, 2, 4}), Tensor::ones({2}, DType::f64));
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_EQ(e.batch_index(), 0);
  }
}

TEST(Solve, ShapeAndDtypeErrorsLeaveOutUntouched) {
  HeldSession s = backend1().open_session();
  const Tensor a = Tensor::eye(3, DType::f64), b = Tensor::ones({3, 2}, DType::f64);
  Tensor out = Tensor::full({3, 2}, 5.0, DType::f64);
  const auto before = snapshot(out);
  EXPECT_THROW(solve_into(s, Tensor::ones({3, 4}, DType::f64), b, out), ShapeError);
  EXPECT_THROW(solve_into(s, a, Tensor::ones({4, 2}, DType::f64), out), ShapeError);
  EXPECT_THROW(solve_into(s, Tensor::ones({3, 3, 2}, DType::f64), Tensor::ones({3, 2, 3}, DType::f64), out), ShapeError);
  EXPECT_THROW(solve_into(s, Tensor::ones({3, 3}, DType::i32), Tensor::ones({3, 2}, DType::i32), out), DTypeError);
  EXPECT_THROW(solve_into(s, a, Tensor::ones({3, 2}, DType::f32), out), DTypeError);
  EXPECT_THROW(solve_into(s, a, b, Tensor::zeros({3, 3}, DType::f64)), ShapeError);
  EXPECT_THROW(solve_into(s, a, b, Tensor::zeros({3, 2}, DType::f32)), DTypeError);
  expect_untouched(out, before);
  EXPECT_THROW(solve(s, Tensor::ones({3}, DType::f64), b), RankError);
  EXPECT_THROW(inv(s, Tensor::ones({2, 3}, DType::f64)), ShapeError);
}

TEST(TriangularSolve, AllSidesTrianglesOpsAndDiagonals) {
  std::mt19937_64 rng(9);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (Side side : {Side::left, Side::right})
        for (Triangle tri : {Triangle::lower, Triangle::upper})
          for (MatOp op : {MatOp::none, MatOp::transpose, MatOp::adjoint})
            for (bool unit : {false, true}) {
              SCOPED_TRACE(std::string(dtype_name(d)) + " layout " + std::to_string(int(l)) + " side " + std::to_string(int(side)) + " tri " +
                           std::to_string(int(tri)) + " op " + std::to_string(int(op)) + " unit " + std::to_string(unit));
              const Tensor a = well_conditioned(rng, Shape{4, 4, 2}, d, l, s);
              const Tensor b = random_in(rng, side == Side::left ? Shape{4, 3, 2} : Shape{3, 4, 2}, d, l);
              const TriangularSolveOptions o{side, tri, op, unit};
              const Tensor x = triangular_solve(s, a, b, o);
              for (std::int64_t k = 0; k < 2; ++k) {
                Mat T = get(a, k);
                for (std::int64_t j = 0; j < 4; ++j)
                  for (std::int64_t i = 0; i < 4; ++i) {
                    if (tri == Triangle::lower ? i < j : i > j) T(i, j) = 0;
                    if (unit && i == j) T(i, j) = 1;
                  }
                const Mat opT = op == MatOp::none ? T : op == MatOp::transpose ? transp(T) : adj(T);
                const Mat X = get(x, k), B = get(b, k);
                EXPECT_LE(max_diff(side == Side::left ? mul(opT, X) : mul(X, opT), B), tol_for(d, 4) * 10);
              }
            }
}

TEST(TriangularSolve, ZeroDiagonalIsSingularAndOutUntouched) {
  HeldSession s = backend1().open_session();
  Tensor a = Tensor::eye(3, DType::c64);
  a.set<c64>({2, 2}, c64(0));
  Tensor out = Tensor::full({3, 2}, 1.0, DType::c64);
  const auto before = snapshot(out);
  try {
    triangular_solve_into(s, a, Tensor::ones({3, 2}, DType::c64), out);
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 3);
    EXPECT_EQ(e.batch_index(), 0);
  }
  EXPECT_THROW(triangular_solve_into(s, a, Tensor::ones({2, 3}, DType::c64), out), ShapeError);
  EXPECT_THROW(triangular_solve_into(s, Tensor::ones({3, 2}, DType::c64), Tensor::ones({3, 2}, DType::c64), out), ShapeError);
  expect_untouched(out, before);
  // unit diagonal: the zero is not read.
  const Tensor x = triangular_solve(s, a, Tensor::ones({3, 2}, DType::c64), {.unit_diagonal = true});
  EXPECT_EQ(x.item<c64>({2, 1}), c64(1));
}

TEST(Inv, InverseTimesMatrixIsIdentity) {
  std::mt19937_64 rng(4);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays) {
      const Tensor a = well_conditioned(rng, Shape{5, 5, 3}, d, l, s);
      const Tensor x = inv(s, a);
      Tensor out = Tensor::zeros({5, 5, 3}, d);
      inv_into(s, a, out);
      for (std::int64_t k = 0; k < 3; ++k) {
        EXPECT_LE(max_diff(mul(get(a, k), get(x, k)), eye(5)), tol_for(d, 5) * 10);
        EXPECT_LE(max_diff(get(out, k), get(x, k)), 0.0);
      }
    }
  EXPECT_EQ(inv(s, Tensor::zeros({0, 0, 2}, DType::f64)).shape(), Shape({0, 0, 2}));
}

TEST(Cholesky, LowerAndUpperReconstruct) {
  std::mt19937_64 rng(6);
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes)
    for (Lay l : kLays)
      for (Triangle tri : {Triangle::lower, Triangle::upper}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " layout " + std::to_string(int(l)) + " tri " + std::to_string(int(tri)));
        const Tensor h = random_hpd(rng, Shape{4, 4, 3}, d);
        Tensor a = random_in(rng, Shape{4, 4, 3}, d, l);
        copy_into(s, h, a);
        const Tensor f = cholesky(s, a, tri);
        Tensor out = Tensor::zeros({4, 4, 3}, d);
        cholesky_into(s, a, out, tri);
        for (std::int64_t k = 0; k < 3; ++k) {
          const Mat F = get(f, k), A = get(h, k);
          for (std::int64_t j = 0; j < 4; ++j)
            for (std::int64_t i = 0; i < 4; ++i)
              if (tri == Triangle::lower ? i < j : i > j) {
                EXPECT_EQ(F(i, j), cd(0));
              }
          EXPECT_LE(max_diff(tri == Triangle::lower ? mul(F, adj(F)) : mul(adj(F), F), A), tol_for(d, 4) * 10 * max_abs(A));
          EXPECT_LE(max_diff(get(out, k), F), 0.0);
        }
      }
}

TEST(Cholesky, NotPositiveDefiniteAndBadInputs) {
  HeldSession s = backend1().open_session();
  Tensor a = Tensor::zeros({2, 2, 3}, DType::f64);
  for (std::int64_t b = 0; b < 3; ++b) {
    a.set<double>({0, 0, b}, 1.0);
    a.set<double>({1, 1, b}, b == 1 ? -1.0 : 1.0);
  }
  Tensor out = Tensor::full({2, 2, 3}, 3.0, DType::f64);
  const auto before = snapshot(out);
  try {
    cholesky_into(s, a, out);
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_EQ(e.batch_index(), 1);
    EXPECT_NE(std::string(e.what()).find("potrf"), std::string::npos);
  }
  EXPECT_THROW(cholesky_into(s, Tensor::ones({2, 3}, DType::f64), out), ShapeError);
  EXPECT_THROW(cholesky_into(s, Tensor::ones({2, 2}, DType::i64), out), DTypeError);
  EXPECT_THROW(cholesky_into(s, Tensor::eye(2, DType::f64), out), ShapeError);
  expect_untouched(out, before);
}

TEST(Solve, ParallelBatchesReportTheFirstFailingBatch) {
  // 2 threads and enough batches to fork: batches 150 and 400 are singular; the error
  // names 150 whatever the chunking.
  CpuBackend two(CpuBackendOptions{.num_threads = 2});
  HeldSession s = two.open_session();
  const std::int64_t n = 16, nb = 512;
  Tensor a = Tensor::zeros({n, n, nb}, DType::f64);
  double* p = a.mutable_data_ptr<double>();
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < n; ++i) p[b * n * n + i * (n + 1)] = 2.0;
  p[400 * n * n + 3 * (n + 1)] = 0.0;
  p[150 * n * n + 7 * (n + 1)] = 0.0;
  try {
    solve(s, a, Tensor::ones({n, 1, nb}, DType::f64));
    FAIL();
  } catch (const NumericalError& e) {
    EXPECT_EQ(e.batch_index(), 150);
    EXPECT_EQ(e.info(), 8);
  }
  p[150 * n * n + 7 * (n + 1)] = 2.0;
  p[400 * n * n + 3 * (n + 1)] = 2.0;
  const Tensor x = solve(s, a, Tensor::ones({n, 1, nb}, DType::f64));
  for (std::int64_t b : {0, 255, 511}) EXPECT_EQ(x.item<double>({5, 0, b}), 0.5);
}

TEST(Solve, IntoStridedOutputAndAliasedInput) {
  std::mt19937_64 rng(31);
  HeldSession s = backend1().open_session();
  const Tensor a = well_conditioned(rng, Shape{4, 4}, DType::f64, Lay::contiguous, s);
  const Tensor b = random_tensor(rng, Shape{4, 3}, DType::f64, -1, 1);
  const Tensor x = solve(s, a, b);
  // out: a transposed view of a [3, 4] tensor.
  const Tensor store = Tensor::zeros({3, 4}, DType::f64);
  const Tensor out = store.transpose_view();
  solve_into(s, a, b, out);
  EXPECT_LE(max_diff(get(out), get(x)), 0.0);
  // out aliasing b (computed in a temporary, then copied).
  Tensor bb = Tensor::empty({4, 3}, DType::f64);
  copy_into(s, b, bb);
  solve_into(s, a, bb, bb);
  EXPECT_LE(max_diff(get(bb), get(x)), 0.0);
  // Read-only (broadcast) out is refused.
  EXPECT_THROW(solve_into(s, a, b, Tensor::zeros({4, 1}, DType::f64).broadcast_view({4, 3})), ArgumentError);
}

}  // namespace
