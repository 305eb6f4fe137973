// Constructors: empty/zeros/ones/full/scalar, from_data/from_row_major, arange, eye,
// uniform/normal with the counter-based Generator; TypedTensor<T>.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::for_each_index;
using testing::kAllDTypes;
using testing::value_at;

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <class T> std::vector<T> values(const Tensor& t) {
  std::vector<T> v;
  for_each_index(t.shape(), [&](const Dims& i) { v.push_back(t.item<T>(i.span())); });
  return v;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.numel()) * dtype_size(a.dtype())) == 0;
}

// ------------------------------------------------------------------ zeros / ones / full / scalar

TEST(Fill, ZerosAndOnesEveryDType) {
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor z = Tensor::zeros({2, 3}, d), o = Tensor::ones({2, 3}, d);
    EXPECT_EQ(z.dtype(), d);
    EXPECT_EQ(o.dtype(), d);
    EXPECT_TRUE(z.is_contiguous());
    EXPECT_EQ(o.strides(), (Dims{1, 2}));
    for_each_index(z.shape(), [&](const Dims& i) {
      EXPECT_EQ(value_at(z, i), std::complex<double>(0, 0));
      EXPECT_EQ(value_at(o, i), std::complex<double>(1, 0));
    });
    Tensor e = Tensor::empty({4}, d);
    EXPECT_EQ(e.numel(), 4);
    EXPECT_EQ(e.dtype(), d);
    EXPECT_EQ(Tensor::ones({0, 5}, d).numel(), 0);
  }
  EXPECT_EQ(Tensor::ones({1}, DType::b8).item<bool>({0}), true);
}

TEST(Fill, FullExactConversions) {
  EXPECT_EQ(Tensor::full({2}, Scalar(2.0), DType::i32).item<std::int32_t>({1}), 2);
  EXPECT_EQ(Tensor::full({2}, Scalar(true), DType::f64).item<double>({0}), 1.0);
  EXPECT_EQ(Tensor::full({2}, Scalar(false), DType::c64).item<c64>({0}), c64(0, 0));
  EXPECT_EQ(Tensor::full({2}, Scalar(true), DType::c128).item<c128>({0}), c128(1, 0));
  EXPECT_EQ(Tensor::full({2}, Scalar(1), DType::b8).item<bool>({0}), true);
  EXPECT_EQ(Tensor::full({2}, Scalar(0.0), DType::b8).item<bool>({0}), false);
  EXPECT_EQ(Tensor::full({2}, Scalar(c128(1, 0)), DType::f64).item<double>({0}), 1.0);
  EXPECT_EQ(Tensor::full({2}, Scalar(c128(3, 0)), DType::i64).item<std::int64_t>({0}), 3);
  EXPECT_EQ(Tensor::full({2}, Scalar(std::int64_t{1} << 53), DType::f64).item<double>({0}), 9007199254740992.0);
  EXPECT_EQ(Tensor::full({2}, Scalar(std::int64_t{-2147483648LL}), DType::i32).item<std::int32_t>({0}), -2147483647 - 1);
  EXPECT_EQ(Tensor::full({2}, Scalar(kI64Max), DType::i64).item<std::int64_t>({0}), kI64Max);
  EXPECT_EQ(Tensor::full({2}, Scalar(7), DType::c128).item<c128>({1}), c128(7, 0));
  EXPECT_EQ(Tensor::full({2}, Scalar(0.5), DType::f32).item<float>({0}), 0.5f);
  EXPECT_EQ(Tensor::full({2}, Scalar(c128(0.5, -0.25)), DType::c64).item<c64>({0}), c64(0.5f, -0.25f));
  EXPECT_TRUE(std::isnan(Tensor::full({2}, Scalar(kNaN), DType::f64).item<double>({0})));
  EXPECT_TRUE(std::isnan(Tensor::full({2}, Scalar(kNaN), DType::f32).item<float>({0})));
  EXPECT_TRUE(std::isnan(Tensor::full({2}, Scalar(kNaN), DType::c64).item<c64>({0}).real()));
  EXPECT_EQ(Tensor::full({2}, Scalar(kInf), DType::f32).item<float>({0}), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(Tensor::full({2}, Scalar(-0.0), DType::f64).item<double>({0})));
  // Every element is written.
  Tensor big = Tensor::full({3, 5, 7}, Scalar(-4), DType::i64);
  for (auto v : values<std::int64_t>(big)) EXPECT_EQ(v, -4);
  // The value is validated even when there is no element to write.
  EXPECT_THROW(Tensor::full({0}, Scalar(2.5), DType::i32), ArgumentError);
}

