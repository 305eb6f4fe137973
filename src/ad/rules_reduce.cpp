// Differentiable reductions and BLAS-1 ops: wrappers, JVP and VJP rules.
// - sum/mean: the cotangent broadcast back (a read-only view: no copy).
// - prod: Note [prod with zeros]: the derivative of element i is the product of the
//   other elements of its slice, computed with prefix and suffix products (no division),
//   so zeros (even several) give exact results.
// - max/min: the cotangent is split equally among tied extrema (JAX's rule).
// - logsumexp, and the ops along one axis (cumsum, cumprod, softmax, log_softmax).
#include "ad/emit.hpp"
#include "ad/scan_util.hpp"
#include "ad/tape.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;
using namespace scan_util;

/// The node's reduction attributes; norm_squared (NoAttrs) reduces every axis.
const ReduceAttrs& reduce_attrs(const Node& n) noexcept {
  static const ReduceAttrs kAll{Dims(), true, false};
  const ReduceAttrs* a = std::get_if<ReduceAttrs>(&n.attrs);
  return a ? *a : kAll;
}

/// The reduced axes of node n (normalized, ascending) as a mask over x's axes.
std::uint64_t reduced_mask(const Node& n) {
  const int r = n.x[0].rank();
  if (reduce_attrs(n).all_axes) return r >= 64 ? ~0ull : ((1ull << r) - 1);
  std::uint64_t m = 0;
  for (std::int64_t a : reduce_attrs(n).axes) m |= 1ull << (a < 0 ? a + r : a);
  return m;
}

/// The reduced axes, ascending.
Dims reduced_axes(const Node& n) {
  const std::uint64_t m = reduced_mask(n);
  Dims a;
  for (int i = 0; i < n.x[0].rank(); ++i)
    if (m >> i & 1) a.push_back(i);
  return a;
}

/// A value of the reduction's output shape, viewed with x's rank (reduced axes kept
/// with extent 1).
Tensor keep_dims(Session& s, const Node& n, const Tensor& g) {
  if (reduce_attrs(n).keepdims || g.rank() == n.x[0].rank()) return g;
  const std::uint64_t m = reduced_mask(n);
  Shape k = n.x[0].shape();
  for (int i = 0; i < k.size(); ++i)
    if (m >> i & 1) k[i] = 1;
  return g.is_contiguous() ? g.reshape_view(k.span()) : T::reshape(s, g, k.span());
}
/// g broadcast back to x's shape (read-only view).
Tensor expand(Session& s, const Node& n, const Tensor& g) {
  return keep_dims(s, n, g).broadcast_view(n.x[0].shape().span());
}
/// The reduction of `t` over the node's axes, with the node's keepdims.
Tensor sum_like(Session& s, const Node& n, const Tensor& t) {
  if (reduce_attrs(n).all_axes) return T::sum(s, t);
  return T::sum(s, t, reduce_attrs(n).axes.span(), reduce_attrs(n).keepdims);
}

// A full sum of a small tensor hands on a compact owned cotangent rather than a
// broadcast view, so the rules upstream take the elementwise fast path and work in place
// (Note [In-place cotangents] in rules_elementwise.cpp); large inputs keep the free view.
constexpr std::int64_t kMaterializeSumCotangent = 4096;
void vjp_sum(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (g.numel() == 1 && n.x[0].numel() <= kMaterializeSumCotangent && is_inexact(g.dtype())) {
    out[0] = {detail::filled_like(s, n.x[0], g), true};  // Note [Eager emitter]
    return;
  }
  out[0] = {expand(s, n, g), false};
}
Tensor jvp_sum(Session& s, const Node& n, const Tensor* t) { return t[0].defined() ? sum_like(s, n, t[0]) : Tensor(); }

double mean_count(const Node& n) {
  const std::int64_t ny = n.y[0].numel();
  return ny == 0 ? 1.0 : static_cast<double>(n.x[0].numel()) / static_cast<double>(ny);
}
void vjp_mean(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {expand(s, n, T::div(s, g, mean_count(n))), false};
}
Tensor jvp_mean(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::div(s, sum_like(s, n, t[0]), mean_count(n)) : Tensor();
}

