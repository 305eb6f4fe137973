#pragma once
// Derivative-check cases for the LU and eig rules (src/ad/rules_lu_eig.cpp).
#include "ad/rule_case.hpp"

namespace tenferro::testing {

namespace lu_eig_cases {

/// x + 4·I (rectangular identity for M != N): diagonally dominant, so partial pivoting
/// picks the dominant entry and the pivot order is locally constant.
inline ad::EagerTensor dominant(ad::Context& c, const ad::EagerTensor& x) {
  return ad::add(c, x, ad::mul(c, ad::EagerTensor(Tensor::eye(x.value().extent(0), DType::f64, x.value().extent(1))), 4.0));
}
/// Rows in reverse order: the dominant entries move off the diagonal, so P is not I.
inline ad::EagerTensor pivoted(ad::Context& c, const ad::EagerTensor& x) {
  const std::int64_t axes[] = {0};
  return ad::reverse(c, dominant(c, x), axes);
}
/// diag(-2, 0.5, 3) + 0.3·x: well-separated eigenvalues (real ones for real x).
inline ad::EagerTensor separated(ad::Context& c, const ad::EagerTensor& x) {
  return ad::add(c, ad::mul(c, x, 0.3), Tensor::from_data<double>({3, 3}, {-2, 0, 0, 0, 0.5, 0, 0, 0, 3}));
}
/// Gauge-invariant outputs of eig: W, |V|² (depends on the normalization, not on the
/// phases) and V·diag(sin W)·V⁻¹ (= sin(A)).
inline Out eig_invariants(ad::Context& c, const ad::EagerTensor& a) {
  ad::EigPair r = ad::eig(c, a);
  Dims row{1, 3};
  if (a.rank() == 3) row.push_back(a.value().extent(2));
  ad::EagerTensor vs = ad::mul(c, r.V, ad::reshape(c, ad::sin(c, r.W), row.span()));
  return Out{r.W, ad::real(c, ad::mul(c, r.V, ad::conj(c, r.V))), ad::matmul(c, vs, ad::inv(c, r.V))};
}

}  // namespace lu_eig_cases

inline void add_lu_eig_cases(CaseList& add) {
  using namespace lu_eig_cases;
  // ---- lu: L and U of row-reversed dominant matrices (P != I); square, tall, wide, batched.
  for (const Shape& sh : {Shape{3, 3}, Shape{3, 3, 2}, Shape{5, 3}, Shape{4, 2, 2}, Shape{3, 5}, Shape{2, 4, 2}}) {
    std::string nm = "lu_" + std::to_string(sh[0]) + "x" + std::to_string(sh[1]) + (sh.size() == 3 ? "_batched" : "");
    add("lu", nm, {{sh}}, [](auto& c, Args x) {
      ad::LuFactors r = ad::lu(c, pivoted(c, x[0]));
      return Out{r.L, r.U};
    });
  }
  // One output alone (the other's cotangent is a symbolic zero of the 3-output node).
  for (const Shape& sh : {Shape{5, 3}, Shape{3, 5}}) {
    const std::string nm = std::to_string(sh[0]) + "x" + std::to_string(sh[1]);
    add("lu", "lu_l_only_" + nm, {{sh}}, [](auto& c, Args x) { return Out{ad::lu(c, pivoted(c, x[0])).L}; });
    add("lu", "lu_u_only_" + nm, {{sh}}, [](auto& c, Args x) { return Out{ad::lu(c, pivoted(c, x[0])).U}; });
  }
  add("lu", "lu_reconstructs_a", {{{4, 3}}}, [](auto& c, Args x) {
    // Pᵀ·L·U == A: its derivative must be the identity map.
    ad::LuFactors r = ad::lu(c, pivoted(c, x[0]));
    const Tensor pt = tenferro::to_contiguous(c.session(), r.P.permute_view({1, 0}));
    return Out{ad::matmul(c, pt, ad::matmul(c, r.L, r.U))};
  });
  // ---- lu_factor: the packed factor.
  for (const Shape& sh : {Shape{3, 3}, Shape{3, 3, 2}, Shape{4, 3}, Shape{2, 4, 2}}) {
    std::string nm = "lu_factor_" + std::to_string(sh[0]) + "x" + std::to_string(sh[1]) + (sh.size() == 3 ? "_batched" : "");
    add("lu_factor", nm, {{sh}}, [](auto& c, Args x) { return Out{ad::lu_factor(c, pivoted(c, x[0])).LU}; });
  }
  // ---- lu_solve: through lu_factor, and with an arbitrary matrix used as the packed
  // factor (every entry of LU is then a free variable) and fixed pivots.
  add("lu_solve", "lu_solve_through_lu_factor", {{{3, 3}}, {{3, 2}}}, [](auto& c, Args x) {
    ad::LuPacked f = ad::lu_factor(c, pivoted(c, x[0]));
    return Out{ad::lu_solve(c, f.LU, f.pivots, x[1])};
  });
  add("lu_solve", "lu_solve_given_factor_batched", {{{3, 3, 2}}, {{3, 2, 2}}}, [](auto& c, Args x) {
    const Tensor piv = Tensor::from_data<std::int64_t>({3, 2}, {2, 1, 2, 1, 2, 2});
    return Out{ad::lu_solve(c, dominant(c, x[0]), piv, x[1])};
  });
  add("lu_solve", "lu_solve_vector", {{{3, 3}}, {{3}}}, [](auto& c, Args x) {
    const Tensor piv = Tensor::from_data<std::int64_t>({3}, {1, 2, 2});
    return Out{ad::lu_solve(c, dominant(c, x[0]), piv, x[1])};
  });
  // ---- eig: gauge-invariant outputs only (Note [eig rules]).
  add("eig", "eig_invariants", {{{3, 3}}}, [](auto& c, Args x) { return eig_invariants(c, separated(c, x[0])); });
  add("eig", "eig_invariants_batched", {{{3, 3, 2}}}, [](auto& c, Args x) { return eig_invariants(c, separated(c, x[0])); });
  add("eig", "eig_complex_pair", {{{3, 3}}}, [](auto& c, Args x) {
    // Eigenvalues near 1 ± 2i and -3: complex eigenvectors even for real A.
    const Tensor a0 = Tensor::from_data<double>({3, 3}, {1, -2, 0, 2, 1, 0, 0, 0, -3});
    return eig_invariants(c, ad::add(c, ad::mul(c, x[0], 0.2), a0));
  });
  add("eig", "eigvals", {{{3, 3}}}, [](auto& c, Args x) { return Out{ad::eigvals(c, separated(c, x[0]))}; });
  add("eig", "eigvals_batched", {{{3, 3, 2}}}, [](auto& c, Args x) { return Out{ad::eigvals(c, separated(c, x[0]))}; });
}

}  // namespace tenferro::testing
