// BLAS-1: vdot, norm_squared, axpby (ops.hpp). vdot and norm_squared are full
// reductions on the blocked driver of reduce_kernels.hpp (Note [Deterministic
// reductions]); axpby is an in-place elementwise update on a LoopPlan.
//
// Note [Mixed-dtype operands]
// vdot and axpby compute in one type T (the promoted dtype for vdot, y's dtype for
// axpby). Operands of that dtype are read directly (the fast path); an operand of
// another dtype is read through a conversion function chosen once per call
// (cast_value<T, S>), one indirect call per element. That keeps two kernel
// instantiations per T instead of one per dtype pair; mixed dtypes are the rare case.
#include <charconv>
#include <string>
#include <utility>

#include "core/convert.hpp"
#include "core/layout.hpp"
#include "cpu/op_common.hpp"
#include "cpu/reduce_kernels.hpp"

namespace tenferro {

namespace {

using detail::LoopPlan;
using detail::wrap_acc_t;

template <class T> struct DirectLoad {
  T operator()(const char* p) const noexcept { return *reinterpret_cast<const T*>(p); }
};
template <class T> struct ConvertLoad {
  T (*f)(const char*) noexcept;
  T operator()(const char* p) const noexcept { return f(p); }
};
template <class T, class S> T load_as(const char* p) noexcept { return detail::cast_value<T>(*reinterpret_cast<const S*>(p)); }

/// Reader converting elements of dtype `d` (numeric, validated) to T.
template <class T> ConvertLoad<T> converter(DType d, std::string_view op) {
  return visit_dtype<DTypeSet::numeric>(op, d, [](auto t) { return ConvertLoad<T>{&load_as<T, typename decltype(t)::type>}; });
}

// Integer products and sums wrap: computed in the unsigned type of the same width.
template <class T> T mul(T a, T b) noexcept {
  if constexpr (is_complex_v<T>) {
    // Written out: std::complex's operator* calls __mulsc3 (C99 Annex G inf recovery),
    // which is out of line and blocks vectorization.
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<wrap_acc_t<T>>(a) * static_cast<wrap_acc_t<T>>(b));
  } else {
    return a * b;
  }
}
template <class T> T add(T a, T b) noexcept {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<wrap_acc_t<T>>(a) + static_cast<wrap_acc_t<T>>(b));
  else return a + b;
}

/// Byte strides of the two operands of an equal-shape op and the plan over them.
void build_pair_plan(const Tensor& first, const Tensor& second, LoopPlan<2>& plan) noexcept {
  const int r = first.rank();
  std::int64_t ext[kMaxRank], s0[kMaxRank], s1[kMaxRank];
  for (int i = 0; i < r; ++i) ext[i] = first.extent(i);
  detail::broadcast_byte_strides(first, r, s0);
  detail::broadcast_byte_strides(second, r, s1);
  const std::int64_t* strides[2] = {s0, s1};
  char* ptrs[2] = {static_cast<char*>(const_cast<void*>(first.data())), static_cast<char*>(const_cast<void*>(second.data()))};
  plan.build(r, ext, strides, ptrs);
}

bool same_shape(const Tensor& a, const Tensor& b) noexcept {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.extent(i) != b.extent(i)) return false;
  return true;
}

// ------------------------------------------------------------------ vdot

template <class T> using DotAcc = wrap_acc_t<T>;

/// conj(a) * b, written out for complex (see mul).
template <class T> DotAcc<T> dot_term(T a, T b) noexcept {
  if constexpr (is_complex_v<T>) {
    return T(a.real() * b.real() + a.imag() * b.imag(), a.real() * b.imag() - a.imag() * b.real());
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<DotAcc<T>>(a) * static_cast<DotAcc<T>>(b);
  } else {
    return a * b;
  }
}

template <class T, class LA, class LB>
DotAcc<T> vdot_line(const char* pa, std::int64_t sa, const char* pb, std::int64_t sb, std::int64_t n, LA la, LB lb) {
  using Acc = DotAcc<T>;
  auto plus = [](Acc x, Acc y) { return x + y; };
  constexpr auto es = static_cast<std::int64_t>(sizeof(T));
  if constexpr (std::is_same_v<LA, DirectLoad<T>> && std::is_same_v<LB, DirectLoad<T>>) {
    if (sa == es && sb == es) {  // contiguous: the vectorizable case
      const T* a = reinterpret_cast<const T*>(pa);
      const T* b = reinterpret_cast<const T*>(pb);
      return detail::lane_fold(n, detail::additive_identity<Acc>(), plus, [a, b](std::int64_t i) { return dot_term(a[i], b[i]); });
    }
  }
  return detail::lane_fold(n, detail::additive_identity<Acc>(), plus,
                           [&](std::int64_t i) { return dot_term<T>(la(pa + i * sa), lb(pb + i * sb)); });
}

