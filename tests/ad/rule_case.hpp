#pragma once
// Derivative-check cases for ad_rules_test: one RuleCase per op configuration. Each
// family adds its cases in its own header (cases_*.hpp) through a CaseList.
#include <functional>
#include <string>
#include <vector>

#include "ad/ad_check.hpp"

namespace tenferro::testing {

using Args = std::span<const ad::EagerTensor>;
using Out = std::vector<ad::EagerTensor>;

struct InputSpec {
  Shape shape;
  double lo = -1, hi = 1;
};

struct RuleCase {
  std::string op;    ///< catalogue name of the op whose rules this exercises
  std::string name;  ///< case name (unique; a GoogleTest parameter name)
  std::vector<InputSpec> inputs;
  std::function<Out(ad::Context&, Args)> f;
  bool complex = true;  ///< also run with c128 inputs
  bool real = true;     ///< run with f64 inputs
};

/// Collects cases; add(op, name, inputs, f, complex = true, real = true).
struct CaseList {
  std::vector<RuleCase> v;
  void operator()(std::string op, std::string name, std::vector<InputSpec> in, std::function<Out(ad::Context&, Args)> f,
                  bool cplx = true, bool real = true) {
    v.push_back({std::move(op), std::move(name), std::move(in), std::move(f), cplx, real});
  }
};

}  // namespace tenferro::testing
