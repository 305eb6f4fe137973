// dtype table, promotion, dtype sets and dispatch; Scalar; element conversions
// (detail::cast_value / detail::exact_value); the error hierarchy.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/convert.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::kAllDTypes;

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------------ table

TEST(DTypeTable, CountAndOrder) {
  int n = 0;
#define TENFERRO_X(name, type, size) ++n;
  TENFERRO_DTYPES(TENFERRO_X)
#undef TENFERRO_X
  EXPECT_EQ(n, kNumDTypes);
  EXPECT_EQ(kNumDTypes, 7);
  // The enum follows the table (promotion order within kinds).
  EXPECT_EQ(static_cast<int>(DType::b8), 0);
  EXPECT_EQ(static_cast<int>(DType::i32), 1);
  EXPECT_EQ(static_cast<int>(DType::i64), 2);
  EXPECT_EQ(static_cast<int>(DType::f32), 3);
  EXPECT_EQ(static_cast<int>(DType::f64), 4);
  EXPECT_EQ(static_cast<int>(DType::c64), 5);
  EXPECT_EQ(static_cast<int>(DType::c128), 6);
}

TEST(DTypeTable, Names) {
  EXPECT_EQ(dtype_name(DType::b8), "bool");
  EXPECT_EQ(dtype_name(DType::i32), "i32");
  EXPECT_EQ(dtype_name(DType::i64), "i64");
  EXPECT_EQ(dtype_name(DType::f32), "f32");
  EXPECT_EQ(dtype_name(DType::f64), "f64");
  EXPECT_EQ(dtype_name(DType::c64), "c64");
  EXPECT_EQ(dtype_name(DType::c128), "c128");
  static_assert(dtype_name(DType::c128) == "c128");
}

TEST(DTypeTable, Sizes) {
  EXPECT_EQ(dtype_size(DType::b8), 1u);
  EXPECT_EQ(dtype_size(DType::i32), 4u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::c64), 8u);
  EXPECT_EQ(dtype_size(DType::c128), 16u);
  static_assert(dtype_size(DType::c64) == sizeof(c64));
}

TEST(DTypeTable, TypeTraits) {
  static_assert(std::is_same_v<dtype_t<DType::b8>, bool>);
  static_assert(std::is_same_v<dtype_t<DType::i32>, std::int32_t>);
  static_assert(std::is_same_v<dtype_t<DType::i64>, std::int64_t>);
  static_assert(std::is_same_v<dtype_t<DType::f32>, float>);
  static_assert(std::is_same_v<dtype_t<DType::f64>, double>);
  static_assert(std::is_same_v<dtype_t<DType::c64>, std::complex<float>>);
  static_assert(std::is_same_v<dtype_t<DType::c128>, std::complex<double>>);
  static_assert(dtype_of<bool> == DType::b8);
  static_assert(dtype_of<std::int32_t> == DType::i32);
  static_assert(dtype_of<std::int64_t> == DType::i64);
  static_assert(dtype_of<float> == DType::f32);
  static_assert(dtype_of<double> == DType::f64);
  static_assert(dtype_of<c64> == DType::c64);
  static_assert(dtype_of<c128> == DType::c128);
  static_assert(dtype_of<const double> == DType::f64);
  static_assert(is_complex_v<c64> && is_complex_v<c128> && !is_complex_v<double> && !is_complex_v<bool>);
  static_assert(std::is_same_v<real_t<c64>, float>);
  static_assert(std::is_same_v<real_t<c128>, double>);
  static_assert(std::is_same_v<real_t<double>, double>);
  static_assert(std::is_same_v<real_t<std::int32_t>, std::int32_t>);
  SUCCEED();
}

TEST(DTypeTable, KindPredicates) {
  struct Row {
    DType d;
    bool complex, floating, inexact, integer, boolean;
  };
  const Row rows[] = {
      {DType::b8, false, false, false, false, true},   {DType::i32, false, false, false, true, false},
      {DType::i64, false, false, false, true, false},  {DType::f32, false, true, true, false, false},
      {DType::f64, false, true, true, false, false},   {DType::c64, true, false, true, false, false},
      {DType::c128, true, false, true, false, false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(dtype_name(r.d)));
    EXPECT_EQ(is_complex(r.d), r.complex);
    EXPECT_EQ(is_floating(r.d), r.floating);
    EXPECT_EQ(is_inexact(r.d), r.inexact);
    EXPECT_EQ(is_integer(r.d), r.integer);
    EXPECT_EQ(is_bool(r.d), r.boolean);
  }
}

TEST(DTypeTable, RealAndComplexCounterparts) {
  EXPECT_EQ(real_dtype(DType::c64), DType::f32);
  EXPECT_EQ(real_dtype(DType::c128), DType::f64);
  for (DType d : {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64}) EXPECT_EQ(real_dtype(d), d);
  EXPECT_EQ(complex_dtype(DType::f32), DType::c64);
  EXPECT_EQ(complex_dtype(DType::c64), DType::c64);
  EXPECT_EQ(complex_dtype(DType::f64), DType::c128);
  EXPECT_EQ(complex_dtype(DType::c128), DType::c128);
  EXPECT_EQ(complex_dtype(DType::i32), DType::c128);
  EXPECT_EQ(complex_dtype(DType::i64), DType::c128);
  EXPECT_EQ(complex_dtype(DType::b8), DType::c128);
}

