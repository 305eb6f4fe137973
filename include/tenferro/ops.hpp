#pragma once
/// \file ops.hpp
/// Elementwise, analytic, conversion, reduction and BLAS-1 operations. Every op runs on
/// a Session; allocating forms return a new compact tensor, `_into` forms write into a
/// caller tensor (which may be a strided view). Validation is complete before anything
/// is written: on any error the output is untouched.
///
/// Common errors (every op): SessionEntryError when the session is not usable on this
/// thread; ArgumentError for an undefined tensor; SessionEntryError(IncompatibleContext)
/// for a tensor on another device; DTypeError for a dtype outside the op's set;
/// ShapeError for shapes that do not broadcast or a wrong output shape; DTypeError for
/// a wrong output dtype; ArgumentError for a read-only output or an output that
/// partially overlaps an input (an output identical to an input, element for element,
/// is allowed for elementwise ops).
///
/// Broadcasting: NumPy's rules read in column-major order. Shapes align at their first
/// axis; a missing trailing axis counts as extent 1; an extent of 1 stretches. So a
/// [M, N] matrix broadcasts against a batch [M, N, B] (batch axes trail), and a [M]
/// vector against [M, N] as a column. (NumPy aligns at the last axis; a column-major
/// [M, N, B] is NumPy's row-major (B, N, M), so the two rules agree on memory.)
///
/// Dtypes: operands of different dtypes promote (tenferro::promote); a Scalar operand
/// is weak (Scalar::result_dtype_with): an f32 tensor plus 2.0 stays f32.

#include <span>

#include "tenferro/session.hpp"
#include "tenferro/op_catalog.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

/// An elementwise operand: a tensor or a host scalar (broadcast to the result shape).
/// Holds a pointer to the tensor: pass it directly, do not store it.
class Operand {
 public:
  Operand(const Tensor& t) noexcept : t_(&t) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Operand(T v) noexcept : s_(v) {}
  template <class T> Operand(std::complex<T> v) noexcept : s_(v) {}
  Operand(Scalar v) noexcept : s_(v) {}
  bool is_tensor() const noexcept { return t_ != nullptr; }
  const Tensor& tensor() const noexcept { return *t_; }
  const Scalar& scalar() const noexcept { return s_; }

 private:
  const Tensor* t_ = nullptr;
  Scalar s_;
};

// ---------------------------------------------------------------- elementwise binary
// Integer add/sub/mul/neg wrap around (two's complement). Integer div and rem truncate
// toward zero (StableHLO; NumPy floors) and throw NumericalError on a zero divisor,
// before writing; INT_MIN / -1 gives INT_MIN. Float rem is fmod (sign of the dividend,
// StableHLO). maximum/minimum propagate NaN. pow on integers needs exponents >= 0
// (ArgumentError otherwise). Bool operands are accepted by compare, select, maximum and
// minimum (or/and), and promote to the other operand's dtype elsewhere; bool op bool is
// a DTypeError for arithmetic.
#define TENFERRO_BINARY_OP(name)                                                                 \
  TENFERRO_API Tensor name(Session& s, const Operand& a, const Operand& b);                      \
  TENFERRO_API void name##_into(Session& s, const Operand& a, const Operand& b, const Tensor& out);
TENFERRO_BINARY_OP(add)
TENFERRO_BINARY_OP(sub)
TENFERRO_BINARY_OP(mul)
TENFERRO_BINARY_OP(div)
TENFERRO_BINARY_OP(rem)
TENFERRO_BINARY_OP(maximum)
TENFERRO_BINARY_OP(minimum)
TENFERRO_BINARY_OP(pow)
#undef TENFERRO_BINARY_OP

/// Comparison operators. Complex operands allow only eq and ne (DTypeError otherwise).
enum class CompareOp : std::uint8_t { eq, ne, lt, le, gt, ge };
/// Elementwise comparison → bool tensor.
TENFERRO_API Tensor compare(Session& s, const Operand& a, const Operand& b, CompareOp op);
TENFERRO_API void compare_into(Session& s, const Operand& a, const Operand& b, CompareOp op, const Tensor& out);
inline Tensor eq(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::eq); }
inline Tensor ne(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::ne); }
inline Tensor lt(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::lt); }
inline Tensor le(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::le); }
inline Tensor gt(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::gt); }
inline Tensor ge(Session& s, const Operand& a, const Operand& b) { return compare(s, a, b, CompareOp::ge); }

