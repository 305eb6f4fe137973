// Distributed contraction: the norm <psi|psi> of a random lx×ly PEPS of bond D, a closed
// network whose intermediates exceed a memory limit, so the plan is sliced and the
// slices run on all MPI ranks (tenferro::mpi::distributed_einsum).
//
//   mpirun -np 2 build/release/examples/mpi_contract [--lx 5] [--ly 5] [--bond 4]
//       [--phys 2] [--limit ELEMENTS] [--trials T] [--threads N] [--reps R] [--check] [--quick]
//
// --limit: the largest intermediate any rank may hold (elements); --trials: anneal trials
// on rank 0 (a fixed count, not a time budget, so the plan is the same on every run;
// 0: the automatic planner, whose plan depends on the machine's speed); --threads: threads of
// each rank's session (one rank per node or socket, threads inside); --reps: timed
// repetitions (the best is reported); --check: also contract on rank 0 alone with plain
// einsum and compare; --quick: a small network, checked (what ctest runs).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tenferro/mpi.hpp>
#include <tenferro/tenferro.hpp>

#include "peps_network.hpp"

using namespace tenferro;
using peps_network::peps_norm;
using peps_network::set_optimizer;
using peps_network::arg;

namespace {

bool flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool quick = flag(argc, argv, "--quick");
  const int lx = static_cast<int>(arg(argc, argv, "--lx", quick ? 3 : 5));
  const int ly = static_cast<int>(arg(argc, argv, "--ly", quick ? 3 : 5));
  const auto D = static_cast<std::int64_t>(arg(argc, argv, "--bond", quick ? 3 : 4));
  const auto d = static_cast<std::int64_t>(arg(argc, argv, "--phys", 2));
  const double limit = arg(argc, argv, "--limit", quick ? 300 : 1 << 16);
  const int threads = static_cast<int>(arg(argc, argv, "--threads", 1));
  const int reps = static_cast<int>(arg(argc, argv, "--reps", 1));
  const bool check = quick || flag(argc, argv, "--check");
  const auto trials = static_cast<std::int64_t>(arg(argc, argv, "--trials", 1000));
  int rc = 0;
  try {
    CpuBackendOptions bo;
    bo.num_threads = threads;
    CpuBackend backend(bo);
    HeldSession s = backend.open_session();

    std::string subscripts;
    std::vector<Shape> shapes;
    peps_norm(lx, ly, D, d, subscripts, shapes);
    // Every rank draws the same operands from the same seed (OperandSource::every_rank);
    // OperandSource::broadcast would send rank 0's instead.
    Generator gen(2026);
    std::vector<Tensor> ops;
    for (const Shape& sh : shapes) ops.push_back(Tensor::normal(gen, sh, DType::f64));

    mpi::DistributedOptions o;
    o.einsum.plan.max_intermediate_elements = limit;
    set_optimizer(o.einsum.plan, trials);
    mpi::DistributedInfo info;
    Tensor norm;
    double best = INFINITY;
    for (int r = 0; r < std::max(reps, 1); ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      norm = mpi::distributed_einsum(s, MPI_COMM_WORLD, subscripts, ops, o, &info);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), tmax = 0;
      MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      best = std::min(best, tmax);
      if (rank == 0) std::printf("rep %d: %.3f s\n", r, tmax);
    }
    double contract = info.contract_seconds, contract_max = 0;
    MPI_Allreduce(&contract, &contract_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("PEPS norm %dx%d, bond %lld, physical %lld: %zu tensors; memory limit %.0f elements\n", lx, ly,
                  static_cast<long long>(D), static_cast<long long>(d), ops.size(), limit);
      std::printf("plan: %lld slices over %zu sliced labels, %.3g predicted s in all (%.3g s per slice), overhead %.2fx\n",
                  static_cast<long long>(info.num_slices), info.path.sliced.size(), info.slice_seconds * info.num_slices,
                  info.slice_seconds, info.path.slicing_overhead);
      std::printf("%d rank(s) x %d thread(s): best of %d %.3f s (slices %.3f s, predicted makespan %.3f s, plan %.3f s)\n",
                  size, threads, std::max(reps, 1), best, contract_max, info.predicted_makespan, info.plan_seconds);
      std::printf("<psi|psi> = %.15g\n", norm.item<double>());
    }
    if (check && rank == 0) {
      const Tensor ref = einsum(s, subscripts, ops);  // unsliced, one process
      const double a = norm.item<double>(), b = ref.item<double>(), rel = std::abs(a - b) / std::abs(b);
      if (rel <= 1e-12) {
        std::printf("matches the single-process einsum (relative difference %.2e)\n", rel);
      } else {
        std::printf("MISMATCH: single-process einsum gives %.15g (relative difference %.2e)\n", b, rel);
        rc = 1;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
