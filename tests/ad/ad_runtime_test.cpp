// The eager runtime: recording rules, accumulation, no_grad, detach, the second-backward
// policy, functional forms (no mutation), typed errors, the complex convention, prod with
// zeros, max ties, and AD through a 6-site MPS norm computed with einsum.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ad/ad_check.hpp"
#include "support/expect_error.hpp"

using namespace tenferro;
using tenferro::testing::expect_error;
using tenferro::testing::max_abs_diff;
using tenferro::testing::rand_in;
using tenferro::testing::real_inner;

namespace {

CpuBackend& backend() { return tenferro::testing::ad_backend(); }

/// Elementwise host map over a compact f64/c128 tensor (reference values).
template <class V, class F> Tensor map_ref(const Tensor& x, F f) {
  Tensor r = Tensor::empty(x.shape().span(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) r.mutable_data_ptr<V>()[i] = f(x.data_ptr<V>()[i]);
  return r;
}

TEST(AdRuntime, RecordsOnlyWhenAnInputRequiresGrad) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(1);
  const ad::EagerTensor x = ctx.leaf(rand_in(rng, {3}, DType::f64, -1, 1));
  const ad::EagerTensor c = ad::EagerTensor(rand_in(rng, {3}, DType::f64, -1, 1));
  const ad::EagerTensor k = ad::mul(ctx, c, 2.0);
  EXPECT_FALSE(k.requires_grad());
  EXPECT_EQ(ctx.tape_size(), 0u);
  const ad::EagerTensor y = ad::mul(ctx, x, c);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(ctx.tape_size(), 1u);
  // Integer outputs never record.
  const ad::EagerTensor am = ad::argmax(ctx, y, std::span<const std::int64_t>(), false);
  EXPECT_FALSE(am.requires_grad());
  EXPECT_EQ(ctx.tape_size(), 1u);
}

TEST(AdRuntime, GradientsAccumulateUntilCleared) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(2);
  const Tensor xv = rand_in(rng, {2, 3}, DType::f64, -1, 1);
  const ad::EagerTensor x = ctx.leaf(xv);
  // loss = Σ (3x + x²): x is used three times in one graph; dL/dx = 3 + 2x.
  auto loss = [&] { return ad::sum(ctx, ad::add(ctx, ad::mul(ctx, x, 3.0), ad::mul(ctx, x, x))); };
  const Tensor expect1 = map_ref<double>(xv, [](double v) { return 3 + 2 * v; });
  ctx.backward(loss());
  EXPECT_LT(max_abs_diff(s, x.grad(), expect1), 1e-14);
  ctx.backward(loss());  // a second graph: accumulates
  const Tensor expect2 = map_ref<double>(xv, [](double v) { return 2 * (3 + 2 * v); });
  EXPECT_LT(max_abs_diff(s, x.grad(), expect2), 1e-14);
  ctx.zero_grad();
  EXPECT_FALSE(x.grad().defined());
  ctx.backward(loss());
  EXPECT_LT(max_abs_diff(s, x.grad(), expect1), 1e-14);
}

TEST(AdRuntime, NoGradAndDetach) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(3);
  const Tensor xv = rand_in(rng, {4}, DType::f64, -1, 1);
  const ad::EagerTensor x = ctx.leaf(xv);
  {
    ad::NoGradGuard ng(ctx);
    EXPECT_FALSE(ctx.grad_enabled());
    const ad::EagerTensor y = ad::exp(ctx, x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(ctx.tape_size(), 0u);
    expect_error<ArgumentError>([&] { ctx.backward(ad::sum(ctx, y)); }, "backward");
  }
  EXPECT_TRUE(ctx.grad_enabled());
  // Σ x·detach(x): only the first factor is differentiated, so the gradient is x.
  ctx.backward(ad::sum(ctx, ad::mul(ctx, x, ad::detach(x))));
  EXPECT_LT(max_abs_diff(s, x.grad(), xv), 1e-15);
  EXPECT_FALSE(ad::detach(x).requires_grad());
}

