// Runs one fixed-cost case N times, for instruction counting under callgrind
// (bench/callgrind.sh runs it at two N and reports the per-call difference, which
// cancels start-up and set-up). Usage: fixed_cost_driver CASE N
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tenferro/tenferro.hpp"

using namespace tenferro;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CASE N\n", argv[0]);
    return 2;
  }
  const char* c = argv[1];
  const long n = std::strtol(argv[2], nullptr, 10);
  CpuBackend b(CpuBackendOptions{.num_threads = 1});
  auto x = Tensor::ones({2, 2}, DType::f64), y = Tensor::ones({2, 2}, DType::f64), out = Tensor::zeros({2, 2}, DType::f64);
  auto len1 = Tensor::ones({1}, DType::f64);
  if (!std::strcmp(c, "entry/scoped_empty")) {
    for (long i = 0; i < n; ++i) b.with_session([](Session&) {});
  } else if (!std::strcmp(c, "entry/held_open_close")) {
    for (long i = 0; i < n; ++i) b.open_session().close();
  } else if (!std::strcmp(c, "entry/in_scope")) {
    ExecutionScope scope = b.enter_scope();
    for (long i = 0; i < n; ++i) b.with_session([](Session&) {});
  } else {
    // Uncached cases: every one-shot einsum call parses and plans afresh.
    const bool uncached = std::strstr(c, "_uncached") != nullptr;
    if (uncached) b.set_cache_limits(CacheKind::einsum_programs, 0, 0);
    HeldSession s = b.open_session();
    if (!std::strcmp(c, "add/held_into/2x2_f64")) {
      for (long i = 0; i < n; ++i) add_into(s, x, y, out);
    } else if (!std::strcmp(c, "add/held/2x2_f64")) {
      for (long i = 0; i < n; ++i) add(s, x, y);
    } else if (!std::strcmp(c, "reduce_sum/held/len1_f64")) {
      for (long i = 0; i < n; ++i) sum(s, len1);
    } else if (!std::strcmp(c, "dot/held/into/2")) {
      auto a = Tensor::ones({2, 2}, DType::f64), v = Tensor::ones({2, 1}, DType::f64), y = Tensor::zeros({2, 1}, DType::f64);
      const DotDims d{.lhs_contracting = {1}, .rhs_contracting = {0}};
      for (long i = 0; i < n; ++i) dot_general_into(s, a, v, d, y);
    } else if (!std::strcmp(c, "batched/held/into/4x4x1024")) {
      auto a = Tensor::ones({4, 4, 1024}, DType::f64), bb = Tensor::ones({4, 4, 1024}, DType::f64), y = Tensor::zeros({4, 4, 1024}, DType::f64);
      for (long i = 0; i < n; ++i) matmul_into(s, a, bb, y);
    } else if (!std::strcmp(c, "batched/held/into/16x16x64")) {
      auto a = Tensor::ones({16, 16, 64}, DType::f64), bb = Tensor::ones({16, 16, 64}, DType::f64), y = Tensor::zeros({16, 16, 64}, DType::f64);
      for (long i = 0; i < n; ++i) matmul_into(s, a, bb, y);
    } else if (!std::strcmp(c, "einsum/held/binary_2x2") || !std::strcmp(c, "einsum/held/binary_2x2_uncached")) {
      const Tensor ops[] = {x, y};
      for (long i = 0; i < n; ++i) einsum(s, "ij,jk->ik", ops);
    } else if (!std::strcmp(c, "einsum/prepared/binary_2x2")) {
      const Tensor ops[] = {x, y};
      const EinsumPlan plan = EinsumPlan::for_operands("ij,jk->ik", ops);
      for (long i = 0; i < n; ++i) plan.execute_into(s, ops, out);
    } else if (!std::strcmp(c, "einsum/held/dmrg_env/4") || !std::strcmp(c, "einsum/held/dmrg_env_uncached/4")) {
      // bench_einsum's DMRG environment update at chi = 4 (row-major notation mirrored).
      const Tensor ops[] = {Tensor::ones({4, 4, 4}, DType::f64), Tensor::ones({4, 2, 4}, DType::f64),
                            Tensor::ones({4, 2, 2, 4}, DType::f64), Tensor::ones({4, 2, 4}, DType::f64)};
      for (long i = 0; i < n; ++i) einsum(s, "cba,esa,ftsb,gtc->gfe", ops);
    } else if (!std::strcmp(c, "graph/run_into/chain8_2x2")) {
      // Eight unfused elementwise steps and a matrix product over 2x2 inputs: the fixed
      // cost of a compiled run (slots, arena, kernel calls), run_into a held output.
      const auto fn = [](Session& ts, std::span<const Tensor> in) -> std::vector<Tensor> {
        Tensor t = mul(ts, in[0], 1.5);
        for (int k = 0; k < 7; ++k) t = k % 2 ? add(ts, t, in[1]) : mul(ts, t, in[0]);
        return {matmul(ts, t, in[1])};
      };
      const graph::CompiledGraph g = graph::compile(graph::trace(fn, {{Shape{2, 2}, DType::f64}, {Shape{2, 2}, DType::f64}}),
                                                    {.optimize = true, .fuse = false});
      const Tensor in[] = {x, y}, res[] = {out};
      for (long i = 0; i < n; ++i) g.run_into(s, in, res);
    } else {
      std::fprintf(stderr, "unknown case %s\n", c);
      return 2;
    }
  }
  return 0;
}
