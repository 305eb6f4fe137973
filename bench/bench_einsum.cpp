// einsum fixed costs and throughput, one thread, f64, inside a held session, with raw
// OpenBLAS yardsticks in the same binary; planner cases from einsum_plan_cases.hpp.
// Run:
//   build/release/bench/bench_einsum --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Layout convention: the issue names the cases in NumPy/PyTorch (row-major) notation. A
// row-major "bij" array is, in memory, a column-major [j, i, b] tensor, so each case runs
// the column-major mirror (every label string reversed): the same memory traffic and
// the same products as torch.einsum / numpy.einsum on C-contiguous arrays, which is
// what bench/peers_einsum.py times.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <numeric>
#include <vector>

#include "einsum_plan_cases.hpp"
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

/// One-shot string einsum (allocating) in a held session.
void run_held(benchmark::State& st, const char* subscripts, std::vector<Tensor> ops, double flops) {
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor r = einsum(s, subscripts, ops);
    benchmark::DoNotOptimize(r.data());
  }
  if (flops > 0) st.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void held_binary_2x2(benchmark::State& st) { run_held(st, "ij,jk->ik", {random({2, 2}, 1), random({2, 2}, 2)}, 0); }

void prepared_binary_2x2(benchmark::State& st) {
  const Tensor ops[] = {random({2, 2}, 1), random({2, 2}, 2)};
  const Tensor out = Tensor::zeros({2, 2}, DType::f64);
  const EinsumPlan plan = EinsumPlan::for_operands("ij,jk->ik", ops);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    plan.execute_into(s, ops, out);
    benchmark::ClobberMemory();
  }
}
void prepared_binary_2x2_alloc(benchmark::State& st) {
  const Tensor ops[] = {random({2, 2}, 1), random({2, 2}, 2)};
  const EinsumPlan plan = EinsumPlan::for_operands("ij,jk->ik", ops);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor r = plan.execute(s, ops);
    benchmark::DoNotOptimize(r.data());
  }
}