TEST(AdRuntime, SecondBackwardFreesOrRetainsTheGraph) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(4);
  const Tensor xv = rand_in(rng, {3}, DType::f64, -1, 1);
  const ad::EagerTensor x = ctx.leaf(xv);
  const Tensor expect = map_ref<double>(xv, [](double v) { return std::cos(v); });
  {
    const ad::EagerTensor h = ad::sin(ctx, x);
    const ad::EagerTensor loss = ad::sum(ctx, h);
    ctx.backward(loss);  // default: the tape is freed
    EXPECT_EQ(ctx.tape_size(), 0u);
    EXPECT_LT(max_abs_diff(s, x.grad(), expect), 1e-15);
    expect_error<RuntimeStateError>([&] { ctx.backward(loss); }, "backward");
    expect_error<RuntimeStateError>([&] { (void)ad::exp(ctx, h); }, "exp");
    // The gradient is untouched by the refused calls; detach() makes the value usable.
    EXPECT_LT(max_abs_diff(s, x.grad(), expect), 1e-15);
    EXPECT_FALSE(ad::exp(ctx, ad::detach(h)).requires_grad());
  }
  ctx.zero_grad();
  {
    const ad::EagerTensor loss = ad::sum(ctx, ad::sin(ctx, x));
    ctx.backward(loss, ad::BackwardOptions{.retain_graph = true});
    EXPECT_EQ(ctx.tape_size(), 2u);
    ctx.backward(loss);  // retained: runs again and accumulates, then frees
    const Tensor twice = map_ref<double>(xv, [](double v) { return 2 * std::cos(v); });
    EXPECT_LT(max_abs_diff(s, x.grad(), twice), 1e-15);
    EXPECT_EQ(ctx.tape_size(), 0u);
  }
}

// Note [In-place cotangents]: rules may scale a node's owned cotangent in place. The
// gradients must stay exact when a value feeds several consumers (its cotangent is
// accumulated, then reused), with complex scalars, and across a retained second backward.
TEST(AdRuntime, InPlaceCotangentsKeepGradientsExact) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(6);
  for (DType d : {DType::f64, DType::c128}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor xv = rand_in(rng, {4, 4}, d, -1, 1);
    const ad::EagerTensor x = ctx.leaf(xv);
    const c128 k(0.75, d == DType::c128 ? -0.5 : 0.0);
    const Scalar ks = d == DType::c128 ? Scalar(k) : Scalar(k.real());
    // y = (k·x + 0.5)·1.5 - 2; z = y·3 + y·y (y used three times); L = Re Σ z.
    auto loss = [&] {
      ad::EagerTensor y = ad::sub(ctx, ad::mul(ctx, ad::add(ctx, ad::mul(ctx, ks, x), 0.5), 1.5), 2.0);
      ad::EagerTensor z = ad::add(ctx, ad::mul(ctx, y, 3.0), ad::mul(ctx, y, y));
      return d == DType::c128 ? ad::sum(ctx, ad::real(ctx, z)) : ad::sum(ctx, z);
    };
    // dL/dy = 3 + 2y (holomorphic z(y): gradient conj(3 + 2y)); dy/dx = 1.5k.
    const Tensor y = tenferro::sub(s, tenferro::mul(s, tenferro::add(s, tenferro::mul(s, ks, xv), 0.5), 1.5), 2.0);
    Tensor want = tenferro::mul(s, tenferro::add(s, tenferro::mul(s, y, 2.0), 3.0), ks);
    want = tenferro::mul(s, want, 1.5);
    if (d == DType::c128) want = tenferro::conj(s, want);
    ctx.backward(loss());
    EXPECT_LT(max_abs_diff(s, x.grad(), want), 1e-13);
    const ad::EagerTensor l2 = loss();
    ctx.zero_grad();
    ctx.backward(l2, ad::BackwardOptions{.retain_graph = true});
    ctx.backward(l2);
    EXPECT_LT(max_abs_diff(s, x.grad(), tenferro::mul(s, want, 2.0)), 1e-13);
    ctx.zero_grad();
  }
}

TEST(AdRuntime, ExplicitCotangentAndLossErrors) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(5);
  const Tensor xv = rand_in(rng, {2, 2}, DType::f64, -1, 1);
  const Tensor v = rand_in(rng, {2, 2}, DType::f64, -1, 1);
  const ad::EagerTensor x = ctx.leaf(xv);
  const ad::EagerTensor y = ad::mul(ctx, x, x);
  expect_error<ShapeError>([&] { ctx.backward(y); }, "backward");
  expect_error<ShapeError>([&] { ctx.backward(y, Tensor::ones({3}, DType::f64)); }, "backward");
  ctx.backward(y, v);  // x̄ = 2·x·v
  Tensor expect = Tensor::empty({2, 2}, DType::f64);
  for (int i = 0; i < 4; ++i) expect.mutable_data_ptr<double>()[i] = 2 * xv.data_ptr<double>()[i] * v.data_ptr<double>()[i];
  EXPECT_LT(max_abs_diff(s, x.grad(), expect), 1e-15);
  const ad::EagerTensor z = ctx.leaf(rand_in(rng, {}, DType::c128, -1, 1));
  expect_error<DTypeError>([&] { ctx.backward(ad::mul(ctx, z, z)); }, "backward");
  expect_error<DTypeError>([&] { (void)ctx.leaf(Tensor::zeros({2}, DType::i64)); }, "leaf");
  expect_error<ArgumentError>([&] { (void)ad::EagerTensor(xv).grad(); }, "grad");
  ad::Context other(s);
  expect_error<ArgumentError>([&] { (void)ad::mul(other, x, 2.0); }, "mul");
}

