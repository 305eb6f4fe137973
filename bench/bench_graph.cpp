// Traced graphs (issue 12 §6): compiled runs against the same work eagerly, in the same
// binary and sitting, one thread, f64.
//   graph/chain16_4x4/fwd_bwd   the 16-op chain of ad/chain16_4x4/fwd_bwd with its
//                               backward, traced once (vjp), compiled, run_into per iteration
//   graph/fused8/1M_f64         eight elementwise/analytic ops on 1M elements, compiled
//   graph/fused8_arith/1M_f64   eight arithmetic ops on 1M elements (memory-bound companion)
//   graph/hvp/mps6_chi16        HVP (jvp of grad) of a 6-site MPS energy, bond 16
//   graph/compile/1000_nodes    trace + compile of a 1000-node random program
// Yardsticks: ad/chain16_4x4/fwd_bwd (eager AD), eager/fused8*/1M_f64 (the same direct
// ops), eager/exp and eager/tanh (the compute floor of fused8), copy/raw_memcpy/1M_f64
// (one read-and-write pass), graph/grad/mps6_chi16 (the compiled gradient the HVP is
// measured against).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace {

using namespace tenferro;
namespace tg = tenferro::graph;

CpuBackend& backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}

Tensor random(std::initializer_list<std::int64_t> shape, std::uint64_t seed) {
  Generator g(seed);
  return Tensor::uniform(g, shape, DType::f64, -1.0, 1.0);
}

// ---------------------------------------------------------------- chain16

Tensor chain16(Session& s, const Tensor& x) {
  Tensor y = x;
  for (int i = 0; i < 8; ++i) y = add(s, mul(s, y, 1.0001), 0.5);
  return sum(s, y);
}

void graph_chain16_fwd_bwd(benchmark::State& st) {
  openblas_set_num_threads(1);
  const tg::Graph g = tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {chain16(s, in[0])}; },
                                {{Shape{4, 4}, DType::f64}});
  const tg::CompiledGraph c = tg::compile(tg::vjp(g));
  HeldSession s = backend().open_session();
  const std::vector<Tensor> in = {random({4, 4}, 1), Tensor::ones({}, DType::f64)};
  const std::vector<Tensor> out = {Tensor::zeros({}, DType::f64), Tensor::zeros({4, 4}, DType::f64)};
  for (auto _ : st) {
    c.run_into(s, in, out);
    benchmark::DoNotOptimize(out[1].data());
  }
  st.counters["steps"] = c.num_steps();
}

void ad_chain16_fwd_bwd(benchmark::State& st) {
  openblas_set_num_threads(1);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(random({4, 4}, 1));
  for (auto _ : st) {
    ad::EagerTensor y = x;
    for (int i = 0; i < 8; ++i) y = ad::add(ctx, ad::mul(ctx, y, 1.0001), 0.5);
    ctx.backward(ad::sum(ctx, y));
    benchmark::DoNotOptimize(x.grad().data());
    ctx.zero_grad();
  }
}

// ---------------------------------------------------------------- fused8

constexpr std::int64_t kFusedN = 1 << 20;

Tensor fused8(Session& s, const Tensor& x) {
  Tensor y = mul(s, x, 0.75);  // 1
  y = add(s, y, 0.25);         // 2
  y = exp(s, y);               // 3
  y = sub(s, y, x);            // 4
  y = tanh(s, y);              // 5
  y = mul(s, y, x);            // 6
  y = add(s, y, 1.0);          // 7
  return mul(s, y, 0.5);       // 8
}

/// Eight arithmetic ops (no transcendental): fusion's memory-bound case, beside fused8's
/// compute-bound one.
Tensor fused8_arith(Session& s, const Tensor& x) {
  Tensor y = mul(s, x, 0.75);  // 1
  y = add(s, y, 0.25);         // 2
  y = mul(s, y, x);            // 3
  y = sub(s, y, x);            // 4
  y = maximum(s, y, -0.5);     // 5
  y = mul(s, y, x);            // 6
  y = add(s, y, 1.0);          // 7
  return mul(s, y, 0.5);       // 8
}

