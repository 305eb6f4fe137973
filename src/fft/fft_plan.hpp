#pragma once
// FFTW plans: the problem description handed to FFTW's guru64 interface, the cache key and
// handle the session's plan cache holds (a BoundedCache<ErasedHandle> in the CPU
// resources, which never see this header), and the global planner lock. This header
// does not include fftw3.h.
//
// Note [FFTW planner lock]
// FFTW's planner (plan creation and destruction, fftw_plan_with_nthreads) touches
// global state and is not thread-safe; executing a plan is (FFTW manual, "Thread
// safety"). Every planner call therefore runs under one process-wide mutex
// (planner_mutex in fft_plan.cpp), including the plan destruction done when a cache
// evicts an entry or a backend's resources are destroyed. Executions take no lock.
// FFTW's own fftw_make_planner_thread_safe is also switched on, for other code in the
// process that plans with FFTW without our mutex.
// Plans are executed with the new-array functions (fftw_execute_dft(plan, in, out)),
// which require arrays with the same alignment (fftw_alignment_of), the same in-place
// or out-of-place relation and the same strides as at planning time: all three are in
// the cache key, so a cached plan is only ever reused where FFTW allows it.
#include "core/internal_check.hpp"

#include <array>
#include <cstdint>

#include "core/bounded_cache.hpp"
#include "ops/fft.hpp"
#include "tenferro/shape.hpp"

namespace tenferro::detail {

/// One dimension in FFTW's guru64 layout (same members as fftw_iodim64: length, input
/// stride, output stride; strides in elements of the input / output types).
struct FftIodim {
  std::int64_t n, is, os;
};

/// A transform as FFTW's guru interface sees it: `rank` transform dimensions (for r2c
/// and c2r the LAST one is the halved axis) and `howmany_rank` loop dimensions.
struct FftProblem {
  FftKind kind = FftKind::c2c_forward;
  bool single = false;  ///< float precision (fftwf_*), else double
  bool measure = false; ///< FFTW_MEASURE instead of FFTW_ESTIMATE
  int threads = 1;      ///< fftw_plan_with_nthreads at planning time
  int rank = 0, howmany_rank = 0;
  // Left uninitialized: only the first rank / howmany_rank entries are meaningful
  // (zeroing 3 KiB per call would cost more than a small transform).
  std::array<FftIodim, kMaxRank> dims, howmany;
};

/// A cached FFTW plan (an fftw_plan or fftwf_plan, by `single`).
struct FftPlanHandle {
  void* plan = nullptr;
  bool single = false;
};

/// Header words + (n, is, os) per dimension of an FFT plan cache key.
inline constexpr int kMaxFftKey = 8 + 3 * kMaxRank;

/// Serializes the cache key of a problem planned on arrays with the given alignments
/// (fftw_alignment_of) and in-place relation; returns its length.
int fft_cache_key(const FftProblem& p, int in_align, int out_align, bool in_place, std::int64_t* key, std::uint64_t& hash) noexcept;

/// fftw_alignment_of / fftwf_alignment_of of a pointer.
int fft_alignment_of(const void* p, bool single) noexcept;

/// Creates a plan for `p` under the planner lock (see Note [FFTW planner lock]). With
/// FFTW_ESTIMATE the plan is made on `in`/`out` themselves (FFTW does not touch the
/// arrays); with FFTW_MEASURE on scratch arrays spanning the same strides with the same
/// alignment, so the caller's data is never overwritten. `in_span`/`out_span` are the
/// element index ranges [lo, hi] the strides reach from `in`/`out`. Throws BackendError
/// naming `op` when FFTW returns no plan.
FftPlanHandle make_fft_plan(std::string_view op, const FftProblem& p, void* in, void* out, std::int64_t in_lo, std::int64_t in_hi,
                            std::int64_t out_lo, std::int64_t out_hi);

/// Destroys a plan under the planner lock.
void destroy_fft_plan(FftPlanHandle h) noexcept;

/// A plan as the session's plan cache holds it (BoundedCache<ErasedHandle> in the CPU
/// resources): destroying the handle destroys the plan under the planner lock.
ErasedHandle owned_fft_plan(FftPlanHandle h) noexcept;

/// Runs a plan on new arrays (fftw_execute_dft / _r2c / _c2r); no lock.
void execute_fft_plan(const FftPlanHandle& h, FftKind kind, void* in, void* out) noexcept;

}  // namespace tenferro::detail
