// distributed_einsum: one sliced EinsumPlan run over the ranks of a communicator
// (the steps are listed in include/tenferro/mpi.hpp).
//
// Example, 3 ranks, a plan of 8 equal slices: rank 0 plans and broadcasts its tree;
// assign_slices gives rank 0 slices {0, 3, 6}, rank 1 {1, 4, 7}, rank 2 {2, 5}; each
// rank sums its slices in that order into a zeroed buffer; the binomial tree adds
// (b0 + b1) + b2 on rank 0 (Note [Deterministic reduction]); Reduction::all broadcasts it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "tenferro/error.hpp"
#include "tenferro/mpi.hpp"
#include "tenferro/ops.hpp"

namespace tenferro::mpi {

namespace {

using detail::Comm;
using detail::kOp;
using detail::run_agreed;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string hex(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// Text is built by appending (GCC 12's -Wrestrict misfires on `"literal" + std::string`).
std::string shape_text(const Tensor& t) {
  std::string s = "[";
  for (int a = 0; a < t.rank(); ++a) {
    if (a) s += ',';
    s += std::to_string(t.extent(a));
  }
  s += "] ";
  s += dtype_name(t.dtype());
  return s;
}

// What must be equal on every rank, as readable text (hashed for the comparison, shown
// in the mismatch message).
std::string describe(std::string_view subscripts, std::span<const Tensor> operands, const DistributedOptions& o) {
  const PlanOptions& p = o.einsum.plan;
  const CostModel& m = p.cost_model;
  std::string d = "subscripts \"";
  d += subscripts;
  d += '"';
  if (o.operands == OperandSource::every_rank) {
    d += ", operands";
    for (const Tensor& t : operands) {
      d += ' ';
      d += shape_text(t);
    }
  } else {
    d += ", operands broadcast from rank 0";
  }
  d += ", reduction ";
  d += o.reduction == Reduction::all ? std::string("all") : std::string("root ") + std::to_string(o.root);
  const double fields[] = {p.max_intermediate_elements, p.max_intermediate_bytes, static_cast<double>(p.objective),
                           m.gemm_rate, m.gemm_half_extent, m.bytes_rate, m.read_factor, m.write_factor, m.step_seconds};
  d += ", memory limit (elements, bytes), objective, cost model:";
  for (double f : fields) {
    d += ' ';
    d += hex(f);
  }
  return d;
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Step 1: every rank's description hashes to rank 0's, else ArgumentError on all ranks.
void check_same_inputs(const Comm& c, const std::string& mine) {
  const std::uint64_t h = fnv1a(mine);
  std::uint64_t h0 = h;
  detail::check(MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, c.get()), "MPI_Bcast");
  int bad = h0 != h ? c.rank() : c.size(), lowest = c.size();
  detail::check(MPI_Allreduce(&bad, &lowest, 1, MPI_INT, MPI_MIN, c.get()), "MPI_Allreduce");
  if (lowest == c.size()) return;
  const std::string d0 = detail::bcast_string(c, mine, 0);
  const std::string dr = detail::bcast_string(c, mine, lowest);
  throw ArgumentError(kOp, "inputs differ across ranks: rank " + std::to_string(lowest) + " has " + dr + "; rank 0 has " + d0 +
                               " (every rank must pass the same subscripts, operand shapes and dtypes, and options)");
}

// Rank 0's operands on every rank (OperandSource::broadcast): shapes and dtypes first,
// then each operand's bytes (compact, column-major).
std::vector<Tensor> broadcast_operands(Session& s, const Comm& c, std::span<const Tensor> operands) {
  std::vector<Tensor> out;
  std::vector<std::int64_t> head;
  run_agreed(c, [&] {
    if (c.rank() != 0) return;
    head.push_back(static_cast<std::int64_t>(operands.size()));
    for (const Tensor& t : operands) {
      if (!t.defined()) throw ArgumentError(kOp, "operand " + std::to_string(out.size()) + " is undefined");
      out.push_back(to_contiguous(s, t));
      head.push_back(static_cast<std::int64_t>(t.dtype()));
      head.push_back(t.rank());
      for (int a = 0; a < t.rank(); ++a) head.push_back(t.extent(a));
    }
  });
  std::uint64_t n = head.size();
  detail::check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, c.get()), "MPI_Bcast");
  head.resize(n);
  detail::bcast_bytes(c, head.data(), n * sizeof(std::int64_t), 0);
  run_agreed(c, [&] {
    if (c.rank() == 0) return;
    std::size_t k = 1;
    for (std::int64_t i = 0; i < head[0]; ++i) {
      const auto dt = static_cast<DType>(head[k]);
      const auto r = static_cast<std::size_t>(head[k + 1]);
      out.push_back(Tensor::empty(std::span(head.data() + k + 2, r), dt));
      k += 2 + r;
    }
  });
  for (const Tensor& t : out)
    detail::bcast_bytes(c, const_cast<void*>(t.data()), static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype()), 0);
  return out;
}

