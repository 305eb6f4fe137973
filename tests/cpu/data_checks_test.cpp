// The CPU backend's data-dependent checks (Note [Data-dependent checks]) and the linalg
// finiteness check built on them: position of the first non-finite element in any
// layout, reported as [row, column] of batch b.
#include <cmath>
#include <limits>

#include "ops/kernel_table.hpp"
#include "support/expect_error.hpp"

namespace tenferro {
namespace {

TEST(DataChecks, FirstNonfiniteInEveryLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const detail::DataChecks& dc = detail::data_checks(s, "test");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor x = cast(s, Tensor::arange(24, DType::f64).reshape_view({3, 2, 4}), d);
    EXPECT_EQ(dc.first_nonfinite(s, x), -1);
    EXPECT_EQ(dc.first_nonfinite(s, Tensor::empty({0, 3}, d)), -1);
    Tensor base = Tensor::arange(24, DType::f64).reshape_view({3, 2, 4});
    base.set<double>({1, 1, 2}, d == DType::f32 || d == DType::c64 ? inf : nan);
    const Tensor y = cast(s, base, d);
    EXPECT_EQ(dc.first_nonfinite(s, y), 1 + 3 * 1 + 6 * 2);
    // The same element seen through a transposed and a reversed view.
    EXPECT_EQ(dc.first_nonfinite(s, y.permute_view({1, 0, 2})), 1 + 2 * 1 + 6 * 2);
    EXPECT_EQ(dc.first_nonfinite(s, y.slice_view(0, Tensor::kSliceEnd, -Tensor::kSliceEnd, -1)), (3 - 1 - 1) + 3 * 1 + 6 * 2);
  }
}

TEST(DataChecks, FirstZeroAndFirstNegativeInEveryLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const detail::DataChecks& dc = detail::data_checks(s, "test");
  for (DType d : {DType::i32, DType::i64}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor base = Tensor::arange(24, DType::f64).reshape_view({3, 2, 4});
    base.set<double>({0, 0, 0}, 5.0);  // arange starts at 0: no zero at first
    Tensor x = cast(s, base, d);
    EXPECT_EQ(dc.first_zero(s, x), -1);
    EXPECT_EQ(dc.first_negative(s, x), -1);
    EXPECT_EQ(dc.first_zero(s, Tensor::empty({0, 3}, d)), -1);
    base.set<double>({2, 1, 1}, 0.0);
    base.set<double>({1, 0, 3}, -4.0);
    x = cast(s, base, d);
    EXPECT_EQ(dc.first_zero(s, x), 2 + 3 * 1 + 6 * 1);
    EXPECT_EQ(dc.first_negative(s, x), 1 + 6 * 3);
    EXPECT_EQ(dc.first_zero(s, x.permute_view({1, 0, 2})), 1 + 2 * 2 + 6 * 1);
    EXPECT_EQ(dc.first_negative(s, x.slice_view(0, Tensor::kSliceEnd, -Tensor::kSliceEnd, -1)), 1 + 6 * 3);
    // A broadcast view (zero stride) repeats its elements.
    const Tensor row = cast(s, Tensor::from_data<double>({1, 2}, {1.0, 0.0}), d);
    EXPECT_EQ(dc.first_zero(s, broadcast_in_dim_view(row, {3, 2}, {0, 1})), 3);
  }
}

TEST(DataChecks, LinalgNamesTheRowColumnAndBatch) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  Tensor a = Tensor::zeros({3, 3, 4}, DType::f64);
  a.set<double>({2, 1, 3}, std::numeric_limits<double>::infinity());
  const std::string msg = testing::expect_error<ArgumentError>([&] { (void)svdvals(s, a); }, "svdvals");
  EXPECT_NE(msg.find("[2, 1] of batch 3"), std::string::npos) << msg;
  const std::string t = testing::expect_error<ArgumentError>([&] { (void)eigvals(s, a.permute_view({1, 0, 2})); }, "eigvals");
  EXPECT_NE(t.find("[1, 2] of batch 3"), std::string::npos) << t;
}

}  // namespace
}  // namespace tenferro
