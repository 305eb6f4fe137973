// The reductions' front end (ops.hpp: sum prod max min mean sum_squares argmax argmin
// logsumexp; Note [Reductions in the op layer]): validate through infer_reduce and
// prepare the output in one helper for both forms, dispatch through the session's kernel
// table.
#include <cstdint>

#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "ops/reduce.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {

namespace {


/// What a call needs once validated: the output signature and the kernel.
struct Prepared {
  detail::ReduceSignature sig;
  detail::ReduceKernel kernel;
};

/// Validates one reduction call and prepares its output, for both forms: session, x on
/// the session's device, inference, the kernel from the session's table, and (for the
/// `_into` form, `out` non-null) the caller's buffer. The allocating form then allocates
/// sig's shape; nothing is written before this returns. The op is a template argument
/// so its name and table index are constants.
template <OpId op> Prepared prepare(Session& s, const Tensor& x, const ReduceAttrs& attrs, const Tensor* out) {
  constexpr std::string_view name = op_name(op);
  s.check(name);
  detail::require_tensor_on(x, s.device(), name, "x");
  std::int64_t shape[kMaxRank];
  const int rank = x.rank();
  for (int i = 0; i < rank; ++i) shape[i] = x.extent(i);
  Prepared p{detail::infer_reduce(op, std::span<const std::int64_t>(shape, static_cast<std::size_t>(rank)), x.dtype(), attrs),
             detail::kernel_for(s, op, x.dtype()).fn.reduce};
  if (out) {
    detail::require_output(*out, name, p.sig.dtype, p.sig.shape_span(), s.device());
    detail::check_overlap(*out, x, name, /*same_ok=*/false);
  }
  return p;
}

template <OpId op> Tensor reduce_alloc(Session& s, const Tensor& x, const ReduceAttrs& attrs) {
  const Prepared p = prepare<op>(s, x, attrs, nullptr);
  Tensor out = detail::new_output(s, p.sig.shape_span(), p.sig.dtype, op_name(op));
  p.kernel(s, x, out, p.sig.mask);
  return out;
}

template <OpId op> void reduce_into(Session& s, const Tensor& x, const ReduceAttrs& attrs, const Tensor& out) {
  const Prepared p = prepare<op>(s, x, attrs, &out);
  p.kernel(s, x, out, p.sig.mask);
}

}  // namespace

// The public functions, one set per catalogue reduction row (checked below).
#define TENFERRO_REDUCTIONS(X) X(sum) X(prod) X(max) X(min) X(mean) X(sum_squares) X(argmax) X(argmin) X(logsumexp)

#define TENFERRO_DEFINE_REDUCTION(name)                                                                                 \
  Tensor name(Session& s, const Tensor& x) { return reduce_alloc<OpId::name>(s, x, {.axes = {}, .all_axes = true}); } \
  Tensor name(Session& s, const Tensor& x, std::span<const std::int64_t> axes, bool keepdims) {                       \
    return reduce_alloc<OpId::name>(s, x, {.axes = Dims(axes), .all_axes = false, .keepdims = keepdims}); \
  }                                                                                                                    \
  void name##_into(Session& s, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out, bool keepdims) { \
    reduce_into<OpId::name>(s, x, {.axes = Dims(axes), .all_axes = false, .keepdims = keepdims}, out); \
  }
TENFERRO_REDUCTIONS(TENFERRO_DEFINE_REDUCTION)
#undef TENFERRO_DEFINE_REDUCTION

namespace {
#define TENFERRO_REDUCTION_ID(name) OpId::name,
constexpr OpId kDefined[] = {TENFERRO_REDUCTIONS(TENFERRO_REDUCTION_ID)};
#undef TENFERRO_REDUCTION_ID

/// True when the functions defined above are exactly the catalogue's reduction rows.
constexpr bool defines_every_reduction() noexcept {
  int rows = 0;
  for (const OpInfo& info : kOps) rows += info.family == OpFamily::reduction;
  if (rows != static_cast<int>(std::size(kDefined))) return false;
  for (OpId op : kDefined)
    if (op_info(op).family != OpFamily::reduction) return false;
  return true;
}
static_assert(defines_every_reduction(), "TENFERRO_REDUCTIONS and the catalogue's reduction rows disagree (src/ops/reduce.cpp)");
}  // namespace
#undef TENFERRO_REDUCTIONS

}  // namespace tenferro
