// slice, slice_view, dynamic_slice, dynamic_update_slice (allocating, _into, _inplace),
// take_along_axis and index_select against plain reference loops written here: random
// configurations over every dtype and layout (contiguous, transposed, negative-stride,
// broadcast), index tensors in strided layouts, outputs that are strided views,
// clamping of out-of-range starts, negative indices, zero extents; every bad argument
// throws its exact error type with the output untouched; the session is checked first.
#include <gmock/gmock.h>

#include <limits>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::indexing_test {
namespace {

using testing::expect_error;
using testing::expect_untouched;
using testing::for_each_index;
using testing::kAllDTypes;
using testing::kAllLayouts;
using testing::Layout;
using testing::layout_name;
using testing::out_view;
using testing::random_layout;
using testing::random_tensor;
using testing::snapshot;
using testing::uniform;
using testing::value_at;
using cd = std::complex<double>;

/// Random shape of rank r, extents in [lo, hi].
Shape random_shape(std::mt19937_64& rng, int r, std::int64_t lo, std::int64_t hi) {
  Shape s(r, 0);
  for (int i = 0; i < r; ++i) s[i] = uniform(rng, lo, hi);
  return s;
}

/// A rank-1 index tensor holding `v`: 0 compact, 1 stride 2, 2 negative stride.
Tensor index_vector(const std::vector<std::int64_t>& v, DType dt, int variant) {
  const auto n = static_cast<std::int64_t>(v.size());
  Tensor base = Tensor::zeros({2 * n + 1}, dt);
  Tensor t = base.slice_view(0, 0, n);
  if (n > 0 && variant % 3 == 1) t = base.slice_view(0, 0, 2 * n, 2);
  if (n > 0 && variant % 3 == 2) t = base.slice_view(0, n - 1, Tensor::kSliceEnd, -1);
  for (std::int64_t i = 0; i < n; ++i) {
    if (dt == DType::i32) t.set<std::int32_t>({i}, static_cast<std::int32_t>(v[static_cast<std::size_t>(i)]));
    else t.set<std::int64_t>({i}, v[static_cast<std::size_t>(i)]);
  }
  return t;
}

/// Expects `t` to have `shape` and t[i] == ref(i) for every index (exact).
void expect_values(const Tensor& t, const Shape& shape, const std::function<cd(const Dims&)>& ref) {
  ASSERT_EQ(t.shape(), shape);
  int bad = 0;
  for_each_index(shape, [&](const Dims& i) {
    const cd got = value_at(t, i), want = ref(i);
    if (got != want && ++bad <= 3) ADD_FAILURE() << "at " << i.to_string() << ": got " << got << ", want " << want;
  });
  EXPECT_EQ(bad, 0);
}

std::string trace(DType dt, Layout l, int rep) {
  return std::string(dtype_name(dt)) + " " + layout_name(l) + " rep " + std::to_string(rep);
}

struct Fixture : ::testing::Test {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng{20240311};
};

// ---------------------------------------------------------------- slice

using Slice = Fixture;

TEST_F(Slice, RandomConfigsEveryDTypeLayoutAndOutput) {
  int cases = 0;
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 8; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const int r = rep % 5;
        const Shape shape = random_shape(rng, r, rep == 7 ? 0 : 1, 5);
        const Tensor x = random_layout(rng, shape, dt, l);
        Dims starts(r, 0), limits(r, 0), strides(r, 1);
        Shape rs(r, 0);
        for (int d = 0; d < r; ++d) {
          starts[d] = uniform(rng, 0, shape[d]);
          limits[d] = uniform(rng, starts[d], shape[d]);
          strides[d] = uniform(rng, 1, 3);
          rs[d] = (limits[d] - starts[d] + strides[d] - 1) / strides[d];
        }
        auto ref = [&](const Dims& i) {
          Dims xi(r, 0);
          for (int d = 0; d < r; ++d) xi[d] = starts[d] + i[d] * strides[d];
          return value_at(x, xi);
        };
        expect_values(slice(s, x, starts, limits, strides), rs, ref);
        const Tensor out = out_view(rng, rs, dt, rep);
        slice_into(s, x, starts, limits, strides, out);
        expect_values(out, rs, ref);
        const Tensor v = slice_view(x, starts, limits, strides);
        expect_values(v, rs, ref);
        EXPECT_TRUE(v.shares_storage(x));
        EXPECT_EQ(v.read_only(), x.read_only());
        ++cases;
      }
  EXPECT_EQ(cases, 7 * 4 * 8);
}

