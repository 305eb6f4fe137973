// Vectorized exp and tanh (cpu/vecmath.hpp).
//
// Note [Vector exp and tanh]
// glibc's exp and tanh are scalar calls, ~10-25 cycles an element, and they were nearly
// all of the time of an exp/tanh-heavy elementwise program (graph/fused8 in
// docs/benchmarks.md). These kernels compute four doubles at a time with AVX2 and FMA,
// chosen at run time (the binaries are built for baseline x86-64; a CPU without AVX2 or
// FMA keeps the C library's loops). Every real exp and tanh of the CPU backend goes
// through one line function (the eager kernels, strided lines through a gathered chunk,
// a single element, the fused loops), so results do not depend on the path or layout.
//
// exp(x), after Tang / fdlibm without the table: k = round(x / ln2) (the magic-number
// trick: fma(x, 1/ln2, 1.5·2^52) holds k in its low bits), r = x - k·ln2 in two FMA
// steps with fdlibm's split ln2 (ln2_hi has 32 trailing zero bits, so k·ln2_hi is
// exact), |r| ≤ ln2/2 + tiny; e^r = 1 + (r + r²·Q(r)) with Q the Taylor series
// (e^r - 1 - r)/r² to r^11 (the first dropped term is below 2^-56 relative); the
// result is e^r·2^k1·2^k2 with k1 = floor(k/2), k2 = k - k1, so 2^1024 (overflow to
// inf) and the subnormal results (rounded once, by the last product) need no branch.
// x is clamped to [-746, 710] first (beyond it the result is 0 or inf anyway); a NaN
// is passed through. Measured worst error (tests/cpu/vecmath_test.cpp: 200 000 uniform
// points over [-760, 720], a log sweep of magnitudes and the overflow, underflow and
// subnormal edges): 0.96 ulp (f64, at x ≈ 598, where k·ln2_lo's rounding shows).
//
// tanh(x) = sign(x)·t/(t + 2) with t = expm1(2|x|), |x| clamped to 20 (tanh is 1 in
// double beyond 19.06). expm1(u) = (2^k - 1) + 2^k·r + 2^k·r²·Q(r) with the same k, r
// and Q; the first two terms are exact and added with Fast2Sum (|2^k - 1| ≥ |2^k·r|
// for k ≥ 1, and the k = 0 sum is exact), their rounding error joining the small third
// term, so t is within ~0.6 ulp and no cancellation near k = 1 is amplified. The
// quotient adds ≤ 1 ulp (t's relative error reaches tanh scaled by 2/(t+2) ≤ 1).
// Measured worst: 1.02 ulp (f64, over [-25, 25] and the edges). f32 lines: 0.50 ulp.
//
// f32 lines convert four floats to doubles, run the f64 kernel and round back: ≤ 0.5
// ulp plus a rounding of the f64 result.
#include "cpu/vecmath.hpp"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TENFERRO_VECMATH_X86 1
#include <immintrin.h>
#endif

