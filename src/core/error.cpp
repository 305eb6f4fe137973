#include "tenferro/error.hpp"

#include "tenferro/dtype.hpp"

namespace tenferro {

namespace {
std::string join(std::string_view op, std::string_view message) {
  std::string s;
  s.reserve(op.size() + message.size() + 2);
  s.append(op).append(": ").append(message);
  return s;
}
}  // namespace

Error::Error(std::string_view op, std::string_view message)
    : std::runtime_error(join(op, message)), op_(op) {}
Error::~Error() = default;
ValidationError::~ValidationError() = default;
ShapeError::~ShapeError() = default;
RankError::~RankError() = default;
AxisError::~AxisError() = default;
DTypeError::~DTypeError() = default;
ArgumentError::~ArgumentError() = default;
IndexError::~IndexError() = default;
UnsupportedError::~UnsupportedError() = default;
UnsupportedAdRule::~UnsupportedAdRule() = default;
BackendError::~BackendError() = default;
RuntimeStateError::~RuntimeStateError() = default;
InternalError::~InternalError() = default;

NumericalError::NumericalError(std::string_view op, std::string_view message, std::int64_t info,
                               std::int64_t batch)
    : Error(op, message), info_(info), batch_(batch) {}
NumericalError::~NumericalError() = default;

std::string_view session_entry_kind_name(SessionEntryKind k) noexcept {
  switch (k) {
    case SessionEntryKind::Reentered: return "Reentered";
    case SessionEntryKind::Contended: return "Contended";
    case SessionEntryKind::IncompatibleContext: return "IncompatibleContext";
    case SessionEntryKind::Poisoned: return "Poisoned";
    case SessionEntryKind::Executor: return "Executor";
  }
  return "?";
}

SessionEntryError::SessionEntryError(SessionEntryKind kind, std::string_view op,
                                     std::string_view message)
    : Error(op, std::string(session_entry_kind_name(kind)) + ": " + std::string(message)),
      kind_(kind) {}
SessionEntryError::~SessionEntryError() = default;

namespace detail {
void throw_dtype_not_in_set(std::string_view op, DType d, DTypeSet s) {
  throw DTypeError(op, "dtype " + std::string(dtype_name(d)) + " not supported (needs " +
                           std::string(dtype_set_name(s)) + ")");
}
}  // namespace detail

}  // namespace tenferro
