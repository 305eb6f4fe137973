// graph::Function: compiled graphs cached per input signature in the session's
// resources (Note [Graph functions] in tenferro/graph.hpp).
#include <atomic>

#include "core/bounded_cache.hpp"
#include "cpu/context.hpp"
#include "runtime/graph_ir.hpp"
#include "tenferro/graph.hpp"

namespace tenferro::graph {

namespace {

constexpr int kMaxKey = 2 + 2 * kMaxRank * 8;  // the id, the count, then dtype and rank + extents per input
constexpr std::string_view kOp = "graph.Function";

std::atomic<std::uint64_t> g_next_id{1};

/// The cache key of (id, the inputs' dtypes and shapes); 0 words when too long to cache.
int signature_key(std::uint64_t id, std::span<const Tensor> inputs, std::int64_t* key, std::uint64_t& hash) {
  int n = 0;
  key[n++] = static_cast<std::int64_t>(id);
  key[n++] = static_cast<std::int64_t>(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw ArgumentError(kOp, "input tensor is undefined");
    if (n + 2 + t.rank() > kMaxKey) return 0;
    key[n++] = static_cast<std::int64_t>(t.dtype());
    key[n++] = t.rank();
    for (int i = 0; i < t.rank(); ++i) key[n++] = t.extent(i);
  }
  hash = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) hash = (hash ^ static_cast<std::uint64_t>(key[i])) * 1099511628211ull;
  return n;
}

/// The bytes a compiled graph accounts for in the cache (its nodes and values).
std::size_t footprint(const CompiledGraph& c) {
  const detail::GraphData& g = c.graph().data();
  return sizeof(detail::Node) * g.nodes.size() + sizeof(detail::Value) * g.values.size() + 256 * static_cast<std::size_t>(c.num_steps());
}

}  // namespace

Function::Function(TraceFn fn, CompileOptions options)
    : fn_(std::move(fn)), options_(options), id_(g_next_id.fetch_add(1, std::memory_order_relaxed)) {}

CompiledGraph Function::compiled(Session& s, std::span<const Tensor> inputs) const {
  s.check(kOp);
  auto fresh = [&] {
    std::vector<ValueSpec> specs;
    for (const Tensor& t : inputs) specs.push_back({t.shape(), t.dtype()});
    return compile(trace(fn_, specs), options_);
  };
  std::int64_t key[kMaxKey];
  std::uint64_t hash = 0;
  const int len = signature_key(id_, inputs, key, hash);
  if (len == 0) return fresh();
  auto& cache = tenferro::detail::cpu_context(s).resources->graphs;
  if (tenferro::detail::ErasedHandle* hit = cache.find(key, len, hash)) return *hit->as<CompiledGraph>();
  CompiledGraph c = fresh();  // tracing makes s unusable meanwhile, so the cache is not touched
  const std::size_t bytes = footprint(c);
  auto* held = new CompiledGraph(c);
  cache.insert(key, len, hash, tenferro::detail::ErasedHandle(held, [](void* p) noexcept { delete static_cast<CompiledGraph*>(p); }), bytes);
  return c;
}

std::vector<Tensor> Function::operator()(Session& s, std::span<const Tensor> inputs) const {
  if (s.device() == DeviceKind::trace) return fn_(s, inputs);  // inlined into the outer trace
  return compiled(s, inputs).run(s, inputs);
}

void Function::call_into(Session& s, std::span<const Tensor> inputs, std::span<const Tensor> outputs) const {
  if (s.device() == DeviceKind::trace) {
    const std::vector<Tensor> r = fn_(s, inputs);
    if (r.size() != outputs.size())
      throw ArgumentError(kOp, "expected " + std::to_string(r.size()) + " outputs, got " + std::to_string(outputs.size()));
    for (std::size_t k = 0; k < r.size(); ++k) copy_into(s, r[k], outputs[k]);
    return;
  }
  compiled(s, inputs).run_into(s, inputs, outputs);
}

}  // namespace tenferro::graph
