// CpuBackend::execution_info and the names of its enums.
#include <cblas.h>
#include <oneapi/tbb/version.h>

#include <string>

#include "cpu/context.hpp"
#include "cpu/provider_kernels.hpp"

namespace tenferro {

Executor::~Executor() = default;

std::string_view thread_source_name(ThreadSource s) noexcept {
  switch (s) {
    case ThreadSource::option: return "option";
    case ThreadSource::env_tenferro: return "env_tenferro";
    case ThreadSource::env_omp: return "env_omp";
    case ThreadSource::cpu_list: return "cpu_list";
    case ThreadSource::affinity: return "affinity";
    case ThreadSource::executor: return "executor";
  }
  return "?";
}

std::string_view executor_kind_name(ExecutorKind k) noexcept {
  switch (k) {
    case ExecutorKind::worker_pool: return "worker_pool";
    case ExecutorKind::caller: return "caller";
  }
  return "?";
}

std::string_view admission_mode_name(AdmissionMode m) noexcept {
  switch (m) {
    case AdmissionMode::fifo_per_cpu: return "fifo_per_cpu";
    case AdmissionMode::caller_managed: return "caller_managed";
  }
  return "?";
}

namespace {
std::string openblas_threading() {
  switch (openblas_get_parallel()) {
    case 0: return "sequential build";
    case 1: return "pthreads build; its thread count is process-wide and set to the calling session's budget on each call (Note [BLAS threads])";
    case 2: return "OpenMP build; its thread count is process-wide and set to the calling session's budget on each call (Note [BLAS threads])";
  }
  return "unknown build";
}
}  // namespace

ExecutionInfo CpuBackend::execution_info() const {
  const detail::BackendState& b = *state_;
  const bool caller = b.executor != nullptr;
  ExecutionInfo info;
  info.num_threads = b.num_threads;
  info.thread_source = b.thread_source;
  info.cpus = b.cpus;
  info.pinned = !caller;
  info.executor = caller ? ExecutorKind::caller : ExecutorKind::worker_pool;
  info.admission = caller ? AdmissionMode::caller_managed : AdmissionMode::fifo_per_cpu;
  const int blas_threads = openblas_get_num_threads();
  const std::string blas_mode = caller ? "runs single-threaded inside the executor's tasks" : openblas_threading();
  info.providers.push_back({"OpenBLAS", openblas_get_config(), blas_threads, blas_mode});
  info.providers.push_back({"LAPACK", std::string("OpenBLAS's, through LAPACKE; ") + openblas_get_config(), blas_threads,
                            "as OpenBLAS (the same thread count)"});
  info.providers.push_back({"FFTW3", detail::fftw_version_string(), b.num_threads,
                            caller ? "plans split into jobs run by the caller-owned executor (fftw_threads_set_callback)"
                                   : "plans split into jobs run on the backend's worker pool (fftw_threads_set_callback)"});
  info.providers.push_back({"oneTBB", TBB_runtime_version(), caller ? 0 : b.num_threads,
                            caller ? "not used (the caller owns the threads)" : "one arena per backend, started on first parallel use, workers pinned to the CPU set"});
  return info;
}

std::string ExecutionInfo::to_string() const {
  std::string s = "threads: " + std::to_string(num_threads) + " (from " + std::string(thread_source_name(thread_source)) + ")\ncpus: {";
  for (std::size_t i = 0; i < cpus.size(); ++i) s += (i ? "," : "") + std::to_string(cpus[i]);
  s += std::string("}") + (pinned ? " (workers pinned)" : " (not pinned)") + "\nexecutor: " + std::string(executor_kind_name(executor)) +
       "\nadmission: " + std::string(admission_mode_name(admission)) + "\n";
  for (const ProviderInfo& p : providers)
    s += p.name + ": " + p.version + "; threads " + std::to_string(p.threads) + "; " + p.threading + "\n";
  return s;
}

}  // namespace tenferro
