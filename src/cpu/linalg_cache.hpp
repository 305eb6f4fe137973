#pragma once
// Per-session cache of LAPACK workspace sizes (the linalg family's "plan"). A LAPACK
// workspace query (lwork = -1) costs about as much as a small factorization's setup, so
// each (routine, dtype, shape, job) is queried once and the sizes kept here, checked
// out with the session's resources like DotPlanCache.
#include "core/internal_check.hpp"

#include <array>
#include <cstdint>

#include "tenferro/dot.hpp"

namespace tenferro::detail {

/// Key of one workspace query: routine id (family-defined), dtype, up to three extents,
/// and job characters packed in `flags`.
struct LinalgKey {
  std::uint32_t routine = 0;
  std::uint32_t flags = 0;
  std::int64_t m = 0, n = 0, k = 0;
  bool operator==(const LinalgKey&) const = default;
};

/// Workspace sizes in elements (work: the routine's scalar type; rwork: its real type;
/// iwork: lapack_int).
struct LinalgWorkspace {
  std::int64_t lwork = 0, lrwork = 0, liwork = 0;
};

/// Fixed-capacity direct-mapped cache (a colliding key replaces the slot's entry).
class LinalgPlanCache {
 public:
  static constexpr int kCapacity = 64;
  /// The cached sizes for `key`, or null (counts a hit or a miss).
  const LinalgWorkspace* find(const LinalgKey& key) noexcept {
    Entry& e = entries_[slot(key)];
    if (e.used && e.key == key) {
      ++stats.hits;
      return &e.ws;
    }
    ++stats.misses;
    return nullptr;
  }
  /// Stores sizes for `key`.
  void insert(const LinalgKey& key, const LinalgWorkspace& ws) noexcept {
    Entry& e = entries_[slot(key)];
    if (e.used) ++stats.evictions;
    else ++stats.entries;
    e = {key, ws, true};
  }
  PlanCacheStats stats;

 private:
  struct Entry {
    LinalgKey key;
    LinalgWorkspace ws;
    bool used = false;
  };
  static std::size_t slot(const LinalgKey& k) noexcept {
    std::uint64_t h = k.routine * 0x9E3779B97F4A7C15ull ^ k.flags;
    for (std::int64_t v : {k.m, k.n, k.k}) h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001B3ull;
    return static_cast<std::size_t>((h ^ (h >> 29)) % kCapacity);
  }
  std::array<Entry, kCapacity> entries_{};
};

}  // namespace tenferro::detail
