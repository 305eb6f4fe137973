// The elementwise families' front end (ops.hpp: the unary, analytic, binary, compare,
// select and clamp ops; Note [Elementwise in the op layer]): the layout fast path or
// inference, the output prepared once for both forms, the data checks, then the kernel
// from the session's table.
#include <cstdint>
#include <string>

#include "core/enum_check.hpp"
#include "ops/elementwise.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

namespace {

using detail::EwCall;

/// The kernel member of an entry for arity N.
template <int N> auto kernel_of(const detail::KernelFn& f) noexcept {
  if constexpr (N == 1) return f.unary;
  else if constexpr (N == 2) return f.binary;
  else return f.ternary;
}

/// The layout fast path (Note [Elementwise fast path]): runs the call and returns true
/// when every operand qualifies, else returns false having written nothing.
template <OpId op, int N> bool run_fast(Session& s, const Operand* const* ins, const Tensor* out, Tensor& result) {
  constexpr detail::EwRule rule = detail::ew_rule(op);
  if constexpr (!rule.fast) {
    return false;
  } else {
    const Tensor *x = nullptr, *y = nullptr;
    for (int k = 0; k < N; ++k)
      if (ins[k]->is_tensor()) (x ? y : x) = &ins[k]->tensor();
    if (!x) return false;
    const DType d = x->dtype();
    if (!in_set(d, rule.fast_dtypes) || !detail::fast_operand(*x, s.device())) return false;
    if (y && !(detail::fast_operand(*y, s.device()) && detail::same_dtype_extents(*x, *y))) return false;
    for (int k = 0; k < N; ++k)  // a scalar must keep the dtype and need no fit check
      if (!ins[k]->is_tensor() && (!is_inexact(d) || ins[k]->scalar().result_dtype_with(d) != d)) return false;
    if (out && !detail::fast_output_ok(*out, *x, y)) return false;
    const auto kernel = kernel_of<N>(detail::kernel_for(s, op, d).fn);
    if (!out) result = detail::new_like(*x, d);
    EwCall<N> c;
    c.out = out ? out : &result;
    for (int k = 0; k < N; ++k) {
      if (ins[k]->is_tensor()) c.tensor[k] = &ins[k]->tensor();
      else c.scalar[k] = &ins[k]->scalar();
      c.in[k] = d;
    }
    c.contiguous = true;
    kernel(s, c);
    return true;
  }
}

}  // namespace

void detail::check_integer_operand(Session& s, OpId op, std::string_view name, const Tensor* t, const Scalar* v) {
  const bool zero = op != OpId::pow;
  const char* what = zero ? "integer division by zero" : "negative integer exponent";
  std::string msg;
  if (!t) {
    const std::int64_t x = v->to<std::int64_t>();
    if (zero ? x != 0 : x >= 0) return;
    msg = std::string(what) + " (scalar " + std::to_string(x) + ")";
  } else {
    // While tracing there is no data: the graph's node runs this check when it runs
    // (compile.cpp; Note [Tracing] in tenferro/graph.hpp).
    if (s.device() == DeviceKind::trace) return;
    const detail::DataChecks& checks = detail::data_checks(s, name);
    if ((zero ? checks.first_zero(s, *t) : checks.first_negative(s, *t)) < 0) return;
    msg = std::string(what) + " in " + detail::describe(*t);
  }
  if (zero) throw NumericalError(name, msg);
  throw ArgumentError(name, msg);
}

namespace {

/// The general path: inference, output checks, inputs cast to their read dtype, the
/// data checks, then the kernel. Nothing is written or allocated before every check.
template <OpId op, int N>
void run_general(Session& s, std::string_view name, const Operand* const* ins, CompareOp cmp, const Tensor* out, Tensor& result) {
  std::int64_t shapes[N][kMaxRank];
  detail::EwOperand sig[N];
  for (int k = 0; k < N; ++k) {
    if (!ins[k]->is_tensor()) {
      sig[k].scalar = &ins[k]->scalar();
      continue;
    }
    const Tensor& t = ins[k]->tensor();
    detail::require_tensor_on(t, s.device(), name, "input");
    for (int i = 0; i < t.rank(); ++i) shapes[k][i] = t.extent(i);
    sig[k].shape = std::span<const std::int64_t>(shapes[k], static_cast<std::size_t>(t.rank()));
    sig[k].dtype = t.dtype();
  }
  const detail::EwSignature g = detail::infer_elementwise(op, sig, cmp);
  const auto kernel = kernel_of<N>(detail::kernel_for(s, op, g.compute).fn);
  if (out) {
    detail::require_output(*out, name, g.out, g.shape.span(), s.device());
    for (int k = 0; k < N; ++k)
      if (ins[k]->is_tensor()) detail::check_overlap(*out, ins[k]->tensor(), name, /*same_ok=*/true);
  }
  EwCall<N> c;
  Tensor converted[N];
  for (int k = 0; k < N; ++k) {
    c.in[k] = g.in[k];
    if (!ins[k]->is_tensor()) {
      c.scalar[k] = &ins[k]->scalar();
      continue;
    }
    const Tensor& t = ins[k]->tensor();
    if (t.dtype() != g.in[k]) converted[k] = cast(s, t, g.in[k]);
    c.tensor[k] = converted[k].defined() ? &converted[k] : &t;
  }
  std::int64_t numel = 1;
  for (std::int64_t e : g.shape.span()) numel *= e;
  if constexpr (N >= 2) {  // div, rem and pow are binary (a unary call has no operand 1)
    if (detail::checks_integer_operand(op, g.compute) && numel > 0) detail::check_integer_operand(s, op, name, c.tensor[1], c.scalar[1]);
  }
  if (!out) result = detail::new_output(s, g.shape.span(), g.out, name);
  c.out = out ? out : &result;
  c.cmp = cmp;
  kernel(s, c);
}

/// One elementwise call, both forms (`out` null: allocate into `result`).
template <OpId op, int N> void elementwise(Session& s, const Operand* const (&ins)[N], CompareOp cmp, const Tensor* out, Tensor& result) {
  static_assert(op_info(op).inputs == N, "operand count differs from the catalogue row");
  std::string_view name = op_name(op);
  if constexpr (op == OpId::compare) {
    detail::require_enum(cmp, CompareOp::ge, "compare", "CompareOp");
    name = detail::ew_name(op, cmp);
  }
  s.check(name);
  if (run_fast<op, N>(s, ins, out, result)) return;
  run_general<op, N>(s, name, ins, cmp, out, result);
}

template <OpId op, class... A> Tensor ew_alloc(Session& s, CompareOp cmp, const A&... a) {
  const Operand* ins[] = {&a...};
  Tensor r;
  elementwise<op>(s, ins, cmp, nullptr, r);
  return r;
}

template <OpId op, class... A> void ew_into(Session& s, CompareOp cmp, const Tensor& out, const A&... a) {
  const Operand* ins[] = {&a...};
  Tensor r;
  elementwise<op>(s, ins, cmp, &out, r);
}

}  // namespace

