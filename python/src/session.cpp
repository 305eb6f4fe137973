// tenferro.CpuBackend and tenferro.Session (a held session as a context manager).
//
// Ops take the session explicitly: `with backend.session() as s: tenferro.add(s, a, b)`.
// Inside the block the session is also the thread's current one (C++'s
// current_session()), which the operator sugar (`a + b`) uses; nothing ever opens a
// session implicitly. A session belongs to the thread that entered it. Entering waits
// (FIFO) while another session holds the backend's CPUs, with the GIL released, so other
// Python threads run meanwhile.
#include "bind.hpp"

namespace tfpy {

namespace {

struct PyBackend {
  tenferro::CpuBackend backend;
  explicit PyBackend(tenferro::CpuBackendOptions o) : backend(std::move(o)) {}
};

struct PySession {
  py::object backend;  // keeps the PyBackend alive while the session exists
  std::optional<tenferro::HeldSession> held;
  bool try_only = false;
};

PyTypeObject* g_session_type = nullptr;

PySession& enter(PySession& s) {
  if (s.held && s.held->is_open())
    throw tenferro::SessionEntryError(tenferro::SessionEntryKind::Reentered, "Session.__enter__",
                                      "this session is already entered");
  auto& b = s.backend.cast<PyBackend&>().backend;
  // Waiting for admission must not hold the GIL: the session's holder may need it to finish.
  tenferro::HeldSession h = without_gil([&] { return s.try_only ? b.try_open_session() : b.open_session(); });
  s.held.emplace(std::move(h));
  return s;
}

void close(PySession& s) {
  if (s.held) {
    s.held->close();
    s.held.reset();
  }
}

}  // namespace

Session& session_arg(py::handle h, const char* op) {
  if (g_session_type && PyObject_TypeCheck(h.ptr(), g_session_type)) {
    auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
    auto* s = static_cast<PySession*>(inst->simple_layout ? inst->simple_value_holder[0]
                                                          : inst->get_value_and_holder().value_ptr());
    if (s && s->held) return *s->held;
    throw tenferro::SessionEntryError(tenferro::SessionEntryKind::Poisoned, op,
                                      "the session is not entered (use `with backend.session() as s:`)");
  }
  throw tenferro::ArgumentError(op, "the first argument must be a tenferro.Session (got " +
                                        py::str(py::type::of(h)).cast<std::string>() + ")");
}

void register_session(py::module_& m) {
  py::class_<PyBackend>(m, "CpuBackend", R"doc(The CPU backend: a set of CPUs, a worker pool and per-session caches.

CpuBackend(num_threads=None, cpus=None, pool_byte_limit=a quarter of physical memory).
num_threads: the threads one session may use (default: TENFERRO_NUM_THREADS,
OMP_NUM_THREADS, or the CPUs in the affinity mask); cpus: the CPU ids its sessions are
admitted to; pool_byte_limit: the most bytes of freed buffers kept for reuse (within it,
at most the larger of 100 MiB and twice the most bytes the pool's buffers held in
use at once; 0: none).)doc")
      .def(py::init([](std::optional<int> num_threads, std::optional<std::vector<int>> cpus, std::size_t pool_limit) {
             tenferro::CpuBackendOptions o;
             if (num_threads) {
               if (*num_threads < 1)
                 throw tenferro::ArgumentError("CpuBackend", "num_threads must be >= 1 (got " + std::to_string(*num_threads) + ")");
               o.num_threads = *num_threads;
             }
             if (cpus) o.cpus = *cpus;
             o.pool_byte_limit = pool_limit;
             return new PyBackend(std::move(o));
           }),
           py::arg("num_threads") = py::none(), py::arg("cpus") = py::none(),
           py::arg("pool_byte_limit") = tenferro::default_pool_byte_limit())
      .def_property_readonly("num_threads", [](const PyBackend& b) { return b.backend.num_threads(); },
                             "Threads a session of this backend may use.")
      .def_property_readonly("cpus", [](const PyBackend& b) { return b.backend.cpus(); }, "The CPU ids.")
      .def(
          "session", [](py::object self) { return PySession{self, std::nullopt, false}; },
          "A session to enter with `with`: it waits (FIFO, GIL released) while another session holds the CPUs.")
      .def(
          "try_session", [](py::object self) { return PySession{self, std::nullopt, true}; },
          "As session(), but entering raises SessionEntryError (kind 'Contended') instead of waiting.")
      .def("trim_pool", [](PyBackend& b) { b.backend.trim_pool(); }, "Frees the buffer pool's cached blocks.")
      .def("__repr__", [](const PyBackend& b) {
        return "tenferro.CpuBackend(num_threads=" + std::to_string(b.backend.num_threads()) + ")";
      });

  py::class_<PySession> session(m, "Session", R"doc(A held session: the capability to run ops.

Use as `with backend.session() as s:`; ops take it as their first argument. Bound to
the thread that entered it; closed when the block ends (using it afterwards raises
SessionEntryError, kind 'Poisoned').)doc");
  session.def("__enter__", &enter, py::return_value_policy::reference)
      .def("__exit__", [](PySession& s, py::handle, py::handle, py::handle) { close(s); })
      .def("close", &close, "Ends the session (as leaving the with block).")
      .def_property_readonly("is_open", [](const PySession& s) { return s.held && s.held->is_open(); },
                             "True between entering and closing.")
      .def_property_readonly(
          "num_threads", [](const PySession& s) { return s.held ? s.held->num_threads() : 0; },
          "Threads this session's ops may use.");
  g_session_type = reinterpret_cast<PyTypeObject*>(session.ptr());
}

}  // namespace tfpy
