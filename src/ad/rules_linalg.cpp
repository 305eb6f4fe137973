// Differentiable linear algebra: solve, triangular_solve, inv, det, cholesky, eigh,
// matrix_exp (wrappers, JVP, VJP).
// Note [Linear solve rules] (Note [Complex convention]: VJPs are adjoints, so Aᴴ
// appears where JAX's rules have Aᵀ):
//   X = A⁻¹B:        dX = A⁻¹(dB − dA·X);     B̄ = A⁻ᴴ·X̄,  Ā = −B̄·Xᴴ.
//   op(Â)·X = B:     dX = op(Â)⁻¹(dB − op(dÂ)·X); B̄ = op(Â)⁻ᴴ·X̄, op(Â)‾ = −B̄·Xᴴ;
//   X·op(Â) = B:     dX = (dB − X·op(dÂ))·op(Â)⁻¹; B̄ = X̄·op(Â)⁻ᴴ, op(Â)‾ = −Xᴴ·B̄;
// where Â is the triangle of A that is read (unit diagonal: the diagonal is not a
// variable), so Ā is masked to that triangle. Matrices are [N, N, batch...].
#include "ad/linalg_util.hpp"
#include "ad/scan_util.hpp"
#include "ad/tape.hpp"
#include "tenferro/linalg.hpp"

namespace tenferro::ad {

using detail::finish;
using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;
using namespace linalg_util;


// ---- solve
void vjp_solve(Session& s, const Node& n, const Tensor& g, Grad* out) {
  Tensor gb = T::solve(s, adjoint(s, n.x[0]), g);
  if (n.in[0].kind) out[0] = {T::neg(s, mm_bh(s, gb, n.y[0])), true};
  if (n.in[1].kind) out[1] = {std::move(gb), true};
}
Tensor jvp_solve(Session& s, const Node& n, const Tensor* t) {
  Tensor r = t[1];
  if (t[0].defined()) r = r.defined() ? T::sub(s, r, mm(s, t[0], n.y[0])) : T::neg(s, mm(s, t[0], n.y[0]));
  return r.defined() ? T::solve(s, n.x[0], r) : Tensor();
}

// ---- triangular_solve (TriangularSolveAttrs).
/// The part of a matrix that is a variable of the triangular solve.
Tensor mask(Session& s, const Tensor& m, const TriangularSolveOptions& o) {
  const std::int64_t k = o.unit_diagonal ? 1 : 0;
  return o.tri == Triangle::lower ? T::tril(s, m, -k) : T::triu(s, m, k);
}
/// Solves with op(Â)ᴴ in place of op(Â) (on the same side).
Tensor solve_adjoint(Session& s, const Tensor& a, const Tensor& g, TriangularSolveOptions o) {
  if (o.op == MatOp::transpose && is_complex(a.dtype())) {
    // op(Â)ᴴ = conj(Â): conj(Y) solves Â·conj(Y) = conj(g).
    o.op = MatOp::none;
    return T::conj(s, T::triangular_solve(s, a, T::conj(s, g), o));
  }
  o.op = o.op == MatOp::none ? MatOp::adjoint : MatOp::none;
  return T::triangular_solve(s, a, g, o);
}
void vjp_triangular_solve(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const TriangularSolveOptions o = n.attr<TriangularSolveAttrs>().options;
  Tensor gb = solve_adjoint(s, n.x[0], g, o);
  if (n.in[0].kind) {
    Tensor gop = o.side == Side::left ? mm_bh(s, gb, n.y[0]) : mm_ah(s, n.y[0], gb);
    out[0] = {T::neg(s, mask(s, apply_op(s, gop, o.op), o)), true};
  }
  if (n.in[1].kind) out[1] = {std::move(gb), true};
}
Tensor jvp_triangular_solve(Session& s, const Node& n, const Tensor* t) {
  const TriangularSolveOptions o = n.attr<TriangularSolveAttrs>().options;
  Tensor r = t[1];
  if (t[0].defined()) {
    Tensor da = apply_op(s, mask(s, t[0], o), o.op);
    Tensor p = o.side == Side::left ? mm(s, da, n.y[0]) : mm(s, n.y[0], da);
    r = r.defined() ? T::sub(s, r, p) : T::neg(s, p);
  }
  return r.defined() ? T::triangular_solve(s, n.x[0], r, o) : Tensor();
}

// ---- inv: X = A⁻¹, dX = −X·dA·X, Ā = −Xᴴ·X̄·Xᴴ.
void vjp_inv(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {T::neg(s, mm_bh(s, mm_ah(s, n.y[0], g), n.y[0])), true};
}
Tensor jvp_inv(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? T::neg(s, mm(s, mm(s, n.y[0], t[0]), n.y[0])) : Tensor();
}

// ---- det: dy = tr(adj(A)·dA); Ā = ȳ·adj(A)ᴴ (batch values reshaped to [1, 1, b...]
// so they broadcast over the matrix axes, which lead). det is a polynomial, so its
// derivative exists everywhere: the adjugate comes from the SVD A = U·diag(s)·Vh as
// adj(A) = det(U)·det(Vh)·V·diag(Π_{j≠i} s_j)·Uᴴ (= det(A)·A⁻¹ where A is invertible),
// with the products of the other singular values exact at zeros (Note [prod with
// zeros]), so a singular A needs no inverse.
Tensor adjugate(Session& s, const Tensor& a) {
  SvdResult r = T::svd(s, a, SvdMode::full);
  const DType dt = a.dtype();
  Tensor p = T::cast(s, scan_util::products_of_others(s, r.S, 0), dt);  // [N, b...]
  Tensor phase = T::mul(s, T::det(s, r.U), T::det(s, r.Vh));              // [b...], |phase| = 1
  Tensor vp = scale_columns(s, adjoint(s, r.Vh), p);                     // V·diag(p)
  return T::mul(s, mm_bh(s, vp, r.U), batch_as_matrix(s, phase));
}
void vjp_det(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (n.x[0].extent(0) == 0) {  // 0×0: det = 1 is constant
    out[0] = {detail::zeros_like(s, n.x[0]), true};
    return;
  }
  out[0] = {T::mul(s, adjoint(s, adjugate(s, n.x[0])), batch_as_matrix(s, g)), true};
}
Tensor jvp_det(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined() || n.x[0].extent(0) == 0) return {};
  return T::sum(s, T::extract_diagonal(s, mm(s, adjugate(s, n.x[0]), t[0]), 0, 1), {-1});
}

