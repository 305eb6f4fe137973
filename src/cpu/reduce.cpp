// The CPU reduction kernels (cpu/reduce.hpp): sum prod max min mean sum_squares argmax
// argmin logsumexp. They receive validated arguments from the front end
// (src/ops/reduce.cpp, Note [Reductions in the op layer]), dispatch once on x's dtype
// over the op's catalogue set and run a template driver: reduce_values from
// reduce_kernels.hpp, or reduce_arg below (Note [Reduction loop order], Note
// [Deterministic reductions]).
#include "cpu/reduce.hpp"

#include "cpu/reduce_kernels.hpp"

namespace tenferro::cpu {

namespace {

using namespace detail;  // the kernel drivers and helpers (reduce_kernels.hpp)

// ---------------------------------------------------------------- arg reductions
// (Note [Reduction loop order] and Note [Deterministic reductions] in reduce_kernels.hpp.)

/// Best (value, index) so far; index -1 when nothing was seen.
template <class T> struct ArgBest {
  T v{};
  std::int64_t i = -1;
};

/// Whether candidate (v, i) beats the best so far (bv, bi; bi < 0: none) under the
/// total order of argmax (Max) / argmin: NaN beats every number, then larger (smaller)
/// values, then the smaller index. Being a total order, the result does not depend on
/// the order candidates are met in.
template <class T, bool Max> inline bool arg_better(T v, std::int64_t i, T bv, std::int64_t bi) noexcept {
  if (bi < 0) return true;
  if constexpr (std::is_floating_point_v<T>) {
    const bool vn = v != v, bn = bv != bv;
    if (vn || bn) return vn && (!bn || i < bi);
  }
  return (Max ? v > bv : v < bv) || (v == bv && i < bi);
}

/// The better of two candidates (arg_better); an empty one (index -1) never wins.
template <class T, bool Max> ArgBest<T> arg_merge(ArgBest<T> a, ArgBest<T> b) noexcept {
  return b.i >= 0 && arg_better<T, Max>(b.v, b.i, a.v, a.i) ? b : a;
}

/// Best of a line of n elements at `p` (byte stride xs) whose indices are i0 + j * is,
/// is > 0: strict comparison keeps the first occurrence, the first NaN ends the scan.
template <class T, bool Max>
ArgBest<T> arg_scan(const char* p, std::int64_t xs, std::int64_t i0, std::int64_t is, std::int64_t n) noexcept {
  T best = *reinterpret_cast<const T*>(p);
  std::int64_t bj = 0;
  if constexpr (std::is_floating_point_v<T>)
    if (best != best) return {best, i0};
  for (std::int64_t j = 1; j < n; ++j) {
    const T v = *reinterpret_cast<const T*>(p + j * xs);
    if constexpr (std::is_floating_point_v<T>)
      if (v != v) return {v, i0 + j * is};
    if (Max ? v > best : v < best) {
      best = v;
      bj = j;
    }
  }
  return {best, i0 + bj * is};
}

// Note [Index operand]
// argmax answers an index into the reduced axes in column-major order, while the plan
// visits elements in stride order. A third plan operand carries that index: its "byte
// strides" are the column-major index strides of the reduced axes (0 on kept axes), its
// base a fixed non-null address never dereferenced, so ptr - base is the index of the
// element under the cursor. It rides the plan's merging and splitting for free.
/// Base address of the index operand (Note [Index operand]).
char* index_base() noexcept { return reinterpret_cast<char*>(std::uintptr_t{4096}); }
/// Index of the element under the cursor `p` of the index operand.
std::int64_t index_of(const char* p) noexcept {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) - std::uintptr_t{4096});
}

/// Outputs per tile of a tiled arg reduction (their best value and index sit in stack
/// arrays: 32 KiB for f64). Wide tiles keep the hardware prefetcher streaming: with 256
/// the f64 argmax over axis 1 of a [2000, 2000] took about 1.5x as long (dev box, CPU
/// time, 1 thread); the scalar out-first scan it replaces took about 6x as long.
constexpr std::int64_t kArgTile = 2048;

