// Analytic elementwise ops (every row of analytic_cases.hpp: one per `analytic` catalogue
// row) against double-precision references: every op x every dtype
// of its set x every layout x shapes of rank 0..3 and zero extents, on domains where
// each function is well defined; special values; accuracy of expm1/log1p near zero and
// of sigmoid for large |x|; integer/bool/complex-erf inputs are DTypeErrors; the
// parallel path gives the single-thread result bit for bit.
#include <algorithm>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>

#include "cpu/vecmath.hpp"
#include "ops/analytic/analytic_cases.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::analytic_test {
namespace {

using testing::expect_error;
using testing::for_each_index;
using testing::kAllLayouts;
using testing::kInexactDTypes;
using testing::Layout;
using testing::layout_name;
using testing::near;
using testing::random_layout;
using testing::random_tensor;

using cd = std::complex<double>;
const double kPi = std::numbers::pi;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// Relative closeness (for values near zero, where tol (1 + |b|) would say nothing).
bool rel_close(double a, double b, double tol) { return std::abs(a - b) <= tol * std::abs(b); }

/// f32/c64 against the double reference ~1e-5, f64/c128 ~1e-13.
double tolerance(DType d) { return real_dtype(d) == DType::f32 ? 1e-5 : 1e-13; }

using AnCase = testing::AnalyticCase;
using testing::Domain;

const std::vector<AnCase>& cases() { return testing::analytic_cases(); }

bool in_op_set(const AnCase& c, DType d) { return is_floating(d) || (c.complex_ref && is_complex(d)); }

/// Checks y = op(x) element by element against the double-precision reference.
void check_result(const AnCase& c, const Tensor& x, const Tensor& y, double tol) {
  int bad = 0;
  std::string first;
  for_each_index(x.shape(), [&](const Dims& idx) {
    const cd xv = testing::value_at(x, idx);
    const cd want = is_complex(x.dtype()) ? c.complex_ref(xv) : cd(c.real_ref(xv.real()), 0);
    const cd got = testing::value_at(y, idx);
    if (!near(got, want, tol) && bad++ == 0) {
      std::ostringstream os;
      os.precision(17);
      os << idx.to_string() << " (x = " << xv << "): got " << got << ", want " << want;
      first = os.str();
    }
  });
  if (bad) ADD_FAILURE() << bad << " of " << x.numel() << " elements differ; first at " << first;
}

const Shape kShapes[] = {{}, {7}, {3, 4}, {2, 3, 4}, {0, 3}, {4, 0}};

TEST(Analytic, EveryOpDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(1234);
  int n = 0;
  for (const AnCase& c : cases()) {
    for (DType d : kInexactDTypes) {
      if (!in_op_set(c, d)) continue;
      const Domain dom = is_complex(d) ? c.complex_dom : c.real_dom;
      for (const Shape& shape : kShapes) {
        for (Layout l : kAllLayouts) {
          SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)) + " " + shape.to_string() + " " + layout_name(l));
          const Tensor x = random_layout(rng, shape, d, l, dom.lo, dom.hi);
          const Tensor y = c.fn(s, x);
          ASSERT_EQ(y.dtype(), d);
          ASSERT_EQ(y.shape(), shape);
          EXPECT_TRUE(y.is_contiguous());
          check_result(c, x, y, tolerance(d));
          // _into a strided view (compact, transposed, negative strides, every other
          // element): the allocating result, bit for bit.
          const Tensor out = testing::out_view(rng, shape, d, n);
          c.fn_into(s, x, out);
          bool same = true;
          for_each_index(shape, [&](const Dims& idx) { same = same && testing::close(testing::value_at(out, idx), testing::value_at(y, idx), 0); });
          EXPECT_TRUE(same) << c.name << "_into differs";
          ++n;
        }
      }
    }
  }
  int want = 0;  // every analytic row x its dtypes x shapes x layouts
  for (const AnCase& c : cases()) want += c.complex_ref ? 4 : 2;
  EXPECT_EQ(n, want * 6 * 4);
}

