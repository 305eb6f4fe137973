#pragma once
/// \file graph.hpp
/// Traced graphs: trace a function once into a Graph, compile it, run it many times in
/// one session (the third tier over the same kernels; DESIGN.md "The op layer").
///
/// Note [Tracing]
/// `trace(fn, specs)` calls `fn` once with symbolic tensors: tensors on the `trace`
/// device, with the specs' shapes and dtypes and no memory. `fn` calls the ordinary
/// public ops on the session it is given (a trace session); each op runs its front
/// end as always (inference, validation, output preparation: the same typed errors as
/// the direct ops, naming the op), and its kernel, taken from the trace device's
/// kernel table, records a node instead of computing. Tracing executes nothing.
/// - Host tensors the function reads (captured from the enclosing scope, or made inside
///   it with Tensor::zeros and friends) become the graph's constants; the graph holds
///   them, so their values at trace time are the ones every run uses.
/// - Einsum records its planned pairwise steps (it runs on the contraction and
///   elementwise ops); views (transpose_view, slice_view, ...) record nothing by
///   themselves: an op reading a view records the window.
/// - Traceable: the elementwise, analytic, conversion, reduction and along-axis
///   families, the structural copies (transpose, broadcast_in_dim, reverse, slice,
///   extract_diagonal, concatenate, stack, pad, embed_diagonal), norm_squared,
///   dot_general and matmul, einsum, linear algebra (one call node per decomposition
///   or solve), FFT, the indexing kernels, vdot, axpby, grouped_gemm, tril/triu, iota
///   (the full list: docs/graph.md). Checks that read data (an index range, integer
///   div/rem/pow by a tensor, exact convert) are skipped while tracing and run when the
///   graph runs. Writing into a host tensor while tracing throws SessionEntryError
///   (IncompatibleContext).
/// - The calling thread may be inside a session or not. While `fn` runs, the thread's
///   own session is not usable (its ops would execute): SessionEntryError (Poisoned).
///
/// Note [Compiled graphs]
/// `compile(graph)` runs the passes (optimize(), Note [Graph passes]), computes each
/// buffer's last use, fuses runs of elementwise ops (Note [Elementwise fusion] in
/// src/runtime/fuse.cpp) and prepares every kernel call once (its table entry, its
/// operand windows).
/// `run(session, inputs)` checks the inputs against the graph's signature (count,
/// dtype, shape, device: typed errors naming "graph.run", nothing written), then calls
/// the CPU kernels in order on the session, its intermediates carved from one arena
/// taken from the session's buffer pool (offsets planned at compile time, so buffers
/// whose lifetimes do not meet share memory: Note [Arena plan] in
/// src/runtime/compile.cpp), results and linear-algebra results from the pool. `run_into` writes the results
/// into caller tensors (any writable strided layout of the result's shape and dtype,
/// checked before anything runs); a compact output of a graph whose steps cannot fail
/// mid-run is written by the result's producer itself, with no copy (Note [Results
/// written in place] in src/runtime/compile.cpp). A held session's steady-state
/// `run_into` allocates nothing on the heap. One CompiledGraph may be run by several threads at once.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tenferro/dtype.hpp"
#include "tenferro/export.hpp"
#include "tenferro/session.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::graph {

namespace detail {
struct GraphData;
struct CompiledData;
}  // namespace detail

/// A traced value's signature: shape and dtype.
struct ValueSpec {
  Shape shape;
  DType dtype = DType::f64;
};

/// A traced program (Note [Tracing]). Copying shares the (immutable) data.
class TENFERRO_API Graph {
 public:
  /// An empty graph (no inputs, no outputs).
  Graph();
  /// Number of inputs, outputs and nodes (kernel calls).
  int num_inputs() const noexcept;
  int num_outputs() const noexcept;
  int num_nodes() const noexcept;
  /// The signature of input / output k (k in range).
  ValueSpec input(int k) const;
  ValueSpec output(int k) const;
  /// A readable text form: one line per value that is not an input, StableHLO-like
  /// ("%3 = mul %1, %2 : f64[4, 4]"), then the results.
  std::string to_text() const;
  /// A structural fingerprint: a hash of the ops, their attributes, every value's
  /// shape, dtype and window, the inputs and the results; not of constant data.
  std::uint64_t fingerprint() const;

  /// Internal: the graph's data.
  const detail::GraphData& data() const noexcept { return *data_; }
  /// Internal: a graph over `data`.
  explicit Graph(std::shared_ptr<const detail::GraphData> data) noexcept : data_(std::move(data)) {}

