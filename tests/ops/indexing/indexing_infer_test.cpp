// The indexing family's inference alone (ops/indexing.hpp): slice's view, the
// signatures of dynamic_slice, dynamic_update_slice, take_along_axis and index_select,
// and the gather/scatter maps, from metadata (no session, no element read), and the data check first_out_of_range
// that range-checks the indices.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/indexing.hpp"
#include "ops/kernel_table.hpp"
#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::detail {
namespace {

using testing::expect_error;
using V = std::vector<std::int64_t>;

V vec(const Dims& d) { return {d.span().begin(), d.span().end()}; }

/// A tensor of `shape` and dtype d whose elements are never read (a broadcast view of one).
Tensor meta(const V& shape, DType d) { return Tensor::zeros({1}, d).as_strided_view(shape, V(shape.size(), 0), 0); }

TEST(IndexingInfer, SliceViewAddressesTheSlicedElements) {
  const Tensor x = Tensor::arange(12, DType::f64).reshape_view({3, 4});
  const Tensor v = slice_view_of(x, Dims{1, 0}, Dims{3, 4}, Dims{1, 2}, "slice");
  EXPECT_EQ(vec(v.shape()), (V{2, 2}));
  EXPECT_EQ(v.at({1, 1}).to<double>(), x.at({2, 2}).to<double>());
  expect_error<RankError>([&] { slice_view_of(x, Dims{0}, Dims{3, 4}, Dims{}, "slice"); }, "slice");
  expect_error<ArgumentError>([&] { slice_view_of(x, Dims{0, 0}, Dims{3, 4}, Dims{1, 0}, "slice"); }, "slice");
  expect_error<IndexError>([&] { slice_view_of(x, Dims{2, 0}, Dims{1, 4}, Dims{}, "slice"); }, "slice");
}

TEST(IndexingInfer, DynamicSlicesCheckStartsAndSizes) {
  const Tensor x = meta({4, 5}, DType::f32);
  dynamic_slice_infer(x, meta({2}, DType::i32), Dims{2, 5}, "dynamic_slice");
  expect_error<DTypeError>([&] { dynamic_slice_infer(x, meta({2}, DType::f64), Dims{2, 5}, "dynamic_slice"); }, "dynamic_slice");
  expect_error<RankError>([&] { dynamic_slice_infer(x, meta({2, 1}, DType::i64), Dims{2, 5}, "dynamic_slice"); }, "dynamic_slice");
  expect_error<ShapeError>([&] { dynamic_slice_infer(x, meta({3}, DType::i64), Dims{2, 5}, "dynamic_slice"); }, "dynamic_slice");
  expect_error<ShapeError>([&] { dynamic_slice_infer(x, meta({2}, DType::i64), Dims{2, 6}, "dynamic_slice"); }, "dynamic_slice");
  const Tensor starts = meta({2}, DType::i64);
  dynamic_update_slice_infer(x, meta({4, 1}, DType::f32), starts, "dynamic_update_slice");
  expect_error<DTypeError>([&] { dynamic_update_slice_infer(x, meta({4, 1}, DType::f64), starts, "dynamic_update_slice"); },
                           "dynamic_update_slice");
  expect_error<ShapeError>([&] { dynamic_update_slice_infer(x, meta({5, 1}, DType::f32), starts, "dynamic_update_slice"); },
                           "dynamic_update_slice");
}

TEST(IndexingInfer, TakesBroadcastOffTheAxis) {
  const Tensor x = meta({4, 1, 3}, DType::c128);
  const TakeSignature t = take_along_axis_infer(x, meta({2, 5, 1}, DType::i64), 0, "take_along_axis");
  EXPECT_EQ(vec(t.shape), (V{2, 5, 3}));
  EXPECT_EQ(t.axis, 0);
  expect_error<ShapeError>([&] { take_along_axis_infer(x, meta({2, 5, 2}, DType::i64), 0, "take_along_axis"); }, "take_along_axis");
  expect_error<RankError>([&] { take_along_axis_infer(x, meta({2}, DType::i64), 0, "take_along_axis"); }, "take_along_axis");
  const TakeSignature sel = index_select_infer(x, meta({7}, DType::i32), -1, "index_select");
  EXPECT_EQ(vec(sel.shape), (V{4, 1, 7}));
  EXPECT_EQ(sel.axis, 2);
  expect_error<AxisError>([&] { index_select_infer(x, meta({7}, DType::i32), 3, "index_select"); }, "index_select");
  expect_error<DTypeError>([&] { index_select_infer(x, meta({7}, DType::b8), 0, "index_select"); }, "index_select");
}

TEST(IndexingInfer, GatherAndScatterMapsFromMetadata) {
  // NumPy's x[idx, :]: operand [5, 3], indices [4, 1], one collapsed row per index.
  GatherDims g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  IndexMap m;
  EXPECT_EQ(vec(Dims(gather_infer(g, Shape{5, 3}, Shape{4, 1}, Dims{1, 3}, m))), (V{4, 3}));
  EXPECT_EQ(vec(m.batch_extent), (V{4}));
  EXPECT_EQ(vec(m.window_operand_axis), (V{1}));
  expect_error<ShapeError>([&] { gather_infer(g, Shape{5, 3}, Shape{4, 1}, Dims{2, 3}, m); }, "gather");  // > 1 on a collapsed axis
  // The same map read backwards: updates [4, 3] into [5, 3].
  ScatterDims sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  const Tensor operand = meta({5, 3}, DType::f64), indices = meta({4, 1}, DType::i32);
  const IndexMap sm = scatter_infer(operand, indices, meta({4, 3}, DType::f64), sd, ScatterCombiner::add);
  EXPECT_EQ(vec(sm.window_data_axis), (V{1}));
  expect_error<DTypeError>([&] { scatter_infer(operand, indices, meta({4, 3}, DType::f32), sd, ScatterCombiner::add); }, "scatter");
  expect_error<ShapeError>([&] { scatter_infer(operand, indices, meta({3, 3}, DType::f64), sd, ScatterCombiner::add); }, "scatter");
  expect_error<DTypeError>([&] { scatter_infer(meta({5, 3}, DType::c128), indices, meta({4, 3}, DType::c128), sd, ScatterCombiner::max); },
                           "scatter");  // max needs an ordered dtype
  expect_error<DTypeError>([&] { scatter_infer(operand, meta({4, 1}, DType::f64), meta({4, 3}, DType::f64), sd, ScatterCombiner::add); },
                           "scatter");
}

TEST(IndexingInfer, FirstOutOfRangeFindsTheFirstBadIndexInAnyLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const DataChecks& dc = data_checks(s, "test");
  Tensor idx = Tensor::zeros({2, 3}, DType::i32);
  EXPECT_EQ(dc.first_out_of_range(s, idx, 1), -1);
  idx.set<std::int32_t>({1, 1}, -4);  // position 1 + 2 * 1 = 3
  idx.set<std::int32_t>({0, 2}, 3);   // position 0 + 2 * 2 = 4
  EXPECT_EQ(dc.first_out_of_range(s, idx, 4), -1);  // both in [-4, 4)
  EXPECT_EQ(dc.first_out_of_range(s, idx, 3), 3);
  // In the transpose [3, 2], [0, 2] is element [2, 0] (position 2), [1, 1] position 4.
  EXPECT_EQ(dc.first_out_of_range(s, idx.permute_view({1, 0}), 3), 2);
  const std::string msg = expect_error<IndexError>(
      [&] { (void)index_select(s, Tensor::zeros({3}, DType::f64), 0, Tensor::full({2}, Scalar(std::int64_t{5}), DType::i64)); }, "index_select");
  EXPECT_NE(msg.find("indices[0] = 5 out of range [-3, 3)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tenferro::detail
