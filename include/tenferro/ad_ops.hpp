#pragma once
/// \file ad_ops.hpp
/// Differentiable ops on eager tensors (included by ad.hpp). Each computes the value
/// with the plain op of the same name on `ctx.session()` (same semantics, dtypes and
/// errors as ops.hpp, structural.hpp, indexing.hpp, dot.hpp, einsum.hpp), then records
/// a tape node and/or computes the output tangent (Note [Eager AD runtime]).
/// Additional errors: UnsupportedAdRule when the op would be recorded or given a
/// tangent but has no rule for this configuration (listed per op below);
/// RuntimeStateError for an input that refers to a freed tape (Note [Second backward]).
/// Rules and their conventions: docs/ad.md.

#include <optional>

#include "tenferro/dot.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/fft.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad {

// ---------------------------------------------------------------- elementwise binary
// maximum/minimum: on ties (a == b) each operand receives half of the cotangent (JAX).
// pow: d/da = b·a^(b−1), 0 where b = 0 (also at a = 0); d/db = y·log(a) (NaN for a < 0
// in real dtypes), 0 where a = 0 and Re b ≥ 0 (PyTorch's and JAX's choices).
// rem: d/da = 1, d/db = -trunc(a / b).
#define TENFERRO_AD_BINARY(name) \
  TENFERRO_API EagerTensor name(Context& ctx, const AdOperand& a, const AdOperand& b);
TENFERRO_AD_BINARY(add)
TENFERRO_AD_BINARY(sub)
TENFERRO_AD_BINARY(mul)
TENFERRO_AD_BINARY(div)
TENFERRO_AD_BINARY(rem)
TENFERRO_AD_BINARY(maximum)
TENFERRO_AD_BINARY(minimum)
TENFERRO_AD_BINARY(pow)
#undef TENFERRO_AD_BINARY

/// Comparison: a constant bool tensor (not differentiable).
TENFERRO_API EagerTensor compare(Context& ctx, const AdOperand& a, const AdOperand& b, CompareOp op);
/// pred ? on_true : on_false; the cotangent goes to the branch selected (pred is constant).
TENFERRO_API EagerTensor select(Context& ctx, const AdOperand& pred, const AdOperand& on_true, const AdOperand& on_false);
/// min(max(x, lo), hi): x receives the cotangent where lo < x < hi, lo where x < lo, hi
/// where x > hi; at exact ties nobody does (documented choice).
TENFERRO_API EagerTensor clamp(Context& ctx, const AdOperand& lo, const AdOperand& x, const AdOperand& hi);

// ---------------------------------------------------------------- elementwise unary
// sign is not differentiable (zero tangent). abs of complex z has derivative
// Re(conj(z/|z|)·dz) (0 at z = 0); angle has Im(conj(z)·dz)/|z|^2.
#define TENFERRO_AD_UNARY(name) TENFERRO_API EagerTensor name(Context& ctx, const EagerTensor& x);
TENFERRO_AD_UNARY(neg)
TENFERRO_AD_UNARY(conj)
TENFERRO_AD_UNARY(abs)
TENFERRO_AD_UNARY(sign)
TENFERRO_AD_UNARY(real)
TENFERRO_AD_UNARY(imag)
TENFERRO_AD_UNARY(angle)
// The analytic functions: every `analytic` row (Note [Family lists from the catalogue]).
// Derivatives of the newer ones: log2: 1/(x ln 2); log10: 1/(x ln 10); exp2: 2^x ln 2; cbrt: 1/(3 cbrt(x)^2)
// (inf at 0); softplus: sigmoid(x); silu: σ(x)(1 + x(1 - σ(x))); gelu: Φ(x) + x φ(x).
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_AD_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
/// A compact copy.
TENFERRO_AD_UNARY(copy)
#undef TENFERRO_AD_UNARY

/// Checked conversion; the cotangent converts back to x's dtype (complex → real keeps
/// the real part).
TENFERRO_API EagerTensor convert(Context& ctx, const EagerTensor& x, DType dtype);
/// Lossy conversion; the same rule as convert.
TENFERRO_API EagerTensor cast(Context& ctx, const EagerTensor& x, DType dtype);
/// reshape (column-major order).
TENFERRO_API EagerTensor reshape(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> shape);
inline EagerTensor reshape(Context& ctx, const EagerTensor& x, std::initializer_list<std::int64_t> shape) {
  return reshape(ctx, x, std::span(shape.begin(), shape.size()));
}

