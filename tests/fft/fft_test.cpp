// fft, ifft, rfft, irfft against an O(n²) DFT: every length 1..64 and some primes,
// every norm, f32/f64/c64/c128, crop and zero-pad, every layout, batch axes, _into
// forms with strided outputs, round trips, and the plan cache.
#include <fftw3.h>

#include <thread>

#include "fft/fft_reference.hpp"
#include "fft/fft_threads.hpp"  // internal: the arena loop counter

using namespace tenferro;
using namespace tenferro::testing;

namespace {

std::vector<std::int64_t> test_lengths() {
  std::vector<std::int64_t> v;
  for (std::int64_t n = 1; n <= 64; ++n) v.push_back(n);
  for (std::int64_t n : {97, 101, 128, 257}) v.push_back(n);
  return v;
}

std::string name_of(DType d, std::int64_t n) { return std::string(dtype_name(d)) + " n=" + std::to_string(n); }

TEST(Fft, ComplexTransformsMatchNaiveDftForEveryLength) {
  std::mt19937_64 rng(1);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : kInexactDTypes) {
    for (std::int64_t n : test_lengths()) {
      const Tensor x = random_tensor(rng, {n, 3}, d);  // 3 signals along axis 0
      const double tol = fft_tol(d, static_cast<double>(n));
      expect_close_to(fft(s, x), naive_dft(x, 0, n, -1), tol, "fft " + name_of(d, n));
      expect_close_to(ifft(s, x), scaled(naive_dft(x, 0, n, +1), 1.0 / static_cast<double>(n)), tol, "ifft " + name_of(d, n));
    }
  }
}

TEST(Fft, OutputDtypes) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::pair<DType, DType> cases[] = {{DType::f32, DType::c64}, {DType::c64, DType::c64}, {DType::f64, DType::c128}, {DType::c128, DType::c128}};
  for (auto [in, want] : cases) {
    const Tensor x = Tensor::ones({4}, in);
    EXPECT_EQ(fft(s, x).dtype(), want);
    EXPECT_EQ(ifft(s, x).dtype(), want);
    EXPECT_EQ(irfft(s, x).dtype(), real_dtype(want));
    if (is_floating(in)) {
      EXPECT_EQ(rfft(s, x).dtype(), want);
    }
  }
}

TEST(Fft, RealTransformsMatchNaiveDftForEveryLength) {
  std::mt19937_64 rng(2);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : kFloatDTypes) {
    for (std::int64_t n : test_lengths()) {
      const double tol = fft_tol(d, static_cast<double>(n));
      const Tensor x = random_tensor(rng, {n, 2}, d);
      expect_close_to(rfft(s, x), head_axis(naive_dft(x, 0, n, -1), 0, n / 2 + 1), tol, "rfft " + name_of(d, n));
      // irfft of an arbitrary (non-Hermitian) half spectrum, with n given (odd n too).
      const Tensor h = random_tensor(rng, {n / 2 + 1, 2}, complex_dtype(d));
      expect_close_to(irfft(s, h, {.n = n}), scaled(naive_irfft(h, 0, n), 1.0 / static_cast<double>(n)), tol, "irfft " + name_of(d, n));
    }
  }
}

TEST(Fft, IrfftDefaultLengthIsTwiceMMinusOne) {
  std::mt19937_64 rng(3);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor h = random_tensor(rng, {5, 3}, DType::c128);
  const Tensor y = irfft(s, h);
  EXPECT_EQ(y.shape(), Shape({8, 3}));
  expect_close_to(y, scaled(naive_irfft(h, 0, 8), 1.0 / 8), fft_tol(DType::f64, 8), "irfft default n");
  // A real input is promoted: irfft of real values.
  const Tensor r = random_tensor(rng, {4}, DType::f64);
  expect_close_to(irfft(s, r), scaled(naive_irfft(r, 0, 6), 1.0 / 6), fft_tol(DType::f64, 6), "irfft real input");
}

