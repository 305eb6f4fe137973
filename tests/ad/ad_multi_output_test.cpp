// Multi-output primitives on the eager tape (Note [Multi-output nodes] in src/ad/tape.hpp):
// one node per call whatever the number of outputs, outputs that refer to (node, slot),
// and symbolic zeros for outputs the loss does not use — which makes eigenvalue- and
// singular-value-only losses exact at degenerate spectra.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ad/ad_check.hpp"
#include "ad/tape.hpp"

using namespace tenferro;
using tenferro::testing::max_abs_diff;
using tenferro::testing::rand_in;

namespace {

CpuBackend& backend() { return tenferro::testing::ad_backend(); }

/// Every element of a compact f64 tensor is finite.
bool all_finite(const Tensor& t) {
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.data_ptr<double>()[i])) return false;
  return true;
}

TEST(AdMultiOutput, OneNodePerCallAndEveryOutputDifferentiable) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(1);
  const Tensor a = rand_in(rng, {4, 3}, DType::f64, -1, 1);
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(a);
  const ad::SvdTriple r = ad::svd(ctx, x, SvdMode::thin);
  EXPECT_EQ(ctx.tape_size(), 1u);  // no packing concatenate, no slice nodes
  EXPECT_TRUE(r.U.requires_grad());
  EXPECT_TRUE(r.S.requires_grad());
  EXPECT_TRUE(r.Vh.requires_grad());
  EXPECT_EQ(r.S.dtype(), DType::f64);
  const ad::QrPair q = ad::qr(ctx, x);
  EXPECT_EQ(ctx.tape_size(), 2u);
  const ad::EighPair e = ad::eigh(ctx, ad::matmul(ctx, ad::transpose(ctx, x, {1, 0}), x));
  EXPECT_EQ(ctx.tape_size(), 5u);  // transpose, matmul, eigh
  EXPECT_TRUE(e.W.requires_grad() && e.V.requires_grad());
  // Both outputs of one node reach the same leaf: the contributions add.
  ctx.backward(ad::add(ctx, ad::sum(ctx, q.R), ad::sum(ctx, ad::mul(ctx, q.Q, q.Q))));
  // d/dA [Σ R + ‖Q‖²] = d/dA Σ R (‖Q‖² = N is constant): compare with R alone.
  ad::Context ctx2(s);
  const ad::EagerTensor x2 = ctx2.leaf(a);
  ctx2.backward(ad::sum(ctx2, ad::qr(ctx2, x2).R));
  EXPECT_LE(max_abs_diff(s, x.grad(), x2.grad()), 1e-12);
}

TEST(AdMultiOutput, EighEigenvalueLossesAreExactAtDegenerateEigenvalues) {
  HeldSession s = backend().open_session();
  // diag(1, 1, 2) rotated: a doubly degenerate eigenvalue 1.
  const Tensor a = Tensor::from_row_major<double>({3, 3}, {1.5, 0.5, 0, 0.5, 1.5, 0, 0, 0, 1});
  {  // trace: the gradient is the identity (lower triangle read: diagonal 1, rest 0)
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(a);
    ctx.backward(ad::sum(ctx, ad::eigh(ctx, x).W));
    const Tensor g = x.grad();
    ASSERT_TRUE(all_finite(g));
    EXPECT_LE(max_abs_diff(s, g, Tensor::eye(3, DType::f64)), 1e-12);
  }
  {  // the non-degenerate eigenvalue 2 alone: gradient v·vᵀ with v = (1, 1, 0)/√2, as a
     // lower triangle (off-diagonal entries doubled)
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(a);
    const ad::EagerTensor w = ad::eigh(ctx, x).W;  // ascending: 1, 1, 2
    ctx.backward(ad::sum(ctx, ad::slice(ctx, w, {2}, {3})));
    const Tensor want = Tensor::from_row_major<double>({3, 3}, {0.5, 0, 0, 1.0, 0.5, 0, 0, 0, 0});
    ASSERT_TRUE(all_finite(x.grad()));
    EXPECT_LE(max_abs_diff(s, x.grad(), want), 1e-12);
  }
}