// ---------------------------------------------------------------- reductions
// Empty `axes` with all_axes (the forms without axes) reduce everything.
// prod handles zeros exactly (products of the other elements, no division).
// max/min: the cotangent is split equally among tied extrema (JAX's rule); a slice
// whose extremum is NaN gives it to its NaN elements (PyTorch's rule).
#define TENFERRO_AD_REDUCTION(name)                                                                            \
  TENFERRO_API EagerTensor name(Context& ctx, const EagerTensor& x);                                           \
  TENFERRO_API EagerTensor name(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes,         \
                                bool keepdims = false);                                                        \
  inline EagerTensor name(Context& ctx, const EagerTensor& x, std::initializer_list<std::int64_t> axes,        \
                          bool keepdims = false) {                                                             \
    return name(ctx, x, std::span(axes.begin(), axes.size()), keepdims);                                       \
  }
TENFERRO_AD_REDUCTION(sum)
TENFERRO_AD_REDUCTION(prod)
TENFERRO_AD_REDUCTION(max)
TENFERRO_AD_REDUCTION(min)
TENFERRO_AD_REDUCTION(mean)
TENFERRO_AD_REDUCTION(sum_squares)
/// logsumexp: the cotangent times softmax weights e^(x - y) (NaN on a slice that is all
/// -inf, where the derivative is undefined).
TENFERRO_AD_REDUCTION(logsumexp)
#undef TENFERRO_AD_REDUCTION
/// argmax/argmin: constant i64 tensors (not differentiable).
TENFERRO_API EagerTensor argmax(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims = false);
TENFERRO_API EagerTensor argmin(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims = false);

// Along one axis (ops.hpp). cumsum: VJP is the reversed cumsum of the cotangent.
// cumprod: JVP and VJP are first-order linear recurrences (dy[k] = x[k]·dy[k-1] +
// y[k-1]·t[k]; the VJP runs the adjoint recurrence backwards and multiplies by the
// exclusive product y[k-1]), evaluated by a log-depth parallel prefix scan of pad and
// mul ops: no division, so zeros in x (one or several) give exact derivatives.
// softmax: y·(g - Σ g·y); log_softmax: g - softmax·Σ g.
TENFERRO_API EagerTensor cumsum(Context& ctx, const EagerTensor& x, std::int64_t axis);
TENFERRO_API EagerTensor cumprod(Context& ctx, const EagerTensor& x, std::int64_t axis);
TENFERRO_API EagerTensor softmax(Context& ctx, const EagerTensor& x, std::int64_t axis);
TENFERRO_API EagerTensor log_softmax(Context& ctx, const EagerTensor& x, std::int64_t axis);

/// sum(conj(a)·b) (rank 0).
TENFERRO_API EagerTensor vdot(Context& ctx, const EagerTensor& a, const EagerTensor& b);
/// sum(|x|^2) (rank 0, real).
TENFERRO_API EagerTensor norm_squared(Context& ctx, const EagerTensor& x);

// ---------------------------------------------------------------- structural
TENFERRO_API EagerTensor transpose(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> perm);
inline EagerTensor transpose(Context& ctx, const EagerTensor& x, std::initializer_list<std::int64_t> perm) {
  return transpose(ctx, x, std::span(perm.begin(), perm.size()));
}
TENFERRO_API EagerTensor broadcast_in_dim(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> shape,
                                          std::span<const std::int64_t> broadcast_dimensions);
TENFERRO_API EagerTensor extract_diagonal(Context& ctx, const EagerTensor& x, std::int64_t axis1 = 0, std::int64_t axis2 = 1);
TENFERRO_API EagerTensor embed_diagonal(Context& ctx, const EagerTensor& x, std::int64_t axis1 = 0, std::int64_t axis2 = 1);
TENFERRO_API EagerTensor tril(Context& ctx, const EagerTensor& x, std::int64_t offset = 0);
TENFERRO_API EagerTensor triu(Context& ctx, const EagerTensor& x, std::int64_t offset = 0);
TENFERRO_API EagerTensor concatenate(Context& ctx, std::span<const EagerTensor> xs, std::int64_t axis);
TENFERRO_API EagerTensor stack(Context& ctx, std::span<const EagerTensor> xs, std::int64_t axis = 0);
TENFERRO_API EagerTensor reverse(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes);
/// pad with a constant padding value (the value itself is not differentiated).
TENFERRO_API EagerTensor pad(Context& ctx, const EagerTensor& x, Scalar padding_value, std::span<const std::int64_t> low,
                             std::span<const std::int64_t> high, std::span<const std::int64_t> interior);

