#pragma once
// Shared pieces of the Python bindings (the `tenferro._tenferro` extension).
//
// Note [Reversed axes]
// A Python tensor of shape (d0, ..., dn-1) is the C++ tensor of shape (dn-1, ..., d0)
// with the strides reversed alike. A C-ordered NumPy array is then a compact column-major
// tensor, and a compact C++ result is C-ordered in Python, so:
// - NumPy's broadcasting (aligned at the last axis) is the C++ rule (aligned at the first);
// - Python axis k is C++ axis n-1-k (cpp_axis);
// - an einsum term's labels are the C++ term's labels reversed (einsum.cpp);
// - a batch of matrices (..., M, N) is the C++ (N, M, ...): the trailing-batch C++ call
//   runs on the view with its first two axes swapped (swap_matrix_axes), and its matrix
//   results come back through the same swap, so they are Fortran-ordered in their last
//   two axes (linalg.cpp).
// Nothing is copied by this mapping: every conversion is a view.
#include <pybind11/pybind11.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tfpy {

namespace py = pybind11;
using tenferro::DType;
using tenferro::Scalar;
using tenferro::Session;
using tenferro::Tensor;
namespace ad = tenferro::ad;

// ---------------------------------------------------------------- dtypes
/// The NumPy dtype of a tenferro dtype.
py::dtype numpy_dtype(DType d);
/// The tenferro dtype of a NumPy dtype-like (numpy.float64, "float64", a dtype, a
/// Python type); TypeError (DTypeError) for one tenferro has no counterpart of.
DType dtype_from(py::handle dtype_like, const char* op);

// ---------------------------------------------------------------- axes and shapes
/// Python axis `axis` (negative counts from the end) of a rank-`rank` tensor as the C++
/// axis (Note [Reversed axes]); AxisError naming `op` when out of range.
std::int64_t cpp_axis(std::int64_t axis, int rank, const char* op);
/// Python axes (an int, a sequence of ints, or None: all axes) as sorted C++ axes.
std::vector<std::int64_t> cpp_axes(py::handle axes, int rank, const char* op);
/// A Python shape (an int or a sequence of ints) as the C++ extents (reversed).
std::vector<std::int64_t> cpp_shape(py::handle shape, const char* op);
/// The Python shape of t (its extents reversed).
py::tuple py_shape(const Tensor& t);
/// The C++ view with axes 0 and 1 swapped (a Python batch of matrices (..., M, N) as the
/// C++ trailing-batch [M, N, ...]); t must have rank >= 2.
Tensor swap_matrix_axes(const Tensor& t);

// ---------------------------------------------------------------- arguments
/// The Tensor inside a Python tenferro.Tensor, or nullptr for another object.
const Tensor* as_tensor(py::handle h) noexcept;
/// The EagerTensor inside a Python tenferro.ad.Tensor, or nullptr for another object.
const ad::EagerTensor* as_eager(py::handle h) noexcept;
/// True when e is recorded or carries a tangent (ops take their recorded form); a
/// constant tenferro.ad.Tensor acts as its value.
inline bool is_active(const ad::EagerTensor* e) noexcept { return e && (e->requires_grad() || e->tangent().defined()); }
/// The context of an active eager argument, checked to be alive (RuntimeStateError); a
/// tensor carrying only a tangent uses the innermost context entered on this thread
/// (Note [Eager arguments] in ad.cpp).
ad::Context& eager_context(const ad::EagerTensor& e, const char* op);
/// eager_context, also checked to run on `s` (ArgumentError).
ad::Context& eager_context(const ad::EagerTensor& e, const Session& s, const char* op);
/// h as an active eager tensor (its context, checked against s, in ctx), else null.
const ad::EagerTensor* recorded_arg(py::handle h, const Session& s, const char* op, ad::Context*& ctx);
/// ArgumentError unless out is None (recorded ops write their own results).
void refuse_out(py::handle out, const char* op);
/// An argument of a recorded op: a tenferro.ad.Tensor as it is, anything else (a
/// tensor, an array, a Python scalar) as a constant.
ad::EagerTensor eager_arg(py::handle h, const char* op);
/// The recorded view of a Python batch of matrices as the C++ [M, N, ...] (a copy: the
/// eager layer records transposes as ops).
ad::EagerTensor eager_swap(ad::Context& ctx, const ad::EagerTensor& x);
/// A recorded result as a Python object.
py::object eager_result(ad::EagerTensor&& e);

