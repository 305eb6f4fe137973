// Graph transforms: vjp, jvp and grad by replaying a graph through eager AD on a trace
// session (Note [Graph transforms]).
//
// Note [Graph transforms]
// A transform traces a new graph: its function replays every node of the old one
// through the differentiable ops of an ad::Context bound to the trace session, then
// asks that context for the derivative (backward for vjp and grad, forward-mode
// tangents for jvp). The rules are the eager ones (src/ad): they call public ops, which
// on a trace session record nodes, so the derivative is itself a graph, and transforms
// compose to any order (jvp(grad(f)) is a Hessian-vector product). Inactive paths
// record nothing (eager AD records only ops whose inputs require gradients); an input
// nothing depends on gets a zero cotangent.
// Replaying a node:
//  - elementwise, analytic, reductions, scans, dot_general: the ad op of the node's op
//    on the node's operands (scalars as scalars; dot_general with alpha and beta as a
//    product, a scale and an accumulation of the value the buffer held);
//  - tril, triu and the FFTs: their ad ops (an FFT as its n-dimensional form over the
//    resolved axes and lengths); a linear-algebra call node: its op's
//    differentiable form (Note [Linear algebra in graphs] in trace_calls.cpp);
//  - conversion and structural copies: the kernel copies its operand, broadcast to the
//    output's shape, into the output's dtype: a cast and a broadcast_in_dim;
//  - a window of a value (a view): the equivalent chain of real/imag, extract_diagonal,
//    slice, reshape, transpose, reverse and broadcast_in_dim (decompose_window); a
//    window no such chain describes throws UnsupportedAdRule naming "graph.view";
//  - a kernel that writes a window of its buffer: the result placed by the adjoint
//    chain (scatter_window: zero padding for slices, embed_diagonal for diagonals, the
//    inverse permutation for transposes); a partial write (pad, concatenate, stack,
//    embed_diagonal, an `_into` a view) is prev + scatter(r − prev's window), linear
//    in both, so its derivatives are the chain's own.
#include <algorithm>
#include <numeric>

#include "runtime/graph_ir.hpp"
#include "runtime/trace.hpp"
#include "tenferro/ad.hpp"

