// Differentiable elementwise, analytic and conversion ops: wrappers, JVP and VJP rules.
// Conventions: Note [Complex convention] (ad.hpp). For a holomorphic f with derivative
// d = f'(x): jvp(t) = t·d, vjp(g) = g·conj(d). Broadcasting and dtype promotion are
// undone by the runtime (detail::accumulate), so rules return cotangents of the
// output's shape.
#include <cmath>
#include <numbers>

#include "ad/emit.hpp"
#include "ad/tape.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;

// ---------------------------------------------------------------- helpers

void save(Node& n, int k, const AdOperand& a) {
  if (a.is_scalar())
    n.sx[k] = a.scalar();
  else
    n.x[k] = a.tensor();
}
/// Operand k of a binary/ternary node (tensor or scalar).
Operand opnd(const Node& n, int k) { return n.x[k].defined() ? Operand(n.x[k]) : Operand(n.sx[k]); }
/// conj(operand k): scalar conjugated on the host, tensor through conj when complex.
struct ConjOperand {
  Tensor t;
  Scalar sc;
  bool is_t = false;
  Operand get() const { return is_t ? Operand(t) : Operand(sc); }
};
ConjOperand conj_opnd(Session& s, const Node& n, int k) {
  ConjOperand c;
  if (n.x[k].defined()) {
    c.t = detail::conj_if_complex(s, n.x[k]);
    c.is_t = true;
  } else {
    c.sc = detail::conj_scalar(n.sx[k]);
  }
  return c;
}
bool wants(const Node& n, int k) { return n.in[k].kind != 0; }

// Note [In-place cotangents]: the sweep drops a node's accumulated cotangent right after
// its rule runs, so when the node owns it exclusively (cot_owned) the rule may write its
// last result into that buffer and hand it on as owned, instead of allocating a fresh
// one. Only when the result has the cotangent's dtype and shape (the other operand
// broadcasts into it) and the buffer is compact.
bool reusable(const Node& n, const Tensor& g, const Operand& other) {
  if (!n.cot_owned[0] || &g != &n.cot[0] || !g.is_contiguous() || g.read_only()) return false;
  if (!other.is_tensor()) return other.scalar().result_dtype_with(g.dtype()) == g.dtype();
  const Tensor& o = other.tensor();
  if (promote(g.dtype(), o.dtype()) != g.dtype() || o.rank() > g.rank() || g.shares_storage(o)) return false;
  for (int i = 0; i < o.rank(); ++i)
    if (o.extent(i) != g.extent(i) && o.extent(i) != 1) return false;
  return true;
}
/// The node's own cotangent handed on whole (moved out by the sweep).
Grad own_cot() { return {Tensor(), true, true}; }
/// g·other as a cotangent, in g's buffer when allowed (Note [In-place cotangents]).
Grad times(Session& s, const Node& n, const Tensor& g, const Operand& other, bool last) {
  if (last && reusable(n, g, other)) {
    if (other.is_tensor()) {
      T::mul_into(s, g, other, g);
    } else {
      detail::scale_in_place(s, g, other.scalar());  // Note [Eager emitter]
    }
    return own_cot();
  }
  return {T::mul(s, g, other), true};
}
/// The node's cotangent passed through unchanged to its only consumer: still owned.
Grad pass(const Node& n, const Tensor& g, bool only) {
  if (only && n.cot_owned[0] && &g == &n.cot[0]) return own_cot();
  return {g, false};
}