/// pred ? on_true : on_false elementwise; `pred` must be bool (DTypeError otherwise);
/// the branches promote. All three broadcast.
TENFERRO_API Tensor select(Session& s, const Operand& pred, const Operand& on_true, const Operand& on_false);
TENFERRO_API void select_into(Session& s, const Operand& pred, const Operand& on_true, const Operand& on_false, const Tensor& out);
/// min(max(x, lo), hi) elementwise (StableHLO operand order: lo, x, hi). Real dtypes.
TENFERRO_API Tensor clamp(Session& s, const Operand& lo, const Operand& x, const Operand& hi);
TENFERRO_API void clamp_into(Session& s, const Operand& lo, const Operand& x, const Operand& hi, const Tensor& out);

// ---------------------------------------------------------------- elementwise unary
// neg, conj, abs, sign: numeric dtypes (abs of complex is real; sign of complex is
// z/|z|, 0 at 0). real, imag, angle: any numeric dtype, real output (imag of a real
// tensor is 0; angle of a real x is 0 or pi; integer inputs give f64).
// Analytic ops: float and complex dtypes (erf: float only). Integer and bool inputs are
// a DTypeError: convert first.
#define TENFERRO_UNARY_OP(name)                                        \
  TENFERRO_API Tensor name(Session& s, const Tensor& x);               \
  TENFERRO_API void name##_into(Session& s, const Tensor& x, const Tensor& out);
