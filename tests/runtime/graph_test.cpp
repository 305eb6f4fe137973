// Traced graphs (tenferro/graph.hpp): tracing records the kernel calls with the front
// ends' inferred shapes and executes nothing; compiled runs equal the direct ops on
// every dtype and input layout, on random programs, and with einsum inside; errors are
// the ops' typed errors at trace time and typed signature errors at run time, with
// nothing written; a held session's steady-state run_into allocates nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>

#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/backends.hpp"
#include "support/test_util.hpp"
#include "cpu/context.hpp"
#include "runtime/compiled.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using tenferro::testing::expect_error;
using tenferro::testing::random_layout;
using tenferro::testing::random_tensor;
using tenferro::testing::value_at;
namespace tg = tenferro::graph;
using Fn = tg::TraceFn;

CpuBackend& backend() { return tenferro::testing::one_thread_backend(); }

void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  tenferro::testing::for_each_index(want.shape(), [&](const Dims& i) {
    const std::complex<double> a = value_at(got, i), b = value_at(want, i);
    EXPECT_LE(std::abs(a - b), tol * (1 + std::abs(b))) << "at " << i.to_string() << ": " << a << " vs " << b;
  });
}

/// f on the inputs, or on compact copies of them (for an f that writes into its inputs).
std::vector<Tensor> run_direct(const Fn& f, std::span<const Tensor> in, bool copy_inputs = false) {
  HeldSession s = backend().open_session();
  if (!copy_inputs) return f(s, in);
  std::vector<Tensor> copies;
  for (const Tensor& t : in) {
    copies.push_back(Tensor::empty(t.shape().span(), t.dtype()));
    copy_into(s, t, copies.back());
  }
  return f(s, copies);
}

std::vector<Tensor> run_compiled(const Fn& f, std::span<const Tensor> in) {
  std::vector<tg::ValueSpec> specs;
  for (const Tensor& t : in) specs.push_back({t.shape(), t.dtype()});
  const tg::CompiledGraph c = tg::compile(tg::trace(f, specs));
  HeldSession s = backend().open_session();
  return c.run(s, in);
}

void expect_same(const Fn& f, std::span<const Tensor> in, double tol, bool copy_inputs = false) {
  const std::vector<Tensor> want = run_direct(f, in, copy_inputs);
  const std::vector<Tensor> got = run_compiled(f, in);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    SCOPED_TRACE("result " + std::to_string(k));
    expect_close(got[k], want[k], tol);
  }
}

double tol_for(DType d) { return d == DType::f32 || d == DType::c64 ? 2e-5 : 1e-12; }

// ---------------------------------------------------------------- tracing

TEST(GraphTrace, RecordsKernelCallsWithInferredShapesAndExecutesNothing) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    EXPECT_EQ(s.device(), DeviceKind::trace);
    const Tensor y = tanh(s, add(s, mul(s, in[0], in[1]), 1.0));
    return {sum(s, y, std::vector<std::int64_t>{0})};
  };
  const tg::Graph g = tg::trace(f, {{Shape{3, 4}, DType::f64}, {Shape{3, 4}, DType::f64}});
  EXPECT_EQ(g.num_inputs(), 2);
  EXPECT_EQ(g.num_outputs(), 1);
  EXPECT_EQ(g.num_nodes(), 4);
  EXPECT_EQ(g.output(0).shape, (Shape{4}));
  EXPECT_EQ(g.output(0).dtype, DType::f64);
  EXPECT_EQ(g.to_text(),
            "graph(%0: f64[3, 4], %1: f64[3, 4]) {\n"
            "  %2 = mul %0, %1 : f64[3, 4]\n"
            "  %3 = add %2, 1.0 : f64[3, 4]\n"
            "  %4 = tanh %3 : f64[3, 4]\n"
            "  %5 = sum %4 {axes = [0]} : f64[4]\n"
            "  return %5\n"
            "}\n");
}

TEST(GraphTrace, ViewsBecomeWindowsAndPromotionsBecomeCasts) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {mul(s, in[0].transpose_view(), in[1])};
  };
  const tg::Graph g = tg::trace(f, {{Shape{2, 3}, DType::f32}, {Shape{3, 2}, DType::f64}});
  const std::string text = g.to_text();
  EXPECT_THAT(text, ::testing::HasSubstr("view %0 {offset = 0, strides = [2, 1]} : f32[3, 2]"));
  EXPECT_THAT(text, ::testing::HasSubstr("cast"));
  EXPECT_EQ(g.output(0).dtype, DType::f64);
}

TEST(GraphTrace, FingerprintIsStructural) {
  auto traced = [](double c, const Shape& shape, const Tensor& k) {
    const Fn f = [=](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {add(s, mul(s, in[0], c), k)}; };
    return tg::trace(f, {{shape, DType::f64}});
  };
  std::mt19937_64 rng(1);
  const Tensor k1 = random_tensor(rng, Shape{2, 2}, DType::f64), k2 = random_tensor(rng, Shape{2, 2}, DType::f64);
  const std::uint64_t base = traced(2.0, Shape{2, 2}, k1).fingerprint();
  EXPECT_EQ(base, traced(2.0, Shape{2, 2}, k1).fingerprint());
  EXPECT_EQ(base, traced(2.0, Shape{2, 2}, k2).fingerprint()) << "constant data is not part of the fingerprint";
  EXPECT_NE(base, traced(3.0, Shape{2, 2}, k1).fingerprint()) << "scalar attributes are";
  EXPECT_NE(base, traced(2.0, Shape{2, 1}, k1).fingerprint()) << "shapes are";
}

