#pragma once
// Shared by the CPU indexing code (indexing.cpp, gather_scatter.cpp): index tensor
// checks and loads, and strided copies; and the indexing kernels of the CPU table.
//
// Note [Copies by element size]
// Indexing ops move elements and never compute on them (scatter's combiners aside), so
// their copies dispatch on the element size (1, 4, 8 or 16 bytes), not on the dtype:
// seven dtypes share four instantiations, and a bool copy is a byte copy.
#include "core/internal_check.hpp"

#include <cstring>
#include <string>

#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"
#include "ops/kernel_table.hpp"
#include "tenferro/indexing.hpp"

namespace tenferro::detail {

/// The index stored at `p` (i32 or i64) as int64.
inline std::int64_t load_index(const char* p, DType d) noexcept {
  if (d == DType::i32) {
    std::int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Entries of a short rank-1 i32/i64 tensor (any stride), e.g. one start per axis
/// (a Dims holds at most 4 * kMaxRank entries).
Dims load_index_vector(const Tensor& t);

/// Byte strides of `t` (exact, also on extent-1 axes).
void byte_strides(const Tensor& t, std::int64_t* out) noexcept;

/// Copies n elements of `es` bytes, dst and src advancing by their byte strides
/// (Note [Copies by element size]). dst and src must not overlap.
void copy_elements(char* dst, std::int64_t dst_stride, const char* src, std::int64_t src_stride, std::int64_t n,
                   std::size_t es) noexcept;

/// Runs a copy plan (operand 0 the destination, 1 the source) over elements [b, e).
inline void copy_plan_range(const LoopPlan<2>& plan, std::size_t es, std::int64_t b, std::int64_t e) {
  plan.run(b, e, [es](char** p, const std::int64_t* st, std::int64_t n) { copy_elements(p[0], st[0], p[1], st[1], n, es); });
}

/// dst[i] = src[i] over `shape` (rank r), both given as a base pointer and byte strides;
/// inline or across the session's threads (Note [Fork cost model]).
void copy_strided(Session& s, int r, const std::int64_t* shape, char* dst, const std::int64_t* dst_strides, const char* src,
                  const std::int64_t* src_strides, std::size_t es);

/// Copies `src` into `dst` (validated: same shape and dtype, disjoint or identical; an
/// identical layout is skipped).
void copy_tensor(Session& s, const Tensor& dst, const Tensor& src);

/// True when `a` and `b` are the same elements in the same layout.
bool same_layout(const Tensor& a, const Tensor& b) noexcept;

}  // namespace tenferro::detail

namespace tenferro::cpu {

/// WindowKernel of dynamic_slice.
void dynamic_slice_kernel(Session& s, const Tensor& x, const Tensor& starts, const Tensor& out);
/// UpdateWindowKernel of dynamic_update_slice.
void dynamic_update_slice_kernel(Session& s, const Tensor& x, const Tensor& update, const Tensor& starts, const Tensor& out);
/// TakeKernel of take_along_axis: indices of x's rank broadcast against x off `axis`.
void take_along_axis_kernel(Session& s, const Tensor& x, const Tensor& indices, const Tensor& out, int axis);
/// TakeKernel of index_select: rank-1 indices pick whole slabs along `axis`.
void index_select_kernel(Session& s, const Tensor& x, const Tensor& indices, const Tensor& out, int axis);
/// GatherKernel (gather_scatter.cpp).
void gather_kernel(Session& s, const detail::IndexMap& m, const Tensor& operand, const Tensor& indices, const Dims& slice_sizes,
                   const Tensor& out);
/// ScatterKernel (gather_scatter.cpp): one thread, so overlapping windows combine in a
/// fixed order whatever the session's thread count.
void scatter_kernel(Session& s, const detail::IndexMap& m, const Tensor& operand, const Tensor& indices, const Tensor& updates,
                    ScatterCombiner combiner, const Tensor& out);

}  // namespace tenferro::cpu
