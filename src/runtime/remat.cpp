// Checkpointed segments in derivative graphs: rematerialize() (Note [Checkpoints] in
// tenferro/graph.hpp).
//
// The forward nodes a vjp or grad transform replays from segment k keep the mark k; the
// backward nodes (recorded from `backward_start` on, by the eager rules) are unmarked
// and read the forward values the rules saved. For each segment whose intermediates
// backward nodes read, the pass clones the segment's nodes those values depend on (the
// closure within the segment, whole call nodes with all their results, and the windows
// of cloned buffers), marks the clones -k (so CSE keeps them apart), inserts them just
// before the first backward node that reads the segment, and points every backward read
// of a segment value at its clone. Forward reads are unchanged, so the forward values
// die at their last forward use and the clones live only while the backward pass needs
// them.
#include <algorithm>
#include <vector>

#include "runtime/graph_ir.hpp"

namespace tenferro::graph::detail {

namespace {

/// Calls f(v) for every value node n reads.
template <class F> void for_each_read(const Node& n, F&& f) {
  for (int k = 0; k < n.num_ins; ++k)
    if (n.ins[k] >= 0) f(n.ins[k]);
  if (n.init_from >= 0) f(n.init_from);
}

}  // namespace

Graph rematerialize(const Graph& graph, std::size_t backward_start) {
  const GraphData& g = graph.data();
  const std::size_t nv = g.values.size(), nn = g.nodes.size();
  // The forward segment of each buffer value (0: none).
  std::vector<int> seg(nv, 0);
  for (std::size_t v = 0; v < nv; ++v) {
    const Value& x = g.values[v];
    if (x.kind == Value::Kind::buffer && static_cast<std::size_t>(x.producer) < backward_start)
      seg[v] = std::max(0, g.nodes[static_cast<std::size_t>(x.producer)].segment);
  }
  // Segment values the backward nodes read, and each segment's first backward reader.
  std::vector<int> stack;
  std::vector<std::size_t> first_reader;  // by segment id
  for (std::size_t i = backward_start; i < nn; ++i)
    for_each_read(g.nodes[i], [&](int r) {
      const int h = home_of(g, r);
      const int k = seg[static_cast<std::size_t>(h)];
      if (k == 0) return;
      stack.push_back(h);
      if (first_reader.size() <= static_cast<std::size_t>(k)) first_reader.resize(static_cast<std::size_t>(k) + 1, nn);
      first_reader[static_cast<std::size_t>(k)] = std::min(first_reader[static_cast<std::size_t>(k)], i);
    });
  if (stack.empty()) return graph;
  // The closure within each segment.
  std::vector<char> clone(nv, 0);
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (clone[static_cast<std::size_t>(v)]) continue;
    const Node& n = g.nodes[static_cast<std::size_t>(g.values[static_cast<std::size_t>(v)].producer)];
    for (int k = 0; k < n.num_outs; ++k) clone[static_cast<std::size_t>(n.out + k)] = 1;
    for_each_read(n, [&](int r) {
      const int h = home_of(g, r);
      if (seg[static_cast<std::size_t>(h)] == seg[static_cast<std::size_t>(v)]) stack.push_back(h);
    });
  }
  GraphData out;
  std::vector<int> id(nv, -1), cid(nv, -1);  // the value's id, its clone's id
  const auto emit_node = [&](const Node& src, int segment, std::vector<int>& ids_out, bool backward) {
    Node n = src;
    n.segment = segment;
    const auto map = [&](int r) { return (backward && cid[static_cast<std::size_t>(r)] >= 0) ? cid[static_cast<std::size_t>(r)] : id[static_cast<std::size_t>(r)]; };
    for (int k = 0; k < n.num_ins; ++k)
      if (n.ins[k] >= 0) n.ins[k] = map(n.ins[k]);
    if (n.init_from >= 0) n.init_from = map(n.init_from);
    n.out = static_cast<int>(out.values.size());
    for (int k = 0; k < src.num_outs; ++k) {
      Value x = g.values[static_cast<std::size_t>(src.out + k)];
      x.producer = static_cast<int>(out.nodes.size());
      ids_out[static_cast<std::size_t>(src.out + k)] = static_cast<int>(out.values.size());
      out.values.push_back(std::move(x));
    }
    out.nodes.push_back(std::move(n));
  };
  // Segment k's clones, reading their own clones and otherwise the originals.
  const auto emit_clones = [&](int k) {
    for (std::size_t v = 0; v < nv; ++v) {
      const Value& x = g.values[v];
      if (x.kind == Value::Kind::view && clone[static_cast<std::size_t>(x.base)] && seg[static_cast<std::size_t>(x.base)] == k) {
        Value w = x;
        w.base = cid[static_cast<std::size_t>(x.base)];
        cid[v] = static_cast<int>(out.values.size());
        out.values.push_back(std::move(w));
      } else if (x.kind == Value::Kind::buffer && clone[v] && seg[v] == k) {
        const Node& n = g.nodes[static_cast<std::size_t>(x.producer)];
        if (n.out == static_cast<int>(v)) emit_node(n, -k, cid, /*backward=*/true);
      }
    }
  };
  for (std::size_t v = 0; v < nv; ++v) {
    const Value& x = g.values[v];
    if (x.kind != Value::Kind::buffer) {
      Value c = x;
      if (c.kind == Value::Kind::view) c.base = id[static_cast<std::size_t>(c.base)];
      id[v] = static_cast<int>(out.values.size());
      out.values.push_back(std::move(c));
      continue;
    }
    const std::size_t p = static_cast<std::size_t>(x.producer);
    const Node& n = g.nodes[p];
    if (n.out != static_cast<int>(v)) continue;  // a call node's later result: emitted with its first
    for (std::size_t k = 1; k < first_reader.size(); ++k)
      if (first_reader[k] == p) emit_clones(static_cast<int>(k));
    emit_node(n, n.segment, id, /*backward=*/p >= backward_start);
  }
  for (int v : g.inputs) out.inputs.push_back(id[static_cast<std::size_t>(v)]);
  for (int v : g.outputs) out.outputs.push_back(id[static_cast<std::size_t>(v)]);
  return Graph(std::make_shared<const GraphData>(std::move(out)));
}

}  // namespace tenferro::graph::detail
