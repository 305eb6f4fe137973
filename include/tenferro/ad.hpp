#pragma once
/// \file ad.hpp
/// Eager automatic differentiation: an eager context bound to one session, eager
/// tensors, a tape, reverse mode (backward), forward mode (tangents) and the functional
/// forms grad / vjp / jvp. The differentiable ops are declared in ad_ops.hpp.
///
/// Note [Eager AD runtime]
/// - A `Context` is bound to one `Session&` for its whole life: every forward op, every
///   rule and the whole backward pass run on that session; nothing enters another one
///   (so a forward + backward pass costs the direct ops plus recording).
/// - An `EagerTensor` wraps a `Tensor` value, an optional forward-mode tangent and a
///   reference into its context's tape (a leaf slot or a tape node).
/// - An op records a tape node only when recording is enabled (no `NoGradGuard` alive)
///   and at least one input requires gradients; its output then requires gradients.
///   Outputs of integer or bool dtype never record (they are not differentiable).
/// - An op computes an output tangent (forward mode) whenever an input carries one, by
///   the op's JVP rule (true forward-mode propagation, no double VJP).
/// - Rules are dispatched by OpId from the op catalogue (src/ops/catalog.def). An op
///   with no rule (or an unsupported configuration) throws UnsupportedAdRule when it
///   would be recorded or given a tangent: never a silent zero.
///
/// Note [Second backward]
/// `backward` frees the tape by default: every node recorded since the last free is
/// dropped and the tape's generation advances. A later backward from (or an op on) an
/// intermediate of a freed tape throws RuntimeStateError; leaves are not affected and
/// keep their gradients. With `retain_graph = true` the tape is kept and a second
/// backward accumulates into the leaves' gradients again (PyTorch's behaviour). A
/// backward that throws (a rule's error, out of memory) changes no leaf gradient and
/// keeps the tape whatever retain_graph says, so it can be retried (Note [Failed
/// backward] in src/ad/context.cpp).
///
/// Note [Complex convention]
/// PyTorch's convention. For a real loss L of a complex z = x + iy, the gradient is
/// dL/dx + i dL/dy (= 2 dL/dz̄, the direction of steepest ascent), so `z -= lr * grad`
/// descends. JAX returns the conjugate (dL/dx - i dL/dy). In general the VJP is the
/// adjoint of the R-linear JVP under the real inner product <a, b> = Re Σ conj(a)·b:
/// Re<v, J u> = Re<vjp(v), u>; for a holomorphic f, vjp(v) = conj(f'(z))·v and
/// jvp(u) = f'(z)·u. A real input receives the real part of its complex cotangent.

#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "tenferro/session.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::ad {

class Context;
namespace detail {
struct Tape;
struct EagerAccess;
}  // namespace detail

/// A tensor value seen by automatic differentiation. Copying copies handles. A
/// default-constructed or plain-Tensor-constructed EagerTensor is a constant (no
/// gradient, no tangent, no context).
class TENFERRO_API EagerTensor {
 public:
  EagerTensor() = default;
  /// A constant wrapping `value` (implicit on purpose: plain tensors are constants).
  EagerTensor(const Tensor& value) : value_(value) {}  // NOLINT
  EagerTensor(Tensor&& value) noexcept : value_(std::move(value)) {}  // NOLINT

  /// The primal value.
  const Tensor& value() const noexcept { return value_; }
  /// The forward-mode tangent (undefined means zero).
  const Tensor& tangent() const noexcept { return tangent_; }
  /// True for leaves created with requires_grad and outputs recorded on the tape.
  bool requires_grad() const noexcept { return kind_ != 0; }
  /// True for leaves created by Context::leaf.
  bool is_leaf() const noexcept { return kind_ == 1; }
  /// The context that recorded this tensor (nullptr for constants). It may have been
  /// destroyed since: context_alive() says (Note [Context lifetime]).
  Context* context() const noexcept { return ctx_; }
  /// True when context() is non-null and that context still exists (a registry lookup;
  /// a newer context at the same address does not count).
  bool context_alive() const noexcept;
  /// The gradient accumulated in this leaf by backward (undefined before any backward
  /// reached it, or after zero_grad). A handle to the accumulator: a later backward
  /// adds into it in place, so copy it to keep a snapshot. Throws ArgumentError for a
  /// tensor that is not a leaf, RuntimeStateError when the leaf's context was destroyed
  /// (its gradients went with it).
  Tensor grad() const;

