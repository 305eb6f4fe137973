#pragma once
/// @file
/// Typed attributes of the primitives (Note [Typed attributes]): one struct per kind of
/// op parameter, named by the catalogue's attribute column, so that a recorded op (an
/// eager tape node today, a traced graph node later) carries its parameters as one
/// typed value and never in untyped slots.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

#include "tenferro/dot.hpp"
#include "tenferro/fft.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/op_catalog.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

// Note [Typed attributes]
// Every catalogue row names its attribute struct (op_catalog.def, last column); the
// structs below are the whole set. `OpAttrs` is the variant of all of them,
// `op_attrs_t<OpId::x>` the struct of op x, and `op_attrs_index(op)` its alternative in
// OpAttrs (checked when a node is recorded). Fields hold what the op was called with,
// normalized (axes non-negative) where the rules need it; operand values, scalar
// operands included, are inputs and not attributes.

/// An op without parameters (elementwise arithmetic, analytic functions, inv, det, ...).
struct NoAttrs {};
/// compare: the comparison.
struct CompareAttrs {
  CompareOp op = CompareOp::eq;
};
/// convert / cast: the result dtype.
struct ConvertAttrs {
  DType dtype = DType::f64;
};
/// reshape: the result shape.
struct ReshapeAttrs {
  Dims shape;
};
/// Reductions over a set of axes (sum, prod, max, min, mean, sum_squares, argmax,
/// argmin, logsumexp): all_axes reduces everything (axes empty).
struct ReduceAttrs {
  Dims axes;
  bool all_axes = false;
  bool keepdims = false;
};
/// Ops along one axis (cumsum, cumprod, softmax, log_softmax, concatenate, stack).
struct AxisAttrs {
  std::int64_t axis = 0;
};
/// take_along_axis / index_select: the axis and the operand's extent along it.
struct IndexAxisAttrs {
  std::int64_t axis = 0;
  std::int64_t extent = 0;
};
/// axpby: y = alpha·x + beta·y.
struct AxpbyAttrs {
  Scalar alpha, beta;
};
/// transpose: the permutation.
struct PermuteAttrs {
  Dims perm;
};
/// broadcast_in_dim: where x's axes go in the result (the result shape is the output's).
struct BroadcastAttrs {
  Dims dims;
};
/// extract_diagonal / embed_diagonal: the pair of axes.
struct DiagonalAttrs {
  std::int64_t axis1 = 0, axis2 = 1;
};
/// tril / triu: the diagonal offset.
struct TriangleAttrs {
  std::int64_t offset = 0;
};
/// reverse: the reversed axes.
struct AxesAttrs {
  Dims axes;
};
/// pad: low, high and interior padding per axis (the padding value is an input).
struct PadAttrs {
  Dims low, high, interior;
};
/// slice: starts, limits and strides per axis.
struct SliceAttrs {
  Dims starts, limits, strides;
};
/// iota: shape, dtype and the counting dimension.
struct IotaAttrs {
  Dims shape;
  DType dtype = DType::i64;
  std::int64_t dimension = 0;
};
/// dynamic_slice: the slice sizes (the start indices are an input).
struct DynamicSliceAttrs {
  Dims slice_sizes;
};
/// gather: dimension numbers and slice sizes.
struct GatherAttrs {
  GatherDims dims;
  Dims slice_sizes;
};
/// scatter: dimension numbers and the combiner.
struct ScatterAttrs {
  ScatterDims dims;
  ScatterCombiner combiner = ScatterCombiner::add;
};
/// dot_general: dimension numbers (and conjugation flags).
struct DotAttrs {
  DotDims dims;
};
/// grouped_gemm (one item): C = alpha·op(A)·op(B) + beta·C.
struct GemmAttrs {
  Scalar alpha, beta;
  bool conj_a = false, conj_b = false;
};
/// fft, ifft, rfft, irfft: transformed axes (normalized), the transform length n per
/// axis (rfft: the real input length of the last axis), the input extents, the scale
/// and the planner.
struct FftAttrs {
  Dims axes, lengths, input_extents;
  FftNorm norm = FftNorm::backward;
  FftPlanner planner = FftPlanner::estimate;
};
/// svd: values only (svdvals) and the Lorentzian broadening of the rules.
struct SvdAttrs {
  bool values_only = false;
  double eta = 0.0;
};
/// qr: the sign convention of R's diagonal.
struct QrAttrs {
  bool positive_diagonal = false;
};
/// cholesky / eigh: the triangle read.
struct TriangleReadAttrs {
  Triangle tri = Triangle::lower;
};
/// eig: values only (eigvals).
struct EigAttrs {
  bool values_only = false;
};
/// triangular_solve: side, triangle, op and unit diagonal.
struct TriangularSolveAttrs {
  TriangularSolveOptions options;
};
/// lu_solve: B (and X) is a vector [N].
struct LuSolveAttrs {
  bool vector_rhs = false;
};
/// lu_pivots_to_permutation: the permutation size.
struct PermutationAttrs {
  std::int64_t size = 0;
};
/// lstsq: the driver and its rcond.
struct LstsqAttrs {
  LstsqDriver driver = LstsqDriver::svd;
  double rcond = -1.0;
};
/// pinv: the relative tolerance.
struct PinvAttrs {
  double rtol = -1.0;
};
/// matrix_norm: the norm.
struct MatrixNormAttrs {
  MatrixNorm kind = MatrixNorm::frobenius;
};
/// vector_norm: the order p.
struct VectorNormAttrs {
  double p = 2.0;
};
/// einsum: integer labels per operand and of the output.
struct EinsumAttrs {
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::int64_t> out_labels;
};

