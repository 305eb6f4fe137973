#include "core/layout.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tenferro::detail {

int normalize_axis(std::int64_t axis, int rank, std::string_view op) {
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw AxisError(op, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

void check_permutation(std::span<const std::int64_t> perm, int rank, std::string_view op) {
  if (static_cast<int>(perm.size()) != rank)
    throw RankError(op, "permutation " + dims_string(perm) + " has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  std::uint64_t seen = 0;
  for (auto p : perm) {
    if (p < 0 || p >= rank || (seen >> p & 1))
      throw AxisError(op, "invalid permutation " + dims_string(perm) + " for rank " + std::to_string(rank));
    seen |= std::uint64_t{1} << p;
  }
}

std::uint64_t axis_mask(std::span<const std::int64_t> axes, int rank, std::string_view op) {
  std::uint64_t m = 0;
  for (auto a : axes) {
    const int n = normalize_axis(a, rank, op);
    if (m >> n & 1) throw AxisError(op, "axis " + std::to_string(a) + " repeated in " + dims_string(axes));
    m |= std::uint64_t{1} << n;
  }
  return m;
}

std::pair<std::int64_t, std::int64_t> python_slice(std::int64_t start, std::int64_t stop, std::int64_t step, std::int64_t n) {
  auto clamp_index = [n](std::int64_t i, std::int64_t lo, std::int64_t hi) {
    if (i < 0) i = i < -n ? lo : i + n;
    return std::clamp(i, lo, hi);
  };
  std::int64_t first, last;
  if (step > 0) {
    first = start == INT64_MAX ? n : clamp_index(start, 0, n);
    last = stop == INT64_MAX ? n : clamp_index(stop, 0, n);
    if (last <= first) return {0, 0};
    return {first, (last - first - 1) / step + 1};
  }
  // negative step: start defaults to n-1, stop to "before 0". |step| as unsigned:
  // -INT64_MIN does not fit in int64.
  first = start == INT64_MAX ? n - 1 : clamp_index(start, -1, n - 1);
  last = stop == INT64_MAX ? -1 : clamp_index(stop, -1, n - 1);
  if (first <= last) return {0, 0};
  const std::uint64_t abs_step = std::uint64_t{0} - static_cast<std::uint64_t>(step);
  return {first, static_cast<std::int64_t>(static_cast<std::uint64_t>(first - last - 1) / abs_step) + 1};
}

std::int64_t sliced_stride(std::int64_t stride, std::int64_t step, std::int64_t count, std::int64_t esize, std::string_view op) {
  if (count > 1) return checked_mul(stride, step, op);
  std::int64_t st = 0, bytes = 0;
  if (__builtin_mul_overflow(stride, step, &st) || __builtin_mul_overflow(st, esize, &bytes)) return stride;
  return st;
}

Dims infer_reshape(std::span<const std::int64_t> shape, std::int64_t numel, std::string_view op) {
  Dims out(shape);
  int infer = -1;
  std::int64_t known = 1;
  for (int i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw ShapeError(op, "more than one -1 in shape " + dims_string(shape));
      infer = i;
    } else if (out[i] < 0) {
      throw ShapeError(op, "negative extent in shape " + dims_string(shape));
    } else {
      known = checked_mul(known, out[i], op);
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw ShapeError(op, "cannot infer -1 in shape " + dims_string(shape) + " for " + std::to_string(numel) + " elements");
    out[infer] = numel / known;
  } else if (known != numel) {
    throw ShapeError(op, "shape " + dims_string(shape) + " has " + std::to_string(known) + " elements, the tensor " + std::to_string(numel));
  }
  return out;
}

// Walks old and new axes in groups whose extent products match (column-major order:
// first axis fastest). A group of old axes can be re-split only if it is itself
// contiguous in memory: stride[k+1] == stride[k] * extent[k] within the group.
bool reshape_strides(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides,
                     std::span<const std::int64_t> new_shape, Dims& ns) {
  const int r = static_cast<int>(shape.size()), nr = static_cast<int>(new_shape.size());
  ns = Dims(nr, 0);
  std::uint64_t total = 1;  // unsigned as Tensor::numel(): an empty shape may wrap, never overflow (UB)
  for (auto e : shape) total *= static_cast<std::uint64_t>(e);
  if (total == 0) {  // any strides work; use compact ones
    ns = compact_strides(new_shape);
    return true;
  }
  // Drop extent-1 axes of the source: they do not constrain the layout.
  Dims os, ost;
  for (int i = 0; i < r; ++i)
    if (shape[i] != 1) {
      os.push_back(shape[i]);
      ost.push_back(strides[i]);
    }
  int oi = 0, ni = 0;
  const int onr = os.size();
  while (oi < onr && ni < nr) {
    std::int64_t op = os[oi], np = new_shape[ni];
    int oj = oi + 1, nj = ni + 1;
    while (op != np) {
      if (np < op) np *= new_shape[nj++];
      else op *= os[oj++];
    }
    for (int k = oi; k + 1 < oj; ++k)
      if (ost[k + 1] != ost[k] * os[k]) return false;
    std::int64_t s = ost[oi];
    for (int k = ni; k < nj; ++k) {
      ns[k] = s;
      s *= new_shape[k];
    }
    oi = oj;
    ni = nj;
  }
  // Remaining new axes have extent 1.
  for (; ni < nr; ++ni) ns[ni] = ni > 0 ? ns[ni - 1] * new_shape[ni - 1] : 1;
  return true;
}

Dims compact_strides(std::span<const std::int64_t> shape) {
  Dims s(static_cast<int>(shape.size()), 0);
  std::int64_t acc = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s[static_cast<int>(i)] = acc;
    // The product overflows only for a shape with no elements (a non-empty one has
    // passed checked_numel), such as [0, 2^40, 2^40, 2]: its strides address nothing,
    // so the product stops growing instead of overflowing (undefined behaviour).
    std::int64_t next = 0;
    if (!__builtin_mul_overflow(acc, shape[i] > 0 ? shape[i] : 1, &next)) acc = next;
  }
  return s;
}

std::pair<std::int64_t, std::int64_t> offset_range(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides,
                                                   std::string_view op) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t span = checked_mul(shape[i] - 1, strides[i], op);
    if (span < 0) lo = checked_add(lo, span, op);
    else hi = checked_add(hi, span, op);
  }
  return {lo, hi};
}