// sum_squares / norm_squared: y = Σ|x|^2, dy = 2 Σ Re(conj(x)·dx); vjp 2·g·x.
void vjp_sum_squares(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, T::mul(s, n.x[0], expand(s, n, g)), 2.0), true};
}
Tensor jvp_sum_squares(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  Tensor p = T::mul(s, detail::conj_if_complex(s, n.x[0]), t[0]);
  if (is_complex(p.dtype())) p = T::real(s, p);
  return T::mul(s, sum_like(s, n, p), 2.0);
}

// max/min: weights mask/count where mask marks the elements equal to the extremum.
// A slice whose extremum is NaN (max and min propagate NaN) weighs its NaN elements
// instead: the cotangent lands where the NaN came from (PyTorch's choice), split evenly
// among several.
Tensor extremum_weights(Session& s, const Node& n) {
  const Tensor& x = n.x[0];
  const Tensor ye = expand(s, n, n.y[0]);
  Tensor hit = T::select(s, T::ne(s, ye, ye), T::ne(s, x, x), T::eq(s, x, ye));
  Tensor mask = T::cast(s, hit, x.dtype());
  const Dims axes = reduced_axes(n);
  return T::div(s, mask, T::sum(s, mask, axes.span(), true));
}
void vjp_extremum(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, expand(s, n, g), extremum_weights(s, n)), true};
}
Tensor jvp_extremum(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? sum_like(s, n, T::mul(s, t[0], extremum_weights(s, n))) : Tensor();
}

// others[i] = Π_{j≠i} x[j] over each reduced slice: the reduced axes are moved first
// and flattened into one axis, then products_of_others (Note [prod with zeros]).
Tensor prod_others(Session& s, const Node& n) {
  const Tensor& x = n.x[0];
  const std::uint64_t m = reduced_mask(n);
  Dims perm, inv(x.rank(), 0), flat{1};
  for (int i = 0; i < x.rank(); ++i)
    if (m >> i & 1) {
      perm.push_back(i);
      flat[0] *= x.extent(i);
    }
  for (int i = 0; i < x.rank(); ++i)
    if (!(m >> i & 1)) {
      perm.push_back(i);
      flat.push_back(x.extent(i));
    }
  for (int i = 0; i < perm.size(); ++i) inv[static_cast<int>(perm[i])] = i;
  Tensor xp = T::transpose(s, x, perm.span());
  if (x.numel() == 0) return xp.permute_view(inv.span());
  Tensor others = products_of_others(s, T::reshape(s, xp, flat.span()), 0);
  return T::reshape(s, others, xp.shape().span()).permute_view(inv.span());
}
void vjp_prod(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, expand(s, n, g), detail::conj_if_complex(s, prod_others(s, n))), true};
}
Tensor jvp_prod(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? sum_like(s, n, T::mul(s, t[0], prod_others(s, n))) : Tensor();
}

// vdot(a, b) = Σ conj(a)·b: va = conj(g)·b, vb = g·a; jvp vdot(ta, b) + vdot(a, tb).
void vjp_vdot(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (n.in[0].kind) out[0] = {T::mul(s, n.x[1], detail::conj_if_complex(s, g)), true};
  if (n.in[1].kind) out[1] = {T::mul(s, n.x[0], g), true};
}
Tensor jvp_vdot(Session& s, const Node& n, const Tensor* t) {
  Tensor r;
  if (t[0].defined()) r = T::vdot(s, t[0], n.x[1]);
  if (t[1].defined()) r = detail::add_maybe(s, r, T::vdot(s, n.x[0], t[1]));
  return r;
}

// logsumexp: y = log Σ e^x; dy = Σ w·dx with w = e^(x - y) (the softmax weights).
Tensor lse_weights(Session& s, const Node& n) { return T::exp(s, T::sub(s, n.x[0], expand(s, n, n.y[0]))); }
void vjp_logsumexp(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, expand(s, n, g), lse_weights(s, n)), true};
}
Tensor jvp_logsumexp(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? sum_like(s, n, T::mul(s, t[0], lse_weights(s, n))) : Tensor();
}

// ---------------------------------------------------------------- along one axis
// The node keeps x, y and the axis (normalized) in i0.

