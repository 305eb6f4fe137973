// The CPU BLAS-1 kernels (cpu/blas1.hpp; Note [BLAS-1 in the op layer]): vdot and
// norm_squared are full reductions on the blocked driver of reduce_kernels.hpp (Note
// [Deterministic reductions]); axpby is an in-place elementwise update on a LoopPlan.
// Arguments arrive validated from src/ops/blas1.cpp.
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
#include "cpu/blas1.hpp"
#include "cpu/op_common.hpp"
#include "cpu/reduce_kernels.hpp"

namespace tenferro::cpu {

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

template <class T, class LA, class LB> T vdot_sum(const Session& s, const LoopPlan<2>& plan, LA la, LB lb) {
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

template <class T, class LX> void axpby_update(const Session& s, const LoopPlan<2>& plan, T a, T b, LX lx) {
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

void vdot_kernel(Session& s, const Tensor& a, const Tensor& b, const Tensor& out) {
  constexpr std::string_view op = "vdot";
  LoopPlan<2> plan;
  build_pair_plan(a, b, plan);
  const DType d = out.dtype();
  visit_dtype<DTypeSet::numeric>(op, d, [&](auto t) {
    using T = typename decltype(t)::type;
    const T r = (a.dtype() == d && b.dtype() == d) ? vdot_sum<T>(s, plan, DirectLoad<T>{}, DirectLoad<T>{})
                                                    : vdot_sum<T>(s, plan, converter<T>(a.dtype(), op), converter<T>(b.dtype(), op));
    *static_cast<T*>(const_cast<void*>(out.data())) = r;
  });
}

void norm_squared_kernel(const Session& s, const Tensor& x, const Tensor& out, std::uint64_t mask) {
  visit_dtype<DTypeSet::numeric>("norm_squared", x.dtype(), [&](auto t) {
    detail::reduce_values<detail::NormSquaredTraits<typename decltype(t)::type>>(s, x, out, mask);
  });
}

void axpby_kernel(Session& s, const Scalar& alpha, const Tensor& x, const Scalar& beta, const Tensor& y) {
  LoopPlan<2> plan;
  build_pair_plan(y, x, plan);
  visit_dtype<DTypeSet::numeric>("axpby", y.dtype(), [&](auto t) {
    using T = typename decltype(t)::type;
    const T a = alpha.to<T>(), b = beta.to<T>();
    if (x.dtype() == y.dtype()) axpby_update<T>(s, plan, a, b, DirectLoad<T>{});
    else axpby_update<T>(s, plan, a, b, converter<T>(x.dtype(), "axpby"));
  });
}

}  // namespace tenferro::cpu
