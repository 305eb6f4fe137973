// Same-dtype strided copies and the blocked transpose kernel (Note [Blocked transpose
// copy] in transpose_copy.hpp).
#include "cpu/transpose_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <immintrin.h>
#include <xmmintrin.h>
#endif

#include "cpu/elementwise.hpp"

namespace tenferro::detail {

namespace {

// Copies never look at values, only at bytes: one instantiation per element size
// (bool → 1, i32/f32 → 4, i64/f64/c64 → 8, c128 → 16) instead of one per dtype.
struct alignas(8) Bytes16 {
  std::uint64_t lo, hi;
};
/// The tiled kernel's unit after folding an axis both sides hold contiguously.
template <int N> struct alignas(8) Bytes {
  std::uint64_t w[N / 8];
};

template <class E> inline void copy_elem(char* d, const char* s) noexcept {
  E v;
  std::memcpy(&v, s, sizeof(E));
  std::memcpy(d, &v, sizeof(E));
}

/// One inner line of a copy plan: contiguous (memmove: an output identical to its
/// input is allowed by the ops, and memcpy on equal pointers is undefined), fill from
/// a broadcast source (stride 0), or general strided.
template <class E> void copy_line(char** p, const std::int64_t* st, std::int64_t n) {
  constexpr auto es = static_cast<std::int64_t>(sizeof(E));
  char* d = p[0];
  const char* s = p[1];
  if (st[0] == es && st[1] == es) {
    if (d != s) std::memmove(d, s, static_cast<std::size_t>(n * es));
    return;
  }
  if (st[1] == 0) {
    E v;
    std::memcpy(&v, s, sizeof(E));
    if (st[0] == es) {
      E* o = reinterpret_cast<E*>(d);
      for (std::int64_t i = 0; i < n; ++i) o[i] = v;
    } else {
      for (std::int64_t i = 0; i < n; ++i, d += st[0]) std::memcpy(d, &v, sizeof(E));
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i, d += st[0], s += st[1]) copy_elem<E>(d, s);
}

// ---------------------------------------------------------------- blocked kernel
// Element (i, j) of a 2-D slice is read at s + i*ssa + j*ssb and written at
// d + i*dsa + j*dsb; i runs along the destination's fast axis, j along the source's.

/// The general tile: any strides (edges and destinations that are not contiguous).
template <class E>
void tile_scalar(char* d, const char* s, std::int64_t na, std::int64_t nb, std::int64_t dsa, std::int64_t dsb, std::int64_t ssa,
                 std::int64_t ssb) noexcept {
  for (std::int64_t j = 0; j < nb; ++j) {
    char* dj = d + j * dsb;
    const char* sj = s + j * ssb;
    for (std::int64_t i = 0; i < na; ++i) copy_elem<E>(dj + i * dsa, sj + i * ssa);
  }
}

/// Block shape for E: kCols elements along j (two 64-byte source lines per row; one for
/// bytes), kRows along i (two destination lines per column; four for 16-byte elements).
/// Whole lines on both sides; 16 × 16 for 8-byte elements. Measured on 4096² (Note
/// [Blocked transpose copy]): one-line destination segments halve streaming-store
/// throughput, and taller blocks keep more aliasing source rows alive at once.
template <class E> inline constexpr std::int64_t kCols = (sizeof(E) == 1 ? 64 : 128) / static_cast<std::int64_t>(sizeof(E));
template <class E> inline constexpr std::int64_t kRows = (sizeof(E) == 16 ? 256 : 128) / static_cast<std::int64_t>(sizeof(E));

/// Destinations of at least this many bytes are written with non-temporal stores: they
/// cannot stay in cache anyway, and streaming skips the read-for-ownership of every
/// destination line (a third of the memory traffic). glibc's memcpy switches to
/// streaming at a similar size (3/4 of the shared cache).
constexpr std::int64_t kStreamBytes = std::int64_t{8} << 20;

/// d[0, Bytes) = s[0, Bytes) with s 16-byte aligned (the block buffer). With `stream`,
/// streaming stores: the caller guarantees d is 64-byte aligned and Bytes a multiple
/// of 64, so only whole lines are ever streamed.
template <std::int64_t Bytes> inline void store_segment(char* d, const char* s, bool stream) noexcept {
#if defined(__SSE2__)
  if (stream) {
    for (std::int64_t k = 0; k < Bytes; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + k), _mm_load_si128(reinterpret_cast<const __m128i*>(s + k)));
    return;
  }
#endif
  std::memcpy(d, s, Bytes);
}

/// buf[j*kRows + i] = src(i, j) for one full kRows × kCols block whose source rows are
/// contiguous (ssb == element size): each source line is loaded once, whole.
template <class E> inline void gather_block(E* buf, const char* s, std::int64_t ssa) noexcept {
  constexpr std::int64_t R = kRows<E>, C = kCols<E>;
#if defined(__SSE2__)
  // Moves and shuffles never touch the bits: integer and complex data go through the
  // float/double registers unchanged (NaN payloads and denormals included).
  if constexpr (sizeof(E) == 8) {
    for (std::int64_t i = 0; i < R; i += 2) {
      const auto* r0 = reinterpret_cast<const double*>(s + i * ssa);
      const auto* r1 = reinterpret_cast<const double*>(s + (i + 1) * ssa);
      auto* b = reinterpret_cast<double*>(buf);
      for (std::int64_t j = 0; j < C; j += 2) {
        const __m128d x = _mm_loadu_pd(r0 + j), y = _mm_loadu_pd(r1 + j);
        _mm_store_pd(b + j * R + i, _mm_unpacklo_pd(x, y));
        _mm_store_pd(b + (j + 1) * R + i, _mm_unpackhi_pd(x, y));
      }
    }
    return;
  } else if constexpr (sizeof(E) == 4) {
    for (std::int64_t i = 0; i < R; i += 4) {
      auto* b = reinterpret_cast<float*>(buf);
      for (std::int64_t j = 0; j < C; j += 4) {
        __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(s + i * ssa) + j);
        __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(s + (i + 1) * ssa) + j);
        __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(s + (i + 2) * ssa) + j);
        __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(s + (i + 3) * ssa) + j);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_store_ps(b + j * R + i, r0);
        _mm_store_ps(b + (j + 1) * R + i, r1);
        _mm_store_ps(b + (j + 2) * R + i, r2);
        _mm_store_ps(b + (j + 3) * R + i, r3);
      }
    }
    return;
  }
