// gather and scatter against reference loops transcribed from the StableHLO spec
// (sections "gather" and "scatter"): random valid configurations (batching dims, any
// index_vector_dim including the implicit trailing one, random placement of batch and
// window axes), out-of-range starts (gather clamps; scatter skips the whole window),
// every combiner over its dtypes, every layout of operand / indices / updates, strided
// outputs, the in-place forms; the spec's own examples (row-major data, axis semantics
// unchanged); every malformed configuration with its exact error type and the output
// untouched; zero extents.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::gather_scatter_test {
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
using testing::strided;
using testing::uniform;
using testing::value_at;
using cd = std::complex<double>;
using C = ScatterCombiner;

/// k distinct values of [0, n), sorted.
Dims sorted_subset(std::mt19937_64& rng, std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<std::size_t>(k));
  std::sort(all.begin(), all.end());
  return Dims(std::span<const std::int64_t>(all));
}

bool has(const Dims& d, std::int64_t v) { return std::find(d.begin(), d.end(), v) != d.end(); }

std::int64_t index_at(const Tensor& t, const Dims& i) { return static_cast<std::int64_t>(value_at(t, i).real()); }

// ---------------------------------------------------------------- random configurations

/// One gather or scatter problem: operand and indices shapes, dimension numbers in
/// gather's names (scatter reuses them: offset_dims = update_window_dims,
/// collapsed = inserted, start_index_map = scatter_dims_to_operand_dims), and the window
/// extent of every operand axis (slice_sizes; 1 on collapsed and batching axes).
struct Config {
  Shape operand, indices;
  GatherDims g;
  Dims window;  // per operand axis
  Shape data;   // result (gather) / updates (scatter) shape
};

Config random_config(std::mt19937_64& rng, bool allow_zero) {
  Config c;
  const int r = static_cast<int>(uniform(rng, 1, 4));
  c.operand = Shape(r, 0);
  for (int d = 0; d < r; ++d) c.operand[d] = uniform(rng, 1, 4);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const int nb = static_cast<int>(uniform(rng, 0, std::min(2, r)));
  const int nc = static_cast<int>(uniform(rng, 0, r - nb));
  for (int i = 0; i < nb; ++i) c.g.operand_batching_dims.push_back(perm[static_cast<std::size_t>(i)]);
  for (int i = nb; i < nb + nc; ++i) c.g.collapsed_slice_dims.push_back(perm[static_cast<std::size_t>(i)]);
  std::sort(c.g.operand_batching_dims.begin(), c.g.operand_batching_dims.end());
  std::sort(c.g.collapsed_slice_dims.begin(), c.g.collapsed_slice_dims.end());
  // start_index_map: any axes but the batching ones, in any order.
  std::vector<std::int64_t> free_axes;
  for (int d = 0; d < r; ++d)
    if (!has(c.g.operand_batching_dims, d)) free_axes.push_back(d);
  std::shuffle(free_axes.begin(), free_axes.end(), rng);
  const auto nidx = uniform(rng, 0, static_cast<std::int64_t>(free_axes.size()));
  for (int k = 0; k < nidx; ++k) c.g.start_index_map.push_back(free_axes[static_cast<std::size_t>(k)]);
  // Indices: batch axes (nb of them batching), plus the index vector axis unless implicit.
  const int batch_rank = static_cast<int>(uniform(rng, nb, nb + 2));
  const bool implicit = nidx == 1 && uniform(rng, 0, 2) == 0;
  const int ir = batch_rank + (implicit ? 0 : 1);
  c.g.index_vector_dim = implicit ? ir : uniform(rng, 0, ir - 1);
  c.indices = Shape(ir, 0);
  std::vector<std::int64_t> batch_axes;
  for (int a = 0; a < ir; ++a)
    if (a != c.g.index_vector_dim) batch_axes.push_back(a);
  std::shuffle(batch_axes.begin(), batch_axes.end(), rng);
  for (int i = 0; i < nb; ++i) {
    const std::int64_t a = batch_axes[static_cast<std::size_t>(i)];
    c.g.start_indices_batching_dims.push_back(a);
    c.indices[static_cast<int>(a)] = c.operand[static_cast<int>(c.g.operand_batching_dims[i])];
  }
  for (int i = nb; i < batch_rank; ++i) c.indices[static_cast<int>(batch_axes[static_cast<std::size_t>(i)])] = uniform(rng, allow_zero ? 0 : 1, 3);
  if (!implicit) c.indices[static_cast<int>(c.g.index_vector_dim)] = nidx;
  // Window extents, and where the window axes sit among the result/updates axes.
  c.window = Dims(r, 1);
  int nw = 0;
  for (int d = 0; d < r; ++d)
    if (!has(c.g.operand_batching_dims, d) && !has(c.g.collapsed_slice_dims, d)) {
      c.window[d] = uniform(rng, allow_zero ? 0 : 1, c.operand[d]);
      ++nw;
    }
  c.g.offset_dims = sorted_subset(rng, batch_rank + nw, nw);
  c.data = Shape(batch_rank + nw, 0);
  int k = 0, w = 0;
  for (int a = 0; a < c.data.size(); ++a) {
    if (has(c.g.offset_dims, a)) {
      while (has(c.g.operand_batching_dims, w) || has(c.g.collapsed_slice_dims, w)) ++w;
      c.data[a] = c.window[w++];
    } else {
      while (k == c.g.index_vector_dim) ++k;
      c.data[a] = c.indices[k++];
    }
  }
  return c;
}

