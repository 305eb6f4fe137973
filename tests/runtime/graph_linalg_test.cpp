// Linear algebra in traced graphs (Note [Linear algebra in graphs]): decompositions and
// solves are call nodes with several results; compiled runs equal the direct ops over
// dtypes and input layouts; their data checks raise the eager errors when the graph
// runs, with nothing written; the passes treat call nodes as a whole (CSE merges equal
// calls, DCE drops unused ones, a call with one used result keeps all); Hessian-vector
// products through svd, eigh, qr, solve and einsum match finite differences of the
// eager gradient on real and complex inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <random>

#include "support/backends.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using ad::Context;
using ad::EagerTensor;
using tenferro::testing::expect_error;
using tenferro::testing::random_layout;
using tenferro::testing::random_tensor;
using tenferro::testing::relative_error;
namespace tg = tenferro::graph;
using Fn = tg::TraceFn;

CpuBackend& backend() { return tenferro::testing::one_thread_backend(); }

std::vector<tg::ValueSpec> specs_of(std::span<const Tensor> in) {
  std::vector<tg::ValueSpec> specs;
  for (const Tensor& t : in) specs.push_back({t.shape(), t.dtype()});
  return specs;
}

/// x + 3·I (well conditioned), traced or direct.
Tensor shifted(Session& s, const Tensor& x) { return add(s, x, mul(s, Tensor::eye(x.extent(0), x.dtype()), 3.0)); }

std::vector<Tensor> lu_results(Session& s, const Tensor& a) {
  const LuResult f = lu(s, a);
  return {f.P, f.L, f.U};
}

/// Every result of the decompositions and solves, and FFTs, reading transposed and sliced views of
/// the inputs: a [4, 4] and b [4, 2].
std::vector<Tensor> linalg_program(Session& s, std::span<const Tensor> in) {
  const Tensor a = in[0], b = in[1];
  const Tensor at = a.transpose_view();
  const SvdResult f = svd(s, a.slice_view(1, 0, 3));  // [4, 3]
  const QrResult q = qr(s, at.slice_view(1, 0, 3), QrMode::reduced, true);
  const Tensor h = add(s, a, conj(s, at));  // Hermitian
  const EighResult e = eigh(s, h);
  const Tensor x = solve(s, shifted(s, a), b);
  const Tensor y = triangular_solve(s, shifted(s, at), b, {Side::left, Triangle::upper, MatOp::adjoint, false});
  const Tensor spd = shifted(s, matmul(s, a, conj(s, at)));
  const SlogdetResult ld = slogdet(s, spd);
  return {f.U, f.S, f.Vh, q.Q, q.R, e.W, e.V, x, y, cholesky(s, spd), inv(s, shifted(s, a)), det(s, a), ld.sign, ld.logabsdet,
          matrix_exp(s, mul(s, a, 0.25)), svdvals(s, at), eigvalsh(s, h, Triangle::upper),
          // FFT nodes.
          fft(s, at, {.axis = 1}), rfftn(s, real(s, a)), ifftn(s, b, {.n = {6}, .norm = FftNorm::ortho}),
          // The LU family, eig, least squares, pseudo-inverse and norms.
          lu_results(s, a)[0], lu_results(s, a)[1], lu_results(s, a)[2], lu_factor(s, at).LU, lu_factor(s, at).pivots,
          lu_solve(s, lu_factor(s, shifted(s, a)), b), eig(s, a).W, eig(s, a).V, eigvals(s, at), lstsq(s, shifted(s, a).slice_view(1, 0, 3), b).X,
          lstsq(s, a, b, LstsqDriver::svd).S, pinv(s, a.slice_view(0, 0, 3)), matrix_norm(s, a, MatrixNorm::nuclear),
          vector_norm(s, at, 3.0), qr_pivoted(s, a).R, qr_pivoted(s, a).perm, lu_full_pivot(s, at).U,
          qr_append_columns(s, q.Q, q.R, b).Q, qr_append_columns(s, q.Q, q.R, b).R, vdot(s, a, at), add(s, iota(s, std::vector<std::int64_t>{4, 4}, a.dtype(), 1), a)};
}

