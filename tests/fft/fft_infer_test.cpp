// The FFT family's inference alone (ops/fft.hpp): kinds, axes, lengths and output
// signatures resolved from metadata (the inputs are storage-less broadcast views, never
// read, and no session exists).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/fft.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;
using V = std::vector<std::int64_t>;

V vec(std::span<const std::int64_t> d) { return {d.begin(), d.end()}; }
Tensor meta(const V& shape, DType d) { return Tensor::zeros({1}, d).as_strided_view(shape, V(shape.size(), 0), 0); }

TEST(FftInfer, OneAxisKindsAndLengths) {
  const Tensor x = meta({8, 3}, DType::f32);
  const FftRequest c = fft_infer("fft", x, FftOptions{}, FftKind::c2c_forward);
  EXPECT_EQ(vec(c.shape()), (V{8, 3}));
  EXPECT_EQ(c.out_dtype, DType::c64);  // a real input promotes to complex
  const FftRequest r = fft_infer("rfft", x, FftOptions{.n = 10}, FftKind::r2c);
  EXPECT_EQ(vec(r.shape()), (V{6, 3}));  // 10 / 2 + 1
  EXPECT_EQ(r.len[0], 10);
  EXPECT_EQ(r.in_need[0], 10);  // zero-padded to n
  const Tensor z = meta({5, 4}, DType::c128);
  const FftRequest i = fft_infer("irfft", z, FftOptions{.axis = -2}, FftKind::c2r);
  EXPECT_EQ(i.axes[0], 0);
  EXPECT_EQ(i.len[0], 8);  // 2 * (5 - 1)
  EXPECT_EQ(vec(i.shape()), (V{8, 4}));
  EXPECT_EQ(i.out_dtype, DType::f64);
  EXPECT_EQ(i.in_need[0], 5);
  expect_error<DTypeError>([&] { fft_infer("rfft", z, FftOptions{}, FftKind::r2c); }, "rfft");
  expect_error<DTypeError>([] { fft_infer("fft", meta({4}, DType::i64), FftOptions{}, FftKind::c2c_forward); }, "fft");
  expect_error<ArgumentError>([&] { fft_infer("fft", x, FftOptions{.n = 0}, FftKind::c2c_forward); }, "fft");
  expect_error<AxisError>([&] { fft_infer("fft", x, FftOptions{.axis = 2}, FftKind::c2c_forward); }, "fft");
  expect_error<ArgumentError>([] { fft_infer("irfft", meta({1}, DType::c64), FftOptions{}, FftKind::c2r); }, "irfft");  // n = 0 implied
}

TEST(FftInfer, ManyAxesInTheCallersOrder) {
  const Tensor x = meta({4, 5, 6}, DType::f64);
  const FftRequest r = fft_infer("rfftn", x, FftnOptions{.axes = {2, 0}}, FftKind::r2c);
  EXPECT_EQ(r.naxes, 2);
  EXPECT_EQ(r.axes[0], 2);
  EXPECT_EQ(r.axes[1], 0);
  EXPECT_EQ(vec(r.shape()), (V{3, 5, 6}));  // the last listed axis (0) is halved
  const FftRequest all = fft_infer("fftn", x, FftnOptions{}, FftKind::c2c_forward);
  EXPECT_EQ(all.naxes, 3);
  expect_error<AxisError>([&] { fft_infer("fftn", x, FftnOptions{.axes = {1, -2}}, FftKind::c2c_forward); }, "fftn");
  expect_error<ArgumentError>([&] { fft_infer("fftn", x, FftnOptions{.axes = {0, 1}, .n = {4}}, FftKind::c2c_forward); }, "fftn");
  expect_error<ArgumentError>([&] { fft_infer("rfftn", meta({}, DType::f64), FftnOptions{}, FftKind::r2c); }, "rfftn");
}

}  // namespace
}  // namespace tenferro::detail
