// The eager AD runtime: context, leaves, backward, the functional forms and the helpers
// the rule files share. Note [Eager AD runtime] and Note [Second backward] in ad.hpp.
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ad/emit.hpp"
#include "ad/tape.hpp"
#include "core/error_context.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad {

using detail::EagerAccess;
using detail::Grad;
using detail::Leaf;
using detail::Node;
using detail::Ref;
using detail::Tape;

namespace detail {

const std::array<Rules, tenferro::detail::kNumOps>& rule_table() {
  static const std::array<Rules, tenferro::detail::kNumOps> table = [] {
    std::array<Rules, tenferro::detail::kNumOps> t{};
    register_elementwise_rules(t);
    register_reduce_rules(t);
    register_structural_rules(t);
    register_contract_rules(t);
    register_linalg_rules(t);
    register_lu_eig_rules(t);
    register_svd_rules(t);
    register_fft_rules(t);
    register_linalg_misc_rules(t);
    register_misc_ops_rules(t);
    return t;
  }();
  return table;
}

void throw_stale(std::string_view op) {
  throw RuntimeStateError(op, "input refers to a tape freed by backward (use retain_graph, or detach() it)");
}
void throw_foreign(std::string_view op) {
  throw ArgumentError(op, "input requires grad but belongs to another AD context");
}
void throw_wrong_attrs(OpId op) {
  throw InternalError(tenferro::detail::op_name(op), std::string("recorded attributes are not ") +
                                                         std::string(tenferro::op_info(op).attrs) + " (the catalogue's struct)");
}
void throw_no_rule(OpId op, std::string_view which) {
  throw UnsupportedAdRule(tenferro::detail::op_name(op), std::string("no ") + std::string(which) + " rule for this op");
}

Tensor add_maybe(Session& s, const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return tenferro::add(s, a, b);
}
Tensor conj_if_complex(Session& s, const Tensor& x) { return is_complex(x.dtype()) ? tenferro::conj(s, x) : x; }
Tensor zeros_like(Session& s, const Tensor& x) { return zeros_on(s, x.shape().span(), x.dtype()); }
Tensor or_zeros(Session& s, const Tensor& t, const Tensor& like) { return t.defined() ? t : zeros_like(s, like); }

Tensor unbroadcast(Session& s, const Tensor& g, const Shape& shape) {
  // Column-major broadcasting aligns at axis 0: axes of g past shape's rank and axes
  // where shape has extent 1 (and g more) were stretched; sum them, then drop the extra
  // trailing axes.
  Dims axes;
  for (int i = 0; i < g.rank(); ++i) {
    const std::int64_t e = i < shape.size() ? shape[i] : 1;
    if (e == 1 && g.extent(i) != 1) axes.push_back(i);
  }
  Tensor r = axes.empty() ? g : tenferro::sum(s, g, axes.span(), true);
  if (r.rank() != shape.size()) r = tenferro::reshape(s, r, shape.span());
  return r;
}

Tensor fit_tangent(Session& s, Tensor t, const Tensor& y) {
  if (is_complex(t.dtype()) && !is_complex(y.dtype())) t = tenferro::real(s, t);
  if (t.dtype() != y.dtype()) t = tenferro::cast(s, t, y.dtype());
  if (!same_shape(t, y)) t = t.broadcast_view(y.shape().span());
  return t;
}

EagerTensor finish_variadic(Context& ctx, OpId op, Tensor&& y, std::span<const EagerTensor> inputs,
                            const std::function<void(Node&)>& fill) {
  bool need_grad = false, need_tan = false;
  for (const EagerTensor& e : inputs) {
    need_grad |= e.requires_grad();
    need_tan |= e.tangent().defined();
  }
  if ((!need_grad && !need_tan) || !is_inexact(y.dtype())) return EagerTensor(std::move(y));
  const auto& rules = rule_table()[static_cast<int>(op)];
  const std::string_view name = tenferro::detail::op_name(op);
  const bool record = need_grad && EagerAccess::no_grad(ctx) == 0;
  if (record && !rules.vjp) throw_no_rule(op, "VJP");
  if (need_tan && !rules.jvp) throw_no_rule(op, "JVP");
  Node local;
  Node* n = &local;
  std::vector<Ref> refs(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) refs[k] = record ? input_ref(ctx, &inputs[k], name) : Ref{};
  if (record) n = &ctx.tape().push();
  n->op = op;
  n->nin = 0;
  n->y[0] = y;
  auto& ex = n->ex();
  ex.refs = std::move(refs);
  ex.xs.reserve(inputs.size());
  for (const EagerTensor& e : inputs) ex.xs.push_back(e.value());
  Tensor tan;
  try {
    fill(*n);
    check_attrs(*n);
    n->saved_version = n->current_saved_version();
    if (need_tan) {
      std::vector<Tensor> tans(inputs.size());
      for (std::size_t k = 0; k < inputs.size(); ++k) tans[k] = inputs[k].tangent();
      // Note [Errors inside rules]
      tan = tenferro::detail::under_op(name, "JVP", [&] { return rules.jvp(ctx.session(), *n, tans.data()); });
      if (tan.defined()) tan = fit_tangent(ctx.session(), std::move(tan), y);
    }
  } catch (...) {
    if (record) ctx.tape().pop();  // nothing half-recorded stays on the tape
    throw;
  }
  EagerTensor out = record ? EagerAccess::make(&ctx, std::move(y), node_ref(ctx.tape().live - 1), ctx.tape().generation)
                           : EagerTensor(std::move(y));
  if (tan.defined()) EagerAccess::set_tangent(out, std::move(tan));
  return out;
}

MultiOut finish_multi(Context& ctx, OpId op, std::span<Tensor> ys, std::span<const EagerTensor* const> inputs,
                      const std::function<void(Node&)>& fill) {
  if (ys.size() > static_cast<std::size_t>(kMaxOutputs) || inputs.size() > 3)
    throw InternalError(tenferro::detail::op_name(op), "finish_multi: too many outputs or inputs for one node");
  const std::size_t nout = ys.size(), nin = inputs.size();
  MultiOut r;
  bool need_grad = false, need_tan = false;
  for (const EagerTensor* e : inputs) {
    if (!e) continue;
    need_grad |= e->requires_grad();
    need_tan |= e->tangent().defined();
  }
  bool any_inexact = false;
  for (const Tensor& y : ys) any_inexact |= y.defined() && is_inexact(y.dtype());
  if ((!need_grad && !need_tan) || !any_inexact) {
    for (std::size_t j = 0; j < nout; ++j) r.e[j] = EagerTensor(std::move(ys[j]));
    return r;
  }
  const auto& rules = rule_table()[static_cast<int>(op)];
  const std::string_view name = tenferro::detail::op_name(op);
  const bool record = need_grad && EagerAccess::no_grad(ctx) == 0;
  if (record && !rules.vjp_multi) throw_no_rule(op, "VJP");
  if (need_tan && !rules.jvp_multi) throw_no_rule(op, "JVP");
  Ref refs[3];
  for (std::size_t k = 0; k < nin; ++k) refs[k] = record ? input_ref(ctx, inputs[k], name) : Ref{};
  Tape& tape = ctx.tape();
  Node local;
  Node* n = record ? &tape.push() : &local;
  n->op = op;
  n->nin = static_cast<std::uint8_t>(nin);
  n->nout = static_cast<std::uint8_t>(nout);
  for (std::size_t k = 0; k < nin; ++k) n->in[k] = refs[k];
  for (std::size_t j = 0; j < nout; ++j)
    if (ys[j].defined() && is_inexact(ys[j].dtype())) n->y[j] = ys[j];
  Tensor tans[kMaxOutputs];
  try {
    fill(*n);
    check_attrs(*n);
    n->saved_version = n->current_saved_version();
    if (need_tan) {
      Tensor in_tans[3];
      for (std::size_t k = 0; k < nin; ++k)
        if (inputs[k]) in_tans[k] = inputs[k]->tangent();
      tenferro::detail::under_op(tenferro::detail::op_name(op), "JVP",  // Note [Errors inside rules]
                                 [&] { rules.jvp_multi(ctx.session(), *n, in_tans, tans); });
      for (std::size_t j = 0; j < nout; ++j)
        if (tans[j].defined()) tans[j] = fit_tangent(ctx.session(), std::move(tans[j]), n->y[j]);
    }
  } catch (...) {
    if (record) tape.pop();  // nothing half-recorded stays on the tape
    throw;
  }
  for (std::size_t j = 0; j < nout; ++j) {
    const bool diff = n->y[j].defined();
    r.e[j] = diff && record ? EagerAccess::make(&ctx, std::move(ys[j]), node_ref(tape.live - 1, static_cast<int>(j)), tape.generation)
                            : EagerTensor(std::move(ys[j]));
    if (diff && tans[j].defined()) EagerAccess::set_tangent(r.e[j], std::move(tans[j]));
  }
  return r;
}

namespace {

/// Adds `g` into a cotangent slot (a node's cot or a leaf's grad) of a value `x`:
/// unbroadcast to x's shape, real part for a real x, cast to x's dtype; in place when
/// the slot owns its tensor, else a fresh sum.
void accumulate(Session& s, Tensor& slot, bool& slot_owned, const Tensor& x_like_shape, DType x_dtype, Grad&& g) {
  Tensor t = std::move(g.t);
  bool owned = g.owned;
  if (!same_shape(t, x_like_shape)) {
    t = unbroadcast(s, t, x_like_shape.shape());
    owned = true;
  }
  if (is_complex(t.dtype()) && !is_complex(x_dtype)) {
    t = tenferro::real(s, t);
    owned = true;
  }
  if (t.dtype() != x_dtype) {
    t = tenferro::cast(s, t, x_dtype);
    owned = true;
  }
  if (!slot.defined()) {
    slot = std::move(t);
    slot_owned = owned && !slot.read_only();
    return;
  }
  if (slot_owned) {
    tenferro::add_into(s, slot, t, slot);
  } else {
    slot = tenferro::add(s, slot, t);
    slot_owned = true;
  }
}

}  // namespace
}  // namespace detail

