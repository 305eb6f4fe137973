// Views: permute, transpose, slice (against a Python slice reference), reshape,
// broadcast, real/imag, as_strided. Every view's elements are checked against its base.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/layout.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::for_each_index;
using testing::iota_f64;

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kEnd = Tensor::kSliceEnd;

// Elements in column-major (first index fastest) order.
std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for_each_index(t.shape(), [&](const Dims& i) { v.push_back(t.item<double>(i.span())); });
  return v;
}

// Python's slice(start, stop, step).indices(n) expanded to the selected indices; a
// missing `stop` is Python's None. Integers are clamped exactly as CPython does.
std::vector<std::int64_t> py_slice(std::int64_t start, std::optional<std::int64_t> stop, std::int64_t step, std::int64_t n) {
  const std::int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? n - 1 : n;
  auto adjust = [&](std::int64_t v) {
    if (v < 0) {
      v += n;
      if (v < lower) v = lower;
    } else if (v > upper) {
      v = upper;
    }
    return v;
  };
  const std::int64_t s = adjust(start);
  const std::int64_t e = stop ? adjust(*stop) : (step < 0 ? lower : upper);
  std::vector<std::int64_t> out;
  for (std::int64_t i = s; step > 0 ? i < e : i > e;) {
    out.push_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return out;
}

// ------------------------------------------------------------------ permute / transpose

TEST(PermuteView, ReordersAxes) {
  Tensor t = iota_f64({2, 3, 4});
  Tensor p = t.permute_view({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Dims{6, 1, 2}));
  EXPECT_TRUE(p.shares_storage(t));
  EXPECT_EQ(p.offset(), 0);
  EXPECT_FALSE(p.read_only());
  for_each_index(p.shape(), [&](const Dims& i) { EXPECT_EQ(p.item<double>(i.span()), t.item<double>({i[1], i[2], i[0]})); });
  Tensor id = t.permute_view({0, 1, 2});
  EXPECT_EQ(id.strides(), t.strides());
  EXPECT_EQ(values(id), values(t));
  // Composition: permuting back restores the layout.
  Tensor back = p.permute_view({1, 2, 0});
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.strides(), t.strides());
  // Writes through the view land in the base.
  p.set<double>({3, 1, 2}, -1.0);
  EXPECT_EQ(t.item<double>({1, 2, 3}), -1.0);
}

TEST(PermuteView, BadPermutations) {
  Tensor t = iota_f64({2, 3, 4});
  EXPECT_THROW(t.permute_view({0, 1}), RankError);
  EXPECT_THROW(t.permute_view({0, 1, 2, 3}), RankError);
  EXPECT_THROW(t.permute_view({}), RankError);
  EXPECT_THROW(t.permute_view({0, 1, 1}), AxisError);
  EXPECT_THROW(t.permute_view({0, 1, 3}), AxisError);
  EXPECT_THROW(t.permute_view({-1, 0, 1}), AxisError);
  EXPECT_THROW(t.permute_view({2, 2, 2}), AxisError);
  try {
    t.permute_view({0, 0, 1});
    ADD_FAILURE() << "no AxisError";
  } catch (const AxisError& e) {
    EXPECT_EQ(e.op(), "permute_view");
  }
}

TEST(TransposeView, SwapsTwoAxes) {
  Tensor m = iota_f64({2, 3});
  Tensor t = m.transpose_view();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Dims{2, 1}));
  for_each_index(t.shape(), [&](const Dims& i) { EXPECT_EQ(t.item<double>(i.span()), m.item<double>({i[1], i[0]})); });
  Tensor c = iota_f64({2, 3, 4});
  Tensor a = c.transpose_view(-1, 0);
  EXPECT_EQ(a.shape(), (Shape{4, 3, 2}));
  for_each_index(a.shape(), [&](const Dims& i) { EXPECT_EQ(a.item<double>(i.span()), c.item<double>({i[2], i[1], i[0]})); });
  Tensor b = c.transpose_view(1, 2);
  EXPECT_EQ(b.shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(c.transpose_view(1, 1).strides(), c.strides());
  EXPECT_EQ(c.transpose_view(2, -1).strides(), c.strides());
  EXPECT_THROW(c.transpose_view(0, 3), AxisError);
  EXPECT_THROW(c.transpose_view(-4, 0), AxisError);
}

