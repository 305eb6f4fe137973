#pragma once
// The traced graph's representation (Note [Graph IR]), shared by the tracer
// (trace.cpp, trace_kernels.cpp), the text form and fingerprint (graph.cpp) and the
// compiler (compile.cpp).
//
// Note [Graph IR]
// A graph is the sequence of kernel calls a traced function made, after the front ends
// validated them: every node is one call of a catalogue op's kernel (elementwise,
// analytic, reduction, conversion and structural copies, scans along an axis, tril and
// triu, dot_general, the FFTs) with its typed parameters as the kernel receives them (the scalars, the
// reduced axes, the contraction's axis groups, alpha and beta). Values are of four
// kinds:
//  - input:    the function's k-th argument, a compact column-major buffer;
//  - constant: a host tensor the function read (any layout; held by the graph);
//  - buffer:   a compact buffer a node writes (one SSA value per write: a second write
//              into the same tensor, an `_into` or an accumulation, is a new value);
//  - view:     a strided window (element offset, extents, strides, dtype) of an input,
//              constant or buffer: transposes, reshapes, slices, broadcasts, real and
//              imaginary parts the front ends made as views. Views cost nothing at run
//              time; they are how operands reach their kernels.
// pad's and embed_diagonal's kernel call is recorded as two copying nodes: a host
// scalar broadcast into the result (the fill), then the operand into its window.
// A node writes `out_view`, a window of its output buffer; when that window does not
// cover the buffer, or the kernel reads its output (dot_general with beta != 0), the
// buffer starts as a copy of `init_from`, the value the tensor held before. Shapes and
// dtypes are the ones the front ends inferred while tracing, so compiled execution
// calls the kernels directly: no inference, no validation, no dispatch per node.
// Linear algebra (the kernels that return new results: decompositions, solves) is the
// exception: a `call` node holds the public op with its attributes, runs it whole at run
// time (so its data checks, finiteness and singularity, raise the eager errors then) and
// replays it through the op's eager AD rule; its results are `num_outs` buffers with
// consecutive ids from `out` (Note [Linear algebra in graphs] in trace_calls.cpp).
#include "core/internal_check.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/catalog.hpp"
#include "ops/contraction.hpp"
#include "ops/fft.hpp"
#include "ops/indexing.hpp"
#include "tenferro/graph.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/scalar.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::ad {
class Context;
class EagerTensor;
}  // namespace tenferro::ad

