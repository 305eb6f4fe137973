// Elementwise fusion: chunk functions and the fused loop.
//
// Note [Elementwise fusion]
// compile() merges every run of consecutive elementwise and analytic steps that share
// one result shape and one inexact dtype, read tensor operands (any layout: broadcast,
// transposed, reversed or sliced windows are gathered per chunk into a chunk buffer;
// compact ones are read in place) or scalars of that dtype, and keep the dtype (no
// cast, compare, select, real/imag/abs/angle) into one fused step. The fused step walks the elements in chunks of kChunk: for each
// chunk it applies the ops in order, each through its chunk function (the op's functor,
// OpFn<op>, over a line of the chunk), reading external operands straight from their
// buffers and writing only the values something outside the group reads (or a result of
// the graph) to theirs; the values only the group reads live in chunk buffers that stay
// in L1 and are never allocated as tensors. So a fused group reads each input once,
// writes each needed output once, and costs one step of run overhead instead of one per
// op.
#include "runtime/fuse.hpp"

#include <algorithm>
#include <cstring>

#include <array>
#include <complex>
#include <utility>

#include "cpu/elementwise_functors.hpp"
#include "runtime/compiled.hpp"

namespace tenferro::graph::detail {

namespace {

using tenferro::detail::OpFamily;
using tenferro::detail::OpFn;
using tenferro::detail::OpId;
using tenferro::detail::op_info;

template <OpId op, class T, int N>
void chunk(const void* a, std::int64_t sa, const void* b, std::int64_t sb, const void* c, std::int64_t sc, void* out, std::int64_t n) {
  using F = typename OpFn<op>::type;
  const F f{};
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  const T* pc = static_cast<const T*>(c);
  T* po = static_cast<T*>(out);
  // Strides are 1 (a chunk buffer or compact operand) or 0 (a scalar): the unit-stride
  // loops are the ones the compiler vectorizes.
  if constexpr (N == 1) {
    if (sa == 1) {
      if constexpr (tenferro::detail::HasLine<F, T>) F::line(pa, po, n);  // the vector exp and tanh
      else for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i * sa]);
    }
  } else if constexpr (N == 2) {
    if (sa == 1 && sb == 1) {
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (sa == 1 && sb == 0) {
      const T y = *pb;
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i], y);
    } else if (sa == 0 && sb == 1) {
      const T x = *pa;
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(x, pb[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i * sa], pb[i * sb]);
    }
  } else {
    if (sa == 1 && sb == 1 && sc == 1) {
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i], pc[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i * sa], pb[i * sb], pc[i * sc]);
    }
  }
}

/// Ops whose result has their operands' dtype and whose operands all share it.
constexpr bool keeps_dtype(OpId op) noexcept {
  switch (op) {
    case OpId::compare: case OpId::select: case OpId::real: case OpId::imag: case OpId::abs: case OpId::angle: return false;
    default: return op_info(op).family == OpFamily::elementwise || op_info(op).family == OpFamily::analytic;
  }
}

template <OpId op, class T> constexpr ChunkFn entry() noexcept {
  if constexpr (!keeps_dtype(op)) {
    return nullptr;
  } else if constexpr (!in_set(dtype_of<T>, op_info(op).dtypes)) {
    return nullptr;
  } else {
    return &chunk<op, T, op_info(op).inputs>;
  }
}

using Row = std::array<ChunkFn, 4>;  // f32, f64, c64, c128

template <std::size_t I> constexpr Row row() noexcept {
  constexpr OpId op = static_cast<OpId>(I);
  return {entry<op, float>(), entry<op, double>(), entry<op, std::complex<float>>(), entry<op, std::complex<double>>()};
}

template <std::size_t... I> constexpr std::array<Row, sizeof...(I)> table(std::index_sequence<I...>) noexcept { return {row<I>()...}; }

constexpr auto kChunkFns = table(std::make_index_sequence<static_cast<std::size_t>(tenferro::detail::kNumOps)>());

}  // namespace

ChunkFn chunk_fn(OpId op, DType d) noexcept {
  int col = -1;
  switch (d) {
    case DType::f32: col = 0; break;
    case DType::f64: col = 1; break;
    case DType::c64: col = 2; break;
    case DType::c128: col = 3; break;
    default: return nullptr;
  }
  return kChunkFns[static_cast<std::size_t>(op)][static_cast<std::size_t>(col)];
}

