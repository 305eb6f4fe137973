// Dtypes, axes, shapes and op arguments between Python and the C++ layer
// (Note [Reversed axes] in bind.hpp).
#include <algorithm>
#include <array>

#include "bind.hpp"

namespace tfpy {

namespace {

constexpr std::array<const char*, tenferro::kNumDTypes> kNumpyNames = {"bool", "int32", "int64", "float32",
                                                                       "float64", "complex64", "complex128"};

std::string py_repr(py::handle h) { return py::str(py::repr(h)).cast<std::string>(); }

void release_pyobject(void* p) {
  if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing to release into
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(p));
  PyGILState_Release(g);
}

}  // namespace

py::dtype numpy_dtype(DType d) {
  static const std::array<py::dtype, tenferro::kNumDTypes>* dtypes = [] {
    auto* a = new std::array<py::dtype, tenferro::kNumDTypes>;  // lives as long as the process
    for (int i = 0; i < tenferro::kNumDTypes; ++i) (*a)[i] = py::dtype(kNumpyNames[i]);
    return a;
  }();
  return (*dtypes)[static_cast<int>(d)];
}

namespace {
// The tenferro dtype of a NumPy dtype, or nullopt.
std::optional<DType> match_dtype(const py::dtype& dt) {
  if (!dt.attr("isnative").cast<bool>()) return std::nullopt;
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b': return size == 1 ? std::optional(DType::b8) : std::nullopt;
    case 'i': return size == 4 ? std::optional(DType::i32) : size == 8 ? std::optional(DType::i64) : std::nullopt;
    case 'f': return size == 4 ? std::optional(DType::f32) : size == 8 ? std::optional(DType::f64) : std::nullopt;
    case 'c': return size == 8 ? std::optional(DType::c64) : size == 16 ? std::optional(DType::c128) : std::nullopt;
    default: return std::nullopt;
  }
}
}  // namespace

DType dtype_from(py::handle dtype_like, const char* op) {
  py::dtype dt;
  try {
    dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype_like));
  } catch (py::error_already_set&) {
    throw tenferro::DTypeError(op, py_repr(dtype_like) + " is not a dtype");
  }
  if (auto d = match_dtype(dt)) return *d;
  throw tenferro::DTypeError(op, "dtype " + py_repr(dt) +
                                     " has no tenferro counterpart (bool, int32, int64, float32, float64, complex64, "
                                     "complex128 in native byte order)");
}

std::int64_t cpp_axis(std::int64_t axis, int rank, const char* op) {
  if (axis < -rank || axis >= rank)
    throw tenferro::AxisError(op, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                                      std::to_string(rank));
  if (axis < 0) axis += rank;
  return rank - 1 - axis;
}

