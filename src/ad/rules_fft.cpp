// Differentiable FFTs: fft, ifft, rfft, irfft and their n-dimensional forms (wrappers,
// JVP, VJP). The 1-D and n-D forms record the same op (the catalogue's fft, ifft, rfft,
// irfft rows): a 1-D transform is the n-D one over a single axis.
//
// Note [FFT adjoints]
// Every transform here is R-linear, so its JVP is the same transform (same axes, lengths
// and norm) applied to the tangent, and its VJP is the adjoint under
// Re⟨a, b⟩ = Re Σ conj(a)·b (Note [Complex convention] in docs/ad.md). Along the
// transformed axes, with P the crop/zero-pad of the input extent m to the transform
// length, F the unnormalized DFT over all transformed axes (N = the product of their
// lengths) and c the forward scale of the norm mode:
//   fft:   y = c·F·P·x          x̄ = P*·(c·Fᴴ·ȳ)
//   ifft:  y = c'·Fᴴ·P·x        x̄ = P*·(c'·F·ȳ)
// P* (the adjoint of zero-padding is cropping, of cropping zero-padding) restores the
// input extents. c·Fᴴ is the inverse transform with the dual norm: the adjoint of a
// forward transform scaled by 1 / 1/√N / 1/N (norm backward / ortho / forward) is the
// inverse scaled by 1 / 1/√N / 1/N, i.e. the inverse with norm forward / ortho /
// backward (and symmetrically for ifft): norms backward and forward swap, ortho stays.
// The real transforms (h = n/2 + 1 bins on the halved, last listed axis):
//   rfft:  y = c·T·F·P·x for real x, T keeping the first h bins of the halved axis, so
//          x̄ = P*·Re(c·Fᴴ·Tᴴ·ȳ), Tᴴ the zero extension to n bins. Hermitian symmetry
//          turns this into a half-size transform: irfft (c2r) of a half spectrum z is
//          Re(Fᴴ·Tᴴ·(d ⊙ z)) with d = 1 on the bins that are their own mirror image
//          (bin 0, and bin n/2 for even n) and d = 2 on the others (a c2r transform
//          reads only the real part of the self-mirrored bins, hence the Re). So
//          x̄ = P*·irfft(ȳ ⊙ (1/d)) with the dual norm: the interior bins 1..n−h are
//          halved, the others kept.
//   irfft: y = c'·Re(Fᴴ·Tᴴ·(d ⊙ P·z)) (the c2r semantics above, which also hold for a
//          non-Hermitian z), so z̄ = P*·(d ⊙ c'·T·F·ȳ) = P*·(d ⊙ rfft(ȳ)) with the dual
//          norm: the interior bins 1..n−h of the rfft of ȳ are doubled (PyTorch's
//          fft_c2r_backward). In 1-D rfft(ȳ) has real bins 0 and n/2, so the ignored
//          imaginary parts of those input bins get a zero derivative; in n-D the
//          self-mirrored planes are Hermitian-symmetrized over the other axes by the c2r
//          transform, and the rfft of ȳ carries exactly that dependence.
// For n-D the factors commute (F = ⊗ F_axis), so the same formulas hold with N the
// product of the lengths and the halving/doubling applied on the last listed axis only.
// References: PyTorch's fft_r2c_backward / fft_c2r_backward
// (torch/csrc/autograd/FunctionsManual.cpp); JAX's _fft_transpose_rule, _rfft_transpose
// and _irfft_transpose (jax/_src/lax/fft.py). A real input of fft/ifft receives the
// real part of its cotangent (the runtime's accumulate step).
//
// Node attributes (FftAttrs): axes = the transformed axes (normalized, in the caller's
// order), lengths = the transform lengths, input_extents = the input extents along those
// axes (for P*), the norm and the planner. No tensor is saved.
#include "ad/tape.hpp"
#include "tenferro/fft.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;

/// The norm whose inverse scaling equals the given norm's forward scaling.
FftNorm dual(FftNorm norm) noexcept {
  switch (norm) {
    case FftNorm::backward: return FftNorm::forward;
    case FftNorm::forward: return FftNorm::backward;
    case FftNorm::ortho: return FftNorm::ortho;
  }
  return norm;
}

