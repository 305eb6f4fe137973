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
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad {

// ---------------------------------------------------------------- elementwise binary
// maximum/minimum: on ties (a == b) each operand receives half of the cotangent (JAX).
// pow: the exponent's derivative uses log(a) (NaN for a < 0 in real dtypes).
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
TENFERRO_AD_UNARY(exp)
TENFERRO_AD_UNARY(log)
TENFERRO_AD_UNARY(sin)
TENFERRO_AD_UNARY(cos)
TENFERRO_AD_UNARY(tan)
TENFERRO_AD_UNARY(tanh)
TENFERRO_AD_UNARY(sqrt)
TENFERRO_AD_UNARY(rsqrt)
TENFERRO_AD_UNARY(expm1)
TENFERRO_AD_UNARY(log1p)
TENFERRO_AD_UNARY(erf)
TENFERRO_AD_UNARY(sigmoid)
TENFERRO_AD_UNARY(asin)
TENFERRO_AD_UNARY(acos)
TENFERRO_AD_UNARY(atan)
TENFERRO_AD_UNARY(sinh)
TENFERRO_AD_UNARY(cosh)
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
// max/min: the cotangent is split equally among tied extrema (JAX's rule).
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
#undef TENFERRO_AD_REDUCTION
/// argmax/argmin: constant i64 tensors (not differentiable).
TENFERRO_API EagerTensor argmax(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims = false);
TENFERRO_API EagerTensor argmin(Context& ctx, const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdims = false);

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
// Rules in src/ad/rules_linalg.cpp (Note [Linear solve rules], Note [Packed multi-output
// nodes]). svd, eig, lu, slogdet, lstsq, pinv and the norms have no differentiable
// wrapper yet.
/// solve(A, B) = A⁻¹·B: B̄ = A⁻ᴴ·X̄, Ā = −B̄·Xᴴ; JVP A⁻¹(dB − dA·X).
TENFERRO_API EagerTensor solve(Context& ctx, const EagerTensor& a, const EagerTensor& b);
/// triangular_solve; A's cotangent is confined to the triangle that is read (and has a
/// zero diagonal with unit_diagonal).
TENFERRO_API EagerTensor triangular_solve(Context& ctx, const EagerTensor& a, const EagerTensor& b,
                                          const TriangularSolveOptions& opt = {});

/// inv(A): Ā = −Xᴴ·X̄·Xᴴ (X = A⁻¹); JVP −X·dA·X.
TENFERRO_API EagerTensor inv(Context& ctx, const EagerTensor& a);
/// det(A) [b...]: Ā = ȳ·conj(det A)·A⁻ᴴ; JVP det(A)·tr(A⁻¹·dA). The rules invert A: a
/// singular A throws NumericalError in backward / in the JVP.
TENFERRO_API EagerTensor det(Context& ctx, const EagerTensor& a);
/// cholesky(A, tri): only the `tri` triangle of A is read, so Ā lives in that triangle
/// (off-diagonal entries count twice: they stand for both triangles of the Hermitian A).
TENFERRO_API EagerTensor cholesky(Context& ctx, const EagerTensor& a, Triangle tri = Triangle::lower);
/// Eigenvalues (ascending, real) and eigenvectors of a Hermitian matrix.
struct EighPair {
  EagerTensor W, V;
};
/// eigh(A, tri): rules for distinct eigenvalues (Note [Packed multi-output nodes] in
/// src/ad/rules_linalg.cpp); only gauge-invariant functions of complex V (e.g. V·f(W)·Vᴴ,
/// |V|²) have derivatives. Ā lives in the triangle read, as for cholesky.
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

// ---------------------------------------------------------------- slogdet, pinv, lstsq, norms
// Rules in src/ad/rules_linalg_misc.cpp (Note [Role-tagged nodes], Note [lstsq rules],
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

// ---------------------------------------------------------------- operator sugar
// They use the context of the first eager operand that has one (ArgumentError when
// neither has a context).
TENFERRO_API EagerTensor operator+(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator-(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator*(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator/(const EagerTensor& a, const AdOperand& b);
TENFERRO_API EagerTensor operator-(const EagerTensor& a);

}  // namespace tenferro::ad