TEST(TransposeView, DefaultsNeedRank2) {
  // tensor.hpp: "AxisError when out of range; RankError below rank 2 with defaults."
  EXPECT_THROW(iota_f64({5}).transpose_view(), RankError);
  EXPECT_THROW(Tensor::scalar(Scalar(1.0)).transpose_view(), RankError);
}

// ------------------------------------------------------------------ slice

TEST(SliceView, ReferenceFunctionMatchesPython) {
  // Spot checks of the reference against values computed by CPython.
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(py_slice(1, 4, 1, 5), (V{1, 2, 3}));            // range(5)[1:4]
  EXPECT_EQ(py_slice(-2, std::nullopt, 1, 5), (V{3, 4}));    // [-2:]
  EXPECT_EQ(py_slice(4, std::nullopt, -1, 5), (V{4, 3, 2, 1, 0}));
  EXPECT_EQ(py_slice(kI64Max, std::nullopt, -2, 5), (V{4, 2, 0}));  // [::-2]
  EXPECT_EQ(py_slice(10, -10, -3, 5), (V{4, 1}));            // [10:-10:-3]
  EXPECT_EQ(py_slice(-10, 10, 2, 5), (V{0, 2, 4}));          // [-10:10:2]
  EXPECT_EQ(py_slice(3, 3, 1, 5), (V{}));
  EXPECT_EQ(py_slice(-1, -6, -1, 5), (V{4, 3, 2, 1, 0}));    // [-1:-6:-1]
  EXPECT_EQ(py_slice(-1, -5, -1, 5), (V{4, 3, 2, 1}));
  EXPECT_EQ(py_slice(2, 0, -1, 5), (V{2, 1}));
  EXPECT_EQ(py_slice(0, 5, 10, 5), (V{0}));
  EXPECT_EQ(py_slice(0, std::nullopt, -1, 0), (V{}));
}

TEST(SliceView, TableAgainstPythonSemantics) {
  const std::int64_t ns[] = {0, 1, 2, 5, 7};
  const std::int64_t starts[] = {kI64Min, -10, -7, -5, -3, -1, 0, 1, 3, 5, 6, 7, 10, kEnd};
  const std::int64_t stops[] = {kI64Min, -10, -7, -5, -3, -1, 0, 1, 3, 5, 6, 7, 10, kEnd};
  const std::int64_t steps[] = {kI64Min + 1, -10, -3, -2, -1, 1, 2, 3, 10, kI64Max};
  int cases = 0;
  for (std::int64_t n : ns) {
    Tensor base = iota_f64({n});
    for (std::int64_t start : starts)
      for (std::int64_t stop : stops)
        for (std::int64_t step : steps) {
          // kSliceEnd as stop means "to the end" in the step's direction (Python's None);
          // as start it is a huge index, which Python clamps the same way.
          const auto expect = py_slice(start, stop == kEnd ? std::nullopt : std::optional<std::int64_t>(stop), step, n);
          const std::string where = "n=" + std::to_string(n) + " [" + std::to_string(start) + ":" + std::to_string(stop) +
                                    ":" + std::to_string(step) + "]";
          Tensor v = base.slice_view(0, start, stop, step);
          ASSERT_EQ(v.extent(0), static_cast<std::int64_t>(expect.size())) << where;
          for (std::size_t k = 0; k < expect.size(); ++k)
            ASSERT_EQ(v.item<double>({static_cast<std::int64_t>(k)}), static_cast<double>(expect[k])) << where << " k=" << k;
          if (!expect.empty()) {
            EXPECT_EQ(v.offset(), expect[0]) << where;
            if (expect.size() > 1) {
              EXPECT_EQ(v.stride(0), step) << where;
            }
          }
          EXPECT_TRUE(v.shares_storage(base));
          const auto [first, count] = detail::python_slice(start, stop, step, n);
          EXPECT_EQ(count, static_cast<std::int64_t>(expect.size())) << where;
          if (count > 0) {
            EXPECT_EQ(first, expect[0]) << where;
          }
          ++cases;
        }
  }
  EXPECT_EQ(cases, 5 * 14 * 14 * 10);
}

TEST(SliceView, StepOfMostNegativeValue) {
  // Python: list(range(5))[::-(2**63)] == [4]; must not negate INT64_MIN (UBSan).
  Tensor base = iota_f64({5});
  Tensor v = base.slice_view(0, kEnd, kEnd, kI64Min);
  ASSERT_EQ(v.extent(0), 1);
  EXPECT_EQ(v.item<double>({0}), 4.0);
  const auto [first, count] = detail::python_slice(kEnd, kEnd, kI64Min, 5);
  EXPECT_EQ(first, 4);
  EXPECT_EQ(count, 1);
  Tensor w = base.slice_view(0, 2, 0, kI64Min);
  ASSERT_EQ(w.extent(0), 1);
  EXPECT_EQ(w.item<double>({0}), 2.0);
}

