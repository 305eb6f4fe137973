// dot_general execution: the small path (plain loops over any strides, no allocation),
// BLAS gemm/gemv with packing where the layout needs it, batching, matmul, grouped GEMM.
#include <algorithm>
#include <memory>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/blas.hpp"
#include "cpu/context.hpp"
#include "cpu/dot_plan.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/transpose_copy.hpp"
#include "ops/catalog.hpp"

namespace tenferro {
namespace detail {

void blas::set_threads(int n) noexcept {
  static std::atomic<int> current{-1};
  if (current.exchange(n, std::memory_order_relaxed) != n) openblas_set_num_threads(n);
}

namespace {

template <class T, bool Conj> inline T maybe_conj(T v) noexcept {
  if constexpr (Conj && is_complex_v<T>) return std::conj(v);
  else return v;
}

// Element offsets of every index of a group of axes (column-major order of the group).
void offsets(int n, const std::int64_t* ext, const std::int64_t* str, std::int64_t* out) noexcept {
  out[0] = 0;
  std::int64_t count = 1;
  for (int a = 0; a < n; ++a) {
    for (std::int64_t i = 1; i < ext[a]; ++i)
      for (std::int64_t j = 0; j < count; ++j) out[i * count + j] = out[j] + i * str[a];
    count *= ext[a];
  }
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
inline void small_columns(std::int64_t N, std::int64_t K, const T* l, std::int64_t lk, const T* r, std::int64_t rk, std::int64_t rn, T* o,
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
inline void small_product(std::int64_t M, std::int64_t N, std::int64_t K, const T* l, std::int64_t lm, std::int64_t lk, const T* r,
                          std::int64_t rk, std::int64_t rn, T* o, std::int64_t om, std::int64_t on, T alpha, T beta) noexcept {
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

// Small path: offset tables for each group, then a plain triple loop per batch.
template <class T, bool CL, bool CR>
void small_kernel(Session& s, const DotPlan& p, const T* L, const T* R, T* O, T alpha, T beta) {
  std::int64_t lmo[64], lko[64], rko[64], rno[64], omo[64], ono[64];
  offsets(p.nm, p.mext, p.lm, lmo);
  offsets(p.nk, p.kext, p.lk, lko);
  offsets(p.nk, p.kext, p.rk, rko);
  offsets(p.nn, p.next, p.rn, rno);
  offsets(p.nm, p.mext, p.om, omo);
  offsets(p.nn, p.next, p.on, ono);
  const std::int64_t M = p.M, N = p.N, K = p.K;
  const bool beta_zero = beta == T(0);
  if (p.nm <= 1 && p.nn <= 1 && p.nk <= 1) {  // every group one axis: no tables
    const std::int64_t lm = p.nm ? p.lm[0] : 0, lk = p.nk ? p.lk[0] : 0, rk = p.nk ? p.rk[0] : 0, rn = p.nn ? p.rn[0] : 0;
    const std::int64_t om = p.nm ? p.om[0] : 0, on = p.nn ? p.on[0] : 0;
    parallel_for(s, p.batches, 2 * M * N * K + 8, [&](std::int64_t b0, std::int64_t b1) {
      for_batches(p, p.lb, p.rb, p.ob, b0, b1, [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) {
        small_product<T, CL, CR>(M, N, K, L + lo, lm, lk, R + ro, rk, rn, O + oo, om, on, alpha, beta);
      });
    });
    return;
  }
  auto one = [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) {
    const T* l = L + lo;
    const T* r = R + ro;
    T* o = O + oo;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) {
        T acc{};
        for (std::int64_t k = 0; k < K; ++k) acc += maybe_conj<T, CL>(l[lmo[m] + lko[k]]) * maybe_conj<T, CR>(r[rko[k] + rno[n]]);
        T& dst = o[omo[m] + ono[n]];
        dst = beta_zero ? alpha * acc : alpha * acc + beta * dst;
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

void compact_batch_strides(const DotPlan& p, std::int64_t matrix, std::int64_t* out) {
  std::int64_t acc = matrix;
  for (int i = 0; i < p.nb; ++i) {
    out[i] = acc;
    acc *= p.bext[i];
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
    compact_batch_strides(p, p.M * p.K, lb);
  }
  if (p.pack_r) {
    rp = pack(s, rhs, p.rperm, p.dtype, p.conj_r);
    R = static_cast<const T*>(rp.data());
    b = {p.K, p.N, 1, p.K, false};
    compact_batch_strides(p, p.K * p.N, rb);
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
    compact_batch_strides(p, p.M * p.N, ob);
    a_run = T(1);
    b_run = T(0);
  }
  const bool per_batch_small = p.M * p.N * p.K < 64 * 64 * 64;
  const int threads = per_batch_small ? fork_threads(s, p.batches, 2 * p.M * p.N * p.K) : 1;
  blas::set_threads(threads > 1 ? 1 : s.num_threads());
  const bool swap = p.swap_out && !p.pack_out;
  auto one = [&](std::int64_t lo, std::int64_t ro, std::int64_t oo) { blas_product<T>(swap, a, L + lo, b, R + ro, c, O + oo, a_run, b_run); };
  if (threads > 1)
    parallel_chunks(s, p.batches, threads, [&](std::int64_t b0, std::int64_t b1) { for_batches(p, lb, rb, ob, b0, b1, one); });
  else
    for_batches(p, lb, rb, ob, 0, p.batches, one);
  if (p.pack_out) axpby(s, Scalar(alpha), op, Scalar(beta), out);
}

template <class T> T scalar_as(const Scalar& v, std::string_view op, const char* what) {
  if constexpr (!is_complex_v<T>)
    if (v.kind() == Scalar::Kind::complex && v.to<c128>().imag() != 0)
      throw ArgumentError(op, std::string(what) + " " + v.to_string() + " is complex but the result dtype is real");
  return v.to<T>();
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

// Note [dot fast path]
// Matrix·matrix and matrix·vector products of rank-2 (or rank-1) operands without batch
// axes skip the general analysis (~1 µs of bookkeeping): a handful of checks decide
// between the small loop and one direct BLAS call. Anything unusual (mixed dtypes,
// packing needed, overlap, any error) returns false and the general path runs, which
// validates fully and throws.
// With `small_only`, only the small (no BLAS, no allocation, no session use) branch runs;
// the function then is safe on pool workers (grouped_gemm).
template <class T>
bool dot_fast(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, Tensor& result, const Scalar& alpha,
              const Scalar& beta, bool small_only, bool dry_run) {
  const int lr = lhs.rank(), rr = rhs.rank();
  const std::int64_t cl = dims.lhs_contracting[0], cr = dims.rhs_contracting[0];
  if (cl < 0 || cl >= lr || cr < 0 || cr >= rr) return false;
  const std::int64_t M = lr == 2 ? lhs.extent(static_cast<int>(1 - cl)) : 1, lm = lr == 2 ? lhs.stride(static_cast<int>(1 - cl)) : 0;
  const std::int64_t N = rr == 2 ? rhs.extent(static_cast<int>(1 - cr)) : 1, rn = rr == 2 ? rhs.stride(static_cast<int>(1 - cr)) : 0;
  const std::int64_t K = lhs.extent(static_cast<int>(cl)), lk = lhs.stride(static_cast<int>(cl)), rk = rhs.stride(static_cast<int>(cr));
  if (rhs.extent(static_cast<int>(cr)) != K || K == 0 || M == 0 || N == 0) return false;
  const int orank = (lr - 1) + (rr - 1);
  std::int64_t om = 0, on = 0;
  if (out) {
    if (out->rank() != orank || out->read_only()) return false;
    int q = 0;
    if (lr == 2) {
      if (out->extent(q) != M) return false;
      om = out->stride(q++);
    }
    if (rr == 2) {
      if (out->extent(q) != N) return false;
      on = out->stride(q);
    }
    // Self-overlap (two indices on one element): the general path rejects it.
    const std::int64_t am = std::llabs(om), an = std::llabs(on);
    if ((M > 1 && am == 0) || (N > 1 && an == 0)) return false;
    if (M > 1 && N > 1 && !(am <= an ? (M - 1) * am < an : (N - 1) * an < am)) return false;
    if (out->shares_storage(lhs) || out->shares_storage(rhs)) return false;
    if (alpha.kind() == Scalar::Kind::complex || beta.kind() == Scalar::Kind::complex)
      if (!is_complex_v<T>) return false;
  }
  const T a = alpha.to<T>(), b = out ? beta.to<T>() : T(0);
  const bool cj_l = dims.conj_lhs && is_complex_v<T>, cj_r = dims.conj_rhs && is_complex_v<T>;
  const bool small = M <= 64 && N <= 64 && K <= 64 && M * N * K <= 4096;
  if (small_only && (!small || !out)) return false;
  if (dry_run) return true;
  if (!small) {
    Mat ma{M, K, lm, lk, cj_l}, mb{K, N, rk, rn, cj_r};
    const std::int64_t om_b = out ? om : 1, on_b = out ? on : M;
    if (!writable_by_blas(M, N, om_b, on_b) || !blas_compatible(M, K, lm, lk, cj_l) || !blas_compatible(K, N, rk, rn, cj_r)) return false;
    auto fits = [](std::int64_t v) { return v >= 0 && v <= INT32_MAX; };
    if (!fits(M) || !fits(N) || !fits(K) || !fits(lm) || !fits(lk) || !fits(rk) || !fits(rn) || !fits(om_b) || !fits(on_b)) return false;
    if (!out) {
      const std::int64_t shape[2] = {lr == 2 ? M : N, N};
      result = Tensor::empty(std::span<const std::int64_t>(shape, static_cast<std::size_t>(orank)), dtype_of<T>);
    }
    T* O = static_cast<T*>(const_cast<void*>((out ? *out : result).data()));
    blas::set_threads(s.num_threads());
    blas_product<T>(false, ma, static_cast<const T*>(lhs.data()), mb, static_cast<const T*>(rhs.data()), Mat{M, N, om_b, on_b, false}, O, a, b);
    return true;
  }
  if (!out) {
    const std::int64_t shape[2] = {lr == 2 ? M : N, N};
    result = Tensor::empty(std::span<const std::int64_t>(shape, static_cast<std::size_t>(orank)), dtype_of<T>);
    om = 1;
    on = lr == 2 ? M : 1;
  }
  T* O = static_cast<T*>(const_cast<void*>((out ? *out : result).data()));
  const T* L = static_cast<const T*>(lhs.data());
  const T* R = static_cast<const T*>(rhs.data());
  if (cj_l && cj_r) small_product<T, true, true>(M, N, K, L, lm, lk, R, rk, rn, O, om, on, a, b);
  else if (cj_l) small_product<T, true, false>(M, N, K, L, lm, lk, R, rk, rn, O, om, on, a, b);
  else if (cj_r) small_product<T, false, true>(M, N, K, L, lm, lk, R, rk, rn, O, om, on, a, b);
  else small_product<T, false, false>(M, N, K, L, lm, lk, R, rk, rn, O, om, on, a, b);
  return true;
}

bool try_dot_fast(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, Tensor& result, const Scalar& alpha,
                  const Scalar& beta, bool small_only = false, bool dry_run = false) {
  if (!lhs.defined() || !rhs.defined() || (out && !out->defined())) return false;
  if (lhs.dtype() != rhs.dtype() || !is_inexact(lhs.dtype()) || (out && out->dtype() != lhs.dtype())) return false;
  if (lhs.rank() < 1 || lhs.rank() > 2 || rhs.rank() < 1 || rhs.rank() > 2 || !dims.lhs_batch.empty() || !dims.rhs_batch.empty() ||
      dims.lhs_contracting.size() != 1 || dims.rhs_contracting.size() != 1)
    return false;
  if (lhs.device().kind != DeviceKind::cpu || rhs.device().kind != DeviceKind::cpu || (out && out->device().kind != DeviceKind::cpu)) return false;
  switch (lhs.dtype()) {
    case DType::f32: return dot_fast<float>(s, lhs, rhs, dims, out, result, alpha, beta, small_only, dry_run);
    case DType::f64: return dot_fast<double>(s, lhs, rhs, dims, out, result, alpha, beta, small_only, dry_run);
    case DType::c64: return dot_fast<c64>(s, lhs, rhs, dims, out, result, alpha, beta, small_only, dry_run);
    case DType::c128: return dot_fast<c128>(s, lhs, rhs, dims, out, result, alpha, beta, small_only, dry_run);
    default: return false;
  }
}

void dot_impl(Session& s, std::string_view op, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, Tensor& result,
              const Scalar& alpha, const Scalar& beta) {
  s.check(op);
  if (try_dot_fast(s, lhs, rhs, dims, out, result, alpha, beta)) return;
  CpuResources& res = *cpu_context(s).resources;
  DotPlan local;
  const DotPlan* plan = nullptr;
  Dims out_shape;
  std::int64_t key[160];
  std::uint64_t hash = 0;
  // Rank-2 (and lower) products analyze faster than a cache lookup costs.
  const bool cacheable = lhs.rank() + rhs.rank() > 4;
  const int len = cacheable && lhs.defined() && rhs.defined() && (!out || out->defined()) ? dot_cache_key(lhs, rhs, dims, out, key, 160, hash) : 0;
  if (len) plan = res.dot_plans.find(key, len, hash);
  if (plan) {  // same key: the same validation outcome except the pointer-dependent checks
    require_cpu_tensor(lhs, op, "lhs");
    require_cpu_tensor(rhs, op, "rhs");
    if (out) {
      require_cpu_tensor(*out, op, "out");
      check_overlap(*out, lhs, op, false);
      check_overlap(*out, rhs, op, false);
    } else {
      for (int i = 0; i < plan->nm; ++i) out_shape.push_back(plan->mext[i]);
      for (int i = 0; i < plan->nn; ++i) out_shape.push_back(plan->next[i]);
      for (int i = 0; i < plan->nb; ++i) out_shape.push_back(plan->bext[i]);
    }
  } else {
    analyze_dot(op, lhs, rhs, dims, out, local, out_shape);
    if (len) res.dot_plans.insert(key, len, hash, DotPlan(local));
    plan = &local;
  }
  const DotPlan& p = *plan;
  visit_dtype<DTypeSet::inexact>(op, p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = scalar_as<T>(alpha, op, "alpha"), b = scalar_as<T>(beta, op, "beta");
    if (!out) result = Tensor::empty(out_shape.span(), p.dtype);
    const Tensor& o = out ? *out : result;
    if (p.kernel == DotKernel::empty) {
      if (p.K == 0 && o.numel() > 0) scale_out(s, o, out ? beta : Scalar(0.0));
      return;
    }
    if (p.kernel == DotKernel::small) {
      const T* L = static_cast<const T*>(lhs.data());
      const T* R = static_cast<const T*>(rhs.data());
      T* O = static_cast<T*>(const_cast<void*>(o.data()));
      const T bb = out ? b : T(0);
      if (p.conj_l && p.conj_r) small_kernel<T, true, true>(s, p, L, R, O, a, bb);
      else if (p.conj_l) small_kernel<T, true, false>(s, p, L, R, O, a, bb);
      else if (p.conj_r) small_kernel<T, false, true>(s, p, L, R, O, a, bb);
      else small_kernel<T, false, false>(s, p, L, R, O, a, bb);
      return;
    }
    blas_kernel<T>(s, p, lhs, rhs, o, a, out ? b : T(0));
  });
}

DotDims matmul_dims(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ArgumentError("matmul", "operand is undefined");
  if (a.rank() < 1 || b.rank() < 1)
    throw RankError("matmul", "operands need rank >= 1, got " + std::to_string(a.rank()) + " and " + std::to_string(b.rank()));
  DotDims d;
  d.lhs_contracting = {a.rank() == 1 ? 0 : 1};
  d.rhs_contracting = {0};
  if (a.rank() > 2 && b.rank() > 2) {
    if (a.rank() != b.rank())
      throw RankError("matmul", "batch ranks differ: " + a.shape().to_string() + " and " + b.shape().to_string());
    for (int i = 2; i < a.rank(); ++i) {
      d.lhs_batch.push_back(i);
      d.rhs_batch.push_back(i);
    }
  }
  return d;
}

}  // namespace
}  // namespace detail

Tensor dot_general(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims) {
  Tensor r;
  detail::dot_impl(s, "dot_general", lhs, rhs, dims, nullptr, r, Scalar(1.0), Scalar(0.0));
  return r;
}

void dot_general_into(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor& out, Scalar alpha, Scalar beta) {
  Tensor r;
  detail::dot_impl(s, "dot_general", lhs, rhs, dims, &out, r, alpha, beta);
}

Tensor matmul(Session& s, const Tensor& a, const Tensor& b) {
  Tensor r;
  detail::dot_impl(s, "matmul", a, b, detail::matmul_dims(a, b), nullptr, r, Scalar(1.0), Scalar(0.0));
  return r;
}

void matmul_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out, Scalar alpha, Scalar beta) {
  Tensor r;
  detail::dot_impl(s, "matmul", a, b, detail::matmul_dims(a, b), &out, r, alpha, beta);
}

void grouped_gemm(Session& s, std::span<const GemmItem> items) {
  constexpr std::string_view op = "grouped_gemm";
  s.check(op);
  // 1. Validate every item before computing any (the general analysis, which throws).
  std::vector<std::pair<const char*, const char*>> written;
  written.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const GemmItem& it = items[i];
    const std::string name = "grouped_gemm item " + std::to_string(i);
    if (!it.a || !it.b || !it.c) throw ArgumentError(name, "a, b and c must all be given");
    for (const Tensor* t : {it.a, it.b, it.c})
      if (t->defined() && t->rank() != 2) throw RankError(name, "operands must be matrices, got " + detail::describe(*t));
    detail::DotPlan plan;
    Dims shape;
    const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
    detail::analyze_dot(name, *it.a, *it.b, dims, it.c, plan, shape);
    if (!is_complex(plan.dtype))
      for (const Scalar* v : {&it.alpha, &it.beta})
        if (v->kind() == Scalar::Kind::complex && v->to<c128>().imag() != 0)
          throw ArgumentError(name, "alpha/beta " + v->to_string() + " is complex but c is real");
    const char* base = static_cast<const char*>(it.c->data());
    if (it.c->numel() > 0) {
      const auto [lo, hi] = detail::offset_range(it.c->shape(), it.c->strides(), name);
      const auto es = static_cast<std::int64_t>(dtype_size(it.c->dtype()));
      written.emplace_back(base + lo * es, base + (hi + 1) * es);
    }
  }
  // 2. Outputs must be disjoint from each other and from every operand.
  std::sort(written.begin(), written.end());
  for (std::size_t i = 1; i < written.size(); ++i)
    if (written[i].first < written[i - 1].second) throw ArgumentError(op, "two items write overlapping c tensors");
  for (const GemmItem& it : items)
    for (const Tensor* t : {it.a, it.b}) {
      if (t->numel() == 0) continue;
      const auto [lo, hi] = detail::offset_range(t->shape(), t->strides(), op);
      const auto es = static_cast<std::int64_t>(dtype_size(t->dtype()));
      const char* b = static_cast<const char*>(t->data());
      const std::pair<const char*, const char*> r{b + lo * es, b + (hi + 1) * es};
      auto at = std::upper_bound(written.begin(), written.end(), std::make_pair(r.second, r.second));
      if (at != written.begin() && std::prev(at)->second > r.first) throw ArgumentError(op, "a c tensor overlaps an operand of some item");
    }
  // 3. Run. When every item takes the small path, items split across the session's
  // threads (that path touches no session state); otherwise they run in order.
  Tensor unused;
  bool all_small = true;
  std::int64_t work = 0;
  for (const GemmItem& it : items) {
    const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
    all_small = all_small && detail::try_dot_fast(s, *it.a, *it.b, dims, it.c, unused, it.alpha, it.beta, true, true);
    work += 2 * it.a->numel() * (it.b->rank() == 2 ? it.b->extent(1) : 1);
  }
  const auto n = static_cast<std::int64_t>(items.size());
  const int threads = all_small ? detail::fork_threads(s, n, n ? work / n + 8 : 1) : 1;
  auto run = [&](std::int64_t b, std::int64_t e) {
    Tensor r;
    for (std::int64_t i = b; i < e; ++i) {
      const GemmItem& it = items[static_cast<std::size_t>(i)];
      const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
      if (threads > 1) detail::try_dot_fast(s, *it.a, *it.b, dims, it.c, r, it.alpha, it.beta, true, false);
      else detail::dot_impl(s, op, *it.a, *it.b, dims, it.c, r, it.alpha, it.beta);
    }
  };
  if (threads > 1) detail::parallel_chunks(s, n, threads, run);
  else run(0, n);
}

PlanCacheStats dot_plan_cache_stats(Session& s) {
  s.check("dot_plan_cache_stats");
  return detail::cpu_context(s).resources->dot_plans.stats();
}

}  // namespace tenferro
