#pragma once
// Reduction kernels shared by the reduction ops (reduce.cpp) and BLAS-1 (blas1.cpp):
// accumulation traits per op, line kernels with independent lanes, fixed blocking for
// full reductions, and the value-reduction driver over LoopPlan (the arg-reduction
// driver, used by argmax/argmin only, lives in reduce.cpp).
//
// Note [Reduction loop order]
// The iteration space is x's shape. The output enters the plan with byte stride 0 on
// every reduced axis (PyTorch's TensorIterator trick), so each inner line is either
//   - a reduction into one output element (out stride 0 along the line): reduce_line,
//     which folds the line pairwise into 8 independent lanes, or
//   - an accumulation of a vector into the output (out stride != 0): accum_line,
//     out[j] = combine(out[j], x[j]), after the output was set to the identity.
// Value reductions give x to LoopPlan as operand 0, so axes sort by x's strides and the
// inner line walks x's smallest stride: a column-major [M, N] summed over axis 1 runs
// as N contiguous vector accumulations out[0:M] += x[:, j] instead of M strided scans.
// When that inner line would be a short accumulation (extent < kMinVectorLine, e.g.
// [2, 10^6] over axis 1) the per-line cost dominates, so the plan is rebuilt with the
// output as operand 0, which puts the reduced axes inner (strided scalar lines).
// Arg reductions (reduce.cpp) need a best value beside each output's index, so they
// either put the output first (each output's reduced elements are then consecutive in
// the plan's linear order and the best (value, index) lives in locals) or, when x's
// innermost axis is kept, walk tiles of up to 2048 outputs along it with the bests in
// stack arrays (reduce_arg_tiled). Neither needs a heap scratch buffer.
//
// Note [Deterministic reductions]
// Results never depend on the thread count:
//   - several outputs: threads split a kept plan axis; every output element is reduced
//     by one thread, through the same lines in the same order as the serial run (the
//     split copies the full plan and narrows one axis: no re-sorting or re-merging);
//   - one output (full reduction): the linear iteration range is cut into blocks whose
//     size depends only on the element count (kReduceBlock, at most kMaxReduceBlocks
//     blocks); each block yields a partial and the partials are combined in a fixed
//     pairwise tree. The serial path uses the same blocks.
// Floats accumulate in their own precision (f32 in f32), so the two modes (scalar lines,
// vector accumulation) share one accumulator type. Scalar lines and block partials are
// combined pairwise (lane_fold_range), so a contiguous or full reduction loses O(log n)
// ulps. A vector accumulation that adds more than kAccumBlock lines into the same
// outputs is pairwise too (Note [Pairwise vector accumulation]); NumPy adds one line at
// a time there (O(lines) ulps: 1e-2 relative for f32 sums of 1e6 lines of 0.1).
#include "core/internal_check.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>

#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

// ------------------------------------------------------------------ element helpers

/// Accumulator of integer arithmetic that must wrap: unsigned of the same width (signed
/// overflow is undefined behaviour; unsigned wraps, and C++20 defines the conversion
/// back). bool sums and products count in u64 (their result is i64). Other types map to
/// themselves.
template <class T> struct wrap_acc { using type = T; };
template <> struct wrap_acc<bool> { using type = std::uint64_t; };
template <> struct wrap_acc<std::int32_t> { using type = std::uint32_t; };
template <> struct wrap_acc<std::int64_t> { using type = std::uint64_t; };
/// See wrap_acc.
template <class T> using wrap_acc_t = typename wrap_acc<T>::type;

/// -0 for floats and complex (x + -0 == x for every x, -0 included, so a sum of one
/// element is that element bit for bit), 0 for integers.
template <class T> constexpr T additive_identity() noexcept {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(-R(0), -R(0));
  } else if constexpr (std::is_floating_point_v<T>) {
    return -T(0);
  } else {
    return T(0);
  }
}

/// NaN of a float or complex type (both parts NaN).
template <class T> T quiet_nan() noexcept {
  using R = real_t<T>;
  if constexpr (is_complex_v<T>) return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  else return std::numeric_limits<R>::quiet_NaN();
}

