// Elementary functions against long-double references, in units in the last place
// (issue 14, item 5). Every analytic catalogue op has a row here (the test fails for
// one without); each row bounds the worst error over its domain in f32 and f64, and
// c64/c128 results are bounded norm-wise against std::complex<long double>. The worst
// errors found are printed ("[ ulp ]" lines) and recorded in docs/reliability.md.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ops/analytic/analytic_cases.hpp"
#include "support/test_util.hpp"
#include "tenferro/op_catalog.hpp"

namespace tenferro::ulp_test {
namespace {

using ld = long double;
using cld = std::complex<long double>;

/// A long-double reference and the bounds the op must meet (in ULPs of the result's
/// precision; complex: |got − ref| / (|ref|·eps)).
struct UlpRow {
  ld (*ref)(ld);
  cld (*cref)(cld);  // null: real dtypes only
  double f64_ulps, f32_ulps, complex_eps;
};

ld sigmoid_ref(ld x) { return 1 / (1 + std::exp(-x)); }

const std::map<std::string, UlpRow>& rows() {
  static const std::map<std::string, UlpRow> r = {
      {"exp", {[](ld x) { return std::exp(x); }, [](cld z) { return std::exp(z); }, 2, 2, 4}},
      {"log", {[](ld x) { return std::log(x); }, [](cld z) { return std::log(z); }, 2, 2, 4}},
      {"sin", {[](ld x) { return std::sin(x); }, [](cld z) { return std::sin(z); }, 2, 2, 4}},
      {"cos", {[](ld x) { return std::cos(x); }, [](cld z) { return std::cos(z); }, 2, 2, 4}},
      {"tan", {[](ld x) { return std::tan(x); }, [](cld z) { return std::tan(z); }, 2, 2, 8}},
      {"tanh", {[](ld x) { return std::tanh(x); }, [](cld z) { return std::tanh(z); }, 3, 3, 8}},
      {"sqrt", {[](ld x) { return std::sqrt(x); }, [](cld z) { return std::sqrt(z); }, 1, 1, 4}},
      {"rsqrt", {[](ld x) { return 1 / std::sqrt(x); }, [](cld z) { return cld(1) / std::sqrt(z); }, 2, 2, 4}},
      {"expm1", {[](ld x) { return std::expm1(x); }, [](cld z) { return std::exp(z) - cld(1); }, 2, 2, 8}},
      {"log1p", {[](ld x) { return std::log1p(x); }, [](cld z) { return std::log(cld(1) + z); }, 2, 2, 8}},
      {"erf", {[](ld x) { return std::erf(x); }, nullptr, 2, 2, 0}},
      {"sigmoid", {sigmoid_ref, [](cld z) { return cld(1) / (cld(1) + std::exp(-z)); }, 4, 4, 8}},
      {"asin", {[](ld x) { return std::asin(x); }, [](cld z) { return std::asin(z); }, 2, 2, 8}},
      {"acos", {[](ld x) { return std::acos(x); }, [](cld z) { return std::acos(z); }, 2, 2, 8}},
      {"atan", {[](ld x) { return std::atan(x); }, [](cld z) { return std::atan(z); }, 2, 2, 8}},
      {"sinh", {[](ld x) { return std::sinh(x); }, [](cld z) { return std::sinh(z); }, 2, 2, 8}},
      {"cosh", {[](ld x) { return std::cosh(x); }, [](cld z) { return std::cosh(z); }, 2, 2, 8}},
      {"log2", {[](ld x) { return std::log2(x); }, [](cld z) { return std::log(z) / std::log(ld(2)); }, 2, 2, 4}},
      {"exp2", {[](ld x) { return std::exp2(x); }, [](cld z) { return std::pow(ld(2), z); }, 2, 2, 8}},
      {"log10", {[](ld x) { return std::log10(x); }, [](cld z) { return std::log10(z); }, 2, 2, 4}},
      {"cbrt", {[](ld x) { return std::cbrt(x); }, nullptr, 4, 2, 0}},
      {"softplus", {[](ld x) { return x > 40 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }, nullptr, 4, 4, 0}},
      {"silu", {[](ld x) { return x * sigmoid_ref(x); }, nullptr, 4, 4, 0}},
      {"gelu", {[](ld x) { return ld(0.5) * x * std::erfc(-x / std::sqrt(ld(2))); }, nullptr, 4, 4, 0}},
  };
  return r;
}

/// |got − ref| in units of the spacing of R's numbers at ref (subnormal spacing at 0).
template <class R> double ulps(R got, ld ref) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) && std::isnan(ref) ? 0 : INFINITY;
  if (std::isinf(ref) || std::isinf(got)) return static_cast<ld>(got) == ref ? 0 : INFINITY;
  const R r = static_cast<R>(ref);
  const R a = std::fabs(r);
  const R next = std::nextafter(a, std::numeric_limits<R>::infinity());
  const ld spacing = std::isinf(next) ? static_cast<ld>(a - std::nextafter(a, R(0))) : static_cast<ld>(next - a);
  return static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / spacing);
}