// ---------------------------------------------------------------- context lifetime

// Note [Context lifetime]
// An eager tensor keeps a raw pointer to its context (copying one costs no reference
// count: the fixed cost of an op matters, Note [Fast owner]) and the context's
// stamp `gen_` (no extra field: the handle's size is part of that cost). Context ids
// and tape generations come from one process-wide increasing counter (next_ad_stamp):
// a context's id is its first tape generation, each backward that frees the tape takes
// a new one, so a leaf's stamp is its context's id and a tape output's stamp lies in
// [id, current generation] of the context that recorded it — and of no other. Live
// contexts are registered (address → id) while they exist, so the places that would
// dereference the pointer without a live context in hand — operator sugar,
// EagerTensor::grad() — look it up first and throw RuntimeStateError for a destroyed
// one. Ops given a context compare the address and the stamp with it (a newer context
// at a freed context's address is another context: a leaf is foreign, a tape output
// stale), which needs no lookup.
namespace {
struct LiveContexts {
  std::mutex mutex;
  std::unordered_map<const Context*, std::uint64_t> ids;
};
LiveContexts& live_contexts() {
  static LiveContexts* l = new LiveContexts;  // never destroyed: contexts may end during static destruction
  return *l;
}
std::atomic<std::uint64_t> g_next_stamp{1};
}  // namespace