EagerTensor binary(Context& ctx, OpId op, Tensor&& y, const AdOperand& a, const AdOperand& b) {
  // add and sub rules need no operand values (the runtime takes shapes from the targets).
  // mul's rules read operand k only for the other operand's derivative: skip saving a
  // tensor nobody will read (y * 2.0 saves just the scalar).
  const bool linear = op == OpId::add || op == OpId::sub;
  auto active = [](const AdOperand& o) {
    return o.eager() && detail::differentiable(*o.eager());
  };
  return finish<2>(ctx, op, std::move(y), {a.eager(), b.eager()}, [&](Node& n) {
    if (linear) return;
    if (op != OpId::mul || active(b)) save(n, 0, a);
    if (op != OpId::mul || active(a)) save(n, 1, b);
  });
}
EagerTensor unary(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x) {
  return finish<1>(ctx, op, std::move(y), {&x}, [&](Node& n) { n.x[0] = x.value(); });
}

/// 0.5·(1 + sign(a - b)): 1 where a > b, 1/2 at ties, 0 where a < b.
Tensor greater_weight(Session& s, const Operand& a, const Operand& b) {
  Tensor d = T::sign(s, T::sub(s, a, b));
  return T::mul(s, T::add(s, d, 1.0), 0.5);
}

// ---------------------------------------------------------------- binary rules

void vjp_add(Session&, const Node& n, const Tensor& g, Grad* out) {
  const bool only = !(wants(n, 0) && wants(n, 1));
  if (wants(n, 0)) out[0] = pass(n, g, only);
  if (wants(n, 1)) out[1] = pass(n, g, only);
}
Tensor jvp_add(Session& s, const Node&, const Tensor* t) { return detail::add_maybe(s, t[0], t[1]); }

void vjp_sub(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (!wants(n, 1)) {
    out[0] = pass(n, g, true);
    return;
  }
  out[0] = {g, false};
  if (!wants(n, 0) && reusable(n, g, Operand(-1.0))) {
    T::neg_into(s, g, g);
    out[1] = own_cot();
  } else {
    out[1] = {T::neg(s, g), true};
  }
}
Tensor jvp_sub(Session& s, const Node&, const Tensor* t) {
  if (!t[1].defined()) return t[0];
  if (!t[0].defined()) return T::neg(s, t[1]);
  return T::sub(s, t[0], t[1]);
}

void vjp_mul(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const bool w1 = wants(n, 1);
  if (wants(n, 0)) out[0] = times(s, n, g, conj_opnd(s, n, 1).get(), !w1);
  if (w1) out[1] = times(s, n, g, conj_opnd(s, n, 0).get(), true);
}
Tensor jvp_mul(Session& s, const Node& n, const Tensor* t) {
  Tensor r;
  if (t[0].defined()) r = T::mul(s, t[0], opnd(n, 1));
  if (t[1].defined()) r = detail::add_maybe(s, r, T::mul(s, opnd(n, 0), t[1]));
  return r;
}

void vjp_div(Session& s, const Node& n, const Tensor& g, Grad* out) {
  // y = a / b: ga = g / conj(b), gb = -ga · conj(y).
  Tensor ga = T::div(s, g, conj_opnd(s, n, 1).get());
  if (wants(n, 1)) out[1] = {T::neg(s, T::mul(s, ga, detail::conj_if_complex(s, n.y[0]))), true};
  if (wants(n, 0)) out[0] = {std::move(ga), true};
}
Tensor jvp_div(Session& s, const Node& n, const Tensor* t) {
  Tensor r;
  if (t[0].defined()) r = T::div(s, t[0], opnd(n, 1));
  if (t[1].defined()) r = T::sub(s, detail::or_zeros(s, r, n.y[0]), T::div(s, T::mul(s, t[1], n.y[0]), opnd(n, 1)));
  return r;
}