// ------------------------------------------------------------------ promotion

TEST(DTypePromotion, DocumentedTableAll49PairsSymmetric) {
  using D = DType;
  // Rows/columns: bool i32 i64 f32 f64 c64 c128 (copied from dtype.hpp).
  const DType table[7][7] = {
      /* bool */ {D::b8, D::i32, D::i64, D::f32, D::f64, D::c64, D::c128},
      /* i32  */ {D::i32, D::i32, D::i64, D::f32, D::f64, D::c64, D::c128},
      /* i64  */ {D::i64, D::i64, D::i64, D::f32, D::f64, D::c64, D::c128},
      /* f32  */ {D::f32, D::f32, D::f32, D::f32, D::f64, D::c64, D::c128},
      /* f64  */ {D::f64, D::f64, D::f64, D::f64, D::f64, D::c128, D::c128},
      /* c64  */ {D::c64, D::c64, D::c64, D::c64, D::c128, D::c64, D::c128},
      /* c128 */ {D::c128, D::c128, D::c128, D::c128, D::c128, D::c128, D::c128},
  };
  int checked = 0;
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      const DType a = kAllDTypes[i], b = kAllDTypes[j];
      EXPECT_EQ(table[i][j], table[j][i]) << "documented table not symmetric";
      EXPECT_EQ(promote(a, b), table[i][j]) << dtype_name(a) << " + " << dtype_name(b);
      EXPECT_EQ(promote(a, b), promote(b, a)) << dtype_name(a) << " + " << dtype_name(b);
      ++checked;
    }
  EXPECT_EQ(checked, 49);
}

TEST(DTypePromotion, IsConstexprAndAssociativeOnTable) {
  static_assert(promote(DType::f64, DType::c64) == DType::c128);
  static_assert(promote(DType::i64, DType::f32) == DType::f32);
  static_assert(promote(DType::b8, DType::b8) == DType::b8);
  // Promotion is a join on this table: associative and idempotent.
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes)
      for (DType c : kAllDTypes)
        EXPECT_EQ(promote(promote(a, b), c), promote(a, promote(b, c)))
            << dtype_name(a) << "," << dtype_name(b) << "," << dtype_name(c);
  for (DType a : kAllDTypes) EXPECT_EQ(promote(a, a), a);
}

// ------------------------------------------------------------------ dtype sets

TEST(DTypeSets, InSetForEverySet) {
  struct Row {
    DTypeSet s;
    bool member[7];  // bool i32 i64 f32 f64 c64 c128
    std::string_view name;
  };
  const Row rows[] = {
      {DTypeSet::all, {1, 1, 1, 1, 1, 1, 1}, "any dtype"},
      {DTypeSet::numeric, {0, 1, 1, 1, 1, 1, 1}, "a numeric dtype"},
      {DTypeSet::real, {1, 1, 1, 1, 1, 0, 0}, "a real dtype"},
      {DTypeSet::real_numeric, {0, 1, 1, 1, 1, 0, 0}, "a real numeric dtype"},
      {DTypeSet::inexact, {0, 0, 0, 1, 1, 1, 1}, "a float or complex dtype"},
      {DTypeSet::floating, {0, 0, 0, 1, 1, 0, 0}, "a float dtype"},
      {DTypeSet::complex, {0, 0, 0, 0, 0, 1, 1}, "a complex dtype"},
      {DTypeSet::integer, {0, 1, 1, 0, 0, 0, 0}, "an integer dtype"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(dtype_set_name(r.s), r.name);
    for (int i = 0; i < 7; ++i)
      EXPECT_EQ(in_set(kAllDTypes[i], r.s), r.member[i]) << r.name << " / " << dtype_name(kAllDTypes[i]);
  }
  static_assert(in_set(DType::i32, DTypeSet::integer) && !in_set(DType::b8, DTypeSet::numeric));
}

// ------------------------------------------------------------------ visit_dtype

TEST(VisitDType, DispatchesTheRightTypeForEveryDType) {
  for (DType d : kAllDTypes) {
    const DType seen = visit_dtype("test_op", d, [](auto tag) {
      using T = typename decltype(tag)::type;
      return dtype_of<T>;
    });
    EXPECT_EQ(seen, d);
    const std::size_t size = visit_dtype("test_op", d, [](auto tag) { return sizeof(typename decltype(tag)::type); });
    EXPECT_EQ(size, dtype_size(d));
  }
}

TEST(VisitDType, VoidVisitorAndCapture) {
  int calls = 0;
  DType got = DType::b8;
  visit_dtype<DTypeSet::floating>("op", DType::f32, [&](auto tag) {
    ++calls;
    got = dtype_of<typename decltype(tag)::type>;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(got, DType::f32);
}

template <DTypeSet S> void check_set_dispatch() {
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_set_name(S)) + " / " + std::string(dtype_name(d)));
    if (in_set(d, S)) {
      const DType seen = visit_dtype<S>("my_op", d, [](auto tag) {
        using T = typename decltype(tag)::type;
        // Only instantiated for members of S.
        static_assert(in_set(dtype_of<T>, S));
        return dtype_of<T>;
      });
      EXPECT_EQ(seen, d);
    } else {
      bool called = false;
      try {
        visit_dtype<S>("my_op", d, [&](auto) {
          called = true;
          return 0;
        });
        ADD_FAILURE() << "no DTypeError";
      } catch (const DTypeError& e) {
        EXPECT_EQ(e.op(), "my_op");
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("my_op: ", 0), 0u) << what;
        EXPECT_NE(what.find(std::string(dtype_name(d))), std::string::npos) << what;
        EXPECT_NE(what.find(std::string(dtype_set_name(S))), std::string::npos) << what;
      }
      EXPECT_FALSE(called);
    }
  }
}

