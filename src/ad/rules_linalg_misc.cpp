// Differentiable slogdet, pinv, lstsq, matrix_norm and vector_norm (wrappers, JVP, VJP).
// Conventions: Note [Complex convention] (VJPs are adjoints of the R-linear JVPs under
// Re⟨a, b⟩); matrices are [M, N, batch...]. Formulas and documented choices: docs/ad.md,
// "Rules: slogdet, pinv, lstsq, norms".
//
// slogdet (sign, logabsdet) and lstsq (X, rank, S) record one node with several outputs
// (Note [Multi-output nodes] in tape.hpp); an output the loss does not use is a symbolic
// zero and its terms are skipped.
#include <cmath>

#include "ad/linalg_util.hpp"
#include "ad/tape.hpp"
#include "tenferro/error.hpp"
#include "tenferro/linalg.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;
using namespace linalg_util;

/// [b...] → [1, b...] (broadcasts over axis 0 of a [N, b...] vector batch).
Tensor batch_as_vector(Session& s, const Tensor& v) {
  Dims shape{1};
  for (int i = 0; i < v.rank(); ++i) shape.push_back(v.extent(i));
  return T::reshape(s, v, shape.span());
}
/// y with its zeros replaced by 1 (a safe divisor: where y = 0 the numerator is 0 too).
Tensor nonzero_or_one(Session& s, const Tensor& y) { return T::select(s, T::eq(s, y, 0.0), 1.0, y); }

// ---- slogdet: outputs sign (y[0]) and logabsdet (y[1]), x[0] = A. With t = tr(A⁻¹·dA):
//   d logabsdet = Re t,                 Ā = Re(ḡ)·A⁻ᴴ;
//   d sign = i·Im(t)·sign (complex),    Ā = −i·Im(conj(ḡ)·sign)·A⁻ᴴ
// (Giles, "An extended collection of matrix derivative results for forward and reverse
// mode AD", 2008, §2.2.3: d log det A = tr(A⁻¹dA); the sign is the phase of det A, so
// its tangent is i·Im(t) times it). Real sign is piecewise constant (a constant output).
Tensor trace_solve(Session& s, const Tensor& a, const Tensor& da) {
  return T::sum(s, T::extract_diagonal(s, T::solve(s, a, da), 0, 1), {-1});
}
void jvp_slogdet(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  Tensor tr = trace_solve(s, n.x[0], t[0]);
  const bool complex_a = is_complex(tr.dtype());
  dy[1] = complex_a ? T::real(s, tr) : tr;
  if (complex_a) dy[0] = T::mul(s, T::mul(s, T::cast(s, T::imag(s, tr), n.y[0].dtype()), c128(0, 1)), n.y[0]);
}
void vjp_slogdet(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const DType dt = n.x[0].dtype();
  Tensor c;
  if (g[1].defined()) c = is_complex(g[1].dtype()) ? T::real(s, g[1]) : g[1];
  if (g[0].defined() && is_complex(dt))
    c = detail::add_maybe(s, c, T::mul(s, T::cast(s, T::imag(s, T::mul(s, T::conj(s, g[0]), n.y[0])), dt), c128(0, -1)));
  if (!c.defined()) return;  // only the real sign had a cotangent: it is piecewise constant
  out[0] = {T::mul(s, adjoint(s, T::inv(s, n.x[0])), batch_as_matrix(s, c)), true};
}

// ---- pinv (Golub and Pereyra, "The differentiation of pseudo-inverses and nonlinear
// least squares problems whose variables separate", SIAM J. Numer. Anal. 10(2), 1973,
// Thm. 4.3; PyTorch's pinv_jvp / pinv_backward). With P = A⁺ (valid where rank A is
// locally constant, e.g. full rank):
//   dP = −P·dA·P + P·Pᴴ·dAᴴ·(I − A·P) + (I − P·A)·dAᴴ·Pᴴ·P;
//   Ā  = −Pᴴ·P̄·Pᴴ + (I − A·P)·P̄ᴴ·P·Pᴴ + Pᴴ·P·P̄ᴴ·(I − P·A).
Tensor jvp_pinv(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  const Tensor &a = n.x[0], &p = n.y[0], &da = t[0];
  Tensor dah = adjoint(s, da);
  Tensor r = T::neg(s, mm(s, mm(s, p, da), p));
  Tensor left = T::sub(s, dah, mm(s, mm(s, dah, a), p));   // dAᴴ·(I − A·P)   [N, M]
  r = T::add(s, r, mm(s, mm_bh(s, p, p), left));
  Tensor right = T::sub(s, dah, mm(s, p, mm(s, a, dah)));  // (I − P·A)·dAᴴ   [N, M]
  return T::add(s, r, mm(s, right, mm_ah(s, p, p)));
}
void vjp_pinv(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const Tensor &a = n.x[0], &p = n.y[0];
  Tensor gh = adjoint(s, g);
  Tensor r = T::neg(s, mm_bh(s, mm_ah(s, p, g), p));
  Tensor x2 = mm(s, gh, mm_bh(s, p, p));  // P̄ᴴ·P·Pᴴ            [M, N]
  r = T::add(s, r, T::sub(s, x2, mm(s, a, mm(s, p, x2))));
  Tensor y3 = mm(s, mm_ah(s, p, p), gh);  // Pᴴ·P·P̄ᴴ            [M, N]
  out[0] = {T::add(s, r, T::sub(s, y3, mm(s, mm(s, y3, p), a))), true};
}