ScatterDims scatter_dims(const Config& c) {
  ScatterDims s;
  s.update_window_dims = c.g.offset_dims;
  s.inserted_window_dims = c.g.collapsed_slice_dims;
  s.scatter_dims_to_operand_dims = c.g.start_index_map;
  s.index_vector_dim = c.g.index_vector_dim;
  s.input_batching_dims = c.g.operand_batching_dims;
  s.scatter_indices_batching_dims = c.g.start_indices_batching_dims;
  return s;
}

/// The spec's index map for one result/updates index `di`: returns the operand index
/// with the start unclamped (`start`, per operand axis) and the rest (batching + window
/// offsets) separately, so gather can clamp and scatter can test bounds.
void spec_index(const Config& c, const Tensor& indices, const Dims& di, Dims& start, Dims& rest) {
  const int r = c.operand.size(), ir = c.indices.size();
  const auto ivd = c.g.index_vector_dim;
  Dims batch_index, offset_index;
  for (int a = 0; a < di.size(); ++a) (has(c.g.offset_dims, a) ? offset_index : batch_index).push_back(di[a]);
  // start_index = indices[bi0, ..., :, ..., biN] (':' at index_vector_dim), or [indices[batch_index]].
  Dims start_index;
  if (ivd < ir) {
    for (std::int64_t k = 0; k < c.indices[static_cast<int>(ivd)]; ++k) {
      Dims ii;
      int b = 0;
      for (int a = 0; a < ir; ++a) ii.push_back(a == ivd ? k : batch_index[b++]);
      start_index.push_back(index_at(indices, ii));
    }
  } else {
    start_index.push_back(index_at(indices, batch_index));
  }
  start = Dims(r, 0);
  rest = Dims(r, 0);
  for (int k = 0; k < c.g.start_index_map.size(); ++k) start[static_cast<int>(c.g.start_index_map[k])] = start_index[k];
  for (int i = 0; i < c.g.operand_batching_dims.size(); ++i) {
    const auto ds = c.g.start_indices_batching_dims[i];
    rest[static_cast<int>(c.g.operand_batching_dims[i])] += batch_index[static_cast<int>(ds - (ds < ivd ? 0 : 1))];
  }
  int o = 0;
  for (int d = 0; d < r; ++d)
    if (!has(c.g.collapsed_slice_dims, d) && !has(c.g.operand_batching_dims, d)) rest[d] += offset_index[o++];
}

/// Index tensor for `c` in `layout` (broadcast: the first axis of extent > 1 stretched
/// from 1), each entry in [-2, extent - window + 2] of the axis it starts: out-of-range
/// starts on both sides.
Tensor random_indices(std::mt19937_64& rng, const Config& c, DType dt, Layout layout) {
  int bax = -1;
  for (int i = 0; layout == Layout::broadcast && i < c.indices.size() && bax < 0; ++i)
    if (c.indices[i] > 1) bax = i;
  Shape fill = c.indices;
  if (bax >= 0) fill[bax] = 1;
  const Tensor t = bax >= 0 ? Tensor::zeros(fill, dt) : random_layout(rng, c.indices, dt, layout == Layout::broadcast ? Layout::contiguous : layout, 0, 0);
  for_each_index(fill, [&](const Dims& i) {
    const std::int64_t k = c.g.index_vector_dim < c.indices.size() ? i[static_cast<int>(c.g.index_vector_dim)] : 0;
    const int d = static_cast<int>(c.g.start_index_map[static_cast<int>(k)]);
    const std::int64_t v = uniform(rng, -2, c.operand[d] - c.window[d] + 2);
    if (dt == DType::i32) t.set<std::int32_t>(i.span(), static_cast<std::int32_t>(v));
    else t.set<std::int64_t>(i.span(), v);
  });
  return bax >= 0 ? t.broadcast_view(c.indices) : t;
}

/// A fresh copy of `t` in a compact, transposed or negative-stride layout.
Tensor relayout(Session& s, const Tensor& t, Layout l) {
  const int r = t.rank();
  if (l == Layout::transposed) {
    Shape rev(r, 0);
    Dims perm(r, 0);
    for (int i = 0; i < r; ++i) rev[i] = t.extent(r - 1 - i), perm[i] = r - 1 - i;
    const Tensor v = Tensor::empty(rev, t.dtype()).permute_view(perm);
    copy_into(s, t, v);
    return v;
  }
  if (l == Layout::negative_stride) {
    Tensor v = Tensor::empty(t.shape(), t.dtype());
    for (int i = 0; i < r; ++i) v = v.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
    copy_into(s, t, v);
    return v;
  }
  const Tensor v = Tensor::empty(t.shape(), t.dtype());
  copy_into(s, t, v);
  return v;
}

std::string trace(DType dt, Layout l, int rep) { return std::string(dtype_name(dt)) + " " + layout_name(l) + " rep " + std::to_string(rep); }

struct Fixture : ::testing::Test {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng{1729};
};

// ---------------------------------------------------------------- gather

using Gather = Fixture;

