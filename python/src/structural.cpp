// Shape manipulation. Views (transpose, swapaxes, moveaxis, squeeze, expand_dims,
// broadcast_to, flip) take no session: they only change metadata and share storage.
// Copies (reshape where no view exists, ascontiguousarray, concatenate, stack, tril,
// triu) take one.
#include <algorithm>
#include <numeric>

#include "bind.hpp"

namespace tfpy {

namespace {

// Python-order extents and strides of t.
struct PyLayout {
  std::vector<std::int64_t> shape, strides;
  explicit PyLayout(const Tensor& t) {
    for (int i = t.rank() - 1; i >= 0; --i) {
      shape.push_back(t.extent(i));
      strides.push_back(t.stride(i));
    }
  }
  Tensor view_of(const Tensor& t) const {
    std::vector<std::int64_t> e(shape.rbegin(), shape.rend()), s(strides.rbegin(), strides.rend());
    return t.as_strided_view(e, s, t.offset());
  }
};

// A Python permutation (perm[i]: the source axis of result axis i) as the C++ one.
std::vector<std::int64_t> cpp_perm(int r, const std::vector<std::int64_t>& py_perm, const char* op) {
  if (static_cast<int>(py_perm.size()) != r)
    throw tenferro::AxisError(op, "axes don't match the tensor: " + std::to_string(py_perm.size()) + " axes for rank " +
                                      std::to_string(r));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(r));
  for (int i = 0; i < r; ++i) perm[static_cast<std::size_t>(r - 1 - i)] = cpp_axis(py_perm[static_cast<std::size_t>(i)], r, op);
  return perm;
}

Tensor permuted(const Tensor& t, const std::vector<std::int64_t>& py_perm, const char* op) {
  return t.permute_view(cpp_perm(t.rank(), py_perm, op));
}

std::int64_t norm_axis(std::int64_t a, int rank, const char* op) { return rank - 1 - cpp_axis(a, rank, op); }

Tensor reshaped(Session* s, const Tensor& x, py::handle shape, const char* op) {
  std::vector<std::int64_t> e = cpp_shape(shape, op);
  try {
    return x.reshape_view(e);
  } catch (const tenferro::ArgumentError&) {  // the strides allow no view: copy, as NumPy does
    return tenferro::reshape(s ? *s : tenferro::current_session(), x, e);
  }
}

std::vector<Tensor> tensor_list(py::handle seq, const char* op) {
  std::vector<Tensor> out;
  for (py::handle h : seq) out.push_back(tensor_arg(h, op));
  if (out.empty()) throw tenferro::ArgumentError(op, "need at least one tensor");
  return out;
}

}  // namespace

