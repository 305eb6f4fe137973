// The backend-neutral session's free functions (its members live with the thread's
// entry record: Note [Neutral session]).
#include "core/session_context.hpp"

namespace tenferro {

std::string_view device_name(DeviceKind d) noexcept {
  switch (d) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::cuda: return "cuda";
  }
  return "?";
}

}  // namespace tenferro
