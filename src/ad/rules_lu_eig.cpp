// Differentiable LU family (lu, lu_factor, lu_solve) and general eigendecomposition
// (eig, eigvals): wrappers, JVP and VJP rules. Matrices are [M, N, batch...].
//
// Note [LU rules] (P·A = L·U with partial pivoting; P is piecewise constant, so it and
// the pivots are constants: their tangents are zero). lu records ONE node with its three
// outputs P, L [M, K, b...] and U [K, N, b...] (P a constant output), and lu_factor one
// node whose output is the factor F [M, N, b...] in LAPACK's own layout (L strictly
// below the diagonal, unit diagonal implied; U on and above it; its pivots a constant).
// Both nodes save F and the pivots, and their rules share one core written on F: lu's
// JVP returns dL = tril(dF, −1) and dU = triu(dF) cut to their shapes, and its VJP packs
// F̄ = tril(L̄, −1) + triu(Ū) (each padded to [M, N]) before the core. With
// K = min(M, N), L₁, U₁ the leading K×K blocks, A' = P·A:
//   square:  C = L₁⁻¹·dA'·U₁⁻¹, dL = L₁·tril(C, −1), dU = triu(C)·U₁;
//            Ā' = L₁⁻ᴴ·(tril(L₁ᴴ·L̄, −1) + triu(Ū·U₁ᴴ))·U₁⁻ᴴ;
//   tall:    L = [L₁; L₂], dL₂ = (dA'₂ − L₂·dU)·U₁⁻¹; in the VJP triu(Ū·U₁ᴴ − L₂ᴴ·L̄₂)
//            replaces triu(Ū·U₁ᴴ), and Ā'₂ = L̄₂·U₁⁻ᴴ;
//   wide:    U = [U₁, U₂], dU₂ = L₁⁻¹·(dA'₂ − dL·U₂); in the VJP tril(L₁ᴴ·L̄ − Ū₂·U₂ᴴ, −1)
//            replaces tril(L₁ᴴ·L̄, −1), and Ā'₂ = L₁⁻ᴴ·Ū₂;
//   and Ā = Pᵀ·Ā'. L̄ and Ū are the strictly lower and the upper parts of F̄. These are
// PyTorch's linalg_lu_backward / lu_factor_ex_jvp (FunctionsManual.cpp; the square case
// is also in Murray 2016, §3), rederived here as the adjoint of the JVP under
// Re⟨·,·⟩ (Note [Complex convention]). Every solve reads F itself (triangular_solve
// with the lower unit-diagonal or the upper triangle), so L and U are never unpacked
// for a solve.
//
// Note [lu_solve rules] (X = A⁻¹·B, A = Pᵀ·L·U from (F, pivots)):
//   JVP: dX = U⁻¹·L⁻¹·(P·dB − dL·(U·X) − L·(dU·X)), dL = tril(dF, −1), dU = triu(dF);
//   VJP: W = U⁻ᴴ·X̄, Z = L⁻ᴴ·W, B̄ = Pᵀ·Z, F̄ = −tril(Z·(U·X)ᴴ, −1) − triu(W·Xᴴ)
// (Ā = −B̄·Xᴴ pulled back through dA = Pᵀ·(dL·U + L·dU); PyTorch's linalg_lu_solve_LU
// and linalg_lu_solve_jvp). F̄ is the cotangent of the packed LU argument, whatever
// produced it (lu_factor, or any matrix the user passes as a factorization).
//
// Note [eig rules] (A·V = V·diag(w), distinct eigenvalues, columns of V of unit 2-norm
// as LAPACK geev returns them, phases a gauge; Giles 2008, "Collected matrix derivative
// results", §3.1, with the normalization term of PyTorch's linalg_eig_jvp/backward):
//   JVP: Δ = V⁻¹·dA·V, dw = diag(Δ), X = V·(F ∘ Δ) with F_ij = 1/(w_j − w_i), F_ii = 0,
//        dV = X − V·diag(Re diag(Vᴴ·X))       (keeps ‖v_i‖ = 1; phase term chosen 0);
//   VJP: Ā = V⁻ᴴ·(diag(w̄) + conj(F) ∘ (Vᴴ·V̄ − Vᴴ·V·diag(Re diag(Vᴴ·V̄))))·Vᴴ.
// The VJP is the exact adjoint of this JVP. The true derivative of V depends on LAPACK's
// phase convention (largest component real), so only gauge-invariant functions of V
// (|V|², V·f(diag w)·V⁻¹, the eigenvalues) are differentiated correctly; for such a loss
// Im diag(Vᴴ·V̄) = 0 and the dropped phase term does not matter. eigvals records an eig
// node whose outputs are w and V and exposes only w.
#include <utility>
#include <vector>