template <Tensor (*F)(Session&, const Tensor&)> void graph_fused(benchmark::State& st) {
  const tg::CompiledGraph c = tg::compile(tg::trace([](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> { return {F(s, in[0])}; },
                                                    {{Shape{kFusedN}, DType::f64}}));
  HeldSession s = backend().open_session();
  const std::vector<Tensor> in = {random({kFusedN}, 2)};
  const std::vector<Tensor> out = {Tensor::zeros({kFusedN}, DType::f64)};
  for (auto _ : st) {
    c.run_into(s, in, out);
    benchmark::DoNotOptimize(out[0].data());
  }
  st.SetBytesProcessed(st.iterations() * kFusedN * 8 * 2);  // one read and one write pass
}

template <Tensor (*F)(Session&, const Tensor&)> void eager_fused(benchmark::State& st) {
  HeldSession s = backend().open_session();
  const Tensor x = random({kFusedN}, 2);
  for (auto _ : st) {
    const Tensor y = F(s, x);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * kFusedN * 8 * 2);
}

/// One analytic op alone on the same input: the compute floor of fused8 (which has
/// an exp and a tanh per element).
template <Tensor (*op)(Session&, const Tensor&)> void eager_one(benchmark::State& st) {
  HeldSession s = backend().open_session();
  const Tensor x = random({kFusedN}, 2);
  for (auto _ : st) {
    const Tensor y = op(s, x);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * kFusedN * 8 * 2);
}

/// The C library's scalar loop over the same input (the yardstick of the vector exp and
/// tanh, Note [Vector exp and tanh]).
template <double (*f)(double)> void libm_one(benchmark::State& st) {
  HeldSession s = backend().open_session();
  const Tensor x = random({kFusedN}, 2);
  std::vector<double> y(static_cast<std::size_t>(kFusedN));
  const auto* p = static_cast<const double*>(x.data());
  for (auto _ : st) {
    for (std::int64_t i = 0; i < kFusedN; ++i) y[static_cast<std::size_t>(i)] = f(p[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * kFusedN * 8 * 2);
}
double libm_exp(double x) { return std::exp(x); }
double libm_tanh(double x) { return std::tanh(x); }

void raw_memcpy_1m(benchmark::State& st) {
  std::vector<double> a(static_cast<std::size_t>(kFusedN), 1.0), b(a.size());
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), a.size() * sizeof(double));
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * kFusedN * 8 * 2);
}

// ---------------------------------------------------------------- MPS energy

constexpr int kSites = 6;
constexpr std::int64_t kChi = 16, kPhys = 2;

/// Σ_k <ψ|Z_k|ψ> of an open MPS (site k: [left bond, physical, right bond]) by a left
/// sweep carrying the environment without (L) and with one Z inserted (M).
std::vector<Tensor> mps_energy(Session& s, std::span<const Tensor> a) {
  const Tensor z = Tensor::from_data<double>({kPhys, kPhys}, {1.0, 0.0, 0.0, -1.0});
  Tensor l = Tensor::ones({1, 1}, DType::f64);
  Tensor m = Tensor::zeros({1, 1}, DType::f64);
  for (const Tensor& ak : a) {
    const Tensor za = einsum(s, "st,atc->asc", std::vector<Tensor>{z, ak});
    const Tensor lm = einsum(s, "ab,asc,bsd->cd", std::vector<Tensor>{m, ak, ak});
    const Tensor lz = einsum(s, "ab,asc,bsd->cd", std::vector<Tensor>{l, za, ak});
    m = add(s, lm, lz);
    l = einsum(s, "ab,asc,bsd->cd", std::vector<Tensor>{l, ak, ak});
  }
  return {sum(s, m)};
}

std::vector<tg::ValueSpec> mps_specs() {
  std::vector<tg::ValueSpec> specs;
  for (int k = 0; k < kSites; ++k) specs.push_back({Shape{k == 0 ? 1 : kChi, kPhys, k == kSites - 1 ? 1 : kChi}, DType::f64});
  return specs;
}

std::vector<Tensor> mps_state(std::uint64_t seed) {
  std::vector<Tensor> a;
  Generator g(seed);
  for (const tg::ValueSpec& sp : mps_specs()) a.push_back(Tensor::uniform(g, sp.shape.span(), DType::f64, -0.3, 0.3));
  return a;
}