/// Wraps a NumPy array (or anything numpy.asarray accepts) without copying where NumPy
/// gives an array of a tenferro dtype with element-multiple strides (a copy otherwise);
/// the array stays alive as long as any view of it.
Tensor wrap_numpy(py::handle obj, const char* op);
/// An op argument: a tenferro.Tensor (borrowed), a Python scalar (weak, as in C++), or
/// anything array-like (wrapped with wrap_numpy).
class Arg {
 public:
  Arg(py::handle h, const char* op);
  Arg(const Arg&) = delete;  // may point into itself
  Arg& operator=(const Arg&) = delete;
  /// Makes a scalar argument a rank-0 tensor of its natural dtype (for ops whose operands
  /// are all Python scalars).
  void make_tensor() {
    if (!t_) replace(Tensor::scalar(s_));
  }
  /// Makes this argument the tensor t.
  void replace(Tensor t) {
    owned_ = std::move(t);
    t_ = &owned_;
  }
  bool is_scalar() const noexcept { return t_ == nullptr; }
  /// The eager tensor when the argument is a tenferro.ad.Tensor (its value is tensor()).
  const ad::EagerTensor* eager() const noexcept { return e_; }
  ad::AdOperand ad_operand() const noexcept {
    return e_ ? ad::AdOperand(*e_) : t_ ? ad::AdOperand(*t_) : ad::AdOperand(s_);
  }
  const Tensor& tensor() const noexcept { return *t_; }
  const Scalar& scalar() const noexcept { return s_; }
  tenferro::Operand operand() const noexcept { return t_ ? tenferro::Operand(*t_) : tenferro::Operand(s_); }

 private:
  Tensor owned_;
  const Tensor* t_ = nullptr;
  const ad::EagerTensor* e_ = nullptr;
  Scalar s_;
};
/// The context of the first eager argument among `args` (nullptr when none is eager),
/// checked by eager_context.
ad::Context* eager_context_of(std::initializer_list<const Arg*> args, const Session& s, const char* op);
/// eager_arg of an argument already parsed.
ad::EagerTensor eager_arg(const Arg& a);
/// UnsupportedError naming `op` when `a` is an active eager tensor (an op without a
/// recorded form must not detach its argument silently).
void reject_eager(const Arg& a, const char* op);
/// An argument that must be a tensor: a Python scalar becomes a rank-0 tensor; an active
/// eager tensor is refused as by reject_eager (ops with rules check as_eager first), a
/// constant one gives its value.
Tensor tensor_arg(py::handle h, const char* op);
/// The session argument: a tenferro.Session entered on this thread.
Session& session_arg(py::handle s, const char* op);

// ---------------------------------------------------------------- the GIL
/// Elementwise work below this many elements runs with the GIL held: releasing and
/// re-taking it costs more than the op (Note [GIL policy] in module.cpp).
inline constexpr std::int64_t kReleaseGilElements = std::int64_t{1} << 14;

/// Runs f() with the GIL released when `release`.
template <class F> decltype(auto) maybe_without_gil(bool release, F&& f) {
  if (!release) return f();
  py::gil_scoped_release nogil;
  return f();
}
/// Runs f() with the GIL released.
template <class F> decltype(auto) without_gil(F&& f) {
  py::gil_scoped_release nogil;
  return f();
}

// ---------------------------------------------------------------- registration
/// NumPy's matmul (a tenferro.ad.Tensor operand records it).
py::object matmul(Session& s, py::handle a, py::handle b, py::handle out);

void register_errors(py::module_& m);
void register_tensor(py::module_& m);
void register_dlpack(py::module_& m);
void register_session(py::module_& m);
void register_elementwise(py::module_& m);
void register_reductions(py::module_& m);
void register_structural(py::module_& m);
void register_einsum(py::module_& m);
void register_linalg(py::module_& linalg);
void register_ad(py::module_& ad);
void register_fft(py::module_& fft);

}  // namespace tfpy
