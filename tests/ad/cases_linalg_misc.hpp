#pragma once
// Derivative-check cases for slogdet, pinv, lstsq, matrix_norm and vector_norm
// (src/ad/rules_linalg_misc.cpp). Points are kept away from the non-differentiable sets:
// matrices are shifted by c·I (well conditioned, full rank, distinct singular values),
// ties of the max-type norms are either absent (random data) or built into the
// parametrisation (duplicated columns / entries, where the split-tie rule is exact).
#include "ad/rule_case.hpp"

namespace tenferro::testing {

inline void add_linalg_misc_cases(CaseList& add) {
  // A + c·I_{M×N} (rectangular identity), so random A in [-1, 1) stays far from rank
  // deficiency; the batch axes broadcast.
  auto shift = [](ad::Context& c, const ad::EagerTensor& a, double k) {
    return ad::add(c, a, ad::mul(c, ad::EagerTensor(Tensor::eye(a.value().extent(0), DType::f64, a.value().extent(1))), k));
  };
  auto batch_name = [](bool batched) { return std::string(batched ? "_batched" : ""); };

  // ---- slogdet: both outputs (the real sign is a constant); a negative determinant too.
  for (bool batched : {false, true}) {
    const Shape sh = batched ? Shape{3, 3, 2} : Shape{3, 3};
    add("slogdet", "slogdet" + batch_name(batched), {{sh}}, [shift](auto& c, Args x) {
      ad::SlogdetPair r = ad::slogdet(c, shift(c, x[0], 3.0));
      return Out{r.sign, r.logabsdet};
    });
  }
  add("slogdet", "slogdet_negative_determinant", {{{3, 3}}}, [shift](auto& c, Args x) {
    ad::SlogdetPair r = ad::slogdet(c, shift(c, x[0], -3.0));
    return Out{r.sign, r.logabsdet};
  });
  add("slogdet", "slogdet_sign_only", {{{3, 3}}}, [shift](auto& c, Args x) {
    return Out{ad::slogdet(c, shift(c, x[0], 3.0)).sign};
  }, true, false);

  // ---- pinv: tall, square, wide; batched; a given rtol that truncates nothing.
  for (const Shape& sh : {Shape{4, 3}, Shape{3, 3}, Shape{3, 5}, Shape{4, 2, 2}, Shape{2, 4, 3}}) {
    std::string nm = "pinv_" + std::to_string(sh[0]) + "x" + std::to_string(sh[1]) + (sh.size() > 2 ? "_batched" : "");
    add("pinv", nm, {{sh}}, [shift](auto& c, Args x) { return Out{ad::pinv(c, shift(c, x[0], 2.0))}; });
  }
  // Rank 2 by construction (A = X·Y, X [4, 2], Y [2, 3]): the rank stays constant under
  // perturbations of X and Y, where the truncated pseudo-inverse is differentiable.
  add("pinv", "pinv_rank_deficient_constant_rank", {{{4, 2}}, {{2, 3}}}, [shift](auto& c, Args x) {
    return Out{ad::pinv(c, ad::matmul(c, shift(c, x[0], 2.0), shift(c, x[1], 2.0)), 1e-8)};
  });
  add("pinv", "pinv_rtol", {{{4, 3}}}, [shift](auto& c, Args x) { return Out{ad::pinv(c, shift(c, x[0], 2.0), 1e-3)}; });

  // ---- lstsq: both drivers, tall / square / wide, matrix and vector right-hand sides,
  // batched; the svd driver's singular values too.
  for (LstsqDriver drv : {LstsqDriver::qr, LstsqDriver::svd}) {
    const std::string dn = drv == LstsqDriver::qr ? "qr" : "svd";
    struct Cfg {
      Shape a, b;
      std::string name;
    };
    for (const Cfg& cfg : {Cfg{{5, 3}, {5, 2}, "tall"}, Cfg{{3, 3}, {3, 2}, "square"}, Cfg{{3, 5}, {3, 2}, "wide"},
                           Cfg{{5, 3}, {5}, "tall_vector"}, Cfg{{3, 5}, {3}, "wide_vector"},
                           Cfg{{4, 3, 2}, {4, 2, 2}, "tall_batched"}, Cfg{{2, 4, 2}, {2, 3, 2}, "wide_batched"}}) {
      add("lstsq", "lstsq_" + dn + "_" + cfg.name, {{cfg.a}, {cfg.b}}, [shift, drv](auto& c, Args x) {
        ad::LstsqSolution r = ad::lstsq(c, shift(c, x[0], 2.0), x[1], drv);
        Out o{r.X};
        if (drv == LstsqDriver::svd) o.push_back(r.S);
        return o;
      });
    }
    add("lstsq", "lstsq_" + dn + "_b_only", {{{5, 3}}}, [drv](auto& c, Args x) {
      const Tensor a = Tensor::from_data<double>({3, 5}, {2, 0.1, 0.3, -0.2, 0.5, 0.4, 1.5, -0.3, 0.2, 0.1, 0.3, 0.2, 1.8, 0.7, -0.4});
      ad::EagerTensor at = ad::transpose(c, ad::convert(c, a, x[0].dtype()), {1, 0});  // a constant 5×3 A
      return Out{ad::lstsq(c, at, x[0], drv).X};
    });
  }
  add("lstsq", "lstsq_svd_rank_deficient_constant_rank", {{{4, 2}}, {{2, 3}}, {{4, 2}}}, [shift](auto& c, Args x) {
    ad::EagerTensor a = ad::matmul(c, shift(c, x[0], 2.0), shift(c, x[1], 2.0));
    return Out{ad::lstsq(c, a, x[2], LstsqDriver::svd, 1e-8).X};
  });
  add("lstsq", "lstsq_svd_rcond_singular_values_only", {{{4, 3}}}, [shift](auto& c, Args x) {
    return Out{ad::lstsq(c, shift(c, x[0], 2.0), Tensor::ones({4, 2}, x[0].dtype()), LstsqDriver::svd, 1e-4).S};
  });

  // ---- matrix_norm: every kind, batched and rectangular.
  const std::pair<MatrixNorm, const char*> kinds[] = {{MatrixNorm::frobenius, "frobenius"},
                                                      {MatrixNorm::nuclear, "nuclear"},
                                                      {MatrixNorm::spectral, "spectral"},
                                                      {MatrixNorm::one, "one"},
                                                      {MatrixNorm::inf, "inf"}};
  for (const auto& [kind, kn] : kinds) {
    add("matrix_norm", std::string("matrix_norm_") + kn, {{{3, 4}}}, [kind](auto& c, Args x) {
      return Out{ad::matrix_norm(c, x[0], kind)};
    });
    add("matrix_norm", std::string("matrix_norm_") + kn + "_batched", {{{4, 3, 2}}}, [kind](auto& c, Args x) {
      return Out{ad::matrix_norm(c, x[0], kind)};
    });
  }
  // Tied maximal columns / rows built in: A = [X, X] (one) and [X; X] (inf) tie for every
  // X, and the split rule must give the derivative of max over X's own sums.
  add("matrix_norm", "matrix_norm_one_tied_columns", {{{3, 2}}}, [](auto& c, Args x) {
    const ad::EagerTensor xs[] = {x[0], x[0]};
    return Out{ad::matrix_norm(c, ad::concatenate(c, xs, 1), MatrixNorm::one)};
  });
  add("matrix_norm", "matrix_norm_inf_tied_rows", {{{2, 3}}}, [](auto& c, Args x) {
    const ad::EagerTensor xs[] = {x[0], x[0]};
    return Out{ad::matrix_norm(c, ad::concatenate(c, xs, 0), MatrixNorm::inf)};
  });

  // ---- vector_norm: every kind of p (2, 1, other p > 1, 0 < p < 1, p < 0, ±inf, 0).
  const std::pair<double, const char*> ps[] = {{2.0, "2"},   {1.0, "1"},        {3.0, "3"},     {0.5, "0_5"},
                                               {-1.5, "m1_5"}, {INFINITY, "inf"}, {-INFINITY, "minf"}};
  // p < 1 is not differentiable at x_i = 0: those inputs are drawn with |parts| in
  // [0.3, 1) and given alternating signs by a constant factor.
  auto alternating = [](const Shape& sh) {
    Tensor t = Tensor::empty(sh.span(), DType::f64);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.mutable_data_ptr<double>()[i] = i % 3 == 1 ? -1.0 : 1.0;
    return t;
  };
  for (const auto& [p, pn] : ps)
    for (bool batched : {false, true}) {
      const Shape sh = batched ? Shape{4, 3, 2} : Shape{5};
      const Tensor sg = alternating(sh);
      const double lo = p < 1 ? 0.3 : -1;
      add("vector_norm", std::string("vector_norm_p") + pn + batch_name(batched), {{sh, lo, 1}}, [p, sg](auto& c, Args x) {
        return Out{ad::vector_norm(c, ad::mul(c, x[0], sg), p)};
      });
    }
  add("vector_norm", "vector_norm_p0_count_is_constant", {{{4, 2}}}, [](auto& c, Args x) {
    return Out{ad::vector_norm(c, x[0], 0.0), ad::vector_norm(c, x[0], 2.0)};
  });
  for (double p : {INFINITY, -INFINITY})
    add("vector_norm", std::string("vector_norm_") + (p > 0 ? "inf" : "minf") + "_tied_entries", {{{3}}}, [p](auto& c, Args x) {
      const ad::EagerTensor xs[] = {x[0], ad::neg(c, x[0])};  // |x_i| appears twice
      return Out{ad::vector_norm(c, ad::concatenate(c, xs, 0), p)};
    });
}

// ---- The documented values at non-differentiable points (exact expected values).
namespace linalg_misc_detail {
inline CpuBackend& backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}
inline Tensor grad_of(Session& s, const ad::ScalarFn& f, const Tensor& x) { return ad::grad(s, f, {x})[0]; }
inline std::vector<double> values(Session& s, const Tensor& t) {
  Tensor c = to_contiguous(s, cast(s, t, DType::f64));
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}
}  // namespace linalg_misc_detail