// The public functions, one set per catalogue row of the two families (checked below).
#define TENFERRO_DEFINE_UNARY(name)                                                               \
  Tensor name(Session& s, const Tensor& x) { return ew_alloc<OpId::name>(s, {}, Operand(x)); }    \
  void name##_into(Session& s, const Tensor& x, const Tensor& out) { ew_into<OpId::name>(s, {}, out, Operand(x)); }
#define TENFERRO_DEFINE_BINARY(name)                                                                          \
  Tensor name(Session& s, const Operand& a, const Operand& b) { return ew_alloc<OpId::name>(s, {}, a, b); } \
  void name##_into(Session& s, const Operand& a, const Operand& b, const Tensor& out) { ew_into<OpId::name>(s, {}, out, a, b); }
#define TENFERRO_EW_UNARY(X) X(neg) X(conj) X(abs) X(sign) X(real) X(imag) X(angle)
#define TENFERRO_EW_BINARY(X) X(add) X(sub) X(mul) X(div) X(rem) X(maximum) X(minimum) X(pow)
TENFERRO_EW_UNARY(TENFERRO_DEFINE_UNARY)
TENFERRO_EW_BINARY(TENFERRO_DEFINE_BINARY)
// The analytic functions: every `analytic` row (Note [Family lists from the catalogue]).
#define TENFERRO_ANALYTIC_ITEM(name) TENFERRO_DEFINE_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TENFERRO_DEFINE_BINARY
#undef TENFERRO_DEFINE_UNARY

Tensor compare(Session& s, const Operand& a, const Operand& b, CompareOp op) { return ew_alloc<OpId::compare>(s, op, a, b); }
void compare_into(Session& s, const Operand& a, const Operand& b, CompareOp op, const Tensor& out) {
  ew_into<OpId::compare>(s, op, out, a, b);
}
Tensor select(Session& s, const Operand& pred, const Operand& t, const Operand& f) {
  return ew_alloc<OpId::select>(s, {}, pred, t, f);
}
void select_into(Session& s, const Operand& pred, const Operand& t, const Operand& f, const Tensor& out) {
  ew_into<OpId::select>(s, {}, out, pred, t, f);
}
Tensor clamp(Session& s, const Operand& lo, const Operand& x, const Operand& hi) { return ew_alloc<OpId::clamp>(s, {}, lo, x, hi); }
void clamp_into(Session& s, const Operand& lo, const Operand& x, const Operand& hi, const Tensor& out) {
  ew_into<OpId::clamp>(s, {}, out, lo, x, hi);
}

namespace {
#define TENFERRO_EW_ID(name) OpId::name,
constexpr OpId kDefined[] = {TENFERRO_EW_UNARY(TENFERRO_EW_ID) TENFERRO_EW_BINARY(TENFERRO_EW_ID) OpId::compare, OpId::select, OpId::clamp};
#undef TENFERRO_EW_ID

/// True when the non-analytic functions defined above are exactly the catalogue's
/// elementwise rows (the analytic ones are generated from the catalogue).
constexpr bool defines_every_elementwise_op() noexcept {
  int rows = 0;
  for (const OpInfo& info : kOps) rows += info.family == OpFamily::elementwise;
  if (rows != static_cast<int>(std::size(kDefined))) return false;
  for (OpId op : kDefined)
    if (op_info(op).family != OpFamily::elementwise) return false;
  return true;
}
static_assert(defines_every_elementwise_op(), "the elementwise functions and the catalogue's elementwise rows disagree (src/ops/elementwise.cpp)");
}  // namespace
#undef TENFERRO_EW_BINARY
#undef TENFERRO_EW_UNARY

}  // namespace tenferro