/// |z|^2 written out (std::norm may go through abs()).
template <class T> real_t<T> abs_squared(T z) noexcept {
  if constexpr (is_complex_v<T>) return z.real() * z.real() + z.imag() * z.imag();
  else return z * z;
}

// ------------------------------------------------------------------ traits
// Each reduction is described by: In (element type of x), Acc (accumulator), Out
// (element type of the result), identity() (lane start), empty() (result of an empty
// reduction), load(In) → Acc, combine(Acc, Acc), from_out(Out) → Acc and store(Acc) →
// Out (to accumulate in the output), finish(Out, count) (mean divides), kCost
// (element-ops per element for the fork cost model).

/// sum: bool → i64, integers wrap, floats and complex in their own precision.
template <class T> struct SumTraits {
  using In = T;
  using Acc = wrap_acc_t<T>;
  using Out = std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>;
  static constexpr std::int64_t kCost = is_complex_v<T> ? 2 : 1;
  static constexpr bool kFinish = false;
  /// Whether combine rounds (the order of combination changes the result).
  static constexpr bool kRounds = std::is_floating_point_v<real_t<Acc>>;
  static Acc identity() noexcept { return additive_identity<Acc>(); }
  static Out empty() noexcept { return Out(0); }
  static Acc load(In x) noexcept { return static_cast<Acc>(x); }
  static Acc combine(Acc a, Acc b) noexcept { return a + b; }
  static Acc from_out(Out o) noexcept { return static_cast<Acc>(o); }
  static Out store(Acc a) noexcept { return static_cast<Out>(a); }
  static Out finish(Out o, std::int64_t) noexcept { return o; }
};

/// prod: as sum, with 1 and *.
template <class T> struct ProdTraits : SumTraits<T> {
  using typename SumTraits<T>::Acc;
  using typename SumTraits<T>::Out;
  static constexpr std::int64_t kCost = is_complex_v<T> ? 8 : 1;
  static Acc identity() noexcept { return Acc(1); }
  static Out empty() noexcept { return Out(1); }
  static Acc combine(Acc a, Acc b) noexcept { return a * b; }
};