namespace detail {
std::uint64_t next_ad_stamp() noexcept { return g_next_stamp.fetch_add(1, std::memory_order_relaxed); }
}  // namespace detail

bool EagerTensor::context_alive() const noexcept {
  if (!ctx_) return false;
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);
  const auto it = l.ids.find(ctx_);
  if (it == l.ids.end()) return false;
  return kind_ == 1 ? gen_ == it->second : gen_ >= it->second;  // a newer context's stamps all exceed ours
}

// ---------------------------------------------------------------- EagerTensor

Tensor EagerTensor::grad() const {
  if (kind_ != 1 || !ctx_) throw ArgumentError("grad", "not a leaf: only leaves accumulate gradients");
  if (!context_alive())
    throw RuntimeStateError("grad", "the leaf's ad::Context was destroyed and its gradients with it (copy grad() before the context ends)");
  return ctx_->tape().leaves[static_cast<std::size_t>(index_)].grad;
}

EagerTensor detach(const EagerTensor& x) { return EagerTensor(x.value()); }

// ---------------------------------------------------------------- Context

Context::Context(Session& s) : session_(&s), id_(detail::next_ad_stamp()), tape_(std::make_unique<Tape>()) {
  tape_->nodes.reserve(64);
  tape_->generation = id_;
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.ids[this] = id_;
}
Context::~Context() {
  LiveContexts& l = live_contexts();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.ids.erase(this);
}

