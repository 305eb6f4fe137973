#pragma once
// Splitting large work across a session's thread budget (oneTBB arena per backend).
//
// Note [Fork cost model]
// Work runs inline on the caller's thread unless the session has more than one thread
// and the estimated work exceeds kForkThreshold "element-operations" (an element-op is
// roughly one simple arithmetic op on one element, ~0.3 ns). Forking into the arena
// costs a few microseconds, so below ~100k element-ops it never pays. Analytic ops pass
// a higher per-element cost (exp ≈ 10) so they fork at smaller sizes.
#include "core/internal_check.hpp"

#include <cstdint>
#include <functional>

#include "tenferro/cpu_backend.hpp"

namespace tenferro::detail {

struct BackendState;

inline constexpr std::int64_t kForkThreshold = 1 << 17;

/// Worker pool of one backend (defined in parallel.cpp).
struct Workers;
void destroy_workers(BackendState& b) noexcept;

/// Threads worth using for `n` items of `cost` element-ops each on session `s` (1: inline).
int fork_threads(const Session& s, std::int64_t n, std::int64_t cost) noexcept;

/// Runs f(begin, end) over [0, n) in `threads` contiguous chunks (chunk boundaries depend
/// only on n and threads). threads <= 1 runs inline. Exceptions from f propagate.
void parallel_chunks(const Session& s, std::int64_t n, int threads, const std::function<void(std::int64_t, std::int64_t)>& f);

/// Convenience: decides with fork_threads, then runs inline or in parallel.
template <class F> void parallel_for(const Session& s, std::int64_t n, std::int64_t cost, F&& f) {
  const int t = fork_threads(s, n, cost);
  if (t <= 1) {
    if (n > 0) f(std::int64_t{0}, n);
    return;
  }
  parallel_chunks(s, n, t, std::function<void(std::int64_t, std::int64_t)>(std::ref(f)));
}

}  // namespace tenferro::detail
