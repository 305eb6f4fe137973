#pragma once
// The CPU contraction kernels (listed in src/cpu/kernel_table.cpp) and their layout
// analysis: from a validated call (ops/contraction.hpp's DotCall, whose signature
// classifies the axes into TBLIS-style groups: M = lhs free, N = rhs free, K =
// contracted, B = batch), merge each group into one stride where the layout allows and
// choose the path. Plans are cached per session (DotPlanCache, checked out with the
// session's resources).
//
// Example: lhs [i,j,b] (compact), rhs [j,k,b], contracting {1}/{0}, batch {2}/{2}:
//   M = {i}, K = {j}, N = {k}, B = {b}; out [i,k,b]. Each group is one axis, so every
//   operand is a plain matrix per batch: lhs (rs 1, cs i), rhs (rs 1, cs j), out (1, i)
//   → one NoTrans/NoTrans GEMM per batch index, no packing.
#include "core/internal_check.hpp"

#include <array>
#include <cstdint>

#include "core/bounded_cache.hpp"
#include "ops/contraction.hpp"
#include "tenferro/dot.hpp"

namespace tenferro::detail {

/// Most axes one group (M, N, K or B) may have.
inline constexpr int kMaxDotAxes = 24;

/// Whether an M×K by K×N product takes the small loop (no BLAS call, no allocation).
constexpr bool small_product_size(std::int64_t M, std::int64_t N, std::int64_t K) noexcept {
  return M <= 64 && N <= 64 && K <= 64 && M * N * K <= 4096;
}

/// Which path a plan runs.
enum class DotPath : std::uint8_t { empty, small, blas };

/// The analysis of one dot_general call (shapes, strides, config → kernel and layout).
/// Strides are in elements of the operand they belong to.
struct DotPlan {
  DType dtype = DType::f64;  ///< compute dtype (= out dtype)
  bool conj_l = false, conj_r = false;
  DotPath path = DotPath::small;
  std::int64_t M = 1, N = 1, K = 1, batches = 1;
  int nm = 0, nn = 0, nk = 0, nb = 0;
  std::int64_t mext[kMaxDotAxes], next[kMaxDotAxes], kext[kMaxDotAxes], bext[kMaxDotAxes];
  std::int64_t lm[kMaxDotAxes], lk[kMaxDotAxes], lb[kMaxDotAxes];
  std::int64_t rk[kMaxDotAxes], rn[kMaxDotAxes], rb[kMaxDotAxes];
  std::int64_t om[kMaxDotAxes], on[kMaxDotAxes], ob[kMaxDotAxes];
  /// lhs axis order (M axes, K axes, B axes it holds) and rhs order (K, N, B axes it
  /// holds) used for packing.
  std::int64_t lperm[3 * kMaxDotAxes], rperm[3 * kMaxDotAxes];
  /// Which operands hold each B axis: both (a batch axis), or one of them (a free axis
  /// looped over, Note [Free axes looped over]; its stride in the other operand is 0).
  enum class Holder : std::uint8_t { both, lhs, rhs };
  Holder bholder[kMaxDotAxes];
  /// Which operands must be packed (copied compact in perm order, converted to the
  /// compute dtype and conjugated as needed) for BLAS, and whether out needs a temporary.
  bool pack_l = false, pack_r = false, pack_out = false;
  /// BLAS computes outᵀ = op(rhs)ᵀ op(lhs)ᵀ (out is row-major-like, or a row vector).
  bool swap_out = false;
  /// Merged matrix strides per batch (valid for operands not packed).
  std::int64_t lm1 = 1, lk1 = 1, rk1 = 1, rn1 = 1, om1 = 1, on1 = 1;
};

/// Whether BLAS can read a rows×cols matrix with these strides directly (optionally
/// conjugated): stored NoTrans (rs == 1) or Trans (cs == 1), leading dimension large enough.
bool blas_compatible(std::int64_t R, std::int64_t C, std::int64_t rs, std::int64_t cs, bool conj);

/// Whether BLAS can write a rows×cols column-major output with these strides.
bool writable_by_blas(std::int64_t R, std::int64_t C, std::int64_t rs, std::int64_t cs);

/// The layout analysis of a validated call. UnsupportedError (naming dot_general) for
/// what this backend cannot run: a group of more than kMaxDotAxes axes, or a BLAS
/// matrix extent above 2^31-1.
void plan_dot(const DotCall& c, DotPlan& plan);

/// Plans keyed by (dtypes, shapes, strides, config): Note [Bounded caches].
using DotPlanCache = BoundedCache<DotPlan>;

/// Serializes the cache key of a call into key[0..len); returns len, or 0 when the call
/// is too large to cache.
int dot_cache_key(const DotCall& c, std::int64_t* key, int cap, std::uint64_t& hash);

}  // namespace tenferro::detail

namespace tenferro::cpu {

/// DotKernel: the small loop, one direct BLAS call (the short form, Note [dot fast
/// path]), or the cached plan's path.
void dot_kernel(Session& s, const detail::DotCall& c);
/// GroupedGemmKernel: items split across the session's threads when every one takes the
/// small loop, else one after the other.
void grouped_gemm_kernel(Session& s, std::span<const GemmItem> items);

}  // namespace tenferro::cpu