/// d(a^b)/da = b·a^(b-1), and 0 where b = 0 (a^0 = 1 is constant; at a = 0 the formula
/// is 0·∞: PyTorch and JAX give 0 too).
Tensor pow_da(Session& s, const Node& n) {
  const Operand b = opnd(n, 1);
  if (!b.is_tensor() && b.scalar().to<c128>() == c128(0)) return detail::zeros_like(s, n.y[0]);
  Tensor d = T::mul(s, b, T::pow(s, opnd(n, 0), T::sub(s, b, 1.0)));
  return b.is_tensor() ? T::select(s, T::eq(s, b, 0.0), 0.0, d) : d;
}
/// d(a^b)/db = y·log(a), and 0 where a = 0 and Re b ≥ 0 (y = 0 there while log a = −∞;
/// PyTorch's mask).
Tensor pow_db(Session& s, const Node& n) {
  const Operand a = opnd(n, 0), b = opnd(n, 1);
  const Tensor la = n.x[0].defined() ? T::log(s, n.x[0]) : T::log(s, Tensor::scalar(n.sx[0], n.y[0].dtype()));
  Tensor d = T::mul(s, n.y[0], la);
  Tensor zero_base = T::eq(s, a, 0.0);
  if (b.is_tensor()) {
    const Tensor& bt = b.tensor();
    zero_base = T::select(s, zero_base, T::ge(s, is_complex(bt.dtype()) ? T::real(s, bt) : bt, 0.0), false);
  } else if (b.scalar().to<c128>().real() < 0) {
    return d;
  }
  return T::select(s, zero_base, 0.0, d);
}
void vjp_pow(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (wants(n, 0)) out[0] = {T::mul(s, g, detail::conj_if_complex(s, pow_da(s, n))), true};
  if (wants(n, 1)) out[1] = {T::mul(s, g, detail::conj_if_complex(s, pow_db(s, n))), true};
}
Tensor jvp_pow(Session& s, const Node& n, const Tensor* t) {
  Tensor r;
  if (t[0].defined()) r = T::mul(s, t[0], pow_da(s, n));
  if (t[1].defined()) r = detail::add_maybe(s, r, T::mul(s, t[1], pow_db(s, n)));
  return r;
}

/// rem(a, b) = a - trunc(a / b)·b: d/da = 1, d/db = -trunc(a/b) = -(a - rem)/b.
Tensor rem_db(Session& s, const Node& n) { return T::neg(s, T::div(s, T::sub(s, opnd(n, 0), n.y[0]), opnd(n, 1))); }
void vjp_rem(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {g, false};
  if (wants(n, 1)) out[1] = {T::mul(s, g, rem_db(s, n)), true};
}
Tensor jvp_rem(Session& s, const Node& n, const Tensor* t) {
  Tensor r = t[0];
  if (t[1].defined()) r = detail::add_maybe(s, r, T::mul(s, t[1], rem_db(s, n)));
  return r;
}

template <bool Max> Tensor weight_a(Session& s, const Node& n) {
  return Max ? greater_weight(s, opnd(n, 0), opnd(n, 1)) : greater_weight(s, opnd(n, 1), opnd(n, 0));
}
template <bool Max> void vjp_extremum(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor wa = weight_a<Max>(s, n);
  if (wants(n, 0)) out[0] = {T::mul(s, g, wa), true};
  if (wants(n, 1)) out[1] = {T::mul(s, g, T::sub(s, 1.0, wa)), true};
}
template <bool Max> Tensor jvp_extremum(Session& s, const Node& n, const Tensor* t) {
  Tensor wa = weight_a<Max>(s, n);
  Tensor r;
  if (t[0].defined()) r = T::mul(s, t[0], wa);
  if (t[1].defined()) r = detail::add_maybe(s, r, T::mul(s, t[1], T::sub(s, 1.0, wa)));
  return r;
}

// select(pred, on_true, on_false): operands 1 and 2.
void vjp_select(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (wants(n, 1)) out[1] = {T::select(s, n.x[0], g, 0.0), true};
  if (wants(n, 2)) out[2] = {T::select(s, n.x[0], 0.0, g), true};
}
Tensor jvp_select(Session& s, const Node& n, const Tensor* t) {
  if (!t[1].defined() && !t[2].defined()) return {};
  const Operand a = t[1].defined() ? Operand(t[1]) : Operand(0.0);
  const Operand b = t[2].defined() ? Operand(t[2]) : Operand(0.0);
  return T::select(s, n.x[0], a, b);
}

