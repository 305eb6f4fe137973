#pragma once
// Derivative-check cases for the SVD rules (src/ad/rules_svd.cpp, Note [SVD rules]).
// Real inputs check U, S and Vh themselves (the sign gauge of LAPACK is continuous under
// the small perturbations of central differences, and the real rule has no gauge
// freedom); complex inputs check gauge-invariant outputs only: S, U·diag(1 + sin S)·Vh,
// |U|² and |Vh|² (Note [SVD rules]: phase-dependent losses have no derivative).
#include "ad/rule_case.hpp"

namespace tenferro::testing {

namespace svd_cases {

/// U·diag(d)·Vh for U [M, K, b...], d [K, b...], Vh [K, N, b...].
inline ad::EagerTensor reconstruct(ad::Context& c, const ad::EagerTensor& u, const ad::EagerTensor& d, const ad::EagerTensor& vh) {
  Dims row{1};
  for (int i = 0; i < d.rank(); ++i) row.push_back(d.value().extent(i));
  ad::EagerTensor us = ad::mul(c, u, ad::reshape(c, d, row.span()));
  DotDims dd;
  dd.lhs_contracting = {1};
  dd.rhs_contracting = {0};
  for (int k = 2; k < u.rank(); ++k) {
    dd.lhs_batch.push_back(k);
    dd.rhs_batch.push_back(k);
  }
  return ad::dot_general(c, us, vh, dd);
}
inline ad::EagerTensor abs2(ad::Context& c, const ad::EagerTensor& z) { return ad::real(c, ad::mul(c, z, ad::conj(c, z))); }

/// The outputs checked for svd(A, mode): see the header comment.
inline Out outputs(ad::Context& c, const ad::EagerTensor& a, SvdMode mode) {
  const ad::SvdTriple r = ad::svd(c, a, mode);
  if (!is_complex(a.value().dtype())) return Out{r.U, r.S, r.Vh};
  return Out{r.S, reconstruct(c, r.U, ad::add(c, ad::sin(c, r.S), 1.0), r.Vh), abs2(c, r.U), abs2(c, r.Vh)};
}

}  // namespace svd_cases

inline void add_svd_cases(CaseList& add) {
  struct Shp {
    const char* name;
    Shape shape;
  };
  const Shp shapes[] = {{"tall", {4, 3}}, {"wide", {3, 5}}, {"square", {3, 3}}, {"tall_batched", {4, 2, 3}}, {"wide_batched", {2, 4, 2}}};
  for (const Shp& sh : shapes) {
    add("svd", std::string("svdvals_") + sh.name, {{sh.shape}}, [](auto& c, Args x) { return Out{ad::svdvals(c, x[0])}; });
    add("svd", std::string("svd_thin_") + sh.name, {{sh.shape}}, [](auto& c, Args x) {
      return svd_cases::outputs(c, x[0], SvdMode::thin);
    });
  }
  add("svd", "svd_values_mode", {{{3, 4}}}, [](auto& c, Args x) { return Out{ad::svd(c, x[0], SvdMode::values).S}; });
  add("svd", "svd_full_square", {{{3, 3}}}, [](auto& c, Args x) { return svd_cases::outputs(c, x[0], SvdMode::full); });
  add("svd", "svd_full_square_batched", {{{3, 3, 2}}}, [](auto& c, Args x) { return svd_cases::outputs(c, x[0], SvdMode::full); });
  // Loss-like scalar outputs through the thin path (only S, and only one singular triplet).
  add("svd", "svd_thin_sum_s", {{{4, 3}}}, [](auto& c, Args x) { return Out{ad::sum(c, ad::svd(c, x[0]).S)}; });
  add("svd", "svd_thin_top_triplet", {{{3, 4}}}, [](auto& c, Args x) {
    const ad::SvdTriple r = ad::svd(c, x[0]);
    ad::EagerTensor u0 = ad::slice(c, r.U, {0, 0}, {3, 1}), v0 = ad::slice(c, r.Vh, {0, 0}, {1, 4});
    return Out{svd_cases::reconstruct(c, u0, ad::slice(c, r.S, {0}, {1}), v0)};
  });
}

}  // namespace tenferro::testing