// ---------------------------------------------------------------- indexing
// Index tensors are constants. gather's VJP is a scatter-add and scatter-add's update
// VJP a gather: exact for in-range starts (gather clamps out-of-range starts while
// scatter skips out-of-range windows, so the two disagree there).
TENFERRO_API EagerTensor slice(Context& ctx, const EagerTensor& x, const Dims& starts, const Dims& limits,
                               const Dims& strides = {});
TENFERRO_API EagerTensor dynamic_slice(Context& ctx, const EagerTensor& x, const Tensor& start_indices,
                                       const Dims& slice_sizes);
TENFERRO_API EagerTensor dynamic_update_slice(Context& ctx, const EagerTensor& x, const EagerTensor& update,
                                              const Tensor& start_indices);
TENFERRO_API EagerTensor gather(Context& ctx, const EagerTensor& operand, const Tensor& start_indices, const GatherDims& dims,
                                const Dims& slice_sizes);
/// scatter: rules for the `add` combiner (and `replace` when no two windows overlap);
/// mul, min and max throw UnsupportedAdRule when differentiated.
TENFERRO_API EagerTensor scatter(Context& ctx, const EagerTensor& operand, const Tensor& scatter_indices,
                                 const EagerTensor& updates, const ScatterDims& dims, ScatterCombiner combiner);

// ---------------------------------------------------------------- contractions
/// dot_general with conjugation flags: JVP dA·B + A·dB; VJPs are dot_generals of the
/// cotangent with the other operand (conjugated per Note [Complex convention]).
TENFERRO_API EagerTensor dot_general(Context& ctx, const EagerTensor& lhs, const EagerTensor& rhs, const DotDims& dims);
/// matmul (recorded as the equivalent dot_general). Operands of rank >= 2 with equal
/// batch extents, or a rank-1 operand against a rank-2 or rank-1 one.
TENFERRO_API EagerTensor matmul(Context& ctx, const EagerTensor& a, const EagerTensor& b);
/// einsum: the VJP of operand i is an einsum of the cotangent with the conjugated other
/// operands (then broadcast/embedded where operand i repeats a label or sums one alone);
/// the JVP the sum of einsums with one operand replaced by its tangent. String form:
/// letters, ',' and '->' (no ellipsis or parentheses: UnsupportedAdRule).
TENFERRO_API EagerTensor einsum(Context& ctx, std::string_view subscripts, std::span<const EagerTensor> operands);
inline EagerTensor einsum(Context& ctx, std::string_view subscripts, std::initializer_list<EagerTensor> operands) {
  return einsum(ctx, subscripts, std::span(operands.begin(), operands.size()));
}
/// Integer-label einsum (as tenferro::einsum's integer form; output required).
TENFERRO_API EagerTensor einsum(Context& ctx, std::span<const EagerTensor> operands, EinsumLabels labels,
                                std::span<const std::int64_t> output);

// ---------------------------------------------------------------- linear algebra
// Rules in src/ad/rules_linalg.cpp (Note [Linear solve rules]; multi-output ops record
// one node, Note [Multi-output nodes] in src/ad/tape.hpp); the other decompositions
// follow in their own sections below.
/// solve(A, B) = A⁻¹·B: B̄ = A⁻ᴴ·X̄, Ā = −B̄·Xᴴ; JVP A⁻¹(dB − dA·X).
TENFERRO_API EagerTensor solve(Context& ctx, const EagerTensor& a, const EagerTensor& b);
/// triangular_solve; A's cotangent is confined to the triangle that is read (and has a
/// zero diagonal with unit_diagonal).
TENFERRO_API EagerTensor triangular_solve(Context& ctx, const EagerTensor& a, const EagerTensor& b,
                                          const TriangularSolveOptions& opt = {});