TEST(AdRuntime, FunctionalFormsMutateNothing) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  std::mt19937_64 rng(6);
  const Tensor xv = rand_in(rng, {3}, DType::f64, -1, 1), wv = rand_in(rng, {3}, DType::f64, -1, 1);
  const ad::EagerTensor x = ctx.leaf(xv);
  ctx.backward(ad::sum(ctx, ad::mul(ctx, x, 2.0)));
  const Tensor before = tenferro::to_contiguous(s, tenferro::mul(s, x.grad(), 1.0));
  const ad::ScalarFn f = [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return ad::sum(c, ad::mul(c, ad::exp(c, in[0]), in[1]));
  };
  const std::vector<Tensor> g = ad::grad(s, f, {xv, wv});
  ASSERT_EQ(g.size(), 2u);
  Tensor gx = Tensor::empty({3}, DType::f64), gw = Tensor::empty({3}, DType::f64);
  for (int i = 0; i < 3; ++i) {
    gx.mutable_data_ptr<double>()[i] = std::exp(xv.data_ptr<double>()[i]) * wv.data_ptr<double>()[i];
    gw.mutable_data_ptr<double>()[i] = std::exp(xv.data_ptr<double>()[i]);
  }
  EXPECT_LT(max_abs_diff(s, g[0], gx), 1e-14);
  EXPECT_LT(max_abs_diff(s, g[1], gw), 1e-14);
  EXPECT_LT(max_abs_diff(s, x.grad(), before), 0.0 + 1e-300);
  EXPECT_EQ(ctx.tape_size(), 0u);
  // An input f ignores gets a zero gradient.
  const ad::ScalarFn only_first = [](ad::Context& c, std::span<const ad::EagerTensor> in) { return ad::sum(c, in[0]); };
  const std::vector<Tensor> g2 = ad::grad(s, only_first, {xv, wv});
  EXPECT_EQ(tenferro::testing::max_abs(s, g2[1]), 0.0);
  expect_error<ArgumentError>([&] { (void)ad::jvp(s, [](ad::Context&, std::span<const ad::EagerTensor> in) { return std::vector<ad::EagerTensor>(in.begin(), in.end()); }, {xv}, {}); }, "jvp");
}

TEST(AdRuntime, ScopedSessionRunsForwardAndBackwardInOneEntry) {
  // Any further session entry inside would throw SessionEntryError(Reentered).
  backend().with_session([](Session& s) {
    ad::Context ctx(s);
    std::mt19937_64 rng(7);
    const ad::EagerTensor a = ctx.leaf(rand_in(rng, {3, 3}, DType::f64, -1, 1));
    const ad::EagerTensor b = ctx.leaf(rand_in(rng, {3, 3}, DType::f64, -1, 1));
    ctx.backward(ad::sum(ctx, ad::einsum(ctx, "ij,jk->ik", {ad::matmul(ctx, a, b), b})));
    EXPECT_TRUE(a.grad().defined());
    EXPECT_TRUE(b.grad().defined());
  });
}

TEST(AdRuntime, UnsupportedRulesThrowTyped) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(Tensor::ones({4}, DType::f64));
  const ad::EagerTensor u = ctx.leaf(Tensor::ones({1, 1}, DType::f64));
  ScatterDims d;  // one window of extent 1 at operand index 2
  d.update_window_dims = {1};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  const Tensor idx = Tensor::from_data<std::int64_t>({1, 1}, {2});
  expect_error<UnsupportedAdRule>([&] { (void)ad::scatter(ctx, x, idx, u, d, ScatterCombiner::mul); }, "scatter");
  expect_error<UnsupportedAdRule>([&] { (void)ad::einsum(ctx, "i...->i", {x}); }, "einsum");
  // Without anything to differentiate the same call is a plain op.
  EXPECT_NO_THROW((void)ad::scatter(ctx, ad::detach(x), idx, ad::detach(u), d, ScatterCombiner::mul));
}

