// Every enum a public function receives is checked (Note [Enums at the API boundary]
// in src/core/enum_check.hpp): an out-of-range value (a cast, a C caller) throws the
// typed error naming the op, the enum and the value, before anything is written.
#include <gmock/gmock.h>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::enum_args_test {
namespace {

using testing::expect_error;
using testing::expect_untouched;
using testing::snapshot;
using ::testing::HasSubstr;

const DType kBadDType = static_cast<DType>(42);

TEST(EnumArgs, BadDTypeInEveryConstructor) {
  Generator gen(7);
  const std::int64_t shape[] = {2};
  auto bad = [](auto&& f, const std::string& op) {
    const std::string msg = expect_error<DTypeError>(f, op);
    EXPECT_THAT(msg, HasSubstr("dtype value 42"));
  };
  bad([&] { (void)Tensor::zeros({2}, kBadDType); }, "zeros");
  bad([&] { (void)Tensor::zeros(shape, kBadDType); }, "zeros");
  bad([&] { (void)Tensor::zeros({}, kBadDType); }, "zeros");
  bad([&] { (void)Tensor::empty({2}, kBadDType); }, "empty");
  bad([&] { (void)Tensor::empty({100, 100, 100}, kBadDType); }, "empty");
  bad([&] { (void)Tensor::ones({2}, kBadDType); }, "full");
  bad([&] { (void)Tensor::full({2}, Scalar(1.5), kBadDType); }, "full");
  bad([&] { (void)Tensor::scalar(Scalar(1), kBadDType); }, "full");
  bad([&] { (void)Tensor::arange(Scalar(0), Scalar(4), Scalar(1), kBadDType); }, "arange");
  bad([&] { (void)Tensor::arange(4, kBadDType); }, "arange");
  bad([&] { (void)Tensor::eye(3, kBadDType); }, "eye");
  bad([&] { (void)Tensor::uniform(gen, {2}, kBadDType); }, "uniform");
  bad([&] { (void)Tensor::normal(gen, {2}, kBadDType); }, "normal");
  for (int v : {7, 8, 127, 255}) {
    SCOPED_TRACE(v);
    expect_error<DTypeError>([&] { (void)Tensor::zeros({2}, static_cast<DType>(v)); }, "zeros");
  }
}

TEST(EnumArgs, BadDTypeInOps) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::arange(4, DType::f64);
  auto bad = [](auto&& f, const std::string& op) {
    const std::string msg = expect_error<DTypeError>(f, op);
    EXPECT_THAT(msg, HasSubstr("dtype value 42"));
  };
  bad([&] { (void)convert(s, x, kBadDType); }, "convert");
  bad([&] { (void)cast(s, x, kBadDType); }, "cast");
  bad([&] { (void)iota(s, {3}, kBadDType, 0); }, "iota");
}

TEST(EnumArgs, CompareOp) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor a = Tensor::arange(4, DType::f64), b = Tensor::zeros({4}, DType::f64);
  const Tensor out = Tensor::zeros({4}, DType::b8);
  const auto snap = snapshot(out);
  for (int v : {6, 42, 255}) {
    SCOPED_TRACE(v);
    const std::string msg = expect_error<ArgumentError>([&] { (void)compare(s, a, b, static_cast<CompareOp>(v)); }, "compare");
    EXPECT_THAT(msg, HasSubstr("unknown CompareOp value " + std::to_string(v)));
    expect_error<ArgumentError>([&] { compare_into(s, a, b, static_cast<CompareOp>(v), out); }, "compare");
  }
  expect_untouched(out, snap);
}

TEST(EnumArgs, ScatterCombiner) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::zeros({4}, DType::f64);
  const Tensor idx = Tensor::from_data<std::int32_t>({2}, {1, 3});
  const Tensor upd = Tensor::from_data<double>({2}, {5, 6});
  ScatterDims d;
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  const Tensor out = Tensor::full({4}, Scalar(-1.0), DType::f64);
  const auto snap = snapshot(out), xsnap = snapshot(x);
  const auto c = static_cast<ScatterCombiner>(9);
  const std::string msg = expect_error<ArgumentError>([&] { (void)scatter(s, x, idx, upd, d, c); }, "scatter");
  EXPECT_THAT(msg, HasSubstr("unknown ScatterCombiner value 9"));
  expect_error<ArgumentError>([&] { scatter_into(s, x, idx, upd, d, c, out); }, "scatter");
  expect_error<ArgumentError>([&] { scatter_inplace(s, x, idx, upd, d, c); }, "scatter");
  expect_untouched(out, snap);
  expect_untouched(x, xsnap);
}