namespace {

constexpr std::int64_t kChunk = 256;

/// Whether a run fills `s` with a tensor compact with extents `shape` (any offset).
bool compact_with(const Slot& s, const Dims& shape) {
  switch (s.kind) {
    case Slot::Kind::input:
    case Slot::Kind::buffer: return s.shape == shape;
    case Slot::Kind::constant: return s.shape == shape && s.constant.is_contiguous();
    case Slot::Kind::window: {
      Layout l = s.window;
      l.offset = 0;
      return l.extents == shape && is_compact_full(l);
    }
  }
  return false;
}

/// The element strides of slot s's tensor along the axes of a result of `shape` that it
/// broadcasts to (leading axes aligned, as the elementwise ops broadcast).
Dims broadcast_strides(const Slot& s, const Dims& shape) {
  Dims ext, st;
  switch (s.kind) {
    case Slot::Kind::window: ext = s.window.extents; st = s.window.strides; break;
    case Slot::Kind::constant: ext = s.constant.shape().span(); st = s.constant.strides(); break;
    default: {
      ext = s.shape;
      const Layout l = compact_layout(s.shape, s.dtype);
      st = l.strides;
    }
  }
  Dims out(shape.size(), 0);
  for (int i = 0; i < ext.size() && i < shape.size(); ++i) out[i] = ext[i] == 1 ? 0 : st[i];
  return out;
}

/// Whether a step can join a fused group; `d` receives its dtype.
bool fusable(const CompiledData& c, const Step& st, DType& d) {
  const Node& n = *st.node;
  if (st.fused >= 0 || (n.kind != NodeKind::unary && n.kind != NodeKind::binary && n.kind != NodeKind::ternary)) return false;
  if (st.init >= 0 || st.target != st.out) return false;
  const Slot& o = c.slots[static_cast<std::size_t>(st.out)];
  d = o.dtype;
  if (!chunk_fn(n.op, d)) return false;
  for (int k = 0; k < n.num_ins; ++k) {
    if (n.in[k] != d) return false;
    if (n.ins[k] < 0) continue;
    // Any layout: an operand not compact with the result is gathered chunk by chunk.
    if (c.slots[static_cast<std::size_t>(st.ins[k])].dtype != d) return false;
  }
  return true;
}

/// Appends scalar v converted to d; returns its index.
int add_scalar(FusedGroup& g, const Scalar& v) {
  const std::size_t size = dtype_size(g.dtype);
  const std::size_t at = g.scalars.size();
  g.scalars.resize(at + size);
  visit_dtype<DTypeSet::inexact>("graph.fuse", g.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T x = v.to<T>();
    std::memcpy(g.scalars.data() + at, &x, size);
  });
  return static_cast<int>(at / size);
}

}  // namespace

