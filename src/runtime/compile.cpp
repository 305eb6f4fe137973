// compile() and compiled execution (Note [Compiled graphs] in tenferro/graph.hpp).
//
// Note [Run slots]
// A compiled graph numbers the tensors one run handles: one slot per live value (inputs,
// constants, buffers, views) and one per step whose kernel writes a window of its
// buffer. A run fills a slot when it is first needed (a buffer carved from the run's
// arena, Note [Arena plan], or for a result from the session's pool, just before its
// producer runs; a view from its base just before its first reader) and empties it right
// after its last use (computed at compile time). An elementwise step whose operand buffer
// dies with it writes into that buffer (in place) instead of allocating. The slot vectors
// are kept in the compiled graph between runs (one per concurrent run), so a
// steady-state run allocates nothing on the heap.
//
// Note [Arena plan]
// The buffers a run computes and drops (every intermediate a kernel step or a fused
// group writes; not the graph's results, which a run hands out, nor the results of
// linear-algebra calls, which their ops allocate) live in one arena, one block from the
// session's pool per run, at offsets fixed at compile time. A buffer is live from the
// step that writes it through its last use (a window extends its base's); an in-place
// step continues its operand's buffer, so the chain is one interval. Offsets come from
// the classic offline packing heuristic (largest first, each at the lowest 64-byte
// aligned offset clear of every placed buffer whose interval meets its own), so two
// buffers share memory only when no step sees both. Example: a chain x -> a -> b -> c
// -> result of four equal elementwise steps without in-place reuse needs a and b live
// together, then b and c: an arena of two buffers, a and c at offset 0.
//
// Note [Results written in place]
// run_into hands a result's producer the caller's output tensor instead of a buffer
// (no copy afterwards) when the output is compact, owned by the library (not external
// memory), overlaps no constant the steps read, and the result is a buffer its step
// allocates (not an in-place continuation of an operand, not a linear-algebra call's).
// Only graphs whose steps cannot fail once a run has started qualify (elementwise steps
// without data checks and fused groups whose chunk buffers fit on the stack), since
// run_into writes nothing when it fails; the others copy their results at the end.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "ops/conversion.hpp"
#include "ops/elementwise.hpp"
#include "ops/indexing.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "runtime/compiled.hpp"

namespace tenferro::graph {

namespace detail {

namespace {

using tenferro::detail::DotCall;
using tenferro::detail::EwCall;
using tenferro::detail::KernelFn;

constexpr std::string_view kRun = "graph.run";
constexpr std::string_view kRunInto = "graph.run_into";

}  // namespace

namespace {

/// Slot vectors for one run, returned to the compiled graph afterwards.
class RunSlots {
 public:
  explicit RunSlots(const CompiledData& c) : c_(c) {
    {
      std::lock_guard lock(c.mu);
      if (!c.spare.empty()) {
        t_ = std::move(c.spare.back());
        c.spare.pop_back();
      }
    }
    if (t_.size() != c.slots.size()) t_.assign(c.slots.size(), Tensor());
  }
  ~RunSlots() {
    for (Tensor& t : t_) t = Tensor();
    std::lock_guard lock(c_.mu);
    try {
      c_.spare.push_back(std::move(t_));
    } catch (...) {  // out of memory: the vector is simply freed
    }
  }
  Tensor& operator[](int k) noexcept { return t_[static_cast<std::size_t>(k)]; }
  const Tensor* data() const noexcept { return t_.data(); }