/// inv(A): Ā = −Xᴴ·X̄·Xᴴ (X = A⁻¹); JVP −X·dA·X.
TENFERRO_API EagerTensor inv(Context& ctx, const EagerTensor& a);
/// det(A) [b...]: Ā = ȳ·adj(A)ᴴ (= ȳ·conj(det A)·A⁻ᴴ for invertible A); JVP
/// tr(adj(A)·dA). The adjugate comes from an SVD, so singular A has its gradient too.
TENFERRO_API EagerTensor det(Context& ctx, const EagerTensor& a);
/// cholesky(A, tri): only the `tri` triangle of A is read, so Ā lives in that triangle
/// (off-diagonal entries count twice: they stand for both triangles of the Hermitian A).
TENFERRO_API EagerTensor cholesky(Context& ctx, const EagerTensor& a, Triangle tri = Triangle::lower);
/// Eigenvalues (ascending, real) and eigenvectors of a Hermitian matrix.
struct EighPair {
  EagerTensor W, V;
};
/// eigh(A, tri): one tape node with outputs W and V. A loss of W alone is exact at
/// degenerate eigenvalues; for a loss that uses V the rules' 1/(w_j − w_i) are
/// broadened as the SVD's (η = 1e-12, Note [SVD broadening]), so degenerate eigenvalues
/// give finite gradients that drop the degenerate block's term. Only gauge-invariant
/// functions of complex V (e.g. V·f(W)·Vᴴ, |V|²) have derivatives. Ā lives in the
/// triangle read, as for cholesky.
TENFERRO_API EighPair eigh(Context& ctx, const EagerTensor& a, Triangle tri = Triangle::lower);
/// Reduced QR factors.
struct QrPair {
  EagerTensor Q, R;
};
/// Reduced qr(A): rules for tall or square full-rank A (M >= N; UnsupportedAdRule for
/// M < N when differentiated). Complex inputs need positive_diagonal for a smooth gauge.
TENFERRO_API QrPair qr(Context& ctx, const EagerTensor& a, bool positive_diagonal = false);
/// matrix_exp(A): JVP and VJP are the upper-right blocks of exp([[A, E], [0, A]]) and
/// exp([[Aᴴ, X̄], [0, Aᴴ]]) (the Fréchet derivative and its adjoint).
TENFERRO_API EagerTensor matrix_exp(Context& ctx, const EagerTensor& a);