/// The recorded transform's options (lengths explicit), with the given norm.
FftnOptions options(const Node& n, FftNorm norm) {
  FftnOptions o;
  const FftAttrs& a = n.attr<FftAttrs>();
  o.axes = a.axes;
  o.n = a.lengths;
  o.norm = norm;
  o.planner = a.planner;
  return o;
}
FftNorm norm_of(const Node& n) noexcept { return n.attr<FftAttrs>().norm; }

/// P*: crops or zero-pads `t` along the transformed axes back to the input extents.
/// Cropping is a view (not owned); padding makes a fresh tensor.
Grad to_input_extents(Session& s, Tensor t, const Node& n) {
  const Dims& ext = n.attr<FftAttrs>().input_extents;
  bool sliced = false, padded = false;
  for (int i = 0; i < n.attr<FftAttrs>().axes.size(); ++i) {
    const int a = static_cast<int>(n.attr<FftAttrs>().axes[i]);
    if (ext[i] < t.extent(a)) {
      t = t.slice_view(a, 0, ext[i]);
      sliced = true;
    } else if (ext[i] > t.extent(a)) {
      padded = true;
    }
  }
  if (!padded) return {std::move(t), !sliced};
  Dims low(t.rank(), 0), high(t.rank(), 0), interior(t.rank(), 0);
  for (int i = 0; i < n.attr<FftAttrs>().axes.size(); ++i) {
    const int a = static_cast<int>(n.attr<FftAttrs>().axes[i]);
    high[a] = ext[i] - t.extent(a);
  }
  return {T::pad(s, t, 0.0, low.span(), high.span(), interior.span()), true};
}

/// Number of bins of the halved axis that stand for two bins of the full spectrum:
/// 1..n−h with h = n/2 + 1 (not bin 0, not bin n/2 of an even n).
std::int64_t interior_bins(std::int64_t len) noexcept { return len - (len / 2 + 1); }

// ---- fft / ifft: the adjoint of one is the other with the dual norm.
void vjp_fft(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = to_input_extents(s, T::ifftn(s, g, options(n, dual(norm_of(n)))), n);
}
void vjp_ifft(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = to_input_extents(s, T::fftn(s, g, options(n, dual(norm_of(n)))), n);
}

// ---- rfft: x̄ = P*·irfft(ȳ with the interior bins halved), dual norm (Note [FFT adjoints]).
void vjp_rfft(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const FftAttrs& a = n.attr<FftAttrs>();
  const int last = static_cast<int>(a.axes[a.axes.size() - 1]);
  const std::int64_t len = a.lengths[a.lengths.size() - 1];
  const std::int64_t h = len / 2 + 1;
  Tensor z = g;  // irfftn copies its input, so g itself is never modified
  if (interior_bins(len) > 0) {
    z = T::mul(s, g, 0.5);
    T::copy_into(s, g.slice_view(last, 0, 1), z.slice_view(last, 0, 1));
    if (len % 2 == 0) T::copy_into(s, g.slice_view(last, h - 1, h), z.slice_view(last, h - 1, h));
  }
  out[0] = to_input_extents(s, T::irfftn(s, z, options(n, dual(norm_of(n)))), n);
}

// ---- irfft: z̄ = P*·(rfft(ȳ) with the interior bins doubled), dual norm.
void vjp_irfft(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const FftAttrs& a = n.attr<FftAttrs>();
  const int last = static_cast<int>(a.axes[a.axes.size() - 1]);
  const std::int64_t len = a.lengths[a.lengths.size() - 1];
  Tensor r = T::rfftn(s, g, options(n, dual(norm_of(n))));
  if (const std::int64_t k = interior_bins(len); k > 0) {
    const Tensor mid = r.slice_view(last, 1, 1 + k);
    T::mul_into(s, mid, 2.0, mid);
  }
  out[0] = to_input_extents(s, std::move(r), n);
}

// ---- JVPs: the same transform of the tangent (it has the input's extents, so the
// transform crops/pads it exactly as it did the input).
Tensor jvp_fft(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::fftn(s, t[0], options(n, norm_of(n))) : Tensor();
}
Tensor jvp_ifft(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::ifftn(s, t[0], options(n, norm_of(n))) : Tensor();
}
Tensor jvp_rfft(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  // A real input has a real tangent; the real part guards a complex one (the input's
  // imaginary direction does not exist).
  const Tensor tr = is_complex(t[0].dtype()) ? T::real(s, t[0]) : t[0];
  return T::rfftn(s, tr, options(n, norm_of(n)));
}
Tensor jvp_irfft(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::irfftn(s, t[0], options(n, norm_of(n))) : Tensor();
}

