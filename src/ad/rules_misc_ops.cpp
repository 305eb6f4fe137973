// Differentiable axpby, take_along_axis, index_select and grouped_gemm (wrappers, JVP,
// VJP). Conventions: Note [Complex convention] (VJPs are adjoints of the R-linear JVPs
// under Re⟨a, b⟩ = Re Σ conj(a)·b); formulas and choices: docs/ad.md, "Rules: axpby,
// take_along_axis, index_select, grouped_gemm".
//
// Note [Functional in-place ops]: tenferro::axpby and tenferro::grouped_gemm write into
// an operand (y, each c). The tape needs that operand's old value (its cotangent is
// conj(β)·ḡ and, for the JVP, its tangent), and eager inputs are never mutated, so the
// differentiable forms are functional: the result is a fresh tensor initialised with a
// copy of y / c (skipped for grouped_gemm when β = 0, where BLAS does not read c) and
// the in-place kernel runs on it. grouped_gemm keeps its point, one kernel call for all
// items, and records one node per item (inputs a, b, c): the tape has single-output
// nodes, the items' results differ in shape and dtype (no packing, Note [Packed
// multi-output nodes]), and per-item nodes let backward skip items whose results do not
// reach the loss. Each node's VJP computes its ā and b̄ with one grouped_gemm call.
#include <complex>

#include "ad/emit.hpp"
#include "ad/tape.hpp"
#include "tenferro/error.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;

/// v as the forward applies it to a result of dtype d: a complex scalar with a zero
/// imaginary part (the only kind grouped_gemm accepts for a real c) becomes real, so
/// that scaling a real tangent by it stays real.
Scalar scalar_for(const Scalar& v, DType d) {
  return v.kind() == Scalar::Kind::complex && !is_complex(d) ? Scalar(v.to<c128>().real()) : v;
}


// ---- axpby: r = α·x + β·y (x converted to y's dtype). Linear in (x, y):
//   JVP α·dx + β·dy;   VJP x̄ = conj(α)·ḡ, ȳ = conj(β)·ḡ
// (the adjoint of z ↦ α·z under Re⟨·,·⟩ is w ↦ conj(α)·w; a real x receives the real
// part, which the accumulation takes).
Tensor jvp_axpby(Session& s, const Node& n, const Tensor* t) {
  if (!t[1].defined()) return t[0].defined() ? T::mul(s, t[0], n.attr<AxpbyAttrs>().alpha) : Tensor();
  Tensor r = T::mul(s, t[1], n.attr<AxpbyAttrs>().beta);  // fresh, y's dtype
  if (t[0].defined()) T::axpby(s, n.attr<AxpbyAttrs>().alpha, t[0], 1.0, r);
  return r;
}
void vjp_axpby(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (n.in[0].kind) out[0] = {T::mul(s, g, detail::conj_scalar(n.attr<AxpbyAttrs>().alpha)), true};
  if (n.in[1].kind) out[1] = {T::mul(s, g, detail::conj_scalar(n.attr<AxpbyAttrs>().beta)), true};
}

// Note [Index scatter-add]
// take_along_axis and index_select are gathers along one axis with constant indices, so
// their VJPs are scatter-adds of ḡ into zeros at the same indices: duplicates accumulate
// (JAX's transpose of gather; PyTorch's gather_backward / index_select_backward, which
// use scatter_add / index_add). tenferro::scatter skips out-of-range windows instead of
// wrapping, so indices in [-n, n) are first mapped to [0, n) by (i + n) rem n.
//  - take_along_axis: scatter_indices are the indices broadcast to ḡ's shape (a view),
//    one element per window, every other axis a batching axis. The zeros take ḡ's
//    extents off `axis`; where x has extent 1 there (broadcast against the indices), the
//    accumulation sums that axis back (unbroadcast).
//  - index_select: scatter_indices [K]; slice j of ḡ along `axis` is added into slab
//    indices[j] (a window of all other axes).
Tensor index_scatter_add(Session& s, const Tensor& g, const Tensor& indices, int axis, std::int64_t extent, bool batched) {
  Dims shape = g.shape();
  shape[axis] = extent;
  Tensor z = detail::zeros_on(s, shape.span(), g.dtype());
  if (g.numel() == 0) return z;
  Tensor idx = T::rem(s, T::add(s, indices, extent), extent);
  ScatterDims d;
  d.inserted_window_dims = {axis};
  d.scatter_dims_to_operand_dims = {axis};
  if (batched) {
    if (!detail::same_shape(idx, g)) idx = idx.broadcast_view(g.shape().span());
    d.index_vector_dim = g.rank();
    for (int a = 0; a < g.rank(); ++a)
      if (a != axis) {
        d.input_batching_dims.push_back(a);
        d.scatter_indices_batching_dims.push_back(a);
      }
  } else {
    d.index_vector_dim = 1;
    for (int a = 0; a < g.rank(); ++a)
      if (a != axis) d.update_window_dims.push_back(a);
  }
  T::scatter_inplace(s, z, idx, g, d, ScatterCombiner::add);
  return z;
}
// Both nodes: x[1] the indices, i0 the normalized axis, i1 x's extent along it.
Tensor jvp_take_along_axis(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::take_along_axis(s, t[0], n.x[1], n.attr<IndexAxisAttrs>().axis) : Tensor();
}
void vjp_take_along_axis(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {index_scatter_add(s, g, n.x[1], static_cast<int>(n.attr<IndexAxisAttrs>().axis), n.attr<IndexAxisAttrs>().extent, true), true};
}
Tensor jvp_index_select(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::index_select(s, t[0], n.attr<IndexAxisAttrs>().axis, n.x[1]) : Tensor();
}
void vjp_index_select(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {index_scatter_add(s, g, n.x[1], static_cast<int>(n.attr<IndexAxisAttrs>().axis), n.attr<IndexAxisAttrs>().extent, false), true};
}