/// max (Max) or min: NaN propagates; bool max is "any", min is "all".
template <class T, bool Max> struct ExtremumTraits {
  using In = T;
  using Acc = T;
  using Out = T;
  static constexpr std::int64_t kCost = 1;
  static constexpr bool kFinish = false;
  static constexpr bool kRounds = false;  // max/min are exact in any order
  static Acc identity() noexcept {
    if constexpr (std::is_same_v<T, bool>) return !Max;
    else if constexpr (std::is_floating_point_v<T>) return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return Max ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
  static Out empty() noexcept { return identity(); }  // unreachable: validation refuses empty max/min
  static Acc load(In x) noexcept { return x; }
  static Acc combine(Acc a, Acc b) noexcept {
    if constexpr (std::is_same_v<T, bool>) return Max ? (a || b) : (a && b);
    else if constexpr (std::is_floating_point_v<T>) return ((Max ? b > a : b < a) || b != b) ? b : a;  // keeps a NaN a
    else return (Max ? b > a : b < a) ? b : a;
  }
  static Acc from_out(Out o) noexcept { return o; }
  static Out store(Acc a) noexcept { return a; }
  static Out finish(Out o, std::int64_t) noexcept { return o; }
};

/// mean: integers and bool accumulate and answer in f64; floats and complex in their own
/// precision; the sum is divided by the count at the end. Empty → NaN.
template <class T> struct MeanTraits {
  using In = T;
  using Acc = std::conditional_t<std::is_floating_point_v<T> || is_complex_v<T>, T, double>;
  using Out = Acc;
  static constexpr std::int64_t kCost = is_complex_v<T> ? 2 : 1;
  static constexpr bool kFinish = true;
  static constexpr bool kRounds = true;
  static Acc identity() noexcept { return additive_identity<Acc>(); }
  static Out empty() noexcept { return quiet_nan<Out>(); }
  static Acc load(In x) noexcept { return static_cast<Acc>(x); }
  static Acc combine(Acc a, Acc b) noexcept { return a + b; }
  static Acc from_out(Out o) noexcept { return o; }
  static Out store(Acc a) noexcept { return a; }
  static Out finish(Out o, std::int64_t n) noexcept { return o / static_cast<real_t<Out>>(n); }
};

/// sum_squares: sum of |x|^2; complex → real of the same precision; integers keep their
/// dtype and wrap (as sum does).
template <class T> struct SumSquaresTraits {
  using In = T;
  using Acc = wrap_acc_t<real_t<T>>;
  using Out = real_t<T>;
  static constexpr std::int64_t kCost = 2;
  static constexpr bool kFinish = false;
  static constexpr bool kRounds = std::is_floating_point_v<Acc>;
  static Acc identity() noexcept { return Acc(0); }
  static Out empty() noexcept { return Out(0); }
  static Acc load(In x) noexcept {
    if constexpr (std::is_integral_v<T>) return static_cast<Acc>(x) * static_cast<Acc>(x);
    else return abs_squared(x);
  }
  static Acc combine(Acc a, Acc b) noexcept { return a + b; }
  static Acc from_out(Out o) noexcept { return static_cast<Acc>(o); }
  static Out store(Acc a) noexcept { return static_cast<Out>(a); }
  static Out finish(Out o, std::int64_t) noexcept { return o; }
};

/// norm_squared: sum of |x|^2 as a real; integers answer in f64 (their squares would
/// overflow), floats and complex in their own precision.
template <class T> struct NormSquaredTraits {
  using In = T;
  using Acc = std::conditional_t<std::is_integral_v<T>, double, real_t<T>>;
  using Out = Acc;
  static constexpr std::int64_t kCost = 2;
  static constexpr bool kFinish = false;
  static constexpr bool kRounds = true;
  static Acc identity() noexcept { return Acc(0); }
  static Out empty() noexcept { return Out(0); }
  static Acc load(In x) noexcept { return abs_squared(static_cast<std::conditional_t<std::is_integral_v<T>, double, T>>(x)); }
  static Acc combine(Acc a, Acc b) noexcept { return a + b; }
  static Acc from_out(Out o) noexcept { return o; }
  static Out store(Acc a) noexcept { return a; }
  static Out finish(Out o, std::int64_t) noexcept { return o; }
};

// ------------------------------------------------------------------ line kernels

/// Lanes of a scalar line reduction (8 doubles = two AVX registers, four SSE ones).
inline constexpr int kLanes = 8;
/// Longest stretch folded by one set of lanes; longer lines split in halves (pairwise).
/// NumPy uses 128; 256 halves the per-leaf overhead (f64 sum of 16k elements in L1/L2:
/// 0.38 → 0.22 ns per element on the EPYC dev box) at no measurable cost in accuracy.
inline constexpr std::int64_t kPairwiseBlock = 256;
/// Shortest inner vector-accumulation line worth keeping (Note [Reduction loop order]).
inline constexpr std::int64_t kMinVectorLine = 8;

/// Folds term(b), ..., term(e-1) by NumPy's pairwise summation (pairwise_sum in
/// numpy/core/src/umath/loops_utils.h): stretches of up to kPairwiseBlock elements go
/// to kLanes independent accumulators (element i to lane (i - b) % kLanes, a tail
/// shorter than kLanes to lane 0), lanes combine in a fixed tree, and longer ranges split in two halves (at a
/// multiple of kLanes) whose results combine. Independent lanes let the compiler keep
/// partial results in vector registers without reassociating floats (no -ffast-math);
/// the halving makes rounding error grow with log(n) instead of n. The split points
/// depend only on (b, e), so the result is a fixed function of the line.
template <class Acc, class Combine, class Term>
Acc lane_fold_range(std::int64_t b, std::int64_t e, const Acc& identity, const Combine& combine, const Term& term) {
  const std::int64_t n = e - b;
  if (n < kLanes) {
    Acc a = identity;
    for (std::int64_t i = b; i < e; ++i) a = combine(a, term(i));
    return a;
  }
  if (n > kPairwiseBlock) {
    const std::int64_t m = b + n / 2 / kLanes * kLanes;
    // Left half first (named, not as two call arguments, whose order is unspecified: GCC
    // evaluates right to left, and walking memory backwards defeats the prefetcher).
    const Acc left = lane_fold_range(b, m, identity, combine, term);
    return combine(left, lane_fold_range(m, e, identity, combine, term));
  }
  Acc acc[kLanes];
  for (int l = 0; l < kLanes; ++l) acc[l] = identity;
  std::int64_t i = b;
  for (; i + kLanes <= e; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = combine(acc[l], term(i + l));
  // The tail goes to lane 0: constant lane indices let the compiler keep the lanes in
  // registers (a variable index forces them through the stack on every call).
  for (; i < e; ++i) acc[0] = combine(acc[0], term(i));
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] = combine(acc[l], acc[l + w]);
  return acc[0];
}

/// lane_fold_range over [0, n).
template <class Acc, class Combine, class Term>
inline Acc lane_fold(std::int64_t n, Acc identity, Combine combine, Term term) {
  return lane_fold_range(std::int64_t{0}, n, identity, combine, term);
}

/// Reduces n elements of x starting at `p`, `stride` bytes apart.
template <class Tr> typename Tr::Acc reduce_line(const char* p, std::int64_t stride, std::int64_t n) {
  using In = typename Tr::In;
  auto combine = [](typename Tr::Acc a, typename Tr::Acc b) { return Tr::combine(a, b); };
  if (stride == static_cast<std::int64_t>(sizeof(In))) {  // contiguous: the vectorizable case
    const In* x = reinterpret_cast<const In*>(p);
    return lane_fold(n, Tr::identity(), combine, [x](std::int64_t i) { return Tr::load(x[i]); });
  }
  return lane_fold(n, Tr::identity(), combine,
                   [p, stride](std::int64_t i) { return Tr::load(*reinterpret_cast<const In*>(p + i * stride)); });
}

/// out[j] = combine(out[j], load(x[j])) for n elements (strides in bytes; outputs are
/// distinct elements, validated non-overlapping and disjoint from x).
template <class Tr> void accum_line(char* o, std::int64_t os, const char* p, std::int64_t xs, std::int64_t n) {
  using In = typename Tr::In;
  using Out = typename Tr::Out;
  if (os == static_cast<std::int64_t>(sizeof(Out)) && xs == static_cast<std::int64_t>(sizeof(In))) {
    Out* __restrict out = reinterpret_cast<Out*>(o);
    const In* __restrict x = reinterpret_cast<const In*>(p);
    for (std::int64_t j = 0; j < n; ++j) out[j] = Tr::store(Tr::combine(Tr::from_out(out[j]), Tr::load(x[j])));
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    Out& y = *reinterpret_cast<Out*>(o + j * os);
    y = Tr::store(Tr::combine(Tr::from_out(y), Tr::load(*reinterpret_cast<const In*>(p + j * xs))));
  }
}

// ------------------------------------------------------------------ drivers

/// Elements per block of a full reduction (Note [Deterministic reductions]).
inline constexpr std::int64_t kReduceBlock = std::int64_t{1} << 14;
/// Most blocks of a full reduction (their partials sit in a stack array).
inline constexpr std::int64_t kMaxReduceBlocks = 1024;

/// Reduces [0, n) as fixed blocks: block(begin, end) → partial, partials combined in a
/// fixed pairwise tree. Block boundaries depend only on n; blocks run in parallel when
/// the cost model says so. Returns `identity` for n == 0. No heap allocation when it
/// runs inline.
template <class Acc, class Combine, class Block>
Acc blocked_reduce(const Session& s, std::int64_t n, std::int64_t cost, Acc identity, Combine combine, Block block) {
  if (n <= 0) return identity;
  const std::int64_t bs = std::max(kReduceBlock, (n + kMaxReduceBlocks - 1) / kMaxReduceBlocks);
  const std::int64_t nb = (n + bs - 1) / bs;
  if (nb == 1) return block(std::int64_t{0}, n);
  Acc partial[kMaxReduceBlocks];
  parallel_for(s, nb, bs * cost, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = b; k < e; ++k) partial[k] = block(k * bs, std::min(n, (k + 1) * bs));
  });
  // Combine the partials pairwise too (fixed tree over the block index).
  for (std::int64_t w = 1; w < nb; w *= 2)
    for (std::int64_t k = 0; k + w < nb; k += 2 * w) partial[k] = combine(partial[k], partial[k + w]);
  return partial[0];
}

