// The extension module tenferro._tenferro; python/tenferro/__init__.py re-exports it.
//
// Note [GIL policy]
// Ops release the GIL while they run, so other Python threads (each with its own
// backend, or waiting for one) proceed. Releasing and re-taking it costs about 100 ns,
// more than a small elementwise op or reduction takes, so those keep it below
// kReleaseGilElements (16384) elements; einsum releases it from that many operand
// elements on, linear algebra and FFT always. Entering a session waits for admission
// with the GIL released. Nothing the C++ layer calls while the GIL is released touches
// Python objects, except the release callbacks of wrapped NumPy and DLPack memory,
// which take the GIL themselves.
#include "bind.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_tenferro, m) {
  m.doc() = "tenferro: a tensor engine for tensor networks (the C++ core's bindings).";
  tfpy::register_errors(m);
  tfpy::register_tensor(m);
  py::module_ ad = m.def_submodule("ad");
  tfpy::register_ad(ad);  // before the ops, whose operators defer to its Tensor class
  tfpy::register_dlpack(m);
  tfpy::register_session(m);
  tfpy::register_elementwise(m);
  tfpy::register_reductions(m);
  tfpy::register_structural(m);
  tfpy::register_einsum(m);
  py::module_ linalg = m.def_submodule("linalg");
  tfpy::register_linalg(linalg);
  py::module_ fft = m.def_submodule("fft");
  tfpy::register_fft(fft);
}
