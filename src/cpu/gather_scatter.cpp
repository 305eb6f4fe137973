// The CPU kernels of gather and scatter (cpu/index_common.hpp; the front ends and the
// validation in src/ops/gather_scatter.cpp): two strided plans per op, a window plan
// rebased for every batch position (Note [Gather/scatter as batch × window]).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cpu/index_common.hpp"
#include "ops/indexing.hpp"

namespace tenferro {
namespace detail {
namespace {

/// Byte strides of `t` at the listed axes (0 for -1 entries).
void strides_at(const Tensor& t, const Dims& axes, std::int64_t* out) {
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
  for (int i = 0; i < axes.size(); ++i) out[i] = axes[i] < 0 ? 0 : t.stride(static_cast<int>(axes[i])) * es;
}

/// The index-vector walk shared by both kernels: entry k of the vector at `ip` starts
/// operand axis start_axis[k] (byte stride `step[k]`).
struct IndexVector {
  int n = 0;
  DType dtype = DType::i64;
  std::int64_t stride = 0;  ///< bytes between entries (0: implicit one-entry vector)
  std::int64_t step[kMaxRank];
  std::int64_t limit[kMaxRank];  ///< largest start whose window fits
};

IndexVector index_vector(const IndexMap& m, const Tensor& indices, const Tensor& operand, const std::int64_t* window_size) {
  IndexVector v;
  v.n = m.start_axis.size();
  v.dtype = indices.dtype();
  v.stride = m.ivd_axis >= 0 ? indices.stride(m.ivd_axis) * static_cast<std::int64_t>(dtype_size(indices.dtype())) : 0;
  const auto es = static_cast<std::int64_t>(dtype_size(operand.dtype()));
  for (int k = 0; k < v.n; ++k) {
    const int d = static_cast<int>(m.start_axis[k]);
    v.step[k] = operand.stride(d) * es;
    v.limit[k] = operand.extent(d) - window_size[d];
  }
  return v;
}

// ---------------------------------------------------------------- gather kernel

void run_gather(Session& s, const IndexMap& m, const Tensor& operand, const Tensor& indices, const Dims& slice_sizes, const Tensor& out) {
  if (out.numel() == 0) return;
  const std::size_t es = dtype_size(operand.dtype());
  // Window plan: result at offset_dims, operand at the slice's kept axes.
  std::int64_t wshape[kMaxRank], wst[2][kMaxRank];
  const int wr = m.window_operand_axis.size();
  for (int i = 0; i < wr; ++i) wshape[i] = slice_sizes[static_cast<int>(m.window_operand_axis[i])];
  strides_at(out, m.window_data_axis, wst[0]);
  strides_at(operand, m.window_operand_axis, wst[1]);
  const std::int64_t* wsp[2] = {wst[0], wst[1]};
  char* none[2] = {nullptr, nullptr};
  LoopPlan<2> window;
  window.build(wr, wshape, wsp, none);
  // Batch plan: result at its batch axes, indices at theirs, operand at its batching axes.
  std::int64_t bst[3][kMaxRank];
  strides_at(out, m.batch_data_axis, bst[0]);
  strides_at(indices, m.batch_idx_axis, bst[1]);
  strides_at(operand, m.batch_operand_axis, bst[2]);
  const std::int64_t* bsp[3] = {bst[0], bst[1], bst[2]};
  char* bptr[3] = {static_cast<char*>(out.mutable_data("gather")), static_cast<char*>(const_cast<void*>(indices.data())),
                   static_cast<char*>(const_cast<void*>(operand.data()))};
  LoopPlan<3> batch;
  batch.build(m.batch_extent.size(), m.batch_extent.data(), bsp, bptr);
  const IndexVector iv = index_vector(m, indices, operand, slice_sizes.data());
  parallel_for(s, batch.numel, std::max<std::int64_t>(window.numel, 1), [&](std::int64_t b, std::int64_t e) {
    LoopPlan<2> w = window;
    batch.run(b, e, [&](char** p, const std::int64_t* st, std::int64_t n) {
      for (std::int64_t j = 0; j < n; ++j) {
        const char* ip = p[1] + j * st[1];
        char* src = p[2] + j * st[2];
        // Spec: full_start_index[d] = clamp(start_index[k], 0, dim(operand, d) - slice_sizes[d]).
        for (int k = 0; k < iv.n; ++k) src += std::clamp<std::int64_t>(load_index(ip + k * iv.stride, iv.dtype), 0, iv.limit[k]) * iv.step[k];
        char* dst = p[0] + j * st[0];
        if (w.rank == 0) {
          copy_elements(dst, 0, src, 0, 1, es);
        } else {
          w.ptr[0] = dst;
          w.ptr[1] = src;
          copy_plan_range(w, es, 0, w.numel);
        }
      }
    });
  });
}

// ---------------------------------------------------------------- scatter kernel

/// a ∘ u for each combiner (Note: integer add/mul wrap, computed unsigned to avoid UB;
/// min/max propagate NaN like tenferro::minimum/maximum; on bool they are and/or).
template <class T, ScatterCombiner C> T combine(T a, T u) noexcept {
  if constexpr (C == ScatterCombiner::replace) {
    return u;
  } else if constexpr (C == ScatterCombiner::add || C == ScatterCombiner::mul) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(C == ScatterCombiner::add ? static_cast<U>(static_cast<U>(a) + static_cast<U>(u))
                                                      : static_cast<U>(static_cast<U>(a) * static_cast<U>(u)));
    } else {
      return C == ScatterCombiner::add ? a + u : a * u;
    }
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
      if (std::isnan(u)) return u;
    }
    if constexpr (C == ScatterCombiner::max) return a > u ? a : u;
    else return a < u ? a : u;
  }
}

