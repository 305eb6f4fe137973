#pragma once
// Helpers shared by the CPU structural files (structural.cpp: iota's kernel,
// structural_fill.cpp, structural_join.cpp): the input check and fill values; the views
// and the fill-value check are the op layer's (ops/structural.hpp).
#include "core/internal_check.hpp"

#include <cstring>
#include <string_view>

#include "core/convert.hpp"
#include "cpu/op_common.hpp"
#include "cpu/transpose_copy.hpp"
#include "ops/kernel_table.hpp"
#include "ops/structural.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::detail {

/// s.check(op), then `x` defined and on the CPU.
inline void check_input(Session& s, const Tensor& x, std::string_view op) {
  s.check(op);
  require_cpu_tensor(x, op, "input");
}

/// Sixteen zero bytes: the zero of every dtype (IEEE +0.0 is all zero bits).
inline constexpr unsigned char kZeroBytes[16] = {};

}  // namespace tenferro::detail

namespace tenferro::cpu {
/// IotaKernel: out[idx] = idx[d] (out validated; d normalized).
void iota_kernel(Session& s, const Tensor& out, int d);
}  // namespace tenferro::cpu
