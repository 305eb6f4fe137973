#pragma once
// The CPU backend's conversion kernel (ConvertKernel, ops/kernel_table.hpp; Note
// [Conversions in the op layer]), listed in src/cpu/kernel_table.cpp.
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// Copies x, broadcast to out's shape, into out converting each element to out's dtype
/// (cast_value: lossy, every case defined). Same-dtype copies take the blocked kernel
/// when the memory order changes (Note [Blocked transpose copy]).
void convert_kernel(Session& s, const Tensor& x, const Tensor& out);

}  // namespace tenferro::cpu
