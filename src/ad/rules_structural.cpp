// Differentiable structural and indexing ops: wrappers, JVP and VJP rules. All these
// ops are linear in their differentiable inputs, so the JVP applies the op to the
// tangents and the VJP is the transposed re-indexing (a view where one exists).
// Worked example (pad's VJP): x = [1, 2, 3], low 1, high -1, interior 1 gives
// [p, 1, p, 2, p]; its transpose pads the cotangent by -low/-high ([g1 .. g4, 0]) and
// takes every (interior + 1)-th element: [g1, g3, 0 ...] restricted to x's extent.
#include <algorithm>

#include "ad/tape.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;

Tensor tan_or_zero(Session& s, const Tensor* t, int k, const Node& n) { return detail::or_zeros(s, t[k], n.input(k)); }

// ---- transpose: vjp is the inverse permutation (a view).
void vjp_transpose(Session&, const Node& n, const Tensor& g, Grad* out) {
  Dims inv(n.attr<PermuteAttrs>().perm.size(), 0);
  for (int i = 0; i < n.attr<PermuteAttrs>().perm.size(); ++i) inv[static_cast<int>(n.attr<PermuteAttrs>().perm[i])] = i;
  out[0] = {g.permute_view(inv.span()), false};
}
Tensor jvp_transpose(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::transpose(s, t[0], n.attr<PermuteAttrs>().perm.span()) : Tensor();
}

// ---- broadcast_in_dim: vjp sums new and stretched axes, then restores x's axis order.
void vjp_broadcast(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const Tensor& x = n.x[0];
  const int R = g.rank(), r = x.rank();
  std::vector<std::int64_t> dims(n.attr<BroadcastAttrs>().dims.begin(), n.attr<BroadcastAttrs>().dims.end());
  for (auto& d : dims)
    if (d < 0) d += R;
  std::vector<bool> keep(static_cast<std::size_t>(R), false);
  std::vector<int> kept;  // x axes that are not stretched
  for (int i = 0; i < r; ++i) {
    const bool stretched = x.extent(i) == 1 && g.extent(static_cast<int>(dims[i])) != 1;
    if (!stretched) {
      keep[static_cast<std::size_t>(dims[i])] = true;
      kept.push_back(i);
    }
  }
  Dims sum_axes;
  for (int a = 0; a < R; ++a)
    if (!keep[static_cast<std::size_t>(a)]) sum_axes.push_back(a);
  Tensor red = sum_axes.empty() ? g : T::sum(s, g, sum_axes.span(), false);
  // red's axes are the kept x axes ordered by their result axis; reorder by x axis.
  std::vector<int> by_result = kept;
  std::sort(by_result.begin(), by_result.end(), [&](int a, int b) { return dims[a] < dims[b]; });
  Dims perm;
  for (int i : kept) perm.push_back(std::find(by_result.begin(), by_result.end(), i) - by_result.begin());
  if (perm.size() > 1) red = red.permute_view(perm.span());
  out[0] = {T::reshape(s, red, x.shape().span()), !sum_axes.empty()};
}
Tensor jvp_broadcast(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::broadcast_in_dim(s, t[0], n.y[0].shape().span(), n.attr<BroadcastAttrs>().dims.span()) : Tensor();
}

// ---- diagonals
void vjp_extract_diagonal(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor z = detail::zeros_like(s, n.x[0]);
  T::copy_into(s, g, T::extract_diagonal_view(z, n.attr<DiagonalAttrs>().axis1, n.attr<DiagonalAttrs>().axis2));
  out[0] = {std::move(z), true};
}
Tensor jvp_extract_diagonal(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::extract_diagonal(s, t[0], n.attr<DiagonalAttrs>().axis1, n.attr<DiagonalAttrs>().axis2) : Tensor();
}
void vjp_embed_diagonal(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::extract_diagonal(s, g, n.attr<DiagonalAttrs>().axis1, n.attr<DiagonalAttrs>().axis2), true};
}
Tensor jvp_embed_diagonal(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::embed_diagonal(s, t[0], n.attr<DiagonalAttrs>().axis1, n.attr<DiagonalAttrs>().axis2) : Tensor();
}