// Note [Complex convention]: PyTorch's (gradient = ∂L/∂x + i ∂L/∂y).
TEST(AdComplex, AbsSquaredGivesTwoZ) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(8);
  const Tensor z = rand_in(rng, {5}, DType::c128, -1, 1);
  const auto g = ad::grad(s, [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return ad::sum(c, ad::real(c, ad::mul(c, in[0], ad::conj(c, in[0]))));
  }, {z});
  EXPECT_LT(max_abs_diff(s, g[0], map_ref<c128>(z, [](c128 v) { return 2.0 * v; })), 1e-14);
  // The same through abs: |z|² = abs(z)².
  const auto g2 = ad::grad(s, [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return ad::sum(c, ad::pow(c, ad::abs(c, in[0]), 2.0));
  }, {z});
  EXPECT_LT(max_abs_diff(s, g2[0], map_ref<c128>(z, [](c128 v) { return 2.0 * v; })), 1e-14);
}

TEST(AdComplex, RealOfZTimesConjW) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(9);
  const Tensor z = rand_in(rng, {4}, DType::c128, -1, 1), w = rand_in(rng, {4}, DType::c128, -1, 1);
  // L = Σ Re(z·conj(w)) = Σ (xz·xw + yz·yw): ∂L/∂z = w, ∂L/∂w = z in this convention
  // (JAX would return conj(w) and conj(z)).
  const auto g = ad::grad(s, [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return ad::sum(c, ad::real(c, ad::mul(c, in[0], ad::conj(c, in[1]))));
  }, {z, w});
  EXPECT_LT(max_abs_diff(s, g[0], w), 1e-15);
  EXPECT_LT(max_abs_diff(s, g[1], z), 1e-15);
}

TEST(AdComplex, HolomorphicSquare) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(10);
  const Tensor z = rand_in(rng, {4}, DType::c128, -1, 1), u = rand_in(rng, {4}, DType::c128, -1, 1);
  const ad::MultiFn f = [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return std::vector<ad::EagerTensor>{ad::mul(c, in[0], in[0])};
  };
  // jvp(u) = f'(z)·u = 2zu; vjp(v) = conj(f'(z))·v = 2·conj(z)·v.
  const auto j = ad::jvp(s, f, {z}, {u});
  Tensor expect_j = Tensor::empty({4}, DType::c128), expect_v = Tensor::empty({4}, DType::c128);
  for (int i = 0; i < 4; ++i) {
    expect_j.mutable_data_ptr<c128>()[i] = 2.0 * z.data_ptr<c128>()[i] * u.data_ptr<c128>()[i];
    expect_v.mutable_data_ptr<c128>()[i] = 2.0 * std::conj(z.data_ptr<c128>()[i]) * u.data_ptr<c128>()[i];
  }
  EXPECT_LT(max_abs_diff(s, j.tangents[0], expect_j), 1e-14);
  const auto v = ad::vjp(s, f, {z}, {u});
  EXPECT_LT(max_abs_diff(s, v.cotangents[0], expect_v), 1e-14);
}

TEST(AdReductions, ProdWithZerosMatchesProductsOfOthers) {
  HeldSession s = backend().open_session();
  // Rows with no zero, one zero and two zeros (prod over axis 1).
  const Tensor x = Tensor::from_row_major<double>({3, 4}, {1.5, 2, -3, 0.5, 2, 0, 3, -1, 0, 4, 0, 2});
  const auto g = ad::grad(s, [](ad::Context& c, std::span<const ad::EagerTensor> in) {
    return ad::sum(c, ad::prod(c, in[0], {1}));
  }, {x});
  Tensor ref = Tensor::empty({3, 4}, DType::f64);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double p = 1;
      for (int k = 0; k < 4; ++k)
        if (k != j) p *= x.item<double>({i, k});
      ref.set<double>({i, j}, p);
    }
  EXPECT_LT(max_abs_diff(s, g[0], ref), 1e-15);
}

TEST(AdReductions, MaxTiesSplitTheCotangentEqually) {
  HeldSession s = backend().open_session();
  const Tensor x = Tensor::from_data<double>({6}, {1, 3, 3, 2, 3, -1});
  const auto g = ad::grad(s, [](ad::Context& c, std::span<const ad::EagerTensor> in) { return ad::max(c, in[0]); }, {x});
  int ties = 0;
  for (int i = 0; i < 6; ++i) ties += x.item<double>({i}) == 3 ? 1 : 0;
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(g[0].item<double>({i}), x.item<double>({i}) == 3 ? 1.0 / ties : 0.0);
}

