#pragma once
// Derivative-check cases for logsumexp and the ops along one axis (cumsum, cumprod,
// softmax, log_softmax; src/ad/rules_reduce.cpp): several axes (negative too), keepdims,
// every slice length the parallel prefix scan treats differently (1, 2, 3, 5: one and
// several rounds, a last round that skips the a-update). Real-only ops run with f64
// inputs only; cumsum and cumprod also with c128. cumprod at inputs with zeros is a
// separate TEST in ad_rules_test.cpp (the harness draws inputs at random).
#include "ad/rule_case.hpp"

namespace tenferro::testing {

inline void add_axis_ops_cases(CaseList& add) {
  const bool real_only = false;
  add("logsumexp", "logsumexp_all", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::logsumexp(c, x[0])}; }, real_only);
  add("logsumexp", "logsumexp_axis1", {{{3, 4, 2}}}, [](auto& c, Args x) { return Out{ad::logsumexp(c, x[0], {1})}; }, real_only);
  add("logsumexp", "logsumexp_axes_keepdims", {{{3, 4, 2}}}, [](auto& c, Args x) {
    return Out{ad::logsumexp(c, x[0], {0, -1}, true)};
  }, real_only);
  add("cumsum", "cumsum_axis1", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::cumsum(c, x[0], 1)}; });
  add("cumsum", "cumsum_negative_axis", {{{2, 3, 4}}}, [](auto& c, Args x) { return Out{ad::cumsum(c, x[0], -2)}; });
  for (std::int64_t n : {1, 2, 3, 5, 8})
    add("cumprod", "cumprod_axis0_len" + std::to_string(n), {{{n, 3}, 0.5, 1.5}}, [](auto& c, Args x) {
      return Out{ad::cumprod(c, x[0], 0)};
    });
  add("cumprod", "cumprod_axis_last_signed", {{{3, 2, 4}, -1.5, 1.5}}, [](auto& c, Args x) { return Out{ad::cumprod(c, x[0], -1)}; });
  add("softmax", "softmax_axis0", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::softmax(c, x[0], 0)}; }, real_only);
  add("softmax", "softmax_axis_last", {{{2, 3, 4}, -3, 3}}, [](auto& c, Args x) { return Out{ad::softmax(c, x[0], -1)}; }, real_only);
  add("log_softmax", "log_softmax_axis1", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::log_softmax(c, x[0], 1)}; }, real_only);
  add("log_softmax", "log_softmax_composed", {{{4, 3}}}, [](auto& c, Args x) {
    return Out{ad::sum(c, ad::mul(c, ad::log_softmax(c, x[0], 0), ad::softmax(c, x[0], 0)), {0})};
  }, real_only);
}

}  // namespace tenferro::testing