// ---------------------------------------------------------------- LU and eig
// Rules in src/ad/rules_lu_eig.cpp (Note [LU rules], Note [lu_solve rules], Note [eig
// rules]); conventions in docs/ad.md. Pivots and permutation matrices are constants
// (piecewise constant in A): they carry no tangent and receive no cotangent.
/// lu(A): P·A = L·U with partial pivoting; P [M, M, b...] (A's dtype) is a constant,
/// L [M, K, b...] unit lower and U [K, N, b...] upper trapezoidal (K = min(M, N)).
struct LuFactors {
  Tensor P;
  EagerTensor L, U;
};
/// Differentiable lu for square, tall and wide A (a differentiable path calls
/// lu_factor once and records one node whose value is the packed factor; L and U are
/// recorded tril/triu views of it). With A' = P·A, L₁, U₁ the leading K×K blocks:
/// dL = L₁·tril(C, −1), dU = triu(C)·U₁ for C = L₁⁻¹·dA'·U₁⁻¹ (extra rows of L, extra
/// columns of U by substitution); Ā = Pᵀ·L₁⁻ᴴ·(tril(L₁ᴴ·L̄, −1) + triu(Ū·U₁ᴴ))·U₁⁻ᴴ in
/// the square case (PyTorch's linalg_lu_backward). A singular leading block (an exact
/// zero pivot) makes the rules throw NumericalError; the derivative does not exist where
/// the pivot order changes.
TENFERRO_API LuFactors lu(Context& ctx, const EagerTensor& a);
/// lu_factor's result: the packed factor LU [M, N, b...] (differentiable) and LAPACK's
/// 0-based pivots [K, b...] i64 (constant).
struct LuPacked {
  EagerTensor LU;
  Tensor pivots;
};
/// Differentiable lu_factor (square, tall and wide A): LU̅ holds L̄ strictly below the
/// diagonal and Ū on and above it; the rules are those of lu (Note [LU rules]).
TENFERRO_API LuPacked lu_factor(Context& ctx, const EagerTensor& a);
/// lu_solve(LU, pivots, B) = A⁻¹·B for A = Pᵀ·L·U (B [N, K, b...], or [N] with an
/// unbatched LU). JVP dX = U⁻¹·L⁻¹·(P·dB − dL·U·X − L·dU·X) with dL = tril(dLU, −1),
/// dU = triu(dLU); VJP W = U⁻ᴴ·X̄, Z = L⁻ᴴ·W, B̄ = Pᵀ·Z, LU̅ = −tril(Z·(U·X)ᴴ, −1) −
/// triu(W·Xᴴ) (PyTorch's linalg_lu_solve_LU / linalg_lu_solve_jvp). LU may be any
/// matrix used as a packed factorization (not only lu_factor's output).
TENFERRO_API EagerTensor lu_solve(Context& ctx, const EagerTensor& lu, const Tensor& pivots, const EagerTensor& b);
/// Eigenvalues and right eigenvectors (complex; unit-norm columns, LAPACK geev).
struct EigPair {
  EagerTensor W, V;
};
/// eig(A): A·V = V·diag(w). Rules for distinct eigenvalues (Giles 2008, with the
/// normalization term): Δ = V⁻¹·dA·V, dw = diag(Δ), X = V·(F ∘ Δ) with
/// F_ij = 1/(w_j − w_i), dV = X − V·diag(Re diag(Vᴴ·X)); VJP
/// Ā = V⁻ᴴ·(diag(w̄) + conj(F) ∘ (Vᴴ·V̄ − Vᴴ·V·diag(Re diag(Vᴴ·V̄))))·Vᴴ. The phase of each
/// eigenvector is a gauge: only gauge-invariant functions of V (|V|², V·f(W)·V⁻¹, W)
/// have meaningful derivatives (a gauge-dependent loss gets the derivative of the
/// phase-fixed choice "dV ⟂ iV", not LAPACK's). For real A the outputs are complex and
/// Ā is the real part (Note [Complex convention]). Repeated eigenvalues give inf/NaN.
TENFERRO_API EigPair eig(Context& ctx, const EagerTensor& a);
/// eigvals(A) (complex, geev order): dw = diag(V⁻¹·dA·V), Ā = V⁻ᴴ·diag(w̄)·Vᴴ (a
/// differentiable call computes V with geev, which the rules need; recorded as eig).
TENFERRO_API EagerTensor eigvals(Context& ctx, const EagerTensor& a);

