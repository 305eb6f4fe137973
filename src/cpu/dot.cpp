// The CPU contraction kernels (Note [Contraction in the op layer]): the small path
// (plain loops over any strides, no allocation), BLAS gemm/gemv with packing where the
// layout needs it, batching, grouped GEMM. Calls arrive validated from src/ops/contraction.cpp.
#include <algorithm>
#include <memory>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu/blas.hpp"
#include "cpu/context.hpp"
#include "cpu/dot_plan.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"
#include "cpu/transpose_copy.hpp"

namespace tenferro {
namespace detail {

void blas::set_threads(int n) noexcept {
  static std::atomic<int> current{-1};
  if (current.exchange(n, std::memory_order_relaxed) != n) openblas_set_num_threads(n);
}

namespace {

// Note [Provider threads per product]
// OpenBLAS splits a product over its threads whenever it is given more than one, and on
// medium products its start-up, barriers and sched_yield spinning cost more than the
// split saves: str_mps_varying_inner_product_200 (200 medium GEMMs) ran in 19 ms on two
// threads against 14 ms on one, with 10% of the time in sched_yield. Products below
// kBlasThreadMinMadds multiply-adds (~0.1 ms on one core) therefore run on one thread;
// larger ones are split over the session's threads (Note [Products split over the
// session's threads]), OpenBLAS itself always runs on one.
constexpr std::int64_t kBlasThreadMinMadds = std::int64_t{1} << 22;
int blas_threads(const Session& s, std::int64_t M, std::int64_t N, std::int64_t K) noexcept {
  const double madds = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  return madds < static_cast<double>(kBlasThreadMinMadds) ? 1 : provider_threads(s);
}

template <class T, bool Conj> inline T maybe_conj(T v) noexcept {
  if constexpr (Conj && is_complex_v<T>) return std::conj(v);
  else return v;
}

// Per-batch element offsets of the three operands, for batch indices [b0, b1).
template <class F> void for_batches(const DotPlan& p, const std::int64_t* lb, const std::int64_t* rb, const std::int64_t* ob,
                                    std::int64_t b0, std::int64_t b1, F f) {
  std::int64_t idx[kMaxDotAxes];
  std::int64_t rest = b0, lo = 0, ro = 0, oo = 0;
  for (int i = 0; i < p.nb; ++i) {
    idx[i] = rest % p.bext[i];
    rest /= p.bext[i];
    lo += idx[i] * lb[i];
    ro += idx[i] * rb[i];
    oo += idx[i] * ob[i];
  }
  for (std::int64_t b = b0; b < b1; ++b) {
    f(lo, ro, oo);
    for (int i = 0; i < p.nb; ++i) {
      lo += lb[i];
      ro += rb[i];
      oo += ob[i];
      if (++idx[i] < p.bext[i]) break;
      lo -= idx[i] * lb[i];
      ro -= idx[i] * rb[i];
      oo -= idx[i] * ob[i];
      idx[i] = 0;
    }
  }
}

// Column-accumulating product for a column-major lhs (lm == 1) with MC rows known at
// compile time: the MC accumulators live in registers and the m loop unrolls, which is
// what makes a batch of 4×4 products cost tens of nanoseconds each.
template <class T, int MC>
TENFERRO_ALWAYS_INLINE void small_columns(std::int64_t N, std::int64_t K, const T* l, std::int64_t lk, const T* r, std::int64_t rk, std::int64_t rn, T* o,
                          std::int64_t om, std::int64_t on, T alpha, T beta) noexcept {
  for (std::int64_t n = 0; n < N; ++n) {
    T acc[MC] = {};
    const T* rc = r + n * rn;
    for (std::int64_t k = 0; k < K; ++k) {
      const T bv = rc[k * rk];
      const T* lc = l + k * lk;
      for (int m = 0; m < MC; ++m) acc[m] += lc[m] * bv;
    }
    T* oc = o + n * on;
    if (beta == T(0))
      for (int m = 0; m < MC; ++m) oc[m * om] = alpha * acc[m];
    else
      for (int m = 0; m < MC; ++m) oc[m * om] = alpha * acc[m] + beta * oc[m * om];
  }
}

// One small product over single-axis groups: direct strides, K innermost.
template <class T, bool CL, bool CR>
TENFERRO_ALWAYS_INLINE void small_product_body(const MatrixForm& f, const T* l, const T* r, T* o, T alpha, T beta) noexcept {
  const std::int64_t M = f.M, N = f.N, K = f.K, lm = f.lm, lk = f.lk, rk = f.rk, rn = f.rn, om = f.om, on = f.on;
  const bool beta_zero = beta == T(0);
  if constexpr (!CL && !CR) {
    if (lm == 1 || M == 1) {
      switch (M) {
        case 1: return small_columns<T, 1>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        case 2: return small_columns<T, 2>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        case 3: return small_columns<T, 3>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        case 4: return small_columns<T, 4>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        case 6: return small_columns<T, 6>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        case 8: return small_columns<T, 8>(N, K, l, lk, r, rk, rn, o, om, on, alpha, beta);
        default: break;
      }
    }
  }
  if (lm == 1 && M <= 64) {  // column-major lhs: accumulate whole columns (vectorizes over m)
    T acc[64];
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t m = 0; m < M; ++m) acc[m] = T(0);
      const T* rc = r + n * rn;
      for (std::int64_t k = 0; k < K; ++k) {
        const T bv = maybe_conj<T, CR>(rc[k * rk]);
        const T* lc = l + k * lk;
        for (std::int64_t m = 0; m < M; ++m) acc[m] += maybe_conj<T, CL>(lc[m]) * bv;
      }
      T* oc = o + n * on;
      if (beta_zero)
        for (std::int64_t m = 0; m < M; ++m) oc[m * om] = alpha * acc[m];
      else
        for (std::int64_t m = 0; m < M; ++m) oc[m * om] = alpha * acc[m] + beta * oc[m * om];
    }
    return;
  }
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t m = 0; m < M; ++m) {
      T acc{};
      const T* lr = l + m * lm;
      const T* rc = r + n * rn;
      for (std::int64_t k = 0; k < K; ++k) acc += maybe_conj<T, CL>(lr[k * lk]) * maybe_conj<T, CR>(rc[k * rk]);
      T& dst = o[m * om + n * on];
      dst = beta_zero ? alpha * acc : alpha * acc + beta * dst;
    }
}

