// SVD rules beyond the per-case derivative checks (tests/ad/cases_svd.hpp): the complex
// convention (gradient of Σ s_i is U·Vh, of s_0² is 2·s_0·u_0·v_0ᴴ), a truncated-SVD step
// as tensor-network codes take it, degenerate and rank-deficient inputs under the
// Lorentzian broadening (Note [SVD broadening]), the gauge term's adjointness, and the
// unsupported full mode. Gradients are compared with central differences taken element
// by element on the real and the imaginary parts (gradient = ∂L/∂x + i·∂L/∂y).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <vector>

#include "ad/ad_check.hpp"
#include "ad/cases_svd.hpp"

using namespace tenferro;
using namespace tenferro::testing;

namespace {

CpuBackend& backend() {
  static CpuBackend b([] { CpuBackendOptions o; o.num_threads = 1; return o; }());
  return b;
}

using Loss = std::function<ad::EagerTensor(ad::Context&, const ad::EagerTensor&)>;

double eval_loss(Session& s, const Loss& f, const Tensor& x) {
  ad::Context c(s);
  return tenferro::cast(s, f(c, ad::EagerTensor(x)).value(), DType::f64).item<double>();
}
Tensor grad_of(Session& s, const Loss& f, const Tensor& x) {
  const std::vector<Tensor> xs{x};
  return ad::grad(s, [&](ad::Context& c, std::span<const ad::EagerTensor> e) { return f(c, e[0]); }, xs)[0];
}

/// Host copy (column-major, c128) of a tensor.
std::vector<c128> host(Session& s, const Tensor& t) {
  Tensor c = tenferro::to_contiguous(s, tenferro::cast(s, t, DType::c128));
  return std::vector<c128>(c.data_ptr<c128>(), c.data_ptr<c128>() + c.numel());
}
/// A tensor of dtype d (f64 or c128) and `shape` from host values (imaginary parts
/// dropped for f64).
Tensor from_host(const std::vector<c128>& v, const Shape& shape, DType d) {
  Tensor t = Tensor::empty(shape.span(), d);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (d == DType::c128) {
      t.mutable_data_ptr<c128>()[i] = v[i];
    } else {
      t.mutable_data_ptr<double>()[i] = v[i].real();
    }
  }
  return t;
}

/// Central-difference gradient ∂L/∂x + i·∂L/∂y, element by element.
Tensor fd_grad(Session& s, const Loss& f, const Tensor& x, double h = 1e-6) {
  const std::vector<c128> x0 = host(s, x);
  std::vector<c128> g(x0.size());
  const bool cplx = is_complex(x.dtype());
  for (std::size_t k = 0; k < x0.size(); ++k) {
    for (int part = 0; part < (cplx ? 2 : 1); ++part) {
      const c128 step = part == 0 ? c128(h, 0) : c128(0, h);
      std::vector<c128> xp = x0, xm = x0;
      xp[k] += step;
      xm[k] -= step;
      const double d = (eval_loss(s, f, from_host(xp, x.shape(), x.dtype())) - eval_loss(s, f, from_host(xm, x.shape(), x.dtype()))) / (2 * h);
      g[k] += part == 0 ? c128(d, 0) : c128(0, d);
    }
  }
  return from_host(g, x.shape(), x.dtype());
}

/// max |a − b| / max(max |b|, 1).
double rel_err(Session& s, const Tensor& a, const Tensor& b) { return max_abs_diff(s, a, b) / std::max(max_abs(s, b), 1.0); }

bool all_finite(Session& s, const Tensor& t) {
  for (const c128& v : host(s, t))
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return false;
  return true;
}

/// Naive column-major products of host matrices (m × k)·(k × n), optional adjoints.
std::vector<c128> hmm(const std::vector<c128>& a, const std::vector<c128>& b, int m, int k, int n, bool ah = false, bool bh = false) {
  std::vector<c128> c(static_cast<std::size_t>(m * n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < k; ++l) {
        const c128 x = ah ? std::conj(a[l + i * k]) : a[i + l * m];
        const c128 y = bh ? std::conj(b[j + l * n]) : b[l + j * k];
        c[i + j * m] += x * y;
      }
  return c;
}

/// Q1·diag(d)·Q2ᴴ (n × n) with random unitary Q1, Q2 (QR of random matrices).
Tensor with_singular_values(Session& s, const std::vector<double>& d, DType dt, std::uint64_t seed) {
  const int n = static_cast<int>(d.size());
  std::mt19937_64 rng(seed);
  const std::vector<c128> q1 = host(s, tenferro::qr(s, rand_in(rng, {n, n}, dt, -1, 1)).Q);
  const std::vector<c128> q2 = host(s, tenferro::qr(s, rand_in(rng, {n, n}, dt, -1, 1)).Q);
  std::vector<c128> q1d = q1;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) q1d[i + j * n] *= d[j];
  return from_host(hmm(q1d, q2, n, n, n, false, true), {n, n}, dt);
}