TEST(AdLinalgMisc, ZeroNormsHaveZeroGradient) {
  using namespace linalg_misc_detail;
  HeldSession s = backend().open_session();
  const Tensor z = Tensor::zeros({3, 2}, DType::f64);
  for (MatrixNorm k : {MatrixNorm::frobenius, MatrixNorm::one, MatrixNorm::inf})
    EXPECT_EQ(values(s, grad_of(s, [k](ad::Context& c, Args x) { return ad::matrix_norm(c, x[0], k); }, z)),
              std::vector<double>(6, 0.0));
  for (double p : {2.0, 3.0, 1.0, 0.5, -1.0, double(INFINITY)})
    EXPECT_EQ(values(s, grad_of(s, [p](ad::Context& c, Args x) { return ad::sum(c, ad::vector_norm(c, x[0], p)); }, z)),
              std::vector<double>(6, 0.0))
        << "p = " << p;
}

TEST(AdLinalgMisc, TiesSplitEqually) {
  using namespace linalg_misc_detail;
  HeldSession s = backend().open_session();
  // Columns 0 and 2 both have |.|-sum 3 (the maximum): each gets half of sgn(A).
  const Tensor a = Tensor::from_data<double>({2, 3}, {1, -2, 0.5, 0.5, -2, 1});
  EXPECT_EQ(values(s, grad_of(s, [](ad::Context& c, Args x) { return ad::matrix_norm(c, x[0], MatrixNorm::one); }, a)),
            (std::vector<double>{0.5, -0.5, 0, 0, -0.5, 0.5}));
  const Tensor v = Tensor::from_data<double>({4}, {3, -1, -3, 2});
  EXPECT_EQ(values(s, grad_of(s, [](ad::Context& c, Args x) { return ad::vector_norm(c, x[0], INFINITY); }, v)),
            (std::vector<double>{0.5, 0, -0.5, 0}));
  const Tensor w = Tensor::from_data<double>({4}, {3, -1, 1, 0.5});
  EXPECT_EQ(values(s, grad_of(s, [](ad::Context& c, Args x) { return ad::vector_norm(c, x[0], -INFINITY); }, w)),
            (std::vector<double>{0, 0, 0, 1}));
}

