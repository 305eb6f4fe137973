#pragma once
// Sweep entries of the structural, indexing, contraction, FFT and einsum families
// (Note [Bad-input sweep]).
#include "ops/sweep/sweep.hpp"

namespace tenferro::sweep {

namespace detail {
/// An entry with one main operand (plus fixed extra operands from `extra`), one result.
inline SweepEntry one_result(std::string op, std::function<Tensor(Session&, const Args&)> f,
                             std::function<void(Session&, const Args&, const Tensor&)> f_into,
                             std::function<Args(Session&, DType, const Shape&)> args = nullptr) {
  SweepEntry e;
  e.op = std::move(op);
  e.args = args ? std::move(args) : [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d)}; };
  e.run = [f](Session& s, const Args& a) { return Outs{f(s, a)}; };
  if (f_into) e.run_into = [f_into](Session& s, const Args& a, const Outs& o) { f_into(s, a, o[0]); };
  return e;
}
inline Tensor indices(std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> values) {
  return Tensor::from_data<std::int64_t>(shape, values);
}
inline GatherDims gather_rows() {
  GatherDims g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  return g;
}
inline ScatterDims scatter_rows() {
  ScatterDims d;
  d.update_window_dims = {1};
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  return d;
}
}  // namespace detail

inline std::vector<SweepEntry> structural_entries() {
  using detail::indices;
  using detail::one_result;
  std::vector<SweepEntry> v;
  v.push_back(one_result("transpose", [](Session& s, const Args& a) { return transpose(s, a[0], Dims{1, 0}.span()); },
                         [](Session& s, const Args& a, const Tensor& o) { transpose_into(s, a[0], Dims{1, 0}.span(), o); }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)transpose(s, a[0], Dims{ax, 0}.span()); };
  v.push_back(one_result("broadcast_in_dim", [](Session& s, const Args& a) { return broadcast_in_dim(s, a[0], {3, 4, 5}, {0, 1}); },
                         [](Session& s, const Args& a, const Tensor& o) { broadcast_in_dim_into(s, a[0], {0, 1}, o); }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)broadcast_in_dim(s, a[0], {3, 4, 5}, {0, ax}); };
  v.back().axis_rank = 3;  // broadcast dimensions are result axes
  v.back().overflow = [](Session& s) {
    // [2^32] broadcast into [2^32, 2^32]: a result of 2^64 elements.
    const std::int64_t big = std::int64_t{1} << 32;
    (void)broadcast_in_dim(s, Tensor::zeros({1}, DType::f64).as_strided_view(Dims{big}, Dims{0}, 0), {big, big}, {0});
  };
  v.push_back(one_result("extract_diagonal", [](Session& s, const Args& a) { return extract_diagonal(s, a[0], 0, 1); },
                         [](Session& s, const Args& a, const Tensor& o) { extract_diagonal_into(s, a[0], 0, 1, o); }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)extract_diagonal(s, a[0], ax, 1); };
  v.push_back(one_result("embed_diagonal", [](Session& s, const Args& a) { return embed_diagonal(s, a[0], 0, 1); },
                         [](Session& s, const Args& a, const Tensor& o) { embed_diagonal_into(s, a[0], 0, 1, o); }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)embed_diagonal(s, a[0], ax, 1); };
  v.back().axis_rank = 2;  // the diagonal's axes are result axes
  v.back().shape = {4};
  v.back().zero_shape = {0};
  v.push_back(one_result("tril", [](Session& s, const Args& a) { return tril(s, a[0], 0); },
                         [](Session& s, const Args& a, const Tensor& o) { tril_into(s, a[0], 0, o); }));
  v.push_back(one_result("triu", [](Session& s, const Args& a) { return triu(s, a[0], 1); },
                         [](Session& s, const Args& a, const Tensor& o) { triu_into(s, a[0], 1, o); }));
  const auto two = [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), rand(sh, d)}; };
  v.push_back(one_result("concatenate", [](Session& s, const Args& a) { return concatenate(s, a, 1); },
                         [](Session& s, const Args& a, const Tensor& o) { concatenate_into(s, a, 1, o); }, two));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)concatenate(s, a, ax); };
  v.back().any_rank = false;
  v.back().overflow = [](Session& s) {
    // Two views of extent 2^62 + 2^62 - 1: the concatenated extent passes INT64_MAX.
    const std::int64_t big = (std::int64_t{1} << 62) + ((std::int64_t{1} << 62) - 1);
    const Tensor one = Tensor::zeros({1}, DType::f64);
    (void)concatenate(s, std::vector{one.as_strided_view(Dims{big}, Dims{0}, 0), one.as_strided_view(Dims{big}, Dims{0}, 0)}, 0);
  };
  v.push_back(one_result("stack", [](Session& s, const Args& a) { return stack(s, a, 0); },
                         [](Session& s, const Args& a, const Tensor& o) { stack_into(s, a, 0, o); }, two));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)stack(s, a, ax); };
  v.back().axis_rank = 3;  // the new axis is a result axis
  v.push_back(one_result("reverse", [](Session& s, const Args& a) { return reverse(s, a[0], Dims{0}.span()); },
                         [](Session& s, const Args& a, const Tensor& o) { reverse_into(s, a[0], Dims{0}.span(), o); }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)reverse(s, a[0], Dims{ax}.span()); };
  v.push_back(one_result("pad", [](Session& s, const Args& a) { return pad(s, a[0], 0, {1, 0}, {0, 2}, {1, 0}); },
                         [](Session& s, const Args& a, const Tensor& o) { pad_into(s, a[0], 0, {1, 0}, {0, 2}, {1, 0}, o); }));
  v.back().overflow = [](Session& s) {  // an interior padding whose result extent passes INT64_MAX
    (void)pad(s, Tensor::zeros({3}, DType::f64), 0, {0}, {0}, {std::int64_t{1} << 62});
  };
  {
    SweepEntry e = one_result("iota", [](Session& s, const Args& a) { return iota(s, a[0].shape().span(), a[0].dtype(), 1); },
                              [](Session& s, const Args&, const Tensor& o) { iota_into(s, 1, o); });
    e.with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)iota(s, a[0].shape().span(), a[0].dtype(), ax); };
    e.bad_enum = [](Session& s, const Args& a) { (void)iota(s, a[0].shape().span(), static_cast<DType>(42), 0); };
    e.out_defines_result = true;
    v.push_back(std::move(e));
  }
  // ---- indexing
  v.push_back(one_result("slice", [](Session& s, const Args& a) { return slice(s, a[0], {0, 1}, {3, 4}, {2, 1}); },
                         [](Session& s, const Args& a, const Tensor& o) { slice_into(s, a[0], {0, 1}, {3, 4}, {2, 1}, o); }));
  const auto x_and_start = [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), indices({2}, {1, 1})}; };
  v.push_back(one_result("dynamic_slice", [](Session& s, const Args& a) { return dynamic_slice(s, a[0], a[1], {2, 2}); },
                         [](Session& s, const Args& a, const Tensor& o) { dynamic_slice_into(s, a[0], a[1], {2, 2}, o); }, x_and_start));
  v.push_back(one_result("dynamic_update_slice", [](Session& s, const Args& a) { return dynamic_update_slice(s, a[0], a[2], a[1]); },
                         [](Session& s, const Args& a, const Tensor& o) { dynamic_update_slice_into(s, a[0], a[2], a[1], o); },
                         [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), indices({2}, {1, 1}), rand({2, 2}, d)}; }));
  v.push_back(one_result("gather",
                         [](Session& s, const Args& a) { return gather(s, a[0], a[1], detail::gather_rows(), {1, a[0].shape()[1]}); },
                         [](Session& s, const Args& a, const Tensor& o) { gather_into(s, a[0], a[1], detail::gather_rows(), {1, a[0].shape()[1]}, o); },
                         [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), indices({2, 1}, {0, 2})}; }));
  {
    SweepEntry e = one_result(
        "scatter", [](Session& s, const Args& a) { return scatter(s, a[0], a[1], a[2], detail::scatter_rows(), ScatterCombiner::replace); },
        [](Session& s, const Args& a, const Tensor& o) { scatter_into(s, a[0], a[1], a[2], detail::scatter_rows(), ScatterCombiner::replace, o); },
        [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), indices({2, 1}, {0, 2}), rand(Shape{2, sh.size() > 1 ? sh[1] : 1}, d)}; });
    e.bad_enum = [](Session& s, const Args& a) {
      (void)scatter(s, a[0], a[1], a[2], detail::scatter_rows(), static_cast<ScatterCombiner>(77));
    };
    v.push_back(std::move(e));
  }
  v.push_back(one_result("take_along_axis", [](Session& s, const Args& a) { return take_along_axis(s, a[0], a[1], 0); },
                         [](Session& s, const Args& a, const Tensor& o) { take_along_axis_into(s, a[0], a[1], 0, o); },
                         [](Session&, DType d, const Shape& sh) {
                           return Args{rand(sh, d), Tensor::zeros(Shape{1, sh.size() > 1 ? sh[1] : 1}.span(), DType::i64)};
                         }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)take_along_axis(s, a[0], a[1], ax); };
  v.push_back(one_result("index_select", [](Session& s, const Args& a) { return index_select(s, a[0], 1, a[1]); },
                         [](Session& s, const Args& a, const Tensor& o) { index_select_into(s, a[0], 1, a[1], o); },
                         [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), indices({3}, {0, 0, 2})}; }));
  v.back().with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)index_select(s, a[0], ax, a[1]); };
  // Indexing operands of other extents can be valid (a window clamped into place, more
  // or fewer indices): the mismatch case wants a result or a typed error there.
  for (SweepEntry& e : v)
    if (e.op == "dynamic_slice" || e.op == "dynamic_update_slice" || e.op == "gather" || e.op == "scatter" ||
        e.op == "take_along_axis" || e.op == "index_select")
      e.mismatch_is_error = false;
  // ---- contraction
  const auto mat_pair = [](Session&, DType d, const Shape& sh) { return Args{rand(sh, d), rand({sh.size() > 1 ? sh[1] : 1, 5}, d)}; };
  {
    DotDims dims;
    dims.lhs_contracting = {1};
    dims.rhs_contracting = {0};
    SweepEntry e = one_result("dot_general", [dims](Session& s, const Args& a) { return dot_general(s, a[0], a[1], dims); },
                              [dims](Session& s, const Args& a, const Tensor& o) { dot_general_into(s, a[0], a[1], dims, o); }, mat_pair);
    e.with_axis = [](Session& s, const Args& a, std::int64_t ax) {
      DotDims d;
      d.lhs_contracting = {ax};
      d.rhs_contracting = {0};
      (void)dot_general(s, a[0], a[1], d);
    };
    e.overflow = [dims](Session& s) {  // the outer product of two 2^32 vectors
      const Args h = huge_pair(DType::f64);
      (void)dot_general(s, h[0], h[1], dims);
    };
    v.push_back(std::move(e));
  }
  {
    SweepEntry e = one_result("grouped_gemm", nullptr, nullptr, mat_pair);
    e.run = [](Session& s, const Args& a) {
      Tensor c = Tensor::zeros({a[0].shape()[0], a[1].rank() > 1 ? a[1].shape()[1] : 1}, a[0].dtype());
      const GemmItem item{.a = &a[0], .b = &a[1], .c = &c};
      grouped_gemm(s, std::span(&item, 1));
      return Outs{c};
    };
    e.run_into = [](Session& s, const Args& a, const Outs& o) {
      const GemmItem item{.a = &a[0], .b = &a[1], .c = &o[0]};
      grouped_gemm(s, std::span(&item, 1));
    };
    v.push_back(std::move(e));
  }
  // ---- FFT (axis 0)