/// Updates the tile's best (bv, bi) with one line of candidates x[j] (byte stride xs),
/// all of index i. Monotone: lines come in increasing index order, so a later candidate
/// wins only if strictly better (first occurrence), NaN only over a number — branch-free
/// selects the compiler can vectorize. Otherwise the full order (arg_better).
template <class T, bool Max, bool Monotone>
void arg_tile_line(T* bv, std::int64_t* bi, const char* x, std::int64_t xs, std::int64_t i, std::int64_t n) noexcept {
  const auto update = [&](std::int64_t j, T v) {
    if constexpr (Monotone) {
      bool take = Max ? v > bv[j] : v < bv[j];
      if constexpr (std::is_floating_point_v<T>) take = take || (v != v && bv[j] == bv[j]);
      bv[j] = take ? v : bv[j];
      bi[j] = take ? i : bi[j];
    } else if (arg_better<T, Max>(v, i, bv[j], bi[j])) {
      bv[j] = v;
      bi[j] = i;
    }
  };
  if (xs == static_cast<std::int64_t>(sizeof(T))) {
    const T* xt = reinterpret_cast<const T*>(x);
    for (std::int64_t j = 0; j < n; ++j) update(j, xt[j]);
  } else {
    for (std::int64_t j = 0; j < n; ++j) update(j, *reinterpret_cast<const T*>(x + j * xs));
  }
}

/// Arg reduction whose x-ordered inner axis is a kept axis of extent >= kMinVectorLine
/// (argmax over axis 1 of a column-major [M, N]): the arg counterpart of accum_line.
/// The outputs along that axis are cut into tiles of kArgTile; for one tile (the other
/// kept axes fixed) every reduced element is visited as a contiguous line over the tile,
/// best (value, index) per output kept in stack arrays, so x is streamed once instead of
/// read with a stride per output. Tiles run in parallel; each output is decided by one
/// tile under a total order, so the result is independent of the thread count. Returns
/// false (nothing done) when the plan does not have that form.
template <class T, bool Max>
bool reduce_arg_tiled(const Session& s, const ReduceGeometry& g, const std::int64_t* is, char* xp, char* op) {
  LoopPlan<3> plan;  // operands: x (sort key), out, index
  {
    const std::int64_t* strides[3] = {g.xs, g.os, is};
    char* ptrs[3] = {xp, op, index_base()};
    plan.build(g.rank, g.ext, strides, ptrs);
  }
  if (plan.rank == 0 || plan.str[0][1] == 0 || plan.ext[0] < kMinVectorLine) return false;
  int kept[kMaxRank];
  int nk = 0;
  std::int64_t combos = 1;
  bool monotone = true;  // reduced axes visited in column-major index order
  std::int64_t last_is = 0;
  for (int a = 1; a < plan.rank; ++a) {
    if (plan.str[a][1] != 0) {
      kept[nk++] = a;
      combos *= plan.ext[a];
    } else {
      monotone = monotone && plan.str[a][2] > last_is;
      last_is = plan.str[a][2];
    }
  }
  const std::int64_t E = plan.ext[0], tiles = (E + kArgTile - 1) / kArgTile;
  parallel_for(s, combos * tiles, g.reduced * std::min(E, kArgTile) * 2, [&](std::int64_t ib, std::int64_t ie) {
    T bv[kArgTile];
    std::int64_t bi[kArgTile];
    for (std::int64_t item = ib; item < ie; ++item) {
      // Narrow the plan to one tile of axis 0 and one index of every other kept axis.
      LoopPlan<3> sub = plan;
      const std::int64_t t0 = item % tiles * kArgTile, w = std::min(kArgTile, E - t0);
      sub.ext[0] = w;
      for (int k = 0; k < 3; ++k) sub.ptr[k] += t0 * plan.str[0][k];
      std::int64_t c = item / tiles;
      for (int q = 0; q < nk; ++q) {
        const int a = kept[q];
        const std::int64_t ia = c % plan.ext[a];
        c /= plan.ext[a];
        sub.ext[a] = 1;
        for (int k = 0; k < 3; ++k) sub.ptr[k] += ia * plan.str[a][k];
      }
      sub.numel = w * g.reduced;
      // Every line runs along the whole tile (axis 0, length w) at one reduced element;
      // the first line initializes the tile.
      bool first = true;
      sub.run(0, sub.numel, [&](char** p, const std::int64_t* inner, std::int64_t n) {
        const std::int64_t i = index_of(p[2]);
        if (first) {
          for (std::int64_t j = 0; j < n; ++j) bv[j] = *reinterpret_cast<const T*>(p[0] + j * inner[0]), bi[j] = i;
          first = false;
        } else if (monotone) {
          arg_tile_line<T, Max, true>(bv, bi, p[0], inner[0], i, n);
        } else {
          arg_tile_line<T, Max, false>(bv, bi, p[0], inner[0], i, n);
        }
      });
      for (std::int64_t j = 0; j < w; ++j) *reinterpret_cast<std::int64_t*>(sub.ptr[1] + j * plan.str[0][1]) = bi[j];
    }
  });
  return true;
}