 private:
  const CompiledData& c_;
  std::vector<Tensor> t_;
};

/// The window `w` of `base`'s memory (offsets relative to base's first element).
Tensor make_window(const Tensor& base, const Layout& w) {
  const Tensor b = base.dtype() == w.dtype ? base : base.real_view();
  const auto esize = static_cast<std::int64_t>(dtype_size(w.dtype));
  const std::int64_t off = static_cast<std::int64_t>(static_cast<const std::byte*>(base.data()) - base.block()->base) / esize + w.offset;
  return b.as_strided_view(std::span<const std::int64_t>(w.extents.data(), static_cast<std::size_t>(w.extents.size())),
                           std::span<const std::int64_t>(w.strides.data(), static_cast<std::size_t>(w.strides.size())), off);
}

void call(Session& s, const Step& st, RunSlots& t) {
  const Node& n = *st.node;
  const Tensor& out = t[st.target];
  switch (n.kind) {
    case NodeKind::unary:
    case NodeKind::binary:
    case NodeKind::ternary: {
      auto fill = [&](auto& c, int arity) {
        c.out = &out;
        for (int k = 0; k < arity; ++k) {
          if (n.ins[k] >= 0) c.tensor[k] = &t[st.ins[k]];
          else c.scalar[k] = &n.scalars[k];
          c.in[k] = n.in[k];
        }
        c.cmp = n.cmp;
        c.contiguous = n.contiguous;
      };
      if (n.kind == NodeKind::unary) {
        EwCall<1> c;
        fill(c, 1);
        st.fn.unary(s, c);
      } else if (n.kind == NodeKind::binary) {
        EwCall<2> c;
        fill(c, 2);
        if (tenferro::detail::checks_integer_operand(n.op, n.in[1]) && out.numel() > 0)  // the front end's data check, skipped while tracing
          tenferro::detail::check_integer_operand(s, n.op, op_name(n.op), c.tensor[1], c.scalar[1]);
        st.fn.binary(s, c);
      } else {
        EwCall<3> c;
        fill(c, 3);
        st.fn.ternary(s, c);
      }
      return;
    }
    case NodeKind::reduce: st.fn.reduce(s, t[st.ins[0]], out, n.mask); return;
    case NodeKind::convert:
      if (n.op == OpId::convert) tenferro::detail::check_exact_conversion(s, t[st.ins[0]], out.dtype());  // skipped while tracing
      st.fn.convert(s, t[st.ins[0]], out);
      return;
    case NodeKind::along_axis: st.fn.along_axis(s, t[st.ins[0]], out, n.axis); return;
    case NodeKind::dot:
      st.fn.dot(s, DotCall{"dot_general", &t[st.ins[0]], &t[st.ins[1]], &out, &n.dot->sig, &n.dot->dims, &n.dot->alpha, &n.dot->beta, nullptr});
      return;
    case NodeKind::triangle: st.fn.triangle(s, t[st.ins[0]], out, n.offset); return;
    case NodeKind::fft: st.fn.fft(s, op_name(n.op), t[st.ins[0]], *n.fft, out); return;
    case NodeKind::gather: st.fn.gather(s, n.index->map, t[st.ins[0]], t[st.ins[1]], n.index->slice_sizes, out); return;
    case NodeKind::scatter: st.fn.scatter(s, n.index->map, t[st.ins[0]], t[st.ins[1]], t[st.ins[2]], n.index->combiner, out); return;
    case NodeKind::vdot: st.fn.vdot(s, t[st.ins[0]], t[st.ins[1]], out); return;
    case NodeKind::axpby: st.fn.axpby(s, n.scalars[0], t[st.ins[0]], n.scalars[1], out); return;  // out starts as y
    case NodeKind::iota: st.fn.iota(s, out, n.axis); return;
    case NodeKind::window: st.fn.window(s, t[st.ins[0]], t[st.ins[1]], out); return;
    case NodeKind::update_window: st.fn.update_window(s, t[st.ins[0]], t[st.ins[1]], t[st.ins[2]], out); return;
    case NodeKind::take:  // the front end's data check, skipped while tracing
      tenferro::detail::check_index_range(s, t[st.ins[0]], t[st.ins[1]], n.axis, op_name(n.op));
      st.fn.take(s, t[st.ins[0]], t[st.ins[1]], out, n.axis);
      return;
    case NodeKind::call: {  // the public op, whole; its results are new compact tensors
      const Tensor* in[3] = {};
      for (int k = 0; k < n.num_ins; ++k) in[k] = &t[st.ins[k]];
      n.call->run(s, in, &t[st.out]);
      for (int k = 0; k < n.num_outs; ++k)  // windows of the results were traced over compact buffers
        if (!t[st.out + k].is_contiguous()) t[st.out + k] = to_contiguous(s, t[st.out + k]);
      return;
    }
  }
}

/// Session and inputs against the signature (typed errors naming `op`).
void check_inputs(const CompiledData& c, Session& s, std::span<const Tensor> inputs, std::string_view op) {
  s.check(op);
  if (s.device() != DeviceKind::cpu)
    throw SessionEntryError(SessionEntryKind::IncompatibleContext, op, "compiled graphs run on CPU sessions (this one is on " + std::string(device_name(s.device())) + ")");
  const GraphData& g = c.graph.data();
  if (inputs.size() != g.inputs.size())
    throw ArgumentError(op, "expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    const auto what = [k] { return "input " + std::to_string(k); };  // built only for an error
    if (!t.defined() || t.device().kind != DeviceKind::cpu) tenferro::detail::require_tensor_on(t, DeviceKind::cpu, op, what());
    const Value& v = g.values[static_cast<std::size_t>(g.inputs[k])];
    if (t.dtype() != v.dtype)
      throw DTypeError(op, what() + " has dtype " + std::string(dtype_name(t.dtype())) + ", the graph was traced for " + std::string(dtype_name(v.dtype)));
    bool same = t.rank() == v.shape.size();
    for (int i = 0; same && i < t.rank(); ++i) same = t.extent(i) == v.shape[i];
    if (!same) throw ShapeError(op, what() + " has shape " + t.shape().to_string() + ", the graph was traced for " + v.shape.to_string());
  }
}

/// Runs every step; the results stay in their slots. `direct[k]`, when given and set, is
/// the tensor output k's producer writes (Note [Results written in place]).
void execute(const CompiledData& c, Session& s, std::span<const Tensor> inputs, RunSlots& t, const Tensor* const* direct = nullptr) {
  for (std::size_t k = 0; k < c.slots.size(); ++k) {
    const Slot& sl = c.slots[k];
    if (sl.kind == Slot::Kind::input) {
      const Tensor& x = inputs[static_cast<std::size_t>(sl.input)];
      t[static_cast<int>(k)] = x.is_contiguous() ? x : to_contiguous(s, x);  // windows were traced over a compact input
    } else if (sl.kind == Slot::Kind::constant) {
      t[static_cast<int>(k)] = sl.constant;
    }
  }
  // The arena (Note [Arena plan]): its buffers' views keep it alive until they drop.
  const std::int64_t arena_words[1] = {c.arena_bytes / 8};
  const Tensor arena = c.arena_bytes > 0 ? Tensor::empty(arena_words, DType::f64) : Tensor();
  const auto fresh_buffer = [&](int slot) {
    const Slot& o = c.slots[static_cast<std::size_t>(slot)];
    const std::span<const std::int64_t> shape(o.shape.data(), static_cast<std::size_t>(o.shape.size()));
    if (direct) {
      const int k = c.writes_output[static_cast<std::size_t>(slot)];
      if (k >= 0 && direct[k]) {
        t[slot] = *direct[k];
        return;
      }
    }
    const std::int64_t at = c.arena_at[static_cast<std::size_t>(slot)];
    t[slot] = at >= 0 ? arena.carve_view(static_cast<std::size_t>(at), shape, o.dtype) : Tensor::empty(shape, o.dtype);
  };
  for (const Step& st : c.steps) {
    const FusedGroup* fg = st.fused >= 0 ? &c.groups[static_cast<std::size_t>(st.fused)] : nullptr;
    if (fg) {
      for (int r : fg->results) fresh_buffer(r);
    } else if (st.node->kind == NodeKind::call) {  // the op allocates its results
    } else if (st.reuse >= 0) {  // in place: the operand's buffer is dead after this step (Note [Run slots])
      t[st.out] = t[st.reuse];
    } else {
      fresh_buffer(st.out);
    }
    if (st.init >= 0) {
      const Tensor& from = t[st.init];
      std::memcpy(t[st.out].mutable_data(), from.data(), static_cast<std::size_t>(from.numel()) * dtype_size(from.dtype()));
    }
    for (std::uint32_t i = st.make_begin; i < st.make_end; ++i) {
      const Slot& w = c.slots[static_cast<std::size_t>(c.makes[i])];
      t[c.makes[i]] = make_window(t[w.base], w.window);
    }
    if (fg) run_fused(*fg, t.data());
    else call(s, st, t);
    for (std::uint32_t i = st.drop_begin; i < st.drop_end; ++i) t[c.drops[i]] = Tensor();
  }
}

}  // namespace

}  // namespace detail

using detail::CompiledData;
using detail::GraphData;
using detail::Layout;
using detail::Node;
using detail::NodeKind;
using detail::OpId;
using detail::Slot;
using detail::Step;
using detail::Value;

namespace {

/// Bytes of slot `slot`'s compact buffer.
std::int64_t slot_bytes(const CompiledData& c, int slot) {
  const Slot& s = c.slots[static_cast<std::size_t>(slot)];
  return detail::numel_of(s.shape) * static_cast<std::int64_t>(dtype_size(s.dtype));
}

/// The plan's most bytes of buffers live at once (CompiledGraph::peak_buffer_bytes).
std::int64_t peak_bytes(const CompiledData& c) {
  std::vector<char> moved(c.slots.size(), 0);  // an in-place step's operand: its buffer lives on as the result
  std::int64_t live = 0, peak = 0;
  for (const Step& st : c.steps) {
    if (st.fused >= 0) {
      for (int r : c.groups[static_cast<std::size_t>(st.fused)].results) live += slot_bytes(c, r);
    } else if (st.reuse >= 0) {
      moved[static_cast<std::size_t>(st.reuse)] = 1;
    } else {
      for (int k = 0; k < st.node->num_outs; ++k) live += slot_bytes(c, st.out + k);
    }
    peak = std::max(peak, live);
    for (std::uint32_t i = st.drop_begin; i < st.drop_end; ++i) {
      const int d = c.drops[i];
      if (c.slots[static_cast<std::size_t>(d)].kind == Slot::Kind::buffer && !moved[static_cast<std::size_t>(d)]) live -= slot_bytes(c, d);
    }
  }
  return peak;
}

/// Places the buffers of the arena (Note [Arena plan]): sets c.arena_at and c.arena_bytes.
void plan_arena(CompiledData& c, const std::vector<int>& last_use) {
  constexpr std::int64_t kAlign = 64;
  const std::size_t n = c.slots.size();
  c.arena_at.assign(n, -1);
  std::vector<int> root(n, -1), first(n, -1), last(n, -1);
  std::vector<char> excluded(n, 0);
  for (int s : c.outputs) excluded[static_cast<std::size_t>(s)] = 1;  // handed to the caller by run()
  const auto root_of = [&](int s) {
    while (root[static_cast<std::size_t>(s)] != s) s = root[static_cast<std::size_t>(s)];
    return s;
  };
  const auto define = [&](int s, int step, int chain) {
    root[static_cast<std::size_t>(s)] = chain;
    if (first[static_cast<std::size_t>(chain)] < 0) first[static_cast<std::size_t>(chain)] = step;
  };
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const Step& st = c.steps[i];
    const int step = static_cast<int>(i);
    if (st.fused >= 0) {
      for (int r : c.groups[static_cast<std::size_t>(st.fused)].results) define(r, step, r);
    } else if (st.node->kind == NodeKind::call) {  // the op allocates its results
      for (int k = 0; k < st.node->num_outs; ++k) {
        define(st.out + k, step, st.out + k);
        excluded[static_cast<std::size_t>(st.out + k)] = 1;
      }
    } else if (st.reuse >= 0) {
      define(st.out, step, root_of(st.reuse));
    } else {
      define(st.out, step, st.out);
    }
  }
  // Each chain: one interval and one size; excluded when any member is.
  for (std::size_t s = 0; s < n; ++s) {
    if (root[s] < 0) continue;
    const auto r = static_cast<std::size_t>(root_of(static_cast<int>(s)));
    last[r] = std::max({last[r], last_use[s], first[r]});
    if (excluded[s]) excluded[r] = 1;
  }
  struct Item {
    int slot;
    std::int64_t bytes, at;
  };
  std::vector<Item> items;
  for (std::size_t s = 0; s < n; ++s) {
    if (root[s] != static_cast<int>(s) || excluded[s]) continue;
    const std::int64_t bytes = slot_bytes(c, static_cast<int>(s));
    if (bytes > 0) items.push_back({static_cast<int>(s), (bytes + kAlign - 1) / kAlign * kAlign, -1});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.bytes > b.bytes; });
  std::vector<std::pair<std::int64_t, std::int64_t>> taken;  // [begin, end) of placed items that meet this one
  for (std::size_t k = 0; k < items.size(); ++k) {
    Item& it = items[k];
    const auto lo = first[static_cast<std::size_t>(it.slot)], hi = last[static_cast<std::size_t>(it.slot)];
    taken.clear();
    for (std::size_t j = 0; j < k; ++j) {
      const Item& o = items[j];
      if (first[static_cast<std::size_t>(o.slot)] <= hi && lo <= last[static_cast<std::size_t>(o.slot)]) taken.emplace_back(o.at, o.at + o.bytes);
    }
    std::sort(taken.begin(), taken.end());
    std::int64_t at = 0;
    for (const auto& [b, e] : taken) {
      if (b - at >= it.bytes) break;
      at = std::max(at, e);
    }
    it.at = at;
    c.arena_bytes = std::max(c.arena_bytes, at + it.bytes);
  }
  for (const Item& it : items) c.arena_at[static_cast<std::size_t>(it.slot)] = it.at;
  for (std::size_t s = 0; s < n; ++s)
    if (root[s] >= 0 && root[s] != static_cast<int>(s)) c.arena_at[s] = c.arena_at[static_cast<std::size_t>(root_of(static_cast<int>(s)))];
}

