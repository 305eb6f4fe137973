// Differentiable singular value decomposition: ad::svd and ad::svdvals (wrappers, JVP,
// VJP). Matrices are [M, N, batch...], K = min(M, N), A = U·diag(S)·Vh with V = Vhᴴ.
//
// Note [SVD rules] (Townsend, "Differentiating the singular value decomposition", 2016;
// Wan and Zhang, "Automatic differentiation for complex valued SVD", 2019; PyTorch's
// svd_jvp / linalg_svd_backward in FunctionsManual.cpp). With dP = Uᴴ·dA·V (K × K):
//   dS  = Re diag(dP)
//   dU  = U·Ω_U + (I − U·Uᴴ)·dA·V·S⁻¹          (projector term only for M > K)
//   dV  = V·Ω_V + (I − V·Vᴴ)·dAᴴ·U·S⁻¹         (projector term only for N > K)
// where Ω_U = Uᴴ·dU and Ω_V = Vᴴ·dV are skew-Hermitian and Uᴴ·dA·V = Ω_U·S + dS − S·Ω_V.
// Off the diagonal this gives Ω_U = F ∘ (dP·S + S·dPᴴ), Ω_V = F ∘ (S·dP + dPᴴ·S) with
// F_ij = 1/(s_j² − s_i²) (the textbook form). The rules use the equivalent split
//   1/(s_j² − s_i²)·(a·s_j + b·s_i) = ½(a + b)/(s_j − s_i) + ½(a − b)/(s_j + s_i):
//   Ω_U = ½F⁻ ∘ (dP + dPᴴ) + ½F⁺ ∘ (dP − dPᴴ),  Ω_V = ½F⁻ ∘ (dP + dPᴴ) − ½F⁺ ∘ (dP − dPᴴ),
//   F⁻_ij = 1/(s_j − s_i) (F⁻_ii = 0),  F⁺_ij = 1/(s_j + s_i),
// so that only F⁻ is singular at a degenerate pair (Note [SVD broadening]). Its diagonal
// ½F⁺_ii·(dP − dPᴴ)_ii = i·Im dP_ii/(2s_i) is the complex gauge term: the diagonal only
// fixes Im(Ω_U − Ω_V)_ii = Im dP_ii/s_i (a phase e^{iφ} per singular pair is free), and
// the rule splits it evenly between U and V, as PyTorch does. The VJP is the adjoint of
// this R-linear map under Re⟨a, b⟩ (Note [Complex convention]); with J = Uᴴ·Ū,
// L = Vᴴ·V̄ and A_X = X − Xᴴ:
//   P̄ = ½F⁻ ∘ (A_J + A_L) + ½F⁺ ∘ (A_J − A_L) + diag(S̄)
//       (diagonal: i·(Im J_ii − Im L_ii)/(2s_i), PyTorch's imaginary-diagonal term)
//   Ā = U·(P̄ − [M > K] J·S⁻¹ − [N > K] S⁻¹·Lᴴ)·Vh + [M > K] Ū·S⁻¹·Vh + [N > K] U·S⁻¹·V̄ᴴ.
// Only gauge-invariant losses are differentiable: for complex input the loss must not
// depend on the phases (then Im J_ii = Im L_ii and the gauge term vanishes); a
// phase-dependent loss gets the derivative of the even-split gauge, which is not that of
// LAPACK's phase choice. For real input the gauge is a sign per pair and Ω_U, Ω_V have
// zero diagonals: dU, dV are unique.
//
// Note [SVD broadening]: F⁻, F⁺ and S⁻¹ diverge at degenerate (F⁻), pairs of zero (F⁺)
// and zero (S⁻¹) singular values. The rules use the Lorentzian broadening of Liao, Liu,
// Wang and Xiang, "Differentiable programming tensor networks", PRX 9, 031041 (2019):
//   1/x → x / (x² + ε),  ε = η·s_max² + tiny
// for x = s_j − s_i, s_j + s_i and s_i, per batch matrix (s_max = S[0], the largest;
// tiny = the dtype's smallest normal number, so a zero matrix gives 0, not 0/0). Scaling
// by s_max² makes the relative change η·(s_max/x)² independent of the scale of A: with
// the default η = 1e-12 a gap of 1e-3·s_max is exact to 1e-6 relative (1e-2: 1e-8), and
// |F⁻| ≤ 1/(2√η·s_max). η = 0 gives the exact formulas, with 0 instead of inf at exact
// ties. At an exact degeneracy s_i = s_j the broadened rule drops the term
// ½·F⁻_ij·(A_J + A_L)_ij (a 0/0 whose limit depends on the loss's derivative across the
// degeneracy, e.g. f′(s) for U·f(S)·Vh: the cotangents at the point do not determine it);
// it keeps the ½F⁺ term. So the gradient is exact when the degenerate block does not enter
// that term (losses of S alone, losses of singular triplets outside the degenerate
// block), and otherwise misses U·(½(X + Xᴴ) on the pair's off-diagonal entries)·Vh for
// L = Re⟨W, U·S·Vh⟩, X = Uᴴ·W·V (tested in ad_svd_test). The values-only path (svdvals,
// and any loss of S alone: Ū and V̄h are symbolic zeros) uses none of F⁻, F⁺, S⁻¹: it is
// exact and finite for repeated and zero singular values.
//
// ad::svd and ad::svdvals record one node with the outputs U, S (real) and Vh (Note
// [Multi-output nodes] in tape.hpp); svdvals exposes only S.
#include <limits>

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

