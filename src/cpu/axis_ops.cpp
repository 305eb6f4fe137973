// The CPU kernels of the ops along one axis (cpu/axis_ops.hpp): the scans cumsum and
// cumprod and the normalizations softmax and log_softmax. The front end
// (src/ops/along_axis.cpp) validates everything before anything is written; a kernel
// dispatches once on x's dtype and runs one driver:
//
// Note [Axis plan]
// The iteration space is x's shape with the op's axis taken out: a LoopPlan over the
// other axes (out first, x second; the axis itself gets extent 1, which the plan
// drops) yields inner lines of n independent slices; each slice is `len` elements
// along the axis at byte strides (so, sx). A line is worked one of two ways:
//   - slice by slice (the axis inner) when the axis is x's faster direction, e.g.
//     cumsum along axis 0 of a column-major [M, N]: each slice is contiguous;
//   - across the line (the slices inner, `kTile` at a time) when the line is faster,
//     e.g. cumsum along axis 1 of [M, N]: step k updates out[:, k] from out[:, k-1]
//     and x[:, k], M contiguous elements at a time, instead of M strided scans.
// Both orders do the same arithmetic per slice in the same order, so the result does
// not depend on the layout or on the thread count (threads split whole slices).
// Reading x[k] before writing out[k], and only out[k-1] of the output, makes an output
// that is x itself (element for element) safe.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "cpu/axis_ops.hpp"
#include "cpu/elementwise_functors.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"
#include "ops/catalog.hpp"

