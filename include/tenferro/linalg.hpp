#pragma once
/// \file linalg.hpp
/// Dense linear algebra on LAPACKE over OpenBLAS (forward operations).
///
/// Conventions shared by every function here:
/// - Dtypes f32, f64, c64, c128. Integer or bool input: DTypeError.
/// - Matrices are the first two axes, batch axes trail: an input `[M, N, B...]` is
///   prod(B...) independent M×N problems, and every result carries the same trailing
///   `B...`. Two-operand functions need equal batch shapes (ShapeError otherwise; no
///   broadcasting of batch axes).
/// - Inputs may be any strided view (transposed, negative-stride, broadcast). LAPACK
///   overwrites its input, so each input is packed once into a pooled column-major
///   buffer; results are compact column-major tensors written directly by LAPACK.
/// - Workspace sizes are queried once per (routine, dtype, shape) and kept in the
///   session's plan cache (linalg_plan_cache_stats); workspace and packed copies come
///   from the session's buffer pool, so a repeated call allocates nothing from the heap
///   beyond its result tensors (which come from the pool too).
/// - Batches run in parallel across the session's threads when the work is large
///   enough (Note [Fork cost model]); OpenBLAS then runs single-threaded.
/// - Validation (dtypes, ranks, shapes, finiteness for iterative decompositions) is
///   complete before anything is written. `_into` forms compute into pooled temporaries
///   and copy to `out` only on success: on any error `out` is untouched.
/// - Every function has an `_into` form taking one output per result, after the inputs
///   and before the options. An output may be any writable strided view (transposed,
///   negative strides, a slice) of exactly the result's dtype and shape. All outputs are
///   validated before anything runs: undefined, read-only (broadcast) or
///   self-overlapping output, or one whose memory range overlaps another output or an
///   input: ArgumentError; wrong dtype: DTypeError; wrong shape: ShapeError. A result the
///   mode does not compute (svd's U and Vh with SvdMode::values, lstsq's S with the qr
///   driver) must be passed as an undefined `Tensor()` (ArgumentError otherwise). The
///   results are computed into the session's pooled scratch and copied into the outputs
///   only when everything succeeded, so a NumericalError (or any other error) leaves
///   every output untouched. (The older cholesky_into, solve_into,
///   triangular_solve_into and inv_into also accept an out aliasing an input.)
///
/// Errors: DTypeError (integer/bool input, mismatched dtypes of two operands, wrong out
/// dtype), RankError (rank < 2 where a matrix is needed), ShapeError (non-square where
/// square is needed, mismatched inner or batch extents, wrong out shape), ArgumentError
/// (undefined tensor, non-finite input to svd/eigh/eig/eigvals/eigvalsh/pinv/lstsq/
/// matrix_norm(nuclear, spectral), bad option value, read-only out), NumericalError
/// (LAPACK failure: its what() names the LAPACK routine; info() is LAPACK's info code,
/// batch_index() the flat index of the failing problem over the batch axes, column-major).

#include <cstdint>

#include "tenferro/session.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

// ------------------------------------------------------------------------ options

/// Which triangle of a symmetric/Hermitian matrix is read (or which factor is returned).
enum class Triangle : std::uint8_t { lower, upper };
/// op(A) in triangular_solve.
enum class MatOp : std::uint8_t { none, transpose, adjoint };
/// Side of the triangular matrix in triangular_solve: op(A)·X = B (left) or X·op(A) = B (right).
enum class Side : std::uint8_t { left, right };

// -------------------------------------------------------------------------- SVD