void run_compiled(benchmark::State& st, const tg::CompiledGraph& c, const std::vector<Tensor>& in) {
  openblas_set_num_threads(1);
  HeldSession s = backend().open_session();
  std::vector<Tensor> out;
  for (int k = 0; k < c.graph().num_outputs(); ++k) out.push_back(Tensor::zeros(c.graph().output(k).shape.span(), c.graph().output(k).dtype));
  for (auto _ : st) {
    c.run_into(s, in, out);
    benchmark::DoNotOptimize(out[0].data());
  }
  st.counters["steps"] = c.num_steps();
}

void graph_grad_mps(benchmark::State& st) {
  run_compiled(st, tg::compile(tg::grad(tg::trace(mps_energy, mps_specs()))), mps_state(3));
}

void graph_hvp_mps(benchmark::State& st) {
  std::vector<Tensor> in = mps_state(3);
  const std::vector<Tensor> t = mps_state(4);
  in.insert(in.end(), t.begin(), t.end());
  run_compiled(st, tg::compile(tg::jvp(tg::grad(tg::trace(mps_energy, mps_specs())))), in);
}

// ---------------------------------------------------------------- compile time

/// A random program of `nodes` ops over [8, 8] values.
std::vector<Tensor> random_program(Session& s, std::span<const Tensor> in, int nodes) {
  std::mt19937_64 rng(42);
  std::vector<Tensor> pool(in.begin(), in.end());
  const DotDims mm{.lhs_contracting = {1}, .rhs_contracting = {0}};
  while (nodes > 0) {
    // Every op reads the previous one, so every node is live after dead-code elimination.
    const Tensor a = pool.back();
    const Tensor& b = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
    switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
      case 0: pool.push_back(add(s, a, b)); break;
      case 1: pool.push_back(mul(s, a, b)); break;
      case 2: pool.push_back(tanh(s, a)); break;
      case 3: pool.push_back(dot_general(s, a, b, mm)); break;
      case 4: pool.push_back(sub(s, a, 0.5)); break;
      default: pool.push_back(mul(s, a, b.transpose_view())); break;
    }
    --nodes;
  }
  return {pool.back(), sum(s, pool[pool.size() / 2])};
}

void graph_compile_1000(benchmark::State& st) {
  const tg::TraceFn f = [](Session& s, std::span<const Tensor> in) { return random_program(s, in, 998); };
  int nodes = 0;
  for (auto _ : st) {
    const tg::CompiledGraph c = tg::compile(tg::trace(f, {{Shape{8, 8}, DType::f64}, {Shape{8, 8}, DType::f64}}));
    nodes = c.graph().num_nodes();
    benchmark::DoNotOptimize(c.num_steps());
  }
  st.counters["nodes"] = nodes;  // after the passes
}

}  // namespace

BENCHMARK(graph_chain16_fwd_bwd)->Name("graph/chain16_4x4/fwd_bwd");
BENCHMARK(ad_chain16_fwd_bwd)->Name("ad/chain16_4x4/fwd_bwd");
BENCHMARK(graph_fused<fused8>)->Name("graph/fused8/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(eager_fused<fused8>)->Name("eager/fused8/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(graph_fused<fused8_arith>)->Name("graph/fused8_arith/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(eager_fused<fused8_arith>)->Name("eager/fused8_arith/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(eager_one<tenferro::exp>)->Name("eager/exp/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(eager_one<tenferro::tanh>)->Name("eager/tanh/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(libm_one<libm_exp>)->Name("libm/exp/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(libm_one<libm_tanh>)->Name("libm/tanh/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_memcpy_1m)->Name("copy/raw_memcpy/1M_f64")->Unit(benchmark::kMicrosecond);
BENCHMARK(graph_grad_mps)->Name("graph/grad/mps6_chi16")->Unit(benchmark::kMicrosecond);
BENCHMARK(graph_hvp_mps)->Name("graph/hvp/mps6_chi16")->Unit(benchmark::kMicrosecond);
BENCHMARK(graph_compile_1000)->Name("graph/compile/1000_nodes")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