TEST(Fft, EveryNormScalesAsNumPy) {
  std::mt19937_64 rng(4);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::int64_t n = 12;
  for (FftNorm norm : {FftNorm::backward, FftNorm::ortho, FftNorm::forward}) {
    const std::string tag = "norm " + std::to_string(static_cast<int>(norm));
    const double tol = fft_tol(DType::f64, n);
    const Tensor x = random_tensor(rng, {n, 2}, DType::c128), r = random_tensor(rng, {n, 2}, DType::f64);
    const Tensor h = random_tensor(rng, {n / 2 + 1, 2}, DType::c128);
    expect_close_to(fft(s, x, {.norm = norm}), scaled(naive_dft(x, 0, n, -1), norm_scale(norm, true, n)), tol, "fft " + tag);
    expect_close_to(ifft(s, x, {.norm = norm}), scaled(naive_dft(x, 0, n, +1), norm_scale(norm, false, n)), tol, "ifft " + tag);
    expect_close_to(rfft(s, r, {.norm = norm}), scaled(head_axis(naive_dft(r, 0, n, -1), 0, n / 2 + 1), norm_scale(norm, true, n)), tol,
                    "rfft " + tag);
    expect_close_to(irfft(s, h, {.n = n, .norm = norm}), scaled(naive_irfft(h, 0, n), norm_scale(norm, false, n)), tol, "irfft " + tag);
    // f32 scaling keeps f32.
    const Tensor x32 = random_tensor(rng, {n}, DType::c64);
    expect_close_to(ifft(s, x32, {.norm = norm}), scaled(naive_dft(x32, 0, n, +1), norm_scale(norm, false, n)), fft_tol(DType::f32, n),
                    "ifft c64 " + tag);
  }
}

TEST(Fft, RoundTrips) {
  std::mt19937_64 rng(5);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : kInexactDTypes) {
    for (std::int64_t n : {1, 2, 7, 16, 31, 97}) {
      const double tol = fft_tol(d, n);
      for (FftNorm norm : {FftNorm::backward, FftNorm::ortho, FftNorm::forward}) {
        const Tensor x = random_tensor(rng, {n, 3}, d);
        expect_close_to(ifft(s, fft(s, x, {.norm = norm}), {.norm = norm}), to_c128(x), tol, "ifft(fft) " + name_of(d, n));
        if (is_floating(d)) {  // even and odd n: irfft needs n to recover an odd length
          expect_close_to(irfft(s, rfft(s, x, {.norm = norm}), {.n = n, .norm = norm}), to_c128(x), tol, "irfft(rfft) " + name_of(d, n));
        }
      }
    }
  }
}

TEST(Fft, CropAndZeroPad) {
  std::mt19937_64 rng(6);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : {DType::f64, DType::c128, DType::f32}) {
    const Tensor x = random_tensor(rng, {10, 3}, d);
    for (std::int64_t n : {1, 4, 9, 10, 11, 16, 23}) {
      const double tol = fft_tol(d, n);
      expect_close_to(fft(s, x, {.n = n}), naive_dft(x, 0, n, -1), tol, "fft crop/pad " + name_of(d, n));
      expect_close_to(ifft(s, x, {.n = n}), scaled(naive_dft(x, 0, n, +1), 1.0 / n), tol, "ifft crop/pad " + name_of(d, n));
      expect_close_to(irfft(s, x, {.n = n}), scaled(naive_irfft(x, 0, n), 1.0 / n), tol, "irfft crop/pad " + name_of(d, n));
      if (is_floating(d))
        expect_close_to(rfft(s, x, {.n = n}), head_axis(naive_dft(x, 0, n, -1), 0, n / 2 + 1), tol, "rfft crop/pad " + name_of(d, n));
    }
  }
  // Crop and pad of strided views along axis 1.
  for (Layout layout : kAllLayouts) {
    const Tensor v = random_layout(rng, {3, 6, 2}, DType::f64, layout);
    for (std::int64_t n : {4, 9}) {
      const std::string tag = layout_name(layout) + " n=" + std::to_string(n);
      expect_close_to(fft(s, v, {.n = n, .axis = 1}), naive_dft(v, 1, n, -1), fft_tol(DType::f64, n), "fft axis 1 " + tag);
      expect_close_to(rfft(s, v, {.n = n, .axis = 1}), head_axis(naive_dft(v, 1, n, -1), 1, n / 2 + 1), fft_tol(DType::f64, n), "rfft axis 1 " + tag);
      expect_close_to(irfft(s, v, {.n = n, .axis = 1}), scaled(naive_irfft(v, 1, n), 1.0 / n), fft_tol(DType::f64, n), "irfft axis 1 " + tag);
    }
  }
  // An empty axis zero-pads to all zeros when n is given.
  const Tensor e = Tensor::empty({0, 2}, DType::c128);
  expect_close_to(fft(s, e, {.n = 4}), Tensor::zeros({4, 2}, DType::c128), 0, "fft of empty axis");
}