TENFERRO_UNARY_OP(neg)
TENFERRO_UNARY_OP(conj)
TENFERRO_UNARY_OP(abs)
TENFERRO_UNARY_OP(sign)
TENFERRO_UNARY_OP(real)
TENFERRO_UNARY_OP(imag)
TENFERRO_UNARY_OP(angle)
// The analytic functions, one declaration pair per `analytic` row of the catalogue
// (op_catalog.def; Note [Family lists from the catalogue]): exp log sin cos tan tanh
// sqrt rsqrt expm1 log1p erf sigmoid asin acos atan sinh cosh log2 exp2 cbrt softplus
// silu gelu log10.
// - exp, tanh of f32/f64: four lanes at a time with AVX2+FMA where the CPU has them
//   (glibc's functions elsewhere), at most 1 ulp (exp) and 1.1 ulp (tanh) in f64; every
//   layout, thread count and compiled graph gives the same value for the same input.
// - log2, log10, exp2: float and complex dtypes (complex: log(z)/ln 2 and log(z)/ln 10
//   on log's principal branch, exp(z·ln 2)); log2(0) = -inf, log2(x < 0) = NaN for real
//   x, and the same for log10.
// - cbrt, softplus, silu, gelu: float dtypes only (the stable forms branch on the sign
//   of x, which complex numbers lack). cbrt is the real cube root, odd: cbrt(-8) = -2.
//   softplus = log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|): no overflow for
//   large x (softplus(1000) = 1000), full relative accuracy for very negative x.
//   silu = x·sigmoid(x) (swish); silu(-inf) = -0. gelu is the exact (erf-form) GELU
//   x·Φ(x) = ½·x·(1 + erf(x/√2)), computed as ½·x·erfc(-x/√2) (accurate in the left
//   tail); gelu(-inf) = -0.
// Errors: the common ones (DTypeError for integer and bool inputs and, where float-only,
// complex inputs).
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_UNARY_OP(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_UNARY_OP

// ---------------------------------------------------------------- conversion and copies
/// Checked conversion: ArgumentError naming the first element that does not convert
/// exactly (2.5 → i32, 1e40 → f32, 3+1j → f64, 2 → bool). NaN converts between float
/// and complex dtypes.
TENFERRO_API Tensor convert(Session& s, const Tensor& x, DType dtype);
TENFERRO_API void convert_into(Session& s, const Tensor& x, const Tensor& out);
/// Lossy conversion, every case defined: float → integer truncates and saturates
/// (NaN → 0), complex → real keeps the real part, → bool tests != 0.
TENFERRO_API Tensor cast(Session& s, const Tensor& x, DType dtype);
TENFERRO_API void cast_into(Session& s, const Tensor& x, const Tensor& out);
/// Copies any strided source into any strided destination of the same shape and dtype.
TENFERRO_API void copy_into(Session& s, const Tensor& src, const Tensor& dst);
/// A compact column-major copy (returns `x` itself, shared, when already compact and
/// not read-only).
TENFERRO_API Tensor to_contiguous(Session& s, const Tensor& x);
/// A view when the layout allows (Tensor::reshape_view), otherwise a compact copy.
TENFERRO_API Tensor reshape(Session& s, const Tensor& x, std::span<const std::int64_t> shape);
inline Tensor reshape(Session& s, const Tensor& x, std::initializer_list<std::int64_t> shape) {
  return reshape(s, x, std::span(shape.begin(), shape.size()));
}
/// Copies x into `out`, any writable strided view (transposed, negative strides) of x's
/// shape and dtype: the `_into` form of to_contiguous (unlike copy_into, no broadcasting
/// of x). ArgumentError for an undefined x or out, a read-only or self-overlapping out,
/// or an out overlapping x in memory (even exactly: to_contiguous_into(x, x) is
/// refused); DTypeError for out's dtype != x's; ShapeError for out's shape != x's. All
/// checked before anything is written.
TENFERRO_API void to_contiguous_into(Session& s, const Tensor& x, const Tensor& out);
/// Copies x's elements in column-major order into `out`, a writable strided view whose
/// shape is `shape` (one extent may be -1, inferred as for reshape): the `_into` form of
/// reshape. Errors of reshape (ShapeError when element counts differ), then those of
/// to_contiguous_into for out (its shape must be the resolved `shape`); all checked
/// before anything is written.
TENFERRO_API void reshape_into(Session& s, const Tensor& x, std::span<const std::int64_t> shape, const Tensor& out);
inline void reshape_into(Session& s, const Tensor& x, std::initializer_list<std::int64_t> shape, const Tensor& out) {
  reshape_into(s, x, std::span(shape.begin(), shape.size()), out);
}

// ---------------------------------------------------------------- reductions
// Over the listed axes (negative axes count from the end; AxisError for a bad or
// repeated axis); the forms without `axes` reduce every axis. keepdims keeps reduced
// axes with extent 1. An `_into` output must have the result shape (with or without
// the kept axes, matching `keepdims`).
// Dtypes: sum/prod of bool give i64, of integers keep the dtype (wrapping); mean of
// integers and bool gives f64; sum_squares of complex is real (sum of |z|^2);
// max/min/argmax/argmin need real dtypes; argmax/argmin give i64 indices into the
// reduced axes in column-major order, first occurrence on ties, NaN counts as the
// maximum (and minimum), as NumPy.
// Empty reductions: sum 0, prod 1, mean NaN, sum_squares 0; max/min/argmax/argmin of
// an empty axis throw ShapeError.
// Results do not depend on the thread count (fixed blocking).
#define TENFERRO_REDUCTION_OP(name)                                                                                    \
  TENFERRO_API Tensor name(Session& s, const Tensor& x);                                                              \
  TENFERRO_API Tensor name(Session& s, const Tensor& x, std::span<const std::int64_t> axes, bool keepdims = false);    \
  inline Tensor name(Session& s, const Tensor& x, std::initializer_list<std::int64_t> axes, bool keepdims = false) {  \
    return name(s, x, std::span(axes.begin(), axes.size()), keepdims);                                                \
  }                                                                                                                   \
  TENFERRO_API void name##_into(Session& s, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out,    \
                                bool keepdims = false);
TENFERRO_REDUCTION_OP(sum)
TENFERRO_REDUCTION_OP(prod)
TENFERRO_REDUCTION_OP(max)
TENFERRO_REDUCTION_OP(min)
TENFERRO_REDUCTION_OP(mean)
TENFERRO_REDUCTION_OP(sum_squares)
TENFERRO_REDUCTION_OP(argmax)
TENFERRO_REDUCTION_OP(argmin)
/// log(Σ exp(x)) over the axes, computed stably: the running maximum m is factored out
/// (m + log Σ exp(x - m)), so no exp overflows or underflows to a spurious -inf. Float
/// dtypes only (DTypeError otherwise); result in x's dtype. An empty reduction and a
/// slice that is all -inf give -inf; a +inf element gives +inf; NaN propagates (over
/// +inf too). Other errors: as every reduction.
TENFERRO_REDUCTION_OP(logsumexp)
#undef TENFERRO_REDUCTION_OP

