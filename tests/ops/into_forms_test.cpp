// The `_into` forms of vdot, norm_squared, to_contiguous and reshape: results equal the
// allocating forms bit for bit on strided output views (a rank-0 element inside a larger
// buffer for the BLAS-1 scalars; compact, transposed, negative-stride and every-other-
// element views for the copies), and every bad output is refused with the output and
// the inputs untouched.
#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::testing {
namespace {

const Shape kShapes[] = {{3, 4, 5}, {7}, {}, {0, 3}, {33, 9}};

/// A compact copy (for byte comparisons of views).
Tensor compact(Session& s, const Tensor& t) {
  Tensor c = Tensor::empty(t.shape().span(), t.dtype());
  copy_into(s, t, c);
  return c;
}

/// Element `k` of a [5] buffer of 7s, as a rank-0 view.
Tensor scalar_slot(DType d, std::int64_t k, Tensor& store) {
  store = Tensor::full({5}, 7, d);
  return store.as_strided_view(Dims{}, Dims{}, k);
}

/// Expects E from f() with `t`'s storage unchanged.
template <class E, class F> void expect_refused(F&& f, const std::string& op, std::initializer_list<const Tensor*> untouched) {
  std::vector<std::vector<unsigned char>> before;
  for (const Tensor* t : untouched) before.push_back(t->defined() ? snapshot(*t) : std::vector<unsigned char>{});
  expect_error<E>(f, op);
  std::size_t i = 0;
  for (const Tensor* t : untouched) {
    if (t->defined()) expect_untouched(*t, before[i]);
    ++i;
  }
}

TEST(VdotInto, MatchesVdotIntoARankZeroSlot) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(41);
  for (DType da : kNumericDTypes)
    for (DType db : kNumericDTypes)
      for (Layout l : kAllLayouts)
        for (const Shape& shape : kShapes) {
          SCOPED_TRACE(std::string(dtype_name(da)) + " " + std::string(dtype_name(db)) + " " + layout_name(l) + " " + shape.to_string());
          const Tensor a = random_layout(rng, shape, da, l), b = random_layout(rng, shape, db, Layout::contiguous);
          const Tensor want = vdot(s, a, b);
          Tensor store;
          const Tensor out = scalar_slot(want.dtype(), 3, store);
          const Tensor sevens = Tensor::full({5}, 7, want.dtype());
          vdot_into(s, a, b, out);
          EXPECT_EQ(bytes_of(compact(s, out)), bytes_of(want));
          for (std::int64_t k : {0, 1, 2, 4}) EXPECT_EQ(value_at(store, Dims{k}), value_at(sevens, Dims{k}));
        }
}

TEST(VdotInto, BadOutputsAreRefused) {
  CpuBackend backend;
  auto s = backend.open_session();
  const Tensor a = Tensor::ones({3, 2}, DType::f64), b = Tensor::ones({3, 2}, DType::c128);
  Tensor store;
  const Tensor wrong_dtype = scalar_slot(DType::f64, 0, store);  // promoted dtype is c128
  expect_refused<DTypeError>([&] { vdot_into(s, a, b, wrong_dtype); }, "vdot", {&store});
  const Tensor rank1 = Tensor::full({1}, 7, DType::c128);
  expect_refused<ShapeError>([&] { vdot_into(s, a, b, rank1); }, "vdot", {&rank1});
  expect_refused<ArgumentError>([&] { vdot_into(s, a, b, Tensor()); }, "vdot", {});
  // out inside an input's storage.
  Tensor aa = Tensor::ones({3, 2}, DType::f64);
  const Tensor in_a = aa.as_strided_view(Dims{}, Dims{}, 4);
  expect_refused<ArgumentError>([&] { vdot_into(s, aa, aa, in_a); }, "vdot", {&aa});
  // Input errors come first: a shape mismatch with a bad out reports the shape.
  expect_refused<ShapeError>([&] { vdot_into(s, a, Tensor::ones({2, 3}, DType::c128), wrong_dtype); }, "vdot", {&store});
}