EagerTensor Context::leaf(Tensor value, bool requires_grad) {
  if (!value.defined()) throw ArgumentError("leaf", "undefined tensor");
  if (!requires_grad) return EagerTensor(std::move(value));
  if (!is_inexact(value.dtype()))
    throw DTypeError("leaf", "requires_grad needs a float or complex dtype, got " + std::string(dtype_name(value.dtype())));
  tape_->leaves.push_back({Tensor(), false, value, Tensor(), false});
  return EagerAccess::make(this, std::move(value), detail::leaf_ref(tape_->leaves.size() - 1), id_);
}

EagerTensor Context::with_tangent(const EagerTensor& x, Tensor tangent) {
  if (!is_inexact(x.dtype()))
    throw DTypeError("with_tangent", "tangents need a float or complex primal, got " + std::string(dtype_name(x.dtype())));
  if (!tangent.defined() || tangent.shape() != x.shape())
    throw ShapeError("with_tangent", "tangent shape " + (tangent.defined() ? tangent.shape().to_string() : std::string("undefined")) +
                                         " differs from the primal's " + x.shape().to_string());
  if (tangent.dtype() != x.dtype()) tangent = tenferro::cast(*session_, tangent, x.dtype());
  EagerTensor r = x;
  EagerAccess::set_tangent(r, std::move(tangent));
  return r;
}

void Context::zero_grad() noexcept {
  for (auto& l : tape_->leaves) {
    l.grad = Tensor();
    l.owned = false;
  }
}

void Context::clear_tape() noexcept { tape_->clear(); }

std::size_t Context::tape_size() const noexcept { return tape_->live; }

void Context::backward(const EagerTensor& loss, BackwardOptions options) {
  if (loss.numel() != 1)
    throw ShapeError("backward", "loss has shape " + loss.shape().to_string() + " (" + std::to_string(loss.numel()) +
                                     " elements); pass a cotangent for a non-scalar output");
  if (!is_floating(loss.dtype()))
    throw DTypeError("backward", "implicit cotangent needs a real float loss, got " + std::string(dtype_name(loss.dtype())) +
                                     "; pass a cotangent");
  Tensor& cached = tape_->one_f64;
  if (loss.dtype() == DType::f64 && loss.rank() == 0) {
    if (!cached.defined()) cached = Tensor::ones({}, DType::f64);
    backward(std::span(&loss, 1), std::span(&cached, 1), options);
    return;
  }
  const Tensor one = Tensor::ones(loss.shape().span(), loss.dtype());
  backward(std::span(&loss, 1), std::span(&one, 1), options);
}

void Context::backward(const EagerTensor& y, const Tensor& cotangent, BackwardOptions options) {
  backward(std::span(&y, 1), std::span(&cotangent, 1), options);
}

namespace {
/// accumulate() with the common case inline: the first contribution to an empty slot,
/// already of the target's shape and dtype, is moved in.
inline void accumulate_into(Session& s, Tensor& slot, bool& slot_owned, const Tensor& like, Grad&& g) {
  if (!slot.defined() && g.t.dtype() == like.dtype() && detail::same_shape(g.t, like)) {
    slot = std::move(g.t);
    slot_owned = g.owned && !slot.read_only();
    return;
  }
  detail::accumulate(s, slot, slot_owned, like, like.dtype(), std::move(g));
}

// Note [Failed backward]
// A backward that throws (a rule's numerical error, an allocation failure) leaves the
// context as it found it: no leaf gradient changes and the tape is kept (whatever
// retain_graph says), so the same backward can be retried. The sweep accumulates each
// leaf's contribution into Leaf::pending; publish() folds them into the gradients only
// after every rule has run. It first makes every sum that needs a new buffer (a leaf
// whose gradient is not owned), which may throw with nothing published; then, per leaf,
// it adds in place into an owned gradient (same shape and dtype: no allocation) or
// moves the new buffer in.
[[noreturn]] void throw_modified(tenferro::detail::OpId op) {
  throw RuntimeStateError("backward", "a tensor that " + std::string(tenferro::detail::op_name(op)) +
                                          " saved for its gradient was modified in place after it was recorded (an _into "
                                          "op's output, an in-place update or set()); compute it anew, or write into a copy");
}

void add_pending(Session& s, Tape& tape, std::int32_t leaf, Grad&& g) {
  Leaf& l = tape.leaves[static_cast<std::size_t>(leaf)];
  if (!l.pending.defined()) tape.touched.push_back(leaf);
  accumulate_into(s, l.pending, l.pending_owned, l.value, std::move(g));
}

void drop_pending(Tape& tape) noexcept {
  for (std::int32_t i : tape.touched) {
    Leaf& l = tape.leaves[static_cast<std::size_t>(i)];
    l.pending.reset();
    l.pending_owned = false;
  }
  tape.touched.clear();
}

void publish(Session& s, Tape& tape) {
  for (std::int32_t i : tape.touched) {  // may throw: nothing published yet
    Leaf& l = tape.leaves[static_cast<std::size_t>(i)];
    if (l.grad.defined() && !l.owned) {
      l.pending = tenferro::add(s, l.grad, l.pending);
      l.pending_owned = true;
    }
  }
  for (std::int32_t i : tape.touched) {
    Leaf& l = tape.leaves[static_cast<std::size_t>(i)];
    if (l.grad.defined() && l.owned) {
      tenferro::add_into(s, l.grad, l.pending, l.grad);
    } else {
      l.grad = std::move(l.pending);
      l.owned = l.pending_owned && !l.grad.read_only();
    }
  }
  drop_pending(tape);
}
}  // namespace