// ---- triangles: self-adjoint masks.
void vjp_tril(Session& s, const Node& n, const Tensor& g, Grad* out) { out[0] = {T::tril(s, g, n.attr<TriangleAttrs>().offset), true}; }
Tensor jvp_tril(Session& s, const Node& n, const Tensor* t) { return t[0].defined() ? T::tril(s, t[0], n.attr<TriangleAttrs>().offset) : Tensor(); }
void vjp_triu(Session& s, const Node& n, const Tensor& g, Grad* out) { out[0] = {T::triu(s, g, n.attr<TriangleAttrs>().offset), true}; }
Tensor jvp_triu(Session& s, const Node& n, const Tensor* t) { return t[0].defined() ? T::triu(s, t[0], n.attr<TriangleAttrs>().offset) : Tensor(); }

// ---- reverse: self-adjoint (a view).
void vjp_reverse(Session& s, const Node& n, const Tensor& g, Grad* out) { out[0] = {T::reverse_view(g, n.attr<AxesAttrs>().axes.span()), false}; }
Tensor jvp_reverse(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::reverse(s, t[0], n.attr<AxesAttrs>().axes.span()) : Tensor();
}

// ---- pad (see the worked example at the top). Attributes: PadAttrs.
void vjp_pad(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const PadAttrs& e = n.attr<PadAttrs>();
  const int r = g.rank();
  Dims nlow(r, 0), nhigh(r, 0), zero(r, 0), starts(r, 0), limits(r, 0), steps(r, 1);
  for (int i = 0; i < r; ++i) {
    nlow[i] = -e.low[i];
    nhigh[i] = -e.high[i];
  }
  Tensor p = T::pad(s, g, 0.0, nlow.span(), nhigh.span(), zero.span());
  for (int i = 0; i < r; ++i) {
    limits[i] = p.extent(i);
    steps[i] = e.interior[i] + 1;
  }
  out[0] = {T::slice_view(p, starts, limits, steps), false};
}
Tensor jvp_pad(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  const PadAttrs& e = n.attr<PadAttrs>();
  return T::pad(s, t[0], 0.0, e.low.span(), e.high.span(), e.interior.span());
}

// ---- slice: the transpose is a pad with interior stride - 1. Attributes: SliceAttrs
// (strides empty: 1).
void vjp_slice(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const SliceAttrs& e = n.attr<SliceAttrs>();
  const Tensor& x = n.x[0];
  const int r = x.rank();
  Dims low(r, 0), high(r, 0), interior(r, 0);
  for (int i = 0; i < r; ++i) {
    const std::int64_t st = e.strides.empty() ? 1 : e.strides[i];
    const std::int64_t cnt = g.extent(i);
    low[i] = e.starts[i];
    interior[i] = cnt == 0 ? 0 : st - 1;
    high[i] = cnt == 0 ? x.extent(i) - e.starts[i] : x.extent(i) - e.starts[i] - (cnt - 1) * st - 1;
  }
  out[0] = {T::pad(s, g, 0.0, low.span(), high.span(), interior.span()), true};
}
Tensor jvp_slice(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  const SliceAttrs& e = n.attr<SliceAttrs>();
  return T::slice(s, t[0], e.starts, e.limits, e.strides);
}

// ---- concatenate / stack (variadic; AxisAttrs: the normalized axis).
void vjp_concatenate(Session&, const Node& n, const Tensor& g, Grad* out) {
  std::int64_t off = 0;
  const int ax = static_cast<int>(n.attr<AxisAttrs>().axis);
  for (int k = 0; k < n.num_inputs(); ++k) {
    const std::int64_t e = n.input(k).extent(ax);
    if (n.ref(k).kind) out[k] = {g.slice_view(ax, off, off + e), false};
    off += e;
  }
}
Tensor jvp_concatenate(Session& s, const Node& n, const Tensor* t) {
  std::vector<Tensor> ts;
  for (int k = 0; k < n.num_inputs(); ++k) ts.push_back(detail::or_zeros(s, t[k], n.input(k)));
  return T::concatenate(s, ts, n.attr<AxisAttrs>().axis);
}
void vjp_stack(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const int ax = static_cast<int>(n.attr<AxisAttrs>().axis);
  for (int k = 0; k < n.num_inputs(); ++k)
    if (n.ref(k).kind) out[k] = {T::reshape(s, g.slice_view(ax, k, k + 1), n.input(k).shape().span()), false};
}
Tensor jvp_stack(Session& s, const Node& n, const Tensor* t) {
  std::vector<Tensor> ts;
  for (int k = 0; k < n.num_inputs(); ++k) ts.push_back(detail::or_zeros(s, t[k], n.input(k)));
  return T::stack(s, ts, n.attr<AxisAttrs>().axis);
}

