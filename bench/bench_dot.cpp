// dot_general fixed costs and throughput against raw OpenBLAS calls in the same binary.
// One thread (backend and OpenBLAS). Run:
//   build/release/bench/bench_dot --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

using namespace tenferro;

namespace {

CpuBackend& backend() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

Tensor random(std::initializer_list<std::int64_t> shape, DType d, std::uint64_t seed) {
  Generator g(seed);
  return Tensor::uniform(g, shape, d, -1.0, 1.0);
}

const DotDims kMatVec{.lhs_contracting = {1}, .rhs_contracting = {0}};

void dot_scoped_single(benchmark::State& st) {
  const auto n = st.range(0);
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2);
  for (auto _ : st) {
    Tensor y = backend().with_session([&](Session& s) { return dot_general(s, a, x, kMatVec); });
    benchmark::DoNotOptimize(y.data());
  }
}
void dot_held_single(benchmark::State& st) {
  const auto n = st.range(0);
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor y = dot_general(s, a, x, kMatVec);
    benchmark::DoNotOptimize(y.data());
  }
}
void dot_scoped_into(benchmark::State& st) {
  const auto n = st.range(0);
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2), y = Tensor::zeros({n, 1}, DType::f64);
  for (auto _ : st) {
    backend().with_session([&](Session& s) { dot_general_into(s, a, x, kMatVec, y); });
    benchmark::ClobberMemory();
  }
}
void dot_held_into(benchmark::State& st) {
  const auto n = st.range(0);
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2), y = Tensor::zeros({n, 1}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    dot_general_into(s, a, x, kMatVec, y);
    benchmark::ClobberMemory();
  }
}
void dot_held_chain16(benchmark::State& st) {
  const auto n = st.range(0);
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2), y = Tensor::zeros({n, 1}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    for (int i = 0; i < 8; ++i) {  // 16 products: x → y → x ...
      dot_general_into(s, a, x, kMatVec, y);
      dot_general_into(s, a, y, kMatVec, x);
    }
    benchmark::ClobberMemory();
  }
}
void gemv_raw(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  auto a = random({n, n}, DType::f64, 1), x = random({n, 1}, DType::f64, 2), y = Tensor::zeros({n, 1}, DType::f64);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, a.data_ptr<double>(), n, x.data_ptr<double>(), 1, 0.0, y.mutable_data_ptr<double>(), 1);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(dot_scoped_single)->Name("dot/scoped/single")->Arg(2)->Arg(95)->Arg(256);
BENCHMARK(dot_held_single)->Name("dot/held/single")->Arg(2)->Arg(95)->Arg(256);
BENCHMARK(dot_scoped_into)->Name("dot/scoped/into")->Arg(2)->Arg(95)->Arg(256);
BENCHMARK(dot_held_into)->Name("dot/held/into")->Arg(2)->Arg(95)->Arg(256);
BENCHMARK(dot_held_chain16)->Name("dot/held/chain16")->Arg(2)->Arg(95)->Arg(256);
BENCHMARK(gemv_raw)->Name("gemv/raw_openblas")->Arg(95)->Arg(256);