// Node layout: y = {U, S, Vh} (thin, or full with M == N); SvdAttrs: η, and values_only
// when only S is exposed (svdvals: the JVP computes dS alone).

/// v [K, b...] reshaped to [h0, h1, b...] where one of h0, h1 is K and the other 1.
Tensor lead2(Session& s, const Tensor& v, std::int64_t h0, std::int64_t h1) {
  Dims shape{h0, h1};
  for (int i = 1; i < v.rank(); ++i) shape.push_back(v.extent(i));
  return T::reshape(s, v, shape.span());
}
/// v [K, b...] as a row [1, K, b...]: m * row scales m's columns (m·diag(v)).
Tensor as_row(Session& s, const Tensor& v) { return lead2(s, v, 1, v.extent(0)); }
/// v [K, b...] as a column [K, 1, b...]: col * m scales m's rows (diag(v)·m).
Tensor as_col(Session& s, const Tensor& v) { return lead2(s, v, v.extent(0), 1); }
/// x in dtype dt (x itself when it already has it: no copy).
Tensor as_dtype(Session& s, const Tensor& x, DType dt) { return x.dtype() == dt ? x : T::cast(s, x, dt); }
Tensor real_part(Session& s, const Tensor& x) { return is_complex(x.dtype()) ? T::real(s, x) : x; }

/// The broadened factors of Note [SVD broadening], halved where the rules use halves:
/// fm = ½·F⁻, fp = ½·F⁺ ([K, K, b...] in dt), inv_s = S⁻¹ ([K, b...], real).
struct Spectrum {
  Tensor fm, fp, inv_s;
};
Spectrum spectrum(Session& s, const Tensor& sv, double eta, DType dt) {
  if (sv.extent(0) == 0) {  // K = 0: empty factors (there is no s_max)
    Tensor z = as_dtype(s, T::mul(s, as_row(s, sv), as_col(s, sv)), dt);
    return {z, z, sv};
  }
  const double tiny = sv.dtype() == DType::f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  const Tensor smax = sv.slice_view(0, 0, 1);  // [1, b...]: S is descending
  Tensor eps = T::add(s, T::mul(s, T::mul(s, smax, smax), eta), tiny);
  Tensor eps2 = lead2(s, eps, 1, 1);
  Tensor srow = as_row(s, sv), scol = as_col(s, sv);
  auto reg = [&](const Tensor& x, const Tensor& e) { return T::div(s, x, T::add(s, T::mul(s, x, x), e)); };
  Tensor fm = T::mul(s, reg(T::sub(s, srow, scol), eps2), 0.5);  // ½/(s_j − s_i), 0 on the diagonal
  Tensor fp = T::mul(s, reg(T::add(s, srow, scol), eps2), 0.5);  // ½/(s_j + s_i)
  return {as_dtype(s, fm, dt), as_dtype(s, fp, dt), reg(sv, eps)};
}