// ---- dynamic slices. Extra: index (start indices), d1 slice sizes.
void vjp_dynamic_slice(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor z = detail::zeros_like(s, n.x[0]);
  T::dynamic_update_slice_inplace(s, z, g, n.extra->index);
  out[0] = {std::move(z), true};
}
Tensor jvp_dynamic_slice(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::dynamic_slice(s, t[0], n.extra->index, n.attr<DynamicSliceAttrs>().slice_sizes) : Tensor();
}
void vjp_dynamic_update_slice(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const Tensor& idx = n.extra->index;
  if (n.in[0].kind) out[0] = {T::dynamic_update_slice(s, g, detail::zeros_like(s, n.x[1]), idx), true};
  if (n.in[1].kind) out[1] = {T::dynamic_slice(s, g, idx, n.x[1].shape()), true};
}
Tensor jvp_dynamic_update_slice(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined() && !t[1].defined()) return {};
  return T::dynamic_update_slice(s, tan_or_zero(s, t, 0, n), tan_or_zero(s, t, 1, n), n.extra->index);
}

// ---- gather <-> scatter-add: the same dimension numbers read both ways.
ScatterDims scatter_dims_of(const GatherDims& d) {
  ScatterDims r;
  r.update_window_dims = d.offset_dims;
  r.inserted_window_dims = d.collapsed_slice_dims;
  r.scatter_dims_to_operand_dims = d.start_index_map;
  r.index_vector_dim = d.index_vector_dim;
  r.input_batching_dims = d.operand_batching_dims;
  r.scatter_indices_batching_dims = d.start_indices_batching_dims;
  return r;
}
GatherDims gather_dims_of(const ScatterDims& d) {
  GatherDims r;
  r.offset_dims = d.update_window_dims;
  r.collapsed_slice_dims = d.inserted_window_dims;
  r.start_index_map = d.scatter_dims_to_operand_dims;
  r.index_vector_dim = d.index_vector_dim;
  r.operand_batching_dims = d.input_batching_dims;
  r.start_indices_batching_dims = d.scatter_indices_batching_dims;
  return r;
}
bool contains(const Dims& d, std::int64_t v) { return std::find(d.begin(), d.end(), v) != d.end(); }
/// gather slice sizes that read back the windows of a scatter with these updates.
Dims window_sizes(const ScatterDims& d, const Tensor& operand, const Tensor& updates) {
  Dims sizes(operand.rank(), 1);
  int w = 0;
  for (int a = 0; a < operand.rank(); ++a)
    if (!contains(d.inserted_window_dims, a) && !contains(d.input_batching_dims, a))
      sizes[a] = updates.extent(static_cast<int>(d.update_window_dims[w++]));
  return sizes;
}
void vjp_gather(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor z = detail::zeros_like(s, n.x[0]);
  T::scatter_inplace(s, z, n.extra->index, g, scatter_dims_of(n.attr<GatherAttrs>().dims), ScatterCombiner::add);
  out[0] = {std::move(z), true};
}
Tensor jvp_gather(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::gather(s, t[0], n.extra->index, n.attr<GatherAttrs>().dims, n.attr<GatherAttrs>().slice_sizes) : Tensor();
}
void vjp_scatter(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const auto& e = *n.extra;
  const ScatterAttrs& a = n.attr<ScatterAttrs>();
  if (n.in[0].kind) {
    if (a.combiner == ScatterCombiner::add)
      out[0] = {g, false};
    else
      out[0] = {T::scatter(s, g, e.index, detail::zeros_like(s, n.x[1]), a.dims, ScatterCombiner::replace), true};
  }
  if (n.in[1].kind) out[1] = {T::gather(s, g, e.index, gather_dims_of(a.dims), window_sizes(a.dims, n.x[0], n.x[1])), true};
}
Tensor jvp_scatter(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined() && !t[1].defined()) return {};
  const auto& e = *n.extra;
  const ScatterAttrs& a = n.attr<ScatterAttrs>();
  return T::scatter(s, tan_or_zero(s, t, 0, n), e.index, tan_or_zero(s, t, 1, n), a.dims, a.combiner);
}