TEST(GraphTrace, ErrorsAreTheOpsTypedErrors) {
  const std::vector<tg::ValueSpec> specs = {{Shape{2, 3}, DType::f64}, {Shape{4}, DType::f64}};
  expect_error<ShapeError>([&] { tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {mul(s, in[0], in[1])}; }, specs); },
                           "mul");
  expect_error<RankError>(
      [&] { tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {svd(s, in[1]).S}; }, specs); }, "svd");
  expect_error<NumericalError>(
      [&] {
        tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {div(s, in[0], std::int64_t{0})}; },
                  {{Shape{2}, DType::i64}});
      },
      "div");  // a zero scalar divisor is refused at trace time; a tensor's data is checked when the graph runs
  const Tensor host = Tensor::zeros({2, 3}, DType::f64);
  std::string msg = expect_error<SessionEntryError>(
      [&] {
        tg::trace([&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
          add_into(s, in[0], 1.0, host);
          return {};
        }, specs);
      },
      "add");
  EXPECT_THAT(msg, ::testing::HasSubstr("host tensor"));
  expect_error<ArgumentError>([&] { tg::trace([](Session&, std::span<const Tensor>) -> std::vector<Tensor> { return {Tensor()}; }, specs); },
                              "trace");
  expect_error<ArgumentError>([&] { tg::trace([](Session&, std::span<const Tensor>) -> std::vector<Tensor> { return {}; }, {{Shape{-1}, DType::f64}}); },
                              "trace");
}

/// A rank-1 tensor of dtype d with the given values.
Tensor vector_of(Session& s, DType d, std::initializer_list<double> values) {
  return cast(s, Tensor::from_data<double>({static_cast<std::int64_t>(values.size())}, values), d);
}

// grouped_gemm records one dot_general per item (an operand of another dtype cast to
// c's first); compiled equals direct over dtypes, beta, conj flags and layouts.
TEST(GraphCompile, GroupedGemmIsOneProductPerItem) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor c1 = mul(s, in[2], 1.0), c2 = mul(s, in[2], 0.0);
    const Tensor a2 = cast(s, in[0].slice_view(1, 0, 3), DType::f32);  // promoted to c2's dtype
    const Tensor b2 = in[1].slice_view(0, 0, 3);                        // a window: rows 0..2
    const GemmItem items[2] = {{&in[0], &in[1], &c1, 2.0, -0.5, false, true}, {&a2, &b2, &c2, 1.0, 0.0, true, false}};
    grouped_gemm(s, items);
    return {c1, c2};
  };
  for (DType d : {DType::f64, DType::c128}) {
    for (tenferro::testing::Layout layout : tenferro::testing::kAllLayouts) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + tenferro::testing::layout_name(layout));
      std::mt19937_64 rng(5);
      const std::vector<Tensor> in = {random_layout(rng, Shape{3, 4}, d, layout), random_layout(rng, Shape{4, 2}, d, layout), random_layout(rng, Shape{3, 2}, d, layout)};
      expect_same(f, in, 1e-6);  // a2 is rounded to f32 in both
    }
  }
  const tg::Graph g = tg::trace(f, {{Shape{3, 4}, DType::f64}, {Shape{4, 2}, DType::f64}, {Shape{3, 2}, DType::f64}});
  const std::string text = g.to_text();
  std::size_t dots = 0;
  for (std::size_t at = text.find("dot_general"); at != std::string::npos; at = text.find("dot_general", at + 1)) ++dots;
  EXPECT_EQ(dots, 2u) << text;
}

