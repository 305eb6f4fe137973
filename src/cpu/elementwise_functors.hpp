#pragma once
// Scalar functors of the elementwise ops. Each is a struct with a templated call
// operator; the kernels in elementwise.hpp apply them along strided lines.
// Signed integer arithmetic wraps (computed in the unsigned type), so no op has
// undefined behaviour; integer division by zero and negative integer exponents are
// rejected before any kernel runs.
#include "core/internal_check.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "cpu/vecmath.hpp"
#include "ops/catalog.hpp"
#include "tenferro/dtype.hpp"

namespace tenferro::detail {

/// Whether functor F has a line form for element type T: F::line(x, y, n) sets
/// y[i] = F{}(x[i]) for i < n, x and y contiguous (they may be the same array), and
/// gives exactly the values the call operator gives. The loops (elementwise.hpp, the
/// fused chunks of compiled graphs) call it for every contiguous line and for strided
/// lines gathered into a chunk.
template <class F, class T>
concept HasLine = requires(const T* x, T* y, std::int64_t n) { F::line(x, y, n); };

}  // namespace tenferro::detail

namespace tenferro::detail::fn {

template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> using uint_t = std::make_unsigned_t<T>;

struct Add {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) return static_cast<T>(static_cast<uint_t<T>>(a) + static_cast<uint_t<T>>(b));
    else return a + b;
  }
};
struct Sub {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) return static_cast<T>(static_cast<uint_t<T>>(a) - static_cast<uint_t<T>>(b));
    else return a - b;
  }
};
struct Mul {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) return static_cast<T>(static_cast<uint_t<T>>(a) * static_cast<uint_t<T>>(b));
    else return a * b;
  }
};
struct Div {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) {
      if (b == T(-1)) return static_cast<T>(uint_t<T>(0) - static_cast<uint_t<T>>(a));  // MIN / -1 wraps to MIN
      return a / b;
    } else {
      return a / b;
    }
  }
};
struct Rem {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) return b == T(-1) ? T(0) : a % b;
    else return std::fmod(a, b);
  }
};
struct Maximum {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (std::is_floating_point_v<T>) return a != a ? a : b != b ? b : (a > b ? a : b);
    else return a > b ? a : b;
  }
};
struct Minimum {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (std::is_floating_point_v<T>) return a != a ? a : b != b ? b : (a < b ? a : b);
    else return a < b ? a : b;
  }
};
struct Pow {
  template <class T> T operator()(T a, T b) const noexcept {
    if constexpr (is_int_v<T>) {  // b >= 0 (checked); square-and-multiply, wrapping
      uint_t<T> base = static_cast<uint_t<T>>(a), r = 1;
      for (auto e = static_cast<uint_t<T>>(b); e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
      }
      return static_cast<T>(r);
    } else if constexpr (is_complex_v<T>) {
      // NumPy's complex power (npy_cpow): z^0 = 1 for every z, NaN and infinities
      // included, and 0^b = 0 for Re b > 0. std::pow computes exp(b · log z), which is
      // NaN for both (log 0 = -inf, 0 · inf = NaN); real std::pow already gives 1.
      if (b.real() == 0 && b.imag() == 0) return T(1);
      if (a.real() == 0 && a.imag() == 0 && b.real() > 0) return T(0);
      return std::pow(a, b);
    } else {
      return std::pow(a, b);
    }
  }
};

// ---- comparisons (output bool) ----
struct Eq { template <class T> bool operator()(T a, T b) const noexcept { return a == b; } };
struct Ne { template <class T> bool operator()(T a, T b) const noexcept { return a != b; } };
struct Lt { template <class T> bool operator()(T a, T b) const noexcept { return a < b; } };
struct Le { template <class T> bool operator()(T a, T b) const noexcept { return a <= b; } };
struct Gt { template <class T> bool operator()(T a, T b) const noexcept { return a > b; } };
struct Ge { template <class T> bool operator()(T a, T b) const noexcept { return a >= b; } };

// ---- ternary ----
struct Select { template <class T> T operator()(bool p, T a, T b) const noexcept { return p ? a : b; } };
/// StableHLO clamp(lo, x, hi) = min(max(x, lo), hi): hi wins when lo > hi; a NaN x stays NaN.
struct Clamp {
  template <class T> T operator()(T lo, T x, T hi) const noexcept {
    const T y = x < lo ? lo : x;
    return y > hi ? hi : y;
  }
};