namespace tenferro::graph {

namespace detail {

namespace {

using ad::Context;
using ad::EagerTensor;

/// One step of a window's chain.
struct ViewStep {
  enum class Kind : std::uint8_t { real, imag, slice, reshape, transpose, reverse, broadcast, diagonal };
  Kind kind;
  Dims a, b, c;  ///< slice: starts, limits, strides; reshape/broadcast: the new shape (broadcast: b = dims); transpose: perm; reverse: axes; diagonal: its two axes
  Dims from;     ///< the shape before the step
};

[[noreturn]] void not_expressible(const Layout& w, const Dims& base) {
  throw UnsupportedAdRule("graph.view", "the window {offset = " + std::to_string(w.offset) + ", extents = " + w.extents.to_string() +
                                            ", strides = " + w.strides.to_string() + "} of a " + base.to_string() +
                                            " value is not a slice, reshape, transpose, reverse, diagonal or broadcast of it");
}

/// Column-major strides of a compact `shape`.
Dims compact_strides(const Dims& shape) {
  Dims st(shape.size(), 1);
  for (int i = 1; i < shape.size(); ++i) st[i] = st[i - 1] * shape[i - 1];
  return st;
}

std::vector<ViewStep> decompose_window(const Dims& base, DType dt, Layout w);

/// When a window axis steps along a diagonal (by the sum of the strides of two base axes
/// of its extent, from their first element), the chain that starts with extract_diagonal
/// of those axes: the rest of the window is re-expressed over the diagonal's result (the
/// two axes removed, the diagonal last) and decomposed from there. Empty otherwise.
std::vector<ViewStep> diagonal_chain(const Dims& shape, DType dt, const Layout& w) {
  const Dims cst = compact_strides(shape);
  const int n = w.extents.size();
  for (int j = 0; j < n; ++j) {
    if (w.extents[j] <= 1 || w.strides[j] <= 0) continue;
    for (int i1 = 0; i1 < shape.size(); ++i1)
      for (int i2 = i1 + 1; i2 < shape.size(); ++i2) {
        if (shape[i1] != w.extents[j] || shape[i2] != w.extents[j] || cst[i1] + cst[i2] != w.strides[j]) continue;
        std::int64_t check = 0;
        Dims starts(shape.size(), 0);
        for (int i = 0; i < shape.size(); ++i) {
          starts[i] = (w.offset / cst[i]) % shape[i];
          check += starts[i] * cst[i];
        }
        if (check != w.offset || starts[i1] != 0 || starts[i2] != 0) continue;
        Dims rest, pos(shape.size(), -1);
        for (int i = 0; i < shape.size(); ++i)
          if (i != i1 && i != i2) {
            pos[i] = rest.size();
            rest.push_back(shape[i]);
          }
        rest.push_back(w.extents[j]);
        const Dims ncst = compact_strides(rest);
        Layout nw = w;
        nw.offset = 0;
        for (int i = 0; i < shape.size(); ++i)
          if (pos[i] >= 0) nw.offset += starts[i] * ncst[static_cast<int>(pos[i])];
        bool ok = true;
        for (int k = 0; k < n && ok; ++k) {
          if (k == j) {
            nw.strides[k] = ncst[rest.size() - 1];
            continue;
          }
          const std::int64_t st = w.strides[k], a = st < 0 ? -st : st;
          if (w.extents[k] <= 1 || a == 0) {
            nw.strides[k] = 0;
            continue;
          }
          int best = -1;
          for (int i = 0; i < shape.size(); ++i)
            if (pos[i] >= 0 && cst[i] <= a && a % cst[i] == 0 && (best < 0 || cst[i] > cst[best])) best = i;
          ok = best >= 0;
          if (ok) nw.strides[k] = (st < 0 ? -1 : 1) * (a / cst[best]) * ncst[static_cast<int>(pos[best])];
        }
        if (!ok) continue;
        std::vector<ViewStep> steps{{ViewStep::Kind::diagonal, Dims{i1, i2}, {}, {}, shape}};
        const std::vector<ViewStep> more = decompose_window(rest, dt, nw);
        steps.insert(steps.end(), more.begin(), more.end());
        return steps;
      }
  }
  return {};
}

/// The chain of structural ops that reads window `w` of a compact value of shape `base`
/// and dtype `dt` (Note [Graph transforms]).
std::vector<ViewStep> decompose_window(const Dims& base, DType dt, Layout w) {
  std::vector<ViewStep> steps;
  Dims shape = base;
  if (w.dtype != dt) {  // a real or imaginary part of a complex value
    if (!is_complex(dt) || w.dtype != real_dtype(dt)) not_expressible(w, base);
    const bool imag = (w.offset & 1) != 0;
    for (int i = 0; i < w.strides.size(); ++i)
      if (w.extents[i] > 1 && (w.strides[i] & 1) != 0) not_expressible(w, base);
    steps.push_back({imag ? ViewStep::Kind::imag : ViewStep::Kind::real, {}, {}, {}, shape});
    w.offset = (w.offset - (imag ? 1 : 0)) / 2;
    for (int i = 0; i < w.strides.size(); ++i) w.strides[i] /= 2;
    w.dtype = dt;
  }
  const int n = w.extents.size();
  // A compact window of another shape: a reshape.
  if (w.offset == 0 && is_compact_full(w) && numel_of(w.extents) == numel_of(shape)) {
    if (!(w.extents == shape)) steps.push_back({ViewStep::Kind::reshape, w.extents, {}, {}, shape});
    return steps;
  }
  // Refine the base's axes at the window's stride boundaries (a reshape), so that each
  // stepping window axis can land on an axis of its own: [32] read as [16, 2]^T is the
  // transpose of [2, 16]. The window's ends (stride × extent) are cuts too when they
  // keep the chain of cuts dividing ([3, 4] strides [1, 3] of an [18] buffer: a slice of
  // [3, 6] cuts at 1, 3 and 18 only).
  for (const bool ends : {true, false}) {
    const std::int64_t total = numel_of(shape);
    std::vector<std::int64_t> cuts = {1, total};
    std::int64_t c = 1;
    for (int i = 0; i < shape.size(); ++i) cuts.push_back(c *= shape[i]);
    for (int j = 0; j < n; ++j) {
      const std::int64_t a = w.strides[j] < 0 ? -w.strides[j] : w.strides[j];
      if (w.extents[j] <= 1 || a == 0) continue;
      cuts.push_back(a);
      if (ends && a <= total / w.extents[j]) cuts.push_back(a * w.extents[j]);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    bool chain = total > 0 && cuts.back() == total;
    for (std::size_t k = 1; chain && k < cuts.size(); ++k) chain = cuts[k] % cuts[k - 1] == 0;
    if (!chain) continue;
    Dims refined;
    for (std::size_t k = 1; k < cuts.size(); ++k) refined.push_back(cuts[k] / cuts[k - 1]);
    if (!(refined == shape)) {
      steps.push_back({ViewStep::Kind::reshape, refined, {}, {}, shape});
      shape = refined;
    }
    break;
  }
  if (std::vector<ViewStep> d = diagonal_chain(shape, dt, w); !d.empty()) {
    steps.insert(steps.end(), d.begin(), d.end());
    return steps;
  }
  const Dims cst = compact_strides(shape);  // base strides
  // Stepping axes (extent > 1, stride != 0), reversed ones flipped.
  std::int64_t o = w.offset;
  std::vector<int> stepping;
  Dims rev_axes;
  Dims st = w.strides;
  for (int j = 0; j < n; ++j) {
    if (w.extents[j] <= 1 || st[j] == 0) continue;
    if (st[j] < 0) {
      o += (w.extents[j] - 1) * st[j];
      st[j] = -st[j];
      rev_axes.push_back(j);
    }
    stepping.push_back(j);
  }
  // Match each stepping axis with a base axis (largest base stride dividing it).
  std::sort(stepping.begin(), stepping.end(), [&](int a, int b) { return st[a] > st[b]; });
  std::vector<int> axis_of(static_cast<std::size_t>(n), -1);
  std::vector<char> used(static_cast<std::size_t>(shape.size()), 0);
  Dims starts(shape.size(), 0), limits(shape.size(), 0), steps_(shape.size(), 1);
  for (int i = 0; i < shape.size(); ++i) starts[i] = shape[i] > 0 ? (o / cst[i]) % shape[i] : 0;
  {
    std::int64_t check = 0;
    for (int i = 0; i < shape.size(); ++i) check += starts[i] * cst[i];
    if (check != o) not_expressible(w, base);
  }
  for (int j : stepping) {
    int best = -1;
    for (int i = shape.size() - 1; i >= 0; --i)
      if (!used[static_cast<std::size_t>(i)] && shape[i] > 1 && cst[i] <= st[j] && st[j] % cst[i] == 0 &&
          starts[i] + (w.extents[j] - 1) * (st[j] / cst[i]) < shape[i]) {
        best = i;
        break;
      }
    if (best < 0) not_expressible(w, base);
    used[static_cast<std::size_t>(best)] = 1;
    axis_of[static_cast<std::size_t>(j)] = best;
    steps_[best] = st[j] / cst[best];
  }
  for (int i = 0; i < shape.size(); ++i) {
    limits[i] = starts[i] + 1;
    for (int j = 0; j < n; ++j)
      if (axis_of[static_cast<std::size_t>(j)] == i) limits[i] = starts[i] + (w.extents[j] - 1) * steps_[i] + 1;
  }
  bool identity_slice = true;
  for (int i = 0; i < shape.size(); ++i) identity_slice = identity_slice && starts[i] == 0 && limits[i] == shape[i] && steps_[i] == 1;
  Dims sliced(shape.size(), 1);
  for (int i = 0; i < shape.size(); ++i) sliced[i] = (limits[i] - starts[i] + steps_[i] - 1) / steps_[i];
  if (!identity_slice) {
    steps.push_back({ViewStep::Kind::slice, starts, limits, steps_, shape});
    shape = sliced;
  }
  // Keep the matched base axes (in base order), then order them as the window's axes.
  std::vector<int> kept;  // base axes in order
  for (int i = 0; i < shape.size(); ++i)
    if (used[static_cast<std::size_t>(i)]) kept.push_back(i);
  Dims kept_shape;
  for (int i : kept) kept_shape.push_back(shape[i]);
  if (!(kept_shape == shape)) {
    steps.push_back({ViewStep::Kind::reshape, kept_shape, {}, {}, shape});
    shape = kept_shape;
  }
  // Window axes in order (stepping ones only): the permutation of the kept axes.
  std::vector<int> order;
  for (int j = 0; j < n; ++j)
    if (axis_of[static_cast<std::size_t>(j)] >= 0) order.push_back(j);
  Dims perm;
  for (int j : order) perm.push_back(std::find(kept.begin(), kept.end(), axis_of[static_cast<std::size_t>(j)]) - kept.begin());
  bool identity_perm = true;
  for (int k = 0; k < perm.size(); ++k) identity_perm = identity_perm && perm[k] == k;
  if (!identity_perm) {
    Dims next;
    for (int k = 0; k < perm.size(); ++k) next.push_back(shape[static_cast<int>(perm[k])]);
    steps.push_back({ViewStep::Kind::transpose, perm, {}, {}, shape});
    shape = next;
  }
  if (rev_axes.size() > 0) {
    Dims axes;
    for (int k = 0; k < static_cast<int>(order.size()); ++k)
      for (int r = 0; r < rev_axes.size(); ++r)
        if (rev_axes[r] == order[static_cast<std::size_t>(k)]) axes.push_back(k);
    steps.push_back({ViewStep::Kind::reverse, axes, {}, {}, shape});
  }
  // Extent-1 and broadcast axes back in: a reshape inserting 1s, a broadcast stretching.
  Dims with_ones;
  bool broadcast = false;
  for (int j = 0; j < n; ++j) {
    const bool steps_here = axis_of[static_cast<std::size_t>(j)] >= 0;
    with_ones.push_back(steps_here ? w.extents[j] : 1);
    broadcast = broadcast || (!steps_here && w.extents[j] != 1);
  }
  if (!(with_ones == shape)) {
    steps.push_back({ViewStep::Kind::reshape, with_ones, {}, {}, shape});
    shape = with_ones;
  }
  if (broadcast) {
    Dims dims;
    for (int j = 0; j < n; ++j) dims.push_back(j);
    steps.push_back({ViewStep::Kind::broadcast, w.extents, dims, {}, shape});
  }
  return steps;
}

EagerTensor apply_step(Context& ctx, const EagerTensor& x, const ViewStep& s) {
  switch (s.kind) {
    case ViewStep::Kind::real: return ad::real(ctx, x);
    case ViewStep::Kind::imag: return ad::imag(ctx, x);
    case ViewStep::Kind::slice: return ad::slice(ctx, x, s.a, s.b, s.c);
    case ViewStep::Kind::reshape: return ad::reshape(ctx, x, s.a.span());
    case ViewStep::Kind::transpose: return ad::transpose(ctx, x, s.a.span());
    case ViewStep::Kind::reverse: return ad::reverse(ctx, x, s.a.span());
    case ViewStep::Kind::broadcast: return ad::broadcast_in_dim(ctx, x, s.a.span(), s.b.span());
    case ViewStep::Kind::diagonal: return ad::extract_diagonal(ctx, x, s.a[0], s.a[1]);
  }
  return x;
}

/// The window `w` of a value x of shape `base`, read as a chain of differentiable ops.
EagerTensor read_window(Context& ctx, EagerTensor x, const Dims& base, DType dt, const Layout& w) {
  for (const ViewStep& s : decompose_window(base, dt, w)) x = apply_step(ctx, x, s);
  return x;
}

/// The value of shape `base` that holds r in its window `w` and zeros elsewhere (the
/// adjoint chain of read_window: slices become zero padding, diagonals embedded ones,
/// real and imaginary parts complex values). A window that is not a chain of slices,
/// reshapes, transposes, reversals, diagonals and parts throws UnsupportedAdRule naming op.
EagerTensor scatter_window(Context& ctx, const EagerTensor& r, const Dims& base, DType dt, const Layout& w, OpId op) {
  const std::vector<ViewStep> steps = decompose_window(base, dt, w);
  EagerTensor x = r;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    switch (it->kind) {
      case ViewStep::Kind::reshape: x = ad::reshape(ctx, x, it->from.span()); break;
      case ViewStep::Kind::transpose: {
        Dims inv(it->a.size(), 0);
        for (int k = 0; k < it->a.size(); ++k) inv[static_cast<int>(it->a[k])] = k;
        x = ad::transpose(ctx, x, inv.span());
        break;
      }
      case ViewStep::Kind::reverse: x = ad::reverse(ctx, x, it->a.span()); break;
      case ViewStep::Kind::diagonal: x = ad::embed_diagonal(ctx, x, it->a[0], it->a[1]); break;
      case ViewStep::Kind::slice: {
        Dims low = it->a, high, interior;
        for (int i = 0; i < it->from.size(); ++i) {
          const std::int64_t n = x.shape()[i];
          const std::int64_t last = n > 0 ? it->a[i] + (n - 1) * it->c[i] : it->a[i] - 1;
          high.push_back(it->from[i] - 1 - last);
          interior.push_back(it->c[i] - 1);
        }
        x = ad::pad(ctx, x, Scalar(0.0), low.span(), high.span(), interior.span());
        break;
      }
      case ViewStep::Kind::real: x = ad::cast(ctx, x, dt); break;
      case ViewStep::Kind::imag: x = ad::mul(ctx, ad::cast(ctx, x, dt), Scalar(std::complex<double>(0.0, 1.0))); break;
      case ViewStep::Kind::broadcast:
        throw UnsupportedAdRule(op_name(op), "writes a broadcast window of its output buffer: not differentiable in a graph");
    }
  }
  return x;
}

std::vector<std::int64_t> axes_of(std::uint64_t mask) {
  std::vector<std::int64_t> axes;
  for (int i = 0; i < 64; ++i)
    if (mask >> i & 1u) axes.push_back(i);
  return axes;
}

/// An elementwise operand: the value or the node's scalar.
ad::AdOperand operand(const Node& n, int k, const std::vector<EagerTensor>& vals) {
  if (n.ins[k] < 0) return ad::AdOperand(n.scalars[k]);
  return ad::AdOperand(vals[static_cast<std::size_t>(n.ins[k])]);
}

EagerTensor replay_elementwise(Context& ctx, const Node& n, const std::vector<EagerTensor>& vals) {
  const ad::AdOperand a = operand(n, 0, vals);
  auto tensor = [&](int k) -> const EagerTensor& { return vals[static_cast<std::size_t>(n.ins[k])]; };
  switch (n.op) {
#define TENFERRO_REPLAY_UNARY(name) \
  case OpId::name: return ad::name(ctx, tensor(0));
#define TENFERRO_REPLAY_BINARY(name) \
  case OpId::name: return ad::name(ctx, a, operand(n, 1, vals));
    TENFERRO_REPLAY_UNARY(neg) TENFERRO_REPLAY_UNARY(conj) TENFERRO_REPLAY_UNARY(abs) TENFERRO_REPLAY_UNARY(sign)
    TENFERRO_REPLAY_UNARY(real) TENFERRO_REPLAY_UNARY(imag) TENFERRO_REPLAY_UNARY(angle)
    TENFERRO_REPLAY_BINARY(add) TENFERRO_REPLAY_BINARY(sub) TENFERRO_REPLAY_BINARY(mul) TENFERRO_REPLAY_BINARY(div)
    TENFERRO_REPLAY_BINARY(rem) TENFERRO_REPLAY_BINARY(maximum) TENFERRO_REPLAY_BINARY(minimum) TENFERRO_REPLAY_BINARY(pow)
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_REPLAY_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_REPLAY_BINARY
#undef TENFERRO_REPLAY_UNARY
    case OpId::compare: return ad::compare(ctx, a, operand(n, 1, vals), n.cmp);
    case OpId::select: return ad::select(ctx, a, operand(n, 1, vals), operand(n, 2, vals));
    case OpId::clamp: return ad::clamp(ctx, a, operand(n, 1, vals), operand(n, 2, vals));
    default: break;
  }
  throw UnsupportedAdRule(op_name(n.op), "no replay of this elementwise op in a graph transform");
}

EagerTensor replay_reduce(Context& ctx, const Node& n, const EagerTensor& x, int out_rank) {
  const std::vector<std::int64_t> axes = axes_of(n.mask);
  const bool keep = out_rank == x.rank() && !axes.empty();
  switch (n.op) {
#define TENFERRO_REPLAY_REDUCE(name) \
  case OpId::name: return ad::name(ctx, x, axes, keep);
    TENFERRO_REPLAY_REDUCE(sum) TENFERRO_REPLAY_REDUCE(prod) TENFERRO_REPLAY_REDUCE(max) TENFERRO_REPLAY_REDUCE(min)
    TENFERRO_REPLAY_REDUCE(mean) TENFERRO_REPLAY_REDUCE(sum_squares) TENFERRO_REPLAY_REDUCE(logsumexp)
#undef TENFERRO_REPLAY_REDUCE
    case OpId::argmax: return ad::argmax(ctx, x, axes, keep);
    case OpId::argmin: return ad::argmin(ctx, x, axes, keep);
    case OpId::norm_squared: return ad::norm_squared(ctx, x);
    default: break;
  }
  throw UnsupportedAdRule(op_name(n.op), "no replay of this reduction in a graph transform");
}

EagerTensor replay_axis(Context& ctx, const Node& n, const EagerTensor& x) {
  switch (n.op) {
    case OpId::cumsum: return ad::cumsum(ctx, x, n.axis);
    case OpId::cumprod: return ad::cumprod(ctx, x, n.axis);
    case OpId::softmax: return ad::softmax(ctx, x, n.axis);
    case OpId::log_softmax: return ad::log_softmax(ctx, x, n.axis);
    default: break;
  }
  throw UnsupportedAdRule(op_name(n.op), "no replay of this op in a graph transform");
}

/// The kernel's result (the window it writes) of node n.
EagerTensor replay_node(Context& ctx, const GraphData& g, const Node& n, const std::vector<EagerTensor>& vals) {
  auto in = [&](int k) -> const EagerTensor& { return vals[static_cast<std::size_t>(n.ins[k])]; };
  switch (n.kind) {
    case NodeKind::unary:
    case NodeKind::binary:
    case NodeKind::ternary: return replay_elementwise(ctx, n, vals);
    case NodeKind::reduce: return replay_reduce(ctx, n, in(0), n.out_view.extents.size());
    case NodeKind::along_axis: return replay_axis(ctx, n, in(0));
    case NodeKind::triangle: return n.op == OpId::tril ? ad::tril(ctx, in(0), n.offset) : ad::triu(ctx, in(0), n.offset);
    case NodeKind::fft: {
      FftnOptions o;
      for (int a = 0; a < n.fft->naxes; ++a) {
        o.axes.push_back(n.fft->axes[a]);
        o.n.push_back(n.fft->len[a]);
      }
      o.norm = n.fft->norm;
      o.planner = n.fft->measure ? FftPlanner::measure : FftPlanner::estimate;
      switch (n.fft->kind) {
        case tenferro::detail::FftKind::c2c_forward: return ad::fftn(ctx, in(0), o);
        case tenferro::detail::FftKind::c2c_backward: return ad::ifftn(ctx, in(0), o);
        case tenferro::detail::FftKind::r2c: return ad::rfftn(ctx, in(0), o);
        case tenferro::detail::FftKind::c2r: return ad::irfftn(ctx, in(0), o);
      }
      break;
    }
    case NodeKind::gather: return ad::gather(ctx, in(0), in(1).value(), n.index->gather, n.index->slice_sizes);  // the indices are constants
    case NodeKind::scatter: return ad::scatter(ctx, in(0), in(1).value(), in(2), n.index->scatter, n.index->combiner);
    case NodeKind::vdot: return ad::vdot(ctx, in(0), in(1));
    case NodeKind::axpby: {  // α·x + β·(y's previous value, read through the window written)
      const Value& prev = g.values[static_cast<std::size_t>(n.init_from)];
      const EagerTensor y = read_window(ctx, vals[static_cast<std::size_t>(n.init_from)], prev.shape, prev.dtype, n.out_view);
      return ad::axpby(ctx, n.scalars[0], in(0), n.scalars[1], y);
    }
    case NodeKind::iota: return EagerTensor(iota(ctx.session(), n.out_view.extents.span(), n.out_view.dtype, n.axis));  // a constant
    case NodeKind::window: return ad::dynamic_slice(ctx, in(0), in(1).value(), n.out_view.extents);  // the starts are constants
    case NodeKind::update_window: return ad::dynamic_update_slice(ctx, in(0), in(1), in(2).value());
    case NodeKind::take:  // the indices are constants
      return n.op == OpId::take_along_axis ? ad::take_along_axis(ctx, in(0), in(1).value(), n.axis)
                                           : ad::index_select(ctx, in(0), n.axis, in(1).value());
    case NodeKind::call: break;  // replay() replays call nodes
    case NodeKind::convert: {
      EagerTensor x = in(0);
      if (x.dtype() != n.out_view.dtype) x = n.op == OpId::convert ? ad::convert(ctx, x, n.out_view.dtype) : ad::cast(ctx, x, n.out_view.dtype);
      if (!(x.shape() == Shape(n.out_view.extents.span()))) {
        Dims dims;
        for (int i = 0; i < x.rank(); ++i) dims.push_back(i);
        x = ad::broadcast_in_dim(ctx, x, n.out_view.extents.span(), dims.span());
      }
      return x;
    }
    case NodeKind::dot: {
      EagerTensor r = ad::dot_general(ctx, in(0), in(1), n.dot->dims);
      const std::complex<double> alpha = n.dot->alpha.to<std::complex<double>>();
      if (alpha != std::complex<double>(1.0)) r = ad::mul(ctx, r, n.dot->alpha);
      if (n.init_from >= 0) {  // beta · (the value the buffer held), read through the same window
        const Value& prev = g.values[static_cast<std::size_t>(n.init_from)];
        const EagerTensor old = read_window(ctx, vals[static_cast<std::size_t>(n.init_from)], prev.shape, prev.dtype, n.out_view);
        r = ad::add(ctx, r, ad::mul(ctx, old, n.dot->beta));
      }
      return r;
    }
  }
  throw UnsupportedAdRule(op_name(n.op), "no replay in a graph transform");
}

}  // namespace

/// Every value of `g` computed with the differentiable ops on `ctx` from `xs` (one per
/// input); returns the results.
std::vector<EagerTensor> replay(Context& ctx, const GraphData& g, std::span<const EagerTensor> xs) {
  std::vector<EagerTensor> vals(g.values.size());
  // A node of a checkpointed segment records its replay in that segment (a
  // recomputation's replay in none: Note [Checkpoints]).
  tenferro::detail::TraceRecorder& rec = tenferro::detail::recorder(ctx.session());
  const tenferro::detail::SegmentScope restore(rec);
  for (std::size_t id = 0; id < g.values.size(); ++id) {
    const Value& v = g.values[id];
    switch (v.kind) {
      case Value::Kind::input: vals[id] = xs[static_cast<std::size_t>(v.input)]; break;
      case Value::Kind::constant: vals[id] = EagerTensor(v.constant); break;
      case Value::Kind::view: {
        const Value& b = g.values[static_cast<std::size_t>(v.base)];
        vals[id] = read_window(ctx, vals[static_cast<std::size_t>(v.base)], b.shape, b.dtype, v.window);
        break;
      }
      case Value::Kind::buffer: {
        const Node& n = g.nodes[static_cast<std::size_t>(v.producer)];
        rec.segment = n.segment > 0 ? n.segment : restore.outer;
        if (n.kind == NodeKind::call) {  // all its results at its first (Note [Linear algebra in graphs])
          if (n.out == static_cast<int>(id)) {
            const EagerTensor* ins[3] = {};
            for (int k = 0; k < n.num_ins; ++k) ins[k] = &vals[static_cast<std::size_t>(n.ins[k])];
            n.call->replay(ctx, ins, &vals[id]);
          }
          break;
        }
        const EagerTensor r = replay_node(ctx, g, n, vals);
        if (n.out_view == compact_layout(v.shape, v.dtype)) {
          vals[id] = r;
        } else if (n.init_from < 0 || (n.out_view.dtype == v.dtype && numel_of(n.out_view.extents) == numel_of(v.shape))) {
          // The window covers the buffer (a permutation; r already holds what an
          // accumulating dot_general read of it).
          vals[id] = scatter_window(ctx, r, v.shape, v.dtype, n.out_view, n.op);
        } else {  // a partial write: prev + scatter(r − prev's window)
          const EagerTensor& prev = vals[static_cast<std::size_t>(n.init_from)];
          const EagerTensor d = ad::sub(ctx, r, read_window(ctx, prev, v.shape, v.dtype, n.out_view));
          vals[id] = ad::add(ctx, prev, scatter_window(ctx, d, v.shape, v.dtype, n.out_view, n.op));
        }
        break;
      }
    }
  }
  std::vector<EagerTensor> out;
  out.reserve(g.outputs.size());
  for (int v : g.outputs) out.push_back(vals[static_cast<std::size_t>(v)]);
  return out;
}

}  // namespace detail

namespace {

std::vector<ValueSpec> specs_of(const detail::GraphData& g, const std::vector<int>& ids) {
  std::vector<ValueSpec> s;
  for (int v : ids) s.push_back({Shape(g.values[static_cast<std::size_t>(v)].shape.span()), g.values[static_cast<std::size_t>(v)].dtype});
  return s;
}

/// A zero tensor like x on the session's device (a traced broadcast of a host zero).
Tensor zeros_like(Session& s, const Tensor& x) {
  return broadcast_in_dim(s, Tensor::zeros({}, x.dtype()), x.shape().span(), std::span<const std::int64_t>());
}

/// Each leaf's gradient, or zeros like its input where nothing reached it.
void append_grads(Session& s, std::span<const ad::EagerTensor> xs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Tensor gk = xs[k].requires_grad() ? xs[k].grad() : Tensor();
    out.push_back(gk.defined() ? gk : zeros_like(s, in[k]));
  }
}

/// Leaves for the inexact inputs, constants for the others.
std::vector<ad::EagerTensor> leaves(ad::Context& ctx, std::span<const Tensor> xs) {
  std::vector<ad::EagerTensor> v;
  for (const Tensor& x : xs) v.push_back(is_inexact(x.dtype()) ? ctx.leaf(x, true) : ad::EagerTensor(x));
  return v;
}

}  // namespace

