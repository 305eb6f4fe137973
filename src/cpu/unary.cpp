// Unary elementwise ops (neg conj abs sign real imag angle) and the analytic functions.
#include "cpu/elementwise.hpp"
#include "cpu/elementwise_functors.hpp"
#include "ops/catalog.hpp"

namespace tenferro {
namespace detail {
namespace {

// Per-element cost for the fork decision (Note [Fork cost model]).
constexpr std::int64_t kCheap = 1, kAnalytic = 12;

template <DTypeSet Set, class F> void run_unary(Session& s, std::string_view op, DType d, const LoopPlan<2>& plan, F f, std::int64_t cost) {
  visit_dtype<Set>(op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = decltype(f(T{}));
    if constexpr (std::is_same_v<O, T> || std::is_same_v<O, real_t<T>>) {
      run_plan(s, plan, cost * (is_complex_v<T> ? 4 : 1), [f](char** p, const std::int64_t* st, std::int64_t n) { line1<O, T>(p, st, n, f); });
    }
  });
}

DType unary_out_dtype(OpId id, DType d) {
  switch (id) {
    case OpId::abs:
    case OpId::real:
    case OpId::imag: return real_dtype(d);
    case OpId::angle: return is_integer(d) ? DType::f64 : real_dtype(d);
    default: return d;
  }
}

// Note [Elementwise fast path] for the same-dtype analytic ops.
template <DTypeSet Set, class F> bool unary_fast(Session& s, std::string_view op, const Tensor& x, const Tensor* out, Tensor& result, F f) {
  if (!in_set(x.dtype(), Set) || !fast_operand(x)) return false;
  if (out && !fast_output_ok(*out, x)) return false;
  if (!out) result = new_like(x, x.dtype());
  const Tensor& o = out ? *out : result;
  visit_dtype<Set>(op, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_contiguous1(s, static_cast<T*>(const_cast<void*>(o.data())), static_cast<const T*>(x.data()), x.numel(),
                    kAnalytic * (is_complex_v<T> ? 4 : 1), f);
  });
  return true;
}

void unary(Session& s, OpId id, const Tensor& x, const Tensor* out, Tensor& result) {
  {
    const std::string_view op = op_name(id);
    s.check(op);
    constexpr auto I = DTypeSet::inexact;
    switch (id) {
      case OpId::exp: if (unary_fast<I>(s, op, x, out, result, fn::Exp{})) return; break;
      case OpId::log: if (unary_fast<I>(s, op, x, out, result, fn::Log{})) return; break;
      case OpId::sin: if (unary_fast<I>(s, op, x, out, result, fn::Sin{})) return; break;
      case OpId::cos: if (unary_fast<I>(s, op, x, out, result, fn::Cos{})) return; break;
      case OpId::tanh: if (unary_fast<I>(s, op, x, out, result, fn::Tanh{})) return; break;
      case OpId::sqrt: if (unary_fast<I>(s, op, x, out, result, fn::Sqrt{})) return; break;
      case OpId::neg: if (unary_fast<DTypeSet::numeric>(s, op, x, out, result, fn::Neg{})) return; break;
      default: break;
    }
  }
  EwArgs<1> args;
  args.op = op_name(id);
  const Operand in(x);
  const Operand* ins[1] = {&in};
  const DType d = promote_operands(s, args, ins);
  require_dtype_in(d, op_info(id).dtypes, args.op);
  args.compute = args.in_dtype[0] = d;
  const DType od = unary_out_dtype(id, d);
  const Tensor& o = prepare_output(args, od, out, result);
  const LoopPlan<2> plan = make_plan(args, o);
  constexpr auto N = DTypeSet::numeric;
  constexpr auto I = DTypeSet::inexact;
  switch (id) {
    case OpId::neg: return run_unary<N>(s, args.op, d, plan, fn::Neg{}, kCheap);
    case OpId::conj: return run_unary<N>(s, args.op, d, plan, fn::Conj{}, kCheap);
    case OpId::abs: return run_unary<N>(s, args.op, d, plan, fn::Abs{}, kCheap);
    case OpId::sign: return run_unary<N>(s, args.op, d, plan, fn::Sign{}, kCheap);
    case OpId::real: return run_unary<N>(s, args.op, d, plan, fn::Real{}, kCheap);
    case OpId::imag: return run_unary<N>(s, args.op, d, plan, fn::Imag{}, kCheap);
    case OpId::angle:
      return visit_dtype<N>(args.op, d, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using R = std::conditional_t<std::is_integral_v<T>, double, real_t<T>>;
        run_plan(s, plan, kAnalytic, [](char** p, const std::int64_t* st, std::int64_t n) { line1<R, T>(p, st, n, fn::Angle<R>{}); });
      });
    case OpId::exp: return run_unary<I>(s, args.op, d, plan, fn::Exp{}, kAnalytic);
    case OpId::log: return run_unary<I>(s, args.op, d, plan, fn::Log{}, kAnalytic);
    case OpId::sin: return run_unary<I>(s, args.op, d, plan, fn::Sin{}, kAnalytic);
    case OpId::cos: return run_unary<I>(s, args.op, d, plan, fn::Cos{}, kAnalytic);
    case OpId::tan: return run_unary<I>(s, args.op, d, plan, fn::Tan{}, kAnalytic);
    case OpId::tanh: return run_unary<I>(s, args.op, d, plan, fn::Tanh{}, kAnalytic);
    case OpId::sqrt: return run_unary<I>(s, args.op, d, plan, fn::Sqrt{}, kAnalytic);
    case OpId::rsqrt: return run_unary<I>(s, args.op, d, plan, fn::Rsqrt{}, kAnalytic);
    case OpId::expm1: return run_unary<I>(s, args.op, d, plan, fn::Expm1{}, kAnalytic);
    case OpId::log1p: return run_unary<I>(s, args.op, d, plan, fn::Log1p{}, kAnalytic);
    case OpId::erf: return run_unary<DTypeSet::floating>(s, args.op, d, plan, fn::Erf{}, kAnalytic);
    case OpId::sigmoid: return run_unary<I>(s, args.op, d, plan, fn::Sigmoid{}, kAnalytic);
    case OpId::asin: return run_unary<I>(s, args.op, d, plan, fn::Asin{}, kAnalytic);
    case OpId::acos: return run_unary<I>(s, args.op, d, plan, fn::Acos{}, kAnalytic);
    case OpId::atan: return run_unary<I>(s, args.op, d, plan, fn::Atan{}, kAnalytic);
    case OpId::sinh: return run_unary<I>(s, args.op, d, plan, fn::Sinh{}, kAnalytic);
    case OpId::cosh: return run_unary<I>(s, args.op, d, plan, fn::Cosh{}, kAnalytic);
    case OpId::log2: return run_unary<I>(s, args.op, d, plan, fn::Log2{}, kAnalytic);
    case OpId::exp2: return run_unary<I>(s, args.op, d, plan, fn::Exp2{}, kAnalytic);
    case OpId::cbrt: return run_unary<DTypeSet::floating>(s, args.op, d, plan, fn::Cbrt{}, kAnalytic);
    case OpId::softplus: return run_unary<DTypeSet::floating>(s, args.op, d, plan, fn::Softplus{}, kAnalytic);
    case OpId::silu: return run_unary<DTypeSet::floating>(s, args.op, d, plan, fn::Silu{}, kAnalytic);
    case OpId::gelu: return run_unary<DTypeSet::floating>(s, args.op, d, plan, fn::Gelu{}, kAnalytic);
    default: throw InternalError(args.op, "not a unary op");
  }
}

}  // namespace
}  // namespace detail

#define TENFERRO_DEFINE_UNARY(name)                                      \
  Tensor name(Session& s, const Tensor& x) {                             \
    Tensor r;                                                            \
    detail::unary(s, detail::OpId::name, x, nullptr, r);                 \
    return r;                                                            \
  }                                                                      \
  void name##_into(Session& s, const Tensor& x, const Tensor& out) {     \
    Tensor r;                                                            \
    detail::unary(s, detail::OpId::name, x, &out, r);                    \
  }
TENFERRO_DEFINE_UNARY(neg)
TENFERRO_DEFINE_UNARY(conj)
TENFERRO_DEFINE_UNARY(abs)
TENFERRO_DEFINE_UNARY(sign)
TENFERRO_DEFINE_UNARY(real)
TENFERRO_DEFINE_UNARY(imag)
TENFERRO_DEFINE_UNARY(angle)
// The analytic functions: every `analytic` row (Note [Family lists from the catalogue]).
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_DEFINE_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_DEFINE_UNARY

}  // namespace tenferro