TEST(Analytic, EveryCatalogueRowHasACaseWithItsDTypeSet) {
  std::vector<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = kOps[i];
    if (info.family != OpFamily::analytic) continue;
    names.emplace_back(info.name);
    const auto it = std::find_if(cases().begin(), cases().end(), [&](const AnCase& c) { return c.name == info.name; });
    ASSERT_NE(it, cases().end()) << "analytic op " << info.name << " has no row in tests/ops/analytic/analytic_cases.hpp";
    EXPECT_EQ(it->complex_ref != nullptr, in_set(DType::c128, info.dtypes)) << info.name << ": complex reference vs catalogue dtype set";
  }
  EXPECT_EQ(names.size(), cases().size()) << "a row names no analytic catalogue op";
}

TEST(Analytic, LargerRandomSamplesMatchReference) {
  // One bigger compact sample per op and dtype: more of each domain is covered.
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(99);
  for (const AnCase& c : cases()) {
    for (DType d : kInexactDTypes) {
      if (!in_op_set(c, d)) continue;
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)));
      const Domain dom = is_complex(d) ? c.complex_dom : c.real_dom;
      const Tensor x = random_layout(rng, {40, 50}, d, Layout::negative_stride, dom.lo, dom.hi);
      check_result(c, x, c.fn(s, x), tolerance(d));
    }
  }
}

TEST(Analytic, IntegerBoolAndComplexErfAreDTypeErrors) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(5);
  for (const AnCase& c : cases()) {
    for (DType d : testing::kAllDTypes) {
      if (in_op_set(c, d)) continue;
      SCOPED_TRACE(c.name + " of " + std::string(dtype_name(d)));
      const Tensor x = random_tensor(rng, {2, 3}, d);
      expect_error<DTypeError>([&] { c.fn(s, x); }, c.name);
      for (DType od : {d, DType::f64}) {
        const Tensor out = random_tensor(rng, {2, 3}, od);
        const auto before = testing::snapshot(out);
        expect_error<DTypeError>([&] { c.fn_into(s, x, out); }, c.name);
        testing::expect_untouched(out, before);
      }
    }
  }
}

/// op(x) for one value in dtype d, as complex<double>.
cd apply(Session& s, const AnCase& c, DType d, cd v) {
  if (real_dtype(d) == DType::f32) v = cd(static_cast<float>(v.real()), static_cast<float>(v.imag()));  // exact in the dtype
  const Tensor x = Tensor::full({1}, is_complex(d) ? Scalar(v) : Scalar(v.real()), d);
  return testing::value_at(c.fn(s, x), {0});
}

const AnCase& op(const std::string& name) {
  for (const AnCase& c : cases())
    if (c.name == name) return c;
  throw std::logic_error("no op " + name);
}

TEST(Analytic, NaNPropagatesThroughEveryRealOp) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (const AnCase& c : cases()) {
    for (DType d : {DType::f32, DType::f64}) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(d)));
      EXPECT_TRUE(std::isnan(apply(s, c, d, kNaN).real()));
    }
  }
}

