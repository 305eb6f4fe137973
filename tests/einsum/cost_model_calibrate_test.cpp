// Calibrating the einsum time model (calibrate_cost_model, einsum.hpp) and its text form
// (to_string / parse_cost_model, einsum_path.hpp; Note [Cost model calibration]). No
// timing is asserted: the calibrated constants must be a valid model that plans and
// contracts correctly, and the text form must carry every bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

using namespace tenferro;
using tenferro::testing::expect_error;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same_model(const CostModel& a, const CostModel& b) {
  EXPECT_TRUE(same_bits(a.gemm_rate, b.gemm_rate)) << a.gemm_rate << " " << b.gemm_rate;
  EXPECT_TRUE(same_bits(a.gemm_half_extent, b.gemm_half_extent));
  EXPECT_TRUE(same_bits(a.bytes_rate, b.bytes_rate));
  EXPECT_TRUE(same_bits(a.read_factor, b.read_factor));
  EXPECT_TRUE(same_bits(a.write_factor, b.write_factor));
  EXPECT_TRUE(same_bits(a.step_seconds, b.step_seconds));
  EXPECT_TRUE(same_bits(a.element_bytes, b.element_bytes));
}

}  // namespace

TEST(CostModelText, RoundTripsEveryFieldExactly) {
  expect_same_model(parse_cost_model(to_string(CostModel{})), CostModel{});
  CostModel m;
  m.gemm_rate = 1.0 / 3 * 1e11;
  m.gemm_half_extent = 0.1;
  m.bytes_rate = 2.0 / 7 * 1e10;
  m.read_factor = 0;
  m.write_factor = 1.0 / 9;
  m.step_seconds = std::nextafter(3e-7, 1.0);
  m.element_bytes = 16;
  expect_same_model(parse_cost_model(to_string(m)), m);
}

TEST(CostModelText, FieldsInAnyOrderAndTheRestDefault) {
  const CostModel m = parse_cost_model(" step_seconds=2.5e-7,gemm_rate=5e10;\n\tbytes_rate=2e10 ");
  EXPECT_EQ(m.step_seconds, 2.5e-7);
  EXPECT_EQ(m.gemm_rate, 5e10);
  EXPECT_EQ(m.bytes_rate, 2e10);
  const CostModel d;
  EXPECT_EQ(m.gemm_half_extent, d.gemm_half_extent);
  EXPECT_EQ(m.read_factor, d.read_factor);
  EXPECT_EQ(m.write_factor, d.write_factor);
  EXPECT_EQ(m.element_bytes, d.element_bytes);
  expect_same_model(parse_cost_model(""), d);
  // The last of a repeated field wins.
  EXPECT_EQ(parse_cost_model("gemm_rate=1e9 gemm_rate=2e9").gemm_rate, 2e9);
}

TEST(CostModelText, BadTextIsAnArgumentError) {
  auto bad = [](const char* text, const char* says) {
    const std::string what = expect_error<ArgumentError>([&] { parse_cost_model(text); }, "parse_cost_model");
    EXPECT_NE(what.find(says), std::string::npos) << what;
  };
  bad("gemm_speed=1e10", "unknown field 'gemm_speed'");
  bad("gemm_rate", "field 'gemm_rate' has no '='");
  bad("gemm_rate=fast", "value 'fast', not a number");
  bad("gemm_rate=", "value '', not a number");
  bad("gemm_rate=1e10x", "value '1e10x'");
  bad("gemm_rate=0", "cost_model.gemm_rate is 0");
  bad("element_bytes=-8", "cost_model.element_bytes is -8");
  bad("read_factor=-1", "cost_model.read_factor is -1");
  bad("step_seconds=nan", "cost_model.step_seconds is nan");
  bad("bytes_rate=inf", "cost_model.bytes_rate is inf");
}

TEST(Calibration, FitsAValidModelThatPlansAndContractsCorrectly) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.with_session([&](Session& s) {
    const CostModel m = calibrate_cost_model(s, 0.05);
    for (double v : {m.gemm_rate, m.bytes_rate, m.element_bytes}) {
      EXPECT_TRUE(std::isfinite(v));
      EXPECT_GT(v, 0);
    }
    for (double v : {m.gemm_half_extent, m.read_factor, m.write_factor, m.step_seconds}) {
      EXPECT_TRUE(std::isfinite(v));
      EXPECT_GE(v, 0);
    }
    // Only the rates and the step cost are measured; the shape terms stay as shipped.
    const CostModel shipped;
    EXPECT_EQ(m.element_bytes, shipped.element_bytes);
    EXPECT_EQ(m.gemm_half_extent, shipped.gemm_half_extent);
    EXPECT_EQ(m.read_factor, shipped.read_factor);
    EXPECT_EQ(m.write_factor, shipped.write_factor);
    EXPECT_GT(m.step_seconds, 0);
    expect_same_model(parse_cost_model(to_string(m)), m);
    // The model plans: a 6-matrix chain under it contracts to the default plan's result.
    const std::vector<std::int64_t> dims = {3, 9, 4, 7, 2, 8, 5};
    std::vector<Tensor> ops;
    std::string subscripts;
    for (int i = 0; i + 1 < static_cast<int>(dims.size()); ++i) {
      Tensor t = Tensor::empty({dims[i], dims[i + 1]}, DType::f64);
      auto* d = t.mutable_data_ptr<double>();
      for (std::int64_t k = 0; k < t.numel(); ++k) d[k] = std::sin(0.7 * static_cast<double>(k + 13 * i));
      ops.push_back(t);
      subscripts += std::string(i ? "," : "") + char('a' + i) + char('a' + i + 1);
    }
    subscripts += "->ag";
    EinsumOptions o;
    o.plan.cost_model = m;
    o.plan.optimizer = EinsumOptimizer::optimal;
    const Tensor calibrated = einsum(s, subscripts, ops, o);
    const Tensor reference = einsum(s, subscripts, ops);
    ASSERT_EQ(calibrated.numel(), reference.numel());
    for (std::int64_t k = 0; k < reference.numel(); ++k)
      EXPECT_NEAR(calibrated.data_ptr<double>()[k], reference.data_ptr<double>()[k], 1e-12 * (1 + std::fabs(reference.data_ptr<double>()[k])));
    // Its predictions grow with the work: a 384³ product over 32 steps of 2 × 2.
    ContractionNetwork big{{{0, 1}, {1, 2}}, {0, 2}, {384, 384, 384}};
    ContractionNetwork tiny{{{0, 1}, {1, 2}}, {0, 2}, {2, 2, 2}};
    EXPECT_GT(contraction_cost(big, ContractionTree{{{0, 1}}}, m).predicted_seconds,
              contraction_cost(tiny, ContractionTree{{{0, 1}}}, m).predicted_seconds);
  });
}

TEST(Calibration, BadSecondsAreArgumentErrors) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.with_session([&](Session& s) {
    for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
      expect_error<ArgumentError>([&] { calibrate_cost_model(s, bad); }, "calibrate_cost_model");
  });
}