// ---- unary, same dtype ----
struct Neg {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_int_v<T>) return static_cast<T>(uint_t<T>(0) - static_cast<uint_t<T>>(a));
    else return -a;
  }
};
struct Conj {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) return std::conj(a);
    else return a;
  }
};
struct Sign {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      const auto m = std::abs(a);
      return m == 0 ? T(0) : (m != m ? T(m, m) : a / m);
    } else if constexpr (std::is_floating_point_v<T>) {
      return a != a ? a : T((a > 0) - (a < 0));
    } else {
      return T((a > 0) - (a < 0));
    }
  }
};

// ---- unary, real output ----
struct Abs {
  template <class T> real_t<T> operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) return std::abs(a);
    else if constexpr (is_int_v<T>) return a < 0 ? static_cast<T>(uint_t<T>(0) - static_cast<uint_t<T>>(a)) : a;
    else return std::fabs(a);
  }
};
struct Real {
  template <class T> real_t<T> operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) return a.real();
    else return a;
  }
};
struct Imag {
  template <class T> real_t<T> operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) return a.imag();
    else return real_t<T>(0);
  }
};
/// Angle, in the op's result dtype: the real dtype, f64 for integers.
struct Angle {
  template <class T, class R = std::conditional_t<std::is_integral_v<T>, double, real_t<T>>> R operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) return static_cast<R>(std::arg(a));
    else if constexpr (std::is_floating_point_v<T>) return a != a ? a : (std::signbit(a) ? R(M_PI) : R(0));
    else return a < 0 ? R(M_PI) : R(0);
  }
};

// ---- analytic (float and complex) ----
#define TENFERRO_STD_UNARY(Name, f)                                             \
  struct Name {                                                                 \
    template <class T> T operator()(T a) const noexcept { return std::f(a); }   \
  };
TENFERRO_STD_UNARY(Log, log)
TENFERRO_STD_UNARY(Sin, sin)
TENFERRO_STD_UNARY(Cos, cos)
TENFERRO_STD_UNARY(Tan, tan)
TENFERRO_STD_UNARY(Sqrt, sqrt)
TENFERRO_STD_UNARY(Asin, asin)
TENFERRO_STD_UNARY(Acos, acos)
TENFERRO_STD_UNARY(Atan, atan)
TENFERRO_STD_UNARY(Sinh, sinh)
TENFERRO_STD_UNARY(Cosh, cosh)
TENFERRO_STD_UNARY(Erf, erf)
#undef TENFERRO_STD_UNARY

/// exp and tanh: real dtypes through the vector line functions, one element as a line
/// of one (Note [Vector exp and tanh] in cpu/vecmath.cpp), so a value does not depend on
/// the path or layout that computed it; complex dtypes through std.
#define TENFERRO_VECMATH_UNARY(Name, f)                                                                 \
  struct Name {                                                                                         \
    template <class T> T operator()(T a) const noexcept {                                               \
      if constexpr (std::is_floating_point_v<T>) {                                                      \
        T y;                                                                                            \
        vecmath::f(&a, &y, 1);                                                                          \
        return y;                                                                                       \
      } else {                                                                                          \
        return std::f(a);                                                                               \
      }                                                                                                 \
    }                                                                                                   \
    template <class T>                                                                                  \
      requires std::is_floating_point_v<T>                                                              \
    static void line(const T* x, T* y, std::int64_t n) noexcept {                                       \
      vecmath::f(x, y, n);                                                                              \
    }                                                                                                   \
  };
TENFERRO_VECMATH_UNARY(Exp, exp)
TENFERRO_VECMATH_UNARY(Tanh, tanh)
#undef TENFERRO_VECMATH_UNARY

