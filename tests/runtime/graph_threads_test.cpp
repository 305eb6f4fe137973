// One compiled graph run from two threads at once, each in a session of its own backend
// (Note [Compiled graphs]: the run slots are per run). Its own executable, without the
// counting allocator, so that the TSan stage (.ci/run) can build it: TSan's runtime
// defines the global operator new itself.
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <thread>

#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
using tenferro::testing::random_tensor;
using tenferro::testing::value_at;
namespace tg = tenferro::graph;

TEST(GraphThreads, OneCompiledGraphRunsOnSeveralThreadsAtOnce) {
  const tg::TraceFn f = [](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
    const DotDims d{.lhs_contracting = {1}, .rhs_contracting = {0}};
    return {sum(s, tanh(s, dot_general(s, mul(s, in[0], 0.5), in[0], d)), std::vector<std::int64_t>{1})};
  };
  const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{6, 6}, DType::f64}}));
  std::mt19937_64 rng(12);
  const Tensor x = random_tensor(rng, Shape{6, 6}, DType::f64);
  std::vector<std::vector<Tensor>> got(2), want(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      CpuBackendOptions o;
      o.cpus = {t};  // disjoint CPU sets: the two sessions are admitted at once
      CpuBackend b(o);
      HeldSession s = b.open_session();
      want[static_cast<std::size_t>(t)] = f(s, std::vector<Tensor>{x});
      for (int i = 0; i < 50; ++i) got[static_cast<std::size_t>(t)] = c.run(s, std::vector<Tensor>{x});
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 2; ++t)
    tenferro::testing::for_each_index(Shape{6}, [&](const Dims& i) {
      EXPECT_LE(std::abs(value_at(got[static_cast<std::size_t>(t)][0], i) - value_at(want[static_cast<std::size_t>(t)][0], i)), 1e-14);
    });
}

}  // namespace
