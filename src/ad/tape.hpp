#pragma once
// The eager tape: nodes, references, rule tables and the recording helper shared by the
// rule files (rules_*.cpp). See Note [Eager AD runtime] in tenferro/ad.hpp.
#include "core/internal_check.hpp"

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ops/catalog.hpp"
#include "tenferro/ad.hpp"
#include "tenferro/op_attrs.hpp"

namespace tenferro::ad::detail {

using tenferro::detail::OpId;

/// The most outputs one primitive has on the tape (svd: U, S, Vh; lstsq: X, rank, S).
inline constexpr int kMaxOutputs = 3;

/// Where an input's cotangent goes: nowhere (constant), a leaf slot or one output of a
/// tape node.
struct Ref {
  std::int16_t kind = 0;  ///< 0 none, 1 leaf, 2 node
  std::int16_t slot = 0;  ///< output of the node (Note [Multi-output nodes])
  std::int32_t index = 0;
};
/// A reference to output `slot` of tape node `index`.
inline Ref node_ref(std::size_t index, int slot = 0) noexcept {
  return {2, static_cast<std::int16_t>(slot), static_cast<std::int32_t>(index)};
}
/// A reference to leaf `index`.
inline Ref leaf_ref(std::size_t index) noexcept { return {1, 0, static_cast<std::int32_t>(index)}; }

/// Saved values of ops with an index tensor or a variadic input list.
struct NodeExtra {
  Tensor index;            ///< index tensor of gather/scatter/dynamic slices
  std::vector<Ref> refs;   ///< variadic inputs (concatenate, stack, einsum)
  std::vector<Tensor> xs;  ///< variadic input values

  /// Drops the tensors and the variadic lists (Note [Tape reuse]).
  void release() noexcept {
    index.reset();
    refs.clear();
    xs.clear();
  }
};

/// One recorded op application.
/// Note [Tape node layout]: inputs, saved values and small parameters are inline (no
/// heap allocation for the elementwise/reduction/structural nodes that dominate small
/// workloads); `extra` is allocated only by ops with large parameters.
/// Note [Multi-output nodes]: a primitive with several results (svd, qr, eigh, eig, lu,
/// slogdet, lstsq) records ONE node with `nout` outputs; each output has its own value
/// and cotangent slot, and an eager tensor refers to (node, slot). An output nobody
/// differentiated keeps an undefined cotangent: a symbolic zero, so the rule skips
/// its terms (an eigenvalue-only loss never forms eigh's 1/(w_j − w_i)). Outputs that
/// are not float/complex (lstsq's rank) are constants and have no slot value.
struct Node {
  OpId op{};
  std::uint8_t nin = 0;     ///< number of inputs (inline; variadic ops use extra)
  std::uint8_t nout = 1;    ///< number of outputs (y[0..nout))
  bool cot_owned[kMaxOutputs] = {};  ///< cot[j] is exclusively owned by this node (may be updated in place)
  Ref in[3];
  Tensor x[3];              ///< input values (undefined for scalar operands)
  Scalar sx[3];             ///< scalar operands
  Tensor y[kMaxOutputs];    ///< output values
  Tensor cot[kMaxOutputs];  ///< accumulated cotangents of the outputs (undefined: zero)
  OpAttrs attrs;            ///< the op's parameters (Note [Typed attributes]; the catalogue names the struct)
  std::uint64_t saved_version = 0;  ///< saved_version() at recording (Note [Version counters], tensor.hpp)
  std::unique_ptr<NodeExtra> extra;

  /// The op's attributes as A (the struct the catalogue names for `op`).
  template <class A> const A& attr() const noexcept { return *std::get_if<A>(&attrs); }
  /// The attributes as A for filling in (A must be the struct the catalogue names for
  /// `op`; finish checks it). A reused node of the same op keeps its alternative and its
  /// buffers, so the caller sets every field.
  template <class A> A& set_attrs() {
    if (A* p = std::get_if<A>(&attrs)) return *p;
    return attrs.emplace<A>();
  }
  /// Sets the attributes to `a`.
  template <class A> A& set_attrs(A a) { return set_attrs<A>() = std::move(a); }

