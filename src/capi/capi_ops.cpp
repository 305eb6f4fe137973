// The C ABI's ops on a session: elementwise (binary, unary, scale), reductions and the
// structural ops. Each validates its pointers, calls the C++ op (which validates
// everything else and names itself in the message), and publishes the result last
// (Note [C ABI error boundary] in capi_common.hpp).
#include "capi/capi_common.hpp"

#include <complex>
#include <vector>

#include "tenferro/ops.hpp"
#include "tenferro/structural.hpp"

using namespace tenferro;
using namespace tenferro::capi;

// ------------------------------------------------------------------ elementwise

// tf_<name>(session, a, b, out) over tenferro::<name>(Session&, a, b).
#define TF_CAPI_BINARY(name)                                                                 \
  tf_status tf_##name(tf_session* session, const tf_tensor* a, const tf_tensor* b, tf_tensor** out) { \
    return guard([&] {                                                                       \
      constexpr const char* op = "tf_" #name;                                                \
      Session& s = session_of(session, op);                                                  \
      const Tensor& ta = tensor_of(a, op, "a");                                              \
      const Tensor& tb = tensor_of(b, op, "b");                                              \
      need(out, op, "out");                                                                  \
      publish(out, tenferro::name(s, ta, tb));                                               \
    });                                                                                      \
  }
TF_CAPI_BINARY(add)
TF_CAPI_BINARY(sub)
TF_CAPI_BINARY(mul)
TF_CAPI_BINARY(div)
TF_CAPI_BINARY(maximum)
TF_CAPI_BINARY(minimum)
TF_CAPI_BINARY(pow)
#undef TF_CAPI_BINARY

// tf_<name>(session, x, out) over tenferro::<name>(Session&, x).
#define TF_CAPI_UNARY(name)                                                               \
  tf_status tf_##name(tf_session* session, const tf_tensor* x, tf_tensor** out) {         \
    return guard([&] {                                                                    \
      constexpr const char* op = "tf_" #name;                                             \
      Session& s = session_of(session, op);                                               \
      const Tensor& tx = tensor_of(x, op, "x");                                           \
      need(out, op, "out");                                                               \
      publish(out, tenferro::name(s, tx));                                                \
    });                                                                                   \
  }
TF_CAPI_UNARY(neg)
TF_CAPI_UNARY(conj)
TF_CAPI_UNARY(abs)
TF_CAPI_UNARY(exp)
TF_CAPI_UNARY(log)
TF_CAPI_UNARY(sin)
TF_CAPI_UNARY(cos)
TF_CAPI_UNARY(tanh)
TF_CAPI_UNARY(sqrt)
#undef TF_CAPI_UNARY

tf_status tf_scale(tf_session* session, const tf_tensor* x, double alpha, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_scale";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    need(out, op, "out");
    publish(out, mul(s, tx, Scalar(alpha)));  // a weak scalar: f32 stays f32
  });
}

tf_status tf_scale_complex(tf_session* session, const tf_tensor* x, double alpha_re, double alpha_im, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_scale_complex";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    need(out, op, "out");
    publish(out, mul(s, tx, Scalar(std::complex<double>(alpha_re, alpha_im))));
  });
}

// ------------------------------------------------------------------ reductions

namespace {

// The reduced axes: the given ones, or every axis when `axes` is null.
std::vector<std::int64_t> reduction_axes(const Tensor& x, const std::int64_t* axes, std::size_t n, const char* op) {
  if (axes == nullptr) {
    if (n != 0) throw_null(op, "axes");
    std::vector<std::int64_t> all(static_cast<std::size_t>(x.rank()));
    for (int i = 0; i < x.rank(); ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  return std::vector<std::int64_t>(axes, axes + n);
}

}  // namespace

// tf_<name>(session, x, axes, num_axes, keepdims, out) over tenferro::<name>(s, x, axes, keepdims).
#define TF_CAPI_REDUCTION(name)                                                                          \
  tf_status tf_##name(tf_session* session, const tf_tensor* x, const int64_t* axes, size_t num_axes,     \
                      int keepdims, tf_tensor** out) {                                                   \
    return guard([&] {                                                                                   \
      constexpr const char* op = "tf_" #name;                                                            \
      Session& s = session_of(session, op);                                                              \
      const Tensor& tx = tensor_of(x, op, "x");                                                          \
      need(out, op, "out");                                                                              \
      const std::vector<std::int64_t> ax = reduction_axes(tx, axes, num_axes, op);                       \
      publish(out, tenferro::name(s, tx, std::span<const std::int64_t>(ax), keepdims != 0));             \
    });                                                                                                  \
  }
TF_CAPI_REDUCTION(sum)
TF_CAPI_REDUCTION(prod)
TF_CAPI_REDUCTION(max)
TF_CAPI_REDUCTION(min)
TF_CAPI_REDUCTION(mean)
#undef TF_CAPI_REDUCTION

// ------------------------------------------------------------------ structural

tf_status tf_transpose(tf_session* session, const tf_tensor* x, const int64_t* perm, size_t rank, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_transpose";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    const auto p = int_array(perm, rank, op, "perm");
    need(out, op, "out");
    publish(out, transpose(s, tx, p));
  });
}

tf_status tf_reshape(tf_session* session, const tf_tensor* x, const int64_t* shape, size_t rank, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_reshape";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    const auto sh = int_array(shape, rank, op, "shape");
    need(out, op, "out");
    publish(out, reshape(s, tx, sh));
  });
}

tf_status tf_broadcast_in_dim(tf_session* session, const tf_tensor* x, const int64_t* shape, size_t rank,
                              const int64_t* dims, size_t num_dims, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_broadcast_in_dim";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    const auto sh = int_array(shape, rank, op, "shape");
    const auto d = int_array(dims, num_dims, op, "dims");
    need(out, op, "out");
    publish(out, broadcast_in_dim(s, tx, sh, d));
  });
}

tf_status tf_convert(tf_session* session, const tf_tensor* x, tf_dtype dtype, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_convert";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    const DType dt = to_dtype(dtype, op);
    need(out, op, "out");
    publish(out, convert(s, tx, dt));
  });
}

tf_status tf_cast(tf_session* session, const tf_tensor* x, tf_dtype dtype, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_cast";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    const DType dt = to_dtype(dtype, op);
    need(out, op, "out");
    publish(out, cast(s, tx, dt));
  });
}

tf_status tf_contiguous(tf_session* session, const tf_tensor* x, tf_tensor** out) {
  return guard([&] {
    constexpr const char* op = "tf_contiguous";
    Session& s = session_of(session, op);
    const Tensor& tx = tensor_of(x, op, "x");
    need(out, op, "out");
    publish(out, to_contiguous(s, tx));
  });
}

tf_status tf_copy_into(tf_session* session, const tf_tensor* src, tf_tensor* dst) {
  return guard([&] {
    constexpr const char* op = "tf_copy_into";
    Session& s = session_of(session, op);
    const Tensor& ts = tensor_of(src, op, "src");
    const Tensor& td = tensor_of(dst, op, "dst");
    copy_into(s, ts, td);
  });
}
