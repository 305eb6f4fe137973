// Graph passes (Note [Graph passes] in tenferro/graph.hpp): dead-code elimination,
// common-subexpression elimination, constant folding and algebraic simplification, each
// graph → graph.
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <unordered_map>

#include "runtime/fuse.hpp"
#include "runtime/graph_ir.hpp"

namespace tenferro::graph {

namespace detail {

namespace {

/// v with every alias followed.
int resolve(const std::vector<int>& alias, int v) {
  while (alias[static_cast<std::size_t>(v)] >= 0) v = alias[static_cast<std::size_t>(v)];
  return v;
}

/// g with every read of v redirected to alias[v] (when >= 0), then only the values the
/// results need, renumbered in their order.
GraphData rebuild(const GraphData& g, const std::vector<int>& alias) {
  const std::size_t nv = g.values.size();
  const std::vector<char> needed = needed_values(g, &alias, /*keep_inputs=*/true);
  GraphData out;
  out.values.reserve(nv);
  out.nodes.reserve(g.nodes.size());
  std::vector<int> id(nv, -1), node_id(g.nodes.size(), -1);
  for (std::size_t v = 0; v < nv; ++v) {
    if (!needed[v]) continue;
    Value x = g.values[v];
    if (x.kind == Value::Kind::view) x.base = id[static_cast<std::size_t>(resolve(alias, x.base))];
    if (x.kind == Value::Kind::buffer) {
      int& p = node_id[static_cast<std::size_t>(x.producer)];
      if (p < 0) {  // a call node's later results follow its first (needed together, consecutive)
        Node n = g.nodes[static_cast<std::size_t>(x.producer)];
        for (int k = 0; k < n.num_ins; ++k)
          if (n.ins[k] >= 0) n.ins[k] = id[static_cast<std::size_t>(resolve(alias, n.ins[k]))];
        if (n.init_from >= 0) n.init_from = id[static_cast<std::size_t>(resolve(alias, n.init_from))];
        n.out = static_cast<int>(out.values.size());
        p = static_cast<int>(out.nodes.size());
        out.nodes.push_back(n);
      }
      x.producer = p;
    }
    id[v] = static_cast<int>(out.values.size());
    out.values.push_back(std::move(x));
  }
  for (int v : g.inputs) out.inputs.push_back(id[static_cast<std::size_t>(v)]);
  for (int v : g.outputs) out.outputs.push_back(id[static_cast<std::size_t>(resolve(alias, v))]);
  return out;
}

Graph wrap(GraphData&& d) { return Graph(std::make_shared<const GraphData>(std::move(d))); }

/// A node that writes its whole buffer as a plain result (no window, no prior value).
bool plain(const GraphData& g, const Node& n) {
  const Value& o = g.values[static_cast<std::size_t>(n.out)];
  return n.init_from < 0 && n.out_view == compact_layout(o.shape, o.dtype);
}

/// Values that later nodes treat as a buffer's identity (windows' bases, prior values):
/// aliasing them to another value would change what those read.
std::vector<char> anchored(const GraphData& g) {
  std::vector<char> a(g.values.size(), 0);
  for (const Value& x : g.values)
    if (x.kind == Value::Kind::view) a[static_cast<std::size_t>(x.base)] = 1;
  for (const Node& n : g.nodes)
    if (n.init_from >= 0) a[static_cast<std::size_t>(n.init_from)] = 1;
  return a;
}

bool is_value(const Scalar& s, double v) { return s.to<std::complex<double>>() == std::complex<double>(v); }

/// For an identity op (x·1, x + 0, x − 0, x / 1, neg∘neg, conj∘conj, a same-dtype copy
/// of a whole value), the value it equals; else -1.
int identity_of(const GraphData& g, const Node& n) {
  const Value& out = g.values[static_cast<std::size_t>(n.out)];
  auto same_as_out = [&](int v) {
    const Value& x = g.values[static_cast<std::size_t>(v)];
    return x.dtype == out.dtype && x.shape == out.shape;
  };
  auto producer_of = [&](int v) -> const Node* {
    const Value& x = g.values[static_cast<std::size_t>(v)];
    return x.kind == Value::Kind::buffer ? &g.nodes[static_cast<std::size_t>(x.producer)] : nullptr;
  };
  switch (n.op) {
    case OpId::mul:
    case OpId::add:
    case OpId::sub:
    case OpId::div: {
      if (n.kind != NodeKind::binary) return -1;
      const double unit = n.op == OpId::mul || n.op == OpId::div ? 1.0 : 0.0;
      if (n.ins[0] >= 0 && n.ins[1] < 0 && is_value(n.scalars[1], unit) && same_as_out(n.ins[0])) return n.ins[0];
      const bool commutes = n.op == OpId::mul || n.op == OpId::add;
      if (commutes && n.ins[1] >= 0 && n.ins[0] < 0 && is_value(n.scalars[0], unit) && same_as_out(n.ins[1])) return n.ins[1];
      return -1;
    }
    case OpId::neg:
    case OpId::conj: {
      const Node* p = producer_of(n.ins[0]);
      if (p && p->op == n.op && p->kind == NodeKind::unary && plain(g, *p) && same_as_out(p->ins[0])) return p->ins[0];
      return -1;
    }
    case OpId::copy:
    case OpId::convert:
    case OpId::cast: {
      const Value& x = g.values[static_cast<std::size_t>(n.ins[0])];
      if (x.kind != Value::Kind::view && same_as_out(n.ins[0])) return n.ins[0];
      return -1;
    }
    default: return -1;
  }
}

/// For a dot_general operand v that is a whole same-dtype copy of a window (a transpose,
/// a diagonal, a strided slice), that window: the contraction reads strided operands,
/// so the copy is not needed (its signature depends on shapes only). -1 otherwise.
int copied_window(const GraphData& g, int v) {
  const Value& x = g.values[static_cast<std::size_t>(v)];
  if (x.kind != Value::Kind::buffer) return -1;
  const Node& p = g.nodes[static_cast<std::size_t>(x.producer)];
  if (p.kind != NodeKind::convert || !plain(g, p)) return -1;
  const Value& in = g.values[static_cast<std::size_t>(p.ins[0])];
  if (in.dtype != x.dtype || !(in.shape == x.shape)) return -1;
  const Layout l = layout_of(g, p.ins[0]);
  for (int i = 0; i < l.extents.size(); ++i)
    if (l.extents[i] > 1 && l.strides[i] == 0) return -1;  // a broadcast: left as a copy
  return p.ins[0];
}

}  // namespace
}  // namespace detail

using detail::GraphData;
using detail::Node;
using detail::NodeKind;
using detail::Value;

Graph eliminate_dead_code(const Graph& graph) {
  const GraphData& g = graph.data();
  const std::vector<int> none(g.values.size(), -1);
  const std::vector<char> needed = detail::needed_values(g, &none, /*keep_inputs=*/true);
  if (std::find(needed.begin(), needed.end(), 0) == needed.end()) return graph;
  return detail::wrap(detail::rebuild(g, none));
}

Graph eliminate_common_subexpressions(const Graph& graph) {
  const GraphData& g = graph.data();
  // Values are immutable, so two equal ones can share one buffer whatever reads them.
  std::vector<int> alias(g.values.size(), -1);
  bool changed = false;
  std::unordered_map<std::string, int> seen_nodes, seen_views;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const Value& x = g.values[v];
    std::string key;
    std::unordered_map<std::string, int>* seen = nullptr;
    if (x.kind == Value::Kind::view) {
      key = std::to_string(detail::resolve(alias, x.base)) + ":" + std::to_string(static_cast<int>(x.window.dtype)) + ":" +
            std::to_string(x.window.offset) + ":" + x.window.extents.to_string() + x.window.strides.to_string();
      seen = &seen_views;
    } else if (x.kind == Value::Kind::buffer) {
      const Node& n = g.nodes[static_cast<std::size_t>(x.producer)];
      if (!detail::plain(g, n)) continue;
      // The node's identity and its result's type (a kernel writes what its output says).
      key = detail::node_key(n, [&](int id) { return detail::resolve(alias, id); }) + std::to_string(static_cast<int>(x.dtype)) + x.shape.to_string() +
            "#" + std::to_string(static_cast<int>(v) - n.out);  // which result of a call node
      seen = &seen_nodes;
    } else {
      continue;
    }
    const auto [it, fresh] = seen->emplace(key, static_cast<int>(v));
    if (!fresh) {
      alias[v] = it->second;
      changed = true;
    }
  }
  return changed ? detail::wrap(detail::rebuild(g, alias)) : graph;
}

