// Elementwise ops under NumPy's names (add, subtract, ..., where, clip, astype), the
// analytic functions of the catalogue, and the Tensor operators (which use the thread's
// current session). Broadcasting is NumPy's (Note [Reversed axes] in bind.hpp).
#include <cstring>

#include "fastcall.hpp"

namespace tfpy {

namespace {

using Binary = Tensor (*)(Session&, const tenferro::Operand&, const tenferro::Operand&);
using BinaryInto = void (*)(Session&, const tenferro::Operand&, const tenferro::Operand&, const Tensor&);
using Unary = Tensor (*)(Session&, const Tensor&);
using UnaryInto = void (*)(Session&, const Tensor&, const Tensor&);
using AdBinary = ad::EagerTensor (*)(ad::Context&, const ad::AdOperand&, const ad::AdOperand&);
using AdUnary = ad::EagerTensor (*)(ad::Context&, const ad::EagerTensor&);

// Note [GIL policy] (module.cpp): the op's size decides whether the GIL is released.
std::int64_t work(const Arg& a) { return a.is_scalar() ? 1 : a.tensor().numel(); }

py::object finish(Tensor&& result) { return py::cast(std::move(result)); }

bool is_int(DType d) { return d == DType::i32 || d == DType::i64; }

// NumPy promotes an integer tensor with a float32 (complex64) one to float64
// (complex128); the C++ table keeps the float's precision (as JAX). Widening the float
// operand makes the C++ promotion give NumPy's dtype.
void numpy_promote(Session& s, Arg& a, Arg& b) {
  if (a.is_scalar() || b.is_scalar()) return;  // weak scalars: the same rule in both
  auto widen = [&](Arg& fl, const Arg& other) {
    const DType d = fl.tensor().dtype();
    if (!is_int(other.tensor().dtype()) || (d != DType::f32 && d != DType::c64)) return;
    fl.replace(tenferro::convert(s, fl.tensor(), d == DType::f32 ? DType::f64 : DType::c128));
  };
  widen(a, b);
  widen(b, a);
}

// Runs a binary op (allocating, or into `out`) on Python arguments.
py::object run_binary(Session& s, Arg& a, Arg& b, py::handle out, Binary f, BinaryInto g, const char* op) {
  if (a.is_scalar() && b.is_scalar()) a.make_tensor();  // two Python scalars: a rank-0 result, as NumPy's
  numpy_promote(s, a, b);
  if (out.is_none()) {
    const bool release = std::max(work(a), work(b)) >= kReleaseGilElements;
    return finish(maybe_without_gil(release, [&] { return f(s, a.operand(), b.operand()); }));
  }
  const Arg o(out, op);
  if (o.is_scalar()) throw tenferro::ArgumentError(op, "out must be a tensor");
  maybe_without_gil(o.tensor().numel() >= kReleaseGilElements, [&] { g(s, a.operand(), b.operand(), o.tensor()); });
  return py::reinterpret_borrow<py::object>(out);
}

bool integral(const Arg& a) {
  if (a.is_scalar()) return a.scalar().kind() == Scalar::Kind::integer || a.scalar().kind() == Scalar::Kind::boolean;
  const DType d = a.tensor().dtype();
  return d == DType::b8 || d == DType::i32 || d == DType::i64;
}

// NumPy's true division: integer and bool operands divide as float64.
py::object true_divide(Session& s, py::handle a_, py::handle b_, py::handle out) {
  const char* op = "divide";
  Arg a(a_, op), b(b_, op);
  if (integral(a) && integral(b)) {
    auto as_f64 = [&](const Arg& x) -> py::object {
      if (x.is_scalar()) return py::float_(x.scalar().to<double>());
      return py::cast(tenferro::convert(s, x.tensor(), DType::f64));
    };
    py::object fa = as_f64(a), fb = as_f64(b);
    Arg a64(fa, op), b64(fb, op);
    return run_binary(s, a64, b64, out, &tenferro::div, &tenferro::div_into, op);
  }
  return run_binary(s, a, b, out, &tenferro::div, &tenferro::div_into, op);
}

// Note [Fast calls] (fastcall.hpp): the elementwise ops are METH_FASTCALL functions.
struct BinaryEntry {
  const char* name;
  Binary f;
  BinaryInto g;
  AdBinary fad;
  bool true_div;  // NumPy's divide: integer operands divide as float64
};

PyObject* binary_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    const auto& e = fast_entry<BinaryEntry>(self);
    const FastArgs a = parse_fast(e.name, args, nargs, kwnames, 3);
    Session& s = session_arg(a.pos[0], e.name);
    Arg x(a.pos[1], e.name), y(a.pos[2], e.name);
    if (ad::Context* ctx = eager_context_of({&x, &y}, s, e.name)) {
      refuse_out(a.out, e.name);
      return eager_result(e.fad(*ctx, x.ad_operand(), y.ad_operand()));
    }
    if (e.true_div) return true_divide(s, a.pos[1], a.pos[2], a.out);
    return run_binary(s, x, y, a.out, e.f, e.g, e.name);
  });
}