/// Which singular vectors svd computes.
enum class SvdMode : std::uint8_t {
  thin,    ///< U [M, K], Vh [K, N] with K = min(M, N)
  full,    ///< U [M, M], Vh [N, N]
  values,  ///< S only (U and Vh undefined)
};
/// A = U · diag(S) · Vh per batch. S [K, B...] is real (f32 for f32/c64 input, f64 for
/// f64/c128), descending and non-negative.
struct SvdResult {
  Tensor U, S, Vh;
};
/// Singular value decomposition (LAPACK gesdd, divide and conquer).
/// Throws ArgumentError for non-finite input; NumericalError("gesdd", info) when the
/// iteration does not converge. 0×N and batch-extent-0 inputs are fine (a `full` U or Vh
/// of a zero-size side is the identity of its extent).
TENFERRO_API SvdResult svd(Session& s, const Tensor& a, SvdMode mode = SvdMode::thin);
/// svd into U, S, Vh (the shapes and dtypes of SvdResult for `mode`; with SvdMode::values
/// U and Vh must be undefined, ArgumentError otherwise). Throws svd's errors first, then
/// for a bad output ArgumentError (undefined, read-only, self-overlapping, overlapping
/// another output or an input), DTypeError (dtype) or ShapeError (shape); every output
/// untouched on any error.
TENFERRO_API void svd_into(Session& s, const Tensor& a, const Tensor& U, const Tensor& S, const Tensor& Vh, SvdMode mode = SvdMode::thin);
/// Singular values only: svd(s, a, SvdMode::values).S.
TENFERRO_API Tensor svdvals(Session& s, const Tensor& a);
/// svdvals into S [min(M, N), B...] (real dtype of a). Throws svdvals's errors first,
/// then for a bad output ArgumentError (undefined, read-only, self-overlapping,
/// overlapping another output or an input), DTypeError (dtype) or ShapeError (shape);
/// every output untouched on any error.
TENFERRO_API void svdvals_into(Session& s, const Tensor& a, const Tensor& S);

// --------------------------------------------------------------------------- QR

/// reduced: Q [M, K], R [K, N]; complete: Q [M, M], R [M, N] (K = min(M, N)).
enum class QrMode : std::uint8_t { reduced, complete };
/// A = Q · R per batch; Q has orthonormal columns, R is upper triangular (trapezoidal).
struct QrResult {
  Tensor Q, R;
};
/// Householder QR (LAPACK geqrf + orgqr/ungqr). With `positive_diagonal` the gauge is
/// fixed so that diag(R) is real and >= 0 (row i of R and column i of Q rescaled by a
/// unit phase), which makes the factorization unique for full-rank A.
TENFERRO_API QrResult qr(Session& s, const Tensor& a, QrMode mode = QrMode::reduced, bool positive_diagonal = false);
/// qr into Q, R (shapes of QrResult for `mode`, dtype of a). Throws qr's errors first,
/// then for a bad output ArgumentError (undefined, read-only, self-overlapping,
/// overlapping another output or an input), DTypeError (dtype) or ShapeError (shape);
/// every output untouched on any error.
TENFERRO_API void qr_into(Session& s, const Tensor& a, const Tensor& Q, const Tensor& R, QrMode mode = QrMode::reduced,
                          bool positive_diagonal = false);

/// Rank-revealing QR with column pivoting: A[:, perm] = Q · R (A · P = Q · R with
/// P[perm[j], j] = 1). Q [M, K], R [K, N]; perm [N, B...] i64 (0-based); rank [B...] i64:
/// the number of |R_ii| > rtol · |R_00| (rtol < 0 means max(M, N) · eps of the dtype).
struct PivotedQrResult {
  Tensor Q, R, perm, rank;
};
/// Column-pivoted Householder QR (LAPACK geqp3 + orgqr/ungqr). Throws ArgumentError
/// for non-finite input.
TENFERRO_API PivotedQrResult qr_pivoted(Session& s, const Tensor& a, double rtol = -1.0);
/// qr_pivoted into Q [M, K], R [K, N] (dtype of a), perm [N, B...] and rank [B...] (i64).
/// Throws qr_pivoted's errors first, then for a bad output ArgumentError (undefined,
/// read-only, self-overlapping, overlapping another output or an input), DTypeError
/// (dtype) or ShapeError (shape); every output untouched on any error.
TENFERRO_API void qr_pivoted_into(Session& s, const Tensor& a, const Tensor& Q, const Tensor& R, const Tensor& perm, const Tensor& rank,
                                  double rtol = -1.0);

/// Appends columns to a reduced QR factorization: given Q [M, K] with orthonormal
/// columns and R [K, N] (A = Q·R, K <= M; R is copied as given), returns the reduced QR
/// of [A, C] for C [M, P]: Q' = [Q, Q2] [M, K'] and R' = [[R, Qᴴ·C], [0, R22]] [K', N + P]
/// with K' = min(M, K + P). Q2·R22 is the Householder QR of C's component orthogonal to
/// range(Q), computed in a basis of range(Q)⊥ from the Householder QR of Q, so [Q, Q2]
/// stays orthonormal even when C is (nearly) in range(Q). Unbatched (rank-2 operands).
/// Throws RankError for batched operands, ShapeError for mismatched extents or K > M,
/// DTypeError for mixed dtypes.
TENFERRO_API QrResult qr_append_columns(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C);
/// qr_append_columns into Q_out [M, K'] and R_out [K', N + P] (dtype of Q); the inputs
/// are Q, R and C. Throws qr_append_columns's errors first, then for a bad output
/// ArgumentError (undefined, read-only, self-overlapping, overlapping another output or
/// an input), DTypeError (dtype) or ShapeError (shape); every output untouched on any
/// error.
TENFERRO_API void qr_append_columns_into(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C, const Tensor& Q_out,
                                         const Tensor& R_out);