// Rank 0's plan as numbers: slices, optimizer, predicted seconds (bits), tree, slicing.
std::vector<std::int64_t> pack_plan(const EinsumPlan& plan) {
  const EinsumPathInfo& p = plan.path();
  std::vector<std::int64_t> v{plan.num_slices(), static_cast<std::int64_t>(p.optimizer), 0,
                              static_cast<std::int64_t>(p.tree.steps.size())};
  std::memcpy(&v[2], &p.cost.predicted_seconds, sizeof(double));
  for (auto [a, b] : p.tree.steps) v.insert(v.end(), {a, b});
  v.push_back(static_cast<std::int64_t>(p.sliced.size()));
  for (const EinsumSlicedLabel& l : p.sliced) v.insert(v.end(), {l.label, l.extent, l.chunk, l.parts});
  return v;
}

ContractionTree unpack_tree(const std::vector<std::int64_t>& v) {
  ContractionTree t;
  for (std::int64_t k = 0; k < v[3]; ++k)
    t.steps.emplace_back(static_cast<int>(v[static_cast<std::size_t>(4 + 2 * k)]), static_cast<int>(v[static_cast<std::size_t>(5 + 2 * k)]));
  return t;
}

void check_out(const Tensor& out, const EinsumPlan& plan) {
  if (!out.defined()) throw ArgumentError(kOp, "out is undefined on a rank that receives the result");
  if (out.dtype() != plan.output_dtype())
    throw DTypeError(kOp, "out has dtype " + std::string(dtype_name(out.dtype())) + ", the result is " +
                              std::string(dtype_name(plan.output_dtype())));
  const Shape sh = out.shape();
  bool same = sh.size() == plan.output_shape().size();
  for (int a = 0; same && a < sh.size(); ++a) same = sh[a] == plan.output_shape()[a];
  if (!same) {
    std::string want = "[";
    for (int a = 0; a < plan.output_shape().size(); ++a) {
      if (a) want += ',';
      want += std::to_string(plan.output_shape()[a]);
    }
    throw ShapeError(kOp, "out has shape " + shape_text(out) + ", the result's shape is " + want + "]");
  }
  if (out.read_only()) throw ArgumentError(kOp, "out is a read-only (broadcast) view");
}