// ---------------------------------------------------------------- along one axis
// Scans and normalizations along one axis of x (negative axes count from the end;
// AxisError for an axis outside [-rank, rank), so a rank-0 x always is one). The result
// has x's shape; an `_into` output must have it too (ShapeError) and x's dtype
// (DTypeError); it may be x itself (element for element) but not partially overlap it
// (ArgumentError). Other errors: as every op (ops.hpp header).
/// Inclusive prefix sum along `axis`: y[i] = x[0] + ... + x[i]. Numeric dtypes (bool is a
/// DTypeError: convert first); integers wrap, as add does; floats add left to right.
TENFERRO_API Tensor cumsum(Session& s, const Tensor& x, std::int64_t axis);
TENFERRO_API void cumsum_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& out);
/// Inclusive prefix product along `axis`: y[i] = x[0]·...·x[i]. Numeric dtypes; integers
/// wrap, as mul does.
TENFERRO_API Tensor cumprod(Session& s, const Tensor& x, std::int64_t axis);
TENFERRO_API void cumprod_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& out);
/// exp(x - m) / Σ exp(x - m) along `axis`, m the slice's maximum (stable: no overflow).
/// Float dtypes only (DTypeError otherwise: complex has no maximum to shift by). A slice
/// that holds NaN or +inf, or is all -inf, is NaN throughout (the shifted formula has
/// x - m = NaN there); other slices are unaffected, in [0, 1], and sum to 1.
TENFERRO_API Tensor softmax(Session& s, const Tensor& x, std::int64_t axis);
TENFERRO_API void softmax_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& out);
/// x - logsumexp(x) along `axis`, computed as (x - m) - log Σ exp(x - m) (stable, no
/// log of an underflowed softmax: log_softmax([-1000, 0]) = [-1000, 0]). Float dtypes
/// only; the NaN slices of softmax are NaN here too.
TENFERRO_API Tensor log_softmax(Session& s, const Tensor& x, std::int64_t axis);
TENFERRO_API void log_softmax_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& out);

// ---------------------------------------------------------------- BLAS-1
/// sum(conj(a) * b) over all elements, as a rank-0 tensor of the promoted dtype.
/// Shapes must be equal (ShapeError). Numeric dtypes.
TENFERRO_API Tensor vdot(Session& s, const Tensor& a, const Tensor& b);
/// sum(|x|^2) as a rank-0 real tensor (f64 for integer input).
TENFERRO_API Tensor norm_squared(Session& s, const Tensor& x);
/// vdot into `out`: a rank-0 tensor (any writable view) of the promoted dtype. Errors of
/// vdot, then for out: undefined, read-only or overlapping a or b in memory →
/// ArgumentError, wrong dtype → DTypeError, rank != 0 → ShapeError; all checked before
/// the kernel runs, so out is untouched on any error.
TENFERRO_API void vdot_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out);
/// norm_squared into `out`: a rank-0 tensor of the real dtype of x (f64 for integers).
/// Errors as vdot_into (out may not overlap x); out untouched on any error.
TENFERRO_API void norm_squared_into(Session& s, const Tensor& x, const Tensor& out);
/// y = alpha * x + beta * y, in place into `y` (any strided, writable view). Shapes
/// must be equal; x's dtype must convert to y's without loss of kind (an f64 x into an
/// f32 y is a DTypeError; convert explicitly); alpha and beta convert to y's dtype.
TENFERRO_API void axpby(Session& s, Scalar alpha, const Tensor& x, Scalar beta, const Tensor& y);

// ---------------------------------------------------------------- operator sugar
// Use the session the calling thread is inside (current_session()); with none active
// they throw SessionEntryError(Poisoned). Nothing opens a session implicitly.
inline Tensor operator+(const Tensor& a, const Operand& b) { return add(current_session(), a, b); }
inline Tensor operator-(const Tensor& a, const Operand& b) { return sub(current_session(), a, b); }
inline Tensor operator*(const Tensor& a, const Operand& b) { return mul(current_session(), a, b); }
inline Tensor operator/(const Tensor& a, const Operand& b) { return div(current_session(), a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(current_session(), a, b); }
inline Tensor operator-(Scalar a, const Tensor& b) { return sub(current_session(), a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(current_session(), a, b); }
inline Tensor operator/(Scalar a, const Tensor& b) { return div(current_session(), a, b); }
inline Tensor operator-(const Tensor& a) { return neg(current_session(), a); }

}  // namespace tenferro
