// tenferro.ad: the eager AD context, its tensors, and the functional grad/vjp/jvp.
//
// Note [Eager arguments]
// A tenferro.ad.Tensor is the C++ EagerTensor (a value, and a leaf or tape reference).
// The package's ops take it wherever the C++ layer has a recorded form: when any
// argument is eager, the op runs the ad:: op of the same name on that tensor's context
// (which must be alive and belong to the session passed, else RuntimeStateError or
// ArgumentError), so gradients flow through ordinary calls:
//
//     with backend.session() as s, tenferro.ad.Context(s) as ctx:
//         x = ctx.leaf(a)
//         loss = tenferro.sum(s, tenferro.sin(s, x) ** 2)
//         ctx.backward(loss); x.grad
//
// A tensor is active when it is recorded or carries a tangent; a constant
// tenferro.ad.Tensor (ctx.leaf(x, requires_grad=False)) acts as its value. A tensor
// carrying only a tangent has no context of its own (C++ ad::jvp makes such inputs):
// it is recorded on the innermost context entered on this thread, which `with
// Context(s)` and the functional grad/vjp/jvp (around the call of f) enter.
//
// Views (transpose, reshape, the matrix swap of linalg) are recorded as copies. Ops
// without a recorded form refuse eager arguments (UnsupportedError) instead of
// detaching them silently; `x.value` is the explicit constant. out= is refused for
// recorded ops (the tape holds its own results).
#include <algorithm>

#include "bind.hpp"