TEST(Fft, EveryLayoutEveryAxis) {
  std::mt19937_64 rng(7);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Shape shape{5, 4, 6};
  for (DType d : kInexactDTypes) {
    for (Layout layout : kAllLayouts) {
      const Tensor x = random_layout(rng, shape, d, layout);
      const Tensor xc = to_c128(x);
      for (int axis = -3; axis < 3; ++axis) {
        const int a = axis < 0 ? axis + 3 : axis;
        const std::int64_t n = shape[a];
        const std::string tag = std::string(dtype_name(d)) + " " + layout_name(layout) + " axis " + std::to_string(axis);
        const double tol = fft_tol(d, n);
        expect_close_to(fft(s, x, {.axis = axis}), naive_dft(xc, a, n, -1), tol, "fft " + tag);
        expect_close_to(ifft(s, x, {.axis = axis}), scaled(naive_dft(xc, a, n, +1), 1.0 / n), tol, "ifft " + tag);
        expect_close_to(irfft(s, x, {.n = 2 * n - 1, .axis = axis}), scaled(naive_irfft(xc, a, 2 * n - 1), 1.0 / (2 * n - 1)), fft_tol(d, 2 * n),
                        "irfft " + tag);
        if (is_floating(d)) expect_close_to(rfft(s, x, {.axis = axis}), head_axis(naive_dft(xc, a, n, -1), a, n / 2 + 1), tol, "rfft " + tag);
        // The input is never modified (irfft works on a copy).
        expect_close_to(x, xc, 0, "input after " + tag);
      }
    }
  }
}

TEST(Fft, IntoStridedOutputs) {
  std::mt19937_64 rng(8);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = random_layout(rng, {6, 5}, DType::c128, Layout::transposed);
  // Output: a transposed, step-2 window of a larger buffer (row-major-like strides).
  const Tensor big = Tensor::zeros({12, 8}, DType::c128);
  const Tensor view = big.transpose_view().slice_view(0, 0, 6).slice_view(1, 1, 11, 2);  // [6, 5]
  fft_into(s, x, view);
  expect_close_to(view, naive_dft(x, 0, 6, -1), fft_tol(DType::f64, 6), "fft_into transposed strided out");
  // Padding goes through the output itself (in place): same check with n > extent and
  // a real input that is promoted.
  const Tensor r = random_layout(rng, {4, 5}, DType::f64, Layout::negative_stride);
  const Tensor pad_out = Tensor::zeros({5, 7}, DType::c128).transpose_view();  // [7, 5]
  fft_into(s, r, pad_out, {.n = 7});
  expect_close_to(pad_out, naive_dft(r, 0, 7, -1), fft_tol(DType::f64, 7), "fft_into padded promoted");
  ifft_into(s, r, pad_out, {.n = 7, .norm = FftNorm::ortho});
  expect_close_to(pad_out, scaled(naive_dft(r, 0, 7, +1), 1 / std::sqrt(7.0)), fft_tol(DType::f64, 7), "ifft_into padded ortho");
  const Tensor rout = Tensor::zeros({5, 3}, DType::c128).transpose_view();  // [3, 5]
  rfft_into(s, r, rout);
  expect_close_to(rout, head_axis(naive_dft(r, 0, 4, -1), 0, 3), fft_tol(DType::f64, 4), "rfft_into");
  const Tensor iout = Tensor::zeros({5, 9}, DType::f64).transpose_view().slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);  // [9, 5]
  irfft_into(s, x, iout, {.n = 9});
  expect_close_to(iout, scaled(naive_irfft(x, 0, 9), 1.0 / 9), fft_tol(DType::f64, 9), "irfft_into negative-stride out");
}