Graph vjp(const Graph& graph) {
  const detail::GraphData& g = graph.data();
  std::vector<ValueSpec> specs = specs_of(g, g.inputs);
  const std::vector<ValueSpec> cts = specs_of(g, g.outputs);
  specs.insert(specs.end(), cts.begin(), cts.end());
  const std::size_t n = g.inputs.size();
  std::size_t backward_start = 0;
  const Graph r = trace([&](Session& s, std::span<const Tensor> in) {
    ad::Context ctx(s);
    const std::vector<ad::EagerTensor> xs = leaves(ctx, in.subspan(0, n));
    const std::vector<ad::EagerTensor> ys = detail::replay(ctx, g, xs);
    std::vector<ad::EagerTensor> active;
    std::vector<Tensor> seeds;
    for (std::size_t j = 0; j < ys.size(); ++j)
      if (ys[j].requires_grad()) {
        active.push_back(ys[j]);
        seeds.push_back(in[n + j]);
      }
    backward_start = tenferro::detail::recorder(s).g.nodes.size();
    if (!active.empty()) ctx.backward(active, seeds);
    std::vector<Tensor> out;
    for (const ad::EagerTensor& y : ys) out.push_back(y.value());
    append_grads(s, xs, in.subspan(0, n), out);
    return out;
  }, specs);
  return detail::rematerialize(r, backward_start);
}