namespace tenferro::detail::vecmath {

namespace {

// ---- the C library's loops ----

void libm_exp_f64(const double* x, double* y, std::int64_t n) noexcept {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void libm_tanh_f64(const double* x, double* y, std::int64_t n) noexcept {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
void libm_exp_f32(const float* x, float* y, std::int64_t n) noexcept {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void libm_tanh_f32(const float* x, float* y, std::int64_t n) noexcept {
  for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

constexpr LineFns kLibm = {&libm_exp_f64, &libm_tanh_f64, &libm_exp_f32, &libm_tanh_f32, "libm"};

#ifdef TENFERRO_VECMATH_X86

#define TENFERRO_AVX2 __attribute__((target("avx2,fma")))

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2Hi = 0.6931471803691238;     // 0x3fe62e42fee00000 (fdlibm)
constexpr double kLn2Lo = 1.9082149292705877e-10;  // 0x3dea39ef35793c76
constexpr double kMagic = 6755399441055744.0;      // 1.5 · 2^52
// 1/n! for n = 13 down to 2: Q(r) = (e^r - 1 - r)/r².
constexpr double kQ[] = {1.6059043836821613e-10, 2.08767569878681e-09,  2.505210838544172e-08, 2.755731922398589e-07,
                         2.7557319223985893e-06, 2.48015873015873e-05,  0.0001984126984126984, 0.001388888888888889,
                         0.008333333333333333,   0.041666666666666664, 0.16666666666666666,   0.5};

/// The reduction shared by exp and expm1: u = k·ln2 + r; returns r, sets kd to
/// magic + k (k in its low bits).
TENFERRO_AVX2 inline __m256d reduce(__m256d u, __m256d& kd) noexcept {
  const __m256d magic = _mm256_set1_pd(kMagic);
  kd = _mm256_fmadd_pd(u, _mm256_set1_pd(kLog2e), magic);
  const __m256d k = _mm256_sub_pd(kd, magic);
  const __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(kLn2Hi), u);
  return _mm256_fnmadd_pd(k, _mm256_set1_pd(kLn2Lo), r);
}

TENFERRO_AVX2 inline __m256d series_q(__m256d r) noexcept {
  __m256d q = _mm256_set1_pd(kQ[0]);
  for (int i = 1; i < 12; ++i) q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(kQ[i]));
  return q;
}

/// k as an int64 per lane, from magic + k.
TENFERRO_AVX2 inline __m256i k_of(__m256d kd) noexcept {
  return _mm256_sub_epi64(_mm256_castpd_si256(kd), _mm256_castpd_si256(_mm256_set1_pd(kMagic)));
}

/// 2^k for -1022 ≤ k ≤ 1023 (int64 lanes).
TENFERRO_AVX2 inline __m256d pow2(__m256i k) noexcept {
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(1023)), 52));
}

TENFERRO_AVX2 inline __m256d exp4(__m256d x) noexcept {
  const __m256d xc = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(-746.0)), _mm256_set1_pd(710.0));
  __m256d kd;
  const __m256d r = reduce(xc, kd);
  const __m256d p = _mm256_add_pd(_mm256_set1_pd(1.0), _mm256_fmadd_pd(_mm256_mul_pd(r, r), series_q(r), r));
  const __m256i k = k_of(kd);  // -1077 ≤ k ≤ 1025
  // k1 = floor(k / 2) without a 64-bit arithmetic shift: (k + 2048) >> 1 - 1024.
  const __m256i k1 = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(2048)), 1), _mm256_set1_epi64x(1024));
  const __m256d y = _mm256_mul_pd(_mm256_mul_pd(p, pow2(k1)), pow2(_mm256_sub_epi64(k, k1)));
  return _mm256_blendv_pd(y, x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

TENFERRO_AVX2 inline __m256d tanh4(__m256d x) noexcept {
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d a = _mm256_andnot_pd(sign, x);
  const __m256d u = _mm256_min_pd(_mm256_add_pd(a, a), _mm256_set1_pd(40.0));  // NaN becomes 40 (restored below)
  __m256d kd;
  const __m256d r = reduce(u, kd);  // 0 ≤ k ≤ 58
  const __m256d s = pow2(k_of(kd));
  const __m256d hi = _mm256_sub_pd(s, _mm256_set1_pd(1.0));  // exact for k ≤ 53; beyond, t/(t+2) is 1 regardless
  const __m256d mid = _mm256_mul_pd(s, r);                    // exact
  const __m256d sum = _mm256_add_pd(hi, mid);
  const __m256d err = _mm256_sub_pd(mid, _mm256_sub_pd(sum, hi));  // Fast2Sum
  const __m256d low = _mm256_mul_pd(s, _mm256_mul_pd(_mm256_mul_pd(r, r), series_q(r)));
  // t = expm1(u) = t_hi + t_lo; tanh = t/(t + 2): the quotient q = t_hi/d (d = t_hi + 2,
  // its rounding error d_lo by TwoSum) corrected by the exact residual over d, which an
  // approximate reciprocal of d is precise enough to divide (the correction is ~1 ulp).
  const __m256d tail = _mm256_add_pd(err, low);
  const __m256d t_hi = _mm256_add_pd(sum, tail);
  const __m256d t_lo = _mm256_add_pd(_mm256_sub_pd(sum, t_hi), tail);  // Fast2Sum: |sum| ≥ |tail|
  const __m256d two = _mm256_set1_pd(2.0);
  const __m256d d = _mm256_add_pd(t_hi, two);
  const __m256d bb = _mm256_sub_pd(d, t_hi);
  const __m256d d_lo = _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(t_hi, _mm256_sub_pd(d, bb)), _mm256_sub_pd(two, bb)), t_lo);
  const __m256d q = _mm256_div_pd(t_hi, d);
  const __m256d res = _mm256_fnmadd_pd(q, d_lo, _mm256_add_pd(_mm256_fnmadd_pd(q, d, t_hi), t_lo));
  const __m256d th = _mm256_fmadd_pd(res, _mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps(d))), q);
  const __m256d y = _mm256_or_pd(th, _mm256_and_pd(sign, x));
  return _mm256_blendv_pd(y, x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

/// Applies the four-lane kernel K over a line: whole vectors, then the tail through a
/// padded stack buffer (no read or write past the line).
template <__m256d (*K)(__m256d)> TENFERRO_AVX2 void line_f64(const double* x, double* y, std::int64_t n) noexcept {
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, K(_mm256_loadu_pd(x + i)));
  if (i == n) return;
  double buf[4] = {0, 0, 0, 0};
  const auto rest = static_cast<std::size_t>(n - i);
  std::memcpy(buf, x + i, rest * sizeof(double));
  _mm256_storeu_pd(buf, K(_mm256_loadu_pd(buf)));
  std::memcpy(y + i, buf, rest * sizeof(double));
}

