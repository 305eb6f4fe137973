// See Note [FFTW threads] in fft_threads.hpp.
#include "fft/fft_threads.hpp"

#include <fftw3.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "cpu/parallel.hpp"

namespace tenferro::detail {

namespace {

thread_local const Session* t_session = nullptr;
thread_local bool t_in_job = false;  // this thread is running a job of some loop
std::atomic<std::uint64_t> g_arena_loops{0};

// Runs jobs [b, e); a loop FFTW starts from inside one of them (a nested loop) then runs
// serially: the outer loop already occupies the threads.
void run_jobs(void* (*work)(char*), char* jobdata, std::size_t elsize, std::int64_t b, std::int64_t e) {
  const bool prev = t_in_job;
  t_in_job = true;
  for (std::int64_t i = b; i < e; ++i) work(jobdata + static_cast<std::size_t>(i) * elsize);
  t_in_job = prev;
}

// Without a session: one std::thread per job beyond the first (which runs here).
void run_on_threads(void* (*work)(char*), char* jobdata, std::size_t elsize, int njobs) noexcept {
  std::vector<std::thread> threads;
  int started = 1;
  try {
    threads.reserve(static_cast<std::size_t>(njobs - 1));
    for (; started < njobs; ++started) threads.emplace_back(run_jobs, work, jobdata, elsize, started, started + 1);
  } catch (...) {
    // Could not start more threads: the remaining jobs run here.
  }
  run_jobs(work, jobdata, elsize, 0, 1);
  run_jobs(work, jobdata, elsize, started, njobs);
  for (std::thread& t : threads) t.join();
}

void parallel_loop(void* (*work)(char*), char* jobdata, std::size_t elsize, int njobs, void*) {
  const Session* s = t_session;
  if (njobs <= 1 || t_in_job) {
    run_jobs(work, jobdata, elsize, 0, njobs);
    return;
  }
  if (!s) {
    run_on_threads(work, jobdata, elsize, njobs);
    return;
  }
  std::atomic<bool> ran{false};
  try {
    const int threads = std::min(njobs, s->num_threads());
    parallel_chunks(*s, njobs, threads, [&](std::int64_t b, std::int64_t e) {
      ran.store(true, std::memory_order_relaxed);
      run_jobs(work, jobdata, elsize, b, e);
    });
    g_arena_loops.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    // Only the worker pool's creation can throw, before any job ran (the jobs are
    // FFTW's C code and do not throw): run them all on plain threads instead.
    if (!ran.load()) run_on_threads(work, jobdata, elsize, njobs);
  }
}

}  // namespace

FftSessionScope::FftSessionScope(const Session* s) noexcept : prev_(t_session) { t_session = s; }
FftSessionScope::~FftSessionScope() { t_session = prev_; }

void install_fftw_parallel_loop() noexcept {
  fftw_threads_set_callback(parallel_loop, nullptr);
  fftwf_threads_set_callback(parallel_loop, nullptr);
}

std::uint64_t fftw_arena_loops() noexcept { return g_arena_loops.load(std::memory_order_relaxed); }

}  // namespace tenferro::detail