TEST(GraphLinalg, CompiledEqualsTheDirectOpsOverDTypesAndInputLayouts) {
  for (DType d : tenferro::testing::kInexactDTypes) {
    for (tenferro::testing::Layout layout : tenferro::testing::kAllLayouts) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + tenferro::testing::layout_name(layout));
      std::mt19937_64 rng(3);
      const std::vector<Tensor> in = {random_layout(rng, Shape{4, 4}, d, layout, -1, 1), random_layout(rng, Shape{4, 2}, d, layout, -1, 1)};
      HeldSession s = backend().open_session();
      const std::vector<Tensor> want = linalg_program(s, in);
      const tg::CompiledGraph c = tg::compile(tg::trace(linalg_program, specs_of(in)));
      const std::vector<Tensor> got = c.run(s, in);
      ASSERT_EQ(got.size(), want.size());
      const double tol = d == DType::f32 || d == DType::c64 ? 1e-5 : 1e-12;
      for (std::size_t k = 0; k < got.size(); ++k) EXPECT_LE(relative_error(got[k], want[k]), tol) << "result " << k;
    }
  }
}

TEST(GraphLinalg, CallNodesNameAllTheirResults) {
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const SvdResult f = svd(s, in[0], SvdMode::full);
    return {f.U, f.S, f.Vh};
  }, {{Shape{4, 3}, DType::c128}});
  EXPECT_THAT(g.to_text(), ::testing::HasSubstr("%1, %2, %3 = svd %0 {full} : c128[4, 4], f64[3], c128[3, 3]"));
  const tg::Graph thin = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const SvdResult f = svd(s, in[0]);
    return {f.U, f.S, f.Vh};
  }, {{Shape{4, 3}, DType::c128}});
  EXPECT_NE(g.fingerprint(), thin.fingerprint());
  EXPECT_EQ(thin.output(0).shape, (Shape{4, 3}));
}

TEST(GraphLinalg, DataChecksRaiseTheEagerErrorsWhenTheGraphRuns) {
  HeldSession s = backend().open_session();
  const tg::CompiledGraph sv = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {mul(s, svdvals(s, in[0]), 2.0)};
  }, {{Shape{3, 3}, DType::f64}}));
  Tensor bad = Tensor::ones({3, 3}, DType::f64);
  static_cast<double*>(bad.mutable_data())[4] = std::numeric_limits<double>::quiet_NaN();
  Tensor out = Tensor::full({3}, 7.0, DType::f64);
  const std::vector<unsigned char> before = tenferro::testing::snapshot(out);
  std::string msg = expect_error<ArgumentError>([&] { sv.run_into(s, std::vector<Tensor>{bad}, std::vector<Tensor>{out}); }, "svdvals");
  EXPECT_THAT(msg, ::testing::HasSubstr("non-finite element at [1, 1]"));
  tenferro::testing::expect_untouched(out, before);
  const tg::CompiledGraph sol = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {solve(s, in[0], in[1])};
  }, {{Shape{2, 2}, DType::f64}, {Shape{2}, DType::f64}}));
  expect_error<NumericalError>([&] { sol.run(s, std::vector<Tensor>{Tensor::zeros({2, 2}, DType::f64), Tensor::ones({2}, DType::f64)}); }, "solve");
  // The session is usable afterwards.
  const std::vector<Tensor> r = sv.run(s, std::vector<Tensor>{Tensor::eye(3, DType::f64)});
  EXPECT_LE(relative_error(r[0], Tensor::full({3}, 2.0, DType::f64)), 1e-14);
}

TEST(GraphLinalg, IndexChecksRunWithTheGraphAndWindowsReadTheirStarts) {
  // take_along_axis by indices the graph computes (lu_factor's pivots) and by an input.
  const tg::CompiledGraph c = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {take_along_axis(s, in[0], in[1], 0), index_select(s, in[0], 1, lu_factor(s, in[0]).pivots)};
  }, {{Shape{3, 3}, DType::f64}, {Shape{2, 3}, DType::i64}}));
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(9);
  const Tensor x = random_tensor(rng, Shape{3, 3}, DType::f64, -1, 1);
  Tensor idx = Tensor::zeros({2, 3}, DType::i64);
  static_cast<std::int64_t*>(idx.mutable_data())[3] = 2;
  const std::vector<Tensor> got = c.run(s, std::vector<Tensor>{x, idx});
  EXPECT_LE(relative_error(got[0], take_along_axis(s, x, idx, 0)), 0.0);
  EXPECT_LE(relative_error(got[1], index_select(s, x, 1, lu_factor(s, x).pivots)), 0.0);
  static_cast<std::int64_t*>(idx.mutable_data())[3] = 7;
  const std::vector<Tensor> outs = {Tensor::full({2, 3}, 1.0, DType::f64), Tensor::full({3, 3}, 1.0, DType::f64)};
  const std::vector<unsigned char> before = tenferro::testing::snapshot(outs[0]);
  std::string msg = expect_error<IndexError>([&] { c.run_into(s, std::vector<Tensor>{x, idx}, outs); }, "take_along_axis");
  EXPECT_THAT(msg, ::testing::HasSubstr("= 7 out of range [-3, 3)"));
  tenferro::testing::expect_untouched(outs[0], before);
  // Windows at starts the graph reads as an input (clamped, as the direct ops do).
  const tg::CompiledGraph w = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {dynamic_slice(s, in[0], in[1], {2, 2}), dynamic_update_slice(s, in[0], mul(s, in[0].slice_view(0, 0, 2), 2.0), in[1])};
  }, {{Shape{3, 3}, DType::f64}, {Shape{2}, DType::i64}}));
  for (std::int64_t a : {0, 1, 9}) {
    Tensor st = Tensor::zeros({2}, DType::i64);
    static_cast<std::int64_t*>(st.mutable_data())[0] = a;
    static_cast<std::int64_t*>(st.mutable_data())[1] = 1;
    const std::vector<Tensor> r = w.run(s, std::vector<Tensor>{x, st});
    EXPECT_LE(relative_error(r[0], dynamic_slice(s, x, st, {2, 2})), 0.0);
    EXPECT_LE(relative_error(r[1], dynamic_update_slice(s, x, mul(s, x.slice_view(0, 0, 2), 2.0), st)), 0.0);
  }
}