std::vector<std::int64_t> cpp_axes(py::handle axes, int rank, const char* op) {
  std::vector<std::int64_t> out;
  if (axes.is_none()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  if (py::isinstance<py::int_>(axes)) {
    out.push_back(cpp_axis(axes.cast<std::int64_t>(), rank, op));
    return out;
  }
  for (py::handle a : axes) out.push_back(cpp_axis(a.cast<std::int64_t>(), rank, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw tenferro::AxisError(op, "repeated axis in " + py_repr(axes));
  return out;
}

std::vector<std::int64_t> cpp_shape(py::handle shape, const char* op) {
  std::vector<std::int64_t> out;
  if (py::isinstance<py::int_>(shape)) {
    out.push_back(shape.cast<std::int64_t>());
  } else {
    try {
      for (py::handle e : shape) out.push_back(e.cast<std::int64_t>());
    } catch (py::cast_error&) {
      throw tenferro::ArgumentError(op, "shape " + py_repr(shape) + " is not a sequence of integers");
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

py::tuple py_shape(const Tensor& t) {
  const int r = t.rank();
  py::tuple out(r);
  for (int i = 0; i < r; ++i) out[i] = py::int_(t.extent(r - 1 - i));
  return out;
}

Tensor swap_matrix_axes(const Tensor& t) {
  std::int64_t perm[tenferro::kMaxRank];
  for (int i = 0; i < t.rank(); ++i) perm[i] = i;
  std::swap(perm[0], perm[1]);
  return t.permute_view(std::span<const std::int64_t>(perm, static_cast<std::size_t>(t.rank())));
}

const Tensor* as_tensor(py::handle h) noexcept {
  static PyTypeObject* type = nullptr;
  if (!type) type = reinterpret_cast<PyTypeObject*>(py::detail::get_type_handle(typeid(Tensor), false).ptr());
  if (!type || !PyObject_TypeCheck(h.ptr(), type)) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
  return static_cast<const Tensor*>(inst->simple_layout ? inst->simple_value_holder[0]
                                                        : inst->get_value_and_holder().value_ptr());
}

Tensor wrap_numpy(py::handle obj, const char* op) {
  // Handles that are never released: a static py::object would be destroyed after the
  // interpreter has finalized.
  static const py::handle asarray = py::object(py::module_::import("numpy").attr("asarray")).release();
  static const py::handle ascontiguous = py::object(py::module_::import("numpy").attr("ascontiguousarray")).release();
  py::array arr = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                                 : py::reinterpret_steal<py::array>(asarray(obj).release());
  auto d = match_dtype(arr.dtype());
  if (!d) dtype_from(arr.dtype(), op);  // throws the DTypeError
  const int rank = static_cast<int>(arr.ndim());
  if (rank > tenferro::kMaxRank)
    throw tenferro::RankError(op, "rank " + std::to_string(rank) + " is above the maximum " + std::to_string(tenferro::kMaxRank));
  const auto item = static_cast<std::int64_t>(arr.itemsize());
  bool element_strides = true;
  for (int i = 0; i < rank; ++i) element_strides = element_strides && arr.strides(i) % item == 0;
  if (!element_strides) arr = py::reinterpret_steal<py::array>(ascontiguous(arr).release());  // e.g. a structured field
  std::int64_t shape[tenferro::kMaxRank], strides[tenferro::kMaxRank];
  for (int i = 0; i < rank; ++i) {
    shape[rank - 1 - i] = arr.shape(i);
    strides[rank - 1 - i] = arr.strides(i) / item;
  }
  const bool writeable = arr.writeable();
  void* data = const_cast<void*>(arr.data());
  PyObject* keep = arr.ptr();
  Tensor t = Tensor::from_external(data, std::span<const std::int64_t>(shape, static_cast<std::size_t>(rank)),
                                   std::span<const std::int64_t>(strides, static_cast<std::size_t>(rank)), *d,
                                   tenferro::ExternalOwner{keep, &release_pyobject, !writeable});
  Py_INCREF(keep);  // released by release_pyobject when the last view is gone
  return t;
}

Arg::Arg(py::handle h, const char* op) {
  if ((t_ = as_tensor(h))) return;
  if ((e_ = as_eager(h))) {
    t_ = &e_->value();
    return;
  }
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    s_ = Scalar(o == Py_True);
  } else if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw tenferro::ArgumentError(op, "integer " + py_repr(h) + " does not fit in int64");
    s_ = Scalar(static_cast<std::int64_t>(v));
  } else if (PyFloat_CheckExact(o)) {
    s_ = Scalar(PyFloat_AS_DOUBLE(o));
  } else if (PyComplex_CheckExact(o)) {
    s_ = Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  } else {
    owned_ = wrap_numpy(h, op);
    t_ = &owned_;
  }
}

namespace {
[[noreturn]] void throw_unrecorded(const char* op) {
  throw tenferro::UnsupportedError(op, "this op is not recorded for tenferro.ad.Tensor arguments in Python; pass "
                                       "x.value for a constant (no gradient flows through it)");
}
}  // namespace

void reject_eager(const Arg& a, const char* op) {
  if (is_active(a.eager())) throw_unrecorded(op);
}

Tensor tensor_arg(py::handle h, const char* op) {
  if (const Tensor* t = as_tensor(h)) return *t;
  if (const ad::EagerTensor* e = as_eager(h)) {  // never detach silently: ops with rules take their recorded form first
    if (is_active(e)) throw_unrecorded(op);
    return e->value();
  }
  Arg a(h, op);
  return a.is_scalar() ? Tensor::scalar(a.scalar()) : a.tensor();
}

}  // namespace tfpy
