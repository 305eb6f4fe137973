#pragma once
// Derivative-check cases for axpby, take_along_axis, index_select and grouped_gemm
// (src/ad/rules_misc_ops.cpp, Note [Functional in-place ops], Note [Index scatter-add]):
// real and complex scalars, a real x into a complex y, every axis (negative too),
// negative and duplicate indices, broadcast index/operand extents, i32 indices, grouped
// GEMMs of several shapes with every conjugation flag, alpha/beta, with and without c.
// Each case runs with f64 and c128 inputs unless marked. Also exact-value TESTs
// (duplicates accumulate, nothing is mutated, constants record nothing), included by
// ad_rules_test.cpp only.
#include <cmath>
#include <string>

#include "ad/rule_case.hpp"

namespace tenferro::testing {

/// Indices for an axis of extent n, shape `shape`, values ((5·i + 2) mod 2n) − n in
/// [-n, n) (column-major i): both signs (k and k − n name the same element). The cases
/// give most index axes more than n entries, so an element is necessarily picked twice.
inline Tensor misc_pattern_indices(const Shape& shape, std::int64_t n, DType d = DType::i64) {
  Tensor t = Tensor::empty(shape.span(), d);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const std::int64_t v = (5 * i + 2) % (2 * n) - n;
    if (d == DType::i32) t.mutable_data_ptr<std::int32_t>()[i] = static_cast<std::int32_t>(v);
    else t.mutable_data_ptr<std::int64_t>()[i] = v;
  }
  return t;
}

