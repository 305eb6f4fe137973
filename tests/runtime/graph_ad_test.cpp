// Graph transforms (tenferro/graph.hpp, Note [Graph transforms]): traced vjp and jvp
// equal eager AD at the same point for every rule of the traceable families (a
// catalogue check makes a new row fail until it is covered or listed as a known gap);
// transforms compose: jvp(grad(f)) against finite differences of the eager gradient,
// on real and complex inputs with einsum inside, and grad(grad(f)) against the second
// derivative; inactive inputs get zero cotangents and record nothing; missing cases are
// UnsupportedAdRule at transform time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>
#include <set>

#include "ops/analytic/analytic_cases.hpp"
#include "support/expect_error.hpp"
#include "support/backends.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using ad::Context;
using ad::EagerTensor;
using tenferro::testing::expect_error;
using tenferro::testing::random_tensor;
using tenferro::testing::value_at;
namespace tg = tenferro::graph;

CpuBackend& backend() { return tenferro::testing::one_thread_backend(); }

double rel_err(const Tensor& a, const Tensor& b) { return tenferro::testing::relative_error(a, b); }

using DirectFn = std::function<Tensor(Session&, std::span<const Tensor>)>;
using EagerFn = std::function<EagerTensor(Context&, std::span<const EagerTensor>)>;

/// One differentiable op: its direct form (traced), its eager AD form, its inputs.
struct RuleCase {
  std::string op;  ///< the catalogue row it covers
  DirectFn direct;
  EagerFn eager;
  std::vector<Shape> shapes;
  double lo = -1, hi = 1;
  bool complex = true;  ///< also checked in c128
};

std::vector<Tensor> inputs_for(const RuleCase& c, DType d, std::mt19937_64& rng) {
  std::vector<Tensor> in;
  for (const Shape& s : c.shapes) in.push_back(random_tensor(rng, s, d, c.lo, c.hi));
  return in;
}

/// vjp and jvp of the traced direct form against eager AD of the eager form.
void check_rule(const RuleCase& c, DType d) {
  SCOPED_TRACE(c.op + " " + std::string(dtype_name(d)));
  std::mt19937_64 rng(11);
  const std::vector<Tensor> x = inputs_for(c, d, rng);
  HeldSession s = backend().open_session();
  const tg::TraceFn f = [&](Session& ts, std::span<const Tensor> in) -> std::vector<Tensor> { return {c.direct(ts, in)}; };
  std::vector<tg::ValueSpec> specs;
  for (const Tensor& t : x) specs.push_back({t.shape(), t.dtype()});
  const tg::Graph g = tg::trace(f, specs);
  const ad::MultiFn ef = [&](Context& ctx, std::span<const EagerTensor> xs) -> std::vector<EagerTensor> { return {c.eager(ctx, xs)}; };
  // vjp
  const Tensor y = c.direct(s, x);
  const Tensor ct = random_tensor(rng, y.shape(), y.dtype());
  const ad::VjpResult want = ad::vjp(s, ef, x, std::vector<Tensor>{ct});
  std::vector<Tensor> vin = x;
  vin.push_back(ct);
  const std::vector<Tensor> got = tg::compile(tg::vjp(g)).run(s, vin);
  ASSERT_EQ(got.size(), 1 + x.size());
  EXPECT_LE(rel_err(got[0], want.outputs[0]), 1e-13);
  for (std::size_t k = 0; k < x.size(); ++k) EXPECT_LE(rel_err(got[1 + k], want.cotangents[k]), 1e-13) << "cotangent " << k;
  // jvp
  std::vector<Tensor> tangents;
  for (const Tensor& t : x) tangents.push_back(random_tensor(rng, t.shape(), t.dtype()));
  const ad::JvpResult jwant = ad::jvp(s, ef, x, tangents);
  std::vector<Tensor> jin = x;
  jin.insert(jin.end(), tangents.begin(), tangents.end());
  const std::vector<Tensor> jgot = tg::compile(tg::jvp(g)).run(s, jin);
  EXPECT_LE(rel_err(jgot[1], jwant.tangents[0]), 1e-13);
}

std::vector<std::int64_t> v(std::initializer_list<std::int64_t> l) { return l; }

/// Indices 3, 0, 3, 1 (i64) in `shape` (4 elements).
Tensor rows_3031(const Shape& shape) {
  Tensor t = Tensor::zeros(shape.span(), DType::i64);
  const std::int64_t v[] = {3, 0, 3, 1};
  std::memcpy(t.mutable_data(), v, sizeof v);
  return t;
}

/// Starts (1, 5) of an i64 index vector (5 is clamped).
Tensor starts_1_5() {
  Tensor t = Tensor::zeros({2}, DType::i64);
  static_cast<std::int64_t*>(t.mutable_data())[0] = 1;
  static_cast<std::int64_t*>(t.mutable_data())[1] = 5;
  return t;
}

/// x + 3·I for square x [N, N] (well conditioned for the solves).
Tensor shifted(Session& s, const Tensor& x) { return add(s, x, mul(s, Tensor::eye(x.extent(0), x.dtype()), 3.0)); }
EagerTensor shifted(Context& c, const EagerTensor& x) { return ad::add(c, x, ad::mul(c, EagerTensor(Tensor::eye(x.shape()[0], x.dtype())), 3.0)); }
/// S [K] as a row [1, K].
Tensor row(Session& s, const Tensor& v) { return reshape(s, v, {1, v.extent(0)}); }
EagerTensor row(Context& c, const EagerTensor& v) { return ad::reshape(c, v, {1, v.shape()[0]}); }