template <class T, class LA, class LB> T vdot_kernel(const Session& s, const LoopPlan<2>& plan, LA la, LB lb) {
  using Acc = DotAcc<T>;
  if (plan.numel == 0) return T(0);  // +0, not the lanes' -0 identity
  auto plus = [](Acc x, Acc y) { return x + y; };
  const std::int64_t cost = is_complex_v<T> ? 4 : 2;
  const Acc acc = detail::blocked_reduce(s, plan.numel, cost, detail::additive_identity<Acc>(), plus, [&](std::int64_t b, std::int64_t e) {
    Acc a = detail::additive_identity<Acc>();
    plan.run(b, e, [&](char** p, const std::int64_t* inner, std::int64_t n) {
      a = a + vdot_line<T>(p[0], inner[0], p[1], inner[1], n, la, lb);
    });
    return a;
  });
  return static_cast<T>(acc);
}

// ------------------------------------------------------------------ axpby

/// alpha or beta as y's element type. Refused (ArgumentError): a complex scalar for a
/// real y (kind would be lost, as for x's dtype), and for an integer y a float that is
/// not an integer in range or an integer out of range (no silent truncation).
template <class T> T scalar_as(const Scalar& v, const char* name, DType yd) {
  using K = Scalar::Kind;
  const auto fail = [&](const char* why) {
    throw ArgumentError("axpby", std::string(name) + " = " + v.to_string() + why + std::string(dtype_name(yd)));
  };
  if constexpr (!is_complex_v<T>)
    if (v.kind() == K::complex) fail(" is complex but y has the real dtype ");
  if constexpr (std::is_integral_v<T>) {
    const bool ok = v.kind() == K::floating  ? detail::exact_value<T>(v.to<double>())
                    : v.kind() == K::integer ? std::in_range<T>(v.to<std::int64_t>())
                                             : true;
    if (!ok) fail(" is not exactly representable in y's dtype ");
  }
  return v.to<T>();
}

template <class T, class LX> void axpby_kernel(const Session& s, const LoopPlan<2>& plan, T a, T b, LX lx) {
  // beta == 0 never reads y (BLAS convention: NaN or garbage in y does not propagate);
  // beta == 1 skips a multiplication (same result: 1 * y == y).
  const int mode = b == T(0) ? 0 : b == T(1) ? 1 : 2;
  auto line = [&](char** p, const std::int64_t* inner, std::int64_t n) {
    auto each = [&](auto f) {
      constexpr auto es = static_cast<std::int64_t>(sizeof(T));
      if constexpr (std::is_same_v<LX, DirectLoad<T>>) {
        if (inner[0] == es && inner[1] == es) {  // contiguous (x may be y itself: no restrict)
          T* y = reinterpret_cast<T*>(p[0]);
          const T* x = reinterpret_cast<const T*>(p[1]);
          for (std::int64_t j = 0; j < n; ++j) y[j] = f(x[j], y + j);
          return;
        }
      }
      for (std::int64_t j = 0; j < n; ++j) {
        T* y = reinterpret_cast<T*>(p[0] + j * inner[0]);
        *y = f(lx(p[1] + j * inner[1]), y);
      }
    };
    switch (mode) {
      case 0: each([a](T x, const T*) { return mul(a, x); }); break;
      case 1: each([a](T x, const T* y) { return add(mul(a, x), *y); }); break;
      default: each([a, b](T x, const T* y) { return add(mul(a, x), mul(b, *y)); }); break;
    }
  };
  detail::parallel_for(s, plan.numel, is_complex_v<T> ? 4 : 2, [&](std::int64_t begin, std::int64_t end) { plan.run(begin, end, line); });
}

}  // namespace