// clamp(lo, x, hi) = min(max(x, lo), hi) with ties split equally (as maximum/minimum):
// x weighs w(x > lo)·w(hi > x), lo weighs w(lo > x), hi weighs w(x > hi).
struct ClampWeights {
  Tensor lo, x, hi;
};
ClampWeights clamp_weights(Session& s, const Node& n) {
  ClampWeights w;
  w.lo = greater_weight(s, opnd(n, 0), opnd(n, 1));
  w.hi = greater_weight(s, opnd(n, 1), opnd(n, 2));
  w.x = T::mul(s, T::sub(s, 1.0, w.lo), T::sub(s, 1.0, w.hi));
  return w;
}
void vjp_clamp(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const ClampWeights w = clamp_weights(s, n);
  if (wants(n, 0)) out[0] = {T::mul(s, g, w.lo), true};
  if (wants(n, 1)) out[1] = {T::mul(s, g, w.x), true};
  if (wants(n, 2)) out[2] = {T::mul(s, g, w.hi), true};
}
Tensor jvp_clamp(Session& s, const Node& n, const Tensor* t) {
  const ClampWeights w = clamp_weights(s, n);
  Tensor r;
  if (t[0].defined()) r = T::mul(s, t[0], w.lo);
  if (t[1].defined()) r = detail::add_maybe(s, r, T::mul(s, t[1], w.x));
  if (t[2].defined()) r = detail::add_maybe(s, r, T::mul(s, t[2], w.hi));
  return r;
}

// ---------------------------------------------------------------- unary rules

void vjp_neg(Session& s, const Node&, const Tensor& g, Grad* out) { out[0] = {T::neg(s, g), true}; }
Tensor jvp_neg(Session& s, const Node&, const Tensor* t) { return t[0].defined() ? T::neg(s, t[0]) : Tensor(); }
void vjp_conj(Session& s, const Node&, const Tensor& g, Grad* out) { out[0] = {detail::conj_if_complex(s, g), is_complex(g.dtype())}; }
Tensor jvp_conj(Session& s, const Node&, const Tensor* t) { return t[0].defined() ? detail::conj_if_complex(s, t[0]) : Tensor(); }
void vjp_identity(Session&, const Node&, const Tensor& g, Grad* out) { out[0] = {g, false}; }
Tensor jvp_identity(Session&, const Node&, const Tensor* t) { return t[0]; }

// |x|: real x: sign(x)·dx; complex z: Re(conj(z/|z|)·dz) (sign(z) = z/|z|, 0 at 0).
// vjp (g real): g·sign(x) in both cases.
void vjp_abs(Session& s, const Node& n, const Tensor& g, Grad* out) { out[0] = {T::mul(s, g, T::sign(s, n.x[0])), true}; }
Tensor jvp_abs(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  Tensor sg = T::sign(s, n.x[0]);
  if (!is_complex(n.x[0].dtype())) return T::mul(s, t[0], sg);
  return T::real(s, T::mul(s, T::conj(s, sg), t[0]));
}
// real(z): vjp g (as complex), jvp Re(t). imag(z) = Re(-i z): vjp i·g, jvp Im(t).
void vjp_real(Session&, const Node&, const Tensor& g, Grad* out) { out[0] = {g, false}; }
Tensor jvp_real(Session& s, const Node&, const Tensor* t) { return t[0].defined() ? T::real(s, t[0]) : Tensor(); }
void vjp_imag(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (is_complex(n.x[0].dtype())) out[0] = {T::mul(s, g, c128(0.0, 1.0)), true};
}
Tensor jvp_imag(Session& s, const Node&, const Tensor* t) { return t[0].defined() ? T::imag(s, t[0]) : Tensor(); }
// angle(z) = atan2(Im z, Re z): d = Im(conj(z)·dz)/|z|^2; vjp: g·i·z/|z|^2. Constant for
// real inputs (0 or pi): zero.
void vjp_angle(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const Tensor& z = n.x[0];
  if (!is_complex(z.dtype())) return;
  Tensor a2 = T::real(s, T::mul(s, z, T::conj(s, z)));
  out[0] = {T::mul(s, T::div(s, g, a2), T::mul(s, z, c128(0.0, 1.0))), true};
}
Tensor jvp_angle(Session& s, const Node& n, const Tensor* t) {
  const Tensor& z = n.x[0];
  if (!t[0].defined() || !is_complex(z.dtype())) return {};
  Tensor a2 = T::real(s, T::mul(s, z, T::conj(s, z)));
  return T::div(s, T::imag(s, T::mul(s, T::conj(s, z), t[0])), a2);
}