  int num_inputs() const noexcept { return extra && !extra->refs.empty() ? static_cast<int>(extra->refs.size()) : nin; }
  const Ref& ref(int k) const noexcept { return extra && !extra->refs.empty() ? extra->refs[k] : in[k]; }
  const Tensor& input(int k) const noexcept { return extra && !extra->xs.empty() ? extra->xs[k] : x[k]; }
  NodeExtra& ex() {
    if (!extra) extra = std::make_unique<NodeExtra>();
    return *extra;
  }
  /// Some output has a cotangent (the sweep runs the node's VJP).
  bool has_cot() const noexcept {
    for (int j = 0; j < nout; ++j)
      if (cot[j].defined()) return true;
    return false;
  }
  /// The sum of the write counts of the tensors this node saved for its rules. Counts
  /// only grow, so a change means a saved tensor was written after recording.
  std::uint64_t current_saved_version() const noexcept {
    std::uint64_t v = 0;
    for (const Tensor& t : x) v += t.version();
    for (int j = 0; j < nout; ++j) v += y[j].version();
    if (extra) {
      v += extra->index.version();
      for (const Tensor& t : extra->xs) v += t.version();
    }
    return v;
  }
  /// Drops every output's cotangent.
  void reset_cots() noexcept {
    for (int j = 0; j < nout; ++j) {
      cot[j].reset();
      cot_owned[j] = false;
    }
  }
};

/// A cotangent produced by a rule, with ownership (owned: a fresh tensor nobody else
/// holds, so later accumulation may add into it in place).
struct Grad {
  Tensor t;
  bool owned = false;
  /// The cotangent is the node's own accumulated cotangent, handed on whole: the sweep
  /// moves it out of the node (no handle copy; Note [In-place cotangents]). At most one
  /// output of a rule may set it; `t` stays undefined.
  bool take_cot = false;
};

/// Leaf slot: the accumulated gradient and the leaf's value (its shape and dtype).
struct Leaf {
  Tensor grad;
  bool owned = false;
  Tensor value;
  /// This backward's contribution, published into grad when the pass succeeds (Note
  /// [Failed backward] in context.cpp).
  Tensor pending;
  bool pending_owned = false;
};

/// VJP rule of a single-output op: writes a Grad for each input k whose ref is not none
/// (others may stay undefined). `g` is the node's cotangent.
using VjpRule = void (*)(Session& s, const Node& n, const Tensor& g, Grad* out);
/// JVP rule of a single-output op: the output tangent from the input tangents
/// (undefined entries are zero); returns undefined when the tangent is zero.
using JvpRule = Tensor (*)(Session& s, const Node& n, const Tensor* tangents);
/// VJP rule of a multi-output op (Note [Multi-output nodes]): `g[j]` is output j's
/// cotangent, undefined when zero (at least one is defined).
using VjpMultiRule = void (*)(Session& s, const Node& n, const Tensor* g, Grad* out);
/// JVP rule of a multi-output op: writes dy[j] for each output (undefined: zero).
using JvpMultiRule = void (*)(Session& s, const Node& n, const Tensor* tangents, Tensor* dy);

/// An op's rules: the single-output pair or the multi-output pair (by the catalogue's
/// output count; ad_rules_test checks which form each row has).
struct Rules {
  JvpRule jvp = nullptr;
  VjpRule vjp = nullptr;
  JvpMultiRule jvp_multi = nullptr;
  VjpMultiRule vjp_multi = nullptr;
  bool has_jvp() const noexcept { return jvp || jvp_multi; }
  bool has_vjp() const noexcept { return vjp || vjp_multi; }
};

/// The rule table, indexed by OpId (built once from the families' register functions).
const std::array<Rules, tenferro::detail::kNumOps>& rule_table();
void register_elementwise_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_reduce_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_structural_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_contract_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_linalg_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_lu_eig_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_svd_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_fft_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_linalg_misc_rules(std::array<Rules, tenferro::detail::kNumOps>& t);
void register_misc_ops_rules(std::array<Rules, tenferro::detail::kNumOps>& t);

/// A process-unique, increasing stamp: context ids and tape generations (Note [Context
/// lifetime]).
std::uint64_t next_ad_stamp() noexcept;

/// The context's tape.
/// Note [Tape reuse]: nodes stay constructed across frees; `live` counts the recorded
/// ones. Freeing releases only the tensors a node holds (so their buffers return to the
/// session pool) and keeps the node objects and the vector's capacity, so a steady-state
/// forward + backward constructs and destroys no node.
struct Tape {
  std::vector<Node> nodes;
  std::size_t live = 0;
  std::vector<Leaf> leaves;
  std::vector<std::int32_t> touched;  ///< leaves with a pending contribution (capacity kept)
  std::uint64_t generation = 0;  ///< process-unique (next_ad_stamp; Note [Context lifetime])
  Tensor one_f64;  ///< cached rank-0 1.0 (implicit cotangent of f64 losses; never mutated)

