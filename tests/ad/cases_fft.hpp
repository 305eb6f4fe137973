#pragma once
// Derivative-check cases for the FFT rules (src/ad/rules_fft.cpp, Note [FFT adjoints]):
// every transform, every norm mode, transform lengths equal to, smaller than (crop) and
// larger than (zero-pad) the input extent, odd and even lengths of the halved axis,
// several axes, batched signals. Each case runs with f64 and c128 inputs (rfft: f64
// only, it takes real input); with f64 inputs fft/ifft/irfft exercise the real-input
// path (the cotangent's real part). Also analytic-gradient tests (Parseval), included
// by ad_rules_test.cpp only.
#include <optional>
#include <string>

#include "ad/rule_case.hpp"

namespace tenferro::testing {

inline const char* fft_norm_name(FftNorm norm) {
  return norm == FftNorm::backward ? "backward" : norm == FftNorm::ortho ? "ortho" : "forward";
}
using FftLen = std::optional<std::int64_t>;
/// Case-name part for a transform length ("n8", or "ndefault" when not given).
inline std::string fft_len_name(FftLen n) {
  std::string r = "n";  // appended, not "n" + s (GCC 12's -Wrestrict false positive)
  r += n ? std::to_string(*n) : std::string("default");
  return r;
}

inline void add_fft_cases(CaseList& add) {
  constexpr FftNorm kNorms[] = {FftNorm::backward, FftNorm::ortho, FftNorm::forward};
  // ---- fft / ifft along one axis: [5, 3] holds 3 signals of length 5; n = 5 (equal),
  // 3 (crop), 8 (zero-pad).
  for (FftNorm norm : kNorms)
    for (FftLen n : {FftLen{}, FftLen{3}, FftLen{8}}) {
      const std::string suffix = std::string("_") + fft_norm_name(norm) + "_" + fft_len_name(n);
      FftOptions o;
      o.n = n;
      o.norm = norm;
      add("fft", "fft" + suffix, {{{5, 3}}}, [o](auto& c, Args x) { return Out{ad::fft(c, x[0], o)}; });
      add("ifft", "ifft" + suffix, {{{5, 3}}}, [o](auto& c, Args x) { return Out{ad::ifft(c, x[0], o)}; });
    }
  {
    FftOptions o;
    o.axis = -1;  // along the last axis of [3, 4, 2] (a strided transform), zero-padded
    o.n = 6;
    add("fft", "fft_last_axis_pad", {{{3, 4, 2}}}, [o](auto& c, Args x) { return Out{ad::fft(c, x[0], o)}; });
    o.axis = 1;
    o.n = 3;
    o.norm = FftNorm::ortho;
    add("ifft", "ifft_middle_axis_crop", {{{3, 4, 2}}}, [o](auto& c, Args x) { return Out{ad::ifft(c, x[0], o)}; });
    o.axis = 0;
    o.n = 4;
    o.planner = FftPlanner::measure;  // the rules plan their transforms the same way
    add("fft", "fft_measure_planner", {{{3, 2}}}, [o](auto& c, Args x) { return Out{ad::fft(c, x[0], o)}; });
  }
  // ---- rfft (real input): input length 6 with n = 6 (even), 3 and 4 (crop, odd/even),
  // 9 and 10 (pad, odd/even); an odd input length 7 with the default n.
  for (FftNorm norm : kNorms) {
    for (FftLen n : {FftLen{}, FftLen{3}, FftLen{4}, FftLen{9}, FftLen{10}}) {
      FftOptions o;
      o.n = n;
      o.norm = norm;
      add("rfft", std::string("rfft_") + fft_norm_name(norm) + "_" + fft_len_name(n), {{{6, 2}}},
          [o](auto& c, Args x) { return Out{ad::rfft(c, x[0], o)}; }, false);
    }
    FftOptions o;
    o.norm = norm;
    add("rfft", std::string("rfft_") + fft_norm_name(norm) + "_odd_length", {{{7, 2}}},
        [o](auto& c, Args x) { return Out{ad::rfft(c, x[0], o)}; }, false);
  }
  {
    FftOptions o;
    o.axis = 1;
    add("rfft", "rfft_axis1_batched", {{{2, 5, 3}}}, [o](auto& c, Args x) { return Out{ad::rfft(c, x[0], o)}; }, false);
  }
  // ---- irfft: input of 4 bins, n = 6 (default: h = 4 = m), 7 (h = 4, odd), 5 and 4
  // (h = 3: crop, odd/even), 9 and 10 (h = 5, 6: zero-pad, odd/even), 1 and 2 (only the
  // self-mirrored bins 0 and n/2).
  for (FftNorm norm : kNorms)
    for (FftLen n : {FftLen{}, FftLen{7}, FftLen{5}, FftLen{4}, FftLen{9}, FftLen{10}, FftLen{1}, FftLen{2}}) {
      FftOptions o;
      o.n = n;
      o.norm = norm;
      add("irfft", std::string("irfft_") + fft_norm_name(norm) + "_" + fft_len_name(n), {{{4, 3}}},
          [o](auto& c, Args x) { return Out{ad::irfft(c, x[0], o)}; });
    }
  {
    FftOptions o;
    o.axis = -1;
    o.n = 5;
    add("irfft", "irfft_last_axis", {{{2, 3, 4}}}, [o](auto& c, Args x) { return Out{ad::irfft(c, x[0], o)}; });
  }
  // ---- n-dimensional forms: axes out of order, crop on one axis and pad on another.
  for (FftNorm norm : kNorms) {
    const std::string nm = fft_norm_name(norm);
    FftnOptions o;
    o.axes = {2, 0};
    o.n = {4, 6};  // axis 2: 5 → 4 (crop); axis 0: 4 → 6 (pad)
    o.norm = norm;
    add("fft", "fftn_axes20_crop_pad_" + nm, {{{4, 3, 5}}}, [o](auto& c, Args x) { return Out{ad::fftn(c, x[0], o)}; });
    add("ifft", "ifftn_axes20_crop_pad_" + nm, {{{4, 3, 5}}}, [o](auto& c, Args x) { return Out{ad::ifftn(c, x[0], o)}; });
    FftnOptions r;
    r.axes = {2, 0};  // halved axis 0
    r.n = {4, 6};     // axis 2: crop 5 → 4; axis 0: pad 4 → 6 (even, h = 4)
    r.norm = norm;
    add("rfft", "rfftn_axes20_even_" + nm, {{{4, 3, 5}}}, [r](auto& c, Args x) { return Out{ad::rfftn(c, x[0], r)}; }, false);
    r.n = {6, 3};  // axis 2: pad 5 → 6; axis 0: crop 4 → 3 (odd, h = 2)
    add("rfft", "rfftn_axes20_odd_" + nm, {{{4, 3, 5}}}, [r](auto& c, Args x) { return Out{ad::rfftn(c, x[0], r)}; }, false);
    FftnOptions i;
    i.axes = {0, 2};  // halved axis 2
    i.n = {5, 4};     // axis 0: pad 4 → 5; axis 2: h = 3 = m (even n)
    i.norm = norm;
    add("irfft", "irfftn_axes02_even_" + nm, {{{4, 2, 3}}}, [i](auto& c, Args x) { return Out{ad::irfftn(c, x[0], i)}; });
    i.n = {3, 7};  // axis 0: crop 4 → 3; axis 2: h = 4, pad 3 → 4 (odd n)
    add("irfft", "irfftn_axes02_odd_" + nm, {{{4, 2, 3}}}, [i](auto& c, Args x) { return Out{ad::irfftn(c, x[0], i)}; });
  }
  add("fft", "fftn_all_axes", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::fftn(c, x[0])}; });
  add("ifft", "ifftn_first_axes_from_n", {{{3, 4, 2}}}, [](auto& c, Args x) {
    FftnOptions o;
    o.n = {2, 5};  // axes 0 and 1 (NumPy's "last len(s)" in column-major order)
    return Out{ad::ifftn(c, x[0], o)};
  });
  add("rfft", "rfftn_all_axes", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::rfftn(c, x[0])}; }, false);
  add("irfft", "irfftn_all_axes_default", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::irfftn(c, x[0])}; });
  // Round trips and compositions (the rules of two transforms in one graph).
  add("irfft", "irfft_of_rfft_round_trip", {{{6, 2}}}, [](auto& c, Args x) {
    FftOptions o;
    o.n = 7;
    return Out{ad::irfft(c, ad::rfft(c, x[0], o), o)};
  }, false);
  add("fft", "ifft_of_fft_times_input", {{{4, 2}}}, [](auto& c, Args x) {
    return Out{ad::mul(c, ad::ifft(c, ad::fft(c, x[0], {.norm = FftNorm::ortho}), {.n = 4}), x[0])};
  });
}

}  // namespace tenferro::testing