class AdSvd : public ::testing::TestWithParam<DType> {};

// (a) The complex convention (PyTorch's): ∇ Σ s_i = U·Vh, ∇ s_0² = 2·s_0·u_0·v_0ᴴ.
TEST_P(AdSvd, GradientOfSingularValuesIsUVh) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(11);
  const Tensor a = rand_in(rng, {4, 3}, GetParam(), -1, 1);
  const SvdResult r = tenferro::svd(s, a);
  const Tensor uvh = tenferro::matmul(s, r.U, r.Vh);
  const Loss sum_vals = [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svdvals(c, x)); };
  const Loss sum_thin = [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svd(c, x).S); };
  for (const Loss& f : {sum_vals, sum_thin}) {
    const Tensor g = grad_of(s, f, a);
    EXPECT_LT(max_abs_diff(s, g, uvh), 1e-12);
    EXPECT_LT(rel_err(s, g, fd_grad(s, f, a)), 1e-8);
  }
  // s_0² (through svdvals and through the thin factors).
  const Tensor u0 = r.U.slice_view(1, 0, 1), vh0 = r.Vh.slice_view(0, 0, 1);
  const double s0 = r.S.item<double>({0});
  const Tensor expect = tenferro::mul(s, tenferro::matmul(s, u0, vh0), 2 * s0);
  const Loss s0_vals = [](ad::Context& c, const ad::EagerTensor& x) {
    ad::EagerTensor v = ad::slice(c, ad::svdvals(c, x), {0}, {1});
    return ad::sum(c, ad::mul(c, v, v));
  };
  const Loss s0_thin = [](ad::Context& c, const ad::EagerTensor& x) {
    ad::EagerTensor v = ad::slice(c, ad::svd(c, x).S, {0}, {1});
    return ad::sum(c, ad::mul(c, v, v));
  };
  for (const Loss& f : {s0_vals, s0_thin}) {
    const Tensor g = grad_of(s, f, a);
    EXPECT_LT(max_abs_diff(s, g, expect), 1e-12);
    EXPECT_LT(rel_err(s, g, fd_grad(s, f, a)), 1e-8);
  }
}

// (b) A truncated-SVD step: keep the top 3 of 6 singular triplets, B = U₃·diag(S₃)·V₃h,
// loss Σ |B ∘ W|² for a fixed W (gauge invariant; distinct singular values).
TEST_P(AdSvd, TruncatedSvdStepMatchesCentralDifferences) {
  HeldSession s = backend().open_session();
  for (std::uint64_t seed : {21u, 22u}) {
    std::mt19937_64 rng(seed);
    const Tensor a = rand_in(rng, {6, 6}, GetParam(), -1, 1);
    const Tensor w = rand_in(rng, {6, 6}, GetParam(), 0.5, 1.5);
    const Loss f = [w](ad::Context& c, const ad::EagerTensor& x) {
      const ad::SvdTriple r = ad::svd(c, x);
      ad::EagerTensor b = svd_cases::reconstruct(c, ad::slice(c, r.U, {0, 0}, {6, 3}), ad::slice(c, r.S, {0}, {3}),
                                                 ad::slice(c, r.Vh, {0, 0}, {3, 6}));
      return ad::norm_squared(c, ad::mul(c, b, w));
    };
    const Tensor g = grad_of(s, f, a);
    EXPECT_LT(rel_err(s, g, fd_grad(s, f, a)), 1e-7) << "seed " << seed;
  }
}

// (c) Exactly degenerate singular values (2, 1, 1, 0.5): losses of S alone, and losses of
// the non-degenerate top triplet, are differentiable and the broadened rule is exact for
// them; all gradients are finite.
TEST_P(AdSvd, DegenerateSingularValuesGiveFiniteExactGradientsForWellDefinedLosses) {
  HeldSession s = backend().open_session();
  const Tensor a = with_singular_values(s, {2, 1, 1, 0.5}, GetParam(), 31);
  std::mt19937_64 rng(32);
  const Tensor w = rand_in(rng, {4, 4}, GetParam(), 0.5, 1.5);
  const std::vector<Loss> losses{
      [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svdvals(c, x)); },
      [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svd(c, x).S); },
      [](ad::Context& c, const ad::EagerTensor& x) {
        const ad::EagerTensor v = ad::svd(c, x).S;
        return ad::sum(c, ad::mul(c, v, ad::mul(c, v, v)));
      },
      [w](ad::Context& c, const ad::EagerTensor& x) {
        const ad::SvdTriple r = ad::svd(c, x);
        ad::EagerTensor b = svd_cases::reconstruct(c, ad::slice(c, r.U, {0, 0}, {4, 1}), ad::slice(c, r.S, {0}, {1}),
                                                   ad::slice(c, r.Vh, {0, 0}, {1, 4}));
        return ad::norm_squared(c, ad::mul(c, b, w));
      }};
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const Tensor g = grad_of(s, losses[i], a);
    EXPECT_TRUE(all_finite(s, g)) << "loss " << i;
    EXPECT_LT(rel_err(s, g, fd_grad(s, losses[i], a)), 1e-7) << "loss " << i;
  }
}