struct Rsqrt {
  template <class T> T operator()(T a) const noexcept { return T(1) / std::sqrt(a); }
};
/// expm1(x+iy) = expm1(x)cos(y) - 2 sin²(y/2) + i e^x sin(y): accurate near 0.
/// A zero imaginary part stays that zero (e^x · 0 would be NaN for x = inf or NaN, and
/// std::exp(inf + 0i) is inf + 0i); infinite or NaN parts take exp(z) - 1, whose
/// special values are C99 Annex G's (expm1(-inf + i·inf) = -1 + 0i, not NaN).
struct Expm1 {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      const R x = a.real(), y = a.imag();
      if (!std::isfinite(x) || !std::isfinite(y)) return y == 0 ? T(std::expm1(x), y) : std::exp(a) - T(1);
      const R s = std::sin(y / 2);
      return T(std::expm1(x) * std::cos(y) - 2 * s * s, y == 0 ? y : std::exp(x) * std::sin(y));
    } else {
      return std::expm1(a);
    }
  }
};
/// log1p(z) = ½·log1p(2x + x² + y²) + i·atan2(y, 1 + x): accurate near 0.
struct Log1p {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      const R x = a.real(), y = a.imag();
      if (std::abs(x) < R(0.5) && std::abs(y) < R(0.5)) return T(std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x));
      // Not T(1) + a: (1 + 0i) + (x - 0i) has imaginary part 0 + -0 = +0, which moves a
      // point below the cut x < -1 onto its upper side (log1p(-4 - 0i) gave +pi, not -pi).
      return std::log(T(1 + x, y));
    } else {
      return std::log1p(a);
    }
  }
};
/// Logistic function; for real x the branch keeps exp from overflowing.
struct Sigmoid {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      return T(1) / (T(1) + std::exp(-a));
    } else {
      if (a >= 0) return T(1) / (T(1) + std::exp(-a));
      const T e = std::exp(a);
      return e / (T(1) + e);
    }
  }
};

// ---- analytic, added with the catalogue rows log2 exp2 cbrt softplus silu gelu ----
/// log2: std::log2 for reals; log(z)/ln 2 for complex (principal branch, as log).
struct Log2 {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      return std::log(a) * R(1.442695040888963407359924681001892137L);  // 1 / ln 2
    } else {
      return std::log2(a);
    }
  }
};
/// log10: std::log10 (complex: log(z)/ln 10, log's principal branch).
struct Log10 {
  template <class T> T operator()(T a) const noexcept { return std::log10(a); }
};
/// exp2: std::exp2 for reals; exp(z·ln 2) for complex.
struct Exp2 {
  template <class T> T operator()(T a) const noexcept {
    if constexpr (is_complex_v<T>) {
      using R = typename T::value_type;
      return std::exp(a * R(0.693147180559945309417232121458176568L));
    } else {
      return std::exp2(a);
    }
  }
};
/// Real cube root (cbrt(-8) = -2; the op takes float dtypes only).
struct Cbrt {
  template <class T> T operator()(T a) const noexcept { return std::cbrt(a); }
};
/// softplus(x) = log(1 + e^x), written x + log1p(e^-x) for x > 0 and log1p(e^x)
/// otherwise: e^x never overflows, and log1p keeps the left tail (softplus(-40) =
/// 4.2e-18) accurate. Float dtypes only.
struct Softplus {
  template <class T> T operator()(T a) const noexcept { return a > 0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a)); }
};
/// silu(x) = x·sigmoid(x) (sigmoid's overflow-free branches); silu(-inf) = -0, the
/// limit (the product would be -inf·0 = NaN). Float dtypes only.
struct Silu {
  template <class T> T operator()(T a) const noexcept {
    if (a >= 0) return a / (T(1) + std::exp(-a));
    if (a == -std::numeric_limits<T>::infinity()) return -T(0);
    const T e = std::exp(a);
    return a * e / (T(1) + e);
  }
};
/// gelu(x) = x·Φ(x) = ½·x·(1 + erf(x/√2)), computed as ½·x·erfc(-x/√2): the same value
/// without the cancellation of 1 + erf in the left tail (gelu(-10) = -7.6e-23 keeps its
/// relative accuracy); gelu(-inf) = -0, the limit. Float dtypes only.
/// In the left tail erfc amplifies its argument's error about 2y²-fold (y = -x/√2: 34×
/// at x = -5.8), so the rounding error δ of y = -x·(1/√2) is recovered exactly (an FMA
/// and the constant's low part) and added to first order, erfc(y + δ) ≈ erfc(y) −
/// δ·(2/√π)·e^(−y²): 52 ulp → 3.1 ulp worst case on [-6, 6] (erfc itself is within about 2) (tests/ops/analytic/ulp_test).
struct Gelu {
  template <class T> T operator()(T a) const noexcept {
    if (a == -std::numeric_limits<T>::infinity()) return -T(0);
    constexpr long double kInvSqrt2 = 0.707106781186547524400844362104849039L;
    constexpr T hi = static_cast<T>(kInvSqrt2);
    constexpr T lo = static_cast<T>(kInvSqrt2 - static_cast<long double>(hi));
    const T y = -a * hi;
    if (!std::isfinite(y)) return T(0.5) * a * std::erfc(y);  // +inf: inf; NaN: NaN
    const T delta = std::fma(-a, hi, -y) - a * lo;
    const T erfc_y = std::erfc(y) - delta * T(1.128379167095512573896158903121545172L) * std::exp(-y * y);
    return T(0.5) * a * erfc_y;
  }
};

}  // namespace tenferro::detail::fn