TEST(NormSquaredInto, MatchesNormSquaredIntoARankZeroSlot) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(42);
  for (DType d : kNumericDTypes)
    for (Layout l : kAllLayouts)
      for (const Shape& shape : kShapes) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + layout_name(l) + " " + shape.to_string());
        const Tensor x = random_layout(rng, shape, d, l);
        const Tensor want = norm_squared(s, x);
        Tensor store;
        const Tensor out = scalar_slot(want.dtype(), 1, store);
        norm_squared_into(s, x, out);
        EXPECT_EQ(bytes_of(compact(s, out)), bytes_of(want));
        for (std::int64_t k : {0, 2, 3, 4}) EXPECT_EQ(value_at(store, Dims{k}).real(), 7.0);
      }
}

TEST(NormSquaredInto, BadOutputsAreRefused) {
  CpuBackend backend;
  auto s = backend.open_session();
  const Tensor x = Tensor::ones({4}, DType::c64);
  Tensor store;
  const Tensor wrong = scalar_slot(DType::c64, 0, store);  // result is f32
  expect_refused<DTypeError>([&] { norm_squared_into(s, x, wrong); }, "norm_squared", {&store});
  const Tensor i_out = scalar_slot(DType::i64, 0, store);  // integer input gives f64, not i64
  expect_refused<DTypeError>([&] { norm_squared_into(s, Tensor::ones({4}, DType::i64), i_out); }, "norm_squared", {&store});
  const Tensor rank1 = Tensor::full({1}, 7, DType::f32);
  expect_refused<ShapeError>([&] { norm_squared_into(s, x, rank1); }, "norm_squared", {&rank1});
  expect_refused<ArgumentError>([&] { norm_squared_into(s, x, Tensor()); }, "norm_squared", {});
  Tensor xr = Tensor::full({4}, 2, DType::f64);
  const Tensor inside = xr.as_strided_view(Dims{}, Dims{}, 2);
  expect_refused<ArgumentError>([&] { norm_squared_into(s, xr, inside); }, "norm_squared", {&xr});
  expect_refused<DTypeError>([&] { norm_squared_into(s, Tensor::ones({2}, DType::b8), Tensor::full({}, 7, DType::f64)); }, "norm_squared",
                             {});
}

TEST(ToContiguousInto, CopiesEveryLayoutIntoEveryWritableView) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(43);
  for (DType d : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (const Shape& shape : kShapes)
        for (int variant = 0; variant < 4; ++variant) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + layout_name(l) + " " + shape.to_string() + " out " + std::to_string(variant));
          const Tensor x = random_layout(rng, shape, d, l);
          const Tensor want = compact(s, to_contiguous(s, x));
          const Tensor out = out_view(rng, shape, d, variant);
          to_contiguous_into(s, x, out);
          EXPECT_EQ(bytes_of(compact(s, out)), bytes_of(want));
        }
}

TEST(ToContiguousInto, BadOutputsAreRefused) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(44);
  const Tensor x = random_tensor(rng, {3, 4}, DType::f64);
  const Tensor f32 = Tensor::full({3, 4}, 7, DType::f32);
  expect_refused<DTypeError>([&] { to_contiguous_into(s, x, f32); }, "to_contiguous", {&f32, &x});
  const Tensor wrong = Tensor::full({4, 3}, 7, DType::f64);
  expect_refused<ShapeError>([&] { to_contiguous_into(s, x, wrong); }, "to_contiguous", {&wrong, &x});
  const Tensor row = Tensor::full({1, 4}, 7, DType::f64);
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, x, row.broadcast_view({3, 4})); }, "to_contiguous", {&row, &x});
  const Tensor flat = Tensor::full({6}, 7, DType::f64);
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, x, flat.as_strided_view(Dims{3, 4}, Dims{1, 1}, 0)); }, "to_contiguous",
                                {&flat, &x});
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, x, Tensor()); }, "to_contiguous", {&x});
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, Tensor(), wrong); }, "to_contiguous", {&wrong});
  // Overlap with the source, exact (out = x) or partial (shifted by one column), is refused.
  Tensor big = random_tensor(rng, {3, 5}, DType::f64);
  const Tensor src = big.slice_view(1, 0, 4), shifted = big.slice_view(1, 1, 5);
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, src, src); }, "to_contiguous", {&big});
  expect_refused<ArgumentError>([&] { to_contiguous_into(s, src, shifted); }, "to_contiguous", {&big});
}