#endif
  for (std::int64_t i = 0; i < R; ++i) {
    const char* row = s + i * ssa;
    for (std::int64_t j = 0; j < C; ++j) std::memcpy(&buf[j * R + i], row + j * static_cast<std::int64_t>(sizeof(E)), sizeof(E));
  }
}

/// One full block with a contiguous destination column and contiguous source row: the
/// block is transposed into an L1 buffer laid out like the destination, then each
/// destination column segment (two whole lines) is written in one go.
template <class E> inline void copy_block(char* d, const char* s, std::int64_t dsb, std::int64_t ssa, bool stream) noexcept {
  constexpr std::int64_t R = kRows<E>, C = kCols<E>;
  alignas(64) E buf[R * C];
  gather_block<E>(buf, s, ssa);
  for (std::int64_t j = 0; j < C; ++j)
    store_segment<R * static_cast<std::int64_t>(sizeof(E))>(d + j * dsb, reinterpret_cast<const char*>(buf + j * R), stream);
}

/// Columns (along j) per panel: the blocks of a panel reuse kPanel destination columns
/// and a few source rows, one 4 KiB page each, well inside the L2 TLB; panels as long as
/// the matrix (4096 columns of a 4096×4096 f64) would miss it on every block.
constexpr std::int64_t kPanel = 256;