// --------------------------------------------------------------------------- LU

/// P · A = L · U per batch. P [M, M] is a permutation matrix (dtype of A), L [M, K]
/// unit lower trapezoidal, U [K, N] upper trapezoidal (K = min(M, N)).
struct LuResult {
  Tensor P, L, U;
};
/// LU with partial pivoting (LAPACK getrf). A singular U is not an error.
TENFERRO_API LuResult lu(Session& s, const Tensor& a);
/// lu into P [M, M], L [M, K], U [K, N] (dtype of a). Throws lu's errors first, then for
/// a bad output ArgumentError (undefined, read-only, self-overlapping, overlapping
/// another output or an input), DTypeError (dtype) or ShapeError (shape); every output
/// untouched on any error.
TENFERRO_API void lu_into(Session& s, const Tensor& a, const Tensor& P, const Tensor& L, const Tensor& U);

/// Packed LU factors as LAPACK stores them: LU [M, N, B...] holds L (strictly below the
/// diagonal, unit diagonal implied) and U; pivots [K, B...] i64 are LAPACK's row
/// interchanges made 0-based: row i was swapped with row pivots[i], for i = 0, 1, ...
struct LuFactorResult {
  Tensor LU, pivots;
};
/// LU with partial pivoting in packed form (LAPACK getrf). A singular U is not an error
/// here; lu_solve reports it.
TENFERRO_API LuFactorResult lu_factor(Session& s, const Tensor& a);
/// lu_factor into LU (shape and dtype of a) and pivots [K, B...] (i64). Throws
/// lu_factor's errors first, then for a bad output ArgumentError (undefined, read-only,
/// self-overlapping, overlapping another output or an input), DTypeError (dtype) or
/// ShapeError (shape); every output untouched on any error.
TENFERRO_API void lu_factor_into(Session& s, const Tensor& a, const Tensor& LU, const Tensor& pivots);
/// Solves A·X = B from lu_factor's result (LAPACK getrs). B is [N, K, B...] or, for an
/// unbatched LU, a vector [N]. Throws NumericalError("getrs") when U has an exact zero
/// on its diagonal (info = its 1-based position), ArgumentError for pivots out of range.
TENFERRO_API Tensor lu_solve(Session& s, const LuFactorResult& lu, const Tensor& b);
/// lu_solve into `out` (shape and dtype of b); the inputs are LU, pivots and b. Throws
/// lu_solve's errors first (NumericalError("getrs") included), then for a bad output
/// ArgumentError (undefined, read-only, self-overlapping, overlapping another output or
/// an input), DTypeError (dtype) or ShapeError (shape); every output untouched on any
/// error.
TENFERRO_API void lu_solve_into(Session& s, const LuFactorResult& lu, const Tensor& b, const Tensor& out);
/// The row permutation that lu_factor's pivots apply: pivots [K, B...] (i64, 0-based
/// sequential interchanges: row i swapped with row pivots[i]) to perm [M, B...] (i64)
/// with (P·A) row i = A row perm[i] (JAX's lu_pivots_to_permutation). DTypeError for
/// pivots that are not i32 or i64 (i32 widens), RankError for rank 0, ShapeError when M < K, ArgumentError for a
/// pivot outside [i, M).
TENFERRO_API Tensor lu_pivots_to_permutation(Session& s, const Tensor& pivots, std::int64_t m);
/// lu_pivots_to_permutation into `out` (i64 [M, B...]). Throws its errors first, then
/// for a bad output ArgumentError, DTypeError or ShapeError; `out` untouched on any
/// error.
TENFERRO_API void lu_pivots_to_permutation_into(Session& s, const Tensor& pivots, std::int64_t m, const Tensor& out);

