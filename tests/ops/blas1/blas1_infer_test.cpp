// BLAS-1 inference alone (Note [BLAS-1 in the op layer]): result dtypes and the typed
// errors, from shapes, dtypes and host scalars only.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/blas1.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;

TEST(Blas1Infer, VdotAndNormSquaredDTypes) {
  const std::vector<std::int64_t> x = {2, 3}, y = {3, 2};
  EXPECT_EQ(infer_vdot(x, DType::f32, x, DType::c64), DType::c64);
  EXPECT_EQ(infer_vdot(x, DType::i32, x, DType::i64), DType::i64);
  expect_error<ShapeError>([&] { infer_vdot(x, DType::f64, y, DType::f64); }, "vdot");
  expect_error<DTypeError>([&] { infer_vdot(x, DType::b8, x, DType::f64); }, "vdot");
  EXPECT_EQ(infer_norm_squared(DType::c128), DType::f64);
  EXPECT_EQ(infer_norm_squared(DType::c64), DType::f32);
  EXPECT_EQ(infer_norm_squared(DType::i32), DType::f64);
  expect_error<DTypeError>([&] { infer_norm_squared(DType::b8); }, "norm_squared");
}

TEST(Blas1Infer, AxpbyChecksDTypesShapesAndScalars) {
  const std::vector<std::int64_t> x = {4}, bad = {4, 1};
  infer_axpby(2.0, x, DType::f32, 0.5, x, DType::f64);
  infer_axpby(c128(1, 1), x, DType::c64, 1, x, DType::c64);
  expect_error<DTypeError>([&] { infer_axpby(1, x, DType::f64, 1, x, DType::f32); }, "axpby");  // x would narrow
  expect_error<DTypeError>([&] { infer_axpby(1, x, DType::c64, 1, x, DType::f64); }, "axpby");  // loses kind
  expect_error<DTypeError>([&] { infer_axpby(1, x, DType::b8, 1, x, DType::b8); }, "axpby");
  expect_error<ShapeError>([&] { infer_axpby(1, bad, DType::f64, 1, x, DType::f64); }, "axpby");
  expect_error<ArgumentError>([&] { infer_axpby(c128(0, 1), x, DType::f64, 1, x, DType::f64); }, "axpby");
  expect_error<ArgumentError>([&] { infer_axpby(2.5, x, DType::i32, 1, x, DType::i32); }, "axpby");
  expect_error<ArgumentError>([&] { infer_axpby(1, x, DType::i32, std::int64_t{1} << 40, x, DType::i32); }, "axpby");
  infer_axpby(3.0, x, DType::i32, std::int64_t{-7}, x, DType::i64);
}

}  // namespace
}  // namespace tenferro::detail
