// Every JVP/VJP rule: central differences (f64 and, where the op takes complex input,
// c128) at random points away from non-differentiable sets, and the dot-product test
// Re<v, J u> = Re<Jᵀv, u>. A coverage test checks that every op the catalogue marks
// jvp_vjp has a case here, and prints the support table (docs/ad.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "ad/tape.hpp"
#include "ad/ad_check.hpp"
#include "ad/cases_axis_ops.hpp"
#include "ad/cases_fft.hpp"
#include "ad/cases_linalg.hpp"
#include "ad/cases_lu_eig.hpp"
#include "ad/cases_svd.hpp"
#include "ad/cases_linalg_misc.hpp"
#include "ad/cases_misc_ops.hpp"
#include "ad/rule_case.hpp"
#include "ops/analytic/analytic_cases.hpp"
#include "ops/catalog.hpp"

using namespace tenferro;
using namespace tenferro::testing;

namespace {

CpuBackend& backend() {
  static CpuBackend b([] { CpuBackendOptions o; o.num_threads = 1; return o; }());
  return b;
}

Tensor idx_i64(std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> v) {
  return Tensor::from_data<std::int64_t>(shape, v);
}

std::vector<RuleCase> cases() {
  CaseList add;
  const Shape m34{3, 4};
  // ---- elementwise binary
  add("add", "add", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::add(c, x[0], x[1])}; });
  add("add", "add_broadcast", {{m34}, {{3, 1}}}, [](auto& c, Args x) { return Out{ad::add(c, x[0], x[1])}; });
  add("add", "add_scalar", {{m34}}, [](auto& c, Args x) { return Out{ad::add(c, x[0], 2.5)}; });
  add("sub", "sub_broadcast", {{{3, 1}}, {m34}}, [](auto& c, Args x) { return Out{ad::sub(c, x[0], x[1])}; });
  add("mul", "mul", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::mul(c, x[0], x[1])}; });
  add("mul", "mul_vector_broadcast", {{{3}}, {m34}}, [](auto& c, Args x) { return Out{ad::mul(c, x[0], x[1])}; });
  add("mul", "mul_complex_scalar", {{m34}}, [](auto& c, Args x) { return Out{ad::mul(c, x[0], c128(0.3, -1.2))}; });
  add("div", "div", {{m34}, {m34, 1, 2}}, [](auto& c, Args x) { return Out{ad::div(c, x[0], x[1])}; });
  add("div", "scalar_div", {{m34, 1, 2}}, [](auto& c, Args x) { return Out{ad::div(c, 1.5, x[0])}; });
  add("rem", "rem", {{m34, 0.2, 0.45}, {m34, 1, 1.2}}, [](auto& c, Args x) { return Out{ad::rem(c, x[0], x[1])}; }, false);
  add("rem", "rem_quotient", {{m34, 2.2, 2.8}, {m34, 1, 1.05}}, [](auto& c, Args x) { return Out{ad::rem(c, x[0], x[1])}; }, false);
  add("maximum", "maximum", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::maximum(c, x[0], x[1])}; }, false);
  add("minimum", "minimum", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::minimum(c, x[0], x[1])}; }, false);
  add("pow", "pow", {{m34, 0.5, 2}, {m34, 0.5, 2}}, [](auto& c, Args x) { return Out{ad::pow(c, x[0], x[1])}; });
  add("pow", "pow_scalar_exponent", {{m34, 0.5, 2}}, [](auto& c, Args x) { return Out{ad::pow(c, x[0], 3.0)}; });
  add("select", "select", {{m34}, {m34}}, [](auto& c, Args x) {
    const Tensor pred = Tensor::from_data<bool>({3, 4}, {true, false, true, true, false, false, true, false, true, true, false, true});
    return Out{ad::select(c, pred, x[0], x[1])};
  });
  add("clamp", "clamp_scalar_bounds", {{m34}}, [](auto& c, Args x) { return Out{ad::clamp(c, -0.5, x[0], 0.5)}; }, false);
  add("clamp", "clamp_tensor_bounds", {{m34, -1, -0.2}, {m34}, {m34, 0.2, 1}},
      [](auto& c, Args x) { return Out{ad::clamp(c, x[0], x[1], x[2])}; }, false);
  // ---- elementwise unary and analytic
  add("neg", "neg", {{m34}}, [](auto& c, Args x) { return Out{ad::neg(c, x[0])}; });
  add("conj", "conj", {{m34}}, [](auto& c, Args x) { return Out{ad::conj(c, x[0])}; });
  add("abs", "abs", {{m34}}, [](auto& c, Args x) { return Out{ad::abs(c, x[0])}; });
  add("real", "real", {{m34}}, [](auto& c, Args x) { return Out{ad::real(c, x[0])}; });
  add("imag", "imag", {{m34}}, [](auto& c, Args x) { return Out{ad::imag(c, x[0])}; });
  add("angle", "angle", {{m34, 0.2, 1}}, [](auto& c, Args x) { return Out{ad::angle(c, x[0])}; });
  for (const AnalyticCase& a : analytic_cases())  // every analytic op: its row (ops/analytic/analytic_cases.hpp)
    add(a.name, a.name, {{m34, a.ad_dom.lo, a.ad_dom.hi}}, [f = a.ad_fn](auto& c, Args x) { return Out{f(c, x[0])}; }, a.complex_ref != nullptr);
  add("cbrt", "cbrt_negative", {{m34, -2, -0.5}}, [](auto& c, Args x) { return Out{ad::cbrt(c, x[0])}; }, false);
  add("softplus", "softplus_large_magnitude", {{m34, -30, 30}}, [](auto& c, Args x) { return Out{ad::softplus(c, x[0])}; }, false);
  add("convert", "convert_to_complex", {{m34}}, [](auto& c, Args x) { return Out{ad::convert(c, x[0], DType::c128)}; }, false);
  add("cast", "cast_complex_to_real", {{m34}}, [](auto& c, Args x) { return Out{ad::cast(c, x[0], DType::f64)}; }, true, false);
  add("cast", "cast_to_complex_real_part", {{m34}}, [](auto& c, Args x) {
    return Out{ad::real(c, ad::cast(c, x[0], DType::c128))};
  }, false);
  add("copy", "copy_transposed_view", {{m34}}, [](auto& c, Args x) {
    return Out{ad::copy(c, ad::transpose(c, x[0], {1, 0}))};
  });
  add("reshape", "reshape", {{{2, 3, 4}}}, [](auto& c, Args x) { return Out{ad::reshape(c, x[0], {6, 4})}; });
  // ---- reductions
  add("sum", "sum_all", {{m34}}, [](auto& c, Args x) { return Out{ad::sum(c, x[0])}; });
  add("sum", "sum_axis1", {{{3, 4, 2}}}, [](auto& c, Args x) { return Out{ad::sum(c, x[0], {1})}; });
  add("sum", "sum_axes_keepdims", {{{3, 4, 2}}}, [](auto& c, Args x) { return Out{ad::sum(c, x[0], {0, 2}, true)}; });
  add("prod", "prod_axis0", {{{3, 4}, 0.5, 1.5}}, [](auto& c, Args x) { return Out{ad::prod(c, x[0], {0})}; });
  add("prod", "prod_all", {{{2, 3}, 0.5, 1.5}}, [](auto& c, Args x) { return Out{ad::prod(c, x[0])}; });
  add("max", "max_axis1", {{{3, 5}}}, [](auto& c, Args x) { return Out{ad::max(c, x[0], {1})}; }, false);
  add("min", "min_all", {{{3, 5}}}, [](auto& c, Args x) { return Out{ad::min(c, x[0])}; }, false);
  add("mean", "mean_axis0_keepdims", {{m34}}, [](auto& c, Args x) { return Out{ad::mean(c, x[0], {0}, true)}; });
  add("sum_squares", "sum_squares_axis1", {{m34}}, [](auto& c, Args x) { return Out{ad::sum_squares(c, x[0], {1})}; });
  add("vdot", "vdot", {{m34}, {m34}}, [](auto& c, Args x) { return Out{ad::vdot(c, x[0], x[1])}; });
  add("norm_squared", "norm_squared", {{m34}}, [](auto& c, Args x) { return Out{ad::norm_squared(c, x[0])}; });
  // ---- structural
  add("transpose", "transpose", {{{2, 3, 4}}}, [](auto& c, Args x) { return Out{ad::transpose(c, x[0], {2, 0, 1})}; });
  add("broadcast_in_dim", "broadcast_in_dim", {{{3, 1}}}, [](auto& c, Args x) {
    const std::int64_t shape[] = {4, 3, 5}, dims[] = {1, 2};
    return Out{ad::broadcast_in_dim(c, x[0], shape, dims)};
  });
  add("broadcast_in_dim", "broadcast_in_dim_permuting", {{{3, 2}}}, [](auto& c, Args x) {
    const std::int64_t shape[] = {2, 4, 3}, dims[] = {2, 0};
    return Out{ad::broadcast_in_dim(c, x[0], shape, dims)};
  });
  add("extract_diagonal", "extract_diagonal_rect", {{{3, 4, 2}}}, [](auto& c, Args x) { return Out{ad::extract_diagonal(c, x[0], 0, 1)}; });
  add("embed_diagonal", "embed_diagonal", {{{2, 3}}}, [](auto& c, Args x) { return Out{ad::embed_diagonal(c, x[0], 0, 1)}; });
  add("tril", "tril", {{{4, 4, 2}}}, [](auto& c, Args x) { return Out{ad::tril(c, x[0], -1)}; });
  add("triu", "triu", {{{4, 3}}}, [](auto& c, Args x) { return Out{ad::triu(c, x[0], 1)}; });
  add("concatenate", "concatenate", {{{3, 2}}, {{3, 4}}}, [](auto& c, Args x) { return Out{ad::concatenate(c, x, 1)}; });
  add("stack", "stack", {{{3, 2}}, {{3, 2}}}, [](auto& c, Args x) { return Out{ad::stack(c, x, 1)}; });
  add("reverse", "reverse", {{{3, 4}}}, [](auto& c, Args x) {
    const std::int64_t axes[] = {0, 1};
    return Out{ad::reverse(c, x[0], axes)};
  });
  add("pad", "pad_interior_and_crop", {{{3, 4}}}, [](auto& c, Args x) {
    const std::int64_t low[] = {1, -1}, high[] = {-1, 2}, interior[] = {1, 2};
    return Out{ad::pad(c, x[0], 0.5, low, high, interior)};
  });
  // ---- indexing
  add("slice", "slice_strided", {{{5, 6}}}, [](auto& c, Args x) { return Out{ad::slice(c, x[0], {1, 0}, {5, 5}, {2, 3})}; });
  add("dynamic_slice", "dynamic_slice", {{{5, 6}}}, [](auto& c, Args x) {
    return Out{ad::dynamic_slice(c, x[0], idx_i64({2}, {1, 2}), {3, 2})};
  });
  add("dynamic_update_slice", "dynamic_update_slice", {{{5, 6}}, {{2, 3}}}, [](auto& c, Args x) {
    return Out{ad::dynamic_update_slice(c, x[0], x[1], idx_i64({2}, {2, 1}))};
  });
  add("gather", "gather_rows", {{{5, 3}}}, [](auto& c, Args x) {
    GatherDims d;
    d.offset_dims = {1};
    d.collapsed_slice_dims = {0};
    d.start_index_map = {0};
    d.index_vector_dim = 1;
    return Out{ad::gather(c, x[0], idx_i64({4}, {3, 0, 3, 1}), d, {1, 3})};
  });
  add("scatter", "scatter_add_rows", {{{5, 3}}, {{4, 3}}}, [](auto& c, Args x) {
    ScatterDims d;
    d.update_window_dims = {1};
    d.inserted_window_dims = {0};
    d.scatter_dims_to_operand_dims = {0};
    d.index_vector_dim = 1;
    return Out{ad::scatter(c, x[0], idx_i64({4}, {3, 0, 3, 1}), x[1], d, ScatterCombiner::add)};
  });
  add("scatter", "scatter_replace_unique_rows", {{{5, 3}}, {{3, 3}}}, [](auto& c, Args x) {
    ScatterDims d;
    d.update_window_dims = {1};
    d.inserted_window_dims = {0};
    d.scatter_dims_to_operand_dims = {0};
    d.index_vector_dim = 1;
    return Out{ad::scatter(c, x[0], idx_i64({3}, {4, 0, 2}), x[1], d, ScatterCombiner::replace)};
  });
  // ---- contractions
  for (int cl = 0; cl < 2; ++cl)
    for (int cr = 0; cr < 2; ++cr)
      add("dot_general", "dot_general_batch_conj" + std::to_string(cl) + std::to_string(cr), {{{3, 2, 4}}, {{4, 2, 5}}},
          [cl, cr](auto& c, Args x) {
            DotDims d;
            d.lhs_contracting = {2};
            d.rhs_contracting = {0};
            d.lhs_batch = {1};
            d.rhs_batch = {1};
            d.conj_lhs = cl != 0;
            d.conj_rhs = cr != 0;
            return Out{ad::dot_general(c, x[0], x[1], d)};
          });
  add("dot_general", "dot_general_two_contracted_out_of_order", {{{3, 2, 4}}, {{4, 5, 3}}}, [](auto& c, Args x) {
    DotDims d;
    d.lhs_contracting = {2, 0};
    d.rhs_contracting = {0, 2};
    return Out{ad::dot_general(c, x[0], x[1], d)};
  });
  add("dot_general", "matmul", {{{3, 4}}, {{4, 2}}}, [](auto& c, Args x) { return Out{ad::matmul(c, x[0], x[1])}; });
  add("dot_general", "matmul_batched", {{{3, 4, 2}}, {{4, 2, 2}}}, [](auto& c, Args x) { return Out{ad::matmul(c, x[0], x[1])}; });
  add("dot_general", "matmul_vector", {{{4}}, {{4, 3}}}, [](auto& c, Args x) { return Out{ad::matmul(c, x[0], x[1])}; });
  add("einsum", "einsum_matmul", {{{3, 4}}, {{4, 2}}}, [](auto& c, Args x) { return Out{ad::einsum(c, "ij,jk->ik", x)}; });
  add("einsum", "einsum_three_operands", {{{3, 4}}, {{4, 2}}, {{2, 3}}}, [](auto& c, Args x) {
    return Out{ad::einsum(c, "ij,jk,ki->", x)};
  });
  add("einsum", "einsum_trace_and_diagonal", {{{3, 3, 2}}}, [](auto& c, Args x) { return Out{ad::einsum(c, "iij->j", x)}; });
  add("einsum", "einsum_lone_summed_label", {{{3, 4}}, {{3}}}, [](auto& c, Args x) { return Out{ad::einsum(c, "ij,i->i", x)}; });
  add("einsum", "einsum_hadamard_outer", {{{3, 2}}, {{3, 4}}}, [](auto& c, Args x) { return Out{ad::einsum(c, "ij,ik->ijk", x)}; });
  add("einsum", "einsum_implicit_output", {{{3, 4}}, {{4, 2}}}, [](auto& c, Args x) { return Out{ad::einsum(c, "ij,jk", x)}; });
  add_linalg_cases(add);
  add_lu_eig_cases(add);
  add_svd_cases(add);
  add_fft_cases(add);
  add_linalg_misc_cases(add);
  add_misc_ops_cases(add);
  add_axis_ops_cases(add);
  // ---- several outputs
  add("mul", "two_outputs", {{m34}, {m34}}, [](auto& c, Args x) {
    return Out{ad::mul(c, x[0], x[1]), ad::sum(c, ad::exp(c, x[0]), {1})};
  });
  return add.v;
}