namespace tenferro::graph::detail {

using tenferro::detail::DotSignature;
using tenferro::detail::OpId;

/// A strided window of a value's memory: extents and strides in elements of `dtype`,
/// `offset` in elements of `dtype` from the buffer's first byte.
struct Layout {
  DType dtype = DType::f64;
  std::int64_t offset = 0;
  Dims extents;
  Dims strides;
  friend bool operator==(const Layout& a, const Layout& b) noexcept {
    if (a.dtype != b.dtype || a.offset != b.offset || a.extents.size() != b.extents.size()) return false;
    for (int i = 0; i < a.extents.size(); ++i)
      if (a.extents[i] != b.extents[i] || a.strides[i] != b.strides[i]) return false;
    return true;
  }
};

/// The compact column-major layout of `shape`.
Layout compact_layout(const Dims& shape, DType dtype);
/// Whether `l` is the compact column-major layout of its extents at offset 0.
bool is_compact_full(const Layout& l) noexcept;
/// Elements of `extents`.
std::int64_t numel_of(const Dims& extents) noexcept;

/// One value of the graph (Note [Graph IR]).
struct Value {
  enum class Kind : std::uint8_t { input, constant, buffer, view };
  Kind kind = Kind::buffer;
  DType dtype = DType::f64;
  Dims shape;          ///< input, buffer: the buffer's shape (compact); view: the window's extents; constant: its shape
  int base = -1;       ///< view: the value it is a window of (never a view)
  Layout window;       ///< view: the window of base's memory
  Tensor constant;     ///< constant: the host tensor
  int producer = -1;   ///< buffer: the node that writes it
  int input = -1;      ///< input: its position
};

/// The kernel signature a node calls (the member of the kernel table entry).
enum class NodeKind : std::uint8_t {
  unary, binary, ternary, reduce, convert, along_axis, dot, triangle, fft, take, window, update_window, vdot, axpby, iota, gather, scatter, call
};

/// One kernel call (Note [Graph IR]).
struct Node {
  OpId op = OpId::add;
  NodeKind kind = NodeKind::unary;
  int out = -1;        ///< the buffer value written
  int init_from = -1;  ///< value copied into `out` before the kernel runs, or -1
  Layout out_view;     ///< the window of out's buffer the kernel writes
  int ins[3] = {-1, -1, -1};  ///< operand values (-1: scalar operand k of an elementwise call)
  int num_ins = 0;
  // Elementwise (axpby: alpha and beta as scalars 0 and 1).
  Scalar scalars[3];
  DType in[3] = {};
  CompareOp cmp = CompareOp::eq;
  bool contiguous = false;  ///< the elementwise call's layout fast path (every tensor compact like out)
  // Reduction: the reduced axes of the operand.
  std::uint64_t mask = 0;
  // Along an axis (scans; take_along_axis and index_select: ins = x, indices; iota's
  // counting axis).
  int axis = 0;
  // tril, triu: the diagonal offset.
  std::int64_t offset = 0;
  // dot_general: the call's parameters, shared (immutable) so that nodes stay small.
  std::shared_ptr<const struct DotParams> dot;
  // fft, ifft, rfft, irfft (and their n-dimensional forms): the resolved transform.
  std::shared_ptr<const tenferro::detail::FftRequest> fft;
  // gather, scatter: the validated map and the public dimension numbers.
  std::shared_ptr<const struct IndexParams> index;
  // A call node: the op it runs; its results are the values out .. out + num_outs - 1.
  std::shared_ptr<const struct CallParams> call;
  int num_outs = 1;
  /// Checkpointed segment (Note [Checkpoints] in tenferro/graph.hpp): k > 0 inside
  /// segment k, -k a recomputation of segment k, 0 outside any.
  int segment = 0;
};

/// A dot_general node's parameters: the inferred signature, its axis groups as DotDims
/// (normalized) and the scalars.
struct DotParams {
  DotSignature sig{};
  DotDims dims;
  Scalar alpha, beta;
};

/// A gather or scatter node's parameters: the map its kernel takes, the dimension
/// numbers and slice sizes the public op takes (for replaying it), the combiner, and
/// the attributes as text (the text form, the fingerprint, CSE).
struct IndexParams {
  tenferro::detail::IndexMap map;
  GatherDims gather;
  ScatterDims scatter;
  Dims slice_sizes;
  ScatterCombiner combiner = ScatterCombiner::replace;
  std::string text;
};

/// A call node's op (Note [Linear algebra in graphs] in trace_calls.cpp): its attributes
/// as text (the text form, the fingerprint, CSE), how to run it on a CPU session (the
/// public op, whole: ins -> outs[0 .. num_outs)) and how to replay it through eager AD.
struct CallParams {
  std::string attrs;
  std::function<void(Session&, const Tensor* const* ins, Tensor* outs)> run;
  std::function<void(ad::Context&, const ad::EagerTensor* const* ins, ad::EagerTensor* outs)> replay;
};

/// g with a recomputation of each checkpointed segment's intermediates that the nodes
/// from `backward_start` on read (Note [Checkpoints]); g itself when there are none.
Graph rematerialize(const Graph& g, std::size_t backward_start);

/// A graph's data: values, nodes in execution order, inputs and outputs.
struct GraphData {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;   ///< value ids of the inputs, in argument order
  std::vector<int> outputs;  ///< value ids of the results, in order
};

/// The value a graph value's memory belongs to (itself unless a view).
inline int home_of(const GraphData& g, int v) noexcept { return g.values[static_cast<std::size_t>(v)].kind == Value::Kind::view ? g.values[static_cast<std::size_t>(v)].base : v; }

/// The layout of value v over its home's memory.
Layout layout_of(const GraphData& g, int v);

/// Which values the results need, reads of v redirected to (*alias)[v] when that is >= 0
/// (alias may be null); the inputs too when `keep_inputs` (a graph's signature stays).
std::vector<char> needed_values(const GraphData& g, const std::vector<int>* alias, bool keep_inputs);

/// Node n's identity as bytes: op, kind, each operand (its value id through `id`, or its
/// scalar), the dtypes the kernel reads and the typed parameters. The fingerprint hashes
/// it; common-subexpression elimination compares it (with ids through the aliases).
std::string node_key(const Node& n, const std::function<int(int)>& id);

}  // namespace tenferro::graph::detail