template <class E> void blocked_copy(Session& s, const LoopPlan<2>& plan, int b) {
  constexpr auto es = static_cast<std::int64_t>(sizeof(E));
  constexpr std::int64_t R = kRows<E>, C = kCols<E>;
  const std::int64_t A = plan.ext[0], B = plan.ext[b];
  const std::int64_t dsa = plan.str[0][0], ssa = plan.str[0][1], dsb = plan.str[b][0], ssb = plan.str[b][1];
  // The other axes, iterated outside the blocks.
  int no = 0;
  std::int64_t oext[kMaxRank], odst[kMaxRank], osrc[kMaxRank];
  std::int64_t nouter = 1;
  for (int k = 1; k < plan.rank; ++k) {
    if (k == b) continue;
    oext[no] = plan.ext[k];
    odst[no] = plan.str[k][0];
    osrc[no] = plan.str[k][1];
    nouter *= plan.ext[k];
    ++no;
  }
  const bool fast = dsa == es && ssb == es;
  // Stream only when every destination column starts on a cache line: then each line is
  // written whole by one block (blocks start at multiples of kRows * size = 128 bytes),
  // and edge strips, written with ordinary stores, own their lines. A line written
  // partly by streaming and partly by ordinary stores is flushed and re-read for every
  // mix (measured: 17 × 100000 f64 ran 20× slower than the plain loop).
  bool aligned = reinterpret_cast<std::uintptr_t>(plan.ptr[0]) % 64 == 0 && dsb % 64 == 0;
  for (int k = 0; k < no; ++k) aligned = aligned && odst[k] % 64 == 0;
  const bool stream = fast && aligned && plan.numel * es >= kStreamBytes;
  // Work units: one strip of R rows across one panel of columns; strips fastest, so a
  // thread's consecutive units walk down the same destination columns.
  const std::int64_t strips = (A + R - 1) / R, panels = (B + kPanel - 1) / kPanel;
  const std::int64_t units = nouter * panels * strips;
  parallel_for(s, units, R * std::min(B, kPanel), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t u = lo; u < hi; ++u) {
      const std::int64_t i0 = (u % strips) * R;
      std::int64_t rest = u / strips;
      const std::int64_t j0 = (rest % panels) * kPanel;
      rest /= panels;
      char* d = plan.ptr[0];
      const char* src = plan.ptr[1];
      for (int k = 0; k < no && rest; ++k) {
        const std::int64_t idx = rest % oext[k];
        rest /= oext[k];
        d += idx * odst[k];
        src += idx * osrc[k];
      }
      d += i0 * dsa;
      src += i0 * ssa;
      const std::int64_t na = std::min(R, A - i0), j_end = std::min(B, j0 + kPanel);
      std::int64_t j = j0;
      if (fast && na == R)
        for (; j + C <= j_end; j += C) copy_block<E>(d + j * dsb, src + j * es, dsb, ssa, stream);
      for (; j < j_end; j += C)
        tile_scalar<E>(d + j * dsb, src + j * ssb, na, std::min(C, j_end - j), dsa, dsb, ssa, ssb);
    }
#if defined(__SSE2__)
    // Streaming stores are weakly ordered: fence before the results are handed on.
    if (stream) _mm_sfence();
#endif
  });
}

/// Below these sizes a plain line already reuses every source line it loads and the
/// blocks would be mostly edge (measured: 16×16 f64 breaks even, 64×64 is 1.6× faster
/// blocked, 128×128 3×).
constexpr std::int64_t kMinSide = 16;
constexpr std::int64_t kMinElements = 1024;

// ---------------------------------------------------------------- tiled kernel
// Note [Tiled copy of short axes] (transpose_copy.hpp).
constexpr std::int64_t kTileSide = 32;          // A and B grow to at least this many units,
constexpr std::int64_t kTileSideLarge = 64;     // or this many in copies of at least
constexpr std::int64_t kTileLargeBytes = std::int64_t{2} << 20;  // this many bytes,
constexpr std::int64_t kTileGrow = 64;          // splitting an axis that would take them past this
constexpr std::int64_t kTileMax = 512;          // (table entries at most, when it has no divisor)
constexpr std::int64_t kTileMinElements = 64;   // smaller tiles: the line loop

/// Byte offsets of every index of the axes `axes[0..n)` of `plan` for operand `op`
/// (column-major over the listed axes).
void tile_offsets(const LoopPlan<2>& plan, const int* axes, int n, int op, std::int64_t* out) noexcept {
  std::int64_t ext[kMaxRank], str[kMaxRank];
  for (int i = 0; i < n; ++i) ext[i] = plan.ext[axes[i]], str[i] = plan.str[axes[i]][op];
  axis_offsets(n, ext, str, out);
}