/// Every attribute struct (the alternatives of a recorded op's parameters).
using OpAttrs = std::variant<NoAttrs, CompareAttrs, ConvertAttrs, ReshapeAttrs, ReduceAttrs, AxisAttrs, IndexAxisAttrs, AxpbyAttrs,
                             PermuteAttrs, BroadcastAttrs, DiagonalAttrs, TriangleAttrs, AxesAttrs, PadAttrs, SliceAttrs, IotaAttrs,
                             DynamicSliceAttrs, GatherAttrs, ScatterAttrs, DotAttrs, GemmAttrs, FftAttrs, SvdAttrs, QrAttrs,
                             TriangleReadAttrs, EigAttrs, TriangularSolveAttrs, LuSolveAttrs, PermutationAttrs, LstsqAttrs,
                             PinvAttrs, MatrixNormAttrs, VectorNormAttrs, EinsumAttrs>;

namespace detail {
/// Index of T among OpAttrs' alternatives (a compile error names a struct missing from
/// OpAttrs).
template <class T, class V, std::size_t I = 0> constexpr std::size_t variant_index() {
  static_assert(I < std::variant_size_v<V>, "an attribute struct named by op_catalog.def is missing from OpAttrs");
  if constexpr (std::is_same_v<std::variant_alternative_t<I, V>, T>) {
    return I;
  } else {
    return variant_index<T, V, I + 1>();
  }
}
template <OpId Op> struct OpAttrsOf;
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) \
  template <> struct OpAttrsOf<OpId::name> {                          \
    using type = attrs;                                               \
  };
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
inline constexpr std::size_t kOpAttrsIndex[] = {
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) variant_index<attrs, OpAttrs>(),
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
};
static_assert(sizeof(kOpAttrsIndex) / sizeof(kOpAttrsIndex[0]) == kNumOps);
}  // namespace detail

/// The attribute struct of op `Op` (from the catalogue's attribute column).
template <OpId Op> using op_attrs_t = typename detail::OpAttrsOf<Op>::type;
/// The alternative of OpAttrs that op `op` records.
constexpr std::size_t op_attrs_index(OpId op) noexcept { return detail::kOpAttrsIndex[static_cast<int>(op)]; }

}  // namespace tenferro
