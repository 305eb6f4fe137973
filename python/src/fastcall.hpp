#pragma once
// Note [Fast calls]
// pybind11's dispatcher (argument casters, keyword matching, overload resolution) costs
// a few hundred nanoseconds a call, as much as a 2x2 op itself. The ops a sweep calls by
// the thousand (elementwise, einsum) are therefore plain CPython METH_FASTCALL functions:
// `self` is a capsule holding the op's entry, the arguments are parsed by hand, and C++
// exceptions go through the translators pybind11 has registered (errors.cpp), so the
// Python-visible behaviour is the same as for the pybind11 functions.
#include "bind.hpp"

namespace tfpy {

/// The positional arguments and the `out` keyword of a fast call.
struct FastArgs {
  PyObject* const* pos = nullptr;
  Py_ssize_t npos = 0;
  PyObject* out = Py_None;
};

/// Parses `name(p0, ..., p{n-1}[, out], *, out=None)`: exactly `n` positional arguments
/// (or n + 1, the last one being out) and no keyword but `out`. TypeError otherwise.
inline FastArgs parse_fast(const char* name, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, Py_ssize_t n) {
  FastArgs a;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  a.pos = args;
  a.npos = nargs;
  if (nargs == n + 1) {
    a.out = args[n];
    a.npos = n;
  } else if (nargs != n) {
    throw py::type_error(std::string(name) + "() takes " + std::to_string(n) + " positional arguments but " +
                         std::to_string(nargs) + " were given");
  }
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(key, "out") != 0 || nargs == n + 1)
      throw py::type_error(std::string(name) + "() got an unexpected keyword argument '" +
                           py::str(key).cast<std::string>() + "'");
    a.out = args[nargs + i];
  }
  return a;
}

/// Runs f() (returning a py::object) and hands its result to CPython; a C++ exception
/// becomes the Python exception pybind11's translators choose.
template <class F> PyObject* guarded(F&& f) noexcept {
  try {
    return f().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    try {
      if (!py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators))
        PyErr_SetString(PyExc_SystemError, "tenferro: an exception no translator handled");
    } catch (...) {
      PyErr_SetString(PyExc_SystemError, "tenferro: an exception translator failed");
    }
  }
  return nullptr;
}

/// Adds a METH_FASTCALL | METH_KEYWORDS function `def->ml_name` to m, with `entry` (kept
/// alive for the process; may be null) as its self, readable with fast_entry<T>(self).
inline void add_fast(py::module_& m, PyMethodDef* def, void* entry) {
  py::object self = entry ? py::object(py::capsule(entry)) : py::object();
  py::object fn = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, self.ptr(), m.attr("__name__").ptr()));
  if (!fn) throw py::error_already_set();
  m.add_object(def->ml_name, fn);
}

template <class T> const T& fast_entry(PyObject* self) { return *static_cast<const T*>(PyCapsule_GetPointer(self, nullptr)); }

/// A process-lifetime PyMethodDef (CPython keeps pointers to it).
inline PyMethodDef* method_def(const char* name, _PyCFunctionFastWithKeywords fn, const std::string& doc) {
  auto* text = new std::string(doc);
  return new PyMethodDef{name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), METH_FASTCALL | METH_KEYWORDS,
                         text->c_str()};
}

}  // namespace tfpy
