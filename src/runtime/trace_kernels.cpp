// The trace device's kernel table: every kernel records its call as a graph node
// (Note [Tracing] in tenferro/graph.hpp, Note [Graph IR] in graph_ir.hpp).
#include <complex>
#include <initializer_list>
#include <cstring>
#include <string>
#include <utility>

#include "ops/contraction.hpp"
#include "ops/fft.hpp"
#include "ops/indexing.hpp"
#include "ops/kernel_table.hpp"
#include "runtime/trace.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/ops.hpp"

namespace tenferro::detail {

namespace {

using graph::detail::Node;
using graph::detail::NodeKind;

template <OpId op, int N> void trace_ew(const Session& s, const EwCall<N>& c) {
  TraceRecorder& r = recorder(s);
  int ins[N];
  for (int k = 0; k < N; ++k) ins[k] = c.tensor[k] ? r.operand(*c.tensor[k], op_name(op)) : -1;
  constexpr NodeKind kind = N == 1 ? NodeKind::unary : N == 2 ? NodeKind::binary : NodeKind::ternary;
  Node& n = r.write(op, kind, *c.out);
  n.num_ins = N;
  for (int k = 0; k < N; ++k) {
    n.ins[k] = ins[k];
    if (!c.tensor[k]) n.scalars[k] = *c.scalar[k];
    n.in[k] = c.in[k];
  }
  n.cmp = c.cmp;
  n.contiguous = c.contiguous;
}

/// A node of `kind` reading the tensors `ins` (operands in order) and writing out.
Node& record_node(const Session& s, OpId op, NodeKind kind, std::initializer_list<const Tensor*> ins, const Tensor& out, bool reads_out = false) {
  TraceRecorder& r = recorder(s);
  int ids[3] = {-1, -1, -1};
  int k = 0;
  for (const Tensor* t : ins) ids[k++] = r.operand(*t, op_name(op));  // operands first: the write may replace what they read
  Node& n = r.write(op, kind, out, reads_out);
  for (int i = 0; i < k; ++i) n.ins[i] = ids[i];
  n.num_ins = k;
  return n;
}
/// A node of `kind` reading x and writing out (the one-operand kernel signatures).
template <OpId op> Node& record_one(const Session& s, NodeKind kind, const Tensor& x, const Tensor& out) { return record_node(s, op, kind, {&x}, out); }

template <OpId op> void trace_reduce(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  record_one<op>(s, NodeKind::reduce, x, out).mask = mask;
}
template <OpId op> void trace_convert(Session& s, const Tensor& x, const Tensor& out) { record_one<op>(s, NodeKind::convert, x, out); }
template <OpId op> void trace_axis(const Session& s, const Tensor& x, const Tensor& out, int axis) {
  record_one<op>(s, NodeKind::along_axis, x, out).axis = axis;
}

template <OpId op> void trace_triangle(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset) {
  record_one<op>(s, NodeKind::triangle, x, out).offset = offset;
}

template <OpId op> void trace_fft(Session& s, std::string_view, const Tensor& x, const FftRequest& req, const Tensor& out) {
  record_one<op>(s, NodeKind::fft, x, out).fft = std::make_shared<const FftRequest>(req);
}

/// take_along_axis's and index_select's kernel: the indices' range check runs when the
/// graph runs (compile.cpp), as the front end skips it while tracing.
template <OpId op> void trace_take(Session& s, const Tensor& x, const Tensor& indices, const Tensor& out, int axis) {
  record_node(s, op, NodeKind::take, {&x, &indices}, out).axis = axis;
}

/// dynamic_slice's kernel (ins: x, starts) and dynamic_update_slice's (ins: x, update,
/// starts): the starts are data the kernel clamps, so nothing is checked.
template <OpId op> void trace_window(Session& s, const Tensor& x, const Tensor& starts, const Tensor& out) {
  record_node(s, op, NodeKind::window, {&x, &starts}, out);
}
template <OpId op> void trace_update_window(Session& s, const Tensor& x, const Tensor& update, const Tensor& starts, const Tensor& out) {
  record_node(s, op, NodeKind::update_window, {&x, &update, &starts}, out);
}

void trace_vdot(Session& s, const Tensor& a, const Tensor& b, const Tensor& out) { record_node(s, OpId::vdot, NodeKind::vdot, {&a, &b}, out); }
/// axpby updates y in place: a node reading x and y's previous value (init_from).
void trace_axpby(Session& s, const Scalar& alpha, const Tensor& x, const Scalar& beta, const Tensor& y) {
  Node& n = record_node(s, OpId::axpby, NodeKind::axpby, {&x}, y, /*reads_out=*/true);
  n.scalars[0] = alpha;
  n.scalars[1] = beta;
}
void trace_iota(Session& s, const Tensor& out, int d) { recorder(s).write(OpId::iota, NodeKind::iota, out).axis = d; }

std::string dims_text(std::initializer_list<std::pair<const char*, const Dims*>> fields, std::int64_t index_vector_dim) {
  std::string t;
  for (const auto& [name, d] : fields) t += std::string(t.empty() ? "" : ", ") + name + " = " + d->to_string();
  return t + ", index_vector_dim = " + std::to_string(index_vector_dim);
}

void trace_gather(Session& s, const IndexMap& m, const Tensor& operand, const Tensor& indices, const Dims& slice_sizes, const Tensor& out) {
  auto p = std::make_shared<graph::detail::IndexParams>();
  p->map = m;
  p->gather = *m.gather_dims;
  p->map.gather_dims = nullptr;
  p->slice_sizes = slice_sizes;
  const GatherDims& d = p->gather;
  p->text = dims_text({{"offset_dims", &d.offset_dims}, {"collapsed_slice_dims", &d.collapsed_slice_dims}, {"start_index_map", &d.start_index_map},
                       {"operand_batching_dims", &d.operand_batching_dims}, {"start_indices_batching_dims", &d.start_indices_batching_dims},
                       {"slice_sizes", &p->slice_sizes}},
                      d.index_vector_dim);
  record_node(s, OpId::gather, NodeKind::gather, {&operand, &indices}, out).index = std::move(p);
}

void trace_scatter(Session& s, const IndexMap& m, const Tensor& operand, const Tensor& indices, const Tensor& updates, ScatterCombiner combiner,
                   const Tensor& out) {
  auto p = std::make_shared<graph::detail::IndexParams>();
  p->map = m;
  p->scatter = *m.scatter_dims;
  p->map.scatter_dims = nullptr;
  p->combiner = combiner;
  const ScatterDims& d = p->scatter;
  const char* combiners[] = {"replace", "add", "mul", "min", "max"};
  p->text = std::string(combiners[static_cast<int>(combiner)]) + ", " +
            dims_text({{"update_window_dims", &d.update_window_dims}, {"inserted_window_dims", &d.inserted_window_dims},
                       {"scatter_dims_to_operand_dims", &d.scatter_dims_to_operand_dims}, {"input_batching_dims", &d.input_batching_dims},
                       {"scatter_indices_batching_dims", &d.scatter_indices_batching_dims}},
                      d.index_vector_dim);
  record_node(s, OpId::scatter, NodeKind::scatter, {&operand, &indices, &updates}, out).index = std::move(p);
}

/// pad's and embed_diagonal's kernel: out filled with the value whose bytes are `fill`
/// (a node copying a host scalar, broadcast), then x copied into the window dst of out.
template <OpId op> void trace_place(Session& s, const Tensor& out, const unsigned char* fill, const Tensor& x, const Tensor& dst) {
  TraceRecorder& r = recorder(s);
  const int in = r.operand(x, op_name(op));
  if (fill) {
    Tensor value = Tensor::empty(std::span<const std::int64_t>(), out.dtype());
    std::memcpy(value.mutable_data(), fill, dtype_size(out.dtype()));
    const int v = r.operand(value, op_name(op));
    Node& n = r.write(op, NodeKind::convert, out);
    n.ins[0] = v;
    n.num_ins = 1;
  }
  Node& n = r.write(op, NodeKind::convert, dst);
  n.ins[0] = in;
  n.num_ins = 1;
}

void trace_dot(Session& s, const DotCall& c) {
  TraceRecorder& r = recorder(s);
  const int lhs = r.operand(*c.lhs, c.op);
  const int rhs = r.operand(*c.rhs, c.op);
  DotSignature sig;
  if (c.sig)
    sig = *c.sig;
  else
    matrix_form_signature(*c.matrix, sig);
  const bool reads_out = c.beta->to<std::complex<double>>() != std::complex<double>(0.0);
  auto p = std::make_shared<graph::detail::DotParams>();
  p->sig = sig;
  // The axis groups as DotDims (normalized), for the text form and for replay.
  for (int i = 0; i < sig.nk; ++i) {
    p->dims.lhs_contracting.push_back(sig.lhs_contracting[i]);
    p->dims.rhs_contracting.push_back(sig.rhs_contracting[i]);
  }
  for (int i = 0; i < sig.nb; ++i) {
    p->dims.lhs_batch.push_back(sig.lhs_batch[i]);
    p->dims.rhs_batch.push_back(sig.rhs_batch[i]);
  }
  p->dims.conj_lhs = sig.conj_lhs;
  p->dims.conj_rhs = sig.conj_rhs;
  p->alpha = *c.alpha;
  p->beta = *c.beta;
  Node& n = r.write(OpId::dot_general, NodeKind::dot, *c.out, reads_out);
  n.ins[0] = lhs;
  n.ins[1] = rhs;
  n.num_ins = 2;
  n.dot = std::move(p);
}

/// grouped_gemm's kernel: one dot_general node per item, c = alpha·op(a)·op(b) + beta·c
/// (an update of c: a new value from its previous one when beta != 0), so each item
/// differentiates by the contraction's rules; an operand of another dtype than c's
/// (the promoted one) is cast first, as the CPU kernel converts it.
void trace_grouped_gemm(Session& s, std::span<const GemmItem> items) {
  for (const GemmItem& it : items) {
    const DType d = it.c->dtype();
    const Tensor a = it.a->dtype() == d ? *it.a : cast(s, *it.a, d);
    const Tensor b = it.b->dtype() == d ? *it.b : cast(s, *it.b, d);
    GemmItem x = it;
    x.a = &a;
    x.b = &b;
    DotSignature sig;
    matrix_form_signature(gemm_item_form(x), sig);
    const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = sig.conj_lhs, .conj_rhs = sig.conj_rhs};
    trace_dot(s, DotCall{"grouped_gemm", &a, &b, it.c, &sig, &dims, &it.alpha, &it.beta, nullptr});
  }
}

constexpr bool copies_through_convert(OpId op) noexcept {
  switch (op) {
    case OpId::convert: case OpId::cast: case OpId::copy: case OpId::reshape: case OpId::transpose: case OpId::broadcast_in_dim:
    case OpId::extract_diagonal: case OpId::reverse: case OpId::concatenate: case OpId::stack: case OpId::slice:
      return true;
    default:
      return false;
  }
}

/// The trace entry of op I: a recording kernel over the dtypes the CPU kernel handles
/// (so tracing refuses what running would), or a stub.
template <int I> KernelEntry entry_for() {
  constexpr OpId op = static_cast<OpId>(I);
  constexpr OpFamily family = op_info(op).family;
  KernelEntry e{KernelEntry::Kind::kernel, kCpuKernelTable[I].dtypes, {}};
  if constexpr (family == OpFamily::elementwise || family == OpFamily::analytic) {
    constexpr int n = op_info(op).inputs;
    if constexpr (n == 1) e.fn.unary = &trace_ew<op, 1>;
    else if constexpr (n == 2) e.fn.binary = &trace_ew<op, 2>;
    else e.fn.ternary = &trace_ew<op, 3>;
  } else if constexpr (family == OpFamily::reduction || op == OpId::norm_squared) {
    e.fn.reduce = &trace_reduce<op>;
  } else if constexpr (copies_through_convert(op)) {
    e.fn.convert = &trace_convert<op>;
  } else if constexpr (family == OpFamily::along_axis) {
    e.fn.along_axis = &trace_axis<op>;
  } else if constexpr (op == OpId::pad || op == OpId::embed_diagonal) {
    e.fn.place = &trace_place<op>;
  } else if constexpr (op == OpId::tril || op == OpId::triu) {
    e.fn.triangle = &trace_triangle<op>;
  } else if constexpr (op == OpId::take_along_axis || op == OpId::index_select) {
    e.fn.take = &trace_take<op>;
  } else if constexpr (op == OpId::gather) {
    e.fn.gather = &trace_gather;
  } else if constexpr (op == OpId::scatter) {
    e.fn.scatter = &trace_scatter;
  } else if constexpr (op == OpId::vdot) {
    e.fn.vdot = &trace_vdot;
  } else if constexpr (op == OpId::axpby) {
    e.fn.axpby = &trace_axpby;
  } else if constexpr (op == OpId::iota) {
    e.fn.iota = &trace_iota;
  } else if constexpr (op == OpId::dynamic_slice) {
    e.fn.window = &trace_window<op>;
  } else if constexpr (op == OpId::dynamic_update_slice) {
    e.fn.update_window = &trace_update_window<op>;
  } else if constexpr (family == OpFamily::fft) {
    e.fn.fft = &trace_fft<op>;
  } else if constexpr (op == OpId::dot_general) {
    e.fn.dot = &trace_dot;
  } else if constexpr (op == OpId::grouped_gemm) {
    e.fn.grouped_gemm = &trace_grouped_gemm;
  } else if constexpr (op == OpId::einsum) {
    // capability only: einsum runs on the contraction and elementwise ops.
  } else if (!trace_call_kernel(op, e.fn)) {
    e = stub_entry();
  }
  return e;
}

template <std::size_t... I> KernelTable make_trace_table(std::index_sequence<I...>) { return KernelTable{entry_for<static_cast<int>(I)>()...}; }

}  // namespace

const KernelTable* trace_kernel_table() noexcept {
  static const KernelTable t = make_trace_table(std::make_index_sequence<static_cast<std::size_t>(kNumOps)>());
  return &t;
}

}  // namespace tenferro::detail
