// Reductions on every compiled backend (tests/support/backends.hpp): what `supports`
// answers is what the op does. For each reduction row of the catalogue and each dtype,
// a supported (op, dtype) runs and gives the reference value of a full reduction of
// three ones; an unsupported one throws a typed error naming the op, and nothing runs.
#include <cmath>
#include <complex>
#include <string>

#include "support/backends.hpp"

namespace tenferro::testing {
namespace {

/// The reference value of `op` over three ones.
std::complex<double> reference(OpId op) {
  switch (op) {
    case OpId::sum:
    case OpId::sum_squares: return 3.0;
    case OpId::prod:
    case OpId::max:
    case OpId::min:
    case OpId::mean: return 1.0;
    case OpId::argmax:
    case OpId::argmin: return 0.0;
    case OpId::logsumexp: return 1.0 + std::log(3.0);
    default: ADD_FAILURE() << "not a reduction: " << op_name(op); return 0.0;
  }
}

Tensor reduce(Session& s, OpId op, const Tensor& x) {
  const std::int64_t axes[] = {0};
  switch (op) {
    case OpId::sum: return sum(s, x);
    case OpId::prod: return prod(s, x);
    case OpId::max: return max(s, x);
    case OpId::min: return min(s, x);
    case OpId::mean: return mean(s, x);
    case OpId::sum_squares: return sum_squares(s, x);
    case OpId::argmax: return argmax(s, x, axes, false);
    case OpId::argmin: return argmin(s, x, axes, false);
    case OpId::logsumexp: return logsumexp(s, x);
    default: throw InternalError("test", "not a reduction");
  }
}

TEST(ReduceBackends, SupportsAgreesWithWhatEveryBackendRuns) {
  int ran = 0, refused = 0;
  for_each_backend([&](const BackendUnderTest& b, Session& s) {
    for (int i = 0; i < kNumOps; ++i) {
      const OpId op = static_cast<OpId>(i);
      if (op_info(op).family != OpFamily::reduction) continue;
      for (int d = 0; d < kNumDTypes; ++d) {
        const DType dt = static_cast<DType>(d);
        SCOPED_TRACE(std::string(op_name(op)) + " " + std::string(dtype_name(dt)));
        const Tensor x = Tensor::ones({3}, dt);
        if (!supports(op, dt, b.device)) {
          try {
            (void)reduce(s, op, x);
            ADD_FAILURE() << "ran although supports() is false";
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(op_name(op)), std::string::npos) << e.what();
          }
          ++refused;
          continue;
        }
        const Tensor y = reduce(s, op, x);
        ASSERT_EQ(y.numel(), 1);
        const std::complex<double> got = cast(s, y, DType::c128).item<std::complex<double>>({});
        const std::complex<double> want = reference(op);
        EXPECT_NEAR(std::abs(got - want), 0.0, dt == DType::f32 || dt == DType::c64 ? 1e-6 : 1e-12);
        ++ran;
      }
    }
  });
  EXPECT_GT(ran, 0);
  EXPECT_GT(refused, 0);  // e.g. max of complex, logsumexp of integers
}

}  // namespace
}  // namespace tenferro::testing
