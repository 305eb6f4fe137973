// Sliced einsum execution (PlanOptions' memory limit): results equal the unsliced
// contraction for random expressions (real and complex, every layout, repeated labels,
// sliced labels kept in the output and summed), einsum_path reports the slices, and
// EinsumPlan runs any range of slices into or onto a caller's buffer, in lanes or not.
#include <gtest/gtest.h>

#include <random>

#include "einsum/einsum_ref.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::einsum_slice_test {
namespace {

using testing::expect_error;
using testing::expect_matches;

struct Case {
  std::string subscripts;
  std::vector<Tensor> ops;
  testing::RefExpr ref;
};

// 3..5 operands over labels a..f (extents 1..6), a few repeated within an operand,
// output a random subset.
Case random_case(std::mt19937_64& rng, DType dt) {
  auto pick = [&](int lo, int hi) { return static_cast<int>(testing::uniform(rng, lo, hi)); };
  Case c;
  const int n = pick(2, 5);
  std::vector<std::int64_t> ext(6);
  for (auto& x : ext) x = pick(1, 6);
  std::vector<int> count(6, 0);
  for (int k = 0; k < n; ++k) {
    std::string sub;
    Shape shape;
    std::vector<int> labels;
    const int r = pick(1, 4);
    for (int i = 0; i < r; ++i) {
      const int l = (!labels.empty() && pick(0, 9) == 0) ? labels[0] : pick(0, 5);
      labels.push_back(l);
      sub += static_cast<char>('a' + l);
      shape.push_back(ext[l]);
      ++count[l];
    }
    c.subscripts += (k ? "," : "") + sub;
    c.ref.inputs.push_back(std::vector<int>(labels.begin(), labels.end()));
    c.ops.push_back(testing::random_layout(rng, shape, dt, testing::kAllLayouts[pick(0, 3)], -1, 1));
  }
  c.subscripts += "->";
  for (int l = 0; l < 6; ++l)
    if (count[l] > 0 && pick(0, 2) == 0) {
      c.subscripts += static_cast<char>('a' + l);
      c.ref.output.push_back(l);
    }
  return c;
}

EinsumOptions limited(double elements) {
  EinsumOptions o;
  o.plan.max_intermediate_elements = elements;
  return o;
}

TEST(EinsumSlice, RandomExpressionsEqualTheUnslicedContraction) {
  std::mt19937_64 rng(99);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  int sliced = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const DType dt = testing::kInexactDTypes[trial % 4];
    const Case c = random_case(rng, dt);
    SCOPED_TRACE(c.subscripts);
    std::vector<Shape> shapes;
    for (const Tensor& t : c.ops) shapes.push_back(t.shape());
    const auto whole = einsum_path(c.subscripts, shapes);
    const double limit = std::max(1.0, std::floor(whole.cost.largest_intermediate / 3));
    EinsumPathInfo info;
    try {
      info = einsum_path(c.subscripts, shapes, limited(limit));
    } catch (const ArgumentError&) {
      continue;  // a step's result cannot be cut below the limit
    }
    Tensor got;
    ASSERT_NO_THROW(got = einsum(s, c.subscripts, c.ops, limited(limit)));
    Shape shape;
    const auto want = testing::reference_einsum(c.ref, c.ops, shape);
    ASSERT_EQ(got.shape(), shape);
    const double tol = dt == DType::f32 || dt == DType::c64 ? 2e-5 : 1e-12;
    expect_matches(got, want, tol, "sliced einsum");
    if (info.num_slices > 1) ++sliced;
    EXPECT_LE(info.cost.largest_intermediate, limit);
  }
  EXPECT_GT(sliced, 60);
}