/// Shape of a reduction: x's extents and byte strides, out's byte strides mapped onto
/// x's axes (0 on reduced axes), the reduced element count and the output count.
struct ReduceGeometry {
  int rank = 0;
  std::int64_t ext[kMaxRank];
  std::int64_t xs[kMaxRank];
  std::int64_t os[kMaxRank];
  std::int64_t reduced = 1;
  std::int64_t outputs = 1;
};

/// Fills `g` for reducing `x` over `mask` into `out` (validated: out has the reduced
/// shape, with or without the kept extent-1 axes).
inline void make_geometry(const Tensor& x, const Tensor& out, std::uint64_t mask, ReduceGeometry& g) noexcept {
  const int r = x.rank();
  const bool keepdims = out.rank() == r;
  const auto oes = static_cast<std::int64_t>(dtype_size(out.dtype()));
  g.rank = r;
  g.reduced = 1;
  g.outputs = 1;
  broadcast_byte_strides(x, r, g.xs);
  for (int i = 0, j = 0; i < r; ++i) {
    g.ext[i] = x.extent(i);
    if (mask >> i & 1) {
      g.os[i] = 0;
      g.reduced *= g.ext[i];
      if (keepdims) ++j;
    } else {
      g.os[i] = out.stride(j++) * oes;
      g.outputs *= g.ext[i];
    }
  }
}