TEST(GraphLinalg, PassesTreatACallNodeAsAWhole) {
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const SvdResult a = svd(s, in[0]), b = svd(s, in[0]);
    (void)qr(s, in[0]);  // unused
    // Calls whose attributes differ in the 17th digit stay apart.
    const Tensor p = add(s, vector_norm(s, in[0], 2.5), vector_norm(s, in[0], 2.5000000000000004));
    return {add(s, a.S, b.S), b.Vh, p};
  }, {{Shape{4, 3}, DType::f64}});
  const tg::Graph o = tg::optimize(g);
  const std::string text = o.to_text();
  EXPECT_EQ(text.find("qr"), std::string::npos) << text;
  EXPECT_EQ(text.find("svd"), text.rfind("svd")) << text;  // one call left, with its unused U kept
  EXPECT_NE(text.find("vector_norm"), text.rfind("vector_norm")) << text;
  EXPECT_THAT(text, ::testing::HasSubstr("= svd"));
  std::mt19937_64 rng(5);
  const Tensor x = random_tensor(rng, Shape{4, 3}, DType::f64, -1, 1);
  HeldSession s = backend().open_session();
  const std::vector<Tensor> want = tg::compile(g, {.optimize = false}).run(s, std::vector<Tensor>{x});
  const std::vector<Tensor> got = tg::compile(o).run(s, std::vector<Tensor>{x});
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_LE(relative_error(got[k], want[k]), 1e-15);
}

// ---------------------------------------------------------------- HVPs through linear algebra

using Energy = std::function<Tensor(Session&, const Tensor&)>;
using EnergyAd = std::function<EagerTensor(Context&, const EagerTensor&)>;

/// jvp(grad(f)) compiled against central differences of the eager gradient, and the
/// compiled gradient against eager's.
void check_hvp(const Energy& f, const EnergyAd& fad, const Shape& shape, DType d) {
  SCOPED_TRACE(dtype_name(d));
  std::mt19937_64 rng(17);
  const Tensor x = random_tensor(rng, shape, d, -1, 1), t = random_tensor(rng, shape, d, -1, 1);
  const tg::Graph g = tg::trace([&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {f(s, in[0])}; }, {{shape, d}});
  HeldSession s = backend().open_session();
  const std::vector<Tensor> r = tg::compile(tg::jvp(tg::grad(g))).run(s, std::vector<Tensor>{x, t});
  ASSERT_EQ(r.size(), 2u);
  auto grad_at = [&](double eps) {
    const std::vector<Tensor> at = {add(s, x, mul(s, t, eps))};
    return ad::grad(s, [&](Context& c, std::span<const EagerTensor> in) { return fad(c, in[0]); }, at)[0];
  };
  const double h = 1e-5;
  const Tensor fd = mul(s, sub(s, grad_at(h), grad_at(-h)), 1.0 / (2 * h));
  EXPECT_LE(relative_error(r[1], fd), 1e-7);
  EXPECT_LE(relative_error(r[0], grad_at(0)), 1e-12);
}

