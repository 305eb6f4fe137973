#pragma once
// Vectorized exp and tanh over contiguous lines of f64 and f32 (Note [Vector exp and
// tanh]). Every CPU path that computes the `exp` or `tanh` op of a real dtype -- the
// contiguous and strided loops of the eager kernels, a single element, the fused loops
// of compiled graphs -- goes through these line functions, so a value does not depend
// on the layout it was computed in or on the path that computed it.
#include "core/internal_check.hpp"

#include <cstdint>

namespace tenferro::detail::vecmath {

/// The line functions chosen for this CPU, once, on first use.
struct LineFns {
  void (*exp_f64)(const double* x, double* y, std::int64_t n) noexcept;
  void (*tanh_f64)(const double* x, double* y, std::int64_t n) noexcept;
  void (*exp_f32)(const float* x, float* y, std::int64_t n) noexcept;
  void (*tanh_f32)(const float* x, float* y, std::int64_t n) noexcept;
  /// "avx2+fma" (our kernels) or "libm" (the C library's scalar functions).
  const char* name;
};

/// The implementation this process uses: the AVX2+FMA kernels where the CPU has both,
/// else loops over the C library's exp and tanh.
const LineFns& line_fns() noexcept;
/// The C library's loops (what line_fns() is on a CPU without AVX2 or FMA); for tests.
const LineFns& libm_line_fns() noexcept;

/// y[i] = exp(x[i]) for i < n (x and y may be the same array).
inline void exp(const double* x, double* y, std::int64_t n) noexcept { line_fns().exp_f64(x, y, n); }
inline void exp(const float* x, float* y, std::int64_t n) noexcept { line_fns().exp_f32(x, y, n); }
/// y[i] = tanh(x[i]) for i < n (x and y may be the same array).
inline void tanh(const double* x, double* y, std::int64_t n) noexcept { line_fns().tanh_f64(x, y, n); }
inline void tanh(const float* x, float* y, std::int64_t n) noexcept { line_fns().tanh_f32(x, y, n); }

}  // namespace tenferro::detail::vecmath