/// Full-pivot LU: P · A · Q = L · U with P [N, N], Q [N, N] permutation matrices, L unit
/// lower, U upper (square A; complete pivoting as LAPACK getc2, written here for any
/// batch). An exactly zero pivot leaves the rest of U zero (no error).
struct FullPivLuResult {
  Tensor P, L, U, Q;
};
/// Full-pivot LU (square input; ShapeError otherwise).
TENFERRO_API FullPivLuResult lu_full_pivot(Session& s, const Tensor& a);
/// lu_full_pivot into P, L, U, Q (each of a's shape and dtype). Throws lu_full_pivot's
/// errors first, then for a bad output ArgumentError (undefined, read-only, self-
/// overlapping, overlapping another output or an input), DTypeError (dtype) or ShapeError
/// (shape); every output untouched on any error.
TENFERRO_API void lu_full_pivot_into(Session& s, const Tensor& a, const Tensor& P, const Tensor& L, const Tensor& U, const Tensor& Q);

// ------------------------------------------------------- Cholesky and eigenproblems

/// Cholesky factor of a Hermitian positive-definite matrix (LAPACK potrf): lower L with
/// A = L·Lᴴ, or upper U with A = Uᴴ·U; the other triangle of the result is zero. Only
/// the `tri` triangle of A is read. Throws NumericalError("potrf", info, batch) when A
/// is not positive definite (info: order of the leading minor that is not).
TENFERRO_API Tensor cholesky(Session& s, const Tensor& a, Triangle tri = Triangle::lower);
/// cholesky into `out` [N, N, B...] (same dtype as a); out untouched on any error.
TENFERRO_API void cholesky_into(Session& s, const Tensor& a, const Tensor& out, Triangle tri = Triangle::lower);

/// A = V · diag(W) · Vᴴ: W [N, B...] real, ascending; V [N, N, B...] unitary.
struct EighResult {
  Tensor W, V;
};
/// Hermitian eigendecomposition reading the `tri` triangle of A (LAPACK syevd/heevd; the
/// imaginary part of the diagonal is ignored). Throws ArgumentError for a non-finite
/// element anywhere in A (both triangles are scanned), NumericalError("syevd"/"heevd")
/// when it does not converge.
TENFERRO_API EighResult eigh(Session& s, const Tensor& a, Triangle tri = Triangle::lower);
/// eigh into W [N, B...] (real dtype of a) and V (shape and dtype of a). Throws eigh's
/// errors first (NumericalError included), then for a bad output ArgumentError
/// (undefined, read-only, self-overlapping, overlapping another output or an input),
/// DTypeError (dtype) or ShapeError (shape); every output untouched on any error.
TENFERRO_API void eigh_into(Session& s, const Tensor& a, const Tensor& W, const Tensor& V, Triangle tri = Triangle::lower);
/// Eigenvalues only (ascending) of a Hermitian matrix (syevd/heevd without vectors).
TENFERRO_API Tensor eigvalsh(Session& s, const Tensor& a, Triangle tri = Triangle::lower);
/// eigvalsh into W [N, B...] (real dtype of a). Throws eigvalsh's errors first, then for
/// a bad output ArgumentError (undefined, read-only, self-overlapping, overlapping
/// another output or an input), DTypeError (dtype) or ShapeError (shape); every output
/// untouched on any error.
TENFERRO_API void eigvalsh_into(Session& s, const Tensor& a, const Tensor& W, Triangle tri = Triangle::lower);

/// A · V = V · diag(W): W [N, B...] and V [N, N, B...] complex (c64 for f32/c64 input,
/// c128 otherwise); columns of V have unit 2-norm (LAPACK's normalization).
struct EigResult {
  Tensor W, V;
};
/// General eigendecomposition (LAPACK geev, right eigenvectors). Throws ArgumentError
/// for non-finite input, NumericalError("geev") when the QR iteration fails.
TENFERRO_API EigResult eig(Session& s, const Tensor& a);
/// eig into W [N, B...] and V [N, N, B...] (complex dtype of a). Throws eig's errors
/// first (NumericalError included), then for a bad output ArgumentError (undefined, read-
/// only, self-overlapping, overlapping another output or an input), DTypeError (dtype) or
/// ShapeError (shape); every output untouched on any error.
TENFERRO_API void eig_into(Session& s, const Tensor& a, const Tensor& W, const Tensor& V);
/// Eigenvalues only (complex), in LAPACK geev's order.
TENFERRO_API Tensor eigvals(Session& s, const Tensor& a);
/// eigvals into W [N, B...] (complex dtype of a). Throws eigvals's errors first, then for
/// a bad output ArgumentError (undefined, read-only, self-overlapping, overlapping
/// another output or an input), DTypeError (dtype) or ShapeError (shape); every output
/// untouched on any error.
TENFERRO_API void eigvals_into(Session& s, const Tensor& a, const Tensor& W);

