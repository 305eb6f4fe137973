#pragma once
// The CPU backend's kernels of the ops along one axis (AxisKernel, ops/kernel_table.hpp;
// Note [Axis plan] in axis_ops.cpp), listed in src/cpu/kernel_table.cpp.
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// out = op(x) along `axis` (in [0, rank), validated by src/ops/along_axis.cpp; out has
/// x's shape and dtype and is disjoint from x or laid out exactly as it).
template <OpId op> void along_axis_kernel(const Session& s, const Tensor& x, const Tensor& out, int axis);

/// The CPU kernel of along-one-axis op `op`: a row of the family without a case reaches
/// the throw, which is not a constant expression, so the CPU table fails to compile.
constexpr detail::AxisKernel along_axis_kernel_of(OpId op) {
  switch (op) {
    case OpId::cumsum: return &along_axis_kernel<OpId::cumsum>;
    case OpId::cumprod: return &along_axis_kernel<OpId::cumprod>;
    case OpId::softmax: return &along_axis_kernel<OpId::softmax>;
    case OpId::log_softmax: return &along_axis_kernel<OpId::log_softmax>;
    default: throw InternalError(op_name(op), "no CPU along-axis kernel (add a case to cpu::along_axis_kernel_of)");
  }
}

}  // namespace tenferro::cpu
