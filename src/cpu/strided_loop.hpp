#pragma once
// Plan the layout before the kernel (PyTorch's TensorIterator, reduced to what we need):
// operands are broadcast to one iteration shape, extent-1 axes dropped, axes sorted by
// the first operand's strides (the output: the inner loop walks its smallest stride),
// and adjacent axes merged where every operand is contiguous across them. Kernels then
// see inner lines (pointer per operand, byte stride per operand, count) and never a Tensor.
//
// Example: out[2,3] compact += a[3,2] transposed view + b[2,1] broadcast.
//   strides (bytes)  out {8,16}  a {24,8}  b {8,0}
//   no merge possible (a breaks it): two axes, inner extent 2, a's inner stride 24.
#include "core/internal_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "tenferro/shape.hpp"

namespace tenferro::detail {

/// Iteration plan over N operands (operand 0 is conventionally the output).
template <int N> struct LoopPlan {
  int rank = 0;
  std::int64_t numel = 1;
  std::int64_t ext[kMaxRank];
  std::int64_t str[kMaxRank][N];  ///< byte strides, axis-major so one axis' strides sit together
  char* ptr[N];

  /// Builds from per-operand byte strides over `shape` (strides already broadcast: 0 on
  /// stretched axes).
  void build(int r, const std::int64_t* shape, const std::int64_t* const* strides, char* const* ptrs) noexcept {
    rank = 0;
    numel = 1;
    for (int k = 0; k < N; ++k) ptr[k] = ptrs[k];
    for (int i = 0; i < r; ++i) {
      numel *= shape[i];
      if (shape[i] == 1) continue;
      ext[rank] = shape[i];
      for (int k = 0; k < N; ++k) str[rank][k] = strides[k][i];
      ++rank;
    }
    if (numel == 0) {
      rank = 0;
      return;
    }
    // Insertion sort of axes by |operand-0 stride| (ties: next operands) — ranks are tiny.
    for (int i = 1; i < rank; ++i)
      for (int j = i; j > 0 && less(j, j - 1); --j) swap_axes(j, j - 1);
    // Merge axis i+1 into i when every operand steps through them as one axis.
    int w = 0;
    for (int i = 1; i < rank; ++i) {
      bool merge = true;
      for (int k = 0; k < N && merge; ++k) merge = str[i][k] == str[w][k] * ext[w];
      if (merge) {
        ext[w] *= ext[i];
      } else {
        ++w;
        ext[w] = ext[i];
        for (int k = 0; k < N; ++k) str[w][k] = str[i][k];
      }
    }
    rank = rank > 0 ? w + 1 : 0;
  }

  /// Calls line(ptrs, inner_strides, count) for every inner line of elements
  /// [begin, end) of the iteration space (linear index, axis 0 fastest).
  template <class Line> void run(std::int64_t begin, std::int64_t end, Line&& line) const {
    if (begin >= end) return;
    char* p[N];
    std::int64_t inner[N];
    if (rank == 0) {  // one element
      for (int k = 0; k < N; ++k) {
        p[k] = ptr[k];
        inner[k] = 0;
      }
      line(p, inner, std::int64_t{1});
      return;
    }
    for (int k = 0; k < N; ++k) inner[k] = str[0][k];
    // Multi-index of `begin`.
    std::int64_t idx[kMaxRank];
    std::int64_t rest = begin;
    for (int i = 0; i < rank; ++i) {
      idx[i] = rest % ext[i];
      rest /= ext[i];
    }
    for (int k = 0; k < N; ++k) {
      p[k] = ptr[k];
      for (int i = 0; i < rank; ++i) p[k] += idx[i] * str[i][k];
    }
    std::int64_t remaining = end - begin;
    for (;;) {
      const std::int64_t n = std::min(ext[0] - idx[0], remaining);
      line(p, inner, n);
      remaining -= n;
      if (remaining == 0) return;
      // The line ran to the end of axis 0: rewind it and carry into the outer axes.
      for (int k = 0; k < N; ++k) p[k] -= idx[0] * str[0][k];
      idx[0] = 0;
      int i = 1;
      for (; i < rank; ++i) {
        for (int k = 0; k < N; ++k) p[k] += str[i][k];
        if (++idx[i] < ext[i]) break;
        for (int k = 0; k < N; ++k) p[k] -= ext[i] * str[i][k];
        idx[i] = 0;
      }
      if (i == rank) return;
    }
  }

 private:
  bool less(int a, int b) const noexcept {
    for (int k = 0; k < N; ++k) {
      const std::int64_t x = std::llabs(str[a][k]), y = std::llabs(str[b][k]);
      if (x != y) return x < y;
    }
    return false;
  }
  void swap_axes(int a, int b) noexcept {
    std::swap(ext[a], ext[b]);
    for (int k = 0; k < N; ++k) std::swap(str[a][k], str[b][k]);
  }
};

/// Offsets (in the strides' unit) of every index of a group of axes, column-major over
/// the group: out[i0 + e0*(i1 + e1*...)] = sum of i_a * str[a]. `out` holds the product
/// of the extents.
inline void axis_offsets(int n, const std::int64_t* ext, const std::int64_t* str, std::int64_t* out) noexcept {
  out[0] = 0;
  std::int64_t count = 1;
  for (int a = 0; a < n; ++a) {
    for (std::int64_t i = 1; i < ext[a]; ++i)
      for (std::int64_t j = 0; j < count; ++j) out[i * count + j] = out[j] + i * str[a];
    count *= ext[a];
  }
}

}  // namespace tenferro::detail