TEST(Analytic, SpecialValues) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  struct Special {
    std::string op;
    double x;
    double want;  ///< NaN means "NaN"
  };
  const Special specials[] = {
      {"exp", -kInf, 0},         {"exp", kInf, kInf},       {"exp", 0, 1},           {"exp", 1000, kInf},
      {"log", 0, -kInf},         {"log", -0.0, -kInf},      {"log", -1, kNaN},       {"log", kInf, kInf},
      {"log", 1, 0},             {"sqrt", -1, kNaN},        {"sqrt", kInf, kInf},    {"sqrt", 0, 0},
      {"rsqrt", 0, kInf},        {"rsqrt", 4, 0.5},         {"rsqrt", -1, kNaN},     {"rsqrt", kInf, 0},
      {"tanh", kInf, 1},         {"tanh", -kInf, -1},       {"tanh", 30, 1},         {"tanh", -30, -1},
      {"sinh", kInf, kInf},      {"cosh", -kInf, kInf},     {"erf", kInf, 1},        {"erf", -kInf, -1},
      {"erf", 0, 0},             {"atan", kInf, kPi / 2},   {"atan", -kInf, -kPi / 2}, {"asin", 2, kNaN},
      {"asin", 1, kPi / 2},      {"acos", 1, 0},            {"acos", -1, kPi},       {"acos", -2, kNaN},
      {"expm1", -kInf, -1},      {"expm1", 0, 0},           {"log1p", -1, -kInf},    {"log1p", -2, kNaN},
      {"sigmoid", 0, 0.5},       {"sigmoid", kInf, 1},      {"sigmoid", -kInf, 0},   {"sigmoid", 1000, 1},
      {"sigmoid", -1000, 0},     {"sin", kInf, kNaN},       {"cos", -kInf, kNaN},    {"tan", 0, 0},
      {"log10", 1000, 3},        {"log10", 0, -kInf},       {"log10", -1, kNaN},
      {"log2", 0, -kInf},        {"log2", 8, 3},            {"log2", -1, kNaN},      {"log2", kInf, kInf},
      {"exp2", -kInf, 0},        {"exp2", 10, 1024},        {"exp2", kInf, kInf},    {"exp2", -3, 0.125},
      {"cbrt", -8, -2},          {"cbrt", 27, 3},           {"cbrt", -kInf, -kInf},  {"cbrt", 0, 0},
      {"softplus", 1000, 1000},  {"softplus", -1000, 0},    {"softplus", kInf, kInf}, {"softplus", -kInf, 0},
      {"softplus", 0, std::numbers::ln2},                   {"silu", -kInf, 0},      {"silu", kInf, kInf},
      {"silu", 0, 0},            {"silu", -1000, 0},        {"silu", 1000, 1000},    {"gelu", -kInf, 0},
      {"gelu", kInf, kInf},      {"gelu", 0, 0},            {"gelu", -1000, 0},      {"gelu", 1000, 1000},
  };
  for (const Special& sp : specials) {
    for (DType d : {DType::f32, DType::f64}) {
      SCOPED_TRACE(sp.op + "(" + std::to_string(sp.x) + ") " + std::string(dtype_name(d)));
      const cd got = apply(s, op(sp.op), d, sp.x);
      if (std::isnan(sp.want)) EXPECT_TRUE(std::isnan(got.real())) << got;
      else if (std::isinf(sp.want)) EXPECT_EQ(got.real(), sp.want);
      else EXPECT_NEAR(got.real(), sp.want, 4 * testing::epsilon_of(d) * (1 + std::abs(sp.want)));
    }
  }
  // Complex branch cuts: log(-1 ± 0i) = ±i pi, sqrt(-4 + 0i) = 2i.
  for (DType d : {DType::c64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const double tol = 4 * testing::epsilon_of(d);
    EXPECT_TRUE(near(apply(s, op("log"), d, cd(-1, 0)), cd(0, kPi), tol));
    EXPECT_TRUE(near(apply(s, op("log"), d, cd(-1, -0.0)), cd(0, -kPi), tol));
    EXPECT_TRUE(near(apply(s, op("sqrt"), d, cd(-4, 0)), cd(0, 2), tol));
    EXPECT_TRUE(near(apply(s, op("sqrt"), d, cd(-4, -0.0)), cd(0, -2), tol));
    EXPECT_TRUE(near(apply(s, op("exp"), d, cd(0, kPi)), cd(-1, 0), tol));
    EXPECT_TRUE(near(apply(s, op("rsqrt"), d, cd(-4, 0)), cd(0, -0.5), tol));
  }
}

