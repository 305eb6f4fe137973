#pragma once
// Checks of enum values that arrive through the public API.
#include "core/internal_check.hpp"

#include <string_view>

#include "tenferro/dtype.hpp"

namespace tenferro::detail {

// Note [Enums at the API boundary]
// A public enum is a value of its underlying type, whatever the enumerators say: a cast
// (`CompareOp(42)`), a field left uninitialised, a C or Python caller passing an int. A
// switch over such a value falls through every case, and a table indexed by it reads
// out of bounds; before these checks `CompareOp(42)` compared as "always true",
// `ScatterCombiner(9)` did nothing and `FftNorm(7)` applied the forward scale. So every
// enum a public function receives is checked at the op boundary, before anything is
// written, with a typed error naming the op, the enum and the value: dtypes with
// DTypeError (require_valid_dtype), every other enum with ArgumentError
// (require_enum). The checks are one unsigned compare each.

[[noreturn]] void throw_unknown_enum(std::string_view op, std::string_view type, unsigned value, unsigned last);
[[noreturn]] void throw_invalid_dtype(std::string_view op, DType d);

/// ArgumentError "<op>: unknown <type> value <v> (valid 0 to <last>)" unless v is one of
/// the enumerators 0..last (every public enum numbers its enumerators from 0 densely).
template <class E> void require_enum(E v, E last, std::string_view op, std::string_view type) {
  if (static_cast<unsigned>(v) > static_cast<unsigned>(last)) [[unlikely]]
    throw_unknown_enum(op, type, static_cast<unsigned>(v), static_cast<unsigned>(last));
}

/// DTypeError "<op>: dtype value <v> is not a dtype ..." unless d is in the dtype table.
inline void require_valid_dtype(DType d, std::string_view op) {
  if (static_cast<unsigned>(d) >= static_cast<unsigned>(kNumDTypes)) [[unlikely]] throw_invalid_dtype(op, d);
}

}  // namespace tenferro::detail
