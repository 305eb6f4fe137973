// tenferro's typed errors as Python exceptions that subclass the matching builtins:
//   Error(Exception)                      the base of every tenferro error
//   ShapeError, RankError, ArgumentError  (Error, ValueError)
//   DTypeError                            (Error, TypeError)
//   AxisError, IndexError                 (Error, IndexError)
//   UnsupportedError                      (Error, NotImplementedError)
//   NumericalError, BackendError, RuntimeStateError, SessionEntryError, InternalError
//                                         (Error, RuntimeError)
// The message is the C++ one (it names the op and the values). NumericalError carries
// `info` (LAPACK's), SessionEntryError `kind` (e.g. "Contended", "Poisoned").
#include "bind.hpp"

namespace tfpy {

namespace {

struct PyErrors {
  PyObject *error, *shape, *rank, *axis, *dtype, *argument, *index, *unsupported, *numerical, *backend, *runtime_state,
      *session_entry, *internal;
};
PyErrors g_errors{};

PyObject* make(py::module_& m, const char* name, PyObject* base, PyObject* builtin, const char* doc) {
  py::tuple bases = builtin ? py::make_tuple(py::handle(base), py::handle(builtin)) : py::make_tuple(py::handle(base));
  std::string qual = std::string("tenferro.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases.ptr(), nullptr);
  if (!e) throw py::error_already_set();
  m.add_object(name, py::handle(e));
  return e;
}

void raise(PyObject* type, const std::exception& e) { PyErr_SetString(type, e.what()); }

}  // namespace

void register_errors(py::module_& m) {
  PyErrors& g = g_errors;
  g.error = make(m, "Error", PyExc_Exception, nullptr, "Base of every tenferro error.");
  g.shape = make(m, "ShapeError", g.error, PyExc_ValueError, "Shapes that do not fit the op.");
  g.rank = make(m, "RankError", g.error, PyExc_ValueError, "A rank the op does not take.");
  g.argument = make(m, "ArgumentError", g.error, PyExc_ValueError, "An argument outside the op's domain.");
  g.dtype = make(m, "DTypeError", g.error, PyExc_TypeError, "A dtype the op does not take.");
  g.axis = make(m, "AxisError", g.error, PyExc_IndexError, "An axis out of range.");
  g.index = make(m, "IndexError", g.error, PyExc_IndexError, "An index out of range.");
  g.unsupported = make(m, "UnsupportedError", g.error, PyExc_NotImplementedError, "Not supported here.");
  g.numerical = make(m, "NumericalError", g.error, PyExc_RuntimeError,
                     "A numerical failure (singular matrix, no convergence); `info` is LAPACK's.");
  g.backend = make(m, "BackendError", g.error, PyExc_RuntimeError, "A failure inside a backend library.");
  g.runtime_state = make(m, "RuntimeStateError", g.error, PyExc_RuntimeError, "An object used in the wrong state.");
  g.session_entry = make(m, "SessionEntryError", g.error, PyExc_RuntimeError,
                         "A session not usable here; `kind` says why (e.g. 'Poisoned', 'Contended').");
  g.internal = make(m, "InternalError", g.error, PyExc_RuntimeError, "A broken invariant inside tenferro (a bug).");

  py::register_exception_translator([](std::exception_ptr p) {
    const PyErrors& e = g_errors;
    try {
      std::rethrow_exception(p);
    } catch (const tenferro::ShapeError& x) {
      raise(e.shape, x);
    } catch (const tenferro::RankError& x) {
      raise(e.rank, x);
    } catch (const tenferro::AxisError& x) {
      raise(e.axis, x);
    } catch (const tenferro::DTypeError& x) {
      raise(e.dtype, x);
    } catch (const tenferro::IndexError& x) {
      raise(e.index, x);
    } catch (const tenferro::ArgumentError& x) {
      raise(e.argument, x);
    } catch (const tenferro::ValidationError& x) {
      raise(e.argument, x);
    } catch (const tenferro::UnsupportedError& x) {
      raise(e.unsupported, x);
    } catch (const tenferro::NumericalError& x) {
      py::object err = py::reinterpret_steal<py::object>(PyObject_CallFunction(e.numerical, "s", x.what()));
      if (!err) return;
      err.attr("info") = x.info();
      PyErr_SetObject(e.numerical, err.ptr());
    } catch (const tenferro::SessionEntryError& x) {
      py::object err = py::reinterpret_steal<py::object>(PyObject_CallFunction(e.session_entry, "s", x.what()));
      if (!err) return;
      err.attr("kind") = std::string(tenferro::session_entry_kind_name(x.kind()));
      PyErr_SetObject(e.session_entry, err.ptr());
    } catch (const tenferro::BackendError& x) {
      raise(e.backend, x);
    } catch (const tenferro::RuntimeStateError& x) {
      raise(e.runtime_state, x);
    } catch (const tenferro::InternalError& x) {
      raise(e.internal, x);
    } catch (const tenferro::Error& x) {
      raise(e.error, x);
    }
  });
}

}  // namespace tfpy