/// f'(x) of the analytic ops, from x and y = f(x).
Tensor analytic_derivative(Session& s, const Node& n) {
  const Tensor& x = n.x[0];
  const Tensor& y = n.y[0];
  switch (n.op) {
    case OpId::exp: return y;
    case OpId::log: return T::div(s, 1.0, x);
    case OpId::sin: return T::cos(s, x);
    case OpId::cos: return T::neg(s, T::sin(s, x));
    case OpId::tan: return T::add(s, T::mul(s, y, y), 1.0);
    case OpId::tanh: return T::sub(s, 1.0, T::mul(s, y, y));
    case OpId::sqrt: return T::div(s, 0.5, y);
    case OpId::rsqrt: return T::mul(s, T::div(s, y, x), -0.5);
    case OpId::expm1: return T::add(s, y, 1.0);
    case OpId::log1p: return T::div(s, 1.0, T::add(s, x, 1.0));
    case OpId::erf: return T::mul(s, T::exp(s, T::neg(s, T::mul(s, x, x))), 2.0 / std::sqrt(std::numbers::pi));
    case OpId::sigmoid: return T::mul(s, y, T::sub(s, 1.0, y));
    case OpId::asin: return T::rsqrt(s, T::sub(s, 1.0, T::mul(s, x, x)));
    case OpId::acos: return T::neg(s, T::rsqrt(s, T::sub(s, 1.0, T::mul(s, x, x))));
    case OpId::atan: return T::div(s, 1.0, T::add(s, T::mul(s, x, x), 1.0));
    case OpId::sinh: return T::cosh(s, x);
    case OpId::cosh: return T::sinh(s, x);
    case OpId::log2: return T::div(s, 1.0 / std::numbers::ln2, x);
    case OpId::exp2: return T::mul(s, y, std::numbers::ln2);
    case OpId::log10: return T::div(s, 1.0 / std::numbers::ln10, x);
    case OpId::cbrt: return T::div(s, 1.0 / 3.0, T::mul(s, y, y));  // 1 / (3 x^(2/3)); inf at 0
    case OpId::softplus: return T::sigmoid(s, x);
    case OpId::silu: {  // σ + x σ (1 - σ) = σ (1 + x (1 - σ))
      Tensor sg = T::sigmoid(s, x);
      return T::mul(s, sg, T::add(s, T::mul(s, x, T::sub(s, 1.0, sg)), 1.0));
    }
    case OpId::gelu: {  // Φ(x) + x φ(x), Φ = ½ (1 + erf(x/√2)), φ = e^(-x²/2) / √(2π)
      Tensor cdf = T::add(s, T::mul(s, T::erf(s, T::mul(s, x, std::numbers::sqrt2 / 2)), 0.5), 0.5);
      Tensor pdf = T::mul(s, T::exp(s, T::mul(s, T::mul(s, x, x), -0.5)), std::numbers::inv_sqrtpi / std::numbers::sqrt2);
      return T::add(s, cdf, T::mul(s, x, pdf));
    }
    default: throw InternalError("ad", "analytic_derivative: not an analytic op");
  }
}
void vjp_analytic(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, g, detail::conj_if_complex(s, analytic_derivative(s, n))), true};
}
Tensor jvp_analytic(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::mul(s, t[0], analytic_derivative(s, n)) : Tensor();
}