void check_gather(Session& s, std::mt19937_64& rng, const Config& c, DType dt, Layout l, int rep) {
  const Tensor x = random_layout(rng, c.operand, dt, l);
  const Tensor idx = random_indices(rng, c, rep % 2 ? DType::i32 : DType::i64, kAllLayouts[(rep / 2) % 4]);
  ASSERT_EQ(gather_shape(c.operand, c.indices, c.g, c.window), c.data);
  auto ref = [&](const Dims& di) {
    Dims start, rest;
    spec_index(c, idx, di, start, rest);
    Dims oi(c.operand.size(), 0);
    // full_start_index[d] = clamp(start_index[k], 0, dim(operand, d) - slice_sizes[d]).
    for (int d = 0; d < oi.size(); ++d) oi[d] = std::clamp<std::int64_t>(start[d], 0, c.operand[d] - c.window[d]) + rest[d];
    return value_at(x, oi);
  };
  auto check = [&](const Tensor& t) {
    ASSERT_EQ(t.shape(), c.data);
    int bad = 0;
    for_each_index(c.data, [&](const Dims& i) {
      if (value_at(t, i) != ref(i) && ++bad <= 3) ADD_FAILURE() << "at " << i.to_string();
    });
  };
  check(gather(s, x, idx, c.g, c.window));
  const Tensor out = out_view(rng, c.data, dt, rep);
  gather_into(s, x, idx, c.g, c.window, out);
  check(out);
}

TEST_F(Gather, RandomConfigsEveryDTypeLayoutAndOutput) {
  int clamped_cases = 0, batching_cases = 0, implicit_cases = 0;
  for (DType dt : kAllDTypes)
    for (Layout l : kAllLayouts)
      for (int rep = 0; rep < 12; ++rep) {
        SCOPED_TRACE(trace(dt, l, rep));
        const Config c = random_config(rng, rep % 4 == 3);
        batching_cases += !c.g.operand_batching_dims.empty();
        implicit_cases += c.g.index_vector_dim == c.indices.size();
        clamped_cases += !c.g.start_index_map.empty();
        check_gather(s, rng, c, dt, l, rep);
        if (HasFatalFailure()) return;
      }
  EXPECT_GT(batching_cases, 50);
  EXPECT_GT(implicit_cases, 20);
  EXPECT_GT(clamped_cases, 100);
}

TEST_F(Gather, ClampsOutOfRangeStarts) {
  // NumPy x[idx[b] : idx[b] + 2] with starts clamped into [0, 3].
  const Tensor x = Tensor::arange(5, DType::f64);
  const Tensor idx = Tensor::from_data<std::int32_t>({3}, {7, -3, 2});
  GatherDims g;
  g.offset_dims = {1};
  g.start_index_map = {0};
  g.index_vector_dim = 1;  // == rank(indices): implicit trailing axis
  const Tensor y = gather(s, x, idx, g, {2});
  const double want[3][2] = {{3, 4}, {0, 1}, {2, 3}};
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t w = 0; w < 2; ++w) EXPECT_EQ(y.item<double>({b, w}), want[b][w]);
}

TEST_F(Gather, SpecExampleWithBatchingDims) {
  // StableHLO spec, "gather" example: nested lists are row-major; axes mean the same.
  std::vector<std::int64_t> ov(48);
  std::iota(ov.begin(), ov.end(), 1);
  const Tensor operand = Tensor::from_row_major<std::int64_t>(std::span<const std::int64_t>(Shape{2, 3, 4, 2}), std::span<const std::int64_t>(ov));
  const Tensor idx = Tensor::from_row_major<std::int64_t>({2, 2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0});
  GatherDims g;
  g.offset_dims = {3, 4};
  g.collapsed_slice_dims = {1};
  g.operand_batching_dims = {0};
  g.start_indices_batching_dims = {1};
  g.start_index_map = {2, 1};
  g.index_vector_dim = 3;
  const Tensor want = Tensor::from_row_major<std::int64_t>(
      {2, 2, 3, 2, 2}, {1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16, 33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
                        1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24, 43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30});
  for (Layout l : {Layout::contiguous, Layout::transposed, Layout::negative_stride}) {
    SCOPED_TRACE(layout_name(l));
    const Tensor y = gather(s, relayout(s, operand, l), relayout(s, idx, l), g, {1, 1, 2, 2});
    ASSERT_EQ(y.shape(), want.shape());
    for_each_index(want.shape(), [&](const Dims& i) { EXPECT_EQ(value_at(y, i), value_at(want, i)) << i.to_string(); });
  }
}

TEST_F(Gather, ZeroExtents) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::c128);
  GatherDims g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  EXPECT_EQ(gather(s, x, Tensor::zeros({0}, DType::i64), g, {1, 3}).shape(), Shape({0, 3}));  // empty batch
  EXPECT_EQ(gather(s, x, Tensor::zeros({2}, DType::i64), g, {1, 0}).shape(), Shape({2, 0}));  // empty window
  // A size-0 slice on a collapsed axis is legal only for an empty result.
  const Tensor e = Tensor::zeros({0, 3}, DType::f64);
  EXPECT_EQ(gather(s, e, Tensor::zeros({0}, DType::i32), g, {0, 3}).shape(), Shape({0, 3}));
  expect_error<ShapeError>([&] { (void)gather(s, x, Tensor::zeros({2}, DType::i32), g, {0, 3}); }, "gather");
  // No index vector entries: every batch position reads the window at the origin.
  GatherDims g0;
  g0.offset_dims = {0, 1};
  g0.index_vector_dim = 0;
  const Tensor y = gather(s, x, Tensor::zeros({0, 3}, DType::i64), g0, {2, 2});
  EXPECT_EQ(y.shape(), Shape({2, 2, 3}));
  for_each_index(y.shape(), [&](const Dims& i) { EXPECT_EQ(value_at(y, i), value_at(x, {i[0], i[1]})); });
}

