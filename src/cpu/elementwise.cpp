// Binary, comparison and ternary elementwise ops on the elementwise engine.
#include "cpu/elementwise.hpp"

#include "core/convert.hpp"
#include "cpu/elementwise_functors.hpp"
#include "ops/catalog.hpp"

namespace tenferro {
namespace detail {

void prepare_input(Session& s, const Operand& in, DType d, std::string_view op, Tensor& converted, unsigned char* buf) {
  if (in.is_tensor()) {
    if (in.tensor().dtype() != d) converted = cast(s, in.tensor(), d);
    return;
  }
  const Scalar& v = in.scalar();
  visit_dtype(op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_inexact(dtype_of<T>)) {
      const bool exact = visit_dtype(op, v.natural_dtype(), [&](auto stag) {
        return exact_value<T>(v.template to<typename decltype(stag)::type>());
      });
      if (!exact) throw ArgumentError(op, "scalar " + v.to_string() + " does not fit dtype " + std::string(dtype_name(d)));
    }
    const T x = v.to<T>();
    std::memcpy(buf, &x, sizeof(T));
  });
}

namespace {

// Integer div/rem by zero and negative integer exponents are errors found before any
// output is written: scan the (prepared) divisor.
template <class E, class T, class Bad> void scan_input(const EwArgs<2>& args, int k, Bad bad, const char* what) {
  if (!args.tensor[k]) {
    T v;
    std::memcpy(&v, args.scalar[k], sizeof(T));
    if (bad(v)) throw E(args.op, std::string(what) + " (scalar " + std::to_string(v) + ")");
    return;
  }
  const Tensor& t = args.input(k);
  const Shape sh = t.shape();
  std::int64_t st[kMaxRank];
  broadcast_byte_strides(t, t.rank(), st);
  const std::int64_t* sp[1] = {st};
  char* ptr[1] = {static_cast<char*>(const_cast<void*>(t.data()))};
  LoopPlan<1> plan;
  plan.build(t.rank(), sh.data(), sp, ptr);
  bool found = false;
  plan.run(0, plan.numel, [&](char** p, const std::int64_t* stride, std::int64_t n) {
    const char* q = p[0];
    for (std::int64_t i = 0; i < n && !found; ++i, q += stride[0]) found = bad(*reinterpret_cast<const T*>(q));
  });
  if (found) throw E(args.op, std::string(what) + " in " + describe(t));
}

template <DTypeSet Set, class F> void run_same(Session& s, const EwArgs<2>& args, const LoopPlan<3>& plan, F f, std::int64_t cost = 1) {
  visit_dtype<Set>(args.op, args.compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_plan(s, plan, cost, [f](char** p, const std::int64_t* st, std::int64_t n) { line2<T, T, T>(p, st, n, f); });
  });
}

// Note [Elementwise fast path]: same-dtype compact operands of one shape.
template <DTypeSet Set, class F>
bool binary_fast(Session& s, std::string_view op, const Tensor& x, const Tensor& y, const Tensor* out, Tensor& result, F f, std::int64_t cost) {
  if (!in_set(x.dtype(), Set) || !fast_operand(x) || !fast_operand(y) || !same_dtype_extents(x, y)) return false;
  if (out && !fast_output_ok(*out, x, &y)) return false;
  if (!out) result = new_like(x, x.dtype());
  const Tensor& o = out ? *out : result;
  visit_dtype<Set>(op, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_contiguous2(s, static_cast<T*>(const_cast<void*>(o.data())), static_cast<const T*>(x.data()), static_cast<const T*>(y.data()), x.numel(), cost, f);
  });
  return true;
}