// The checks the front ends make on data (integer div, rem and pow by a tensor, exact
// convert) are skipped while tracing and run when the graph runs: the eager errors,
// naming the op, with nothing written into run_into's outputs; on good data the
// compiled results equal the direct ones.
TEST(GraphCompile, DataChecksRunWhenTheGraphRuns) {
  HeldSession s = backend().open_session();
  const Fn ints = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {div(s, in[0], in[1]), rem(s, in[0], in[1]), pow(s, in[0], in[1])};
  };
  const tg::CompiledGraph ci = tg::compile(tg::trace(ints, {{Shape{4}, DType::i64}, {Shape{4}, DType::i64}}));
  const Tensor a = vector_of(s, DType::i64, {7, -9, 4, 5}), b = vector_of(s, DType::i64, {2, 4, 1, 3});
  const std::vector<Tensor> got = ci.run(s, std::vector<Tensor>{a, b}), want = ints(s, std::vector<Tensor>{a, b});
  for (int k = 0; k < 3; ++k) expect_close(got[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)], 0);
  const std::vector<Tensor> outs = {Tensor::full({4}, 5, DType::i64), Tensor::full({4}, 5, DType::i64), Tensor::full({4}, 5, DType::i64)};
  std::vector<std::vector<unsigned char>> before;
  for (const Tensor& o : outs) before.push_back(tenferro::testing::snapshot(o));
  auto untouched = [&] {
    for (std::size_t k = 0; k < outs.size(); ++k) tenferro::testing::expect_untouched(outs[k], before[k]);
  };
  std::string msg = expect_error<NumericalError>([&] { ci.run_into(s, std::vector<Tensor>{a, vector_of(s, DType::i64, {2, 0, 1, 3})}, outs); }, "div");
  EXPECT_THAT(msg, ::testing::HasSubstr("integer division by zero"));
  untouched();
  // rem alone (no div before it), and pow's negative exponent.
  const tg::CompiledGraph cr = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {rem(s, in[0], in[1])}; },
                                                     {{Shape{4}, DType::i32}, {Shape{4}, DType::i32}}));
  expect_error<NumericalError>([&] { cr.run(s, std::vector<Tensor>{vector_of(s, DType::i32, {1, 2, 3, 4}), vector_of(s, DType::i32, {1, 1, 1, 0})}); }, "rem");
  msg = expect_error<ArgumentError>([&] { ci.run_into(s, std::vector<Tensor>{a, vector_of(s, DType::i64, {2, 4, -1, 3})}, outs); }, "pow");
  EXPECT_THAT(msg, ::testing::HasSubstr("negative integer exponent"));
  untouched();

  // convert: exact or an ArgumentError naming the element; cast is not checked.
  const Fn conv = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {convert(s, mul(s, in[0], 2.0), DType::i32), cast(s, in[0], DType::i32)};
  };
  const tg::CompiledGraph cc = tg::compile(tg::trace(conv, {{Shape{3}, DType::f64}}));
  const Tensor x = vector_of(s, DType::f64, {1.5, -2, 0.25});
  const std::vector<Tensor> cg = cc.run(s, std::vector<Tensor>{vector_of(s, DType::f64, {1.5, -2, 3})});
  const std::vector<Tensor> cw = conv(s, std::vector<Tensor>{vector_of(s, DType::f64, {1.5, -2, 3})});
  for (int k = 0; k < 2; ++k) expect_close(cg[static_cast<std::size_t>(k)], cw[static_cast<std::size_t>(k)], 0);
  const std::vector<Tensor> couts = {Tensor::full({3}, 5, DType::i32), Tensor::full({3}, 5, DType::i32)};
  const std::vector<unsigned char> cbefore = tenferro::testing::snapshot(couts[0]);
  msg = expect_error<ArgumentError>([&] { cc.run_into(s, std::vector<Tensor>{x}, couts); }, "convert");
  EXPECT_THAT(msg, ::testing::HasSubstr("does not convert exactly to i32"));
  tenferro::testing::expect_untouched(couts[0], cbefore);
  // Through a transform: the gradient graph replays convert (its value is needed), so
  // it checks too.
  const Fn loss = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor c = convert(s, in[0], DType::c64);
    return {sum(s, real(s, mul(s, c, c)))};
  };
  const tg::CompiledGraph cgrad = tg::compile(tg::grad(tg::trace(loss, {{Shape{3}, DType::f64}})));
  expect_close(cgrad.run(s, std::vector<Tensor>{x})[0], vector_of(s, DType::f64, {3, -4, 0.5}), 0);
  expect_error<ArgumentError>([&] { cgrad.run(s, std::vector<Tensor>{vector_of(s, DType::f64, {1, 1e300, 2})}); }, "convert");
}

TEST(GraphTrace, TheThreadsOwnSessionIsUnusableWhileTracing) {
  HeldSession outer = backend().open_session();
  const Tensor x = Tensor::ones({2}, DType::f64);
  const tg::Graph g = tg::trace([&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    tenferro::testing::expect_session_error([&] { (void)neg(outer, x); }, SessionEntryKind::Poisoned);
    tenferro::testing::expect_session_error([&] { (void)backend().open_session(); }, SessionEntryKind::Reentered);
    return {neg(s, in[0])};
  }, {{Shape{2}, DType::f64}});
  // Usable again afterwards, and the graph runs in it.
  const std::vector<Tensor> r = tg::compile(g).run(outer, std::vector<Tensor>{x});
  EXPECT_EQ(r[0].item<double>({1}), -1.0);
}

TEST(GraphTrace, ReadsOfAnotherTracesTensorAreRefused) {
  Tensor leaked;
  tg::trace([&](Session&, std::span<const Tensor> in) -> std::vector<Tensor> {
    leaked = in[0];
    return {in[0]};
  }, {{Shape{2}, DType::f64}});
  expect_error<ArgumentError>(
      [&] { tg::trace([&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {add(s, in[0], leaked)}; }, {{Shape{2}, DType::f64}}); },
      "add");
}

// ---------------------------------------------------------------- compiled runs

/// A program over every traceable family: elementwise with scalars and broadcasting,
/// analytic, conversion, reductions, views, structural copies, a scan and dot_general.
std::vector<Tensor> mixed_program(Session& s, std::span<const Tensor> in) {
  const Tensor& x = in[0];  // [3, 4]
  const Tensor& y = in[1];  // [4]
  const Tensor z = sub(s, exp(s, mul(s, x, 0.25)), x);
  const Tensor b = mul(s, z, y.reshape_view({1, 4}));  // broadcast along axis 0
  const Tensor r = sum(s, mul(s, b, conj(s, x)), std::vector<std::int64_t>{1});
  const Tensor t = transpose(s, b, std::vector<std::int64_t>{1, 0});  // [4, 3]
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  const Tensor m = dot_general(s, x, t, d);  // [3, 3]
  const Tensor c = cumsum(s, m, 0);
  const Tensor sl = add(s, c.slice_view(1, 0, 3, 2), 1.0);  // a strided window
  return {r, c, sl, maximum(s, real(s, m), 0.0)};
}