TEST(EinsumSlice, PathReportsTheSlicedLabels) {
  // ij,jk,kl->il with j = 8: a limit of 16 elements per intermediate.
  std::vector<Shape> shapes = {{4, 8}, {8, 8}, {8, 4}};
  const auto info = einsum_path("ij,jk,kl->il", shapes, limited(16));
  ASSERT_FALSE(info.sliced.empty());
  std::int64_t slices = 1;
  for (const auto& l : info.sliced) {
    EXPECT_TRUE(l.label == 'i' || l.label == 'j' || l.label == 'k' || l.label == 'l') << l.label;
    slices *= l.parts;
  }
  EXPECT_EQ(info.num_slices, slices);
  EXPECT_LE(info.cost.largest_intermediate, 16);
  EXPECT_GE(info.slicing_overhead, 1.0);
  EXPECT_NE(info.optimizer, EinsumOptimizer::automatic);
  // Bytes: einsum_path plans for f64 (8-byte elements).
  EinsumOptions ob;
  ob.plan.max_intermediate_bytes = 16 * 8;
  EXPECT_EQ(einsum_path("ij,jk,kl->il", shapes, ob).num_slices, info.num_slices);
  // A prepared plan counts bytes of its result dtype: 16 c128 elements are 256 bytes.
  const std::vector<DType> c128(3, DType::c128);
  ob.plan.max_intermediate_bytes = 16 * 16;
  EXPECT_EQ(EinsumPlan("ij,jk,kl->il", shapes, c128, ob).num_slices(), info.num_slices);
  ob.plan.max_intermediate_bytes = 16 * 8;  // 8 c128 elements: more slices
  EXPECT_GT(EinsumPlan("ij,jk,kl->il", shapes, c128, ob).num_slices(), info.num_slices);
}

TEST(EinsumSlice, PlanRunsAnyPartitionOfSlices) {
  std::mt19937_64 rng(5);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType dt : {DType::f64, DType::c128}) {
    const Tensor a = testing::random_tensor(rng, {6, 4, 3}, dt), b = testing::random_tensor(rng, {4, 5}, dt),
                 c = testing::random_tensor(rng, {5, 3, 2}, dt);
    const std::vector<Tensor> ops = {a, b, c};
    const std::string subs = "ijx,jk,kxl->il";
    const Tensor full = einsum(s, subs, ops);
    const EinsumPlan plan = EinsumPlan::for_operands(subs, ops, limited(6));
    ASSERT_GT(plan.num_slices(), 2);
    EXPECT_EQ(plan.path().num_slices, plan.num_slices());
    Shape ref_shape;
    expect_matches(plan.execute(s, ops), testing::reference_einsum({{{0, 1, 9}, {1, 2}, {2, 9, 3}}, {0, 3}}, ops, ref_shape),
                   1e-12, "execute");
    // Two halves, run apart and summed, give the result.
    const std::int64_t mid = plan.num_slices() / 2;
    Tensor lo = Tensor::full({6, 2}, 7.0, dt), hi = Tensor::full({6, 2}, 7.0, dt);
    plan.execute_slices_into(s, ops, 0, mid, lo);
    plan.execute_slices_into(s, ops, mid, plan.num_slices(), hi);
    const Tensor sum = add(s, lo, hi);
    expect_matches(sum, [&] {
      std::vector<std::complex<double>> v;
      testing::for_each_index(full.shape(), [&](const Dims& i) { v.push_back(testing::value_at(full, i)); });
      return v;
    }(), 1e-12, "halves");
    // Accumulate onto a buffer holding 1: result + 1.
    Tensor acc = Tensor::full({6, 2}, 1.0, dt);
    plan.execute_slices_into(s, ops, 0, plan.num_slices(), acc, true);
    const Tensor diff = sub(s, acc, full);
    testing::for_each_index(diff.shape(), [&](const Dims& i) { EXPECT_NEAR(std::abs(testing::value_at(diff, i) - 1.0), 0, 1e-12); });
    // An empty range writes zeros (or leaves the buffer when accumulating).
    Tensor z = Tensor::full({6, 2}, 3.0, dt);
    plan.execute_slices_into(s, ops, 2, 2, z);
    testing::for_each_index(z.shape(), [&](const Dims& i) { EXPECT_EQ(testing::value_at(z, i), std::complex<double>(0)); });
  }
}