// Note [Small products with AVX2]
// The library is built for baseline x86-64 (no -march), where the small product's
// column loops run two doubles per SSE2 instruction. Where the CPU has AVX2 the same
// loops are compiled a second time for 256-bit vectors and chosen once at load time.
// The build is ISO C++ (-std=c++20), so GCC contracts no multiply-add into an FMA
// (-ffp-contract=off): both versions perform the same operations in the same order and
// give bitwise equal results. Batches of 4×4 products (the language-model instances of
// bench_einsum_instances) spend most of their time here. Products of fewer than 4 rows
// (under one 256-bit vector of doubles) stay inline in the baseline loop, which keeps the
// 2×2 fixed cost.
// GCC vectorizes small_columns' accumulators for up to 8 rows but keeps 12 or 16 of them
// in scalar stack slots, so on AVX2 double columns of 4·V rows (V = 1 .. 4) accumulate in
// explicit vectors, two output columns at a time (each lhs vector loaded once for both):
// the same multiplies and adds per element in the same order (no FMA), so the same
// values. lm_batch_likelihood_brackets_4_4d's batch of 1996 products of 16 × 16 by
// 16 × 16: 1.67 → 1.14 ms; bench_dot batched/held/into/4x4x1024: 27 → 16.5 ns per
// product (one thread, 2026-12-07).
#if defined(__x86_64__) && defined(__GNUC__)
// Stores alpha·acc (+ beta·out) into the 4·V rows of one output column.
template <int V>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void store_columns(const MatrixForm& f, const __m256d* acc, double* oc,
                                                                                 double alpha, double beta) noexcept {
  const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
  for (int j = 0; j < V; ++j) {
    const __m256d x = _mm256_mul_pd(va, acc[j]);
    if (f.om == 1) {
      _mm256_storeu_pd(oc + 4 * j, beta == 0.0 ? x : _mm256_add_pd(x, _mm256_mul_pd(vb, _mm256_loadu_pd(oc + 4 * j))));
      continue;
    }
    alignas(32) double t[4];
    _mm256_store_pd(t, x);
    for (int i = 0; i < 4; ++i) {
      double& d = oc[(4 * j + i) * f.om];
      d = beta == 0.0 ? t[i] : t[i] + beta * d;
    }
  }
}

// acc0 += x · b0 (and acc1 += x · b1 for a second column): one vector of one column.
template <int C>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void accumulate(__m256d x, __m256d b0, __m256d b1, __m256d& acc0,
                                                                              __m256d& acc1) noexcept {
  acc0 = _mm256_add_pd(acc0, _mm256_mul_pd(x, b0));
  if constexpr (C > 1) acc1 = _mm256_add_pd(acc1, _mm256_mul_pd(x, b1));
}