// A 6-site open-boundary MPS (physical dimension 2, bond dimension 3, complex):
// N = <ψ|ψ> = einsum over the ket tensors and their conjugates. The gradient with respect
// to each site tensor is checked against central differences along random directions
// (Re<∇N, u> = dN/dt of N(A + t·u)) and element by element on one site.
TEST(AdEinsum, SixSiteMpsNormGradient) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(11);
  const int d = 2, chi = 3;
  std::vector<Tensor> sites;
  sites.push_back(rand_in(rng, {d, chi}, DType::c128, -1, 1));
  for (int k = 0; k < 4; ++k) sites.push_back(rand_in(rng, {chi, d, chi}, DType::c128, -1, 1));
  sites.push_back(rand_in(rng, {chi, d}, DType::c128, -1, 1));
  const ad::ScalarFn norm = [](ad::Context& c, std::span<const ad::EagerTensor> a) {
    std::vector<ad::EagerTensor> ops(a.begin(), a.end());
    for (const auto& t : a) ops.push_back(ad::conj(c, t));
    return ad::real(c, ad::einsum(c, "pa,aqb,brc,csd,dte,eu,pA,AqB,BrC,CsD,DtE,Eu->", ops));
  };
  auto value = [&](const std::vector<Tensor>& xs) {
    ad::Context c(s);
    std::vector<ad::EagerTensor> in(xs.begin(), xs.end());
    return norm(c, in).value().item<double>();
  };
  const std::vector<Tensor> g = ad::grad(s, norm, sites);
  ASSERT_EQ(g.size(), 6u);
  const double h = 1e-6;
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Tensor> up, um, dirs;
    double lhs = 0;
    for (std::size_t k = 0; k < sites.size(); ++k) {
      dirs.push_back(rand_in(rng, sites[k].shape(), DType::c128, -1, 1));
      up.push_back(tenferro::testing::shifted(s, sites[k], dirs[k], h));
      um.push_back(tenferro::testing::shifted(s, sites[k], dirs[k], -h));
      lhs += real_inner(s, g[k], dirs[k]);
    }
    const double fd = (value(up) - value(um)) / (2 * h);
    EXPECT_NEAR(lhs, fd, 1e-6 * std::max(1.0, std::abs(fd)));
  }
  // Element by element on the middle site: ∂N/∂Re + i ∂N/∂Im.
  const int k = 2;
  for (std::int64_t e = 0; e < sites[k].numel(); ++e) {
    c128 fd_grad{};
    for (int part = 0; part < 2; ++part) {
      std::vector<Tensor> up(sites), um(sites);
      up[k] = tenferro::to_contiguous(s, tenferro::mul(s, sites[k], 1.0));
      um[k] = tenferro::to_contiguous(s, tenferro::mul(s, sites[k], 1.0));
      const c128 step = part == 0 ? c128(h, 0) : c128(0, h);
      up[k].mutable_data_ptr<c128>()[e] += step;
      um[k].mutable_data_ptr<c128>()[e] -= step;
      const double dv = (value(up) - value(um)) / (2 * h);
      fd_grad += part == 0 ? c128(dv, 0) : c128(0, dv);
    }
    const c128 ad_grad = tenferro::to_contiguous(s, g[k]).data_ptr<c128>()[e];
    EXPECT_LT(std::abs(ad_grad - fd_grad), 1e-6 * std::max(1.0, std::abs(fd_grad))) << "element " << e;
  }
}

}  // namespace

namespace {
// Bad input to a differentiable op throws the plain op's typed error, and nothing is
// recorded (the tape and the leaves are untouched).
TEST(AdRuntime, BadInputRecordsNothing) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor a = ctx.leaf(Tensor::ones({2, 3}, DType::f64));
  const ad::EagerTensor b = ctx.leaf(Tensor::ones({4}, DType::f64));
  const ad::EagerTensor y = ad::mul(ctx, a, 2.0);
  ASSERT_EQ(ctx.tape_size(), 1u);
  expect_error<ShapeError>([&] { (void)ad::add(ctx, a, b); }, "add");
  expect_error<AxisError>([&] { (void)ad::sum(ctx, a, {5}); }, "sum");
  expect_error<RankError>([&] { (void)ad::transpose(ctx, a, {0}); }, "transpose");
  expect_error<ShapeError>([&] { (void)ad::einsum(ctx, "ij,jk->ik", {a, a}); }, "einsum");
  expect_error<ShapeError>([&] { ctx.backward(y, Tensor::ones({3, 2}, DType::f64)); }, "backward");
  EXPECT_EQ(ctx.tape_size(), 1u);
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}
}  // namespace