template <__m256d (*K)(__m256d)> TENFERRO_AVX2 void line_f32(const float* x, float* y, std::int64_t n) noexcept {
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(K(_mm256_cvtps_pd(_mm_loadu_ps(x + i)))));
  if (i == n) return;
  float buf[4] = {0, 0, 0, 0};
  const auto rest = static_cast<std::size_t>(n - i);
  std::memcpy(buf, x + i, rest * sizeof(float));
  _mm_storeu_ps(buf, _mm256_cvtpd_ps(K(_mm256_cvtps_pd(_mm_loadu_ps(buf)))));
  std::memcpy(y + i, buf, rest * sizeof(float));
}

TENFERRO_AVX2 void avx2_exp_f64(const double* x, double* y, std::int64_t n) noexcept { line_f64<exp4>(x, y, n); }
TENFERRO_AVX2 void avx2_tanh_f64(const double* x, double* y, std::int64_t n) noexcept { line_f64<tanh4>(x, y, n); }
TENFERRO_AVX2 void avx2_exp_f32(const float* x, float* y, std::int64_t n) noexcept { line_f32<exp4>(x, y, n); }
TENFERRO_AVX2 void avx2_tanh_f32(const float* x, float* y, std::int64_t n) noexcept { line_f32<tanh4>(x, y, n); }

constexpr LineFns kAvx2 = {&avx2_exp_f64, &avx2_tanh_f64, &avx2_exp_f32, &avx2_tanh_f32, "avx2+fma"};

#undef TENFERRO_AVX2

LineFns choose() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? kAvx2 : kLibm;
}

#else

LineFns choose() noexcept { return kLibm; }

#endif

}  // namespace

const LineFns& line_fns() noexcept {
  static const LineFns fns = choose();
  return fns;
}

const LineFns& libm_line_fns() noexcept { return kLibm; }

}  // namespace tenferro::detail::vecmath