TEST(Fill, FullInexactConversionsThrow) {
  EXPECT_THROW(Tensor::full({2, 2}, Scalar(2.5), DType::i32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(2.5), DType::i64), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(2), DType::b8), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(-1), DType::b8), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(0.5), DType::b8), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(c128(1, 2)), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(c128(1, 2)), DType::i32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(std::int64_t{1} << 31), DType::i32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(kNaN), DType::i32), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(kInf), DType::i64), ArgumentError);
  EXPECT_THROW(Tensor::full({2}, Scalar(1e40), DType::f32), ArgumentError);
  // Float fills round to nearest (like 0.1 into f32); only overflow to inf is refused.
  EXPECT_EQ(Tensor::full({2}, Scalar(std::int32_t{16777217}), DType::f32).item<float>({0}), 16777216.0f);
  EXPECT_EQ(Tensor::full({2}, Scalar(0.1), DType::f32).item<float>({1}), 0.1f);
  EXPECT_EQ(Tensor::full({2}, Scalar(kI64Max), DType::f64).item<double>({0}), 9223372036854775808.0);
  try {
    Tensor::full({2, 2}, Scalar(2.5), DType::i32);
    ADD_FAILURE() << "no ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "full");
    const std::string w = e.what();
    EXPECT_NE(w.find("2.5"), std::string::npos) << w;
    EXPECT_NE(w.find("i32"), std::string::npos) << w;
  }
  // Shape errors.
  EXPECT_THROW(Tensor::full({-1}, Scalar(1), DType::i32), ShapeError);
  EXPECT_THROW(Tensor::full({kI64Max, 2}, Scalar(1), DType::i32), IndexError);
}

TEST(Fill, ScalarConstructor) {
  Tensor a = Tensor::scalar(Scalar(true));
  EXPECT_EQ(a.dtype(), DType::b8);
  EXPECT_EQ(a.rank(), 0);
  EXPECT_EQ(a.item<bool>(), true);
  EXPECT_EQ(Tensor::scalar(Scalar(-3)).item<std::int64_t>(), -3);
  EXPECT_EQ(Tensor::scalar(Scalar(2.25)).item<double>(), 2.25);
  EXPECT_EQ(Tensor::scalar(Scalar(c128(1, -1))).item<c128>(), c128(1, -1));
  EXPECT_EQ(Tensor::scalar(Scalar(3), DType::c64).item<c64>(), c64(3, 0));
  EXPECT_THROW(Tensor::scalar(Scalar(3), DType::b8), ArgumentError);
  EXPECT_THROW(Tensor::scalar(Scalar(0.5), DType::i64), ArgumentError);
}

// ------------------------------------------------------------------ from_data / from_row_major

TEST(FromData, ColumnMajorOrder) {
  Tensor t = Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.dtype(), DType::f64);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.strides(), (Dims{1, 2}));
  EXPECT_EQ(t.item<double>({0, 0}), 1.0);
  EXPECT_EQ(t.item<double>({1, 0}), 2.0);
  EXPECT_EQ(t.item<double>({0, 1}), 3.0);
  EXPECT_EQ(t.item<double>({1, 2}), 6.0);
  // Storage order is the data order.
  const auto* p = static_cast<const double*>(t.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], i + 1.0);
}

TEST(FromData, RowMajorOrder) {
  Tensor t = Tensor::from_row_major<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.strides(), (Dims{1, 2})) << "stored column-major";
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.item<double>({0, 0}), 1.0);
  EXPECT_EQ(t.item<double>({0, 1}), 2.0);
  EXPECT_EQ(t.item<double>({0, 2}), 3.0);
  EXPECT_EQ(t.item<double>({1, 0}), 4.0);
  EXPECT_EQ(t.item<double>({1, 2}), 6.0);
  const auto* p = static_cast<const double*>(t.data());
  const double expect[] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], expect[i]);

  // Rank 3: element (i, j, k) is row-major entry 12i + 4j + k.
  std::vector<std::int32_t> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  Tensor r3 = Tensor::from_row_major<std::int32_t>(Dims{2, 3, 4}.span(), std::span<const std::int32_t>(v));
  for_each_index(r3.shape(), [&](const Dims& i) {
    EXPECT_EQ(r3.item<std::int32_t>(i.span()), 12 * i[0] + 4 * i[1] + i[2]);
  });
  // Same data read column-major: (i, j, k) = i + 2j + 6k.
  Tensor c3 = Tensor::from_data<std::int32_t>(Dims{2, 3, 4}.span(), std::span<const std::int32_t>(v));
  for_each_index(c3.shape(), [&](const Dims& i) { EXPECT_EQ(c3.item<std::int32_t>(i.span()), i[0] + 2 * i[1] + 6 * i[2]); });
  // Rank 1 and extent-1 axes: both orders agree.
  EXPECT_EQ(values<float>(Tensor::from_row_major<float>({3}, {1, 2, 3})), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values<float>(Tensor::from_row_major<float>({1, 3, 1}, {1, 2, 3})), (std::vector<float>{1, 2, 3}));
  // Row-major is the transpose of column-major for matrices.
  Tensor a = Tensor::from_row_major<double>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5, 6}).transpose_view();
  EXPECT_EQ(values<double>(a), values<double>(b));
}