// Note [Transposed tiles]
// A tile whose A offsets step by one unit in the destination within aligned groups of
// g (its first A axes are the destination's fastest, in order: always so for a
// contiguous destination) and whose B offsets step likewise in the source is a
// transpose of g × g blocks: rows sa[a] of the source, contiguous along b, become
// columns db[b] of the destination, contiguous along a. The table loop read two offsets
// per element; a block reads them once per row and column:
//  - 8-byte units 4 × 4 through AVX2 registers (four row loads, four shuffles, four
//    lane permutes, four column stores: 16 elements in 12 vector operations and 8
//    offset loads, against 16 scalar copies and 32 offset loads), or 2 × 2 with SSE2;
//  - 16-byte units 2 × 2 through AVX2 lane permutes;
//  - units of 24 to 48 bytes (folded f64 axes of extent 3, 4 or 6) one destination
//    column at a time, each source row read one unit per column with the unit
//    ⌈48 / size⌉ columns on (the row's next cache line) prefetched: in blocks, the tile's
//    A source rows are as many streams, each a few units per visit, too many for the
//    hardware prefetchers. gm_queen5_5_3's automatic tree packs 1 GB as 81 × 81 tiles of
//    24-byte units: 0.38 → 0.17 s (memcpy of the same bytes 0.074 s); the same layout
//    with 32-byte units 0.41 → 0.24 s, 48-byte 0.19 → 0.14 s, but 72-byte 0.24 → 0.33
//    s, so 64 bytes and more stay in blocks (2026-12-07, one thread);
//  - any other unit 4 × 4, 3 × 3 or 2 × 2 element by element (extent-3 axes, other
//    sizes).
// Two plan changes in tiled_copy_plan make such tiles common:
//  - A leaves the source's unit-stride axis, and its even axes of stride below 32
//    bytes, to B, whose groups need them (a source-fastest axis among the destination's
//    fastest had left B without unit steps);
//  - a short destination-fastest axis that the source holds contiguously too (no tile
//    can pair it) is folded into the unit: the tile moves units of 16 to 72 bytes (f64
//    extents 2, 3, 4, 6, 8, 9), or elements again when too few axes are left for B.
// Tiles are 64 × 64 for copies of 2 MiB or more (kTileLargeBytes: longer runs for the
// prefetchers once the tensor leaves L2; rank 22 2.2 → 1.8 ns per element), 32 × 32 below.
// bench_dot copy/permute_extent2 (eight random permutations of f64 tensors of extent-2
// axes, one thread, 2026-12-07, AMD EPYC Zen 4 VM): rank 16 84 → 22 µs, rank 18 350 →
// 85 µs, rank 20 2.1-2.4 → 0.52-0.60 ms, rank 22 10.0-10.3 → 5.6-5.9 ms; memcpy of the
// same bytes 11, 46, 300 and 3000 µs. Extent 3 (copy/permute_extent3): docs/benchmarks.md.
/// True when `off` steps by one element within each aligned group of g entries.
bool unit_groups(const std::int64_t* off, std::int64_t n, std::int64_t g, std::int64_t es) noexcept {
  if (n % g != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    if (off[i] != off[i - i % g] + (i % g) * es) return false;
  return true;
}

/// One tile's extents and offset tables (destination and source, along A and B).
struct Tile {
  std::int64_t A = 1, B = 1;
  std::int64_t da[kTileMax], sa[kTileMax], db[kTileMax], sb[kTileMax];
};

#if defined(__SSE2__)
[[gnu::noinline]] __attribute__((target("avx2"))) void transposed_tile_avx2(char* d, const char* s, const Tile& t) noexcept {
  for (std::int64_t b = 0; b < t.B; b += 4) {
    char* d0 = d + t.db[b];
    char* d1 = d + t.db[b + 1];
    char* d2 = d + t.db[b + 2];
    char* d3 = d + t.db[b + 3];
    const char* sb = s + t.sb[b];
    for (std::int64_t a = 0; a < t.A; a += 4) {
      const __m256d r0 = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a]));
      const __m256d r1 = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a + 1]));
      const __m256d r2 = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a + 2]));
      const __m256d r3 = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a + 3]));
      const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      const std::int64_t o = t.da[a];
      _mm256_storeu_pd(reinterpret_cast<double*>(d0 + o), _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(reinterpret_cast<double*>(d1 + o), _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(reinterpret_cast<double*>(d2 + o), _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(reinterpret_cast<double*>(d3 + o), _mm256_permute2f128_pd(t1, t3, 0x31));
    }
  }
}

