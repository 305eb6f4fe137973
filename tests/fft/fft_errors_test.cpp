// Every bad input of the FFT family: the error type, the op name in the message, and
// an output that was not written.
#include <functional>

#include "fft/fft_reference.hpp"
#include "support/expect_error.hpp"

using namespace tenferro;
using namespace tenferro::testing;

namespace {

// Expects f() to throw exactly E with a message starting with "<op>: " (the shared
// expect_error), and that `out` was not written.
template <class E> void expect_refused(const std::function<void()>& f, const Tensor& out, const std::string& op, const std::string& what) {
  SCOPED_TRACE(what);
  const auto before = snapshot(out);
  expect_error<E>(f, op);
  expect_untouched(out, before);
}

Tensor filled(std::initializer_list<std::int64_t> shape, DType d) {
  std::mt19937_64 rng(99);
  return random_tensor(rng, Shape(shape), d);
}

TEST(FftErrors, BadAxes) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = filled({4, 3}, DType::c128);
  const Tensor out = filled({4, 3}, DType::c128);
  expect_refused<AxisError>([&] { fft_into(s, x, out, {.axis = 2}); }, out, "fft", "axis 2 of rank 2");
  expect_refused<AxisError>([&] { ifft_into(s, x, out, {.axis = -3}); }, out, "ifft", "axis -3 of rank 2");
  expect_refused<AxisError>([&] { fftn_into(s, x, out, {.axes = {0, 0}}); }, out, "fftn", "repeated axis");
  expect_refused<AxisError>([&] { fftn_into(s, x, out, {.axes = {1, -1}}); }, out, "fftn", "repeated axis (negative spelling)");
  expect_refused<AxisError>([&] { ifftn_into(s, x, out, {.axes = {0, 5}}); }, out, "ifftn", "axis out of range in a set");
  expect_refused<AxisError>([&] { fftn_into(s, x, out, {.axes = {0, 1, 0}}); }, out, "fftn", "more axes than the rank");
  const Tensor r = filled({4, 3}, DType::f64);
  const Tensor rout = filled({3, 3}, DType::c128);
  expect_refused<AxisError>([&] { rfft_into(s, r, rout, {.axis = 7}); }, rout, "rfft", "rfft axis out of range");
  expect_refused<AxisError>([&] { rfftn_into(s, r, rout, {.axes = {1, 1}}); }, rout, "rfftn", "rfftn repeated axis");
  const Tensor iout = filled({6, 3}, DType::f64);
  expect_refused<AxisError>([&] { irfft_into(s, x, iout, {.axis = 2}); }, iout, "irfft", "irfft axis out of range");
  expect_refused<AxisError>([&] { irfftn_into(s, x, iout, {.axes = {0, 0}}); }, iout, "irfftn", "irfftn repeated axis");
  // Rank 0: no axis 0.
  EXPECT_THROW((void)fft(s, Tensor::scalar(1.0)), AxisError);
}