// ---- matrix_exp: the Fréchet derivative L(A, E) is the upper-right block of
// exp([[A, E], [0, A]]) (Higham, "Functions of Matrices", 2008, Thm. 3.6), and its
// adjoint under Re⟨·,·⟩ is L(Aᴴ, ·). So the JVP and the VJP are one matrix_exp each of a
// 2N × 2N block matrix.
Tensor frechet_exp(Session& s, const Tensor& a, const Tensor& e) {
  const std::int64_t n = a.extent(0);
  Tensor ec = T::cast(s, e, promote(a.dtype(), e.dtype()));
  Tensor ac = T::cast(s, a, ec.dtype());
  Tensor z = detail::zeros_like(s, ac);
  Tensor top = T::concatenate(s, {ac, ec}, 1);
  Tensor bottom = T::concatenate(s, {z, ac}, 1);
  Tensor big = T::matrix_exp(s, T::concatenate(s, {top, bottom}, 0));
  return big.slice_view(0, 0, n).slice_view(1, n, 2 * n);
}
void vjp_matrix_exp(Session& s, const Node& n, const Tensor& g, Grad* out) {
  out[0] = {frechet_exp(s, adjoint(s, n.x[0]), g), false};
}
Tensor jvp_matrix_exp(Session& s, const Node& n, const Tensor* t) {
  return t[0].defined() ? frechet_exp(s, n.x[0], t[0]) : Tensor();
}