/// 2 × 2 blocks of 16-byte units (an extent-2 axis that both sides hold contiguously,
/// folded into the unit by try_tiled_copy): one 32-byte row load per pair of units.
[[gnu::noinline]] __attribute__((target("avx2"))) void transposed_tile16_avx2(char* d, const char* s, const Tile& t) noexcept {
  for (std::int64_t b = 0; b < t.B; b += 2) {
    char* d0 = d + t.db[b];
    char* d1 = d + t.db[b + 1];
    const char* sb = s + t.sb[b];
    for (std::int64_t a = 0; a < t.A; a += 2) {
      const __m256d x = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a]));
      const __m256d y = _mm256_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a + 1]));
      _mm256_storeu_pd(reinterpret_cast<double*>(d0 + t.da[a]), _mm256_permute2f128_pd(x, y, 0x20));
      _mm256_storeu_pd(reinterpret_cast<double*>(d1 + t.da[a]), _mm256_permute2f128_pd(x, y, 0x31));
    }
  }
}

void transposed_tile_sse2(char* d, const char* s, const Tile& t) noexcept {
  for (std::int64_t b = 0; b < t.B; b += 2) {
    char* d0 = d + t.db[b];
    char* d1 = d + t.db[b + 1];
    const char* sb = s + t.sb[b];
    for (std::int64_t a = 0; a < t.A; a += 2) {
      const __m128d x = _mm_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a]));
      const __m128d y = _mm_loadu_pd(reinterpret_cast<const double*>(sb + t.sa[a + 1]));
      _mm_storeu_pd(reinterpret_cast<double*>(d0 + t.da[a]), _mm_unpacklo_pd(x, y));
      _mm_storeu_pd(reinterpret_cast<double*>(d1 + t.da[a]), _mm_unpackhi_pd(x, y));
    }
  }
}

const bool kHasAvx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
#endif

/// G × G blocks moved element by element: the offset tables are read once per row and
/// column of a block instead of once per element (extent-3 axes, element sizes without
/// a vector block).
template <class E, int G> void transposed_tile_scalar(char* d, const char* s, const Tile& t) noexcept {
  constexpr auto es = static_cast<std::int64_t>(sizeof(E));
  for (std::int64_t b = 0; b < t.B; b += G) {
    char* dc[G];
    for (int j = 0; j < G; ++j) dc[j] = d + t.db[b + j];
    const char* sb = s + t.sb[b];
    for (std::int64_t a = 0; a < t.A; a += G) {
      const std::int64_t o = t.da[a];
      for (int i = 0; i < G; ++i) {
        const char* row = sb + t.sa[a + i];
        for (int j = 0; j < G; ++j) copy_elem<E>(dc[j] + o + i * es, row + j * es);
      }
    }
  }
}

/// Units of 24 to 48 bytes (folded axes), one destination column at a time: the
/// column's A units are written in order while each source row is read one unit, and
/// the row's unit kAhead columns on (its next cache line) is prefetched (Note
/// [Transposed tiles]).
template <class E> void transposed_columns(char* d, const char* s, const Tile& t) noexcept {
  constexpr auto es = static_cast<std::int64_t>(sizeof(E));
  constexpr std::int64_t kAhead = (48 + es - 1) / es;
  for (std::int64_t b = 0; b < t.B; ++b) {
    char* dc = d + t.db[b];
    const char* sc = s + t.sb[b];
    const char* next = s + t.sb[std::min(b + kAhead, t.B - 1)];
    for (std::int64_t a = 0; a < t.A; ++a) {
      __builtin_prefetch(next + t.sa[a]);
      copy_elem<E>(dc + t.da[a], sc + t.sa[a]);
    }
  }
}

