#pragma once
// One row per analytic primitive (catalogue family `analytic`): what the forward
// reference test (ops/analytic/analytic_test.cpp) and the derivative check
// (ad/ad_rules_test.cpp) need, so a new analytic op's tests are one row here. Both
// suites check that every analytic catalogue row has a row in this table, and that
// the row has a complex reference exactly when the catalogue's dtype set takes complex.
#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// An interval the test draws values from (complex: both parts drawn from it).
struct Domain {
  double lo, hi;
};

/// The tests' view of one analytic op.
struct AnalyticCase {
  std::string name;  ///< the catalogue name
  Tensor (*fn)(Session&, const Tensor&);
  void (*fn_into)(Session&, const Tensor&, const Tensor&);
  std::function<ad::EagerTensor(ad::Context&, const ad::EagerTensor&)> ad_fn;
  std::function<double(double)> real_ref;                                          ///< double-precision reference
  std::function<std::complex<double>(std::complex<double>)> complex_ref;           ///< null: real dtypes only
  Domain real_dom, complex_dom;  ///< forward test domains
  Domain ad_dom;                 ///< derivative check domain (f64, and c128 when complex_ref is set)
};

// name, real reference, complex reference (or nullptr), real domain, complex domain, AD domain.
#define TF_ANALYTIC_CASE(name, ...)                                                                                        \
  AnalyticCase {                                                                                                           \
    #name, &name, &name##_into, [](ad::Context& c, const ad::EagerTensor& x) { return ad::name(c, x); }, __VA_ARGS__ \
  }

/// Every analytic op's row.
inline const std::vector<AnalyticCase>& analytic_cases() {
  using cd = std::complex<double>;
  static const std::vector<AnalyticCase> c = {
      TF_ANALYTIC_CASE(exp, [](double x) { return std::exp(x); }, [](cd z) { return std::exp(z); }, {-5, 5}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(log, [](double x) { return std::log(x); }, [](cd z) { return std::log(z); }, {0.01, 10}, {-3, 3}, {0.5, 2}),
      TF_ANALYTIC_CASE(sin, [](double x) { return std::sin(x); }, [](cd z) { return std::sin(z); }, {-6, 6}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(cos, [](double x) { return std::cos(x); }, [](cd z) { return std::cos(z); }, {-6, 6}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(tan, [](double x) { return std::tan(x); }, [](cd z) { return std::tan(z); }, {-1.4, 1.4}, {-1.4, 1.4}, {-0.7, 0.7}),
      TF_ANALYTIC_CASE(tanh, [](double x) { return std::tanh(x); }, [](cd z) { return std::tanh(z); }, {-5, 5}, {-1.4, 1.4}, {-1, 1}),
      TF_ANALYTIC_CASE(sqrt, [](double x) { return std::sqrt(x); }, [](cd z) { return std::sqrt(z); }, {0, 10}, {-3, 3}, {0.5, 2}),
      TF_ANALYTIC_CASE(rsqrt, [](double x) { return 1 / std::sqrt(x); }, [](cd z) { return 1.0 / std::sqrt(z); }, {0.01, 10}, {-3, 3}, {0.5, 2}),
      TF_ANALYTIC_CASE(expm1, [](double x) { return std::expm1(x); },
       [](cd z) {
         // exp(z) - 1 without cancellation: Re = expm1(x) cos(y) - 2 sin^2(y/2).
         const long double x = z.real(), y = z.imag(), s = std::sin(y / 2);
         return cd(static_cast<double>(std::expm1(x) * std::cos(y) - 2 * s * s), static_cast<double>(std::exp(x) * std::sin(y)));
       },
       {-3, 3}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(log1p, [](double x) { return std::log1p(x); }, [](cd z) { return std::log(1.0 + z); }, {-0.9, 5}, {-0.9, 2}, {0.1, 1}),
      TF_ANALYTIC_CASE(erf, [](double x) { return std::erf(x); }, nullptr, {-3, 3}, {0, 0}, {-1, 1}),
      TF_ANALYTIC_CASE(sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, [](cd z) { return 1.0 / (1.0 + std::exp(-z)); },
       {-10, 10}, {-2, 2}, {-1, 1}),
      TF_ANALYTIC_CASE(asin, [](double x) { return std::asin(x); }, [](cd z) { return std::asin(z); }, {-0.95, 0.95}, {-2, 2}, {-0.6, 0.6}),
      TF_ANALYTIC_CASE(acos, [](double x) { return std::acos(x); }, [](cd z) { return std::acos(z); }, {-0.95, 0.95}, {-2, 2}, {-0.6, 0.6}),
      TF_ANALYTIC_CASE(atan, [](double x) { return std::atan(x); }, [](cd z) { return std::atan(z); }, {-5, 5}, {-0.8, 0.8}, {-0.6, 0.6}),
      TF_ANALYTIC_CASE(sinh, [](double x) { return std::sinh(x); }, [](cd z) { return std::sinh(z); }, {-5, 5}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(cosh, [](double x) { return std::cosh(x); }, [](cd z) { return std::cosh(z); }, {-5, 5}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(log2, [](double x) { return std::log2(x); }, [](cd z) { return std::log(z) / std::log(2.0); }, {0.01, 10}, {-3, 3}, {0.5, 2}),
      TF_ANALYTIC_CASE(exp2, [](double x) { return std::exp2(x); }, [](cd z) { return std::pow(2.0, z); }, {-5, 5}, {-3, 3}, {-1, 1}),
      TF_ANALYTIC_CASE(log10, [](double x) { return std::log10(x); }, [](cd z) { return std::log10(z); }, {0.01, 10}, {-3, 3}, {0.5, 2}),
      TF_ANALYTIC_CASE(cbrt, [](double x) { return std::cbrt(x); }, nullptr, {-8, 8}, {0, 0}, {0.5, 2}),
      // Naive formulas in long double: fine on these domains (the tails have their own test).
      TF_ANALYTIC_CASE(softplus, [](double x) { return static_cast<double>(std::log1p(std::exp(static_cast<long double>(x)))); },
       nullptr, {-20, 20}, {0, 0}, {-2, 2}),
      TF_ANALYTIC_CASE(silu, [](double x) { return static_cast<double>(x / (1 + std::exp(-static_cast<long double>(x)))); },
       nullptr, {-20, 20}, {0, 0}, {-2, 2}),
      TF_ANALYTIC_CASE(gelu, [](double x) { return static_cast<double>(0.5L * x * (1 + std::erf(static_cast<long double>(x) / std::sqrt(2.0L)))); }, nullptr,
       {-6, 6}, {0, 0}, {-2, 2}),
  };
  return c;
}

#undef TF_ANALYTIC_CASE

}  // namespace tenferro::testing