 private:
  std::shared_ptr<const detail::GraphData> data_;
};

/// A traced function: receives the trace session and one symbolic tensor per input
/// spec, returns the results.
using TraceFn = std::function<std::vector<Tensor>(Session& s, std::span<const Tensor> inputs)>;

/// Traces `fn` on symbolic inputs of the given specs (Note [Tracing]). Errors: the
/// typed error of the op that failed (ShapeError, DTypeError, ... naming it);
/// UnsupportedError for an op that cannot be traced yet; ArgumentError when `fn`
/// returns an undefined tensor or a tensor of another trace; ArgumentError for a
/// negative extent in a spec.
TENFERRO_API Graph trace(const TraceFn& fn, std::span<const ValueSpec> inputs);
/// trace() with an initializer list of specs.
inline Graph trace(const TraceFn& fn, std::initializer_list<ValueSpec> inputs) {
  return trace(fn, std::span<const ValueSpec>(inputs.begin(), inputs.size()));
}

// Note [Graph transforms] (src/runtime/interpret.cpp): a transform traces a new graph
// that replays the old one through eager AD on a trace session, so it uses the same
// JVP/VJP rules as eager AD and composes to any order (jvp(grad(g)): Hessian-vector
// products; grad(grad(...)) of scalar functions). Integer and bool inputs are constants
// (zero cotangents and no tangents). Errors: UnsupportedAdRule naming the op for an op
// without a rule, a window no chain of structural ops describes ("graph.view"), or a
// kernel that wrote part of its buffer; the trace errors of the rules' ops.

// Note [Checkpoints] (src/runtime/remat.cpp): the nodes `checkpoint(s, fn, args)`
// records while tracing form a segment. vjp() and grad() keep the segment's forward
// nodes, and before the first backward node that reads one of its intermediates they
// insert a recomputation of the part of the segment the backward pass reads (from the
// segment's inputs), which those backward nodes read instead: between the forward and
// the backward pass only the segment's inputs and results stay live. Values are
// unchanged (the same kernels on the same operands), so are gradients and the HVPs
// through them; CSE keeps a recomputation apart from the forward nodes.

/// Runs `fn(s, args)`; while tracing (`s` a trace session) its nodes form a checkpointed
/// segment (Note [Checkpoints]). On other sessions it is a plain call: eager AD keeps
/// the intermediates. Errors: those of `fn`.
TENFERRO_API std::vector<Tensor> checkpoint(Session& s, const TraceFn& fn, std::span<const Tensor> args);

/// The vector-Jacobian product: a graph of (g's inputs..., one cotangent per result) →
/// (g's results..., one cotangent per input, zeros where no result depends on it).
TENFERRO_API Graph vjp(const Graph& g);
/// The Jacobian-vector product: (g's inputs..., one tangent per input) → (g's
/// results..., one tangent per result).
TENFERRO_API Graph jvp(const Graph& g);
/// The gradient of g's one real scalar result: (g's inputs...) → (one gradient per
/// input). ArgumentError unless g has one result, ShapeError unless it is one real
/// float element.
TENFERRO_API Graph grad(const Graph& g);

// Note [Graph passes] (src/runtime/passes.cpp): each pass maps a graph to one that
// computes the same results from the same inputs; compile() runs optimize() first.
// - eliminate_dead_code: drops every node and value no result depends on.
// - eliminate_common_subexpressions: a node equal to an earlier one (op, attributes,
//   operands, scalars, result type) and a window equal to an earlier one are read from
//   the earlier one.
// - fold_constants: elementwise nodes whose operands are all constants (compact, the
//   result's dtype and shape, at most 65536 elements) are evaluated once, into a new
//   constant.
// - simplify: x·1, 1·x, x/1, x + 0, 0 + x, x − 0 (no broadcasting, no dtype change),
//   neg(neg(x)), conj(conj(x)) and a same-dtype copy of a whole value read x itself;
//   dot_general reads the window a whole copy copied (transpose, diagonal, strided
//   slice: the contraction takes strided operands), so a transpose folds into its
//   dimension numbers. Double transposes and reshape chains already record no node
//   (views compose while tracing).
/// Dead-code elimination (Note [Graph passes]).
TENFERRO_API Graph eliminate_dead_code(const Graph& g);
/// Common-subexpression elimination (Note [Graph passes]).
TENFERRO_API Graph eliminate_common_subexpressions(const Graph& g);
/// Constant folding (Note [Graph passes]).
TENFERRO_API Graph fold_constants(const Graph& g);
/// Algebraic simplification (Note [Graph passes]).
TENFERRO_API Graph simplify(const Graph& g);
/// Every pass: fold_constants, simplify, CSE, then dead-code elimination.
TENFERRO_API Graph optimize(const Graph& g);