  DType dtype() const noexcept { return value_.dtype(); }
  int rank() const noexcept { return value_.rank(); }
  Shape shape() const { return value_.shape(); }
  std::int64_t numel() const noexcept { return value_.numel(); }

 private:
  Tensor value_;
  Tensor tangent_;
  Context* ctx_ = nullptr;
  std::int16_t kind_ = 0;   ///< 0 constant, 1 leaf, 2 tape node
  std::int16_t slot_ = 0;   ///< output of the tape node (multi-output ops)
  std::int32_t index_ = 0;  ///< leaf slot or node index
  std::uint64_t gen_ = 0;   ///< a node reference's tape generation, a leaf's context id (both process-unique)
  friend struct detail::EagerAccess;
  friend class Context;
};

/// An operand of a differentiable elementwise op: an eager tensor, a plain tensor
/// (constant) or a host scalar (constant). Holds a pointer: pass it, do not store it.
class AdOperand {
 public:
  AdOperand(const EagerTensor& t) noexcept : e_(&t) {}
  AdOperand(const Tensor& t) noexcept : t_(&t) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  AdOperand(T v) noexcept : s_(v) {}
  template <class T> AdOperand(std::complex<T> v) noexcept : s_(v) {}
  AdOperand(Scalar v) noexcept : s_(v) {}
  /// The eager tensor, or nullptr for plain tensors and scalars.
  const EagerTensor* eager() const noexcept { return e_; }
  bool is_scalar() const noexcept { return e_ == nullptr && t_ == nullptr; }
  const Scalar& scalar() const noexcept { return s_; }
  /// The value as a plain operand.
  Operand operand() const noexcept {
    if (e_) return Operand(e_->value());
    if (t_) return Operand(*t_);
    return Operand(s_);
  }
  /// The tensor value (precondition: not a scalar).
  const Tensor& tensor() const noexcept { return e_ ? e_->value() : *t_; }

 private:
  const EagerTensor* e_ = nullptr;
  const Tensor* t_ = nullptr;
  Scalar s_;
};

/// Options of a backward pass.
struct BackwardOptions {
  /// Keep the tape after this pass (see Note [Second backward]).
  bool retain_graph = false;
};

/// The eager AD context: one session, one tape, the leaves and their gradients. Not
/// copyable or movable (eager tensors point at it). Thread-affine like its session.
/// Destroying the context invalidates its eager tensors' tape references (their
/// values stay valid; Note [Context lifetime]: using one in an op, operator sugar,
/// grad() or backward then throws a typed error instead of reaching freed memory).
class TENFERRO_API Context {
 public:
  /// Binds the context to `s` for its whole life (s must outlive it).
  explicit Context(Session& s);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// The session every op and rule of this context runs on.
  Session& session() const noexcept { return *session_; }

  /// A leaf: a tensor whose gradient backward accumulates. DTypeError when
  /// `requires_grad` is set on a dtype that is not float or complex; ArgumentError for
  /// an undefined tensor.
  EagerTensor leaf(Tensor value, bool requires_grad = true);
  /// `x` with forward-mode tangent `tangent` (same shape; converted to x's dtype).
  /// ShapeError for a shape mismatch; DTypeError for a non-float/complex x.
  EagerTensor with_tangent(const EagerTensor& x, Tensor tangent);

  /// Reverse mode from a real scalar (one element) loss. ShapeError when the loss has
  /// more than one element; DTypeError for a complex or integer loss (pass an explicit
  /// cotangent); ArgumentError when the loss does not require grad;
  /// RuntimeStateError when its tape was freed (Note [Second backward]).
  void backward(const EagerTensor& loss, BackwardOptions options = {});
  /// Reverse mode with an explicit cotangent of y's shape (converted to y's dtype).
  void backward(const EagerTensor& y, const Tensor& cotangent, BackwardOptions options = {});
  /// Reverse mode from several outputs at once (one cotangent each).
  void backward(std::span<const EagerTensor> ys, std::span<const Tensor> cotangents, BackwardOptions options = {});