TEST(AdMultiOutput, EighEigenvectorLossIsFiniteAtDegenerateEigenvalues) {
  HeldSession s = backend().open_session();
  // A = I: every gap is 0. Σ V∘V = N does not depend on A (gradient 0), but the exact rule
  // forms (1/0)·0; the broadened one drops the degenerate term.
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(Tensor::eye(3, DType::f64));
  const ad::EagerTensor v = ad::eigh(ctx, x).V;
  ctx.backward(ad::sum(ctx, ad::mul(ctx, v, v)));
  ASSERT_TRUE(all_finite(x.grad()));
  EXPECT_LE(max_abs_diff(s, x.grad(), Tensor::zeros({3, 3}, DType::f64)), 1e-12);
  // Away from degeneracy the broadening is invisible: V·diag(w)·Vᵀ = A gives Ā = 1
  // (lower triangle read: diagonal 1, strictly lower 2, upper 0).
  ad::Context ctx2(s);
  const ad::EagerTensor a = ctx2.leaf(Tensor::from_row_major<double>({3, 3}, {2, 0.5, 0, 0.5, 1, 0.25, 0, 0.25, -1}));
  const ad::EighPair e = ad::eigh(ctx2, a);
  ctx2.backward(ad::sum(ctx2, ad::matmul(ctx2, ad::mul(ctx2, e.V, ad::reshape(ctx2, e.W, {1, 3})), ad::transpose(ctx2, e.V, {1, 0}))));
  EXPECT_LE(max_abs_diff(s, a.grad(), Tensor::from_row_major<double>({3, 3}, {1, 0, 0, 2, 1, 0, 2, 2, 1})), 1e-9);
}

TEST(AdMultiOutput, EigEigenvalueLossIsExactAtRepeatedEigenvalues) {
  HeldSession s = backend().open_session();
  // Eigenvalues 1, 1, 3 with independent eigenvectors (V invertible).
  const Tensor a = Tensor::from_row_major<double>({3, 3}, {1, 0, 1, 0, 1, 0, 0, 0, 3});
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(a);
  ctx.backward(ad::sum(ctx, ad::real(ctx, ad::eig(ctx, x).W)));  // Re tr A
  ASSERT_TRUE(all_finite(x.grad()));
  EXPECT_LE(max_abs_diff(s, x.grad(), Tensor::eye(3, DType::f64)), 1e-10);
  ad::Context ctx2(s);
  const ad::EagerTensor x2 = ctx2.leaf(a);
  ctx2.backward(ad::sum(ctx2, ad::real(ctx2, ad::eigvals(ctx2, x2))));
  EXPECT_LE(max_abs_diff(s, x2.grad(), Tensor::eye(3, DType::f64)), 1e-10);
}

TEST(AdMultiOutput, SingularValueLossThroughSvdIsExactAtDegenerateValues) {
  HeldSession s = backend().open_session();
  // The identity: every singular value is 1, F⁻ is 1/0 everywhere off the diagonal.
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(Tensor::eye(3, DType::f64));
  const ad::SvdTriple r = ad::svd(ctx, x, SvdMode::thin, ad::SvdAdOptions{.eta = 0.0});
  ctx.backward(ad::sum(ctx, r.S));  // nuclear norm: gradient U·Vh = I
  ASSERT_TRUE(all_finite(x.grad()));
  EXPECT_LE(max_abs_diff(s, x.grad(), Tensor::eye(3, DType::f64)), 1e-12);
}

TEST(AdMultiOutput, SlogdetRecordsOneNodeForBothOutputs) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(2);
  const Tensor a = rand_in(rng, {3, 3}, DType::c128, -1, 1);
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(a);
  const ad::SlogdetPair p = ad::slogdet(ctx, x);
  EXPECT_EQ(ctx.tape_size(), 1u);
  EXPECT_TRUE(p.sign.requires_grad() && p.logabsdet.requires_grad());
  // Real input: the sign is a constant.
  ad::Context ctx2(s);
  const ad::SlogdetPair q = ad::slogdet(ctx2, ctx2.leaf(rand_in(rng, {3, 3}, DType::f64, -1, 1)));
  EXPECT_FALSE(q.sign.requires_grad());
  EXPECT_TRUE(q.logabsdet.requires_grad());
}

