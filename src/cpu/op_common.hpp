#pragma once
// Validation and operand preparation shared by every CPU op (elementwise, BLAS-1, ...):
// the backend-neutral part is ops/prepare.hpp; this header adds the CPU forms. Two tiers of checks (STYLE 7): everything here validates user input and
// throws typed errors whose message starts with the op name.
#include "core/internal_check.hpp"

#include <span>
#include <string_view>
#include <utility>

#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "ops/prepare.hpp"
#include "tenferro/cpu_backend.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// `t` is defined and on the CPU; `what` names it in messages ("lhs", "out").
inline void require_cpu_tensor(const Tensor& t, std::string_view op, std::string_view what) {
  require_tensor_on(t, DeviceKind::cpu, op, what);
}

/// require_output for a CPU op (ops/prepare.hpp).
inline void require_output(const Tensor& out, std::string_view op, DType dtype, std::span<const std::int64_t> shape) {
  require_output(out, op, dtype, shape, DeviceKind::cpu);
}

/// Reduction axis mask (all axes when `all`), AxisError for bad or repeated axes.
std::uint64_t reduction_mask(const Tensor& x, std::span<const std::int64_t> axes, bool all, std::string_view op);
/// Result shape of a reduction over `mask`.
Dims reduced_shape(const Tensor& x, std::uint64_t mask, bool keepdims);

}  // namespace tenferro::detail