void run(Session& s, MPI_Comm user, std::string_view subscripts, std::span<const Tensor> operands, const Tensor* out,
         Tensor* result, const DistributedOptions& options, DistributedInfo* info) {
  const auto t0 = std::chrono::steady_clock::now();
  Comm c(user);
  const int P = c.size(), me = c.rank();
  check_same_inputs(c, describe(subscripts, operands, options));
  if (options.root < 0 || options.root >= P)
    throw ArgumentError(kOp, "root = " + std::to_string(options.root) + " with " + std::to_string(P) + " ranks; need 0 <= root < " + std::to_string(P));
  const int tree_root = options.reduction == Reduction::all ? 0 : options.root;
  const bool receives = options.reduction == Reduction::all || me == options.root;

  std::vector<Tensor> received;
  if (options.operands == OperandSource::broadcast) {
    received = broadcast_operands(s, c, operands);
    operands = received;
  }

  // Step 2: rank 0 plans; the others follow its tree and must find the same slicing.
  std::optional<EinsumPlan> plan;
  std::vector<std::int64_t> packed;
  run_agreed(c, [&] {
    if (me != 0) return;
    plan.emplace(EinsumPlan::for_operands(subscripts, operands, options.einsum));
    packed = pack_plan(*plan);
  });
  std::uint64_t n = packed.size();
  detail::check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, c.get()), "MPI_Bcast");
  packed.resize(n);
  detail::bcast_bytes(c, packed.data(), n * sizeof(std::int64_t), 0);
  run_agreed(c, [&] {
    if (me != 0) {
      EinsumOptions o = options.einsum;
      o.path.clear();
      o.tree = unpack_tree(packed);
      plan.emplace(EinsumPlan::for_operands(subscripts, operands, o));
      if (pack_plan(*plan).size() != packed.size() || plan->num_slices() != packed[0] ||
          !std::equal(packed.begin() + 3, packed.end(), pack_plan(*plan).begin() + 3))
        throw InternalError(kOp, "the plan along rank 0's tree slices differently (" + std::to_string(plan->num_slices()) +
                                     " slices here, " + std::to_string(packed[0]) + " on rank 0)");
    }
    if (out && receives) check_out(*out, *plan);
  });
  const double plan_seconds = since(t0);

  // Step 3: the assignment (the same on every rank: it depends on rank 0's numbers only).
  const std::int64_t S = packed[0];
  double total = 0;
  std::memcpy(&total, &packed[2], sizeof(double));
  const double per_slice = S > 0 ? total / static_cast<double>(S) : 0.0;
  const std::vector<double> costs(static_cast<std::size_t>(S), per_slice);
  SliceAssignment a = assign_slices(costs, P);
  std::vector<std::int64_t> mine;
  for (std::int64_t k = 0; k < S; ++k)
    if (a.owner[static_cast<std::size_t>(k)] == me) mine.push_back(k);

  const auto t1 = std::chrono::steady_clock::now();
  Tensor partial;
  std::vector<unsigned char> scratch;
  run_agreed(c, [&] {
    partial = Tensor::zeros(plan->output_shape(), plan->output_dtype());
    if (detail::reduce_receives(c, tree_root))
      scratch.resize(static_cast<std::size_t>(std::min(partial.numel(), detail::kReduceChunk)) * dtype_size(partial.dtype()));
    for (std::int64_t k : mine) {
      if (options.before_slice) options.before_slice(k);
      plan->execute_slices_into(s, operands, k, k + 1, partial, true);
    }
  });
  const double contract_seconds = since(t1);

  const auto t2 = std::chrono::steady_clock::now();
  detail::reduce_sum(c, partial.mutable_data(kOp), partial.numel(), partial.dtype(), tree_root,
                     options.reduction == Reduction::all, scratch.data());
  if (receives) {
    if (out) to_contiguous_into(s, partial, *out);
    else *result = std::move(partial);
  }
  if (info) {
    info->rank = me;
    info->num_ranks = P;
    info->num_slices = S;
    info->slices = std::move(mine);
    info->rank_seconds = std::move(a.rank_seconds);
    info->predicted_makespan = a.makespan;
    info->slice_seconds = per_slice;
    info->path = plan->path();
    info->path.optimizer = static_cast<EinsumOptimizer>(packed[1]);
    info->plan_seconds = plan_seconds;
    info->contract_seconds = contract_seconds;
    info->reduce_seconds = since(t2);
  }
}

}  // namespace

Tensor distributed_einsum(Session& s, MPI_Comm comm, std::string_view subscripts, std::span<const Tensor> operands,
                          const DistributedOptions& options, DistributedInfo* info) {
  Tensor result;
  run(s, comm, subscripts, operands, nullptr, &result, options, info);
  return result;
}

void distributed_einsum_into(Session& s, MPI_Comm comm, std::string_view subscripts, std::span<const Tensor> operands,
                             const Tensor& out, const DistributedOptions& options, DistributedInfo* info) {
  Tensor unused;
  run(s, comm, subscripts, operands, &out, &unused, options, info);
}

}  // namespace tenferro::mpi
