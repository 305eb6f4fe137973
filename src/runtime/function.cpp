// graph::Function: compiled graphs cached per input signature in the session's
// resources (Note [Graph functions] in tenferro/graph.hpp).
#include <atomic>

#include "core/bounded_cache.hpp"
#include "cpu/context.hpp"
#include "runtime/graph_ir.hpp"
#include "tenferro/graph.hpp"

namespace tenferro::graph {

namespace {

// The id (or the shared key's four words), the count, then dtype and rank + extents per input.
constexpr int kMaxKey = 5 + 2 * kMaxRank * 8;
constexpr std::string_view kOp = "graph.Function";

std::atomic<std::uint64_t> g_next_id{1};  // 0 marks a shared key

/// FNV-1a over 64-bit words.
struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void mix(std::uint64_t v) noexcept { h = (h ^ v) * 1099511628211ull; }
};

std::uint64_t fnv(const std::int64_t* key, int n) noexcept {
  Fnv f;
  for (int i = 0; i < n; ++i) f.mix(static_cast<std::uint64_t>(key[i]));
  return f.h;
}

/// The cache key of (id, the inputs' dtypes and shapes); 0 words when too long to cache.
int signature_key(std::uint64_t id, std::span<const Tensor> inputs, std::int64_t* key, std::uint64_t& hash) {
  int n = 0;
  key[n++] = static_cast<std::int64_t>(id);
  key[n++] = static_cast<std::int64_t>(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw ArgumentError(kOp, "input tensor is undefined");
    if (n + 2 + t.rank() > kMaxKey - 4) return 0;
    key[n++] = static_cast<std::int64_t>(t.dtype());
    key[n++] = t.rank();
    for (int i = 0; i < t.rank(); ++i) key[n++] = t.extent(i);
  }
  hash = fnv(key, n);
  return n;
}

/// Which host tensors a graph's constants are: their element addresses, strides and
/// dtypes (not their values: a graph holds its constants, Note [Graph functions]).
std::int64_t constants_identity(const detail::GraphData& g) noexcept {
  Fnv f;
  for (const detail::Value& v : g.values) {
    if (v.kind != detail::Value::Kind::constant) continue;
    f.mix(reinterpret_cast<std::uintptr_t>(v.constant.data()));
    f.mix(static_cast<std::uint64_t>(v.constant.dtype()));
    for (int i = 0; i < v.constant.rank(); ++i) f.mix(static_cast<std::uint64_t>(v.constant.stride(i)));
  }
  return static_cast<std::int64_t>(f.h);
}

/// The value under a shared key: the compiled graph and the traced program it came from,
/// held so that its constants stay alive (their addresses are part of the key, so no
/// other tensor can take one of them while the entry exists; constant folding may have
/// dropped them from the compiled graph).
struct SharedEntry {
  CompiledGraph compiled;
  Graph source;
};

/// The shared key of a traced program: 0, its fingerprint, its constants, the compile
/// options, then the signature words of `key` (a function's key of `len` words).
int shared_key(const Graph& g, const CompileOptions& o, const std::int64_t* key, int len, std::int64_t* out, std::uint64_t& hash) {
  int n = 0;
  out[n++] = 0;
  out[n++] = static_cast<std::int64_t>(g.fingerprint());
  out[n++] = constants_identity(g.data());
  out[n++] = (o.optimize ? 1 : 0) | (o.fuse ? 2 : 0);
  for (int i = 1; i < len; ++i) out[n++] = key[i];
  hash = fnv(out, n);
  return n;
}

/// The bytes a compiled graph accounts for in the cache (its nodes and values).
std::size_t graph_bytes(const Graph& graph) {
  const detail::GraphData& g = graph.data();
  return sizeof(detail::Node) * g.nodes.size() + sizeof(detail::Value) * g.values.size();
}
std::size_t footprint(const CompiledGraph& c) { return graph_bytes(c.graph()) + 256 * static_cast<std::size_t>(c.num_steps()); }

}  // namespace

Function::Function(TraceFn fn, CompileOptions options)
    : fn_(std::move(fn)), options_(options), id_(g_next_id.fetch_add(1, std::memory_order_relaxed)) {}

CompiledGraph Function::compiled(Session& s, std::span<const Tensor> inputs) const {
  s.check(kOp);
  const auto traced = [&] {
    std::vector<ValueSpec> specs;
    for (const Tensor& t : inputs) specs.push_back({t.shape(), t.dtype()});
    return trace(fn_, specs);
  };
  std::int64_t key[kMaxKey];
  std::uint64_t hash = 0;
  const int len = signature_key(id_, inputs, key, hash);
  if (len == 0) return compile(traced(), options_);
  auto& cache = tenferro::detail::cpu_context(s).resources->graphs;
  if (tenferro::detail::ErasedHandle* hit = cache.find(key, len, hash)) return *hit->as<CompiledGraph>();
  const Graph g = traced();  // tracing makes s unusable meanwhile, so the cache is not touched
  // Another function (or this one before a clear of its entry) may have compiled the
  // same program over the same constants: share its compiled graph.
  std::int64_t skey[kMaxKey];
  std::uint64_t shash = 0;
  const int slen = shared_key(g, options_, key, len, skey, shash);
  const tenferro::detail::ErasedHandle* shared = cache.find(skey, slen, shash);
  const CompiledGraph c = shared ? shared->as<SharedEntry>()->compiled : compile(g, options_);
  if (!shared)
    cache.insert(skey, slen, shash,
                 tenferro::detail::ErasedHandle(new SharedEntry{c, g}, [](void* p) noexcept { delete static_cast<SharedEntry*>(p); }),
                 footprint(c) + graph_bytes(g));
  cache.insert(key, len, hash, tenferro::detail::ErasedHandle(new CompiledGraph(c), [](void* p) noexcept { delete static_cast<CompiledGraph*>(p); }),
               sizeof(CompiledGraph));
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