TEST_F(Slice, DefaultStridesAndFullRange) {
  const Tensor x = Tensor::arange(12, DType::f64).reshape_view({3, 4});
  const Tensor y = slice(s, x, {1, 0}, {3, 4});
  expect_values(y, {2, 4}, [&](const Dims& i) { return value_at(x, {i[0] + 1, i[1]}); });
  expect_values(slice(s, x, {0, 0}, {3, 4}, {1, 1}), {3, 4}, [&](const Dims& i) { return value_at(x, i); });
  expect_values(slice(s, x, {0, 1}, {3, 4}, {2, 3}), {2, 1}, [&](const Dims& i) { return value_at(x, {2 * i[0], 1 + 3 * i[1]}); });
  // Rank 0: the scalar itself.
  const Tensor sc = Tensor::scalar(2.5);
  EXPECT_EQ(slice(s, sc, {}, {}).item<double>(), 2.5);
}

TEST_F(Slice, ZeroExtents) {
  const Tensor x = random_tensor(rng, {3, 0, 2}, DType::c128);
  EXPECT_EQ(slice(s, x, {1, 0, 0}, {3, 0, 2}).shape(), Shape({2, 0, 2}));
  const Tensor y = random_tensor(rng, {4, 3}, DType::i32);
  EXPECT_EQ(slice(s, y, {4, 1}, {4, 3}).shape(), Shape({0, 2}));
  EXPECT_EQ(slice_view(y, {2, 3}, {2, 3}).shape(), Shape({0, 0}));
  const Tensor out = Tensor::empty({0, 2}, DType::i32);
  slice_into(s, y, {4, 1}, {4, 3}, {1, 1}, out);
}

TEST_F(Slice, BadArgumentsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::f64);
  const Tensor out = random_tensor(rng, {2, 3}, DType::f64);
  const auto snap = snapshot(out);
  auto into = [&](Dims a, Dims b, Dims c, const Tensor& o) { return [=, this] { slice_into(s, x, a, b, c, o); }; };
  expect_error<RankError>(into({0}, {2, 3}, {1, 1}, out), "slice");
  expect_error<RankError>(into({0, 0}, {2, 3, 1}, {1, 1}, out), "slice");
  expect_error<RankError>(into({0, 0}, {2, 3}, {1}, out), "slice");
  expect_error<IndexError>(into({-1, 0}, {1, 3}, {1, 1}, out), "slice");
  expect_error<IndexError>(into({3, 0}, {2, 3}, {1, 1}, out), "slice");  // start > limit
  expect_error<IndexError>(into({0, 0}, {5, 3}, {2, 1}, out), "slice");  // limit > extent
  const std::string msg = expect_error<ArgumentError>(into({0, 0}, {4, 3}, {2, 0}, out), "slice");
  EXPECT_THAT(msg, ::testing::HasSubstr("strides[1] = 0"));
  expect_error<ArgumentError>(into({0, 0}, {4, 3}, {-1, 1}, out), "slice");
  expect_error<ShapeError>(into({0, 0}, {3, 3}, {1, 1}, out), "slice");  // result [3, 3]
  expect_error<DTypeError>(into({0, 0}, {2, 3}, {1, 1}, Tensor::zeros({2, 3}, DType::f32)), "slice");
  expect_error<ArgumentError>(into({0, 0}, {2, 3}, {1, 1}, Tensor::zeros({2, 1}, DType::f64).broadcast_view({2, 3})), "slice");
  expect_error<ArgumentError>([&] { slice_into(s, x, {0, 0}, {2, 3}, {1, 1}, x.slice_view(0, 2, 4)); }, "slice");  // overlaps x
  expect_error<ArgumentError>([&] { slice_into(s, Tensor(), {}, {}, {}, out); }, "slice");
  expect_error<ArgumentError>([&] { slice_into(s, x, {0, 0}, {2, 3}, {}, Tensor()); }, "slice");
  expect_untouched(out, snap);
  expect_error<IndexError>([&] { (void)slice_view(x, {0, 0}, {5, 3}); }, "slice_view");
  expect_error<RankError>([&] { (void)slice_view(x, {0}, {4}); }, "slice_view");
  expect_error<ArgumentError>([&] { (void)slice_view(x, {0, 0}, {4, 3}, {0, 1}); }, "slice_view");
  expect_error<ArgumentError>([&] { (void)slice_view(Tensor(), {}, {}); }, "slice_view");
}

