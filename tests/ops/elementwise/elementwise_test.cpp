// Elementwise binary ops (add sub mul div rem maximum minimum pow) against a plain
// reference loop: every op x every dtype of its set x every layout of each operand x
// shapes of rank 0..3, zero extents and broadcasting; weak scalars on either side; the
// promotion table; integer semantics (wrapping, truncation, zero divisors, negative
// exponents); float special values; operator sugar; the parallel path.
#include <limits>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::ew_test {
namespace {

using testing::convert_elem;
using testing::expect_error;
using testing::expect_session_error;
using testing::for_each_index;
using testing::kAllDTypes;
using testing::kAllLayouts;
using testing::Layout;
using testing::layout_name;
using testing::near;
using testing::operand_value;
using testing::random_layout;
using testing::random_tensor;
using testing::show;

using cd = std::complex<double>;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// ---------------------------------------------------------------- helpers

/// Result shape under tenferro's rule (align at the first axis, missing trailing axes = 1).
Shape broadcast(const Shape& a, const Shape& b) {
  const int r = std::max(a.size(), b.size());
  Shape o(r, 0);
  for (int i = 0; i < r; ++i) {
    const std::int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    o[i] = x == 1 ? y : x;
  }
  return o;
}

/// Writes `v` (converted) into element `idx` of `t`.
void set_elem(const Tensor& t, const Dims& idx, double v) {
  visit_dtype("set_elem", t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.set<T>(idx.span(), convert_elem<T>(v));
  });
}

/// What the reference produces for compute type T: exact T for integers and bool,
/// double for floats, complex<double> for complex.
template <class T>
using want_t = std::conditional_t<is_complex_v<T>, cd, std::conditional_t<std::is_floating_point_v<T>, double, T>>;

template <class T> bool same_value(T got, want_t<T> want, double tol) {
  if constexpr (is_complex_v<T>) return near(cd(got.real(), got.imag()), want, tol);
  else if constexpr (std::is_floating_point_v<T>) return testing::close(cd(got, 0), cd(want, 0), tol);
  else return got == want;
}

/// Checks every element of `r` (dtype T) against ref(idx); reports the count and the
/// first mismatch.
template <class T, class Ref> void expect_elements(const Tensor& r, Ref&& ref, double tol) {
  int bad = 0;
  std::string first;
  for_each_index(r.shape(), [&](const Dims& idx) {
    const T got = r.item<T>(idx.span());
    const want_t<T> want = ref(idx);
    if (!same_value<T>(got, want, tol) && bad++ == 0) first = idx.to_string() + ": got " + show(got) + ", want " + show(want);
  });
  if (bad) ADD_FAILURE() << bad << " of " << r.numel() << " elements differ; first at " << first;
}

template <class T> T wrap(i128 x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<u128>(x)));
}

// ---------------------------------------------------------------- the reference

enum class Bin { add, sub, mul, div, rem, maximum, minimum, pow };

/// Integer reference in 128-bit arithmetic, wrapped to T at the end (two's complement).
template <class T> T ref_int(Bin op, T a, T b) {
  const i128 x = a, y = b;
  switch (op) {
    case Bin::add: return wrap<T>(x + y);
    case Bin::sub: return wrap<T>(x - y);
    case Bin::mul: return wrap<T>(x * y);
    case Bin::div: return wrap<T>(x / y);  // C++ truncates toward zero; MIN / -1 = 2^(n-1) wraps to MIN
    case Bin::rem: return wrap<T>(x % y);
    case Bin::maximum: return a > b ? a : b;
    case Bin::minimum: return a < b ? a : b;
    case Bin::pow: {
      std::uint64_t r = 1;
      for (i128 e = 0; e < y; ++e) r *= static_cast<std::uint64_t>(a);  // mod 2^64, then mod 2^bits
      return wrap<T>(static_cast<i128>(r));
    }
  }
  return T{};
}

double ref_real(Bin op, double a, double b) {
  switch (op) {
    case Bin::add: return a + b;
    case Bin::sub: return a - b;
    case Bin::mul: return a * b;
    case Bin::div: return a / b;
    case Bin::rem: return std::fmod(a, b);
    case Bin::maximum: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : (a > b ? a : b);
    case Bin::minimum: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : (a < b ? a : b);
    case Bin::pow: return std::pow(a, b);
  }
  return 0;
}

cd ref_complex(Bin op, cd a, cd b) {
  switch (op) {
    case Bin::add: return a + b;
    case Bin::sub: return a - b;
    case Bin::mul: return a * b;
    case Bin::div: return a / b;
    case Bin::pow: return std::exp(b * std::log(a));
    default: ADD_FAILURE() << "no complex reference"; return {};
  }
}