// ---------------------------------------------------------------- singular value decomposition
// Rules in src/ad/rules_svd.cpp (Note [SVD rules], Note [SVD broadening]); docs/ad.md.
/// Options of the SVD rules.
struct SvdAdOptions {
  /// Lorentzian broadening (Liao et al., PRX 9, 031041, 2019; Note [SVD broadening] in
  /// src/ad/rules_svd.cpp): every 1/x of the rules, for x = s_j − s_i, s_j + s_i and s_i,
  /// becomes x / (x² + η·s_max²) (s_max per batch matrix), so degenerate or zero singular
  /// values give finite derivatives. Relative effect: η·(s_max/x)² (1e-6 at a relative
  /// gap of 1e-3 with the default). 0 gives the exact formulas (0 at exact ties).
  double eta = 1e-12;
};
/// The factors of ad::svd: A = U·diag(S)·Vh, as tenferro::SvdResult (Vh, not V).
struct SvdTriple {
  EagerTensor U, S, Vh;
};
/// Differentiable svd(A) of [M, N, b...] real or complex A (same values, modes and errors
/// as tenferro::svd). With dP = Uᴴ·dA·V, F_ij = 1/(s_j² − s_i²) (broadened, see
/// SvdAdOptions): dS = Re diag(dP); dU = U·Ω_U + (I − UUᴴ)·dA·V·S⁻¹; dV = V·Ω_V +
/// (I − VVᴴ)·dAᴴ·U·S⁻¹; Ω_U = F∘(dP·S + S·dPᴴ) + i·diag(Im dP_ii/(2s_i)), Ω_V =
/// F∘(S·dP + dPᴴ·S) − i·diag(Im dP_ii/(2s_i)); the VJP is its adjoint (PyTorch's
/// convention, Note [Complex convention]).
/// Gauge: singular vectors are unique up to a sign (real) or a phase e^{iφ} per pair
/// (complex); the rules assume a loss invariant under it (e.g. U·f(S)·Vh, |U|², S). The
/// derivative of a phase-dependent loss is not defined (the rule returns that of one
/// gauge choice, not LAPACK's).
/// Modes: thin; full with M == N (the same factors); values (returns only S, as
/// svdvals). Throws UnsupportedAdRule for SvdMode::full with M != N when differentiated
/// (the extra columns of U or V are not unique).
TENFERRO_API SvdTriple svd(Context& ctx, const EagerTensor& a, SvdMode mode = SvdMode::thin, const SvdAdOptions& opt = {});
/// Differentiable singular values S [K, b...] (real): S̄ → Ā = U·diag(S̄)·Vh, JVP
/// dS = Re diag(Uᴴ·dA·V). Exact and finite for repeated and zero singular values (no gap
/// or 1/s terms). When differentiated, it computes the thin SVD (U and V are saved in
/// the node); otherwise only the values.
TENFERRO_API EagerTensor svdvals(Context& ctx, const EagerTensor& a);
// ---------------------------------------------------------------- FFT
// Rules in src/ad/rules_fft.cpp (Note [FFT adjoints]). Same semantics as fft.hpp (n with
// crop/zero-pad, norm, axes); the 1-D and n-D forms record the same op. Every transform
// is R-linear: the JVP is the same transform of the tangent. The VJP is its adjoint
// under Re⟨a, b⟩ = Re Σ conj(a)·b; with P* cropping/zero-padding the result back to the
// input's extents (the adjoint of the forward's zero-pad/crop) and the "dual" norm
// (backward ↔ forward, ortho ↔ ortho: it carries the same scale as the forward norm):
// every configuration (norm, n, axes, planner) has rules; no UnsupportedAdRule.
/// fft: x̄ = P*·ifft(ȳ, dual norm). A real x receives the real part of that cotangent.
TENFERRO_API EagerTensor fft(Context& ctx, const EagerTensor& x, const FftOptions& opt = {});
/// ifft: x̄ = P*·fft(ȳ, dual norm). A real x receives the real part.
TENFERRO_API EagerTensor ifft(Context& ctx, const EagerTensor& x, const FftOptions& opt = {});
/// rfft (real x): x̄ = P*·irfft(w ⊙ ȳ, n, dual norm) with w = 1/2 on the bins 1..n−h
/// (h = n/2 + 1; those bins stand for two conjugate bins of the full spectrum) and 1 on
/// bin 0 and, for even n, bin n/2. This equals Re(P*·ifft(ȳ zero-extended to n bins)).
TENFERRO_API EagerTensor rfft(Context& ctx, const EagerTensor& x, const FftOptions& opt = {});
/// irfft: x̄ = P*·(d ⊙ rfft(ȳ, n, dual norm)) with d = 2 on the bins 1..n−h and 1 on
/// bin 0 and, for even n, bin n/2 (whose imaginary parts irfft ignores: their
/// imaginary derivative is zero). A real x receives the real part.
TENFERRO_API EagerTensor irfft(Context& ctx, const EagerTensor& x, const FftOptions& opt = {});
/// fftn over several axes: as fft, with N the product of the transform lengths.
TENFERRO_API EagerTensor fftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt = {});
/// ifftn over several axes: as ifft.
TENFERRO_API EagerTensor ifftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt = {});
/// rfftn: as rfft, the weights applied along the last listed (halved) axis.
TENFERRO_API EagerTensor rfftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt = {});
/// irfftn: as irfft, the weights applied along the last listed (halved) axis.
TENFERRO_API EagerTensor irfftn(Context& ctx, const EagerTensor& x, const FftnOptions& opt = {});
// ---------------------------------------------------------------- slogdet, pinv, lstsq, norms
// Rules in src/ad/rules_linalg_misc.cpp (Note [Multi-output nodes], Note [lstsq rules],
// Note [Norm rules]); formulas and choices in docs/ad.md ("Rules: slogdet, pinv, lstsq,
// norms"). Every derivative below holds where the function is smooth; the values given
// at the listed kinks are documented subgradient choices, not errors.