TEST(SliceView, MultiAxisChainedAndWrites) {
  Tensor m = iota_f64({3, 5});
  Tensor s = m.slice_view(1, 4, 0, -2);  // columns 4, 2
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.strides(), (Dims{1, -6}));
  for_each_index(s.shape(), [&](const Dims& i) { EXPECT_EQ(s.item<double>(i.span()), m.item<double>({i[0], 4 - 2 * i[1]})); });
  Tensor s2 = m.slice_view(-1, 4, 0, -2);
  EXPECT_EQ(values(s2), values(s));
  Tensor rows = m.slice_view(0, -2, kEnd);  // rows 1, 2
  EXPECT_EQ(rows.shape(), (Shape{2, 5}));
  EXPECT_EQ(rows.item<double>({0, 0}), 1.0);
  // Slices of a transposed view.
  Tensor t = m.transpose_view().slice_view(1, kEnd, kEnd, -1);  // {5,3}, rows reversed
  for_each_index(t.shape(), [&](const Dims& i) { EXPECT_EQ(t.item<double>(i.span()), m.item<double>({2 - i[1], i[0]})); });
  // Chained slices compose.
  Tensor v = iota_f64({10});
  Tensor c1 = v.slice_view(0, 1, 9, 2);       // 1 3 5 7
  Tensor c2 = c1.slice_view(0, kEnd, kEnd, -1);  // 7 5 3 1
  Tensor c3 = c2.slice_view(0, 1, 3);            // 5 3
  EXPECT_EQ(values(c1), (std::vector<double>{1, 3, 5, 7}));
  EXPECT_EQ(values(c2), (std::vector<double>{7, 5, 3, 1}));
  EXPECT_EQ(values(c3), (std::vector<double>{5, 3}));
  EXPECT_EQ(c3.stride(0), -2);
  EXPECT_EQ(c3.offset(), 5);
  c3.set<double>({1}, 30.0);
  EXPECT_EQ(v.item<double>({3}), 30.0);
  EXPECT_EQ(c1.item<double>({1}), 30.0);
}

TEST(SliceView, Errors) {
  Tensor m = iota_f64({3, 5});
  EXPECT_THROW(m.slice_view(0, 0, 3, 0), ArgumentError);
  EXPECT_THROW(m.slice_view(1, kEnd, kEnd, 0), ArgumentError);
  EXPECT_THROW(m.slice_view(2, 0, 1), AxisError);
  EXPECT_THROW(m.slice_view(-3, 0, 1), AxisError);
  try {
    m.slice_view(0, 0, 1, 0);
    ADD_FAILURE() << "no ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "slice_view");
  }
}

// ------------------------------------------------------------------ reshape

void expect_reshape_view(const Tensor& t, std::initializer_list<std::int64_t> shape, const std::string& what) {
  SCOPED_TRACE(what);
  Tensor r = t.reshape_view(shape);
  EXPECT_TRUE(r.shares_storage(t));
  EXPECT_EQ(r.numel(), t.numel());
  EXPECT_EQ(r.read_only(), t.read_only());
  EXPECT_EQ(values(r), values(t)) << "same elements in column-major order";
}

TEST(ReshapeView, CompactSource) {
  Tensor t = iota_f64({2, 3, 4});
  for (auto s : {std::initializer_list<std::int64_t>{6, 4}, {24}, {4, 3, 2}, {2, 12}, {-1}, {2, -1, 2}, {1, 24, 1},
                 {24, 1, 1, 1}, {2, 3, 4, 1}, {1, 1, 2, 3, 4}, {2, 3, 2, 2}})
    expect_reshape_view(t, s, "compact " + dims_string(std::span<const std::int64_t>(s.begin(), s.size())));
  Tensor r = t.reshape_view({6, 4});
  EXPECT_EQ(r.strides(), (Dims{1, 6}));
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(t.reshape_view({-1, 6}).shape(), (Shape{4, 6}));
  EXPECT_EQ(t.reshape_view({2, -1, 2}).shape(), (Shape{2, 6, 2}));
  // Writes through the reshaped view land in the base.
  r.set<double>({5, 3}, -7.0);
  EXPECT_EQ(t.item<double>({1, 2, 3}), -7.0);
}