TEST(VisitDType, OutsideTheSetThrowsDTypeErrorNamingTheOp) {
  check_set_dispatch<DTypeSet::all>();
  check_set_dispatch<DTypeSet::numeric>();
  check_set_dispatch<DTypeSet::real>();
  check_set_dispatch<DTypeSet::real_numeric>();
  check_set_dispatch<DTypeSet::inexact>();
  check_set_dispatch<DTypeSet::floating>();
  check_set_dispatch<DTypeSet::complex>();
  check_set_dispatch<DTypeSet::integer>();
}

TEST(VisitDType, ErrorIsAValidationError) {
  EXPECT_THROW(visit_dtype<DTypeSet::integer>("x", DType::f64, [](auto) {}), ValidationError);
  EXPECT_THROW(visit_dtype<DTypeSet::integer>("x", DType::f64, [](auto) {}), Error);
}

// ------------------------------------------------------------------ errors

TEST(Errors, HierarchyAndMessageFormat) {
  const ShapeError e("matmul", "shapes [2, 3] and [4] differ");
  EXPECT_EQ(e.op(), "matmul");
  EXPECT_STREQ(e.what(), "matmul: shapes [2, 3] and [4] differ");
  static_assert(std::is_base_of_v<ValidationError, ShapeError>);
  static_assert(std::is_base_of_v<ValidationError, RankError>);
  static_assert(std::is_base_of_v<ValidationError, AxisError>);
  static_assert(std::is_base_of_v<ValidationError, DTypeError>);
  static_assert(std::is_base_of_v<ValidationError, ArgumentError>);
  static_assert(std::is_base_of_v<ValidationError, IndexError>);
  static_assert(std::is_base_of_v<Error, ValidationError>);
  static_assert(std::is_base_of_v<Error, UnsupportedError>);
  static_assert(std::is_base_of_v<Error, NumericalError>);
  static_assert(std::is_base_of_v<Error, BackendError>);
  static_assert(std::is_base_of_v<Error, RuntimeStateError>);
  static_assert(std::is_base_of_v<Error, SessionEntryError>);
  static_assert(std::is_base_of_v<Error, InternalError>);
  static_assert(std::is_base_of_v<std::exception, Error>);
  static_assert(!std::is_base_of_v<ValidationError, NumericalError>);

  const NumericalError n("getrf", "singular", 3, 7);
  EXPECT_EQ(n.info(), 3);
  EXPECT_EQ(n.batch_index(), 7);
  const NumericalError n2("div", "integer division by zero");
  EXPECT_EQ(n2.info(), 0);
  EXPECT_EQ(n2.batch_index(), -1);

  const SessionEntryError s(SessionEntryKind::Reentered, "with_session", "already inside a session");
  EXPECT_EQ(s.kind(), SessionEntryKind::Reentered);
  EXPECT_EQ(s.op(), "with_session");
  EXPECT_NE(std::string(s.what()).find("Reentered"), std::string::npos);
  EXPECT_EQ(session_entry_kind_name(SessionEntryKind::Reentered), "Reentered");
  EXPECT_EQ(session_entry_kind_name(SessionEntryKind::Contended), "Contended");
  EXPECT_EQ(session_entry_kind_name(SessionEntryKind::IncompatibleContext), "IncompatibleContext");
  EXPECT_EQ(session_entry_kind_name(SessionEntryKind::Poisoned), "Poisoned");
  EXPECT_EQ(session_entry_kind_name(SessionEntryKind::Executor), "Executor");
}

// ------------------------------------------------------------------ Scalar

TEST(ScalarTest, Kinds) {
  EXPECT_EQ(Scalar().kind(), Scalar::Kind::floating);
  EXPECT_EQ(Scalar().to<double>(), 0.0);
  EXPECT_EQ(Scalar(true).kind(), Scalar::Kind::boolean);
  EXPECT_EQ(Scalar(3).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Scalar(std::int64_t{3}).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Scalar(std::int8_t{3}).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Scalar(3u).kind(), Scalar::Kind::integer);
  EXPECT_EQ(Scalar(2.5f).kind(), Scalar::Kind::floating);
  EXPECT_EQ(Scalar(2.5).kind(), Scalar::Kind::floating);
  EXPECT_EQ(Scalar(c64(1, 2)).kind(), Scalar::Kind::complex);
  EXPECT_EQ(Scalar(c128(1, 2)).kind(), Scalar::Kind::complex);
  EXPECT_EQ(Scalar(c128(1, 0)).kind(), Scalar::Kind::complex);

  EXPECT_EQ(Scalar(true).natural_dtype(), DType::b8);
  EXPECT_EQ(Scalar(3).natural_dtype(), DType::i64);
  EXPECT_EQ(Scalar(2.5f).natural_dtype(), DType::f64);
  EXPECT_EQ(Scalar(c64(1, 2)).natural_dtype(), DType::c128);
}