// A step larger than the axis takes one element; the step never reaches a stride
// (INT64_MAX * element size overflowed the byte stride, undefined behaviour), and the
// result views stay steppable in bytes.
TEST_F(Slice, HugeStepsTakeOneElement) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const Tensor x = Tensor::arange(12, DType::f64).reshape_view({4, 3});
  const Tensor y = slice(s, x, {1, 0}, {4, 3}, {kMax, kMax});
  expect_values(y, {1, 1}, [&](const Dims&) { return value_at(x, {1, 0}); });
  const Tensor out = Tensor::zeros({1, 1}, DType::f64);
  slice_into(s, x, {2, 1}, {4, 3}, {kMax, kMax}, out);
  EXPECT_EQ(out.item<double>({0, 0}), 6.0);  // x[2, 1] = 2 + 4 * 1 (column-major)
  const Tensor v = slice_view(x, {3, 2}, {4, 3}, {kMax, kMax});
  EXPECT_EQ(v.item<double>({0, 0}), 11.0);
  for (int d = 0; d < 2; ++d) EXPECT_LE(std::abs(v.stride(d)), kMax / 8) << "axis " << d;
  for (std::int64_t step : {kMax, std::numeric_limits<std::int64_t>::min(), kMax - 1}) {
    SCOPED_TRACE(step);
    const Tensor w = x.slice_view(0, step > 0 ? 1 : 2, Tensor::kSliceEnd, step);
    ASSERT_EQ(w.shape(), Shape({1, 3}));
    EXPECT_LE(std::abs(w.stride(0)), kMax / 8);
    expect_values(to_contiguous(s, w), {1, 3}, [&](const Dims& i) { return value_at(x, {step > 0 ? 1 : 2, i[1]}); });
  }
  // A stride a user passes for an axis of extent 1 must fit in bytes as well.
  const std::int64_t shape1[] = {1}, huge[] = {kMax};
  expect_error<IndexError>([&] { (void)x.as_strided_view(shape1, huge, 0); }, "as_strided_view");
}

// ---------------------------------------------------------------- dynamic_slice

using DynamicSlice = Fixture;

TEST_F(DynamicSlice, RandomConfigsClampStartsEveryDTypeAndLayout) {
  int clamped = 0;
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 8; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const int r = rep % 5;
        const Shape shape = random_shape(rng, r, rep == 6 ? 0 : 1, 5);
        const Tensor x = random_layout(rng, shape, dt, l);
        std::vector<std::int64_t> starts(static_cast<std::size_t>(r));
        Dims sizes(r, 0);
        for (int d = 0; d < r; ++d) {
          sizes[d] = uniform(rng, 0, shape[d]);
          starts[static_cast<std::size_t>(d)] = uniform(rng, -3, shape[d] + 3);
          clamped += starts[static_cast<std::size_t>(d)] < 0 || starts[static_cast<std::size_t>(d)] > shape[d] - sizes[d];
        }
        const Tensor st = index_vector(starts, rep % 2 ? DType::i32 : DType::i64, rep);
        auto ref = [&](const Dims& i) {
          Dims xi(r, 0);
          for (int d = 0; d < r; ++d) xi[d] = std::clamp<std::int64_t>(starts[static_cast<std::size_t>(d)], 0, shape[d] - sizes[d]) + i[d];
          return value_at(x, xi);
        };
        expect_values(dynamic_slice(s, x, st, sizes), sizes, ref);
        const Tensor out = out_view(rng, sizes, dt, rep + 1);
        dynamic_slice_into(s, x, st, sizes, out);
        expect_values(out, sizes, ref);
      }
  EXPECT_GT(clamped, 50);
}