TEST(ReshapeView, AfterSlicing) {
  Tensor base = iota_f64({4, 6});
  // Prefix of the last axis: still compact.
  Tensor s = base.slice_view(1, 0, 3);
  EXPECT_TRUE(s.is_contiguous());
  expect_reshape_view(s, {12}, "last-axis prefix -> 12");
  expect_reshape_view(s, {2, 2, 3}, "last-axis prefix -> 2x2x3");
  expect_reshape_view(s, {2, 6}, "last-axis prefix -> 2x6");
  // Prefix of the first axis: {2,6} with strides {1,4}; axis 1 can split, axes cannot merge.
  Tensor s2 = base.slice_view(0, 0, 2);
  expect_reshape_view(s2, {2, 3, 2}, "first-axis prefix split");
  EXPECT_EQ(s2.reshape_view({2, 3, 2}).strides(), (Dims{1, 4, 12}));
  expect_reshape_view(s2, {1, 2, 1, 6}, "first-axis prefix with unit axes");
  EXPECT_THROW(s2.reshape_view({12}), ArgumentError);
  EXPECT_THROW(s2.reshape_view({4, 3}), ArgumentError);
  // A stepped slice: {6} with stride 2 splits into strides {2, 4}.
  Tensor st = iota_f64({12}).slice_view(0, 0, 12, 2);
  expect_reshape_view(st, {2, 3}, "stepped");
  EXPECT_EQ(st.reshape_view({2, 3}).strides(), (Dims{2, 4}));
  // Negative strides.
  Tensor rev = iota_f64({6}).slice_view(0, kEnd, kEnd, -1);
  expect_reshape_view(rev, {2, 3}, "reversed -> 2x3");
  EXPECT_EQ(rev.reshape_view({2, 3}).strides(), (Dims{-1, -2}));
  expect_reshape_view(rev, {3, 1, 2}, "reversed -> 3x1x2");
  Tensor rev0 = iota_f64({2, 3}).slice_view(0, kEnd, kEnd, -1);  // strides {-1, 2}
  EXPECT_THROW(rev0.reshape_view({6}), ArgumentError);
  expect_reshape_view(rev0, {2, 3, 1}, "row-reversed with unit axis");
}

TEST(ReshapeView, PermutedAndTransposed) {
  Tensor t = iota_f64({2, 3, 4});
  Tensor p = t.permute_view({2, 0, 1});  // {4,2,3} strides {6,1,2}
  expect_reshape_view(p, {4, 6}, "merge compatible axes 1,2");
  EXPECT_EQ(p.reshape_view({4, 6}).strides(), (Dims{6, 1}));
  expect_reshape_view(p, {2, 2, 2, 3}, "split axis 0");
  EXPECT_EQ(p.reshape_view({2, 2, 2, 3}).strides(), (Dims{6, 12, 1, 2}));
  expect_reshape_view(p, {2, 2, 6}, "split 0 and merge 1,2");
  EXPECT_THROW(p.reshape_view({8, 3}), ArgumentError);
  EXPECT_THROW(p.reshape_view({24}), ArgumentError);

  Tensor mt = iota_f64({3, 4}).transpose_view();  // {4,3} strides {3,1}
  EXPECT_THROW(mt.reshape_view({12}), ArgumentError) << "merging axes of a transposed matrix needs a copy";
  EXPECT_THROW(mt.reshape_view({3, 4}), ArgumentError);
  EXPECT_THROW(mt.reshape_view({-1}), ArgumentError);
  expect_reshape_view(mt, {2, 2, 3}, "split the first axis of a transposed matrix");
  EXPECT_EQ(mt.reshape_view({2, 2, 3}).strides(), (Dims{3, 6, 1}));
  expect_reshape_view(mt, {4, 3, 1}, "append unit axis");
  expect_reshape_view(mt, {1, 4, 1, 3}, "insert unit axes");
  try {
    mt.reshape_view({12});
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "reshape_view");
  }
  // Extent-1 axes with arbitrary strides do not constrain the layout.
  Tensor base = iota_f64({12});
  Tensor odd = base.as_strided_view(Dims{3, 1, 4}, Dims{1, 999, 3}, 0);
  expect_reshape_view(odd, {12}, "unit axis with a wild stride");
}

