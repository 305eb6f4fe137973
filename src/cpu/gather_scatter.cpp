// gather and scatter (indexing.hpp) with StableHLO's full dimension numbers, explicit
// batching dimensions included (spec sections "gather" and "scatter").
//
// Note [Gather/scatter as batch × window]
// Both ops pair two index spaces: the batch (one index vector per position: the axes of
// the indices tensor without index_vector_dim) and the window (the slice's axes that are
// neither collapsed/inserted nor batching). For gather,
//   result[batch b, window w] = operand[clamp(start(b)) + batching(b) + w],
// and scatter is the same map read backwards. Every term is linear in b and w except
// the start, which is read from the indices tensor. So each op builds two strided plans:
// a window plan (result/updates and operand strides over the window axes), built once
// and rebased for every batch position, and a batch walk over (result/updates, indices,
// operand) pointers, where operand's per-batch stride carries the batching dimensions
// (operand_batching_dims[i] advances with start_indices_batching_dims[i]).
// Example: operand [5, 3], start_indices [4, 1], index_vector_dim 1, start_index_map [0],
// collapsed_slice_dims [0], offset_dims [1], slice_sizes [1, 3]  (NumPy's x[idx, :]):
// batch = 4 positions, window = 3 elements along operand axis 1 / result axis 1, result
// [4, 3].
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "cpu/index_common.hpp"