TEST(ScalarTest, ToSameKind) {
  EXPECT_EQ(Scalar(true).to<bool>(), true);
  EXPECT_EQ(Scalar(false).to<bool>(), false);
  EXPECT_EQ(Scalar(-7).to<std::int32_t>(), -7);
  EXPECT_EQ(Scalar(kI64Max).to<std::int64_t>(), kI64Max);
  EXPECT_EQ(Scalar(kI64Min).to<std::int64_t>(), kI64Min);
  EXPECT_EQ(Scalar(2.5).to<double>(), 2.5);
  EXPECT_EQ(Scalar(2.5f).to<float>(), 2.5f);
  EXPECT_EQ(Scalar(0.1).to<float>(), 0.1f);
  EXPECT_EQ(Scalar(c128(1.5, -2.5)).to<c128>(), c128(1.5, -2.5));
  EXPECT_EQ(Scalar(c128(1.5, -2.5)).to<c64>(), c64(1.5f, -2.5f));
  EXPECT_EQ(Scalar(c64(0.5f, 4.f)).to<c128>(), c128(0.5, 4.0));
}

TEST(ScalarTest, ToAcrossKinds) {
  // bool / integer → anything
  EXPECT_EQ(Scalar(true).to<std::int32_t>(), 1);
  EXPECT_EQ(Scalar(true).to<double>(), 1.0);
  EXPECT_EQ(Scalar(true).to<c64>(), c64(1, 0));
  EXPECT_EQ(Scalar(5).to<double>(), 5.0);
  EXPECT_EQ(Scalar(5).to<float>(), 5.0f);
  EXPECT_EQ(Scalar(5).to<c128>(), c128(5, 0));
  EXPECT_EQ(Scalar(-1).to<bool>(), true);
  EXPECT_EQ(Scalar(0).to<bool>(), false);
  EXPECT_EQ(Scalar(kI64Max).to<double>(), 9223372036854775808.0);
  // float → integer truncates toward zero
  EXPECT_EQ(Scalar(2.7).to<std::int32_t>(), 2);
  EXPECT_EQ(Scalar(-2.7).to<std::int32_t>(), -2);
  EXPECT_EQ(Scalar(-2.7).to<std::int64_t>(), -2);
  // complex → real keeps the real part
  EXPECT_EQ(Scalar(c128(3.5, 2)).to<double>(), 3.5);
  EXPECT_EQ(Scalar(c128(3.5, 2)).to<float>(), 3.5f);
  EXPECT_EQ(Scalar(c128(3.5, 2)).to<std::int32_t>(), 3);
  // float/complex → bool tests != 0
  EXPECT_EQ(Scalar(0.5).to<bool>(), true);
  EXPECT_EQ(Scalar(0.0).to<bool>(), false);
  EXPECT_EQ(Scalar(-0.0).to<bool>(), false);
  EXPECT_EQ(Scalar(c128(0, 1)).to<bool>(), true);
  EXPECT_EQ(Scalar(c128(0, 0)).to<bool>(), false);
}

TEST(ScalarTest, FloatToIntegerSaturatesAndNaNIsZero) {
  EXPECT_EQ(Scalar(1e20).to<std::int32_t>(), kI32Max);
  EXPECT_EQ(Scalar(-1e20).to<std::int32_t>(), kI32Min);
  EXPECT_EQ(Scalar(1e20).to<std::int64_t>(), kI64Max);
  EXPECT_EQ(Scalar(-1e20).to<std::int64_t>(), kI64Min);
  EXPECT_EQ(Scalar(9.3e18).to<std::int64_t>(), kI64Max);
  EXPECT_EQ(Scalar(9223372036854775808.0).to<std::int64_t>(), kI64Max);   // 2^63
  EXPECT_EQ(Scalar(-9223372036854775808.0).to<std::int64_t>(), kI64Min);  // -2^63
  EXPECT_EQ(Scalar(2147483648.0).to<std::int32_t>(), kI32Max);
  EXPECT_EQ(Scalar(2147483647.0).to<std::int32_t>(), kI32Max);
  EXPECT_EQ(Scalar(2147483646.0).to<std::int32_t>(), 2147483646);
  EXPECT_EQ(Scalar(-2147483649.0).to<std::int32_t>(), kI32Min);
  EXPECT_EQ(Scalar(kInf).to<std::int32_t>(), kI32Max);
  EXPECT_EQ(Scalar(-kInf).to<std::int64_t>(), kI64Min);
  EXPECT_EQ(Scalar(kNaN).to<std::int32_t>(), 0);
  EXPECT_EQ(Scalar(kNaN).to<std::int64_t>(), 0);
  EXPECT_EQ(Scalar(c128(kNaN, 1)).to<std::int32_t>(), 0);
  EXPECT_EQ(Scalar(c128(1e30, 0)).to<std::int32_t>(), kI32Max);
  EXPECT_TRUE(std::isnan(Scalar(kNaN).to<double>()));
  EXPECT_TRUE(std::isnan(Scalar(kNaN).to<float>()));
  EXPECT_TRUE(std::isinf(Scalar(1e300).to<float>()));
}

