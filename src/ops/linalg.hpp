#pragma once
// The linalg family's shared inference and output handling (src/ops): the matrix
// operand check, result shapes, the finiteness check (a named data check), and the
// validation and commit of `_into` outputs (Note [Linalg into forms]). Backend-neutral:
// no LAPACK, no CPU type.
#include "core/internal_check.hpp"

#include <initializer_list>
#include <string_view>

#include "tenferro/linalg.hpp"
#include "tenferro/session.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail::linalg {

/// Extents of a matrix operand [M, N, B...].
struct MatrixShape {
  std::int64_t m = 0, n = 0, batches = 1;
};

/// Checks a matrix operand from its metadata (defined, rank >= 2, inexact dtype, extents
/// within LAPACK's 32-bit range; the device is the front end's check). `what` names it.
MatrixShape matrix_infer(const Tensor& a, std::string_view op, std::string_view what = "a");
/// The matrix operand of a front end: s.check(op), `a` defined and on the session's
/// device, then matrix_infer.
MatrixShape check_matrix_operand(Session& s, const Tensor& a, std::string_view op);
/// ShapeError unless the matrix is square.
void require_square(const Tensor& a, std::string_view op, std::string_view what = "a");
/// ShapeError unless a and b have the same batch axes (axes 2...); DTypeError unless
/// their dtypes agree.
void require_same_batch(const Tensor& a, const Tensor& b, std::string_view op);
/// ArgumentError unless every element of `a` is finite (an input to an iterative
/// decomposition, checked before any kernel runs: the data check first_nonfinite).
void require_finite(Session& s, const Tensor& a, std::string_view op);

/// A validated right-hand side: `view` is b as a matrix (a vector [N] becomes [N, 1],
/// held in `owned`; otherwise `view` points at the caller's b).
struct Rhs {
  Tensor owned;
  const Tensor* view = nullptr;
  std::int64_t rows = 0, cols = 0;
  bool vector = false;
  /// b as a matrix.
  const Tensor& mat() const noexcept { return vector ? owned : *view; }
};

/// Validates b against a from their metadata (defined, dtype, batch axes, `rows` rows
/// — or columns when `right_side`, LAPACK's 32-bit range). A rank-1 b is accepted for
/// an unbatched a (left side only). The device is the front end's check.
Rhs rhs_infer(const Tensor& a, const Tensor& b, std::string_view op, std::int64_t rows, bool right_side);

// Note [Linalg into forms]
// Every linalg function has an `_into` form that takes one output view per result (any
// writable strided view: transposed, negative strides, every other element). The two
// forms share one implementation: the `_into` form validates its inputs exactly as the
// allocating form does, then check_into validates every output before anything runs
// (defined, dtype, shape, writable, no two elements sharing memory, and disjoint from
// the other outputs and from every input), then runs the allocating form's code, which
// computes compact pooled results, and commit_into copies each into its view. So an
// error at any point, a NumericalError from LAPACK included, leaves every output
// untouched, and the allocating form pays nothing (its results are the ones computed,
// no copy). Results a mode does not produce (svd's U and Vh in SvdMode::values, lstsq's
// S with the qr driver) are passed as undefined tensors; a defined one is refused, so a
// caller never believes an output was written when it was not. "Disjoint" compares the
// byte ranges views reach in a shared block: two interleaved views (the real and
// imaginary parts of one buffer) count as overlapping.

/// One output of an `_into` form: the caller's view, its name in messages, and the
/// dtype and shape of the result it receives (`produced` false: the mode makes no such
/// result and `out` must be undefined).
struct IntoOut {
  const Tensor* out = nullptr;
  std::string_view name;
  DType dtype = DType::f64;
  Dims shape;
  bool produced = true;
};
/// Validates every output (Note [Linalg into forms]): ArgumentError for an undefined,
/// read-only or self-overlapping output, for one that overlaps another output
/// or an input, and for a defined output the mode does not produce; DTypeError for a
/// wrong dtype; ShapeError for a wrong shape; SessionEntryError for an output on another
/// device than the session's.
void check_into(const Session& s, std::string_view op, std::initializer_list<IntoOut> outs, std::initializer_list<const Tensor*> inputs);
/// Copies results[i] into outs[i].out for every produced output (after success).
void commit_into(Session& s, std::initializer_list<IntoOut> outs, std::initializer_list<const Tensor*> results);

/// [r, c, batch axes of a...].
Dims matrix_shape(std::int64_t r, std::int64_t c, const Tensor& a);
/// [r, batch axes of a...].
Dims vector_shape(std::int64_t r, const Tensor& a);
/// [batch axes of a...].
Dims batch_shape(const Tensor& a);
/// [m, batch axes of pivots (axes 1...)]: the permutation of lu_pivots_to_permutation.
Dims perm_shape(const Tensor& pivots, std::int64_t m);

}  // namespace tenferro::detail::linalg