/// Which results run_into may let their producers write (Note [Results written in
/// place]): sets c.writes_output and c.constants.
void plan_direct_results(CompiledData& c) {
  const std::size_t n = c.slots.size();
  c.writes_output.assign(n, -1);
  for (std::size_t k = 0; k < n; ++k)
    if (c.slots[k].kind == Slot::Kind::constant) c.constants.push_back(static_cast<int>(k));
  std::vector<char> fresh(n, 0);
  for (const Step& st : c.steps) {
    if (st.fused >= 0) {
      const detail::FusedGroup& g = c.groups[static_cast<std::size_t>(st.fused)];
      if (g.temps > detail::kFusedStackTemps) return;
      for (int r : g.results) fresh[static_cast<std::size_t>(r)] = 1;
      continue;
    }
    const Node& nd = *st.node;
    const bool safe = nd.kind == NodeKind::unary || nd.kind == NodeKind::ternary ||
                      (nd.kind == NodeKind::binary && !tenferro::detail::checks_integer_operand(nd.op, nd.in[1]));
    if (!safe) return;
    if (st.reuse < 0) fresh[static_cast<std::size_t>(st.out)] = 1;
  }
  for (std::size_t k = 0; k < c.outputs.size(); ++k) {
    const auto r = static_cast<std::size_t>(c.outputs[k]);
    if (fresh[r] && c.writes_output[r] < 0) c.writes_output[r] = static_cast<int>(k);
  }
}

}  // namespace

