#pragma once
// The structural family's op layer (Note [Structural ops as views plus one copy]): the
// views that describe the re-indexing ops, the inference of the fill-writing ops
// (embed_diagonal, tril, triu, pad: structural_fill.cpp) and the joining ops
// (concatenate, stack: structural_join.cpp), and the fill-value check, all from
// metadata and host values only.
//
// Note [Structural ops as views plus one copy]
// Every re-indexing op is "build the strided view the op describes, then copy it":
// transpose(x, {1, 0}) on a compact [M, N] x is the view with strides {M, 1} copied into
// a compact [N, M] output. The view is built from metadata only (no element is read),
// all validation happens while building it, and the copy is the backend's conversion
// kernel (ConvertKernel, same dtype), so strided, negative-stride and broadcast inputs
// are read in place and, on the CPU, a copy that changes memory order takes the blocked
// kernel. An `_into` output identical to the view, element for element, makes the copy
// a no-op, which is why these ops accept an output aliasing their input exactly. The
// `_view` forms return the view itself and need no session.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>
#include <string_view>

#include "ops/prepare.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/session.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// s.check(op), then x defined and on the session's device (every structural front end).
inline void check_input(Session& s, const Tensor& x, std::string_view op) {
  s.check(op);
  require_tensor_on(x, s.device(), op, "input");
}

/// Sixteen zero bytes: the zero of every dtype (IEEE +0.0 is all zero bits).
inline constexpr unsigned char kZeroBytes[16] = {};

/// The diagonal view of extract_diagonal over axes axis1 and axis2 (the diagonal last):
/// RankError below rank 2, AxisError for a bad or repeated axis.
Tensor diagonal_view(const Tensor& x, std::int64_t axis1, std::int64_t axis2, std::string_view op);

/// The view of broadcast_in_dim: RankError for a bad rank or dimension count, AxisError
/// for a bad or repeated dimension, ShapeError for an extent that does not stretch.
Tensor broadcast_view_of(const Tensor& x, std::span<const std::int64_t> shape, std::span<const std::int64_t> dims, std::string_view op);

/// The view of reverse over `axes` (AxisError for a bad or repeated axis).
Tensor reverse_view_of(const Tensor& x, std::span<const std::int64_t> axes, std::string_view op);

/// iota's dimension normalized (RankError, AxisError, ArgumentError when the extent along
/// it does not fit the dtype).
int iota_dimension(std::span<const std::int64_t> shape, DType dtype, std::int64_t dimension, std::string_view op);

/// `v` converted to dtype `d` into `buf` (16 bytes). ArgumentError when it does not fit
/// an integer or bool dtype exactly, or has a non-zero imaginary part for a real dtype.
void scalar_to_bytes(const Scalar& v, DType d, std::string_view op, unsigned char* buf);

/// embed_diagonal's result: shape and the normalized diagonal axes a, b.
struct EmbedSignature {
  Dims shape;
  int a = 0, b = 0;
};
/// embed_diagonal for an operand of shape `x` (the last axis is the diagonal): RankError
/// at rank 0 or a result above kMaxRank, AxisError for a bad or repeated axis.
EmbedSignature embed_diagonal_infer(std::span<const std::int64_t> x, std::int64_t axis1, std::int64_t axis2, std::string_view op);

/// tril and triu: RankError below rank 2 (the result has the operand's shape and dtype).
void triangle_infer(std::span<const std::int64_t> x, std::string_view op);

/// Where pad puts its operand, per axis: operand elements [src_first, src_first + count)
/// go to result positions dst_first + k * step (step = interior + 1); the rest of the
/// result is padding (and the rest of the operand is cropped by negative padding).
struct PadPlan {
  Dims shape;          ///< result extents
  Dims count;          ///< surviving elements per axis
  Dims src_first;      ///< first surviving element of the operand per axis
  Dims dst_first;      ///< its position in the result
  Dims step;           ///< interior + 1 (1 when count <= 1)
  bool covers = true;  ///< every result element is a copied element (no fill needed)
  bool empty = false;  ///< no operand element survives (the result is padding only)
  alignas(16) unsigned char value[16] = {};  ///< the padding value's bytes in the operand's dtype
};
/// pad for an operand of shape `x` and dtype `dtype`: RankError for padding lists of the
/// wrong length, ArgumentError for negative interior padding or a value that does not
/// fit the dtype, ShapeError for a negative result extent, IndexError past int64.
PadPlan pad_infer(std::span<const std::int64_t> x, DType dtype, const Scalar& value, std::span<const std::int64_t> low,
                  std::span<const std::int64_t> high, std::span<const std::int64_t> interior, std::string_view op);

/// concatenate's or stack's result.
struct JoinSignature {
  Dims shape;               ///< result shape
  DType dtype = DType::b8;  ///< the promoted dtype of the inputs
  int axis = 0;             ///< the result axis the inputs are laid along
};
/// concatenate along `axis` (from the inputs' metadata): ArgumentError for no input or
/// an undefined one, RankError for unequal ranks, AxisError, ShapeError for extents that
/// differ off the axis.
JoinSignature concatenate_infer(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op);
/// stack along a new `axis`: ArgumentError for no input or an undefined one, ShapeError
/// for unequal shapes, RankError past kMaxRank, AxisError.
JoinSignature stack_infer(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op);

}  // namespace tenferro::detail
