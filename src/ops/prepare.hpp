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

/// A compact tensor for an op's result (from the session's pool when inside one).
Tensor new_output(std::span<const std::int64_t> shape, DType dtype, std::string_view op);

}  // namespace tenferro::detail