namespace tenferro::cpu {
namespace {

using namespace detail;  // the loop plans, functors and runners

/// Slices worked together in the across-the-line order (their softmax maxima and sums
/// sit in stack arrays).
constexpr std::int64_t kTile = 256;

struct AxisGeometry {
  LoopPlan<2> plan;  ///< over every axis but the op's: operands out, x
  std::int64_t len = 0;
  std::int64_t so = 0, sx = 0;  ///< byte strides along the axis
};

AxisGeometry make_axis_geometry(const Tensor& x, const Tensor& out, int axis) {
  AxisGeometry g;
  const int r = x.rank();
  std::int64_t ext[kMaxRank] = {}, xs[kMaxRank] = {}, os[kMaxRank] = {};
  broadcast_byte_strides(x, r, xs);
  const auto es = static_cast<std::int64_t>(dtype_size(out.dtype()));
  for (int i = 0; i < r; ++i) {
    ext[i] = x.extent(i);
    os[i] = out.stride(i) * es;
  }
  g.len = ext[axis];
  g.so = os[axis];
  g.sx = xs[axis];
  ext[axis] = 1;
  const std::int64_t* strides[2] = {os, xs};
  char* ptrs[2] = {static_cast<char*>(const_cast<void*>(out.data())), static_cast<char*>(const_cast<void*>(x.data()))};
  g.plan.build(r, ext, strides, ptrs);
  return g;
}

template <class T> T& at(char* p, std::int64_t off) noexcept { return *reinterpret_cast<T*>(p + off); }

/// Runs line(out, x, inner_out, inner_x, n) over every line of slices, in parallel when
/// large (cost: per element along the axis).
template <class Line> void for_each_line(const Session& s, const AxisGeometry& g, std::int64_t cost, Line line) {
  if (g.len == 0 || g.plan.numel == 0) return;
  parallel_for(s, g.plan.numel, g.len * cost, [&](std::int64_t b, std::int64_t e) {
    g.plan.run(b, e, [&](char** p, const std::int64_t* inner, std::int64_t n) { line(p[0], p[1], inner[0], inner[1], n); });
  });
}

/// Whether a line of n slices (inner x stride ix) is worked across the line.
bool across(const AxisGeometry& g, std::int64_t ix, std::int64_t n) noexcept {
  return n > 1 && std::llabs(ix) < std::llabs(g.sx);
}

// ---------------------------------------------------------------- scans

/// Inclusive scan with `f` (fn::Add, fn::Mul: integers wrap).
template <class T, class F> void scan(const Session& s, const AxisGeometry& g, F f) {
  const std::int64_t len = g.len, so = g.so, sx = g.sx;
  for_each_line(s, g, 1, [&](char* o, char* x, std::int64_t io, std::int64_t ix, std::int64_t n) {
    if (across(g, ix, n)) {
      for (std::int64_t j = 0; j < n; ++j) at<T>(o, j * io) = at<T>(x, j * ix);
      for (std::int64_t k = 1; k < len; ++k)
        for (std::int64_t j = 0; j < n; ++j)
          at<T>(o, k * so + j * io) = f(at<T>(o, (k - 1) * so + j * io), at<T>(x, k * sx + j * ix));
      return;
    }
    for (std::int64_t j = 0; j < n; ++j) {
      char* oj = o + j * io;
      const char* xj = x + j * ix;
      T acc = *reinterpret_cast<const T*>(xj);
      at<T>(oj, 0) = acc;
      for (std::int64_t k = 1; k < len; ++k) {
        acc = f(acc, *reinterpret_cast<const T*>(xj + k * sx));
        at<T>(oj, k * so) = acc;
      }
    }
  });
}

// ---------------------------------------------------------------- softmax

/// max that keeps a NaN (once the running maximum is NaN it stays NaN).
template <class T> T nan_max(T m, T v) noexcept { return (v > m || v != v) ? v : m; }

/// softmax (Log = false) or log_softmax along the axis. Three passes per slice: the
/// maximum m, the sum of e^(x - m) (accumulated in double: a long f32 slice keeps its
/// sum to f32 accuracy), then the result. softmax stores e^(x - m) in the second pass
/// and scales it in the third (one exp per element); log_softmax writes
/// (x - m) - log(sum). Pass 3 reads x[k] (or out[k]) right before writing out[k].
template <class T, bool Log> void normalize(const Session& s, const AxisGeometry& g) {
  const std::int64_t len = g.len, so = g.so, sx = g.sx;
  for_each_line(s, g, 24, [&](char* o, char* x, std::int64_t io, std::int64_t ix, std::int64_t n) {
    T m[kTile];
    double sum[kTile];
    const bool by_k = across(g, ix, n);
    for (std::int64_t j0 = 0; j0 < n; j0 += kTile) {
      const std::int64_t w = std::min(kTile, n - j0);
      for (std::int64_t j = 0; j < w; ++j) {
        m[j] = -std::numeric_limits<T>::infinity();
        sum[j] = 0;
      }
      // for_slices(f): f(j, k) over the tile's slices and the axis, in the line's order.
      auto for_slices = [&](auto f) {
        if (by_k) {
          for (std::int64_t k = 0; k < len; ++k)
            for (std::int64_t j = 0; j < w; ++j) f(j, k);
        } else {
          for (std::int64_t j = 0; j < w; ++j)
            for (std::int64_t k = 0; k < len; ++k) f(j, k);
        }
      };
      auto xv = [&](std::int64_t j, std::int64_t k) -> T { return at<T>(x, k * sx + (j0 + j) * ix); };
      auto ov = [&](std::int64_t j, std::int64_t k) -> T& { return at<T>(o, k * so + (j0 + j) * io); };
      for_slices([&](std::int64_t j, std::int64_t k) { m[j] = nan_max(m[j], xv(j, k)); });
      if constexpr (Log) {
        for_slices([&](std::int64_t j, std::int64_t k) { sum[j] += static_cast<double>(std::exp(xv(j, k) - m[j])); });
        T ls[kTile];
        for (std::int64_t j = 0; j < w; ++j) ls[j] = static_cast<T>(std::log(sum[j]));
        for_slices([&](std::int64_t j, std::int64_t k) { ov(j, k) = (xv(j, k) - m[j]) - ls[j]; });
      } else {
        for_slices([&](std::int64_t j, std::int64_t k) {
          const T e = std::exp(xv(j, k) - m[j]);
          ov(j, k) = e;
          sum[j] += static_cast<double>(e);
        });
        for_slices([&](std::int64_t j, std::int64_t k) { ov(j, k) = static_cast<T>(static_cast<double>(ov(j, k)) / sum[j]); });
      }
    }
  });
}

/// The kernel's body (internal linkage, like the geometry its lambda captures).
template <OpId op> void run_along_axis(const Session& s, const Tensor& x, const Tensor& out, int axis) {
  constexpr std::string_view name = op_name(op);
  const AxisGeometry g = make_axis_geometry(x, out, axis);
  visit_dtype<op_info(op).dtypes>(name, x.dtype(), [&](auto t) {
    using T = typename decltype(t)::type;
    if constexpr (op == OpId::cumsum) scan<T>(s, g, fn::Add{});
    else if constexpr (op == OpId::cumprod) scan<T>(s, g, fn::Mul{});
    else if constexpr (op == OpId::softmax) normalize<T, false>(s, g);
    else normalize<T, true>(s, g);
  });
}

}  // namespace

template <OpId op> void along_axis_kernel(const Session& s, const Tensor& x, const Tensor& out, int axis) {
  static_assert(op_info(op).family == OpFamily::along_axis);
  run_along_axis<op>(s, x, out, axis);
}

template void along_axis_kernel<OpId::cumsum>(const Session&, const Tensor&, const Tensor&, int);
template void along_axis_kernel<OpId::cumprod>(const Session&, const Tensor&, const Tensor&, int);
template void along_axis_kernel<OpId::softmax>(const Session&, const Tensor&, const Tensor&, int);
template void along_axis_kernel<OpId::log_softmax>(const Session&, const Tensor&, const Tensor&, int);

}  // namespace tenferro::cpu