TEST(FromData, EveryDTypeRank0ZeroSizeAndCopies) {
  EXPECT_EQ(values<bool>(Tensor::from_data<bool>({3}, {true, false, true})), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<std::int64_t>(Tensor::from_data<std::int64_t>({2}, {kI64Min, kI64Max})), (std::vector<std::int64_t>{kI64Min, kI64Max}));
  EXPECT_EQ(values<c64>(Tensor::from_data<c64>({2}, {c64(1, 2), c64(3, 4)})), (std::vector<c64>{c64(1, 2), c64(3, 4)}));
  EXPECT_EQ(Tensor::from_row_major<c128>({2, 2}, {c128(0, 1), c128(0, 2), c128(0, 3), c128(0, 4)}).item<c128>({1, 0}), c128(0, 3));
  EXPECT_EQ(Tensor::from_data<bool>({}, {true}).item<bool>(), true);
  EXPECT_EQ(Tensor::from_row_major<double>({}, {7.5}).item<double>(), 7.5);
  EXPECT_EQ(Tensor::from_data<double>({0, 3}, {}).numel(), 0);
  EXPECT_EQ(Tensor::from_row_major<float>({3, 0}, {}).numel(), 0);
  // The data is copied.
  std::vector<double> src{1, 2, 3, 4};
  Tensor t = Tensor::from_data<double>(Dims{4}.span(), std::span<const double>(src));
  Tensor r = Tensor::from_row_major<double>(Dims{2, 2}.span(), std::span<const double>(src));
  src.assign(4, -1.0);
  EXPECT_EQ(values<double>(t), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(r.item<double>({0, 1}), 2.0);
}

TEST(FromData, Errors) {
  EXPECT_THROW(Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5}), ShapeError);
  EXPECT_THROW(Tensor::from_data<double>({2, 3}, {1, 2, 3, 4, 5, 6, 7}), ShapeError);
  EXPECT_THROW(Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4, 5}), ShapeError);
  EXPECT_THROW(Tensor::from_data<double>({}, {}), ShapeError);
  EXPECT_THROW(Tensor::from_data<double>({0}, {1.0}), ShapeError);
  EXPECT_THROW(Tensor::from_data<double>({-1}, {1.0}), ShapeError);
  EXPECT_THROW(Tensor::from_data<double>({kI64Max, 2}, {1.0}), IndexError);
  try {
    Tensor::from_row_major<double>({2, 2}, {1, 2, 3});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.op(), "from_row_major");
  }
  try {
    Tensor::from_data<double>({2, 2}, {1, 2, 3});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.op(), "from_data");
  }
}

// ------------------------------------------------------------------ arange

TEST(Arange, IntegerRanges) {
  Tensor a = Tensor::arange(5, DType::i32);
  EXPECT_EQ(a.shape(), (Shape{5}));
  EXPECT_EQ(a.dtype(), DType::i32);
  EXPECT_EQ(values<std::int32_t>(a), (std::vector<std::int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(2), Scalar(10), Scalar(3), DType::i64)), (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(2), Scalar(11), Scalar(3), DType::i64)), (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(10), Scalar(0), Scalar(-3), DType::i64)), (std::vector<std::int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(values<std::int32_t>(Tensor::arange(Scalar(-2), Scalar(-5), Scalar(-1), DType::i32)), (std::vector<std::int32_t>{-2, -3, -4}));
  EXPECT_EQ(values<double>(Tensor::arange(Scalar(1), Scalar(4), Scalar(1), DType::f64)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(values<c128>(Tensor::arange(3, DType::c128)), (std::vector<c128>{c128(0, 0), c128(1, 0), c128(2, 0)}));
  // Empty ranges.
  EXPECT_EQ(Tensor::arange(Scalar(5), Scalar(5), Scalar(1), DType::i32).numel(), 0);
  EXPECT_EQ(Tensor::arange(Scalar(5), Scalar(0), Scalar(1), DType::i32).numel(), 0);
  EXPECT_EQ(Tensor::arange(Scalar(0), Scalar(5), Scalar(-1), DType::i32).numel(), 0);
  EXPECT_EQ(Tensor::arange(-3, DType::i64).numel(), 0);
  EXPECT_EQ(Tensor::arange(0, DType::f64).shape(), (Shape{0}));
}

TEST(Arange, StepLargerThanTheSpan) {
  // One element; computing the count must not overflow (span + step - 1).
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(0), Scalar(10), Scalar(kI64Max), DType::i64)), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(5), Scalar(6), Scalar(kI64Max - 1), DType::i64)), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(values<std::int64_t>(Tensor::arange(Scalar(0), Scalar(-10), Scalar(-kI64Max), DType::i64)), (std::vector<std::int64_t>{0}));
}

