#pragma once
/// \file scalar.hpp
/// A host scalar of one of four kinds (bool, integer, float, complex), used for
/// broadcast operands, fill values and rank-0 results.

#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tenferro/dtype.hpp"

namespace tenferro {

namespace detail {
/// The shortest decimal text that reads back as exactly `v` (std::to_chars), with ".0"
/// on integral values as Python's repr: "0.1", "1e-50", "2.0", "-0.0", "inf", "nan".
/// Used for every float in messages ("%f" showed 1e-50 as "0.000000").
inline std::string shortest_text(double v) {
  char buf[40];
  char* end = std::to_chars(buf, buf + 32, v).ptr;  // at most 24 characters for a double
  bool integral = true;
  for (const char* p = buf; p != end; ++p) integral = integral && *p != '.' && *p != 'e' && *p != 'i' && *p != 'n';
  if (integral) {
    *end++ = '.';
    *end++ = '0';
  }
  return std::string(buf, static_cast<std::size_t>(end - buf));
}
}  // namespace detail

/// A dynamically typed host scalar.
class Scalar {
 public:
  /// Kind of the value; decides promotion against a tensor (see `result_dtype_with`).
  enum class Kind : std::uint8_t { boolean, integer, floating, complex };

  Scalar() noexcept : kind_(Kind::floating), c_(0.0) {}
  template <class T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) noexcept : kind_(Kind::boolean), i_(v ? 1 : 0) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) noexcept : kind_(Kind::integer), i_(static_cast<std::int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) noexcept : kind_(Kind::floating), c_(static_cast<double>(v)) {}
  template <class T>
  Scalar(std::complex<T> v) noexcept : kind_(Kind::complex), c_(static_cast<double>(v.real()), static_cast<double>(v.imag())) {}

  Kind kind() const noexcept { return kind_; }
  /// The value converted to T (C++ conversion rules; complex → real keeps the real part;
  /// float → integer saturates, NaN → 0).
  template <class T> T to() const noexcept;
  /// The narrowest dtype that holds the value exactly by kind: bool, i64, f64, c128.
  DType natural_dtype() const noexcept {
    switch (kind_) {
      case Kind::boolean: return DType::b8;
      case Kind::integer: return DType::i64;
      case Kind::floating: return DType::f64;
      case Kind::complex: return DType::c128;
    }
    return DType::f64;
  }
  /// Result dtype of `tensor(d) op scalar` (weak scalar rule): a scalar of the same or a
  /// lower kind than the tensor keeps the tensor's dtype (f32 tensor + 2.0 stays f32);
  /// a higher kind promotes: integer/bool tensor + float → f64, real float + complex →
  /// complex of the same precision, integer + complex → c128, bool + integer → i64.
  DType result_dtype_with(DType d) const noexcept {
    const int tk = is_bool(d) ? 0 : is_integer(d) ? 1 : is_floating(d) ? 2 : 3;
    if (static_cast<int>(kind_) <= tk) return d;
    if (kind_ == Kind::complex) return complex_dtype(d);
    return natural_dtype();
  }
  std::string to_string() const;

 private:
  Kind kind_;
  std::int64_t i_ = 0;
  c128 c_{};
};

namespace detail {
template <class T> T saturating_from_double(double v) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    if (v != v) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}
}  // namespace detail

template <class T> T Scalar::to() const noexcept {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    if (kind_ == Kind::floating || kind_ == Kind::complex) return T(static_cast<R>(c_.real()), static_cast<R>(c_.imag()));
    return T(static_cast<R>(i_), R(0));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (kind_ == Kind::floating || kind_ == Kind::complex) return c_ != c128(0.0);
    return i_ != 0;
  } else {
    if (kind_ == Kind::floating || kind_ == Kind::complex) return detail::saturating_from_double<T>(c_.real());
    return static_cast<T>(i_);
  }
}

inline std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::boolean: return i_ ? "true" : "false";
    case Kind::integer: return std::to_string(i_);
    case Kind::floating: return detail::shortest_text(c_.real());
    case Kind::complex:
      return "(" + detail::shortest_text(c_.real()) + (std::signbit(c_.imag()) ? "-" : "+") + detail::shortest_text(std::abs(c_.imag())) +
             "j)";
  }
  return "?";
}

}  // namespace tenferro