// C (1 or 2) output columns of 4·V rows, from column r of the rhs and o of the output
// on: each lhs vector is loaded once for both columns. The accumulators are named
// variables, not an array: GCC kept an array of them (acc[C][V]) in stack slots for
// V >= 3, stored back on every k (bench_dot batched/held/into/16x16x16x1996: 343 → 248
// ns per product, 12x12x12x1996: 160 → 122; 4x4x1024 unchanged at 16.5-17).
template <int V, int C>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void column_block(const MatrixForm& f, const double* l, const double* r,
                                                                                double* o, double alpha, double beta) noexcept {
  static_assert(V >= 1 && V <= 4 && (C == 1 || C == 2));
  const __m256d z = _mm256_setzero_pd();
  __m256d a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
  for (std::int64_t k = 0; k < f.K; ++k) {
    const __m256d r0 = _mm256_broadcast_sd(r + k * f.rk);
    const __m256d r1 = C > 1 ? _mm256_broadcast_sd(r + f.rn + k * f.rk) : z;
    const double* lc = l + k * f.lk;
    accumulate<C>(_mm256_loadu_pd(lc), r0, r1, a0, b0);
    if constexpr (V > 1) accumulate<C>(_mm256_loadu_pd(lc + 4), r0, r1, a1, b1);
    if constexpr (V > 2) accumulate<C>(_mm256_loadu_pd(lc + 8), r0, r1, a2, b2);
    if constexpr (V > 3) accumulate<C>(_mm256_loadu_pd(lc + 12), r0, r1, a3, b3);
  }
  const __m256d first[4] = {a0, a1, a2, a3}, second[4] = {b0, b1, b2, b3};
  store_columns<V>(f, first, o, alpha, beta);
  if constexpr (C > 1) store_columns<V>(f, second, o + f.on, alpha, beta);
}

// Double columns of 4·V rows (Note [Small products with AVX2]): two output columns at a
// time, then the last column alone.
template <int V>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) void vector_columns(const MatrixForm& f, const double* l, const double* r,
                                                                                  double* o, double alpha, double beta) noexcept {
  std::int64_t n = 0;
  for (; n + 2 <= f.N; n += 2) column_block<V, 2>(f, l, r + n * f.rn, o + n * f.on, alpha, beta);
  if (n < f.N) column_block<V, 1>(f, l, r + n * f.rn, o + n * f.on, alpha, beta);
}

// A column-major double lhs (lm == 1) of 4, 8, 12 or 16 rows: vector_columns.
template <class T, bool CL, bool CR>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) bool try_vector_columns(const MatrixForm& f, const T* l, const T* r, T* o,
                                                                                      T alpha, T beta) noexcept {
  if constexpr (std::is_same_v<T, double> && !CL && !CR) {
    if (f.lm != 1 || f.M % 4 != 0 || f.M > 16) return false;
    switch (f.M / 4) {
      case 1: vector_columns<1>(f, l, r, o, alpha, beta); return true;
      case 2: vector_columns<2>(f, l, r, o, alpha, beta); return true;
      case 3: vector_columns<3>(f, l, r, o, alpha, beta); return true;
      default: vector_columns<4>(f, l, r, o, alpha, beta); return true;
    }
  }
  return false;
}

// A lhs that is not column-major (lm != 1) is first copied into a compact column-major
// block, so that the column loops vectorize over m instead of the triple loop reading it
// with stride lm: the same sums in the same k order, so the same values.
template <class T, bool CL, bool CR>
[[gnu::noinline]] __attribute__((target("avx2"))) void small_product_avx2(const MatrixForm& f, const T* l, const T* r, T* o, T alpha,
                                                                           T beta) noexcept {
  if (try_vector_columns<T, CL, CR>(f, l, r, o, alpha, beta)) return;
  if (f.lm == 1 || f.M * f.K > 4096) return small_product_body<T, CL, CR>(f, l, r, o, alpha, beta);
  struct alignas(64) Buf {  // raw bytes: std::complex would be zeroed
    unsigned char bytes[4096 * sizeof(T)];
  } buf;
  T* lb = reinterpret_cast<T*>(buf.bytes);
  for (std::int64_t k = 0; k < f.K; ++k)
    for (std::int64_t m = 0; m < f.M; ++m) lb[m + k * f.M] = l[m * f.lm + k * f.lk];
  MatrixForm g = f;
  g.lm = 1;
  g.lk = f.M;
  if (try_vector_columns<T, CL, CR>(g, lb, r, o, alpha, beta)) return;
  small_product_body<T, CL, CR>(g, lb, r, o, alpha, beta);
}
inline const bool kSmallProductAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();
#endif

template <class T, bool CL, bool CR>
TENFERRO_ALWAYS_INLINE void small_product(const MatrixForm& f, const T* l, const T* r, T* o, T alpha, T beta) noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  if (f.M >= 4 && kSmallProductAvx2) return small_product_avx2<T, CL, CR>(f, l, r, o, alpha, beta);
#endif
  small_product_body<T, CL, CR>(f, l, r, o, alpha, beta);
}

