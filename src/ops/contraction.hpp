#pragma once
// The contraction family's op layer (dot.hpp: dot_general, matmul, grouped_gemm): pure
// inference and the call a backend's contraction kernel receives.
//
// Note [Contraction in the op layer]
// dot_infer takes the operands' shapes and dtypes and the DotDims, normalizes every
// listed axis, pairs the batch and contracting extents, and answers the result dtype
// and shape [lhs free..., rhs free..., batch...] with each operand's axes by group (a
// DotSignature), or the typed error. The front end (contraction.cpp) prepares the
// output once for the allocating and _into forms (shape, dtype, writable, no
// self-overlap, disjoint from both operands), checks alpha and beta against the result
// dtype, and calls the session's DotKernel. Rank-1/2 products of one dtype without batch
// axes (matrix·matrix, matrix·vector: most calls of a tensor-network sweep) take a short
// form, Note [dot fast path]. matmul's DotDims and grouped_gemm's per-item checks are
// inference too. The CPU kernel (src/cpu/dot.cpp) chooses the layout: the small loop,
// one direct BLAS call, or BLAS over packed copies, with its plans cached per session.
//
// Note [dot fast path]
// A matrix·matrix or matrix·vector product (operands of rank 1 or 2, one contracting
// pair given as non-negative axes, no batch axes, lhs, rhs and out of one inexact
// dtype, out writable, without self-overlap and not sharing storage with an operand,
// alpha and beta real or the dtype complex) is checked by matrix_signature alone: those
// checks (contraction.cpp) imply dot_infer's answer, which it fills in directly, and skip ~1 µs of general
// bookkeeping. Anything else, including every error case, returns false and takes
// dot_infer, which validates fully and throws.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>
#include <string_view>

#include "tenferro/dot.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// dot_general's inferred signature. Axes are normalized to [0, rank) of their operand:
/// free axes in operand order, contracting and batch axes paired in the order the
/// DotDims lists them. Filled by dot_infer (or the short form); only the first
/// nm/nn/nk/nb entries (and rank() extents) are set. Left uninitialized on construction:
/// it sits on the fixed-cost path.
struct DotSignature {
  DType dtype;               ///< result (compute) dtype: the promotion of the operands'
  bool conj_lhs, conj_rhs;   ///< conjugate an operand (the DotDims flags, complex dtypes only)
  int nm, nn, nk, nb;        ///< lhs free, rhs free, contracting and batch axis counts
  std::int8_t lhs_free[kMaxRank], rhs_free[kMaxRank];
  std::int8_t lhs_contracting[kMaxRank], rhs_contracting[kMaxRank];
  std::int8_t lhs_batch[kMaxRank], rhs_batch[kMaxRank];
  std::int64_t shape[kMaxRank];  ///< the result's extents: lhs free, rhs free, batch
  /// The result's rank.
  int rank() const noexcept { return nm + nn + nb; }
  /// The result's shape.
  std::span<const std::int64_t> out_shape() const noexcept { return {shape, static_cast<std::size_t>(rank())}; }
};

/// dot_general's inference (Note [Contraction in the op layer]) into `sig`. DTypeError
/// unless both dtypes are float or complex; ShapeError when the batch or contracting
/// lists do not pair up or paired extents differ; AxisError for an axis out of range or
/// listed twice (within or across an operand's lists); IndexError when the result's
/// element count overflows. `op` names the public function in messages.
void dot_infer(std::string_view op, std::span<const std::int64_t> lhs, DType lhs_dtype, std::span<const std::int64_t> rhs, DType rhs_dtype,
               const DotDims& dims, DotSignature& sig);

/// matmul's DotDims for operands of these shapes: a's axis 1 (axis 0 for a vector)
/// with b's axis 0, and the trailing axes batched pairwise when both have rank > 2.
/// RankError for a rank-0 operand or batch ranks that differ.
DotDims matmul_dims(std::span<const std::int64_t> a, std::span<const std::int64_t> b);

/// The short form's operands as strided matrices (Note [dot fast path]): op(lhs) is
/// M×K with element strides (lm, lk), op(rhs) K×N with (rk, rn), out M×N with (om, on);
/// a vector's missing axis has extent 1 and stride 0. No extent is 0.
struct MatrixForm {
  std::int64_t M, N, K, lm, lk, rk, rn, om, on;
  DType dtype = DType::f64;                 ///< of lhs, rhs and out
  bool conj_lhs = false, conj_rhs = false;  ///< conjugate an operand (complex dtypes only)
  std::int8_t lhs_rank = 2, rhs_rank = 2;   ///< 1 or 2
  std::int8_t lhs_contracting = 1, rhs_contracting = 0;
};

/// dot_infer's answer for the product `f` describes (a kernel that needs the axis
/// groups of a short-form call or a grouped_gemm item).
void matrix_form_signature(const MatrixForm& f, DotSignature& sig) noexcept;

/// A grouped_gemm item (validated: rank-2 a [M, K], b [K, N], c [M, N] of the promoted
/// dtype) as strided matrices: its short form when a and b share c's dtype and no
/// extent is 0, and in any case what matrix_form_signature needs for its signature.
inline MatrixForm gemm_item_form(const GemmItem& it) noexcept {
  const DType d = it.c->dtype();
  return {it.a->extent(0), it.b->extent(1), it.a->extent(1), it.a->stride(0), it.a->stride(1), it.b->stride(0), it.b->stride(1),
          it.c->stride(0), it.c->stride(1), d, it.conj_a && is_complex(d), it.conj_b && is_complex(d)};
}

/// A contraction after validation, as a DotKernel receives it: `out` has sig's shape
/// and dtype, is writable, has no self-overlap and is disjoint from lhs and rhs; alpha
/// and beta are representable in sig.dtype; beta is 0 in the allocating form (out is
/// then uninitialized and must not be read).
struct DotCall {
  std::string_view op;  ///< the public function, for messages
  const Tensor* lhs = nullptr;
  const Tensor* rhs = nullptr;
  const Tensor* out = nullptr;
  const DotSignature* sig = nullptr;  ///< null on the short form (derive it with matrix_form_signature)
  const DotDims* dims = nullptr;  ///< as the caller gave them (a backend may key a plan cache on them)
  const Scalar* alpha = nullptr;
  const Scalar* beta = nullptr;
  /// The short form (Note [dot fast path]; lhs, rhs and out share sig.dtype), or null.
  const MatrixForm* matrix = nullptr;
};


}  // namespace tenferro::detail