void fuse_steps(CompiledData& c, std::vector<std::vector<int>>& makes, std::vector<int>& last_use) {
  const int n = static_cast<int>(c.steps.size());
  std::vector<Step> steps;
  std::vector<std::vector<int>> new_makes;
  std::vector<int> index(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> group_of(c.slots.size(), -1);  // the first step of the group that computes a slot
  for (int b = 0; b < n;) {
    DType d{}, d2{};
    int e = b + 1;
    if (fusable(c, c.steps[static_cast<std::size_t>(b)], d)) {
      const Dims& shape = c.slots[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(b)].out)].shape;
      // A window of a value the group computes cannot be read in it: the group's values
      // exist a chunk at a time (or never, as chunk buffers).
      group_of[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(b)].out)] = b;
      const auto reads_own_window = [&](const Step& st) {
        for (int k = 0; k < st.node->num_ins; ++k) {
          if (st.ins[k] < 0) continue;
          const Slot& x = c.slots[static_cast<std::size_t>(st.ins[k])];
          if (x.kind == Slot::Kind::window && group_of[static_cast<std::size_t>(x.base)] == b) return true;
        }
        return false;
      };
      while (e < n && fusable(c, c.steps[static_cast<std::size_t>(e)], d2) && d2 == d &&
             c.slots[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(e)].out)].shape == shape &&
             !reads_own_window(c.steps[static_cast<std::size_t>(e)])) {
        group_of[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(e)].out)] = b;
        ++e;
      }
    }
    if (e - b < 2) {  // nothing to merge
      index[static_cast<std::size_t>(b)] = static_cast<int>(steps.size());
      steps.push_back(c.steps[static_cast<std::size_t>(b)]);
      new_makes.push_back(std::move(makes[static_cast<std::size_t>(b)]));
      b = e;
      continue;
    }
    FusedGroup g;
    g.dtype = d;
    g.numel = numel_of(c.slots[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(b)].out)].shape);
    // Values only the group reads live in chunk buffers, reused once their last reader
    // in the group has run (a linear scan over the group's steps).
    std::vector<int> temp_of(c.slots.size(), -1);
    std::vector<int> free_temps;
    std::vector<std::vector<int>> frees(static_cast<std::size_t>(e - b));
    for (int k = b; k < e; ++k) {
      for (int t : frees[static_cast<std::size_t>(k - b)]) free_temps.push_back(t);
      const Step& st = c.steps[static_cast<std::size_t>(k)];
      for (int i = 0; i < st.node->num_ins; ++i) {  // operands whose last reader is this step free their buffer after it
        const int x = st.ins[i];
        if (x >= 0 && temp_of[static_cast<std::size_t>(x)] >= 0 && last_use[static_cast<std::size_t>(x)] == k && k + 1 < e)
          frees[static_cast<std::size_t>(k + 1 - b)].push_back(temp_of[static_cast<std::size_t>(x)]);
      }
      const int o = st.out;
      if (last_use[static_cast<std::size_t>(o)] >= e) {
        g.results.push_back(o);
        continue;
      }
      if (free_temps.empty()) {
        temp_of[static_cast<std::size_t>(o)] = g.temps++;
      } else {
        temp_of[static_cast<std::size_t>(o)] = free_temps.back();
        free_temps.pop_back();
      }
    }
    g.shape = c.slots[static_cast<std::size_t>(c.steps[static_cast<std::size_t>(b)].out)].shape;
    auto ref_of = [&](int slot) {
      if (temp_of[static_cast<std::size_t>(slot)] >= 0) return FusedRef{FusedRef::Kind::temp, temp_of[static_cast<std::size_t>(slot)]};
      const Slot& x = c.slots[static_cast<std::size_t>(slot)];
      if (compact_with(x, g.shape)) return FusedRef{FusedRef::Kind::slot, slot};
      for (const FusedGather& ga : g.gathers)  // an external operand not compact with the result: gathered once per chunk
        if (ga.slot == slot) return FusedRef{FusedRef::Kind::temp, ga.temp};
      g.gathers.push_back({slot, g.temps++, broadcast_strides(x, g.shape)});
      return FusedRef{FusedRef::Kind::temp, g.gathers.back().temp};
    };
    Step merged;
    merged.fused = static_cast<int>(c.groups.size());
    std::vector<int> mk;
    for (int k = b; k < e; ++k) {
      const Step& st = c.steps[static_cast<std::size_t>(k)];
      const Node& nd = *st.node;
      FusedOp op;
      op.fn = chunk_fn(nd.op, d);
      for (int i = 0; i < nd.num_ins; ++i)
        op.in[i] = nd.ins[i] < 0 ? FusedRef{FusedRef::Kind::scalar, add_scalar(g, nd.scalars[i])} : ref_of(st.ins[i]);
      op.out = ref_of(st.out);
      g.ops.push_back(op);
      mk.insert(mk.end(), makes[static_cast<std::size_t>(k)].begin(), makes[static_cast<std::size_t>(k)].end());
      index[static_cast<std::size_t>(k)] = static_cast<int>(steps.size());
    }
    c.groups.push_back(std::move(g));
    steps.push_back(merged);
    new_makes.push_back(std::move(mk));
    b = e;
  }
  index[static_cast<std::size_t>(n)] = static_cast<int>(steps.size());
  for (int& u : last_use)
    if (u >= 0) u = index[static_cast<std::size_t>(u)];
  c.steps = std::move(steps);
  makes = std::move(new_makes);
}