// Small path: offset tables for each group, then a plain triple loop per batch.
template <class T, bool CL, bool CR>
void small_kernel(Session& s, const DotPlan& p, const T* L, const T* R, T* O, T alpha, T beta) {
  std::int64_t lmo[64], lko[64], rko[64], rno[64], omo[64], ono[64];
  axis_offsets(p.nm, p.mext, p.lm, lmo);
  axis_offsets(p.nk, p.kext, p.lk, lko);
  axis_offsets(p.nk, p.kext, p.rk, rko);
  axis_offsets(p.nn, p.next, p.rn, rno);
  axis_offsets(p.nm, p.mext, p.om, omo);
  axis_offsets(p.nn, p.next, p.on, ono);
  const std::int64_t M = p.M, N = p.N, K = p.K;
  const bool beta_zero = beta == T(0);
  if (p.nm <= 1 && p.nn <= 1 && p.nk <= 1) {  // every group one axis: no tables
    const std::int64_t lm = p.nm ? p.lm[0] : 0, lk = p.nk ? p.lk[0] : 0, rk = p.nk ? p.rk[0] : 0, rn = p.nn ? p.rn[0] : 0;
    const std::int64_t om = p.nm ? p.om[0] : 0, on = p.nn ? p.on[0] : 0;
    const MatrixForm f{M, N, K, lm, lk, rk, rn, om, on};
    parallel_for(s, p.batches, 2 * M * N * K + 8, [&](std::int64_t b0, std::int64_t b1) {
      for_batches(p, p.lb, p.rb, p.ob, b0, b1, [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) {
        small_product<T, CL, CR>(f, L + lo, R + ro, O + oo, alpha, beta);
      });
    });
    return;
  }
  // A group of several axes: each batch's blocks are gathered through the offset tables
  // into compact column-major matrices (M×K, K×N), multiplied by the register-blocked
  // small product (the same sums in the same k order as a direct triple loop, so the
  // same values), and the M×N result is scattered through the output's table. The
  // tables alone cost two lookups per multiply-add and defeat vectorization; the
  // language-model instances of bench_einsum_instances spend most of their small
  // products here (groups like M = 16 as 4×4 over two axes).
  constexpr std::int64_t kBuf = 4096 + 2 * 64;  // M·K + K·N + M·N under small_product_size
  // Raw bytes, not T[]: std::complex's constructor would zero the whole buffer every batch.
  struct alignas(64) Buf {
    unsigned char bytes[kBuf * sizeof(T)];
  };
  const MatrixForm packed{M, N, K, 1, M, 1, K, 1, M};
  auto one = [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) {
    Buf buf;
    T* lb = reinterpret_cast<T*>(buf.bytes);
    T* rb = lb + M * K;
    T* ob = rb + K * N;
    const T* l = L + lo;
    const T* r = R + ro;
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t m = 0; m < M; ++m) lb[m + k * M] = l[lmo[m] + lko[k]];
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k) rb[k + n * K] = r[rko[k] + rno[n]];
    small_product<T, CL, CR>(packed, lb, rb, ob, alpha, T(0));
    T* o = O + oo;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) {
        T& dst = o[omo[m] + ono[n]];
        dst = beta_zero ? ob[m + n * M] : ob[m + n * M] + beta * dst;
      }
  };
  parallel_for(s, p.batches, 2 * M * N * K + 8, [&](std::int64_t b0, std::int64_t b1) { for_batches(p, p.lb, p.rb, p.ob, b0, b1, one); });
}

struct Mat {
  std::int64_t rows, cols, rs, cs;
  bool conj;
};

// BLAS op and leading dimension for an input matrix (see blas_compatible).
bool blas_input(Mat a, blas::Op& op, int& ld) {
  if (a.rows <= 1) a.rs = 1;
  if (a.cols <= 1) a.cs = a.rs == 1 ? std::max<std::int64_t>(a.rows, 1) : 1;
  if (a.rs == 1 && a.cs >= std::max<std::int64_t>(1, a.rows) && !a.conj) {
    op = blas::Op::none;
    ld = static_cast<int>(a.cs);
    return true;
  }
  if (a.cs == 1 && a.rs >= std::max<std::int64_t>(1, a.cols)) {
    op = a.conj ? blas::Op::conj_trans : blas::Op::trans;
    ld = static_cast<int>(a.rs);
    return true;
  }
  return false;
}

// Note [Long contractions]
// BLAS accumulates a product over K in the element precision (OpenBLAS sdot/sgemv/sgemm
// keep f32 partial sums), so the relative error of an f32 contraction grows with K: 1e-5
// for K = 1e7 of uniform [0, 1) values, 1e-3 for a [3, 1.25e6] x [1.25e6, 2] gemm, up to
// 2e-2 for constant inputs; NumPy calls the same BLAS. A product with K > kLongK is
// therefore split along K into blocks of at most kKBlock, each one BLAS call into a
// compact M x N scratch, and the block results are combined pairwise (halves split at a
// multiple of kKBlock, as lane_fold_range), so the error is that of a kKBlock-long BLAS
// product plus O(log(K / kKBlock)) roundings. The scratch is one M x N matrix per
// halving level (heap; this is a long product, the allocation does not show). Products
// with K <= kLongK make the one BLAS call as before.
inline constexpr std::int64_t kLongK = std::int64_t{1} << 15;
inline constexpr std::int64_t kKBlock = std::int64_t{1} << 12;

template <class T>
void blas_product(bool swap, Mat a, const T* A, Mat b, const T* B, Mat c, T* C, T alpha, T beta);

