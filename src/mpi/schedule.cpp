// Assigning slices to ranks (longest processing time first) and predicting the run.
//
// Today every slice of a plan has the same shapes (Note [Einsum slicing]: chunks divide
// the extents), so the predicted times are equal and LPT is round robin; the general
// form stays so that uneven slicings (remainder chunks, skipped zero blocks) need no new
// scheduler. The simulation counts exactly the messages distributed_einsum sends.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <string>

#include "mpi/comm.hpp"
#include "tenferro/error.hpp"
#include "tenferro/mpi.hpp"

namespace tenferro::mpi {

namespace {
constexpr std::string_view kAssign = "assign_slices";

void check_inputs(std::string_view op, std::span<const double> t, int P) {
  if (P < 1) throw ArgumentError(op, "num_ranks = " + std::to_string(P) + "; need at least 1");
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!(std::isfinite(t[i]) && t[i] >= 0))
      throw ArgumentError(op, "slice " + std::to_string(i) + " has predicted time " + std::to_string(t[i]) +
                                  "; need a finite time >= 0");
}

// Messages of the binomial reduction (Note [Deterministic reduction]) seen by relative
// rank v of P: one send unless v is the root, one receive per partner below it.
void binomial_messages(int v, int P, double& sent, double& received) {
  sent = received = 0;
  for (int mask = 1; mask < P; mask <<= 1) {
    if (v & mask) {
      sent = 1;
      return;
    }
    if (v + mask < P) received += 1;
  }
}
}  // namespace

SliceAssignment assign_slices(std::span<const double> slice_seconds, int num_ranks) {
  check_inputs(kAssign, slice_seconds, num_ranks);
  const std::size_t S = slice_seconds.size();
  SliceAssignment a;
  a.owner.assign(S, 0);
  a.rank_seconds.assign(static_cast<std::size_t>(num_ranks), 0.0);
  std::vector<std::size_t> order(S);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return slice_seconds[x] > slice_seconds[y]; });
  // Min-heap on (load, rank): the least-loaded rank, ties to the lower rank.
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (int r = 0; r < num_ranks; ++r) heap.emplace(0.0, r);
  for (std::size_t s : order) {
    auto [load, r] = heap.top();
    heap.pop();
    a.owner[s] = r;
    load += slice_seconds[s];
    a.rank_seconds[static_cast<std::size_t>(r)] = load;
    heap.emplace(load, r);
  }
  a.makespan = *std::max_element(a.rank_seconds.begin(), a.rank_seconds.end());
  a.mean = std::accumulate(a.rank_seconds.begin(), a.rank_seconds.end(), 0.0) / num_ranks;
  a.imbalance = a.mean > 0 ? a.makespan / a.mean : 1.0;
  return a;
}

ScheduleEstimate simulate_schedule(std::span<const double> slice_seconds, int num_ranks, double result_bytes, double plan_bytes,
                                   Reduction reduction, const NetworkModel& net) {
  constexpr std::string_view op = "simulate_schedule";
  check_inputs(op, slice_seconds, num_ranks);
  if (!(result_bytes >= 0 && plan_bytes >= 0))
    throw ArgumentError(op, "result_bytes = " + std::to_string(result_bytes) + ", plan_bytes = " + std::to_string(plan_bytes) +
                                "; need both >= 0");
  const SliceAssignment a = assign_slices(slice_seconds, num_ranks);
  const int P = num_ranks;
  ScheduleEstimate e;
  e.num_ranks = P;
  e.serial_seconds = std::accumulate(slice_seconds.begin(), slice_seconds.end(), 0.0);
  e.compute_makespan = a.makespan;
  e.imbalance = a.imbalance;
  // Critical path: ceil(log2 P) rounds of one result message (reduce), doubled by the
  // broadcast under Reduction::all; the plan broadcast and the small agreements
  // (hash, 3 error agreements) add log-depth latencies.
  int depth = 0;
  while ((1 << depth) < P) ++depth;
  const double msg = net.latency_seconds + result_bytes / net.bytes_per_second;
  const double rounds = reduction == Reduction::all ? 2.0 * depth : depth;
  e.reduce_seconds = rounds * msg + depth * (5 * net.latency_seconds + plan_bytes / net.bytes_per_second);
  e.makespan = e.compute_makespan + e.reduce_seconds;
  e.efficiency = e.makespan > 0 ? e.serial_seconds / (P * e.makespan) : 1.0;
  // Bytes per rank: the plan broadcast (received once, or sent by the root), the
  // reduction's messages and, under Reduction::all, the mirrored broadcast tree.
  double max_b = 0, sum_b = 0;
  for (int v = 0; v < P; ++v) {
    double sent = 0, received = 0;
    binomial_messages(v, P, sent, received);
    double msgs = sent + received;
    if (reduction == Reduction::all) msgs *= 2;
    const double b = (P > 1 ? plan_bytes : 0) + msgs * result_bytes;
    max_b = std::max(max_b, b);
    sum_b += b;
  }
  e.max_bytes_per_rank = max_b;
  e.mean_bytes_per_rank = sum_b / P;
  return e;
}

}  // namespace tenferro::mpi