CompiledGraph compile(const Graph& source, const CompileOptions& options) {
  auto c = std::make_shared<CompiledData>();
  c->graph = options.optimize ? optimize(source) : source;  // the steps point into its nodes
  const GraphData& g = c->graph.data();
  // Dead-code elimination: values the results depend on (an unused input gets no slot).
  const std::vector<char> live = needed_values(g, nullptr, /*keep_inputs=*/false);
  // Slots: one per live value, in value order.
  std::vector<int> slot_of(g.values.size(), -1);
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (!live[v]) continue;
    const Value& x = g.values[v];
    Slot sl;
    sl.dtype = x.dtype;
    switch (x.kind) {
      case Value::Kind::input: sl.kind = Slot::Kind::input; sl.input = x.input; sl.shape = x.shape; break;
      case Value::Kind::constant: sl.kind = Slot::Kind::constant; sl.constant = x.constant; sl.shape = x.shape; break;
      case Value::Kind::buffer: sl.kind = Slot::Kind::buffer; sl.shape = x.shape; break;
      case Value::Kind::view: sl.kind = Slot::Kind::window; sl.base = slot_of[static_cast<std::size_t>(x.base)]; sl.window = x.window; break;
    }
    slot_of[v] = static_cast<int>(c->slots.size());
    c->slots.push_back(std::move(sl));
  }
  // Steps, the windows each makes, and every slot's last use.
  std::vector<int> last_use(c->slots.size(), -1);
  std::vector<char> made(c->slots.size(), 0);
  std::vector<std::vector<int>> makes;
  for (const Node& n : g.nodes) {
    if (!live[static_cast<std::size_t>(n.out)]) continue;
    const int i = static_cast<int>(c->steps.size());
    Step st;
    st.node = &n;
    // Every copying node runs the conversion kernel (pad's and embed_diagonal's calls
    // were recorded as a fill and a copy: Note [Graph IR]).
    const OpId kernel_op = n.kind == NodeKind::convert ? OpId::copy : n.op;
    st.fn = (*tenferro::detail::kernel_table(DeviceKind::cpu))[static_cast<int>(kernel_op)].fn;
    st.out = slot_of[static_cast<std::size_t>(n.out)];
    st.init = n.init_from >= 0 ? slot_of[static_cast<std::size_t>(n.init_from)] : -1;
    std::vector<int> mk;
    auto use = [&](int slot) {
      last_use[static_cast<std::size_t>(slot)] = i;
      const Slot& sl = c->slots[static_cast<std::size_t>(slot)];
      if (sl.kind == Slot::Kind::window) {
        last_use[static_cast<std::size_t>(sl.base)] = i;
        if (!made[static_cast<std::size_t>(slot)]) {
          made[static_cast<std::size_t>(slot)] = 1;
          mk.push_back(slot);
        }
      }
    };
    for (int k = 0; k < n.num_ins; ++k)
      if (n.ins[k] >= 0) {
        st.ins[k] = slot_of[static_cast<std::size_t>(n.ins[k])];
        use(st.ins[k]);
      }
    if (st.init >= 0) use(st.init);
    // A call node's results are live together (needed_values) and have consecutive
    // ids, so they have consecutive slots.
    for (int k = 0; k < n.num_outs; ++k) use(st.out + k);
    const Value& ov = g.values[static_cast<std::size_t>(n.out)];
    if (n.out_view == detail::compact_layout(ov.shape, ov.dtype)) {
      st.target = st.out;
    } else {  // the kernel writes a window of its buffer: a slot of its own
      Slot w;
      w.kind = Slot::Kind::window;
      w.dtype = n.out_view.dtype;
      w.base = st.out;
      w.window = n.out_view;
      st.target = static_cast<int>(c->slots.size());
      c->slots.push_back(std::move(w));
      last_use.push_back(i);
      made.push_back(1);
      mk.push_back(st.target);
    }
    makes.push_back(std::move(mk));
    c->steps.push_back(st);
  }
  for (int v : g.outputs) {
    c->outputs.push_back(slot_of[static_cast<std::size_t>(v)]);
    int s = slot_of[static_cast<std::size_t>(v)];
    last_use[static_cast<std::size_t>(s)] = static_cast<int>(c->steps.size());  // kept to the end
    if (c->slots[static_cast<std::size_t>(s)].kind == Slot::Kind::window)  // made by make_result_windows when no step did
      last_use[static_cast<std::size_t>(c->slots[static_cast<std::size_t>(s)].base)] = static_cast<int>(c->steps.size());
  }
  if (options.fuse) fuse_steps(*c, makes, last_use);
  // In-place elementwise steps: an operand buffer whose last reader is this step, of the
  // result's shape and dtype, becomes the result's buffer (the kernels accept an output
  // laid out exactly as an input).
  for (std::size_t i = 0; i < c->steps.size(); ++i) {
    Step& st = c->steps[i];
    if (st.fused >= 0 || st.init >= 0 || st.target != st.out) continue;
    const NodeKind kind = st.node->kind;
    if (kind != NodeKind::unary && kind != NodeKind::binary && kind != NodeKind::ternary) continue;
    const Slot& o = c->slots[static_cast<std::size_t>(st.out)];
    for (int k = 0; k < st.node->num_ins && st.reuse < 0; ++k) {
      const int x = st.ins[k];
      if (x < 0 || last_use[static_cast<std::size_t>(x)] != static_cast<int>(i)) continue;
      const Slot& in = c->slots[static_cast<std::size_t>(x)];
      // Not when another operand reads a window of the same buffer (x − xᵀ): the kernel
      // would overwrite elements that window has yet to read.
      bool windowed = false;
      for (int j = 0; j < st.node->num_ins; ++j)
        if (st.ins[j] >= 0 && c->slots[static_cast<std::size_t>(st.ins[j])].kind == Slot::Kind::window &&
            c->slots[static_cast<std::size_t>(st.ins[j])].base == x)
          windowed = true;
      if (!windowed && in.kind == Slot::Kind::buffer && in.dtype == o.dtype && in.shape == o.shape) st.reuse = x;
    }
  }
  // Flatten the per-step lists.
  std::vector<std::vector<int>> drops(c->steps.size());
  for (std::size_t sl = 0; sl < c->slots.size(); ++sl) {
    const int u = last_use[sl];
    const Slot::Kind k = c->slots[sl].kind;
    if (u >= 0 && u < static_cast<int>(c->steps.size()) && k != Slot::Kind::constant) drops[static_cast<std::size_t>(u)].push_back(static_cast<int>(sl));
  }
  for (std::size_t i = 0; i < c->steps.size(); ++i) {
    Step& st = c->steps[i];
    st.make_begin = static_cast<std::uint32_t>(c->makes.size());
    c->makes.insert(c->makes.end(), makes[i].begin(), makes[i].end());
    st.make_end = static_cast<std::uint32_t>(c->makes.size());
    st.drop_begin = static_cast<std::uint32_t>(c->drops.size());
    c->drops.insert(c->drops.end(), drops[i].begin(), drops[i].end());
    st.drop_end = static_cast<std::uint32_t>(c->drops.size());
  }
  c->peak_bytes = peak_bytes(*c);
  plan_arena(*c, last_use);
  plan_direct_results(*c);
  return CompiledGraph(std::move(c));
}

