// The structural family's inference alone (ops/structural.hpp): embed_diagonal, tril and
// triu, pad, concatenate and stack, from shapes, dtypes and attributes, with no session
// and without reading any element (the join inputs are storage-less views' metadata).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/structural.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;
using V = std::vector<std::int64_t>;

V vec(std::span<const std::int64_t> d) { return {d.begin(), d.end()}; }

TEST(StructuralInfer, EmbedDiagonalInsertsTwoAxesOfTheLastExtent) {
  const V x = {2, 3};
  const EmbedSignature g = embed_diagonal_infer(x, 0, 2, "embed_diagonal");
  EXPECT_EQ(vec(g.shape), (V{3, 2, 3}));
  EXPECT_EQ(g.a, 0);
  EXPECT_EQ(g.b, 2);
  const EmbedSignature neg = embed_diagonal_infer(x, -1, -2, "embed_diagonal");
  EXPECT_EQ(vec(neg.shape), (V{2, 3, 3}));
  EXPECT_EQ(neg.a, 2);
  EXPECT_EQ(neg.b, 1);
  expect_error<RankError>([] { embed_diagonal_infer(V{}, 0, 1, "embed_diagonal"); }, "embed_diagonal");
  EXPECT_NE(expect_error<AxisError>([&] { embed_diagonal_infer(x, 1, 1, "embed_diagonal"); }, "embed_diagonal").find("same axis"), std::string::npos);
  expect_error<AxisError>([&] { embed_diagonal_infer(x, 0, 3, "embed_diagonal"); }, "embed_diagonal");
  // n*n overflows where n alone does not
  expect_error<IndexError>([] { embed_diagonal_infer(V{std::int64_t{1} << 40}, 0, 1, "embed_diagonal"); }, "embed_diagonal");
}

TEST(StructuralInfer, TrianglesNeedMatrices) {
  triangle_infer(V{2, 3}, "tril");
  triangle_infer(V{2, 3, 4}, "triu");
  EXPECT_NE(expect_error<RankError>([] { triangle_infer(V{4}, "tril"); }, "tril").find("[4]"), std::string::npos);
}

TEST(StructuralInfer, PadPlansEdgesInteriorAndCropping) {
  const V x = {3, 2};
  // axis 0: low 1, high 2, interior 1 -> 1 + (3 + 2) + 2 = 8; axis 1: crop one on each side of 2 -> 0
  const PadPlan p = pad_infer(x, DType::f64, Scalar(1.5), V{1, -1}, V{2, -1}, V{1, 0}, "pad");
  EXPECT_EQ(vec(p.shape), (V{8, 0}));
  EXPECT_EQ(p.count[0], 3);
  EXPECT_EQ(p.dst_first[0], 1);
  EXPECT_EQ(p.step[0], 2);
  EXPECT_EQ(p.count[1], 0);
  EXPECT_TRUE(p.empty);
  double v = 0;
  std::memcpy(&v, p.value, sizeof v);
  EXPECT_EQ(v, 1.5);
  // negative low crops from the front: low -1 on extent 3 keeps elements 1, 2 at 0, 1
  const PadPlan c = pad_infer(V{3}, DType::i32, Scalar(0), V{-1}, V{0}, V{0}, "pad");
  EXPECT_EQ(vec(c.shape), (V{2}));
  EXPECT_EQ(c.src_first[0], 1);
  EXPECT_EQ(c.dst_first[0], 0);
  EXPECT_TRUE(c.covers);
  EXPECT_FALSE(c.empty);
  EXPECT_NE(expect_error<RankError>([&] { pad_infer(x, DType::f64, Scalar(0.0), V{0}, V{0, 0}, V{0, 0}, "pad"); }, "pad").find("edge_padding_low"), std::string::npos);
  EXPECT_NE(expect_error<ArgumentError>([&] { pad_infer(x, DType::f64, Scalar(0.0), V{0, 0}, V{0, 0}, V{-1, 0}, "pad"); }, "pad").find("interior_padding"), std::string::npos);
  EXPECT_NE(expect_error<ShapeError>([&] { pad_infer(x, DType::f64, Scalar(0.0), V{-4, 0}, V{0, 0}, V{0, 0}, "pad"); }, "pad").find("negative extent"), std::string::npos);
  EXPECT_NE(expect_error<ArgumentError>([&] { pad_infer(x, DType::i32, Scalar(2.5), V{0, 0}, V{0, 0}, V{0, 0}, "pad"); }, "pad").find("does not fit"), std::string::npos);
}

TEST(StructuralInfer, JoinsPromoteAndCheckExtents) {
  // Metadata only: broadcast views of one scalar, never read.
  const Tensor one = Tensor::zeros({1}, DType::f32);
  const Tensor a = one.as_strided_view(V{2, 3}, V{0, 0}, 0);
  const Tensor b = Tensor::zeros({1}, DType::i64).as_strided_view(V{2, 5}, V{0, 0}, 0);
  const Tensor ab[] = {a, b};
  const JoinSignature c = concatenate_infer(ab, -1, "concatenate");
  EXPECT_EQ(vec(c.shape), (V{2, 8}));
  EXPECT_EQ(c.dtype, promote(DType::f32, DType::i64));
  EXPECT_EQ(c.axis, 1);
  EXPECT_NE(expect_error<ShapeError>([&] { concatenate_infer(ab, 0, "concatenate"); }, "concatenate").find("except along axis 0"), std::string::npos);
  EXPECT_NE(expect_error<ArgumentError>([] { concatenate_infer({}, 0, "concatenate"); }, "concatenate").find("at least one"), std::string::npos);
  const Tensor undefined_pair[] = {a, Tensor()};
  EXPECT_NE(expect_error<ArgumentError>([&] { concatenate_infer(undefined_pair, 0, "concatenate"); }, "concatenate").find("input 1"), std::string::npos);

  const Tensor aa[] = {a, a, a};
  const JoinSignature st = stack_infer(aa, 1, "stack");
  EXPECT_EQ(vec(st.shape), (V{2, 3, 3}));
  EXPECT_EQ(st.dtype, DType::f32);
  EXPECT_NE(expect_error<ShapeError>([&] { stack_infer(ab, 0, "stack"); }, "stack").find("equal shapes"), std::string::npos);
  expect_error<AxisError>([&] { stack_infer(aa, 3, "stack"); }, "stack");
}

}  // namespace
}  // namespace tenferro::detail