/// The first-order linear recurrence h[k] = a[k]·h[k-1] + b[k] (h[-1] = 0) along
/// `axis`, by the Hillis–Steele parallel prefix scan over the affine maps h -> a·h + b
/// (composition (a1, b1) then (a2, b2) = (a1·a2, a2·b1 + b2); Blelloch, "Prefix sums and
/// their applications", 1990): ceil(log2 n) rounds of pad, mul and add ops, O(n log n)
/// work, no division. Example, n = 4: after round d = 1, B[k] = b[k] + a[k]·b[k-1];
/// after d = 2, B[3] = b[3] + a[3]·b[2] + a[3]·a[2]·b[1] + a[3]·a[2]·a[1]·b[0].
Tensor linear_recurrence(Session& s, Tensor a, Tensor b, std::int64_t axis) {
  const std::int64_t n = b.extent(static_cast<int>(axis));
  for (std::int64_t d = 1; d < n; d *= 2) {
    b = T::add(s, T::mul(s, a, shift(s, b, axis, d, 0.0)), b);
    if (2 * d < n) a = T::mul(s, a, shift(s, a, axis, d, 1.0));
  }
  return b;
}

void vjp_cumsum(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {flip(T::cumsum(s, flip(g, n.attr<AxisAttrs>().axis), n.attr<AxisAttrs>().axis), n.attr<AxisAttrs>().axis), false};
}
Tensor jvp_cumsum(Session& s, const Node& n, const Tensor* t) { return t[0].defined() ? T::cumsum(s, t[0], n.attr<AxisAttrs>().axis) : Tensor(); }

// cumprod: y[k] = y[k-1]·x[k]. Tangent: dy[k] = x[k]·dy[k-1] + e[k]·t[k] with the
// exclusive product e[k] = y[k-1] (e[0] = 1). Cotangent: gx[k] = conj(e[k])·r[k] with
// r[k] = g[k] + conj(x[k+1])·r[k+1] (r[n] = 0), the adjoint recurrence, run on the
// reversed axis. Neither divides by x, so zeros are exact (Note [prod with zeros]).
Tensor exclusive_prod(Session& s, const Node& n) { return shift(s, n.y[0], n.attr<AxisAttrs>().axis, 1, 1.0); }
void vjp_cumprod(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor next = detail::conj_if_complex(s, shift(s, n.x[0], n.attr<AxisAttrs>().axis, -1, 0.0));  // conj(x[k+1]), 0 at the end
  Tensor r = flip(linear_recurrence(s, flip(next, n.attr<AxisAttrs>().axis), flip(g, n.attr<AxisAttrs>().axis), n.attr<AxisAttrs>().axis), n.attr<AxisAttrs>().axis);
  out[0] = {T::mul(s, r, detail::conj_if_complex(s, exclusive_prod(s, n))), true};
}
Tensor jvp_cumprod(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  return linear_recurrence(s, n.x[0], T::mul(s, exclusive_prod(s, n), t[0]), n.attr<AxisAttrs>().axis);
}

/// Σ over the node's axis, kept with extent 1.
Tensor axis_sum(Session& s, const Node& n, const Tensor& t) {
  const std::int64_t ax[] = {n.attr<AxisAttrs>().axis};
  return T::sum(s, t, ax, true);
}
// softmax: dy = y·(dx - Σ y·dx); vjp y·(g - Σ g·y) (real dtypes: self-adjoint).
void vjp_softmax(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, n.y[0], T::sub(s, g, axis_sum(s, n, T::mul(s, g, n.y[0])))), true};
}
Tensor jvp_softmax(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::mul(s, n.y[0], T::sub(s, t[0], axis_sum(s, n, T::mul(s, t[0], n.y[0])))) : Tensor();
}
// log_softmax: dy = dx - Σ p·dx, p = e^y; vjp g - p·Σ g.
void vjp_log_softmax(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::sub(s, g, T::mul(s, T::exp(s, n.y[0]), axis_sum(s, n, g))), true};
}
Tensor jvp_log_softmax(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::sub(s, t[0], axis_sum(s, n, T::mul(s, T::exp(s, n.y[0]), t[0]))) : Tensor();
}