namespace {

// Note [Context lifetime]: eager tensors outliving their context throw typed errors.
TEST(AdRuntime, TensorsOutlivingTheirContextThrowTypedErrors) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(9);
  const Tensor v = rand_in(rng, {3}, DType::f64, -1, 1);
  ad::EagerTensor x, y;
  Tensor kept;
  {
    ad::Context ctx(s);
    x = ctx.leaf(v);
    y = ad::mul(ctx, x, 2.0);
    ctx.backward(ad::sum(ctx, y), {.retain_graph = true});
    kept = x.grad();
    EXPECT_TRUE(x.context_alive() && y.context_alive());
  }
  EXPECT_FALSE(x.context_alive());
  EXPECT_FALSE(y.context_alive());
  expect_error<RuntimeStateError>([&] { (void)(y + 1.0); }, "add");
  expect_error<RuntimeStateError>([&] { (void)(x * y); }, "mul");
  expect_error<RuntimeStateError>([&] { (void)(-y); }, "neg");
  expect_error<RuntimeStateError>([&] { (void)x.grad(); }, "grad");
  // The values stay valid, and the gradient copied while the context lived is intact.
  EXPECT_LE(max_abs_diff(s, y.value(), mul(s, v, 2.0)), 0.0);
  EXPECT_LE(max_abs_diff(s, kept, Tensor::full({3}, Scalar(2.0), DType::f64)), 0.0);
  // A later context, possibly at the same address, refuses them: a tape output is
  // foreign (ArgumentError) or, at the same address, stale (RuntimeStateError); a leaf is
  // foreign either way.
  ad::Context ctx2(s);
  const auto refused = [](auto&& f, const char* op) {
    try {
      f();
      ADD_FAILURE() << op << " accepted a tensor of a destroyed context";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    } catch (const RuntimeStateError& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
  };
  refused([&] { (void)ad::add(ctx2, y, 1.0); }, "add");
  refused([&] { ctx2.backward(y, Tensor::ones({3}, DType::f64)); }, "backward");
  expect_error<ArgumentError>([&] { (void)ad::add(ctx2, x, 1.0); }, "add");
  expect_error<ArgumentError>([&] { ctx2.backward(x, Tensor::ones({3}, DType::f64)); }, "backward");
  const ad::EagerTensor z = ad::add(ctx2, ad::detach(y), 1.0);  // detached: a constant
  EXPECT_FALSE(z.requires_grad());
}

}  // namespace

namespace {

// Issue 14's eager-AD findings that the rules fix (pow at 0, max over NaN, det at a
// singular matrix, a complex cotangent for a real output).
TEST(AdEdgeCases, PowWithZeroExponentAtZeroHasZeroGradient) {
  HeldSession s = backend().open_session();
  const Tensor v = Tensor::from_data<double>({3}, {0.0, 2.0, -1.5});
  {  // scalar exponent 0: a^0 = 1 is constant
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(v);
    ctx.backward(ad::sum(ctx, ad::pow(ctx, x, 0.0)));
    EXPECT_LE(max_abs_diff(s, x.grad(), Tensor::zeros({3}, DType::f64)), 0.0);
  }
  {  // tensor exponent with a zero entry at base 0; the exponent's gradient at base 0
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(v);
    const ad::EagerTensor p = ctx.leaf(Tensor::from_data<double>({3}, {0.0, 2.0, 3.0}));
    ctx.backward(ad::sum(ctx, ad::pow(ctx, x, p)));
    const Tensor gx = x.grad(), gp = p.grad();
    EXPECT_EQ(gx.item<double>({0}), 0.0);                       // 0·0^(−1) → 0
    EXPECT_NEAR(gx.item<double>({1}), 2.0 * 2.0, 1e-12);       // 2·x
    EXPECT_NEAR(gx.item<double>({2}), 3.0 * 2.25, 1e-12);      // 3·x²
    EXPECT_EQ(gp.item<double>({0}), 0.0);                       // y·log 0 with y = 0^0... masked
    EXPECT_NEAR(gp.item<double>({1}), 4.0 * std::log(2.0), 1e-12);
  }
}

TEST(AdEdgeCases, MaxOverNaNPutsTheCotangentOnTheNaN) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(Tensor::from_data<double>({2, 3}, {1.0, 5.0, std::nan(""), 2.0, 7.0, 4.0}));
  // column-major [2, 3]: column 1 is {nan, 2}, max over axis 0 → {5, nan, 7}
  ctx.backward(ad::sum(ctx, ad::max(ctx, x, {0}, false)));
  const Tensor g = x.grad();
  EXPECT_EQ(g.item<double>({1, 0}), 1.0);  // 5
  EXPECT_EQ(g.item<double>({0, 1}), 1.0);  // the NaN
  EXPECT_EQ(g.item<double>({1, 1}), 0.0);
  EXPECT_EQ(g.item<double>({0, 2}), 1.0);  // 7
  EXPECT_EQ(g.item<double>({0, 0}) + g.item<double>({1, 2}), 0.0);
}

