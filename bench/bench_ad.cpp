// Eager AD fixed costs: forward + backward of tiny graphs in one held session, one
// thread, f64. Yardsticks in the same binary: the same computation written by hand with
// the plain ops (what the eager runtime adds is recording and the backward sweep), and
// raw OpenBLAS calls for the matmul case. Run:
//   build/release/bench/bench_ad --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tenferro/ad.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;

namespace {

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

// y = x; eight times (y = y * 1.0001; y = y + 0.5); loss = sum(y); backward.
void ad_chain16_fwd_bwd(benchmark::State& st) {
  openblas_set_num_threads(1);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor x = ctx.leaf(random({4, 4}, 1));
  for (auto _ : st) {
    ad::EagerTensor y = x;
    for (int i = 0; i < 8; ++i) {
      y = ad::mul(ctx, y, 1.0001);
      y = ad::add(ctx, y, 0.5);
    }
    ctx.backward(ad::sum(ctx, y));
    benchmark::DoNotOptimize(x.grad().data());
    ctx.zero_grad();
  }
}
// Yardstick: the same values and gradient with plain ops (forward chain, sum, and the
// eight multiplications of the backward chain), no recording.
void ad_chain16_by_hand(benchmark::State& st) {
  HeldSession s = backend().open_session();
  const Tensor x = random({4, 4}, 1);
  for (auto _ : st) {
    Tensor y = x;
    for (int i = 0; i < 8; ++i) {
      y = mul(s, y, 1.0001);
      y = add(s, y, 0.5);
    }
    Tensor loss = sum(s, y);
    Tensor g = Tensor::ones({}, DType::f64).broadcast_view({4, 4});
    for (int i = 0; i < 8; ++i) g = mul(s, g, 1.0001);
    benchmark::DoNotOptimize(loss.data());
    benchmark::DoNotOptimize(g.data());
  }
}

// loss = sum(A·B); gradients of A and B.
void ad_matmul_backward(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor a = ctx.leaf(random({n, n}, 1)), b = ctx.leaf(random({n, n}, 2));
  for (auto _ : st) {
    ctx.backward(ad::sum(ctx, ad::matmul(ctx, a, b)));
    benchmark::DoNotOptimize(a.grad().data());
    benchmark::DoNotOptimize(b.grad().data());
    ctx.zero_grad();
  }
}
// Yardstick: raw OpenBLAS. C = A·B, loss = Σ C, gA = 1·Bᵀ, gB = Aᵀ·1 (three dgemm calls
// and a sum loop over preallocated buffers).
void raw_blas_matmul_backward(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = static_cast<int>(st.range(0));
  const Tensor a = random({n, n}, 1), b = random({n, n}, 2);
  std::vector<double> c(static_cast<std::size_t>(n * n)), ones(static_cast<std::size_t>(n * n), 1.0), ga(c.size()), gb(c.size());
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  for (auto _ : st) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, pa, n, pb, n, 0.0, c.data(), n);
    double loss = 0;
    for (double v : c) loss += v;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, ones.data(), n, pb, n, 0.0, ga.data(), n);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, pa, n, ones.data(), n, 0.0, gb.data(), n);
    benchmark::DoNotOptimize(loss);
    benchmark::DoNotOptimize(ga.data());
    benchmark::DoNotOptimize(gb.data());
  }
}
// Yardstick: the same with plain tenferro ops (matmul, sum, two dot_generals).
void matmul_backward_by_hand(benchmark::State& st) {
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  const Tensor a = random({n, n}, 1), b = random({n, n}, 2);
  DotDims ga_dims, gb_dims;
  ga_dims.lhs_contracting = {1};
  ga_dims.rhs_contracting = {1};
  gb_dims.lhs_contracting = {0};
  gb_dims.rhs_contracting = {0};
  for (auto _ : st) {
    Tensor loss = sum(s, matmul(s, a, b));
    Tensor g = Tensor::ones({}, DType::f64).broadcast_view({n, n});
    Tensor ga = dot_general(s, g, b, ga_dims), gb = dot_general(s, a, g, gb_dims);
    benchmark::DoNotOptimize(loss.data());
    benchmark::DoNotOptimize(ga.data());
    benchmark::DoNotOptimize(gb.data());
  }
}