// ---- lstsq. Note [lstsq rules]: X = A⁺·B (the solution both drivers return for
// full-rank A, and the svd driver's minimum-norm solution for any rank), so
// dX = dA⁺·B + A⁺·dB with dA⁺ from the pinv rule. Multiplying the three pinv terms by B
// keeps every intermediate N×K or M×K (PyTorch's linalg_lstsq_backward forms the M×N
// P̄ = X̄·Bᴴ and calls pinv_backward; the result is the same). With P = A⁺ and the
// residual R = B − A·X:
//   dX = P·(dB − dA·X) + P·Pᴴ·dAᴴ·R + (I − P·A)·dAᴴ·Pᴴ·X;
//   B̄ = Pᴴ·X̄,  Ā = −B̄·Xᴴ + R·(P·B̄)ᴴ + Pᴴ·X·(X̄ − Aᴴ·B̄)ᴴ.
// The S output (y[2], svd driver): singular values of A, dσ_k = Re(u_kᴴ·dA·v_k),
// Ā = U·diag(σ̄)·Vᴴ (distinct non-zero singular values). Node: x = {A, B, P}, y = {X, -, S}
// (the rank is an integer constant).
void jvp_lstsq(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  const Tensor& a = n.x[0];
  if (t[0].defined() && n.y[2].defined()) {
    SvdResult r = T::svd(s, a, SvdMode::thin);
    dy[2] = T::real(s, T::sum(s, T::mul(s, mm_ah(s, r.U, t[0]), detail::conj_if_complex(s, r.Vh)), {1}));
  }
  if (!t[0].defined() && !t[1].defined()) return;
  const Tensor& p = n.x[2];
  Tensor x = as_column(s, n.y[0]);
  Tensor rhs;  // dB − dA·X
  if (t[1].defined()) rhs = as_column(s, t[1]);
  if (t[0].defined()) rhs = rhs.defined() ? T::sub(s, rhs, mm(s, t[0], x)) : T::neg(s, mm(s, t[0], x));
  Tensor dx = mm(s, p, rhs);
  if (t[0].defined()) {
    const Tensor& da = t[0];
    Tensor res = T::sub(s, as_column(s, n.x[1]), mm(s, a, x));
    dx = T::add(s, dx, mm(s, p, mm_ah(s, p, mm_ah(s, da, res))));
    Tensor u = mm_ah(s, da, mm_ah(s, p, x));  // dAᴴ·Pᴴ·X   [N, K]
    dx = T::add(s, dx, T::sub(s, u, mm(s, p, mm(s, a, u))));
  }
  dy[0] = n.y[0].rank() == 1 ? T::reshape(s, dx, {dx.extent(0)}) : dx;
}
void vjp_lstsq(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor& a = n.x[0];
  Tensor ga;
  if (g[2].defined() && n.in[0].kind) {
    SvdResult r = T::svd(s, a, SvdMode::thin);
    Tensor us = T::mul(s, r.U, batch_as_vector(s, is_complex(g[2].dtype()) ? T::real(s, g[2]) : g[2]));
    ga = mm(s, us, r.Vh);
  }
  if (g[0].defined()) {
    const Tensor& p = n.x[2];
    Tensor x = as_column(s, n.y[0]), gx = as_column(s, g[0]);
    Tensor gb = mm_ah(s, p, gx);  // B̄ = Pᴴ·X̄   [M, K]
    if (n.in[0].kind) {
      Tensor res = T::sub(s, as_column(s, n.x[1]), mm(s, a, x));
      Tensor gx_a = T::sub(s, mm_bh(s, res, mm(s, p, gb)), mm_bh(s, gb, x));
      ga = detail::add_maybe(s, ga, T::add(s, gx_a, mm_bh(s, mm_ah(s, p, x), T::sub(s, gx, mm_ah(s, a, gb)))));
    }
    if (n.in[1].kind) out[1] = {n.x[1].rank() == 1 ? T::reshape(s, gb, {gb.extent(0)}) : std::move(gb), true};
  }
  if (ga.defined()) out[0] = {std::move(ga), true};
}