TEST(EinsumSlice, IntoAStridedBufferAndUnslicedPlansHaveOneSlice) {
  std::mt19937_64 rng(6);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor a = testing::random_tensor(rng, {8, 6}, DType::f64), b = testing::random_tensor(rng, {6, 8}, DType::f64),
               c = testing::random_tensor(rng, {8, 8}, DType::f64);
  const std::vector<Tensor> ops = {a, b, c};
  const Tensor full = einsum(s, "ij,jk,kl->li", ops);
  const Tensor base = Tensor::zeros({8, 8}, DType::f64);
  const Tensor out = base.permute_view({1, 0});
  einsum_into(s, "ij,jk,kl->li", ops, out, limited(8));
  const Tensor d = sub(s, out, full);
  testing::for_each_index(d.shape(), [&](const Dims& i) { EXPECT_NEAR(testing::value_at(d, i).real(), 0, 1e-12); });
  const EinsumPlan plain = EinsumPlan::for_operands("ij,jk,kl->li", ops);
  EXPECT_EQ(plain.num_slices(), 1);
  EXPECT_TRUE(plain.path().sliced.empty());
  Tensor acc = Tensor::full({8, 8}, 2.0, DType::f64);
  plain.execute_slices_into(s, ops, 0, 1, acc, true);
  const Tensor d2 = sub(s, acc, full);
  testing::for_each_index(d2.shape(), [&](const Dims& i) { EXPECT_NEAR(testing::value_at(d2, i).real(), 2, 1e-12); });
}

TEST(EinsumSlice, ErrorsLeaveTheOutputUntouched) {
  std::mt19937_64 rng(7);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor a = testing::random_tensor(rng, {6, 5}, DType::f64), b = testing::random_tensor(rng, {5, 6}, DType::f64);
  const std::vector<Tensor> ops = {a, b};
  Tensor out = Tensor::full({6, 6}, 4.0, DType::f64);
  auto untouched = [&] {
    testing::for_each_index(out.shape(), [&](const Dims& i) { EXPECT_EQ(testing::value_at(out, i).real(), 4.0); });
  };
  // The result alone has 36 elements; 0.5 cannot be met.
  expect_error<ArgumentError>([&] { einsum_into(s, "ij,jk->ik", ops, out, limited(0.5)); }, "einsum");
  untouched();
  expect_error<ArgumentError>([&] { einsum_into(s, "ij,jk->ik", ops, out, limited(-2)); }, "einsum");
  untouched();
  const EinsumPlan plan = EinsumPlan::for_operands("ij,jk->ik", ops, limited(6));
  EXPECT_GT(plan.num_slices(), 1);
  expect_error<ArgumentError>([&] { plan.execute_slices_into(s, ops, 0, plan.num_slices() + 1, out); }, "einsum");
  expect_error<ArgumentError>([&] { plan.execute_slices_into(s, ops, 2, 1, out); }, "einsum");
  expect_error<ArgumentError>([&] { plan.execute_slices_into(s, ops, -1, 1, out); }, "einsum");
  const Tensor wrong = Tensor::zeros({6, 5}, DType::f64);
  expect_error<ShapeError>([&] { plan.execute_slices_into(s, ops, 0, 1, wrong); }, "einsum");
  untouched();
  // Two operands: the sliced result equals the plain product.
  const Tensor got = plan.execute(s, ops);
  const Tensor d = sub(s, got, einsum(s, "ij,jk->ik", ops));
  testing::for_each_index(d.shape(), [&](const Dims& i) { EXPECT_NEAR(testing::value_at(d, i).real(), 0, 1e-12); });
}