namespace tfpy {

namespace {

// The contexts entered on this thread, innermost last: where a tensor carrying only a
// tangent (it has no context of its own) is recorded. `with Context(s)` and the
// functional grad/vjp/jvp (around f) enter one.
thread_local std::vector<ad::Context*> t_entered;

void leave(ad::Context* c) noexcept {
  auto it = std::find(t_entered.rbegin(), t_entered.rend(), c);
  if (it != t_entered.rend()) t_entered.erase(std::next(it).base());
}

struct Entered {
  explicit Entered(ad::Context& c) : c_(&c) { t_entered.push_back(c_); }
  ~Entered() { leave(c_); }
  Entered(const Entered&) = delete;
  Entered& operator=(const Entered&) = delete;
  ad::Context* c_;
};

struct PyContext {
  py::object session;  // keeps the Python session alive while the context exists
  std::unique_ptr<ad::Context> ctx;
  ad::Context& get(const char* op) const {
    if (!ctx) throw tenferro::RuntimeStateError(op, "the AD context is closed (use it inside `with tenferro.ad.Context(s)`)");
    return *ctx;
  }
  void close() noexcept {
    leave(ctx.get());
    ctx.reset();
  }
  ~PyContext() { close(); }
};

PyTypeObject* g_eager_type = nullptr;

std::vector<Tensor> tensors_of(py::handle seq, const char* op) {
  std::vector<Tensor> out;
  for (py::handle h : seq) out.push_back(tensor_arg(h, op));
  return out;
}

py::tuple eager_tuple(std::span<const ad::EagerTensor> xs) {
  py::tuple t(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) t[i] = py::cast(xs[i]);
  return t;
}

std::vector<ad::EagerTensor> eager_outputs(py::handle r, const char* op) {
  std::vector<ad::EagerTensor> out;
  if (as_eager(r) || as_tensor(r)) {
    out.push_back(eager_arg(r, op));
  } else {
    for (py::handle h : r) out.push_back(eager_arg(h, op));
  }
  return out;
}

// The Python callable f(*xs) as the C++ MultiFn (called with the GIL held).
ad::MultiFn multi_fn(py::object f, const char* op) {
  return [f, op](ad::Context& c, std::span<const ad::EagerTensor> xs) {
    const Entered entered(c);
    return eager_outputs(f(*eager_tuple(xs)), op);
  };
}

py::list tensor_list_of(const std::vector<Tensor>& ts) {
  py::list l;
  for (const Tensor& t : ts) l.append(py::cast(t));
  return l;
}

// An operator of a tenferro.ad.Tensor `a` (a op b, or b op a when reflected): recorded on the context of whichever operand
// is active, else the plain tenferro.Tensor operator `dunder` on the values.
template <class F> py::object eager_binary_op(py::handle a, py::handle b, F f, bool reflected, const char* dunder) {
  const ad::EagerTensor& x = *as_eager(a);
  Arg y(b, "operator");
  const ad::EagerTensor* active = is_active(&x) ? &x : is_active(y.eager()) ? y.eager() : nullptr;
  if (!active) return py::cast(x.value()).attr(dunder)(y.is_scalar() ? py::reinterpret_borrow<py::object>(b) : py::cast(y.tensor()));
  ad::Context& ctx = eager_context(*active, "operator");
  return eager_result(reflected ? f(ctx, y.ad_operand(), ad::AdOperand(x)) : f(ctx, ad::AdOperand(x), y.ad_operand()));
}

// The session of an operator on a tenferro.ad.Tensor: its context's, else the current one.
Session& operator_session(const ad::EagerTensor& x) {
  return is_active(&x) ? eager_context(x, "operator").session() : tenferro::current_session();
}

}  // namespace

const ad::EagerTensor* as_eager(py::handle h) noexcept {
  if (!g_eager_type || !PyObject_TypeCheck(h.ptr(), g_eager_type)) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
  return static_cast<const ad::EagerTensor*>(inst->simple_layout ? inst->simple_value_holder[0]
                                                                 : inst->get_value_and_holder().value_ptr());
}

ad::Context& eager_context(const ad::EagerTensor& e, const char* op) {
  if (e.context()) {
    if (!e.context_alive()) throw tenferro::RuntimeStateError(op, "the tensor's AD context is closed");
    return *e.context();
  }
  if (!e.tangent().defined() || t_entered.empty())
    throw tenferro::ArgumentError(op, "a tenferro.ad.Tensor carrying only a tangent needs an AD context entered on this "
                                      "thread (with tenferro.ad.Context(s)); none is");
  return *t_entered.back();
}

ad::Context& eager_context(const ad::EagerTensor& e, const Session& s, const char* op) {
  ad::Context& ctx = eager_context(e, op);
  if (&ctx.session() != &s)
    throw tenferro::ArgumentError(op, "the tensor's AD context runs on another session than the one passed");
  return ctx;
}

ad::Context* eager_context_of(std::initializer_list<const Arg*> args, const Session& s, const char* op) {
  for (const Arg* a : args)
    if (is_active(a->eager())) return &eager_context(*a->eager(), s, op);
  return nullptr;
}

const ad::EagerTensor* recorded_arg(py::handle h, const Session& s, const char* op, ad::Context*& ctx) {
  const ad::EagerTensor* e = as_eager(h);
  if (!is_active(e)) return nullptr;
  ctx = &eager_context(*e, s, op);
  return e;
}

void refuse_out(py::handle out, const char* op) {
  if (!out.is_none()) throw tenferro::ArgumentError(op, "out= is not supported for a recorded (tenferro.ad.Tensor) op");
}

ad::EagerTensor eager_arg(const Arg& a) {
  if (const ad::EagerTensor* e = a.eager()) return *e;
  if (a.is_scalar()) return ad::EagerTensor(Tensor::scalar(a.scalar()));
  return ad::EagerTensor(a.tensor());
}

ad::EagerTensor eager_arg(py::handle h, const char* op) { return eager_arg(Arg(h, op)); }

ad::EagerTensor eager_swap(ad::Context& ctx, const ad::EagerTensor& x) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(x.rank()));
  for (int i = 0; i < x.rank(); ++i) perm[static_cast<std::size_t>(i)] = i;
  std::swap(perm[0], perm[1]);
  return ad::transpose(ctx, x, perm);
}

py::object eager_result(ad::EagerTensor&& e) { return py::cast(std::move(e)); }

