// Graph passes (Note [Graph passes] in tenferro/graph.hpp): each pass, run alone, gives
// a graph whose unoptimized, unfused run equals the original's on random inputs, over
// random programs built to contain what the passes remove; and each removes what it
// names.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <random>

#include "support/backends.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using tenferro::testing::random_tensor;
using tenferro::testing::value_at;
namespace tg = tenferro::graph;

CpuBackend& backend() { return tenferro::testing::one_thread_backend(); }

constexpr tg::CompileOptions kAsTraced{.optimize = false, .fuse = false};

std::vector<Tensor> run(const tg::Graph& g, std::span<const Tensor> in) {
  HeldSession s = backend().open_session();
  return tg::compile(g, kAsTraced).run(s, in);
}

void expect_equal_runs(const tg::Graph& a, const tg::Graph& b, std::span<const Tensor> in) {
  const std::vector<Tensor> ra = run(a, in), rb = run(b, in);
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t k = 0; k < ra.size(); ++k) {
    ASSERT_EQ(ra[k].shape(), rb[k].shape());
    ASSERT_EQ(ra[k].dtype(), rb[k].dtype());
    tenferro::testing::for_each_index(ra[k].shape(), [&](const Dims& i) {
      EXPECT_LE(std::abs(value_at(ra[k], i) - value_at(rb[k], i)), 1e-12 * (1 + std::abs(value_at(rb[k], i)))) << "result " << k << " at " << i.to_string();
    });
  }
}

/// Random programs with duplicated subexpressions, identities, constant subtrees and
/// dead values.
tg::TraceFn program(std::uint64_t seed) {
  return [seed](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    std::mt19937_64 rng(seed);
    const Tensor k1 = Tensor::full({4, 4}, 0.5, DType::f64), k2 = Tensor::full({4, 4}, -1.25, DType::f64);
    std::vector<Tensor> pool(in.begin(), in.end());
    pool.push_back(k1);
    auto pick = [&]() -> const Tensor& { return pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)]; };
    const DotDims mm{.lhs_contracting = {1}, .rhs_contracting = {0}};
    for (int i = 0; i < 30; ++i) {
      const Tensor& a = pick();
      const Tensor& b = pick();
      switch (std::uniform_int_distribution<int>(0, 10)(rng)) {
        case 10: pool.push_back(dot_general(s, transpose(s, a, {1, 0}), b, mm)); break;  // a transpose to fold
        case 0: pool.push_back(add(s, exp(s, mul(s, a, 0.1)), exp(s, mul(s, a, 0.1)))); break;  // a duplicate
        case 1: pool.push_back(add(s, mul(s, a, 1.0), 0.0)); break;                             // identities
        case 2: pool.push_back(neg(s, neg(s, a))); break;
        case 3: pool.push_back(mul(s, add(s, k1, k2), a)); break;                                // a constant subtree
        case 4: pool.push_back(dot_general(s, a, b, mm)); break;
        case 5: pool.push_back(tanh(s, sub(s, a, b))); break;
        case 6: (void)sin(s, a); break;                                                           // dead
        case 7: pool.push_back(div(s, sub(s, a, 0.0), 1.0)); break;
        case 8: pool.push_back(mul(s, a, sum(s, b, {0}, true))); break;
        default: pool.push_back(conj(s, conj(s, mul(s, a, b)))); break;
      }
    }
    return {pool.back(), sum(s, pool[pool.size() / 2])};
  };
}

using Pass = std::function<tg::Graph(const tg::Graph&)>;

void check_pass(const Pass& pass) {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const tg::Graph g = tg::trace(program(seed), {{Shape{4, 4}, DType::f64}, {Shape{4, 4}, DType::f64}});
    const tg::Graph p = pass(g);
    EXPECT_LE(p.num_nodes(), g.num_nodes());
    EXPECT_EQ(p.num_inputs(), g.num_inputs());
    EXPECT_EQ(p.num_outputs(), g.num_outputs());
    std::mt19937_64 rng(seed);
    const std::vector<Tensor> in = {random_tensor(rng, Shape{4, 4}, DType::f64, -1, 1), random_tensor(rng, Shape{4, 4}, DType::f64, -1, 1)};
    expect_equal_runs(p, g, in);
  }
}

TEST(GraphPasses, DeadCodeEliminationKeepsTheResults) { check_pass(tg::eliminate_dead_code); }
TEST(GraphPasses, CommonSubexpressionEliminationKeepsTheResults) { check_pass(tg::eliminate_common_subexpressions); }
TEST(GraphPasses, ConstantFoldingKeepsTheResults) { check_pass(tg::fold_constants); }
TEST(GraphPasses, SimplificationKeepsTheResults) { check_pass(tg::simplify); }
TEST(GraphPasses, AllPassesKeepTheResults) { check_pass(tg::optimize); }

int nodes_of(const Pass& pass, const tg::TraceFn& f) { return pass(tg::trace(f, {{Shape{3}, DType::c128}})).num_nodes(); }

TEST(GraphPasses, EachRemovesWhatItNames) {
  const tg::TraceFn dup = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {add(s, exp(s, in[0]), exp(s, in[0]))}; };
  EXPECT_EQ(nodes_of(tg::eliminate_common_subexpressions, dup), 2);
  const tg::TraceFn ident = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {conj(s, conj(s, neg(s, neg(s, div(s, sub(s, add(s, mul(s, in[0], 1.0), 0.0), 0.0), 1.0)))))};
  };
  EXPECT_EQ(tg::trace(ident, {{Shape{3}, DType::c128}}).num_nodes(), 8);
  EXPECT_EQ(nodes_of(tg::simplify, ident), 0);
  const tg::TraceFn folded = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const Tensor k = Tensor::full({3}, 2.0, DType::c128);
    return {mul(s, in[0], exp(s, mul(s, k, k)))};
  };
  EXPECT_EQ(nodes_of(tg::fold_constants, folded), 1);
  const tg::TraceFn dead = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    (void)exp(s, in[0]);
    return {neg(s, in[0])};
  };
  EXPECT_EQ(nodes_of(tg::eliminate_dead_code, dead), 1);
  // The identities keep a value that changes dtype or shape.
  const tg::TraceFn widen = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {mul(s, in[0], Tensor::ones({3, 2}, DType::c128))};
  };
  EXPECT_EQ(nodes_of(tg::simplify, widen), 1);
  // A transpose feeding dot_general is read as a window: one node left.
  const tg::TraceFn tmm = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    return {matmul(s, transpose(s, in[0], {1, 0}), in[0])};
  };
  const tg::Graph g = tg::trace(tmm, {{Shape{3, 2}, DType::f64}});
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(tg::simplify(g).num_nodes(), 1);
}

}  // namespace