TEST(Arange, MostNegativeStep) {
  // step = INT64_MIN: one element (must not negate the step).
  Tensor a = Tensor::arange(Scalar(0), Scalar(-10), Scalar(kI64Min), DType::i64);
  ASSERT_EQ(a.numel(), 1);
  EXPECT_EQ(a.item<std::int64_t>({0}), 0);
}

TEST(Arange, SpanOverflowIsRefused) {
  // stop - start overflows int64: the range has about 2^64 elements, far too many; it
  // must be refused, not wrap around to an empty tensor.
  EXPECT_THROW(Tensor::arange(Scalar(kI64Min), Scalar(kI64Max), Scalar(1), DType::i64), ValidationError);
  EXPECT_THROW(Tensor::arange(Scalar(kI64Max), Scalar(kI64Min), Scalar(-1), DType::i64), ValidationError);
}

TEST(Arange, FloatRanges) {
  EXPECT_EQ(values<double>(Tensor::arange(Scalar(0.0), Scalar(1.0), Scalar(0.25), DType::f64)),
            (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(values<double>(Tensor::arange(Scalar(0), Scalar(2), Scalar(0.5), DType::f64)), (std::vector<double>{0, 0.5, 1, 1.5}));
  Tensor n = Tensor::arange(Scalar(1.0), Scalar(0.0), Scalar(-0.3), DType::f32);
  ASSERT_EQ(n.numel(), 4);  // ceil(1/0.3)
  for (int i = 0; i < 4; ++i) EXPECT_EQ(n.item<float>({i}), static_cast<float>(1.0 + i * -0.3));
  EXPECT_EQ(Tensor::arange(Scalar(0.5), Scalar(0.5), Scalar(0.1), DType::f64).numel(), 0);
  EXPECT_EQ(Tensor::arange(Scalar(0.0), Scalar(1.0), Scalar(-0.1), DType::f64).numel(), 0);
  Tensor f = Tensor::arange(Scalar(0.0), Scalar(3.0), Scalar(1.0), DType::i32);  // float range into ints
  EXPECT_EQ(values<std::int32_t>(f), (std::vector<std::int32_t>{0, 1, 2}));
  Tensor c = Tensor::arange(Scalar(0.0), Scalar(1.0), Scalar(0.5), DType::c64);
  EXPECT_EQ(c.item<c64>({1}), c64(0.5f, 0));
}

TEST(Arange, Errors) {
  EXPECT_THROW(Tensor::arange(Scalar(0), Scalar(5), Scalar(0), DType::i32), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0.0), Scalar(5.0), Scalar(0.0), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0.0), Scalar(kNaN), Scalar(1.0), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0.0), Scalar(kInf), Scalar(1.0), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0.0), Scalar(1.0), Scalar(kNaN), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0.0), Scalar(1e300), Scalar(1e-300), DType::f64), ArgumentError);
  EXPECT_THROW(Tensor::arange(Scalar(0), Scalar(c128(5, 0)), Scalar(1), DType::c128), ArgumentError);
  EXPECT_THROW(Tensor::arange(5, DType::b8), DTypeError);
  EXPECT_THROW(Tensor::arange(Scalar(0), Scalar(2), Scalar(1), DType::b8), DTypeError);
  try {
    Tensor::arange(Scalar(0), Scalar(5), Scalar(0), DType::i32);
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.op(), "arange");
  }
}

// ------------------------------------------------------------------ eye