#include "ad/linalg_util.hpp"
#include "ad/tape.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;
using namespace linalg_util;

TriangularSolveOptions tri(Side side, Triangle t, MatOp op, bool unit) {
  TriangularSolveOptions o;
  o.side = side;
  o.tri = t;
  o.op = op;
  o.unit_diagonal = unit;
  return o;
}
// Solves with the triangles of a packed factor F (only the named triangle is read).
Tensor l_solve(Session& s, const Tensor& f, const Tensor& b, MatOp op) {
  return T::triangular_solve(s, f, b, tri(Side::left, Triangle::lower, op, true));
}
Tensor u_solve(Session& s, const Tensor& f, const Tensor& b, Side side, MatOp op) {
  return T::triangular_solve(s, f, b, tri(side, Triangle::upper, op, false));
}
/// L = tril(F, −1) + I of a square packed block.
Tensor unit_lower(Session& s, const Tensor& f) { return T::add(s, T::tril(s, f, -1), Tensor::eye(f.extent(0), f.dtype())); }

/// perm [M, 1, b...] (i64; (P·X) row i = X row perm[i]) from LAPACK's pivots [K, b...]:
/// the take_along_axis index on axis 0. Built in the rules, only when a permutation is
/// applied (the forward keeps pivots).
Tensor pivot_rows(Session& s, const Tensor& pivots, std::int64_t m) {
  Tensor perm = T::lu_pivots_to_permutation(s, pivots, m);
  Dims shape{m, 1};
  for (int i = 1; i < perm.rank(); ++i) shape.push_back(perm.extent(i));
  return perm.reshape_view(shape.span());
}
/// P [M, M, b...] in `dtype` with P·A = L·U: row i of P is row perm[i] of I.
Tensor permutation_matrix(Session& s, const Tensor& pivots, std::int64_t m, DType dtype) {
  Dims shape{m, m}, dims{0, 1};
  for (int i = 1; i < pivots.rank(); ++i) shape.push_back(pivots.extent(i));
  Tensor eye = Tensor::eye(m, dtype);
  if (shape.size() > 2) eye = T::broadcast_in_dim_view(eye, shape.span(), dims.span());
  return T::take_along_axis(s, eye, pivot_rows(s, pivots, m), 0);
}
/// P·X (a row gather) or, with `transpose`, Pᵀ·X (a product with the permutation matrix;
/// the rules that need it cost O(M³) already) for X [M, K, b...].
Tensor permute_rows(Session& s, const Tensor& x, const Tensor& pivots, bool transpose) {
  if (!transpose) return T::take_along_axis(s, x, pivot_rows(s, pivots, x.extent(0)), 0);
  return mm_ah(s, permutation_matrix(s, pivots, x.extent(0), x.dtype()), x);
}

// ---- lu / lu_factor (Note [LU rules]). lu_factor's node: y[0] = F, x[0] = pivots;
// lu's: y = {P, L, U}, x[0] = pivots, x[1] = F.