  Node& push() {
    if (live == nodes.size()) nodes.emplace_back();
    return nodes[live++];
  }
  /// Drops the last node (an op whose JVP failed after recording).
  void pop() noexcept {
    release(nodes[live - 1]);
    --live;
  }
  /// Drops every live node (releasing its tensors) and advances the generation.
  void clear() noexcept {
    for (std::size_t i = 0; i < live; ++i) release(nodes[i]);
    live = 0;
    generation = next_ad_stamp();
  }
  static void release(Node& n) noexcept {
    for (Tensor& t : n.x)
      t.reset();
    for (int j = 0; j < n.nout; ++j) {
      n.y[j].reset();
      n.cot[j].reset();
      n.cot_owned[j] = false;
    }
    if (n.extra) n.extra->release();  // keep the allocation for the next op that needs one
    n.in[0] = n.in[1] = n.in[2] = Ref{};
    n.nin = 0;
    n.nout = 1;
  }
};

/// Access to EagerTensor/Context internals for the rule files.
struct EagerAccess {
  static Ref ref_of(const EagerTensor& e) noexcept { return {e.kind_, e.slot_, e.index_}; }
  static void set_tangent(EagerTensor& e, Tensor t) { e.tangent_ = std::move(t); }
  static EagerTensor make(Context* ctx, Tensor&& value, Ref ref, std::uint64_t gen) {
    EagerTensor e(std::move(value));
    e.ctx_ = ctx;
    e.kind_ = ref.kind;
    e.slot_ = ref.slot;
    e.index_ = ref.index;
    e.gen_ = gen;
    return e;
  }
  static std::uint64_t gen(const EagerTensor& e) noexcept { return e.gen_; }
  static int no_grad(const Context& c) noexcept { return c.no_grad_depth_; }
};

/// RuntimeStateError unless `e` (a tape-node reference) belongs to `ctx`'s live tape.
[[noreturn]] void throw_stale(std::string_view op);
[[noreturn]] void throw_foreign(std::string_view op);
[[noreturn]] void throw_no_rule(OpId op, std::string_view which);
[[noreturn]] void throw_wrong_attrs(OpId op);
/// Ends a node's fill: an op without parameters gets NoAttrs (a reused node may hold an
/// earlier op's); any other op must have set the struct its catalogue row names
/// (InternalError otherwise).
inline void check_attrs(Node& n) {
  const std::size_t want = op_attrs_index(n.op);
  if (n.attrs.index() == want) return;
  if (want != op_attrs_index(OpId::add)) throw_wrong_attrs(n.op);
  n.attrs.emplace<NoAttrs>();
}

/// The reference an input contributes to a node of `ctx` (none for constants and for
/// tensors that do not require grad). Throws for a stale or foreign reference.
inline Ref input_ref(Context& ctx, const EagerTensor* e, std::string_view op) {
  if (!e || !e->requires_grad()) return {};
  if (e->context() != &ctx) throw_foreign(op);
  const Ref r = EagerAccess::ref_of(*e);
  if (r.kind == 2 && EagerAccess::gen(*e) != ctx.tape().generation) throw_stale(op);
  if (r.kind == 1 && EagerAccess::gen(*e) != ctx.id()) throw_foreign(op);  // a leaf of a destroyed context at this address
  return r;
}

/// An eager value that needs derivatives through an op: it requires grad or carries a
/// tangent.
inline bool differentiable(const EagerTensor& e) noexcept { return e.requires_grad() || e.tangent().defined(); }

/// Axis `a` of a rank-`rank` tensor with negative values counted from the end.
inline std::int64_t norm_axis(std::int64_t a, int rank) noexcept { return a < 0 ? a + rank : a; }

/// Same extents (no Dims constructed).
inline bool same_shape(const Tensor& a, const Tensor& b) noexcept {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.extent(i) != b.extent(i)) return false;
  return true;
}

/// Makes a tangent fit the output: broadcast to its shape, complex → real part when the
/// output is real, converted to its dtype.
Tensor fit_tangent(Session& s, Tensor t, const Tensor& y);

