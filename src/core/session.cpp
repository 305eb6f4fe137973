// The backend-neutral session's free functions (its members live with the thread's
// entry record: Note [Neutral session]).
#include "core/session_context.hpp"

namespace tenferro {

std::string_view device_name(DeviceKind d) noexcept {
  switch (d) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::cuda: return "cuda";
    case DeviceKind::trace: return "trace";
  }
  return "?";
}

std::string_view cache_kind_name(CacheKind k) noexcept {
  switch (k) {
    case CacheKind::dot_plans: return "dot_plans";
    case CacheKind::linalg_workspaces: return "linalg_workspaces";
    case CacheKind::fft_plans: return "fft_plans";
    case CacheKind::einsum_programs: return "einsum_programs";
    case CacheKind::graphs: return "graphs";
  }
  return "?";
}

}  // namespace tenferro