void register_ad(py::module_& m) {
  m.doc() = "Eager automatic differentiation: a context records ops on its tensors; backward, grad, vjp, jvp.";
  py::class_<ad::EagerTensor> cls(m, "Tensor", R"doc(A tensor recorded by an AD context (C++ ad::EagerTensor).

Made by ctx.leaf(x) (or as the result of an op on one). Every tenferro op with a
recorded form accepts it and returns one. `value` is the plain tenferro.Tensor,
`grad` the gradient after ctx.backward, `tangent` the forward-mode tangent.)doc");
  cls.def_property_readonly("value", &ad::EagerTensor::value, "The value (a tenferro.Tensor; a constant for ops).")
      .def_property_readonly(
          "grad",
          [](const ad::EagerTensor& e) -> py::object {
            Tensor g = e.grad();
            return g.defined() ? py::cast(std::move(g)) : py::none();
          },
          "The accumulated gradient of a leaf after backward (None before).")
      .def_property_readonly(
          "tangent",
          [](const ad::EagerTensor& e) -> py::object { return e.tangent().defined() ? py::cast(e.tangent()) : py::none(); },
          "The forward-mode tangent (None without one).")
      .def_property_readonly("requires_grad", &ad::EagerTensor::requires_grad, "True for leaves and recorded results.")
      .def_property_readonly("is_leaf", &ad::EagerTensor::is_leaf, "True for ctx.leaf tensors.")
      .def_property_readonly("shape", [](const ad::EagerTensor& e) { return py_shape(e.value()); }, "The shape.")
      .def_property_readonly("ndim", &ad::EagerTensor::rank, "The number of axes.")
      .def_property_readonly("dtype", [](const ad::EagerTensor& e) { return numpy_dtype(e.dtype()); }, "The NumPy dtype.")
      .def_property_readonly("__array_interface__", [](py::object self) { return self.attr("value").attr("__array_interface__"); },
                             "The value's array interface (numpy.asarray(x) shares the value's memory).")
      .def("item", [](py::object self) { return self.attr("value").attr("item")(); }, "The value as a Python scalar.")
      .def("detach", [](const ad::EagerTensor& e) { return ad::detach(e); }, "The value as an unrecorded constant.")
      .def("__repr__", [](py::object self) {
        return "tenferro.ad.Tensor(" + py::str(py::repr(self.attr("value"))).cast<std::string>() + ")";
      });
  using AdBinary = ad::EagerTensor (*)(ad::Context&, const ad::AdOperand&, const ad::AdOperand&);
  struct Operator {
    const char *name, *reflected;
    AdBinary f;
  };
  for (const Operator o : {Operator{"__add__", "__radd__", &ad::add}, Operator{"__sub__", "__rsub__", &ad::sub},
                           Operator{"__mul__", "__rmul__", &ad::mul}, Operator{"__truediv__", "__rtruediv__", &ad::div},
                           Operator{"__pow__", "__rpow__", &ad::pow}}) {
    cls.def(o.name, [o](py::handle a, py::handle b) { return eager_binary_op(a, b, o.f, false, o.name); });
    cls.def(o.reflected, [o](py::handle a, py::handle b) { return eager_binary_op(a, b, o.f, true, o.reflected); });
  }
  cls.def("__neg__",
           [](const ad::EagerTensor& x) -> py::object {
             if (!is_active(&x)) return py::cast(x.value()).attr("__neg__")();
             return eager_result(ad::neg(eager_context(x, "operator"), x));
           })
      .def("__matmul__", [](py::handle a, py::handle b) { return matmul(operator_session(*as_eager(a)), a, b, py::none()); })
      .def("__rmatmul__", [](py::handle a, py::handle b) { return matmul(operator_session(*as_eager(a)), b, a, py::none()); })
      .def_property_readonly(
          "T", [](py::handle self) { return py::module_::import("tenferro._tenferro").attr("transpose")(self); },
          "The reversed-axes transpose (recorded).");
  g_eager_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  py::class_<PyContext>(m, "Context", R"doc(An eager AD context on a session: Context(s).

Use as `with tenferro.ad.Context(s) as ctx:`. ctx.leaf(x) starts recording; ops on its
tensors are recorded; ctx.backward(loss) fills the leaves' .grad. Tensors of a closed
context raise RuntimeStateError when used.)doc")
      .def(py::init([](py::object s) {
             Session& session = session_arg(s, "ad.Context");
             return new PyContext{s, std::make_unique<ad::Context>(session)};
           }),
           py::arg("s"))
      .def(
          "__enter__",
          [](PyContext& c) -> PyContext& {
            t_entered.push_back(&c.get("ad.Context.__enter__"));
            return c;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](PyContext& c, py::handle, py::handle, py::handle) { c.close(); })
      .def(
          "leaf",
          [](PyContext& c, py::handle x, bool requires_grad) {
            return c.get("ad.Context.leaf").leaf(tensor_arg(x, "ad.Context.leaf"), requires_grad);
          },
          py::arg("x"), py::arg("requires_grad") = true, "A recorded input (its gradient accumulates in .grad).")
      .def(
          "with_tangent",
          [](PyContext& c, const ad::EagerTensor& x, py::handle t) {
            return c.get("ad.Context.with_tangent").with_tangent(x, tensor_arg(t, "ad.Context.with_tangent"));
          },
          py::arg("x"), py::arg("tangent"), "x carrying a forward-mode tangent (propagated by every op).")
      .def(
          "backward",
          [](PyContext& c, const ad::EagerTensor& y, py::handle cotangent, bool retain_graph) {
            ad::Context& ctx = c.get("ad.Context.backward");
            const ad::BackwardOptions o{retain_graph};
            if (cotangent.is_none()) {
              without_gil([&] { ctx.backward(y, o); });
            } else {
              const Tensor ct = tensor_arg(cotangent, "ad.Context.backward");
              without_gil([&] { ctx.backward(y, ct, o); });
            }
          },
          py::arg("y"), py::arg("cotangent") = py::none(), py::arg("retain_graph") = false,
          "Reverse pass from y (a scalar without cotangent) into the leaves' .grad.")
      .def("zero_grad", [](PyContext& c) { c.get("ad.Context.zero_grad").zero_grad(); }, "Clears every leaf's gradient.")
      .def_property_readonly("tape_size", [](const PyContext& c) { return c.get("ad.Context.tape_size").tape_size(); },
                             "Recorded nodes.");

  m.def(
      "grad",
      [](py::handle s, py::object f, py::args xs) {
        const std::vector<Tensor> in = tensors_of(xs, "ad.grad");
        ad::ScalarFn fn = [f](ad::Context& c, std::span<const ad::EagerTensor> e) {
          const Entered entered(c);
          return eager_arg(f(*eager_tuple(e)), "ad.grad");
        };
        return tensor_list_of(ad::grad(session_arg(s, "ad.grad"), fn, in));
      },
      py::arg("s"), py::arg("f"),
      "grad(s, f, *xs): the gradients of the scalar f(*xs) with respect to each x (f receives tenferro.ad.Tensor "
      "arguments and calls tenferro ops on them).");
  m.def(
      "vjp",
      [](py::handle s, py::object f, py::handle xs, py::handle cotangents) {
        auto r = ad::vjp(session_arg(s, "ad.vjp"), multi_fn(f, "ad.vjp"), tensors_of(xs, "ad.vjp"),
                         tensors_of(cotangents, "ad.vjp"));
        return py::make_tuple(tensor_list_of(r.outputs), tensor_list_of(r.cotangents));
      },
      py::arg("s"), py::arg("f"), py::arg("xs"), py::arg("cotangents"),
      "(outputs, input cotangents) of f at xs (sequences; f returns a tensor or a sequence of tensors).");
  m.def(
      "jvp",
      [](py::handle s, py::object f, py::handle xs, py::handle tangents) {
        auto r = ad::jvp(session_arg(s, "ad.jvp"), multi_fn(f, "ad.jvp"), tensors_of(xs, "ad.jvp"), tensors_of(tangents, "ad.jvp"));
        return py::make_tuple(tensor_list_of(r.outputs), tensor_list_of(r.tangents));
      },
      py::arg("s"), py::arg("f"), py::arg("xs"), py::arg("tangents"), "(outputs, output tangents) of f at xs along the tangents.");
}

}  // namespace tfpy
