#pragma once
/// \file mpi.hpp
/// Distributed einsum over MPI (the optional `tenferro::mpi` component, built when
/// Open MPI is found: CMake option TENFERRO_ENABLE_MPI). Nothing else in tenferro
/// includes this header or <mpi.h>.
///
/// A closed network that does not fit one machine is contracted by slicing (PlanOptions'
/// memory limit, Note [Einsum slicing]): every slice is independent, so the slices are
/// spread over the ranks of a communicator and the partial results are summed.
///
/// Every rank of `comm` calls distributed_einsum collectively with the same subscripts
/// and options, and either the same operands (OperandSource::every_rank) or none that
/// matter (OperandSource::broadcast: rank 0's operands are sent to every rank). Then:
///  1. every rank hashes its subscripts, options and (every_rank) operand shapes and
///     dtypes; a rank whose hash differs from rank 0's fails the call on every rank
///     (ArgumentError naming both ranks' inputs);
///  2. rank 0 prepares the EinsumPlan (order and slicing) and broadcasts its tree; every
///     rank prepares the same plan along that tree and checks that its slicing equals
///     rank 0's, so all ranks run the identical plan;
///  3. the slices are assigned to ranks by predicted cost, longest processing time
///     first (assign_slices); each rank runs its slices in ascending slice order in its
///     own session (with that session's threads), summing into one buffer of the
///     result's dtype;
///  4. the partial results are summed in a fixed order (Note [Deterministic reduction]
///     in src/mpi/reduce.cpp): a binomial tree over the ranks relative to the root, built
///     from point-to-point messages, each receiver adding the sender's buffer onto its
///     own. For a given number of ranks (and root) the summation order, and so the
///     result, is the same on every run; Reduction::all then broadcasts the root's
///     buffer, so every rank holds bit-identical values.
///
/// Errors never hang: every step that can fail on one rank (validation, planning, a
/// slice, allocation) is followed by a collective on which all ranks agree; the lowest
/// failing rank's error is sent to all, and every rank throws an error of the same type
/// with the same message, "distributed_einsum: rank R of P: <the original what()>".
/// A failure of MPI itself follows the communicator's error handler (the default,
/// MPI_ERRORS_ARE_FATAL, aborts the job; with MPI_ERRORS_RETURN a failing MPI call
/// throws BackendError on the rank that saw it, and the others may then block).
///
/// Threads: MPI is called only from the calling thread; initialise MPI with at least
/// MPI_THREAD_FUNNELED when the session uses worker threads.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "tenferro/einsum.hpp"
#include "tenferro/export.hpp"
#include "tenferro/session.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::mpi {

/// Where the summed result goes.
enum class Reduction : std::uint8_t {
  all,   ///< every rank receives the result (as MPI_Allreduce)
  root,  ///< only DistributedOptions::root receives it (as MPI_Reduce); see distributed_einsum
};

/// Where the operands come from.
enum class OperandSource : std::uint8_t {
  every_rank,  ///< every rank passes the same operands (same shapes and dtypes; the data
               ///< is trusted to be equal, not compared)
  broadcast,   ///< rank 0's operands are broadcast; other ranks' operands are ignored
};

/// Settings of a distributed einsum. Every field except `before_slice` must be equal on
/// all ranks (it is part of the input hash).
struct DistributedOptions {
  /// The plan's options (the order is planned on rank 0 only, with these options);
  /// set plan.max_intermediate_elements / max_intermediate_bytes to slice.
  EinsumOptions einsum;
  Reduction reduction = Reduction::all;                 ///< who receives the result
  int root = 0;                                        ///< the rank receiving it under Reduction::root
  OperandSource operands = OperandSource::every_rank;  ///< where the operands come from
  /// Called on the rank that runs a slice, just before it runs (progress, cancellation,
  /// tests). An exception it throws fails that rank like a failing slice.
  std::function<void(std::int64_t slice)> before_slice;
};

/// What a distributed einsum did, seen from the calling rank.
struct DistributedInfo {
  int rank = 0;                     ///< this rank in the communicator
  int num_ranks = 1;                ///< ranks in the communicator
  std::int64_t num_slices = 1;      ///< slices of the plan
  std::vector<std::int64_t> slices; ///< the slices this rank ran, ascending
  std::vector<double> rank_seconds; ///< predicted seconds of each rank's slices (assign_slices)
  double predicted_makespan = 0;    ///< the largest entry of rank_seconds
  double slice_seconds = 0;         ///< predicted seconds of one slice (all slices have equal shapes)
  EinsumPathInfo path;              ///< rank 0's order and slicing (identical on every rank)
  double plan_seconds = 0;          ///< wall time of steps 1-2 (hash, plan, broadcasts) on this rank
  double contract_seconds = 0;      ///< wall time of this rank's slices
  double reduce_seconds = 0;        ///< wall time of the error agreement and the reduction
};