// D (compact M x N) = op(A[:, k0:k1]) op(B[k0:k1, :]), pairwise over kKBlock blocks;
// `scratch` holds one M x N matrix per halving level below this one.
template <class T>
void blas_product_k_blocked(Mat a, const T* A, Mat b, const T* B, std::int64_t k0, std::int64_t k1, T* D, T* scratch) {
  const std::int64_t mn = a.rows * b.cols;
  if (k1 - k0 <= kKBlock) {
    Mat as = a, bs = b;
    as.cols = bs.rows = k1 - k0;
    blas_product<T>(false, as, A + k0 * a.cs, bs, B + k0 * b.rs, Mat{a.rows, b.cols, 1, std::max<std::int64_t>(a.rows, 1), false}, D,
                    T(1), T(0));
    return;
  }
  const std::int64_t m = k0 + std::max(kKBlock, (k1 - k0) / 2 / kKBlock * kKBlock);
  blas_product_k_blocked<T>(a, A, b, B, k0, m, D, scratch);
  blas_product_k_blocked<T>(a, A, b, B, m, k1, scratch, scratch + mn);
  for (std::int64_t i = 0; i < mn; ++i) D[i] += scratch[i];
}

// One product C = alpha op(A) op(B) + beta C through BLAS. With `swap` it computes
// Cᵀ = op(B)ᵀ op(A)ᵀ instead (the plan picks the orientation BLAS can write); a
// one-column result goes to gemv. K > kLongK is blocked (Note [Long contractions]).
template <class T>
void blas_product(bool swap, Mat a, const T* A, Mat b, const T* B, Mat c, T* C, T alpha, T beta) {
  if (a.cols > kLongK) {
    const std::int64_t mn = a.rows * b.cols;
    int levels = 0;
    for (std::int64_t n = a.cols; n > kKBlock; ++levels) n -= std::max(kKBlock, n / 2 / kKBlock * kKBlock);
    std::unique_ptr<T[]> buf(new T[static_cast<std::size_t>(mn * (levels + 1))]);
    blas_product_k_blocked<T>(a, A, b, B, 0, a.cols, buf.get(), buf.get() + mn);
    const bool beta_zero = beta == T(0);  // beta = 0 never reads C (BLAS semantics)
    for (std::int64_t n = 0; n < c.cols; ++n)
      for (std::int64_t m = 0; m < c.rows; ++m) {
        T& dst = C[m * c.rs + n * c.cs];
        const T v = alpha * buf[static_cast<std::size_t>(m + n * c.rows)];
        dst = beta_zero ? v : v + beta * dst;
      }
    return;
  }
  if (swap) {
    const Mat na{b.cols, b.rows, b.cs, b.rs, b.conj}, nb{a.cols, a.rows, a.cs, a.rs, a.conj};
    std::swap(A, B);
    a = na;
    b = nb;
    c = {c.cols, c.rows, c.cs, c.rs, false};
  }
  if (c.rows <= 1) c.rs = 1;
  if (c.cols <= 1) c.cs = std::max<std::int64_t>(c.rows, 1);
  blas::Op oa, ob;
  int lda, ldb;
  blas_input(a, oa, lda);
  const int m = static_cast<int>(c.rows), n = static_cast<int>(c.cols), k = static_cast<int>(a.cols);
  if (n == 1 && !b.conj && (b.rows <= 1 || b.rs > 0)) {  // y = op(A) x
    const int incx = static_cast<int>(b.rows <= 1 ? 1 : b.rs);
    const int rows = oa == blas::Op::none ? m : k, cols = oa == blas::Op::none ? k : m;
    blas::gemv<T>(oa, rows, cols, alpha, A, lda, B, incx, beta, C, 1);
    return;
  }
  blas_input(b, ob, ldb);
  blas::gemm<T>(oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, static_cast<int>(c.cs));
}

// Note [Products split over the session's threads]
// A product large enough for several threads (blas_threads) is split by the session,
// not by OpenBLAS: the larger of the result's two sides is cut into one contiguous block
// per thread, and each block is one single-threaded BLAS call on a session worker.
// OpenBLAS's own threads are a second pool beside the session's: after each threaded
// product they spin in sched_yield for a while, and on a machine with as many cores as
// session threads they then take turns with the session's workers in the copies and
// elementwise steps that follow (tensornetwork_permutation_focus_step409_316 spent 14% of
// its two-thread time in __schedule and sched_yield and ran only 1.2× faster than on one
// thread). OpenBLAS 0.3.7 and later serve concurrent single-threaded calls (its buffer
// allocator locks); LAPACK calls keep OpenBLAS's threads (solve, qr_update).
template <class T>
void split_product(Session& s, int threads, bool swap, Mat a, const T* A, Mat b, const T* B, Mat c, T* C, T alpha, T beta) {
  const bool by_cols = c.cols >= c.rows;
  parallel_chunks(s, by_cols ? c.cols : c.rows, threads, [&](std::int64_t lo, std::int64_t hi) {
    Mat as = a, bs = b, cs = c;
    if (by_cols) {
      bs.cols = cs.cols = hi - lo;
      blas_product<T>(swap, as, A, bs, B + lo * b.cs, cs, C + lo * c.cs, alpha, beta);
    } else {
      as.rows = cs.rows = hi - lo;
      blas_product<T>(swap, as, A + lo * a.rs, bs, B, cs, C + lo * c.rs, alpha, beta);
    }
  });
}

