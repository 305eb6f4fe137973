#pragma once
// Shared by the C ABI's sources (src/capi/*.cpp): the handle types behind the opaque
// pointers of tenferro/c/tenferro.h, the one error-translation wrapper, and the
// argument helpers every C function uses.
//
// Note [C ABI error boundary]
// Every C function body is `return guard([&] { ... });`. guard runs the lambda and
// maps any exception to a status: translate_current_exception() rethrows the live
// exception inside one try block that catches the tenferro error classes from the most
// derived up (UnsupportedAdRule before UnsupportedError, the validation classes before
// ValidationError), std::bad_alloc, std::exception and anything else, and stores the
// status and the unchanged what() text in thread-local state. Keeping the catch list
// in one out-of-line function (rather than in the template) keeps each C function
// small. The lambdas validate every pointer before they run anything and write the
// out-pointers last, after everything that can fail, so a failed call leaves them
// untouched.
#include "core/internal_check.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/c/tenferro.h"
#include "tenferro/cpu_backend.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/error.hpp"
#include "tenferro/tensor.hpp"

/// tf_backend: owns a CpuBackend (neither copyable nor movable, so built in place).
struct tf_backend {
  explicit tf_backend(tenferro::CpuBackendOptions options) : backend(std::move(options)) {}
  tenferro::CpuBackend backend;
};
/// tf_session: a held session (thread-affine, as in C++).
struct tf_session {
  tenferro::HeldSession session;
};
/// tf_tensor: one Tensor handle; views share the storage block, whose reference count
/// keeps owned and wrapped memory alive.
struct tf_tensor {
  tenferro::Tensor tensor;
};
/// tf_einsum_plan: a prepared einsum.
struct tf_einsum_plan {
  tenferro::EinsumPlan plan;
};

namespace tenferro::capi {

/// Maps the exception being handled to a status and records it as the thread's last
/// error (Note [C ABI error boundary]). Call only inside a catch block. Never throws.
tf_status translate_current_exception() noexcept;

/// Runs `f` and returns TF_OK, or the status of the exception it threw.
template <class F>
tf_status guard(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return TF_OK;
  } catch (...) {
    return translate_current_exception();
  }
}

/// Throws ArgumentError("<op>: <what> is null").
[[noreturn]] void throw_null(const char* op, const char* what);

/// `p` itself, or ArgumentError when it is null.
template <class T>
T* need(T* p, const char* op, const char* what) {
  if (p == nullptr) throw_null(op, what);
  return p;
}
/// The session behind a handle (ArgumentError for null).
inline Session& session_of(tf_session* s, const char* op) { return need(s, op, "session")->session; }
/// The tensor behind a handle (ArgumentError for null).
inline const Tensor& tensor_of(const tf_tensor* t, const char* op, const char* what) { return need(t, op, what)->tensor; }
/// `n` int64 values at `p` (null allowed only when n is 0).
inline std::span<const std::int64_t> int_array(const std::int64_t* p, std::size_t n, const char* op, const char* what) {
  if (n == 0) return {};
  return {need(p, op, what), n};
}
/// The C dtype as a DType; DTypeError for a value outside the enum.
DType to_dtype(tf_dtype d, const char* op);
/// The DType as the C enum (same values).
inline tf_dtype from_dtype(DType d) noexcept { return static_cast<tf_dtype>(static_cast<int>(d)); }

/// The operand handles as Tensors (copies of the handles: one reference each).
std::vector<Tensor> operand_list(const tf_tensor* const* operands, std::size_t n, const char* op);

/// Stores a new handle for `t` in `*out` (the last step of a call: on bad_alloc `*out`
/// stays untouched).
inline void publish(tf_tensor** out, Tensor t) { *out = new tf_tensor{std::move(t)}; }

/// Checks that multi-output out-pointers are non-null and pairwise distinct (a repeated
/// pointer would leak a handle). ArgumentError otherwise.
void check_outputs(std::initializer_list<tf_tensor**> outs, std::initializer_list<const char*> names, const char* op);
/// Publishes several results at once: every handle is allocated before any out-pointer
/// is written, so a failure leaves all of them untouched.
void publish_all(std::initializer_list<tf_tensor**> outs, std::initializer_list<Tensor*> results);

/// Writes `values` to `dst` (capacity entries); ArgumentError when they do not fit.
void write_dims(std::span<const std::int64_t> values, std::int64_t* dst, std::size_t capacity, const char* op,
                const char* what);

}  // namespace tenferro::capi