// ---- cholesky (Murray, "Differentiation of the Cholesky decomposition", 2016; the form
// PyTorch uses). With L the lower factor (L = Uᴴ for the upper one) and Φ(M) the lower
// triangle of M with its diagonal halved:
//   JVP: dL = L·Φ(L⁻¹·dA·L⁻ᴴ), dA the Hermitian matrix built from the triangle read;
//   VJP: S = herm(L⁻ᴴ·Φ(Lᴴ·L̄)·L⁻¹) and, since only one triangle of A is read, Ā is S on
//   the diagonal and 2·S on the off-diagonal entries of that triangle (zero elsewhere).
TriangularSolveOptions tri_opts(Side side, MatOp op) {
  TriangularSolveOptions o;
  o.side = side;
  o.tri = Triangle::lower;
  o.op = op;
  return o;
}
Tensor phi(Session& s, const Tensor& m) { return T::sub(s, T::tril(s, m, 0), T::mul(s, T::triu(s, T::tril(s, m, 0), 0), 0.5)); }
void vjp_cholesky(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const bool upper = n.attr<TriangleReadAttrs>().tri == Triangle::upper;
  Tensor l = upper ? adjoint(s, n.y[0]) : n.y[0];
  Tensor gl = upper ? adjoint(s, g) : g;
  Tensor p = phi(s, mm_ah(s, l, gl));
  Tensor y = T::triangular_solve(s, l, p, tri_opts(Side::left, MatOp::adjoint));
  Tensor z = T::triangular_solve(s, l, y, tri_opts(Side::right, MatOp::none));
  Tensor sym = hermitian_part(s, z);
  out[0] = {upper ? T::add(s, T::triu(s, sym, 1), T::triu(s, sym, 0)) : T::add(s, T::tril(s, sym, -1), T::tril(s, sym, 0)), true};
}
Tensor jvp_cholesky(Session& s, const Node& n, const Tensor* t) {
  if (!t[0].defined()) return {};
  const bool upper = n.attr<TriangleReadAttrs>().tri == Triangle::upper;
  Tensor l = upper ? adjoint(s, n.y[0]) : n.y[0];
  Tensor h = upper ? T::add(s, T::triu(s, t[0], 0), adjoint(s, T::triu(s, t[0], 1)))
                   : T::add(s, T::tril(s, t[0], 0), adjoint(s, T::tril(s, t[0], -1)));
  Tensor da = hermitian_part(s, h);  // real diagonal (potrf ignores its imaginary part)
  Tensor y = T::triangular_solve(s, l, da, tri_opts(Side::left, MatOp::none));
  Tensor m = T::triangular_solve(s, l, y, tri_opts(Side::right, MatOp::adjoint));
  Tensor dl = mm(s, l, phi(s, m));
  return upper ? adjoint(s, dl) : dl;
}

// ---- eigh: one node with outputs w (real, [N, b...]) and V (Note [Multi-output nodes]
// in tape.hpp); TriangleReadAttrs: the triangle read. Rules (A = V·diag(w)·Vᴴ;
// PyTorch's linalg_eig_backward for Hermitian input):
//   JVP: M = Vᴴ·dA·V, dw = Re diag(M), dV = V·(F ∘ M) with F_ij = 1/(w_j − w_i), F_ii = 0;
//   VJP: S = V·(diag(w̄) + F ∘ skew(Vᴴ·V̄))·Vᴴ with skew(X) = (X − Xᴴ)/2; as for cholesky,
//   Ā is S on the diagonal and 2·S off the diagonal of the triangle read.
// A loss of the eigenvalues alone leaves V̄ a symbolic zero: the VJP then never forms F,
// so it is exact at degenerate eigenvalues (the trace's gradient is the identity there).
// With V̄ present, F is broadened as the SVD rules are (Note [SVD broadening]; η = 1e-12
// fixed: F_ij = x/(x² + η·max|w|²) for x = w_j − w_i): finite at degenerate eigenvalues,
// where the term of the degenerate block is dropped (exact for losses that do not need
// it, e.g. gauge-invariant functions of the eigenspaces); gauge-dependent functions of
// complex V (its phases) have no derivative.
constexpr double kEighBroadening = 1e-12;
Tensor hermitian_from_triangle(Session& s, const Tensor& t, bool upper) {
  Tensor h = upper ? T::add(s, T::triu(s, t, 0), adjoint(s, T::triu(s, t, 1))) : T::add(s, T::tril(s, t, 0), adjoint(s, T::tril(s, t, -1)));
  return hermitian_part(s, h);
}
Tensor to_triangle(Session& s, const Tensor& sym, bool upper) {
  return upper ? T::add(s, T::triu(s, sym, 1), T::triu(s, sym, 0)) : T::add(s, T::tril(s, sym, -1), T::tril(s, sym, 0));
}
void vjp_eigh(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor &w = n.y[0], &v = n.y[1];
  Tensor inner;
  if (g[0].defined()) inner = diag_embed(s, T::cast(s, is_complex(g[0].dtype()) ? T::real(s, g[0]) : g[0], v.dtype()));
  if (g[1].defined()) {
    Tensor vhgv = mm_ah(s, v, g[1]);
    Tensor skew = T::mul(s, T::sub(s, vhgv, adjoint(s, vhgv)), 0.5);
    inner = detail::add_maybe(s, inner, T::mul(s, broadened_inverse_gaps(s, w, v.dtype(), kEighBroadening), skew));
  }
  Tensor sym = hermitian_part(s, mm_bh(s, mm(s, v, inner), v));
  out[0] = {to_triangle(s, sym, n.attr<TriangleReadAttrs>().tri == Triangle::upper), true};
}
void jvp_eigh(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  const Tensor &w = n.y[0], &v = n.y[1];
  Tensor m = mm(s, mm_ah(s, v, hermitian_from_triangle(s, t[0], n.attr<TriangleReadAttrs>().tri == Triangle::upper)), v);
  dy[0] = T::real(s, diag_part(s, m));
  dy[1] = mm(s, v, T::mul(s, broadened_inverse_gaps(s, w, v.dtype(), kEighBroadening), m));
}