// ---- analytic gradients (TESTs: this header is included by ad_rules_test.cpp only)
namespace tenferro::testing {

inline CpuBackend& fft_test_backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}

/// The gradient of L = Σ |fftn(x)|² (a real loss) for a leaf x.
inline Tensor parseval_gradient(Session& s, const Tensor& x, const FftnOptions& o) {
  ad::Context c(s);
  ad::EagerTensor xl = c.leaf(x);
  ad::EagerTensor y = ad::fftn(c, xl, o);
  ad::EagerTensor loss = ad::sum(c, ad::real(c, ad::mul(c, ad::conj(c, y), y)));
  c.backward(loss);
  return xl.grad();
}

// Parseval: Σ |F x|² = N·Σ |x|² (unnormalized F, N the product of the lengths), so the
// gradient is 2N·x (PyTorch convention for complex x: ∂L/∂Re + i∂L/∂Im = 2N·x); norm
// ortho makes F unitary (gradient 2x) and norm forward scales F by 1/N (gradient 2x/N).
TEST(AdFft, ParsevalGradientIs2NTimesX) {
  HeldSession s = fft_test_backend().open_session();
  std::mt19937_64 rng(11);
  for (DType d : {DType::f64, DType::c128}) {
    const Tensor x = rand_in(rng, {8, 3}, d, -1, 1);
    for (FftNorm norm : {FftNorm::backward, FftNorm::ortho, FftNorm::forward}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + fft_norm_name(norm));
      const double scale = norm == FftNorm::backward ? 2.0 * 8 : norm == FftNorm::ortho ? 2.0 : 2.0 / 8;
      FftnOptions o;
      o.axes = {0};
      o.norm = norm;
      const Tensor g = parseval_gradient(s, x, o);
      ASSERT_EQ(g.dtype(), d);
      EXPECT_LT(max_abs_diff(s, g, tenferro::mul(s, x, scale)), 1e-12 * scale);
    }
    // Both axes: N = 8·3.
    const Tensor g = parseval_gradient(s, x, {});
    EXPECT_LT(max_abs_diff(s, g, tenferro::mul(s, x, 2.0 * 24)), 1e-11);
  }
}