// ---- grouped_gemm, one node per item: C = α·a'·b' + β·c with a' = op(a), b' = op(b)
// (op = conj when the flag, i0 bit 0 / bit 1, is set). Product rule (Giles 2008, §2.2.2,
// C = A·B: Ā = C̄·Bᵀ, B̄ = Aᵀ·C̄; complex: Hermitian transposes, Note [Complex convention]):
//   JVP dC = α·(op(da)·b' + a'·op(db)) + β·dc;
//   VJP ā' = conj(α)·ḡ·b'ᴴ, b̄' = conj(α)·a'ᴴ·ḡ, c̄ = conj(β)·ḡ.
// op is conjugation, whose adjoint is conjugation: ā = op(ā'), b̄ = op(b̄'). Written as
// products of ḡ with the saved operands (conj flags per factor):
//   ā = s_a·conj?(ḡ)·conj?(bᵀ) with s_a = conj_a ? α : conj(α), flags (conj_a, conj_a ≠ ¬conj_b);
//   b̄ = s_b·conj?(aᵀ)·conj?(ḡ) with s_b = conj_b ? α : conj(α), flags (conj_b ≠ ¬conj_a, conj_b).
// x[0] = a is saved only when b is differentiated and x[1] = b only when a is.
Tensor jvp_grouped_gemm(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined() && !t[1].defined() && !t[2].defined()) return {};
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  d.conj_lhs = n.attr<GemmAttrs>().conj_a;
  d.conj_rhs = n.attr<GemmAttrs>().conj_b;
  Tensor r;
  Scalar acc = 0.0;
  if (t[2].defined()) {
    r = T::mul(s, t[2], n.attr<GemmAttrs>().beta);
    acc = 1.0;
  } else {
    r = Tensor::empty(n.y[0].shape().span(), n.y[0].dtype());
  }
  if (t[0].defined()) {
    T::dot_general_into(s, t[0], n.x[1], d, r, n.attr<GemmAttrs>().alpha, acc);
    acc = 1.0;
  }
  if (t[1].defined()) T::dot_general_into(s, n.x[0], t[1], d, r, n.attr<GemmAttrs>().alpha, acc);
  return r;
}
void vjp_grouped_gemm(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const bool ca = n.attr<GemmAttrs>().conj_a, cb = n.attr<GemmAttrs>().conj_b;
  const Scalar alpha = n.attr<GemmAttrs>().alpha, conj_alpha = detail::conj_scalar(n.attr<GemmAttrs>().alpha);
  GemmItem items[2];
  int k = 0;
  Tensor bt, at, ga, gb;
  if (n.in[0].kind) {
    bt = n.x[1].permute_view({1, 0});
    const std::int64_t shape[] = {g.extent(0), bt.extent(1)};
    ga = Tensor::empty(shape, g.dtype());
    items[k++] = {&g, &bt, &ga, ca ? alpha : conj_alpha, 0.0, ca, ca != !cb};
  }
  if (n.in[1].kind) {
    at = n.x[0].permute_view({1, 0});
    const std::int64_t shape[] = {at.extent(0), g.extent(1)};
    gb = Tensor::empty(shape, g.dtype());
    items[k++] = {&at, &g, &gb, cb ? alpha : conj_alpha, 0.0, cb != !ca, cb};
  }
  if (k > 0) T::grouped_gemm(s, std::span<const GemmItem>(items, static_cast<std::size_t>(k)));
  if (n.in[0].kind) out[0] = {std::move(ga), true};
  if (n.in[1].kind) out[1] = {std::move(gb), true};
  if (n.in[2].kind) out[2] = {T::mul(s, g, detail::conj_scalar(n.attr<GemmAttrs>().beta)), true};
}

using detail::norm_axis;

}  // namespace

