// Simulated scaling of the distributed einsum beyond one machine: plans a sliced PEPS
// norm (no data, no MPI), takes the cost model's per-slice time, assigns the slices to
// P ranks as distributed_einsum does (longest processing time first) and prints, for
// P = 1, 2, 3, 4, 6, 8, ..., 768, 1024, the predicted makespan, the parallel efficiency against
// perfect scaling, the load imbalance (max/mean) and the bytes each rank sends and
// receives (plan broadcast + deterministic reduction; NetworkModel's defaults).
//
// The default network is the one examples/mpi_contract.cpp times (docs/benchmarks.md).
//   build/release/bench/bench_mpi_scaling [--lx 5] [--ly 5] [--bond 4] [--phys 2]
//       [--limit ELEMENTS] [--trials T] [--budget S] [--max-ranks 1024]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tenferro/mpi.hpp>
#include <tenferro/tenferro.hpp>

#include "peps_network.hpp"  // examples/

using namespace tenferro;
using peps_network::peps_norm;
using peps_network::set_optimizer;
using peps_network::arg;

namespace {

std::string bytes(double b) {
  char buf[32];
  if (b < 1024) std::snprintf(buf, sizeof buf, "%.0f B", b);
  else if (b < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024 * 1024));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const int lx = static_cast<int>(arg(argc, argv, "--lx", 5)), ly = static_cast<int>(arg(argc, argv, "--ly", 5));
  const auto D = static_cast<std::int64_t>(arg(argc, argv, "--bond", 4));
  const auto d = static_cast<std::int64_t>(arg(argc, argv, "--phys", 2));
  const double limit = arg(argc, argv, "--limit", 1 << 16);
  const double budget = arg(argc, argv, "--budget", 5.0);
  const auto trials = static_cast<std::int64_t>(arg(argc, argv, "--trials", 1000));
  const int max_ranks = static_cast<int>(arg(argc, argv, "--max-ranks", 1024));
  try {
    std::string subscripts;
    std::vector<Shape> shapes;
    peps_norm(lx, ly, D, d, subscripts, shapes);
    const std::vector<DType> dtypes(shapes.size(), DType::f64);
    EinsumOptions o;
    o.plan.max_intermediate_elements = limit;
    o.plan.time_budget_s = budget;
    set_optimizer(o.plan, trials);
    const EinsumPlan plan(subscripts, shapes, dtypes, o);
    const EinsumPathInfo& p = plan.path();
    const std::int64_t S = plan.num_slices();
    const double per_slice = p.cost.predicted_seconds / static_cast<double>(S);
    const double result_bytes = static_cast<double>(dtype_size(plan.output_dtype()));  // closed: a scalar
    // What distributed_einsum broadcasts: the packed plan and its length (8-byte words).
    const double plan_bytes = 8.0 * (5 + 2 * p.tree.steps.size() + 4 * p.sliced.size()) + 8;
    std::printf("PEPS norm %dx%d bond %lld phys %lld (%zu tensors), f64, memory limit %.0f elements\n", lx, ly,
                static_cast<long long>(D), static_cast<long long>(d), shapes.size(), limit);
    std::printf("plan: %lld slices (%zu sliced labels), largest intermediate %.0f elements, slicing overhead %.2fx,\n",
                static_cast<long long>(S), p.sliced.size(), p.cost.largest_intermediate, p.slicing_overhead);
    std::printf("      predicted %.4g s per slice, %.4g s in all on one rank (planning %.2f s)\n\n", per_slice,
                p.cost.predicted_seconds, p.planning_seconds);
    const std::vector<double> costs(static_cast<std::size_t>(S), per_slice);
    std::printf("| ranks | slices/rank (max) | makespan s | efficiency | imbalance max/mean | reduce s | bytes/rank max | bytes/rank mean |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    // Powers of two and three times powers of two: the latter do not divide the slice
    // count, which is where imbalance shows.
    std::vector<int> ranks;
    for (int P = 1; P <= max_ranks; P *= 2) {
      ranks.push_back(P);
      if (P >= 2 && 3 * P / 2 <= max_ranks) ranks.push_back(3 * P / 2);
    }
    for (int P : ranks) {
      const mpi::ScheduleEstimate e = mpi::simulate_schedule(costs, P, result_bytes, plan_bytes, mpi::Reduction::all);
      std::printf("| %d | %lld | %.4g | %.1f%% | %.3f | %.2g | %s | %s |\n", P, static_cast<long long>((S + P - 1) / P),
                  e.makespan, 100 * e.efficiency, e.imbalance, e.reduce_seconds, bytes(e.max_bytes_per_rank).c_str(),
                  bytes(e.mean_bytes_per_rank).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_mpi_scaling: %s\n", e.what());
    return 1;
  }
  return 0;
}