// dS = Re diag(Uᴴ·dA·V) = Re Σ_m conj(U_mi)·(dA·V)_mi.
Tensor jvp_values(Session& s, const Tensor& u, const Tensor& vh, const Tensor& da) {
  Tensor prod = T::mul(s, detail::conj_if_complex(s, u), mm_bh(s, da, vh));
  const std::int64_t ax0[] = {0};
  return real_part(s, T::sum(s, prod, ax0));
}

// Note [SVD rules].
void jvp_svd(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  const Tensor &da = t[0], &u = n.y[0], &sv = n.y[1], &vh = n.y[2];
  if (n.attr<SvdAttrs>().values_only) {
    dy[1] = jvp_values(s, u, vh, da);
    return;
  }
  const DType dt = u.dtype();
  const std::int64_t m = u.extent(0), k = u.extent(1), nn = vh.extent(1);
  const Spectrum sp = spectrum(s, sv, n.attr<SvdAttrs>().eta, dt);
  Tensor dav = mm_bh(s, da, vh);  // dA·V [M, K]
  Tensor dp = mm_ah(s, u, dav);   // Uᴴ·dA·V [K, K]
  // Ω_U = ½F⁻∘H + ½F⁺∘Q, Ω_V = ½F⁻∘H − ½F⁺∘Q with H = dP + dPᴴ, Q = dP − dPᴴ
  // (the diagonal of ½F⁺∘Q is the gauge term i·Im dP_ii/(2s_i)).
  Tensor dph = adjoint(s, dp);
  Tensor h = T::mul(s, sp.fm, T::add(s, dp, dph)), q = T::mul(s, sp.fp, T::sub(s, dp, dph));
  Tensor om_u = T::add(s, h, q), om_v = T::sub(s, h, q);
  Tensor inv_row = as_row(s, as_dtype(s, sp.inv_s, dt));
  if (m > k) {  // dU = U·(Ω_U − dP·S⁻¹) + dA·V·S⁻¹
    dy[0] = T::add(s, mm(s, u, T::sub(s, om_u, T::mul(s, dp, inv_row))), T::mul(s, dav, inv_row));
  } else {
    dy[0] = mm(s, u, om_u);
  }
  Tensor dv;
  if (nn > k) {  // dV = V·(Ω_V − dPᴴ·S⁻¹) + dAᴴ·U·S⁻¹
    dv = T::add(s, mm_ah(s, vh, T::sub(s, om_v, T::mul(s, dph, inv_row))), T::mul(s, mm_ah(s, da, u), inv_row));
  } else {
    dv = mm_ah(s, vh, om_v);
  }
  dy[1] = real_part(s, diag_part(s, dp));
  dy[2] = adjoint(s, dv);  // dVh = dVᴴ
}
void vjp_svd(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor &u = n.y[0], &sv = n.y[1], &vh = n.y[2], &gu = g[0], &gvh = g[2];
  const DType dt = u.dtype();
  const std::int64_t m = u.extent(0), k = u.extent(1), nn = vh.extent(1);
  // diag(S̄) alone when Ū and V̄h are symbolic zeros: Ā = U·diag(S̄)·Vh, exact.
  Tensor pbar;
  if (g[1].defined()) pbar = T::mul(s, Tensor::eye(k, dt), as_row(s, as_dtype(s, real_part(s, g[1]), dt)));
  if (!gu.defined() && !gvh.defined()) {
    out[0] = {mm(s, mm(s, u, pbar), vh), true};
    return;
  }
  const Spectrum sp = spectrum(s, sv, n.attr<SvdAttrs>().eta, dt);
  // J = Uᴴ·Ū, L = Vᴴ·V̄ = Vh·V̄hᴴ; P̄ = ½F⁻∘(A_J + A_L) + ½F⁺∘(A_J − A_L) + diag(S̄),
  // A_X = X − Xᴴ.
  Tensor j, l, aj, al;
  if (gu.defined()) {
    j = mm_ah(s, u, gu);
    aj = T::sub(s, j, adjoint(s, j));
  }
  if (gvh.defined()) {
    l = mm_bh(s, vh, gvh);
    al = T::sub(s, l, adjoint(s, l));
  }
  Tensor sum = detail::add_maybe(s, aj, al);
  Tensor diff = !al.defined() ? aj : aj.defined() ? T::sub(s, aj, al) : T::neg(s, al);
  pbar = detail::add_maybe(s, pbar, T::add(s, T::mul(s, sp.fm, sum), T::mul(s, sp.fp, diff)));
  Tensor inv_row = as_row(s, as_dtype(s, sp.inv_s, dt));
  Tensor left;  // U·inner (+ Ū·S⁻¹), multiplied by Vh below
  if (m > k && gu.defined()) {
    left = T::add(s, mm(s, u, T::sub(s, pbar, T::mul(s, j, inv_row))), T::mul(s, gu, inv_row));
  } else if (nn > k && gvh.defined()) {
    Tensor inv_col = as_col(s, as_dtype(s, sp.inv_s, dt));
    left = mm(s, u, T::sub(s, pbar, T::mul(s, inv_col, adjoint(s, l))));
  } else {
    left = mm(s, u, pbar);
  }
  Tensor ga = mm(s, left, vh);
  if (nn > k && gvh.defined()) ga = T::add(s, ga, mm(s, T::mul(s, u, inv_row), gvh));  // + U·S⁻¹·V̄ᴴ
  out[0] = {std::move(ga), true};
}

