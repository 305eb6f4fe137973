// Reductions (sum, prod, max, min, mean, argmax, argmin, logsumexp), scans (cumsum,
// cumprod), softmax and log_softmax, and vdot, with NumPy's axis, keepdims and out.
#include "bind.hpp"

namespace tfpy {

namespace {

using Reduce = Tensor (*)(Session&, const Tensor&, std::span<const std::int64_t>, bool);
using ReduceInto = void (*)(Session&, const Tensor&, std::span<const std::int64_t>, const Tensor&, bool);
using AlongAxis = Tensor (*)(Session&, const Tensor&, std::int64_t);
using AlongAxisInto = void (*)(Session&, const Tensor&, std::int64_t, const Tensor&);
using AdReduce = ad::EagerTensor (*)(ad::Context&, const ad::EagerTensor&, std::span<const std::int64_t>, bool);
using AdAlongAxis = ad::EagerTensor (*)(ad::Context&, const ad::EagerTensor&, std::int64_t);

// The recorded argument of a reduction or scan (Note [Eager arguments] in ad.cpp), or null.
const ad::EagerTensor* recorded(py::handle x, py::handle out, const Session& s, const char* op, ad::Context*& ctx) {
  const ad::EagerTensor* e = recorded_arg(x, s, op, ctx);
  if (e) refuse_out(out, op);
  return e;
}

// NumPy accumulates int32 and bool sums and products in int64 (the platform integer).
Tensor widened(Session& s, Tensor x, bool widen) {
  if (widen && (x.dtype() == DType::i32 || x.dtype() == DType::b8)) return tenferro::convert(s, x, DType::i64);
  return x;
}

py::object reduce(py::handle s_, py::handle x_, py::handle axis, bool keepdims, py::handle out, Reduce f, ReduceInto g,
                  AdReduce fad, const char* op, bool widen = false) {
  Session& s = session_arg(s_, op);
  ad::Context* ctx = nullptr;
  if (const ad::EagerTensor* e = fad ? recorded(x_, out, s, op, ctx) : nullptr)
    return eager_result(fad(*ctx, *e, cpp_axes(axis, e->rank(), op), keepdims));
  const Tensor x = widened(s, tensor_arg(x_, op), widen);
  const std::vector<std::int64_t> axes = cpp_axes(axis, x.rank(), op);
  const bool release = x.numel() >= kReleaseGilElements;
  if (out.is_none()) return py::cast(maybe_without_gil(release, [&] { return f(s, x, axes, keepdims); }));
  const Arg o(out, op);
  if (o.is_scalar()) throw tenferro::ArgumentError(op, "out must be a tensor");
  maybe_without_gil(release, [&] { g(s, x, axes, o.tensor(), keepdims); });
  return py::reinterpret_borrow<py::object>(out);
}

void def_reduce(py::module_& m, const char* name, Reduce f, ReduceInto g, AdReduce fad, const char* doc, bool widen = false) {
  m.def(
      name,
      [f, g, fad, name, widen](py::handle s, py::handle x, py::handle axis, bool keepdims, py::handle out) {
        return reduce(s, x, axis, keepdims, out, f, g, fad, name, widen);
      },
      py::arg("s"), py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false, py::kw_only(),
      py::arg("out") = py::none(), doc);
}

// argmax/argmin take one axis or None (NumPy); with None the index is into the
// C-ordered flattened tensor (the C++ column-major index over the reversed axes).
void def_arg_reduce(py::module_& m, const char* name, Reduce f, ReduceInto g, const char* doc) {
  m.def(
      name,
      [f, g, name](py::handle s, py::handle x, py::handle axis, py::handle out, bool keepdims) {
        if (!axis.is_none() && !py::isinstance<py::int_>(axis))
          throw tenferro::ArgumentError(name, "axis must be an integer or None");
        // Not differentiable: a recorded tensor's value gives the indices.
        const ad::EagerTensor* e = as_eager(x);
        const py::object xv = e ? py::cast(e->value()) : py::reinterpret_borrow<py::object>(x);
        return reduce(s, xv, axis, keepdims, out, f, g, nullptr, name);
      },
      py::arg("s"), py::arg("a"), py::arg("axis") = py::none(), py::kw_only(), py::arg("out") = py::none(),
      py::arg("keepdims") = false, doc);
}

// Scans: NumPy's axis=None scans the C-ordered flattening.
void def_scan(py::module_& m, const char* name, AlongAxis f, AlongAxisInto g, AdAlongAxis fad, bool numpy_scan,
              const char* doc) {
  m.def(
      name,
      [f, g, fad, name, numpy_scan](py::handle s_, py::handle x_, py::handle axis, py::handle out) -> py::object {
        Session& s = session_arg(s_, name);
        ad::Context* ctx = nullptr;
        if (const ad::EagerTensor* e = recorded(x_, out, s, name, ctx)) {
          if (axis.is_none()) throw tenferro::ArgumentError(name, "a recorded scan needs an integer axis");
          return eager_result(fad(*ctx, *e, cpp_axis(axis.cast<std::int64_t>(), e->rank(), name)));
        }
        Tensor x = widened(s, tensor_arg(x_, name), numpy_scan);
        std::int64_t a = 0;
        if (axis.is_none()) {
          if (!numpy_scan) throw tenferro::ArgumentError(name, "axis must be an integer");
          const std::int64_t n = x.numel();
          x = tenferro::reshape(s, x, {n});  // column-major over reversed axes = C order
        } else {
          a = cpp_axis(axis.cast<std::int64_t>(), x.rank(), name);
        }
        const bool release = x.numel() >= kReleaseGilElements;
        if (out.is_none()) return py::cast(maybe_without_gil(release, [&] { return f(s, x, a); }));
        const Arg o(out, name);
        if (o.is_scalar()) throw tenferro::ArgumentError(name, "out must be a tensor");
        maybe_without_gil(release, [&] { g(s, x, a, o.tensor()); });
        return py::reinterpret_borrow<py::object>(out);
      },
      py::arg("s"), py::arg("a"), py::arg("axis") = py::none(), py::kw_only(), py::arg("out") = py::none(), doc);
}

}  // namespace

void register_reductions(py::module_& m) {
  def_reduce(m, "sum", &tenferro::sum, &tenferro::sum_into, &tenferro::ad::sum,
             "Sum over axis (None: all; an int or a tuple), keepdims as NumPy. int32 and bool sum in int64, as "
             "NumPy's; empty sums are 0.",
             true);
  def_reduce(m, "prod", &tenferro::prod, &tenferro::prod_into, &tenferro::ad::prod,
             "Product over axis (int32 and bool in int64; empty products are 1).", true);
  def_reduce(m, "max", &tenferro::max, &tenferro::max_into, &tenferro::ad::max,
             "Maximum over axis (NaN propagates; ShapeError (ValueError) for an empty axis, as NumPy).");
  m.attr("amax") = m.attr("max");
  def_reduce(m, "min", &tenferro::min, &tenferro::min_into, &tenferro::ad::min, "Minimum over axis (NaN propagates).");
  m.attr("amin") = m.attr("min");
  def_reduce(m, "mean", &tenferro::mean, &tenferro::mean_into, &tenferro::ad::mean,
             "Mean over axis (integers give float64; the mean of nothing is NaN).");
  def_reduce(m, "logsumexp", &tenferro::logsumexp, &tenferro::logsumexp_into, &tenferro::ad::logsumexp,
             "log(sum(exp(a))) over axis, computed stably (scipy.special.logsumexp). Float dtypes.");
  def_arg_reduce(m, "argmax", &tenferro::argmax, &tenferro::argmax_into,
                 "Index of the maximum along axis (None: into the flattened tensor), first on ties, NaN counts as "
                 "the maximum, as NumPy; int64.");
  def_arg_reduce(m, "argmin", &tenferro::argmin, &tenferro::argmin_into, "Index of the minimum along axis (see argmax).");
  def_scan(m, "cumsum", &tenferro::cumsum, &tenferro::cumsum_into, &tenferro::ad::cumsum, true,
           "Inclusive prefix sum along axis (None: over the flattened tensor; int32 and bool in int64).");
  def_scan(m, "cumprod", &tenferro::cumprod, &tenferro::cumprod_into, &tenferro::ad::cumprod, true,
           "Inclusive prefix product along axis (None: over the flattened tensor; int32 and bool in int64).");
  def_scan(m, "softmax", &tenferro::softmax, &tenferro::softmax_into, &tenferro::ad::softmax, false,
           "exp(a) / sum(exp(a)) along axis, stably (scipy.special.softmax with an integer axis). Float dtypes.");
  def_scan(m, "log_softmax", &tenferro::log_softmax, &tenferro::log_softmax_into, &tenferro::ad::log_softmax, false,
           "a - logsumexp(a) along axis, stably (scipy.special.log_softmax). Float dtypes.");
  m.def(
      "vdot",
      [](py::handle s_, py::handle a_, py::handle b_) {
        Session& s = session_arg(s_, "vdot");
        Arg ea(a_, "vdot"), eb(b_, "vdot");
        if (ad::Context* ctx = eager_context_of({&ea, &eb}, s, "vdot")) {
          const ad::EagerTensor x = eager_arg(ea), y = eager_arg(eb);
          if (x.shape() != y.shape()) throw tenferro::ShapeError("vdot", "recorded operands must have equal shapes");
          return eager_result(ad::vdot(*ctx, x, y));
        }
        Tensor a = tensor_arg(a_, "vdot"), b = tensor_arg(b_, "vdot");
        if (a.numel() != b.numel())
          throw tenferro::ShapeError("vdot", "a has " + std::to_string(a.numel()) + " elements and b " +
                                                 std::to_string(b.numel()));
        // NumPy flattens both in C order: the column-major flattening of the C++ tensors.
        if (a.shape() != b.shape()) {
          a = tenferro::reshape(s, a, {a.numel()});
          b = tenferro::reshape(s, b, {b.numel()});
        }
        return py::cast(tenferro::vdot(s, a, b));
      },
      py::arg("s"), py::arg("a"), py::arg("b"), "sum(conj(a) * b) over the flattened tensors, as a rank-0 tensor.");
}

}  // namespace tfpy