// Slices in lanes (PlanOptions::slice_lanes): on 1 and 3 threads, sequential and
// parallel, sliced output labels (lanes own blocks of the output) and summed ones only
// (lanes fill partial results), whole runs, ranges of slices and accumulation all give
// the unsliced result; the lanes really run exactly when they may.
TEST(EinsumSlice, SlicesInLanesEqualTheUnslicedContraction) {
  std::mt19937_64 rng(17);
  struct Expr {
    std::string subs;
    testing::RefExpr ref;
    std::vector<Shape> shapes;
    double limit;
  };
  const std::vector<Expr> exprs = {
      // i and l kept: the output's ranges go to lanes.
      {"ij,jk,kl->il", {{{0, 1}, {1, 2}, {2, 3}}, {0, 3}}, {{6, 8}, {8, 8}, {8, 6}}, 12},
      // Everything summed: one output range, partial results per lane.
      {"ij,jk,ki->", {{{0, 1}, {1, 2}, {2, 0}}, {}}, {{6, 8}, {8, 5}, {5, 6}}, 5},
      // A kept label and a summed one sliced together.
      {"ijx,jk,kxl->il", {{{0, 1, 9}, {1, 2}, {2, 9, 3}}, {0, 3}}, {{6, 4, 3}, {4, 5}, {5, 3, 2}}, 6},
  };
  int owned_blocks = 0, partials = 0;  // parallel runs of either kind
  for (const int threads : {1, 3}) {
    CpuBackendOptions bo;
    bo.num_threads = threads;
    CpuBackend backend(bo);
    for (const Expr& e : exprs)
      for (DType dt : {DType::f64, DType::c128})
        for (const int lanes : {0, 1, 2}) {
          SCOPED_TRACE(e.subs + " threads=" + std::to_string(threads) + " lanes=" + std::to_string(lanes));
          std::vector<Tensor> ops;
          for (const Shape& sh : e.shapes) ops.push_back(testing::random_layout(rng, sh, dt, testing::kAllLayouts[rng() % 4], -1, 1));
          EinsumOptions o = limited(e.limit);
          o.plan.slice_lanes = lanes;
          const EinsumPlan plan = EinsumPlan::for_operands(e.subs, ops, o);
          ASSERT_GT(plan.num_slices(), 3);
          std::int64_t ranges = 1;  // output ranges: parts of the sliced labels kept in the output
          for (const auto& l : plan.path().sliced)
            if (e.subs.substr(e.subs.find("->")).find(static_cast<char>(l.label)) != std::string::npos) ranges *= l.parts;
          (ranges >= 2 ? owned_blocks : partials) += threads > 1 && lanes != 1;
          Shape shape;
          const auto want = testing::reference_einsum(e.ref, ops, shape);
          // lane_stats needs the session closed.
          const std::uint64_t before = backend.lane_stats().calls;
          {
            HeldSession s = backend.open_session();
            expect_matches(plan.execute(s, ops), want, 1e-12, "execute");
          }
          const bool parallel = threads > 1 && lanes != 1;
          EXPECT_EQ(backend.lane_stats().calls - before, parallel ? 1u : 0u);
          HeldSession s = backend.open_session();
          expect_matches(einsum(s, e.subs, ops, o), want, 1e-12, "einsum");
          // Three ranges of slices run apart, the middle one onto the first's result.
          const std::int64_t n = plan.num_slices(), a = n / 3, b = 2 * n / 3;
          Tensor first = Tensor::full(plan.output_shape().span(), 5.0, dt), last = Tensor::full(plan.output_shape().span(), 5.0, dt);
          plan.execute_slices_into(s, ops, 0, a, first);
          plan.execute_slices_into(s, ops, a, b, first, true);
          plan.execute_slices_into(s, ops, b, n, last);
          expect_matches(add(s, first, last), want, 1e-12, "ranges");
        }
  }
  EXPECT_GT(owned_blocks, 0);
  EXPECT_GT(partials, 0);
}

TEST(EinsumSlice, NegativeSliceLanesIsAnArgumentError) {
  const std::vector<Shape> shapes = {{6, 8}, {8, 8}, {8, 6}};
  EinsumOptions o = limited(12);
  o.plan.slice_lanes = -1;
  const std::string what = expect_error<ArgumentError>([&] { (void)einsum_path("ij,jk,kl->il", shapes, o); }, "einsum");
  EXPECT_NE(what.find("slice_lanes is -1"), std::string::npos) << what;
}

}  // namespace
}  // namespace tenferro::einsum_slice_test
