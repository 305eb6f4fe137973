// The elementwise inference function alone (Note [Elementwise in the op layer]):
// broadcasting, promotion with weak scalars, result dtypes, the scalar fit check, and
// every elementwise and analytic row's dtype set against the catalogue, with no session
// and no tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/elementwise.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;

/// A tensor operand of `shape` (kept alive by the caller) and dtype d.
EwOperand tensor(const std::vector<std::int64_t>& shape, DType d) { return {nullptr, shape, d}; }
EwOperand scalar(const Scalar& v) { return {&v, {}, DType::f64}; }

std::vector<std::int64_t> shape_of(const EwSignature& g) { return {g.shape.span().begin(), g.shape.span().end()}; }

TEST(ElementwiseInfer, BroadcastsInColumnMajorOrder) {
  const std::vector<std::int64_t> a = {2, 1, 4}, b = {1, 3}, c = {2, 3, 4};
  const EwOperand ins[] = {tensor(a, DType::f64), tensor(b, DType::f64)};
  EXPECT_EQ(shape_of(infer_elementwise(OpId::add, ins)), c);
  const std::vector<std::int64_t> bad = {3};
  const EwOperand mismatch[] = {tensor(a, DType::f64), tensor(bad, DType::f64)};
  expect_error<ShapeError>([&] { infer_elementwise(OpId::mul, mismatch); }, "mul");
  const EwOperand sel[] = {tensor(b, DType::b8), tensor(a, DType::f32), tensor(c, DType::f32)};
  const EwSignature g = infer_elementwise(OpId::select, sel);
  EXPECT_EQ(shape_of(g), c);
  EXPECT_EQ(g.in[0], DType::b8);
  EXPECT_EQ(g.in[1], DType::f32);
  EXPECT_EQ(g.out, DType::f32);
}

TEST(ElementwiseInfer, ScalarsAreWeakAndOnlyScalarsGiveRankZero) {
  const std::vector<std::int64_t> x = {5};
  const Scalar two(2.0), i3(3), z(c128(0.0, 1.0));
  const EwOperand f32_and_float[] = {tensor(x, DType::f32), scalar(two)};
  EXPECT_EQ(infer_elementwise(OpId::add, f32_and_float).compute, DType::f32);
  const EwOperand i32_and_float[] = {tensor(x, DType::i32), scalar(two)};
  EXPECT_EQ(infer_elementwise(OpId::add, i32_and_float).compute, DType::f64);
  const EwOperand f32_and_complex[] = {tensor(x, DType::f32), scalar(z)};
  EXPECT_EQ(infer_elementwise(OpId::mul, f32_and_complex).compute, DType::c64);
  const EwOperand i32_and_int[] = {scalar(i3), tensor(x, DType::i32)};
  const EwSignature g = infer_elementwise(OpId::sub, i32_and_int);
  EXPECT_EQ(g.compute, DType::i32);
  EXPECT_EQ(g.in[0], DType::i32);
  const EwOperand two_scalars[] = {scalar(i3), scalar(two)};
  const EwSignature s = infer_elementwise(OpId::add, two_scalars);
  EXPECT_EQ(s.shape.size(), 0);
  EXPECT_EQ(s.compute, DType::f64);
  const EwOperand tensors[] = {tensor(x, DType::i32), tensor(x, DType::f32)};  // the promotion table (dtype.hpp)
  EXPECT_EQ(infer_elementwise(OpId::maximum, tensors).compute, DType::f32);
  const EwOperand wider[] = {tensor(x, DType::i64), tensor(x, DType::f64)};
  EXPECT_EQ(infer_elementwise(OpId::maximum, wider).compute, DType::f64);
}

TEST(ElementwiseInfer, ResultDTypes) {
  const std::vector<std::int64_t> x = {2, 2};
  const EwOperand c128x[] = {tensor(x, DType::c128)};
  EXPECT_EQ(infer_elementwise(OpId::abs, c128x).out, DType::f64);
  EXPECT_EQ(infer_elementwise(OpId::imag, c128x).out, DType::f64);
  EXPECT_EQ(infer_elementwise(OpId::exp, c128x).out, DType::c128);
  const EwOperand i32x[] = {tensor(x, DType::i32)};
  EXPECT_EQ(infer_elementwise(OpId::angle, i32x).out, DType::f64);
  EXPECT_EQ(infer_elementwise(OpId::abs, i32x).out, DType::i32);
  const EwOperand c64x[] = {tensor(x, DType::c64)};
  EXPECT_EQ(infer_elementwise(OpId::angle, c64x).out, DType::f32);
  const EwOperand pair[] = {tensor(x, DType::i64), tensor(x, DType::c64)};
  const EwSignature g = infer_elementwise(OpId::compare, pair, CompareOp::eq);
  EXPECT_EQ(g.out, DType::b8);
  EXPECT_EQ(g.compute, DType::c64);
  EXPECT_EQ(g.in[0], DType::c64);
}

