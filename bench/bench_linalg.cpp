// Linear algebra fixed costs and throughput against raw LAPACKE calls in the same binary.
// One thread (backend and OpenBLAS), f64. Each raw yardstick runs the plain high-level
// LAPACKE driver that the op uses (gesdd, geqrf + orgqr, syevd, gesv) on a fresh copy of
// the input every iteration, as the op must (LAPACK overwrites its input). Run:
//   build/release/bench/bench_linalg --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <lapacke.h>

#include <cstring>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

using namespace tenferro;

namespace {

CpuBackend& backend() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}

// A random n×n f64 matrix; `kind` 1: symmetric, 2: diagonally dominant.
Tensor input(std::int64_t n, int kind, std::int64_t batch = 1) {
  Generator g(42);
  Tensor a = batch == 1 ? Tensor::uniform(g, std::initializer_list<std::int64_t>{n, n}, DType::f64, -1.0, 1.0)
                        : Tensor::uniform(g, std::initializer_list<std::int64_t>{n, n, batch}, DType::f64, -1.0, 1.0);
  double* p = a.mutable_data_ptr<double>();
  for (std::int64_t b = 0; b < batch; ++b) {
    double* m = p + b * n * n;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        if (kind == 1 && i > j) m[i + j * n] = m[j + i * n];
        if (kind == 2 && i == j) m[i + j * n] += static_cast<double>(n);
      }
  }
  return a;
}

void svd_held(benchmark::State& st, std::int64_t n) {
  const Tensor a = input(n, 0);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    SvdResult r = svd(s, a);
    benchmark::DoNotOptimize(r.S.data());
  }
}
void svd_raw(benchmark::State& st, int n) {
  const Tensor a = input(n, 0);
  std::vector<double> buf(n * n), sv(n), u(n * n), vt(n * n);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    std::memcpy(buf.data(), a.data(), sizeof(double) * n * n);
    LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n, n, buf.data(), n, sv.data(), u.data(), n, vt.data(), n);
    benchmark::DoNotOptimize(sv.data());
  }
}
void svd_held_batched(benchmark::State& st) {
  const Tensor a = input(4, 0, 1024);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    SvdResult r = svd(s, a);
    benchmark::DoNotOptimize(r.S.data());
  }
}

void qr_held(benchmark::State& st, std::int64_t n) {
  const Tensor a = input(n, 0);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    QrResult r = qr(s, a);
    benchmark::DoNotOptimize(r.Q.data());
  }
}
void qr_raw(benchmark::State& st, int n) {
  const Tensor a = input(n, 0);
  std::vector<double> buf(n * n), tau(n);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    std::memcpy(buf.data(), a.data(), sizeof(double) * n * n);
    LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, buf.data(), n, tau.data());
    LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, buf.data(), n, tau.data());
    benchmark::DoNotOptimize(buf.data());
  }
}

void eigh_held(benchmark::State& st, std::int64_t n) {
  const Tensor a = input(n, 1);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    EighResult r = eigh(s, a);
    benchmark::DoNotOptimize(r.W.data());
  }
}
void eigh_raw(benchmark::State& st, int n) {
  const Tensor a = input(n, 1);
  std::vector<double> buf(n * n), w(n);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    std::memcpy(buf.data(), a.data(), sizeof(double) * n * n);
    LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, buf.data(), n, w.data());
    benchmark::DoNotOptimize(w.data());
  }
}

void solve_held(benchmark::State& st, std::int64_t n) {
  const Tensor a = input(n, 2);
  Generator g(7);
  const Tensor b = Tensor::uniform(g, std::initializer_list<std::int64_t>{n, 1}, DType::f64, -1.0, 1.0);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor x = solve(s, a, b);
    benchmark::DoNotOptimize(x.data());
  }
}
void solve_raw(benchmark::State& st, int n) {
  const Tensor a = input(n, 2);
  Generator g(7);
  const Tensor b = Tensor::uniform(g, std::initializer_list<std::int64_t>{n, 1}, DType::f64, -1.0, 1.0);
  std::vector<double> buf(n * n), x(n);
  std::vector<lapack_int> ipiv(n);
  openblas_set_num_threads(1);
  for (auto _ : st) {
    std::memcpy(buf.data(), a.data(), sizeof(double) * n * n);
    std::memcpy(x.data(), b.data(), sizeof(double) * n);
    LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, buf.data(), n, ipiv.data(), x.data(), n);
    benchmark::DoNotOptimize(x.data());
  }
}

// Exact case names ("svd/held/64"), so no "/arg" suffix is appended.
const bool kRegistered = [] {
  for (int n : {2, 4, 8, 64, 256}) {
    const std::string N = std::to_string(n);
    const auto unit = n >= 64 ? benchmark::kMicrosecond : benchmark::kNanosecond;
    benchmark::RegisterBenchmark(("svd/held/" + N).c_str(), [n](benchmark::State& st) { svd_held(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("svd/raw_lapacke/" + N).c_str(), [n](benchmark::State& st) { svd_raw(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("qr/held/" + N).c_str(), [n](benchmark::State& st) { qr_held(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("qr/raw_lapacke/" + N).c_str(), [n](benchmark::State& st) { qr_raw(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("eigh/held/" + N).c_str(), [n](benchmark::State& st) { eigh_held(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("eigh/raw_lapacke/" + N).c_str(), [n](benchmark::State& st) { eigh_raw(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("solve/held/" + N + "_rhs1").c_str(), [n](benchmark::State& st) { solve_held(st, n); })->Unit(unit);
    benchmark::RegisterBenchmark(("solve/raw_lapacke/" + N + "_rhs1").c_str(), [n](benchmark::State& st) { solve_raw(st, n); })->Unit(unit);
  }
  benchmark::RegisterBenchmark("svd/held/batched_4x4x1024", svd_held_batched)->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