TEST(ReshapeView, InferenceAndCountErrors) {
  Tensor t = iota_f64({2, 3, 4});
  EXPECT_THROW(t.reshape_view({-1, -1}), ShapeError);
  EXPECT_THROW(t.reshape_view({5, -1}), ShapeError);
  EXPECT_THROW(t.reshape_view({-2, 12}), ShapeError);
  EXPECT_THROW(t.reshape_view({7, 7}), ShapeError);
  EXPECT_THROW(t.reshape_view({25}), ShapeError);
  EXPECT_THROW(t.reshape_view({}), ShapeError);
  EXPECT_THROW(t.reshape_view({0, -1}), ShapeError);
  // A count mismatch is a ShapeError even when no view would be possible.
  EXPECT_THROW(t.transpose_view().reshape_view({5}), ShapeError);
  try {
    t.reshape_view({5, 5});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.op(), "reshape_view");
  }
}

TEST(ReshapeView, BroadcastRank0AndUnit) {
  Tensor b = Tensor::full({1}, 2.0, DType::f64).broadcast_view({4});
  Tensor r = b.reshape_view({2, 2});
  EXPECT_TRUE(r.read_only());
  EXPECT_EQ(r.strides(), (Dims{0, 0}));
  EXPECT_EQ(values(r), (std::vector<double>{2, 2, 2, 2}));
  Tensor bb = iota_f64({3}).broadcast_view({3, 4});  // strides {1, 0}
  EXPECT_THROW(bb.reshape_view({12}), ArgumentError);
  expect_reshape_view(bb, {3, 2, 2}, "split the broadcast axis");
  EXPECT_EQ(bb.reshape_view({3, 2, 2}).strides(), (Dims{1, 0, 0}));

  Tensor s = Tensor::scalar(Scalar(3.0));
  Tensor s1 = s.reshape_view({1});
  EXPECT_EQ(s1.shape(), (Shape{1}));
  EXPECT_EQ(s1.item<double>({0}), 3.0);
  Tensor s3 = s1.reshape_view({1, 1, 1});
  EXPECT_EQ(s3.item<double>({0, 0, 0}), 3.0);
  Tensor s0 = s3.reshape_view({});
  EXPECT_EQ(s0.rank(), 0);
  EXPECT_EQ(s0.item<double>(), 3.0);
  EXPECT_EQ(s.reshape_view({-1}).shape(), (Shape{1}));
}

// ------------------------------------------------------------------ broadcast

TEST(BroadcastView, FirstAxisAlignedRule) {
  Tensor v = iota_f64({3});
  Tensor a = v.broadcast_view({3, 4});
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  EXPECT_EQ(a.strides(), (Dims{1, 0}));
  EXPECT_TRUE(a.read_only());
  EXPECT_TRUE(a.shares_storage(v));
  for_each_index(a.shape(), [&](const Dims& i) { EXPECT_EQ(a.item<double>(i.span()), v.item<double>({i[0]})); });

  Tensor row = iota_f64({1, 4});
  Tensor b = row.broadcast_view({3, 4});
  EXPECT_EQ(b.strides(), (Dims{0, 1}));
  EXPECT_TRUE(b.read_only());
  for_each_index(b.shape(), [&](const Dims& i) { EXPECT_EQ(b.item<double>(i.span()), row.item<double>({0, i[1]})); });

  Tensor col = iota_f64({2, 1});
  Tensor c = col.broadcast_view({2, 3, 5});
  EXPECT_EQ(c.strides(), (Dims{1, 0, 0}));
  for_each_index(c.shape(), [&](const Dims& i) { EXPECT_EQ(c.item<double>(i.span()), col.item<double>({i[0], 0})); });

  Tensor s = Tensor::scalar(Scalar(4.0)).broadcast_view({2, 3});
  EXPECT_EQ(s.strides(), (Dims{0, 0}));
  EXPECT_EQ(values(s), std::vector<double>(6, 4.0));

  // Broadcasting a strided view keeps its strides on the kept axes.
  Tensor rev = iota_f64({3}).slice_view(0, kEnd, kEnd, -1);
  Tensor d = rev.broadcast_view({3, 2});
  EXPECT_EQ(d.strides(), (Dims{-1, 0}));
  EXPECT_EQ(d.item<double>({0, 1}), 2.0);

  // Writes to the base show through.
  v.set<double>({1}, 10.0);
  EXPECT_EQ(a.item<double>({1, 3}), 10.0);
}