TEST(ElementwiseInfer, TypedErrorsNameTheOp) {
  const std::vector<std::int64_t> x = {3};
  const EwOperand c[] = {tensor(x, DType::c64), tensor(x, DType::c64)};
  EXPECT_EQ(infer_elementwise(OpId::compare, c, CompareOp::eq).out, DType::b8);
  expect_error<DTypeError>([&] { infer_elementwise(OpId::compare, c, CompareOp::ge); }, "compare(ge)");
  expect_error<DTypeError>([&] { infer_elementwise(OpId::maximum, c); }, "maximum");
  const EwOperand b[] = {tensor(x, DType::b8), tensor(x, DType::b8)};
  expect_error<DTypeError>([&] { infer_elementwise(OpId::add, b); }, "add");
  EXPECT_EQ(infer_elementwise(OpId::maximum, b).out, DType::b8);
  const EwOperand not_bool_pred[] = {tensor(x, DType::i32), tensor(x, DType::f64), tensor(x, DType::f64)};
  expect_error<DTypeError>([&] { infer_elementwise(OpId::select, not_bool_pred); }, "select");
  const Scalar one(1);
  const EwOperand int_pred[] = {scalar(one), tensor(x, DType::f64), tensor(x, DType::f64)};
  expect_error<DTypeError>([&] { infer_elementwise(OpId::select, int_pred); }, "select");
  const EwOperand i32x[] = {tensor(x, DType::i32)};
  expect_error<DTypeError>([&] { infer_elementwise(OpId::exp, i32x); }, "exp");
  const EwOperand f64x[] = {tensor(x, DType::f64)};
  expect_error<InternalError>([&] { infer_elementwise(OpId::add, f64x); }, "add");  // wrong operand count
  expect_error<InternalError>([&] { infer_elementwise(OpId::sum, f64x); }, "sum");  // not elementwise
}

TEST(ElementwiseInfer, ScalarsMustFitAnIntegerComputeDType) {
  const std::vector<std::int64_t> x = {3};
  const Scalar big(std::int64_t{3'000'000'000}), ok(std::int64_t{-7}), yes(true);
  const EwOperand too_big[] = {tensor(x, DType::i32), scalar(big)};
  expect_error<ArgumentError>([&] { infer_elementwise(OpId::add, too_big); }, "add");
  const EwOperand fits[] = {tensor(x, DType::i32), scalar(ok)};
  EXPECT_EQ(infer_elementwise(OpId::add, fits).compute, DType::i32);
  const EwOperand in_i64[] = {tensor(x, DType::i64), scalar(big)};
  EXPECT_EQ(infer_elementwise(OpId::add, in_i64).compute, DType::i64);
  const EwOperand clamp_big[] = {scalar(big), tensor(x, DType::i32), scalar(ok)};
  expect_error<ArgumentError>([&] { infer_elementwise(OpId::clamp, clamp_big); }, "clamp");
  const EwOperand bool_scalar[] = {tensor(x, DType::b8), scalar(yes)};
  EXPECT_EQ(infer_elementwise(OpId::maximum, bool_scalar).compute, DType::b8);
}

// Every row of the two families: with tensors of one dtype, inference accepts exactly
// the catalogue's dtype set (compare's ordered forms refuse complex; select's pred is
// bool), and answers the same compute dtype.
TEST(ElementwiseInfer, EveryRowAcceptsExactlyItsCatalogueDTypes) {
  const std::vector<std::int64_t> x = {2};
  int rows = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op = static_cast<OpId>(i);
    const OpInfo& info = op_info(op);
    if (info.family != OpFamily::elementwise && info.family != OpFamily::analytic) continue;
    ++rows;
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = static_cast<DType>(k);
      std::vector<EwOperand> ins(static_cast<std::size_t>(info.inputs), tensor(x, d));
      if (op == OpId::select) ins[0] = tensor(x, DType::b8);
      const bool want = in_set(d, info.dtypes);
      if (want) {
        EXPECT_EQ(infer_elementwise(op, ins).compute, d) << info.name << " " << dtype_name(d);
      } else {
        expect_error<DTypeError>([&] { infer_elementwise(op, ins); }, std::string(info.name));
      }
    }
  }
  EXPECT_GE(rows, 41);  // the loop ran over the families (which only grow)
}

}  // namespace
}  // namespace tenferro::detail