TEST(GraphCompile, EqualsTheDirectOpsOverDTypesAndInputLayouts) {
  for (DType d : tenferro::testing::kInexactDTypes)
    for (auto layout : tenferro::testing::kAllLayouts) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + tenferro::testing::layout_name(layout));
      std::mt19937_64 rng(7);
      const std::vector<Tensor> in = {random_layout(rng, Shape{3, 4}, d, layout, -1, 1), random_layout(rng, Shape{4}, d, layout, -1, 1)};
      expect_same(mixed_program, in, tol_for(d));
    }
}

TEST(GraphCompile, InPlaceWritesAreFunctional) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor& x = in[0];
    Tensor y = mul(s, x, 2.0);
    mul_into(s, y, 3.0, y);        // a second version of y's block
    add_into(s, x, 1.0, x);        // written into the input's block: the caller's input is not
    const Tensor part = y.slice_view(0, 0, 2);
    neg_into(s, part, part);       // a partial write: the rest of y is kept
    return {y, x};
  };
  const Tensor x = Tensor::from_data<double>({3}, {1.0, 2.0, 3.0});
  expect_same(f, std::vector<Tensor>{x}, 0, /*copy_inputs=*/true);
  const std::vector<Tensor> r = run_compiled(f, std::vector<Tensor>{x});
  EXPECT_EQ(x.item<double>({0}), 1.0) << "the run wrote into its input";
  EXPECT_EQ(r[0].item<double>({0}), -6.0);
  EXPECT_EQ(r[0].item<double>({2}), 18.0);
  EXPECT_EQ(r[1].item<double>({2}), 4.0);
}

TEST(GraphCompile, ConstantsAreHeldByTheGraph) {
  std::mt19937_64 rng(3);
  Tensor k = random_tensor(rng, Shape{2, 2}, DType::f64);
  const Tensor k_t = k.transpose_view();
  const Fn f = [&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {add(s, mul(s, in[0], k_t), Tensor::ones({2, 2}, DType::f64))};
  };
  const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{2, 2}, DType::f64}}));
  const Tensor x = random_tensor(rng, Shape{2, 2}, DType::f64);
  HeldSession s = backend().open_session();
  const Tensor want = add(s, mul(s, x, k_t), 1.0);
  expect_close(c.run(s, std::vector<Tensor>{x})[0], want, 1e-15);
}

TEST(GraphCompile, EinsumRecordsItsPairwiseSteps) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {einsum(s, "ij,jk,kl->li", in), einsum(s, "ii->", in.subspan(0, 1)), einsum(s, "ij,ij->ij", in.subspan(1, 2))};
  };
  std::mt19937_64 rng(5);
  for (DType d : {DType::f64, DType::c128}) {
    const std::vector<Tensor> in = {random_tensor(rng, Shape{4, 4}, d), random_tensor(rng, Shape{4, 4}, d), random_tensor(rng, Shape{4, 4}, d)};
    expect_same(f, in, 1e-12);
  }
  const tg::Graph g = tg::trace(f, {{Shape{4, 4}, DType::f64}, {Shape{4, 4}, DType::f64}, {Shape{4, 4}, DType::f64}});
  EXPECT_THAT(g.to_text(), ::testing::HasSubstr("dot_general"));
}

/// A random program of `steps` ops over a pool of [n, n] values (deterministic in seed).
Fn random_program(std::uint64_t seed, int steps) {
  return [=](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    std::mt19937_64 rng(seed);
    std::vector<Tensor> pool(in.begin(), in.end());
    auto pick = [&]() -> const Tensor& { return pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)]; };
    DotDims mm;
    mm.lhs_contracting = {1};
    mm.rhs_contracting = {0};
    for (int i = 0; i < steps; ++i) {
      const Tensor& a = pick();
      const Tensor& b = pick();
      switch (std::uniform_int_distribution<int>(0, 11)(rng)) {
        case 0: pool.push_back(add(s, a, b)); break;
        case 1: pool.push_back(mul(s, a, b)); break;
        case 2: pool.push_back(sub(s, a, 0.5)); break;
        case 3: pool.push_back(tanh(s, a)); break;
        case 4: pool.push_back(sin(s, mul(s, a, b.transpose_view()))); break;
        case 5: pool.push_back(dot_general(s, a, b, mm)); break;
        case 6: pool.push_back(mul(s, a, sum(s, b, std::vector<std::int64_t>{0}, true))); break;
        case 7: pool.push_back(transpose(s, a, std::vector<std::int64_t>{1, 0})); break;
        case 8: pool.push_back(reshape(s, reshape(s, a, {a.numel()}), {a.extent(0), a.extent(1)})); break;
        case 9: {  // axis 0 reversed
          const std::int64_t n = b.extent(0);
          pool.push_back(maximum(s, a, b.as_strided_view(std::vector<std::int64_t>{n, n}, std::vector<std::int64_t>{-b.stride(0), b.stride(1)}, b.offset() + (n - 1) * b.stride(0))));
          break;
        }
        case 10: pool.push_back(mul(s, exp(s, mul(s, a, -0.1)), 1.5)); break;
        default: pool.push_back(sub(s, a, max(s, b, std::vector<std::int64_t>{1}, true))); break;
      }
    }
    // Two results: the last value and a reduction of an earlier one; the rest is dead.
    return {pool.back(), sum(s, pool[pool.size() / 2])};
  };
}