TEST(FftErrors, BadLengths) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = filled({4, 3}, DType::c128);
  const Tensor out = filled({4, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { fft_into(s, x, out, {.n = 0}); }, out, "fft", "n = 0");
  expect_refused<ArgumentError>([&] { ifft_into(s, x, out, {.n = -4}); }, out, "ifft", "n = -4");
  expect_refused<ArgumentError>([&] { fftn_into(s, x, out, {.axes = {0, 1}, .n = {4, 0}}); }, out, "fftn", "n {4, 0}");
  expect_refused<ArgumentError>([&] { fftn_into(s, x, out, {.axes = {0, 1}, .n = {4}}); }, out, "fftn", "n and axes of different lengths");
  expect_refused<ArgumentError>([&] { ifftn_into(s, x, out, {.n = {4, 3, 2}}); }, out, "ifftn", "n longer than the rank");
  const Tensor iout = filled({1, 3}, DType::f64);
  const Tensor one = filled({1, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { irfft_into(s, one, iout); }, iout, "irfft", "default n = 2(m-1) = 0");
  expect_refused<ArgumentError>([&] { irfftn_into(s, one, iout, {.axes = {1, 0}}); }, iout, "irfftn", "irfftn default n = 0 on the last axis");
  const Tensor rout = filled({1, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { rfft_into(s, filled({4, 3}, DType::f64), rout, {.n = 0}); }, rout, "rfft", "rfft n = 0");
  // An empty axis implies n = 0 unless n is given.
  EXPECT_THROW((void)fft(s, Tensor::empty({0, 3}, DType::c128)), ArgumentError);
  // Real transforms need an axis.
  EXPECT_THROW((void)rfftn(s, Tensor::scalar(1.0)), ArgumentError);
  EXPECT_THROW((void)irfftn(s, Tensor::scalar(1.0, DType::c128)), ArgumentError);
}

TEST(FftErrors, BadDtypes) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor out = filled({4}, DType::c128);
  for (DType d : {DType::i32, DType::i64, DType::b8}) {
    const Tensor x = Tensor::zeros({4}, d);
    const std::string tag = std::string(dtype_name(d)) + " input";
    expect_refused<DTypeError>([&] { fft_into(s, x, out); }, out, "fft", "fft " + tag);
    expect_refused<DTypeError>([&] { ifftn_into(s, x, out); }, out, "ifftn", "ifftn " + tag);
    expect_refused<DTypeError>([&] { rfft_into(s, x, out); }, out, "rfft", "rfft " + tag);
    expect_refused<DTypeError>([&] { irfft_into(s, x, out); }, out, "irfft", "irfft " + tag);
  }
  const Tensor rout = filled({3}, DType::c128);
  expect_refused<DTypeError>([&] { rfft_into(s, filled({4}, DType::c128), rout); }, rout, "rfft", "complex input to rfft");
  expect_refused<DTypeError>([&] { rfftn_into(s, filled({4}, DType::c64), rout); }, rout, "rfftn", "complex input to rfftn");
  // Wrong output dtypes.
  const Tensor x = filled({4}, DType::c128);
  const Tensor o64 = filled({4}, DType::c64), of64 = filled({4}, DType::f64);
  expect_refused<DTypeError>([&] { fft_into(s, x, o64); }, o64, "fft", "c64 out for a c128 result");
  expect_refused<DTypeError>([&] { fft_into(s, x, of64); }, of64, "fft", "real out for a complex result");
  expect_refused<DTypeError>([&] { fft_into(s, filled({4}, DType::f32), out); }, out, "fft", "c128 out for an f32 input (c64 result)");
  const Tensor ic = filled({6}, DType::c128);
  expect_refused<DTypeError>([&] { irfft_into(s, x, ic); }, ic, "irfft", "complex out for irfft");
}

TEST(FftErrors, BadOutputs) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = filled({4, 3}, DType::c128);
  const Tensor wrong = filled({3, 4}, DType::c128);
  expect_refused<ShapeError>([&] { fft_into(s, x, wrong); }, wrong, "fft", "transposed out shape");
  const Tensor short_out = filled({4, 3}, DType::c128);
  expect_refused<ShapeError>([&] { fft_into(s, x, short_out, {.n = 5}); }, short_out, "fft", "out without the padding");
  const Tensor rwrong = filled({4, 3}, DType::c128);
  expect_refused<ShapeError>([&] { rfft_into(s, filled({4, 3}, DType::f64), rwrong); }, rwrong, "rfft", "rfft out of full length");
  const Tensor iwrong = filled({4, 3}, DType::f64);
  expect_refused<ShapeError>([&] { irfft_into(s, x, iwrong); }, iwrong, "irfft", "irfft out of m instead of 2(m-1)");
  const Tensor nwrong = filled({4, 3, 1}, DType::c128);
  expect_refused<ShapeError>([&] { fftn_into(s, x, nwrong); }, nwrong, "fftn", "out of another rank");
  // A read-only (broadcast) output.
  const Tensor base = filled({1, 3}, DType::c128);
  const Tensor bcast = base.broadcast_view({4, 3});
  expect_refused<ArgumentError>([&] { fft_into(s, x, bcast); }, base, "fft", "broadcast out");
  // An output overlapping the input (in-place is refused).
  const Tensor y = filled({4, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { fft_into(s, y, y); }, y, "fft", "out == x");
  const Tensor big = filled({8, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { ifft_into(s, big.slice_view(0, 0, 4), big.slice_view(0, 2, 6)); }, big, "ifft", "partial overlap");
  // An undefined input.
  const Tensor out = filled({4, 3}, DType::c128);
  expect_refused<ArgumentError>([&] { fft_into(s, Tensor(), out); }, out, "fft", "undefined input");
}

TEST(FftErrors, SessionMisuse) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  s.close();
  expect_session_error([&] { (void)fft(s, filled({4}, DType::c128)); }, SessionEntryKind::Poisoned, "fft");
  expect_session_error([&] { (void)fft_plan_cache_stats(s); }, SessionEntryKind::Poisoned, "fft_plan_cache_stats");
}

}  // namespace