namespace detail {
void register_misc_ops_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  auto set = [&](OpId op, JvpRule j, VjpRule v) { t[static_cast<int>(op)] = {j, v}; };
  set(OpId::axpby, jvp_axpby, vjp_axpby);
  set(OpId::take_along_axis, jvp_take_along_axis, vjp_take_along_axis);
  set(OpId::index_select, jvp_index_select, vjp_index_select);
  set(OpId::grouped_gemm, jvp_grouped_gemm, vjp_grouped_gemm);
}
}  // namespace detail

// ---------------------------------------------------------------- wrappers

EagerTensor axpby(Context& ctx, Scalar alpha, const EagerTensor& x, Scalar beta, const EagerTensor& y) {
  Session& s = ctx.session();
  const Tensor& yv = y.value();
  if (!yv.defined()) throw ArgumentError("axpby", "y is undefined");
  Tensor r = detail::empty_on(s, yv.shape().span(), yv.dtype());  // Note [Functional in-place ops]
  T::copy_into(s, yv, r);
  T::axpby(s, alpha, x.value(), beta, r);
  return finish<2>(ctx, OpId::axpby, std::move(r), {&x, &y}, [&](Node& n) {
    n.set_attrs(AxpbyAttrs{alpha, beta});
  });
}

EagerTensor take_along_axis(Context& ctx, const EagerTensor& x, const Tensor& indices, std::int64_t axis) {
  Tensor y = T::take_along_axis(ctx.session(), x.value(), indices, axis);
  return finish<2>(ctx, OpId::take_along_axis, std::move(y), {&x, nullptr}, [&](Node& n) {
    n.x[1] = indices;
    const std::int64_t ax = norm_axis(axis, x.value().rank());
    n.set_attrs(IndexAxisAttrs{ax, x.value().extent(static_cast<int>(ax))});
  });
}

EagerTensor index_select(Context& ctx, const EagerTensor& x, std::int64_t axis, const Tensor& indices) {
  Tensor y = T::index_select(ctx.session(), x.value(), axis, indices);
  return finish<2>(ctx, OpId::index_select, std::move(y), {&x, nullptr}, [&](Node& n) {
    n.x[1] = indices;
    const std::int64_t ax = norm_axis(axis, x.value().rank());
    n.set_attrs(IndexAxisAttrs{ax, x.value().extent(static_cast<int>(ax))});
  });
}

std::vector<EagerTensor> grouped_gemm(Context& ctx, std::span<const AdGemmItem> items) {
  Session& s = ctx.session();
  std::vector<Tensor> outs(items.size());
  std::vector<GemmItem> gi(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const AdGemmItem& it = items[i];
    const Tensor& a = it.a.value();
    const Tensor& b = it.b.value();
    if (!a.defined() || !b.defined() || (it.c && !it.c->value().defined()))
      throw ArgumentError("grouped_gemm", "item " + std::to_string(i) + ": a, b and a given c must be defined");
    const bool use_c = it.c && it.beta.to<c128>() != c128(0.0);
    if (it.c) {
      // Note [Functional in-place ops]: a fresh result; c's values are needed only when
      // beta != 0 (BLAS does not read c otherwise).
      const Tensor& c = it.c->value();
      outs[i] = Tensor::empty(c.shape().span(), c.dtype());
      if (use_c) T::copy_into(s, c, outs[i]);
    } else {
      const std::int64_t shape[] = {a.rank() == 2 ? a.extent(0) : 0, b.rank() == 2 ? b.extent(1) : 0};
      outs[i] = Tensor::empty(shape, promote(a.dtype(), b.dtype()));
    }
    gi[i] = {&a, &b, &outs[i], it.alpha, use_c ? it.beta : Scalar(0.0), it.conj_a, it.conj_b};
  }
  // References are checked before the kernel runs, so a stale or foreign input leaves no
  // item recorded (finish would otherwise throw midway, after recording earlier items).
  if (detail::EagerAccess::no_grad(ctx) == 0)
    for (const AdGemmItem& it : items)
      for (const EagerTensor* e : {&it.a, &it.b, it.c ? &*it.c : nullptr}) (void)detail::input_ref(ctx, e, "grouped_gemm");
  T::grouped_gemm(s, gi);
  std::vector<EagerTensor> r;
  r.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const AdGemmItem& it = items[i];
    const DType yd = outs[i].dtype();
    r.push_back(finish<3>(ctx, OpId::grouped_gemm, std::move(outs[i]), {&it.a, &it.b, it.c ? &*it.c : nullptr}, [&](Node& n) {
      if (detail::differentiable(it.b)) n.x[0] = it.a.value();
      if (detail::differentiable(it.a)) n.x[1] = it.b.value();
      n.set_attrs(GemmAttrs{scalar_for(it.alpha, yd), scalar_for(it.beta, yd), it.conj_a, it.conj_b});
    }));
  }
  return r;
}

}  // namespace tenferro::ad