/// slogdet's outputs: sign [b...] (A's dtype) and logabsdet [b...] (real).
struct SlogdetPair {
  EagerTensor sign, logabsdet;
};
/// slogdet(A). With t = tr(A⁻¹·dA): d logabsdet = Re t, Ā = Re(ḡ)·A⁻ᴴ; for complex A
/// d sign = i·Im(t)·sign, Ā = −i·Im(conj(ḡ)·sign)·A⁻ᴴ. A real sign is piecewise
/// constant and is returned as a constant (zero tangent, no node). Each differentiable
/// output records its own node (both save A). The rules solve with / invert A: a
/// singular A (logabsdet = −inf) throws NumericalError in the JVP / in backward.
TENFERRO_API SlogdetPair slogdet(Context& ctx, const EagerTensor& a);

/// pinv(A, rtol) = A⁺ [N, M, b...] (Golub–Pereyra):
/// dA⁺ = −A⁺·dA·A⁺ + A⁺A⁺ᴴ·dAᴴ·(I − AA⁺) + (I − A⁺A)·dAᴴ·A⁺ᴴA⁺, and its adjoint
/// Ā = −A⁺ᴴ·P̄·A⁺ᴴ + (I − AA⁺)·P̄ᴴ·A⁺A⁺ᴴ + A⁺ᴴA⁺·P̄ᴴ·(I − A⁺A). Exact for any shape
/// (tall, square, wide) where rank A is locally constant (e.g. full rank); a
/// rank-deficient or rtol-truncated A gets the derivative of the truncated
/// pseudo-inverse, which is the true one only while no singular value crosses the
/// threshold (the pseudo-inverse is discontinuous where the rank changes).
TENFERRO_API EagerTensor pinv(Context& ctx, const EagerTensor& a, double rtol = -1.0);

/// lstsq's outputs: X [N, K, b...] (or [N]), rank [b...] i64 (a constant), S
/// [min(M, N), b...] (svd driver; undefined for qr).
struct LstsqSolution {
  EagerTensor X, rank, S;
};
/// lstsq(A, B, driver, rcond): X = A⁺·B, differentiated as such for both drivers and
/// every shape: with P = A⁺ and R = B − A·X,
/// dX = P·(dB − dA·X) + P·Pᴴ·dAᴴ·R + (I − P·A)·dAᴴ·Pᴴ·X, B̄ = Pᴴ·X̄,
/// Ā = −B̄·Xᴴ + R·(P·B̄)ᴴ + Pᴴ·X·(X̄ − Aᴴ·B̄)ᴴ. Valid for full-rank A (both drivers) and,
/// for the svd driver, where the rcond-truncated rank is locally constant. P is
/// computed (one SVD) when the node is recorded. S (svd driver) is differentiable:
/// dσ_k = Re(u_kᴴ·dA·v_k), Ā = U·diag(σ̄)·Vᴴ (distinct non-zero singular values; its
/// rules take one thin SVD). rank is a constant.
TENFERRO_API LstsqSolution lstsq(Context& ctx, const EagerTensor& a, const EagerTensor& b,
                                 LstsqDriver driver = LstsqDriver::qr, double rcond = -1.0);

/// matrix_norm(A, kind) [b...] (real): Ā = ȳ·W, dy = Re Σ conj(W)·dA with
/// frobenius W = A/‖A‖_F; nuclear W = U·Vᴴ; spectral W = u₁·v₁ᴴ (thin SVD; needs a
/// distinct largest singular value and, for nuclear, full rank to be a derivative);
/// one / inf W = sgn(A) (z/|z|) on the column / row with the largest absolute sum,
/// split equally among tied columns / rows. At A = 0 the gradient is 0 (PyTorch). W is
/// computed when the node is recorded (an SVD for nuclear and spectral). The forward
/// reduces axes 0 and 1 only (no axes / keepdims parameters).
TENFERRO_API EagerTensor matrix_norm(Context& ctx, const EagerTensor& a, MatrixNorm kind = MatrixNorm::frobenius);

/// vector_norm(x, p) along axis 0, [N, b...] → [b...] (real): x̄ = ȳ·W,
/// dy = Re Σ conj(W)·dx with W = sgn(x)·(|x|/‖x‖_p)^(p−1) (= |x|^(p−2)·x/‖x‖^(p−1);
/// p = 2: x/‖x‖, p = 1: sgn x; complex x uses the phases x/|x|); p = ±∞: sgn(x) on the
/// entries of largest / smallest |x|, split equally among ties; p = 0 (a count) is
/// piecewise constant: a constant output (zero tangent, no node). Entries x_i = 0 get 0
/// (a subgradient for p >= 1; p < 1 is not differentiable there), and a zero norm gives
/// W = 0. The forward reduces axis 0 only (no axes / keepdims parameters).
TENFERRO_API EagerTensor vector_norm(Context& ctx, const EagerTensor& x, double p = 2.0);