TEST(ScalarTest, ResultDTypeWithEveryKindAndDType) {
  using D = DType;
  const Scalar scalars[4] = {Scalar(true), Scalar(2), Scalar(2.0), Scalar(c128(1, 1))};
  // Columns: tensor dtype bool i32 i64 f32 f64 c64 c128.
  const DType expected[4][7] = {
      /* bool    */ {D::b8, D::i32, D::i64, D::f32, D::f64, D::c64, D::c128},
      /* integer */ {D::i64, D::i32, D::i64, D::f32, D::f64, D::c64, D::c128},
      /* float   */ {D::f64, D::f64, D::f64, D::f32, D::f64, D::c64, D::c128},
      /* complex */ {D::c128, D::c128, D::c128, D::c64, D::c128, D::c64, D::c128},
  };
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(scalars[k].result_dtype_with(kAllDTypes[j]), expected[k][j])
          << "scalar kind " << k << " with tensor " << dtype_name(kAllDTypes[j]);
  // The value does not matter, only the kind (weak scalar): a huge int keeps i32.
  EXPECT_EQ(Scalar(kI64Max).result_dtype_with(DType::i32), DType::i32);
  EXPECT_EQ(Scalar(1e300).result_dtype_with(DType::f32), DType::f32);
  EXPECT_EQ(Scalar(c64(1, 1)).result_dtype_with(DType::f64), DType::c128);
}

TEST(ScalarTest, ToString) {
  EXPECT_EQ(Scalar(true).to_string(), "true");
  EXPECT_EQ(Scalar(false).to_string(), "false");
  EXPECT_EQ(Scalar(42).to_string(), "42");
  EXPECT_EQ(Scalar(-7).to_string(), "-7");
  EXPECT_NE(Scalar(2.5).to_string().find("2.5"), std::string::npos);
  const std::string c = Scalar(c128(1, 2)).to_string();
  EXPECT_NE(c.find('j'), std::string::npos) << c;
}

TEST(ScalarTest, ComplexToStringWithNegativeImaginaryPart) {
  // Used in error messages: "(1-2j)" style, never "+-".
  const std::string s = Scalar(c128(1, -2)).to_string();
  EXPECT_EQ(s.find("+-"), std::string::npos) << s;
  EXPECT_NE(s.find('-'), std::string::npos) << s;
}

// Error messages show values in the shortest form that reads back exactly (std::to_chars;
// "%f" printed 1e-50 as "0.000000" and 0.1 + 0.2 as "0.300000").
TEST(ScalarTest, ToStringIsShortestRoundTrip) {
  EXPECT_EQ(Scalar(1e-50).to_string(), "1e-50");
  EXPECT_EQ(Scalar(0.1).to_string(), "0.1");
  EXPECT_EQ(Scalar(0.1 + 0.2).to_string(), "0.30000000000000004");
  EXPECT_EQ(Scalar(2.0).to_string(), "2.0");
  EXPECT_EQ(Scalar(-0.0).to_string(), "-0.0");
  EXPECT_EQ(Scalar(1e300).to_string(), "1e+300");
  EXPECT_EQ(Scalar(std::numeric_limits<double>::infinity()).to_string(), "inf");
  EXPECT_EQ(Scalar(-std::numeric_limits<double>::infinity()).to_string(), "-inf");
  EXPECT_EQ(Scalar(std::numeric_limits<double>::quiet_NaN()).to_string(), "nan");
  EXPECT_EQ(Scalar(c128(1e-50, -0.5)).to_string(), "(1e-50-0.5j)");
  EXPECT_EQ(Scalar(c128(2, 3)).to_string(), "(2.0+3.0j)");
  for (double v : {1e-50, 0.1, 1.0 / 3.0, 6.02214076e23, 5e-324}) EXPECT_EQ(std::strtod(Scalar(v).to_string().c_str(), nullptr), v) << v;
}

TEST(ScalarTest, ErrorMessagesShowSmallValues) {
  Generator gen(1);
  const std::string msg = testing::expect_error<ArgumentError>(
      [&] { (void)Tensor::uniform(gen, {2}, DType::f64, 1e-50, 1e-60); }, "uniform");
  EXPECT_NE(msg.find("low=1e-50 high=1e-60"), std::string::npos) << msg;
  const std::string msg2 = testing::expect_error<ArgumentError>(
      [&] { (void)Tensor::normal(gen, {2}, DType::f64, 0.0, -1e-50); }, "normal");
  EXPECT_NE(msg2.find("stddev=-1e-50"), std::string::npos) << msg2;
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::string msg3 = testing::expect_error<ArgumentError>(
      [&] { (void)convert(s, Tensor::from_data<double>({2}, {1.0, 1e-50}), DType::i32); }, "convert");
  EXPECT_NE(msg3.find("= 1e-50 does not convert"), std::string::npos) << msg3;
}