template <class T> want_t<T> reference(Bin op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == Bin::maximum ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T>) {
    return ref_int<T>(op, a, b);
  } else if constexpr (is_complex_v<T>) {
    return ref_complex(op, cd(a.real(), a.imag()), cd(b.real(), b.imag()));
  } else {
    return ref_real(op, a, b);
  }
}

/// Tolerance in units of the dtype's epsilon (the f64/f32 inputs are exact in double,
/// so the reference is the exact or correctly rounded result).
double tolerance(Bin op, DType d) {
  const double e = testing::epsilon_of(d);
  switch (op) {
    case Bin::maximum:
    case Bin::minimum: return 0;
    case Bin::rem: return e;  // fmod is exact
    case Bin::pow: return (is_complex(d) ? 64 : 4) * e;
    default: return (is_complex(d) ? 8 : 2) * e;
  }
}

struct Domain {
  double lo, hi;    ///< float and complex parts
  double ilo, ihi;  ///< integers
};

/// Operand flags: kSigns draws from [lo, hi] and from [-hi, -lo] (the sweep runs both);
/// kNonzero keeps the operand away from zero (a bool operand is all true).
enum : int { kSigns = 1, kNonzero = 2 };

struct BinCase {
  Bin op;
  std::string name;
  Tensor (*fn)(Session&, const Operand&, const Operand&);
  void (*fn_into)(Session&, const Operand&, const Operand&, const Tensor&);
  DTypeSet set;
  Domain a, b;
  int a_flags, b_flags;
};

const Domain kGeneral{-3, 3, -50, 50};
const Domain kDivisor{0.5, 3, 1, 7};

const BinCase kCases[] = {
    {Bin::add, "add", &add, &add_into, DTypeSet::numeric, kGeneral, kGeneral, 0, 0},
    {Bin::sub, "sub", &sub, &sub_into, DTypeSet::numeric, kGeneral, kGeneral, 0, 0},
    {Bin::mul, "mul", &mul, &mul_into, DTypeSet::numeric, kGeneral, kGeneral, 0, 0},
    {Bin::div, "div", &div, &div_into, DTypeSet::numeric, kGeneral, kDivisor, 0, kSigns | kNonzero},
    {Bin::rem, "rem", &rem, &rem_into, DTypeSet::real_numeric, kGeneral, kDivisor, 0, kSigns | kNonzero},
    {Bin::maximum, "maximum", &maximum, &maximum_into, DTypeSet::real, kGeneral, kGeneral, 0, 0},
    {Bin::minimum, "minimum", &minimum, &minimum_into, DTypeSet::real, kGeneral, kGeneral, 0, 0},
    // Bases away from zero (pow(0, complex) is not specified); negative real bases with
    // non-integer exponents give NaN on both sides.
    {Bin::pow, "pow", &pow, &pow_into, DTypeSet::numeric, {0.25, 3, 1, 4}, {-3, 3, 0, 6}, kSigns | kNonzero, 0},
};

std::pair<double, double> range(const Domain& d, DType t, int sign) {
  const bool integral = is_integer(t) || is_bool(t);
  const double lo = integral ? d.ilo : d.lo, hi = integral ? d.ihi : d.hi;
  return sign > 0 ? std::pair{lo, hi} : std::pair{-hi, -lo};
}

/// A random operand in `layout` (see the flags); a nonzero bool operand is all true.
Tensor make_operand(std::mt19937_64& rng, const Shape& shape, DType d, Layout l, const Domain& dom, int flags, int sign) {
  if ((flags & kNonzero) && is_bool(d)) return Tensor::ones(shape.span(), d);
  const auto [lo, hi] = range(dom, d, (flags & kSigns) ? sign : 1);
  return random_layout(rng, shape, d, l, lo, hi);
}

/// Runs the allocating and the `_into` forms and checks both against the reference.
void check_binary(Session& s, const BinCase& c, const Operand& a, const Operand& b, DType want_dtype, const Shape& want_shape) {
  const Tensor r = c.fn(s, a, b);
  ASSERT_TRUE(r.defined());
  EXPECT_EQ(r.dtype(), want_dtype);
  ASSERT_EQ(r.shape(), want_shape);
  EXPECT_TRUE(r.is_contiguous());
  visit_dtype("test", want_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    expect_elements<T>(r, [&](const Dims& idx) { return reference<T>(c.op, operand_value<T>(a, idx), operand_value<T>(b, idx)); },
                       tolerance(c.op, want_dtype));
  });
  const Tensor out = Tensor::empty(want_shape.span(), want_dtype);
  c.fn_into(s, a, b, out);
  const std::size_t bytes = static_cast<std::size_t>(r.numel()) * dtype_size(want_dtype);
  if (bytes > 0) {
    EXPECT_EQ(std::memcmp(out.data(), r.data(), bytes), 0) << c.name << "_into differs from " << c.name;
  }
}