TEST(GraphCompile, RandomProgramsEqualTheDirectOps) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed * 977);
    const std::vector<Tensor> in = {random_tensor(rng, Shape{5, 5}, DType::f64, -1, 1), random_tensor(rng, Shape{5, 5}, DType::f64, -1, 1)};
    expect_same(random_program(seed, 24), in, 1e-12);
  }
}

/// Checks a compiled graph's arena (Note [Arena plan]): two buffers whose bytes overlap
/// are never live at one step (an in-place chain counts as one buffer), and the arena
/// is no larger than its buffers laid end to end.
void expect_sound_arena(const tg::CompiledGraph& cg) {
  namespace td = tenferro::graph::detail;
  const td::CompiledData& c = cg.data();
  const std::size_t n = c.slots.size();
  std::vector<int> chain(n, -1), first(n, -1), last(n, -1);
  for (std::size_t s = 0; s < n; ++s) chain[s] = static_cast<int>(s);
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const td::Step& st = c.steps[i];
    std::vector<int> defined;
    if (st.fused >= 0) defined = c.groups[static_cast<std::size_t>(st.fused)].results;
    else defined.push_back(st.out);
    if (st.reuse >= 0) chain[static_cast<std::size_t>(st.out)] = chain[static_cast<std::size_t>(st.reuse)];
    for (int d : defined) first[static_cast<std::size_t>(d)] = static_cast<int>(i);
    for (std::uint32_t k = st.drop_begin; k < st.drop_end; ++k) last[static_cast<std::size_t>(c.drops[k])] = static_cast<int>(i);
  }
  // A window's drop ends its base's life too; results are kept to the end.
  for (std::size_t s = 0; s < n; ++s)
    if (c.slots[s].kind == td::Slot::Kind::window && c.slots[s].base >= 0) {
      const auto b = static_cast<std::size_t>(c.slots[s].base);
      last[b] = std::max(last[b], last[s] < 0 ? static_cast<int>(c.steps.size()) : last[s]);
    }
  std::int64_t total = 0;
  std::vector<std::size_t> placed;
  for (std::size_t s = 0; s < n; ++s) {
    if (c.arena_at[s] < 0) continue;
    ASSERT_EQ(c.slots[s].kind, td::Slot::Kind::buffer) << "slot " << s;
    ASSERT_GE(first[s], 0) << "slot " << s << " is in the arena but no step writes it";
    if (last[s] < 0) last[s] = static_cast<int>(c.steps.size());
    EXPECT_EQ(c.arena_at[s] % 64, 0);
    if (chain[s] == static_cast<int>(s)) total += (td::numel_of(c.slots[s].shape) * static_cast<std::int64_t>(dtype_size(c.slots[s].dtype)) + 63) / 64 * 64;
    placed.push_back(s);
  }
  EXPECT_LE(c.arena_bytes, total);
  for (std::size_t a : placed)
    for (std::size_t b : placed) {
      if (a >= b || chain[a] == chain[b]) continue;
      const auto bytes = [&](std::size_t s) { return td::numel_of(c.slots[s].shape) * static_cast<std::int64_t>(dtype_size(c.slots[s].dtype)); };
      const bool share = c.arena_at[a] < c.arena_at[b] + bytes(b) && c.arena_at[b] < c.arena_at[a] + bytes(a);
      const bool meet = first[a] <= last[b] && first[b] <= last[a];
      EXPECT_FALSE(share && meet) << "slots " << a << " [" << first[a] << ", " << last[a] << "] and " << b << " [" << first[b] << ", "
                                  << last[b] << "] overlap at " << c.arena_at[a] << " / " << c.arena_at[b];
    }
}

TEST(GraphCompile, ArenaBuffersShareMemoryOnlyWhenTheirLifetimesDoNotMeet) {
  for (const bool fuse : {true, false})
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (fuse ? " fused" : " unfused"));
      const tg::CompiledGraph c = tg::compile(tg::trace(random_program(seed, 24), {{Shape{5, 5}, DType::f64}, {Shape{5, 5}, DType::f64}}),
                                              {.optimize = true, .fuse = fuse});
      expect_sound_arena(c);
    }
  // A chain of unfused steps over 1000 doubles: a = x*1.5 stays live to the end, the
  // seven steps after it and the final add run in place on one buffer (each operand dies
  // with its step), so nine intermediates fit in an arena of two buffers.
  const Fn chain = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor a = mul(s, in[0], 1.5);
    Tensor t = a;
    for (int i = 0; i < 7; ++i) t = i % 2 ? tanh(s, t) : mul(s, t, in[0]);
    return {sum(s, add(s, t, a))};
  };
  const tg::CompiledGraph c = tg::compile(tg::trace(chain, {{Shape{1000}, DType::f64}}), {.optimize = true, .fuse = false});
  expect_sound_arena(c);
  EXPECT_EQ(c.num_steps(), 10);
  EXPECT_EQ(c.arena_bytes(), 2 * 8000);
  std::mt19937_64 rng(4);
  const std::vector<Tensor> in = {random_tensor(rng, Shape{1000}, DType::f64)};
  expect_same(chain, in, 1e-14);
}

