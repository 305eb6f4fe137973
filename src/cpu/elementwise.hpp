#pragma once
// The elementwise engine: validation and broadcasting of up to three operands (tensors
// or scalars), dtype promotion, output checks, then a LoopPlan over out + inputs and a
// typed line kernel, inline or split over the session's threads.
#include "core/internal_check.hpp"

#include <cstring>

#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "cpu/strided_loop.hpp"

namespace tenferro::detail {

/// Operands of one elementwise call after validation: the result shape, the compute
/// dtype inputs are brought to, and per input either a tensor (converted to the compute
/// dtype when it differs) or a scalar stored in the compute dtype.
template <int NIn> struct EwArgs {
  std::string_view op;
  Dims shape;
  DType compute = DType::f64;
  const Tensor* tensor[NIn] = {};  ///< tensor operand (nullptr for scalars)
  Tensor converted[NIn];           ///< tensor converted to its compute dtype, when needed
  alignas(16) unsigned char scalar[NIn][16] = {};
  DType in_dtype[NIn] = {};        ///< dtype each input is read as by the kernel

  /// Pointer and byte strides of input k over `shape`.
  char* ptr(int k) const noexcept {
    return tensor[k] ? static_cast<char*>(const_cast<void*>(input(k).data())) : const_cast<char*>(reinterpret_cast<const char*>(scalar[k]));
  }
  const Tensor& input(int k) const noexcept { return converted[k].defined() ? converted[k] : *tensor[k]; }
};

/// Checks the session and tensor operands and computes the broadcast shape into `args`;
/// returns the promoted dtype of the inputs selected by `dtype_mask` (scalars weak).
/// Does not convert anything yet.
template <int NIn> DType promote_operands(Session& s, EwArgs<NIn>& args, const Operand* const* ins, unsigned dtype_mask = ~0u) {
  s.check(args.op);
  bool shaped = false, typed = false;
  DType d = DType::b8;
  for (int k = 0; k < NIn; ++k) {
    if (!ins[k]->is_tensor()) continue;
    const Tensor& t = ins[k]->tensor();
    require_cpu_tensor(t, args.op, "input");
    args.tensor[k] = &t;
    args.shape = shaped ? broadcast_shapes(args.shape, t.shape(), args.op) : t.shape();
    shaped = true;
    if (dtype_mask >> k & 1) {
      d = typed ? promote(d, t.dtype()) : t.dtype();
      typed = true;
    }
  }
  for (int k = 0; k < NIn; ++k) {
    if (ins[k]->is_tensor() || !(dtype_mask >> k & 1)) continue;
    const Scalar& v = ins[k]->scalar();
    d = typed ? v.result_dtype_with(d) : v.natural_dtype();
    typed = true;
  }
  return d;
}

/// DTypeError "<op>: dtype X not supported (needs ...)" unless d is in `set`.
inline void require_dtype_in(DType d, DTypeSet set, std::string_view op) {
  if (!in_set(d, set)) throw_dtype_not_in_set(op, d, set);
}

/// Validates `out` (dtype, shape, writability, overlap with each tensor input) or
/// allocates the result when `out` is null; returns the tensor to write.
template <int NIn> const Tensor& prepare_output(EwArgs<NIn>& args, DType out_dtype, const Tensor* out, Tensor& result) {
  if (out) {
    require_output(*out, args.op, out_dtype, args.shape);
    for (int k = 0; k < NIn; ++k)
      if (args.tensor[k]) check_overlap(*out, *args.tensor[k], args.op, true);
    return *out;
  }
  result = new_output(args.shape, out_dtype, args.op);
  return result;
}

/// Builds the plan for out + inputs.
template <int NIn> LoopPlan<NIn + 1> make_plan(const EwArgs<NIn>& args, const Tensor& out) {
  const int r = args.shape.size();
  std::int64_t strides[NIn + 1][kMaxRank];
  const std::int64_t* sp[NIn + 1];
  char* ptrs[NIn + 1];
  broadcast_byte_strides(out, r, strides[0]);
  ptrs[0] = static_cast<char*>(out.mutable_data(args.op));
  for (int k = 0; k < NIn; ++k) {
    if (args.tensor[k]) broadcast_byte_strides(args.input(k), r, strides[k + 1]);
    else std::fill(strides[k + 1], strides[k + 1] + r, 0);
    ptrs[k + 1] = args.ptr(k);
  }
  for (int k = 0; k <= NIn; ++k) sp[k] = strides[k];
  LoopPlan<NIn + 1> plan;
  plan.build(r, args.shape.data(), sp, ptrs);
  return plan;
}

// ---- line kernels: o[i] = f(a[i], ...) along one inner line ----

template <class O, class A, class F> void line1(char** p, const std::int64_t* st, std::int64_t n, F f) {
  if (st[0] == sizeof(O) && st[1] == sizeof(A)) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    return;
  }
  char* o = p[0];
  const char* a = p[1];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1]) *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a));
}

template <class O, class A, class B, class F> void line2(char** p, const std::int64_t* st, std::int64_t n, F f) {
  if (st[0] == sizeof(O)) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    const B* b = reinterpret_cast<const B*>(p[2]);
    if (st[1] == sizeof(A) && st[2] == sizeof(B)) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
      return;
    }
    if (st[1] == sizeof(A) && st[2] == 0) {
      const B bv = *b;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
      return;
    }
    if (st[1] == 0 && st[2] == sizeof(B)) {
      const A av = *a;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
      return;
    }
  }
  char* o = p[0];
  const char *a = p[1], *b = p[2];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1], b += st[2])
    *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a), *reinterpret_cast<const B*>(b));
}

template <class O, class A, class B, class C, class F> void line3(char** p, const std::int64_t* st, std::int64_t n, F f) {
  char* o = p[0];
  const char *a = p[1], *b = p[2], *c = p[3];
  for (std::int64_t i = 0; i < n; ++i, o += st[0], a += st[1], b += st[2], c += st[3])
    *reinterpret_cast<O*>(o) = f(*reinterpret_cast<const A*>(a), *reinterpret_cast<const B*>(b), *reinterpret_cast<const C*>(c));
}

/// Runs o[i] = f(a[i], b[i]) (o[i] = f(a[i])) over n contiguous elements, inline or
/// across the session's threads.
template <class O, class A, class B, class F> void run_contiguous2(const Session& s, O* o, const A* a, const B* b, std::int64_t n, std::int64_t cost, F f) {
  if (n * cost < kForkThreshold) {  // never forks (Note [Fork cost model]): skip the decision call
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
    return;
  }
  parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) o[i] = f(a[i], b[i]);
  });
}
template <class O, class A, class F> void run_contiguous1(const Session& s, O* o, const A* a, std::int64_t n, std::int64_t cost, F f) {
  if (n * cost < kForkThreshold) {  // as run_contiguous2
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    return;
  }
  parallel_for(s, n, cost, [=](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) o[i] = f(a[i]);
  });
}

/// Runs `line` over the plan, inline or across the session's threads (Note [Fork cost model]).
template <int N, class Line> void run_plan(const Session& s, const LoopPlan<N>& plan, std::int64_t cost, Line line) {
  parallel_for(s, plan.numel, cost, [&](std::int64_t b, std::int64_t e) { plan.run(b, e, line); });
}

}  // namespace tenferro::detail