// ---------------------------------------------------------------- axpby, take_along_axis, index_select, grouped_gemm
// Rules in src/ad/rules_misc_ops.cpp (Note [Functional in-place ops], Note [Index
// scatter-add]); formulas in docs/ad.md ("Rules: axpby, take_along_axis, index_select,
// grouped_gemm"). Every configuration the forward accepts has rules (no UnsupportedAdRule).

/// Functional axpby: returns α·x + β·y as a new tensor of y's dtype and shape; y is
/// NOT modified (unlike tenferro::axpby, which writes into y: the tape needs y's old
/// value and eager inputs are never mutated). Dtype rules, shapes and errors as
/// tenferro::axpby (x converts to y's dtype; an f64 x into a c128 y is fine). α and β are
/// constants. JVP α·dx + β·dy; VJP x̄ = conj(α)·ḡ, ȳ = conj(β)·ḡ with ḡ the result's
/// cotangent (a real x of a complex y receives the real part, Note [Complex convention]).
TENFERRO_API EagerTensor axpby(Context& ctx, Scalar alpha, const EagerTensor& x, Scalar beta, const EagerTensor& y);

/// NumPy take_along_axis (semantics, broadcasting and errors as tenferro::take_along_axis;
/// negative indices count from the end). `indices` is a constant. JVP: the same gather
/// of dx. VJP: the cotangent scatter-added into zeros at the same (normalized) indices,
/// so duplicate indices accumulate; where x has extent 1 off `axis` and the indices more,
/// the contributions along that axis are summed.
TENFERRO_API EagerTensor take_along_axis(Context& ctx, const EagerTensor& x, const Tensor& indices, std::int64_t axis);

/// PyTorch index_select (semantics and errors as tenferro::index_select; negative
/// indices count from the end). `indices` is a constant. JVP: index_select of dx. VJP:
/// index-add of the cotangent's slices into zeros (duplicate indices accumulate).
TENFERRO_API EagerTensor index_select(Context& ctx, const EagerTensor& x, std::int64_t axis, const Tensor& indices);

/// One product of ad::grouped_gemm: result = alpha·op(a)·op(b) + beta·c, op(t) = conj(t)
/// when the flag is set (no transpose), a [M, K], b [K, N], c [M, N].
struct AdGemmItem {
  EagerTensor a, b;
  std::optional<EagerTensor> c = std::nullopt;  ///< absent: no c term (beta is then unused)
  Scalar alpha = 1.0;                           ///< constant
  Scalar beta = 0.0;                            ///< constant; 0: c is not read (zero cotangent)
  bool conj_a = false;
  bool conj_b = false;
};
/// Functional grouped GEMM: result i = alpha·op(a)·op(b) + beta·c_i (c_i's dtype, or
/// promote(a, b) without c; no c is modified). The forward is ONE tenferro::grouped_gemm
/// call over all items (its point: many small GEMMs per call), then one tape node per
/// item, so backward touches only the items whose results reach the loss. Errors as
/// tenferro::grouped_gemm, and ArgumentError for an undefined a, b or given c. With
/// a' = op(a), b' = op(b):
/// JVP α·(op(da)·b' + a'·op(db)) + β·dc; VJP (Note [Complex convention])
/// ā' = conj(α)·ḡ·b'ᴴ, b̄' = conj(α)·a'ᴴ·ḡ, mapped back through the flags (ā = conj(ā')
/// when conj_a, b̄ = conj(b̄') when conj_b), c̄ = conj(β)·ḡ; each item's ā and b̄ come
/// from one tenferro::grouped_gemm call.
TENFERRO_API std::vector<EagerTensor> grouped_gemm(Context& ctx, std::span<const AdGemmItem> items);

// ---------------------------------------------------------------- operator sugar
// They use the context of the first eager operand that has one (ArgumentError when
// neither has a context).
TENFERRO_API EagerTensor operator+(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator-(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator*(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator/(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator-(const EagerTensor& a);

}  // namespace tenferro::ad