/// Re Σ w ∘ x for a constant weight w of x's shape.
Tensor weighted(Session& s, const Tensor& x, double phase) {
  const Tensor w = add(s, mul(s, Tensor::ones(x.shape().span(), real_dtype(x.dtype())), 0.7), phase);
  return real(s, sum(s, mul(s, x, w)));
}
EagerTensor weighted(Context& c, const EagerTensor& x, double phase) {
  const Tensor w = add(c.session(), mul(c.session(), Tensor::ones(x.shape().span(), real_dtype(x.dtype())), 0.7), phase);
  return ad::real(c, ad::sum(c, ad::mul(c, x, EagerTensor(w))));
}

TEST(GraphLinalg, HessianVectorProductsThroughSvd) {
  for (DType d : {DType::f64, DType::c128})
    check_hvp(
        [](Session& s, const Tensor& x) {
          const SvdResult f = svd(s, x);
          const Tensor s3 = mul(s, mul(s, f.S, f.S), f.S);
          // |U|² is gauge invariant.
          return add(s, sum(s, s3), weighted(s, mul(s, f.U, conj(s, f.U)), 0.1));
        },
        [](Context& c, const EagerTensor& x) {
          const ad::SvdTriple f = ad::svd(c, x);
          const EagerTensor s3 = ad::mul(c, ad::mul(c, f.S, f.S), f.S);
          return ad::add(c, ad::sum(c, s3), weighted(c, ad::mul(c, f.U, ad::conj(c, f.U)), 0.1));
        },
        Shape{4, 3}, d);
}

TEST(GraphLinalg, HessianVectorProductsThroughEigh) {
  for (DType d : {DType::f64, DType::c128})
    check_hvp(
        [](Session& s, const Tensor& x) {
          const EighResult e = eigh(s, add(s, x, conj(s, x.transpose_view())));
          const Tensor v2 = mul(s, e.V, conj(s, e.V));
          return add(s, sum(s, mul(s, mul(s, e.W, e.W), e.W)), weighted(s, v2, 0.2));
        },
        [](Context& c, const EagerTensor& x) {
          const ad::EighPair e = ad::eigh(c, ad::add(c, x, ad::conj(c, ad::transpose(c, x, {1, 0}))));
          const EagerTensor v2 = ad::mul(c, e.V, ad::conj(c, e.V));
          return ad::add(c, ad::sum(c, ad::mul(c, ad::mul(c, e.W, e.W), e.W)), weighted(c, v2, 0.2));
        },
        Shape{3, 3}, d);
}

TEST(GraphLinalg, HessianVectorProductsThroughQrSolveAndEinsum) {
  for (DType d : {DType::f64, DType::c128})
    check_hvp(
        [](Session& s, const Tensor& x) {
          const QrResult q = qr(s, x, QrMode::reduced, true);  // [4, 3]: Q [4, 3], R [3, 3]
          const Tensor m = einsum(s, "ij,jk->ik", {q.R, conj(s, q.R.transpose_view())});
          const Tensor sol = solve(s, shifted(s, m), q.Q.transpose_view());
          return add(s, weighted(s, mul(s, sol, conj(s, sol)), 0.3), weighted(s, mul(s, q.R, q.R), -0.4));
        },
        [](Context& c, const EagerTensor& x) {
          const ad::QrPair q = ad::qr(c, x, true);
          const EagerTensor rh = ad::conj(c, ad::transpose(c, q.R, {1, 0}));
          const EagerTensor m = ad::einsum(c, "ij,jk->ik", {q.R, rh});
          const EagerTensor eye(Tensor::eye(3, x.dtype()));
          const EagerTensor sol = ad::solve(c, ad::add(c, m, ad::mul(c, eye, 3.0)), ad::transpose(c, q.Q, {1, 0}));
          return ad::add(c, weighted(c, ad::mul(c, sol, ad::conj(c, sol)), 0.3), weighted(c, ad::mul(c, q.R, q.R), -0.4));
        },
        Shape{4, 3}, d);
}

TEST(GraphLinalg, SecondDerivativeThroughDetByGradOfGrad) {
  // f(x) = det(x·I₂ + M) for a scalar x: f'' = 2 (the x² coefficient of the 2×2 determinant).
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor m = Tensor::full({2, 2}, 0.5, DType::f64);
    return {det(s, add(s, mul(s, Tensor::eye(2, DType::f64), in[0]), m))};
  }, {{Shape{}, DType::f64}});
  HeldSession s = backend().open_session();
  const std::vector<Tensor> r = tg::compile(tg::grad(tg::grad(g))).run(s, std::vector<Tensor>{Tensor::full({}, 0.3, DType::f64)});
  EXPECT_NEAR(*static_cast<const double*>(r[0].data()), 2.0, 1e-12);
}

}  // namespace