struct ShapePair {
  Shape a, b;
};
const ShapePair kShapes[] = {
    {{}, {}},        {{5}, {5}},       {{3, 4}, {3, 4}}, {{2, 3, 4}, {2, 3, 4}}, {{0, 3}, {0, 3}},
    {{3, 4}, {3}},   {{3}, {3, 4}},    {{3, 1}, {1, 4}}, {{3, 4}, {3, 4, 2}},    {{}, {3, 4}},
    {{2, 3, 4}, {}}, {{0, 3}, {1, 3}}, {{4, 3}, {4, 1, 2}},
};

const DType kTableDTypes[7] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
/// ops.hpp / dtype.hpp promotion table, row by row (bool i32 i64 f32 f64 c64 c128).
const DType kPromote[7][7] = {
    {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128},
    {DType::i32, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128},
    {DType::i64, DType::i64, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128},
    {DType::f32, DType::f32, DType::f32, DType::f32, DType::f64, DType::c64, DType::c128},
    {DType::f64, DType::f64, DType::f64, DType::f64, DType::f64, DType::c128, DType::c128},
    {DType::c64, DType::c64, DType::c64, DType::c64, DType::c128, DType::c64, DType::c128},
    {DType::c128, DType::c128, DType::c128, DType::c128, DType::c128, DType::c128, DType::c128},
};

// ---------------------------------------------------------------- the sweep

TEST(ElementwiseBinary, EveryOpDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(20240601);
  int cases = 0;
  for (const BinCase& c : kCases) {
    for (DType d : kAllDTypes) {
      if (!in_set(d, c.set)) continue;
      for (const ShapePair& sp : kShapes) {
        const Shape want_shape = broadcast(sp.a, sp.b);
        for (int sign : {1, -1}) {
          if (sign < 0 && !((c.a_flags | c.b_flags) & kSigns)) continue;
          for (Layout la : kAllLayouts) {
            for (Layout lb : kAllLayouts) {
              SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)) + " a" + sp.a.to_string() + " " + layout_name(la) + ", b" +
                           sp.b.to_string() + " " + layout_name(lb) + (sign < 0 ? ", negative domain" : ""));
              const Tensor ta = make_operand(rng, sp.a, d, la, c.a, c.a_flags, sign);
              const Tensor tb = make_operand(rng, sp.b, d, lb, c.b, c.b_flags, sign);
              check_binary(s, c, ta, tb, d, want_shape);
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 5000);
}

TEST(ElementwiseBinary, DTypesOutsideTheSetAreDTypeErrors) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(5);
  for (const BinCase& c : kCases) {
    for (DType d : kAllDTypes) {
      if (in_set(d, c.set)) continue;
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)));
      const Tensor a = random_tensor(rng, {3, 4}, d), b = random_tensor(rng, {3, 4}, d);
      const Tensor out = random_tensor(rng, {3, 4}, d);
      const auto before = testing::snapshot(out);
      expect_error<DTypeError>([&] { c.fn(s, a, b); }, c.name);
      expect_error<DTypeError>([&] { c.fn_into(s, a, b, out); }, c.name);
      testing::expect_untouched(out, before);
    }
  }
  // The examples of the issue, spelled out.
  const Tensor bt = Tensor::from_data<bool>({2}, {true, false});
  const Tensor z = Tensor::from_data<c64>({2}, {c64(1, 2), c64(3, 4)});
  expect_error<DTypeError>([&] { add(s, bt, bt); }, "add");
  expect_error<DTypeError>([&] { add(s, bt, true); }, "add");
  expect_error<DTypeError>([&] { rem(s, z, z); }, "rem");
  expect_error<DTypeError>([&] { maximum(s, z, z); }, "maximum");
  expect_error<DTypeError>([&] { minimum(s, z, 1.0); }, "minimum");
  const Tensor f = Tensor::from_data<float>({2}, {1, 2});
  expect_error<DTypeError>([&] { maximum(s, f, c128(1, 0)); }, "maximum");  // f32 + complex scalar → c64
}