/// Applies every window in column-major order of its scatter position, on the calling
/// thread: overlapping windows then combine in a fixed order (replace: the last wins;
/// float add: a fixed rounding), whatever the session's thread count.
template <class T, ScatterCombiner C>
void run_scatter(const IndexMap& m, const Tensor& out, const Tensor& indices, const Tensor& updates) {
  const int r = out.rank();
  // Window extents per operand axis: 1 on inserted and batching axes (spec:
  // full_window_index has 0 there), the updates' extent on window axes.
  std::int64_t wsize[kMaxRank];
  std::fill(wsize, wsize + r, 1);
  std::int64_t wshape[kMaxRank], wst[2][kMaxRank];
  const int wr = m.window_operand_axis.size();
  for (int i = 0; i < wr; ++i) {
    wshape[i] = updates.extent(static_cast<int>(m.window_data_axis[i]));
    wsize[m.window_operand_axis[i]] = wshape[i];
  }
  for (int d = 0; d < r; ++d)
    if (out.extent(d) < wsize[d]) return;  // an inserted axis of extent 0: no window fits
  strides_at(out, m.window_operand_axis, wst[0]);
  strides_at(updates, m.window_data_axis, wst[1]);
  const std::int64_t* wsp[2] = {wst[0], wst[1]};
  char* none[2] = {nullptr, nullptr};
  LoopPlan<2> w;
  w.build(wr, wshape, wsp, none);
  if (w.numel == 0) return;
  const IndexVector iv = index_vector(m, indices, out, wsize);
  // Batch walk, column-major over the batch axes (not a LoopPlan: it would reorder them).
  const int br = m.batch_extent.size();
  std::int64_t bst[3][kMaxRank];
  strides_at(updates, m.batch_data_axis, bst[0]);
  strides_at(indices, m.batch_idx_axis, bst[1]);
  strides_at(out, m.batch_operand_axis, bst[2]);
  for (int k = 0; k < br; ++k)
    if (m.batch_extent[k] == 0) return;
  const char* pu = static_cast<const char*>(updates.data());
  const char* pi = static_cast<const char*>(indices.data());
  char* po = static_cast<char*>(out.mutable_data("scatter"));
  std::int64_t idx[kMaxRank] = {};
  for (;;) {
    // Spec: result_index = full_start_index + full_batching_index + full_window_index;
    // XLA skips the update when any index of the window is out of bounds.
    char* dst = po;
    bool fits = true;
    for (int k = 0; k < iv.n && fits; ++k) {
      const std::int64_t v = load_index(pi + k * iv.stride, iv.dtype);
      fits = v >= 0 && v <= iv.limit[k];
      if (fits) dst += v * iv.step[k];
    }
    if (fits) {
      w.ptr[0] = dst;
      w.ptr[1] = const_cast<char*>(pu);
      w.run(0, w.numel, [](char** p, const std::int64_t* st, std::int64_t n) {
        char* o = p[0];
        const char* u = p[1];
        for (std::int64_t i = 0; i < n; ++i, o += st[0], u += st[1]) {
          T& a = *reinterpret_cast<T*>(o);
          a = combine<T, C>(a, *reinterpret_cast<const T*>(u));
        }
      });
    }
    int k = 0;
    for (; k < br; ++k) {
      pu += bst[0][k];
      pi += bst[1][k];
      po += bst[2][k];
      if (++idx[k] < m.batch_extent[k]) break;
      pu -= idx[k] * bst[0][k];
      pi -= idx[k] * bst[1][k];
      po -= idx[k] * bst[2][k];
      idx[k] = 0;
    }
    if (k == br) return;
  }
}

template <ScatterCombiner C, DTypeSet Set>
void dispatch_scatter(const IndexMap& m, const Tensor& out, const Tensor& indices, const Tensor& updates) {
  visit_dtype<Set>("scatter", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_scatter<T, C>(m, out, indices, updates);
  });
}

}  // namespace
}  // namespace detail

namespace cpu {

void gather_kernel(Session& s, const detail::IndexMap& m, const Tensor& operand, const Tensor& indices, const Dims& slice_sizes,
                   const Tensor& out) {
  detail::run_gather(s, m, operand, indices, slice_sizes, out);
}

void scatter_kernel(Session& s, const detail::IndexMap& m, const Tensor& operand, const Tensor& indices, const Tensor& updates,
                    ScatterCombiner combiner, const Tensor& out) {
  using detail::dispatch_scatter;
  detail::copy_tensor(s, out, operand);
  switch (combiner) {
    case ScatterCombiner::replace: return dispatch_scatter<ScatterCombiner::replace, DTypeSet::all>(m, out, indices, updates);
    case ScatterCombiner::add: return dispatch_scatter<ScatterCombiner::add, DTypeSet::numeric>(m, out, indices, updates);
    case ScatterCombiner::mul: return dispatch_scatter<ScatterCombiner::mul, DTypeSet::numeric>(m, out, indices, updates);
    case ScatterCombiner::min: return dispatch_scatter<ScatterCombiner::min, DTypeSet::real>(m, out, indices, updates);
    case ScatterCombiner::max: return dispatch_scatter<ScatterCombiner::max, DTypeSet::real>(m, out, indices, updates);
  }
}

}  // namespace cpu
}  // namespace tenferro