// Note [Elementwise scalar fast path]: a compact inexact tensor with a scalar operand
// that keeps its dtype (f64 tensor * 2.0, f32 tensor + 1, c128 tensor * 2i) runs one
// loop with the scalar in a register: no promotion, no plan, no scalar buffer. This is
// the shape of most steps in an AD chain and of their backward products.
template <class F>
bool scalar_fast(Session& s, OpId id, const Operand& a, const Operand& b, const Tensor* out, Tensor& result, F f, std::int64_t cost) {
  if (a.is_tensor() == b.is_tensor()) return false;
  const bool scalar_left = !a.is_tensor();
  const Tensor& x = scalar_left ? b.tensor() : a.tensor();
  const Scalar& v = scalar_left ? a.scalar() : b.scalar();
  const DType d = x.dtype();
  if (!is_inexact(d) || !fast_operand(x) || v.result_dtype_with(d) != d) return false;
  if (out && !fast_output_ok(*out, x, nullptr)) return false;
  const std::string_view op = op_name(id);
  s.check(op);
  if (!out) result = new_like(x, d);
  const Tensor& o = out ? *out : result;
  visit_dtype<DTypeSet::inexact>(op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T c = v.to<T>();
    T* po = static_cast<T*>(const_cast<void*>(o.data()));
    const T* px = static_cast<const T*>(x.data());
    const std::int64_t n = x.numel();
    if (n * cost < kForkThreshold) {
      if (scalar_left) {
        for (std::int64_t i = 0; i < n; ++i) po[i] = f(c, px[i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) po[i] = f(px[i], c);
      }
      return;
    }
    parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) po[i] = scalar_left ? f(c, px[i]) : f(px[i], c);
    });
  });
  return true;
}

void binary(Session& s, OpId id, const Operand& a, const Operand& b, const Tensor* out, Tensor& result) {
  switch (id) {
    case OpId::add: if (scalar_fast(s, id, a, b, out, result, fn::Add{}, 1)) return; break;
    case OpId::sub: if (scalar_fast(s, id, a, b, out, result, fn::Sub{}, 1)) return; break;
    case OpId::mul: if (scalar_fast(s, id, a, b, out, result, fn::Mul{}, 1)) return; break;
    case OpId::div: if (scalar_fast(s, id, a, b, out, result, fn::Div{}, 4)) return; break;
    default: break;
  }
  if (a.is_tensor() && b.is_tensor()) {
    const Tensor &x = a.tensor(), &y = b.tensor();
    const std::string_view op = op_name(id);
    s.check(op);
    switch (id) {  // integer div/rem/pow need their data checks: general path
      case OpId::add: if (binary_fast<DTypeSet::numeric>(s, op, x, y, out, result, fn::Add{}, 1)) return; break;
      case OpId::sub: if (binary_fast<DTypeSet::numeric>(s, op, x, y, out, result, fn::Sub{}, 1)) return; break;
      case OpId::mul: if (binary_fast<DTypeSet::numeric>(s, op, x, y, out, result, fn::Mul{}, 1)) return; break;
      case OpId::div: if (binary_fast<DTypeSet::inexact>(s, op, x, y, out, result, fn::Div{}, 4)) return; break;
      case OpId::maximum: if (binary_fast<DTypeSet::real>(s, op, x, y, out, result, fn::Maximum{}, 1)) return; break;
      case OpId::minimum: if (binary_fast<DTypeSet::real>(s, op, x, y, out, result, fn::Minimum{}, 1)) return; break;
      default: break;
    }
  }
  EwArgs<2> args;
  args.op = op_name(id);
  const Operand* ins[2] = {&a, &b};
  const DType d = promote_operands(s, args, ins);
  require_dtype_in(d, op_info(id).dtypes, args.op);
  args.compute = d;
  args.in_dtype[0] = args.in_dtype[1] = d;
  const Tensor& o = prepare_output(args, d, out, result);
  prepare_inputs(s, args, ins);
  if (is_integer(d) && o.numel() > 0) {
    visit_dtype<DTypeSet::integer>(args.op, d, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (id == OpId::div || id == OpId::rem) scan_input<NumericalError, T>(args, 1, [](T v) { return v == 0; }, "integer division by zero");
      if (id == OpId::pow) scan_input<ArgumentError, T>(args, 1, [](T v) { return v < 0; }, "negative integer exponent");
    });
  }
  const LoopPlan<3> plan = make_plan(args, o);
  switch (id) {
    case OpId::add: return run_same<DTypeSet::numeric>(s, args, plan, fn::Add{});
    case OpId::sub: return run_same<DTypeSet::numeric>(s, args, plan, fn::Sub{});
    case OpId::mul: return run_same<DTypeSet::numeric>(s, args, plan, fn::Mul{});
    case OpId::div: return run_same<DTypeSet::numeric>(s, args, plan, fn::Div{}, 4);
    case OpId::rem: return run_same<DTypeSet::real_numeric>(s, args, plan, fn::Rem{}, 8);
    case OpId::maximum: return run_same<DTypeSet::real>(s, args, plan, fn::Maximum{});
    case OpId::minimum: return run_same<DTypeSet::real>(s, args, plan, fn::Minimum{});
    case OpId::pow: return run_same<DTypeSet::numeric>(s, args, plan, fn::Pow{}, 20);
    default: throw InternalError(args.op, "not a binary op");
  }
}