// Every pair of the 7x7 promotion table, for every op, through every operand layout.
TEST(ElementwiseBinary, MixedDTypesPromoteByTheTable) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(77);
  for (const BinCase& c : kCases) {
    for (int i = 0; i < 7; ++i) {
      for (int j = 0; j < 7; ++j) {
        const DType da = kTableDTypes[i], db = kTableDTypes[j], want = kPromote[i][j];
        for (Layout la : kAllLayouts) {
          for (Layout lb : kAllLayouts) {
            SCOPED_TRACE(c.name + " " + std::string(dtype_name(da)) + " " + layout_name(la) + " with " + std::string(dtype_name(db)) + " " +
                         layout_name(lb) + " -> " + std::string(dtype_name(want)));
            const int sign = (i + j) % 2 ? -1 : 1;
            const Tensor a = make_operand(rng, {3, 4}, da, la, c.a, c.a_flags, sign);
            const Tensor b = make_operand(rng, {3, 1}, db, lb, c.b, c.b_flags, sign);
            if (!in_set(want, c.set)) {
              expect_error<DTypeError>([&] { c.fn(s, a, b); }, c.name);
              continue;
            }
            check_binary(s, c, a, b, want, {3, 4});
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- weak scalars

enum class SKind { boolean, integer, floating, complex };

/// Weak scalar rule (scalar.hpp), written out: rows bool i32 i64 f32 f64 c64 c128,
/// columns bool, integer, float, complex scalar.
DType weak_result(DType t, SKind k) {
  static const DType table[7][4] = {
      {DType::b8, DType::i64, DType::f64, DType::c128},      // bool tensor
      {DType::i32, DType::i32, DType::f64, DType::c128},     // i32
      {DType::i64, DType::i64, DType::f64, DType::c128},     // i64
      {DType::f32, DType::f32, DType::f32, DType::c64},      // f32
      {DType::f64, DType::f64, DType::f64, DType::c128},     // f64
      {DType::c64, DType::c64, DType::c64, DType::c64},      // c64
      {DType::c128, DType::c128, DType::c128, DType::c128},  // c128
  };
  return table[static_cast<int>(t)][static_cast<int>(k)];
}

TEST(ElementwiseBinary, ScalarOperandsAreWeakOnEitherSide) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(99);
  struct S {
    Scalar v;
    SKind kind;
    std::string name;
  };
  const S scalars[] = {
      {Scalar(2.5), SKind::floating, "2.5"},
      {Scalar(-3), SKind::integer, "-3"},
      {Scalar(std::int64_t{2}), SKind::integer, "int64 2"},
      {Scalar(1.5f), SKind::floating, "1.5f"},
      {Scalar(c128(1.5, -0.5)), SKind::complex, "1.5-0.5i"},
      {Scalar(c64(0.5f, 2.0f)), SKind::complex, "c64 0.5+2i"},
      {Scalar(true), SKind::boolean, "true"},
  };
  int n = 0;
  for (const BinCase& c : kCases) {
    for (DType d : kAllDTypes) {
      for (const S& sc : scalars) {
        for (bool scalar_left : {false, true}) {
          const Layout l = kAllLayouts[n++ % 4];
          SCOPED_TRACE(c.name + " " +
                       (scalar_left ? sc.name + " op " + std::string(dtype_name(d)) + " tensor" : std::string(dtype_name(d)) + " tensor op " + sc.name) +
                       " (" + layout_name(l) + ")");
          const DType want = weak_result(d, sc.kind);
          // The tensor takes the role (and domain) of the operand it stands for.
          const Tensor t = scalar_left ? make_operand(rng, {3, 4}, d, l, c.b, c.b_flags, 1) : make_operand(rng, {3, 4}, d, l, c.a, c.a_flags, 1);
          const Operand a = scalar_left ? Operand(sc.v) : Operand(t);
          const Operand b = scalar_left ? Operand(t) : Operand(sc.v);
          if (!in_set(want, c.set)) {
            expect_error<DTypeError>([&] { c.fn(s, a, b); }, c.name);
            continue;
          }
          if (c.op == Bin::pow && !scalar_left && is_integer(want) && sc.kind == SKind::integer && sc.v.to<double>() < 0) {
            expect_error<ArgumentError>([&] { c.fn(s, a, b); }, c.name);  // negative integer exponent
            continue;
          }
          check_binary(s, c, a, b, want, {3, 4});
        }
      }
    }
  }
}

TEST(ElementwiseBinary, WeakScalarExamples) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor f32 = Tensor::from_data<float>({2}, {1.0f, 2.0f});
  const Tensor i32 = Tensor::from_data<std::int32_t>({2}, {1, 2});
  const Tensor bt = Tensor::from_data<bool>({2}, {true, false});
  EXPECT_EQ(add(s, f32, 2.0).dtype(), DType::f32);
  EXPECT_EQ(add(s, 2.0, f32).dtype(), DType::f32);
  EXPECT_EQ(mul(s, f32, 3).dtype(), DType::f32);
  EXPECT_EQ(add(s, i32, 2.5).dtype(), DType::f64);
  EXPECT_DOUBLE_EQ(add(s, i32, 2.5).item<double>({1}), 4.5);
  EXPECT_EQ(add(s, i32, 2).dtype(), DType::i32);
  EXPECT_EQ(add(s, f32, c128(1, 1)).dtype(), DType::c64);
  EXPECT_EQ(add(s, i32, c64(1, 1)).dtype(), DType::c128);
  EXPECT_EQ(add(s, bt, 2).dtype(), DType::i64);
  EXPECT_EQ(add(s, bt, 2).item<std::int64_t>({0}), 3);
  EXPECT_EQ(maximum(s, bt, false).dtype(), DType::b8);
  // An integer scalar that does not fit the tensor's integer dtype is rejected rather
  // than wrapped (src/cpu/elementwise.hpp, prepare_input).
  expect_error<ArgumentError>([&] { add(s, i32, std::int64_t{3'000'000'000}); }, "add");
}

// ---------------------------------------------------------------- integer semantics

template <class T> void check_integer_semantics(Session& s) {
  using L = std::numeric_limits<T>;
  const T mn = L::min(), mx = L::max();
  SCOPED_TRACE(std::string(dtype_name(dtype_of<T>)));
  auto vec = [](std::initializer_list<T> v) { return Tensor::from_data<T>({static_cast<std::int64_t>(v.size())}, v); };
  auto expect_vec = [](const Tensor& t, std::initializer_list<T> want) {
    ASSERT_EQ(t.dtype(), dtype_of<T>);
    ASSERT_EQ(t.numel(), static_cast<std::int64_t>(want.size()));
    std::int64_t i = 0;
    for (T w : want) {
      EXPECT_EQ(t.item<T>({i}), w) << "element " << i;
      ++i;
    }
  };
  // Truncation toward zero (StableHLO; NumPy would floor) and MIN / -1.
  const Tensor a = vec({7, -7, 7, -7, mn, mn, mn, 9, 0, mx});
  const Tensor b = vec({2, 2, -2, -2, -1, 1, 3, 3, -5, -1});
  expect_vec(div(s, a, b), {3, -3, -3, 3, mn, mn, static_cast<T>(mn / 3), 3, 0, static_cast<T>(-mx)});
  expect_vec(rem(s, a, b), {1, -1, 1, -1, 0, 0, static_cast<T>(mn % 3), 0, 0, 0});
  expect_vec(div(s, vec({mn, 5, -6}), T(-1)), {mn, -5, 6});
  expect_vec(rem(s, vec({mn, 5, -6}), T(-1)), {0, 0, 0});
  expect_vec(div(s, vec({mn, 5, -6}), -1), {mn, -5, 6});  // int scalar, weak
  // Wrapping add/sub/mul.
  expect_vec(add(s, vec({mx, mn, mx}), vec({1, -1, mx})), {mn, mx, T(-2)});
  expect_vec(add(s, vec({mx}), 1), {mn});
  expect_vec(sub(s, vec({mn, mx, 0}), vec({1, -1, mn})), {mx, mn, mn});
  expect_vec(mul(s, vec({mx, mn, mn, mx}), vec({2, -1, 2, mx})), {T(-2), mn, 0, 1});
  // pow: wrapping.
  constexpr T bits = static_cast<T>(sizeof(T) * 8);
  expect_vec(pow(s, vec({2, 2, -1, -1, 0, 5, -2, 3}), vec({static_cast<T>(bits - 1), bits, mx, static_cast<T>(mx - 1), 0, 0, 3, 4})),
             {mn, 0, -1, 1, 1, 1, -8, 81});
  std::uint64_t r = 1;
  for (int e = 0; e < 41; ++e) r *= 3;  // 3^41 mod 2^64
  expect_vec(pow(s, vec({3}), vec({41})), {wrap<T>(static_cast<i128>(r))});
}

TEST(ElementwiseInteger, TruncationWrappingAndPow) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  check_integer_semantics<std::int32_t>(s);
  check_integer_semantics<std::int64_t>(s);
  // INT32_MAX + 1 == INT32_MIN, spelled out.
  const Tensor m = Tensor::from_data<std::int32_t>({1}, {std::numeric_limits<std::int32_t>::max()});
  EXPECT_EQ(add(s, m, 1).item<std::int32_t>({0}), std::numeric_limits<std::int32_t>::min());
}

TEST(ElementwiseInteger, DivisionByZeroIsNumericalErrorAndWritesNothing) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(3);
  for (DType d : {DType::i32, DType::i64}) {
    for (Layout l : kAllLayouts) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " divisor " + layout_name(l));
      const Tensor a = random_layout(rng, {3, 4}, d, Layout::contiguous, -9, 9);
      // A divisor with a single zero at logical index [2, 1] of the view.
      Tensor bv;
      switch (l) {
        case Layout::contiguous:
          bv = random_tensor(rng, {3, 4}, d, 1, 9);
          set_elem(bv, {2, 1}, 0);
          break;
        case Layout::transposed: {
          const Tensor base = random_tensor(rng, {4, 3}, d, 1, 9);
          set_elem(base, {1, 2}, 0);
          bv = base.transpose_view();
          break;
        }
        case Layout::negative_stride: {
          const Tensor base = random_tensor(rng, {3, 4}, d, 1, 9);
          set_elem(base, {0, 2}, 0);
          bv = base.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1).slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
          break;
        }
        case Layout::broadcast: {
          const Tensor base = random_tensor(rng, {3, 1}, d, 1, 9);
          set_elem(base, {2, 0}, 0);
          bv = base.broadcast_view({3, 4});
          break;
        }
      }
      ASSERT_EQ(testing::value_at(bv, {2, 1}), cd(0));
      const Tensor out = random_tensor(rng, {3, 4}, d);
      const auto before = testing::snapshot(out);
      expect_error<NumericalError>([&] { div_into(s, a, bv, out); }, "div");
      expect_error<NumericalError>([&] { rem_into(s, a, bv, out); }, "rem");
      expect_error<NumericalError>([&] { div(s, a, bv); }, "div");
      expect_error<NumericalError>([&] { rem(s, a, bv); }, "rem");
      // Scalar zero divisor, integer and bool.
      expect_error<NumericalError>([&] { div_into(s, a, 0, out); }, "div");
      expect_error<NumericalError>([&] { rem_into(s, a, 0, out); }, "rem");
      expect_error<NumericalError>([&] { div_into(s, a, false, out); }, "div");
      // A bool tensor divisor promotes to the integer dtype; false is a zero.
      const Tensor bb = Tensor::from_data<bool>({3}, {true, false, true});
      expect_error<NumericalError>([&] { div_into(s, a, bb, out); }, "div");
      // Scalar dividend, tensor divisor with a zero.
      expect_error<NumericalError>([&] { div_into(s, 5, bv, out); }, "div");
      testing::expect_untouched(out, before);
    }
  }
  // Float division by zero is IEEE (no error); an integer tensor over 0.0 computes in f64.
  const Tensor i = Tensor::from_data<std::int32_t>({3}, {1, -1, 0});
  const Tensor q = div(s, i, 0.0);
  EXPECT_EQ(q.dtype(), DType::f64);
  EXPECT_EQ(q.item<double>({0}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(q.item<double>({1}), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(q.item<double>({2})));
  const Tensor f = Tensor::from_data<float>({2}, {1.0f, 0.0f});
  const Tensor qf = div(s, f, Tensor::zeros({2}, DType::f32));
  EXPECT_EQ(qf.item<float>({0}), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(qf.item<float>({1})));
}

// ops.hpp: "pow on integers needs exponents >= 0 (ArgumentError otherwise)".
TEST(ElementwiseInteger, NegativeIntegerExponentIsArgumentErrorAndWritesNothing) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : {DType::i32, DType::i64}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor a = Tensor::ones({2, 3}, d);
    const Tensor e = Tensor::full({2, 3}, 2, d);
    set_elem(e, {1, 2}, -1);
    const Tensor out = Tensor::zeros({2, 3}, d);
    const auto before = testing::snapshot(out);
    expect_error<ArgumentError>([&] { pow_into(s, a, e, out); }, "pow");
    expect_error<ArgumentError>([&] { pow(s, a, e); }, "pow");
    expect_error<ArgumentError>([&] { pow_into(s, a, -2, out); }, "pow");
    expect_error<ArgumentError>([&] { pow_into(s, 3, e, out); }, "pow");
    testing::expect_untouched(out, before);
    // A float exponent makes the computation f64: fine.
    EXPECT_DOUBLE_EQ(pow(s, Tensor::full({1}, 2, d), -1.0).item<double>({0}), 0.5);
  }
}

// ---------------------------------------------------------------- float special values

template <class T> void check_float_specials(Session& s) {
  SCOPED_TRACE(std::string(dtype_name(dtype_of<T>)));
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const Tensor a = Tensor::from_data<T>({6}, {nan, 1, nan, -inf, inf, T(-0.5)});
  const Tensor b = Tensor::from_data<T>({6}, {1, nan, nan, 2, nan, T(0.5)});
  const Tensor mx = maximum(s, a, b), mn = minimum(s, a, b);
  for (std::int64_t i : {0, 1, 2, 4}) {
    EXPECT_TRUE(std::isnan(mx.item<T>({i}))) << "maximum propagates NaN, element " << i;
    EXPECT_TRUE(std::isnan(mn.item<T>({i}))) << "minimum propagates NaN, element " << i;
  }
  EXPECT_EQ(mx.item<T>({3}), T(2));
  EXPECT_EQ(mn.item<T>({3}), -inf);
  EXPECT_EQ(mx.item<T>({5}), T(0.5));
  EXPECT_EQ(mn.item<T>({5}), T(-0.5));
  // NaN against scalars on either side.
  EXPECT_TRUE(std::isnan(maximum(s, a, 0.0).item<T>({0})));
  EXPECT_TRUE(std::isnan(minimum(s, 0.0, a).item<T>({0})));
  const Tensor one = Tensor::from_data<T>({1}, {1});
  const Tensor mx1 = maximum(s, one, nan), mn1 = minimum(s, nan, one);
  EXPECT_TRUE(std::isnan(mx1.item<T>({0})));
  EXPECT_TRUE(std::isnan(mn1.item<T>({0})));
  // fmod: the sign of the dividend.
  const Tensor r = rem(s, Tensor::from_data<T>({4}, {T(7.5), T(-7.5), T(7.5), T(-7.5)}), Tensor::from_data<T>({4}, {2, 2, -2, -2}));
  EXPECT_EQ(r.item<T>({0}), T(1.5));
  EXPECT_EQ(r.item<T>({1}), T(-1.5));
  EXPECT_EQ(r.item<T>({2}), T(1.5));
  EXPECT_EQ(r.item<T>({3}), T(-1.5));
  EXPECT_TRUE(std::isnan(rem(s, one, 0.0).item<T>({0})));
  // pow corner cases.
  const Tensor p = pow(s, Tensor::from_data<T>({3}, {0, -8, 2}), Tensor::from_data<T>({3}, {0, T(1) / 3, -1}));
  EXPECT_EQ(p.item<T>({0}), T(1));
  EXPECT_TRUE(std::isnan(p.item<T>({1})));
  EXPECT_EQ(p.item<T>({2}), T(0.5));
  // NaN propagates through arithmetic.
  EXPECT_TRUE(std::isnan(add(s, a, 1.0).item<T>({0})));
  EXPECT_TRUE(std::isnan(mul(s, a, 0.0).item<T>({0})));
  const Tensor pinf = Tensor::from_data<T>({1}, {inf});
  const Tensor inf_minus_inf = add(s, pinf, -inf);
  EXPECT_TRUE(std::isnan(inf_minus_inf.item<T>({0})));
}

TEST(ElementwiseFloat, SpecialValues) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  check_float_specials<float>(s);
  check_float_specials<double>(s);
  // bool maximum/minimum are or/and.
  const Tensor t = Tensor::from_data<bool>({4}, {false, false, true, true});
  const Tensor u = Tensor::from_data<bool>({4}, {false, true, false, true});
  const Tensor mx = maximum(s, t, u), mn = minimum(s, t, u);
  ASSERT_EQ(mx.dtype(), DType::b8);
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(mx.item<bool>({i}), t.item<bool>({i}) || u.item<bool>({i}));
    EXPECT_EQ(mn.item<bool>({i}), t.item<bool>({i}) && u.item<bool>({i}));
  }
}