// ------------------------------------------------------------------------ solves

/// Solves A·X = B (LAPACK getrf + getrs, i.e. gesv). A [N, N, B...]; B [N, K, B...], or
/// a vector [N] when A is unbatched (X then is [N]). Throws NumericalError("getrf", info,
/// batch) for an exactly singular A (info: 1-based index of the zero pivot).
TENFERRO_API Tensor solve(Session& s, const Tensor& a, const Tensor& b);
/// solve into `out` (shape of b); out untouched on any error.
TENFERRO_API void solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out);

/// Options of triangular_solve.
struct TriangularSolveOptions {
  Side side = Side::left;
  Triangle tri = Triangle::lower;  ///< which triangle of A holds the matrix (the other is not read)
  MatOp op = MatOp::none;
  bool unit_diagonal = false;      ///< assume diag(A) = 1 (not read)
};
/// Solves op(A)·X = B (left) or X·op(A) = B (right) with triangular A (BLAS trsm).
/// A [N, N, B...]; B [N, K, B...] (left) or [K, N, B...] (right). Throws
/// NumericalError("trtrs", info, batch) when a non-unit diagonal has an exact zero
/// (info: its 1-based position), as LAPACK trtrs does.
TENFERRO_API Tensor triangular_solve(Session& s, const Tensor& a, const Tensor& b, const TriangularSolveOptions& opt = {});
/// triangular_solve into `out` (shape of b); out untouched on any error.
TENFERRO_API void triangular_solve_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out,
                                        const TriangularSolveOptions& opt = {});

/// Inverse of a square matrix (LAPACK getrf + getri). Throws NumericalError("getrf",
/// info, batch) for an exactly singular matrix.
TENFERRO_API Tensor inv(Session& s, const Tensor& a);
/// inv into `out` (shape of a); out untouched on any error.
TENFERRO_API void inv_into(Session& s, const Tensor& a, const Tensor& out);

/// Determinant [B...] (dtype of A) from an LU factorization; 0 for a singular matrix.
TENFERRO_API Tensor det(Session& s, const Tensor& a);
/// det into `out` [B...] (dtype of a; rank 0 for one matrix). Throws det's errors first,
/// then for a bad output ArgumentError (undefined, read-only, self-overlapping,
/// overlapping another output or an input), DTypeError (dtype) or ShapeError (shape);
/// every output untouched on any error.
TENFERRO_API void det_into(Session& s, const Tensor& a, const Tensor& out);
/// det(A) = sign · exp(logabsdet). sign [B...] has A's dtype (±1 real, a unit phase for
/// complex; 0 when singular); logabsdet [B...] is real (−inf when singular).
struct SlogdetResult {
  Tensor sign, logabsdet;
};
/// Sign and log|det| (LU based; no overflow for large matrices).
TENFERRO_API SlogdetResult slogdet(Session& s, const Tensor& a);
/// slogdet into sign [B...] (dtype of a) and logabsdet [B...] (real dtype of a). Throws
/// slogdet's errors first, then for a bad output ArgumentError (undefined, read-only,
/// self-overlapping, overlapping another output or an input), DTypeError (dtype) or
/// ShapeError (shape); every output untouched on any error.
TENFERRO_API void slogdet_into(Session& s, const Tensor& a, const Tensor& sign, const Tensor& logabsdet);

/// Least-squares method.
enum class LstsqDriver : std::uint8_t {
  qr,   ///< full-rank A (LAPACK gels: QR for M >= N, minimum-norm LQ for M < N)
  svd,  ///< any rank (LAPACK gelsd: singular values <= rcond · S_max count as zero)
};
/// X [N, K, B...] minimizes ‖A·X − B‖ (minimum norm for the svd driver or M < N).
/// rank [B...] i64: effective rank (svd driver; min(M, N) for qr). S [min(M,N), B...]
/// real singular values (svd driver only; undefined for qr).
struct LstsqResult {
  Tensor X, rank, S;
};
/// Least squares. A [M, N, B...], B [M, K, B...] (or [M] for unbatched A). rcond < 0
/// means eps of the dtype · max(M, N). Throws NumericalError("gels") when the qr driver meets
/// an exactly zero diagonal of R (info: its position; nearly rank-deficient A is not
/// detected: use the svd driver), NumericalError("gelsd")
/// when the SVD does not converge, ArgumentError for non-finite input.
TENFERRO_API LstsqResult lstsq(Session& s, const Tensor& a, const Tensor& b, LstsqDriver driver = LstsqDriver::qr,
                               double rcond = -1.0);