TEST(AdLinalgMisc, PiecewiseConstantOutputsAreConstants) {
  using namespace linalg_misc_detail;
  HeldSession s = backend().open_session();
  ad::Context c(s);
  ad::EagerTensor x = c.leaf(Tensor::from_data<double>({2, 2}, {2, 1, 0, 3}));
  EXPECT_FALSE(ad::vector_norm(c, x, 0.0).requires_grad());
  const ad::SlogdetPair r = ad::slogdet(c, x);
  EXPECT_FALSE(r.sign.requires_grad());  // real sign
  EXPECT_TRUE(r.logabsdet.requires_grad());
  const ad::LstsqSolution q = ad::lstsq(c, x, Tensor::ones({2, 1}, DType::f64));
  EXPECT_TRUE(q.X.requires_grad());
  EXPECT_FALSE(q.rank.requires_grad());
  EXPECT_FALSE(q.S.value().defined());  // qr driver: no singular values
}

TEST(AdLinalgMisc, SlogdetOfSingularMatrixThrowsInBackward) {
  using namespace linalg_misc_detail;
  HeldSession s = backend().open_session();
  const Tensor a = Tensor::from_data<double>({2, 2}, {1, 2, 2, 4});
  EXPECT_THROW(grad_of(s, [](ad::Context& c, Args x) { return ad::slogdet(c, x[0]).logabsdet; }, a), NumericalError);
}

