#pragma once
/// \file dtype.hpp
/// The dtype table (one X-macro), type traits, promotion, and the one dtype visit.

#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "tenferro/error.hpp"
#include "tenferro/export.hpp"

namespace tenferro {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

/// Every dtype, in promotion order within its kind: X(enum name, C++ type, byte size).
/// Everything else about dtypes (enum, names, traits, dispatch) derives from this list.
#define TENFERRO_DTYPES(X) \
  X(b8, bool, 1)           \
  X(i32, std::int32_t, 4)  \
  X(i64, std::int64_t, 8)  \
  X(f32, float, 4)         \
  X(f64, double, 8)        \
  X(c64, ::tenferro::c64, 8) \
  X(c128, ::tenferro::c128, 16)

/// Runtime element type. `b8` is bool (spelled `bool` in messages).
enum class DType : std::uint8_t {
#define TENFERRO_X(name, type, size) name,
  TENFERRO_DTYPES(TENFERRO_X)
#undef TENFERRO_X
};

/// Number of dtypes; checked against the table.
inline constexpr int kNumDTypes = 7;

/// Name as printed in messages and by `print`: "bool", "i32", "i64", "f32", "f64", "c64", "c128".
constexpr std::string_view dtype_name(DType d) noexcept {
  switch (d) {
    case DType::b8: return "bool";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::c64: return "c64";
    case DType::c128: return "c128";
  }
  return "?";
}

/// Bytes per element.
constexpr std::size_t dtype_size(DType d) noexcept {
  switch (d) {
#define TENFERRO_X(name, type, size) \
  case DType::name: return size;
    TENFERRO_DTYPES(TENFERRO_X)
#undef TENFERRO_X
  }
  return 0;
}

/// The C++ type of a dtype, and back.
template <DType D> struct dtype_type;
template <class T> struct type_dtype;
#define TENFERRO_X(name, cpp_type, size)                                            \
  template <> struct dtype_type<DType::name> { using type = cpp_type; };             \
  template <> struct type_dtype<cpp_type> { static constexpr DType value = DType::name; }; \
  static_assert(sizeof(cpp_type) == size, "dtype table size mismatch");
TENFERRO_DTYPES(TENFERRO_X)
#undef TENFERRO_X
template <DType D> using dtype_t = typename dtype_type<D>::type;
/// dtype of a C++ element type (compile error for types outside the table).
template <class T> inline constexpr DType dtype_of = type_dtype<std::remove_cv_t<T>>::value;

template <class T> struct is_complex_type : std::false_type {};
template <class T> struct is_complex_type<std::complex<T>> : std::true_type {};
/// True for c64/c128 element types.
template <class T> inline constexpr bool is_complex_v = is_complex_type<T>::value;

/// Real counterpart of a type (c128 → double; others unchanged).
template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

/// Kind predicates.
constexpr bool is_complex(DType d) noexcept { return d == DType::c64 || d == DType::c128; }
constexpr bool is_floating(DType d) noexcept { return d == DType::f32 || d == DType::f64; }
/// Float or complex.
constexpr bool is_inexact(DType d) noexcept { return is_floating(d) || is_complex(d); }
constexpr bool is_integer(DType d) noexcept { return d == DType::i32 || d == DType::i64; }
constexpr bool is_bool(DType d) noexcept { return d == DType::b8; }

/// Real dtype of the same precision (c64 → f32, c128 → f64; others unchanged).
constexpr DType real_dtype(DType d) noexcept {
  return d == DType::c64 ? DType::f32 : d == DType::c128 ? DType::f64 : d;
}
/// Complex dtype of the same precision (f32 → c64; f64, i32, i64, bool → c128).
constexpr DType complex_dtype(DType d) noexcept {
  return (d == DType::f32 || d == DType::c64) ? DType::c64 : DType::c128;
}

/// Promotion table (symmetric). Rules, in order:
///  - equal dtypes promote to themselves;
///  - bool promotes to the other (bool → numeric);
///  - i32 + i64 → i64;
///  - integer + float → the float (i32 + f32 → f32, i64 + f32 → f32; NumPy would pick f64,
///    we keep the float operand's precision, as JAX does);
///  - f32 + f64 → f64;
///  - real + complex → complex, with the wider of the two precisions (f64 + c64 → c128);
///  - integer + complex → the complex.
/// | +    | bool | i32 | i64 | f32 | f64 | c64 | c128 |
/// |------|------|-----|-----|-----|-----|-----|------|
/// | bool | bool | i32 | i64 | f32 | f64 | c64 | c128 |
/// | i32  | i32  | i32 | i64 | f32 | f64 | c64 | c128 |
/// | i64  | i64  | i64 | i64 | f32 | f64 | c64 | c128 |
/// | f32  | f32  | f32 | f32 | f32 | f64 | c64 | c128 |
/// | f64  | f64  | f64 | f64 | f64 | f64 | c128| c128 |
/// | c64  | c64  | c64 | c64 | c64 | c128| c64 | c128 |
/// | c128 | c128 | c128| c128| c128| c128| c128| c128 |
constexpr DType promote(DType a, DType b) noexcept {
  if (a == b) return a;
  auto rank = [](DType d) { return static_cast<int>(d); };
  if (is_complex(a) || is_complex(b)) {
    const bool wide = a == DType::f64 || b == DType::f64 || a == DType::c128 || b == DType::c128;
    return wide ? DType::c128 : DType::c64;
  }
  return rank(a) > rank(b) ? a : b;  // bool < i32 < i64 < f32 < f64 within real kinds
}

/// Named dtype sets for dispatch and validation.
enum class DTypeSet : std::uint8_t {
  all,       ///< every dtype
  numeric,   ///< all but bool
  real,      ///< bool, ints, floats (ordered types)
  real_numeric,  ///< ints and floats
  inexact,   ///< f32 f64 c64 c128
  floating,  ///< f32 f64
  complex,   ///< c64 c128
  integer,   ///< i32 i64
};

/// Whether `d` is in set `s`.
constexpr bool in_set(DType d, DTypeSet s) noexcept {
  switch (s) {
    case DTypeSet::all: return true;
    case DTypeSet::numeric: return !is_bool(d);
    case DTypeSet::real: return !is_complex(d);
    case DTypeSet::real_numeric: return !is_complex(d) && !is_bool(d);
    case DTypeSet::inexact: return is_inexact(d);
    case DTypeSet::floating: return is_floating(d);
    case DTypeSet::complex: return is_complex(d);
    case DTypeSet::integer: return is_integer(d);
  }
  return false;
}

/// Human name of a set, for messages.
constexpr std::string_view dtype_set_name(DTypeSet s) noexcept {
  switch (s) {
    case DTypeSet::all: return "any dtype";
    case DTypeSet::numeric: return "a numeric dtype";
    case DTypeSet::real: return "a real dtype";
    case DTypeSet::real_numeric: return "a real numeric dtype";
    case DTypeSet::inexact: return "a float or complex dtype";
    case DTypeSet::floating: return "a float dtype";
    case DTypeSet::complex: return "a complex dtype";
    case DTypeSet::integer: return "an integer dtype";
  }
  return "?";
}

namespace detail {
[[noreturn]] TENFERRO_API void throw_dtype_not_in_set(std::string_view op, DType d, DTypeSet s);
}

/// Tag carrying the element type to a visitor.
template <class T> struct TypeTag { using type = T; };

/// The one dtype dispatch: calls `f(TypeTag<T>{})` with T the C++ type of `d`,
/// instantiating `f` only for the dtypes of `Set`. A dtype outside the set throws
/// DTypeError naming `op`. Use at the op boundary only; kernels are templates.
template <DTypeSet Set = DTypeSet::all, class F>
decltype(auto) visit_dtype(std::string_view op, DType d, F&& f) {
  switch (d) {
#define TENFERRO_X(name, cpp_type, size)                                     \
  case DType::name:                                                          \
    if constexpr (in_set(DType::name, Set)) return f(TypeTag<cpp_type>{});   \
    break;
    TENFERRO_DTYPES(TENFERRO_X)
#undef TENFERRO_X
  }
  detail::throw_dtype_not_in_set(op, d, Set);
}

}  // namespace tenferro