// One product on `threads` threads (split_product), or on the calling thread.
template <class T>
void product_on(Session& s, int threads, bool swap, Mat a, const T* A, Mat b, const T* B, Mat c, T* C, T alpha, T beta) {
  if (threads > 1) split_product<T>(s, threads, swap, a, A, b, B, c, C, alpha, beta);
  else blas_product<T>(swap, a, A, b, B, c, C, alpha, beta);
}

// Packs an operand: a compact copy in `perm` order, converted to the compute dtype and
// conjugated when asked.
Tensor pack(Session& s, const Tensor& t, const std::int64_t* perm, DType d, bool conj_it) {
  const Tensor v = t.permute_view(std::span<const std::int64_t>(perm, static_cast<std::size_t>(t.rank())));
  Tensor tmp = Tensor::empty(v.shape().span(), d);
  if (t.dtype() == d) copy_into(s, v, tmp);
  else cast_into(s, v, tmp);
  if (conj_it) conj_into(s, tmp, tmp);
  return tmp;
}

// Batch strides of a compact copy holding the matrix then the batch axes `side` holds
// (a looped free axis of the other operand has stride 0 in it; out holds every axis).
void compact_batch_strides(const DotPlan& p, std::int64_t matrix, DotPlan::Holder side, std::int64_t* out) {
  std::int64_t acc = matrix;
  for (int i = 0; i < p.nb; ++i) {
    const bool held = side == DotPlan::Holder::both || p.bholder[i] == DotPlan::Holder::both || p.bholder[i] == side;
    out[i] = held ? acc : 0;
    if (held) acc *= p.bext[i];
  }
}

template <class T>
void blas_kernel(Session& s, const DotPlan& p, const Tensor& lhs, const Tensor& rhs, const Tensor& out, T alpha, T beta) {
  Tensor lp, rp, op;
  const T* L = static_cast<const T*>(lhs.data());
  const T* R = static_cast<const T*>(rhs.data());
  T* O = static_cast<T*>(const_cast<void*>(out.data()));
  Mat a{p.M, p.K, p.lm1, p.lk1, p.conj_l}, b{p.K, p.N, p.rk1, p.rn1, p.conj_r}, c{p.M, p.N, p.om1, p.on1, false};
  std::int64_t lb[kMaxDotAxes], rb[kMaxDotAxes], ob[kMaxDotAxes];
  std::copy(p.lb, p.lb + p.nb, lb);
  std::copy(p.rb, p.rb + p.nb, rb);
  std::copy(p.ob, p.ob + p.nb, ob);
  if (p.pack_l) {
    lp = pack(s, lhs, p.lperm, p.dtype, p.conj_l);
    L = static_cast<const T*>(lp.data());
    a = {p.M, p.K, 1, p.M, false};
    compact_batch_strides(p, p.M * p.K, DotPlan::Holder::lhs, lb);
  }
  if (p.pack_r) {
    rp = pack(s, rhs, p.rperm, p.dtype, p.conj_r);
    R = static_cast<const T*>(rp.data());
    b = {p.K, p.N, 1, p.K, false};
    compact_batch_strides(p, p.K * p.N, DotPlan::Holder::rhs, rb);
  }
  T a_run = alpha, b_run = beta;
  if (p.pack_out) {  // compute into a compact temporary, then out = alpha·tmp + beta·out
    Dims shape;
    for (int i = 0; i < p.nm; ++i) shape.push_back(p.mext[i]);
    for (int i = 0; i < p.nn; ++i) shape.push_back(p.next[i]);
    for (int i = 0; i < p.nb; ++i) shape.push_back(p.bext[i]);
    op = Tensor::empty(shape.span(), p.dtype);
    O = static_cast<T*>(const_cast<void*>(op.data()));
    c = {p.M, p.N, 1, p.M, false};
    compact_batch_strides(p, p.M * p.N, DotPlan::Holder::both, ob);
    a_run = T(1);
    b_run = T(0);
  }
  // Note [Batches split over the session's threads]
  // Independent products go to the threads whole, unless each is large enough to split
  // and there are too few of them to share out evenly. Until 2026-12-07 only products
  // below 64^3 multiply-adds were shared out, and larger ones below the split threshold
  // (kBlasThreadMinMadds) ran one after the other on one thread:
  // bin_batched_matmul_b32_m128_n128_k128 (32 products of 128^3) took 3.3-4.6 ms on two
  // threads against 3.6-4.3 on one; now 2.1 ms.
  const int per_product = blas_threads(s, p.M, p.N, p.K);
  const bool by_batch = p.M * p.N * p.K < 64 * 64 * 64 || per_product == 1 || p.batches >= 2 * std::int64_t{s.num_threads()};
  const int threads = by_batch ? fork_threads(s, p.batches, 2 * p.M * p.N * p.K) : 1;
  const int split = threads > 1 ? 1 : per_product;
  blas::set_threads(1);
  const bool swap = p.swap_out && !p.pack_out;
  auto one = [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) { product_on<T>(s, split, swap, a, L + lo, b, R + ro, c, O + oo, a_run, b_run); };
  if (threads > 1)
    parallel_chunks(s, p.batches, threads, [&](std::int64_t b0, std::int64_t b1) { for_batches(p, lb, rb, ob, b0, b1, one); });
  else
    for_batches(p, lb, rb, ob, 0, p.batches, one);
  // out = 1·tmp + 0·out is a permutation copy: the tiled copy (Note [Transposed tiles])
  // instead of axpby's element loop (which was 5.6% of a profile of focus_316's automatic
  // tree; end to end the change was within noise).
  if (p.pack_out && alpha == T(1) && beta == T(0)) copy_same_dtype(s, op, out);
  else if (p.pack_out) axpby(s, Scalar(alpha), op, Scalar(beta), out);
}