/// A compiled graph (Note [Compiled graphs]). Copying shares the prepared data.
class TENFERRO_API CompiledGraph {
 public:
  /// Runs the graph on `s` (a CPU session): one new compact result per output.
  /// Errors: SessionEntryError for a session that is not usable here or not on the CPU;
  /// ArgumentError for a wrong number of inputs or an undefined one; DTypeError and
  /// ShapeError for an input that does not match its spec; the typed error of a kernel
  /// (out of memory: BackendError).
  std::vector<Tensor> run(Session& s, std::span<const Tensor> inputs) const;
  /// run() with an initializer list of inputs.
  std::vector<Tensor> run(Session& s, std::initializer_list<Tensor> inputs) const {
    return run(s, std::span<const Tensor>(inputs.begin(), inputs.size()));
  }
  /// Runs the graph writing result k into outputs[k] (any writable layout of the
  /// result's shape and dtype, disjoint from the inputs and from each other). Errors as
  /// run(), and for the outputs as the ops' `_into` forms; nothing is written on error.
  void run_into(Session& s, std::span<const Tensor> inputs, std::span<const Tensor> outputs) const;

  /// The graph it runs: the one it was compiled from after optimize().
  const Graph& graph() const noexcept;
  /// Kernel calls one run makes (after dead-code elimination).
  int num_steps() const noexcept;
  /// The most bytes of intermediate buffers one run holds at once, by its plan (inputs,
  /// constants and the buffers a linear-algebra call allocates inside it not counted;
  /// results counted until the run ends).
  std::int64_t peak_buffer_bytes() const noexcept;
  /// Bytes of the one arena a run takes from the session's pool for its intermediates
  /// (planned at compile time; 0 when it needs none).
  std::int64_t arena_bytes() const noexcept;

  /// Internal: a compiled graph over `data`.
  explicit CompiledGraph(std::shared_ptr<const detail::CompiledData> data) noexcept : data_(std::move(data)) {}
  /// Internal: the run plan (src/runtime/compiled.hpp).
  const detail::CompiledData& data() const noexcept { return *data_; }

 private:
  std::shared_ptr<const detail::CompiledData> data_;
};

/// What compile() does besides preparing the steps (both on by default; off to measure
/// or test a graph as traced).
struct CompileOptions {
  bool optimize = true;  ///< run optimize() first
  bool fuse = true;      ///< fuse runs of elementwise steps
};

/// Compiles `g` (Note [Compiled graphs]).
TENFERRO_API CompiledGraph compile(const Graph& g, const CompileOptions& options = {});

/// Note [Graph functions]
/// A traceable function that specializes itself: a call traces and compiles `fn` for
/// the inputs' signature (dtypes and shapes) the first time and keeps the compiled graph
/// in the session's resources (CacheKind::graphs: a bounded cache with stats, limits and
/// clear through the backend's cache management calls), keyed by the function's
/// process-unique id and the signature; later calls with that signature run it at once
/// (a handful of compares and the run). A new shape traces and compiles again and is
/// cached beside the first. A new trace is first looked up by the program itself: its
/// fingerprint, its constants (which host tensors they are: a graph holds its
/// constants, so programs over equal values in different tensors are not merged), the
/// compile options and the signature; so separately built functions tracing the same
/// program compile it once and share the compiled graph (two cache entries: the
/// function's key and the program's). Called on a trace session (inside another traced
/// function), it calls `fn` directly, so the outer graph records its ops. Copies share
/// the id (and so the cached graphs).
class TENFERRO_API Function {
 public:
  explicit Function(TraceFn fn, CompileOptions options = {});
  /// The results of fn on `inputs` (run() of the graph compiled for their signature).
  /// Errors: those of trace() on a new signature, then those of run().
  std::vector<Tensor> operator()(Session& s, std::span<const Tensor> inputs) const;
  /// run_into() of the graph compiled for the inputs' signature.
  void call_into(Session& s, std::span<const Tensor> inputs, std::span<const Tensor> outputs) const;
  /// The process-unique id the cache keys on.
  std::uint64_t id() const noexcept { return id_; }

 private:
  CompiledGraph compiled(Session& s, std::span<const Tensor> inputs) const;
  TraceFn fn_;
  CompileOptions options_;
  std::uint64_t id_;
};

}  // namespace tenferro::graph