TEST(GraphCompile, ElementwiseRunsAreFused) {
  // A chain with an intermediate that is also a result, and a group wider than the
  // stack's chunk buffers (twelve values alive at once).
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor a = tanh(s, mul(s, in[0], 0.5));
    const Tensor b = add(s, exp(s, a), in[1]);
    std::vector<Tensor> ys;
    for (int i = 1; i <= 12; ++i) ys.push_back(mul(s, b, static_cast<double>(i)));
    Tensor acc = ys[0];
    for (int i = 1; i < 12; ++i) acc = add(s, acc, mul(s, ys[static_cast<std::size_t>(i)], ys[static_cast<std::size_t>(11 - i)]));
    return {a, sub(s, acc, in[0])};
  };
  std::mt19937_64 rng(4);
  for (DType d : tenferro::testing::kInexactDTypes) {
    SCOPED_TRACE(dtype_name(d));
    const std::vector<Tensor> in = {random_tensor(rng, Shape{37, 29}, d, -1, 1), random_tensor(rng, Shape{37, 29}, d, -1, 1)};
    expect_same(f, in, tol_for(d));
    const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{37, 29}, d}, {Shape{37, 29}, d}}));
    EXPECT_EQ(c.num_steps(), 1) << "every op is elementwise over one shape and dtype";
  }
}

TEST(GraphCompile, FusedRunsReadBroadcastAndStridedOperands) {
  // x·row + col − yᵀ + x reversed along axis 0: a row [1, 29] and a column [37]
  // broadcast, a transposed and a reversed window, scalars; one fused step.
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor t = add(s, mul(s, in[0], in[1]), in[2]);
    const Tensor u = sub(s, tanh(s, t), in[3].transpose_view());
    const Tensor reversed = in[0].as_strided_view(std::vector<std::int64_t>{37, 29}, std::vector<std::int64_t>{-1, 37}, 36);
    return {add(s, mul(s, u, 2.0), reversed)};
  };
  std::mt19937_64 rng(6);
  for (DType d : tenferro::testing::kInexactDTypes) {
    SCOPED_TRACE(dtype_name(d));
    const std::vector<Tensor> in = {random_tensor(rng, Shape{37, 29}, d, -1, 1), random_tensor(rng, Shape{1, 29}, d, -1, 1),
                                    random_tensor(rng, Shape{37}, d, -1, 1), random_tensor(rng, Shape{29, 37}, d, -1, 1)};
    expect_same(f, in, tol_for(d));
    std::vector<tg::ValueSpec> specs;
    for (const Tensor& t : in) specs.push_back({t.shape(), t.dtype()});
    const tg::CompiledGraph c = tg::compile(tg::trace(f, specs));
    EXPECT_EQ(c.num_steps(), 1);
  }
  // A window of a value the group computes ends the group: x − xᵀ of a computed x.
  const Fn g = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor x = exp(s, in[0]);
    return {sub(s, x, x.transpose_view())};
  };
  const std::vector<Tensor> sq = {random_tensor(rng, Shape{23, 23}, DType::f64, -1, 1)};
  expect_same(g, sq, 1e-12);
  EXPECT_EQ(tg::compile(tg::trace(g, {{Shape{23, 23}, DType::f64}})).num_steps(), 2);
  EXPECT_EQ(tg::compile(tg::trace(g, {{Shape{23, 23}, DType::f64}}), {.optimize = true, .fuse = false}).num_steps(), 2);
}

TEST(GraphCompile, DeadNodesAreDropped) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    (void)exp(s, in[0]);  // nobody reads it
    return {neg(s, in[0])};
  };
  const tg::Graph g = tg::trace(f, {{Shape{3}, DType::f64}});
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(tg::eliminate_dead_code(g).num_nodes(), 1);
  EXPECT_EQ(tg::compile(g).num_steps(), 1);
}

TEST(GraphCompile, ResultsThatAreInputsOrViewsAreFreshTensors) {
  const Fn f = [](Session&, std::span<const Tensor> in) -> std::vector<Tensor> { return {in[0], in[0].transpose_view()}; };
  const Tensor x = Tensor::from_data<double>({2, 2}, {1.0, 2.0, 3.0, 4.0});
  const std::vector<Tensor> r = run_compiled(f, std::vector<Tensor>{x});
  EXPECT_FALSE(r[0].shares_storage(x));
  EXPECT_EQ(r[1].item<double>({0, 1}), 2.0);
}