// ---------------------------------------------------------------- operator sugar

TEST(ElementwiseSugar, OperatorsUseTheCurrentSessionAndNeedOne) {
  CpuBackend backend;
  const Tensor a = Tensor::from_data<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_data<float>({2, 2}, {10, 20, 30, 40});
  // Before any session.
  expect_session_error([&] { (void)(a + b); }, SessionEntryKind::Poisoned);
  expect_session_error([&] { (void)(-a); }, SessionEntryKind::Poisoned);
  expect_session_error([&] { (void)(2.0 * a); }, SessionEntryKind::Poisoned);
  {
    HeldSession s = backend.open_session();
    const Tensor c = a + b;
    ASSERT_EQ(c.dtype(), DType::f32);
    EXPECT_EQ(c.item<float>({1, 1}), 44.0f);
    const Tensor d = a * 2.0;
    EXPECT_EQ(d.dtype(), DType::f32);
    EXPECT_EQ(d.item<float>({0, 1}), 6.0f);
    const Tensor e = -a;
    EXPECT_EQ(e.item<float>({1, 0}), -2.0f);
    EXPECT_EQ((b - a).item<float>({0, 0}), 9.0f);
    EXPECT_EQ((b / a).item<float>({1, 1}), 10.0f);
    EXPECT_EQ((1.0 - a).item<float>({1, 1}), -3.0f);
    EXPECT_EQ((2 * a).item<float>({1, 1}), 8.0f);
    EXPECT_EQ((12.0 / a).item<float>({1, 1}), 3.0f);
    EXPECT_EQ((0.5 + a).item<float>({0, 0}), 1.5f);
    // Moving the held session keeps the sugar working (the current session follows it).
    HeldSession moved = std::move(s);
    EXPECT_EQ((a + 1).item<float>({0, 0}), 2.0f);
    expect_session_error([&] { add(s, a, b); }, SessionEntryKind::Poisoned);  // moved-from
    moved.close();
    expect_session_error([&] { (void)(a + b); }, SessionEntryKind::Poisoned);
    expect_session_error([&] { (void)(a * 2.0); }, SessionEntryKind::Poisoned);
    expect_session_error([&] { (void)(-a); }, SessionEntryKind::Poisoned);
  }
  // A scoped session is a current session too.
  backend.with_session([&](Session&) { EXPECT_EQ((a + b).item<float>({0, 0}), 11.0f); });
  expect_session_error([&] { (void)(a - b); }, SessionEntryKind::Poisoned);
}

