// The CPU elementwise kernels (cpu/elementwise_kernels.hpp, Note [Elementwise in the op
// layer]): one template per arity over the op's functor (OpFn). Arguments arrive
// validated (EwCall); a kernel dispatches once on the compute dtype over the op's
// catalogue set and runs either one flat loop (the layout fast path) or a LoopPlan over
// out and the broadcast inputs, inline or split over the session's threads.
#include "cpu/elementwise_kernels.hpp"

#include "cpu/elementwise.hpp"
#include "cpu/elementwise_functors.hpp"

namespace tenferro::cpu {

namespace {

using detail::EwCall;
using detail::LoopPlan;
using detail::OpFn;

/// The plan over out and the inputs of a general call; input k reads through
/// `scalar_at[k]` (stride 0) when it is a scalar.
template <int N> LoopPlan<N + 1> call_plan(const EwCall<N>& c, const void* const* scalar_at) {
  const Tensor& out = *c.out;
  const int r = out.rank();
  std::int64_t shape[kMaxRank];
  std::int64_t strides[N + 1][kMaxRank];
  const std::int64_t* sp[N + 1];
  char* ptrs[N + 1];
  for (int i = 0; i < r; ++i) shape[i] = out.extent(i);
  detail::broadcast_byte_strides(out, r, strides[0]);
  ptrs[0] = static_cast<char*>(const_cast<void*>(out.data()));
  for (int k = 0; k < N; ++k) {
    if (c.tensor[k]) {
      detail::broadcast_byte_strides(*c.tensor[k], r, strides[k + 1]);
      ptrs[k + 1] = static_cast<char*>(const_cast<void*>(c.tensor[k]->data()));
    } else {
      std::fill(strides[k + 1], strides[k + 1] + r, 0);
      ptrs[k + 1] = static_cast<char*>(const_cast<void*>(scalar_at[k]));
    }
  }
  for (int k = 0; k <= N; ++k) sp[k] = strides[k];
  LoopPlan<N + 1> plan;
  plan.build(r, shape, sp, ptrs);
  return plan;
}

template <class T, int N> T* out_ptr(const EwCall<N>& c) noexcept { return static_cast<T*>(const_cast<void*>(c.out->data())); }
template <class T, int N> const T* in_ptr(const EwCall<N>& c, int k) noexcept { return static_cast<const T*>(c.tensor[k]->data()); }

/// o = f(a, b) over a general call's plan, T inputs and O output (out of line: its
/// stack frame holds the plan, which the flat loops below must not pay for).
template <class O, class T, class F> [[gnu::noinline]] void planned_binary(const Session& s, const EwCall<2>& c, std::int64_t cost, F f) {
  T v[2] = {};
  const void* at[2] = {&v[0], &v[1]};
  for (int k = 0; k < 2; ++k)
    if (!c.tensor[k]) v[k] = c.scalar[k]->template to<T>();
  detail::run_plan(s, call_plan(c, at), cost, [f](char** p, const std::int64_t* st, std::int64_t n) { detail::line2<O, T, T>(p, st, n, f); });
}

/// o = f(a, b): the flat loops of the fast path (a scalar operand in a register), else
/// the plan.
template <class O, class T, class F> void run_binary(const Session& s, const EwCall<2>& c, std::int64_t cost, F f) {
  if (!c.contiguous) return planned_binary<O, T>(s, c, cost, f);
  O* o = out_ptr<O>(c);
  const std::int64_t n = c.out->numel();
  if (c.tensor[0] && c.tensor[1]) return detail::run_contiguous2(s, o, in_ptr<T>(c, 0), in_ptr<T>(c, 1), n, cost, f);
  const bool scalar_left = !c.tensor[0];
  const T v = (scalar_left ? c.scalar[0] : c.scalar[1])->template to<T>();
  const T* x = in_ptr<T>(c, scalar_left ? 1 : 0);
  if (n * cost < detail::kForkThreshold) {
    if (scalar_left) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(v, x[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], v);
    }
    return;
  }
  detail::parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) o[i] = scalar_left ? f(v, x[i]) : f(x[i], v);
  });
}