void Context::backward(std::span<const EagerTensor> ys, std::span<const Tensor> cotangents, BackwardOptions options) {
  Session& s = *session_;
  s.check("backward");
  Tape& tape = *tape_;
  if (ys.size() != cotangents.size())
    throw ArgumentError("backward", std::to_string(ys.size()) + " outputs but " + std::to_string(cotangents.size()) + " cotangents");
  // Validate everything before touching any slot.
  for (std::size_t i = 0; i < ys.size(); ++i) {
    const EagerTensor& y = ys[i];
    if (!y.requires_grad()) throw ArgumentError("backward", "output " + std::to_string(i) + " does not require grad");
    if (y.context() != this || (y.is_leaf() && EagerAccess::gen(y) != id_))
      throw ArgumentError("backward", "output belongs to another AD context");
    if (!y.is_leaf() && EagerAccess::gen(y) != tape.generation)
      throw RuntimeStateError("backward", "the graph of this output was freed by an earlier backward (use retain_graph)");
    if (cotangents[i].defined() && cotangents[i].dtype() != y.dtype() && is_complex(cotangents[i].dtype()) && !is_complex(y.dtype()))
      throw DTypeError("backward", "cotangent " + std::to_string(i) + " is " + std::string(dtype_name(cotangents[i].dtype())) +
                                       " but the output is real (" + std::string(dtype_name(y.dtype())) +
                                       "): its imaginary part would be dropped; pass a real cotangent");
    if (!cotangents[i].defined() || !detail::same_shape(cotangents[i], y.value()))
      throw ShapeError("backward", "cotangent shape " +
                                       (cotangents[i].defined() ? cotangents[i].shape().to_string() : std::string("undefined")) +
                                       " differs from the output's " + y.shape().to_string());
  }
  int last = -1;
  const auto& rules = detail::rule_table();
  detail::Grad small[3];
  std::vector<detail::Grad> many;
  try {
    for (std::size_t i = 0; i < ys.size(); ++i) {
      const Ref r = EagerAccess::ref_of(ys[i]);
      detail::Grad g{cotangents[i], false};
      if (r.kind == 1) {
        add_pending(s, tape, r.index, std::move(g));
      } else {
        Node& n = tape.nodes[static_cast<std::size_t>(r.index)];
        detail::accumulate(s, n.cot[r.slot], n.cot_owned[r.slot], n.y[r.slot], n.y[r.slot].dtype(), std::move(g));
        last = std::max(last, r.index);
      }
    }
    // Reverse sweep: nodes are in creation (topological) order, so every consumer of a
    // node's output has a larger index and has already added its contribution.
    for (int i = last; i >= 0; --i) {
      Node& n = tape.nodes[static_cast<std::size_t>(i)];
      if (n.nout == 1 ? !n.cot[0].defined() : !n.has_cot()) continue;
      const int nin = n.num_inputs();
      detail::Grad* out = small;
      if (nin > 3) {
        many.assign(static_cast<std::size_t>(nin), detail::Grad{});
        out = many.data();
      } else {
        for (int k = 0; k < nin; ++k)
          if (out[k].t.defined() || out[k].take_cot) out[k] = detail::Grad{};
      }
      if (n.current_saved_version() != n.saved_version) throw_modified(n.op);
      const detail::Rules& rule = rules[static_cast<int>(n.op)];
      tenferro::detail::under_op(tenferro::detail::op_name(n.op), "VJP", [&] {  // Note [Errors inside rules]
        if (n.nout == 1) rule.vjp(s, n, n.cot[0], out);
        else rule.vjp_multi(s, n, n.cot, out);
      });
      for (int k = 0; k < nin; ++k) {
        const Ref r = n.ref(k);
        if (out[k].take_cot) {  // single-output rules only
          out[k] = {std::move(n.cot[0]), n.cot_owned[0]};
          n.cot_owned[0] = false;
        }
        if (r.kind == 0 || !out[k].t.defined()) continue;
        if (r.kind == 1) {
          add_pending(s, tape, r.index, std::move(out[k]));
        } else {
          Node& m = tape.nodes[static_cast<std::size_t>(r.index)];
          accumulate_into(s, m.cot[r.slot], m.cot_owned[r.slot], m.y[r.slot], std::move(out[k]));
        }
      }
      n.reset_cots();
    }
    publish(s, tape);
  } catch (...) {  // Note [Failed backward]: no gradient written, the tape kept
    for (std::size_t i = 0; i < tape.live; ++i) tape.nodes[i].reset_cots();
    drop_pending(tape);
    throw;
  }
  if (!options.retain_graph) clear_tape();
}