TEST_F(DynamicSlice, StartsAsBroadcastView) {
  const Tensor x = Tensor::arange(20, DType::i64).reshape_view({4, 5});
  const Tensor st = Tensor::full({1}, 7, DType::i32).broadcast_view({2});  // [7, 7], clamped to [2, 3]
  expect_values(dynamic_slice(s, x, st, {2, 2}), {2, 2}, [&](const Dims& i) { return value_at(x, {2 + i[0], 3 + i[1]}); });
}

TEST_F(DynamicSlice, BadArgumentsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::c128);
  const Tensor st = index_vector({1, 1}, DType::i64, 0);
  const Tensor out = random_tensor(rng, {2, 2}, DType::c128);
  const auto snap = snapshot(out);
  auto into = [&](const Tensor& starts, Dims sizes, const Tensor& o) { return [=, this] { dynamic_slice_into(s, x, starts, sizes, o); }; };
  expect_error<DTypeError>(into(Tensor::zeros({2}, DType::f64), {2, 2}, out), "dynamic_slice");
  expect_error<DTypeError>(into(Tensor::zeros({2}, DType::b8), {2, 2}, out), "dynamic_slice");
  expect_error<RankError>(into(Tensor::zeros({2, 1}, DType::i64), {2, 2}, out), "dynamic_slice");
  expect_error<ShapeError>(into(index_vector({1, 1, 1}, DType::i32, 0), {2, 2}, out), "dynamic_slice");
  expect_error<RankError>(into(st, {2}, out), "dynamic_slice");
  expect_error<ShapeError>(into(st, {5, 2}, out), "dynamic_slice");
  expect_error<ShapeError>(into(st, {-1, 2}, out), "dynamic_slice");
  expect_error<ShapeError>(into(st, {2, 3}, out), "dynamic_slice");  // out shape
  expect_error<DTypeError>(into(st, {2, 2}, Tensor::zeros({2, 2}, DType::c64)), "dynamic_slice");
  expect_error<ArgumentError>(into(st, {2, 2}, x.slice_view(0, 0, 2).slice_view(1, 0, 2)), "dynamic_slice");
  expect_error<ArgumentError>(into(Tensor(), {2, 2}, out), "dynamic_slice");
  // out overlapping the start indices
  const Tensor buf = Tensor::zeros({6}, DType::i64);
  expect_error<ArgumentError>([&] { dynamic_slice_into(s, Tensor::zeros({4}, DType::i64), buf.slice_view(0, 0, 1), {2}, buf.slice_view(0, 0, 2)); },
                              "dynamic_slice");
  expect_untouched(out, snap);
}

// ---------------------------------------------------------------- dynamic_update_slice

using DynamicUpdateSlice = Fixture;