TEST(BroadcastView, Errors) {
  Tensor v = iota_f64({3});
  EXPECT_THROW(v.broadcast_view({4, 3}), ShapeError) << "axes align at the first axis";
  EXPECT_THROW(v.broadcast_view({2}), ShapeError);
  EXPECT_THROW(v.broadcast_view({}), ShapeError) << "lower rank target";
  EXPECT_THROW(iota_f64({3, 4}).broadcast_view({3}), ShapeError) << "lower rank target";
  EXPECT_THROW(iota_f64({3, 4}).broadcast_view({3, 1}), ShapeError);
  EXPECT_THROW(iota_f64({1, 4}).broadcast_view({3, 4, 0, -1}), ShapeError);
  try {
    v.broadcast_view({4, 3});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.op(), "broadcast_view");
  }
}

TEST(BroadcastView, WithoutStretchingStaysWritable) {
  Tensor v = iota_f64({3});
  Tensor a = v.broadcast_view({3});
  EXPECT_FALSE(a.read_only());
  Tensor b = v.broadcast_view({3, 1, 1});
  EXPECT_FALSE(b.read_only());
  b.set<double>({2, 0, 0}, 9.0);
  EXPECT_EQ(v.item<double>({2}), 9.0);
}

// ------------------------------------------------------------------ real / imag

template <class C> void check_real_imag() {
  using R = typename C::value_type;
  std::vector<C> data;
  for (int k = 0; k < 6; ++k) data.push_back(C(static_cast<R>(k), static_cast<R>(-k - 0.5)));
  Tensor c = Tensor::from_data<C>(Dims{2, 3}.span(), std::span<const C>(data));
  Tensor re = c.real_view(), im = c.imag_view();
  EXPECT_EQ(re.dtype(), dtype_of<R>);
  EXPECT_EQ(im.dtype(), dtype_of<R>);
  EXPECT_EQ(re.shape(), (Shape{2, 3}));
  EXPECT_EQ(re.strides(), (Dims{2, 4}));
  EXPECT_EQ(im.strides(), (Dims{2, 4}));
  EXPECT_EQ(re.offset(), 0);
  EXPECT_EQ(im.offset(), 1);
  EXPECT_FALSE(re.read_only());
  EXPECT_TRUE(re.shares_storage(c));
  EXPECT_TRUE(im.shares_storage(c));
  for_each_index(c.shape(), [&](const Dims& i) {
    EXPECT_EQ(re.template item<R>(i.span()), c.template item<C>(i.span()).real());
    EXPECT_EQ(im.template item<R>(i.span()), c.template item<C>(i.span()).imag());
  });
  re.template set<R>({1, 2}, R(100));
  im.template set<R>({0, 1}, R(-200));
  EXPECT_EQ(c.template item<C>({1, 2}), C(R(100), R(-5.5)));
  EXPECT_EQ(c.template item<C>({0, 1}), C(R(2), R(-200)));
  EXPECT_THROW(re.template item<C>({0, 0}), DTypeError);

  // Views of views: a reversed, transposed complex view.
  Tensor v = c.transpose_view().slice_view(0, kEnd, kEnd, -1);  // {3,2}
  Tensor vr = v.real_view(), vi = v.imag_view();
  EXPECT_EQ(vr.strides(), (Dims{-4, 2}));
  for_each_index(v.shape(), [&](const Dims& i) {
    EXPECT_EQ(vr.template item<R>(i.span()), v.template item<C>(i.span()).real());
    EXPECT_EQ(vi.template item<R>(i.span()), v.template item<C>(i.span()).imag());
  });
  // Rank 0.
  Tensor z = Tensor::full({}, Scalar(c128(1.5, -2)), dtype_of<C>);
  EXPECT_EQ(z.real_view().template item<R>(), R(1.5));
  EXPECT_EQ(z.imag_view().template item<R>(), R(-2));
}

TEST(RealImagView, Complex128) { check_real_imag<c128>(); }
TEST(RealImagView, Complex64) { check_real_imag<c64>(); }

TEST(RealImagView, ReadOnlyAndErrors) {
  Tensor c = Tensor::full({1}, Scalar(c128(1, 2)), DType::c128).broadcast_view({3});
  Tensor re = c.real_view();
  EXPECT_TRUE(re.read_only());
  EXPECT_EQ(re.strides(), (Dims{0}));
  EXPECT_EQ(c.imag_view().item<double>({2}), 2.0);
  EXPECT_THROW(re.set<double>({0}, 1.0), ArgumentError);
  EXPECT_THROW(c.imag_view().set<double>({0}, 1.0), ArgumentError);
  for (DType d : {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64}) {
    Tensor t = Tensor::zeros({2}, d);
    EXPECT_THROW(t.real_view(), DTypeError) << dtype_name(d);
    EXPECT_THROW(t.imag_view(), DTypeError) << dtype_name(d);
  }
  try {
    Tensor::zeros({2}, DType::f64).imag_view();
    ADD_FAILURE() << "no DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_EQ(e.op(), "imag_view");
  }
}

