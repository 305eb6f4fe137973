#pragma once
// Backend-neutral operand checks and output preparation used by the front ends
// (src/ops) and, through cpu/op_common.hpp, by the CPU ops not yet split into a front
// end and kernels. Two tiers of checks (STYLE 7): everything here validates user input
// and throws typed errors whose message starts with the op name.
#include "core/internal_check.hpp"

#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "tenferro/session.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// `t` is defined (ArgumentError) and on `device` (SessionEntryError IncompatibleContext:
/// nothing moves between devices implicitly); `what` names it in messages ("lhs", "out").
void require_tensor_on(const Tensor& t, DeviceKind device, std::string_view op, std::string_view what);

/// `out` is defined, on `device`, writable, has `dtype` (DTypeError) and `shape`
/// (ShapeError), and no two of its elements share memory (ArgumentError).
void require_output(const Tensor& out, std::string_view op, DType dtype, std::span<const std::int64_t> shape, DeviceKind device);

/// ArgumentError unless `out` and `in` are disjoint in memory, or (when `same_ok`) `in`,
/// broadcast to out's shape, is exactly out's layout (same first element and strides).
void check_overlap(const Tensor& out, const Tensor& in, std::string_view op, bool same_ok);

/// Byte range [lo, hi) touched by t (empty, lo == hi, when t has no elements).
std::pair<const char*, const char*> byte_range(const Tensor& t) noexcept;

/// Whether x and y touch a common byte (same storage, or overlapping external memory).
bool memory_overlaps(const Tensor& x, const Tensor& y) noexcept;

/// Byte strides of `t` broadcast to `shape` (rank >= t.rank(); 0 on stretched axes).
void broadcast_byte_strides(const Tensor& t, int rank, std::int64_t* out) noexcept;

/// "[2, 3] f64" for messages.
std::string describe(const Tensor& t);

/// The multi-index of element `k` of t in column-major element order (the position a
/// data check answers), for messages.
Dims position_index(const Tensor& t, std::int64_t k);

// Note [Elementwise fast path]
// Tiny ops are dominated by validation and planning (~2000 instructions through the
// general path). When every tensor is a compact column-major tensor on the session's
// device, all of one dtype with identical extents, and the output (if given) is the
// same and either disjoint from or identical to each input, the whole op is one
// contiguous loop: the checks below are all the validation it needs, and they imply
// what inference would answer. Anything else, including every error case, takes the
// general path, which validates fully and throws.

/// A defined, compact column-major tensor on `device`.
TENFERRO_ALWAYS_INLINE bool fast_operand(const Tensor& t, DeviceKind device) noexcept {
  return t.defined() && t.device().kind == device && t.is_contiguous();
}

/// Same dtype and extents.
TENFERRO_ALWAYS_INLINE bool same_dtype_extents(const Tensor& a, const Tensor& b) noexcept {
  if (a.dtype() != b.dtype() || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.extent(i) != b.extent(i)) return false;
  return true;
}

/// Output check of the fast path: compact like x, writable, and not partially overlapping
/// any input (same storage is only fine at the same first element).
TENFERRO_ALWAYS_INLINE bool fast_output_ok(const Tensor& out, const Tensor& x, const Tensor* y = nullptr) noexcept {
  if (!fast_operand(out, x.device().kind) || out.read_only() || !same_dtype_extents(out, x)) return false;
  out.note_write();
  if (out.shares_storage(x) && out.data() != x.data()) return false;
  return !(y && out.shares_storage(*y) && out.data() != y->data());
}

/// x's extents as a span over `buf` (kMaxRank entries): a shape for inference without
/// building a Shape.
inline std::span<const std::int64_t> extents_of(const Tensor& x, std::int64_t* buf) noexcept {
  for (int i = 0; i < x.rank(); ++i) buf[i] = x.extent(i);
  return {buf, static_cast<std::size_t>(x.rank())};
}

/// A compact tensor shaped like `x` with dtype `d`, on x's device (x is compact: its
/// extents are valid).
Tensor new_like(const Tensor& x, DType d);

/// A compact tensor for an op's result on the session's device (Note [Per-device
/// allocation]; on the CPU from the session's pool).
Tensor new_output(const Session& s, std::span<const std::int64_t> shape, DType dtype, std::string_view op);

}  // namespace tenferro::detail
