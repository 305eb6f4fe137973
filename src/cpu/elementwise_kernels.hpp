#pragma once
// The CPU backend's elementwise kernels (Note [Elementwise in the op layer]), listed in
// src/cpu/kernel_table.cpp through elementwise_kernel.
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// out = f(x) for the unary and analytic ops, f = OpFn<op> (elementwise_functors.hpp).
template <OpId op> void unary_kernel(const Session& s, const detail::EwCall<1>& c);
/// out = f(a, b) for the binary arithmetic ops.
template <OpId op> void binary_kernel(const Session& s, const detail::EwCall<2>& c);
/// out = f(a, b, c) for select and clamp.
template <OpId op> void ternary_kernel(const Session& s, const detail::EwCall<3>& c);
/// out = (a <cmp> b), bool.
void compare_kernel(const Session& s, const detail::EwCall<2>& c);

/// The unary (U) and binary (B) rows of family `elementwise` with a template kernel
/// (the analytic rows come from the catalogue; compare, select and clamp are named).
#define TENFERRO_CPU_ELEMENTWISE(U, B) \
  U(neg) U(conj) U(abs) U(sign) U(real) U(imag) U(angle) B(add) B(sub) B(mul) B(div) B(rem) B(maximum) B(minimum) B(pow)

/// The CPU kernel of elementwise or analytic op `op` (the member of KernelFn its arity
/// selects). A row of the two families without a case reaches the throw, which is not
/// a constant expression, so building the CPU table fails to compile.
constexpr detail::KernelFn elementwise_kernel(OpId op) {
  switch (op) {
#define TENFERRO_CPU_UNARY(name) \
  case OpId::name: return {.unary = &unary_kernel<OpId::name>};
#define TENFERRO_CPU_BINARY(name) \
  case OpId::name: return {.binary = &binary_kernel<OpId::name>};
    TENFERRO_CPU_ELEMENTWISE(TENFERRO_CPU_UNARY, TENFERRO_CPU_BINARY)
    case OpId::compare: return {.binary = &compare_kernel};
    case OpId::select: return {.ternary = &ternary_kernel<OpId::select>};
    case OpId::clamp: return {.ternary = &ternary_kernel<OpId::clamp>};
    // the analytic functions: every `analytic` row (Note [Family lists from the catalogue])
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_CPU_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_CPU_BINARY
#undef TENFERRO_CPU_UNARY
    default: throw InternalError(op_name(op), "no CPU elementwise kernel (add a case to cpu::elementwise_kernel)");
  }
}

}  // namespace tenferro::cpu
