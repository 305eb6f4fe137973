#pragma once
// Same-dtype copies between strided tensors: the line copy every structural op ends in,
// and the blocked (cache-aware) kernel used when a copy transposes memory order.
//
// Note [Blocked transpose copy]
// A copy whose destination walks memory along one axis while the source walks it along
// another (dst[i + j*M] = src[j + i*N], the materialized transpose) is slow as a plain
// strided loop: the inner line writes dst contiguously but reads one element from each
// of M different source cache lines, and by the time the next line wants their
// neighbours those lines are gone (with power-of-two strides they all map to the same
// cache sets, so even M = 16 thrashes an 8-way L1).
//
// The blocked kernel works on blocks of kRows × kCols elements (16 × 16 for 8-byte
// elements): each source row of the block is two whole cache lines, loaded once and
// transposed (SSE2 unpack / _MM_TRANSPOSE4_PS; bytes only, never values) into a small
// L1 buffer laid out like the destination; then each destination column segment, two
// whole lines, is written in one go. Blocks run in strips of kRows rows across panels
// of 256 columns, so the pages touched between reuses stay within the L2 TLB. Outputs
// of 8 MiB and more whose columns start on cache lines are written with streaming
// (non-temporal) stores, skipping the read-for-ownership of each destination line, as
// glibc's memcpy does at that size. Units (strip × panel × outer index) are split over
// the session's threads (Note [Fork cost model]).
//
// The kernel applies to a LoopPlan<2> (operand 0 the destination, operand 1 the
// source) after sorting and coalescing: axis 0 is then the destination's fastest axis;
// the plan qualifies when another axis b is the source's fastest (|stride| smaller than
// on axis 0, not a broadcast zero) and both are at least 16 long. Remaining axes are
// iterated outside the blocks.
//
// Measured (one thread, thread CPU time, best of 15, memcpy of the same bytes as the
// yardstick, bytes read + written): 4096 × 4096 f64 plain strided loop 0.08×
// memcpy, blocked 0.62–0.70× (≈ 11–12 GB/s against memcpy's 17–19); f32 ≈ 0.55×,
// c128 ≈ 0.55×; 2048² f64 0.66–0.75×. Without streaming stores 4096² f64 reaches
// ≈ 0.45×; with square 32 × 32 tiles transposed through 4 × 4 register blocks straight
// into the destination, ≈ 0.45× (destination lines half written, then evicted).
// Known weak spot: mid-sized matrices with strides far from a power of two (1030²
// f64) run ≈ 1.4× slower blocked than the plain loop, which there reuses its source
// lines from L2; from ≈ 3000² and at power-of-two strides blocked wins 4–8×.
//
// Note [Tiled copy of short axes]
// Permutations of tensors with short axes (extent 2 in quantum circuits and in the
// suite's tensornetwork_permutation networks, ranks of 20 and more) coalesce to
// destination lines of 2–8 elements, so the line loop spends its time stepping its
// index: 2.5–4 ns per element for 2^20 f64 and 6.6–8.3 ns for 2^24, against memcpy's
// 0.73. The tiled kernel takes the destination's fastest axes as A (at least kTileSide =
// 32 elements) and the source's fastest remaining axes as B (likewise), walks each
// through a table of byte offsets, and copies one A × B tile per index of the other axes
// (b outer, a inner: the destination written in runs, the tile's source lines reused
// from L1). Measured (random permutations of extent-2 tensors, one thread): 0.8–0.95 ns
// per element at 2^20, 2.4–2.8 at 2^24. It applies when the blocked kernel does not,
// the source is no broadcast, and either
//  - the destination's lines are short (fastest axis < 16): A and B take whole axes,
//    rank ≥ 2, B ≥ 16 elements, both groups within 512 table entries; or
//  - the destination's fastest axis is long but the source's fastest is another, too
//    short for the blocked kernel (an n × 9 matrix transposed): that axis is split at a
//    divisor of its extent into A (kTileGrow = 64 elements at most, the outer part
//    iterated outside), likewise B. 9 × 100000 f64 transposed: 2.55 → 1.00 ns per
//    element (one thread; the line loop read its source with stride 9).
// Tiles that are plain transposes of small blocks go through vector registers (Note
// [Transposed tiles] in transpose_copy.cpp: 3.6-4× faster on extent-2 tensors than the
// table loop measured above). Tiles are split over the session's threads.
#include "core/internal_check.hpp"

#include <cstddef>

#include "cpu/strided_loop.hpp"
#include "tenferro/cpu_backend.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// Runs the blocked kernel on `plan` (operand 0 destination, operand 1 source, byte
/// strides) for elements of `elem_size` bytes when the plan qualifies (Note [Blocked
/// transpose copy]); returns false, having done nothing, otherwise.
bool try_blocked_transpose_copy(Session& s, const LoopPlan<2>& plan, std::size_t elem_size);

/// Runs the tiled kernel on `plan` when the plan qualifies (Note [Tiled copy of short
/// axes]); returns false, having done nothing, otherwise.
bool try_tiled_copy(Session& s, const LoopPlan<2>& plan, std::size_t elem_size);

/// Runs a same-dtype copy plan: the blocked kernel when it qualifies, else the tiled
/// kernel when that qualifies, else line copies
/// (a broadcast source, zero stride, is a fill). No validation.
void run_copy_plan(Session& s, const LoopPlan<2>& plan, std::size_t elem_size);

/// dst[i] = src[i] for every index (same shape and dtype; src may be a broadcast view,
/// dst must be writable and non-overlapping, and the two must not partially overlap).
/// Internal: callers have validated everything at the op boundary.
void copy_same_dtype(Session& s, const Tensor& src, const Tensor& dst);

/// Every element of `dst` set to the `dtype_size(dst.dtype())` bytes at `value`.
void fill_bytes(Session& s, const Tensor& dst, const void* value);

}  // namespace tenferro::detail
