// Elementwise unary ops neg conj abs sign real imag angle against a plain reference
// loop: every numeric dtype x every layout x shapes of rank 0..3 and zero extents; output
// dtypes (abs/real/imag/angle of complex are real, angle of integers is f64); special
// values (NaN, infinities, signed zeros, INT_MIN); bool is a DTypeError.
#include <limits>
#include <numbers>
#include <sstream>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::ew_unary_test {
namespace {

using testing::expect_error;
using testing::for_each_index;
using testing::kAllLayouts;
using testing::kNumericDTypes;
using testing::Layout;
using testing::layout_name;
using testing::near;
using testing::random_layout;

using cd = std::complex<double>;
const double kPi = std::numbers::pi;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <class T> std::int64_t as_int(T v) {
  if constexpr (std::is_integral_v<T>) return static_cast<std::int64_t>(v);
  else return 0;
}

/// The reference result of one op: exact integer when `exact`, else a complex<double>.
struct Want {
  bool exact = false;
  std::int64_t i = 0;
  cd v;
};

enum class Un { neg, conj, abs, sign, real, imag, angle };

template <class T> Want reference(Un op, T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const T neg = static_cast<T>(U(0) - static_cast<U>(x));  // wraps: -MIN == MIN
    switch (op) {
      case Un::neg: return {true, neg, {}};
      case Un::conj:
      case Un::real: return {true, x, {}};
      case Un::abs: return {true, x < 0 ? neg : x, {}};
      case Un::sign: return {true, (x > 0) - (x < 0), {}};
      case Un::imag: return {true, 0, {}};
      case Un::angle: return {false, 0, cd(x < 0 ? kPi : 0.0)};
    }
  } else if constexpr (is_complex_v<T>) {
    const cd z(x.real(), x.imag());
    switch (op) {
      case Un::neg: return {false, 0, -z};
      case Un::conj: return {false, 0, std::conj(z)};
      case Un::abs: return {false, 0, std::hypot(z.real(), z.imag())};
      case Un::sign: {
        const double m = std::hypot(z.real(), z.imag());
        return {false, 0, m == 0 ? cd(0) : z / m};
      }
      case Un::real: return {false, 0, z.real()};
      case Un::imag: return {false, 0, z.imag()};
      case Un::angle: return {false, 0, std::atan2(z.imag(), z.real())};
    }
  } else {
    const double d = x;
    switch (op) {
      case Un::neg: return {false, 0, -d};
      case Un::conj:
      case Un::real: return {false, 0, d};
      case Un::abs: return {false, 0, std::fabs(d)};
      case Un::sign: return {false, 0, std::isnan(d) ? kNaN : static_cast<double>((d > 0) - (d < 0))};
      case Un::imag: return {false, 0, 0.0};
      case Un::angle: return {false, 0, std::isnan(d) ? kNaN : std::atan2(0.0, d)};  // pi for negatives and -0
    }
  }
  return {};
}

/// Output dtype by ops.hpp: abs/real/imag of complex are real; angle of integers is f64.
DType out_dtype(Un op, DType d) {
  switch (op) {
    case Un::abs:
    case Un::real:
    case Un::imag: return real_dtype(d);
    case Un::angle: return is_integer(d) ? DType::f64 : real_dtype(d);
    default: return d;
  }
}

struct UnCase {
  Un op;
  std::string name;
  Tensor (*fn)(Session&, const Tensor&);
  void (*fn_into)(Session&, const Tensor&, const Tensor&);
  double tol_eps;  ///< tolerance in epsilons of the input dtype
};

const UnCase kCases[] = {
    {Un::neg, "neg", &neg, &neg_into, 0},      {Un::conj, "conj", &conj, &conj_into, 0}, {Un::abs, "abs", &abs, &abs_into, 2},
    {Un::sign, "sign", &sign, &sign_into, 4},  {Un::real, "real", &real, &real_into, 0}, {Un::imag, "imag", &imag, &imag_into, 0},
    {Un::angle, "angle", &angle, &angle_into, 4},
};

/// Checks `r` (the op applied to `x`) element by element.
void check_result(const UnCase& c, const Tensor& x, const Tensor& r) {
  const double tol = c.tol_eps * testing::epsilon_of(x.dtype());
  int bad = 0;
  std::string first;
  for_each_index(x.shape(), [&](const Dims& idx) {
    const Want w = visit_dtype<DTypeSet::numeric>("test", x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return reference<T>(c.op, x.item<T>(idx.span()));
    });
    bool ok;
    std::ostringstream msg;
    msg.precision(17);
    if (w.exact) {
      const std::int64_t got = visit_dtype<DTypeSet::integer>("test", r.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return static_cast<std::int64_t>(r.item<T>(idx.span()));
      });
      ok = got == w.i;
      msg << got << ", want " << w.i;
    } else {
      const cd got = testing::value_at(r, idx);
      ok = near(got, w.v, tol);
      msg << got << ", want " << w.v;
    }
    if (!ok && bad++ == 0) first = idx.to_string() + " (x = " + x.at(idx.span()).to_string() + "): got " + msg.str();
  });
  if (bad) ADD_FAILURE() << bad << " of " << x.numel() << " elements differ; first at " << first;
}

const Shape kShapes[] = {{}, {7}, {3, 4}, {2, 3, 4}, {0, 3}, {3, 0, 2}};