template <class F> void run_compare(Session& s, const EwArgs<2>& args, const LoopPlan<3>& plan, F f) {
  visit_dtype(args.op, args.compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_complex_v<T> && !(std::is_same_v<F, fn::Eq> || std::is_same_v<F, fn::Ne>)) {
      throw InternalError(args.op, "ordered comparison of complex values");
    } else {
      run_plan(s, plan, 1, [f](char** p, const std::int64_t* st, std::int64_t n) { line2<bool, T, T>(p, st, n, f); });
    }
  });
}

const char* compare_name(CompareOp c) {
  static const char* names[] = {"compare(eq)", "compare(ne)", "compare(lt)", "compare(le)", "compare(gt)", "compare(ge)"};
  return names[static_cast<int>(c)];
}

void compare_impl(Session& s, const Operand& a, const Operand& b, CompareOp c, const Tensor* out, Tensor& result) {
  require_enum(c, CompareOp::ge, "compare", "CompareOp");  // before compare_name indexes its table
  EwArgs<2> args;
  args.op = compare_name(c);
  const Operand* ins[2] = {&a, &b};
  const DType d = promote_operands(s, args, ins);
  if (is_complex(d) && c != CompareOp::eq && c != CompareOp::ne)
    throw DTypeError(args.op, "ordered comparison of complex dtype " + std::string(dtype_name(d)) + " (only eq and ne)");
  args.compute = d;
  args.in_dtype[0] = args.in_dtype[1] = d;
  const Tensor& o = prepare_output(args, DType::b8, out, result);
  prepare_inputs(s, args, ins);
  const LoopPlan<3> plan = make_plan(args, o);
  switch (c) {
    case CompareOp::eq: return run_compare(s, args, plan, fn::Eq{});
    case CompareOp::ne: return run_compare(s, args, plan, fn::Ne{});
    case CompareOp::lt: return run_compare(s, args, plan, fn::Lt{});
    case CompareOp::le: return run_compare(s, args, plan, fn::Le{});
    case CompareOp::gt: return run_compare(s, args, plan, fn::Gt{});
    case CompareOp::ge: return run_compare(s, args, plan, fn::Ge{});
  }
}