TEST(AdEdgeCases, DetGradientAtASingularMatrixIsTheAdjugate) {
  HeldSession s = backend().open_session();
  // Rank 1: det = 0, adj(A)ᵀ = [[4, −2], [−2, 1]] for A = [[1, 2], [2, 4]].
  ad::Context ctx(s);
  const ad::EagerTensor a = ctx.leaf(Tensor::from_row_major<double>({2, 2}, {1, 2, 2, 4}));
  ctx.backward(ad::det(ctx, a));
  EXPECT_LE(max_abs_diff(s, a.grad(), Tensor::from_row_major<double>({2, 2}, {4, -2, -2, 1})), 1e-12);
  // Rank N − 2 (zero gradient) and a batched complex case against det(A)·A⁻ᴴ.
  ad::Context ctx2(s);
  const ad::EagerTensor z = ctx2.leaf(Tensor::zeros({3, 3}, DType::f64));
  ctx2.backward(ad::det(ctx2, z));
  EXPECT_LE(max_abs_diff(s, z.grad(), Tensor::zeros({3, 3}, DType::f64)), 0.0);
  std::mt19937_64 rng(5);
  const Tensor c = rand_in(rng, {3, 3, 2}, DType::c128, -1, 1);
  ad::Context ctx3(s);
  const ad::EagerTensor cz = ctx3.leaf(c);
  const Tensor cot = rand_in(rng, {2}, DType::c128, -1, 1);
  ctx3.backward(ad::det(ctx3, cz), cot);
  // Ā = ȳ·conj(det A)·A⁻ᴴ per batch.
  const Tensor inv_h = conj(s, transpose(s, inv(s, c), {1, 0, 2}));
  const Tensor w = reshape(s, mul(s, cot, conj(s, det(s, c))), {1, 1, 2});
  EXPECT_LE(max_abs_diff(s, cz.grad(), mul(s, inv_h, w)), 1e-10);
}

TEST(AdEdgeCases, ComplexCotangentForARealOutputIsRefused) {
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(Tensor::ones({2}, DType::f64));
  const ad::EagerTensor y = ad::mul(ctx, x, 3.0);
  expect_error<DTypeError>([&] { ctx.backward(y, Tensor::ones({2}, DType::c128)); }, "backward");
  EXPECT_EQ(ctx.tape_size(), 1u);  // nothing consumed: a real cotangent still works
  ctx.backward(y, Tensor::ones({2}, DType::f64));
  EXPECT_EQ(x.grad().item<double>({0}), 3.0);
}

// Note [Failed backward]: a rule that throws midway (slogdet's at a singular matrix runs
// after the y branch has produced y's gradient) writes no gradient and keeps the tape,
// with or without retain_graph; the same backward then runs again (here: still failing,
// and after the failing branch is cut off by a second output's retry without it).
TEST(AdRuntime, FailedBackwardWritesNothingAndKeepsTheTape) {
  HeldSession s = backend().open_session();
  for (const bool retain : {false, true}) {
    ad::Context ctx(s);
    const ad::EagerTensor a = ctx.leaf(Tensor::from_row_major<double>({2, 2}, {1, 2, 2, 4}));  // singular
    const ad::EagerTensor y = ctx.leaf(Tensor::from_row_major<double>({2}, {1.5, -2}));
    // A gradient from an earlier pass, which a failed pass must leave as it is.
    ctx.backward(ad::sum(ctx, ad::mul(ctx, y, 10.0)));
    const Tensor before = tenferro::to_contiguous(s, y.grad());
    const ad::EagerTensor logdet = ad::slogdet(ctx, a).logabsdet;  // -inf; recorded first
    const ad::EagerTensor sq = ad::sum(ctx, ad::mul(ctx, y, y));
    const ad::EagerTensor loss = ad::add(ctx, logdet, sq);
    const std::size_t nodes = ctx.tape_size();
    const ad::BackwardOptions o{.retain_graph = retain};
    for (int attempt = 0; attempt < 2; ++attempt) {
      expect_error<NumericalError>([&] { ctx.backward(loss, o); }, "slogdet");
      EXPECT_EQ(ctx.tape_size(), nodes);
      EXPECT_EQ(max_abs_diff(s, y.grad(), before), 0.0);
      EXPECT_FALSE(a.grad().defined());  // never written
    }
    // The kept tape still serves a backward that avoids the failing rule.
    ctx.backward(sq, o);
    EXPECT_EQ(max_abs_diff(s, y.grad(), Tensor::from_row_major<double>({2}, {13, 6})), 0.0);
    EXPECT_EQ(ctx.tape_size(), retain ? nodes : 0u);
  }
}

