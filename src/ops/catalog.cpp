// Catalogue queries: names, families and `supports` (Note [Kernel tables]).
#include <string>

#include "ops/kernel_table.hpp"

namespace tenferro {

std::string_view op_family_name(OpFamily f) noexcept {
  switch (f) {
    case OpFamily::elementwise: return "elementwise";
    case OpFamily::analytic: return "analytic";
    case OpFamily::conversion: return "conversion";
    case OpFamily::reduction: return "reduction";
    case OpFamily::blas1: return "blas1";
    case OpFamily::structural: return "structural";
    case OpFamily::indexing: return "indexing";
    case OpFamily::contraction: return "contraction";
    case OpFamily::fft: return "fft";
    case OpFamily::linalg: return "linalg";
    case OpFamily::einsum: return "einsum";
    case OpFamily::along_axis: return "along_axis";
  }
  return "?";
}

std::optional<OpId> find_op(std::string_view name) noexcept {
  for (int i = 0; i < kNumOps; ++i)
    if (kOps[i].name == name) return static_cast<OpId>(i);
  return std::nullopt;
}

bool supports(OpId op, DType dtype, DeviceKind device) noexcept {
  const int i = static_cast<int>(op);
  if (i < 0 || i >= kNumOps || static_cast<int>(dtype) >= kNumDTypes) return false;
  const detail::KernelTable* t = detail::kernel_table(device);
  if (!t) return false;
  const detail::KernelEntry& e = (*t)[i];
  return e.handles(dtype) && in_set(dtype, kOps[i].dtypes);
}

namespace detail {

const DataChecks& data_checks(const Session& s, std::string_view op) {
  if (s.device() == DeviceKind::cpu) return cpu_data_checks();
  if (s.device() == DeviceKind::trace)
    throw UnsupportedError(op, "cannot be traced: this call checks its operands' data before computing (Note [Tracing])");
  throw UnsupportedError(op, "data checks are not available on device " + std::string(device_name(s.device())));
}

void throw_unsupported_on(OpId op, DeviceKind device) {
  if (device == DeviceKind::trace) throw UnsupportedError(op_name(op), "cannot be traced yet (the trace device has no recording kernel for it)");
  const char* why = kernel_table(device) ? "its kernel table has a stub for this op" : "this build has no such backend";
  throw UnsupportedError(op_name(op), "not supported on device " + std::string(device_name(device)) + " (" + why + ")");
}

void throw_no_kernel(OpId op, DType dtype, DeviceKind device) {
  const KernelTable* t = kernel_table(device);
  if (!t || (*t)[static_cast<int>(op)].kind != KernelEntry::Kind::kernel) throw_unsupported_on(op, device);
  throw_unsupported_dtype_on(op, dtype, device);
}

void throw_unsupported_dtype_on(OpId op, DType dtype, DeviceKind device) {
  throw UnsupportedError(op_name(op), "dtype " + std::string(dtype_name(dtype)) + " not supported on device " +
                                          std::string(device_name(device)) + " (its kernel does not handle it)");
}

}  // namespace detail
}  // namespace tenferro