/// o = f(x) over a general call's plan (out of line, as planned_binary).
template <class O, class T, class F> [[gnu::noinline]] void planned_unary(const Session& s, const EwCall<1>& c, std::int64_t cost) {
  detail::run_plan(s, call_plan<1>(c, nullptr), cost, [](char** p, const std::int64_t* st, std::int64_t n) { detail::line1<O, T>(p, st, n, F{}); });
}

}  // namespace

template <OpId op> void unary_kernel(const Session& s, const EwCall<1>& c) {
  using F = typename OpFn<op>::type;
  visit_dtype<op_info(op).dtypes>(op_name(op), c.in[0], [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = decltype(F{}(T{}));
    const std::int64_t cost = OpFn<op>::cost * (is_complex_v<T> ? 4 : 1);
    if (!c.contiguous) return planned_unary<O, T, F>(s, c, cost);
    detail::run_contiguous1(s, out_ptr<O>(c), in_ptr<T>(c, 0), c.out->numel(), cost, F{});
  });
}

template <OpId op> void binary_kernel(const Session& s, const EwCall<2>& c) {
  visit_dtype<op_info(op).dtypes>(op_name(op), c.in[0], [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_binary<T, T>(s, c, OpFn<op>::cost, typename OpFn<op>::type{});
  });
}

void compare_kernel(const Session& s, const EwCall<2>& c) {
  visit_dtype("compare", c.in[0], [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (c.cmp) {
      case CompareOp::eq: return run_binary<bool, T>(s, c, 1, detail::fn::Eq{});
      case CompareOp::ne: return run_binary<bool, T>(s, c, 1, detail::fn::Ne{});
      default: break;
    }
    if constexpr (is_complex_v<T>) {
      throw InternalError("compare", "ordered comparison of complex values");
    } else {
      switch (c.cmp) {
        case CompareOp::lt: return run_binary<bool, T>(s, c, 1, detail::fn::Lt{});
        case CompareOp::le: return run_binary<bool, T>(s, c, 1, detail::fn::Le{});
        case CompareOp::gt: return run_binary<bool, T>(s, c, 1, detail::fn::Gt{});
        case CompareOp::ge: return run_binary<bool, T>(s, c, 1, detail::fn::Ge{});
        default: throw InternalError("compare", "CompareOp out of range");
      }
    }
  });
}

template <OpId op> void ternary_kernel(const Session& s, const EwCall<3>& c) {
  using F = typename OpFn<op>::type;
  visit_dtype<op_info(op).dtypes>(op_name(op), c.in[1], [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<op == OpId::select, bool, T>;  // select's pred
    A a = c.tensor[0] ? A{} : c.scalar[0]->template to<A>();
    T v[2] = {};
    for (int k = 0; k < 2; ++k)
      if (!c.tensor[k + 1]) v[k] = c.scalar[k + 1]->template to<T>();
    const void* at[3] = {&a, &v[0], &v[1]};
    detail::run_plan(s, call_plan(c, at), OpFn<op>::cost,
                     [](char** p, const std::int64_t* st, std::int64_t n) { detail::line3<T, A, T, T>(p, st, n, F{}); });
  });
}

// The instantiations the CPU table names (elementwise_kernel).
#define TENFERRO_CPU_UNARY(name) template void unary_kernel<OpId::name>(const Session&, const EwCall<1>&);
#define TENFERRO_CPU_BINARY(name) template void binary_kernel<OpId::name>(const Session&, const EwCall<2>&);
TENFERRO_CPU_ELEMENTWISE(TENFERRO_CPU_UNARY, TENFERRO_CPU_BINARY)
template void ternary_kernel<OpId::select>(const Session&, const EwCall<3>&);
template void ternary_kernel<OpId::clamp>(const Session&, const EwCall<3>&);
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_CPU_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_CPU_BINARY
#undef TENFERRO_CPU_UNARY

}  // namespace tenferro::cpu
