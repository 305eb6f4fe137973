// The conversion family's inference alone (Note [Conversions in the op layer]) and the
// backend's exactness check that convert runs before writing.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/conversion.hpp"
#include "ops/kernel_table.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;

TEST(ConversionInfer, ShapesAndDTypes) {
  const std::vector<std::int64_t> x = {2, 3};
  const ConversionSignature g = infer_conversion(OpId::convert, x, DType::f64, ConvertAttrs{.dtype = DType::i32});
  EXPECT_EQ(g.shape, Dims(x));
  EXPECT_EQ(g.dtype, DType::i32);
  EXPECT_EQ(infer_conversion(OpId::copy, x, DType::c64, ConvertAttrs{.dtype = DType::c64}).dtype, DType::c64);
  expect_error<DTypeError>([&] { infer_conversion(OpId::copy, x, DType::c64, ConvertAttrs{.dtype = DType::f32}); }, "copy");
  expect_error<DTypeError>([&] { infer_conversion(OpId::cast, x, DType::f64, ConvertAttrs{.dtype = static_cast<DType>(42)}); }, "cast");
  const ConversionSignature r = infer_reshape_op(x, DType::f32, ReshapeAttrs{.shape = Dims{3, -1}});
  EXPECT_EQ(r.shape, (Dims{3, 2}));
  EXPECT_EQ(r.dtype, DType::f32);
  expect_error<ShapeError>([&] { infer_reshape_op(x, DType::f32, ReshapeAttrs{.shape = Dims{4, 2}}); }, "reshape");
  expect_error<ShapeError>([&] { infer_reshape_op(x, DType::f32, ReshapeAttrs{.shape = Dims{-1, -1}}); }, "reshape");
}

TEST(ConversionInfer, CopyIntoBroadcastsTheSourceOnly) {
  const std::vector<std::int64_t> row = {1, 3}, full = {2, 3}, bad = {2, 2};
  infer_copy_into(row, DType::f64, full, DType::f64);
  expect_error<ShapeError>([&] { infer_copy_into(full, DType::f64, row, DType::f64); }, "copy_into");  // dst does not stretch
  expect_error<ShapeError>([&] { infer_copy_into(bad, DType::f64, full, DType::f64); }, "copy_into");
  expect_error<DTypeError>([&] { infer_copy_into(full, DType::f32, full, DType::f64); }, "copy_into");
}

TEST(ConversionInfer, FirstInexactFindsTheFirstLossyElementInAnyLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const DataChecks& dc = data_checks(s, "test");
  Tensor x = Tensor::arange(12, DType::f64).reshape_view({3, 4});
  EXPECT_EQ(dc.first_inexact(s, x, DType::i32), -1);
  EXPECT_EQ(dc.first_inexact(s, x, DType::f64), -1);
  EXPECT_EQ(dc.first_inexact(s, x, DType::b8), 2);  // 2.0 is not a bool
  x.set<double>({1, 2}, 2.5);
  x.set<double>({2, 3}, 1e40);
  EXPECT_EQ(dc.first_inexact(s, x, DType::i64), 1 + 3 * 2);
  EXPECT_EQ(dc.first_inexact(s, x.permute_view({1, 0}), DType::i64), 2 + 4 * 1);
  EXPECT_EQ(dc.first_inexact(s, x, DType::f32), 2 + 3 * 3);  // 2.5 is exact in f32; 1e40 is not
  const Tensor z = Tensor::full({2}, Scalar(c128(1.0, 1.0)), DType::c128);
  EXPECT_EQ(dc.first_inexact(s, z, DType::f64), 0);
  EXPECT_EQ(dc.first_inexact(s, z, DType::c64), -1);
  const std::string msg = expect_error<ArgumentError>([&] { (void)convert(s, x, DType::i32); }, "convert");
  EXPECT_NE(msg.find("element [1, 2] = 2.5"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tenferro::detail