TEST(GraphCompile, InputsAndOutputsAreCheckedBeforeAnythingRuns) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {add(s, in[0], in[1])}; };
  const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{2, 2}, DType::f64}, {Shape{2, 2}, DType::f64}}));
  HeldSession s = backend().open_session();
  const Tensor a = Tensor::ones({2, 2}, DType::f64);
  expect_error<ArgumentError>([&] { c.run(s, std::vector<Tensor>{a}); }, "graph.run");
  expect_error<ArgumentError>([&] { c.run(s, std::vector<Tensor>{a, Tensor()}); }, "graph.run");
  expect_error<DTypeError>([&] { c.run(s, std::vector<Tensor>{a, Tensor::ones({2, 2}, DType::f32)}); }, "graph.run");
  expect_error<ShapeError>([&] { c.run(s, std::vector<Tensor>{a, Tensor::ones({2, 3}, DType::f64)}); }, "graph.run");
  const Tensor sentinel = Tensor::full({2, 2}, 7.0, DType::f64);
  const std::vector<Tensor> in = {a, a};
  expect_error<ShapeError>([&] { c.run_into(s, in, std::vector<Tensor>{Tensor::zeros({3}, DType::f64)}); }, "graph.run_into");
  expect_error<ArgumentError>([&] { c.run_into(s, in, std::vector<Tensor>{sentinel, sentinel}); }, "graph.run_into");
  expect_error<ArgumentError>([&] { c.run_into(s, in, std::vector<Tensor>{a}); }, "graph.run_into");
  EXPECT_EQ(sentinel.item<double>({1, 1}), 7.0);
  EXPECT_EQ(a.item<double>({1, 1}), 1.0);
  const Tensor out = Tensor::zeros({2, 2}, DType::f64);
  c.run_into(s, in, std::vector<Tensor>{out.transpose_view()});
  EXPECT_EQ(out.item<double>({1, 0}), 2.0);
}

TEST(GraphCompile, SteadyStateRunIntoAllocatesNothing) {
  const Fn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    Tensor y = in[0];
    for (int i = 0; i < 8; ++i) y = tanh(s, add(s, mul(s, y, in[1]), 0.1));
    DotDims d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {0};
    return {dot_general(s, y, in[1], d), sum(s, y)};
  };
  const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{4, 4}, DType::f64}, {Shape{4, 4}, DType::f64}}));
  std::mt19937_64 rng(9);
  const std::vector<Tensor> in = {random_tensor(rng, Shape{4, 4}, DType::f64), random_tensor(rng, Shape{4, 4}, DType::f64)};
  const std::vector<Tensor> out = {Tensor::zeros({4, 4}, DType::f64), Tensor::zeros({}, DType::f64)};
  HeldSession s = backend().open_session();
  c.run_into(s, in, out);  // warm-up: pool blocks, plan caches, the slot vector
  namespace alloc = tenferro::testing::alloc;
  alloc::news = 0;
  alloc::counting = true;
  for (int i = 0; i < 10; ++i) c.run_into(s, in, out);
  alloc::counting = false;
  EXPECT_EQ(alloc::news.load(), 0);
  const std::vector<Tensor> want = f(s, in);
  expect_close(out[0], want[0], 1e-13);
  expect_close(out[1], want[1], 1e-13);
}

TEST(GraphCompile, RunIntoLetsProducersWriteCompactOutputs) {
  std::mt19937_64 rng(21);
  const Tensor w = random_tensor(rng, Shape{40, 30}, DType::f64);
  // Two fused results, the first returned twice, both reading a captured constant (the
  // second with its rows reversed, so later chunks read what earlier chunks would write
  // if the constant were an output written in place).
  const Fn f = [w](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor y = tanh(s, add(s, mul(s, in[0], w), 0.5));
    return {y, exp(s, mul(s, y, w.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1))), y};
  };
  const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{40, 30}, DType::f64}}));
  EXPECT_EQ(c.num_steps(), 1) << c.graph().to_text();
  namespace td = tenferro::graph::detail;
  const td::CompiledData& d = c.data();
  EXPECT_EQ(d.writes_output[static_cast<std::size_t>(d.outputs[0])], 0);
  EXPECT_EQ(d.writes_output[static_cast<std::size_t>(d.outputs[1])], 1);
  const Tensor x = random_tensor(rng, Shape{40, 30}, DType::f64);
  HeldSession s = backend().open_session();
  const std::vector<Tensor> in = {x};
  const std::vector<Tensor> want = f(s, in);
  // Compact outputs (written by the producers), a strided one (copied), the repeat (copied).
  const Tensor big = Tensor::zeros({81, 61}, DType::f64);
  const std::vector<Tensor> out = {Tensor::zeros({40, 30}, DType::f64), big.slice_view(0, 1, Tensor::kSliceEnd, 2).slice_view(1, 0, 60, 2),
                                   Tensor::zeros({40, 30}, DType::f64)};
  for (int i = 0; i < 2; ++i) {
    c.run_into(s, in, out);
    for (int k = 0; k < 3; ++k) expect_close(out[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)], 1e-15);
  }
  // An output that is the captured constant: the steps must read w's values as traced
  // (the result is copied at the end instead of written while w is still read).
  Tensor w_before = Tensor::empty({40, 30}, DType::f64);
  copy_into(s, w, w_before);
  const std::vector<Tensor> onto_w = {w, Tensor::zeros({40, 30}, DType::f64), Tensor::zeros({40, 30}, DType::f64)};
  c.run_into(s, in, onto_w);
  const Tensor y_want = tanh(s, add(s, mul(s, x, w_before), 0.5));
  expect_close(w, y_want, 1e-15);
  expect_close(onto_w[1], exp(s, mul(s, y_want, w_before.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1))), 1e-15);
  // A graph with a step that can fail while running (a data check) copies at the end,
  // so a failed run writes nothing.
  const Fn g = [](Session& s2, std::span<const Tensor> xs) -> std::vector<Tensor> { return {add(s2, div(s2, xs[0], xs[1]), xs[0])}; };
  const tg::CompiledGraph cg = tg::compile(tg::trace(g, {{Shape{3}, DType::i64}, {Shape{3}, DType::i64}}));
  EXPECT_EQ(cg.data().writes_output[static_cast<std::size_t>(cg.data().outputs[0])], -1);
  const Tensor r = Tensor::full({3}, Scalar(7), DType::i64);
  const std::vector<Tensor> ints = {Tensor::from_data<std::int64_t>({3}, {4, 5, 6}), Tensor::from_data<std::int64_t>({3}, {1, 0, 2})};
  EXPECT_THROW(cg.run_into(s, ints, std::vector<Tensor>{r}), NumericalError);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(r.item<std::int64_t>({i}), 7);
}