// The seed system's linalg VJP gate: X = L⁻¹·B for a lower-triangular, well-conditioned
// L (random lower triangle + N·I), loss = sum(X), gradients for L and B.
Tensor lower_well_conditioned(Session& s, std::int64_t n, std::uint64_t seed) {
  return add(s, tril(s, random({n, n}, seed)), mul(s, Tensor::eye(n, DType::f64), static_cast<double>(n)));
}
void ad_triangular_solve_vjp(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor l = ctx.leaf(lower_well_conditioned(s, n, 1)), b = ctx.leaf(random({n, n}, 2));
  for (auto _ : st) {
    ctx.backward(ad::sum(ctx, ad::triangular_solve(ctx, l, b)));
    benchmark::DoNotOptimize(l.grad().data());
    benchmark::DoNotOptimize(b.grad().data());
    ctx.zero_grad();
  }
}
// Yardstick: the forward solve alone (plain op, same session).
void triangular_solve_forward(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  const Tensor l = lower_well_conditioned(s, n, 1), b = random({n, n}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(triangular_solve(s, l, b).data());
}
// loss = sum(solve(A, B)) for a well-conditioned A (random + N·I); gradients for A and B.
void ad_solve_backward(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const Tensor av = add(s, random({n, n}, 1), mul(s, Tensor::eye(n, DType::f64), static_cast<double>(n)));
  const ad::EagerTensor a = ctx.leaf(av), b = ctx.leaf(random({n, n}, 2));
  for (auto _ : st) {
    ctx.backward(ad::sum(ctx, ad::solve(ctx, a, b)));
    benchmark::DoNotOptimize(a.grad().data());
    benchmark::DoNotOptimize(b.grad().data());
    ctx.zero_grad();
  }
}
void solve_forward(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  const Tensor a = add(s, random({n, n}, 1), mul(s, Tensor::eye(n, DType::f64), static_cast<double>(n))), b = random({n, n}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(solve(s, a, b).data());
}

// loss = Σ svdvals(M); backward (gradient U·Vh). The AD forward computes the thin SVD
// (the rule needs U and V); the target: ad/svd_values_vjp/8 <= 1.5 × svd/held/8
// (bench_linalg, thin SVD) + 3 µs.
void ad_svd_values_vjp(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  ad::Context ctx(s);
  const ad::EagerTensor m = ctx.leaf(random({n, n}, 3));
  for (auto _ : st) {
    ctx.backward(ad::sum(ctx, ad::svdvals(ctx, m)));
    benchmark::DoNotOptimize(m.grad().data());
    ctx.zero_grad();
  }
}
// Yardstick: the plain forward svdvals alone (values only: no singular vectors).
void svd_values_forward_only(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  const Tensor m = random({n, n}, 3);
  for (auto _ : st) {
    Tensor v = svdvals(s, m);
    benchmark::DoNotOptimize(v.data());
  }
}
// Yardstick: the plain thin SVD (what svd/held/N in bench_linalg measures).
void svd_thin_forward_only(benchmark::State& st) {
  openblas_set_num_threads(1);
  const auto n = st.range(0);
  HeldSession s = backend().open_session();
  const Tensor m = random({n, n}, 3);
  for (auto _ : st) {
    SvdResult r = svd(s, m);
    benchmark::DoNotOptimize(r.S.data());
  }
}

}  // namespace

BENCHMARK(ad_chain16_fwd_bwd)->Name("ad/chain16_4x4/fwd_bwd");
BENCHMARK(ad_chain16_by_hand)->Name("yardstick/chain16_4x4/plain_ops");
BENCHMARK(ad_matmul_backward)->Name("ad/matmul_backward")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(matmul_backward_by_hand)->Name("yardstick/matmul_backward/plain_ops")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(raw_blas_matmul_backward)->Name("yardstick/matmul_backward/raw_blas")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(ad_triangular_solve_vjp)->Name("ad/triangular_solve_vjp")->Arg(8)->Arg(16);
BENCHMARK(triangular_solve_forward)->Name("yardstick/triangular_solve_vjp/forward_only")->Arg(8)->Arg(16);
BENCHMARK(ad_solve_backward)->Name("ad/solve_backward")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(solve_forward)->Name("yardstick/solve_backward/forward_only")->Arg(2)->Arg(4)->Arg(8);
BENCHMARK(ad_svd_values_vjp)->Name("ad/svd_values_vjp")->Arg(8)->Arg(16);
BENCHMARK(svd_values_forward_only)->Name("ad/svd_values_vjp_forward_only")->Arg(8)->Arg(16);
BENCHMARK(svd_thin_forward_only)->Name("yardstick/svd_thin_forward_only")->Arg(8)->Arg(16);
// Large matrices: the same loss; few iterations (one SVD of 512² takes ~0.1 s).
BENCHMARK(ad_svd_values_vjp)->Name("ad/grad_sum_svd_s")->Arg(256)->Iterations(8)->Unit(benchmark::kMillisecond);
BENCHMARK(ad_svd_values_vjp)->Name("ad/grad_sum_svd_s")->Arg(512)->Iterations(3)->Unit(benchmark::kMillisecond);

// `bench_ad count CASE N` runs one case N times without Google Benchmark, for
// instruction counts under callgrind (run at two N and take the difference / ΔN):
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null build/release/bench/bench_ad count chain16 2000
// CASE: chain16 (AD), chain16_plain (yardstick), matmul2 (AD), matmul2_plain, trisolve8 (AD),
// svdvals8 (AD: Σ svdvals, backward), svdvals8_plain (forward svdvals only),
// svd8_thin_plain (forward thin SVD).
int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "count") {
    const std::string c = argv[2];
    const long n = std::strtol(argv[3], nullptr, 10);
    HeldSession s = backend().open_session();
    ad::Context ctx(s);
    const ad::EagerTensor x = ctx.leaf(random({4, 4}, 1));
    const ad::EagerTensor a = ctx.leaf(random({2, 2}, 1)), b = ctx.leaf(random({2, 2}, 2));
    const Tensor xp = random({4, 4}, 1);
    const ad::EagerTensor l8 = ctx.leaf(lower_well_conditioned(s, 8, 1)), b8 = ctx.leaf(random({8, 8}, 2));
    const ad::EagerTensor m8 = ctx.leaf(random({8, 8}, 3));
    for (long i = 0; i < n; ++i) {
      if (c == "chain16") {
        ad::EagerTensor y = x;
        for (int k = 0; k < 8; ++k) y = ad::add(ctx, ad::mul(ctx, y, 1.0001), 0.5);
        ctx.backward(ad::sum(ctx, y));
        ctx.zero_grad();
      } else if (c == "chain16_plain") {
        Tensor y = xp;
        for (int k = 0; k < 8; ++k) y = add(s, mul(s, y, 1.0001), 0.5);
        Tensor loss = sum(s, y);
        Tensor g = Tensor::ones({}, DType::f64).broadcast_view({4, 4});
        for (int k = 0; k < 8; ++k) g = mul(s, g, 1.0001);
      } else if (c == "matmul2_plain") {
        DotDims ga, gb;
        ga.lhs_contracting = {1};
        ga.rhs_contracting = {1};
        gb.lhs_contracting = {0};
        gb.rhs_contracting = {0};
        Tensor loss = sum(s, matmul(s, a.value(), b.value()));
        Tensor g = Tensor::ones({}, DType::f64).broadcast_view({2, 2});
        Tensor ra = dot_general(s, g, b.value(), ga), rb = dot_general(s, a.value(), g, gb);
      } else if (c == "trisolve8") {
        ctx.backward(ad::sum(ctx, ad::triangular_solve(ctx, l8, b8)));
        ctx.zero_grad();
      } else if (c == "svdvals8") {
        ctx.backward(ad::sum(ctx, ad::svdvals(ctx, m8)));
        ctx.zero_grad();
      } else if (c == "svdvals8_plain") {
        Tensor v = svdvals(s, m8.value());
      } else if (c == "svd8_thin_plain") {
        SvdResult r = svd(s, m8.value());
      } else if (c == "matmul2") {
        ctx.backward(ad::sum(ctx, ad::matmul(ctx, a, b)));
        ctx.zero_grad();
      } else {
        std::fprintf(stderr, "unknown case %s\n", c.c_str());
        return 2;
      }
    }
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