// expm1/log1p keep full relative accuracy near zero, where exp(x) - 1 and log(1 + x)
// would cancel.
TEST(Analytic, Expm1AndLog1pAreAccurateForTinyArguments) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  // Taylor series to x^4 (exact to double precision for |x| < 1e-4).
  auto expm1_series = [](double x) { return x + x * x / 2 + x * x * x / 6 + x * x * x * x / 24; };
  auto log1p_series = [](double x) { return x - x * x / 2 + x * x * x / 3 - x * x * x * x / 4; };
  for (double x : {1e-10, -3e-12, 1e-300, 2.5e-7, -4e-5}) {
    std::ostringstream os;
    os << "f64 x = " << x;
    SCOPED_TRACE(os.str());
    const double em = apply(s, op("expm1"), DType::f64, x).real(), lp = apply(s, op("log1p"), DType::f64, x).real();
    EXPECT_TRUE(rel_close(em, expm1_series(x), 1e-15)) << em;
    EXPECT_TRUE(rel_close(lp, log1p_series(x), 1e-15)) << lp;
  }
  for (float xf : {1e-7f, -3e-6f, 1e-30f}) {
    const double x = xf;
    std::ostringstream os;
    os << "f32 x = " << x;
    SCOPED_TRACE(os.str());
    const double em = apply(s, op("expm1"), DType::f32, x).real(), lp = apply(s, op("log1p"), DType::f32, x).real();
    EXPECT_TRUE(rel_close(em, expm1_series(x), 1e-6)) << em;
    EXPECT_TRUE(rel_close(lp, log1p_series(x), 1e-6)) << lp;
  }
  // Complex: each part relatively accurate, including a real part that is much smaller
  // than |z| (naive exp(z) - 1 and log(1 + z) lose it entirely).
  struct C {
    DType d;
    cd z;
    double tol;
  };
  const C cs[] = {
      {DType::c128, cd(1e-10, 1e-10), 1e-13},   {DType::c128, cd(1e-12, 1e-6), 1e-10}, {DType::c128, cd(-4e-13, 1e-6), 1e-10},
      {DType::c64, cd(1e-7f, 1e-7f), 1e-5},     {DType::c64, cd(2e-7f, 1e-3f), 1e-3},
  };
  for (const C& c : cs) {
    std::ostringstream os;
    os << dtype_name(c.d) << " z = " << c.z;
    SCOPED_TRACE(os.str());
    // The value the op sees (rounded to the dtype), in long double.
    const cd zin = is_complex(c.d) && c.d == DType::c64 ? cd(static_cast<float>(c.z.real()), static_cast<float>(c.z.imag())) : c.z;
    const long double x = zin.real(), y = zin.imag();
    const long double h = std::sin(y / 2);
    const long double em_re = std::expm1(x) * std::cos(y) - 2 * h * h, em_im = std::exp(x) * std::sin(y);
    const long double lp_re = std::log1p(x * (2 + x) + y * y) / 2, lp_im = std::atan2(y, 1 + x);
    const cd em = apply(s, op("expm1"), c.d, zin), lp = apply(s, op("log1p"), c.d, zin);
    EXPECT_TRUE(rel_close(em.real(), static_cast<double>(em_re), c.tol)) << "expm1 re: got " << em.real() << ", want " << static_cast<double>(em_re);
    EXPECT_TRUE(rel_close(em.imag(), static_cast<double>(em_im), c.tol)) << "expm1 im: got " << em.imag() << ", want " << static_cast<double>(em_im);
    EXPECT_TRUE(rel_close(lp.real(), static_cast<double>(lp_re), c.tol)) << "log1p re: got " << lp.real() << ", want " << static_cast<double>(lp_re);
    EXPECT_TRUE(rel_close(lp.imag(), static_cast<double>(lp_im), c.tol)) << "log1p im: got " << lp.imag() << ", want " << static_cast<double>(lp_im);
  }
}

// The real sigmoid never overflows and keeps relative accuracy far into the tails.
TEST(Analytic, SigmoidOfLargeMagnitudeDoesNotOverflow) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::vector<double> xs;
  for (double x = -745; x <= 745; x += 7.25) xs.push_back(x);
  xs.push_back(-1e308);
  xs.push_back(1e308);
  for (DType d : {DType::f32, DType::f64}) {
    Tensor x = Tensor::empty({static_cast<std::int64_t>(xs.size())}, d);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (d == DType::f32) x.set<float>({static_cast<std::int64_t>(i)}, static_cast<float>(std::clamp(xs[i], -3e38, 3e38)));
      else x.set<double>({static_cast<std::int64_t>(i)}, xs[i]);
    }
    const Tensor y = sigmoid(s, x);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double xv = testing::value_at(x, {static_cast<std::int64_t>(i)}).real();
      const double got = testing::value_at(y, {static_cast<std::int64_t>(i)}).real();
      SCOPED_TRACE(std::string(dtype_name(d)) + " sigmoid(" + std::to_string(xv) + ")");
      ASSERT_FALSE(std::isnan(got));
      EXPECT_GE(got, 0.0);
      EXPECT_LE(got, 1.0);
      // Reference: exp(x) / (1 + exp(x)) for x < 0 in long double.
      const long double e = std::exp(-std::fabs(static_cast<long double>(xv)));
      const long double want = xv >= 0 ? 1 / (1 + e) : e / (1 + e);
      const double min_normal = d == DType::f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
      if (want > min_normal) EXPECT_TRUE(rel_close(got, static_cast<double>(want), d == DType::f32 ? 1e-5 : 1e-13)) << got << " vs " << static_cast<double>(want);
      else EXPECT_LE(got, 2 * min_normal);
    }
  }
  EXPECT_NEAR(apply(s, op("sigmoid"), DType::f64, -100).real(), 3.7200759760208356e-44, 1e-56);
}

