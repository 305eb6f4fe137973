#pragma once
// Per-session cache of LAPACK workspace sizes (the linalg family's "plan"). A LAPACK
// workspace query (lwork = -1) costs about as much as a small factorization's setup, so
// each (routine, dtype, shape, job) is queried once and the sizes kept here, checked
// out with the session's resources (a BoundedCache: Note [Bounded caches]).
#include "core/internal_check.hpp"

#include <cstdint>

#include "core/bounded_cache.hpp"

namespace tenferro::detail {

/// Key of one workspace query: routine id (family-defined), dtype, up to three extents,
/// and job characters packed in `flags`.
struct LinalgKey {
  std::uint32_t routine = 0;
  std::uint32_t flags = 0;
  std::int64_t m = 0, n = 0, k = 0;
  /// The key as cache words and its hash.
  int words(std::int64_t* w, std::uint64_t& hash) const noexcept {
    w[0] = (static_cast<std::int64_t>(routine) << 32) | flags;
    w[1] = m;
    w[2] = n;
    w[3] = k;
    std::uint64_t h = routine * 0x9E3779B97F4A7C15ull ^ flags;
    for (int i = 1; i < 4; ++i) h = (h ^ static_cast<std::uint64_t>(w[i])) * 0x100000001B3ull;
    hash = h ^ (h >> 29);
    return 4;
  }
};

/// Workspace sizes in elements (work: the routine's scalar type; rwork: its real type;
/// iwork: lapack_int).
struct LinalgWorkspace {
  std::int64_t lwork = 0, lrwork = 0, liwork = 0;
};

/// The cache of workspace sizes.
using LinalgPlanCache = BoundedCache<LinalgWorkspace>;

}  // namespace tenferro::detail