// ---------------------------------------------------------------- parallel path

Tensor run_on(int threads, const std::function<Tensor(Session&)>& f) {
  CpuBackendOptions options;
  options.num_threads = threads;
  CpuBackend b(options);
  EXPECT_EQ(b.num_threads(), threads);
  return b.with_session([&](Session& s) { return f(s); });
}

void expect_same_bytes(const Tensor& x, const Tensor& y) {
  ASSERT_EQ(x.dtype(), y.dtype());
  ASSERT_EQ(x.shape(), y.shape());
  ASSERT_TRUE(x.is_contiguous() && y.is_contiguous());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype())), 0);
}

TEST(ElementwiseParallel, LargeAddIsIdenticalToSingleThread) {
  std::mt19937_64 rng(11);
  const std::int64_t n = std::int64_t{4} << 20;
  const Tensor a = random_tensor(rng, {n}, DType::f64), b = random_tensor(rng, {n}, DType::f64);
  const Tensor one = run_on(1, [&](Session& s) { return add(s, a, b); });
  const Tensor two = run_on(2, [&](Session& s) {
    EXPECT_EQ(s.num_threads(), 2);
    return add(s, a, b);
  });
  expect_same_bytes(one, two);
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  const double* pr = two.data_ptr<double>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) bad += pr[i] != pa[i] + pb[i];
  EXPECT_EQ(bad, 0);

  // Strided operands and a strided output: chunks start in the middle of lines.
  const Tensor m = random_tensor(rng, {1001, 1500}, DType::f64).transpose_view();  // [1500, 1001]
  const Tensor col = random_tensor(rng, {1500}, DType::f64).slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  const Tensor r1 = run_on(1, [&](Session& s) { return mul(s, m, col); });
  const Tensor r2 = run_on(2, [&](Session& s) {
    const Tensor big = Tensor::zeros({1001, 1502}, DType::f64);
    const Tensor out = big.slice_view(1, 1, 1501).transpose_view();  // [1500, 1001] strided
    mul_into(s, m, col, out);
    return to_contiguous(s, out);
  });
  expect_same_bytes(r1, r2);
  EXPECT_EQ(r2.item<double>({1499, 1000}), m.item<double>({1499, 1000}) * col.item<double>({1499}));
}

}  // namespace
}  // namespace tenferro::ew_test