void register_structural(py::module_& m) {
  m.def(
      "reshape",
      [](py::handle s, py::handle a, py::handle shape) -> py::object {
        Session& session = session_arg(s, "reshape");
        if (const ad::EagerTensor* e = as_eager(a); is_active(e))  // recorded (as a copy)
          return eager_result(ad::reshape(eager_context(*e, session, "reshape"), *e, cpp_shape(shape, "reshape")));
        return py::cast(reshaped(&session, tensor_arg(a, "reshape"), shape, "reshape"));
      },
      py::arg("s"), py::arg("a"), py::arg("newshape"),
      "a with a new shape, C order (one extent may be -1): a view when the strides allow one, else a copy.");
  m.def(
      "transpose",
      [](py::handle a, py::handle axes) -> py::object {
        const ad::EagerTensor* e = as_eager(a);
        if (!is_active(e)) e = nullptr;
        const Tensor t = e ? e->value() : tensor_arg(a, "transpose");
        std::vector<std::int64_t> p(static_cast<std::size_t>(t.rank()));
        if (axes.is_none()) {
          std::iota(p.rbegin(), p.rend(), 0);
        } else {
          p = axes.cast<std::vector<std::int64_t>>();
        }
        if (e)  // recorded (as a copy) on the tensor's context
          return eager_result(ad::transpose(eager_context(*e, "transpose"), *e, cpp_perm(t.rank(), p, "transpose")));
        return py::cast(permuted(t, p, "transpose"));
      },
      py::arg("a"), py::arg("axes") = py::none(), "The view with permuted axes (default: reversed).");
  m.def(
      "swapaxes",
      [](py::handle a, std::int64_t a1, std::int64_t a2) {
        const Tensor t = tensor_arg(a, "swapaxes");
        std::vector<std::int64_t> p(static_cast<std::size_t>(t.rank()));
        std::iota(p.begin(), p.end(), 0);
        std::swap(p[static_cast<std::size_t>(norm_axis(a1, t.rank(), "swapaxes"))],
                  p[static_cast<std::size_t>(norm_axis(a2, t.rank(), "swapaxes"))]);
        return permuted(t, p, "swapaxes");
      },
      py::arg("a"), py::arg("axis1"), py::arg("axis2"), "The view with two axes exchanged.");
  m.def(
      "moveaxis",
      [](py::handle a, std::int64_t source, std::int64_t destination) {
        const Tensor t = tensor_arg(a, "moveaxis");
        const int r = t.rank();
        const std::int64_t from = norm_axis(source, r, "moveaxis"), to = norm_axis(destination, r, "moveaxis");
        std::vector<std::int64_t> p;
        for (std::int64_t i = 0; i < r; ++i)
          if (i != from) p.push_back(i);
        p.insert(p.begin() + to, from);
        return permuted(t, p, "moveaxis");
      },
      py::arg("a"), py::arg("source"), py::arg("destination"), "The view with one axis moved (one axis at a time).");
  m.def(
      "squeeze",
      [](py::handle a, py::handle axis) {
        const Tensor t = tensor_arg(a, "squeeze");
        const PyLayout in(t);
        std::vector<bool> drop(in.shape.size(), false);
        if (axis.is_none()) {
          for (std::size_t i = 0; i < drop.size(); ++i) drop[i] = in.shape[i] == 1;
        } else {
          for (std::int64_t c : cpp_axes(axis, t.rank(), "squeeze")) {
            const auto i = static_cast<std::size_t>(t.rank() - 1 - c);
            if (in.shape[i] != 1)
              throw tenferro::ShapeError("squeeze", "cannot select an axis to squeeze out which has size not equal to one");
            drop[i] = true;
          }
        }
        PyLayout out = in;
        out.shape.clear();
        out.strides.clear();
        for (std::size_t i = 0; i < drop.size(); ++i)
          if (!drop[i]) {
            out.shape.push_back(in.shape[i]);
            out.strides.push_back(in.strides[i]);
          }
        return out.view_of(t);
      },
      py::arg("a"), py::arg("axis") = py::none(), "The view without the given (default: all) extent-1 axes.");
  m.def(
      "expand_dims",
      [](py::handle a, std::int64_t axis) {
        const Tensor t = tensor_arg(a, "expand_dims");
        PyLayout v(t);
        const std::int64_t at = norm_axis(axis, t.rank() + 1, "expand_dims");
        v.shape.insert(v.shape.begin() + at, 1);
        v.strides.insert(v.strides.begin() + at, 0);
        return v.view_of(t);
      },
      py::arg("a"), py::arg("axis"), "The view with an extent-1 axis inserted at axis.");
  m.def(
      "broadcast_to",
      [](py::handle a, py::handle shape) { return tensor_arg(a, "broadcast_to").broadcast_view(cpp_shape(shape, "broadcast_to")); },
      py::arg("array"), py::arg("shape"), "A read-only broadcast view (NumPy's rules: aligned at the last axis).");
  m.def(
      "flip",
      [](py::handle a, py::handle axis) {
        const Tensor t = tensor_arg(a, "flip");
        return tenferro::reverse_view(t, cpp_axes(axis, t.rank(), "flip"));
      },
      py::arg("m"), py::arg("axis") = py::none(), "The view with the order of elements along axis (default: all) reversed.");
  m.def(
      "ascontiguousarray",
      [](py::handle s, py::handle a) { return tenferro::to_contiguous(session_arg(s, "ascontiguousarray"), tensor_arg(a, "ascontiguousarray")); },
      py::arg("s"), py::arg("a"), "a as a C-ordered tensor (a itself when it already is one).");
  m.def(
      "concatenate",
      [](py::handle s, py::handle arrays, std::int64_t axis) {
        std::vector<Tensor> ts = tensor_list(arrays, "concatenate");
        return tenferro::concatenate(session_arg(s, "concatenate"), ts, cpp_axis(axis, ts[0].rank(), "concatenate"));
      },
      py::arg("s"), py::arg("arrays"), py::arg("axis") = 0, "The tensors joined along an existing axis.");
  m.def(
      "stack",
      [](py::handle s, py::handle arrays, std::int64_t axis) {
        std::vector<Tensor> ts = tensor_list(arrays, "stack");
        return tenferro::stack(session_arg(s, "stack"), ts, cpp_axis(axis, ts[0].rank() + 1, "stack"));
      },
      py::arg("s"), py::arg("arrays"), py::arg("axis") = 0, "The tensors joined along a new axis.");
  // Python (..., M, N) is C++ [N, M, ...]: NumPy's lower triangle with offset k is the
  // C++ upper triangle with offset -k.
  m.def(
      "tril",
      [](py::handle s, py::handle a, std::int64_t k) { return tenferro::triu(session_arg(s, "tril"), tensor_arg(a, "tril"), -k); },
      py::arg("s"), py::arg("m"), py::arg("k") = 0, "The lower triangle of the last two axes (zeros above diagonal k).");
  m.def(
      "triu",
      [](py::handle s, py::handle a, std::int64_t k) { return tenferro::tril(session_arg(s, "triu"), tensor_arg(a, "triu"), -k); },
      py::arg("s"), py::arg("m"), py::arg("k") = 0, "The upper triangle of the last two axes (zeros below diagonal k).");

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "reshape",
      [](const Tensor& t, py::args shape) {
        py::object sh = shape.size() == 1 ? py::reinterpret_borrow<py::object>(shape[0]) : py::object(shape);
        return reshaped(nullptr, t, sh, "Tensor.reshape");
      },
      "As tenferro.reshape (a copy, when needed, runs in the current session).");
}

}  // namespace tfpy
