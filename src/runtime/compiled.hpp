#pragma once
// A compiled graph's run plan (Note [Compiled graphs] in tenferro/graph.hpp, Note [Run
// slots] in compile.cpp), shared by compile.cpp and the fusion pass (fuse.cpp).
#include "core/internal_check.hpp"

#include <mutex>
#include <vector>

#include "ops/kernel_table.hpp"
#include "runtime/fuse.hpp"
#include "runtime/graph_ir.hpp"

namespace tenferro::graph::detail {

using tenferro::detail::KernelFn;

/// How a run fills a slot.
struct Slot {
  enum class Kind : std::uint8_t { input, constant, buffer, window };
  Kind kind = Kind::buffer;
  int input = -1;      ///< input: its position
  Tensor constant;     ///< constant: the host tensor
  Dims shape;          ///< buffer: compact shape; input, constant: the value's shape
  DType dtype = DType::f64;
  int base = -1;       ///< window: the slot it is a window of
  Layout window;       ///< window: over base's memory
};

/// One kernel call of a run.
struct Step {
  const Node* node = nullptr;
  KernelFn fn{};
  int out = -1;         ///< slot of the output buffer
  int target = -1;      ///< slot the kernel writes (out, or a window of it)
  int init = -1;        ///< slot copied into out first, or -1
  int ins[3] = {-1, -1, -1};
  int reuse = -1;       ///< an operand slot whose buffer becomes out's (in place), or -1
  int fused = -1;       ///< a fused group (into CompiledData::groups; node, fn, out unused), or -1
  std::uint32_t make_begin = 0, make_end = 0;  ///< window slots to make before the call (into `makes`)
  std::uint32_t drop_begin = 0, drop_end = 0;  ///< slots to empty after it (into `drops`)
};

struct CompiledData {
  Graph graph;
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<int> makes, drops;
  std::vector<FusedGroup> groups;
  std::vector<int> outputs;  ///< slot of each result
  std::int64_t peak_bytes = 0;  ///< CompiledGraph::peak_buffer_bytes()
  std::vector<std::int64_t> arena_at;  ///< per slot: its buffer's byte offset in the run's arena, or -1 (Note [Arena plan])
  std::int64_t arena_bytes = 0;        ///< CompiledGraph::arena_bytes()
  std::vector<int> writes_output;      ///< per slot: the output run_into may hand its producer instead of a buffer, or -1 (Note [Results written in place])
  std::vector<int> constants;          ///< the constant slots
  mutable std::mutex mu;
  mutable std::vector<std::vector<Tensor>> spare;  ///< slot vectors of finished runs (Note [Run slots])
};

/// Merges runs of consecutive fusable steps into fused steps (Note [Elementwise fusion]).
/// `makes[i]` lists the window slots step i makes and `last_use[slot]` the last step
/// that reads a slot (steps.size(): kept to the end); both are renumbered.
void fuse_steps(CompiledData& c, std::vector<std::vector<int>>& makes, std::vector<int>& last_use);

/// Runs a fused group over the run's slots (its results allocated, its windows made).
void run_fused(const FusedGroup& g, const Tensor* slots);

}  // namespace tenferro::graph::detail