namespace {

// vdot and vdot_into: validate, prepare the output once (Note [Linalg into forms] has
// the same shape: the caller's view, validated before the kernel, or a fresh scalar),
// then one kernel. `out` null: allocating form.
Tensor vdot_impl(Session& s, const Tensor& a, const Tensor& b, const Tensor* out) {
  constexpr std::string_view op = "vdot";
  s.check(op);
  detail::require_cpu_tensor(a, op, "a");
  detail::require_cpu_tensor(b, op, "b");
  if (!in_set(a.dtype(), DTypeSet::numeric) || !in_set(b.dtype(), DTypeSet::numeric))
    throw DTypeError(op, "a has dtype " + std::string(dtype_name(a.dtype())) + " and b has dtype " + std::string(dtype_name(b.dtype())) +
                             "; both need a numeric dtype");
  if (!same_shape(a, b)) throw ShapeError(op, "a has shape " + a.shape().to_string() + " but b has shape " + b.shape().to_string());
  const DType d = promote(a.dtype(), b.dtype());
  Tensor result;
  if (out) {
    detail::require_output(*out, op, d, {});
    detail::check_overlap(*out, a, op, /*same_ok=*/false);
    detail::check_overlap(*out, b, op, /*same_ok=*/false);
  } else {
    result = detail::new_output({}, d, op);
  }
  const Tensor& target = out ? *out : result;
  LoopPlan<2> plan;
  build_pair_plan(a, b, plan);
  visit_dtype<DTypeSet::numeric>(op, d, [&](auto t) {
    using T = typename decltype(t)::type;
    const T r = (a.dtype() == d && b.dtype() == d) ? vdot_kernel<T>(s, plan, DirectLoad<T>{}, DirectLoad<T>{})
                                                    : vdot_kernel<T>(s, plan, converter<T>(a.dtype(), op), converter<T>(b.dtype(), op));
    *static_cast<T*>(target.mutable_data()) = r;
  });
  return result;
}

Tensor norm_squared_impl(Session& s, const Tensor& x, const Tensor* out) {
  constexpr std::string_view op = "norm_squared";
  s.check(op);
  detail::require_cpu_tensor(x, op, "x");
  if (!in_set(x.dtype(), DTypeSet::numeric)) detail::throw_dtype_not_in_set(op, x.dtype(), DTypeSet::numeric);
  const std::uint64_t mask = detail::reduction_mask(x, {}, true, op);
  const DType d = is_integer(x.dtype()) ? DType::f64 : real_dtype(x.dtype());
  Tensor result;
  if (out) {
    detail::require_output(*out, op, d, {});
    detail::check_overlap(*out, x, op, /*same_ok=*/false);
  } else {
    result = detail::new_output({}, d, op);
  }
  const Tensor& target = out ? *out : result;
  visit_dtype<DTypeSet::numeric>(op, x.dtype(), [&](auto t) {
    detail::reduce_values<detail::NormSquaredTraits<typename decltype(t)::type>>(s, x, target, mask);
  });
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
  detail::require_cpu_tensor(x, op, "x");
  detail::require_cpu_tensor(y, op, "y");
  if (!in_set(y.dtype(), DTypeSet::numeric)) detail::throw_dtype_not_in_set(op, y.dtype(), DTypeSet::numeric);
  if (!in_set(x.dtype(), DTypeSet::numeric) || promote(x.dtype(), y.dtype()) != y.dtype())
    throw DTypeError(op, "x has dtype " + std::string(dtype_name(x.dtype())) + ", which does not convert to y's dtype " +
                             std::string(dtype_name(y.dtype())) + " without loss of kind (convert explicitly)");
  if (!same_shape(x, y)) throw ShapeError(op, "x has shape " + x.shape().to_string() + " but y has shape " + y.shape().to_string());
  if (y.read_only()) throw ArgumentError(op, "y is a read-only (broadcast) view");
  {
    std::int64_t ext[kMaxRank], str[kMaxRank];
    for (int i = 0; i < y.rank(); ++i) ext[i] = y.extent(i), str[i] = y.stride(i);
    const auto r = static_cast<std::size_t>(y.rank());
    if (!detail::is_non_overlapping({ext, r}, {str, r}))
      throw ArgumentError(op, "y has overlapping elements (shape " + y.shape().to_string() + ", strides " + y.strides().to_string() + ")");
  }
  detail::check_overlap(y, x, op, /*same_ok=*/true);
  LoopPlan<2> plan;
  build_pair_plan(y, x, plan);
  visit_dtype<DTypeSet::numeric>(op, y.dtype(), [&](auto t) {
    using T = typename decltype(t)::type;
    const T a = scalar_as<T>(alpha, "alpha", y.dtype());
    const T b = scalar_as<T>(beta, "beta", y.dtype());
    if (x.dtype() == y.dtype()) axpby_kernel<T>(s, plan, a, b, DirectLoad<T>{});
    else axpby_kernel<T>(s, plan, a, b, converter<T>(x.dtype(), op));
  });
}

}  // namespace tenferro
