#pragma once
// FFTW's parallel loops on the backend's worker arena.
//
// Note [FFTW threads]
// A plan made with fftw_plan_with_nthreads(k > 1) splits its work into jobs and hands
// them to a "parallel loop". By default FFTW runs that loop on its own pthreads, which
// are not pinned to the backend's CPU set. FFTW >= 3.3.9 lets a program replace the loop
// (fftw_threads_set_callback, process-global): tenferro installs one that runs the jobs
// through parallel_chunks on the session's oneTBB arena, whose workers are pinned to the
// backend's CPUs, so FFTW stays inside the session's CPU set and thread budget. The
// session is found through a thread-local set by FftSessionScope around planning and
// execution. A loop started from inside a job (nested) runs serially: the outer loop
// already occupies the budget. A loop reached with no session (another part of the
// process using FFTW's threads) runs its jobs on plain std::threads, one per job beyond
// the first, as FFTW itself would without its pool.
#include "core/internal_check.hpp"

#include <cstdint>

#include "tenferro/cpu_backend.hpp"

namespace tenferro::detail {

/// Makes `s` the session FFTW's parallel loops run on, on this thread, for its lifetime.
class FftSessionScope {
 public:
  explicit FftSessionScope(const Session* s) noexcept;
  ~FftSessionScope();
  FftSessionScope(const FftSessionScope&) = delete;
  FftSessionScope& operator=(const FftSessionScope&) = delete;

 private:
  const Session* prev_;
};

/// Installs the callback for both precisions (called once, under the planner lock).
void install_fftw_parallel_loop() noexcept;

/// Parallel loops run on a session's arena so far (for tests).
std::uint64_t fftw_arena_loops() noexcept;

}  // namespace tenferro::detail