TEST(ReshapeInto, MatchesReshapeOnEveryLayoutAndOutputView) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(45);
  struct Target {
    Shape from;
    Dims to;
  };
  // [3, 4, 5] → [12, 5], [3, 20], [60], [5, -1]; [4, 6] → [6, 4]; [7] → [7, 1]; [] → [1, 1];
  // [0, 3] → [3, 0]. Over the layouts this takes each path of reshape_into: x viewed in
  // the target shape (contiguous x), out viewed in x's shape ([60] from a transposed x),
  // and neither ([6, 4] from a transposed x into a transposed out: a compact copy first).
  const Target targets[] = {{{3, 4, 5}, {12, 5}}, {{3, 4, 5}, {3, 20}}, {{3, 4, 5}, {60}}, {{3, 4, 5}, {5, -1}}, {{4, 6}, {6, 4}},
                            {{7}, {7, 1}},        {{}, {1, 1}},         {{0, 3}, {3, 0}}};
  for (DType d : {DType::f64, DType::c64, DType::i32, DType::b8})
    for (Layout l : kAllLayouts)
      for (const Target& t : targets)
        for (int variant = 0; variant < 4; ++variant) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " " + layout_name(l) + " " + t.from.to_string() + " -> " + t.to.to_string() + " out " +
                       std::to_string(variant));
          const Tensor x = random_layout(rng, t.from, d, l);
          const Tensor want = compact(s, reshape(s, x, t.to.span()));
          const Tensor out = out_view(rng, want.shape(), d, variant);
          reshape_into(s, x, t.to.span(), out);
          EXPECT_EQ(bytes_of(compact(s, out)), bytes_of(want));
        }
}

TEST(ReshapeInto, BadShapesAndOutputsAreRefused) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(46);
  const Tensor x = random_tensor(rng, {3, 4}, DType::f64);
  const Tensor out = Tensor::full({6, 2}, 7, DType::f64);
  expect_refused<ShapeError>([&] { reshape_into(s, x, {5, 2}, out); }, "reshape", {&out, &x});    // 10 elements, not 12
  expect_refused<ShapeError>([&] { reshape_into(s, x, {2, 6}, out); }, "reshape", {&out, &x});    // out is not [2, 6]
  expect_refused<ShapeError>([&] { reshape_into(s, x, {-1, 6}, out); }, "reshape", {&out, &x});   // resolves to [2, 6]
  const Tensor f32 = Tensor::full({6, 2}, 7, DType::f32);
  expect_refused<DTypeError>([&] { reshape_into(s, x, {6, 2}, f32); }, "reshape", {&f32, &x});
  expect_refused<ArgumentError>([&] { reshape_into(s, x, {6, 2}, Tensor()); }, "reshape", {&x});
  const Tensor col = Tensor::full({6, 1}, 7, DType::f64);
  expect_refused<ArgumentError>([&] { reshape_into(s, x, {6, 2}, col.broadcast_view({6, 2})); }, "reshape", {&col, &x});
  Tensor xx = random_tensor(rng, {3, 4}, DType::f64);
  expect_refused<ArgumentError>([&] { reshape_into(s, xx, {6, 2}, xx.reshape_view({6, 2})); }, "reshape", {&xx});
  reshape_into(s, x, {-1, 2}, out);  // -1 inferred: fine
  EXPECT_EQ(bytes_of(out), bytes_of(x));
}

TEST(IntoForms, NoHeapAllocationInHeldSession) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(47);
  const Tensor a = random_layout(rng, {6, 5}, DType::f64, Layout::transposed), b = random_tensor(rng, {6, 5}, DType::f64);
  const Tensor r0 = Tensor::zeros({}, DType::f64);
  const Tensor out = Tensor::zeros({5, 6}, DType::f64).transpose_view();
  const Tensor flat = Tensor::zeros({30}, DType::f64), wide = Tensor::zeros({3, 10}, DType::f64).transpose_view();
  EXPECT_NO_ALLOCATION(vdot_into(s, a, b, r0));
  EXPECT_NO_ALLOCATION(norm_squared_into(s, a, r0));
  EXPECT_NO_ALLOCATION(to_contiguous_into(s, a, out));
  EXPECT_NO_ALLOCATION(reshape_into(s, b, {30}, flat));   // b viewed as [30]
  EXPECT_NO_ALLOCATION(reshape_into(s, a, {30}, flat));   // flat viewed as [6, 5]
  EXPECT_NO_ALLOCATION(reshape_into(s, a, {10, 3}, wide));  // neither: pooled compact copy of a
}

}  // namespace
}  // namespace tenferro::testing
