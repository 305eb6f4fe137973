#pragma once
/// \file dot.hpp
/// dot_general (StableHLO), matmul and grouped GEMM.
///
/// Output axes are `[lhs_free..., rhs_free..., batch...]` (batch trailing), free axes in
/// their operand's order. Float and complex dtypes; mixed operands promote (an f32 lhs
/// times a c128 rhs computes in c128). Integer and bool operands are a DTypeError.
/// Strided operands go straight to BLAS when their strides allow (one unit stride per
/// matrix, non-negative leading dimension); otherwise they are packed once. Tiny
/// products (every extent <= 64 and M·N·K <= 4096) never call BLAS and allocate nothing.
///
/// Errors: DTypeError (integer/bool operands, wrong out dtype), AxisError (a dim out of
/// range, listed twice, or both batch and contracting), ShapeError (contracting or batch
/// extents that differ, batch/contracting lists of different lengths, wrong out shape),
/// ArgumentError (out read-only, self-overlapping, or overlapping an operand).

#include "tenferro/ops.hpp"

namespace tenferro {

/// The dimension configuration of a dot_general.
struct DotDims {
  Dims lhs_contracting;  ///< contracted axes of lhs, paired in order with rhs_contracting
  Dims rhs_contracting;
  Dims lhs_batch;        ///< batch axes of lhs, paired in order with rhs_batch
  Dims rhs_batch;
  bool conj_lhs = false;  ///< use conj(lhs)
  bool conj_rhs = false;  ///< use conj(rhs)
};

/// lhs · rhs contracted per `dims`, into a new compact tensor.
TENFERRO_API Tensor dot_general(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims);
/// out = alpha · (lhs · rhs) + beta · out. `out` may be any writable, non-self-overlapping
/// strided view that does not overlap an operand; with beta = 0 it is not read (NaN in
/// out does not propagate), as BLAS.
TENFERRO_API void dot_general_into(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor& out,
                                   Scalar alpha = 1.0, Scalar beta = 0.0);

/// Matrix product over the first two axes with trailing batch axes: [M, K, B...] ×
/// [K, N, B...] → [M, N, B...] (batch extents must match). A rank-1 lhs is a row
/// vector [K] (result [N, ...]), a rank-1 rhs a column vector [K] (result [M, ...]).
TENFERRO_API Tensor matmul(Session& s, const Tensor& a, const Tensor& b);
/// out = alpha · a·b + beta · out with matmul's shape rules.
TENFERRO_API void matmul_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out, Scalar alpha = 1.0,
                              Scalar beta = 0.0);

/// One product of a grouped GEMM: c = alpha · op(a) · op(b) + beta · c with rank-2
/// a [M, K], b [K, N], c [M, N] (strided views allowed).
struct GemmItem {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  const Tensor* c = nullptr;
  Scalar alpha = 1.0;
  Scalar beta = 0.0;
  bool conj_a = false;
  bool conj_b = false;
};

/// Many independent small products of possibly different shapes and dtypes in one call;
/// all items are validated before any is computed. Items run in parallel across the
/// session's threads when worthwhile. The c tensors must not overlap each other or any
/// operand.
TENFERRO_API void grouped_gemm(Session& s, std::span<const GemmItem> items);

/// The dot_general plan cache of the session's checked-out resources.
TENFERRO_API PlanCacheStats dot_plan_cache_stats(Session& s);

}  // namespace tenferro