template <class E> void tiled_copy(Session& s, const LoopPlan<2>& plan, const int* axes, int na, int nb) {
  // axes: A (na), then B (nb), then the outer axes.
  const int no = plan.rank - na - nb;
  const int* outer = axes + na + nb;
  Tile t;
  tile_offsets(plan, axes, na, 0, t.da);
  tile_offsets(plan, axes, na, 1, t.sa);
  tile_offsets(plan, axes + na, nb, 0, t.db);
  tile_offsets(plan, axes + na, nb, 1, t.sb);
  std::int64_t units = 1;
  for (int i = 0; i < na; ++i) t.A *= plan.ext[axes[i]];
  for (int i = 0; i < nb; ++i) t.B *= plan.ext[axes[na + i]];
  const std::int64_t A = t.A, B = t.B;
  const std::int64_t *da = t.da, *sa = t.sa, *db = t.db, *sb = t.sb;
  for (int i = 0; i < no; ++i) units *= plan.ext[outer[i]];
  // Note [Transposed tiles]: the kernel, or null for the element loop.
  void (*kernel)(char*, const char*, const Tile&) noexcept = nullptr;
  constexpr auto es = static_cast<std::int64_t>(sizeof(E));
  auto groups = [&](std::int64_t g) { return unit_groups(da, A, g, es) && unit_groups(sb, B, g, es); };
#if defined(__SSE2__)
  if constexpr (sizeof(E) == 8) {
    if (kHasAvx2 && groups(4)) kernel = transposed_tile_avx2;
    else if (groups(2)) kernel = transposed_tile_sse2;
  } else if constexpr (sizeof(E) == 16) {
    if (kHasAvx2 && groups(2)) kernel = transposed_tile16_avx2;
  }
#endif
  if (!kernel && sizeof(E) >= 24 && sizeof(E) < 64) kernel = transposed_columns<E>;
  if (!kernel) {
    if (groups(4)) kernel = transposed_tile_scalar<E, 4>;
    else if (groups(3)) kernel = transposed_tile_scalar<E, 3>;
    else if (groups(2)) kernel = transposed_tile_scalar<E, 2>;
  }
  parallel_for(s, units, A * B, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t u = lo; u < hi; ++u) {
      char* d = plan.ptr[0];
      const char* src = plan.ptr[1];
      std::int64_t rest = u;
      for (int k = 0; k < no && rest; ++k) {
        const std::int64_t e = plan.ext[outer[k]], idx = rest % e;
        rest /= e;
        d += idx * plan.str[outer[k]][0];
        src += idx * plan.str[outer[k]][1];
      }
      if (kernel) {
        kernel(d, src, t);
        continue;
      }
      for (std::int64_t b = 0; b < B; ++b) {
        char* dd = d + db[b];
        const char* ss = src + sb[b];
        for (std::int64_t a = 0; a < A; ++a) copy_elem<E>(dd + da[a], ss + sa[a]);
      }
    }
  });
}

/// Calls f(TypeTag<E>) with E the copy unit of `es`-byte elements.
template <class F> bool visit_size(std::size_t es, F&& f) {
  switch (es) {
    case 1: f(TypeTag<std::uint8_t>{}); return true;
    case 4: f(TypeTag<std::uint32_t>{}); return true;
    case 8: f(TypeTag<std::uint64_t>{}); return true;
    case 16: f(TypeTag<Bytes16>{}); return true;
    default: return false;
  }
}

}  // namespace

bool try_blocked_transpose_copy(Session& s, const LoopPlan<2>& plan, std::size_t elem_size) {
  if (plan.rank < 2 || plan.ext[0] < kMinSide || plan.numel < kMinElements) return false;
  // b: the source's fastest axis among the others (a zero stride is a broadcast: no
  // memory order to respect).
  int b = -1;
  std::int64_t best = std::llabs(plan.str[0][1]);
  for (int k = 1; k < plan.rank; ++k) {
    const std::int64_t v = std::llabs(plan.str[k][1]);
    if (v != 0 && v < best) {
      best = v;
      b = k;
    }
  }
  if (b < 0 || plan.ext[b] < kMinSide) return false;
  return visit_size(elem_size, [&](auto tag) { blocked_copy<typename decltype(tag)::type>(s, plan, b); });
}

