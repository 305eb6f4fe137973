// tenferro.Tensor: metadata, NumPy's array interface, basic indexing (views), and the
// constructors (asarray, zeros, ones, empty, full, arange, eye). DLPack is in dlpack.cpp.
#include <climits>

#include "bind.hpp"

namespace tfpy {

namespace {

py::dict array_interface(const Tensor& t) {
  const int r = t.rank();
  const auto item = static_cast<std::int64_t>(tenferro::dtype_size(t.dtype()));
  py::tuple strides(r);
  for (int i = 0; i < r; ++i) strides[i] = py::int_(t.stride(r - 1 - i) * item);
  py::dict d;
  d["shape"] = py_shape(t);
  d["typestr"] = numpy_dtype(t.dtype()).attr("str");
  d["data"] = py::make_tuple(py::int_(reinterpret_cast<std::uintptr_t>(t.data())), py::bool_(t.read_only()));
  d["strides"] = strides;
  d["version"] = 3;
  return d;
}

// One Python index item applied to Python axis `axis` of the view being built.
struct ViewBuilder {
  std::vector<std::int64_t> shape, strides;  // Python order
  std::int64_t offset = 0;                    // elements from the storage start
};

std::int64_t index_int(py::handle h) {
  return py::reinterpret_borrow<py::object>(h).attr("__index__")().cast<std::int64_t>();
}

bool is_int_index(py::handle h) {
  return !PyBool_Check(h.ptr()) && (PyLong_Check(h.ptr()) || py::hasattr(h, "__index__")) &&
         !py::isinstance<py::array>(h) && !as_tensor(h);
}

// Basic indexing (ints, slices, Ellipsis, None) as a strided view; IndexError for
// anything else (advanced indexing: use take, index_select or gather).
Tensor index_view(const Tensor& t, py::handle key) {
  const char* op = "Tensor.__getitem__";
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  const int r = t.rank();
  int consumed = 0, ellipses = 0;
  for (py::handle it : items) {
    if (it.is(py::ellipsis())) ++ellipses;
    else if (!it.is_none()) ++consumed;
  }
  if (ellipses > 1) throw tenferro::IndexError(op, "an index can only have a single ellipsis ('...')");
  if (consumed > r)
    throw tenferro::IndexError(op, "too many indices: " + std::to_string(consumed) + " for a tensor of rank " + std::to_string(r));
  ViewBuilder v;
  v.offset = t.offset();
  int axis = 0;  // next Python axis of t
  auto keep_axis = [&](int a) {
    v.shape.push_back(t.extent(r - 1 - a));
    v.strides.push_back(t.stride(r - 1 - a));
  };
  for (py::handle it : items) {
    if (it.is(py::ellipsis())) {
      for (int k = 0; k < r - consumed; ++k) keep_axis(axis++);
    } else if (it.is_none()) {
      v.shape.push_back(1);
      v.strides.push_back(0);
    } else if (py::isinstance<py::slice>(it)) {
      const std::int64_t n = t.extent(r - 1 - axis), st = t.stride(r - 1 - axis);
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(it.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      const Py_ssize_t len = PySlice_AdjustIndices(static_cast<Py_ssize_t>(n), &start, &stop, step);
      v.shape.push_back(len);
      v.strides.push_back(len > 1 ? st * step : st);
      if (len > 0) v.offset += start * st;
      ++axis;
    } else if (is_int_index(it)) {
      const std::int64_t n = t.extent(r - 1 - axis);
      std::int64_t i = index_int(it);
      if (i < -n || i >= n)
        throw tenferro::IndexError(op, "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                                           " with size " + std::to_string(n));
      if (i < 0) i += n;
      v.offset += i * t.stride(r - 1 - axis);
      ++axis;
    } else {
      throw tenferro::IndexError(op, "only integers, slices, Ellipsis and None are valid indices (got " +
                                         py::str(py::type::of(it)).cast<std::string>() +
                                         "); use take, index_select or gather for advanced indexing");
    }
  }
  while (axis < r) keep_axis(axis++);
  std::reverse(v.shape.begin(), v.shape.end());
  std::reverse(v.strides.begin(), v.strides.end());
  return t.as_strided_view(v.shape, v.strides, v.offset);
}

Scalar first_element(const Tensor& t) { return t.at(std::vector<std::int64_t>(static_cast<std::size_t>(t.rank()), 0)); }

// Shape and dtype arguments of the constructors.
DType dtype_or(py::handle dtype, DType fallback, const char* op) { return dtype.is_none() ? fallback : dtype_from(dtype, op); }

}  // namespace

void register_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", R"doc(A strided tensor (tenferro's C++ Tensor).

Shapes and axes follow NumPy: a tensor of shape (d0, ..., dn-1) is the C++ tensor of
shape (dn-1, ..., d0), so C-ordered NumPy arrays and tenferro results share one memory
layout. numpy.asarray(t) and tenferro.asarray(a) share memory; so do DLPack exchanges.
Results of ops are C-ordered, except linear-algebra matrix results, which are
Fortran-ordered in their last two axes. Views (indexing, .T, transpose, reshape where
possible) share storage with their source.)doc");
  cls.def_property_readonly("shape", &py_shape, "The shape (a tuple, NumPy order).")
      .def_property_readonly("ndim", &Tensor::rank, "The number of axes.")
      .def_property_readonly("size", &Tensor::numel, "The number of elements.")
      .def_property_readonly("dtype", [](const Tensor& t) { return numpy_dtype(t.dtype()); }, "The NumPy dtype.")
      .def_property_readonly("itemsize", [](const Tensor& t) { return tenferro::dtype_size(t.dtype()); },
                             "Bytes per element.")
      .def_property_readonly(
          "strides",
          [](const Tensor& t) {
            const int r = t.rank();
            const auto item = static_cast<std::int64_t>(tenferro::dtype_size(t.dtype()));
            py::tuple s(r);
            for (int i = 0; i < r; ++i) s[i] = py::int_(t.stride(r - 1 - i) * item);
            return s;
          },
          "Byte strides (NumPy order and units).")
      .def_property_readonly("readonly", &Tensor::read_only, "True for read-only memory and broadcast views.")
      .def_property_readonly("data_ptr", [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data()); },
                             "Address of the first element (as numpy's `a.ctypes.data`).")
      .def_property_readonly("__array_interface__", &array_interface, "NumPy's array interface (version 3), zero copy.")
      .def_property_readonly(
          "T",
          [](const Tensor& t) {
            std::int64_t perm[tenferro::kMaxRank];
            for (int i = 0; i < t.rank(); ++i) perm[i] = t.rank() - 1 - i;
            return t.permute_view(std::span<const std::int64_t>(perm, static_cast<std::size_t>(t.rank())));
          },
          "The view with the axes reversed.")
      .def("numpy", [](py::object self) { return py::module_::import("numpy").attr("asarray")(self); },
           "A NumPy array sharing this tensor's memory.")
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0) throw py::type_error("len() of a rank-0 tensor");
             return t.extent(t.rank() - 1);
           })
      .def("__getitem__", &index_view, py::arg("key"), "Basic indexing (ints, slices, Ellipsis, None) as a view.")
      .def("__setitem__",
           [](const Tensor& t, py::handle key, py::handle value) {
             Tensor dst = index_view(t, key);
             Arg v(value, "Tensor.__setitem__");
             Session& s = tenferro::current_session();
             if (v.is_scalar()) {
               tenferro::copy_into(s, tenferro::Tensor::full(dst.shape(), v.scalar(), dst.dtype()), dst);
             } else {
               tenferro::copy_into(s, v.tensor().broadcast_view(dst.shape()), dst);
             }
           },
           py::arg("key"), py::arg("value"),
           "Writes value (broadcast) into the indexed view, in the current session (inside `with backend.session()`).")
      .def("__repr__",
           [](py::object self) {
             py::object np = py::module_::import("numpy");
             return "tenferro.Tensor(" + py::str(np.attr("array_repr")(np.attr("asarray")(self))).cast<std::string>() + ")";
           })
      .def("__bool__",
           [](const Tensor& t) {
             if (t.numel() != 1) throw py::value_error("the truth value of a tensor with more than one element is ambiguous");
             return first_element(t).to<std::complex<double>>() != std::complex<double>(0.0);
           })
      .def("item",
           [](const Tensor& t) -> py::object {
             if (t.numel() != 1) throw py::value_error("can only convert a tensor of one element to a Python scalar");
             const Scalar v = first_element(t);
             switch (v.kind()) {
               case Scalar::Kind::boolean: return py::bool_(v.to<bool>());
               case Scalar::Kind::integer: return py::int_(v.to<std::int64_t>());
               case Scalar::Kind::floating: return py::float_(v.to<double>());
               case Scalar::Kind::complex: return py::cast(v.to<std::complex<double>>());
             }
             return py::none();
           },
           "The single element as a Python scalar.");

  m.def("asarray",
        [](py::handle obj, py::handle dtype) -> Tensor {
          if (dtype.is_none()) return tensor_arg(obj, "asarray");
          const DType d = dtype_from(dtype, "asarray");
          if (const Tensor* t = as_tensor(obj); t && t->dtype() == d) return *t;
          static const py::handle np_asarray = py::object(py::module_::import("numpy").attr("asarray")).release();  // never released
          return wrap_numpy(np_asarray(py::reinterpret_borrow<py::object>(obj), numpy_dtype(d)), "asarray");
        },
        py::arg("obj"), py::arg("dtype") = py::none(),
        R"doc(A tensor over obj's memory: a tenferro.Tensor is returned as is; a NumPy array (any
strides, any of tenferro's dtypes) is wrapped without copying and kept alive as long as
any view of it; other array-likes go through numpy.asarray first. With a dtype other
than the data's, the data is converted (a copy, through NumPy, as numpy.asarray does).)doc");
  m.def("empty",
        [](py::handle shape, py::handle dtype) {
          return Tensor::empty(cpp_shape(shape, "empty"), dtype_or(dtype, DType::f64, "empty"));
        },
        py::arg("shape"), py::arg("dtype") = py::none(), "An uninitialized C-ordered tensor (default dtype float64).");
  m.def("zeros",
        [](py::handle shape, py::handle dtype) {
          return Tensor::zeros(cpp_shape(shape, "zeros"), dtype_or(dtype, DType::f64, "zeros"));
        },
        py::arg("shape"), py::arg("dtype") = py::none(), "A C-ordered tensor of zeros (default dtype float64).");
  m.def("ones",
        [](py::handle shape, py::handle dtype) {
          return Tensor::ones(cpp_shape(shape, "ones"), dtype_or(dtype, DType::f64, "ones"));
        },
        py::arg("shape"), py::arg("dtype") = py::none(), "A C-ordered tensor of ones (default dtype float64).");
  m.def("full",
        [](py::handle shape, py::handle value, py::handle dtype) {
          Arg v(value, "full");
          if (!v.is_scalar()) throw tenferro::ArgumentError("full", "fill_value must be a Python scalar");
          return Tensor::full(cpp_shape(shape, "full"), v.scalar(), dtype_or(dtype, v.scalar().natural_dtype(), "full"));
        },
        py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(),
        "A C-ordered tensor filled with fill_value (dtype: fill_value's by default, as NumPy).");
  m.def("arange",
        [](py::handle start, py::handle stop, py::handle step, py::handle dtype) {
          Arg a(start, "arange"), b(stop.is_none() ? start : stop, "arange"), c(step, "arange");
          if (!a.is_scalar() || !b.is_scalar() || !c.is_scalar())
            throw tenferro::ArgumentError("arange", "start, stop and step must be Python scalars");
          Scalar lo = stop.is_none() ? Scalar(std::int64_t{0}) : a.scalar();
          const bool all_int = lo.kind() == Scalar::Kind::integer && b.scalar().kind() == Scalar::Kind::integer &&
                               c.scalar().kind() == Scalar::Kind::integer;
          return Tensor::arange(lo, b.scalar(), c.scalar(), dtype_or(dtype, all_int ? DType::i64 : DType::f64, "arange"));
        },
        py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::arg("dtype") = py::none(),
        "Evenly spaced values in [start, stop) (NumPy's arange; int64 for integer arguments, else float64).");
  m.def("eye",
        [](std::int64_t n, std::optional<std::int64_t> m_cols, py::handle dtype) {
          // Python (n, m) is C++ [m, n]: the identity is its own transpose.
          const std::int64_t cols = m_cols.value_or(n);
          return Tensor::eye(cols, dtype_or(dtype, DType::f64, "eye"), n);
        },
        py::arg("N"), py::arg("M") = py::none(), py::arg("dtype") = py::none(), "The N x M identity (default M = N).");
}

}  // namespace tfpy
