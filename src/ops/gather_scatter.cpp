// gather and scatter (indexing.hpp) with StableHLO's full dimension numbers, explicit
// batching dimensions included (spec sections "gather" and "scatter"): the pure
// validation of the dimension numbers into an IndexMap (Note [Gather/scatter as batch ×
// window], ops/indexing.hpp), then the front ends, which dispatch GatherKernel and
// ScatterKernel through the session's table. Start indices are clamped (gather) or
// out-of-bounds windows skipped (scatter), as the spec says, so no index is an error.
#include <algorithm>
#include <string>

#include "core/enum_check.hpp"
#include "ops/indexing.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
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

/// The dtype set a combiner needs (see ScatterCombiner).
DTypeSet combiner_set(ScatterCombiner c) {
  switch (c) {
    case ScatterCombiner::replace: return DTypeSet::all;
    case ScatterCombiner::add:
    case ScatterCombiner::mul: return DTypeSet::numeric;
    default: return DTypeSet::real;
  }
}

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

}  // namespace

Shape gather_infer(const GatherDims& dims, const Shape& operand, const Shape& indices, const Dims& slice_sizes, IndexMap& m) {
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


IndexMap scatter_infer(const Tensor& operand, const Tensor& indices, const Tensor& updates, const ScatterDims& dims,
                       ScatterCombiner combiner) {
  constexpr std::string_view op = "scatter";
  require_index_dtype(indices, op, "scatter_indices");
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
  return m;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;

void gather_run(Session& s, const Tensor& operand, const Tensor& indices, const GatherDims& dims, const Dims& slice_sizes, const Tensor* out,
                Tensor& result) {
  constexpr std::string_view op = "gather";
  s.check(op);
  require_tensor_on(operand, s.device(), op, "operand");
  require_tensor_on(indices, s.device(), op, "start_indices");
  require_index_dtype(indices, op, "start_indices");
  IndexMap m;
  const Shape shape = gather_infer(dims, operand.shape(), indices.shape(), slice_sizes, m);
  m.gather_dims = &dims;
  const GatherKernel k = kernel_for(s, OpId::gather, operand.dtype()).fn.gather;
  if (out) {
    require_output(*out, op, operand.dtype(), shape, s.device());
    check_overlap(*out, operand, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(s, shape, operand.dtype(), op);
  }
  k(s, m, operand, indices, slice_sizes, out ? *out : result);
}

void scatter_run(Session& s, const Tensor& operand, const Tensor& indices, const Tensor& updates, const ScatterDims& dims,
                 ScatterCombiner combiner, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "scatter";
  s.check(op);
  require_enum(combiner, ScatterCombiner::max, op, "ScatterCombiner");  // Note [Enums at the API boundary]
  require_tensor_on(operand, s.device(), op, "operand");
  require_tensor_on(indices, s.device(), op, "scatter_indices");
  require_tensor_on(updates, s.device(), op, "updates");
  IndexMap m = scatter_infer(operand, indices, updates, dims, combiner);
  m.scatter_dims = &dims;
  const ScatterKernel k = kernel_for(s, OpId::scatter, operand.dtype()).fn.scatter;
  const Shape oshape = operand.shape();
  if (out) {
    require_output(*out, op, operand.dtype(), oshape, s.device());
    check_overlap(*out, operand, op, true);  // in place (identical) or disjoint
    check_overlap(*out, updates, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(s, oshape, operand.dtype(), op);
  }
  k(s, m, operand, indices, updates, combiner, out ? *out : result);
}

}  // namespace

Tensor gather(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims, const Dims& slice_sizes) {
  Tensor r;
  gather_run(s, operand, start_indices, dims, slice_sizes, nullptr, r);
  return r;
}
void gather_into(Session& s, const Tensor& operand, const Tensor& start_indices, const GatherDims& dims, const Dims& slice_sizes,
                 const Tensor& out) {
  Tensor r;
  gather_run(s, operand, start_indices, dims, slice_sizes, &out, r);
}
Shape gather_shape(const Shape& operand_shape, const Shape& start_indices_shape, const GatherDims& dims, const Dims& slice_sizes) {
  detail::IndexMap m;
  return detail::gather_infer(dims, operand_shape, start_indices_shape, slice_sizes, m);
}

Tensor scatter(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
               ScatterCombiner combiner) {
  Tensor r;
  scatter_run(s, operand, scatter_indices, updates, dims, combiner, nullptr, r);
  return r;
}
void scatter_into(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
                  ScatterCombiner combiner, const Tensor& out) {
  Tensor r;
  scatter_run(s, operand, scatter_indices, updates, dims, combiner, &out, r);
}
void scatter_inplace(Session& s, const Tensor& operand, const Tensor& scatter_indices, const Tensor& updates, const ScatterDims& dims,
                     ScatterCombiner combiner) {
  constexpr std::string_view op = "scatter";
  s.check(op);
  require_tensor_on(operand, s.device(), op, "operand");
  if (operand.read_only()) throw ArgumentError(op, "operand is a read-only (broadcast) view and cannot be updated in place");
  operand.note_write();
  Tensor r;
  scatter_run(s, operand, scatter_indices, updates, dims, combiner, &operand, r);
}

}  // namespace tenferro