#define TF_FFT(name, arg_dtype)                                                                                      \
  {                                                                                                                 \
    SweepEntry e = one_result(#name, [](Session& s, const Args& a) { return name(s, a[0]); },                       \
                              [](Session& s, const Args& a, const Tensor& o) { name##_into(s, a[0], o); });         \
    e.with_axis = [](Session& s, const Args& a, std::int64_t ax) { (void)name(s, a[0], FftOptions{.axis = ax}); };  \
    e.bad_enum = [](Session& s, const Args& a) { (void)name(s, a[0], FftOptions{.norm = static_cast<FftNorm>(9)}); }; \
    e.shape = {8, 3};                                                                                               \
    e.zero_shape = {0, 3};                                                                                          \
    v.push_back(std::move(e));                                                                                      \
  }
  TF_FFT(fft, c128) TF_FFT(ifft, c128) TF_FFT(rfft, f64) TF_FFT(irfft, c128)
#undef TF_FFT
  // ---- einsum
  {
    SweepEntry e = one_result("einsum", [](Session& s, const Args& a) { return einsum(s, "ij,jk->ki", a); },
                              [](Session& s, const Args& a, const Tensor& o) { einsum_into(s, "ij,jk->ki", a, o); }, mat_pair);
    e.bad_enum = [](Session& s, const Args& a) {
      EinsumOptions o;
      o.plan.optimizer = static_cast<EinsumOptimizer>(99);
      (void)einsum(s, "ij,jk,kl->il", std::vector{a[0], a[1], a[1].permute_view({1, 0})}, o);
    };
    e.overflow = [](Session& s) { (void)einsum(s, "ij,jk->ki", huge_pair(DType::f64)); };
    v.push_back(std::move(e));
  }
  return v;
}

}  // namespace tenferro::sweep