/// Records a transform: `axes` normalized; the lengths are read off the output (n along
/// every transformed axis, except rfft's halved axis, whose n is `halved_len`).
EagerTensor record(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, const Dims& axes, std::int64_t halved_len,
                   FftNorm norm, FftPlanner planner) {
  return finish<1>(ctx, op, std::move(y), {&x}, [&](Node& n) {
    const Tensor& xv = x.value();
    FftAttrs& f = n.set_attrs<FftAttrs>();
    f.axes = axes;
    f.lengths.resize(axes.size());
    f.input_extents.resize(axes.size());
    for (int i = 0; i < axes.size(); ++i) {
      const int a = static_cast<int>(axes[i]);
      f.lengths[i] = op == OpId::rfft && i + 1 == axes.size() ? halved_len : n.y[0].extent(a);
      f.input_extents[i] = xv.extent(a);
    }
    f.norm = norm;
    f.planner = planner;
  });
}

EagerTensor one_axis(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, const FftOptions& opt) {
  if (!detail::differentiable(x)) return EagerTensor(std::move(y));
  const std::int64_t rank = x.value().rank();
  const std::int64_t axis = opt.axis < 0 ? opt.axis + rank : opt.axis;  // validated by the forward op
  const std::int64_t halved = op == OpId::rfft ? opt.n.value_or(x.value().extent(static_cast<int>(axis))) : 0;
  return record(ctx, op, std::move(y), x, Dims{axis}, halved, opt.norm, opt.planner);
}

EagerTensor n_axes(Context& ctx, OpId op, Tensor&& y, const EagerTensor& x, const FftnOptions& opt) {
  if (!detail::differentiable(x)) return EagerTensor(std::move(y));
  const int rank = x.value().rank();
  Dims axes;
  if (opt.axes.empty()) {  // fft.hpp: all axes, or the first n.size() (validated by the forward op)
    const int count = opt.n.empty() ? rank : opt.n.size();
    for (int i = 0; i < count; ++i) axes.push_back(i);
  } else {
    for (const std::int64_t a : opt.axes) axes.push_back(a < 0 ? a + rank : a);
  }
  std::int64_t halved = 0;
  if (op == OpId::rfft && !axes.empty())
    halved = opt.n.empty() ? x.value().extent(static_cast<int>(axes[axes.size() - 1])) : opt.n[opt.n.size() - 1];
  return record(ctx, op, std::move(y), x, axes, halved, opt.norm, opt.planner);
}

}  // namespace

namespace detail {
void register_fft_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::fft)] = {jvp_fft, vjp_fft};
  t[static_cast<int>(OpId::ifft)] = {jvp_ifft, vjp_ifft};
  t[static_cast<int>(OpId::rfft)] = {jvp_rfft, vjp_rfft};
  t[static_cast<int>(OpId::irfft)] = {jvp_irfft, vjp_irfft};
}
}  // namespace detail

EagerTensor fft(Context& ctx, const EagerTensor& x, const FftOptions& opt) {
  return one_axis(ctx, OpId::fft, T::fft(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor ifft(Context& ctx, const EagerTensor& x, const FftOptions& opt) {
  return one_axis(ctx, OpId::ifft, T::ifft(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor rfft(Context& ctx, const EagerTensor& x, const FftOptions& opt) {
  return one_axis(ctx, OpId::rfft, T::rfft(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor irfft(Context& ctx, const EagerTensor& x, const FftOptions& opt) {
  return one_axis(ctx, OpId::irfft, T::irfft(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor fftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt) {
  return n_axes(ctx, OpId::fft, T::fftn(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor ifftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt) {
  return n_axes(ctx, OpId::ifft, T::ifftn(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor rfftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt) {
  return n_axes(ctx, OpId::rfft, T::rfftn(ctx.session(), x.value(), opt), x, opt);
}
EagerTensor irfftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt) {
  return n_axes(ctx, OpId::irfft, T::irfftn(ctx.session(), x.value(), opt), x, opt);
}

}  // namespace tenferro::ad