void held_matmul(benchmark::State& st) {
  const auto n = st.range(0);
  // Row-major "ij,jk->ik" mirrored.
  run_held(st, "ji,kj->ki", {random({n, n}, 1), random({n, n}, 2)}, 2.0 * n * n * n);
}
void raw_gemm(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  const Tensor a = random({n, n}, 1), b = random({n, n}, 2);
  std::vector<double> c(static_cast<std::size_t>(n) * n);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, b.data_ptr<double>(), n, a.data_ptr<double>(), n, 0.0, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void held_batched_matmul(benchmark::State& st) {
  const auto n = st.range(0);
  // Row-major "bij,bjk->bik" mirrored.
  run_held(st, "jib,kjb->kib", {random({n, n, 32}, 1), random({n, n, 32}, 2)}, 2.0 * 32 * n * n * n);
}
void raw_batched_gemm(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  const Tensor a = random({n, n, 32}, 1), b = random({n, n, 32}, 2);
  std::vector<double> c(static_cast<std::size_t>(n) * n * 32);
  openblas_set_num_threads(1);
  const std::size_t m = static_cast<std::size_t>(n) * n;
  for (auto _ : st) {
    for (std::size_t k = 0; k < 32; ++k)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, b.data_ptr<double>() + k * m, n, a.data_ptr<double>() + k * m, n,
                  0.0, c.data() + k * m, n);
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 32 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void held_outer_4096(benchmark::State& st) { run_held(st, "i,j->ji", {random({4096}, 1), random({4096}, 2)}, 0); }
void held_batched_outer_compact(benchmark::State& st) {
  // Row-major "tkj,to->tokj" (t=64, k=j=16, o=64) mirrored.
  run_held(st, "jkt,ot->jkot", {random({16, 16, 64}, 1), random({64, 64}, 2)}, 0);
}
void held_batched_outer_noncompact(benchmark::State& st) {
  // Row-major "tjk,to->tokj" mirrored.
  run_held(st, "kjt,ot->jkot", {random({16, 16, 64}, 1), random({64, 64}, 2)}, 0);
}
void held_hadamard_2048(benchmark::State& st) { run_held(st, "ji,ji->ji", {random({2048, 2048}, 1), random({2048, 2048}, 2)}, 0); }
void held_chain3_64(benchmark::State& st) {
  // Row-major "ij,jk,kl->il" mirrored.
  run_held(st, "ji,kj,lk->li", {random({64, 64}, 1), random({64, 64}, 2), random({64, 64}, 3)}, 0);
}

/// <ψ|φ> of two random MPS (100 sites, bond 64, physical dimension 2): 200 operands, one
/// einsum call with the planner (integer labels: a_k = k, b_k = 101 + k, s_k = 202 + k).
void held_mps_inner(benchmark::State& st) {
  const int L = 100, chi = 64, d = 2;
  std::vector<Tensor> ops;
  std::vector<std::vector<std::int64_t>> labels;
  for (int side = 0; side < 2; ++side)
    for (int k = 0; k < L; ++k) {
      const std::int64_t left = k == 0 ? 1 : chi, right = k == L - 1 ? 1 : chi;
      ops.push_back(random({left, d, right}, static_cast<std::uint64_t>(1000 * side + k)));
      const std::int64_t base = side == 0 ? 0 : 101;
      labels.push_back({base + k, 202 + k, base + k + 1});
    }
  const std::vector<std::int64_t> out;
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor r = einsum(s, ops, labels, std::span<const std::int64_t>(out));
    benchmark::DoNotOptimize(r.data());
  }
}

/// A backend that caches no einsum programs: every one-shot call parses and plans
/// afresh, as a sweep whose bonds change on every call (truncation by a tolerance,
/// growing bonds) does.
CpuBackend& uncached_backend() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

/// A DMRG environment update, L[a,b,c] A[a,s,e] W[b,s,t,f] conj(A)[c,t,g] -> L'[e,f,g]
/// (row-major notation, mirrored), bond chi, MPO bond 4, physical 2; `cached` picks the
/// backend with or without the program cache.
void held_dmrg_env(benchmark::State& st, bool cached) {
  const auto chi = st.range(0);
  const std::vector<Tensor> ops = {random({chi, 4, chi}, 1), random({chi, 2, chi}, 2), random({4, 2, 2, 4}, 3), random({chi, 2, chi}, 4)};
  CpuBackend& b = cached ? backend() : uncached_backend();
  if (!cached) b.set_cache_limits(CacheKind::einsum_programs, 0, 0);
  HeldSession s = b.open_session();
  for (auto _ : st) {
    Tensor r = einsum(s, "cba,esa,ftsb,gtc->gfe", ops);
    benchmark::DoNotOptimize(r.data());
  }
}
void held_dmrg_env_cached(benchmark::State& st) { held_dmrg_env(st, true); }
void held_dmrg_env_uncached(benchmark::State& st) { held_dmrg_env(st, false); }

}  // namespace

BENCHMARK(held_binary_2x2)->Name("einsum/held/binary_2x2");
BENCHMARK(prepared_binary_2x2)->Name("einsum/prepared/binary_2x2");
BENCHMARK(prepared_binary_2x2_alloc)->Name("einsum/prepared/binary_2x2_alloc");
BENCHMARK(held_matmul)->Name("einsum/held/matmul_256")->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_gemm)->Name("gemm/raw_openblas/256")->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(held_matmul)->Name("einsum/held/matmul_1024")->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(raw_gemm)->Name("gemm/raw_openblas/1024")->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(held_batched_matmul)->Name("einsum/held/batched_matmul_b32_64")->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_batched_gemm)->Name("gemm/raw_openblas/b32_64")->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(held_batched_matmul)->Name("einsum/held/batched_matmul_b32_128")->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_batched_gemm)->Name("gemm/raw_openblas/b32_128")->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(held_outer_4096)->Name("einsum/held/outer_4096")->Unit(benchmark::kMillisecond);
BENCHMARK(held_batched_outer_compact)->Name("einsum/held/batched_outer_compact")->Unit(benchmark::kMicrosecond);
BENCHMARK(held_batched_outer_noncompact)->Name("einsum/held/batched_outer_noncompact")->Unit(benchmark::kMicrosecond);
BENCHMARK(held_hadamard_2048)->Name("einsum/held/hadamard_2048")->Unit(benchmark::kMillisecond);
BENCHMARK(held_chain3_64)->Name("einsum/held/chain3_64")->Unit(benchmark::kMicrosecond);
BENCHMARK(held_mps_inner)->Name("einsum/held/mps_inner_100_chi64")->Unit(benchmark::kMillisecond);

BENCHMARK(held_dmrg_env_cached)->Name("einsum/held/dmrg_env")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond);
BENCHMARK(held_dmrg_env_uncached)->Name("einsum/held/dmrg_env_uncached")->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
