// DLPack exchange (Debian's libdlpack-dev header, DLPack 0.6): Tensor.__dlpack__,
// Tensor.__dlpack_device__ and tenferro.from_dlpack, zero copy both ways.
#include <dlpack/dlpack.h>

#include "bind.hpp"
#include "dlpack_import.hpp"

namespace tfpy {

namespace {

using dlpack::kDLBoolCode;

DLDataType dl_dtype(DType d) {
  const auto bits = static_cast<std::uint8_t>(8 * tenferro::dtype_size(d));
  switch (d) {
    case DType::b8: return {kDLBoolCode, 8, 1};
    case DType::i32:
    case DType::i64: return {kDLInt, bits, 1};
    case DType::f32:
    case DType::f64: return {kDLFloat, bits, 1};
    case DType::c64:
    case DType::c128: return {kDLComplex, bits, 1};
  }
  return {kDLFloat, 64, 1};
}

// What a capsule we export owns: the tensor (its storage) and the shape arrays.
struct Exported {
  Tensor t;
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor managed{};
};

void delete_exported(DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); }

void capsule_destructor(PyObject* cap) {
  // Still named "dltensor": nobody consumed it, so it is ours to delete.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

py::capsule to_dlpack(const Tensor& t, py::handle stream) {
  if (!stream.is_none() && !(py::isinstance<py::int_>(stream) && stream.cast<long>() == -1))
    throw tenferro::ArgumentError("__dlpack__", "stream must be None for a CPU tensor");
  // As NumPy: DLPack has no read-only flag, so exporting read-only memory would allow writes.
  if (t.read_only()) throw py::buffer_error("__dlpack__: the tensor is read-only (DLPack cannot mark it so)");
  auto* e = new Exported{t, {}, {}, {}};
  const int r = t.rank();
  for (int i = r - 1; i >= 0; --i) {  // Note [Reversed axes]
    e->shape.push_back(t.extent(i));
    e->strides.push_back(t.stride(i));
  }
  DLTensor& d = e->managed.dl_tensor;
  d.data = const_cast<void*>(t.data());
  d.device = {kDLCPU, 0};
  d.ndim = r;
  d.dtype = dl_dtype(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &delete_exported;
  PyObject* cap = PyCapsule_New(&e->managed, "dltensor", &capsule_destructor);
  if (!cap) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

void release_managed(void* p) {
  auto* m = static_cast<DLManagedTensor*>(p);
  if (!m->deleter) return;
  // Producers' deleters may touch Python objects (NumPy's does): hold the GIL.
  if (!Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  m->deleter(m);
  PyGILState_Release(g);
}

Tensor from_dlpack(py::object x) {
  const char* op = "from_dlpack";
  py::object cap = x;
  if (py::hasattr(x, "__dlpack__")) {
    if (py::hasattr(x, "__dlpack_device__")) {
      py::tuple dev = x.attr("__dlpack_device__")();
      const int type = dev[0].cast<int>();
      if (type != kDLCPU)
        throw tenferro::UnsupportedError(op, "DLPack device type " + std::to_string(type) +
                                                 " is not the CPU (copy the tensor to host memory first)");
    }
    cap = x.attr("__dlpack__")();
  }
  if (!PyCapsule_CheckExact(cap.ptr()))
    throw tenferro::ArgumentError(op, "expected an object with __dlpack__ or a DLPack capsule");
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw tenferro::ArgumentError(op, "the DLPack capsule was already consumed (or is not named \"dltensor\")");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  // import_dltensor takes nothing on error: the capsule keeps the tensor until renamed.
  Tensor t = dlpack::import_dltensor(m->dl_tensor, tenferro::ExternalOwner{m, &release_managed, false});
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  return t;
}

}  // namespace

void register_dlpack(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__dlpack__", &to_dlpack, py::arg("stream") = py::none(),
          "A DLPack capsule over this tensor's memory (zero copy; the tensor's storage lives as long as the capsule or "
          "its consumer's tensor). BufferError for a read-only tensor, as NumPy.");
  cls.def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); },
          "(kDLCPU, 0): tenferro tensors live in host memory.");
  m.def("from_dlpack", &from_dlpack, py::arg("x"),
        R"doc(A tensor over the memory of x (an object with __dlpack__, e.g. a torch.Tensor or a
NumPy array, or a DLPack capsule), without copying. The producer's memory stays alive
as long as any view of the result; its deleter runs when the last one is gone.)doc");
}

}  // namespace tfpy
