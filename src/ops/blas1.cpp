// The BLAS-1 family (ops.hpp: vdot, norm_squared, axpby; Note [BLAS-1 in the op layer]):
// inference, then the front ends, which dispatch through the session's kernel table.
#include "ops/blas1.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/convert.hpp"
#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {

namespace {

bool same_extents(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

/// ArgumentError unless scalar v (alpha or beta) is representable in y's dtype T.
template <class T> void require_representable(const Scalar& v, const char* name, DType yd) {
  using K = Scalar::Kind;
  const auto fail = [&](const char* why) {
    throw ArgumentError("axpby", std::string(name) + " = " + v.to_string() + why + std::string(dtype_name(yd)));
  };
  if constexpr (!is_complex_v<T>)
    if (v.kind() == K::complex) fail(" is complex but y has the real dtype ");
  if constexpr (std::is_integral_v<T>) {
    const bool ok = v.kind() == K::floating  ? exact_value<T>(v.to<double>())
                    : v.kind() == K::integer ? std::in_range<T>(v.to<std::int64_t>())
                                             : true;
    if (!ok) fail(" is not exactly representable in y's dtype ");
  }
}

}  // namespace

DType infer_vdot(std::span<const std::int64_t> a, DType ad, std::span<const std::int64_t> b, DType bd) {
  constexpr std::string_view op = "vdot";
  if (!in_set(ad, DTypeSet::numeric) || !in_set(bd, DTypeSet::numeric))
    throw DTypeError(op, "a has dtype " + std::string(dtype_name(ad)) + " and b has dtype " + std::string(dtype_name(bd)) +
                             "; both need a numeric dtype");
  if (!same_extents(a, b)) throw ShapeError(op, "a has shape " + dims_string(a) + " but b has shape " + dims_string(b));
  return promote(ad, bd);
}

DType infer_norm_squared(DType xd) {
  if (!in_set(xd, DTypeSet::numeric)) throw_dtype_not_in_set("norm_squared", xd, DTypeSet::numeric);
  return is_integer(xd) ? DType::f64 : real_dtype(xd);
}

void infer_axpby(const Scalar& alpha, std::span<const std::int64_t> x, DType xd, const Scalar& beta, std::span<const std::int64_t> y, DType yd) {
  constexpr std::string_view op = "axpby";
  if (!in_set(yd, DTypeSet::numeric)) throw_dtype_not_in_set(op, yd, DTypeSet::numeric);
  if (!in_set(xd, DTypeSet::numeric) || promote(xd, yd) != yd)
    throw DTypeError(op, "x has dtype " + std::string(dtype_name(xd)) + ", which does not convert to y's dtype " + std::string(dtype_name(yd)) +
                             " without loss of kind (convert explicitly)");
  if (!same_extents(x, y)) throw ShapeError(op, "x has shape " + dims_string(x) + " but y has shape " + dims_string(y));
  visit_dtype<DTypeSet::numeric>(op, yd, [&](auto tag) {
    using T = typename decltype(tag)::type;
    require_representable<T>(alpha, "alpha", yd);
    require_representable<T>(beta, "beta", yd);
  });
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

/// The rank-0 output of vdot or norm_squared, both forms: `out` validated (dtype d,
/// writable, disjoint from the inputs), or a fresh result.
const Tensor& scalar_output(Session& s, std::string_view op, DType d, const Tensor* out, Tensor& result, const Tensor& a, const Tensor* b) {
  if (!out) {
    result = detail::new_output(s, {}, d, op);
    return result;
  }
  detail::require_output(*out, op, d, {}, s.device());
  detail::check_overlap(*out, a, op, /*same_ok=*/false);
  if (b) detail::check_overlap(*out, *b, op, /*same_ok=*/false);
  return *out;
}

Tensor vdot_impl(Session& s, const Tensor& a, const Tensor& b, const Tensor* out) {
  constexpr std::string_view op = "vdot";
  s.check(op);
  detail::require_tensor_on(a, s.device(), op, "a");
  detail::require_tensor_on(b, s.device(), op, "b");
  std::int64_t ba[kMaxRank], bb[kMaxRank];
  const DType d = detail::infer_vdot(detail::extents_of(a, ba), a.dtype(), detail::extents_of(b, bb), b.dtype());
  const detail::VdotKernel k = detail::kernel_for(s, OpId::vdot, d).fn.vdot;
  Tensor result;
  k(s, a, b, scalar_output(s, op, d, out, result, a, &b));
  return result;
}

Tensor norm_squared_impl(Session& s, const Tensor& x, const Tensor* out) {
  constexpr std::string_view op = "norm_squared";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "x");
  const DType d = detail::infer_norm_squared(x.dtype());
  const detail::ReduceKernel k = detail::kernel_for(s, OpId::norm_squared, x.dtype()).fn.reduce;
  Tensor result;
  const Tensor& target = scalar_output(s, op, d, out, result, x, nullptr);
  k(s, x, target, x.rank() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << x.rank()) - 1);
  return result;
}

}  // namespace

Tensor vdot(Session& s, const Tensor& a, const Tensor& b) { return vdot_impl(s, a, b, nullptr); }

void vdot_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out) { vdot_impl(s, a, b, &out); }

Tensor norm_squared(Session& s, const Tensor& x) { return norm_squared_impl(s, x, nullptr); }

void norm_squared_into(Session& s, const Tensor& x, const Tensor& out) { norm_squared_impl(s, x, &out); }

void axpby(Session& s, Scalar alpha, const Tensor& x, Scalar beta, const Tensor& y) {
  constexpr std::string_view op = "axpby";
  s.check(op);
  detail::require_tensor_on(x, s.device(), op, "x");
  detail::require_tensor_on(y, s.device(), op, "y");
  std::int64_t bx[kMaxRank], ext[kMaxRank], str[kMaxRank];
  const std::span<const std::int64_t> ys = detail::extents_of(y, ext);
  detail::infer_axpby(alpha, detail::extents_of(x, bx), x.dtype(), beta, ys, y.dtype());
  const detail::AxpbyKernel k = detail::kernel_for(s, OpId::axpby, y.dtype()).fn.axpby;
  if (y.read_only()) throw ArgumentError(op, "y is a read-only (broadcast) view");
  y.note_write();
  for (int i = 0; i < y.rank(); ++i) str[i] = y.stride(i);
  if (!detail::is_non_overlapping(ys, {str, ys.size()}))
    throw ArgumentError(op, "y has overlapping elements (shape " + y.shape().to_string() + ", strides " + y.strides().to_string() + ")");
  detail::check_overlap(y, x, op, /*same_ok=*/true);
  k(s, alpha, x, beta, y);
}

}  // namespace tenferro