TEST(GatherThreads, LargeBatchMatchesReferenceOnTwoThreads) {
  std::mt19937_64 rng(3);
  CpuBackendOptions opts;
  opts.num_threads = 2;
  CpuBackend wide(opts);
  wide.with_session([&](Session& ws) {
    const Tensor x = random_tensor(rng, {6, 50}, DType::f32).transpose_view();  // [50, 6]
    const Tensor idx = random_tensor(rng, {1, 60000}, DType::i64, -5, 54);
    GatherDims g;
    g.offset_dims = {0};
    g.collapsed_slice_dims = {0};
    g.start_index_map = {0};
    g.index_vector_dim = 0;
    const Tensor y = gather(ws, x, idx, g, {1, 6});  // rows of x: result [6, 60000]
    ASSERT_EQ(y.shape(), Shape({6, 60000}));
    int bad = 0;
    for_each_index(y.shape(), [&](const Dims& i) {
      const std::int64_t row = std::clamp<std::int64_t>(idx.item<std::int64_t>({0, i[1]}), 0, 49);
      bad += y.item<float>(i.span()) != x.item<float>({row, i[0]});
    });
    EXPECT_EQ(bad, 0);
  });
}

// ---------------------------------------------------------------- scatter

template <class T> T combine_ref(C c, T a, T u) {
  if (c == C::replace) return u;
  if constexpr (std::is_same_v<T, bool>) {
    return c == C::max ? (a || u) : (a && u);
  } else if constexpr (is_complex_v<T>) {
    return c == C::add ? a + u : a * u;
  } else {
    if (c == C::add || c == C::mul) {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(c == C::add ? static_cast<U>(static_cast<U>(a) + static_cast<U>(u)) : static_cast<U>(static_cast<U>(a) * static_cast<U>(u)));
      } else {
        return c == C::add ? a + u : a * u;
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
      if (std::isnan(u)) return u;
    }
    return c == C::max ? std::max(a, u) : std::min(a, u);
  }
}

/// Spec "scatter", one window at a time in column-major order of the scatter positions;
/// a window with any index out of bounds is skipped (XLA). Returns the expected result.
template <class T> Tensor scatter_ref(const Config& c, const Tensor& operand, const Tensor& indices, const Tensor& updates, C comb) {
  const Tensor res = Tensor::empty(c.operand, dtype_of<T>);
  for_each_index(c.operand, [&](const Dims& i) { res.set<T>(i.span(), operand.item<T>(i.span())); });
  Shape batch, win;
  for (int a = 0; a < c.data.size(); ++a) (has(c.g.offset_dims, a) ? win : batch).push_back(c.data[a]);
  auto update_index = [&](const Dims& b, const Dims& w) {
    Dims di;
    int bi = 0, wi = 0;
    for (int a = 0; a < c.data.size(); ++a) di.push_back(has(c.g.offset_dims, a) ? w[wi++] : b[bi++]);
    return di;
  };
  for_each_index(batch, [&](const Dims& b) {
    bool fits = true;
    for_each_index(win, [&](const Dims& w) {
      Dims start, rest;
      spec_index(c, indices, update_index(b, w), start, rest);
      for (int d = 0; d < c.operand.size(); ++d) fits &= start[d] + rest[d] >= 0 && start[d] + rest[d] < c.operand[d];
    });
    if (!fits) return;
    for_each_index(win, [&](const Dims& w) {
      const Dims di = update_index(b, w);
      Dims start, rest;
      spec_index(c, indices, di, start, rest);
      Dims ri(c.operand.size(), 0);
      for (int d = 0; d < ri.size(); ++d) ri[d] = start[d] + rest[d];
      res.set<T>(ri.span(), combine_ref<T>(comb, res.item<T>(ri.span()), updates.item<T>(di.span())));
    });
  });
  return res;
}

bool accepts(C c, DType d) {
  switch (c) {
    case C::replace: return true;
    case C::add:
    case C::mul: return !is_bool(d);
    default: return !is_complex(d);
  }
}

void expect_same(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  int bad = 0;
  for_each_index(want.shape(), [&](const Dims& i) {
    if (value_at(got, i) != value_at(want, i) && ++bad <= 3)
      ADD_FAILURE() << "at " << i.to_string() << ": got " << value_at(got, i) << ", want " << value_at(want, i);
  });
}

using Scatter = Fixture;

TEST_F(Scatter, RandomConfigsEveryCombinerDTypeLayoutAndForm) {
  int cases = 0;
  for (C comb : {C::replace, C::add, C::mul, C::min, C::max})
    for (DType dt : kAllDTypes) {
      if (!accepts(comb, dt)) continue;
      for (Layout l : kAllLayouts)
        for (int rep = 0; rep < 6; ++rep) {
          SCOPED_TRACE(trace(dt, l, rep) + " combiner " + std::to_string(static_cast<int>(comb)));
          const Config c = random_config(rng, rep == 5);
          const ScatterDims sd = scatter_dims(c);
          const Tensor x = random_layout(rng, c.operand, dt, l);
          const Tensor idx = random_indices(rng, c, rep % 2 ? DType::i64 : DType::i32, kAllLayouts[(rep + 1) % 4]);
          const Tensor upd = random_layout(rng, c.data, dt, kAllLayouts[(rep + 2) % 4]);
          visit_dtype("test", dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            expect_same(scatter(s, x, idx, upd, sd, comb), scatter_ref<T>(c, x, idx, upd, comb));
            const Tensor out = out_view(rng, c.operand, dt, rep);
            scatter_into(s, x, idx, upd, sd, comb, out);
            expect_same(out, scatter_ref<T>(c, x, idx, upd, comb));
            // In place on a writable strided operand (scatter_inplace, or _into with out == operand).
            const Tensor w = out_view(rng, c.operand, dt, rep + 1);
            const Tensor want = scatter_ref<T>(c, w, idx, upd, comb);
            if (rep % 2) scatter_inplace(s, w, idx, upd, sd, comb);
            else scatter_into(s, w, idx, upd, sd, comb, w);
            expect_same(w, want);
          });
          ++cases;
        }
    }
  EXPECT_EQ(cases, (7 + 6 + 6 + 5 + 5) * 4 * 6);
}