// ---------------------------------------------------------------- functional forms

namespace {

std::vector<EagerTensor> make_leaves(Context& c, std::span<const Tensor> xs) {
  std::vector<EagerTensor> v;
  v.reserve(xs.size());
  for (const Tensor& x : xs) v.push_back(c.leaf(x, true));
  return v;
}

std::vector<Tensor> leaf_grads(Session& s, const std::vector<EagerTensor>& leaves) {
  std::vector<Tensor> r;
  r.reserve(leaves.size());
  for (const EagerTensor& l : leaves) {
    Tensor g = l.grad();
    r.push_back(g.defined() ? g : Tensor::zeros(l.shape().span(), l.dtype()));
  }
  (void)s;
  return r;
}

}  // namespace

std::vector<Tensor> grad(Session& s, const ScalarFn& f, std::span<const Tensor> xs) {
  Context c(s);
  std::vector<EagerTensor> leaves = make_leaves(c, xs);
  EagerTensor y = f(c, leaves);
  if (!y.requires_grad()) {
    if (y.numel() != 1) throw ShapeError("grad", "f must return a scalar, got shape " + y.shape().to_string());
    return leaf_grads(s, leaves);
  }
  c.backward(y);
  return leaf_grads(s, leaves);
}

VjpResult vjp(Session& s, const MultiFn& f, std::span<const Tensor> xs, std::span<const Tensor> cotangents) {
  Context c(s);
  std::vector<EagerTensor> leaves = make_leaves(c, xs);
  std::vector<EagerTensor> ys = f(c, leaves);
  if (ys.size() != cotangents.size())
    throw ArgumentError("vjp", "f returned " + std::to_string(ys.size()) + " outputs but " + std::to_string(cotangents.size()) +
                                   " cotangents were given");
  VjpResult r;
  std::vector<EagerTensor> live;
  std::vector<Tensor> cots;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    r.outputs.push_back(ys[i].value());
    if (!cotangents[i].defined() || cotangents[i].shape() != ys[i].shape())
      throw ShapeError("vjp", "cotangent " + std::to_string(i) + " shape differs from the output's " + ys[i].shape().to_string());
    if (ys[i].requires_grad()) {
      live.push_back(ys[i]);
      cots.push_back(cotangents[i]);
    }
  }
  if (!live.empty()) c.backward(live, cots);
  r.cotangents = leaf_grads(s, leaves);
  return r;
}

JvpResult jvp(Session& s, const MultiFn& f, std::span<const Tensor> xs, std::span<const Tensor> tangents) {
  if (xs.size() != tangents.size())
    throw ArgumentError("jvp", std::to_string(xs.size()) + " inputs but " + std::to_string(tangents.size()) + " tangents");
  Context c(s);
  std::vector<EagerTensor> in;
  in.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) in.push_back(c.with_tangent(EagerTensor(xs[i]), tangents[i]));
  std::vector<EagerTensor> ys;
  {
    NoGradGuard ng(c);
    ys = f(c, in);
  }
  JvpResult r;
  for (const EagerTensor& y : ys) {
    r.outputs.push_back(y.value());
    r.tangents.push_back(y.tangent().defined() ? tenferro::to_contiguous(s, y.tangent())
                                               : Tensor::zeros(y.shape().span(), y.dtype()));
  }
  return r;
}

}  // namespace tenferro::ad
