// Graph: its signature, text form and fingerprint (Note [Graph IR] in graph_ir.hpp).
#include <complex>
#include <cstring>
#include <sstream>

#include "runtime/graph_ir.hpp"

namespace tenferro::graph {

namespace detail {

Layout compact_layout(const Dims& shape, DType dtype) {
  Layout l;
  l.dtype = dtype;
  std::int64_t st = 1;
  for (int i = 0; i < shape.size(); ++i) {
    l.extents.push_back(shape[i]);
    l.strides.push_back(st);
    st *= shape[i];
  }
  return l;
}

bool is_compact_full(const Layout& l) noexcept {
  std::int64_t st = 1;
  for (int i = 0; i < l.extents.size(); ++i) {
    if (l.extents[i] != 1 && l.strides[i] != st) return false;
    st *= l.extents[i];
  }
  return l.offset == 0;
}

std::int64_t numel_of(const Dims& extents) noexcept {
  std::int64_t n = 1;
  for (int i = 0; i < extents.size(); ++i) n *= extents[i];
  return n;
}

Layout layout_of(const GraphData& g, int v) {
  const Value& x = g.values[static_cast<std::size_t>(v)];
  return x.kind == Value::Kind::view ? x.window : compact_layout(x.shape, x.dtype);
}

std::vector<char> needed_values(const GraphData& g, const std::vector<int>* alias, bool keep_inputs) {
  const auto resolve = [&](int v) {
    while (alias && (*alias)[static_cast<std::size_t>(v)] >= 0) v = (*alias)[static_cast<std::size_t>(v)];
    return v;
  };
  std::vector<char> needed(g.values.size(), 0);
  std::vector<int> stack;
  for (int v : g.outputs) stack.push_back(resolve(v));
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (needed[static_cast<std::size_t>(v)]) continue;
    needed[static_cast<std::size_t>(v)] = 1;
    const Value& x = g.values[static_cast<std::size_t>(v)];
    if (x.kind == Value::Kind::view) stack.push_back(resolve(x.base));
    if (x.kind != Value::Kind::buffer) continue;
    const Node& n = g.nodes[static_cast<std::size_t>(x.producer)];
    for (int k = 0; k < n.num_ins; ++k)
      if (n.ins[k] >= 0) stack.push_back(resolve(n.ins[k]));
    if (n.init_from >= 0) stack.push_back(resolve(n.init_from));
    if (n.num_outs > 1)  // a call node writes all its results
      for (int k = 0; k < n.num_outs; ++k) stack.push_back(n.out + k);
  }
  if (keep_inputs)
    for (int v : g.inputs) needed[static_cast<std::size_t>(v)] = 1;
  return needed;
}

std::string node_key(const Node& n, const std::function<int(int)>& id) {
  std::string k;
  auto i64 = [&](std::int64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto scalar = [&](const Scalar& s) {
    i64(static_cast<std::int64_t>(s.kind()));
    const std::complex<double> z = s.to<std::complex<double>>();
    k.append(reinterpret_cast<const char*>(&z), sizeof z);
    if (s.kind() == Scalar::Kind::integer) i64(s.to<std::int64_t>());
  };
  auto dims = [&](const Dims& d) {
    i64(d.size());
    for (int i = 0; i < d.size(); ++i) i64(d[i]);
  };
  i64(static_cast<std::int64_t>(n.op));
  i64(static_cast<std::int64_t>(n.kind));
  i64(n.num_ins);
  for (int i = 0; i < n.num_ins; ++i) {
    i64(n.ins[i] >= 0 ? id(n.ins[i]) : -1);
    i64(static_cast<std::int64_t>(n.in[i]));
    if (n.ins[i] < 0) scalar(n.scalars[i]);
  }
  if (n.kind == NodeKind::axpby) {
    scalar(n.scalars[0]);
    scalar(n.scalars[1]);
  }
  i64(static_cast<std::int64_t>(n.cmp));
  i64(static_cast<std::int64_t>(n.mask));
  i64(n.axis);
  i64(n.offset);
  i64(n.num_outs);
  i64(n.segment);
  if (n.call) k += n.call->attrs;
  if (n.index) k += n.index->text;
  if (n.fft) {
    i64(static_cast<std::int64_t>(n.fft->kind) * 16 + static_cast<std::int64_t>(n.fft->norm) * 2 + n.fft->measure);
    for (int a = 0; a < n.fft->naxes; ++a) {
      i64(n.fft->axes[a]);
      i64(n.fft->len[a]);
    }
  }
  if (n.kind == NodeKind::dot) {
    dims(n.dot->dims.lhs_contracting);
    dims(n.dot->dims.rhs_contracting);
    dims(n.dot->dims.lhs_batch);
    dims(n.dot->dims.rhs_batch);
    i64(n.dot->dims.conj_lhs * 2 + n.dot->dims.conj_rhs);
    scalar(n.dot->alpha);
    scalar(n.dot->beta);
  }
  return k;
}

namespace {

/// FNV-1a over the structure.
struct Hasher {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) noexcept {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void i64(std::int64_t v) noexcept { bytes(&v, sizeof v); }
  void dims(const Dims& d) noexcept {
    i64(d.size());
    for (int i = 0; i < d.size(); ++i) i64(d[i]);
  }
  void layout(const Layout& l) noexcept {
    i64(static_cast<std::int64_t>(l.dtype));
    i64(l.offset);
    dims(l.extents);
    dims(l.strides);
  }
};

std::string type_of(const Value& v) { return std::string(dtype_name(v.dtype)) + v.shape.to_string(); }

std::string window_text(const Layout& l) {
  std::ostringstream os;
  os << "offset = " << l.offset << ", strides = " << l.strides.to_string();
  return os.str();
}

std::string mask_text(std::uint64_t mask) {
  std::string s = "[";
  bool first = true;
  for (int i = 0; i < 64; ++i)
    if (mask >> i & 1u) {
      s += (first ? "" : ", ") + std::to_string(i);
      first = false;
    }
  return s + "]";
}

void node_text(std::ostream& os, const GraphData& g, const Node& n) {
  const Value& out = g.values[static_cast<std::size_t>(n.out)];
  os << "  %" << n.out;
  for (int k = 1; k < n.num_outs; ++k) os << ", %" << n.out + k;
  os << " = " << op_name(n.op);
  if (n.op == OpId::compare) os << "." << static_cast<int>(n.cmp);
  for (int k = 0; k < n.num_ins; ++k) {
    os << (k ? ", " : " ");
    if (n.ins[k] >= 0) os << "%" << n.ins[k];
    else os << n.scalars[k].to_string();
  }
  switch (n.kind) {
    case NodeKind::reduce: os << " {axes = " << mask_text(n.mask) << "}"; break;
    case NodeKind::along_axis:
    case NodeKind::take:
    case NodeKind::iota: os << " {axis = " << n.axis << "}"; break;
    case NodeKind::gather:
    case NodeKind::scatter: os << " {" << n.index->text << "}"; break;
    case NodeKind::axpby: os << " {alpha = " << n.scalars[0].to_string() << ", beta = " << n.scalars[1].to_string() << "}"; break;
    case NodeKind::triangle: os << " {offset = " << n.offset << "}"; break;
    case NodeKind::fft: {
      Dims axes, len;
      for (int a = 0; a < n.fft->naxes; ++a) {
        axes.push_back(n.fft->axes[a]);
        len.push_back(n.fft->len[a]);
      }
      const char* norms[] = {"backward", "ortho", "forward"};
      os << " {axes = " << axes.to_string() << ", n = " << len.to_string() << ", norm = " << norms[static_cast<int>(n.fft->norm)] << "}";
      break;
    }
    case NodeKind::call:
      if (!n.call->attrs.empty()) os << " {" << n.call->attrs << "}";
      break;
    case NodeKind::dot:
      os << " {contracting = " << n.dot->dims.lhs_contracting.to_string() << "x" << n.dot->dims.rhs_contracting.to_string()
         << ", batch = " << n.dot->dims.lhs_batch.to_string() << "x" << n.dot->dims.rhs_batch.to_string();
      if (n.dot->dims.conj_lhs) os << ", conj_lhs";
      if (n.dot->dims.conj_rhs) os << ", conj_rhs";
      os << ", alpha = " << n.dot->alpha.to_string() << ", beta = " << n.dot->beta.to_string() << "}";
      break;
    default: break;
  }
  if (n.init_from >= 0) os << " from %" << n.init_from;
  const Layout full = compact_layout(out.shape, out.dtype);
  if (!(n.out_view == full)) os << " into [" << std::string(dtype_name(n.out_view.dtype)) << n.out_view.extents.to_string() << ", " << window_text(n.out_view) << "]";
  os << " : " << type_of(out);
  for (int k = 1; k < n.num_outs; ++k) os << ", " << type_of(g.values[static_cast<std::size_t>(n.out + k)]);
  os << "\n";
}

}  // namespace
}  // namespace detail

using detail::GraphData;
using detail::Value;

Graph::Graph() : data_(std::make_shared<const GraphData>()) {}

int Graph::num_inputs() const noexcept { return static_cast<int>(data_->inputs.size()); }
int Graph::num_outputs() const noexcept { return static_cast<int>(data_->outputs.size()); }
int Graph::num_nodes() const noexcept { return static_cast<int>(data_->nodes.size()); }

ValueSpec Graph::input(int k) const {
  if (k < 0 || k >= num_inputs()) throw IndexError("Graph::input", "input " + std::to_string(k) + " of " + std::to_string(num_inputs()));
  const Value& v = data_->values[static_cast<std::size_t>(data_->inputs[static_cast<std::size_t>(k)])];
  return {Shape(v.shape.span()), v.dtype};
}

ValueSpec Graph::output(int k) const {
  if (k < 0 || k >= num_outputs()) throw IndexError("Graph::output", "output " + std::to_string(k) + " of " + std::to_string(num_outputs()));
  const Value& v = data_->values[static_cast<std::size_t>(data_->outputs[static_cast<std::size_t>(k)])];
  return {Shape(v.shape.span()), v.dtype};
}

std::string Graph::to_text() const {
  const GraphData& g = *data_;
  std::ostringstream os;
  os << "graph(";
  for (std::size_t k = 0; k < g.inputs.size(); ++k)
    os << (k ? ", " : "") << "%" << g.inputs[k] << ": " << detail::type_of(g.values[static_cast<std::size_t>(g.inputs[k])]);
  os << ") {\n";
  for (std::size_t id = 0; id < g.values.size(); ++id) {
    const Value& v = g.values[id];
    switch (v.kind) {
      case Value::Kind::input: break;
      case Value::Kind::constant: os << "  %" << id << " = constant : " << detail::type_of(v) << "\n"; break;
      case Value::Kind::view:
        os << "  %" << id << " = view %" << v.base << " {" << detail::window_text(v.window) << "} : " << detail::type_of(v) << "\n";
        break;
      case Value::Kind::buffer: {
        const detail::Node& n = g.nodes[static_cast<std::size_t>(v.producer)];
        if (n.out == static_cast<int>(id)) detail::node_text(os, g, n);  // a call node's line names all its results
        break;
      }
    }
  }
  os << "  return";
  for (std::size_t k = 0; k < g.outputs.size(); ++k) os << (k ? ", " : " ") << "%" << g.outputs[k];
  os << "\n}\n";
  return os.str();
}

std::uint64_t Graph::fingerprint() const {
  const GraphData& g = *data_;
  detail::Hasher h;
  const auto same_id = [](int v) { return v; };
  for (const Value& v : g.values) {
    h.i64(static_cast<std::int64_t>(v.kind));
    h.i64(static_cast<std::int64_t>(v.dtype));
    h.dims(v.shape);
    if (v.kind == Value::Kind::view) {
      h.i64(v.base);
      h.layout(v.window);
    } else if (v.kind == Value::Kind::constant) {
      h.dims(v.constant.strides());
    } else if (v.kind == Value::Kind::buffer) {
      const detail::Node& n = g.nodes[static_cast<std::size_t>(v.producer)];
      const std::string key = detail::node_key(n, same_id);
      h.bytes(key.data(), key.size());
      h.i64(n.init_from);
      h.layout(n.out_view);
    }
  }
  for (int v : g.inputs) h.i64(v);
  h.i64(-1);
  for (int v : g.outputs) h.i64(v);
  return h.h;
}

}  // namespace tenferro::graph