namespace {

/// Elements [start, start + len) (column-major over `shape`) of the strided operand at
/// `base` into `out`, contiguously.
template <class E>
void gather_as(const Dims& shape, const Dims& strides, const E* base, std::int64_t start, std::int64_t len, E* out) {
  const int r = shape.size();
  std::int64_t idx[kMaxRank] = {}, off = 0, rest = start;
  for (int i = 0; i < r; ++i) {
    idx[i] = shape[i] > 0 ? rest % shape[i] : 0;
    rest = shape[i] > 0 ? rest / shape[i] : 0;
    off += idx[i] * strides[i];
  }
  const std::int64_t n0 = r > 0 ? shape[0] : 1, s0 = r > 0 ? strides[0] : 0;
  for (std::int64_t k = 0; k < len;) {
    // A run along axis 0, then carry into the next axes.
    const std::int64_t run = std::min(len - k, n0 - idx[0]);
    for (std::int64_t j = 0; j < run; ++j) out[k + j] = base[off + j * s0];
    k += run;
    off += run * s0;
    idx[0] += run;
    for (int i = 0; i < r && idx[i] == shape[i] && k < len; ++i) {
      off -= idx[i] * strides[i];
      idx[i] = 0;
      if (i + 1 < r) {
        ++idx[i + 1];
        off += strides[i + 1];
      }
    }
  }
}

struct Bytes16 {
  std::uint64_t lo, hi;
};

void gather(const Dims& shape, const Dims& strides, const void* base, std::int64_t esize, std::int64_t start, std::int64_t len, unsigned char* out) {
  switch (esize) {
    case 4: gather_as(shape, strides, static_cast<const std::uint32_t*>(base), start, len, reinterpret_cast<std::uint32_t*>(out)); break;
    case 8: gather_as(shape, strides, static_cast<const std::uint64_t*>(base), start, len, reinterpret_cast<std::uint64_t*>(out)); break;
    default: gather_as(shape, strides, static_cast<const Bytes16*>(base), start, len, reinterpret_cast<Bytes16*>(out)); break;
  }
}

}  // namespace

void run_fused(const FusedGroup& g, const Tensor* slots) {
  const auto esize = static_cast<std::int64_t>(dtype_size(g.dtype));
  // Chunk buffers on the stack (32 KiB): at most kFusedStackTemps live at once, else on
  // the heap (a group that wide allocates once per run).
  alignas(64) unsigned char local[kFusedStackTemps * kChunk * 16];
  std::vector<unsigned char> heap;
  unsigned char* temp = local;
  if (g.temps > kFusedStackTemps) {
    heap.resize(static_cast<std::size_t>(g.temps) * kChunk * static_cast<std::size_t>(esize));
    temp = heap.data();
  }
  for (std::int64_t start = 0; start < g.numel; start += kChunk) {
    const std::int64_t len = std::min(kChunk, g.numel - start);
    for (const FusedGather& ga : g.gathers)
      gather(g.shape, ga.strides, slots[ga.slot].data(), esize, start, len, temp + static_cast<std::int64_t>(ga.temp) * kChunk * esize);
    auto at = [&](const FusedRef& r, std::int64_t& stride) -> unsigned char* {
      stride = 1;
      switch (r.kind) {
        case FusedRef::Kind::slot:
          return static_cast<unsigned char*>(const_cast<void*>(slots[r.index].data())) + start * esize;
        case FusedRef::Kind::scalar: stride = 0; return const_cast<unsigned char*>(g.scalars.data()) + r.index * esize;
        case FusedRef::Kind::temp: return temp + static_cast<std::int64_t>(r.index) * kChunk * esize;
        case FusedRef::Kind::none: break;
      }
      stride = 0;
      return nullptr;
    };
    for (const FusedOp& op : g.ops) {
      std::int64_t sa, sb, sc, so;
      const unsigned char* a = at(op.in[0], sa);
      const unsigned char* b = at(op.in[1], sb);
      const unsigned char* c = at(op.in[2], sc);
      op.fn(a, sa, b, sb, c, sc, at(op.out, so), len);
    }
  }
}

}  // namespace tenferro::graph::detail