EagerTensor along_axis(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, std::int64_t axis) {
  return finish<1>(ctx, op, std::move(y), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    n.set_attrs<AxisAttrs>().axis = detail::norm_axis(axis, x.value().rank());
  });
}

EagerTensor reduction(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, std::span<const std::int64_t> axes, bool all,
                      bool keepdims) {
  return finish<1>(ctx, op, std::move(y), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    ReduceAttrs& a = n.set_attrs<ReduceAttrs>();
    a.axes.clear();  // a reused node keeps the list's storage
    for (const std::int64_t v : axes) a.axes.push_back(v);
    a.all_axes = all;
    a.keepdims = keepdims;
  });
}

}  // namespace

namespace detail {
void register_reduce_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  auto set = [&](OpId op, JvpRule j, VjpRule v) { t[static_cast<int>(op)] = {j, v}; };
  set(OpId::sum, jvp_sum, vjp_sum);
  set(OpId::mean, jvp_mean, vjp_mean);
  set(OpId::sum_squares, jvp_sum_squares, vjp_sum_squares);
  set(OpId::norm_squared, jvp_sum_squares, vjp_sum_squares);
  set(OpId::max, jvp_extremum, vjp_extremum);
  set(OpId::min, jvp_extremum, vjp_extremum);
  set(OpId::prod, jvp_prod, vjp_prod);
  set(OpId::vdot, jvp_vdot, vjp_vdot);
  set(OpId::logsumexp, jvp_logsumexp, vjp_logsumexp);
  set(OpId::cumsum, jvp_cumsum, vjp_cumsum);
  set(OpId::cumprod, jvp_cumprod, vjp_cumprod);
  set(OpId::softmax, jvp_softmax, vjp_softmax);
  set(OpId::log_softmax, jvp_log_softmax, vjp_log_softmax);
}
}  // namespace detail

#define TENFERRO_AD_REDUCTION(name)                                                                         \
  EagerTensor name(Context& ctx, const EagerTensor& x) {                                                    \
    return reduction(ctx, OpId::name, T::name(ctx.session(), x.value()), x, {}, true, false);               \
  }                                                                                                         \
  EagerTensor name(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims) { \
    return reduction(ctx, OpId::name, T::name(ctx.session(), x.value(), axes, keepdims), x, axes, false,    \
                     keepdims);                                                                             \
  }
TENFERRO_AD_REDUCTION(sum)
TENFERRO_AD_REDUCTION(prod)
TENFERRO_AD_REDUCTION(max)
TENFERRO_AD_REDUCTION(min)
TENFERRO_AD_REDUCTION(mean)
TENFERRO_AD_REDUCTION(sum_squares)
TENFERRO_AD_REDUCTION(logsumexp)
#undef TENFERRO_AD_REDUCTION

#define TENFERRO_AD_ALONG_AXIS(name)                                                   \
  EagerTensor name(Context& ctx, const EagerTensor& x, std::int64_t axis) {            \
    return along_axis(ctx, OpId::name, T::name(ctx.session(), x.value(), axis), x, axis); \
  }
TENFERRO_AD_ALONG_AXIS(cumsum)
TENFERRO_AD_ALONG_AXIS(cumprod)
TENFERRO_AD_ALONG_AXIS(softmax)
TENFERRO_AD_ALONG_AXIS(log_softmax)
#undef TENFERRO_AD_ALONG_AXIS

EagerTensor argmax(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims) {
  return EagerTensor(T::argmax(ctx.session(), x.value(), axes, keepdims));
}
EagerTensor argmin(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims) {
  return EagerTensor(T::argmin(ctx.session(), x.value(), axes, keepdims));
}

EagerTensor vdot(Context& ctx, const EagerTensor& a, const EagerTensor& b) {
  Tensor y = T::vdot(ctx.session(), a.value(), b.value());
  return finish<2>(ctx, OpId::vdot, std::move(y), {&a, &b}, [&](Node& n) {
    n.x[0] = a.value();
    n.x[1] = b.value();
  });
}
EagerTensor norm_squared(Context& ctx, const EagerTensor& x) {
  return finish<1>(ctx, OpId::norm_squared, T::norm_squared(ctx.session(), x.value()), {&x}, [&](Node& n) { n.x[0] = x.value(); });
}

}  // namespace tenferro::ad