// (c) The documented effect of the broadening at a degeneracy: for L = Re⟨W, U·S·Vh⟩
// (= Re⟨W, A⟩, exact gradient W) the rule drops U·Δ·Vh, Δ = ½(X + Xᴴ) on the degenerate
// pair's off-diagonal entries, X = Uᴴ·W·V (Note [SVD broadening]); with the pair split
// by 1e-2 (well above √η·s_max) the gradient is W again.
TEST_P(AdSvd, BroadeningDropsOnlyTheDegenerateHermitianTerm) {
  HeldSession s = backend().open_session();
  const DType dt = GetParam();
  std::mt19937_64 rng(41);
  const Tensor w = rand_in(rng, {4, 4}, dt, -1, 1);
  const Loss f = [w](ad::Context& c, const ad::EagerTensor& x) {
    const ad::SvdTriple r = ad::svd(c, x);
    return ad::real(c, ad::sum(c, ad::mul(c, ad::conj(c, ad::EagerTensor(w)), svd_cases::reconstruct(c, r.U, r.S, r.Vh))));
  };
  const Tensor degenerate = with_singular_values(s, {2, 1, 1, 0.5}, dt, 42);
  const Tensor g = grad_of(s, f, degenerate);
  ASSERT_TRUE(all_finite(s, g));
  EXPECT_LT(max_abs_diff(s, fd_grad(s, f, degenerate), w), 1e-7) << "central differences see the exact gradient W";
  const SvdResult r = tenferro::svd(s, degenerate);
  const std::vector<c128> u = host(s, r.U), vh = host(s, r.Vh), wh = host(s, w);
  const std::vector<c128> x = hmm(hmm(u, wh, 4, 4, 4, true, false), vh, 4, 4, 4, false, true);  // Uᴴ·W·V
  std::vector<c128> delta(16);
  delta[1 + 2 * 4] = 0.5 * (x[1 + 2 * 4] + std::conj(x[2 + 1 * 4]));
  delta[2 + 1 * 4] = std::conj(delta[1 + 2 * 4]);
  const std::vector<c128> dropped = hmm(hmm(u, delta, 4, 4, 4), vh, 4, 4, 4);
  EXPECT_GT(max_abs(s, from_host(dropped, {4, 4}, DType::c128)), 1e-2) << "the test must exercise the dropped term";
  EXPECT_LT(max_abs_diff(s, tenferro::add(s, g, from_host(dropped, {4, 4}, dt)), w), 1e-10);
  const Tensor split = with_singular_values(s, {2, 1.01, 1, 0.5}, dt, 42);
  EXPECT_LT(max_abs_diff(s, grad_of(s, f, split), w), 1e-6);
}

// Rank-deficient A (rank 2 of 4): S-only losses and the non-degenerate top triplet stay
// finite; Σ s_i² has gradient 2A; Σ s_i through svdvals gives U·Vh (a subgradient with
// Re⟨∇, A⟩ = Σ s_i, as the nuclear norm is 1-homogeneous).
TEST_P(AdSvd, RankDeficientInputGivesFiniteGradients) {
  HeldSession s = backend().open_session();
  const Tensor a = with_singular_values(s, {1.5, 0.7, 0, 0}, GetParam(), 51);
  const Loss sum_sq = [](ad::Context& c, const ad::EagerTensor& x) {
    const ad::EagerTensor v = ad::svd(c, x).S;
    return ad::sum(c, ad::mul(c, v, v));
  };
  const Tensor g2 = grad_of(s, sum_sq, a);
  ASSERT_TRUE(all_finite(s, g2));
  EXPECT_LT(max_abs_diff(s, g2, tenferro::mul(s, a, 2.0)), 1e-12);
  const Loss nuclear = [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svdvals(c, x)); };
  const Tensor g1 = grad_of(s, nuclear, a);
  ASSERT_TRUE(all_finite(s, g1));
  EXPECT_NEAR(real_inner(s, g1, a), 2.2, 1e-12);
  std::mt19937_64 rng(52);
  const Tensor w = rand_in(rng, {4, 4}, GetParam(), 0.5, 1.5);
  const Loss top = [w](ad::Context& c, const ad::EagerTensor& x) {
    const ad::SvdTriple r = ad::svd(c, x);
    ad::EagerTensor b = svd_cases::reconstruct(c, ad::slice(c, r.U, {0, 0}, {4, 1}), ad::slice(c, r.S, {0}, {1}),
                                               ad::slice(c, r.Vh, {0, 0}, {1, 4}));
    return ad::norm_squared(c, ad::mul(c, b, w));
  };
  const Tensor gt = grad_of(s, top, a);
  ASSERT_TRUE(all_finite(s, gt));
  EXPECT_LT(rel_err(s, gt, fd_grad(s, top, a)), 1e-7);
}