/// Calls f(Out&) on every element of `out` (any layout), in parallel when large.
template <class Out, class F> void for_each_output(const Session& s, const Tensor& out, F f) {
  const int r = out.rank();
  std::int64_t ext[kMaxRank], str[kMaxRank];
  const auto es = static_cast<std::int64_t>(sizeof(Out));
  for (int i = 0; i < r; ++i) {
    ext[i] = out.extent(i);
    str[i] = out.stride(i) * es;
  }
  LoopPlan<1> plan;
  const std::int64_t* strides[1] = {str};
  char* ptrs[1] = {static_cast<char*>(out.mutable_data())};
  plan.build(r, ext, strides, ptrs);
  parallel_for(s, plan.numel, 1, [&](std::int64_t b, std::int64_t e) {
    plan.run(b, e, [&](char** p, const std::int64_t* inner, std::int64_t n) {
      for (std::int64_t j = 0; j < n; ++j) f(*reinterpret_cast<Out*>(p[0] + j * inner[0]));
    });
  });
}

// Note [Pairwise vector accumulation]
// A value reduction whose inner plan line is a kept axis (out[0:M] += x[0:M, r], Note
// [Reduction loop order]) adds its R reduced lines one at a time: for a rounding
// combine (float sums, means, sums of squares, products) the error grows with R (f32
// sum over an outer axis of 1e6 lines of 0.1: 1e-2 relative). When R > kAccumBlock the
// reduction runs instead as independent tiles: a tile is up to kAccumTile consecutive
// elements of the inner kept axis at one position of the outer kept axes, and its R
// reduced lines are folded pairwise: leaves of kAccumBlock lines accumulate in a stack
// array, and ranges longer than that split in halves at a multiple of kAccumBlock whose
// results combine (lane_fold_range's scheme with a vector of outputs as the lane). The
// error is O(kAccumBlock + log R) ulps, the scratch one tile per halving level on the
// stack up to 2 KiB, else on the heap (once per thread chunk). Tiles are at most 64 KiB
// of accumulators, so each line's slice is a long contiguous run and x streams as
// before (4 KiB tiles of a [1e5, 300] f32 were 1.5x slower: a page per slice). Each
// output is reduced by one thread in a fixed order, so results do not depend on the
// thread count. Smaller R keeps the one-line-at-a-time path (at most kAccumBlock
// additions in a row). Measured on 2 shared (busy) cores, best of 20, before → after:
// f32 [8, 1e6] over axis 1 6.7 → 3.3 ms, relative error 1.7e-5 → 5.7e-8 (uniform
// [0, 1)) and 9.6e-3 → 1e-6 (all 0.1); [64, 1e5] 7.4 → 0.9 ms; [1e5, 300] unchanged
// within noise; [64, 200] 1.52 → 1.56 us, 35.5k → 32.2k instructions per call
// (callgrind).