// ---- norms. Note [Norm rules]: every norm here is a real y = f(A) whose linearisation
// is dy = Re⟨W, dA⟩, so JVP dy = Re Σ conj(W)·dA over the reduced axes and VJP Ā = ȳ·W,
// where W is the gradient (∂f/∂Re A + i·∂f/∂Im A) or, at a kink, a subgradient. W is computed once when the node is recorded and is all the node keeps.
//   frobenius: W = A/‖A‖_F;  nuclear: W = U·Vᴴ;  spectral: W = u₁·v₁ᴴ (thin SVD);
//   one / inf: W = sgn(A) on the column / row of largest |·|-sum, split 1/k among k tied
//              columns / rows (sgn(z) = z/|z|, 0 at 0);
//   vector p:  W = sgn(x)·(|x|/‖x‖_p)^(p−1) (p = 2: x/‖x‖; p = 1: sgn x; entries with
//              x_i = 0 get 0), p = ±∞: sgn(x) on the entries of largest / smallest |x|,
//              split among ties.
// Zero norm (A = 0, or any x_i = 0 for p < 0): W = 0. nuclear/spectral/max/min
// subgradients at rank deficiency, repeated top singular value or ties are documented
// choices (PyTorch's, e.g. the even split of amax).
// Reference: Magnus and Neudecker, "Matrix Differential Calculus", 3rd ed. 2019, ch. 8
// (norms); singular value derivatives: Giles 2008, §3.2.
Tensor split_ties(Session& s, const Tensor& sums, int axis, DType real) {
  const std::int64_t ax[] = {axis};
  Tensor mx = T::max(s, sums, ax, true);
  Tensor mask = T::cast(s, T::eq(s, sums, mx), real);
  return T::div(s, mask, T::sum(s, mask, ax, true));
}
Tensor matrix_norm_direction(Session& s, const Tensor& a, const Tensor& y, MatrixNorm kind) {
  if (a.numel() == 0) return a;
  switch (kind) {
    case MatrixNorm::frobenius: return T::div(s, a, batch_as_matrix(s, nonzero_or_one(s, y)));
    case MatrixNorm::nuclear: {
      SvdResult r = T::svd(s, a, SvdMode::thin);
      return mm(s, r.U, r.Vh);
    }
    case MatrixNorm::spectral: {
      SvdResult r = T::svd(s, a, SvdMode::thin);
      return mm(s, r.U.slice_view(1, 0, 1), r.Vh.slice_view(0, 0, 1));
    }
    case MatrixNorm::one:
    case MatrixNorm::inf: {
      const bool cols = kind == MatrixNorm::one;  // column sums reduce axis 0, then max over axis 1
      Tensor sums = T::sum(s, T::abs(s, a), {cols ? 0 : 1}, true);
      return T::mul(s, T::sign(s, a), split_ties(s, sums, cols ? 1 : 0, y.dtype()));
    }
  }
  throw ArgumentError("matrix_norm", "unknown MatrixNorm");
}
Tensor vector_norm_direction(Session& s, const Tensor& x, const Tensor& y, double p) {
  if (x.numel() == 0) return x;
  Tensor yv = batch_as_vector(s, y);
  Tensor w;
  if (p == 2) {
    w = T::div(s, x, nonzero_or_one(s, yv));
  } else if (p == 1) {
    w = T::sign(s, x);
  } else if (std::isinf(p)) {
    Tensor ax = T::abs(s, x);
    Tensor key = p > 0 ? ax : T::neg(s, ax);  // split_ties takes the maximum
    w = T::mul(s, T::sign(s, x), split_ties(s, key, 0, y.dtype()));
  } else {
    Tensor ax = T::abs(s, x);
    Tensor scaled = T::pow(s, T::div(s, ax, nonzero_or_one(s, yv)), p - 1);
    if (p < 1) scaled = T::select(s, T::eq(s, ax, 0.0), 0.0, scaled);  // 0^(p−1) = ∞ there
    w = T::mul(s, T::sign(s, x), scaled);
  }
  return p == 2 ? w : T::select(s, T::eq(s, yv, 0.0), 0.0, w);
}
/// Re Σ conj(W)·dA over the leading `nred` axes (batch axes after them are paired).
Tensor directional(Session& s, const Tensor& w, const Tensor& da, int nred) {
  DotDims d;
  for (int k = 0; k < nred; ++k) {
    d.lhs_contracting.push_back(k);
    d.rhs_contracting.push_back(k);
  }
  for (int k = nred; k < w.rank(); ++k) {
    d.lhs_batch.push_back(k);
    d.rhs_batch.push_back(k);
  }
  d.conj_lhs = true;
  Tensor r = T::dot_general(s, w, da, d);
  return is_complex(r.dtype()) ? T::real(s, r) : r;
}
// matrix_norm reduces 2 axes, vector_norm 1; x[0] = W.
int reduced_axes(const Node& n) noexcept { return n.op == OpId::matrix_norm ? 2 : 1; }
Tensor jvp_norm(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? directional(s, n.x[0], t[0], reduced_axes(n)) : Tensor();
}
void vjp_norm(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::mul(s, n.x[0], reduced_axes(n) == 2 ? batch_as_matrix(s, g) : batch_as_vector(s, g)), true};
}

}  // namespace