bool differentiated(Context& ctx, const EagerTensor& a) {
  return (a.requires_grad() && detail::EagerAccess::no_grad(ctx) == 0) || a.tangent().defined();  // as detail::differentiable, under no_grad only with a tangent
}

}  // namespace

namespace detail {
void register_svd_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::svd)] = {nullptr, nullptr, jvp_svd, vjp_svd};
}
}  // namespace detail

namespace {
/// The svd node (Note [SVD rules]); values_only: svdvals, which exposes only S.
detail::MultiOut record_svd(Context& ctx, const EagerTensor& a, SvdResult&& r, double eta, bool values_only) {
  Tensor ys[] = {std::move(r.U), std::move(r.S), std::move(r.Vh)};
  const EagerTensor* in[] = {&a};
  return detail::finish_multi(ctx, OpId::svd, ys, in, [&](Node& n) {
    n.set_attrs(SvdAttrs{values_only, eta});
  });
}
}  // namespace

EagerTensor svdvals(Context& ctx, const EagerTensor& a) {
  Session& s = ctx.session();
  if (!differentiated(ctx, a)) return EagerTensor(T::svdvals(s, a.value()));
  // The rules need U and V (Ā = U·diag(S̄)·Vh): the thin factorization, kept in the node.
  return std::move(record_svd(ctx, a, T::svd(s, a.value(), SvdMode::thin), 0.0, true).e[1]);
}

SvdTriple svd(Context& ctx, const EagerTensor& a, SvdMode mode, const SvdAdOptions& opt) {
  Session& s = ctx.session();
  if (mode == SvdMode::values) return {EagerTensor(), svdvals(ctx, a), EagerTensor()};
  const bool diff = differentiated(ctx, a);
  const Tensor& av = a.value();
  if (diff && mode == SvdMode::full && av.rank() >= 2 && av.extent(0) != av.extent(1))
    throw UnsupportedAdRule("svd", "no rule for full_matrices with M != N (the extra singular vectors are not unique): got " +
                                       av.shape().to_string() + "; use SvdMode::thin");
  SvdResult r = T::svd(s, av, mode);
  if (!diff) return {EagerTensor(std::move(r.U)), EagerTensor(std::move(r.S)), EagerTensor(std::move(r.Vh))};
  detail::MultiOut o = record_svd(ctx, a, std::move(r), opt.eta, false);
  return {std::move(o.e[0]), std::move(o.e[1]), std::move(o.e[2])};
}

}  // namespace tenferro::ad