// convert / cast: the cotangent converts back (runtime: real part, cast); tangents
// convert forward (fit_tangent).
void vjp_reshape(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::reshape(s, g, n.x[0].shape().span()), false};
}
Tensor jvp_reshape(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::reshape(s, t[0], n.y[0].shape().span()) : Tensor();
}

}  // namespace

namespace detail {
void register_elementwise_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  auto set = [&](OpId op, JvpRule j, VjpRule v) { t[static_cast<int>(op)] = {j, v}; };
  set(OpId::add, jvp_add, vjp_add);
  set(OpId::sub, jvp_sub, vjp_sub);
  set(OpId::mul, jvp_mul, vjp_mul);
  set(OpId::div, jvp_div, vjp_div);
  set(OpId::pow, jvp_pow, vjp_pow);
  set(OpId::rem, jvp_rem, vjp_rem);
  set(OpId::maximum, jvp_extremum<true>, vjp_extremum<true>);
  set(OpId::minimum, jvp_extremum<false>, vjp_extremum<false>);
  set(OpId::select, jvp_select, vjp_select);
  set(OpId::clamp, jvp_clamp, vjp_clamp);
  set(OpId::neg, jvp_neg, vjp_neg);
  set(OpId::conj, jvp_conj, vjp_conj);
  set(OpId::abs, jvp_abs, vjp_abs);
  set(OpId::real, jvp_real, vjp_real);
  set(OpId::imag, jvp_imag, vjp_imag);
  set(OpId::angle, jvp_angle, vjp_angle);
  // Every analytic op shares the derivative-table rules (Note [Family lists from the catalogue]).
#define TENFERRO_ANALYTIC_ITEM(name) set(OpId::name, jvp_analytic, vjp_analytic);
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
  set(OpId::convert, jvp_identity, vjp_identity);
  set(OpId::cast, jvp_identity, vjp_identity);
  set(OpId::copy, jvp_identity, vjp_identity);
  set(OpId::reshape, jvp_reshape, vjp_reshape);
}
}  // namespace detail

// ---------------------------------------------------------------- wrappers

#define TENFERRO_AD_BINARY(name)                                                   \
  EagerTensor name(Context& ctx, const AdOperand& a, const AdOperand& b) {         \
    Tensor y = T::name(ctx.session(), a.operand(), b.operand());                   \
    return binary(ctx, OpId::name, std::move(y), a, b);                            \
  }
TENFERRO_AD_BINARY(add)
TENFERRO_AD_BINARY(sub)
TENFERRO_AD_BINARY(mul)
TENFERRO_AD_BINARY(div)
TENFERRO_AD_BINARY(rem)
TENFERRO_AD_BINARY(maximum)
TENFERRO_AD_BINARY(minimum)
TENFERRO_AD_BINARY(pow)
#undef TENFERRO_AD_BINARY

EagerTensor compare(Context& ctx, const AdOperand& a, const AdOperand& b, CompareOp op) {
  return EagerTensor(T::compare(ctx.session(), a.operand(), b.operand(), op));
}

EagerTensor select(Context& ctx, const AdOperand& pred, const AdOperand& on_true, const AdOperand& on_false) {
  Tensor y = T::select(ctx.session(), pred.operand(), on_true.operand(), on_false.operand());
  return finish<3>(ctx, OpId::select, std::move(y), {nullptr, on_true.eager(), on_false.eager()}, [&](Node& n) {
    save(n, 0, pred);
    save(n, 1, on_true);
    save(n, 2, on_false);
    if (!n.x[0].defined()) n.x[0] = Tensor::scalar(n.sx[0], DType::b8);
  });
}

