// trace(): the trace session, symbolic memory and the recorder (Note [Tracing] in
// tenferro/graph.hpp, Note [Graph IR] in graph_ir.hpp).
#include "runtime/trace.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "cpu/context.hpp"
#include "tenferro/graph.hpp"

namespace tenferro::detail {

namespace {

using graph::detail::Layout;
using graph::detail::Node;
using graph::detail::NodeKind;
using graph::detail::Value;

// Note [Symbolic memory]
// Front ends compare byte ranges (overlap checks) and form data pointers from offsets,
// so every symbolic block needs an address range of its own. The trace device's
// allocator hands out ranges of one reserved, inaccessible mapping (PROT_NONE: a kernel
// that read symbolic data would fault at once instead of reading garbage); the range
// restarts at every trace, and blocks are told apart by their headers, never by address.
class SymbolicAllocator final : public DeviceAllocator {
 public:
  StorageHeader* allocate(std::size_t bytes, Device device) override {
    std::lock_guard lock(mu_);
    if (!region_) reserve();
    const std::size_t size = (bytes + 63) / 64 * 64 + 64;
    if (size > size_ - next_) throw BackendError("trace", "symbolic address space exhausted (" + std::to_string(size_ >> 30) + " GiB per trace)");
    auto* h = new StorageHeader;
    h->capacity = bytes;
    h->bytes = bytes;
    h->base = region_ + next_;
    h->device = device;
    next_ += size;
    return h;
  }
  void release(StorageHeader* block) noexcept override { delete block; }
  /// A trace begins: the ranges restart when no other trace is running.
  void begin() noexcept {
    std::lock_guard lock(mu_);
    if (active_++ == 0) next_ = 0;
  }
  /// A trace ends.
  void end() noexcept {
    std::lock_guard lock(mu_);
    --active_;
  }

 private:
  void reserve() {
    for (std::size_t size = std::size_t{1} << 40; size >= (std::size_t{1} << 30); size >>= 2) {
      void* p = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p != MAP_FAILED) {
        region_ = static_cast<std::byte*>(p);
        size_ = size;
        return;
      }
    }
    throw BackendError("trace", "cannot reserve address space for symbolic tensors");
  }
  std::mutex mu_;
  std::byte* region_ = nullptr;
  std::size_t size_ = 0;
  std::size_t next_ = 0;
  int active_ = 0;  ///< traces running
};

SymbolicAllocator& symbolic_allocator() {
  static SymbolicAllocator a;
  static const bool registered = (set_device_allocator(DeviceKind::trace, &a), true);
  (void)registered;
  return a;
}

/// The session a traced function receives: the thread's record with a fresh epoch and
/// device `trace`.
class TraceSession final : public Session {
 public:
  TraceSession(SessionContext* c, std::uint64_t epoch) noexcept : Session(c, epoch, DeviceKind::trace) {}
  std::uint64_t epoch() const noexcept { return epoch_; }
};

/// Enters a trace on the calling thread's record and restores it on exit.
class TraceEntry {
 public:
  explicit TraceEntry(TraceRecorder& r)
      : c_(this_context()), epoch_(c_.epoch), active_(c_.active), tracer_(c_.tracer), state_(c_.state), session_(&c_, next_root_epoch()) {
    if (c_.tracer) throw SessionEntryError(SessionEntryKind::Reentered, "trace", "this thread is already tracing");
    symbolic_allocator().begin();
    c_.epoch = session_.epoch();
    c_.active = &session_;
    c_.tracer = &r;
    if (c_.state == CpuContext::State::idle) c_.state = CpuContext::State::trace;
  }
  ~TraceEntry() {
    c_.epoch = epoch_;
    c_.active = active_;
    c_.tracer = tracer_;
    c_.state = state_;
    symbolic_allocator().end();
  }
  TraceEntry(const TraceEntry&) = delete;
  TraceEntry& operator=(const TraceEntry&) = delete;
  Session& session() noexcept { return session_; }

 private:
  CpuContext& c_;
  std::uint64_t epoch_;
  Session* active_;
  TraceRecorder* tracer_;
  CpuContext::State state_;
  TraceSession session_;
};

std::string window_key(int v, const Layout& l) {
  std::string k;
  k.reserve(static_cast<std::size_t>(24 + 16 * l.extents.size()));
  auto put = [&](std::int64_t x) { k.append(reinterpret_cast<const char*>(&x), sizeof x); };
  put(v);
  put(static_cast<std::int64_t>(l.dtype));
  put(l.offset);
  for (int i = 0; i < l.extents.size(); ++i) {
    put(l.extents[i]);
    put(l.strides[i]);
  }
  return k;
}

/// t's window of its block's memory.
Layout window_of(const Tensor& t) {
  Layout l;
  l.dtype = t.dtype();
  const auto byte_off = static_cast<const std::byte*>(t.data()) - t.block()->base;
  l.offset = static_cast<std::int64_t>(byte_off) / static_cast<std::int64_t>(dtype_size(t.dtype()));
  for (int i = 0; i < t.rank(); ++i) {
    l.extents.push_back(t.extent(i));
    l.strides.push_back(t.stride(i));
  }
  return l;
}

}  // namespace