// ---- qr (reduced, M >= N): one node with outputs Q and R. With C = Qᴴ·dA·R⁻¹ and
// Ω = tril(C, −1) − tril(C, −1)ᴴ + i·Im diag(C) (skew-Hermitian; the imaginary diagonal
// is the gauge of complex R with a positive diagonal):
//   JVP: dR = (C − Ω)·R, dQ = dA·R⁻¹ − Q·(C − Ω);
//   VJP: M = R·R̄ᴴ − Q̄ᴴ·Q, Ā = (Q̄ + Q·copyltu(M))·R⁻ᴴ with copyltu(M) = tril(M, −1) +
//   tril(M, −1)ᴴ + Re diag(M) (Walter and Lehmann 2018; PyTorch's linalg_qr_backward).
// A symbolic-zero Q̄ or R̄ drops its terms.
TriangularSolveOptions upper_right(MatOp op) {
  TriangularSolveOptions o;
  o.side = Side::right;
  o.tri = Triangle::upper;
  o.op = op;
  return o;
}
void vjp_qr(Session& s, const Node& n, const Tensor* g, Grad* out) {
  const Tensor &q = n.y[0], &r = n.y[1], &gq = g[0], &gr = g[1];
  Tensor m;
  if (gr.defined()) m = mm_bh(s, r, gr);
  if (gq.defined()) m = m.defined() ? T::sub(s, m, mm_ah(s, gq, q)) : T::neg(s, mm_ah(s, gq, q));
  Tensor low = T::tril(s, m, -1);
  Tensor cp = T::add(s, T::add(s, low, adjoint(s, low)), real_diag(s, m));
  Tensor b = detail::add_maybe(s, gq, mm(s, q, cp));
  out[0] = {T::triangular_solve(s, r, b, upper_right(MatOp::adjoint)), true};
}
void jvp_qr(Session& s, const Node& n, const Tensor* t, Tensor* dy) {
  if (!t[0].defined()) return;
  const Tensor &q = n.y[0], &r = n.y[1];
  Tensor da_rinv = T::triangular_solve(s, r, t[0], upper_right(MatOp::none));
  Tensor c = mm_ah(s, q, da_rinv);
  Tensor low = T::tril(s, c, -1);
  Tensor omega = T::sub(s, low, adjoint(s, low));
  if (is_complex(c.dtype())) {
    Tensor d = T::triu(s, T::tril(s, c, 0), 0);
    omega = T::add(s, omega, T::mul(s, T::cast(s, T::imag(s, d), c.dtype()), c128(0, 1)));
  }
  Tensor cw = T::sub(s, c, omega);
  dy[1] = mm(s, cw, r);
  dy[0] = T::sub(s, da_rinv, mm(s, q, cw));
}

}  // namespace