/// The linear-algebra call nodes (Note [Linear algebra in graphs]; each case reads every
/// result of its op) and the FFT nodes.
void linalg_rule_cases(std::vector<RuleCase>& r) {
  r.push_back({"svd",
               [](Session& s, std::span<const Tensor> in) {
                 const SvdResult f = svd(s, in[0]);
                 return matmul(s, mul(s, f.U, row(s, f.S)), mul(s, f.Vh, f.Vh));
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::SvdTriple f = ad::svd(c, in[0]);
                 return ad::matmul(c, ad::mul(c, f.U, row(c, f.S)), ad::mul(c, f.Vh, f.Vh));
               },
               {Shape{4, 3}}});
  r.push_back({"svd", [](Session& s, std::span<const Tensor> in) { return svdvals(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::svdvals(c, in[0]); }, {Shape{3, 4}}});
  // V·diag(W)·Vᴴ + W of the Hermitian x + xᴴ (gauge invariant, as complex V needs).
  r.push_back({"eigh",
               [](Session& s, std::span<const Tensor> in) {
                 const EighResult e = eigh(s, add(s, in[0], conj(s, in[0].transpose_view())));
                 return add(s, einsum(s, "ij,kj->ik", {mul(s, e.V, row(s, e.W)), conj(s, e.V)}), row(s, e.W));
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::EighPair e = ad::eigh(c, ad::add(c, in[0], ad::conj(c, ad::transpose(c, in[0], {1, 0}))));
                 return ad::add(c, ad::einsum(c, "ij,kj->ik", {ad::mul(c, e.V, row(c, e.W)), ad::conj(c, e.V)}), row(c, e.W));
               },
               {Shape{3, 3}}});
  r.push_back({"qr",
               [](Session& s, std::span<const Tensor> in) {
                 const QrResult f = qr(s, in[0], QrMode::reduced, true);
                 return matmul(s, f.Q, mul(s, f.R, f.R));
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::QrPair f = ad::qr(c, in[0], true);
                 return ad::matmul(c, f.Q, ad::mul(c, f.R, f.R));
               },
               {Shape{4, 3}}});
  r.push_back({"solve", [](Session& s, std::span<const Tensor> in) { return solve(s, shifted(s, in[0]), in[1]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::solve(c, shifted(c, in[0]), in[1]); }, {Shape{3, 3}, Shape{3, 2}}});
  const TriangularSolveOptions upper_adjoint{Side::right, Triangle::upper, MatOp::adjoint, false};
  r.push_back({"triangular_solve", [=](Session& s, std::span<const Tensor> in) { return triangular_solve(s, shifted(s, in[0]), in[1], upper_adjoint); },
               [=](Context& c, std::span<const EagerTensor> in) { return ad::triangular_solve(c, shifted(c, in[0]), in[1], upper_adjoint); },
               {Shape{3, 3}, Shape{2, 3}}});
  r.push_back({"cholesky",
               [](Session& s, std::span<const Tensor> in) { return cholesky(s, shifted(s, einsum(s, "ij,kj->ik", {in[0], conj(s, in[0])}))); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::cholesky(c, shifted(c, ad::einsum(c, "ij,kj->ik", {in[0], ad::conj(c, in[0])}))); },
               {Shape{3, 3}}});
  r.push_back({"inv", [](Session& s, std::span<const Tensor> in) { return inv(s, shifted(s, in[0])); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::inv(c, shifted(c, in[0])); }, {Shape{3, 3}}});
  r.push_back({"det", [](Session& s, std::span<const Tensor> in) { return det(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::det(c, in[0]); }, {Shape{3, 3, 2}}});
  r.push_back({"slogdet",
               [](Session& s, std::span<const Tensor> in) {
                 const SlogdetResult d = slogdet(s, shifted(s, in[0]));
                 return add(s, d.sign, d.logabsdet);
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::SlogdetPair d = ad::slogdet(c, shifted(c, in[0]));
                 return ad::add(c, d.sign, d.logabsdet);
               },
               {Shape{3, 3}}});
  r.push_back({"fft", [](Session& s, std::span<const Tensor> in) { return fft(s, in[0], {.n = 5, .axis = 1, .norm = FftNorm::ortho}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::fft(c, in[0], {.n = 5, .axis = 1, .norm = FftNorm::ortho}); }, {Shape{3, 4}}});
  r.push_back({"ifft", [](Session& s, std::span<const Tensor> in) { return ifftn(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::ifftn(c, in[0]); }, {Shape{3, 4}}});
  r.push_back({"rfft", [](Session& s, std::span<const Tensor> in) { return rfft(s, in[0], {.n = 3}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::rfft(c, in[0], {.n = 3}); }, {Shape{4, 2}}, -1, 1, false});
  r.push_back({"irfft", [](Session& s, std::span<const Tensor> in) { return irfft(s, in[0], {.n = 6, .norm = FftNorm::forward}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::irfft(c, in[0], {.n = 6, .norm = FftNorm::forward}); }, {Shape{4, 2}}});
  r.push_back({"pinv", [](Session& s, std::span<const Tensor> in) { return pinv(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::pinv(c, in[0]); }, {Shape{4, 3}}});
  r.push_back({"matrix_norm", [](Session& s, std::span<const Tensor> in) { return add(s, matrix_norm(s, in[0]), matrix_norm(s, in[0], MatrixNorm::nuclear)); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::add(c, ad::matrix_norm(c, in[0]), ad::matrix_norm(c, in[0], MatrixNorm::nuclear)); },
               {Shape{3, 4, 2}}});
  r.push_back({"vector_norm", [](Session& s, std::span<const Tensor> in) { return vector_norm(s, in[0], 3.0); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::vector_norm(c, in[0], 3.0); }, {Shape{4, 2}}});
  // |V|² + W of a general matrix (gauge invariant; complex results for real input).
  r.push_back({"eig",
               [](Session& s, std::span<const Tensor> in) {
                 const EigResult e = eig(s, in[0]);
                 return add(s, mul(s, e.V, conj(s, e.V)), row(s, e.W));
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::EigPair e = ad::eig(c, in[0]);
                 return ad::add(c, ad::mul(c, e.V, ad::conj(c, e.V)), row(c, e.W));
               },
               {Shape{3, 3}}});
  r.push_back({"eig", [](Session& s, std::span<const Tensor> in) { return eigvals(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::eigvals(c, in[0]); }, {Shape{3, 3}}});
  r.push_back({"lu",
               [](Session& s, std::span<const Tensor> in) {
                 const LuResult f = lu(s, in[0]);
                 return add(s, matmul(s, f.L, mul(s, f.U, f.U)), f.P);
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::LuFactors f = ad::lu(c, in[0]);
                 return ad::add(c, ad::matmul(c, f.L, ad::mul(c, f.U, f.U)), EagerTensor(f.P));
               },
               {Shape{3, 3}}});
  r.push_back({"lu_factor", [](Session& s, std::span<const Tensor> in) { return lu_factor(s, in[0]).LU; },
               [](Context& c, std::span<const EagerTensor> in) { return ad::lu_factor(c, in[0]).LU; }, {Shape{4, 3}}});
  r.push_back({"lu_solve",
               [](Session& s, std::span<const Tensor> in) { return lu_solve(s, lu_factor(s, shifted(s, in[0])), in[1]); },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::LuPacked f = ad::lu_factor(c, shifted(c, in[0]));
                 return ad::lu_solve(c, f.LU, f.pivots, in[1]);
               },
               {Shape{3, 3}, Shape{3, 2}}});
  for (LstsqDriver driver : {LstsqDriver::qr, LstsqDriver::svd})
    r.push_back({"lstsq",
                 [=](Session& s, std::span<const Tensor> in) {
                   const LstsqResult x = lstsq(s, in[0], in[1], driver);
                   return driver == LstsqDriver::svd ? add(s, x.X, sum(s, x.S)) : x.X;
                 },
                 [=](Context& c, std::span<const EagerTensor> in) {
                   const ad::LstsqSolution x = ad::lstsq(c, in[0], in[1], driver);
                   return driver == LstsqDriver::svd ? ad::add(c, x.X, ad::sum(c, x.S)) : x.X;
                 },
                 {Shape{4, 3}, Shape{4, 2}}});
  r.push_back({"matrix_exp", [](Session& s, std::span<const Tensor> in) { return matrix_exp(s, mul(s, in[0], 0.5)); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::matrix_exp(c, ad::mul(c, in[0], 0.5)); }, {Shape{3, 3}}});
}

std::vector<RuleCase> rule_cases() {
  std::vector<RuleCase> r;
  auto unary = [&](std::string op, Tensor (*d)(Session&, const Tensor&), EagerTensor (*e)(Context&, const EagerTensor&), bool cplx = true) {
    r.push_back({op, [d](Session& s, std::span<const Tensor> in) { return d(s, in[0]); },
                 [e](Context& c, std::span<const EagerTensor> in) { return e(c, in[0]); }, {Shape{3, 4}}, -1, 1, cplx});
  };
  unary("neg", &tenferro::neg, &ad::neg);
  unary("conj", &tenferro::conj, &ad::conj);
  unary("abs", &tenferro::abs, &ad::abs);
  unary("real", &tenferro::real, &ad::real);
  unary("imag", &tenferro::imag, &ad::imag);
  unary("angle", &tenferro::angle, &ad::angle);
  r.push_back({"copy", [](Session& s, std::span<const Tensor> in) { return to_contiguous(s, in[0].transpose_view()); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::copy(c, ad::transpose(c, in[0], {1, 0})); }, {Shape{3, 4}}});
  auto binary = [&](std::string op, auto d, auto e, bool cplx, double lo = -1, double hi = 1) {
    r.push_back({op, [d](Session& s, std::span<const Tensor> in) { return d(s, in[0], in[1]); },
                 [e](Context& c, std::span<const EagerTensor> in) { return e(c, in[0], in[1]); }, {Shape{3, 4}, Shape{3, 1}}, lo, hi, cplx});
  };
  binary("add", [](Session& s, const Tensor& a, const Tensor& b) { return add(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::add(c, a, b); }, true);
  binary("sub", [](Session& s, const Tensor& a, const Tensor& b) { return sub(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::sub(c, a, b); }, true);
  binary("mul", [](Session& s, const Tensor& a, const Tensor& b) { return mul(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::mul(c, a, b); }, true);
  binary("div", [](Session& s, const Tensor& a, const Tensor& b) { return div(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::div(c, a, b); }, true, 0.5, 1.5);
  binary("pow", [](Session& s, const Tensor& a, const Tensor& b) { return pow(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::pow(c, a, b); }, true, 0.5, 1.5);
  binary("rem", [](Session& s, const Tensor& a, const Tensor& b) { return rem(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::rem(c, a, b); }, false, 0.3, 1.7);
  binary("maximum", [](Session& s, const Tensor& a, const Tensor& b) { return maximum(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::maximum(c, a, b); }, false);
  binary("minimum", [](Session& s, const Tensor& a, const Tensor& b) { return minimum(s, a, b); }, [](Context& c, const EagerTensor& a, const EagerTensor& b) { return ad::minimum(c, a, b); }, false);
  r.push_back({"select",
               [](Session& s, std::span<const Tensor> in) { return select(s, compare(s, in[0], 0.0, CompareOp::gt), in[0], in[1]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::select(c, ad::compare(c, in[0], 0.0, CompareOp::gt), in[0], in[1]); },
               {Shape{3, 4}, Shape{3, 4}}, -1, 1, false});
  r.push_back({"clamp", [](Session& s, std::span<const Tensor> in) { return clamp(s, -0.5, in[0], in[1]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::clamp(c, -0.5, in[0], in[1]); }, {Shape{3, 4}, Shape{3, 4}}, -1, 1, false});
  auto reduce = [&](std::string op, auto d, auto e, bool cplx) {
    r.push_back({op, [d](Session& s, std::span<const Tensor> in) { return d(s, in[0], v({0}), false); },
                 [e](Context& c, std::span<const EagerTensor> in) { return e(c, in[0], v({0}), false); }, {Shape{3, 4}}, 0.5, 1.5, cplx});
    r.push_back({op, [d](Session& s, std::span<const Tensor> in) { return d(s, in[0], v({1}), true); },
                 [e](Context& c, std::span<const EagerTensor> in) { return e(c, in[0], v({1}), true); }, {Shape{3, 4}}, 0.5, 1.5, cplx});
  };
#define TF_REDUCE(name, cplx)                                                                                                       \
  reduce(#name, [](Session& s, const Tensor& x, std::vector<std::int64_t> a, bool k) { return tenferro::name(s, x, a, k); }, \
         [](Context& c, const EagerTensor& x, std::vector<std::int64_t> a, bool k) { return ad::name(c, x, a, k); }, cplx)
  TF_REDUCE(sum, true);
  TF_REDUCE(prod, true);
  TF_REDUCE(max, false);
  TF_REDUCE(min, false);
  TF_REDUCE(mean, true);
  TF_REDUCE(sum_squares, true);
  TF_REDUCE(logsumexp, false);
#undef TF_REDUCE
  r.push_back({"norm_squared", [](Session& s, std::span<const Tensor> in) { return norm_squared(s, in[0]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::norm_squared(c, in[0]); }, {Shape{3, 4}}});
  auto axis = [&](std::string op, auto d, auto e, bool cplx) {
    r.push_back({op, [d](Session& s, std::span<const Tensor> in) { return d(s, in[0], 1); },
                 [e](Context& c, std::span<const EagerTensor> in) { return e(c, in[0], 1); }, {Shape{3, 4}}, 0.5, 1.5, cplx});
  };
  axis("cumsum", [](Session& s, const Tensor& x, std::int64_t a) { return cumsum(s, x, a); }, [](Context& c, const EagerTensor& x, std::int64_t a) { return ad::cumsum(c, x, a); }, true);
  axis("cumprod", [](Session& s, const Tensor& x, std::int64_t a) { return cumprod(s, x, a); }, [](Context& c, const EagerTensor& x, std::int64_t a) { return ad::cumprod(c, x, a); }, true);
  axis("softmax", [](Session& s, const Tensor& x, std::int64_t a) { return softmax(s, x, a); }, [](Context& c, const EagerTensor& x, std::int64_t a) { return ad::softmax(c, x, a); }, false);
  axis("log_softmax", [](Session& s, const Tensor& x, std::int64_t a) { return log_softmax(s, x, a); }, [](Context& c, const EagerTensor& x, std::int64_t a) { return ad::log_softmax(c, x, a); }, false);
  r.push_back({"cast", [](Session& s, std::span<const Tensor> in) { return cast(s, cast(s, in[0], DType::c128), DType::f64); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::cast(c, ad::cast(c, in[0], DType::c128), DType::f64); }, {Shape{3, 4}}, -1, 1, false});
  // grouped_gemm: one dot_general node per item (beta·c read; conj of a; no c term).
  r.push_back({"grouped_gemm",
               [](Session& s, std::span<const Tensor> in) {
                 const Tensor c1 = mul(s, in[2], 1.0), c2 = mul(s, in[2], 0.0);
                 const GemmItem items[2] = {{&in[0], &in[1], &c1, 1.5, 0.5}, {&in[3], &in[4], &c2, 2.0, 0.0, true, false}};
                 grouped_gemm(s, items);
                 return add(s, c1, c2);
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const ad::AdGemmItem items[2] = {{in[0], in[1], in[2], 1.5, 0.5}, {in[3], in[4], std::nullopt, 2.0, 0.0, true, false}};
                 const std::vector<EagerTensor> r = ad::grouped_gemm(c, items);
                 return ad::add(c, r[0], r[1]);
               },
               {Shape{3, 4}, Shape{4, 2}, Shape{3, 2}, Shape{3, 5}, Shape{5, 2}}});
  // convert's exactness check runs when the graph runs; f64 -> c128 -> f64 is exact.
  r.push_back({"convert", [](Session& s, std::span<const Tensor> in) { return convert(s, convert(s, in[0], DType::c128), DType::f64); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::convert(c, ad::convert(c, in[0], DType::c128), DType::f64); }, {Shape{3, 4}}, -1, 1, false});
  r.push_back({"reshape", [](Session& s, std::span<const Tensor> in) { return reshape(s, in[0].transpose_view(), {2, 6}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::reshape(c, ad::transpose(c, in[0], {1, 0}), {2, 6}); }, {Shape{3, 4}}});
  r.push_back({"transpose", [](Session& s, std::span<const Tensor> in) { return transpose(s, in[0], v({1, 2, 0})); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::transpose(c, in[0], {1, 2, 0}); }, {Shape{2, 3, 4}}});
  r.push_back({"broadcast_in_dim", [](Session& s, std::span<const Tensor> in) { return broadcast_in_dim(s, in[0], v({3, 2, 4}), v({0, 2})); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::broadcast_in_dim(c, in[0], v({3, 2, 4}), v({0, 2})); }, {Shape{3, 4}}});
  r.push_back({"reverse", [](Session& s, std::span<const Tensor> in) { return reverse(s, in[0], v({0})); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::reverse(c, in[0], v({0})); }, {Shape{3, 4}}});
  r.push_back({"slice", [](Session& s, std::span<const Tensor> in) { return slice(s, in[0], Dims{1, 0}, Dims{3, 4}, Dims{1, 2}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::slice(c, in[0], Dims{1, 0}, Dims{3, 4}, Dims{1, 2}); }, {Shape{3, 4}}});
  r.push_back({"dot_general",
               [](Session& s, std::span<const Tensor> in) {
                 return dot_general(s, in[0], in[1], {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}, .conj_lhs = true});
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 return ad::dot_general(c, in[0], in[1], {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}, .conj_lhs = true});
               },
               {Shape{3, 4, 2}, Shape{4, 5, 2}}});
  r.push_back({"einsum", [](Session& s, std::span<const Tensor> in) { return einsum(s, "ij,jk,ki->j", in); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::einsum(c, "ij,jk,ki->j", in); }, {Shape{3, 4}, Shape{4, 2}, Shape{2, 3}}});
  r.push_back({"tril", [](Session& s, std::span<const Tensor> in) { return tril(s, in[0], -1); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::tril(c, in[0], -1); }, {Shape{3, 4, 2}}});
  r.push_back({"triu", [](Session& s, std::span<const Tensor> in) { return triu(s, in[0], 1); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::triu(c, in[0], 1); }, {Shape{3, 4}}});
  // Partial writes and diagonal windows (Note [Graph transforms]).
  r.push_back({"extract_diagonal", [](Session& s, std::span<const Tensor> in) { return extract_diagonal(s, in[0], 0, 2); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::extract_diagonal(c, in[0], 0, 2); }, {Shape{3, 2, 3}}});
  r.push_back({"embed_diagonal", [](Session& s, std::span<const Tensor> in) { return embed_diagonal(s, in[0], 0, 2); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::embed_diagonal(c, in[0], 0, 2); }, {Shape{2, 3}}});
  r.push_back({"pad", [](Session& s, std::span<const Tensor> in) { return pad(s, in[0], 0.5, v({1, 0}), v({0, 2}), v({1, 0})); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::pad(c, in[0], 0.5, v({1, 0}), v({0, 2}), v({1, 0})); }, {Shape{3, 4}}});
  r.push_back({"concatenate", [](Session& s, std::span<const Tensor> in) { return concatenate(s, in, 1); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::concatenate(c, in, 1); }, {Shape{3, 4}, Shape{3, 2}}});
  r.push_back({"stack", [](Session& s, std::span<const Tensor> in) { return stack(s, in, 1); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::stack(c, in, 1); }, {Shape{3, 4}, Shape{3, 4}}});
  r.push_back({"vdot", [](Session& s, std::span<const Tensor> in) { return vdot(s, in[0], in[1]); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::vdot(c, in[0], in[1]); }, {Shape{3, 4}, Shape{3, 4}}});
  // axpby into a buffer and into a window of one (a partial in-place update).
  r.push_back({"axpby",
               [](Session& s, std::span<const Tensor> in) {
                 const Tensor y = mul(s, in[1], 1.5);
                 axpby(s, 0.5, in[0], -2.0, y);
                 axpby(s, 3.0, in[0].slice_view(0, 0, 2), 1.0, y.slice_view(0, 1, 3));
                 return y;
               },
               [](Context& c, std::span<const EagerTensor> in) {
                 const EagerTensor y = ad::axpby(c, 0.5, in[0], -2.0, ad::mul(c, in[1], 1.5));
                 const EagerTensor top = ad::slice(c, y, Dims{0, 0}, Dims{1, 4});
                 const EagerTensor rest = ad::axpby(c, 3.0, ad::slice(c, in[0], Dims{0, 0}, Dims{2, 4}), 1.0, ad::slice(c, y, Dims{1, 0}, Dims{3, 4}));
                 const std::vector<EagerTensor> parts = {top, rest};
                 return ad::concatenate(c, parts, 0);
               },
               {Shape{3, 4}, Shape{3, 4}}});
  // Windows at data-given starts (constants here; an input's starts are tested in
  // graph_linalg_test): one clamped.
  r.push_back({"dynamic_slice", [](Session& s, std::span<const Tensor> in) { return dynamic_slice(s, in[0], starts_1_5(), {2, 3}); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::dynamic_slice(c, in[0], starts_1_5(), {2, 3}); }, {Shape{3, 4}}});
  r.push_back({"dynamic_update_slice", [](Session& s, std::span<const Tensor> in) { return dynamic_update_slice(s, in[0], in[1], starts_1_5()); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::dynamic_update_slice(c, in[0], in[1], starts_1_5()); },
               {Shape{3, 4}, Shape{2, 3}}});
  // Indexing by constant indices (rows 3, 0, 3, 1: a duplicate accumulates in the VJPs).
  r.push_back({"take_along_axis", [](Session& s, std::span<const Tensor> in) { return take_along_axis(s, in[0], rows_3031(Shape{4, 1}), 0); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::take_along_axis(c, in[0], rows_3031(Shape{4, 1}), 0); }, {Shape{5, 3}}});
  r.push_back({"index_select", [](Session& s, std::span<const Tensor> in) { return index_select(s, in[0], 0, rows_3031(Shape{4})); },
               [](Context& c, std::span<const EagerTensor> in) { return ad::index_select(c, in[0], 0, rows_3031(Shape{4})); }, {Shape{5, 3}}});
  GatherDims gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  gd.index_vector_dim = 1;
  r.push_back({"gather", [=](Session& s, std::span<const Tensor> in) { return gather(s, in[0], rows_3031(Shape{4}), gd, {1, 3}); },
               [=](Context& c, std::span<const EagerTensor> in) { return ad::gather(c, in[0], rows_3031(Shape{4}), gd, {1, 3}); }, {Shape{5, 3}}});
  ScatterDims sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  r.push_back({"scatter", [=](Session& s, std::span<const Tensor> in) { return scatter(s, in[0], rows_3031(Shape{4}), in[1], sd, ScatterCombiner::add); },
               [=](Context& c, std::span<const EagerTensor> in) { return ad::scatter(c, in[0], rows_3031(Shape{4}), in[1], sd, ScatterCombiner::add); },
               {Shape{5, 3}, Shape{4, 3}}});
  linalg_rule_cases(r);
  return r;
}

// Traceable rows whose graph derivative is not available, and why (none now).
const std::set<std::string> kKnownGaps = {};

TEST(GraphAd, TracedRulesEqualEagerOnes) {
  std::set<std::string> covered;
  for (const RuleCase& c : rule_cases()) {
    covered.insert(c.op);
    check_rule(c, DType::f64);
    if (c.complex) check_rule(c, DType::c128);
  }
  for (const tenferro::testing::AnalyticCase& a : tenferro::testing::analytic_cases()) {
    covered.insert(a.name);
    RuleCase c{a.name, [&a](Session& s, std::span<const Tensor> in) { return a.fn(s, in[0]); },
               [&a](Context& ctx, std::span<const EagerTensor> in) { return a.ad_fn(ctx, in[0]); }, {Shape{3, 4}}, a.ad_dom.lo, a.ad_dom.hi,
               static_cast<bool>(a.complex_ref)};
    check_rule(c, DType::f64);
    if (c.complex) check_rule(c, DType::c128);
  }
  // Every differentiable row the trace device has a kernel for is covered or a listed gap.
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = kOps[i];
    if (!supports(static_cast<OpId>(i), DType::f64, DeviceKind::trace) || info.ad != AdStatus::jvp_vjp) continue;
    const std::string name(info.name);
    EXPECT_TRUE(covered.count(name) || kKnownGaps.count(name)) << name << " has a rule but no traced-vs-eager case";
  }
}

/// f(x, w) = sum(tanh(einsum(ij,jk->ik, x, w)) * x) + sum_squares(x)·0.1, scalar real.
std::vector<Tensor> energy(Session& s, std::span<const Tensor> in) {
  const Tensor h = tanh(s, einsum(s, "ij,jk->ik", in));
  const Tensor e = add(s, real(s, sum(s, mul(s, h, conj(s, in[0])))), mul(s, sum_squares(s, in[0]), 0.1));
  return {is_complex(e.dtype()) ? real(s, e) : e};
}
EagerTensor energy_ad(Context& c, std::span<const EagerTensor> in) {
  const EagerTensor h = ad::tanh(c, ad::einsum(c, "ij,jk->ik", in));
  return ad::add(c, ad::real(c, ad::sum(c, ad::mul(c, h, ad::conj(c, in[0])))), ad::mul(c, ad::sum_squares(c, in[0]), 0.1));
}

TEST(GraphAd, HessianVectorProductsMatchFiniteDifferencesOfTheGradient) {
  for (DType d : {DType::f64, DType::c128}) {
    SCOPED_TRACE(dtype_name(d));
    std::mt19937_64 rng(21);
    const Tensor x = random_tensor(rng, Shape{3, 3}, d, -0.5, 0.5), w = random_tensor(rng, Shape{3, 3}, d, -0.5, 0.5);
    const Tensor t = random_tensor(rng, Shape{3, 3}, d), tw = random_tensor(rng, Shape{3, 3}, d);
    const tg::Graph g = tg::trace(energy, {{Shape{3, 3}, d}, {Shape{3, 3}, d}});
    const tg::Graph hvp = tg::jvp(tg::grad(g));
    HeldSession s = backend().open_session();
    const std::vector<Tensor> r = tg::compile(hvp).run(s, std::vector<Tensor>{x, w, t, tw});
    ASSERT_EQ(r.size(), 4u);  // gradients, then their tangents
    // Central differences of the eager gradient along (t, tw).
    const double h = 1e-5;
    auto grad_at = [&](double eps) {
      const Tensor xe = add(s, x, mul(s, t, eps)), we = add(s, w, mul(s, tw, eps));
      return ad::grad(s, [](Context& c, std::span<const EagerTensor> in) { return energy_ad(c, in); }, {xe, we});
    };
    const std::vector<Tensor> gp = grad_at(h), gm = grad_at(-h);
    for (int k = 0; k < 2; ++k) {
      const Tensor fd = mul(s, sub(s, gp[static_cast<std::size_t>(k)], gm[static_cast<std::size_t>(k)]), 1.0 / (2 * h));
      EXPECT_LE(rel_err(r[2 + static_cast<std::size_t>(k)], fd), 1e-7) << "input " << k;
    }
    // The gradient itself equals eager's.
    const std::vector<Tensor> g0 = grad_at(0);
    EXPECT_LE(rel_err(r[0], g0[0]), 1e-13);
  }
}

/// Σ_k <ψ|Z_k|ψ> of a 6-site open MPS (sites [left, physical 2, right], bond chi),
/// direct ops and eager AD forms.
constexpr int kSites = 6;
template <class S, class V, class Einsum, class Add, class Sum>
V mps_energy(S& s, std::span<const V> a, Einsum es, Add add_, Sum sum_) {
  const Tensor z = Tensor::from_data<double>({2, 2}, {1.0, 0.0, 0.0, -1.0});
  V l = V(Tensor::ones({1, 1}, DType::f64)), m = V(Tensor::zeros({1, 1}, DType::f64));
  for (const V& ak : a) {
    const V za = es(s, "st,atc->asc", std::vector<V>{V(z), ak});
    m = add_(s, es(s, "ab,asc,bsd->cd", std::vector<V>{m, ak, ak}), es(s, "ab,asc,bsd->cd", std::vector<V>{l, za, ak}));
    l = es(s, "ab,asc,bsd->cd", std::vector<V>{l, ak, ak});
  }
  return sum_(s, m);
}

TEST(GraphAd, MpsEnergyGradientAndHvpEqualEager) {
  const std::int64_t chi = 8;
  std::vector<tg::ValueSpec> specs;
  std::vector<Tensor> a, t;
  std::mt19937_64 rng(31);
  for (int k = 0; k < kSites; ++k) {
    const Shape sh{k == 0 ? 1 : chi, 2, k == kSites - 1 ? 1 : chi};
    specs.push_back({sh, DType::f64});
    a.push_back(random_tensor(rng, sh, DType::f64, -0.5, 0.5));
    t.push_back(random_tensor(rng, sh, DType::f64, -1, 1));
  }
  auto direct = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {mps_energy<Session, Tensor>(
        s, in, [](Session& ss, const char* eq, const std::vector<Tensor>& ops) { return einsum(ss, eq, ops); },
        [](Session& ss, const Tensor& x, const Tensor& y) { return add(ss, x, y); }, [](Session& ss, const Tensor& x) { return sum(ss, x); })};
  };
  auto eager = [](Context& c, std::span<const EagerTensor> in) {
    return mps_energy<Context, EagerTensor>(
        c, in, [](Context& cc, const char* eq, const std::vector<EagerTensor>& ops) { return ad::einsum(cc, eq, ops); },
        [](Context& cc, const EagerTensor& x, const EagerTensor& y) { return ad::add(cc, x, y); },
        [](Context& cc, const EagerTensor& x) { return ad::sum(cc, x); });
  };
  const tg::Graph g = tg::trace(direct, specs);
  HeldSession s = backend().open_session();
  // Energy and gradient.
  const std::vector<Tensor> e = tg::compile(g).run(s, a);
  EXPECT_LE(rel_err(e[0], direct(s, a)[0]), 1e-13);
  const std::vector<Tensor> gr = tg::compile(tg::grad(g)).run(s, a);
  const std::vector<Tensor> gw = ad::grad(s, eager, a);
  for (int k = 0; k < kSites; ++k) EXPECT_LE(rel_err(gr[static_cast<std::size_t>(k)], gw[static_cast<std::size_t>(k)]), 1e-13) << "site " << k;
  // HVP against the eager JVP of the eager gradient (forward over reverse, eagerly: finite
  // differences of the eager gradient).
  std::vector<Tensor> in = a;
  in.insert(in.end(), t.begin(), t.end());
  const std::vector<Tensor> h = tg::compile(tg::jvp(tg::grad(g))).run(s, in);
  const double eps = 1e-5;
  std::vector<Tensor> ap, am;
  for (int k = 0; k < kSites; ++k) {
    ap.push_back(add(s, a[static_cast<std::size_t>(k)], mul(s, t[static_cast<std::size_t>(k)], eps)));
    am.push_back(sub(s, a[static_cast<std::size_t>(k)], mul(s, t[static_cast<std::size_t>(k)], eps)));
  }
  const std::vector<Tensor> gp = ad::grad(s, eager, ap), gm = ad::grad(s, eager, am);
  for (int k = 0; k < kSites; ++k) {
    const Tensor fd = mul(s, sub(s, gp[static_cast<std::size_t>(k)], gm[static_cast<std::size_t>(k)]), 1 / (2 * eps));
    EXPECT_LE(rel_err(h[static_cast<std::size_t>(kSites + k)], fd), 1e-7) << "site " << k;
  }
}

TEST(GraphAd, SecondDerivativeByGradOfGrad) {
  // f(x) = sum(sin(x)·x) on a scalar: f'' = 2cos(x) - x·sin(x).
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {sum(s, mul(s, sin(s, in[0]), in[0]))}; },
                                {{Shape{}, DType::f64}});
  const tg::CompiledGraph g2 = tg::compile(tg::grad(tg::grad(g)));
  HeldSession s = backend().open_session();
  for (double x : {-1.3, 0.2, 2.5}) {
    const Tensor r = g2.run(s, std::vector<Tensor>{Tensor::scalar(x)})[0];
    EXPECT_NEAR(r.item<double>(), 2 * std::cos(x) - x * std::sin(x), 1e-13);
  }
}

TEST(GraphAd, InactiveInputsGetZerosAndRecordNothing) {
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {sum(s, exp(s, in[0]))}; },
                                {{Shape{4}, DType::f64}, {Shape{2, 2}, DType::f64}, {Shape{4}, DType::i64}});
  const tg::Graph dg = tg::grad(g);
  HeldSession s = backend().open_session();
  const Tensor x = Tensor::from_data<double>({4}, {0.0, 1.0, 2.0, 3.0});
  const std::vector<Tensor> r = tg::compile(dg).run(s, std::vector<Tensor>{x, Tensor::ones({2, 2}, DType::f64), Tensor::zeros({4}, DType::i64)});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_NEAR(r[0].item<double>({3}), std::exp(3.0), 1e-12);
  EXPECT_EQ(r[1].item<double>({1, 1}), 0.0);
  EXPECT_EQ(r[2].dtype(), DType::i64);
  // Forward (exp, sum) and backward (the broadcast of the seed, the product with exp):
  // nothing for the inactive inputs but their zeros.
  EXPECT_LE(dg.num_nodes(), 7) << dg.to_text();
}

/// 4 segments of 4 steps y = tanh(y·w) on [32, 32], then sum(y²); checkpointed or not.
tg::Graph chain(bool checkpointed) {
  return tg::trace([=](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const tg::TraceFn segment = [](Session& s, std::span<const Tensor> a) -> std::vector<Tensor> {
      Tensor y = a[0];
      for (int k = 0; k < 4; ++k) y = tanh(s, matmul(s, y, a[1]));
      return {y};
    };
    Tensor y = in[0];
    for (int k = 0; k < 4; ++k) {
      const std::vector<Tensor> args = {y, in[1]};
      y = checkpointed ? tg::checkpoint(s, segment, args)[0] : segment(s, args)[0];
    }
    return {sum_squares(s, y)};
  }, {{Shape{32, 32}, DType::f64}, {Shape{32, 32}, DType::f64}});
}

TEST(GraphAd, CheckpointsRecomputeSegmentsAndLowerPeakMemory) {
  std::mt19937_64 rng(8);
  const Tensor x = random_tensor(rng, Shape{32, 32}, DType::f64, -1, 1), w = random_tensor(rng, Shape{32, 32}, DType::f64, -0.3, 0.3);
  const Tensor t = random_tensor(rng, Shape{32, 32}, DType::f64), tw = random_tensor(rng, Shape{32, 32}, DType::f64);
  HeldSession s = backend().open_session();
  const tg::CompiledGraph plain = tg::compile(tg::grad(chain(false))), ckpt = tg::compile(tg::grad(chain(true)));
  EXPECT_GT(ckpt.num_steps(), plain.num_steps());  // the recomputations
  const std::vector<Tensor> want = plain.run(s, std::vector<Tensor>{x, w}), got = ckpt.run(s, std::vector<Tensor>{x, w});
  for (int k = 0; k < 2; ++k) EXPECT_LE(rel_err(got[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)]), 1e-15);
  // Between the passes only each segment's input stays (not its 4 intermediates).
  EXPECT_LT(static_cast<double>(ckpt.peak_buffer_bytes()), 0.6 * static_cast<double>(plain.peak_buffer_bytes()))
      << ckpt.peak_buffer_bytes() << " vs " << plain.peak_buffer_bytes();
  // Hessian-vector products through the checkpointed gradient are unchanged.
  const std::vector<Tensor> hin = {x, w, t, tw};
  const std::vector<Tensor> hp = tg::compile(tg::jvp(tg::grad(chain(false)))).run(s, hin);
  const std::vector<Tensor> hc = tg::compile(tg::jvp(tg::grad(chain(true)))).run(s, hin);
  for (std::size_t k = 0; k < hp.size(); ++k) EXPECT_LE(rel_err(hc[k], hp[k]), 1e-13) << k;
  // Outside a trace checkpoint is a plain call.
  const std::vector<Tensor> direct = tg::checkpoint(s, [](Session& s, std::span<const Tensor> a) -> std::vector<Tensor> { return {neg(s, a[0])}; }, hin);
  EXPECT_LE(rel_err(direct[0], neg(s, x)), 0.0);
}

TEST(GraphAd, UnsupportedCasesAreTypedAtTransformTime) {
  // The anti-diagonal of a 3×3 matrix is no chain of structural ops.
  const tg::Graph anti = tg::trace(
      [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {sum(s, in[0].as_strided_view(std::vector<std::int64_t>{3}, std::vector<std::int64_t>{2}, 2))}; },
      {{Shape{3, 3}, DType::f64}});
  expect_error<UnsupportedAdRule>([&] { tg::grad(anti); }, "graph.view");
  // Complete QR traces and runs, but has no derivative rule (as in eager AD).
  const tg::Graph q = tg::trace(
      [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {sum(s, qr(s, in[0], QrMode::complete).R)}; },
      {{Shape{3, 2}, DType::f64}});
  expect_error<UnsupportedAdRule>([&] { tg::grad(q); }, "qr");
  // An op without derivative rules is a constant unless it is differentiated.
  const tg::Graph piv = tg::trace(
      [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {sum(s, qr_pivoted(s, in[0]).R)}; },
      {{Shape{3, 2}, DType::f64}});
  expect_error<UnsupportedAdRule>([&] { tg::grad(piv); }, "qr_pivoted");
  const tg::Graph app = tg::trace(
      [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
        const QrResult f = qr(s, in[0]);
        return {sum(s, qr_append_columns(s, f.Q, f.R, in[1]).R)};
      },
      {{Shape{4, 2}, DType::f64}, {Shape{4, 1}, DType::f64}});
  expect_error<UnsupportedAdRule>([&] { tg::grad(app); }, "qr_append_columns");
  expect_error<ArgumentError>([&] { tg::grad(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {neg(s, in[0]), in[0]}; }, {{Shape{}, DType::f64}})); },
                              "graph.grad");
  expect_error<ShapeError>([&] { tg::grad(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {neg(s, in[0])}; }, {{Shape{2}, DType::f64}})); },
                           "graph.grad");
}

}  // namespace
