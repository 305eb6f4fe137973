// Elementwise and analytic ops on every compiled backend (tests/support/backends.hpp):
// for every row of the two families and every dtype, `supports` agrees with what the
// op does; a supported call gives the signature inference answers (shape and result
// dtype) and the same values through the layout fast path (compact operands, Note
// [Elementwise fast path]) and the general path (transposed views), with tensor and
// with scalar operands; an unsupported one throws a typed error naming the op.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "ops/elementwise.hpp"
#include "support/backends.hpp"

namespace tenferro::testing {
namespace {

/// The op on operands a, b, c (only the first inputs() are used; compare uses `cmp`).
Tensor run(Session& s, OpId op, const Operand& a, const Operand& b, const Operand& c, CompareOp cmp) {
  switch (op) {
#define UNARY(name) \
  case OpId::name: return tenferro::name(s, a.tensor());
#define BINARY(name) \
  case OpId::name: return tenferro::name(s, a, b);
    UNARY(neg) UNARY(conj) UNARY(abs) UNARY(sign) UNARY(real) UNARY(imag) UNARY(angle)
    BINARY(add) BINARY(sub) BINARY(mul) BINARY(div) BINARY(rem) BINARY(maximum) BINARY(minimum) BINARY(pow)
#define TENFERRO_ANALYTIC_ITEM(name) UNARY(name)
#define TENFERRO_OP(name, family, inputs, outputs, dtypes, ad, attrs) TENFERRO_ONLY_##family(name)
#include "tenferro/op_catalog.def"
#undef TENFERRO_OP
#undef TENFERRO_ANALYTIC_ITEM
#undef BINARY
#undef UNARY
    case OpId::compare: return compare(s, a, b, cmp);
    case OpId::select: return select(s, a, b, c);
    case OpId::clamp: return clamp(s, a, b, c);
    default: throw InternalError("test", "not an elementwise op");
  }
}

/// A [4, 3] tensor of dtype d with values in every op's domain (inexact: 0.25 .. 0.8;
/// integers: 1 .. 3, so divisors are non-zero and exponents non-negative; bool: mixed),
/// `shift` varying the values between operands.
Tensor values(Session& s, DType d, int shift) {
  std::vector<double> v(12);
  for (int k = 0; k < 12; ++k) {
    const int j = (k + shift) % 12;
    v[static_cast<std::size_t>(k)] = d == DType::b8 ? j % 2 : is_inexact(d) ? 0.25 + 0.05 * j : 1 + j % 3;
  }
  const std::int64_t shape[] = {4, 3};
  return cast(s, Tensor::from_data<double>(shape, std::span<const double>(v)), d);
}

/// Largest |a - b| / (1 + |a|) over the elements (both cast to c128).
double max_difference(Session& s, const Tensor& a, const Tensor& b) {
  const Tensor x = to_contiguous(s, cast(s, a, DType::c128)), y = to_contiguous(s, cast(s, b, DType::c128));
  const auto* px = x.data_ptr<std::complex<double>>();
  const auto* py = y.data_ptr<std::complex<double>>();
  double worst = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) worst = std::max(worst, std::abs(px[i] - py[i]) / (1 + std::abs(px[i])));
  return worst;
}

TEST(ElementwiseBackends, SupportsAgreesAndFastAndGeneralPathsMatchForEveryRow) {
  int ran = 0, refused = 0;
  for_each_backend([&](const BackendUnderTest& b, Session& s) {
    for (int i = 0; i < kNumOps; ++i) {
      const OpId op = static_cast<OpId>(i);
      const OpInfo& info = op_info(op);
      if (info.family != OpFamily::elementwise && info.family != OpFamily::analytic) continue;
      for (int d = 0; d < kNumDTypes; ++d) {
        const DType dt = static_cast<DType>(d);
        SCOPED_TRACE(std::string(info.name) + " " + std::string(dtype_name(dt)));
        const CompareOp cmp = is_complex(dt) ? CompareOp::eq : CompareOp::le;
        // Operand k: general-path view (a [3, 4] transposed view) and its compact copy.
        Tensor view[3], compact[3];
        for (int k = 0; k < 3; ++k) {
          const DType dk = op == OpId::select && k == 0 ? DType::b8 : dt;
          view[k] = values(s, dk, 5 * k).permute_view({1, 0});
          compact[k] = to_contiguous(s, view[k]);
        }
        if (!supports(op, dt, b.device)) {
          try {
            (void)run(s, op, compact[0], compact[1], compact[2], cmp);
            ADD_FAILURE() << "ran although supports() is false";
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(info.name), std::string::npos) << e.what();
          }
          ++refused;
          continue;
        }
        const Tensor fast = run(s, op, compact[0], compact[1], compact[2], cmp);
        const Tensor general = run(s, op, view[0], view[1], view[2], cmp);
        const Shape shape = compact[0].shape();  // every operand's
        std::vector<detail::EwOperand> sig;
        for (int k = 0; k < info.inputs; ++k) sig.push_back({nullptr, shape.span(), compact[k].dtype()});
        const detail::EwSignature g = detail::infer_elementwise(op, sig, cmp);
        EXPECT_EQ(fast.dtype(), g.out);
        EXPECT_EQ(fast.shape(), g.shape);
        EXPECT_EQ(general.dtype(), g.out);
        EXPECT_EQ(max_difference(s, fast, general), 0.0);
        if (info.inputs == 2) {  // a scalar second operand that keeps the dtype
          const Scalar v = dt == DType::b8 ? Scalar(true) : is_inexact(dt) ? Scalar(0.5) : Scalar(2);
          const Tensor fs = run(s, op, compact[0], v, v, cmp), gs = run(s, op, view[0], v, v, cmp);
          EXPECT_EQ(fs.dtype(), g.out);
          EXPECT_EQ(max_difference(s, fs, gs), 0.0);
          const Tensor full = run(s, op, compact[0], Tensor::full({3, 4}, v, dt), v, cmp);
          EXPECT_EQ(max_difference(s, fs, full), 0.0) << "scalar operand vs the same values as a tensor";
        }
        ++ran;
      }
    }
  });
  EXPECT_GT(ran, 100);
  EXPECT_GT(refused, 50);  // e.g. exp of integers, add of bool, maximum of complex
}

}  // namespace
}  // namespace tenferro::testing
