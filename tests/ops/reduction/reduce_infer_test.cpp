// The reductions' inference function alone (Note [Reductions in the op layer]): shapes,
// keepdims, negative / duplicate / out-of-range axes, empty axes, dtype rules, and the
// catalogue's dtype sets (bool for sum, prod and mean, as NumPy) agreeing with the ops.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/reduce.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;

std::vector<std::int64_t> shape_of(const ReduceSignature& s) { return {s.shape, s.shape + s.rank}; }

ReduceSignature infer(OpId op, std::vector<std::int64_t> shape, DType d, std::vector<std::int64_t> axes, bool keepdims = false) {
  return infer_reduce(op, shape, d, ReduceAttrs{.axes = Dims(axes), .keepdims = keepdims});
}

TEST(ReduceInfer, ShapesMasksAndKeepdims) {
  ReduceSignature s = infer(OpId::sum, {2, 3, 4}, DType::f64, {-1, 0});
  EXPECT_EQ(s.mask, 0b101u);
  EXPECT_EQ(shape_of(s), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(s.dtype, DType::f64);
  s = infer(OpId::sum, {2, 3, 4}, DType::f64, {-1, 0}, true);
  EXPECT_EQ(shape_of(s), (std::vector<std::int64_t>{1, 3, 1}));
  s = infer(OpId::max, {2, 3}, DType::i32, {});  // no axes: nothing reduced
  EXPECT_EQ(s.mask, 0u);
  EXPECT_EQ(shape_of(s), (std::vector<std::int64_t>{2, 3}));
  const std::vector<std::int64_t> x = {2, 0, 5};
  s = infer_reduce(OpId::mean, x, DType::f32, ReduceAttrs{.all_axes = true});
  EXPECT_EQ(s.mask, 0b111u);
  EXPECT_EQ(s.rank, 0);
  s = infer_reduce(OpId::prod, {}, DType::c64, ReduceAttrs{.all_axes = true, .keepdims = true});  // rank 0
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.dtype, DType::c64);
}

TEST(ReduceInfer, ResultDtypes) {
  EXPECT_EQ(infer(OpId::sum, {3}, DType::b8, {0}).dtype, DType::i64);  // a count, as NumPy
  EXPECT_EQ(infer(OpId::prod, {3}, DType::b8, {0}).dtype, DType::i64);
  EXPECT_EQ(infer(OpId::sum, {3}, DType::i32, {0}).dtype, DType::i32);
  EXPECT_EQ(infer(OpId::mean, {3}, DType::b8, {0}).dtype, DType::f64);
  EXPECT_EQ(infer(OpId::mean, {3}, DType::i32, {0}).dtype, DType::f64);
  EXPECT_EQ(infer(OpId::mean, {3}, DType::c64, {0}).dtype, DType::c64);
  EXPECT_EQ(infer(OpId::sum_squares, {3}, DType::c128, {0}).dtype, DType::f64);
  EXPECT_EQ(infer(OpId::argmax, {3}, DType::f32, {0}).dtype, DType::i64);
  EXPECT_EQ(infer(OpId::argmin, {3}, DType::b8, {0}).dtype, DType::i64);
  EXPECT_EQ(infer(OpId::max, {3}, DType::b8, {0}).dtype, DType::b8);
  EXPECT_EQ(infer(OpId::logsumexp, {3}, DType::f32, {0}).dtype, DType::f32);
}

TEST(ReduceInfer, BadAxesAreAxisErrors) {
  expect_error<AxisError>([] { (void)infer(OpId::sum, {2, 3}, DType::f64, {2}); }, "sum");
  expect_error<AxisError>([] { (void)infer(OpId::sum, {2, 3}, DType::f64, {-3}); }, "sum");
  expect_error<AxisError>([] { (void)infer(OpId::mean, {2, 3}, DType::f64, {1, -1}); }, "mean");  // repeated
  expect_error<AxisError>([] { (void)infer(OpId::argmax, {2, 3}, DType::f64, {0, 0}); }, "argmax");
  expect_error<AxisError>([] { (void)infer(OpId::max, {}, DType::f64, {0}); }, "max");  // rank 0 has no axis
}