/// argmax (Max) / argmin of `x` over `mask` into the i64 tensor `out` (validated; no
/// reduced axis is empty).
template <class T, bool Max> void reduce_arg(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  ReduceGeometry g;
  make_geometry(x, out, mask, g);
  if (g.outputs == 0) return;
  if (g.reduced <= 1) {
    for_each_output<std::int64_t>(s, out, [](std::int64_t& o) { o = 0; });
    return;
  }
  std::int64_t is[kMaxRank];  // column-major index strides of the reduced axes
  std::int64_t step = 1;
  for (int i = 0; i < g.rank; ++i) {
    is[i] = (mask >> i & 1) ? step : 0;
    if (mask >> i & 1) step *= g.ext[i];
  }
  char* xp = static_cast<char*>(const_cast<void*>(x.data()));
  char* op = static_cast<char*>(out.mutable_data());
  if (g.outputs > 1 && reduce_arg_tiled<T, Max>(s, g, is, xp, op)) return;
  // Operands: out first (reduced axes inner: Note [Reduction loop order]), x, index.
  LoopPlan<3> plan;
  {
    const std::int64_t* strides[3] = {g.os, g.xs, is};
    char* ptrs[3] = {op, xp, index_base()};
    plan.build(g.rank, g.ext, strides, ptrs);
  }
  constexpr std::int64_t kCost = 2;
  if (g.outputs == 1) {
    const ArgBest<T> best = blocked_reduce(s, plan.numel, kCost, ArgBest<T>{}, arg_merge<T, Max>, [&](std::int64_t b, std::int64_t e) {
      ArgBest<T> a;
      plan.run(b, e, [&](char** p, const std::int64_t* inner, std::int64_t n) {
        a = arg_merge<T, Max>(a, arg_scan<T, Max>(p[1], inner[1], index_of(p[2]), inner[2], n));
      });
      return a;
    });
    *reinterpret_cast<std::int64_t*>(plan.ptr[0]) = best.i;
    return;
  }
  // Each output's R reduced elements are consecutive: [o*R, (o+1)*R) (plan axis 0 is a
  // reduced axis since R > 1, so no line crosses two outputs).
  const std::int64_t R = g.reduced;
  parallel_for(s, g.outputs, R * kCost, [&](std::int64_t ob, std::int64_t oe) {
    ArgBest<T> best;
    std::int64_t count = 0;
    plan.run(ob * R, oe * R, [&](char** p, const std::int64_t* inner, std::int64_t n) {
      best = arg_merge<T, Max>(best, arg_scan<T, Max>(p[1], inner[1], index_of(p[2]), inner[2], n));
      count += n;
      if (count == R) {
        *reinterpret_cast<std::int64_t*>(p[0]) = best.i;
        best = ArgBest<T>{};
        count = 0;
      }
    });
  });
}