void def_binary(py::module_& m, const char* name, Binary f, BinaryInto g, AdBinary fad, const char* doc,
                bool true_div = false) {
  add_fast(m, method_def(name, &binary_call, std::string(name) + "($module, s, x1, x2, /, out=None)\n--\n\n" + doc),
           new BinaryEntry{name, f, g, fad, true_div});
}

py::object run_unary(Session& s, py::handle x_, py::handle out, Unary f, UnaryInto g, const char* op) {
  const Tensor x = tensor_arg(x_, op);
  if (out.is_none()) return finish(maybe_without_gil(x.numel() >= kReleaseGilElements, [&] { return f(s, x); }));
  const Arg o(out, op);
  if (o.is_scalar()) throw tenferro::ArgumentError(op, "out must be a tensor");
  maybe_without_gil(x.numel() >= kReleaseGilElements, [&] { g(s, x, o.tensor()); });
  return py::reinterpret_borrow<py::object>(out);
}

struct UnaryEntry {
  const char* name;
  Unary f;
  UnaryInto g;
  AdUnary fad;
};

PyObject* unary_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    const auto& e = fast_entry<UnaryEntry>(self);
    const FastArgs a = parse_fast(e.name, args, nargs, kwnames, 2);
    Session& s = session_arg(a.pos[0], e.name);
    if (const ad::EagerTensor* x = as_eager(a.pos[1]); is_active(x)) {
      refuse_out(a.out, e.name);
      return eager_result(e.fad(eager_context(*x, s, e.name), *x));
    }
    return run_unary(s, a.pos[1], a.out, e.f, e.g, e.name);
  });
}

void def_unary(py::module_& m, const char* name, Unary f, UnaryInto g, AdUnary fad, const char* doc) {
  add_fast(m, method_def(name, &unary_call, std::string(name) + "($module, s, x, /, out=None)\n--\n\n" + doc),
           new UnaryEntry{name, f, g, fad});
}

// NumPy's names for the catalogue's analytic functions that NumPy spells differently.
const char* numpy_alias(const char* name) {
  if (!std::strcmp(name, "asin")) return "arcsin";
  if (!std::strcmp(name, "acos")) return "arccos";
  if (!std::strcmp(name, "atan")) return "arctan";
  return nullptr;
}

void def_compare(py::module_& m, const char* name, tenferro::CompareOp c) {
  m.def(
      name,
      [name, c](py::handle s_, py::handle a_, py::handle b_, py::handle out) -> py::object {
        Session& s = session_arg(s_, name);
        Arg a(a_, name), b(b_, name);
        if (a.is_scalar() && b.is_scalar()) a.make_tensor();
        if (out.is_none()) return finish(tenferro::compare(s, a.operand(), b.operand(), c));
        const Arg o(out, name);
        tenferro::compare_into(s, a.operand(), b.operand(), c, o.tensor());
        return py::reinterpret_borrow<py::object>(out);
      },
      py::arg("s"), py::arg("x1"), py::arg("x2"), py::kw_only(), py::arg("out") = py::none(),
      "Elementwise comparison (NumPy's name) as a bool tensor; complex operands allow only equal and not_equal.");
}

// The operators: the current session (C++ current_session(); SessionEntryError outside
// a `with backend.session()` block).
template <Binary F> py::object op_binary(py::handle a, py::handle b) {
  Arg x(a, "operator"), y(b, "operator");
  if (x.is_scalar() && y.is_scalar()) x.make_tensor();
  return finish(F(tenferro::current_session(), x.operand(), y.operand()));
}
// Arithmetic with a tenferro.ad.Tensor is the eager class's (its reflected operator
// records it): never detach it here.
bool defer_to_eager(py::handle a, py::handle b) noexcept { return as_eager(a) || as_eager(b); }
py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }
template <Binary F> py::object op_arith(py::handle a, py::handle b) {
  return defer_to_eager(a, b) ? not_implemented() : op_binary<F>(a, b);
}
template <Binary F> py::object op_rarith(py::handle a, py::handle b) { return op_arith<F>(b, a); }
py::object op_truediv(py::handle a, py::handle b) {
  return defer_to_eager(a, b) ? not_implemented() : true_divide(tenferro::current_session(), a, b, py::none());
}

}  // namespace