// ------------------------------------------------------------------ cast_value

using detail::cast_value;
using detail::exact_value;

TEST(CastValue, FloatToIntegerSaturatesTruncatesNaNToZero) {
  EXPECT_EQ(cast_value<std::int32_t>(2.9), 2);
  EXPECT_EQ(cast_value<std::int32_t>(-2.9), -2);
  EXPECT_EQ(cast_value<std::int32_t>(kNaN), 0);
  EXPECT_EQ(cast_value<std::int64_t>(kNaN), 0);
  EXPECT_EQ(cast_value<std::int32_t>(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(cast_value<std::int32_t>(1e10), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(-1e10), kI32Min);
  EXPECT_EQ(cast_value<std::int32_t>(2147483647.0), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(2147483647.5), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(2147483648.0), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(-2147483648.0), kI32Min);
  EXPECT_EQ(cast_value<std::int32_t>(-2147483648.9), kI32Min);
  EXPECT_EQ(cast_value<std::int32_t>(3e9f), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(-3e9f), kI32Min);
  EXPECT_EQ(cast_value<std::int32_t>(kInf), kI32Max);
  EXPECT_EQ(cast_value<std::int32_t>(-kInf), kI32Min);
  EXPECT_EQ(cast_value<std::int64_t>(9223372036854775808.0), kI64Max);
  EXPECT_EQ(cast_value<std::int64_t>(-9223372036854775808.0), kI64Min);
  EXPECT_EQ(cast_value<std::int64_t>(std::nextafter(9223372036854775808.0, 0.0)), 9223372036854774784LL);  // largest double < 2^63
  EXPECT_EQ(cast_value<std::int64_t>(1e19f), kI64Max);
  EXPECT_EQ(cast_value<std::int64_t>(kInf), kI64Max);
  EXPECT_EQ(cast_value<std::int64_t>(-kInf), kI64Min);
  EXPECT_EQ(cast_value<std::int32_t>(-0.0), 0);
}

TEST(CastValue, ToBoolTestsNonZero) {
  EXPECT_EQ(cast_value<bool>(0.0), false);
  EXPECT_EQ(cast_value<bool>(-0.0), false);
  EXPECT_EQ(cast_value<bool>(0.5), true);
  EXPECT_EQ(cast_value<bool>(kNaN), true);
  EXPECT_EQ(cast_value<bool>(std::int32_t{2}), true);
  EXPECT_EQ(cast_value<bool>(std::int64_t{-1}), true);
  EXPECT_EQ(cast_value<bool>(std::int64_t{0}), false);
  EXPECT_EQ(cast_value<bool>(c128(0, 0)), false);
  EXPECT_EQ(cast_value<bool>(c128(2, 0)), true);
}

TEST(CastValue, ComplexToBoolTestsTheWholeValue) {
  // "→ bool tests != 0" (ops.hpp cast): 0+1j is non-zero, as in NumPy and as
  // Scalar(c128(0, 1)).to<bool>().
  EXPECT_EQ(cast_value<bool>(c128(0, 1)), true);
  EXPECT_EQ(cast_value<bool>(c64(0, -1)), true);
  EXPECT_EQ(cast_value<bool>(c128(0, 1)), Scalar(c128(0, 1)).to<bool>());
}

TEST(CastValue, ComplexAndRealPairs) {
  EXPECT_EQ(cast_value<double>(c128(3, 4)), 3.0);
  EXPECT_EQ(cast_value<float>(c128(3, 4)), 3.0f);
  EXPECT_EQ(cast_value<std::int32_t>(c128(2.5, 1)), 2);
  EXPECT_EQ(cast_value<std::int32_t>(c128(kNaN, 0)), 0);
  EXPECT_EQ(cast_value<std::int64_t>(c64(1e30f, 0)), kI64Max);
  EXPECT_EQ(cast_value<c64>(c128(1.5, -2.5)), c64(1.5f, -2.5f));
  EXPECT_EQ(cast_value<c128>(c64(1.5f, -2.5f)), c128(1.5, -2.5));
  EXPECT_EQ(cast_value<c128>(std::int32_t{7}), c128(7, 0));
  EXPECT_EQ(cast_value<c64>(std::int64_t{-3}), c64(-3, 0));
  EXPECT_EQ(cast_value<c128>(true), c128(1, 0));
  EXPECT_EQ(cast_value<c64>(false), c64(0, 0));
  const c64 n = cast_value<c64>(kNaN);
  EXPECT_TRUE(std::isnan(n.real()));
  EXPECT_EQ(n.imag(), 0.0f);
  const c128 z = cast_value<c128>(-0.0);
  EXPECT_TRUE(std::signbit(z.real()));
}

TEST(CastValue, OtherPairsFollowCpp) {
  EXPECT_EQ(cast_value<double>(std::int64_t{kI64Max}), 9223372036854775808.0);
  EXPECT_EQ(cast_value<float>(std::int32_t{16777217}), 16777216.0f);
  EXPECT_TRUE(std::isinf(cast_value<float>(1e300)));
  EXPECT_TRUE(std::isnan(cast_value<float>(kNaN)));
  EXPECT_TRUE(std::signbit(cast_value<float>(-0.0)));
  EXPECT_EQ(cast_value<double>(true), 1.0);
  EXPECT_EQ(cast_value<std::int32_t>(true), 1);
  EXPECT_EQ(cast_value<std::int64_t>(std::int32_t{-5}), -5);
  EXPECT_EQ(cast_value<std::int32_t>(std::int64_t{(1LL << 32) + 5}), 5);  // modular, as C++20
  EXPECT_EQ(cast_value<double>(2.5f), 2.5);
}

// ------------------------------------------------------------------ exact_value

TEST(ExactValue, IntegerToFloat) {
  EXPECT_FALSE(exact_value<double>(kI64Max)) << "INT64_MAX rounds to 2^63";
  EXPECT_TRUE(exact_value<double>(std::int64_t{1} << 53));
  EXPECT_FALSE(exact_value<double>((std::int64_t{1} << 53) + 1));
  EXPECT_FALSE(exact_value<double>(-(std::int64_t{1} << 53) - 1));
  EXPECT_TRUE(exact_value<double>(kI64Min)) << "-2^63 is a double";
  EXPECT_TRUE(exact_value<double>(std::int64_t{-12345}));
  EXPECT_TRUE(exact_value<double>(kI32Max));
  EXPECT_TRUE(exact_value<double>(kI32Min));
  EXPECT_TRUE(exact_value<float>(std::int32_t{16777216}));
  EXPECT_FALSE(exact_value<float>(std::int32_t{16777217}));
  EXPECT_FALSE(exact_value<float>(kI32Max));
  EXPECT_TRUE(exact_value<float>(kI32Min));
  EXPECT_FALSE(exact_value<float>(kI64Max));
  EXPECT_TRUE(exact_value<c128>(std::int64_t{1} << 53));
  EXPECT_FALSE(exact_value<c128>(kI64Max));
  EXPECT_FALSE(exact_value<c64>(std::int32_t{16777217}));
}

TEST(ExactValue, FloatToInteger) {
  EXPECT_TRUE(exact_value<std::int32_t>(2.0));
  EXPECT_FALSE(exact_value<std::int32_t>(2.5));
  EXPECT_FALSE(exact_value<std::int32_t>(kNaN));
  EXPECT_FALSE(exact_value<std::int32_t>(kInf));
  EXPECT_FALSE(exact_value<std::int32_t>(-kInf));
  EXPECT_TRUE(exact_value<std::int32_t>(-0.0));
  EXPECT_TRUE(exact_value<std::int32_t>(2147483647.0));
  EXPECT_FALSE(exact_value<std::int32_t>(2147483648.0));
  EXPECT_TRUE(exact_value<std::int32_t>(-2147483648.0));
  EXPECT_FALSE(exact_value<std::int32_t>(-2147483649.0));
  EXPECT_FALSE(exact_value<std::int64_t>(9223372036854775808.0));  // 2^63
  EXPECT_TRUE(exact_value<std::int64_t>(-9223372036854775808.0));
  EXPECT_TRUE(exact_value<std::int64_t>(std::nextafter(9223372036854775808.0, 0.0)));
  EXPECT_TRUE(exact_value<std::int64_t>(1e18));
  EXPECT_FALSE(exact_value<std::int64_t>(1e19));
  EXPECT_TRUE(exact_value<std::int32_t>(3.0f));
  EXPECT_FALSE(exact_value<std::int32_t>(3e9f));
}

TEST(ExactValue, FloatToFloat) {
  EXPECT_TRUE(exact_value<float>(kNaN));
  EXPECT_TRUE(exact_value<float>(0.5));
  EXPECT_FALSE(exact_value<float>(0.1));
  EXPECT_TRUE(exact_value<float>(-0.0));
  EXPECT_TRUE(exact_value<float>(kInf));
  EXPECT_TRUE(exact_value<float>(-kInf));
  EXPECT_FALSE(exact_value<float>(1e40));
  EXPECT_FALSE(exact_value<float>(std::numeric_limits<double>::max()));
  EXPECT_FALSE(exact_value<float>(1e-50));  // underflows to 0
  EXPECT_TRUE(exact_value<double>(0.1f));
  EXPECT_TRUE(exact_value<double>(std::numeric_limits<float>::quiet_NaN()));
}

TEST(ExactValue, Complex) {
  EXPECT_TRUE(exact_value<double>(c128(1, 0)));
  EXPECT_TRUE(exact_value<double>(c128(1, -0.0)));
  EXPECT_FALSE(exact_value<double>(c128(1, 1e-300)));
  EXPECT_FALSE(exact_value<double>(c128(3, 1)));
  EXPECT_TRUE(exact_value<std::int32_t>(c128(3, 0)));
  EXPECT_FALSE(exact_value<std::int32_t>(c128(3.5, 0)));
  EXPECT_FALSE(exact_value<std::int32_t>(c128(kNaN, 0)));
  EXPECT_TRUE(exact_value<float>(c64(0.1f, 0)));
  EXPECT_TRUE(exact_value<c64>(c128(0.5, 0.25)));
  EXPECT_FALSE(exact_value<c64>(c128(0.5, 0.1)));
  EXPECT_FALSE(exact_value<c64>(c128(0.1, 0)));
  EXPECT_TRUE(exact_value<c64>(c128(kNaN, kNaN)));
  EXPECT_TRUE(exact_value<c128>(c64(0.1f, 0.2f)));
  EXPECT_TRUE(exact_value<c128>(kNaN));
  EXPECT_TRUE(exact_value<c64>(0.5));
  EXPECT_FALSE(exact_value<c64>(0.1));
  EXPECT_TRUE(exact_value<c128>(std::int32_t{-4}));
}

TEST(ExactValue, BoolTargetsAndSources) {
  EXPECT_TRUE(exact_value<bool>(std::int32_t{0}));
  EXPECT_TRUE(exact_value<bool>(std::int64_t{1}));
  EXPECT_FALSE(exact_value<bool>(std::int64_t{2}));
  EXPECT_FALSE(exact_value<bool>(std::int32_t{-1}));
  EXPECT_TRUE(exact_value<bool>(1.0));
  EXPECT_TRUE(exact_value<bool>(0.0));
  EXPECT_TRUE(exact_value<bool>(-0.0));
  EXPECT_FALSE(exact_value<bool>(0.5));
  EXPECT_FALSE(exact_value<bool>(kNaN));
  EXPECT_FALSE(exact_value<bool>(1.0f + 1e-6f));
  EXPECT_TRUE(exact_value<bool>(c128(1, 0)));
  EXPECT_TRUE(exact_value<bool>(c128(0, 0)));
  EXPECT_FALSE(exact_value<bool>(c128(0, 1)));
  EXPECT_FALSE(exact_value<bool>(c128(2, 0)));
  // Bool converts exactly to everything.
  EXPECT_TRUE(exact_value<std::int32_t>(true));
  EXPECT_TRUE(exact_value<std::int64_t>(false));
  EXPECT_TRUE(exact_value<float>(true));
  EXPECT_TRUE(exact_value<double>(true));
  EXPECT_TRUE(exact_value<c64>(true));
  EXPECT_TRUE(exact_value<c128>(false));
  EXPECT_TRUE(exact_value<bool>(true));
}

TEST(ExactValue, IntegerToInteger) {
  EXPECT_TRUE(exact_value<std::int32_t>(std::int64_t{kI32Max}));
  EXPECT_FALSE(exact_value<std::int32_t>(std::int64_t{kI32Max} + 1));
  EXPECT_TRUE(exact_value<std::int32_t>(std::int64_t{kI32Min}));
  EXPECT_FALSE(exact_value<std::int32_t>(std::int64_t{kI32Min} - 1));
  EXPECT_FALSE(exact_value<std::int32_t>(kI64Max));
  EXPECT_TRUE(exact_value<std::int64_t>(kI32Min));
  EXPECT_TRUE(exact_value<std::int64_t>(kI64Min));
}

TEST(ExactValue, AgreesWithCastRoundTripOnEdgeValues) {
  // Whenever exact_value says yes, cast there and back reproduces the value.
  const double doubles[] = {0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 2.5, 1e10, -1e10, 2147483647.0, 2147483648.0,
                            -2147483648.0, 9007199254740992.0, 9223372036854775808.0, -9223372036854775808.0,
                            1e40, 1e-50, kInf, -kInf};
  for (double x : doubles) {
    if (exact_value<std::int32_t>(x)) {
      EXPECT_EQ(cast_value<double>(cast_value<std::int32_t>(x)), x) << x;
    }
    if (exact_value<std::int64_t>(x)) {
      EXPECT_EQ(cast_value<double>(cast_value<std::int64_t>(x)), x) << x;
    }
    if (exact_value<float>(x)) {
      EXPECT_EQ(cast_value<double>(cast_value<float>(x)), x) << x;
    }
    if (exact_value<bool>(x)) {
      EXPECT_EQ(cast_value<double>(cast_value<bool>(x)), x) << x;
    }
  }
  const std::int64_t ints[] = {0, 1, -1, kI32Max, kI32Min, std::int64_t{kI32Max} + 1, std::int64_t{1} << 53,
                               (std::int64_t{1} << 53) + 1, kI64Max, kI64Min, kI64Max - 1};
  for (std::int64_t x : ints) {
    if (exact_value<double>(x)) {
      EXPECT_EQ(cast_value<std::int64_t>(cast_value<double>(x)), x) << x;
    }
    if (exact_value<float>(x)) {
      EXPECT_EQ(cast_value<std::int64_t>(cast_value<float>(x)), x) << x;
    }
    if (exact_value<std::int32_t>(x)) {
      EXPECT_EQ(cast_value<std::int64_t>(cast_value<std::int32_t>(x)), x) << x;
    }
  }
}

}  // namespace
}  // namespace tenferro