/// Points of the domain: uniform draws plus a log-spaced sweep of magnitudes inside it.
std::vector<double> points(const testing::Domain& d, int n) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(d.lo, d.hi);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(u(rng));
  for (double m = 1e-12; m < 1e3; m *= 1.37)
    for (const double x : {m, -m})
      if (x >= d.lo && x <= d.hi) v.push_back(x);
  return v;
}

template <class R> double worst_real(Session& s, const testing::AnalyticCase& c, const UlpRow& row, double* at) {
  std::vector<R> xs;
  for (const double x : points(c.real_dom, 20000)) xs.push_back(static_cast<R>(x));
  const std::int64_t n[1] = {static_cast<std::int64_t>(xs.size())};
  const Tensor y = c.fn(s, Tensor::from_data<R>(n, std::span<const R>(xs)));
  const R* got = static_cast<const R*>(y.data());
  double worst = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double e = ulps<R>(got[i], row.ref(static_cast<ld>(xs[i])));
    if (e > worst) {
      worst = e;
      *at = static_cast<double>(xs[i]);
    }
  }
  return worst;
}

template <class R> double worst_complex(Session& s, const testing::AnalyticCase& c, const UlpRow& row, std::complex<double>* at) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(c.complex_dom.lo, c.complex_dom.hi);
  std::vector<std::complex<R>> zs;
  for (int i = 0; i < 20000; ++i) zs.emplace_back(static_cast<R>(u(rng)), static_cast<R>(u(rng)));
  const std::int64_t n[1] = {static_cast<std::int64_t>(zs.size())};
  const Tensor y = c.fn(s, Tensor::from_data<std::complex<R>>(n, std::span<const std::complex<R>>(zs)));
  const auto* got = static_cast<const std::complex<R>*>(y.data());
  const ld eps = std::numeric_limits<R>::epsilon();
  double worst = 0;
  for (std::size_t i = 0; i < zs.size(); ++i) {
    const cld ref = row.cref(cld(zs[i].real(), zs[i].imag()));
    const cld g(got[i].real(), got[i].imag());
    const double e = static_cast<double>(std::abs(g - ref) / (std::abs(ref) * eps));
    if (!(e <= worst)) {
      worst = e;
      *at = {static_cast<double>(zs[i].real()), static_cast<double>(zs[i].imag())};
    }
  }
  return worst;
}

TEST(Ulp, EveryAnalyticOpHasARow) {
  for (const OpInfo& op : kOps) {
    if (op.family != OpFamily::analytic) continue;
    EXPECT_TRUE(rows().count(std::string(op.name))) << op.name << " has no ULP row";
  }
}

TEST(Ulp, RealResultsAreWithinTheirBounds) {
  CpuBackend be({.num_threads = 1});
  HeldSession s = be.open_session();
  for (const testing::AnalyticCase& c : testing::analytic_cases()) {
    const auto it = rows().find(c.name);
    ASSERT_NE(it, rows().end()) << c.name;
    double at64 = 0, at32 = 0;
    const double w64 = worst_real<double>(s, c, it->second, &at64);
    const double w32 = worst_real<float>(s, c, it->second, &at32);
    std::printf("[ ulp ] %-8s f64 %6.2f ulp (x = %.17g)   f32 %6.2f ulp (x = %.9g)\n", c.name.c_str(), w64, at64, w32, at32);
    EXPECT_LE(w64, it->second.f64_ulps) << c.name << " f64 at x = " << at64;
    EXPECT_LE(w32, it->second.f32_ulps) << c.name << " f32 at x = " << at32;
  }
}

TEST(Ulp, ComplexResultsAreWithinTheirBounds) {
  CpuBackend be({.num_threads = 1});
  HeldSession s = be.open_session();
  for (const testing::AnalyticCase& c : testing::analytic_cases()) {
    const auto it = rows().find(c.name);
    ASSERT_NE(it, rows().end()) << c.name;
    ASSERT_EQ(it->second.cref == nullptr, c.complex_ref == nullptr) << c.name << ": complex row and catalogue disagree";
    if (!it->second.cref) continue;
    std::complex<double> at128, at64;
    const double w128 = worst_complex<double>(s, c, it->second, &at128);
    const double w64 = worst_complex<float>(s, c, it->second, &at64);
    std::printf("[ ulp ] %-8s c128 %6.2f eps (z = %.6g%+.6gi)   c64 %6.2f eps (z = %.6g%+.6gi)\n", c.name.c_str(), w128, at128.real(),
                at128.imag(), w64, at64.real(), at64.imag());
    EXPECT_LE(w128, it->second.complex_eps) << c.name << " c128 at " << at128;
    EXPECT_LE(w64, it->second.complex_eps) << c.name << " c64 at " << at64;
  }
}

}  // namespace
}  // namespace tenferro::ulp_test