// ------------------------------------------------------------------ as_strided

TEST(AsStridedView, ElementsAndOffsets) {
  Tensor base = iota_f64({10});
  Tensor a = base.as_strided_view(Dims{2, 2}, Dims{2, 4}, 1);
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  EXPECT_EQ(a.strides(), (Dims{2, 4}));
  EXPECT_EQ(a.offset(), 1);
  EXPECT_FALSE(a.read_only());
  EXPECT_TRUE(a.shares_storage(base));
  for_each_index(a.shape(), [&](const Dims& i) { EXPECT_EQ(a.item<double>(i.span()), 1.0 + 2 * i[0] + 4 * i[1]); });
  Tensor neg = base.as_strided_view(Dims{5}, Dims{-1}, 9);
  EXPECT_EQ(values(neg), (std::vector<double>{9, 8, 7, 6, 5}));
  Tensor full = base.as_strided_view(Dims{5}, Dims{2}, 1);  // reaches element 9 exactly
  EXPECT_EQ(values(full), (std::vector<double>{1, 3, 5, 7, 9}));
  Tensor mixed = base.as_strided_view(Dims{2, 3}, Dims{-5, 2}, 5);  // offsets 0..9
  for_each_index(mixed.shape(), [&](const Dims& i) { EXPECT_EQ(mixed.item<double>(i.span()), 5.0 - 5 * i[0] + 2 * i[1]); });
  Tensor r0 = base.as_strided_view(Dims{}, Dims{}, 7);
  EXPECT_EQ(r0.item<double>(), 7.0);
  // The offset is counted from the start of the storage, not from the view.
  Tensor s = base.slice_view(0, 2, kEnd);
  EXPECT_EQ(s.as_strided_view(Dims{2}, Dims{1}, 0).item<double>({0}), 0.0);
  // Writes land in the base.
  a.set<double>({1, 1}, -1.0);
  EXPECT_EQ(base.item<double>({7}), -1.0);
  // Zero-size views.
  EXPECT_EQ(base.as_strided_view(Dims{0, 3}, Dims{1, 1}, 0).numel(), 0);
}

TEST(AsStridedView, BoundsChecking) {
  Tensor base = iota_f64({10});
  EXPECT_THROW(base.as_strided_view(Dims{5}, Dims{2}, 2), IndexError);   // reaches 10
  EXPECT_THROW(base.as_strided_view(Dims{11}, Dims{1}, 0), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{1}, Dims{1}, 10), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{2}, Dims{1}, -1), IndexError);  // negative offset
  EXPECT_THROW(base.as_strided_view(Dims{1}, Dims{1}, -1), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{3}, Dims{-1}, 1), IndexError);  // reaches -1
  EXPECT_THROW(base.as_strided_view(Dims{2, 2}, Dims{-5, 1}, 4), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{2}, Dims{kI64Max}, 0), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{2}, Dims{kI64Max}, 1), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{3}, Dims{kI64Max}, 0), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{2}, Dims{kI64Min}, 5), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{1}, Dims{1}, kI64Max), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{1}, Dims{1}, kI64Min), IndexError);
  EXPECT_THROW(base.as_strided_view(Dims{2, 2}, Dims{1}, 0), RankError);
  EXPECT_THROW(base.as_strided_view(Dims{-1}, Dims{1}, 0), ShapeError);
  // The bound is the storage the tensor asked for, not the block's size class.
  Tensor nine = iota_f64({9});  // 72 bytes in an 80-byte class
  EXPECT_NO_THROW(nine.as_strided_view(Dims{1}, Dims{1}, 8));
  EXPECT_THROW(nine.as_strided_view(Dims{1}, Dims{1}, 9), IndexError);
  // Counted in elements of the view's dtype: a real view of c128 storage has 2n slots.
  Tensor c = Tensor::zeros({3}, DType::c128);
  EXPECT_NO_THROW(c.real_view().as_strided_view(Dims{6}, Dims{1}, 0));
  EXPECT_THROW(c.real_view().as_strided_view(Dims{7}, Dims{1}, 0), IndexError);
  EXPECT_THROW(c.as_strided_view(Dims{4}, Dims{1}, 0), IndexError);
  try {
    base.as_strided_view(Dims{11}, Dims{1}, 0);
  } catch (const IndexError& e) {
    EXPECT_EQ(e.op(), "as_strided_view");
  }
}