TEST_F(DynamicUpdateSlice, RandomConfigsAllFormsEveryDTypeAndLayout) {
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 8; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const int r = rep % 5;
        const Shape shape = random_shape(rng, r, rep == 5 ? 0 : 1, 5);
        const Tensor x = random_layout(rng, shape, dt, l);
        Shape us(r, 0);
        std::vector<std::int64_t> starts(static_cast<std::size_t>(r));
        for (int d = 0; d < r; ++d) {
          us[d] = uniform(rng, 0, shape[d]);
          starts[static_cast<std::size_t>(d)] = uniform(rng, -2, shape[d] + 2);
        }
        const Tensor u = random_layout(rng, us, dt, kAllLayouts[(rep + 1) % 4]);
        const Tensor st = index_vector(starts, rep % 2 ? DType::i64 : DType::i32, rep);
        // Reference, computed before any in-place form runs.
        auto ref_from = [&](const Tensor& base) {
          std::vector<cd> v;
          Dims lo(r, 0);
          for (int d = 0; d < r; ++d) lo[d] = std::clamp<std::int64_t>(starts[static_cast<std::size_t>(d)], 0, shape[d] - us[d]);
          for_each_index(shape, [&](const Dims& i) {
            bool in = true;
            Dims ui(r, 0);
            for (int d = 0; d < r; ++d) {
              ui[d] = i[d] - lo[d];
              in &= ui[d] >= 0 && ui[d] < us[d];
            }
            v.push_back(in ? value_at(u, ui) : value_at(base, i));
          });
          return v;
        };
        auto check = [&](const Tensor& t, const std::vector<cd>& want) {
          std::size_t k = 0;
          expect_values(t, shape, [&](const Dims&) { return want[k++]; });
        };
        const std::vector<cd> want = ref_from(x);
        check(dynamic_update_slice(s, x, u, st), want);
        const Tensor out = out_view(rng, shape, dt, rep);
        dynamic_update_slice_into(s, x, u, st, out);
        check(out, want);
        // In place, on a writable strided operand, and through _into with out == operand.
        const Tensor w = out_view(rng, shape, dt, rep + 2);
        const std::vector<cd> want_w = ref_from(w);
        if (rep % 2) dynamic_update_slice_inplace(s, w, u, st);
        else dynamic_update_slice_into(s, w, u, st, w);
        check(w, want_w);
      }
}

TEST_F(DynamicUpdateSlice, InPlaceWritesOnlyTheWindow) {
  const Tensor x = Tensor::zeros({4, 4}, DType::f64);
  const Tensor u = Tensor::ones({2, 2}, DType::f64);
  dynamic_update_slice_inplace(s, x, u, index_vector({9, -4}, DType::i32, 0));  // clamped to [2, 0]
  for_each_index(x.shape(), [&](const Dims& i) { EXPECT_EQ(x.item<double>(i.span()), (i[0] >= 2 && i[1] < 2) ? 1.0 : 0.0); });
}

TEST_F(DynamicUpdateSlice, BadArgumentsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::i32);
  const Tensor u = random_tensor(rng, {2, 2}, DType::i32);
  const Tensor st = index_vector({1, 1}, DType::i64, 1);
  const Tensor out = random_tensor(rng, {4, 3}, DType::i32);
  const auto snap = snapshot(out), xsnap = snapshot(x);
  const char* op = "dynamic_update_slice";
  auto into = [&](const Tensor& uu, const Tensor& ss, const Tensor& o) { return [=, this] { dynamic_update_slice_into(s, x, uu, ss, o); }; };
  expect_error<DTypeError>(into(random_tensor(rng, {2, 2}, DType::i64), st, out), op);
  expect_error<RankError>(into(random_tensor(rng, {2}, DType::i32), st, out), op);
  expect_error<ShapeError>(into(random_tensor(rng, {5, 1}, DType::i32), st, out), op);
  expect_error<DTypeError>(into(u, Tensor::zeros({2}, DType::f32), out), op);
  expect_error<ShapeError>(into(u, index_vector({1}, DType::i32, 0), out), op);
  expect_error<RankError>(into(u, Tensor::zeros({}, DType::i32), out), op);
  expect_error<ShapeError>(into(u, st, Tensor::zeros({3, 4}, DType::i32)), op);
  expect_error<DTypeError>(into(u, st, Tensor::zeros({4, 3}, DType::i64)), op);
  expect_error<ArgumentError>(into(u, st, Tensor::zeros({4, 1}, DType::i32).broadcast_view({4, 3})), op);
  expect_error<ArgumentError>(into(out.slice_view(0, 0, 2).slice_view(1, 0, 2), st, out), op);  // update overlaps out
  expect_error<ArgumentError>(into(u, st, x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1)), op);
  expect_error<ArgumentError>(into(u, Tensor(), out), op);
  expect_untouched(out, snap);
  expect_untouched(x, xsnap);
  // In place: a read-only operand is refused; an update aliasing the operand too.
  const Tensor ro = Tensor::zeros({4, 1}, DType::i32).broadcast_view({4, 3});
  expect_error<ArgumentError>([&] { dynamic_update_slice_inplace(s, ro, u, st); }, op);
  expect_error<ArgumentError>([&] { dynamic_update_slice_inplace(s, out, out.slice_view(0, 2, 4).slice_view(1, 0, 2), st); }, op);
  expect_error<ShapeError>([&] { dynamic_update_slice_inplace(s, out, random_tensor(rng, {5, 1}, DType::i32), st); }, op);
  expect_untouched(out, snap);
}