/// Evaluates the subscripts over the ranks of `comm` (collective: every rank calls it).
/// Returns the result (compact) on every rank under Reduction::all, on the root only
/// under Reduction::root; other ranks then get an undefined Tensor (defined() false).
/// `info`, when given, is filled on success. Throws (the same type and message on every
/// rank): ArgumentError when the ranks' inputs differ (hash of subscripts, shapes,
/// dtypes and options) or for a root outside [0, size); einsum's errors for bad
/// subscripts or operands; and any error a slice or before_slice raised on some rank.
/// On error nothing is returned and `info` is untouched.
TENFERRO_API Tensor distributed_einsum(Session& s, MPI_Comm comm, std::string_view subscripts,
                                       std::span<const Tensor> operands, const DistributedOptions& options = {},
                                       DistributedInfo* info = nullptr);
inline Tensor distributed_einsum(Session& s, MPI_Comm comm, std::string_view subscripts,
                                 std::initializer_list<Tensor> operands, const DistributedOptions& options = {},
                                 DistributedInfo* info = nullptr) {
  return distributed_einsum(s, comm, subscripts, std::span(operands.begin(), operands.size()), options, info);
}

/// As distributed_einsum, into `out` (a writable strided view of the result's shape and
/// dtype) on the ranks that receive the result; on other ranks (Reduction::root) `out`
/// is ignored (it may be undefined) and never written. A wrong `out` on a receiving
/// rank fails every rank (ShapeError / DTypeError / ArgumentError) before any slice
/// runs. On error `out` is untouched.
TENFERRO_API void distributed_einsum_into(Session& s, MPI_Comm comm, std::string_view subscripts,
                                          std::span<const Tensor> operands, const Tensor& out,
                                          const DistributedOptions& options = {}, DistributedInfo* info = nullptr);

// ---- scheduling (pure functions: no MPI call, usable without MPI_Init) ----

/// An assignment of slices to ranks.
struct SliceAssignment {
  std::vector<int> owner;           ///< owner[s]: the rank that runs slice s
  std::vector<double> rank_seconds; ///< sum of the predicted seconds of each rank's slices
  double makespan = 0;              ///< max of rank_seconds
  double mean = 0;                  ///< mean of rank_seconds
  double imbalance = 1;             ///< makespan / mean (1: perfect; 1 when nothing to run)
};

/// Longest processing time first (Graham 1969, a 4/3-approximation of the optimal
/// makespan): the slices in decreasing predicted time (ties: lower slice first), each to
/// the rank with the least load so far (ties: lower rank). Deterministic. With equal
/// slice times it is round robin: slice s runs on rank s mod P. ArgumentError
/// ("assign_slices") for num_ranks < 1 or a negative or non-finite time.
TENFERRO_API SliceAssignment assign_slices(std::span<const double> slice_seconds, int num_ranks);

/// A simple network model for the simulation: a message of b bytes takes
/// latency_seconds + b / bytes_per_second.
struct NetworkModel {
  double latency_seconds = 2e-6;    ///< per message (an InfiniBand-class fabric)
  double bytes_per_second = 1.0e10; ///< per link (~100 Gb/s)
};

/// The predicted run of one distributed einsum on P ranks.
struct ScheduleEstimate {
  int num_ranks = 1;            ///< P
  double serial_seconds = 0;    ///< sum of all slice times (one rank)
  double compute_makespan = 0;  ///< the assignment's makespan
  double reduce_seconds = 0;    ///< the reduction's critical path (binomial tree depth × a message)
  double makespan = 0;          ///< compute_makespan + reduce_seconds
  double efficiency = 1;        ///< serial_seconds / (P · makespan)
  double imbalance = 1;         ///< compute max / mean
  double max_bytes_per_rank = 0;   ///< most bytes a rank sends + receives (plan, reduction)
  double mean_bytes_per_rank = 0;  ///< mean over ranks of bytes sent + received
};

/// Predicts the run on `num_ranks` ranks from per-slice times (assign_slices), the
/// result's size in bytes, the broadcast plan's size and the reduction mode, counting
/// the messages of the algorithm distributed_einsum uses (operands are not counted:
/// OperandSource::every_rank). ArgumentError as assign_slices, or for negative bytes.
TENFERRO_API ScheduleEstimate simulate_schedule(std::span<const double> slice_seconds, int num_ranks, double result_bytes,
                                                double plan_bytes, Reduction reduction, const NetworkModel& net = {});

}  // namespace tenferro::mpi