TEST(EnumArgs, FftNormAndPlanner) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::arange(8, DType::c128);
  const Tensor xr = Tensor::arange(8, DType::f64);
  FftOptions bad_norm;
  bad_norm.norm = static_cast<FftNorm>(7);
  FftOptions bad_planner;
  bad_planner.planner = static_cast<FftPlanner>(5);
  FftnOptions bad_norm_n;
  bad_norm_n.norm = static_cast<FftNorm>(3);
  FftnOptions bad_planner_n;
  bad_planner_n.planner = static_cast<FftPlanner>(2);
  auto arg = [](auto&& f, const std::string& op, const std::string& what) {
    EXPECT_THAT(expect_error<ArgumentError>(f, op), HasSubstr(what));
  };
  arg([&] { (void)fft(s, x, bad_norm); }, "fft", "unknown FftNorm value 7");
  arg([&] { (void)ifft(s, x, bad_norm); }, "ifft", "unknown FftNorm value 7");
  arg([&] { (void)rfft(s, xr, bad_norm); }, "rfft", "unknown FftNorm value 7");
  arg([&] { (void)irfft(s, x, bad_norm); }, "irfft", "unknown FftNorm value 7");
  arg([&] { (void)fft(s, x, bad_planner); }, "fft", "unknown FftPlanner value 5");
  arg([&] { (void)rfft(s, xr, bad_planner); }, "rfft", "unknown FftPlanner value 5");
  arg([&] { (void)fftn(s, x, bad_norm_n); }, "fftn", "unknown FftNorm value 3");
  arg([&] { (void)irfftn(s, x, bad_norm_n); }, "irfftn", "unknown FftNorm value 3");
  arg([&] { (void)fftn(s, x, bad_planner_n); }, "fftn", "unknown FftPlanner value 2");
  arg([&] { (void)rfftn(s, xr, bad_planner_n); }, "rfftn", "unknown FftPlanner value 2");
  const Tensor out = Tensor::zeros({8}, DType::c128);
  const auto snap = snapshot(out);
  arg([&] { fft_into(s, x, out, bad_norm); }, "fft", "unknown FftNorm value 7");
  arg([&] { ifftn_into(s, x, out, bad_planner_n); }, "ifftn", "unknown FftPlanner value 2");
  expect_untouched(out, snap);
}

TEST(EnumArgs, LinalgEnumsNameTheValue) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor a = Tensor::eye(3, DType::f64), b = Tensor::ones({3, 2}, DType::f64);
  auto arg = [](auto&& f, const std::string& op, const std::string& what) {
    EXPECT_THAT(expect_error<ArgumentError>(f, op), HasSubstr(what));
  };
  arg([&] { (void)svd(s, a, static_cast<SvdMode>(3)); }, "svd", "unknown SvdMode value 3");
  arg([&] { (void)qr(s, a, static_cast<QrMode>(2)); }, "qr", "unknown QrMode value 2");
  arg([&] { (void)cholesky(s, a, static_cast<Triangle>(2)); }, "cholesky", "unknown Triangle value 2");
  arg([&] { (void)eigh(s, a, static_cast<Triangle>(9)); }, "eigh", "unknown Triangle value 9");
  arg([&] { (void)lstsq(s, a, b, static_cast<LstsqDriver>(2)); }, "lstsq", "unknown LstsqDriver value 2");
  arg([&] { (void)matrix_norm(s, a, static_cast<MatrixNorm>(17)); }, "matrix_norm", "unknown MatrixNorm value 17");
  TriangularSolveOptions o;
  o.side = static_cast<Side>(2);
  arg([&] { (void)triangular_solve(s, a, b, o); }, "triangular_solve", "unknown Side value 2");
  o = {};
  o.tri = static_cast<Triangle>(2);
  arg([&] { (void)triangular_solve(s, a, b, o); }, "triangular_solve", "unknown Triangle value 2");
  o = {};
  o.op = static_cast<MatOp>(3);
  arg([&] { (void)triangular_solve(s, a, b, o); }, "triangular_solve", "unknown MatOp value 3");
}

}  // namespace
}  // namespace tenferro::enum_args_test
