// fftn, ifftn, rfftn, irfftn against the one-axis naive DFT composed axis by axis:
// axis sets in any order (e.g. {2, 0} of a rank-3 tensor), default axes, per-axis crop
// and zero-pad, every norm, every layout, _into outputs.
#include "fft/fft_reference.hpp"

using namespace tenferro;
using namespace tenferro::testing;

namespace {

struct NdCase {
  Dims axes;  ///< as passed (may be empty or negative)
  Dims n;     ///< as passed (may be empty)
};

// The axes and lengths a case resolves to (fft.hpp's defaults), for the reference.
void resolve(const Tensor& x, const NdCase& c, bool c2r, std::vector<int>& axes, std::vector<std::int64_t>& len) {
  axes.clear();
  len.clear();
  if (c.axes.empty()) {
    const int count = c.n.empty() ? x.rank() : c.n.size();
    for (int i = 0; i < count; ++i) axes.push_back(i);
  } else {
    for (auto a : c.axes) axes.push_back(static_cast<int>(a < 0 ? a + x.rank() : a));
  }
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!c.n.empty()) len.push_back(c.n[static_cast<int>(i)]);
    else if (c2r && i + 1 == axes.size()) len.push_back(2 * (x.extent(axes[i]) - 1));
    else len.push_back(x.extent(axes[i]));
  }
}

double product(const std::vector<std::int64_t>& v) {
  double p = 1;
  for (auto e : v) p *= static_cast<double>(e);
  return p;
}

Tensor ref_c2c(const Tensor& x, const std::vector<int>& axes, const std::vector<std::int64_t>& len, int sign) {
  Tensor r = to_c128(x);
  for (std::size_t i = 0; i < axes.size(); ++i) r = naive_dft(r, axes[i], len[i], sign);
  return r;
}

Tensor ref_r2c(const Tensor& x, const std::vector<int>& axes, const std::vector<std::int64_t>& len) {
  Tensor r = ref_c2c(x, axes, len, -1);
  return head_axis(r, axes.back(), len.back() / 2 + 1);
}

// NumPy's irfftn: inverse complex DFTs over all but the last axis, then irfft on it.
Tensor ref_c2r(const Tensor& x, const std::vector<int>& axes, const std::vector<std::int64_t>& len) {
  Tensor r = to_c128(x);
  for (std::size_t i = 0; i + 1 < axes.size(); ++i) r = naive_dft(r, axes[i], len[i], +1);
  return naive_irfft(r, axes.back(), len.back());
}

const NdCase kCases[] = {
    {{2, 0}, {}},         {{0, 2}, {}},      {{1}, {}},           {{}, {}},         {{-1, 0}, {}},     {{2, 0, 1}, {}},
    {{2, 0}, {5, 3}},     {{1, 2}, {2, 9}},  {{}, {6, 2}},        {{0}, {7}},       {{2, 1, 0}, {4, 4, 1}},
};

std::string case_name(const NdCase& c) { return "axes " + c.axes.to_string() + " n " + c.n.to_string(); }

TEST(Fftn, AxisSetsLengthsAndNormsMatchReference) {
  std::mt19937_64 rng(21);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<int> axes;
  std::vector<std::int64_t> len;
  for (DType d : kInexactDTypes) {
    const Tensor x = random_tensor(rng, {4, 3, 5}, d);
    for (const NdCase& c : kCases) {
      for (FftNorm norm : {FftNorm::backward, FftNorm::ortho, FftNorm::forward}) {
        const std::string tag = std::string(dtype_name(d)) + " " + case_name(c) + " norm " + std::to_string(static_cast<int>(norm));
        const FftnOptions o{.axes = c.axes, .n = c.n, .norm = norm};
        resolve(x, c, false, axes, len);
        const double N = product(len), tol = fft_tol(d, N);
        expect_close_to(fftn(s, x, o), scaled(ref_c2c(x, axes, len, -1), norm_scale(norm, true, N)), tol, "fftn " + tag);
        expect_close_to(ifftn(s, x, o), scaled(ref_c2c(x, axes, len, +1), norm_scale(norm, false, N)), tol, "ifftn " + tag);
        if (is_floating(d))
          expect_close_to(rfftn(s, x, o), scaled(ref_r2c(x, axes, len), norm_scale(norm, true, N)), tol, "rfftn " + tag);
        resolve(x, c, true, axes, len);
        if (len.back() <= 0) continue;  // extent-1 last axis: default n would be 0
        const double Nr = product(len);
        expect_close_to(irfftn(s, x, o), scaled(ref_c2r(x, axes, len), norm_scale(norm, false, Nr)), fft_tol(d, Nr), "irfftn " + tag);
      }
    }
  }
}