/// lstsq into X (b's shape with N rows, dtype of a), rank [B...] (i64) and, for the svd
/// driver, S [min(M, N), B...] (real dtype of a); with the qr driver S must be undefined
/// (ArgumentError otherwise). Throws lstsq's errors first (NumericalError("gels"/"gelsd")
/// included), then for a bad output ArgumentError (undefined, read-only, self-
/// overlapping, overlapping another output or an input), DTypeError (dtype) or ShapeError
/// (shape); every output untouched on any error.
TENFERRO_API void lstsq_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& X, const Tensor& rank, const Tensor& S,
                             LstsqDriver driver = LstsqDriver::qr, double rcond = -1.0);

/// Moore–Penrose pseudo-inverse [N, M, B...] via SVD: singular values <= rtol · S_max
/// are dropped (rtol < 0 means max(M, N) · eps of the dtype). ArgumentError for
/// non-finite input.
TENFERRO_API Tensor pinv(Session& s, const Tensor& a, double rtol = -1.0);
/// pinv into `out` [N, M, B...] (dtype of a). Throws pinv's errors first, then for a bad
/// output ArgumentError (undefined, read-only, self-overlapping, overlapping another
/// output or an input), DTypeError (dtype) or ShapeError (shape); every output untouched
/// on any error.
TENFERRO_API void pinv_into(Session& s, const Tensor& a, const Tensor& out, double rtol = -1.0);

// ------------------------------------------------------------------------- norms

/// Matrix norm kinds.
enum class MatrixNorm : std::uint8_t {
  frobenius,  ///< sqrt(sum |a_ij|²)
  nuclear,    ///< sum of singular values
  spectral,   ///< largest singular value
  one,        ///< max column sum of |a_ij|
  inf,        ///< max row sum of |a_ij|
};
/// Norm of each matrix: [M, N, B...] → [B...], real dtype of A. 0 for empty matrices.
TENFERRO_API Tensor matrix_norm(Session& s, const Tensor& a, MatrixNorm kind = MatrixNorm::frobenius);
/// matrix_norm into `out` [B...] (real dtype of a). Throws matrix_norm's errors first,
/// then for a bad output ArgumentError (undefined, read-only, self-overlapping,
/// overlapping another output or an input), DTypeError (dtype) or ShapeError (shape);
/// every output untouched on any error.
TENFERRO_API void matrix_norm_into(Session& s, const Tensor& a, const Tensor& out, MatrixNorm kind = MatrixNorm::frobenius);
/// Vector p-norm along axis 0: [N, B...] → [B...], real dtype of x. p = +inf is max |x|,
/// p = -inf min |x|, p = 0 counts non-zeros, other p: (sum |x|^p)^(1/p). ArgumentError
/// for NaN p; DTypeError for integer/bool x.
TENFERRO_API Tensor vector_norm(Session& s, const Tensor& x, double p = 2.0);
/// vector_norm into `out` [B...] (real dtype of x). Throws vector_norm's errors first,
/// then for a bad output ArgumentError (undefined, read-only, self-overlapping,
/// overlapping another output or an input), DTypeError (dtype) or ShapeError (shape);
/// every output untouched on any error.
TENFERRO_API void vector_norm_into(Session& s, const Tensor& x, const Tensor& out, double p = 2.0);

// -------------------------------------------------------------------- matrix_exp

/// exp(A) per batch by scaling and squaring with a Padé approximant of degree 3, 5, 7,
/// 9 or 13 chosen from ‖A‖₁ (Higham, "The scaling and squaring method for the matrix
/// exponential revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005, Algorithm 2.3).
/// ArgumentError for non-finite input.
TENFERRO_API Tensor matrix_exp(Session& s, const Tensor& a);
/// matrix_exp into `out` (shape and dtype of a). Throws matrix_exp's errors first
/// (NumericalError("gesv") included), then for a bad output ArgumentError (undefined,
/// read-only, self-overlapping, overlapping another output or an input), DTypeError
/// (dtype) or ShapeError (shape); every output untouched on any error.
TENFERRO_API void matrix_exp_into(Session& s, const Tensor& a, const Tensor& out);

// ------------------------------------------------------------------------ stats

/// The linalg workspace-size cache of the session's checked-out resources.
TENFERRO_API PlanCacheStats linalg_plan_cache_stats(Session& s);

}  // namespace tenferro
