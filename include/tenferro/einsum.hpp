#pragma once
/// \file einsum.hpp
/// Einstein summation on a session: notation, contraction order, execution.
///
/// Notation (string form). Operands are separated by commas, the output follows `->`:
/// `"ij,jk->ik"`. Axis order is column-major like every tensor here: the first label
/// names axis 0 (the fastest), so `"ij,jk->ik"` is the matrix product of [I, J] and
/// [J, K] matrices. Labels are ASCII letters or any non-ASCII UTF-8 code point; spaces
/// are ignored.
/// - Implicit output (no `->`): NumPy's rule, the labels that occur exactly once, in
///   ascending code-point order, followed by the ellipsis axes (batch axes trail).
/// - A label repeated in one operand takes that operand's diagonal: `"ii->"` is the
///   trace, `"ii->i"` the diagonal, `"iij->ij"` a batched diagonal.
/// - A label that occurs in only one operand and not in the output is summed before
///   anything is contracted.
/// - Ellipsis `...` stands for the operand's remaining axes. Ellipsis axes of different
///   operands pair up from the first ellipsis axis on (the column-major mirror of
///   NumPy's rule, consistent with broadcasting in ops.hpp: missing axes and extents of
///   1 stretch). With an explicit output without `...`, the ellipsis axes are summed.
/// - Parentheses fix the contraction order: `"(ij,jk),kl->il"` contracts the first two
///   operands, then the result with the third. A group of more than two operands and the
///   top level are contracted left to right.
///
/// Integer form: one label list per operand (any labels >= 0, any number of distinct
/// labels) and an optional output list; the same rules apply (no ellipsis).
///
/// Memory: with PlanOptions::max_intermediate_elements / max_intermediate_bytes (bytes
/// of the result dtype), labels are sliced so that every intermediate fits; the slices
/// run on pooled buffers, in lanes of the session's threads (PlanOptions::slice_lanes;
/// 1: one after another), and add into the result (EinsumPathInfo names the sliced
/// labels). ArgumentError when the limit cannot be met.
///
/// Execution. Single operands are reduced first (diagonals as strided views, sums as
/// strided reductions). Then each pairwise step runs as dot_general (shared labels that
/// are kept become batch axes, shared labels that are not kept are contracted, the rest
/// are free) or, when no label is contracted, as a broadcast elementwise product.
/// Intermediates come from the session's buffer pool and are released at their last use;
/// the last step writes straight into the result (or the caller's buffer).
///
/// Dtypes: f32, f64, c64, c128; mixed operands promote (integer and bool operands are a
/// DTypeError).
///
/// Errors (all raised before anything is computed or written): ArgumentError for bad
/// characters, a malformed `->`/ellipsis/parenthesis, a wrong operand count, a repeated
/// output label or an output label in no operand, or a bad path/tree; ShapeError for a
/// label with different extents (naming the label and the operands), an operand whose
/// rank does not match its labels, or a wrong `out` shape; DTypeError for integer/bool
/// operands or a wrong `out` dtype; ArgumentError for an `out` that overlaps an operand.

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tenferro/session.hpp"
#include "tenferro/einsum_path.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

/// How einsum chooses the contraction order (ignored for one or two operands and for a
/// parenthesised subscript string).
struct EinsumOptions {
  PlanOptions plan;  ///< the optimizer and its budget
  /// A fixed order as an opt_einsum "linear" path (used instead of the optimizer).
  std::vector<std::pair<int, int>> path;
  /// A fixed order as a contraction tree (used instead of the optimizer and `path`).
  std::optional<ContractionTree> tree;
};

/// The label lists of the integer form.
using EinsumLabels = std::span<const std::vector<std::int64_t>>;

/// Evaluates the subscripts on `operands` into a new compact tensor.
TENFERRO_API Tensor einsum(Session& s, std::string_view subscripts, std::span<const Tensor> operands,
                           const EinsumOptions& options = {});
inline Tensor einsum(Session& s, std::string_view subscripts, std::initializer_list<Tensor> operands,
                     const EinsumOptions& options = {}) {
  return einsum(s, subscripts, std::span(operands.begin(), operands.size()), options);
}
/// Evaluates into `out` (any writable strided view of the result's shape and dtype that
/// does not overlap an operand). On error `out` is untouched.
TENFERRO_API void einsum_into(Session& s, std::string_view subscripts, std::span<const Tensor> operands, const Tensor& out,
                              const EinsumOptions& options = {});
inline void einsum_into(Session& s, std::string_view subscripts, std::initializer_list<Tensor> operands, const Tensor& out,
                        const EinsumOptions& options = {}) {
  einsum_into(s, subscripts, std::span(operands.begin(), operands.size()), out, options);
}

/// Integer form: `labels[i]` names the axes of `operands[i]`; `output` the result's axes
/// (std::nullopt: the implicit rule).
TENFERRO_API Tensor einsum(Session& s, std::span<const Tensor> operands, EinsumLabels labels,
                           std::optional<std::span<const std::int64_t>> output, const EinsumOptions& options = {});
TENFERRO_API void einsum_into(Session& s, std::span<const Tensor> operands, EinsumLabels labels,
                              std::optional<std::span<const std::int64_t>> output, const Tensor& out,
                              const EinsumOptions& options = {});