// ---------------------------------------------------------------- logsumexp

/// logsumexp as a value reduction: the accumulator is a pair (m, s) standing for
/// m + log(s), with m the largest element seen. Combining rescales the smaller side,
/// (m1, s1) + (m2, s2) = (m1, s1 + s2·e^(m2 - m1)) for m1 >= m2: one exp per element,
/// no exp of a positive number (no overflow), and associative, so the pairwise lanes
/// and fixed blocks of reduce_values apply unchanged (the online softmax normalizer of
/// Milakov & Gimelshein, "Online normalizer calculation for softmax", 2018). A NaN m
/// wins; m = -inf (nothing but -inf seen) stays (-inf, 0); m = +inf gives +inf.
template <class T> struct LogSumExpTraits {
  struct Acc {
    T m, s;
  };
  using In = T;
  using Out = T;
  static constexpr std::int64_t kCost = 16;
  static constexpr bool kFinish = false;
  // The (max, scaled sum) pair is already rescaled at every combine; it keeps the
  // line-by-line path rather than Note [Pairwise vector accumulation].
  static constexpr bool kRounds = false;
  static Acc identity() noexcept { return {-std::numeric_limits<T>::infinity(), T(0)}; }
  static Out empty() noexcept { return -std::numeric_limits<T>::infinity(); }
  static Acc load(In x) noexcept { return {x, T(1)}; }
  static Acc combine(Acc a, Acc b) noexcept {
    if (a.m != a.m) return a;
    if (b.m != b.m) return b;
    if (b.m > a.m) std::swap(a, b);
    if (a.m == -std::numeric_limits<T>::infinity()) return {a.m, T(0)};
    if (a.m == std::numeric_limits<T>::infinity()) return {a.m, T(1)};
    return {a.m, a.s + b.s * std::exp(b.m - a.m)};
  }
  /// A partial result o (in the output) is the pair (o, 1): logsumexp(o) = o.
  static Acc from_out(Out o) noexcept { return {o, T(1)}; }
  static Out store(Acc a) noexcept { return a.m + std::log(a.s); }
  static Out finish(Out o, std::int64_t) noexcept { return o; }
};

/// The one dtype dispatch of reduction `Op`: Run<T> for T the type of x's dtype, over
/// the op's catalogue dtype set.
template <OpId Op, class Run> void dispatch(const Tensor& x, Run run) {
  visit_dtype<op_info(Op).dtypes>(op_name(Op), x.dtype(), [&](auto t) { run.template operator()<typename decltype(t)::type>(); });
}

}  // namespace

void reduce_sum(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::sum>(x, [&]<class T>() { reduce_values<SumTraits<T>>(s, x, out, mask); });
}
void reduce_prod(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::prod>(x, [&]<class T>() { reduce_values<ProdTraits<T>>(s, x, out, mask); });
}
void reduce_max(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::max>(x, [&]<class T>() { reduce_values<ExtremumTraits<T, true>>(s, x, out, mask); });
}
void reduce_min(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::min>(x, [&]<class T>() { reduce_values<ExtremumTraits<T, false>>(s, x, out, mask); });
}
void reduce_mean(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::mean>(x, [&]<class T>() { reduce_values<MeanTraits<T>>(s, x, out, mask); });
}
void reduce_sum_squares(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::sum_squares>(x, [&]<class T>() { reduce_values<SumSquaresTraits<T>>(s, x, out, mask); });
}
void reduce_argmax(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::argmax>(x, [&]<class T>() { reduce_arg<T, true>(s, x, out, mask); });
}
void reduce_argmin(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::argmin>(x, [&]<class T>() { reduce_arg<T, false>(s, x, out, mask); });
}
void reduce_logsumexp(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  dispatch<OpId::logsumexp>(x, [&]<class T>() { reduce_values<LogSumExpTraits<T>>(s, x, out, mask); });
}

}  // namespace tenferro::cpu
