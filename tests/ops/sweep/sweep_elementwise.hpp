#pragma once
// Sweep entries of the elementwise, analytic, conversion, reduction, along-axis and
// BLAS-1 families (Note [Bad-input sweep]).
#include "ops/sweep/sweep.hpp"

namespace tenferro::sweep {

namespace detail {
/// An entry for an op of `arity` same-shape operands, any rank, one result.
inline SweepEntry same_shape(std::string op, int arity, std::function<Tensor(Session&, const Args&)> f,
                             std::function<void(Session&, const Args&, const Tensor&)> f_into, bool elementwise = true) {
  SweepEntry e;
  e.op = std::move(op);
  e.args = [arity](Session&, DType d, const Shape& sh) {
    Args a;
    for (int i = 0; i < arity; ++i) a.push_back(rand(sh, d, 0.25, 2));  // positive: log, sqrt, pow stay real
    return a;
  };
  e.run = [f](Session& s, const Args& a) { return Outs{f(s, a)}; };
  e.run_into = [f_into](Session& s, const Args& a, const Outs& o) { f_into(s, a, o[0]); };
  e.any_rank = true;
  e.elementwise = elementwise;
  return e;
}
}  // namespace detail

inline std::vector<SweepEntry> elementwise_entries() {
  using detail::same_shape;
  std::vector<SweepEntry> v;
#define TF_BINARY(name)                                                                                              \
  v.push_back(same_shape(#name, 2, [](Session& s, const Args& a) { return name(s, a[0], a[1]); },                    \
                         [](Session& s, const Args& a, const Tensor& o) { name##_into(s, a[0], a[1], o); }));        \
  v.back().overflow = [](Session& s) {                                                                            \
    const Args h = huge_pair(DType::f64);                                                                            \
    (void)name(s, h[0], h[1]);                                                                                       \
  };
  TF_BINARY(add) TF_BINARY(sub) TF_BINARY(mul) TF_BINARY(div) TF_BINARY(rem) TF_BINARY(maximum) TF_BINARY(minimum)
  TF_BINARY(pow)
#undef TF_BINARY
  v.push_back(same_shape("compare", 2, [](Session& s, const Args& a) { return compare(s, a[0], a[1], CompareOp::lt); },
                         [](Session& s, const Args& a, const Tensor& o) { compare_into(s, a[0], a[1], CompareOp::lt, o); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)compare(s, a[0], a[1], static_cast<CompareOp>(9)); };
  v.back().overflow = [](Session& s) {
    const Args h = huge_pair(DType::f64);
    (void)compare(s, h[0], h[1], CompareOp::eq);
  };
  {
    SweepEntry e = same_shape("select", 3, [](Session& s, const Args& a) { return select(s, a[0], a[1], a[2]); },
                              [](Session& s, const Args& a, const Tensor& o) { select_into(s, a[0], a[1], a[2], o); });
    // The predicate is bool; the dtype cases vary the branches.
    e.args = [](Session&, DType d, const Shape& sh) { return Args{rand(sh, DType::b8), rand(sh, d), rand(sh, d)}; };
    v.push_back(std::move(e));
  }
  v.push_back(same_shape("clamp", 3, [](Session& s, const Args& a) { return clamp(s, a[0], a[1], a[2]); },
                         [](Session& s, const Args& a, const Tensor& o) { clamp_into(s, a[0], a[1], a[2], o); }));
#define TF_UNARY(name)                                                                                              \
  v.push_back(same_shape(#name, 1, [](Session& s, const Args& a) { return name(s, a[0]); },                         \
                         [](Session& s, const Args& a, const Tensor& o) { name##_into(s, a[0], o); }));
  TF_UNARY(neg) TF_UNARY(conj) TF_UNARY(abs) TF_UNARY(sign) TF_UNARY(real) TF_UNARY(imag) TF_UNARY(angle)
#define TENFERRO_ANALYTIC_ITEM(name) TF_UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef TF_UNARY

  // ---- conversion
  v.push_back(same_shape("convert", 1, [](Session& s, const Args& a) { return convert(s, a[0], DType::c128); },
                         [](Session& s, const Args& a, const Tensor& o) { convert_into(s, a[0], o); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)convert(s, a[0], static_cast<DType>(42)); };
  v.back().any_out_dtype = true;
  v.push_back(same_shape("cast", 1, [](Session& s, const Args& a) { return cast(s, a[0], DType::i64); },
                         [](Session& s, const Args& a, const Tensor& o) { cast_into(s, a[0], o); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)cast(s, a[0], static_cast<DType>(42)); };
  v.back().any_out_dtype = true;
  v.push_back(same_shape("copy", 1, [](Session& s, const Args& a) { return to_contiguous(s, a[0]); },
                         [](Session& s, const Args& a, const Tensor& o) { copy_into(s, a[0], o); }));
  v.push_back(same_shape("reshape", 1, [](Session& s, const Args& a) { return reshape(s, a[0], Dims{-1}.span()); },
                         [](Session& s, const Args& a, const Tensor& o) { reshape_into(s, a[0], Dims{-1}.span(), o); }, false));

  // ---- reductions over axis 0 (with_axis: that axis replaced)
#define TF_REDUCE(name)                                                                                                     \
  {                                                                                                                         \
    SweepEntry e = same_shape(#name, 1, [](Session& s, const Args& a) { return name(s, a[0], {0}); },                       \
                              [](Session& s, const Args& a, const Tensor& o) {                                              \
                                const std::int64_t ax[1] = {0};                                                             \
                                name##_into(s, a[0], ax, o);                                                                \
                              },                                                                                            \
                              false);                                                                                       \
    e.with_axis = [](Session& s, const Args& a, std::int64_t axis) { (void)name(s, a[0], {axis}); };                        \
    e.any_rank = false;                                                                                                     \
    v.push_back(std::move(e));                                                                                              \
  }
  TF_REDUCE(sum) TF_REDUCE(prod) TF_REDUCE(max) TF_REDUCE(min) TF_REDUCE(mean) TF_REDUCE(sum_squares) TF_REDUCE(argmax)
  TF_REDUCE(argmin) TF_REDUCE(logsumexp)
#undef TF_REDUCE

  // ---- along one axis (axis 1)
#define TF_ALONG(name)                                                                                                      \
  {                                                                                                                         \
    SweepEntry e = same_shape(#name, 1, [](Session& s, const Args& a) { return name(s, a[0], 1); },                         \
                              [](Session& s, const Args& a, const Tensor& o) { name##_into(s, a[0], 1, o); }, false);       \
    e.with_axis = [](Session& s, const Args& a, std::int64_t axis) { (void)name(s, a[0], axis); };                          \
    e.any_rank = false;                                                                                                     \
    v.push_back(std::move(e));                                                                                              \
  }
  TF_ALONG(cumsum) TF_ALONG(cumprod) TF_ALONG(softmax) TF_ALONG(log_softmax)
#undef TF_ALONG

  // ---- BLAS-1
  v.push_back(same_shape("vdot", 2, [](Session& s, const Args& a) { return vdot(s, a[0], a[1]); },
                         [](Session& s, const Args& a, const Tensor& o) { vdot_into(s, a[0], a[1], o); }, false));
  v.push_back(same_shape("norm_squared", 1, [](Session& s, const Args& a) { return norm_squared(s, a[0]); },
                         [](Session& s, const Args& a, const Tensor& o) { norm_squared_into(s, a[0], o); }, false));
  {
    // axpby updates y in place: y's copy is the output the driver watches.
    SweepEntry e = same_shape("axpby", 1, nullptr, nullptr, false);
    e.args = [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d)}; };
    e.run = [](Session& s, const Args& a) {
      Tensor y = sentinel(a[0].shape().span(), a[0].dtype());
      axpby(s, 2.0, a[0], 0.5, y);
      return Outs{y};
    };
    e.run_into = [](Session& s, const Args& a, const Outs& o) { axpby(s, 2.0, a[0], 0.5, o[0]); };
    v.push_back(std::move(e));
  }
  return v;
}

}  // namespace tenferro::sweep