template <class Fill> EagerTensor unary_node(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, Fill&& fill) {
  return finish<1>(ctx, op, std::move(y), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    fill(n);
  });
}

using detail::norm_axis;

}  // namespace

namespace detail {
void register_structural_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  auto set = [&](OpId op, JvpRule j, VjpRule v) { t[static_cast<int>(op)] = {j, v}; };
  set(OpId::transpose, jvp_transpose, vjp_transpose);
  set(OpId::broadcast_in_dim, jvp_broadcast, vjp_broadcast);
  set(OpId::extract_diagonal, jvp_extract_diagonal, vjp_extract_diagonal);
  set(OpId::embed_diagonal, jvp_embed_diagonal, vjp_embed_diagonal);
  set(OpId::tril, jvp_tril, vjp_tril);
  set(OpId::triu, jvp_triu, vjp_triu);
  set(OpId::reverse, jvp_reverse, vjp_reverse);
  set(OpId::pad, jvp_pad, vjp_pad);
  set(OpId::slice, jvp_slice, vjp_slice);
  set(OpId::concatenate, jvp_concatenate, vjp_concatenate);
  set(OpId::stack, jvp_stack, vjp_stack);
  set(OpId::dynamic_slice, jvp_dynamic_slice, vjp_dynamic_slice);
  set(OpId::dynamic_update_slice, jvp_dynamic_update_slice, vjp_dynamic_update_slice);
  set(OpId::gather, jvp_gather, vjp_gather);
  set(OpId::scatter, jvp_scatter, vjp_scatter);
}
}  // namespace detail

// ---------------------------------------------------------------- wrappers