/// The recording step every op wrapper ends with. `inputs` are the eager inputs (nullptr
/// for constants/scalars); `fill(Node&)` stores the inputs' values and parameters the
/// rules need. Records when grad is enabled and an input requires grad; computes the
/// tangent when an input has one. Outputs that are not float/complex never record.
template <std::size_t N, class Fill>
EagerTensor finish(Context& ctx, OpId op, Tensor&& y, const std::array<const EagerTensor*, N>& inputs, Fill&& fill) {
  bool need_grad = false, need_tan = false;
  for (const EagerTensor* e : inputs) {
    if (!e) continue;
    need_grad |= e->requires_grad();
    need_tan |= e->tangent().defined();
  }
  if (!need_grad && !need_tan) return EagerTensor(std::move(y));
  if (!is_inexact(y.dtype())) return EagerTensor(std::move(y));
  const auto& rules = rule_table()[static_cast<int>(op)];
  const bool record = need_grad && EagerAccess::no_grad(ctx) == 0;
  Tape& tape = ctx.tape();
  if (record) {
    if (!rules.vjp) throw_no_rule(op, "VJP");
    if (need_tan && !rules.jvp) throw_no_rule(op, "JVP");
    Ref refs[N > 0 ? N : 1];
    for (std::size_t k = 0; k < N; ++k) refs[k] = input_ref(ctx, inputs[k], tenferro::detail::op_name(op));
    Node& n = tape.push();
    n.op = op;
    n.nin = static_cast<std::uint8_t>(N);
    for (std::size_t k = 0; k < N; ++k) n.in[k] = refs[k];
    n.y[0] = y;
    Tensor tan;
    try {
      fill(n);
      check_attrs(n);
      n.saved_version = n.current_saved_version();
      if (need_tan) {
        Tensor tans[N > 0 ? N : 1];
        for (std::size_t k = 0; k < N; ++k)
          if (inputs[k]) tans[k] = inputs[k]->tangent();
        tan = rules.jvp(ctx.session(), n, tans);
        if (tan.defined()) tan = fit_tangent(ctx.session(), std::move(tan), y);
      }
    } catch (...) {
      tape.pop();  // nothing half-recorded stays on the tape
      throw;
    }
    EagerTensor out = EagerAccess::make(&ctx, std::move(y), node_ref(tape.live - 1), tape.generation);
    if (tan.defined()) EagerAccess::set_tangent(out, std::move(tan));
    return out;
  }
  if (!need_tan) return EagerTensor(std::move(y));
  if (!rules.jvp) throw_no_rule(op, "JVP");
  Node n;
  n.op = op;
  n.nin = static_cast<std::uint8_t>(N);
  n.y[0] = y;
  fill(n);
  check_attrs(n);
  Tensor tans[N > 0 ? N : 1];
  for (std::size_t k = 0; k < N; ++k)
    if (inputs[k]) tans[k] = inputs[k]->tangent();
  Tensor tan = rules.jvp(ctx.session(), n, tans);
  EagerTensor out(std::move(y));
  if (tan.defined()) EagerAccess::set_tangent(out, fit_tangent(ctx.session(), std::move(tan), out.value()));
  return out;
}

/// The eager results of a multi-output op (one per output; unused entries undefined).
struct MultiOut {
  EagerTensor e[kMaxOutputs];
};
/// finish() for a multi-output primitive (Note [Multi-output nodes]): records ONE node
/// whose outputs are `ys` (at most kMaxOutputs, at most 3 `inputs`, nullptr for
/// constants) when an input requires grad, and computes every output's tangent when an
/// input has one. Outputs that are undefined or not float/complex come back as
/// constants. `fill` stores the saved values and parameters the rules need.
MultiOut finish_multi(Context& ctx, OpId op, std::span<Tensor> ys, std::span<const EagerTensor* const> inputs,
                      const std::function<void(Node&)>& fill);

/// finish() for variadic ops: refs and values go to extra.
EagerTensor finish_variadic(Context& ctx, OpId op, Tensor&& y, std::span<const EagerTensor> inputs,
                            const std::function<void(Node&)>& fill);

// ---- small tensor helpers for rules (all run on the session) ----
/// conj(v) for a complex scalar, v itself otherwise.
inline Scalar conj_scalar(const Scalar& v) {
  if (v.kind() != Scalar::Kind::complex) return v;
  return Scalar(std::conj(v.to<c128>()));
}
/// a + b where either may be undefined (zero).
Tensor add_maybe(Session& s, const Tensor& a, const Tensor& b);
/// conj(x) for complex x, x itself otherwise.
Tensor conj_if_complex(Session& s, const Tensor& x);
/// Zeros of x's shape and dtype (from the session pool).
Tensor zeros_like(Session& s, const Tensor& x);
/// `t` or zeros like `like` when t is undefined.
Tensor or_zeros(Session& s, const Tensor& t, const Tensor& like);
/// g reduced to `shape` (summing axes that were broadcast), NumPy-in-column-major rule.
Tensor unbroadcast(Session& s, const Tensor& g, const Shape& shape);

}  // namespace tenferro::ad::detail