inline void add_misc_ops_cases(CaseList& add) {
  const Shape m34{3, 4};
  // ---- axpby: α·x + β·y (functional).
  add("axpby", "axpby_real_scalars", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::axpby(c, 0.7, x[0], -1.3, x[1])}; });
  add("axpby", "axpby_complex_scalars", {{m34}, {m34}}, [](auto& c, Args x) {
    return Out{ad::axpby(c, c128(0.3, -1.2), x[0], c128(-0.5, 0.8), x[1])};
  }, true, false);
  // x f64 into a complex y: x receives the real part of conj(α)·ḡ.
  add("axpby", "axpby_real_x_into_complex_y", {{m34}, {m34}}, [](auto& c, Args x) {
    ad::EagerTensor y = ad::mul(c, ad::convert(c, x[1], DType::c128), c128(0.2, 0.9));
    return Out{ad::axpby(c, c128(0.3, -1.2), x[0], c128(-0.5, 0.8), y)};
  }, false);
  add("axpby", "axpby_x_only_batched", {{{3, 4, 2}}}, [](auto& c, Args x) {
    return Out{ad::axpby(c, 2.5, x[0], 0.5, Tensor::ones({3, 4, 2}, x[0].dtype()))};
  });
  add("axpby", "axpby_y_only_transposed", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::axpby(c, 2.5, Tensor::ones({3, 4}, x[0].dtype()), -0.5, ad::transpose(c, x[0], {1, 0}))};
  });
  add("axpby", "axpby_same_tensor", {{m34}}, [](auto& c, Args x) { return Out{ad::axpby(c, 1.5, x[0], -0.25, x[0])}; });

  // ---- take_along_axis (NumPy): axes 0, 1, -1, negative and duplicate indices,
  // broadcasting of x's and indices' off-axis extents, i32 indices.
  add("take_along_axis", "take_along_axis_axis0", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({6, 3}, 4), 0)};
  });
  add("take_along_axis", "take_along_axis_axis1", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({4, 5}, 3), 1)};
  });
  add("take_along_axis", "take_along_axis_negative_axis_batched", {{{3, 4, 2}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({3, 4, 3}, 2), -1)};
  });
  add("take_along_axis", "take_along_axis_middle_axis_batched", {{{2, 4, 3}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({2, 2, 3}, 4), 1)};
  });
  add("take_along_axis", "take_along_axis_broadcast_x", {{{4, 1}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({5, 3}, 4), 0)};
  });
  add("take_along_axis", "take_along_axis_broadcast_indices", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({5, 1}, 4), 0)};
  });
  add("take_along_axis", "take_along_axis_i32_indices", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::take_along_axis(c, x[0], misc_pattern_indices({3, 3}, 4, DType::i32), 0)};
  });

  // ---- index_select (PyTorch): every axis of a rank-3 x, negative axis, duplicates.
  for (int axis = 0; axis < 3; ++axis)
    add("index_select", "index_select_axis" + std::to_string(axis), {{{3, 4, 2}}}, [axis](auto& c, Args x) {
      const std::int64_t n = x[0].value().extent(axis);
      return Out{ad::index_select(c, x[0], axis, misc_pattern_indices({n + 2}, n))};
    });
  add("index_select", "index_select_negative_axis_i32", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::index_select(c, x[0], -2, misc_pattern_indices({7}, 4, DType::i32))};
  });
  add("index_select", "index_select_vector", {{{5}}}, [](auto& c, Args x) {
    return Out{ad::index_select(c, x[0], 0, Tensor::from_data<std::int64_t>({4}, {4, -1, 0, -5}))};
  });

  // ---- grouped_gemm: three items of different shapes; one with c, one without, one
  // sharing its a with another item; every conjugation flag; alpha/beta real and complex.
  for (int flags = 0; flags < 4; ++flags)
    add("grouped_gemm", "grouped_gemm_conj" + std::to_string(flags),
        {{{3, 4}}, {{4, 2}}, {{3, 2}}, {{2, 3}}, {{3, 5}}, {{4, 1}}}, [flags](auto& c, Args x) {
          const bool ca = (flags & 1) != 0, cb = (flags & 2) != 0;
          const ad::AdGemmItem items[] = {
              {.a = x[0], .b = x[1], .c = x[2], .alpha = 0.7, .beta = -1.3, .conj_a = ca, .conj_b = cb},
              {.a = x[3], .b = x[4], .alpha = 1.0, .beta = 0.0, .conj_a = cb, .conj_b = ca},
              {.a = x[0], .b = x[5], .alpha = -2.0, .beta = 0.0, .conj_a = ca, .conj_b = !cb},
          };
          auto r = ad::grouped_gemm(c, items);
          return Out(r.begin(), r.end());
        });
  add("grouped_gemm", "grouped_gemm_complex_alpha_beta", {{{3, 4}}, {{4, 2}}, {{3, 2}}, {{2, 2}}, {{2, 3}}, {{2, 3}}},
      [](auto& c, Args x) {
        const ad::AdGemmItem items[] = {
            {.a = x[0], .b = x[1], .c = x[2], .alpha = c128(0.4, -0.9), .beta = c128(-0.3, 0.6), .conj_a = true},
            {.a = x[3], .b = x[4], .c = x[5], .alpha = c128(1.1, 0.2), .beta = c128(0.0, -1.0), .conj_b = true},
        };
        auto r = ad::grouped_gemm(c, items);
        return Out(r.begin(), r.end());
      }, true, false);
  // A complex alpha/beta with zero imaginary part on real items (accepted by the forward).
  add("grouped_gemm", "grouped_gemm_real_items_complex_kind_scalars", {{{3, 4}}, {{4, 2}}, {{3, 2}}}, [](auto& c, Args x) {
    const ad::AdGemmItem items[] = {{.a = x[0], .b = x[1], .c = x[2], .alpha = c128(1.5, 0), .beta = c128(-0.5, 0)}};
    auto r = ad::grouped_gemm(c, items);
    return Out(r.begin(), r.end());
  }, false);
  // c given with beta = 0 (not read: zero derivative), constant operands, f64 a with a
  // complex b (a receives the real part).
  add("grouped_gemm", "grouped_gemm_beta_zero_and_constants", {{{3, 4}}, {{4, 2}}, {{3, 2}}}, [](auto& c, Args x) {
    const Tensor k = Tensor::ones({2, 3}, x[0].dtype());
    const ad::AdGemmItem items[] = {
        {.a = x[0], .b = x[1], .c = x[2], .alpha = 2.0, .beta = 0.0},
        {.a = k, .b = x[0], .alpha = 0.5},
        {.a = Tensor::ones({3, 5}, x[0].dtype()), .b = Tensor::ones({5, 2}, x[0].dtype()), .c = x[2], .beta = 3.0},
    };
    auto r = ad::grouped_gemm(c, items);
    return Out(r.begin(), r.end());
  });
  add("grouped_gemm", "grouped_gemm_real_a_complex_b", {{{3, 4}}, {{4, 2}}}, [](auto& c, Args x) {
    const ad::AdGemmItem items[] = {{.a = x[0], .b = ad::mul(c, ad::convert(c, x[1], DType::c128), c128(0.6, -0.8)),
                                     .alpha = c128(0.5, 1.0), .conj_b = true}};
    auto r = ad::grouped_gemm(c, items);
    return Out(r.begin(), r.end());
  }, false);
}

}  // namespace tenferro::testing