// ---------------------------------------------------------------- take_along_axis

using TakeAlongAxis = Fixture;

TEST_F(TakeAlongAxis, RandomConfigsWithBroadcastAndNegativeIndices) {
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 8; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const int r = 1 + rep % 4;
        Shape xs = random_shape(rng, r, 1, 4);
        const int ax = static_cast<int>(uniform(rng, 0, r - 1));
        Shape is = xs;
        for (int d = 0; d < r; ++d) {
          if (d == ax) is[d] = uniform(rng, 0, 4);
          else if (uniform(rng, 0, 3) == 0) is[d] = 1;                  // indices broadcast
          else if (uniform(rng, 0, 3) == 0) xs[d] = 1, is[d] = uniform(rng, 1, 3);  // x broadcasts
        }
        const Tensor x = random_layout(rng, xs, dt, l);
        const std::int64_t n = xs[ax];
        const Tensor idx = random_layout(rng, is, rep % 2 ? DType::i32 : DType::i64, kAllLayouts[rep % 4], -static_cast<double>(n),
                                         static_cast<double>(n - 1));
        Shape rs(r, 0);
        for (int d = 0; d < r; ++d) rs[d] = d == ax ? is[d] : std::max(xs[d], is[d]);
        auto ref = [&](const Dims& i) {
          Dims ii(r, 0), xi(r, 0);
          for (int d = 0; d < r; ++d) ii[d] = is[d] == 1 ? 0 : i[d];
          for (int d = 0; d < r; ++d) xi[d] = xs[d] == 1 ? 0 : i[d];
          std::int64_t v = static_cast<std::int64_t>(value_at(idx, ii).real());
          xi[ax] = v < 0 ? v + n : v;
          return value_at(x, xi);
        };
        const std::int64_t axis = rep % 3 == 0 ? ax - r : ax;  // negative axes too
        expect_values(take_along_axis(s, x, idx, axis), rs, ref);
        const Tensor out = out_view(rng, rs, dt, rep);
        take_along_axis_into(s, x, idx, axis, out);
        expect_values(out, rs, ref);
      }
}

TEST_F(TakeAlongAxis, ZeroExtents) {
  const Tensor x = random_tensor(rng, {3, 0}, DType::f64);
  EXPECT_EQ(take_along_axis(s, x, Tensor::zeros({2, 0}, DType::i64), 0).shape(), Shape({2, 0}));
  const Tensor y = random_tensor(rng, {3, 2}, DType::f64);
  EXPECT_EQ(take_along_axis(s, y, Tensor::zeros({0, 2}, DType::i32), 0).shape(), Shape({0, 2}));
  // An empty axis with a non-empty index tensor: every index is out of range.
  expect_error<IndexError>([&] { (void)take_along_axis(s, Tensor::zeros({0, 2}, DType::f64), Tensor::zeros({1, 2}, DType::i32), 0); },
                           "take_along_axis");
}