TEST(ElementwiseUnary, EveryOpDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(31);
  int n = 0;
  for (const UnCase& c : kCases) {
    for (DType d : kNumericDTypes) {
      for (const Shape& shape : kShapes) {
        for (Layout l : kAllLayouts) {
          SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)) + " " + shape.to_string() + " " + layout_name(l));
          const Tensor x = random_layout(rng, shape, d, l, is_integer(d) ? -1000 : -3, is_integer(d) ? 1000 : 3);
          const Tensor r = c.fn(s, x);
          ASSERT_EQ(r.dtype(), out_dtype(c.op, d));
          ASSERT_EQ(r.shape(), shape);
          EXPECT_TRUE(r.is_contiguous());
          check_result(c, x, r);
          const Tensor out = Tensor::empty(shape.span(), r.dtype());
          c.fn_into(s, x, out);
          if (r.numel() > 0) {
            EXPECT_EQ(std::memcmp(out.data(), r.data(), static_cast<std::size_t>(r.numel()) * dtype_size(r.dtype())), 0);
          }
          ++n;
        }
      }
    }
  }
  EXPECT_EQ(n, 7 * 6 * 6 * 4);
}

TEST(ElementwiseUnary, BoolIsDTypeError) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor b = Tensor::from_data<bool>({2}, {true, false});
  for (const UnCase& c : kCases) {
    SCOPED_TRACE(c.name);
    expect_error<DTypeError>([&] { c.fn(s, b); }, c.name);
    for (DType od : {DType::b8, DType::i64, DType::f64}) {
      const Tensor out = Tensor::zeros({2}, od);
      const auto before = testing::snapshot(out);
      expect_error<DTypeError>([&] { c.fn_into(s, b, out); }, c.name);
      testing::expect_untouched(out, before);
    }
  }
}

/// Special inputs per dtype, checked through the same reference.
TEST(ElementwiseUnary, SpecialValues) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor i32 = Tensor::from_data<std::int32_t>({5}, {std::numeric_limits<std::int32_t>::min(), -3, 0, 5, std::numeric_limits<std::int32_t>::max()});
  const Tensor i64 = Tensor::from_data<std::int64_t>({4}, {std::numeric_limits<std::int64_t>::min(), -1, 0, std::numeric_limits<std::int64_t>::max()});
  const Tensor f32 = Tensor::from_data<float>({8}, {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, -2.0f, 3.5f, -1e-30f});
  const Tensor f64 = Tensor::from_data<double>({8}, {kNaN, kInf, -kInf, -0.0, 0.0, -2.0, 3.5, -1e-300});
  const Tensor c64_ = Tensor::from_data<c64>({7}, {c64(3, 4), c64(0, 0), c64(-1, 0), c64(-1, -0.0f), c64(0, -2), c64(NAN, 1), c64(1e-30f, -1e-30f)});
  const Tensor c128_ = Tensor::from_data<c128>({7}, {c128(3, 4), c128(0, 0), c128(-1, 0), c128(-1, -0.0), c128(0, -2), c128(kNaN, 1), c128(1e300, 1e300)});
  for (const UnCase& c : kCases) {
    for (const Tensor* x : {&i32, &i64, &f32, &f64, &c64_, &c128_}) {
      SCOPED_TRACE(c.name + " of " + x->to_string());
      check_result(c, *x, c.fn(s, *x));
    }
  }
  // The named cases, spelled out.
  EXPECT_TRUE(std::isnan(sign(s, f64).item<double>({0})));                         // sign(NaN) = NaN
  EXPECT_EQ(sign(s, f64).item<double>({2}), -1.0);                                  // sign(-inf)
  EXPECT_EQ(sign(s, f64).item<double>({3}), 0.0);                                   // sign(-0) = 0
  EXPECT_EQ(sign(s, c128_).item<c128>({0}), c128(0.6, 0.8));                        // z / |z|
  EXPECT_EQ(sign(s, c128_).item<c128>({1}), c128(0, 0));                            // 0 at 0
  EXPECT_NEAR(std::abs(sign(s, c128_).item<c128>({6})), 1.0, 1e-15);               // no overflow in |z|
  EXPECT_DOUBLE_EQ(angle(s, f64).item<double>({5}), kPi);                          // angle(-2) = pi
  EXPECT_EQ(angle(s, f64).item<double>({6}), 0.0);
  EXPECT_EQ(angle(s, i32).dtype(), DType::f64);
  EXPECT_DOUBLE_EQ(angle(s, i32).item<double>({1}), kPi);
  EXPECT_DOUBLE_EQ(angle(s, c128_).item<double>({2}), kPi);                        // arg(-1 + 0i)
  EXPECT_DOUBLE_EQ(angle(s, c128_).item<double>({3}), -kPi);                       // arg(-1 - 0i)
  EXPECT_EQ(abs(s, i32).item<std::int32_t>({0}), std::numeric_limits<std::int32_t>::min());  // wraps
  EXPECT_EQ(neg(s, i64).item<std::int64_t>({0}), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(abs(s, c64_).dtype(), DType::f32);
  EXPECT_EQ(abs(s, c64_).item<float>({0}), 5.0f);
  EXPECT_EQ(imag(s, f32).dtype(), DType::f32);
  EXPECT_EQ(imag(s, f32).item<float>({1}), 0.0f);
  EXPECT_EQ(real(s, c128_).item<double>({4}), 0.0);
  EXPECT_EQ(imag(s, c128_).item<double>({4}), -2.0);
  EXPECT_EQ(conj(s, c64_).item<c64>({4}), c64(0, 2));
  EXPECT_EQ(real(s, i64).dtype(), DType::i64);
  EXPECT_EQ(imag(s, i32).dtype(), DType::i32);
}

}  // namespace
}  // namespace tenferro::ew_unary_test