EagerTensor clamp(Context& ctx, const AdOperand& lo, const AdOperand& x, const AdOperand& hi) {
  Tensor y = T::clamp(ctx.session(), lo.operand(), x.operand(), hi.operand());
  return finish<3>(ctx, OpId::clamp, std::move(y), {lo.eager(), x.eager(), hi.eager()}, [&](Node& n) {
    save(n, 0, lo);
    save(n, 1, x);
    save(n, 2, hi);
  });
}

#define TENFERRO_AD_UNARY(name)                                    \
  EagerTensor name(Context& ctx, const EagerTensor& x) {           \
    Tensor y = T::name(ctx.session(), x.value());                  \
    return unary(ctx, OpId::name, std::move(y), x);                \
  }
TENFERRO_AD_UNARY(neg)
TENFERRO_AD_UNARY(conj)
TENFERRO_AD_UNARY(abs)
TENFERRO_AD_UNARY(real)
TENFERRO_AD_UNARY(imag)
TENFERRO_AD_UNARY(angle)
// The analytic functions: every `analytic` row (Note [Family lists from the catalogue]).
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_AD_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_AD_UNARY

EagerTensor sign(Context& ctx, const EagerTensor& x) { return EagerTensor(T::sign(ctx.session(), x.value())); }

EagerTensor copy(Context& ctx, const EagerTensor& x) {
  Tensor y = Tensor::empty(x.value().shape().span(), x.dtype());
  T::copy_into(ctx.session(), x.value(), y);
  return unary(ctx, OpId::copy, std::move(y), x);
}
EagerTensor convert(Context& ctx, const EagerTensor& x, DType dtype) {
  return finish<1>(ctx, OpId::convert, T::convert(ctx.session(), x.value(), dtype), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    n.set_attrs<ConvertAttrs>().dtype = dtype;
  });
}
EagerTensor cast(Context& ctx, const EagerTensor& x, DType dtype) {
  return finish<1>(ctx, OpId::cast, T::cast(ctx.session(), x.value(), dtype), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    n.set_attrs<ConvertAttrs>().dtype = dtype;
  });
}
EagerTensor reshape(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> shape) {
  return finish<1>(ctx, OpId::reshape, T::reshape(ctx.session(), x.value(), shape), {&x}, [&](Node& n) {
    n.x[0] = x.value();
    n.set_attrs<ReshapeAttrs>().shape = Dims(shape);
  });
}

// ---------------------------------------------------------------- operator sugar

namespace {
/// The context operator sugar runs on: the first operand's that has one, which must
/// still exist (Note [Context lifetime]).
Context& sugar_context(const EagerTensor& a, const AdOperand& b, std::string_view op) {
  const EagerTensor* e = a.context() ? &a : b.eager() && b.eager()->context() ? b.eager() : nullptr;
  if (!e) throw ArgumentError(op, "no operand has an AD context (use the ad:: function with a Context)");
  if (!e->context_alive())
    throw RuntimeStateError(op, "the ad::Context that recorded an operand was destroyed (use detach() or the value)");
  return *e->context();
}
}  // namespace
EagerTensor operator+(const EagerTensor& a, const AdOperand& b) { return add(sugar_context(a, b, "add"), a, b); }
EagerTensor operator-(const EagerTensor& a, const AdOperand& b) { return sub(sugar_context(a, b, "sub"), a, b); }
EagerTensor operator*(const EagerTensor& a, const AdOperand& b) { return mul(sugar_context(a, b, "mul"), a, b); }
EagerTensor operator/(const EagerTensor& a, const AdOperand& b) { return div(sugar_context(a, b, "div"), a, b); }
EagerTensor operator-(const EagerTensor& a) { return neg(sugar_context(a, AdOperand(0.0), "neg"), a); }

}  // namespace tenferro::ad