Graph simplify(const Graph& graph) {
  const GraphData& g = graph.data();
  std::vector<int> alias(g.values.size(), -1);
  const std::vector<char> anchor = detail::anchored(g);
  bool changed = false;
  for (const Node& node : g.nodes) {
    if (!detail::plain(g, node)) continue;
    Node n = node;  // with its operands' aliases followed
    for (int k = 0; k < n.num_ins; ++k)
      if (n.ins[k] >= 0) n.ins[k] = detail::resolve(alias, n.ins[k]);
    const int same = detail::identity_of(g, n);
    if (same < 0) continue;
    // A window is not a buffer: what reads this value's memory (windows, prior values)
    // could not read it instead.
    if (g.values[static_cast<std::size_t>(detail::resolve(alias, same))].kind == Value::Kind::view && anchor[static_cast<std::size_t>(n.out)]) continue;
    alias[static_cast<std::size_t>(n.out)] = same;
    changed = true;
  }
  // A copy feeding dot_general: the contraction reads the copied window itself.
  GraphData folded;
  bool any_folded = false;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != NodeKind::dot) continue;
    for (int k = 0; k < 2; ++k) {
      const int w = detail::copied_window(g, detail::resolve(alias, g.nodes[i].ins[k]));
      if (w < 0) continue;
      if (!any_folded) folded = g;
      any_folded = changed = true;
      folded.nodes[i].ins[k] = w;
    }
  }
  return changed ? detail::wrap(detail::rebuild(any_folded ? folded : g, alias)) : graph;
}