// out = beta·out for an empty contraction (K = 0); zeros when beta = 0.
void scale_out(Session& s, const Tensor& out, const Scalar& beta) {
  visit_dtype<DTypeSet::inexact>("dot_general", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (beta.to<T>() == T(0)) {
      // beta = 0 never reads out (a NaN in an uninitialized buffer must not survive).
      const T zero{};
      fill_bytes(s, out, &zero);
    } else {
      mul_into(s, out, beta, out);
    }
  });
}

// The short form through BLAS, as the matrices are: false, having done nothing, when
// the layout needs the planned path (packing, negative strides).
template <class T> [[gnu::noinline]] bool matrix_blas(Session& s, const DotCall& c) {
  const MatrixForm& f = *c.matrix;
  const std::int64_t M = f.M, N = f.N, K = f.K, lm = f.lm, lk = f.lk, rk = f.rk, rn = f.rn, om = f.om, on = f.on;
  const Mat ma{M, K, lm, lk, f.conj_lhs}, mb{K, N, rk, rn, f.conj_rhs};
  if (!writable_by_blas(M, N, om, on) || !blas_compatible(M, K, lm, lk, ma.conj) || !blas_compatible(K, N, rk, rn, mb.conj)) return false;
  auto fits = [](std::int64_t v) { return v >= 0 && v <= INT32_MAX; };
  if (!fits(M) || !fits(N) || !fits(K) || !fits(lm) || !fits(lk) || !fits(rk) || !fits(rn) || !fits(om) || !fits(on)) return false;
  blas::set_threads(1);
  product_on<T>(s, blas_threads(s, M, N, K), false, ma, static_cast<const T*>(c.lhs->data()), mb, static_cast<const T*>(c.rhs->data()),
                Mat{M, N, om, on, false}, static_cast<T*>(const_cast<void*>(c.out->data())), c.alpha->to<T>(), c.beta->to<T>());
  return true;
}

// The short form's layout (Note [dot fast path]): the small loop, or one direct BLAS
// call when both operands are BLAS-readable and out BLAS-writable as they are. Returns
// false, having done nothing, when the layout needs the planned path. With
// `small_only` only the small loop runs: it touches no session state (s may be null),
// so it is safe on pool workers (grouped_gemm).
template <class T> TENFERRO_ALWAYS_INLINE bool matrix_product(Session* s, const DotCall& c, bool small_only) {
  const MatrixForm& f = *c.matrix;
  if (!small_product_size(f.M, f.N, f.K)) return !small_only && matrix_blas<T>(*s, c);
  const T a = c.alpha->to<T>(), b = c.beta->to<T>();
  const T* L = static_cast<const T*>(c.lhs->data());
  const T* R = static_cast<const T*>(c.rhs->data());
  T* O = static_cast<T*>(const_cast<void*>(c.out->data()));
  if (f.conj_lhs && f.conj_rhs) small_product<T, true, true>(f, L, R, O, a, b);
  else if (f.conj_lhs) small_product<T, true, false>(f, L, R, O, a, b);
  else if (f.conj_rhs) small_product<T, false, true>(f, L, R, O, a, b);
  else small_product<T, false, false>(f, L, R, O, a, b);
  return true;
}

TENFERRO_ALWAYS_INLINE bool matrix_path(Session* s, const DotCall& c, bool small_only) {
  switch (c.matrix->dtype) {
    case DType::f32: return matrix_product<float>(s, c, small_only);
    case DType::f64: return matrix_product<double>(s, c, small_only);
    case DType::c64: return matrix_product<c64>(s, c, small_only);
    case DType::c128: return matrix_product<c128>(s, c, small_only);
    default: return false;
  }
}