  /// Clears every leaf's gradient (to undefined).
  void zero_grad() noexcept;
  /// Drops every recorded node (as backward does without retain_graph).
  void clear_tape() noexcept;
  /// Nodes on the tape now.
  std::size_t tape_size() const noexcept;
  /// False inside a NoGradGuard.
  bool grad_enabled() const noexcept { return no_grad_depth_ == 0; }

  /// Internal.
  detail::Tape& tape() noexcept { return *tape_; }
  /// This context's process-unique id (never reused, unlike its address).
  std::uint64_t id() const noexcept { return id_; }

 private:
  Session* session_;
  std::uint64_t id_;
  std::unique_ptr<detail::Tape> tape_;
  int no_grad_depth_ = 0;
  friend class NoGradGuard;
  friend struct detail::EagerAccess;
};

/// Disables recording on `ctx` while alive (nests). Ops still compute values and
/// forward-mode tangents.
class TENFERRO_API NoGradGuard {
 public:
  explicit NoGradGuard(Context& ctx) noexcept : ctx_(ctx) { ++ctx_.no_grad_depth_; }
  ~NoGradGuard() { --ctx_.no_grad_depth_; }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  Context& ctx_;
};

/// The same value as a constant: no gradient flows through it and it has no tangent.
TENFERRO_API EagerTensor detach(const EagerTensor& x);

// ---------------------------------------------------------------- functional forms
// They mutate nothing: each call runs f on a fresh context over the caller's session
// (no new session entry) whose leaves are copies of the handles in `xs`.

/// A differentiable function of several inputs with several outputs.
using MultiFn = std::function<std::vector<EagerTensor>(Context&, std::span<const EagerTensor>)>;
/// A differentiable function of several inputs with a scalar loss.
using ScalarFn = std::function<EagerTensor(Context&, std::span<const EagerTensor>)>;

/// Gradients of the real scalar f(xs) with respect to every x (one tensor each, x's
/// shape and dtype; zeros where f does not depend on x). Errors as Context::backward.
TENFERRO_API std::vector<Tensor> grad(Session& s, const ScalarFn& f, std::span<const Tensor> xs);
inline std::vector<Tensor> grad(Session& s, const ScalarFn& f, std::initializer_list<Tensor> xs) {
  return grad(s, f, std::span(xs.begin(), xs.size()));
}

/// Outputs and input cotangents of a vjp.
struct VjpResult {
  std::vector<Tensor> outputs;     ///< f(xs)
  std::vector<Tensor> cotangents;  ///< one per input (zeros where f does not depend on it)
};
/// f(xs) and the vector-Jacobian product with one cotangent per output. ArgumentError
/// when the numbers of outputs and cotangents differ; ShapeError for a cotangent of the
/// wrong shape.
TENFERRO_API VjpResult vjp(Session& s, const MultiFn& f, std::span<const Tensor> xs, std::span<const Tensor> cotangents);
inline VjpResult vjp(Session& s, const MultiFn& f, std::initializer_list<Tensor> xs, std::initializer_list<Tensor> cotangents) {
  return vjp(s, f, std::span(xs.begin(), xs.size()), std::span(cotangents.begin(), cotangents.size()));
}

/// Outputs and output tangents of a jvp.
struct JvpResult {
  std::vector<Tensor> outputs;   ///< f(xs)
  std::vector<Tensor> tangents;  ///< one per output (zeros where it does not depend on xs)
};
/// f(xs) and the Jacobian-vector product with one tangent per input, by forward-mode
/// propagation (nothing is recorded). ArgumentError when the numbers of inputs and
/// tangents differ; ShapeError for a tangent of the wrong shape.
TENFERRO_API JvpResult jvp(Session& s, const MultiFn& f, std::span<const Tensor> xs, std::span<const Tensor> tangents);
inline JvpResult jvp(Session& s, const MultiFn& f, std::initializer_list<Tensor> xs, std::initializer_list<Tensor> tangents) {
  return jvp(s, f, std::span(xs.begin(), xs.size()), std::span(tangents.begin(), tangents.size()));
}

}  // namespace tenferro::ad

#include "tenferro/ad_ops.hpp"