namespace detail {
void register_linalg_misc_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::slogdet)] = {nullptr, nullptr, jvp_slogdet, vjp_slogdet};
  t[static_cast<int>(OpId::pinv)] = {jvp_pinv, vjp_pinv};
  t[static_cast<int>(OpId::lstsq)] = {nullptr, nullptr, jvp_lstsq, vjp_lstsq};
  t[static_cast<int>(OpId::matrix_norm)] = {jvp_norm, vjp_norm};
  t[static_cast<int>(OpId::vector_norm)] = {jvp_norm, vjp_norm};
}
}  // namespace detail

SlogdetPair slogdet(Context& ctx, const EagerTensor& a) {
  SlogdetResult r = T::slogdet(ctx.session(), a.value());
  const bool complex_a = is_complex(r.sign.dtype());
  Tensor ys[] = {std::move(r.sign), std::move(r.logabsdet)};
  const EagerTensor* in[] = {&a};
  detail::MultiOut o = detail::finish_multi(ctx, OpId::slogdet, ys, in, [&](Node& n) { n.x[0] = a.value(); });
  if (!complex_a) o.e[0] = EagerTensor(o.e[0].value());  // a real sign is piecewise constant
  return {std::move(o.e[0]), std::move(o.e[1])};
}

EagerTensor pinv(Context& ctx, const EagerTensor& a, double rtol) {
  return finish<1>(ctx, OpId::pinv, T::pinv(ctx.session(), a.value(), rtol), {&a}, [&](Node& n) {
    n.x[0] = a.value();
    n.set_attrs<PinvAttrs>().rtol = rtol;
  });
}

LstsqSolution lstsq(Context& ctx, const EagerTensor& a, const EagerTensor& b, LstsqDriver driver, double rcond) {
  Session& s = ctx.session();
  LstsqResult r = T::lstsq(s, a.value(), b.value(), driver, rcond);
  Tensor ys[] = {std::move(r.X), std::move(r.rank), std::move(r.S)};
  const EagerTensor* in[] = {&a, &b};
  detail::MultiOut o = detail::finish_multi(ctx, OpId::lstsq, ys, in, [&](Node& n) {
    n.x[0] = a.value();
    n.x[1] = b.value();
    // P = A⁺ with the driver's truncation (gels assumes full rank: no truncation rule of
    // its own, pinv's default tolerance).
    n.x[2] = T::pinv(s, a.value(), driver == LstsqDriver::svd ? rcond : -1.0);
    n.set_attrs(LstsqAttrs{driver, rcond});
  });
  return {std::move(o.e[0]), EagerTensor(o.e[1].value()), std::move(o.e[2])};
}

EagerTensor matrix_norm(Context& ctx, const EagerTensor& a, MatrixNorm kind) {
  Session& s = ctx.session();
  Tensor y = T::matrix_norm(s, a.value(), kind);
  const Tensor yv = y;
  return finish<1>(ctx, OpId::matrix_norm, std::move(y), {&a}, [&](Node& n) {
    n.x[0] = matrix_norm_direction(s, a.value(), yv, kind);
    n.set_attrs<MatrixNormAttrs>().kind = kind;
  });
}

EagerTensor vector_norm(Context& ctx, const EagerTensor& x, double p) {
  Session& s = ctx.session();
  Tensor y = T::vector_norm(s, x.value(), p);
  if (p == 0) return EagerTensor(std::move(y));  // a count: piecewise constant
  const Tensor yv = y;
  return finish<1>(ctx, OpId::vector_norm, std::move(y), {&x}, [&](Node& n) {
    n.x[0] = vector_norm_direction(s, x.value(), yv, p);
    n.set_attrs<VectorNormAttrs>().p = p;
  });
}

}  // namespace tenferro::ad