void register_elementwise(py::module_& m) {
  def_binary(m, "add", &tenferro::add, &tenferro::add_into, &tenferro::ad::add, "x1 + x2 elementwise (NumPy broadcasting and promotion).");
  def_binary(m, "subtract", &tenferro::sub, &tenferro::sub_into, &tenferro::ad::sub, "x1 - x2 elementwise.");
  def_binary(m, "multiply", &tenferro::mul, &tenferro::mul_into, &tenferro::ad::mul, "x1 * x2 elementwise.");
  def_binary(m, "divide", &tenferro::div, &tenferro::div_into, &tenferro::ad::div,
             "x1 / x2 elementwise, true division as NumPy's (integer operands give float64).", true);
  m.attr("true_divide") = m.attr("divide");
  def_binary(m, "fmod", &tenferro::rem, &tenferro::rem_into, &tenferro::ad::rem,
             "C's fmod elementwise: the remainder has the sign of x1 (integers truncate; a zero divisor raises "
             "NumericalError where NumPy warns).");
  def_binary(m, "maximum", &tenferro::maximum, &tenferro::maximum_into, &tenferro::ad::maximum, "Elementwise maximum (NaN propagates).");
  def_binary(m, "minimum", &tenferro::minimum, &tenferro::minimum_into, &tenferro::ad::minimum, "Elementwise minimum (NaN propagates).");
  def_binary(m, "power", &tenferro::pow, &tenferro::pow_into, &tenferro::ad::pow,
             "x1 ** x2 elementwise (integers need exponents >= 0, as NumPy).");

  def_unary(m, "negative", &tenferro::neg, &tenferro::neg_into, &tenferro::ad::neg, "-x elementwise.");
  def_unary(m, "conjugate", &tenferro::conj, &tenferro::conj_into, &tenferro::ad::conj, "Complex conjugate (the identity on reals).");
  m.attr("conj") = m.attr("conjugate");
  def_unary(m, "absolute", &tenferro::abs, &tenferro::abs_into, &tenferro::ad::abs, "|x| elementwise (real for complex x).");
  m.attr("abs") = m.attr("absolute");
  def_unary(m, "sign", &tenferro::sign, &tenferro::sign_into, &tenferro::ad::sign,
            "sign(x); for complex x it is x/|x| (0 at 0), NumPy 2's definition (NumPy 1.x gives sign(x.real)).");
  def_unary(m, "real", &tenferro::real, &tenferro::real_into, &tenferro::ad::real, "Real part (a copy).");
  def_unary(m, "imag", &tenferro::imag, &tenferro::imag_into, &tenferro::ad::imag, "Imaginary part (a copy; 0 for real x).");
  def_unary(m, "angle", &tenferro::angle, &tenferro::angle_into, &tenferro::ad::angle, "Argument of x (0 or pi for real x).");
#define TENFERRO_ANALYTIC_ITEM(name)                                                                         \
  def_unary(m, #name, &tenferro::name, &tenferro::name##_into, &tenferro::ad::name,                        \
            #name " elementwise (float and complex dtypes).");                                             \
  if (const char* alias = numpy_alias(#name)) m.attr(alias) = m.attr(#name);
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM

  def_compare(m, "equal", tenferro::CompareOp::eq);
  def_compare(m, "not_equal", tenferro::CompareOp::ne);
  def_compare(m, "less", tenferro::CompareOp::lt);
  def_compare(m, "less_equal", tenferro::CompareOp::le);
  def_compare(m, "greater", tenferro::CompareOp::gt);
  def_compare(m, "greater_equal", tenferro::CompareOp::ge);

  m.def(
      "where",
      [](py::handle s_, py::handle c_, py::handle x_, py::handle y_) {
        Session& s = session_arg(s_, "where");
        Arg c(c_, "where"), x(x_, "where"), y(y_, "where");
        if (ad::Context* ctx = eager_context_of({&x, &y}, s, "where"))
          return eager_result(ad::select(*ctx, c.ad_operand(), x.ad_operand(), y.ad_operand()));
        return finish(tenferro::select(s, c.operand(), x.operand(), y.operand()));
      },
      py::arg("s"), py::arg("condition"), py::arg("x"), py::arg("y"),
      "x where condition (a bool tensor) holds, else y; all three broadcast (NumPy's three-argument where).");
  m.def(
      "clip",
      [](py::handle s_, py::handle x_, py::handle lo_, py::handle hi_) {
        Session& s = session_arg(s_, "clip");
        Arg x(x_, "clip"), lo(lo_, "clip"), hi(hi_, "clip");
        if (ad::Context* ctx = eager_context_of({&x, &lo, &hi}, s, "clip"))
          return eager_result(ad::clamp(*ctx, lo.ad_operand(), x.ad_operand(), hi.ad_operand()));
        return finish(tenferro::clamp(s, lo.operand(), x.operand(), hi.operand()));
      },
      py::arg("s"), py::arg("a"), py::arg("a_min"), py::arg("a_max"), "min(max(a, a_min), a_max) elementwise (real dtypes).");
  m.def(
      "astype",
      [](py::handle s_, py::handle x_, py::handle dtype, bool checked) {
        Session& s = session_arg(s_, "astype");
        const DType d = dtype_from(dtype, "astype");
        if (const ad::EagerTensor* e = as_eager(x_); is_active(e)) {
          ad::Context& ctx = eager_context(*e, s, "astype");
          return eager_result(checked ? ad::convert(ctx, *e, d) : ad::cast(ctx, *e, d));
        }
        const Tensor x = tensor_arg(x_, "astype");
        return finish(checked ? tenferro::convert(s, x, d) : tenferro::cast(s, x, d));
      },
      py::arg("s"), py::arg("x"), py::arg("dtype"), py::kw_only(), py::arg("checked") = false,
      "x converted to dtype (a C-ordered copy). checked=False: NumPy's unsafe casting (floats truncate toward zero and "
      "saturate); checked=True: ArgumentError when a value does not convert exactly.");
  m.def(
      "copyto",
      [](py::handle s_, py::handle dst_, py::handle src_) {
        Session& s = session_arg(s_, "copyto");
        Arg dst(dst_, "copyto"), src(src_, "copyto");
        reject_eager(dst, "copyto");
        reject_eager(src, "copyto");
        if (dst.is_scalar()) throw tenferro::ArgumentError("copyto", "dst must be a tensor");
        const Tensor from = src.is_scalar() ? Tensor::full(dst.tensor().shape(), src.scalar(), dst.tensor().dtype())
                                            : src.tensor().broadcast_view(dst.tensor().shape());
        tenferro::copy_into(s, from, dst.tensor());
      },
      py::arg("s"), py::arg("dst"), py::arg("src"), "Copies src (broadcast) into dst, which may be any writable view.");

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__add__", &op_arith<&tenferro::add>)
      .def("__radd__", &op_rarith<&tenferro::add>)
      .def("__sub__", &op_arith<&tenferro::sub>)
      .def("__rsub__", &op_rarith<&tenferro::sub>)
      .def("__mul__", &op_arith<&tenferro::mul>)
      .def("__rmul__", &op_rarith<&tenferro::mul>)
      .def("__pow__", &op_arith<&tenferro::pow>)
      .def("__rpow__", &op_rarith<&tenferro::pow>)
      .def("__truediv__", [](py::handle a, py::handle b) { return op_truediv(a, b); })
      .def("__rtruediv__", [](py::handle a, py::handle b) { return op_truediv(b, a); })
      .def("__neg__", [](const Tensor& a) { return tenferro::neg(tenferro::current_session(), a); })
      .def("__abs__", [](const Tensor& a) { return tenferro::abs(tenferro::current_session(), a); })
      .def("__eq__", [](py::handle a, py::handle b) {
        Arg x(a, "operator"), y(b, "operator");
        return finish(tenferro::eq(tenferro::current_session(), x.operand(), y.operand()));
      })
      .def("__ne__", [](py::handle a, py::handle b) {
        Arg x(a, "operator"), y(b, "operator");
        return finish(tenferro::ne(tenferro::current_session(), x.operand(), y.operand()));
      })
      .def("__lt__", &op_binary<&tenferro::lt>)
      .def("__le__", &op_binary<&tenferro::le>)
      .def("__gt__", &op_binary<&tenferro::gt>)
      .def("__ge__", &op_binary<&tenferro::ge>);
  cls.attr("__hash__") = py::none();  // __eq__ is elementwise, as NumPy's
}

}  // namespace tfpy