TEST_F(TakeAlongAxis, BadArgumentsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::b8);
  const Tensor idx = Tensor::from_data<std::int64_t>({2, 3}, {0, 1, 2, 3, -4, 1});
  const Tensor out = random_tensor(rng, {2, 3}, DType::b8);
  const auto snap = snapshot(out);
  const char* op = "take_along_axis";
  auto into = [&](const Tensor& i, std::int64_t axis, const Tensor& o) { return [=, this] { take_along_axis_into(s, x, i, axis, o); }; };
  const Tensor bad = Tensor::from_data<std::int32_t>({2, 3}, {0, 1, 2, 4, 0, 0});
  const std::string msg = expect_error<IndexError>(into(bad, 0, out), op);
  EXPECT_THAT(msg, ::testing::HasSubstr("[1, 1] = 4"));
  expect_error<IndexError>(into(Tensor::from_data<std::int64_t>({2, 3}, {0, 1, 2, 3, -5, 1}), 0, out), op);
  expect_error<DTypeError>(into(Tensor::zeros({2, 3}, DType::f64), 0, out), op);
  expect_error<RankError>(into(Tensor::zeros({2}, DType::i64), 0, out), op);
  expect_error<ShapeError>(into(Tensor::zeros({2, 2}, DType::i64), 0, out), op);  // 2 vs 3 off axis
  expect_error<AxisError>(into(idx, 2, out), op);
  expect_error<AxisError>(into(idx, -3, out), op);
  expect_error<ShapeError>(into(idx, 0, Tensor::zeros({3, 3}, DType::b8)), op);
  expect_error<DTypeError>(into(idx, 0, Tensor::zeros({2, 3}, DType::i32)), op);
  expect_error<ArgumentError>(into(idx, 0, Tensor::zeros({2, 1}, DType::b8).broadcast_view({2, 3})), op);
  expect_error<ArgumentError>(into(idx, 0, x.slice_view(0, 1, 3)), op);
  expect_error<ArgumentError>(into(Tensor(), 0, out), op);
  expect_untouched(out, snap);
}

// ---------------------------------------------------------------- index_select

using IndexSelect = Fixture;

TEST_F(IndexSelect, RandomConfigsEveryDTypeAndLayout) {
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 8; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const int r = 1 + rep % 4;
        const Shape xs = random_shape(rng, r, rep == 7 ? 0 : 1, 4);
        const int ax = static_cast<int>(uniform(rng, 0, r - 1));
        const std::int64_t n = xs[ax];
        std::vector<std::int64_t> iv(static_cast<std::size_t>(n == 0 ? 0 : uniform(rng, 0, 6)));
        for (auto& v : iv) v = uniform(rng, -n, n - 1);
        const Tensor x = random_layout(rng, xs, dt, l);
        const Tensor idx = index_vector(iv, rep % 2 ? DType::i64 : DType::i32, rep);
        Shape rs = xs;
        rs[ax] = static_cast<std::int64_t>(iv.size());
        auto ref = [&](const Dims& i) {
          Dims xi = i;
          const std::int64_t v = iv[static_cast<std::size_t>(i[ax])];
          xi[ax] = v < 0 ? v + n : v;
          return value_at(x, xi);
        };
        const std::int64_t axis = rep % 3 == 1 ? ax - r : ax;
        expect_values(index_select(s, x, axis, idx), rs, ref);
        const Tensor out = out_view(rng, rs, dt, rep + 3);
        index_select_into(s, x, axis, idx, out);
        expect_values(out, rs, ref);
      }
}

TEST(IndexSelectThreads, ManyIndicesRunAcrossThreads) {
  std::mt19937_64 rng(7);
  CpuBackendOptions opts;
  opts.num_threads = 2;
  CpuBackend wide(opts);
  wide.with_session([&](Session& ws) {
    const Tensor x = random_tensor(rng, {7, 9}, DType::f64).transpose_view();  // [9, 7]
    std::vector<std::int64_t> iv(100000);
    for (auto& v : iv) v = uniform(rng, -9, 8);
    const Tensor y = index_select(ws, x, 0, index_vector(iv, DType::i32, 2));
    expect_values(y, {100000, 7}, [&](const Dims& i) {
      const std::int64_t v = iv[static_cast<std::size_t>(i[0])];
      return value_at(x, {v < 0 ? v + 9 : v, i[1]});
    });
  });
}