// Note [Errors inside rules]: an op a rule runs (slogdet's VJP and JVP invert the
// matrix) fails under the differentiated op's name, with the class, info and the inner
// message kept.
TEST(AdRuntime, ErrorsInsideRulesNameTheDifferentiatedOp) {
  HeldSession s = backend().open_session();
  const Tensor singular = Tensor::from_row_major<double>({2, 2}, {1, 2, 2, 4});
  {
    ad::Context ctx(s);
    const ad::EagerTensor a = ctx.leaf(singular);
    const ad::EagerTensor logdet = ad::slogdet(ctx, a).logabsdet;
    try {
      ctx.backward(logdet);
      ADD_FAILURE() << "backward at a singular matrix did not throw";
    } catch (const NumericalError& e) {
      EXPECT_EQ(e.op(), "slogdet");
      EXPECT_THAT(std::string(e.what()), ::testing::StartsWith("slogdet: VJP: inv: "));
      EXPECT_NE(e.info(), 0);
    }
  }
  {
    ad::Context ctx(s);
    const ad::EagerTensor a = ctx.with_tangent(singular, Tensor::ones({2, 2}, DType::f64));
    const std::string what = expect_error<NumericalError>([&] { (void)ad::slogdet(ctx, a); }, "slogdet");
    EXPECT_THAT(what, ::testing::HasSubstr("JVP: "));
    EXPECT_EQ(ctx.tape_size(), 0u);  // nothing half-recorded
  }
}

// Note [Version counters]: the library's writes count per storage block; a saved tensor
// written after recording is caught at backward, naming the op that saved it.
TEST(AdRuntime, VersionCountersCountTheLibrarysWrites) {
  HeldSession s = backend().open_session();
  const Tensor t = Tensor::zeros({2, 3}, DType::f64);
  const Tensor view = t.permute_view({1, 0});
  const std::uint32_t v0 = t.version();
  t.set<double>({0, 0}, 1.0);
  const std::uint32_t v1 = t.version();
  EXPECT_GT(v1, v0);
  copy_into(s, Tensor::ones({3, 2}, DType::f64), view);  // a view counts into its block
  const std::uint32_t v2 = t.version();
  EXPECT_GT(v2, v1);
  EXPECT_EQ(view.version(), v2);
  EXPECT_THROW(copy_into(s, Tensor::ones({4}, DType::f64), t), ShapeError);
  EXPECT_EQ(t.version(), v2);  // a refused write counts nothing
  (void)add(s, t, t);          // reads count nothing
  (void)t.item<double>({1, 1});
  EXPECT_EQ(t.version(), v2);
}

TEST(AdRuntime, SavedTensorsModifiedInPlaceAreCaughtAtBackward) {
  HeldSession s = backend().open_session();
  {  // a leaf's storage written with set() after sin saved it
    ad::Context ctx(s);
    const Tensor xv = Tensor::from_row_major<double>({2}, {0.5, 1.0});
    const ad::EagerTensor x = ctx.leaf(xv);
    const ad::EagerTensor loss = ad::sum(ctx, ad::sin(ctx, x));
    xv.set<double>({0}, 2.0);
    EXPECT_THAT(expect_error<RuntimeStateError>([&] { ctx.backward(loss); }, "backward"), ::testing::HasSubstr("that sin saved"));
    EXPECT_FALSE(x.grad().defined());  // Note [Failed backward]: nothing written
  }
  {  // an intermediate overwritten through an _into op: exp saved it as its output, sum
     // as its input; the sweep meets sum first (every saved tensor counts, also one a
     // rule reads only for its shape)
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(Tensor::from_row_major<double>({2}, {0.5, 1.0}));
    const ad::EagerTensor y = ad::exp(ctx, x);
    const ad::EagerTensor loss = ad::sum(ctx, y);
    copy_into(s, Tensor::zeros({2}, DType::f64), y.value());
    EXPECT_THAT(expect_error<RuntimeStateError>([&] { ctx.backward(loss); }, "backward"), ::testing::HasSubstr("that sum saved"));
  }
  {  // a tensor no rule saved (add's inputs) may be written: the gradient stays right
    ad::Context ctx(s);
    const Tensor xv = Tensor::from_row_major<double>({2}, {0.5, 1.0});
    const ad::EagerTensor x = ctx.leaf(xv);
    const ad::EagerTensor loss = ad::sum(ctx, ad::add(ctx, x, 1.0));
    xv.set<double>({1}, 7.0);
    ctx.backward(loss);
    EXPECT_EQ(max_abs_diff(s, x.grad(), Tensor::ones({2}, DType::f64)), 0.0);
  }
}

}  // namespace
