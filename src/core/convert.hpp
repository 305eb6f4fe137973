#pragma once
// Element conversions between dtypes: `cast_value` (lossy, every case defined) and
// `exact_value` (reports whether the value survives the round trip). Shared by the
// constructors and the convert/cast ops.
#include "core/internal_check.hpp"

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "tenferro/dtype.hpp"

namespace tenferro::detail {

/// Float → integer saturating, NaN → 0 (as Rust's `as`); other pairs as C++ converts,
/// complex → real keeps the real part.
template <class To, class From> To cast_value(From x) noexcept {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_v<From> && std::is_same_v<To, bool>) {
    return x != From(0);  // true when either part is non-zero
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) return To(static_cast<typename To::value_type>(x.real()), static_cast<typename To::value_type>(x.imag()));
    else return cast_value<To>(x.real());
  } else if constexpr (is_complex_v<To>) {
    return To(cast_value<typename To::value_type>(x), typename To::value_type(0));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return 0;
    if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= -static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

/// True when `x` converts to To and back unchanged (NaN to NaN counts as exact for
/// float and complex targets).
template <class To, class From> bool exact_value(From x) noexcept {
  if constexpr (std::is_same_v<To, From> || std::is_same_v<From, bool>) {
    return true;
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) return exact_value<typename To::value_type>(x.real()) && exact_value<typename To::value_type>(x.imag());
    else return x.imag() == 0 && exact_value<To>(x.real());
  } else if constexpr (is_complex_v<To>) {
    return exact_value<typename To::value_type>(x);
  } else if constexpr (std::is_same_v<To, bool>) {
    return x == From(0) || x == From(1);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return !std::isnan(x) && x >= static_cast<From>(std::numeric_limits<To>::min()) &&
           x < -static_cast<From>(std::numeric_limits<To>::min()) && std::trunc(x) == x;
  } else if constexpr (std::is_floating_point_v<To> && std::is_integral_v<From>) {
    const To f = static_cast<To>(x);
    return f >= static_cast<To>(std::numeric_limits<From>::min()) && f < -static_cast<To>(std::numeric_limits<From>::min()) &&
           static_cast<From>(f) == x;
  } else if constexpr (std::is_floating_point_v<To> && std::is_floating_point_v<From>) {
    return std::isnan(x) || static_cast<From>(static_cast<To>(x)) == x;
  } else {  // integer → integer
    return std::in_range<To>(x);
  }
}

}  // namespace tenferro::detail