TEST(Fft, LargeTransformOnSeveralThreads) {
  // Large enough to fork (Note [Fork cost model]): FFTW plans with the session's budget.
  std::mt19937_64 rng(9);
  CpuBackendOptions two;
  two.num_threads = 2;
  CpuBackend backend(two);
  HeldSession s = backend.open_session();
  const std::int64_t n = 1 << 16;
  const Tensor x = random_tensor(rng, {n, 2}, DType::c128);
  const Tensor y = fft(s, x);
  // FFTW's parallel loops ran on the backend's arena (Note [FFTW threads]).
  EXPECT_GT(detail::fftw_arena_loops(), 0u);
  // Check against the inverse (an O(n²) reference would be slow) and a few DFT bins.
  expect_close_to(ifft(s, y), to_c128(x), fft_tol(DType::f64, n), "ifft(fft) 2^16 on 2 threads");
  for (std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{777}, n - 1}) {
    c128 acc = 0;
    for (std::int64_t j = 0; j < n; ++j)
      acc += x.item<c128>({j, 1}) * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n));
    EXPECT_TRUE(close(y.item<c128>({k, 1}), acc, fft_tol(DType::f64, n))) << "bin " << k;
  }
}

TEST(Fft, ForeignThreadedFftwPlansStillWork) {
  // tenferro replaces FFTW's parallel loop process-wide (Note [FFTW threads]); a
  // threaded plan made and run by other code, outside any session, must still work
  // (its jobs run on plain threads).
  std::mt19937_64 rng(13);
  CpuBackend backend;
  const std::int64_t n = 1 << 15;
  const Tensor x = random_tensor(rng, {n}, DType::c128);
  const Tensor want = backend.with_session([&](Session& s) { return fft(s, x); });  // installs the loop
  Tensor y = Tensor::empty({n}, DType::c128);
  auto* in = reinterpret_cast<fftw_complex*>(const_cast<void*>(x.data()));
  auto* out = reinterpret_cast<fftw_complex*>(y.mutable_data());
  fftw_plan_with_nthreads(2);
  fftw_plan p = fftw_plan_dft_1d(static_cast<int>(n), in, out, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  fftw_plan_with_nthreads(1);
  ASSERT_NE(p, nullptr);
  fftw_execute(p);
  fftw_destroy_plan(p);
  expect_close_to(y, to_c128(want), fft_tol(DType::f64, n), "foreign threaded plan");
}

TEST(Fft, PlanCacheHitsOnRepeatedCalls) {
  std::mt19937_64 rng(10);
  CpuBackend backend;
  const Tensor x = random_tensor(rng, {32, 4}, DType::c128);
  const Tensor r = random_tensor(rng, {32, 4}, DType::f64);
  PlanCacheStats first{}, second{};
  {
    HeldSession s = backend.open_session();
    (void)fft(s, x);
    (void)rfft(s, r);
    first = fft_plan_cache_stats(s);
    for (int i = 0; i < 5; ++i) {
      (void)fft(s, x);
      (void)rfft(s, r);
    }
    second = fft_plan_cache_stats(s);
  }
  EXPECT_EQ(first.misses, 2u);
  EXPECT_EQ(first.entries, 2u);
  EXPECT_EQ(second.hits - first.hits, 10u);
  EXPECT_EQ(second.misses, first.misses);
  EXPECT_EQ(second.entries, 2u);
  // Plans outlive the session: they stay with the backend's resources.
  backend.with_session([&](Session& s) {
    (void)fft(s, x);
    EXPECT_EQ(fft_plan_cache_stats(s).hits, second.hits + 1);
  });
  // A different layout or direction is a different plan.
  backend.with_session([&](Session& s) {
    (void)ifft(s, x);
    (void)fft(s, x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1));
    EXPECT_EQ(fft_plan_cache_stats(s).entries, 4u);
  });
}