bool is_non_overlapping(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides) {
  std::int64_t ext[kMaxRank], str[kMaxRank];
  int n = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return true;
    if (shape[i] == 1) continue;
    ext[n] = shape[i];
    str[n] = std::abs(strides[i]);
    ++n;
  }
  // insertion sort by |stride|
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && str[j] < str[j - 1]; --j) {
      std::swap(str[j], str[j - 1]);
      std::swap(ext[j], ext[j - 1]);
    }
  std::int64_t reach = 0;  // largest offset covered by the smaller axes
  for (int i = 0; i < n; ++i) {
    if (str[i] <= reach) return false;
    // A layout whose offsets exceed int64 cannot be addressed: it counts as overlapping
    // (refused) instead of overflowing (UB; found by fuzz_external through
    // tf_tensor_copy_to's dst strides).
    std::int64_t span = 0;
    if (__builtin_mul_overflow(ext[i] - 1, str[i], &span) || __builtin_add_overflow(reach, span, &reach)) return false;
  }
  return true;
}

Dims broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b, std::string_view op) {
  const std::size_t r = std::max(a.size(), b.size());
  Dims out(static_cast<int>(r), 0);
  bool from_a = false, from_b = false;  // an axis that only a (only b) widens
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    if (x == y || y == 1) {
      out[static_cast<int>(i)] = x;
      from_a |= x != y;
    } else if (x == 1) {
      out[static_cast<int>(i)] = y;
      from_b = true;
    } else {
      throw ShapeError(op, "shapes " + dims_string(a) + " and " + dims_string(b) + " do not broadcast (axis " + std::to_string(i) + ": " + std::to_string(x) + " vs " + std::to_string(y) + ")");
    }
  }
  // The result holds a's or b's element count (which fit) unless both widen it: [2^32, 1]
  // with [1, 2^32] has 2^64 elements, an IndexError naming the op.
  if (from_a && from_b) (void)checked_numel(out.span(), op);
  return out;
}

}  // namespace tenferro::detail
