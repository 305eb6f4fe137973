#pragma once
// The recorder the trace device's kernels write into (Note [Tracing] in
// tenferro/graph.hpp, Note [Graph IR] in graph_ir.hpp).
#include "core/internal_check.hpp"

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/session_context.hpp"
#include "ops/kernel_table.hpp"
#include "runtime/graph_ir.hpp"

namespace tenferro::detail {

/// The graph being traced: values and nodes so far, and which value each symbolic
/// block holds now.
struct TraceRecorder {
  graph::detail::GraphData g;
  std::unordered_map<const StorageHeader*, int> current;  ///< block -> the value it holds now
  std::vector<Tensor> held;                               ///< every symbolic block, alive until the trace ends
  std::unordered_map<std::string, int> windows;           ///< (value, layout) -> view value
  std::unordered_map<std::string, int> constants;         ///< (host block, layout) -> constant value
  int segment = 0;   ///< the checkpointed segment new nodes belong to (Note [Checkpoints]), 0 none
  int segments = 0;  ///< segments opened so far

  /// The value an operand tensor reads: its block's current value, a view of it, or a
  /// constant for a host tensor. ArgumentError naming `op` for a symbolic tensor of
  /// another trace or one nothing has written yet.
  int operand(const Tensor& t, std::string_view op);
  /// A new node of `kind` writing `out` (a symbolic tensor): the node's output buffer is
  /// a new value, and `out`'s block holds it from now on. `reads_out`: the kernel reads
  /// out's previous contents (accumulation). Call after resolving the operands.
  graph::detail::Node& write(OpId op, graph::detail::NodeKind kind, const Tensor& out, bool reads_out = false);
  /// A new call node of `op` (Note [Graph IR]) writing the fresh symbolic tensors
  /// `outs` (compact, one new buffer value each, with consecutive ids). Call after
  /// resolving the operands.
  graph::detail::Node& write_call(OpId op, std::span<const Tensor> outs);
  /// Registers a fresh symbolic tensor as input k.
  void add_input(const Tensor& t, int k);
  /// The value a result tensor holds (as operand(), named "trace").
  int result(const Tensor& t) { return operand(t, "trace"); }
};

/// Restores a recorder's checkpoint segment when it goes out of scope.
struct SegmentScope {
  TraceRecorder& r;
  const int outer;
  explicit SegmentScope(TraceRecorder& rec) noexcept : r(rec), outer(rec.segment) {}
  ~SegmentScope() { r.segment = outer; }
  SegmentScope(const SegmentScope&) = delete;
  SegmentScope& operator=(const SegmentScope&) = delete;
};

/// Sets `fn` to the trace device's kernel of a linear-algebra op recorded as a call node
/// (trace_calls.cpp, Note [Linear algebra in graphs]); false for the other ops.
bool trace_call_kernel(OpId op, KernelFn& fn) noexcept;

/// The recorder of a trace session (its thread's record).
inline TraceRecorder& recorder(const Session& s) noexcept { return *s.context().tracer; }

}  // namespace tenferro::detail
