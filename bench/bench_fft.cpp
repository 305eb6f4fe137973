// FFT through tenferro against raw FFTW calls in the same binary. One thread (backend
// and FFTW plans), FFTW_ESTIMATE on both sides. The raw yardstick is an FFTW plan
// created once and executed per iteration into a preallocated output: the fair
// comparison for an `_into` call; the allocating held case also takes its output from
// the session pool each iteration. Run:
//   build/release/bench/bench_fft --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <complex>
#include <string>

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

Tensor random(std::int64_t n, DType d, std::uint64_t seed) {
  Generator g(seed);
  return Tensor::uniform(g, {n}, d, -1.0, 1.0);
}

void set_counters(benchmark::State& st, std::int64_t n) {
  // The conventional FFT rate: 5 N log2 N flops per complex transform.
  double lg = 0;
  for (std::int64_t m = n; m > 1; m >>= 1) lg += 1;
  st.counters["GFLOP/s"] = benchmark::Counter(5.0 * static_cast<double>(n) * lg * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate,
                                              benchmark::Counter::kIs1000);
}

// ---- tenferro, held session ----
template <DType D> void fft_held(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, D, 1);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor y = fft(s, x);
    benchmark::DoNotOptimize(y.data());
  }
  set_counters(st, n);
}
template <DType D> void fft_held_into(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, D, 1), y = Tensor::empty({n}, D);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    fft_into(s, x, y);
    benchmark::ClobberMemory();
  }
  set_counters(st, n);
}
void rfft_held(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, DType::f64, 2);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    Tensor y = rfft(s, x);
    benchmark::DoNotOptimize(y.data());
  }
  set_counters(st, n / 2);
}
void rfft_held_into(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, DType::f64, 2), y = Tensor::empty({n / 2 + 1}, DType::c128);
  HeldSession s = backend().open_session();
  for (auto _ : st) {
    rfft_into(s, x, y);
    benchmark::ClobberMemory();
  }
  set_counters(st, n / 2);
}

// ---- raw FFTW: one plan, executed per iteration into a preallocated output ----
void fft_raw_c128(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, DType::c128, 1), y = Tensor::empty({n}, DType::c128);
  auto* in = reinterpret_cast<fftw_complex*>(const_cast<void*>(x.data()));
  auto* out = reinterpret_cast<fftw_complex*>(y.mutable_data());
  fftw_plan p = fftw_plan_dft_1d(static_cast<int>(n), in, out, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  for (auto _ : st) {
    fftw_execute_dft(p, in, out);
    benchmark::ClobberMemory();
  }
  fftw_destroy_plan(p);
  set_counters(st, n);
}
void fft_raw_c64(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, DType::c64, 1), y = Tensor::empty({n}, DType::c64);
  auto* in = reinterpret_cast<fftwf_complex*>(const_cast<void*>(x.data()));
  auto* out = reinterpret_cast<fftwf_complex*>(y.mutable_data());
  fftwf_plan p = fftwf_plan_dft_1d(static_cast<int>(n), in, out, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  for (auto _ : st) {
    fftwf_execute_dft(p, in, out);
    benchmark::ClobberMemory();
  }
  fftwf_destroy_plan(p);
  set_counters(st, n);
}
void rfft_raw_f64(benchmark::State& st, std::int64_t n) {
  const Tensor x = random(n, DType::f64, 2), y = Tensor::empty({n / 2 + 1}, DType::c128);
  auto* in = const_cast<double*>(x.data_ptr<double>());
  auto* out = reinterpret_cast<fftw_complex*>(y.mutable_data());
  fftw_plan p = fftw_plan_dft_r2c_1d(static_cast<int>(n), in, out, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  for (auto _ : st) {
    fftw_execute_dft_r2c(p, in, out);
    benchmark::ClobberMemory();
  }
  fftw_destroy_plan(p);
  set_counters(st, n / 2);
}

// Exact case names (no "/arg" suffix).
const bool kRegistered = [] {
  constexpr std::int64_t kBig = std::int64_t{1} << 20;
  auto reg = [](const std::string& name, auto f, std::int64_t n, benchmark::TimeUnit unit) {
    benchmark::RegisterBenchmark(name.c_str(), [f, n](benchmark::State& st) { f(st, n); })->Unit(unit);
  };
  const auto ms = benchmark::kMillisecond, us = benchmark::kMicrosecond;
  reg("fft/held/c128_2^20", fft_held<DType::c128>, kBig, ms);
  reg("fft/held/into/c128_2^20", fft_held_into<DType::c128>, kBig, ms);
  reg("fft/raw_fftw/c128_2^20", fft_raw_c128, kBig, ms);
  reg("rfft/held/f64_2^20", rfft_held, kBig, ms);
  reg("rfft/held/into/f64_2^20", rfft_held_into, kBig, ms);
  reg("rfft/raw_fftw/f64_2^20", rfft_raw_f64, kBig, ms);
  reg("fft/held/c64_2^20", fft_held<DType::c64>, kBig, ms);
  reg("fft/held/into/c64_2^20", fft_held_into<DType::c64>, kBig, ms);
  reg("fft/raw_fftw/c64_2^20", fft_raw_c64, kBig, ms);
  // Fixed cost of a small transform (plan-cache lookup, validation, dispatch).
  reg("fft/held/into/c128_64", fft_held_into<DType::c128>, 64, us);
  reg("fft/raw_fftw/c128_64", fft_raw_c128, 64, us);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