// ---- exact values (TESTs: this header is included by ad_rules_test.cpp only)
namespace tenferro::testing {

inline CpuBackend& misc_ops_backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}
inline Tensor misc_copy(Session& s, const Tensor& t) {
  Tensor r = Tensor::empty(t.shape().span(), t.dtype());
  tenferro::copy_into(s, t, r);
  return r;
}
inline std::vector<double> misc_values(Session& s, const Tensor& t) {
  Tensor c = to_contiguous(s, cast(s, t, DType::f64));
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

// The gradient of Σ take_along_axis / Σ index_select counts how often each element is
// picked: duplicates (also i and i − n) accumulate.
TEST(AdMiscOps, DuplicateAndNegativeIndicesAccumulate) {
  HeldSession s = misc_ops_backend().open_session();
  const Tensor x = Tensor::zeros({3, 2}, DType::f64);
  // Column 0 picks rows 2, 2 (as −1), 0; column 1 picks 1, 1, 1 (as −2 once).
  const Tensor idx = Tensor::from_data<std::int64_t>({3, 2}, {2, -1, 0, 1, -2, 1});
  const Tensor g = ad::grad(s, [&](ad::Context& c, Args a) { return ad::sum(c, ad::take_along_axis(c, a[0], idx, 0)); }, {x})[0];
  EXPECT_EQ(misc_values(s, g), (std::vector<double>{1, 0, 2, 0, 3, 0}));
  const Tensor sel = Tensor::from_data<std::int64_t>({4}, {1, -1, 1, 0});
  const Tensor g2 = ad::grad(s, [&](ad::Context& c, Args a) { return ad::sum(c, ad::index_select(c, a[0], 1, sel)); }, {x})[0];
  EXPECT_EQ(misc_values(s, g2), (std::vector<double>{1, 1, 1, 3, 3, 3}));
}

// The functional forms return fresh results and leave y and every c untouched; their
// values equal the in-place kernels'.
TEST(AdMiscOps, FunctionalFormsMutateNothing) {
  HeldSession s = misc_ops_backend().open_session();
  std::mt19937_64 rng(21);
  const Tensor x = rand_in(rng, {3, 4}, DType::c128, -1, 1), y = rand_in(rng, {3, 4}, DType::c128, -1, 1);
  const Tensor y0 = misc_copy(s, y);
  ad::Context c(s);
  ad::EagerTensor xl = c.leaf(x), yl = c.leaf(y);
  const ad::EagerTensor r = ad::axpby(c, c128(0.5, 1), xl, 2.0, yl);
  EXPECT_EQ(max_abs_diff(s, y, y0), 0.0);
  Tensor expect = misc_copy(s, y);
  tenferro::axpby(s, c128(0.5, 1), x, 2.0, expect);
  EXPECT_EQ(max_abs_diff(s, r.value(), expect), 0.0);

  const Tensor a = rand_in(rng, {3, 4}, DType::c128, -1, 1), b = rand_in(rng, {4, 2}, DType::c128, -1, 1);
  const Tensor cc = rand_in(rng, {3, 2}, DType::c128, -1, 1), c0 = misc_copy(s, cc);
  const ad::AdGemmItem items[] = {{.a = c.leaf(a), .b = b, .c = c.leaf(cc), .alpha = 2.0, .beta = c128(0, 1), .conj_a = true},
                                  {.a = a, .b = b}};
  const auto out = ad::grouped_gemm(c, items);
  EXPECT_EQ(max_abs_diff(s, cc, c0), 0.0);
  Tensor e0 = misc_copy(s, cc), e1 = Tensor::zeros({3, 2}, DType::c128);
  const GemmItem ref[] = {{&a, &b, &e0, 2.0, c128(0, 1), true, false}, {&a, &b, &e1}};
  tenferro::grouped_gemm(s, ref);
  EXPECT_EQ(max_abs_diff(s, out[0].value(), e0), 0.0);
  EXPECT_EQ(max_abs_diff(s, out[1].value(), e1), 0.0);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());  // constant operands: a plain result, no node
  EXPECT_EQ(c.tape().live, 2u);          // axpby and grouped_gemm's first item
}