/// Longest run of lines added one at a time into the same outputs.
inline constexpr std::int64_t kAccumBlock = 128;

/// The reduced axes of a plan (out stride 0) and the kept outer axes (axis 0 excluded),
/// for run_pairwise_accumulation.
struct AccumAxes {
  int nred = 0, nkept = 0;
  std::int64_t red_ext[kMaxRank], red_str[kMaxRank];  ///< x byte strides
  std::int64_t kept_ext[kMaxRank], kept_xs[kMaxRank], kept_os[kMaxRank];
  std::int64_t reduced = 1, kept = 1;
};

/// Folds reduced lines [b, e) of one tile (w elements at x byte offset `xp`, x inner
/// byte stride xs0) pairwise into acc[0:w]; scratch holds one row of accumulators per
/// halving level below this one, `ws` (>= w, 64-byte multiple) apart (Note [Pairwise
/// vector accumulation]).
template <class Tr>
void fold_tile(const AccumAxes& ax, const char* xp, std::int64_t xs0, std::int64_t w, std::int64_t ws, std::int64_t b,
               std::int64_t e, typename Tr::Acc* acc, typename Tr::Acc* scratch) {
  using In = typename Tr::In;
  if (e - b > kAccumBlock) {
    const std::int64_t m = b + std::max(kAccumBlock, (e - b) / 2 / kAccumBlock * kAccumBlock);
    fold_tile<Tr>(ax, xp, xs0, w, ws, b, m, acc, scratch);  // left first: its levels are free again after
    fold_tile<Tr>(ax, xp, xs0, w, ws, m, e, scratch, scratch + ws);
    for (std::int64_t j = 0; j < w; ++j) acc[j] = Tr::combine(acc[j], scratch[j]);
    return;
  }
  for (std::int64_t j = 0; j < w; ++j) acc[j] = Tr::identity();
  // Multi-index of line b over the reduced axes (axis 0 of them fastest), then an odometer.
  std::int64_t idx[kMaxRank], off = 0, rest = b;
  for (int i = 0; i < ax.nred; ++i) {
    idx[i] = rest % ax.red_ext[i];
    rest /= ax.red_ext[i];
    off += idx[i] * ax.red_str[i];
  }
  typename Tr::Acc* __restrict a = acc;  // never aliases x (a stack or heap scratch)
  for (std::int64_t r = b; r < e; ++r) {
    const char* line = xp + off;
    if (xs0 == static_cast<std::int64_t>(sizeof(In))) {
      const In* __restrict x = reinterpret_cast<const In*>(line);
      for (std::int64_t j = 0; j < w; ++j) a[j] = Tr::combine(a[j], Tr::load(x[j]));
    } else {
      for (std::int64_t j = 0; j < w; ++j) a[j] = Tr::combine(a[j], Tr::load(*reinterpret_cast<const In*>(line + j * xs0)));
    }
    for (int i = 0; i < ax.nred; ++i) {
      off += ax.red_str[i];
      if (++idx[i] < ax.red_ext[i]) break;
      off -= ax.red_ext[i] * ax.red_str[i];
      idx[i] = 0;
    }
  }
}

/// Halving levels fold_tile goes through for `n` lines (its right halves are the longer).
inline int accum_levels(std::int64_t n) noexcept {
  int d = 0;
  for (; n > kAccumBlock; ++d) n -= std::max(kAccumBlock, n / 2 / kAccumBlock * kAccumBlock);
  return d;
}