TEST(GraphFunction, CompilesOncePerSignatureInTheSessionsCache) {
  int traces = 0;
  const tg::Function f([&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    ++traces;
    return {sum(s, mul(s, exp(s, in[0]), in[0]), std::vector<std::int64_t>{0})};
  });
  CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  std::mt19937_64 rng(8);
  const Tensor x = random_tensor(rng, Shape{3, 4}, DType::f64), y = random_tensor(rng, Shape{5}, DType::f64);
  {
    HeldSession s = b.open_session();
    for (int i = 0; i < 3; ++i) expect_close(f(s, std::vector<Tensor>{x})[0], sum(s, mul(s, exp(s, x), x), std::vector<std::int64_t>{0}), 1e-14);
    expect_close(f(s, std::vector<Tensor>{y})[0], sum(s, mul(s, exp(s, y), y), std::vector<std::int64_t>{0}), 1e-14);
    EXPECT_EQ(traces, 2) << "one trace per input signature";
    // Steady state: the cached graph runs without a heap allocation.
    const std::vector<Tensor> in = {x};
    const std::vector<Tensor> out = {Tensor::zeros({4}, DType::f64)};
    f.call_into(s, in, out);
    namespace alloc = tenferro::testing::alloc;
    alloc::news = 0;
    alloc::counting = true;
    for (int i = 0; i < 10; ++i) f.call_into(s, in, out);
    alloc::counting = false;
    EXPECT_EQ(alloc::news.load(), 0);
    // Inside another trace, the function's ops join the outer graph.
    const tg::Graph outer = tg::trace([&](Session& ts, std::span<const Tensor> xs) { return f(ts, xs); }, {{Shape{3, 4}, DType::f64}});
    EXPECT_EQ(outer.num_nodes(), 3);
  }
  const PlanCacheStats st = b.cache_stats(CacheKind::graphs);
  EXPECT_EQ(st.entries, 4u) << "per signature: the function's key and the program's";
  EXPECT_EQ(st.misses, 4u);
  EXPECT_GE(st.hits, 13u);
  b.clear_cache(CacheKind::graphs);
  EXPECT_EQ(b.cache_stats(CacheKind::graphs).entries, 0u);
  {
    HeldSession s = b.open_session();
    (void)f(s, std::vector<Tensor>{x});
  }
  EXPECT_EQ(traces, 4) << "the outer trace called fn once more, then a cleared cache traces again";
}

TEST(GraphFunction, FunctionsTracingTheSameProgramShareOneCompiledGraph) {
  CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  std::mt19937_64 rng(12);
  const Tensor w = random_tensor(rng, Shape{3}, DType::f64);
  Tensor w_copy = Tensor::empty({3}, DType::f64);
  std::memcpy(w_copy.mutable_data(), w.data(), 3 * sizeof(double));
  int traces = 0;
  // The program tanh(x * w) + x over a captured tensor, built as separate functions.
  const auto make = [&](const Tensor& captured, tg::CompileOptions o = {}) {
    return tg::Function([&traces, captured](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
      ++traces;
      return {add(s, tanh(s, mul(s, in[0], captured)), in[0])};
    }, o);
  };
  const tg::Function f1 = make(w), f2 = make(w), f3 = make(w_copy), f4 = make(w, {.optimize = true, .fuse = false});
  const Tensor x = random_tensor(rng, Shape{3}, DType::f64);
  HeldSession s = b.open_session();
  const Tensor want = add(s, tanh(s, mul(s, x, w)), x);
  const auto stats = [&] { return tenferro::detail::cpu_context(s).resources->graphs.stats(); };
  expect_close(f1(s, std::vector<Tensor>{x})[0], want, 1e-15);
  const auto after1 = stats();
  EXPECT_EQ(after1.entries, 2u) << "the function's key and the program's";
  // f2: its own key misses, the program's hits: traced, not compiled again.
  expect_close(f2(s, std::vector<Tensor>{x})[0], want, 1e-15);
  const auto after2 = stats();
  EXPECT_EQ(after2.entries, 3u);
  EXPECT_EQ(after2.hits, after1.hits + 1);
  EXPECT_EQ(traces, 2);
  // Equal values in another tensor, or other compile options: a program of its own.
  expect_close(f3(s, std::vector<Tensor>{x})[0], want, 1e-15);
  expect_close(f4(s, std::vector<Tensor>{x})[0], want, 1e-15);
  const auto after4 = stats();
  EXPECT_EQ(after4.entries, 7u);
  EXPECT_EQ(after4.hits, after2.hits);
  // A new shape is a new program.
  const Tensor y = random_tensor(rng, Shape{5}, DType::f64);
  EXPECT_THROW((void)f2(s, std::vector<Tensor>{y}), ShapeError) << "x * w with w of 3 elements";
  EXPECT_EQ(stats().entries, 7u) << "a failed trace caches nothing";
}

}  // namespace