// An empty contraction (K = 0) gives zeros, also without c or with beta = 0 (the result
// buffer is never read), and empty gradients for a and b.
TEST(AdMiscOps, GroupedGemmEmptyContractionGivesZeros) {
  HeldSession s = misc_ops_backend().open_session();
  ad::Context c(s);
  ad::EagerTensor a = c.leaf(Tensor::zeros({3, 0}, DType::f64)), b = c.leaf(Tensor::zeros({0, 2}, DType::f64));
  ad::EagerTensor cc = c.leaf(Tensor::full({3, 2}, NAN, DType::f64));
  const ad::AdGemmItem items[] = {{.a = a, .b = b}, {.a = a, .b = b, .c = cc, .beta = 0.0}};
  const auto r = ad::grouped_gemm(c, items);
  for (const auto& y : r) EXPECT_EQ(misc_values(s, y.value()), std::vector<double>(6, 0.0));
  c.backward(ad::add(c, ad::sum(c, r[0]), ad::sum(c, r[1])));
  EXPECT_EQ(a.grad().shape(), (Shape{3, 0}));
  EXPECT_EQ(b.grad().shape(), (Shape{0, 2}));
  EXPECT_EQ(misc_values(s, cc.grad()), std::vector<double>(6, 0.0));  // beta = 0: c is not read
}

// Integer operands give integer results, which are constants: nothing is recorded.
TEST(AdMiscOps, IntegerInputsNeverRecord) {
  HeldSession s = misc_ops_backend().open_session();
  ad::Context c(s);
  const Tensor xi = Tensor::from_data<std::int64_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = Tensor::from_data<std::int64_t>({2}, {-1, 0});
  const ad::EagerTensor t = ad::take_along_axis(c, xi, Tensor::from_data<std::int64_t>({2, 2}, {2, -3, 1, 1}), 0);
  const ad::EagerTensor u = ad::index_select(c, xi, 0, idx);
  const ad::EagerTensor v = ad::axpby(c, 2, xi, 3, xi);
  for (const ad::EagerTensor* e : {&t, &u, &v}) {
    EXPECT_FALSE(e->requires_grad());
    EXPECT_EQ(e->dtype(), DType::i64);
  }
  EXPECT_EQ(misc_values(s, t.value()), (std::vector<double>{3, 1, 5, 5}));  // x[2,0], x[0,0], x[1,1], x[1,1]
  EXPECT_EQ(misc_values(s, v.value()), (std::vector<double>{5, 10, 15, 20, 25, 30}));
  EXPECT_EQ(c.tape().live, 0u);
  // An integer x into a float leaf y: the result records (y's cotangent only).
  ad::EagerTensor y = c.leaf(Tensor::ones({3, 2}, DType::f64));
  c.backward(ad::sum(c, ad::axpby(c, 2, xi, -1.5, y)));
  EXPECT_EQ(misc_values(s, y.grad()), std::vector<double>(6, -1.5));
}

}  // namespace tenferro::testing