TEST_F(Scatter, OutOfRangeWindowsAreSkippedWhole) {
  // Operand [6], windows of 2 at starts 4 (fits), 5 (half out), -1 (half out), 0 (fits).
  const Tensor x = Tensor::zeros({6}, DType::i64);
  const Tensor idx = Tensor::from_data<std::int64_t>({1, 4}, {4, 5, -1, 0});
  const Tensor upd = Tensor::from_data<std::int64_t>({2, 4}, {1, 2, 10, 20, 100, 200, 1000, 2000});
  ScatterDims d;
  d.update_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 0;
  const Tensor y = scatter(s, x, idx, upd, d, C::add);
  const std::int64_t want[6] = {1000, 2000, 0, 0, 1, 2};
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(y.item<std::int64_t>({i}), want[i]) << i;
}

TEST_F(Scatter, ReplaceWithDuplicatesLastWindowWins) {
  const Tensor x = Tensor::zeros({5}, DType::f64);
  ScatterDims d;
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;  // implicit: indices [4] are four one-entry index vectors
  const Tensor y = scatter(s, x, Tensor::from_data<std::int32_t>({4}, {1, 3, 1, 1}), Tensor::from_data<double>({4}, {1, 2, 3, 4}), d, C::replace);
  EXPECT_EQ(y.item<double>({1}), 4.0);
  EXPECT_EQ(y.item<double>({3}), 2.0);
  // Overlapping windows [0, 1] and [1, 2]: the later window owns element 1.
  ScatterDims w;
  w.update_window_dims = {0};
  w.scatter_dims_to_operand_dims = {0};
  w.index_vector_dim = 0;
  const Tensor z = scatter(s, x, Tensor::from_data<std::int64_t>({1, 2}, {0, 1}), Tensor::from_data<double>({2, 2}, {1, 2, 3, 4}), w, C::replace);
  EXPECT_EQ(z.item<double>({0}), 1.0);
  EXPECT_EQ(z.item<double>({1}), 3.0);
  EXPECT_EQ(z.item<double>({2}), 4.0);
  // Combiner details: max propagates NaN; integer add wraps.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor m = scatter(s, x, Tensor::from_data<std::int32_t>({2}, {2, 2}), Tensor::from_data<double>({2}, {nan, 7}), d, C::max);
  EXPECT_TRUE(std::isnan(m.item<double>({2})));
  const Tensor big = Tensor::full({2}, std::numeric_limits<std::int32_t>::max(), DType::i32);
  const Tensor wrap = scatter(s, big, Tensor::from_data<std::int32_t>({1}, {0}), Tensor::from_data<std::int32_t>({1}, {1}), d, C::add);
  EXPECT_EQ(wrap.item<std::int32_t>({0}), std::numeric_limits<std::int32_t>::min());
}

TEST_F(Scatter, SpecExampleWithBatchingDims) {
  std::vector<std::int64_t> ov(48);
  std::iota(ov.begin(), ov.end(), 1);
  const Tensor input = Tensor::from_row_major<std::int64_t>(std::span<const std::int64_t>(Shape{2, 3, 4, 2}), std::span<const std::int64_t>(ov));
  const Tensor idx = Tensor::from_row_major<std::int64_t>({2, 2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0});
  const Tensor upd = Tensor::ones({2, 2, 3, 2, 2}, DType::i64);
  ScatterDims d;
  d.update_window_dims = {3, 4};
  d.inserted_window_dims = {1};
  d.input_batching_dims = {0};
  d.scatter_indices_batching_dims = {1};
  d.scatter_dims_to_operand_dims = {2, 1};
  d.index_vector_dim = 3;
  const Tensor want = Tensor::from_row_major<std::int64_t>(
      {2, 3, 4, 2}, {3, 4, 6, 7, 6, 7, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 17, 18, 19, 20, 22, 23, 24, 25,
                     25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39, 38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48});
  for (Layout l : {Layout::contiguous, Layout::transposed, Layout::negative_stride}) {
    SCOPED_TRACE(layout_name(l));
    expect_same(scatter(s, relayout(s, input, l), relayout(s, idx, l), relayout(s, upd, l), d, C::add), want);
    const Tensor w = relayout(s, input, l);
    scatter_inplace(s, w, idx, upd, d, C::add);
    expect_same(w, want);
  }
}

TEST_F(Scatter, ZeroExtents) {
  const Tensor x = random_tensor(rng, {4, 3}, DType::f64);
  ScatterDims d;
  d.update_window_dims = {1};
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  expect_same(scatter(s, x, Tensor::zeros({0}, DType::i64), Tensor::zeros({0, 3}, DType::f64), d, C::add), x);  // no windows
  expect_same(scatter(s, x, Tensor::zeros({2}, DType::i64), Tensor::zeros({2, 0}, DType::f64), d, C::replace), x);  // empty windows
  // An inserted axis of extent 0: no window fits anywhere.
  const Tensor e = Tensor::zeros({0, 3}, DType::f64);
  EXPECT_EQ(scatter(s, e, Tensor::zeros({2}, DType::i64), Tensor::ones({2, 3}, DType::f64), d, C::add).shape(), Shape({0, 3}));
}