// The packed tangent dF of F from dA.
Tensor lu_factor_tangent(Session& s, const Tensor& f, const Tensor& pivots, const Tensor& t) {
  const std::int64_t m = f.extent(0), nn = f.extent(1), k = std::min(m, nn);
  if (k == 0) return detail::zeros_like(s, f);
  const Tensor f1 = f.slice_view(0, 0, k).slice_view(1, 0, k);
  const Tensor da = permute_rows(s, t, pivots, false);  // P·dA
  Tensor c = u_solve(s, f1, l_solve(s, f1, da.slice_view(0, 0, k).slice_view(1, 0, k), MatOp::none), Side::right, MatOp::none);
  Tensor dl = mm(s, unit_lower(s, f1), T::tril(s, c, -1));
  Tensor du = mm(s, T::triu(s, c, 0), T::triu(s, f1, 0));
  Tensor d1 = T::add(s, dl, du);  // dL strictly lower, dU upper: the packed tangent
  if (m > nn) {
    Tensor r = T::sub(s, da.slice_view(0, k, m), mm(s, f.slice_view(0, k, m), du));
    return T::concatenate(s, {d1, u_solve(s, f1, r, Side::right, MatOp::none)}, 0);
  }
  if (m < nn) {
    Tensor r = T::sub(s, da.slice_view(1, k, nn), mm(s, dl, f.slice_view(1, k, nn)));
    return T::concatenate(s, {d1, l_solve(s, f1, r, MatOp::none)}, 1);
  }
  return d1;
}

// Ā from the packed cotangent F̄ = g.
Tensor lu_factor_cotangent(Session& s, const Tensor& f, const Tensor& pivots, const Tensor& g) {
  const std::int64_t m = f.extent(0), nn = f.extent(1), k = std::min(m, nn);
  if (k == 0) return detail::zeros_like(s, f);
  const Tensor f1 = f.slice_view(0, 0, k).slice_view(1, 0, k);
  const Tensor g1 = g.slice_view(0, 0, k).slice_view(1, 0, k);
  Tensor lower = mm_ah(s, unit_lower(s, f1), T::tril(s, g1, -1));  // L₁ᴴ·L̄
  Tensor upper = mm_bh(s, T::triu(s, g1, 0), T::triu(s, f1, 0));   // Ū·U₁ᴴ
  if (m > nn) upper = T::sub(s, upper, mm_ah(s, f.slice_view(0, k, m), g.slice_view(0, k, m)));
  if (m < nn) lower = T::sub(s, lower, mm_bh(s, g.slice_view(1, k, nn), f.slice_view(1, k, nn)));
  Tensor inner = T::add(s, T::tril(s, lower, -1), T::triu(s, upper, 0));
  Tensor ga;
  if (m > nn) {
    Tensor top = l_solve(s, f1, inner, MatOp::adjoint);
    ga = u_solve(s, f1, T::concatenate(s, {top, g.slice_view(0, k, m)}, 0), Side::right, MatOp::adjoint);
  } else if (m < nn) {
    Tensor left = u_solve(s, f1, inner, Side::right, MatOp::adjoint);
    ga = l_solve(s, f1, T::concatenate(s, {left, g.slice_view(1, k, nn)}, 1), MatOp::adjoint);
  } else {
    ga = u_solve(s, f1, l_solve(s, f1, inner, MatOp::adjoint), Side::right, MatOp::adjoint);
  }
  return permute_rows(s, ga, pivots, true);  // Ā = Pᵀ·Ā'
}

Tensor jvp_lu_factor(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? lu_factor_tangent(s, n.y[0], n.x[0], t[0]) : Tensor();
}
void vjp_lu_factor(Session& s, const Node& n, const Tensor& g, Grad* out) { out[0] = {lu_factor_cotangent(s, n.y[0], n.x[0], g), true}; }

void jvp_lu(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  const Tensor& f = n.x[1];
  const std::int64_t m = f.extent(0), nn = f.extent(1), k = std::min(m, nn);
  const Tensor df = lu_factor_tangent(s, f, n.x[0], t[0]);
  dy[1] = T::tril(s, df.slice_view(1, 0, k), -1);  // dP = 0 (dy[0] stays undefined)
  dy[2] = T::triu(s, df.slice_view(0, 0, k), 0);
}
void vjp_lu(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor& f = n.x[1];
  const std::int64_t m = f.extent(0), nn = f.extent(1), k = std::min(m, nn);
  Tensor packed;  // F̄ = tril(L̄, −1) + triu(Ū), each padded with zeros to F's shape
  if (g[1].defined()) {
    packed = T::tril(s, g[1], -1);
    if (nn > k) packed = T::concatenate(s, {packed, detail::zeros_like(s, f.slice_view(1, k, nn))}, 1);
  }
  if (g[2].defined()) {
    Tensor u = T::triu(s, g[2], 0);
    if (m > k) u = T::concatenate(s, {u, detail::zeros_like(s, f.slice_view(0, k, m))}, 0);
    packed = detail::add_maybe(s, packed, u);
  }
  if (packed.defined()) out[0] = {lu_factor_cotangent(s, f, n.x[0], packed), true};
}

