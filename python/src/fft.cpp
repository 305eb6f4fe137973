// tenferro.fft: numpy.fft's transforms (fft, ifft, rfft, irfft, fftn, ifftn, rfftn,
// irfftn, fft2, ifft2, rfft2, irfft2) on FFTW, with NumPy's n/s, axis/axes and norm.
#include "bind.hpp"

namespace tfpy {

namespace {

using Fft1 = Tensor (*)(Session&, const Tensor&, const tenferro::FftOptions&);
using FftN = Tensor (*)(Session&, const Tensor&, const tenferro::FftnOptions&);
using AdFft1 = ad::EagerTensor (*)(ad::Context&, const ad::EagerTensor&, const tenferro::FftOptions&);
using AdFftN = ad::EagerTensor (*)(ad::Context&, const ad::EagerTensor&, const tenferro::FftnOptions&);

// fn(s, a, o), or its recorded form on an eager a (Note [Eager arguments]).
template <class Fn, class AdFn, class Options>
py::object run_fft(Session& s, const Arg& a, Fn fn, AdFn afn, const Options& o, const char* name) {
  if (a.eager()) return eager_result(afn(eager_context(*a.eager(), s, name), *a.eager(), o));
  return py::cast(without_gil([&] { return fn(s, a.tensor(), o); }));
}

tenferro::FftNorm norm_of(py::handle norm, const char* op) {
  if (norm.is_none()) return tenferro::FftNorm::backward;
  const auto n = norm.cast<std::string>();
  if (n == "backward") return tenferro::FftNorm::backward;
  if (n == "ortho") return tenferro::FftNorm::ortho;
  if (n == "forward") return tenferro::FftNorm::forward;
  throw tenferro::ArgumentError(op, "norm '" + n + "' is not 'backward', 'ortho' or 'forward'");
}

void def_fft1(py::module_& f, const char* name, Fft1 fn, AdFft1 afn, const char* doc) {
  f.def(
      name,
      [fn, afn, name](py::handle s_, py::handle a_, std::optional<std::int64_t> n, std::int64_t axis, py::handle norm) {
        Session& s = session_arg(s_, name);
        Arg a(a_, name);
        a.make_tensor();
        tenferro::FftOptions o;
        o.n = n;
        o.axis = cpp_axis(axis, a.tensor().rank(), name);
        o.norm = norm_of(norm, name);
        return run_fft(s, a, fn, afn, o, name);
      },
      py::arg("s"), py::arg("a"), py::arg("n") = py::none(), py::arg("axis") = -1, py::arg("norm") = py::none(), doc);
}

void def_fftn(py::module_& f, const char* name, FftN fn, AdFftN afn, bool two_d, const char* doc) {
  f.def(
      name,
      [fn, afn, name, two_d](py::handle s_, py::handle a_, py::handle shape, py::handle axes, py::handle norm) {
        Session& s = session_arg(s_, name);
        Arg a(a_, name);
        a.make_tensor();
        const int r = a.tensor().rank();
        std::vector<std::int64_t> py_axes, lengths;
        if (!shape.is_none()) lengths = shape.cast<std::vector<std::int64_t>>();
        if (!axes.is_none()) {
          py_axes = axes.cast<std::vector<std::int64_t>>();
        } else if (two_d) {
          py_axes = {-2, -1};
        } else {  // NumPy: every axis, or the last len(s) ones
          const int k = shape.is_none() ? r : static_cast<int>(lengths.size());
          for (int i = r - k; i < r; ++i) py_axes.push_back(i);
        }
        if (!lengths.empty() && lengths.size() != py_axes.size())
          throw tenferro::ArgumentError(name, "s and axes must have the same length");
        tenferro::FftnOptions o;
        for (std::int64_t ax : py_axes) o.axes.push_back(cpp_axis(ax, r, name));
        for (std::int64_t n : lengths) o.n.push_back(n);
        o.norm = norm_of(norm, name);
        return run_fft(s, a, fn, afn, o, name);
      },
      py::arg("s"), py::arg("a"), py::arg("shape") = py::none(), py::arg("axes") = py::none(), py::arg("norm") = py::none(),
      doc);
}

}  // namespace

void register_fft(py::module_& f) {
  f.doc() = "Discrete Fourier transforms with numpy.fft's names, signatures and defaults (FFTW).";
  def_fft1(f, "fft", &tenferro::fft, &ad::fft, "One-dimensional DFT along axis (default: the last); real input is promoted.");
  def_fft1(f, "ifft", &tenferro::ifft, &ad::ifft, "One-dimensional inverse DFT.");
  def_fft1(f, "rfft", &tenferro::rfft, &ad::rfft, "DFT of real input: n//2 + 1 values along axis.");
  def_fft1(f, "irfft", &tenferro::irfft, &ad::irfft, "Inverse of rfft: n real values (default n = 2 (m - 1)).");
  const char* nd = "over axes (default: all, or the last len(shape)); shape: the lengths (NumPy's `s`).";
  def_fftn(f, "fftn", &tenferro::fftn, &ad::fftn, false, nd);
  def_fftn(f, "ifftn", &tenferro::ifftn, &ad::ifftn, false, nd);
  def_fftn(f, "rfftn", &tenferro::rfftn, &ad::rfftn, false, nd);
  def_fftn(f, "irfftn", &tenferro::irfftn, &ad::irfftn, false, nd);
  const char* d2 = "over the last two axes (or axes).";
  def_fftn(f, "fft2", &tenferro::fftn, &ad::fftn, true, d2);
  def_fftn(f, "ifft2", &tenferro::ifftn, &ad::ifftn, true, d2);
  def_fftn(f, "rfft2", &tenferro::rfftn, &ad::rfftn, true, d2);
  def_fftn(f, "irfft2", &tenferro::irfftn, &ad::irfftn, true, d2);
}

}  // namespace tfpy