namespace {

bool tiled_copy_plan(Session& s, const LoopPlan<2>& plan, std::size_t elem_size, bool may_fold) {
  // The source's fastest axis (a zero stride is a broadcast: the fill lines).
  int fastest = 0;
  for (int k = 1; k < plan.rank; ++k)
    if (std::llabs(plan.str[k][1]) < std::llabs(plan.str[fastest][1])) fastest = k;
  if (plan.str[fastest][1] == 0) return false;
  // Long lines in the memory order of both sides are what the line loop does best.
  const bool short_lines = plan.ext[0] < kMinSide;
  if (fastest == 0 && !short_lines) return false;
  LoopPlan<2> q = plan;  // axes may be split: inner part in place, outer part appended
  // A short destination axis that the source holds contiguously too moves as one unit
  // of 16 to 72 bytes (Note [Transposed tiles]).
  std::size_t unit = elem_size;
  const auto es = static_cast<std::int64_t>(elem_size);
  const std::int64_t run = q.ext[0] * es;
  if (may_fold && short_lines && fastest == 0 && q.rank >= 3 && q.str[0][0] == es && q.str[0][1] == es &&
      (run == 16 || run == 24 || run == 32 || run == 48 || run == 64 || run == 72)) {
    unit = static_cast<std::size_t>(q.ext[0] * es);
    for (int k = 1; k < q.rank; ++k) {
      q.ext[k - 1] = q.ext[k];
      q.str[k - 1][0] = q.str[k][0];
      q.str[k - 1][1] = q.str[k][1];
    }
    --q.rank;
  }
  bool used[kMaxRank] = {};
  // Takes q's axis k into a group of `size` elements; an axis that would take the group
  // past kTileGrow is split at a divisor of its extent when it has one (the group then
  // ends: `closed`). False when the axis cannot be taken.
  auto take = [&](int k, std::int64_t& size, bool& closed, bool may_split) {
    const std::int64_t e = q.ext[k];
    if (size * e > kTileGrow && may_split) {
      std::int64_t d = kTileGrow / size;
      while (d >= 2 && e % d != 0) --d;
      if (d >= 2 && q.rank < kMaxRank) {
        q.ext[q.rank] = e / d;
        q.str[q.rank][0] = q.str[k][0] * d;
        q.str[q.rank][1] = q.str[k][1] * d;
        ++q.rank;
        q.ext[k] = d;
        closed = true;
      }
    }
    if (size * q.ext[k] > kTileMax) return false;
    size *= q.ext[k];
    used[k] = true;
    return true;
  };
  int axes[kMaxRank];
  int na = 0, nb = 0;
  std::int64_t A = 1, B = 1;
  bool closed = false;
  // A: the destination's fastest axes. With short lines both groups take whole axes
  // only (where that needs a split, as in a 9 × n transpose or [7, 57, 7290] from
  // [7, 7290, 57], the line loop reads each source line several times from L1 and was
  // measured faster than tiles); a long destination axis whose source stride the blocked
  // kernel could not pair (n × 9 transposed) is split into tiles. One exception: A
  // stops before an axis it cannot take whole once it holds two units or more, and once
  // B holds a whole axis its next axis may be split, so small transposes repeated over a
  // batch axis ([4, 4, n] from [4, 4, n] with the first two swapped, a GEMM operand of
  // lm_batch_likelihood_brackets_4_4d) become 4 × 4k tiles of transposed 4 × 4 blocks
  // instead of n·4 lines of four elements: n = 1996 (32k elements) 38 → 10 µs, and
  // [4, 4, 4, 1996] with the first two swapped 151 → 27 µs (one thread, best of 2000,
  // 2026-12-07).
  const std::int64_t side = plan.numel * static_cast<std::int64_t>(elem_size) >= kTileLargeBytes ? kTileSideLarge : kTileSide;
  for (int k = 0; k < q.rank && A < side && !closed; ++k) {
    // The source's unit-stride axis, and its even axes of stride below 32 bytes, are
    // left to B, whose transposed tiles need them (Note [Transposed tiles]).
    const std::int64_t sk = std::llabs(q.str[k][1]);
    if (short_lines && k > 0 && (sk == static_cast<std::int64_t>(unit) || (unit >= 8 && q.ext[k] % 2 == 0 && sk < 32))) continue;
    if (!take(k, A, closed, !short_lines)) {
      if (short_lines && A < 2) return false;
      break;
    }
    axes[na++] = k;
  }
  // B: the unused axes by |source stride|, from the source's fastest.
  closed = false;
  while (B < side && !closed) {
    int next = -1;
    for (int k = 0; k < q.rank; ++k)
      if (!used[k] && (next < 0 || std::llabs(q.str[k][1]) < std::llabs(q.str[next][1]))) next = k;
    if (next < 0 || !take(next, B, closed, !short_lines || nb > 0)) break;
    axes[na + nb++] = next;
  }
  if (A < 2 || B < (short_lines ? kMinSide : 2) || A * B < kTileMinElements)
    return unit != elem_size && tiled_copy_plan(s, plan, elem_size, false);  // folded: too few axes left
  int no = na + nb;
  for (int k = 0; k < q.rank; ++k)
    if (!used[k]) axes[no++] = k;
  switch (unit) {
    case 24: tiled_copy<Bytes<24>>(s, q, axes, na, nb); return true;
    case 32: tiled_copy<Bytes<32>>(s, q, axes, na, nb); return true;
    case 48: tiled_copy<Bytes<48>>(s, q, axes, na, nb); return true;
    case 64: tiled_copy<Bytes<64>>(s, q, axes, na, nb); return true;
    case 72: tiled_copy<Bytes<72>>(s, q, axes, na, nb); return true;
    default: return visit_size(unit, [&](auto tag) { tiled_copy<typename decltype(tag)::type>(s, q, axes, na, nb); });
  }
}

}  // namespace