// The complex gauge term (i·Im diag/(2s)) is exercised only by phase-dependent outputs:
// their JVP and VJP must still be adjoint (the dot-product test), though no central
// difference defines them.
TEST(AdSvdGauge, PhaseDependentOutputsKeepJvpAndVjpAdjoint) {
  HeldSession s = backend().open_session();
  for (const Shape& shape : {Shape{4, 3}, Shape{3, 5}, Shape{3, 3, 2}}) {
    std::mt19937_64 rng(61);
    const std::vector<Tensor> xs{rand_in(rng, shape, DType::c128, -1, 1)};
    const ad::MultiFn f = [](ad::Context& c, std::span<const ad::EagerTensor> x) {
      const ad::SvdTriple r = ad::svd(c, x[0]);
      return std::vector<ad::EagerTensor>{r.U, r.S, r.Vh};
    };
    EXPECT_LT(check_derivatives(s, f, xs, 62).dot_jvp, 1e-12) << shape.to_string();
  }
}

TEST(AdSvdModes, FullModeWithUnequalSidesThrowsWhenDifferentiated) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(71);
  const Tensor a = rand_in(rng, {4, 3}, DType::f64, -1, 1);
  ad::Context c(s);
  EXPECT_THROW((void)ad::svd(c, c.leaf(a), SvdMode::full), UnsupportedAdRule);
  const ad::SvdTriple plain = ad::svd(c, ad::EagerTensor(a), SvdMode::full);  // not differentiated: fine
  EXPECT_EQ(plain.U.value().extent(1), 4);
  EXPECT_FALSE(plain.U.requires_grad());
  const ad::SvdTriple vals = ad::svd(c, c.leaf(a), SvdMode::values);
  EXPECT_FALSE(vals.U.value().defined());
  EXPECT_TRUE(vals.S.requires_grad());
}

TEST(AdSvdModes, EmptyMatricesGiveEmptyGradients) {
  HeldSession s = backend().open_session();
  for (const Shape& shape : {Shape{0, 3}, Shape{3, 0}, Shape{2, 2, 0}}) {
    const Tensor a = Tensor::zeros(shape.span(), DType::f64);
    const Loss thin = [](ad::Context& c, const ad::EagerTensor& x) {
      const ad::SvdTriple r = ad::svd(c, x);
      return ad::add(c, ad::sum(c, r.S), ad::sum(c, r.U));
    };
    const Loss vals = [](ad::Context& c, const ad::EagerTensor& x) { return ad::sum(c, ad::svdvals(c, x)); };
    for (const Loss& f : {thin, vals}) {
      const Tensor g = grad_of(s, f, a);
      EXPECT_EQ(g.shape(), a.shape()) << shape.to_string();
    }
  }
}

// All singular values zero: ε falls back to the dtype's smallest normal (no 0/0).
TEST(AdSvdModes, ZeroMatrixGivesFiniteGradients) {
  HeldSession s = backend().open_session();
  for (DType dt : {DType::f64, DType::c128}) {
    const Tensor a = Tensor::zeros({3, 4}, dt);
    const Loss f = [](ad::Context& c, const ad::EagerTensor& x) {
      const ad::SvdTriple r = ad::svd(c, x);
      return ad::add(c, ad::sum(c, ad::mul(c, r.S, r.S)), ad::sum(c, svd_cases::abs2(c, r.U)));
    };
    const Tensor g = grad_of(s, f, a);
    EXPECT_TRUE(all_finite(s, g));
    EXPECT_LT(max_abs(s, g), 1e-300);  // Σ s² has gradient 2A = 0; Σ |U|² is constant
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AdSvd, ::testing::Values(DType::f64, DType::c128),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