class AdRules : public ::testing::TestWithParam<RuleCase> {};

void run_case(const RuleCase& rc, DType d, std::uint64_t seed) {
  SCOPED_TRACE(rc.name + " " + std::string(dtype_name(d)));
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(seed);
  std::vector<Tensor> xs;
  for (const auto& in : rc.inputs) xs.push_back(tenferro::testing::rand_in(rng, in.shape, d, in.lo, in.hi));
  const ad::MultiFn f = [&](ad::Context& c, Args x) { return rc.f(c, x); };
  const auto r = check_derivatives(s, f, xs, seed + 7);
  EXPECT_LT(r.jvp_vs_fd, 1e-7) << "JVP vs central differences";
  EXPECT_LT(r.dot_jvp, 1e-12) << "dot-product test <v, J u> = <J^T v, u>";
  EXPECT_LT(r.dot_fd, 1e-7) << "<v, FD u> vs <J^T v, u>";
}

TEST_P(AdRules, CentralDifferencesAndDotProduct) {
  const RuleCase& rc = GetParam();
  for (std::uint64_t seed : {1u, 2u}) {
    if (rc.real) run_case(rc, DType::f64, seed);
    if (rc.complex) run_case(rc, DType::c128, seed);
  }
}

INSTANTIATE_TEST_SUITE_P(All, AdRules, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& i) { return i.param.name; });