Graph fold_constants(const Graph& graph) {
  constexpr std::int64_t kMaxFolded = 1 << 16;  // elements: larger results stay computed at run time
  const GraphData& src = graph.data();
  GraphData g;  // a copy, made at the first fold
  bool changed = false;
  for (std::size_t id = 0; id < src.values.size(); ++id) {
    const Value& x = changed ? g.values[id] : src.values[id];
    if (x.kind != Value::Kind::buffer) continue;
    const GraphData& cur = changed ? g : src;
    const Node& n = cur.nodes[static_cast<std::size_t>(x.producer)];
    if (n.kind != NodeKind::unary && n.kind != NodeKind::binary && n.kind != NodeKind::ternary) continue;
    const detail::ChunkFn fn = detail::chunk_fn(n.op, x.dtype);
    if (!fn || !detail::plain(cur, n) || detail::numel_of(x.shape) > kMaxFolded) continue;
    bool all_constant = true;
    const void* ptr[3] = {nullptr, nullptr, nullptr};
    std::int64_t stride[3] = {0, 0, 0};
    std::vector<unsigned char> scalars(3 * 16);
    for (int k = 0; k < n.num_ins && all_constant; ++k) {
      if (n.ins[k] < 0) {
        visit_dtype<DTypeSet::inexact>("graph.fold_constants", x.dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T c = n.scalars[k].to<T>();
          std::memcpy(scalars.data() + 16 * k, &c, sizeof c);
        });
        ptr[k] = scalars.data() + 16 * k;
        continue;
      }
      const Value& in = cur.values[static_cast<std::size_t>(n.ins[k])];
      all_constant = in.kind == Value::Kind::constant && in.dtype == x.dtype && n.in[k] == x.dtype && in.shape == x.shape &&
                     in.constant.is_contiguous();
      if (all_constant) {
        ptr[k] = in.constant.data();
        stride[k] = 1;
      }
    }
    if (!all_constant) continue;
    Tensor r = Tensor::empty(x.shape.span(), x.dtype);
    fn(ptr[0], stride[0], ptr[1], stride[1], ptr[2], stride[2], r.mutable_data(), r.numel());
    if (!changed) {
      g = src;
      changed = true;
    }
    Value& folded = g.values[id];
    folded.kind = Value::Kind::constant;
    folded.constant = std::move(r);
    folded.producer = -1;
  }
  if (!changed) return graph;
  // The folded nodes stay in `nodes` with nobody pointing at them: rebuild drops them.
  return detail::wrap(detail::rebuild(g, std::vector<int>(g.values.size(), -1)));
}

Graph optimize(const Graph& g) { return eliminate_dead_code(eliminate_common_subexpressions(simplify(fold_constants(g)))); }

}  // namespace tenferro::graph