// The harness runs f64 and c128; the rules must also keep f32 / c64 (weak scalars,
// real dtype of the norms) and agree with the double-precision gradients.
TEST(AdLinalgMisc, SinglePrecisionGradientsMatchDouble) {
  using namespace linalg_misc_detail;
  HeldSession s = backend().open_session();
  const std::vector<ad::ScalarFn> fns = {
      [](ad::Context& c, Args x) {
        ad::SlogdetPair r = ad::slogdet(c, x[0]);
        return ad::add(c, r.logabsdet, ad::real(c, ad::mul(c, r.sign, c64(0.3f, 0.7f))));
      },
      [](ad::Context& c, Args x) { return ad::sum(c, ad::real(c, ad::pinv(c, x[0]))); },
      [](ad::Context& c, Args x) {
        ad::LstsqSolution r = ad::lstsq(c, x[0], ad::mul(c, x[0], 0.5), LstsqDriver::svd);
        return ad::add(c, ad::sum(c, ad::real(c, r.X)), ad::sum(c, r.S));
      },
      [](ad::Context& c, Args x) { return ad::sum(c, ad::matrix_norm(c, x[0], MatrixNorm::nuclear)); },
      [](ad::Context& c, Args x) { return ad::sum(c, ad::matrix_norm(c, x[0], MatrixNorm::one)); },
      [](ad::Context& c, Args x) { return ad::sum(c, ad::vector_norm(c, x[0], 3.0)); },
      [](ad::Context& c, Args x) { return ad::sum(c, ad::vector_norm(c, x[0], INFINITY)); },
  };
  const Tensor a = Tensor::from_data<c128>({3, 3}, {{2, 0.5}, {0.3, -0.2}, {-0.4, 0.1}, {0.2, 0.3}, {-1.5, 0.4},
                                                    {0.6, -0.1}, {0.1, -0.5}, {0.3, 0.2}, {1.8, -0.6}});
  for (DType lo : {DType::f32, DType::c64}) {
    const DType hi = lo == DType::f32 ? DType::f64 : DType::c128;
    for (std::size_t i = 0; i < fns.size(); ++i) {
      const Tensor g32 = grad_of(s, fns[i], cast(s, a, lo));
      const Tensor g64 = grad_of(s, fns[i], cast(s, a, hi));
      EXPECT_EQ(g32.dtype(), lo) << "fn " << i;
      EXPECT_LT(max_abs_diff(s, g32, g64), 1e-4 * std::max(1.0, max_abs(s, g64))) << "fn " << i << " " << dtype_name(lo);
    }
  }
}

}  // namespace tenferro::testing