TEST(Eye, SquareAndRectangular) {
  Tensor e = Tensor::eye(3, DType::f64);
  EXPECT_EQ(e.shape(), (Shape{3, 3}));
  for_each_index(e.shape(), [&](const Dims& i) { EXPECT_EQ(e.item<double>(i.span()), i[0] == i[1] ? 1.0 : 0.0); });
  Tensor w = Tensor::eye(2, DType::i32, 3);
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  for_each_index(w.shape(), [&](const Dims& i) { EXPECT_EQ(w.item<std::int32_t>(i.span()), i[0] == i[1] ? 1 : 0); });
  Tensor t = Tensor::eye(3, DType::c64, 2);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  for_each_index(t.shape(), [&](const Dims& i) { EXPECT_EQ(t.item<c64>(i.span()), i[0] == i[1] ? c64(1, 0) : c64(0, 0)); });
  Tensor b = Tensor::eye(2, DType::b8);
  EXPECT_EQ(values<bool>(b), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(Tensor::eye(0, DType::f64).shape(), (Shape{0, 0}));
  EXPECT_EQ(Tensor::eye(3, DType::f64, 0).shape(), (Shape{3, 0}));
  EXPECT_EQ(Tensor::eye(1, DType::i64).item<std::int64_t>({0, 0}), 1);
  EXPECT_THROW(Tensor::eye(-2, DType::f64), ShapeError);
}

// ------------------------------------------------------------------ Generator / Philox

TEST(GeneratorTest, StateAndAdvance) {
  Generator g(123);
  EXPECT_EQ(g.seed(), 123u);
  EXPECT_EQ(g.position(), 0u);
  EXPECT_EQ(g.advance(5), 0u);
  EXPECT_EQ(g.position(), 5u);
  EXPECT_EQ(g.advance(0), 5u);
  EXPECT_EQ(g.position(), 5u);
  Generator h(7, 1000);
  EXPECT_EQ(h.position(), 1000u);
}

TEST(GeneratorTest, PhiloxKnownAnswer) {
  // Random123 kat_vectors: philox4x32 10 rounds, counter {0,0,0,0}, key {0,0}.
  const auto w = Generator::philox(0, 0);
  EXPECT_EQ(w[0], 0x6627e8d5u);
  EXPECT_EQ(w[1], 0xe169c58du);
  EXPECT_EQ(w[2], 0xbc57ac4cu);
  EXPECT_EQ(w[3], 0x9b00dbd8u);
  // Both halves of seed and counter matter.
  EXPECT_NE(Generator::philox(1ull << 32, 0), Generator::philox(0, 0));
  EXPECT_NE(Generator::philox(0, 1ull << 32), Generator::philox(0, 0));
  EXPECT_NE(Generator::philox(0, 1), Generator::philox(0, 0));
  EXPECT_EQ(Generator::philox(99, 5), Generator::philox(99, 5));
}

TEST(GeneratorTest, Uniform01IsHalfOpenWith53Bits) {
  for (std::uint64_t c = 0; c < 2000; ++c)
    for (int which = 0; which < 2; ++which) {
      const double u = Generator::uniform01(31, c, which);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      const double scaled = u * 0x1.0p53;
      ASSERT_EQ(scaled, std::floor(scaled)) << "a multiple of 2^-53";
    }
  EXPECT_NE(Generator::uniform01(31, 0, 0), Generator::uniform01(31, 0, 1));
  const auto w = Generator::philox(31, 9);
  const std::uint64_t bits = (static_cast<std::uint64_t>(w[0]) << 32 | w[1]) >> 11;
  EXPECT_EQ(Generator::uniform01(31, 9, 0), static_cast<double>(bits) * 0x1.0p-53);
}

// ------------------------------------------------------------------ uniform

TEST(Uniform, RangeShapeAndDTypes) {
  Generator g(1);
  for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor t = Tensor::uniform(g, {50, 40}, d, -2.0, 5.0);
    EXPECT_EQ(t.dtype(), d);
    EXPECT_EQ(t.shape(), (Shape{50, 40}));
    EXPECT_TRUE(t.is_contiguous());
    double lo = 1e9, hi = -1e9;
    for_each_index(t.shape(), [&](const Dims& i) {
      const auto v = value_at(t, i);
      for (double x : {v.real(), is_complex(d) ? v.imag() : 0.0}) {
        ASSERT_GE(x, -2.0);
        ASSERT_LT(x, 5.0);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      if (!is_complex(d)) {
        ASSERT_EQ(v.imag(), 0.0);
      }
    });
    EXPECT_LT(lo, -1.9);
    EXPECT_GT(hi, 4.9);
  }
  Tensor c = Tensor::uniform(g, {1000}, DType::c128);
  int equal_parts = 0;
  for (auto z : values<c128>(c)) equal_parts += z.real() == z.imag();
  EXPECT_EQ(equal_parts, 0) << "real and imaginary parts are drawn independently";
}

TEST(Uniform, ElementIUsesCounterPositionPlusI) {
  Generator g(5, 100);
  Tensor t = Tensor::uniform(g, {4, 3}, DType::f64);
  EXPECT_EQ(g.position(), 112u);
  const auto* p = static_cast<const double*>(t.data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(p[i], Generator::uniform01(5, 100 + i, 0)) << i;
  Generator h(5, 7);
  Tensor c = Tensor::uniform(h, {3}, DType::c128);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.item<c128>({i}).real(), Generator::uniform01(5, 7 + i, 0));
    EXPECT_EQ(c.item<c128>({i}).imag(), Generator::uniform01(5, 7 + i, 1));
  }
}