TEST(ReduceInfer, EmptyAxesAndDtypes) {
  // No identity: an empty reduced axis is a ShapeError; a kept empty axis is fine.
  const std::string what = expect_error<ShapeError>([] { (void)infer(OpId::max, {2, 0}, DType::f64, {1}); }, "max");
  EXPECT_NE(what.find("[2, 0]"), std::string::npos) << what;
  expect_error<ShapeError>([] { (void)infer(OpId::argmin, {0}, DType::i64, {0}); }, "argmin");
  EXPECT_EQ(shape_of(infer(OpId::max, {2, 0}, DType::f64, {0})), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(infer(OpId::sum, {0}, DType::f64, {0}).rank, 0);  // sum has an identity
  // Dtypes outside the catalogue set, and values outside the enum.
  expect_error<DTypeError>([] { (void)infer(OpId::sum_squares, {2}, DType::b8, {0}); }, "sum_squares");
  expect_error<DTypeError>([] { (void)infer(OpId::max, {2}, DType::c64, {0}); }, "max");
  expect_error<DTypeError>([] { (void)infer(OpId::logsumexp, {2}, DType::i32, {0}); }, "logsumexp");
  expect_error<DTypeError>([] { (void)infer(OpId::sum, {2}, static_cast<DType>(99), {0}); }, "sum");
  expect_error<InternalError>([] { (void)infer(OpId::add, {2}, DType::f64, {0}); }, "add");
}

TEST(ReduceInfer, CatalogueDtypeSetsAgreeWithTheOps) {
  // sum, prod and mean of bool are supported (NumPy: sum of bool counts the true
  // elements) and the catalogue, supports() and the ops say so alike.
  for (OpId op : {OpId::sum, OpId::prod, OpId::mean}) {
    EXPECT_TRUE(in_set(DType::b8, op_info(op).dtypes)) << op_name(op);
    EXPECT_TRUE(supports(op, DType::b8, DeviceKind::cpu)) << op_name(op);
  }
  EXPECT_FALSE(supports(OpId::sum_squares, DType::b8, DeviceKind::cpu));
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.with_session([](Session& s) {
    Tensor x = Tensor::zeros({4}, DType::b8);
    x.set<bool>({0}, true);
    x.set<bool>({2}, true);
    const Tensor n = sum(s, x);
    EXPECT_EQ(n.dtype(), DType::i64);
    EXPECT_EQ(n.item<std::int64_t>(), 2);
    EXPECT_EQ(prod(s, x).item<std::int64_t>(), 0);
    EXPECT_EQ(mean(s, x).item<double>(), 0.5);
    // Every dtype: the op accepts exactly what inference accepts.
    for (int i = 0; i < kNumOps; ++i) {
      const auto op = static_cast<OpId>(i);
      if (op_info(op).family != OpFamily::reduction) continue;
      for (int d = 0; d < kNumDTypes; ++d) {
        const auto dt = static_cast<DType>(d);
        const Tensor y = Tensor::ones({3}, dt);
        const std::int64_t axis = 0;
        bool op_ok = true;
        try {
          (void)(op == OpId::sum ? sum(s, y, {axis}) : op == OpId::prod ? prod(s, y, {axis}) : op == OpId::max ? max(s, y, {axis})
                 : op == OpId::min ? min(s, y, {axis}) : op == OpId::mean ? mean(s, y, {axis}) : op == OpId::sum_squares ? sum_squares(s, y, {axis})
                 : op == OpId::argmax ? argmax(s, y, {axis}) : op == OpId::argmin ? argmin(s, y, {axis}) : logsumexp(s, y, {axis}));
        } catch (const DTypeError&) {
          op_ok = false;
        }
        EXPECT_EQ(op_ok, in_set(dt, op_info(op).dtypes)) << op_name(op) << " " << dtype_name(dt);
      }
    }
  });
}

}  // namespace
}  // namespace tenferro::detail