// softplus, silu and gelu keep relative accuracy in their tails, where the naive
// formulas overflow (log(1 + e^x), x / (1 + e^-x)) or cancel (1 + erf(x/√2)).
TEST(Analytic, SoftplusSiluGeluTailsAreAccurate) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  auto softplus_ref = [](long double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); };
  auto silu_ref = [](long double x) { return x * (x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x))); };
  auto gelu_ref = [](long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); };
  struct Tail {
    std::string op;
    std::function<long double(long double)> ref;
    std::vector<double> xs;
  };
  const Tail tails[] = {
      {"softplus", softplus_ref, {-700, -100, -40, -15, 15, 40, 100, 700, 1e300}},
      {"silu", silu_ref, {-700, -100, -40, 40, 700, 1e300}},
      {"gelu", gelu_ref, {-35, -20, -10, -5, 5, 10, 1e300}},
  };
  for (const Tail& t : tails) {
    for (DType d : {DType::f32, DType::f64}) {
      for (double x : t.xs) {
        const double fmax = std::numeric_limits<float>::max(), fmin = std::numeric_limits<float>::min();
        if (d == DType::f32 && (std::abs(x) > 80 && std::abs(x) != 1e300)) continue;  // f32 underflows there
        const double xv = d == DType::f32 ? std::clamp(x, -fmax, fmax) : x;
        SCOPED_TRACE(t.op + "(" + std::to_string(xv) + ") " + std::string(dtype_name(d)));
        const double got = apply(s, op(t.op), d, xv).real();
        const double want = static_cast<double>(t.ref(static_cast<float>(xv) == xv || d == DType::f64 ? xv : static_cast<float>(xv)));
        ASSERT_FALSE(std::isnan(got));
        const double tiny = d == DType::f32 ? fmin : std::numeric_limits<double>::min();
        if (std::abs(want) > tiny * 1e3) EXPECT_TRUE(rel_close(got, want, d == DType::f32 ? 1e-5 : 1e-13)) << got << " vs " << want;
        else EXPECT_LE(std::abs(got), tiny * 1e3);
      }
    }
  }
}

// ---------------------------------------------------------------- parallel path

Tensor run_on(int threads, const std::function<Tensor(Session&)>& f) {
  CpuBackendOptions options;
  options.num_threads = threads;
  CpuBackend b(options);
  return b.with_session([&](Session& s) {
    EXPECT_EQ(s.num_threads(), threads);
    return f(s);
  });
}

void expect_same_bytes(const Tensor& x, const Tensor& y) {
  ASSERT_EQ(x.dtype(), y.dtype());
  ASSERT_EQ(x.shape(), y.shape());
  ASSERT_TRUE(x.is_contiguous() && y.is_contiguous());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype())), 0);
}

TEST(AnalyticParallel, LargeExpIsIdenticalToSingleThread) {
  std::mt19937_64 rng(8);
  const Tensor x = random_tensor(rng, {1 << 20}, DType::f64, -5, 5);
  const Tensor one = run_on(1, [&](Session& s) { return exp(s, x); });
  const Tensor two = run_on(2, [&](Session& s) { return exp(s, x); });
  expect_same_bytes(one, two);
  const double* px = static_cast<const double*>(x.data());
  const double* py = static_cast<const double*>(two.data());
  // The values of the one exp line function (Note [Vector exp and tanh]), bitwise.
  std::vector<double> want(static_cast<std::size_t>(x.numel()));
  tenferro::detail::vecmath::exp(px, want.data(), x.numel());
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) bad += py[i] != want[static_cast<std::size_t>(i)];
  EXPECT_EQ(bad, 0);
  // A strided complex input and a strided output.
  const Tensor z = random_tensor(rng, {300, 700}, DType::c128, -2, 2).transpose_view();
  const Tensor z1 = run_on(1, [&](Session& s) { return sigmoid(s, z); });
  const Tensor z2 = run_on(2, [&](Session& s) {
    const Tensor big = Tensor::zeros({301, 700}, DType::c128);
    const Tensor out = big.slice_view(0, Tensor::kSliceEnd, 0, -1).transpose_view();  // rows 300..1 reversed
    sigmoid_into(s, z, out);
    return to_contiguous(s, out);
  });
  expect_same_bytes(z1, z2);
}

}  // namespace
}  // namespace tenferro::analytic_test