TEST(Uniform, ReproducibilityAndPositions) {
  Generator a(42), b(42), c(43);
  Tensor ta = Tensor::uniform(a, {100}, DType::f64);
  Tensor tb = Tensor::uniform(b, {100}, DType::f64);
  Tensor tc = Tensor::uniform(c, {100}, DType::f64);
  EXPECT_TRUE(same_bytes(ta, tb)) << "same seed, same values";
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += ta.item<double>({i}) == tc.item<double>({i});
  EXPECT_EQ(equal, 0) << "different seeds differ";
  EXPECT_EQ(a.position(), 100u);
  // Consecutive draws differ and advance the position by numel.
  Tensor ta2 = Tensor::uniform(a, {100}, DType::f64);
  EXPECT_EQ(a.position(), 200u);
  EXPECT_FALSE(same_bytes(ta, ta2));
  Tensor ta3 = Tensor::uniform(a, {2, 3, 4}, DType::c64);
  EXPECT_EQ(a.position(), 224u) << "one block per element, complex included";
  Tensor empty = Tensor::uniform(a, {0, 5}, DType::f64);
  EXPECT_EQ(a.position(), 224u);
  EXPECT_EQ(empty.numel(), 0);

  // Drawing 10 then 10 equals drawing 20 at once.
  Generator g1(9), g2(9), g3(9, 10);
  Tensor first = Tensor::uniform(g1, {10}, DType::f32);
  Tensor second = Tensor::uniform(g1, {10}, DType::f32);
  Tensor both = Tensor::uniform(g2, {20}, DType::f32);
  Tensor skip = Tensor::uniform(g3, {10}, DType::f32);
  EXPECT_TRUE(same_bytes(first, both.slice_view(0, 0, 10)));
  EXPECT_TRUE(same_bytes(second, both.slice_view(0, 10, 20)));
  EXPECT_TRUE(same_bytes(second, skip));
  // The shape does not matter, only the element index.
  Generator g4(9);
  Tensor shaped = Tensor::uniform(g4, {4, 5}, DType::f32);
  EXPECT_TRUE(same_bytes(shaped.reshape_view({20}), both));
}

TEST(Uniform, NeverReturnsHigh) {
  // With [1, nextafter(1)) every draw rounds to one of the two endpoints; about half the
  // draws would round to `high`, which must be replaced by the largest value below it.
  const float hf = std::nextafter(1.0f, 2.0f);
  Generator g(3);
  Tensor f = Tensor::uniform(g, {4000}, DType::f32, 1.0, static_cast<double>(hf));
  for (float v : values<float>(f)) {
    ASSERT_LT(v, hf);
    ASSERT_GE(v, 1.0f);
  }
  Tensor c = Tensor::uniform(g, {2000}, DType::c64, 1.0, static_cast<double>(hf));
  for (c64 v : values<c64>(c)) {
    ASSERT_LT(v.real(), hf);
    ASSERT_LT(v.imag(), hf);
  }
  const double hd = std::nextafter(1.0, 2.0);
  Tensor d = Tensor::uniform(g, {4000}, DType::f64, 1.0, hd);
  for (double v : values<double>(d)) ASSERT_LT(v, hd);
  // Ordinary [0, 1) f32: nothing reaches 1.
  Tensor u = Tensor::uniform(g, {100000}, DType::f32);
  for (float v : values<float>(u)) ASSERT_LT(v, 1.0f);
  // low == high is allowed and gives that value.
  Tensor k = Tensor::uniform(g, {5}, DType::f64, 2.0, 2.0);
  for (double v : values<double>(k)) EXPECT_EQ(v, 2.0);
}

TEST(Uniform, Moments) {
  Generator g(11);
  Tensor t = Tensor::uniform(g, {100000}, DType::f64);
  const auto* p = static_cast<const double*>(t.data());
  double s = 0, s2 = 0, lag = 0;
  for (int i = 0; i < 100000; ++i) {
    s += p[i];
    s2 += p[i] * p[i];
    if (i) lag += (p[i] - 0.5) * (p[i - 1] - 0.5);
  }
  const double mean = s / 1e5, var = s2 / 1e5 - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(var, 1.0 / 12, 0.003);
  EXPECT_NEAR(lag / 1e5 * 12, 0.0, 0.03) << "neighbouring elements uncorrelated";
}

TEST(Uniform, Errors) {
  Generator g(1);
  for (DType d : {DType::b8, DType::i32, DType::i64}) {
    EXPECT_THROW(Tensor::uniform(g, {3}, d), DTypeError) << dtype_name(d);
    EXPECT_THROW(Tensor::normal(g, {3}, d), DTypeError) << dtype_name(d);
  }
  EXPECT_EQ(g.position(), 0u) << "failed draws consume nothing";
  EXPECT_THROW(Tensor::uniform(g, {3}, DType::f64, 2.0, 1.0), ArgumentError);
  EXPECT_THROW(Tensor::uniform(g, {3}, DType::f64, 0.0, kInf), ArgumentError);
  EXPECT_THROW(Tensor::uniform(g, {3}, DType::f64, kNaN, 1.0), ArgumentError);
  EXPECT_THROW(Tensor::normal(g, {3}, DType::f64, 0.0, -1.0), ArgumentError);
  EXPECT_THROW(Tensor::normal(g, {3}, DType::f64, kNaN, 1.0), ArgumentError);
  EXPECT_THROW(Tensor::normal(g, {3}, DType::f64, 0.0, kInf), ArgumentError);
  EXPECT_THROW(Tensor::uniform(g, {-3}, DType::f64), ShapeError);
  EXPECT_EQ(g.position(), 0u);
  try {
    Tensor::uniform(g, {3}, DType::i32);
  } catch (const DTypeError& e) {
    EXPECT_EQ(e.op(), "uniform");
  }
}