TEST(AdMultiOutput, TangentsOfEveryOutput) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(3);
  const Tensor a = rand_in(rng, {4, 3}, DType::f64, -1, 1);
  const Tensor da = rand_in(rng, {4, 3}, DType::f64, -1, 1);
  // Forward mode through svd and qr matches central differences of each output.
  const double h = 1e-6;
  const auto shifted = [&](double t) { return add(s, a, mul(s, da, t)); };
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.with_tangent(ad::EagerTensor(a), da);
  const ad::QrPair q = ad::qr(ctx, x);
  const QrResult qp = qr(s, shifted(h)), qm = qr(s, shifted(-h));
  const Tensor fd_q = mul(s, sub(s, qp.Q, qm.Q), 0.5 / h), fd_r = mul(s, sub(s, qp.R, qm.R), 0.5 / h);
  EXPECT_LE(max_abs_diff(s, q.Q.tangent(), fd_q), 1e-6);
  EXPECT_LE(max_abs_diff(s, q.R.tangent(), fd_r), 1e-6);
  const ad::SvdTriple r = ad::svd(ctx, x, SvdMode::thin);
  const SvdResult sp = svd(s, shifted(h), SvdMode::thin), sm = svd(s, shifted(-h), SvdMode::thin);
  EXPECT_LE(max_abs_diff(s, r.S.tangent(), mul(s, sub(s, sp.S, sm.S), 0.5 / h)), 1e-6);
}

}  // namespace

namespace {

// Note [Typed attributes]: a recorded node carries the struct its catalogue row names.
TEST(AdTypedAttributes, NodesCarryTheCatalogueStruct) {
  static_assert(std::is_same_v<op_attrs_t<OpId::sum>, ReduceAttrs>);
  static_assert(std::is_same_v<op_attrs_t<OpId::svd>, SvdAttrs>);
  static_assert(std::is_same_v<op_attrs_t<OpId::add>, NoAttrs>);
  EXPECT_EQ(op_info(OpId::triangular_solve).attrs, "TriangularSolveAttrs");
  for (int i = 0; i < kNumOps; ++i) EXPECT_LT(op_attrs_index(static_cast<OpId>(i)), std::variant_size_v<OpAttrs>);
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(4);
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(rand_in(rng, {3, 4, 2}, DType::f64, -1, 1));
  (void)ad::sum(ctx, x, {-1, 0}, true);
  (void)ad::svd(ctx, ad::reshape(ctx, x, {6, 4}), SvdMode::thin, ad::SvdAdOptions{.eta = 1e-9});
  (void)ad::add(ctx, x, 1.0);
  const auto& nodes = ctx.tape().nodes;
  ASSERT_EQ(ctx.tape_size(), 4u);
  const ReduceAttrs& r = nodes[0].attr<ReduceAttrs>();
  EXPECT_EQ(r.axes, Dims({-1, 0}));
  EXPECT_TRUE(r.keepdims);
  EXPECT_FALSE(r.all_axes);
  EXPECT_EQ(nodes[1].attr<ReshapeAttrs>().shape, Dims({6, 4}));
  EXPECT_EQ(nodes[2].attr<SvdAttrs>().eta, 1e-9);
  EXPECT_FALSE(nodes[2].attr<SvdAttrs>().values_only);
  EXPECT_EQ(nodes[3].attrs.index(), op_attrs_index(OpId::add));
  // A reused node takes the new op's struct.
  ctx.clear_tape();
  (void)ad::mul(ctx, x, 2.0);
  EXPECT_TRUE(std::holds_alternative<NoAttrs>(ctx.tape().nodes[0].attrs));
}

}  // namespace
