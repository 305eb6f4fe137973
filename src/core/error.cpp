#include "tenferro/error.hpp"

#include "core/enum_check.hpp"
#include "core/error_context.hpp"
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
  if (static_cast<unsigned>(d) >= static_cast<unsigned>(kNumDTypes)) throw_invalid_dtype(op, d);
  throw DTypeError(op, "dtype " + std::string(dtype_name(d)) + " not supported (needs " +
                           std::string(dtype_set_name(s)) + ")");
}

void throw_invalid_dtype(std::string_view op, DType d) {
  throw DTypeError(op, "dtype value " + std::to_string(static_cast<unsigned>(d)) +
                           " is not a dtype (valid 0 to " + std::to_string(kNumDTypes - 1) +
                           ": bool, i32, i64, f32, f64, c64, c128)");
}

void throw_unknown_enum(std::string_view op, std::string_view type, unsigned value, unsigned last) {
  throw ArgumentError(op, "unknown " + std::string(type) + " value " + std::to_string(value) +
                              " (valid 0 to " + std::to_string(last) + ")");
}

// Note [Errors inside rules]: the most derived class first.
void rethrow_under(const Error& e, std::string_view op, std::string_view stage) {
  if (e.op() == op) throw;  // called inside the handler of e: rethrows it unchanged
  std::string m(stage);
  m.append(": ").append(e.what());
  if (const auto* n = dynamic_cast<const NumericalError*>(&e)) throw NumericalError(op, m, n->info(), n->batch_index());
  if (const auto* k = dynamic_cast<const SessionEntryError*>(&e)) throw SessionEntryError(k->kind(), op, m);
  if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(op, m);
  if (dynamic_cast<const RankError*>(&e)) throw RankError(op, m);
  if (dynamic_cast<const AxisError*>(&e)) throw AxisError(op, m);
  if (dynamic_cast<const DTypeError*>(&e)) throw DTypeError(op, m);
  if (dynamic_cast<const ArgumentError*>(&e)) throw ArgumentError(op, m);
  if (dynamic_cast<const IndexError*>(&e)) throw IndexError(op, m);
  if (dynamic_cast<const ValidationError*>(&e)) throw ValidationError(op, m);
  if (dynamic_cast<const UnsupportedAdRule*>(&e)) throw UnsupportedAdRule(op, m);
  if (dynamic_cast<const UnsupportedError*>(&e)) throw UnsupportedError(op, m);
  if (dynamic_cast<const BackendError*>(&e)) throw BackendError(op, m);
  if (dynamic_cast<const RuntimeStateError*>(&e)) throw RuntimeStateError(op, m);
  if (dynamic_cast<const InternalError*>(&e)) throw InternalError(op, m);
  throw Error(op, m);
}
}  // namespace detail

}  // namespace tenferro