// ------------------------------------------------------------------ normal

TEST(Normal, ReproducibilityAndPositions) {
  Generator a(77), b(77), c(78);
  Tensor ta = Tensor::normal(a, {64}, DType::f64);
  Tensor tb = Tensor::normal(b, {64}, DType::f64);
  EXPECT_TRUE(same_bytes(ta, tb));
  EXPECT_FALSE(same_bytes(ta, Tensor::normal(c, {64}, DType::f64)));
  EXPECT_EQ(a.position(), 64u);
  Tensor ta2 = Tensor::normal(a, {64}, DType::f64);
  EXPECT_FALSE(same_bytes(ta, ta2));
  EXPECT_EQ(a.position(), 128u);
  Generator g1(5), g2(5), g3(5, 10);
  Tensor x1 = Tensor::normal(g1, {10}, DType::c128);
  Tensor x2 = Tensor::normal(g1, {10}, DType::c128);
  Tensor x12 = Tensor::normal(g2, {20}, DType::c128);
  EXPECT_TRUE(same_bytes(x1, x12.slice_view(0, 0, 10)));
  EXPECT_TRUE(same_bytes(x2, x12.slice_view(0, 10, 20)));
  EXPECT_TRUE(same_bytes(x2, Tensor::normal(g3, {10}, DType::c128)));
  EXPECT_EQ(g1.position(), 20u);
  // stddev 0 gives the mean.
  for (double v : values<double>(Tensor::normal(g1, {5}, DType::f64, 1.5, 0.0))) EXPECT_EQ(v, 1.5);
}

TEST(Normal, RealMoments) {
  Generator g(2024);
  const int n = 100000;
  Tensor t = Tensor::normal(g, {n}, DType::f64);
  const auto* p = static_cast<const double*>(t.data());
  double s = 0, s2 = 0, s4 = 0, mx = 0, lag = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(p[i]));
    s += p[i];
    s2 += p[i] * p[i];
    s4 += p[i] * p[i] * p[i] * p[i];
    mx = std::max(mx, std::abs(p[i]));
    if (i) lag += p[i] * p[i - 1];
  }
  const double mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
  EXPECT_NEAR(s4 / n, 3.0, 0.15) << "kurtosis of a normal";
  EXPECT_NEAR(lag / n, 0.0, 0.02);
  EXPECT_GT(mx, 3.0);
  EXPECT_LT(mx, 7.0);

  Tensor f = Tensor::normal(g, {50000}, DType::f32, 3.0, 2.0);
  double fs = 0, fs2 = 0;
  for (float v : values<float>(f)) {
    fs += v;
    fs2 += static_cast<double>(v) * v;
  }
  const double fm = fs / 50000, fv = fs2 / 50000 - fm * fm;
  EXPECT_NEAR(fm, 3.0, 0.05);
  EXPECT_NEAR(fv, 4.0, 0.15);
}

TEST(Normal, ComplexMoments) {
  Generator g(99);
  const int n = 100000;
  Tensor t = Tensor::normal(g, {n}, DType::c128);
  const auto* p = static_cast<const c128*>(t.data());
  double sr = 0, si = 0, srr = 0, sii = 0, sri = 0;
  for (int i = 0; i < n; ++i) {
    sr += p[i].real();
    si += p[i].imag();
    srr += p[i].real() * p[i].real();
    sii += p[i].imag() * p[i].imag();
    sri += p[i].real() * p[i].imag();
  }
  EXPECT_NEAR(sr / n, 0.0, 0.02);
  EXPECT_NEAR(si / n, 0.0, 0.02);
  EXPECT_NEAR((srr + sii) / n, 1.0, 0.03) << "E|z|^2 = 1";
  EXPECT_NEAR(srr / n, 0.5, 0.02);
  EXPECT_NEAR(sii / n, 0.5, 0.02);
  EXPECT_NEAR(sri / n, 0.0, 0.02);

  // c64 with mean and stddev: E|z - mean|^2 = stddev^2; the mean shifts the real part.
  Tensor c = Tensor::normal(g, {50000}, DType::c64, 1.0, 3.0);
  double mr = 0, mi = 0, e2 = 0;
  for (c64 z : values<c64>(c)) {
    mr += z.real();
    mi += z.imag();
    e2 += std::norm(c128(z.real() - 1.0, z.imag()));
  }
  EXPECT_NEAR(mr / 50000, 1.0, 0.06);
  EXPECT_NEAR(mi / 50000, 0.0, 0.06);
  EXPECT_NEAR(e2 / 50000, 9.0, 0.3);
}

// ------------------------------------------------------------------ TypedTensor