// ---- lu_solve (Note [lu_solve rules]). Node: x[0] = F, x[1] = pivots, y = X;
// LuSolveAttrs: B (and X) is a vector [N].
Tensor jvp_lu_solve(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined() && !t[2].defined()) return {};
  const Tensor& f = n.x[0];
  Tensor r;
  if (t[2].defined()) r = permute_rows(s, as_column(s, t[2]), n.x[1], false);  // P·dB
  if (t[0].defined()) {
    const Tensor x = as_column(s, n.y[0]);
    Tensor ux = mm(s, T::triu(s, f, 0), x);
    Tensor e = T::add(s, mm(s, T::tril(s, t[0], -1), ux), mm(s, unit_lower(s, f), mm(s, T::triu(s, t[0], 0), x)));
    r = r.defined() ? T::sub(s, r, e) : T::neg(s, e);
  }
  Tensor dx = u_solve(s, f, l_solve(s, f, r, MatOp::none), Side::left, MatOp::none);
  return n.attr<LuSolveAttrs>().vector_rhs ? dx.reshape_view({dx.extent(0)}) : dx;
}
void vjp_lu_solve(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const Tensor& f = n.x[0];
  Tensor w = u_solve(s, f, as_column(s, g), Side::left, MatOp::adjoint);  // U⁻ᴴ·X̄
  Tensor z = l_solve(s, f, w, MatOp::adjoint);                          // L⁻ᴴ·U⁻ᴴ·X̄
  if (n.in[0].kind) {
    const Tensor x = as_column(s, n.y[0]);
    Tensor ux = mm(s, T::triu(s, f, 0), x);
    out[0] = {T::neg(s, T::add(s, T::tril(s, mm_bh(s, z, ux), -1), T::triu(s, mm_bh(s, w, x), 0))), true};
  }
  if (n.in[2].kind) {
    Tensor gb = permute_rows(s, z, n.x[1], true);  // B̄ = Pᵀ·Z
    out[2] = {n.attr<LuSolveAttrs>().vector_rhs ? gb.reshape_view({gb.extent(0)}) : std::move(gb), true};
  }
}

// ---- eig (Note [eig rules]): one node with outputs w and V (Note [Multi-output nodes]
// in tape.hpp); EigAttrs::values_only for eigvals (only w is exposed: the JVP skips dV). A loss of
// the eigenvalues alone leaves V̄ a symbolic zero and the VJP never forms F (exact at
// repeated eigenvalues while V stays invertible).
/// Re diag(Vᴴ·X) as [N, b...] (column-wise Re Σ_k conj(V_ki)·X_ki, no N×N product).
Tensor re_col_dots(Session& s, const Tensor& v, const Tensor& x) {
  return T::real(s, T::sum(s, T::mul(s, T::conj(s, v), x), {0}));
}
void jvp_eig(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  const Tensor &w = n.y[0], &v = n.y[1];
  const Tensor da = T::cast(s, t[0], v.dtype());
  Tensor delta = T::solve(s, v, mm(s, da, v));  // V⁻¹·dA·V
  dy[0] = diag_part(s, delta);
  if (n.attr<EigAttrs>().values_only) return;
  Tensor x = mm(s, v, T::mul(s, inverse_gaps(s, w, v.dtype()), delta));
  dy[1] = T::sub(s, x, scale_columns(s, v, re_col_dots(s, v, x)));
}
void vjp_eig(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor &w = n.y[0], &v = n.y[1];
  Tensor inner;
  if (g[0].defined()) inner = diag_embed(s, g[0].dtype() == v.dtype() ? g[0] : T::cast(s, g[0], v.dtype()));
  if (g[1].defined()) {
    Tensor m = T::sub(s, mm_ah(s, v, g[1]), scale_columns(s, mm_ah(s, v, v), re_col_dots(s, v, g[1])));
    inner = detail::add_maybe(s, inner, T::mul(s, T::conj(s, inverse_gaps(s, w, v.dtype())), m));
  }
  out[0] = {T::solve(s, adjoint(s, v), mm_bh(s, inner, v)), true};  // V⁻ᴴ·(…)·Vᴴ
}

}  // namespace