// ---------------------------------------------------------------- malformed configurations

/// A valid gather: operand [5, 4, 3], indices [2, 6] (index vectors along axis 0),
/// result [2, 6, 3]; and one with batching dims: operand [3, 5, 4], indices [2, 3].
GatherDims base_gather() {
  GatherDims g;
  g.offset_dims = {0, 2};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0, 2};
  g.index_vector_dim = 0;
  return g;
}
GatherDims base_batched() {
  GatherDims g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {1};
  g.operand_batching_dims = {0};
  g.start_indices_batching_dims = {1};
  g.start_index_map = {1, 2};
  g.index_vector_dim = 0;
  return g;
}

TEST_F(Gather, MalformedConfigurationsThrowAndLeaveOutputUntouched) {
  const Tensor x = random_tensor(rng, {5, 4, 3}, DType::f64);
  const Tensor idx = random_tensor(rng, {2, 6}, DType::i64, 0, 2);
  const Tensor out = random_tensor(rng, {2, 6, 3}, DType::f64);
  const Dims ss{1, 2, 3};
  ASSERT_EQ(gather_shape(x.shape(), idx.shape(), base_gather(), ss), Shape({2, 6, 3}));
  const auto snap = snapshot(out);
  auto mutate = [&](auto f) {
    GatherDims g = base_gather();
    f(g);
    return g;
  };
  auto into = [&](const GatherDims& g, Dims sizes) { return [=, this] { gather_into(s, x, idx, g, sizes, out); }; };
  auto shape_only = [&](const GatherDims& g, Dims sizes) { return [=] { (void)gather_shape(x.shape(), idx.shape(), g, sizes); }; };
  struct Bad {
    GatherDims g;
    Dims sizes;
    int kind;  // 0 AxisError, 1 ArgumentError, 2 RankError, 3 ShapeError
    const char* field;
  };
  const Bad cases[] = {
      {mutate([](GatherDims& g) { g.index_vector_dim = 3; }), ss, 0, "index_vector_dim"},
      {mutate([](GatherDims& g) { g.index_vector_dim = -1; }), ss, 0, "index_vector_dim"},
      {mutate([](GatherDims& g) { g.offset_dims = {2, 0}; }), ss, 1, "offset_dims"},
      {mutate([](GatherDims& g) { g.offset_dims = {0, 0}; }), ss, 0, "offset_dims"},
      {mutate([](GatherDims& g) { g.offset_dims = {0, 3}; }), ss, 0, "offset_dims"},
      {base_gather(), {2, 2, 3}, 3, "slice_sizes[0] = 2"},
      {mutate([](GatherDims& g) { g.start_index_map = {0}; }), ss, 3, "start_index_map"},
      {mutate([](GatherDims& g) { g.start_index_map = {0, 0}; }), ss, 0, "start_index_map"},
      {mutate([](GatherDims& g) { g.start_index_map = {0, 3}; }), ss, 0, "start_index_map"},
      {base_gather(), {1, 5, 3}, 3, "slice_sizes[1] = 5"},
      {base_gather(), {1, -1, 3}, 3, "slice_sizes[1] = -1"},
      {base_gather(), {1, 2}, 2, "slice_sizes"},
      {mutate([](GatherDims& g) { g.collapsed_slice_dims = {0, 1}; }), ss, 2, "collapsed_slice_dims"},
      {mutate([](GatherDims& g) { g.collapsed_slice_dims = {}; }), ss, 2, "collapsed_slice_dims"},
      {mutate([](GatherDims& g) { g.collapsed_slice_dims = {3}; }), ss, 0, "collapsed_slice_dims"},
      {mutate([](GatherDims& g) { g.offset_dims = {0}, g.collapsed_slice_dims = {1, 0}; }), {1, 1, 3}, 1, "collapsed_slice_dims"},
      {mutate([](GatherDims& g) { g.offset_dims = {0}, g.collapsed_slice_dims = {0, 0}; }), {1, 1, 3}, 0, "collapsed_slice_dims"},
      {mutate([](GatherDims& g) { g.operand_batching_dims = {1}, g.offset_dims = {0}; }), {1, 1, 3}, 1, "operand_batching_dims"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.field);
    std::string msg;
    switch (b.kind) {
      case 0: msg = expect_error<AxisError>(into(b.g, b.sizes), "gather"), expect_error<AxisError>(shape_only(b.g, b.sizes), "gather"); break;
      case 1: msg = expect_error<ArgumentError>(into(b.g, b.sizes), "gather"), expect_error<ArgumentError>(shape_only(b.g, b.sizes), "gather"); break;
      case 2: msg = expect_error<RankError>(into(b.g, b.sizes), "gather"), expect_error<RankError>(shape_only(b.g, b.sizes), "gather"); break;
      default: msg = expect_error<ShapeError>(into(b.g, b.sizes), "gather"), expect_error<ShapeError>(shape_only(b.g, b.sizes), "gather"); break;
    }
    EXPECT_THAT(msg, ::testing::HasSubstr(b.field));
  }
  // Batching dims: operand [3, 5, 4], indices [2, 3] (index vectors on axis 0, batch on axis 1).
  const Tensor xb = random_tensor(rng, {3, 5, 4}, DType::f64);
  const Tensor ib = random_tensor(rng, {2, 3}, DType::i32, 0, 2);
  const Dims sb{1, 1, 2};
  ASSERT_EQ(gather_shape(xb.shape(), ib.shape(), base_batched(), sb), Shape({3, 2}));
  auto bmut = [&](auto f) {
    GatherDims g = base_batched();
    f(g);
    return g;
  };
  auto binto = [&](const GatherDims& g, Dims sizes) { return [=, this] { gather_into(s, xb, ib, g, sizes, out); }; };
  expect_error<AxisError>(binto(bmut([](GatherDims& g) { g.start_indices_batching_dims = {0}; }), sb), "gather");  // = index_vector_dim
  expect_error<AxisError>(binto(bmut([](GatherDims& g) { g.start_indices_batching_dims = {2}; }), sb), "gather");
  expect_error<ArgumentError>(binto(bmut([](GatherDims& g) { g.start_indices_batching_dims = {}; }), sb), "gather");
  expect_error<AxisError>(binto(bmut([](GatherDims& g) { g.collapsed_slice_dims = {0}; }), sb), "gather");  // collapsed ∩ batching
  expect_error<AxisError>(binto(bmut([](GatherDims& g) { g.start_index_map = {0, 2}; }), sb), "gather");   // start map ∩ batching
  expect_error<ShapeError>(binto(base_batched(), {2, 1, 2}), "gather");                                      // batching slice size > 1
  expect_error<ShapeError>([&] { gather_into(s, random_tensor(rng, {4, 5, 4}, DType::f64), ib, base_batched(), sb, out); }, "gather");
  // Bad tensors and outputs.
  const GatherDims g = base_gather();
  expect_error<DTypeError>([&] { gather_into(s, x, Tensor::zeros({2, 6}, DType::f64), g, ss, out); }, "gather");
  expect_error<DTypeError>([&] { gather_into(s, x, Tensor::zeros({2, 6}, DType::b8), g, ss, out); }, "gather");
  expect_error<ArgumentError>([&] { gather_into(s, Tensor(), idx, g, ss, out); }, "gather");
  expect_error<ShapeError>([&] { gather_into(s, x, idx, g, ss, random_tensor(rng, {6, 2, 3}, DType::f64)); }, "gather");
  expect_error<DTypeError>([&] { gather_into(s, x, idx, g, ss, random_tensor(rng, {2, 6, 3}, DType::c128)); }, "gather");
  expect_error<ArgumentError>([&] { gather_into(s, x, idx, g, ss, Tensor::zeros({2, 1, 3}, DType::f64).broadcast_view({2, 6, 3})); }, "gather");
  expect_error<ArgumentError>([&] { gather_into(s, x, idx, g, ss, strided(x, {2, 6, 3}, {1, 2, 12}, 0)); }, "gather");
  // An output sharing storage with the index tensor.
  const Tensor buf = random_tensor(rng, {60}, DType::i64, 0, 1);
  const Tensor ii = strided(buf, {2, 6}, {1, 2}, 0);
  expect_error<ArgumentError>([&] { gather_into(s, random_tensor(rng, {5, 4, 3}, DType::i64), ii, g, ss, strided(buf, {2, 6, 3}, {1, 2, 12}, 4)); },
                              "gather");
  expect_untouched(out, snap);
}