TEST(TypedTensorTest, ConstructionAndAccess) {
  auto z = TypedTensor<double>::zeros({2, 3});
  static_assert(TypedTensor<double>::kDType == DType::f64);
  EXPECT_EQ(z.rank(), 2);
  EXPECT_EQ(z.extent(1), 3);
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z(1, 2), 0.0);
  z.set(9.0, 1, 2);
  EXPECT_EQ(z(1, 2), 9.0);
  EXPECT_EQ(z(-1, -1), 9.0);
  EXPECT_EQ(z.tensor().item<double>({1, 2}), 9.0);
  EXPECT_THROW(z(2, 0), IndexError);
  EXPECT_THROW(z(0), RankError);
  EXPECT_THROW(z(0, 0, 0), RankError);
  EXPECT_THROW(z.set(1.0, 5, 5), IndexError);

  auto d = TypedTensor<std::int32_t>::from_data({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(d(1, 0), 2);
  auto r = TypedTensor<std::int32_t>::from_row_major({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(r(0, 1), 2);
  EXPECT_EQ(r(1, 0), 4);
  auto o = TypedTensor<c64>::ones({2});
  EXPECT_EQ(o(1), c64(1, 0));
  auto f = TypedTensor<float>::full({3}, 2.5f);
  EXPECT_EQ(f(2), 2.5f);
  auto b = TypedTensor<bool>::full({2}, true);
  EXPECT_EQ(b(0), true);
  std::vector<double> v{1, 2, 3, 4};
  auto sp = TypedTensor<double>::from_data(Dims{2, 2}.span(), std::span<const double>(v));
  EXPECT_EQ(sp(1, 1), 4.0);
  EXPECT_EQ(sp.data()[3], 4.0);
  sp.mutable_data()[0] = -1.0;
  EXPECT_EQ(sp(0, 0), -1.0);
  EXPECT_EQ(sp.to_string(), sp.tensor().to_string());
  TypedTensor<double> undefined;
  EXPECT_FALSE(undefined.tensor().defined());
}

TEST(TypedTensorTest, DTypeMismatch) {
  EXPECT_THROW(TypedTensor<double>(Tensor::zeros({2}, DType::f32)), DTypeError);
  EXPECT_THROW(TypedTensor<std::int64_t>(Tensor::zeros({2}, DType::i32)), DTypeError);
  EXPECT_THROW(TypedTensor<c128>(Tensor::zeros({2}, DType::c64)), DTypeError);
  EXPECT_NO_THROW({
    TypedTensor<float> u{Tensor()};
    (void)u;
  });
  try {
    TypedTensor<double> t(Tensor::zeros({2}, DType::i32));
    ADD_FAILURE() << "no DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_EQ(e.op(), "TypedTensor");
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos);
  }
}

TEST(TypedTensorTest, SharesTheHandleAndConvertsToTensor) {
  Tensor base = Tensor::from_data<double>({2, 2}, {1, 2, 3, 4});
  TypedTensor<double> t(base);
  EXPECT_TRUE(t.tensor().shares_storage(base));
  const Tensor& ref = t;
  EXPECT_EQ(ref.dtype(), DType::f64);
  EXPECT_TRUE(ref.shares_storage(base));
  t.set(10.0, 0, 0);
  EXPECT_EQ(base.item<double>({0, 0}), 10.0);
  TypedTensor<double> copy = t;
  EXPECT_TRUE(copy.tensor().shares_storage(base));
  TypedTensor<double> ro(base.slice_view(0, 0, 1).broadcast_view({3, 2}));
  EXPECT_THROW(ro.mutable_data(), ArgumentError);
  EXPECT_THROW(ro.set(1.0, 0, 0), ArgumentError);
  EXPECT_EQ(ro(2, 1), 3.0);
}

TEST(TypedTensorTest, Views) {
  auto t = TypedTensor<double>::from_row_major({2, 3}, {1, 2, 3, 4, 5, 6});
  auto tr = t.transpose_view();
  EXPECT_EQ(tr.shape(), (Shape{3, 2}));
  for_each_index(tr.shape(), [&](const Dims& i) { EXPECT_EQ(tr(i[0], i[1]), t(i[1], i[0])); });
  auto p = t.permute_view({1, 0});
  EXPECT_EQ(p(2, 1), 6.0);
  auto s = t.slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  EXPECT_EQ(s(0, 0), 3.0);
  EXPECT_EQ(s(1, 2), 4.0);
  auto r = t.reshape_view({3, 2});  // column-major order: 1 4 2 5 3 6
  EXPECT_EQ(r(0, 0), 1.0);
  EXPECT_EQ(r(1, 0), 4.0);
  EXPECT_EQ(r(2, 1), 6.0);
  EXPECT_THROW(t.transpose_view().reshape_view({6}), ArgumentError);
  EXPECT_TRUE(tr.tensor().shares_storage(t.tensor()));
}

}  // namespace
}  // namespace tenferro