/// Counters of the one-shot program cache of the session's checked-out resources
/// (Note [Einsum program cache]; managed through CpuBackend's cache calls with
/// CacheKind::einsum_programs). Throws SessionEntryError when the session is not usable
/// on this thread.
TENFERRO_API PlanCacheStats einsum_program_cache_stats(Session& s);

/// A label einsum slices (PlanOptions' memory limit): each slice holds `chunk`
/// consecutive indices of it.
struct EinsumSlicedLabel {
  std::int64_t label = 0;   ///< the label: its code point (string form) or its integer (integer
                            ///< form); ellipsis axis d is -(1 + d)
  std::int64_t extent = 0;  ///< the full extent
  std::int64_t chunk = 0;   ///< indices per slice (divides extent)
  std::int64_t parts = 1;   ///< extent / chunk
};

/// The contraction order einsum would use and its cost (like opt_einsum's
/// contract_path), from shapes alone. Throws as einsum does.
struct EinsumPathInfo {
  ContractionTree tree;  ///< over the operands (single-operand reductions come first)
  ContractionCost cost;  ///< totals over all slices
  /// The optimizer that chose the tree (what `automatic` resolved to; `automatic` itself
  /// when the order was given by parentheses, `path` or `tree`, or for one operand).
  EinsumOptimizer optimizer = EinsumOptimizer::automatic;
  double planning_seconds = 0;           ///< time spent planning the order and the slices
  std::vector<EinsumSlicedLabel> sliced; ///< empty: no slicing (slice order: ContractionPlan)
  std::int64_t num_slices = 1;
  double slicing_overhead = 1.0;         ///< flops of all slices / flops unsliced
};
TENFERRO_API EinsumPathInfo einsum_path(std::string_view subscripts, std::span<const Shape> shapes,
                                        const EinsumOptions& options = {});

/// The einsum time model for this machine at the thread count of `s` (Note [Cost model
/// calibration] in src/einsum/calibrate.cpp): measures a step's fixed cost, the GEMM
/// rate and the memory rate through `s` for about `seconds` in all (f64), and scales
/// the shipped constants by how they differ from the development machine's. Pass the
/// result as PlanOptions::cost_model; store it with to_string / parse_cost_model
/// (calibrate once per machine and thread count). Throws ArgumentError when `seconds`
/// is not finite and > 0.
TENFERRO_API CostModel calibrate_cost_model(Session& s, double seconds = 0.5);

struct EinsumProgram;  // internal

/// A prepared einsum: parsing, validation of the labels, and the contraction order are
/// done once for given operand shapes and dtypes; execute() then only checks that the
/// operands still have those shapes and dtypes (any strides are fine) and runs the steps.
/// Holds no operand. With execute_into in a held session, steady-state execution does
/// not allocate from the heap (intermediates come from the session's pool), except a
/// few small bookkeeping vectors per call when the plan is sliced.
class TENFERRO_API EinsumPlan {
 public:
  /// Prepares the subscripts for operands of these shapes and dtypes. Throws as einsum.
  EinsumPlan(std::string_view subscripts, std::span<const Shape> shapes, std::span<const DType> dtypes,
             const EinsumOptions& options = {});
  /// Integer form.
  EinsumPlan(EinsumLabels labels, std::optional<std::span<const std::int64_t>> output, std::span<const Shape> shapes,
             std::span<const DType> dtypes, const EinsumOptions& options = {});
  /// Prepared for the shapes and dtypes of these operands (their data is not read).
  static EinsumPlan for_operands(std::string_view subscripts, std::span<const Tensor> operands, const EinsumOptions& options = {});
  EinsumPlan(EinsumPlan&&) noexcept;
  EinsumPlan& operator=(EinsumPlan&&) noexcept;
  ~EinsumPlan();

  /// Runs the plan. ShapeError/DTypeError when an operand's shape or dtype differs from
  /// the prepared ones, ArgumentError for a wrong operand count.
  Tensor execute(Session& s, std::span<const Tensor> operands) const;
  Tensor execute(Session& s, std::initializer_list<Tensor> operands) const {
    return execute(s, std::span(operands.begin(), operands.size()));
  }
  /// Runs the plan into `out` (as einsum_into).
  void execute_into(Session& s, std::span<const Tensor> operands, const Tensor& out) const;
  void execute_into(Session& s, std::initializer_list<Tensor> operands, const Tensor& out) const {
    execute_into(s, std::span(operands.begin(), operands.size()), out);
  }

  /// The result's shape and dtype.
  const Shape& output_shape() const noexcept;
  DType output_dtype() const noexcept;
  /// The contraction order and its cost.
  const EinsumPathInfo& path() const noexcept;

  /// Number of slices (1 without slicing; see path().sliced). Slices can be run apart,
  /// e.g. on different MPI ranks, and their results summed.
  std::int64_t num_slices() const noexcept;
  /// Runs slices [begin, end) into `out` (shape and dtype of the result, as
  /// execute_into): out = the sum of those slices' contributions, zero where none of them
  /// contributes; summing this over a partition of [0, num_slices()) gives the result.
  /// With accumulate, the contributions are added onto out instead. ArgumentError for
  /// 0 <= begin <= end <= num_slices() violated; otherwise throws as execute_into. On
  /// error out is untouched.
  void execute_slices_into(Session& s, std::span<const Tensor> operands, std::int64_t begin, std::int64_t end,
                           const Tensor& out, bool accumulate = false) const;

 private:
  std::unique_ptr<EinsumProgram> p_;
};

}  // namespace tenferro