namespace tenferro::detail {

// Note [Op functors]
// OpFn<op> names the functor of elementwise op `op` and its per-element cost for the
// fork decision (Note [Fork cost model]; complex values count 4x in the unary kernels).
// The CPU kernels (src/cpu/elementwise.cpp) are templates over it, so a new unary op's
// kernel is its functor above and one line here. compare has no entry: its functor
// follows the CompareOp attribute (fn::Eq ... fn::Ge).
template <OpId op> struct OpFn;
#define TENFERRO_OP_FN(op, F, c)      \
  template <> struct OpFn<OpId::op> { \
    using type = fn::F;               \
    static constexpr std::int64_t cost = c; \
  };
inline constexpr std::int64_t kCheapCost = 1, kAnalyticCost = 12;
TENFERRO_OP_FN(add, Add, 1)
TENFERRO_OP_FN(sub, Sub, 1)
TENFERRO_OP_FN(mul, Mul, 1)
TENFERRO_OP_FN(div, Div, 4)
TENFERRO_OP_FN(rem, Rem, 8)
TENFERRO_OP_FN(maximum, Maximum, 1)
TENFERRO_OP_FN(minimum, Minimum, 1)
TENFERRO_OP_FN(pow, Pow, 20)
TENFERRO_OP_FN(select, Select, 1)
TENFERRO_OP_FN(clamp, Clamp, 1)
TENFERRO_OP_FN(neg, Neg, kCheapCost)
TENFERRO_OP_FN(conj, Conj, kCheapCost)
TENFERRO_OP_FN(abs, Abs, kCheapCost)
TENFERRO_OP_FN(sign, Sign, kCheapCost)
TENFERRO_OP_FN(real, Real, kCheapCost)
TENFERRO_OP_FN(imag, Imag, kCheapCost)
TENFERRO_OP_FN(angle, Angle, kAnalyticCost)
TENFERRO_OP_FN(exp, Exp, kAnalyticCost)
TENFERRO_OP_FN(log, Log, kAnalyticCost)
TENFERRO_OP_FN(sin, Sin, kAnalyticCost)
TENFERRO_OP_FN(cos, Cos, kAnalyticCost)
TENFERRO_OP_FN(tan, Tan, kAnalyticCost)
TENFERRO_OP_FN(tanh, Tanh, kAnalyticCost)
TENFERRO_OP_FN(sqrt, Sqrt, kAnalyticCost)
TENFERRO_OP_FN(rsqrt, Rsqrt, kAnalyticCost)
TENFERRO_OP_FN(expm1, Expm1, kAnalyticCost)
TENFERRO_OP_FN(log1p, Log1p, kAnalyticCost)
TENFERRO_OP_FN(erf, Erf, kAnalyticCost)
TENFERRO_OP_FN(sigmoid, Sigmoid, kAnalyticCost)
TENFERRO_OP_FN(asin, Asin, kAnalyticCost)
TENFERRO_OP_FN(acos, Acos, kAnalyticCost)
TENFERRO_OP_FN(atan, Atan, kAnalyticCost)
TENFERRO_OP_FN(sinh, Sinh, kAnalyticCost)
TENFERRO_OP_FN(cosh, Cosh, kAnalyticCost)
TENFERRO_OP_FN(log2, Log2, kAnalyticCost)
TENFERRO_OP_FN(exp2, Exp2, kAnalyticCost)
TENFERRO_OP_FN(cbrt, Cbrt, kAnalyticCost)
TENFERRO_OP_FN(softplus, Softplus, kAnalyticCost)
TENFERRO_OP_FN(silu, Silu, kAnalyticCost)
TENFERRO_OP_FN(gelu, Gelu, kAnalyticCost)
TENFERRO_OP_FN(log10, Log10, kAnalyticCost)
#undef TENFERRO_OP_FN

}  // namespace tenferro::detail