TEST_F(Scatter, MalformedConfigurationsThrowAndLeaveOutputUntouched) {
  // Valid: operand [5, 4, 3], indices [2, 6], updates [2, 6, 3] (window axes 0 and 2).
  const Tensor x = random_tensor(rng, {5, 4, 3}, DType::f64);
  const Tensor idx = random_tensor(rng, {2, 6}, DType::i64, 0, 2);
  const Tensor upd = random_tensor(rng, {2, 6, 3}, DType::f64);
  ScatterDims base;
  base.update_window_dims = {0, 2};
  base.inserted_window_dims = {0};
  base.scatter_dims_to_operand_dims = {0, 2};
  base.index_vector_dim = 0;
  const Tensor out = random_tensor(rng, {5, 4, 3}, DType::f64);
  const auto snap = snapshot(out), xsnap = snapshot(x);
  auto mut = [&](auto f) {
    ScatterDims d = base;
    f(d);
    return d;
  };
  auto into = [&](const ScatterDims& d, const Tensor& u, C c = C::add) { return [=, this] { scatter_into(s, x, idx, u, d, c, out); }; };
  scatter_into(s, x, idx, upd, base, C::add, random_tensor(rng, {5, 4, 3}, DType::f64));  // the base is valid
  const char* op = "scatter";
  expect_error<DTypeError>(into(base, random_tensor(rng, {2, 6, 3}, DType::f32)), op);
  expect_error<RankError>(into(base, random_tensor(rng, {2, 6}, DType::f64)), op);
  expect_error<ShapeError>(into(base, random_tensor(rng, {2, 5, 3}, DType::f64)), op);  // scatter extent
  expect_error<ShapeError>(into(base, random_tensor(rng, {5, 6, 3}, DType::f64)), op);  // window 5 > 4
  expect_error<ArgumentError>(into(mut([](ScatterDims& d) { d.update_window_dims = {2, 0}; }), upd), op);
  expect_error<AxisError>(into(mut([](ScatterDims& d) { d.update_window_dims = {0, 3}; }), upd), op);
  expect_error<RankError>(into(mut([](ScatterDims& d) { d.inserted_window_dims = {0, 1}; }), upd), op);
  expect_error<AxisError>(into(mut([](ScatterDims& d) { d.inserted_window_dims = {4}; }), upd), op);
  expect_error<ShapeError>(into(mut([](ScatterDims& d) { d.scatter_dims_to_operand_dims = {0}; }), upd), op);
  expect_error<AxisError>(into(mut([](ScatterDims& d) { d.scatter_dims_to_operand_dims = {2, 2}; }), upd), op);
  expect_error<AxisError>(into(mut([](ScatterDims& d) { d.index_vector_dim = 3; }), upd), op);
  expect_error<ArgumentError>(into(mut([](ScatterDims& d) { d.inserted_window_dims = {}, d.input_batching_dims = {0}; }), upd), op);  // lengths differ
  expect_error<DTypeError>([&] { scatter_into(s, x, Tensor::zeros({2, 6}, DType::f32), upd, base, C::add, out); }, op);
  expect_error<ArgumentError>([&] { scatter_into(s, x, idx, Tensor(), base, C::add, out); }, op);
  // Combiners outside their dtype sets.
  const Tensor xb = Tensor::zeros({5, 4, 3}, DType::b8), ub = Tensor::zeros({2, 6, 3}, DType::b8);
  const Tensor xc = Tensor::zeros({5, 4, 3}, DType::c128), uc = Tensor::zeros({2, 6, 3}, DType::c128);
  expect_error<DTypeError>([&] { (void)scatter(s, xb, idx, ub, base, C::add); }, op);
  expect_error<DTypeError>([&] { (void)scatter(s, xb, idx, ub, base, C::mul); }, op);
  expect_error<DTypeError>([&] { (void)scatter(s, xc, idx, uc, base, C::max); }, op);
  expect_error<DTypeError>([&] { (void)scatter(s, xc, idx, uc, base, C::min); }, op);
  // Outputs: shape, dtype, read-only, overlapping operand (not identical) or updates.
  expect_error<ShapeError>([&] { scatter_into(s, x, idx, upd, base, C::add, random_tensor(rng, {3, 4, 5}, DType::f64)); }, op);
  expect_error<DTypeError>([&] { scatter_into(s, x, idx, upd, base, C::add, random_tensor(rng, {5, 4, 3}, DType::c64)); }, op);
  expect_error<ArgumentError>([&] { scatter_into(s, x, idx, upd, base, C::add, Tensor::zeros({5, 4, 1}, DType::f64).broadcast_view({5, 4, 3})); }, op);
  expect_error<ArgumentError>([&] { scatter_into(s, x, idx, upd, base, C::add, x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1)); }, op);
  expect_error<ArgumentError>([&] { scatter_into(s, x, idx, strided(out, {2, 6, 3}, {1, 2, 12}, 0), base, C::add, out); }, op);
  expect_error<ArgumentError>([&] { scatter_inplace(s, Tensor::zeros({5, 4, 1}, DType::f64).broadcast_view({5, 4, 3}), idx, upd, base, C::add); }, op);
  expect_error<ArgumentError>([&] { scatter_inplace(s, out, idx, strided(out, {2, 6, 3}, {1, 2, 12}, 0), base, C::add); }, op);
  expect_error<RankError>([&] { scatter_inplace(s, out, idx, random_tensor(rng, {2, 6}, DType::f64), base, C::add); }, op);
  expect_untouched(out, snap);
  expect_untouched(x, xsnap);
  // Batching dims: operand [3, 5, 4], indices [2, 3], updates [3, 2] (window: axis 2).
  const Tensor x2 = random_tensor(rng, {3, 5, 4}, DType::f64), i2 = random_tensor(rng, {2, 3}, DType::i32, 0, 1);
  const Tensor u2 = random_tensor(rng, {3, 2}, DType::f64), o2 = random_tensor(rng, {3, 5, 4}, DType::f64);
  const auto snap2 = snapshot(o2);
  ScatterDims b;
  b.update_window_dims = {1};
  b.inserted_window_dims = {1};
  b.input_batching_dims = {0};
  b.scatter_indices_batching_dims = {1};
  b.scatter_dims_to_operand_dims = {1, 2};
  b.index_vector_dim = 0;
  scatter_into(s, x2, i2, u2, b, C::replace, random_tensor(rng, {3, 5, 4}, DType::f64));  // valid
  auto bmut = [&](auto f) {
    ScatterDims d = b;
    f(d);
    return d;
  };
  auto binto = [&](const ScatterDims& d) { return [=, this] { scatter_into(s, x2, i2, u2, d, C::replace, o2); }; };
  expect_error<AxisError>(binto(bmut([](ScatterDims& d) { d.scatter_indices_batching_dims = {0}; })), op);
  expect_error<AxisError>(binto(bmut([](ScatterDims& d) { d.inserted_window_dims = {0}; })), op);
  expect_error<AxisError>(binto(bmut([](ScatterDims& d) { d.scatter_dims_to_operand_dims = {0, 2}; })), op);
  expect_error<ArgumentError>(binto(bmut([](ScatterDims& d) { d.scatter_indices_batching_dims = {}; })), op);
  expect_error<ShapeError>([&] { scatter_into(s, random_tensor(rng, {2, 5, 4}, DType::f64), i2, u2, b, C::replace, random_tensor(rng, {2, 5, 4}, DType::f64)); },
                           op);
  expect_untouched(o2, snap2);
}

}  // namespace
}  // namespace tenferro::gather_scatter_test