namespace {

/// Windows the results read that no step made (a result that is a view of an input).
void make_result_windows(const CompiledData& c, detail::RunSlots& t) {
  for (int s : c.outputs) {
    const Slot& sl = c.slots[static_cast<std::size_t>(s)];
    if (sl.kind == Slot::Kind::window && !t[s].defined()) t[s] = detail::make_window(t[sl.base], sl.window);
  }
}

}  // namespace

std::vector<Tensor> CompiledGraph::run(Session& s, std::span<const Tensor> inputs) const {
  const CompiledData& c = *data_;
  detail::check_inputs(c, s, inputs, detail::kRun);
  detail::RunSlots t(c);
  detail::execute(c, s, inputs, t);
  make_result_windows(c, t);
  std::vector<Tensor> out;
  out.reserve(c.outputs.size());
  for (int k : c.outputs) {
    const Slot::Kind kind = c.slots[static_cast<std::size_t>(k)].kind;
    // A buffer is the run's own; an input, a constant or a window is copied.
    if (kind == Slot::Kind::buffer) {
      out.push_back(t[k]);
    } else {
      out.push_back(Tensor::empty(t[k].shape().span(), t[k].dtype()));
      copy_into(s, t[k], out.back());
    }
  }
  return out;
}

void CompiledGraph::run_into(Session& s, std::span<const Tensor> inputs, std::span<const Tensor> outputs) const {
  const CompiledData& c = *data_;
  detail::check_inputs(c, s, inputs, detail::kRunInto);
  const GraphData& g = c.graph.data();
  if (outputs.size() != g.outputs.size())
    throw ArgumentError(detail::kRunInto, "expected " + std::to_string(g.outputs.size()) + " outputs, got " + std::to_string(outputs.size()));
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const Value& v = g.values[static_cast<std::size_t>(g.outputs[k])];
    tenferro::detail::require_output(outputs[k], detail::kRunInto, v.dtype, v.shape.span(), DeviceKind::cpu);
    for (const Tensor& x : inputs) tenferro::detail::check_overlap(outputs[k], x, detail::kRunInto, false);
    for (std::size_t j = 0; j < k; ++j) tenferro::detail::check_overlap(outputs[k], outputs[j], detail::kRunInto, false);
  }
  // Outputs the producers may write directly (Note [Results written in place]).
  constexpr std::size_t kMaxDirect = 16;
  const Tensor* direct[kMaxDirect] = {};
  bool any_direct = false;
  for (std::size_t k = 0; k < outputs.size() && k < kMaxDirect; ++k) {
    const Tensor& o = outputs[k];
    if (c.writes_output[static_cast<std::size_t>(c.outputs[k])] != static_cast<int>(k) || !o.is_contiguous() || o.block()->external) continue;
    bool clear = true;
    for (int cs : c.constants) clear = clear && !tenferro::detail::memory_overlaps(o, c.slots[static_cast<std::size_t>(cs)].constant);
    if (!clear) continue;
    direct[k] = &o;
    any_direct = true;
  }
  detail::RunSlots t(c);
  detail::execute(c, s, inputs, t, any_direct ? direct : nullptr);
  make_result_windows(c, t);
  // The outputs were checked above (dtype, shape, writable, disjoint from the inputs and
  // from each other), so a result in the run's own memory is copied by the kernel
  // directly; an input, a constant or a window of one goes through copy_into, whose
  // overlap check covers an output that is (part of) a captured constant.
  const tenferro::detail::ConvertKernel copy = tenferro::detail::cpu_kernel_table()[static_cast<int>(OpId::copy)].fn.convert;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (k < kMaxDirect && direct[k]) continue;  // written by its producer
    const int r = c.outputs[k];
    const Slot& sl = c.slots[static_cast<std::size_t>(r)];
    const bool own = sl.kind == Slot::Kind::buffer || (sl.kind == Slot::Kind::window && c.slots[static_cast<std::size_t>(sl.base)].kind == Slot::Kind::buffer);
    if (own) copy(s, t[r], outputs[k]);
    else copy_into(s, t[r], outputs[k]);
  }
}

const Graph& CompiledGraph::graph() const noexcept { return data_->graph; }
int CompiledGraph::num_steps() const noexcept { return static_cast<int>(data_->steps.size()); }
std::int64_t CompiledGraph::peak_buffer_bytes() const noexcept { return data_->peak_bytes; }
std::int64_t CompiledGraph::arena_bytes() const noexcept { return data_->arena_bytes; }

}  // namespace tenferro::graph