void select_impl(Session& s, const Operand& pred, const Operand& t, const Operand& f, const Tensor* out, Tensor& result) {
  EwArgs<3> args;
  args.op = "select";
  const Operand* ins[3] = {&pred, &t, &f};
  const DType d = promote_operands(s, args, ins, 0b110u);
  const bool pred_bool = pred.is_tensor() ? pred.tensor().dtype() == DType::b8 : pred.scalar().kind() == Scalar::Kind::boolean;
  if (!pred_bool)
    throw DTypeError(args.op, "pred must be bool, got " + std::string(pred.is_tensor() ? dtype_name(pred.tensor().dtype()) : "a non-bool scalar"));
  args.compute = d;
  args.in_dtype[0] = DType::b8;
  args.in_dtype[1] = args.in_dtype[2] = d;
  const Tensor& o = prepare_output(args, d, out, result);
  prepare_inputs(s, args, ins);
  const LoopPlan<4> plan = make_plan(args, o);
  visit_dtype(args.op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_plan(s, plan, 1, [](char** p, const std::int64_t* st, std::int64_t n) { line3<T, bool, T, T>(p, st, n, fn::Select{}); });
  });
}

void clamp_impl(Session& s, const Operand& lo, const Operand& x, const Operand& hi, const Tensor* out, Tensor& result) {
  EwArgs<3> args;
  args.op = "clamp";
  const Operand* ins[3] = {&lo, &x, &hi};
  const DType d = promote_operands(s, args, ins);
  require_dtype_in(d, DTypeSet::real, args.op);
  args.compute = d;
  args.in_dtype[0] = args.in_dtype[1] = args.in_dtype[2] = d;
  const Tensor& o = prepare_output(args, d, out, result);
  prepare_inputs(s, args, ins);
  const LoopPlan<4> plan = make_plan(args, o);
  visit_dtype<DTypeSet::real>(args.op, d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_plan(s, plan, 1, [](char** p, const std::int64_t* st, std::int64_t n) { line3<T, T, T, T>(p, st, n, fn::Clamp{}); });
  });
}

}  // namespace
}  // namespace detail

#define TENFERRO_DEFINE_BINARY(name)                                                   \
  Tensor name(Session& s, const Operand& a, const Operand& b) {                        \
    Tensor r;                                                                          \
    detail::binary(s, detail::OpId::name, a, b, nullptr, r);                           \
    return r;                                                                          \
  }                                                                                    \
  void name##_into(Session& s, const Operand& a, const Operand& b, const Tensor& out) { \
    Tensor r;                                                                          \
    detail::binary(s, detail::OpId::name, a, b, &out, r);                              \
  }
TENFERRO_DEFINE_BINARY(add)
TENFERRO_DEFINE_BINARY(sub)
TENFERRO_DEFINE_BINARY(mul)
TENFERRO_DEFINE_BINARY(div)
TENFERRO_DEFINE_BINARY(rem)
TENFERRO_DEFINE_BINARY(maximum)
TENFERRO_DEFINE_BINARY(minimum)
TENFERRO_DEFINE_BINARY(pow)
#undef TENFERRO_DEFINE_BINARY

Tensor compare(Session& s, const Operand& a, const Operand& b, CompareOp op) {
  Tensor r;
  detail::compare_impl(s, a, b, op, nullptr, r);
  return r;
}
void compare_into(Session& s, const Operand& a, const Operand& b, CompareOp op, const Tensor& out) {
  Tensor r;
  detail::compare_impl(s, a, b, op, &out, r);
}
Tensor select(Session& s, const Operand& pred, const Operand& t, const Operand& f) {
  Tensor r;
  detail::select_impl(s, pred, t, f, nullptr, r);
  return r;
}
void select_into(Session& s, const Operand& pred, const Operand& t, const Operand& f, const Tensor& out) {
  Tensor r;
  detail::select_impl(s, pred, t, f, &out, r);
}
Tensor clamp(Session& s, const Operand& lo, const Operand& x, const Operand& hi) {
  Tensor r;
  detail::clamp_impl(s, lo, x, hi, nullptr, r);
  return r;
}
void clamp_into(Session& s, const Operand& lo, const Operand& x, const Operand& hi, const Tensor& out) {
  Tensor r;
  detail::clamp_impl(s, lo, x, hi, &out, r);
}

}  // namespace tenferro