void set_gemm_counters(benchmark::State& st, double n, double flops_per) {
  st.counters["GFLOP/s"] = benchmark::Counter(flops_per * n * n * n * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
template <DType D> void gemm_held_into(benchmark::State& st, std::int64_t n) {
  auto a = random({n, n}, D, 1), b = random({n, n}, D, 2), c = Tensor::zeros({n, n}, D);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    matmul_into(s, a, b, c);
    benchmark::ClobberMemory();
  }
  set_gemm_counters(st, static_cast<double>(n), is_complex(D) ? 8.0 : 2.0);
}
void gemm_raw(benchmark::State& st, int n) {
  auto a = random({n, n}, DType::f64, 1), b = random({n, n}, DType::f64, 2), c = Tensor::zeros({n, n}, DType::f64);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data_ptr<double>(), n, b.data_ptr<double>(), n, 0.0,
                c.mutable_data_ptr<double>(), n);
    benchmark::ClobberMemory();
  }
  set_gemm_counters(st, n, 2.0);
}
// Exact case names ("gemm/held/into/1024_f64"), so no "/arg" suffix is appended.
const bool kGemmRegistered = [] {
  for (int n : {64, 256, 1024}) {
    const std::string suffix = "/" + std::to_string(n) + "_f64";
    benchmark::RegisterBenchmark(("gemm/held/into" + suffix).c_str(), [n](benchmark::State& st) { gemm_held_into<DType::f64>(st, n); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("gemm/raw_openblas" + suffix).c_str(), [n](benchmark::State& st) { gemm_raw(st, n); })
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("gemm/held/into/256_c128", [](benchmark::State& st) { gemm_held_into<DType::c128>(st, 256); })
      ->Unit(benchmark::kMicrosecond);
  return true;
}();

void batched_4x4x1024(benchmark::State& st) {
  auto a = random({4, 4, 1024}, DType::f64, 1), b = random({4, 4, 1024}, DType::f64, 2), c = Tensor::zeros({4, 4, 1024}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    matmul_into(s, a, b, c);
    benchmark::ClobberMemory();
  }
  st.counters["ns/product"] = benchmark::Counter(1024.0 * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(batched_4x4x1024)->Name("batched/held/into/4x4x1024")->Unit(benchmark::kMicrosecond);

// Batches of B products of M×K by K×N, every operand compact (column-major per batch:
// lhs [M, K, B], rhs [K, N, B], out [M, N, B]), against the same products as cblas_dgemm
// calls. 144x12x12x1100 and 1x144x11x1100 are steps of lm_batch_likelihood_sentence_3_12d
// (through BLAS; the first is bound by memory traffic: 28 KB per 20736 multiply-adds),
// 16x16x16x1996 one of lm_batch_likelihood_brackets_4_4d and 12x12x12x1996 its like
// (both the small path's vector columns, Note [Small products with AVX2]).
struct Batched {
  std::int64_t M, N, K, B;
  Tensor l, r, o;
  explicit Batched(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t b)
      : M(m), N(n), K(k), B(b), l(random({m, k, b}, DType::f64, 1)), r(random({k, n, b}, DType::f64, 2)), o(Tensor::zeros({m, n, b}, DType::f64)) {}
  void counters(benchmark::State& st) const {
    st.counters["ns/product"] = benchmark::Counter(static_cast<double>(B * st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(M * N * K * B * st.iterations()), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  }
};
void batched_held(benchmark::State& st, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t B) {
  const Batched x(M, N, K, B);
  const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}};
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    dot_general_into(s, x.l, x.r, dims, x.o);
    benchmark::ClobberMemory();
  }
  x.counters(st);
}
void batched_raw(benchmark::State& st, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t B) {
  const Batched x(M, N, K, B);
  const double *l = x.l.data_ptr<double>(), *r = x.r.data_ptr<double>();
  double* o = x.o.mutable_data_ptr<double>();
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    for (std::int64_t b = 0; b < B; ++b)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, l + b * M * K, m, r + b * K * N, k, 0.0, o + b * M * N, m);
    benchmark::ClobberMemory();
  }
  x.counters(st);
}
const bool kBatchedRegistered = [] {
  const std::int64_t shapes[][4] = {{144, 12, 12, 1100}, {1, 144, 11, 1100}, {16, 16, 16, 1996}, {12, 12, 12, 1996}};
  for (const auto& [M, N, K, B] : shapes) {
    const std::string suffix = "/" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + "x" + std::to_string(B);
    benchmark::RegisterBenchmark(("batched/held/into" + suffix).c_str(), [=](benchmark::State& st) { batched_held(st, M, N, K, B); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("batched/raw_openblas" + suffix).c_str(), [=](benchmark::State& st) { batched_raw(st, M, N, K, B); })
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

// Note [Free axes looped over]: lhs [m1, m2, k] · rhs [k, n1, n2] into a result stored
// [m1, n1, m2, n2] (free axes interleaved), against the same product into a compact
// result (the yardstick: one GEMM, no layout cost). Args: side (m1 = n1), loop extent
// (m2 = n2), k, and 1 for the interleaved result / 0 for the compact one.
void interleaved_out(benchmark::State& st) {
  const auto side = st.range(0), loop = st.range(1), k = st.range(2);
  auto a = random({side, loop, k}, DType::f64, 1), b = random({k, side, loop}, DType::f64, 2);
  const DotDims dims{.lhs_contracting = {2}, .rhs_contracting = {0}};
  Tensor buffer = Tensor::zeros({side, side, loop, loop}, DType::f64);
  const Tensor out = st.range(3) ? buffer.permute_view({0, 2, 1, 3}) : buffer.reshape_view({side, loop, side, loop});
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    dot_general_into(s, a, b, dims, out);
    benchmark::ClobberMemory();
  }
  st.counters["ns/element"] = benchmark::Counter(static_cast<double>(out.numel()) * static_cast<double>(st.iterations()),
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(interleaved_out)
    ->Name("dot/held/interleaved_out")
    ->ArgNames({"side", "loop", "k", "interleaved"})
    ->ArgsProduct({{8, 16, 48, 128}, {4, 16}, {4, 32, 128}, {1, 0}})
    ->Unit(benchmark::kMicrosecond);

void transpose_4096(benchmark::State& st) {
  constexpr std::int64_t n = 4096;
  auto a = random({n, n}, DType::f64, 1), out = Tensor::zeros({n, n}, DType::f64);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    copy_into(s, a.transpose_view(), out);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * n * n * 8 * 2);  // read + write, as copy/raw_memcpy
}
BENCHMARK(transpose_4096)->Name("transpose/held_into/4096x4096_f64")->Unit(benchmark::kMillisecond);

void memcpy_4096(benchmark::State& st) {
  constexpr std::int64_t n = 4096;
  std::vector<double> a(n * n, 1.0), b(n * n);
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), n * n * 8);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * n * n * 8 * 2);
}
BENCHMARK(memcpy_4096)->Name("copy/raw_memcpy/4096x4096_f64")->Unit(benchmark::kMillisecond);

// Random permutations of a tensor of `rank` axes of one short extent (Note [Tiled copy
// of short axes], Note [Transposed tiles]): eight fixed permutations, one per iteration
// in turn, against memcpy of the same bytes (extent 2).
void permute_short(benchmark::State& st, std::int64_t extent) {
  const auto rank = static_cast<int>(st.range(0));
  const Shape shape(rank, extent);
  Generator g(1);
  const Tensor x = Tensor::uniform(g, shape.span(), DType::f64, -1.0, 1.0);
  Tensor out = Tensor::empty(shape.span(), DType::f64);
  std::mt19937_64 rng(3);
  std::vector<Tensor> views;
  for (int p = 0; p < 8; ++p) {
    Dims perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::shuffle(perm.begin(), perm.end(), rng);
    views.push_back(x.permute_view(perm.span()));
  }
  HeldSession s = backend().open_session();
  // Every permutation once before timing, so `out` is faulted in: on this VM a first
  // touch of 38 MB took up to 0.3 s, and a run of one iteration reported that.
  for (const Tensor& v : views) copy_into(s, v, out);
  std::size_t k = 0;
  for (auto _ : st) {
    copy_into(s, views[k++ % views.size()], out);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * x.numel() * 8 * 2);
}
BENCHMARK_CAPTURE(permute_short, extent2, 2)->Name("copy/permute_extent2")->ArgName("rank")->DenseRange(16, 22, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(permute_short, extent3, 3)->Name("copy/permute_extent3")->ArgName("rank")->DenseRange(8, 14, 2)->Unit(benchmark::kMicrosecond);

void memcpy_extent2(benchmark::State& st) {
  const std::size_t bytes = std::size_t{8} << st.range(0);
  std::vector<char> a(bytes, 1), b(bytes);
  for (auto _ : st) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * static_cast<std::int64_t>(bytes) * 2);
}
BENCHMARK(memcpy_extent2)->Name("copy/raw_memcpy/extent2")->ArgName("rank")->DenseRange(16, 22, 2)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