// Zero-padding to n: Σ|F·P x|² = n·Σ|P x|² = n·Σ|x|², so with n = 16 > 8 the gradient
// is 2·16·x (the adjoint of the zero-pad crops the padded bins away).
TEST(AdFft, ParsevalGradientWithZeroPadding) {
  HeldSession s = fft_test_backend().open_session();
  std::mt19937_64 rng(12);
  const Tensor x = rand_in(rng, {8, 2}, DType::c128, -1, 1);
  ad::Context c(s);
  ad::EagerTensor xl = c.leaf(x);
  ad::EagerTensor y = ad::fft(c, xl, {.n = 16});
  c.backward(ad::sum(c, ad::real(c, ad::mul(c, ad::conj(c, y), y))));
  EXPECT_LT(max_abs_diff(s, xl.grad(), tenferro::mul(s, x, 32.0)), 1e-11);
}

// irfft reads only the real part of bin 0 and (even n) bin n/2: the gradient's
// imaginary part vanishes there, and the interior bins count twice.
TEST(AdFft, IrfftIgnoresImaginaryPartOfSelfMirroredBins) {
  HeldSession s = fft_test_backend().open_session();
  std::mt19937_64 rng(13);
  const Tensor z = rand_in(rng, {4}, DType::c128, -1, 1);
  ad::Context c(s);
  ad::EagerTensor zl = c.leaf(z);
  ad::EagerTensor y = ad::irfft(c, zl, {.norm = FftNorm::forward});  // n = 6, unscaled
  // L = y[0] = Re z0 + 2·Σ_{k=1,2} Re z_k + Re z3 (the sum of the unscaled inverse at j = 0).
  c.backward(ad::sum(c, ad::slice(c, y, {0}, {1})));
  const Tensor g = tenferro::to_contiguous(s, zl.grad());
  const c128* p = g.data_ptr<c128>();
  const c128 expect[] = {{1, 0}, {2, 0}, {2, 0}, {1, 0}};
  for (int k = 0; k < 4; ++k) EXPECT_LT(std::abs(p[k] - expect[k]), 1e-14) << "bin " << k;
}

// An input that does not require grad records nothing (no node, no extra work).
TEST(AdFft, ConstantInputRecordsNothing) {
  HeldSession s = fft_test_backend().open_session();
  ad::Context c(s);
  const ad::EagerTensor y = ad::rfftn(c, ad::EagerTensor(Tensor::ones({4, 3}, DType::f64)));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(c.tape().live, 0u);
}

}  // namespace tenferro::testing