TEST(Fft, PlanCacheEvictsLeastRecentlyUsed) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor keep = Tensor::ones({3}, DType::c128);
  for (std::int64_t n = 1; n <= 40; ++n) {
    (void)fft(s, keep);  // the most recently used plan is never the one evicted
    (void)fft(s, Tensor::ones({n + 3}, DType::c128));
  }
  const PlanCacheStats st = fft_plan_cache_stats(s);
  EXPECT_EQ(st.entries, 32u);
  EXPECT_EQ(st.evictions, 41u - 32u);
  EXPECT_EQ(st.misses, 41u);
}

TEST(Fft, MeasurePlannerGivesTheSameResultAndLeavesInputAlone) {
  std::mt19937_64 rng(11);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = random_tensor(rng, {24, 3}, DType::c128).transpose_view();  // [3, 24]
  const Tensor before = to_c128(x);
  const Tensor y = fft(s, x, {.axis = 1, .planner = FftPlanner::measure});
  expect_close_to(x, before, 0, "input after measure planning");
  expect_close_to(y, naive_dft(x, 1, 24, -1), fft_tol(DType::f64, 24), "fft measure");
  const Tensor r = random_tensor(rng, {15}, DType::f32);
  expect_close_to(irfft(s, rfft(s, r, {.planner = FftPlanner::measure}), {.n = 15, .planner = FftPlanner::measure}), to_c128(r),
                  fft_tol(DType::f32, 15), "irfft(rfft) measure");
}

TEST(Fft, ScopedSessionsAndRankZeroBatch) {
  std::mt19937_64 rng(12);
  CpuBackend backend;
  const Tensor x = random_tensor(rng, {7}, DType::c64);
  backend.with_session([&](Session& s) { expect_close_to(fft(s, x), naive_dft(x, 0, 7, -1), fft_tol(DType::f32, 7), "scoped fft"); });
  // Zero batch extent: an empty result, nothing to transform.
  backend.with_session([&](Session& s) {
    const Tensor e = Tensor::empty({8, 0}, DType::f64);
    EXPECT_EQ(rfft(s, e).shape(), Shape({5, 0}));
    EXPECT_EQ(irfft(s, e).shape(), Shape({14, 0}));
  });
}

TEST(Fft, ConcurrentPlanningOnDisjointBackends) {
  // Two backends on disjoint CPU sets run at the same time; both plan new sizes (the
  // planner lock serializes FFTW's planner) and execute concurrently.
  const std::vector<int> all = CpuBackend().cpus();
  if (all.size() < 2) GTEST_SKIP() << "needs two CPUs";
  auto work = [](int cpu, std::uint64_t seed, bool* ok) {
    CpuBackendOptions o;
    o.cpus = {cpu};
    CpuBackend b(o);
    std::mt19937_64 rng(seed);
    HeldSession s = b.open_session();
    bool good = true;
    for (std::int64_t n = 1; n <= 80; ++n) {
      const Tensor x = random_tensor(rng, {n, 2}, n % 2 ? DType::c128 : DType::c64);
      const Tensor y = ifft(s, fft(s, x));
      for_each_index(x.shape(), [&](const Dims& i) { good = good && close(value_at(y, i), value_at(x, i), fft_tol(x.dtype(), n)); });
    }
    *ok = good;
  };
  bool ok0 = false, ok1 = false;
  std::thread t0(work, all[0], 31, &ok0), t1(work, all[1], 32, &ok1);
  t0.join();
  t1.join();
  EXPECT_TRUE(ok0);
  EXPECT_TRUE(ok1);
}

}  // namespace