bool try_tiled_copy(Session& s, const LoopPlan<2>& plan, std::size_t elem_size) {
  if (plan.rank < 2 || plan.numel < kMinElements) return false;
  return tiled_copy_plan(s, plan, elem_size, true);
}

void run_copy_plan(Session& s, const LoopPlan<2>& plan, std::size_t elem_size) {
  if (try_blocked_transpose_copy(s, plan, elem_size) || try_tiled_copy(s, plan, elem_size)) return;
  const bool known = visit_size(elem_size, [&](auto tag) { run_plan(s, plan, 1, copy_line<typename decltype(tag)::type>); });
  if (!known) throw InternalError("copy", "unexpected element size " + std::to_string(elem_size));
}

void copy_same_dtype(Session& s, const Tensor& src, const Tensor& dst) {
  const int r = dst.rank();
  std::int64_t shape[kMaxRank], sd[kMaxRank], ss[kMaxRank];
  for (int i = 0; i < r; ++i) shape[i] = dst.extent(i);
  broadcast_byte_strides(dst, r, sd);
  broadcast_byte_strides(src, r, ss);
  const std::int64_t* strides[2] = {sd, ss};
  char* ptrs[2] = {static_cast<char*>(dst.mutable_data("copy")), static_cast<char*>(const_cast<void*>(src.data()))};
  LoopPlan<2> plan;
  plan.build(r, shape, strides, ptrs);
  run_copy_plan(s, plan, dtype_size(dst.dtype()));
}

void fill_bytes(Session& s, const Tensor& dst, const void* value) {
  const int r = dst.rank();
  std::int64_t shape[kMaxRank], sd[kMaxRank], zero[kMaxRank] = {};
  for (int i = 0; i < r; ++i) shape[i] = dst.extent(i);
  broadcast_byte_strides(dst, r, sd);
  const std::int64_t* strides[2] = {sd, zero};
  char* ptrs[2] = {static_cast<char*>(dst.mutable_data("fill")), static_cast<char*>(const_cast<void*>(value))};
  LoopPlan<2> plan;
  plan.build(r, shape, strides, ptrs);
  run_copy_plan(s, plan, dtype_size(dst.dtype()));
}

}  // namespace tenferro::detail