/// The several-output value reduction of `plan` (x operand 0, out operand 1; axis 0 kept)
/// as pairwise-folded tiles (Note [Pairwise vector accumulation]). Writes every output
/// (no identity pre-fill needed).
template <class Tr> void run_pairwise_accumulation(const Session& s, const LoopPlan<2>& plan) {
  using Acc = typename Tr::Acc;
  using Out = typename Tr::Out;
  // Tile width: up to 16 KiB of accumulators, so a tile's slice of each line is a long
  // contiguous run (x streams; a narrow tile of a wide x would stride across pages).
  constexpr std::int64_t kMaxTile = (std::int64_t{64} << 10) / static_cast<std::int64_t>(sizeof(Acc));
  // Accumulators up to 2 KiB (8 outputs over 2^40 lines in f64) live on the stack.
  constexpr std::int64_t kStackAccs = (std::int64_t{2} << 10) / static_cast<std::int64_t>(sizeof(Acc));
  AccumAxes ax;
  for (int i = 1; i < plan.rank; ++i) {
    if (plan.str[i][1] == 0) {
      ax.red_ext[ax.nred] = plan.ext[i];
      ax.red_str[ax.nred++] = plan.str[i][0];
      ax.reduced *= plan.ext[i];
    } else {
      ax.kept_ext[ax.nkept] = plan.ext[i];
      ax.kept_xs[ax.nkept] = plan.str[i][0];
      ax.kept_os[ax.nkept++] = plan.str[i][1];
      ax.kept *= plan.ext[i];
    }
  }
  const std::int64_t m = plan.ext[0], xs0 = plan.str[0][0], os0 = plan.str[0][1];
  const std::int64_t tile = std::min(m, kMaxTile), tiles = (m + tile - 1) / tile;
  // Rows of accumulators start on cache lines: a row written for one line and read for
  // the next must not straddle lines (store forwarding; measured 1.4x on [64, 200]).
  constexpr std::int64_t kLine = 64 / static_cast<std::int64_t>(sizeof(Acc)) > 0 ? 64 / static_cast<std::int64_t>(sizeof(Acc)) : 1;
  const std::int64_t ws = (tile + kLine - 1) / kLine * kLine;
  const std::int64_t accs = ws * (accum_levels(ax.reduced) + 1);
  parallel_for(s, tiles * ax.kept, tile * ax.reduced * Tr::kCost, [&](std::int64_t b, std::int64_t e) {
    alignas(64) Acc stack_buf[kStackAccs];
    struct Free {
      void operator()(Acc* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
    };
    std::unique_ptr<Acc[], Free> heap_buf;
    Acc* buf = stack_buf;
    if (accs > kStackAccs) {
      heap_buf.reset(static_cast<Acc*>(::operator new[](static_cast<std::size_t>(accs) * sizeof(Acc), std::align_val_t{64})));
      buf = heap_buf.get();
    }
    for (std::int64_t item = b; item < e; ++item) {
      const std::int64_t t = item % tiles;
      std::int64_t rest = item / tiles;
      const char* xp = plan.ptr[0] + t * tile * xs0;
      char* op = plan.ptr[1] + t * tile * os0;
      for (int i = 0; i < ax.nkept; ++i) {
        const std::int64_t k = rest % ax.kept_ext[i];
        rest /= ax.kept_ext[i];
        xp += k * ax.kept_xs[i];
        op += k * ax.kept_os[i];
      }
      const std::int64_t w = std::min(tile, m - t * tile);
      fold_tile<Tr>(ax, xp, xs0, w, ws, 0, ax.reduced, buf, buf + ws);
      for (std::int64_t j = 0; j < w; ++j) *reinterpret_cast<Out*>(op + j * os0) = Tr::store(buf[j]);
    }
  });
}

/// Runs a several-output value reduction on `plan` (x is operand XI, out operand 1-XI;
/// out already holds the identity), splitting a kept axis across threads.
template <class Tr, int XI> void run_partial(const Session& s, const LoopPlan<2>& plan) {
  constexpr int OI = 1 - XI;
  using Out = typename Tr::Out;
  auto line = [](char** p, const std::int64_t* inner, std::int64_t n) {
    if (inner[OI] == 0) {
      Out& o = *reinterpret_cast<Out*>(p[OI]);
      o = Tr::store(Tr::combine(Tr::from_out(o), reduce_line<Tr>(p[XI], inner[XI], n)));
    } else {
      accum_line<Tr>(p[OI], inner[OI], p[XI], inner[XI], n);
    }
  };
  // Split the kept axis with the largest extent (outermost on ties).
  int a = -1;
  for (int i = 0; i < plan.rank; ++i)
    if (plan.str[i][OI] != 0 && (a < 0 || plan.ext[i] >= plan.ext[a])) a = i;
  if (a < 0) {
    plan.run(0, plan.numel, line);
    return;
  }
  const std::int64_t per = plan.numel / plan.ext[a];
  parallel_for(s, plan.ext[a], per * Tr::kCost, [&](std::int64_t b, std::int64_t e) {
    if (b == 0 && e == plan.ext[a]) {
      plan.run(0, plan.numel, line);
      return;
    }
    LoopPlan<2> sub = plan;  // same axes, strides and merges; one axis narrowed
    sub.ext[a] = e - b;
    sub.numel = per * (e - b);
    for (int k = 0; k < 2; ++k) sub.ptr[k] += b * plan.str[a][k];
    sub.run(0, sub.numel, line);
  });
}

/// Value reduction of `x` over `mask` into `out` (validated; Tr::Out is out's dtype).
template <class Tr> void reduce_values(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  using Out = typename Tr::Out;
  using Acc = typename Tr::Acc;
  ReduceGeometry g;
  make_geometry(x, out, mask, g);
  if (g.outputs == 0) return;
  if (g.reduced == 0) {
    for_each_output<Out>(s, out, [](Out& o) { o = Tr::empty(); });
    return;
  }
  char* xp = static_cast<char*>(const_cast<void*>(x.data()));
  char* op = static_cast<char*>(out.mutable_data());
  LoopPlan<2> plan;
  {
    const std::int64_t* strides[2] = {g.xs, g.os};
    char* ptrs[2] = {xp, op};
    plan.build(g.rank, g.ext, strides, ptrs);
  }
  if (g.outputs == 1) {
    auto combine = [](Acc a, Acc b) { return Tr::combine(a, b); };
    const Acc acc = blocked_reduce(s, plan.numel, Tr::kCost, Tr::identity(), combine, [&](std::int64_t b, std::int64_t e) {
      Acc a = Tr::identity();  // combining with the identity is exact (see additive_identity)
      plan.run(b, e, [&](char** p, const std::int64_t* inner, std::int64_t n) {
        a = Tr::combine(a, reduce_line<Tr>(p[0], inner[0], n));
      });
      return a;
    });
    *reinterpret_cast<Out*>(op) = Tr::finish(Tr::store(acc), g.reduced);
    return;
  }
  if constexpr (Tr::kRounds) {
    if (plan.rank > 0 && plan.str[0][1] != 0 && plan.ext[0] >= kMinVectorLine && g.reduced > kAccumBlock) {
      run_pairwise_accumulation<Tr>(s, plan);  // Note [Pairwise vector accumulation]
      if constexpr (Tr::kFinish) for_each_output<Out>(s, out, [n = g.reduced](Out& o) { o = Tr::finish(o, n); });
      return;
    }
  }
  for_each_output<Out>(s, out, [](Out& o) { o = Tr::store(Tr::identity()); });
  if (plan.rank > 0 && plan.str[0][1] != 0 && plan.ext[0] < kMinVectorLine && g.reduced > 1) {
    LoopPlan<2> by_out;  // Note [Reduction loop order]: reduced axes inner
    const std::int64_t* strides[2] = {g.os, g.xs};
    char* ptrs[2] = {op, xp};
    by_out.build(g.rank, g.ext, strides, ptrs);
    run_partial<Tr, 1>(s, by_out);
  } else {
    run_partial<Tr, 0>(s, plan);
  }
  if constexpr (Tr::kFinish) for_each_output<Out>(s, out, [n = g.reduced](Out& o) { o = Tr::finish(o, n); });
}

}  // namespace tenferro::detail