TEST(AdSupport, EveryRuleInTheCatalogueHasACaseAndATableEntry) {
  using tenferro::detail::AdStatus;
  std::set<std::string> covered;
  for (const auto& c : cases()) covered.insert(c.op);
  const auto& table = ad::detail::rule_table();
  std::string md = "| op | JVP | VJP | catalogue status |\n|---|---|---|---|\n";
  for (int i = 0; i < tenferro::detail::kNumOps; ++i) {
    const auto& info = tenferro::detail::kOps[i];
    const std::string name(info.name);
    const bool has = table[static_cast<std::size_t>(i)].has_jvp() && table[static_cast<std::size_t>(i)].has_vjp();
    const char* st = info.ad == AdStatus::jvp_vjp ? "jvp_vjp" : info.ad == AdStatus::pending ? "pending" : "none";
    if (info.ad == AdStatus::jvp_vjp) {
      EXPECT_TRUE(has) << name << " is marked jvp_vjp but has no rules";
      EXPECT_TRUE(covered.count(name)) << name << " has rules but no derivative check";
    } else {
      EXPECT_FALSE(has) << name << " has rules but the catalogue says " << st;
    }
    const char* mark = info.ad == AdStatus::jvp_vjp ? "yes" : info.ad == AdStatus::none ? "zero (not differentiable)" : "no (UnsupportedAdRule)";
    md += "| " + name + " | " + mark + " | " + mark + " | " + st + " |\n";
  }
  if (std::getenv("TENFERRO_PRINT_AD_TABLE")) std::printf("%s", md.c_str());
  // docs/ad.md carries the same table: the document follows the catalogue.
  std::ifstream doc(TENFERRO_SOURCE_DIR "/docs/ad.md");
  ASSERT_TRUE(doc) << "cannot read docs/ad.md";
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("| op | JVP | VJP | catalogue status |");
  ASSERT_NE(at, std::string::npos) << "docs/ad.md has no support table";
  EXPECT_EQ(text.substr(at, md.size()), md) << "docs/ad.md's support table differs from the catalogue; regenerate it with "
                                               "scripts/update_ad_table.sh";
}

}  // namespace