int TraceRecorder::operand(const Tensor& t, std::string_view op) {
  if (!t.defined()) throw ArgumentError(op, "tensor is undefined");
  const StorageHeader* b = t.block();
  const Layout l = window_of(t);
  if (b->device.kind != DeviceKind::trace) {  // a host tensor: a constant (Note [Tracing])
    const std::string key = window_key(-1, l) + std::string(reinterpret_cast<const char*>(&b), sizeof b);
    if (auto it = constants.find(key); it != constants.end()) return it->second;
    Value v;
    v.kind = Value::Kind::constant;
    v.dtype = t.dtype();
    v.shape = l.extents;
    v.constant = t;
    g.values.push_back(std::move(v));
    const int id = static_cast<int>(g.values.size()) - 1;
    constants.emplace(key, id);
    return id;
  }
  const auto it = current.find(b);
  if (it == current.end())
    throw ArgumentError(op, "reads a symbolic tensor of another trace, or one nothing has written (" + std::string(dtype_name(t.dtype())) + " " +
                                t.shape().to_string() + ")");
  const int home = it->second;
  const Value& hv = g.values[static_cast<std::size_t>(home)];
  if (l.dtype == hv.dtype && l.offset == 0 && graph::detail::is_compact_full(l) && l.extents.size() == hv.shape.size()) {
    bool same = true;
    for (int i = 0; i < l.extents.size(); ++i) same = same && l.extents[i] == hv.shape[i];
    if (same) return home;
  }
  const std::string key = window_key(home, l);
  if (auto w = windows.find(key); w != windows.end()) return w->second;
  Value v;
  v.kind = Value::Kind::view;
  v.dtype = l.dtype;
  v.shape = l.extents;
  v.base = home;
  v.window = l;
  g.values.push_back(std::move(v));
  const int id = static_cast<int>(g.values.size()) - 1;
  windows.emplace(key, id);
  return id;
}

Node& TraceRecorder::write(OpId op, NodeKind kind, const Tensor& out, bool reads_out) {
  const StorageHeader* b = out.block();
  if (b->device.kind != DeviceKind::trace)
    throw SessionEntryError(SessionEntryKind::IncompatibleContext, op_name(op), "writes into a host tensor while tracing (outputs must be symbolic)");
  const Layout l = window_of(out);
  const auto it = current.find(b);
  const int prev = it == current.end() ? -1 : it->second;
  const DType home_dtype = prev >= 0 ? g.values[static_cast<std::size_t>(prev)].dtype : out.dtype();
  const auto home_numel = static_cast<std::int64_t>(b->bytes / dtype_size(home_dtype));
  const bool full = l.dtype == home_dtype && graph::detail::numel_of(l.extents) == home_numel;
  Value v;
  v.kind = Value::Kind::buffer;
  v.dtype = home_dtype;
  if (full && l.offset == 0 && graph::detail::is_compact_full(l))
    v.shape = l.extents;
  else if (prev >= 0)
    v.shape = g.values[static_cast<std::size_t>(prev)].shape;
  else
    v.shape = Dims{home_numel};
  v.producer = static_cast<int>(g.nodes.size());
  g.values.push_back(std::move(v));
  const int id = static_cast<int>(g.values.size()) - 1;
  if (it == current.end()) held.push_back(out);
  current[b] = id;
  Node& n = g.nodes.emplace_back();
  n.op = op;
  n.kind = kind;
  n.out = id;
  n.segment = segment;
  n.out_view = l;
  n.init_from = (!full || reads_out) ? prev : -1;
  return n;
}

Node& TraceRecorder::write_call(OpId op, std::span<const Tensor> outs) {
  const int node = static_cast<int>(g.nodes.size());
  const int first = static_cast<int>(g.values.size());
  for (const Tensor& t : outs) {
    Value v;
    v.kind = Value::Kind::buffer;
    v.dtype = t.dtype();
    v.shape = t.shape().span();
    v.producer = node;
    g.values.push_back(std::move(v));
    current[t.block()] = static_cast<int>(g.values.size()) - 1;
    held.push_back(t);
  }
  Node& n = g.nodes.emplace_back();
  n.op = op;
  n.kind = NodeKind::call;
  n.out = first;
  n.segment = segment;
  n.num_outs = static_cast<int>(outs.size());
  n.out_view = graph::detail::compact_layout(g.values[static_cast<std::size_t>(first)].shape, g.values[static_cast<std::size_t>(first)].dtype);
  return n;
}

void TraceRecorder::add_input(const Tensor& t, int k) {
  Value v;
  v.kind = Value::Kind::input;
  v.dtype = t.dtype();
  v.shape = t.shape().span();
  v.input = k;
  g.values.push_back(std::move(v));
  const int id = static_cast<int>(g.values.size()) - 1;
  g.inputs.push_back(id);
  current[t.block()] = id;
  held.push_back(t);
}

}  // namespace tenferro::detail

namespace tenferro::graph {

std::vector<Tensor> checkpoint(Session& s, const TraceFn& fn, std::span<const Tensor> args) {
  if (s.device() != DeviceKind::trace) return fn(s, args);
  tenferro::detail::TraceRecorder& r = tenferro::detail::recorder(s);
  const tenferro::detail::SegmentScope scope(r);
  r.segment = ++r.segments;
  return fn(s, args);
}

Graph trace(const TraceFn& fn, std::span<const ValueSpec> inputs) {
  for (const ValueSpec& spec : inputs)
    for (std::int64_t e : spec.shape.span())
      if (e < 0) throw ArgumentError("trace", "negative extent in input spec " + spec.shape.to_string());
  tenferro::detail::TraceRecorder rec;
  std::vector<Tensor> results;
  {
    tenferro::detail::TraceEntry entry(rec);
    std::vector<Tensor> args;
    args.reserve(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      args.push_back(Tensor::empty(inputs[k].shape.span(), inputs[k].dtype, Device{DeviceKind::trace, 0}));
      rec.add_input(args.back(), static_cast<int>(k));
    }
    results = fn(entry.session(), std::span<const Tensor>(args));
    for (const Tensor& r : results) rec.g.outputs.push_back(rec.result(r));
  }
  return Graph(std::make_shared<const detail::GraphData>(std::move(rec.g)));
}

}  // namespace tenferro::graph