TEST(Fftn, EveryLayout) {
  std::mt19937_64 rng(22);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<int> axes;
  std::vector<std::int64_t> len;
  for (DType d : {DType::f64, DType::c64}) {
    for (Layout layout : kAllLayouts) {
      const Tensor x = random_layout(rng, {6, 4, 5}, d, layout);
      for (const NdCase& c : {NdCase{{2, 0}, {}}, NdCase{{1, 2}, {3, 8}}, NdCase{{}, {}}}) {
        const std::string tag = std::string(dtype_name(d)) + " " + layout_name(layout) + " " + case_name(c);
        const FftnOptions o{.axes = c.axes, .n = c.n};
        resolve(x, c, false, axes, len);
        const double N = product(len), tol = fft_tol(d, N);
        expect_close_to(fftn(s, x, o), ref_c2c(x, axes, len, -1), tol, "fftn " + tag);
        if (is_floating(d)) expect_close_to(rfftn(s, x, o), ref_r2c(x, axes, len), tol, "rfftn " + tag);
        resolve(x, c, true, axes, len);
        expect_close_to(irfftn(s, x, o), scaled(ref_c2r(x, axes, len), 1 / product(len)), fft_tol(d, product(len)), "irfftn " + tag);
      }
    }
  }
}

TEST(Fftn, RoundTripsOverPermutedAxes) {
  std::mt19937_64 rng(23);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : kFloatDTypes) {
    const Tensor x = random_tensor(rng, {5, 3, 7}, d);
    const double tol = fft_tol(d, 105);
    for (const Dims& axes : {Dims{2, 0}, Dims{0, 2}, Dims{1, 2, 0}}) {
      Dims n;
      for (auto a : axes) n.push_back(x.extent(static_cast<int>(a)));  // odd last lengths must be given
      expect_close_to(ifftn(s, fftn(s, x, {.axes = axes}), {.axes = axes}), to_c128(x), tol, "ifftn(fftn) " + axes.to_string());
      expect_close_to(irfftn(s, rfftn(s, x, {.axes = axes}), {.axes = axes, .n = n}), to_c128(x), tol, "irfftn(rfftn) " + axes.to_string());
    }
  }
}

TEST(Fftn, IntoStridedOutputs) {
  std::mt19937_64 rng(24);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<int> axes;
  std::vector<std::int64_t> len;
  const Tensor x = random_layout(rng, {4, 6, 3}, DType::c128, Layout::transposed);
  const NdCase c{{2, 0}, {5, 4}};  // pads axis 2, keeps axis 0
  resolve(x, c, false, axes, len);
  const Tensor out = Tensor::zeros({5, 6, 4}, DType::c128).permute_view({2, 1, 0});  // [4, 6, 5]
  fftn_into(s, x, out, {.axes = c.axes, .n = c.n});
  expect_close_to(out, ref_c2c(x, axes, len, -1), fft_tol(DType::f64, 20), "fftn_into");
  ifftn_into(s, x, out, {.axes = c.axes, .n = c.n});
  expect_close_to(out, scaled(ref_c2c(x, axes, len, +1), 1.0 / 20), fft_tol(DType::f64, 20), "ifftn_into");
  const Tensor r = random_tensor(rng, {4, 6, 3}, DType::f32);
  const Tensor rout = Tensor::zeros({4, 4, 3}, DType::c64).permute_view({1, 0, 2});  // [4, 4, 3], axis 1 halved
  resolve(r, {{2, 1}, {}}, false, axes, len);
  rfftn_into(s, r, rout, {.axes = {2, 1}});
  expect_close_to(rout, ref_r2c(r, axes, len), fft_tol(DType::f32, 18), "rfftn_into");
  const Tensor iout = Tensor::zeros({4, 6, 3}, DType::f32).slice_view(2, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  resolve(rout, {{2, 1}, {}}, true, axes, len);
  irfftn_into(s, rout, iout, {.axes = {2, 1}});
  expect_close_to(iout, scaled(ref_c2r(rout, axes, len), 1.0 / 18), fft_tol(DType::f32, 18), "irfftn_into");
}

TEST(Fftn, RankAboveTheInlineLayout) {
  // Rank 9 (extents and strides on the heap, Note [Compact layout]), a reversed view,
  // a transform over axes {8, 0, 4} and a batch over the rest.
  std::mt19937_64 rng(25);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<int> axes;
  std::vector<std::int64_t> len;
  const Tensor x = random_layout(rng, {3, 1, 2, 1, 4, 1, 2, 1, 5}, DType::c128, Layout::negative_stride);
  const NdCase c{{8, 0, 4}, {}};
  resolve(x, c, false, axes, len);
  expect_close_to(fftn(s, x, {.axes = c.axes}), ref_c2c(x, axes, len, -1), fft_tol(DType::f64, 60), "fftn rank 9");
  resolve(x, c, true, axes, len);
  expect_close_to(irfftn(s, x, {.axes = c.axes}), scaled(ref_c2r(x, axes, len), 1 / product(len)), fft_tol(DType::f64, 96), "irfftn rank 9");
}

TEST(Fftn, ZeroAxesOfARankZeroTensorIsACopy) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::scalar(2.5);
  const Tensor y = fftn(s, x);
  EXPECT_EQ(y.rank(), 0);
  EXPECT_EQ(y.item<c128>(), c128(2.5));
  EXPECT_EQ(ifftn(s, Tensor::scalar(c128(1, 2))).item<c128>(), c128(1, 2));
}

}  // namespace