// Runs a plan: the empty, small or BLAS path.
void run_plan(Session& s, const DotCall& c, const DotPlan& p) {
  visit_dtype<DTypeSet::inexact>(c.op, p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = c.alpha->to<T>(), b = c.beta->to<T>();
    const Tensor& o = *c.out;
    if (p.path == DotPath::empty) {
      if (p.K == 0 && o.numel() > 0) scale_out(s, o, *c.beta);
      return;
    }
    if (p.path == DotPath::small) {
      const T* L = static_cast<const T*>(c.lhs->data());
      const T* R = static_cast<const T*>(c.rhs->data());
      T* O = static_cast<T*>(const_cast<void*>(o.data()));
      if (p.conj_l && p.conj_r) small_kernel<T, true, true>(s, p, L, R, O, a, b);
      else if (p.conj_l) small_kernel<T, true, false>(s, p, L, R, O, a, b);
      else if (p.conj_r) small_kernel<T, false, true>(s, p, L, R, O, a, b);
      else small_kernel<T, false, false>(s, p, L, R, O, a, b);
      return;
    }
    blas_kernel<T>(s, p, *c.lhs, *c.rhs, o, a, b);
  });
}

// Whether a grouped_gemm item is of the short form (one dtype, no empty extent).
bool matrix_item(const GemmItem& it) noexcept {
  const DType d = it.c->dtype();
  return it.a->dtype() == d && it.b->dtype() == d && it.a->numel() > 0 && it.b->numel() > 0;
}

// Whether a grouped_gemm item takes the small loop of the short form.
bool small_item(const GemmItem& it) noexcept {
  return matrix_item(it) && small_product_size(it.a->extent(0), it.b->extent(1), it.a->extent(1));
}

}  // namespace
}  // namespace detail

namespace cpu {

using detail::DotCall;

namespace {

// The planned path: the session's cached plan (or a fresh one) for the call, then run.
[[gnu::noinline]] void planned_dot(Session& s, const DotCall& call) {
  detail::DotSignature short_sig;  // a short-form call comes without its signature
  DotCall c = call;
  if (!c.sig) {
    detail::matrix_form_signature(*c.matrix, short_sig);
    c.sig = &short_sig;
  }
  detail::CpuResources& res = *detail::cpu_context(s).resources;
  // Rank-2 (and lower) products analyze faster than a cache lookup costs.
  std::int64_t key[160];
  std::uint64_t hash = 0;
  const int len = c.lhs->rank() + c.rhs->rank() > 4 ? detail::dot_cache_key(c, key, 160, hash) : 0;
  const detail::DotPlan* plan = len ? res.dot_plans.find(key, len, hash) : nullptr;
  detail::DotPlan local;
  if (!plan) {
    detail::plan_dot(c, local);
    if (len) res.dot_plans.insert(key, len, hash, detail::DotPlan(local));
    plan = &local;
  }
  detail::run_plan(s, c, *plan);
}

}  // namespace

void dot_kernel(Session& s, const DotCall& c) {
  if (c.matrix && detail::matrix_path(&s, c, false)) return;
  planned_dot(s, c);
}

void grouped_gemm_kernel(Session& s, std::span<const GemmItem> items) {
  // When every item takes the small loop, items split across the session's threads
  // (that loop touches no session state); otherwise they run in order.
  bool all_small = true;
  std::int64_t work = 0;
  for (const GemmItem& it : items) {
    all_small = all_small && detail::small_item(it);
    work += 2 * it.a->numel() * it.b->extent(1);
  }
  const auto n = static_cast<std::int64_t>(items.size());
  const int threads = all_small ? detail::fork_threads(s, n, n ? work / n + 8 : 1) : 1;
  auto run = [&](std::int64_t b, std::int64_t e) {
    detail::DotSignature sig;
    for (std::int64_t i = b; i < e; ++i) {
      const GemmItem& it = items[static_cast<std::size_t>(i)];
      const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
      const bool matrix = detail::matrix_item(it);
      const detail::MatrixForm mf = detail::gemm_item_form(it);
      if (!matrix) detail::matrix_form_signature(mf, sig);
      const DotCall c{"grouped_gemm", it.a, it.b, it.c, matrix ? nullptr : &sig, &dims, &it.alpha, &it.beta, matrix ? &mf : nullptr};
      if (threads > 1) detail::matrix_path(nullptr, c, true);
      else dot_kernel(s, c);
    }
  };
  if (threads > 1) detail::parallel_chunks(s, n, threads, run);
  else run(0, n);
}

}  // namespace cpu

PlanCacheStats dot_plan_cache_stats(Session& s) {
  s.check("dot_plan_cache_stats");
  return detail::cpu_context(s).resources->dot_plans.stats();
}

}  // namespace tenferro