Graph jvp(const Graph& graph) {
  const detail::GraphData& g = graph.data();
  std::vector<ValueSpec> specs = specs_of(g, g.inputs);
  const std::size_t n = g.inputs.size();
  for (std::size_t k = 0; k < n; ++k) specs.push_back(specs[k]);
  return trace([&](Session& s, std::span<const Tensor> in) {
    ad::Context ctx(s);
    std::vector<ad::EagerTensor> xs;
    for (std::size_t k = 0; k < n; ++k)
      xs.push_back(is_inexact(in[k].dtype()) ? ctx.with_tangent(ad::EagerTensor(in[k]), in[n + k]) : ad::EagerTensor(in[k]));
    const std::vector<ad::EagerTensor> ys = detail::replay(ctx, g, xs);
    std::vector<Tensor> out;
    for (const ad::EagerTensor& y : ys) out.push_back(y.value());
    for (const ad::EagerTensor& y : ys) out.push_back(y.tangent().defined() ? y.tangent() : zeros_like(s, y.value()));
    return out;
  }, specs);
}

Graph grad(const Graph& graph) {
  const detail::GraphData& g = graph.data();
  if (g.outputs.size() != 1)
    throw ArgumentError("graph.grad", "the graph has " + std::to_string(g.outputs.size()) + " results; grad needs one real scalar (use vjp)");
  const detail::Value& y = g.values[static_cast<std::size_t>(g.outputs[0])];
  if (detail::numel_of(y.shape) != 1 || !is_floating(y.dtype))
    throw ShapeError("graph.grad", "the result is " + std::string(dtype_name(y.dtype)) + y.shape.to_string() + "; grad needs one real scalar (use vjp)");
  const std::vector<ValueSpec> specs = specs_of(g, g.inputs);
  std::size_t backward_start = 0;
  const Graph r = trace([&](Session& s, std::span<const Tensor> in) {
    ad::Context ctx(s);
    const std::vector<ad::EagerTensor> xs = leaves(ctx, in);
    const std::vector<ad::EagerTensor> ys = detail::replay(ctx, g, xs);
    backward_start = tenferro::detail::recorder(s).g.nodes.size();
    if (ys[0].requires_grad()) ctx.backward(ys[0]);
    std::vector<Tensor> out;
    append_grads(s, xs, in, out);
    return out;
  }, specs);
  return detail::rematerialize(r, backward_start);
}

}  // namespace tenferro::graph
