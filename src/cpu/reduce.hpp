#pragma once
// The CPU backend's reduction kernels (ReduceKernel, ops/kernel_table.hpp; Note
// [Reductions in the op layer]), listed in src/cpu/kernel_table.cpp.
#include "core/internal_check.hpp"

#include <cstdint>

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// Reduces x over the axes in `mask` into out (ReduceKernel: arguments validated by the
/// front end, src/ops/reduce.cpp). Each dispatches once on x's dtype over the op's
/// catalogue set and runs the value driver (reduce_kernels.hpp) or the arg driver.
/// Results do not depend on the thread count (Note [Deterministic reductions]).
void reduce_sum(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_prod(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_max(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_min(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_mean(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_sum_squares(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_argmax(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_argmin(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);
void reduce_logsumexp(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask);

/// The CPU kernel of reduction `op`. The CPU table is built at compile time and calls
/// this for every catalogue reduction row: a row without a case reaches the throw,
/// which is not a constant expression, so the build fails (no pointer comparison: the
/// address of an external function is not a constant under every toolchain, e.g. GCC
/// with -fsanitize=address).
constexpr detail::ReduceKernel reduce_kernel(OpId op) {
  switch (op) {
    case OpId::sum: return &reduce_sum;
    case OpId::prod: return &reduce_prod;
    case OpId::max: return &reduce_max;
    case OpId::min: return &reduce_min;
    case OpId::mean: return &reduce_mean;
    case OpId::sum_squares: return &reduce_sum_squares;
    case OpId::argmax: return &reduce_argmax;
    case OpId::argmin: return &reduce_argmin;
    case OpId::logsumexp: return &reduce_logsumexp;
    default: throw InternalError(op_name(op), "no CPU reduction kernel (add a case to cpu::reduce_kernel)");
  }
}

}  // namespace tenferro::cpu
