#pragma once
// Einsum internals: the parsed subscripts, and the program (operand preparation and
// pairwise steps) built from them for given shapes and dtypes.
//
// Pipeline: parse (parse.cpp) → build_program (program.cpp: validation, label ids,
// diagonals, pre-sums, contraction order, step layouts) → run_program (execute.cpp).
// A one-shot einsum builds its program in thread-local scratch, so repeated calls reuse
// every vector and allocate nothing once warm; an EinsumPlan owns its program.
#include "core/internal_check.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tenferro/dot.hpp"
#include "tenferro/einsum.hpp"

namespace tenferro {

namespace detail::einsum {

/// Parsed label keys: user labels are >= 0 (code points in the string form); the
/// ellipsis marker is kEllipsis; after expansion, ellipsis axis d has key -(1 + d).
inline constexpr std::int64_t kEllipsis = INT64_MIN;
inline constexpr std::int64_t ellipsis_key(int d) noexcept { return -1 - d; }

/// The subscripts, independent of shapes.
struct Parsed {
  bool string_form = true;
  int num_operands = 0;
  std::vector<std::int64_t> labels;  ///< all operands' keys, back to back
  std::vector<int> begin;            ///< operand i's keys: [begin[i], begin[i + 1])
  bool explicit_output = false;
  std::vector<std::int64_t> output;
  bool has_tree = false;  ///< parentheses fixed the order
  std::vector<std::pair<int, int>> tree;

  void clear() noexcept;
};

/// Parses the string form. Throws ArgumentError (op "einsum") with the position.
void parse_subscripts(std::string_view s, Parsed& out);
/// Fills Parsed from the integer form. Throws ArgumentError for negative labels.
void parse_labels(EinsumLabels labels, std::optional<std::span<const std::int64_t>> output, Parsed& out);
/// The UTF-8 encoding of a label's code point.
std::string utf8(std::int64_t code_point);
/// "'i'" (string form), "label 7" (integer form) or "ellipsis axis 0".
std::string label_name(std::int64_t key, bool string_form);

/// How operand i becomes leaf node i: a view with one axis per distinct label (repeated
/// labels take the diagonal: strides add; broadcast ellipsis axes of extent 1 are
/// dropped), then a sum over the labels no other operand or the output holds.
struct LeafPrep {
  Dims axis_to_label;  ///< per source axis: index into `labels` it maps to, -1 when dropped
  Dims labels;         ///< distinct label ids of the view, in axis order
  bool needs_view = false;
  Dims sum_axes;       ///< view axes summed before contracting
  Dims node_labels;    ///< labels after the sum
};

/// One pairwise contraction: nodes a and b into a new node.
struct Step {
  int a = 0, b = 0;
  bool dot = true;          ///< dot_general (some label contracted); else elementwise mul
  DotDims dims;             ///< for dot
  Dims labels;              ///< the result's labels in its axis order
  Dims shape;               ///< the result's shape
  Dims a_axis, b_axis;      ///< mul: per result axis, the axis of a (b) or -1 (broadcast)
  bool last = false;        ///< writes the einsum's result
  /// Result axis i is axis out_perm[i] of the output (last) or of the intermediate's
  /// storage (Note [Intermediate layouts] in layout.cpp).
  Dims out_perm;
  bool out_identity = true; ///< out_perm is the identity
  Dims store_shape;         ///< an intermediate stored permuted: its shape in storage order
};

/// Position of `v` in `d`, or -1.
inline int index_of(const Dims& d, std::int64_t v) noexcept {
  for (int i = 0; i < d.size(); ++i)
    if (d[i] == v) return i;
  return -1;
}

/// The storage order of each intermediate (Note [Intermediate layouts] in layout.cpp):
/// `nodes` holds every node's labels in its axis order, as the steps write them
/// (`steps` with a, b, dot and last set), `out_labels` the output's; `store` receives,
/// per node, the order to store it in, or nothing to keep its order.
void choose_layouts(const std::vector<Step>& steps, int n, const Dims& out_labels, const std::vector<std::int64_t>& extent,
                    const std::vector<Dims>& nodes, std::vector<Dims>& store);

}  // namespace detail::einsum

struct EinsumProgram;

namespace detail::einsum {
/// How a sliced program runs its slices (Note [Einsum slicing] in slicing.cpp): slice s
/// takes part (s / stride[j]) % parts[j] of sliced label j, i.e. indices
/// [part · chunk[j], (part + 1) · chunk[j]) of every operand axis and output axis of it.
struct Slicing {
  std::vector<std::int64_t> chunk, parts, stride;  ///< per sliced label
  std::vector<std::array<int, 3>> operand_axes;    ///< (operand, axis, sliced label)
  std::vector<std::array<int, 2>> out_axes;        ///< (output axis, sliced label)
  std::unique_ptr<EinsumProgram> program;          ///< one slice (the chunk shapes)
  int lanes = 0;                                   ///< PlanOptions::slice_lanes
};
}  // namespace detail::einsum

/// A complete einsum for given shapes and dtypes.
struct EinsumProgram {
  int n = 0;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  DType dtype = DType::f64;  ///< result dtype
  Shape out_shape;
  Dims out_labels;
  std::vector<detail::einsum::LeafPrep> leaves;
  std::vector<detail::einsum::Step> steps;
  /// n == 1: axis order of the reduced leaf relative to the output.
  Dims single_perm;
  bool single_identity = true;
  EinsumPathInfo path;
  bool has_cost = false;
  bool direct = false;  ///< one dot_general straight into the result (Note [Einsum direct step])
  bool empty = false;   ///< some operand has no element: the result is zeros (Note [Empty einsum])
  std::int64_t num_slices = 1;      ///< > 1: run through `slicing`
  detail::einsum::Slicing slicing;  ///< when num_slices > 1
};

namespace detail::einsum {

/// Builds the program for the shapes and dtypes already in `p.shapes` / `p.dtypes`.
/// `with_cost`: also fill path.cost. Throws the einsum validation errors; reuses `p`'s
/// vectors, so a warm program is rebuilt without heap allocation.
void build_program(const Parsed& parsed, const EinsumOptions& options, bool with_cost, EinsumProgram& p);

/// Whether `p` is a single dot_general of the plain operands into the result.
bool is_direct(const EinsumProgram& p) noexcept;

/// Runs `p` on operands whose shapes/dtypes match it. With `out` null the result is
/// allocated into `result`. Validates `out` (shape, dtype, writable, overlap) first.
/// A sliced program runs all its slices (run_slices).
void run_program(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor* out, Tensor& result);

/// Runs slices [begin, end) of `p` (an unsliced program has one slice) into `out`, or
/// into a new `result` when `out` is null: the sum of their contributions, zero where
/// none contributes, added onto out when `accumulate`. Validates `out` first.
void run_slices(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor* out, Tensor& result,
                std::int64_t begin, std::int64_t end, bool accumulate);

}  // namespace detail::einsum
}  // namespace tenferro