namespace detail {
void register_linalg_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::solve)] = {jvp_solve, vjp_solve};
  t[static_cast<int>(OpId::triangular_solve)] = {jvp_triangular_solve, vjp_triangular_solve};
  t[static_cast<int>(OpId::inv)] = {jvp_inv, vjp_inv};
  t[static_cast<int>(OpId::cholesky)] = {jvp_cholesky, vjp_cholesky};
  t[static_cast<int>(OpId::eigh)] = {nullptr, nullptr, jvp_eigh, vjp_eigh};
  t[static_cast<int>(OpId::qr)] = {nullptr, nullptr, jvp_qr, vjp_qr};
  t[static_cast<int>(OpId::det)] = {jvp_det, vjp_det};
  t[static_cast<int>(OpId::matrix_exp)] = {jvp_matrix_exp, vjp_matrix_exp};
}
}  // namespace detail

EagerTensor solve(Context& ctx, const EagerTensor& a, const EagerTensor& b) {
  Tensor y = T::solve(ctx.session(), a.value(), b.value());
  return finish<2>(ctx, OpId::solve, std::move(y), {&a, &b}, [&](Node& n) {
    n.x[0] = a.value();
    n.x[1] = b.value();
  });
}

EagerTensor triangular_solve(Context& ctx, const EagerTensor& a, const EagerTensor& b, const TriangularSolveOptions& opt) {
  Tensor y = T::triangular_solve(ctx.session(), a.value(), b.value(), opt);
  return finish<2>(ctx, OpId::triangular_solve, std::move(y), {&a, &b}, [&](Node& n) {
    n.x[0] = a.value();
    n.x[1] = b.value();
    n.set_attrs<TriangularSolveAttrs>().options = opt;
  });
}

}  // namespace tenferro::ad

namespace tenferro::ad {

EagerTensor inv(Context& ctx, const EagerTensor& a) {
  return finish<1>(ctx, OpId::inv, T::inv(ctx.session(), a.value()), {&a}, [&](Node& n) { n.x[0] = a.value(); });
}
EagerTensor det(Context& ctx, const EagerTensor& a) {
  return finish<1>(ctx, OpId::det, T::det(ctx.session(), a.value()), {&a}, [&](Node& n) { n.x[0] = a.value(); });
}
EagerTensor cholesky(Context& ctx, const EagerTensor& a, Triangle tri) {
  return finish<1>(ctx, OpId::cholesky, T::cholesky(ctx.session(), a.value(), tri), {&a}, [&](Node& n) {
    n.x[0] = a.value();
    n.set_attrs<TriangleReadAttrs>().tri = tri;
  });
}
EighPair eigh(Context& ctx, const EagerTensor& a, Triangle tri) {
  EighResult r = T::eigh(ctx.session(), a.value(), tri);
  Tensor ys[] = {std::move(r.W), std::move(r.V)};
  const EagerTensor* in[] = {&a};
  detail::MultiOut o = detail::finish_multi(ctx, OpId::eigh, ys, in, [&](Node& n) { n.set_attrs<TriangleReadAttrs>().tri = tri; });
  return {std::move(o.e[0]), std::move(o.e[1])};
}
QrPair qr(Context& ctx, const EagerTensor& a, bool positive_diagonal) {
  QrResult r = T::qr(ctx.session(), a.value(), QrMode::reduced, positive_diagonal);
  if (detail::differentiable(a) && a.value().extent(0) < a.value().extent(1))
    throw UnsupportedAdRule("qr", "no rule for wide matrices (M < N): got " + a.value().shape().to_string());
  Tensor ys[] = {std::move(r.Q), std::move(r.R)};
  const EagerTensor* in[] = {&a};
  detail::MultiOut o = detail::finish_multi(ctx, OpId::qr, ys, in, [&](Node& n) { n.set_attrs<QrAttrs>().positive_diagonal = positive_diagonal; });
  return {std::move(o.e[0]), std::move(o.e[1])};
}
EagerTensor matrix_exp(Context& ctx, const EagerTensor& a) {
  return finish<1>(ctx, OpId::matrix_exp, T::matrix_exp(ctx.session(), a.value()), {&a}, [&](Node& n) { n.x[0] = a.value(); });
}

}  // namespace tenferro::ad