namespace {
// cumprod's rules at inputs with zeros (one per slice, several, a leading and a trailing
// one): the exclusive-product formulation never divides by x, so central differences
// (exact up to rounding for a polynomial) and the dot-product test hold there too.
TEST(AdRulesAtZeros, CumprodWithZerosMatchesCentralDifferences) {
  HeldSession s = backend().open_session();
  for (DType d : {DType::f64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor x = tenferro::cast(s, Tensor::from_data<double>({5, 4}, {2, 0, 3, 0.5, 1.5,  //
                                                                          0, 0, 1.2, -2, 0.7,  //
                                                                          1.1, 0.9, -0.8, 1.3, 0,  //
                                                                          0.6, 1.4, 0, 0, 0}),
                                    d);
    const ad::MultiFn f = [](ad::Context& c, Args a) { return Out{ad::cumprod(c, a[0], 0)}; };
    for (std::uint64_t seed : {11u, 12u}) {
      const auto r = check_derivatives(s, f, {x}, seed);
      EXPECT_LT(r.jvp_vs_fd, 1e-8);
      EXPECT_LT(r.dot_jvp, 1e-12);
      EXPECT_LT(r.dot_fd, 1e-8);
    }
    // And one gradient written out: d/dx1 of sum(cumprod([2, 0, 3, 0.5, 1.5])) =
    // 2 + 2·3 + 2·3·0.5 + 2·3·0.5·1.5 = 15.5 (the terms through the zero).
    const ad::MultiFn g = [](ad::Context& c, Args a) { return Out{ad::sum(c, ad::cumprod(c, a[0], 0))}; };
    const Tensor col = tenferro::to_contiguous(s, x.slice_view(1, 0, 1));
    const ad::VjpResult vr = ad::vjp(s, g, {col}, {Tensor::full({}, 1.0, d)});
    EXPECT_NEAR(tenferro::cast(s, vr.cotangents[0], DType::c128).item<c128>({1, 0}).real(), 15.5, 1e-12);
  }
}

// The harness itself must see a wrong derivative: x·detach(x) has value x² but AD
// derivative x (detach hides one factor), so central differences disagree.
TEST(AdHarness, DetectsAWrongDerivative) {
  HeldSession s = backend().open_session();
  std::mt19937_64 rng(3);
  const std::vector<Tensor> xs{tenferro::testing::rand_in(rng, {3, 4}, DType::f64, 0.5, 1.5)};
  const ad::MultiFn f = [](ad::Context& c, Args x) { return Out{ad::mul(c, x[0], ad::detach(x[0]))}; };
  const auto r = check_derivatives(s, f, xs, 5);
  EXPECT_GT(r.jvp_vs_fd, 0.1);
  EXPECT_GT(r.dot_fd, 0.1);
  EXPECT_LT(r.dot_jvp, 1e-12);  // JVP and VJP agree with each other (both see the detach)
}
}  // namespace