TEST_F(IndexSelect, BadArgumentsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::f32);
  const Tensor idx = index_vector({0, -1}, DType::i32, 0);
  const Tensor out = random_tensor(rng, {4, 2}, DType::f32);
  const auto snap = snapshot(out);
  const char* op = "index_select";
  auto into = [&](std::int64_t axis, const Tensor& i, const Tensor& o) { return [=, this] { index_select_into(s, x, axis, i, o); }; };
  const std::string msg = expect_error<IndexError>(into(1, index_vector({0, 3}, DType::i64, 1), out), op);
  EXPECT_THAT(msg, ::testing::HasSubstr("indices[1] = 3"));
  expect_error<IndexError>(into(1, index_vector({-4, 0}, DType::i64, 0), out), op);
  expect_error<DTypeError>(into(1, Tensor::zeros({2}, DType::f32), out), op);
  expect_error<RankError>(into(1, Tensor::zeros({2, 1}, DType::i32), out), op);
  expect_error<RankError>(into(1, Tensor::zeros({}, DType::i32), out), op);
  expect_error<AxisError>(into(2, idx, out), op);
  expect_error<ShapeError>(into(0, idx, out), op);  // result [2, 3]
  expect_error<DTypeError>(into(1, idx, Tensor::zeros({4, 2}, DType::f64)), op);
  expect_error<ArgumentError>(into(1, idx, x.slice_view(1, 0, 2)), op);
  expect_error<ArgumentError>(into(1, idx, Tensor::zeros({1, 2}, DType::f32).broadcast_view({4, 2})), op);
  expect_error<ArgumentError>(into(1, Tensor(), out), op);
  expect_untouched(out, snap);
  expect_error<AxisError>([&] { (void)index_select(s, Tensor::scalar(1.0), 0, idx); }, op);
  EXPECT_EQ(index_select(s, random_tensor(rng, {0, 3}, DType::f32), 1, index_vector({2, 0}, DType::i64, 0)).shape(), Shape({0, 2}));
  expect_error<IndexError>([&] { (void)index_select(s, random_tensor(rng, {0, 3}, DType::f32), 0, index_vector({0}, DType::i64, 0)); }, op);
}

// ---------------------------------------------------------------- session

TEST(IndexingSession, ClosedSessionIsCheckedFirst) {
  CpuBackend backend;
  HeldSession h = backend.open_session();
  h.close();
  const Tensor u;  // undefined: the session error must come before argument checks
  auto expect_poisoned = [](auto f) {
    try {
      f();
      ADD_FAILURE() << "nothing thrown";
    } catch (const SessionEntryError& e) {
      EXPECT_EQ(e.kind(), SessionEntryKind::Poisoned);
    }
  };
  expect_poisoned([&] { (void)slice(h, u, {}, {}); });
  expect_poisoned([&] { slice_into(h, u, {}, {}, {}, u); });
  expect_poisoned([&] { (void)dynamic_slice(h, u, u, {}); });
  expect_poisoned([&] { dynamic_slice_into(h, u, u, {}, u); });
  expect_poisoned([&] { (void)dynamic_update_slice(h, u, u, u); });
  expect_poisoned([&] { dynamic_update_slice_into(h, u, u, u, u); });
  expect_poisoned([&] { dynamic_update_slice_inplace(h, u, u, u); });
  expect_poisoned([&] { (void)take_along_axis(h, u, u, 0); });
  expect_poisoned([&] { take_along_axis_into(h, u, u, 0, u); });
  expect_poisoned([&] { (void)index_select(h, u, 0, u); });
  expect_poisoned([&] { index_select_into(h, u, 0, u, u); });
}

}  // namespace
}  // namespace tenferro::indexing_test
