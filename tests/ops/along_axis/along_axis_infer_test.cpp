// Inference of the ops along one axis alone: the axis normalized, dtype sets from the
// catalogue, typed errors naming the op.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/along_axis.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;

TEST(AlongAxisInfer, AxesDTypesAndErrors) {
  const std::vector<std::int64_t> x = {2, 3, 4}, scalar = {};
  EXPECT_EQ(infer_along_axis(OpId::cumsum, x, DType::i32, AxisAttrs{.axis = -1}), 2);
  EXPECT_EQ(infer_along_axis(OpId::softmax, x, DType::f32, AxisAttrs{.axis = 1}), 1);
  EXPECT_EQ(infer_along_axis(OpId::cumprod, x, DType::c128, AxisAttrs{.axis = -3}), 0);
  expect_error<AxisError>([&] { infer_along_axis(OpId::cumsum, x, DType::f64, AxisAttrs{.axis = 3}); }, "cumsum");
  expect_error<AxisError>([&] { infer_along_axis(OpId::log_softmax, x, DType::f64, AxisAttrs{.axis = -4}); }, "log_softmax");
  expect_error<AxisError>([&] { infer_along_axis(OpId::cumsum, scalar, DType::f64, AxisAttrs{.axis = 0}); }, "cumsum");
  expect_error<DTypeError>([&] { infer_along_axis(OpId::softmax, x, DType::c64, AxisAttrs{}); }, "softmax");
  expect_error<DTypeError>([&] { infer_along_axis(OpId::cumsum, x, DType::b8, AxisAttrs{}); }, "cumsum");
  expect_error<InternalError>([&] { infer_along_axis(OpId::sum, x, DType::f64, AxisAttrs{}); }, "sum");
  for (int i = 0; i < kNumOps; ++i) {  // every row: exactly its catalogue dtypes
    const OpInfo& info = kOps[i];
    if (info.family != OpFamily::along_axis) continue;
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dt = static_cast<DType>(d);
      if (in_set(dt, info.dtypes)) EXPECT_EQ(infer_along_axis(static_cast<OpId>(i), x, dt, AxisAttrs{.axis = 0}), 0);
      else expect_error<DTypeError>([&] { infer_along_axis(static_cast<OpId>(i), x, dt, AxisAttrs{}); }, std::string(info.name));
    }
  }
}

}  // namespace
}  // namespace tenferro::detail