namespace detail {
void register_lu_eig_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::lu)] = {nullptr, nullptr, jvp_lu, vjp_lu};
  t[static_cast<int>(OpId::lu_factor)] = {jvp_lu_factor, vjp_lu_factor};
  t[static_cast<int>(OpId::lu_solve)] = {jvp_lu_solve, vjp_lu_solve};
  t[static_cast<int>(OpId::eig)] = {nullptr, nullptr, jvp_eig, vjp_eig};
}
}  // namespace detail

LuFactors lu(Context& ctx, const EagerTensor& a) {
  Session& s = ctx.session();
  if (!detail::differentiable(a)) {
    LuResult r = T::lu(s, a.value());
    return {std::move(r.P), EagerTensor(std::move(r.L)), EagerTensor(std::move(r.U))};
  }
  // Note [LU rules]: one node with the three outputs, saving the packed factor.
  LuFactorResult f = T::lu_factor(s, a.value());
  const std::int64_t m = f.LU.extent(0), nn = f.LU.extent(1), k = std::min(m, nn);
  const DType dt = f.LU.dtype();
  Tensor ys[3] = {permutation_matrix(s, f.pivots, m, dt),
                  T::add(s, T::tril(s, f.LU.slice_view(1, 0, k), -1), Tensor::eye(m, dt, k)),
                  T::triu(s, f.LU.slice_view(0, 0, k), 0)};
  const EagerTensor* in[1] = {&a};
  detail::MultiOut o = detail::finish_multi(ctx, OpId::lu, ys, in, [&](Node& n) {
    n.x[0] = f.pivots;
    n.x[1] = f.LU;
  });
  return {o.e[0].value(), std::move(o.e[1]), std::move(o.e[2])};
}

LuPacked lu_factor(Context& ctx, const EagerTensor& a) {
  LuFactorResult f = T::lu_factor(ctx.session(), a.value());
  if (!detail::differentiable(a)) return {EagerTensor(std::move(f.LU)), std::move(f.pivots)};
  const Tensor pivots = f.pivots;
  EagerTensor packed = finish<1>(ctx, OpId::lu_factor, std::move(f.LU), {&a}, [&](Node& n) { n.x[0] = pivots; });
  return {std::move(packed), pivots};
}

EagerTensor lu_solve(Context& ctx, const EagerTensor& lu, const Tensor& pivots, const EagerTensor& b) {
  Tensor x = T::lu_solve(ctx.session(), LuFactorResult{lu.value(), pivots}, b.value());
  return finish<3>(ctx, OpId::lu_solve, std::move(x), {&lu, nullptr, &b}, [&](Node& n) {
    n.x[0] = lu.value();
    n.x[1] = pivots;
    n.set_attrs<LuSolveAttrs>().vector_rhs = b.rank() == 1;
  });
}

namespace {
/// The eig node of eig and eigvals (values_only: only w is exposed).
detail::MultiOut record_eig(Context& ctx, const EagerTensor& a, bool values_only) {
  EigResult r = T::eig(ctx.session(), a.value());
  Tensor ys[] = {std::move(r.W), std::move(r.V)};
  const EagerTensor* in[] = {&a};
  return detail::finish_multi(ctx, OpId::eig, ys, in, [&](Node& n) { n.set_attrs<EigAttrs>().values_only = values_only; });
}
}  // namespace

EigPair eig(Context& ctx, const EagerTensor& a) {
  detail::MultiOut o = record_eig(ctx, a, false);
  return {std::move(o.e[0]), std::move(o.e[1])};
}

EagerTensor eigvals(Context& ctx, const EagerTensor& a) {
  if (!detail::differentiable(a)) return EagerTensor(T::eigvals(ctx.session(), a.value()));
  return std::move(record_eig(ctx, a, true).e[0]);  // the rules need V
}

}  // namespace tenferro::ad