TEST(AsStridedView, ZeroStrideIsReadOnly) {
  Tensor base = iota_f64({10});
  Tensor z = base.as_strided_view(Dims{4}, Dims{0}, 2);
  EXPECT_TRUE(z.read_only());
  EXPECT_EQ(values(z), std::vector<double>(4, 2.0));
  EXPECT_THROW(z.set<double>({0}, 1.0), ArgumentError);
  EXPECT_THROW(z.mutable_data(), ArgumentError);
  Tensor z2 = base.as_strided_view(Dims{2, 3}, Dims{1, 0}, 0);
  EXPECT_TRUE(z2.read_only());
  // A zero stride on an extent-1 axis aliases nothing.
  Tensor one = base.as_strided_view(Dims{1}, Dims{0}, 3);
  EXPECT_FALSE(one.read_only());
  Tensor unit = base.as_strided_view(Dims{3, 1}, Dims{1, 0}, 0);
  EXPECT_FALSE(unit.read_only());
  unit.set<double>({2, 0}, 42.0);
  EXPECT_EQ(base.item<double>({2}), 42.0);
  // as_strided of a read-only view stays read-only.
  EXPECT_TRUE(z.as_strided_view(Dims{2}, Dims{1}, 0).read_only());
}

// ------------------------------------------------------------------ every view against its base

TEST(Views, RandomLayoutsAgreeWithTheirBase) {
  std::mt19937_64 rng(7);
  for (auto layout : testing::kAllLayouts) {
    for (DType d : testing::kAllDTypes) {
      Tensor t = testing::random_layout(rng, Shape{3, 4, 2}, d, layout);
      SCOPED_TRACE(testing::layout_name(layout) + " " + std::string(dtype_name(d)));
      Tensor p = t.permute_view({1, 2, 0});
      for_each_index(p.shape(), [&](const Dims& i) {
        EXPECT_EQ(testing::value_at(p, i), testing::value_at(t, Dims{i[2], i[0], i[1]}));
      });
      Tensor s = t.slice_view(1, -1, 0, -2);  // axis-1 indices 3, 1
      for_each_index(s.shape(), [&](const Dims& i) {
        EXPECT_EQ(testing::value_at(s, i), testing::value_at(t, Dims{i[0], 3 - 2 * i[1], i[2]}));
      });
      Tensor b = t.broadcast_view({3, 4, 2, 2});
      EXPECT_TRUE(b.read_only());
      for_each_index(b.shape(), [&](const Dims& i) {
        EXPECT_EQ(testing::value_at(b, i), testing::value_at(t, Dims{i[0], i[1], i[2]}));
      });
      try {
        Tensor r = t.reshape_view({12, 2});
        for_each_index(r.shape(), [&](const Dims& i) {
          EXPECT_EQ(testing::value_at(r, i), testing::value_at(t, Dims{i[0] % 3, i[0] / 3, i[1]}));
        });
      } catch (const ArgumentError&) {
        // Axes 0 and 1 merge only when stride(1) == 3 * stride(0): true for the compact and
        // the fully reversed layouts, false for the transposed and broadcast ones.
        EXPECT_TRUE(layout == testing::Layout::transposed || layout == testing::Layout::broadcast);
      }
    }
  }
}

// ------------------------------------------------------------------ as_strided

// Found by fuzz_views (tests/fuzz/corpus/fuzz_views/crash-as-strided-empty-offset): an
// empty view's offset overflowed offset * element size (UB) and pointed far outside.
TEST(AsStridedView, EmptyViewsNeedAnOffsetInsideTheStorage) {
  const Tensor t = iota_f64({3, 4});  // 12 elements
  const Dims empty{0, 3}, strides{1, 1};
  EXPECT_EQ(t.as_strided_view(empty, strides, 0).numel(), 0);
  EXPECT_EQ(t.as_strided_view(empty, strides, 12).numel(), 0) << "just past the end is fine";
  EXPECT_THROW((void)t.as_strided_view(empty, strides, 13), IndexError);
  EXPECT_THROW((void)t.as_strided_view(empty, strides, -1), IndexError);
  EXPECT_THROW((void)t.as_strided_view(empty, strides, std::numeric_limits<std::int64_t>::max()), IndexError);
}

}  // namespace
}  // namespace tenferro