namespace tenferro {
namespace detail {
namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

/// One op's dimension numbers with their field names (gather and scatter share every
/// constraint of the spec under different names).
struct DimFields {
  std::string_view op;
  const char* indices_name;   ///< start_indices | scatter_indices
  const char* data_name;      ///< result | updates
  const char* window_name;    ///< offset_dims | update_window_dims
  const char* collapsed_name; ///< collapsed_slice_dims | inserted_window_dims
  const char* start_map_name; ///< start_index_map | scatter_dims_to_operand_dims
  const char* obatch_name;    ///< operand_batching_dims | input_batching_dims
  const char* ibatch_name;    ///< start_indices_batching_dims | scatter_indices_batching_dims
  const Dims& window;
  const Dims& collapsed;
  const Dims& start_map;
  std::int64_t ivd;
  const Dims& obatch;
  const Dims& ibatch;
};

/// The validated map of Note [Gather/scatter as batch × window].
struct IndexMap {
  Dims batch_extent;        ///< per batch axis k
  Dims batch_idx_axis;      ///< indices axis of batch axis k
  Dims batch_data_axis;     ///< result/updates axis of batch axis k
  Dims batch_operand_axis;  ///< operand batching axis advanced by batch axis k, or -1
  int ivd_axis = -1;        ///< indices axis holding the index vectors; -1 when implicit
  Dims start_axis;          ///< operand axis started by index-vector entry k
  Dims window_operand_axis; ///< operand axis of window axis i
  Dims window_data_axis;    ///< result/updates axis of window axis i
};

bool contains(const Dims& d, std::int64_t v) { return std::find(d.begin(), d.end(), v) != d.end(); }

/// Each entry in [0, bound) (AxisError), no repeats (AxisError), optionally sorted (ArgumentError).
void check_axis_list(const DimFields& f, const char* name, const Dims& list, std::int64_t bound, const std::string& what, bool sorted) {
  for (int i = 0; i < list.size(); ++i) {
    if (list[i] < 0 || list[i] >= bound)
      throw AxisError(f.op, std::string(name) + " " + list.to_string() + ": axis " + num(list[i]) + " out of range [0, " + num(bound) +
                                ") for " + what);
    for (int j = 0; j < i; ++j)
      if (list[j] == list[i]) throw AxisError(f.op, std::string(name) + " " + list.to_string() + " repeats axis " + num(list[i]));
  }
  if (sorted)
    for (int i = 1; i < list.size(); ++i)
      if (list[i] < list[i - 1]) throw ArgumentError(f.op, std::string(name) + " " + list.to_string() + " must be sorted");
}

/// No axis in both lists (AxisError).
void check_disjoint(const DimFields& f, const char* na, const Dims& a, const char* nb, const Dims& b) {
  for (auto v : a)
    if (contains(b, v))
      throw AxisError(f.op, "operand axis " + num(v) + " appears in both " + na + " " + a.to_string() + " and " + nb + " " + b.to_string());
}

/// Constraints shared by gather (C1-C8, C10-C11, C13-C19) and scatter (C2, C4 ranks,
/// C7-C22), then the map. `data_rank` is rank(result) for gather, rank(updates) for scatter.
IndexMap validate_dims(const DimFields& f, const Shape& operand, const Shape& indices, int data_rank) {
  const int r = operand.size(), ir = indices.size();
  if (f.ivd < 0 || f.ivd > ir)
    throw AxisError(f.op, "index_vector_dim = " + num(f.ivd) + " out of range [0, " + num(ir) + "] for " + f.indices_name + " of shape " +
                              indices.to_string());
  const int ivd = static_cast<int>(f.ivd);
  const int batch_rank = ivd < ir ? ir - 1 : ir;
  const std::int64_t nidx = ivd < ir ? indices[ivd] : 1;
  if (data_rank != batch_rank + f.window.size())
    throw RankError(f.op, std::string(f.data_name) + " has rank " + num(data_rank) + ", expected " + num(batch_rank + f.window.size()) +
                              " (" + num(batch_rank) + " batch axes of " + f.indices_name + " " + indices.to_string() + " + " +
                              num(f.window.size()) + " " + f.window_name + ")");
  if (f.window.size() + f.collapsed.size() + f.obatch.size() != r)
    throw RankError(f.op, std::string(f.window_name) + " " + f.window.to_string() + ", " + f.collapsed_name + " " + f.collapsed.to_string() +
                              " and " + f.obatch_name + " " + f.obatch.to_string() + " number " +
                              num(f.window.size() + f.collapsed.size() + f.obatch.size()) + " axes for an operand of rank " + num(r));
  check_axis_list(f, f.window_name, f.window, data_rank, std::string(f.data_name) + " of rank " + num(data_rank), true);
  const std::string operand_what = "an operand of shape " + operand.to_string();
  check_axis_list(f, f.collapsed_name, f.collapsed, r, operand_what, true);
  check_axis_list(f, f.obatch_name, f.obatch, r, operand_what, true);
  check_disjoint(f, f.collapsed_name, f.collapsed, f.obatch_name, f.obatch);
  check_axis_list(f, f.ibatch_name, f.ibatch, ir, std::string(f.indices_name) + " of shape " + indices.to_string(), false);
  if (contains(f.ibatch, f.ivd))
    throw AxisError(f.op, std::string(f.ibatch_name) + " " + f.ibatch.to_string() + " contains index_vector_dim " + num(f.ivd));
  if (f.obatch.size() != f.ibatch.size())
    throw ArgumentError(f.op, std::string(f.obatch_name) + " " + f.obatch.to_string() + " and " + f.ibatch_name + " " + f.ibatch.to_string() +
                                  " differ in length");
  for (int i = 0; i < f.obatch.size(); ++i)
    if (operand[static_cast<int>(f.obatch[i])] != indices[static_cast<int>(f.ibatch[i])])
      throw ShapeError(f.op, "batching extents differ: operand axis " + num(f.obatch[i]) + " has " + num(operand[static_cast<int>(f.obatch[i])]) +
                                 ", " + f.indices_name + " axis " + num(f.ibatch[i]) + " has " + num(indices[static_cast<int>(f.ibatch[i])]));
  if (f.start_map.size() != nidx)
    throw ShapeError(f.op, std::string(f.start_map_name) + " " + f.start_map.to_string() + " has " + num(f.start_map.size()) +
                               " entries, the index vectors of " + f.indices_name + " " + indices.to_string() + " (index_vector_dim " +
                               num(f.ivd) + ") have " + num(nidx));
  check_axis_list(f, f.start_map_name, f.start_map, r, operand_what, false);
  check_disjoint(f, f.start_map_name, f.start_map, f.obatch_name, f.obatch);

  IndexMap m;
  m.ivd_axis = ivd < ir ? ivd : -1;
  m.start_axis = f.start_map;
  for (int a = 0; a < ir; ++a) {
    if (a == ivd) continue;
    m.batch_extent.push_back(indices[a]);
    m.batch_idx_axis.push_back(a);
    m.batch_operand_axis.push_back(-1);
  }
  for (int a = 0; a < data_rank; ++a)
    if (!contains(f.window, a)) m.batch_data_axis.push_back(a);
  for (int i = 0; i < f.ibatch.size(); ++i) {
    // Spec: batch_index[d_start - (d_start < index_vector_dim ? 0 : 1)].
    const int k = static_cast<int>(f.ibatch[i] - (f.ibatch[i] < f.ivd ? 0 : 1));
    m.batch_operand_axis[k] = f.obatch[i];
  }
  for (int d = 0; d < r; ++d)
    if (!contains(f.collapsed, d) && !contains(f.obatch, d)) m.window_operand_axis.push_back(d);
  m.window_data_axis = f.window;
  return m;
}

DimFields gather_fields(const GatherDims& d) {
  return {"gather", "start_indices", "result", "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
          "start_indices_batching_dims", d.offset_dims, d.collapsed_slice_dims, d.start_index_map, d.index_vector_dim,
          d.operand_batching_dims, d.start_indices_batching_dims};
}

DimFields scatter_fields(const ScatterDims& d) {
  return {"scatter", "scatter_indices", "updates", "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
          "input_batching_dims", "scatter_indices_batching_dims", d.update_window_dims, d.inserted_window_dims,
          d.scatter_dims_to_operand_dims, d.index_vector_dim, d.input_batching_dims, d.scatter_indices_batching_dims};
}

/// Gather constraints on slice_sizes (C9, C12, C20, C21) and the result shape (C22).
Shape gather_geometry(const GatherDims& dims, const Shape& operand, const Shape& indices, const Dims& slice_sizes, IndexMap& m) {
  const DimFields f = gather_fields(dims);
  const int ir = indices.size();
  const int batch_rank = (dims.index_vector_dim >= 0 && dims.index_vector_dim < ir) ? ir - 1 : ir;
  m = validate_dims(f, operand, indices, batch_rank + dims.offset_dims.size());
  const int r = operand.size();
  if (slice_sizes.size() != r)
    throw RankError(f.op, "slice_sizes " + slice_sizes.to_string() + " has " + num(slice_sizes.size()) + " entries for an operand of rank " + num(r));
  for (int d = 0; d < r; ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand[d])
      throw ShapeError(f.op, "slice_sizes[" + num(d) + "] = " + num(slice_sizes[d]) + " outside [0, " + num(operand[d]) + "] (operand shape " +
                                 operand.to_string() + ")");
  bool zero_dropped = false;  // a collapsed or batching axis with slice size 0
  auto check_dropped = [&](const Dims& list, const char* name) {
    for (auto d : list) {
      const std::int64_t sz = slice_sizes[static_cast<int>(d)];
      if (sz > 1)
        throw ShapeError(f.op, "slice_sizes[" + num(d) + "] = " + num(sz) + " must be <= 1 on " + name + " axis " + num(d) + " (slice_sizes " +
                                   slice_sizes.to_string() + ")");
      zero_dropped |= sz == 0;
    }
  };
  check_dropped(dims.collapsed_slice_dims, "collapsed_slice_dims");
  check_dropped(dims.operand_batching_dims, "operand_batching_dims");
  if (m.batch_data_axis.size() + m.window_data_axis.size() > kMaxRank)
    throw RankError(f.op, "result rank " + num(m.batch_data_axis.size() + m.window_data_axis.size()) + " exceeds " + num(kMaxRank));
  Shape shape(m.batch_data_axis.size() + m.window_data_axis.size(), 0);
  for (int k = 0; k < m.batch_data_axis.size(); ++k) shape[static_cast<int>(m.batch_data_axis[k])] = m.batch_extent[k];
  for (int i = 0; i < m.window_data_axis.size(); ++i)
    shape[static_cast<int>(m.window_data_axis[i])] = slice_sizes[static_cast<int>(m.window_operand_axis[i])];
  // StableHLO allows a size-0 slice on a dropped axis (C9, C12: <= 1), but then a
  // non-empty result would read elements outside the slice: only an empty result is
  // well defined.
  if (zero_dropped && checked_numel(shape, f.op) > 0)
    throw ShapeError(f.op, "slice_sizes " + slice_sizes.to_string() + " is 0 on a collapsed or batching axis, but the result " +
                               shape.to_string() + " is not empty");
  return shape;
}

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

/// The dtype set a combiner needs (see ScatterCombiner).
DTypeSet combiner_set(ScatterCombiner c) {
  switch (c) {
    case ScatterCombiner::replace: return DTypeSet::all;
    case ScatterCombiner::add:
    case ScatterCombiner::mul: return DTypeSet::numeric;
    default: return DTypeSet::real;
  }
}

template <ScatterCombiner C, DTypeSet Set>
void dispatch_scatter(const IndexMap& m, const Tensor& out, const Tensor& indices, const Tensor& updates) {
  visit_dtype<Set>("scatter", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_scatter<T, C>(m, out, indices, updates);
  });
}

// ---------------------------------------------------------------- drivers

void gather_impl(Session& s, const Tensor& operand, const Tensor& indices, const GatherDims& dims, const Dims& slice_sizes,
                 const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "gather";
  s.check(op);
  require_cpu_tensor(operand, op, "operand");
  require_index_tensor(indices, op, "start_indices");
  IndexMap m;
  const Shape shape = gather_geometry(dims, operand.shape(), indices.shape(), slice_sizes, m);
  if (out) {
    require_output(*out, op, operand.dtype(), shape);
    check_overlap(*out, operand, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(shape, operand.dtype(), op);
  }
  run_gather(s, m, operand, indices, slice_sizes, out ? *out : result);
}

void scatter_impl(Session& s, const Tensor& operand, const Tensor& indices, const Tensor& updates, const ScatterDims& dims,
                  ScatterCombiner combiner, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "scatter";
  s.check(op);
  require_enum(combiner, ScatterCombiner::max, op, "ScatterCombiner");  // Note [Enums at the API boundary]
  require_cpu_tensor(operand, op, "operand");
  require_index_tensor(indices, op, "scatter_indices");
  require_cpu_tensor(updates, op, "updates");
  if (updates.dtype() != operand.dtype())
    throw DTypeError(op, "updates dtype " + std::string(dtype_name(updates.dtype())) + " differs from operand dtype " +
                             std::string(dtype_name(operand.dtype())));
  if (!in_set(operand.dtype(), combiner_set(combiner))) throw_dtype_not_in_set(op, operand.dtype(), combiner_set(combiner));
  const DimFields f = scatter_fields(dims);
  const Shape oshape = operand.shape();
  const IndexMap m = validate_dims(f, oshape, indices.shape(), updates.rank());
  // C4: update scatter extents equal the indices' batch extents; window extents fit.
  for (int k = 0; k < m.batch_data_axis.size(); ++k)
    if (updates.extent(static_cast<int>(m.batch_data_axis[k])) != m.batch_extent[k])
      throw ShapeError(op, "updates shape " + updates.shape().to_string() + ": axis " + num(m.batch_data_axis[k]) + " has extent " +
                               num(updates.extent(static_cast<int>(m.batch_data_axis[k]))) + ", scatter_indices " +
                               indices.shape().to_string() + " axis " + num(m.batch_idx_axis[k]) + " has " + num(m.batch_extent[k]));
  for (int i = 0; i < m.window_data_axis.size(); ++i) {
    const std::int64_t ue = updates.extent(static_cast<int>(m.window_data_axis[i]));
    const std::int64_t oe = oshape[static_cast<int>(m.window_operand_axis[i])];
    if (ue > oe)
      throw ShapeError(op, "updates shape " + updates.shape().to_string() + ": window axis " + num(m.window_data_axis[i]) + " has extent " +
                               num(ue) + ", more than operand " + oshape.to_string() + " axis " + num(m.window_operand_axis[i]) + " (" + num(oe) + ")");
  }
  if (out) {
    require_output(*out, op, operand.dtype(), oshape);
    check_overlap(*out, operand, op, true);  // in place (identical) or disjoint
    check_overlap(*out, updates, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(oshape, operand.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  copy_tensor(s, o, operand);
  switch (combiner) {
    case ScatterCombiner::replace: return dispatch_scatter<ScatterCombiner::replace, DTypeSet::all>(m, o, indices, updates);
    case ScatterCombiner::add: return dispatch_scatter<ScatterCombiner::add, DTypeSet::numeric>(m, o, indices, updates);
    case ScatterCombiner::mul: return dispatch_scatter<ScatterCombiner::mul, DTypeSet::numeric>(m, o, indices, updates);
    case ScatterCombiner::min: return dispatch_scatter<ScatterCombiner::min, DTypeSet::real>(m, o, indices, updates);
    case ScatterCombiner::max: return dispatch_scatter<ScatterCombiner::max, DTypeSet::real>(m, o, indices, updates);
  }
}

}  // namespace
}  // namespace detail

// ---------------------------------------------------------------- public entry points

Tensor gather(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims, const Dims& slice_sizes) {
  Tensor r;
  detail::gather_impl(s, operand, start_indices, dims, slice_sizes, nullptr, r);
  return r;
}
void gather_into(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims, const Dims& slice_sizes,
                 const Tensor& out) {
  Tensor r;
  detail::gather_impl(s, operand, start_indices, dims, slice_sizes, &out, r);
}
Shape gather_shape(const Shape& operand_shape, const Shape& start_indices_shape, const GatherDims& dims, const Dims& slice_sizes) {
  detail::IndexMap m;
  return detail::gather_geometry(dims, operand_shape, start_indices_shape, slice_sizes, m);
}

Tensor scatter(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
               ScatterCombiner combiner) {
  Tensor r;
  detail::scatter_impl(s, operand, scatter_indices, updates, dims, combiner, nullptr, r);
  return r;
}
void scatter_into(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
                  ScatterCombiner combiner, const Tensor& out) {
  Tensor r;
  detail::scatter_impl(s, operand, scatter_indices, updates, dims, combiner, &out, r);
}
void scatter_inplace(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
                     ScatterCombiner combiner) {
  s.check("scatter");
  detail::require_cpu_tensor(operand, "scatter", "operand");
  detail::require_writable(operand, "scatter", "operand");
  Tensor r;
  detail::scatter_impl(s, operand, scatter_indices, updates, dims, combiner, &operand, r);
}

}  // namespace tenferro