EagerTensor transpose(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> perm) {
  return unary_node(ctx, OpId::transpose, T::transpose(ctx.session(), x.value(), perm), x, [&](Node& n) { n.set_attrs<PermuteAttrs>().perm = Dims(perm); });
}
EagerTensor broadcast_in_dim(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> shape,
                             std::span<const std::int64_t> broadcast_dimensions) {
  return unary_node(ctx, OpId::broadcast_in_dim, T::broadcast_in_dim(ctx.session(), x.value(), shape, broadcast_dimensions), x,
                    [&](Node& n) { n.set_attrs<BroadcastAttrs>().dims = Dims(broadcast_dimensions); });
}
EagerTensor extract_diagonal(Context& ctx, const EagerTensor& x, std::int64_t axis1, std::int64_t axis2) {
  return unary_node(ctx, OpId::extract_diagonal, T::extract_diagonal(ctx.session(), x.value(), axis1, axis2), x, [&](Node& n) {
    n.set_attrs(DiagonalAttrs{axis1, axis2});
  });
}
EagerTensor embed_diagonal(Context& ctx, const EagerTensor& x, std::int64_t axis1, std::int64_t axis2) {
  return unary_node(ctx, OpId::embed_diagonal, T::embed_diagonal(ctx.session(), x.value(), axis1, axis2), x, [&](Node& n) {
    n.set_attrs(DiagonalAttrs{axis1, axis2});
  });
}
EagerTensor tril(Context& ctx, const EagerTensor& x, std::int64_t offset) {
  return unary_node(ctx, OpId::tril, T::tril(ctx.session(), x.value(), offset), x, [&](Node& n) { n.set_attrs<TriangleAttrs>().offset = offset; });
}
EagerTensor triu(Context& ctx, const EagerTensor& x, std::int64_t offset) {
  return unary_node(ctx, OpId::triu, T::triu(ctx.session(), x.value(), offset), x, [&](Node& n) { n.set_attrs<TriangleAttrs>().offset = offset; });
}
EagerTensor reverse(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes) {
  return unary_node(ctx, OpId::reverse, T::reverse(ctx.session(), x.value(), axes), x, [&](Node& n) { n.set_attrs<AxesAttrs>().axes = Dims(axes); });
}
EagerTensor pad(Context& ctx, const EagerTensor& x, Scalar padding_value, std::span<const std::int64_t> low,
                std::span<const std::int64_t> high, std::span<const std::int64_t> interior) {
  return unary_node(ctx, OpId::pad, T::pad(ctx.session(), x.value(), padding_value, low, high, interior), x, [&](Node& n) {
    PadAttrs& a = n.set_attrs<PadAttrs>();
    a.low = Dims(low);
    a.high = Dims(high);
    a.interior = Dims(interior);
  });
}
EagerTensor slice(Context& ctx, const EagerTensor& x, const Dims& starts, const Dims& limits, const Dims& strides) {
  return unary_node(ctx, OpId::slice, T::slice(ctx.session(), x.value(), starts, limits, strides), x, [&](Node& n) {
    SliceAttrs& a = n.set_attrs<SliceAttrs>();
    a.starts = starts;
    a.limits = limits;
    a.strides = strides;
  });
}
EagerTensor concatenate(Context& ctx, std::span<const EagerTensor> xs, std::int64_t axis) {
  std::vector<Tensor> vals;
  vals.reserve(xs.size());
  for (const auto& x : xs) vals.push_back(x.value());
  Tensor y = T::concatenate(ctx.session(), vals, axis);
  return detail::finish_variadic(ctx, OpId::concatenate, std::move(y), xs, [&](Node& n) { n.set_attrs<AxisAttrs>().axis = norm_axis(axis, n.y[0].rank()); });
}
EagerTensor stack(Context& ctx, std::span<const EagerTensor> xs, std::int64_t axis) {
  std::vector<Tensor> vals;
  vals.reserve(xs.size());
  for (const auto& x : xs) vals.push_back(x.value());
  Tensor y = T::stack(ctx.session(), vals, axis);
  return detail::finish_variadic(ctx, OpId::stack, std::move(y), xs, [&](Node& n) { n.set_attrs<AxisAttrs>().axis = norm_axis(axis, n.y[0].rank()); });
}
EagerTensor dynamic_slice(Context& ctx, const EagerTensor& x, const Tensor& start_indices, const Dims& slice_sizes) {
  return unary_node(ctx, OpId::dynamic_slice, T::dynamic_slice(ctx.session(), x.value(), start_indices, slice_sizes), x,
                    [&](Node& n) {
                      n.ex().index = start_indices;
                      n.set_attrs<DynamicSliceAttrs>().slice_sizes = slice_sizes;
                    });
}
EagerTensor dynamic_update_slice(Context& ctx, const EagerTensor& x, const EagerTensor& update, const Tensor& start_indices) {
  Tensor y = T::dynamic_update_slice(ctx.session(), x.value(), update.value(), start_indices);
  return finish<2>(ctx, OpId::dynamic_update_slice, std::move(y), {&x, &update}, [&](Node& n) {
    n.x[0] = x.value();
    n.x[1] = update.value();
    n.ex().index = start_indices;
  });
}
EagerTensor gather(Context& ctx, const EagerTensor& operand, const Tensor& start_indices, const GatherDims& dims,
                   const Dims& slice_sizes) {
  return unary_node(ctx, OpId::gather, T::gather(ctx.session(), operand.value(), start_indices, dims, slice_sizes), operand,
                    [&](Node& n) {
                      auto& e = n.ex();
                      e.index = start_indices;
                      GatherAttrs& a = n.set_attrs<GatherAttrs>();
                      a.dims = dims;
                      a.slice_sizes = slice_sizes;
                    });
}
EagerTensor scatter(Context& ctx, const EagerTensor& operand, const Tensor& scatter_indices, const EagerTensor& updates,
                    const ScatterDims& dims, ScatterCombiner combiner) {
  Tensor y = T::scatter(ctx.session(), operand.value(), scatter_indices, updates.value(), dims, combiner);
  const bool diff = detail::differentiable(operand) || detail::differentiable(updates);
  if (diff && is_inexact(y.dtype()) && combiner != ScatterCombiner::add && combiner != ScatterCombiner::replace)
    throw UnsupportedAdRule("scatter", "no rule for the mul, min or max combiner (only add and replace)");
  return finish<2>(ctx, OpId::scatter, std::move(y), {&operand, &updates}, [&](Node& n) {
    n.x[0] = operand.value();
    n.x[1] = updates.value();
    auto& e = n.ex();
    e.index = scatter_indices;
    ScatterAttrs& a = n.set_attrs<ScatterAttrs>();
    a.dims = dims;
    a.combiner = combiner;
  });
}

}  // namespace tenferro::ad
