#pragma once
// Derivative-check cases for the linear-algebra rules (src/ad/rules_linalg.cpp).
#include "ad/rule_case.hpp"

namespace tenferro::testing {

inline void add_linalg_cases(CaseList& add) {
  // ---- linear solves (A shifted by 4·I: well conditioned)
  auto shifted_a = [](ad::Context& c, const ad::EagerTensor& a) { return ad::add(c, a, ad::mul(c, ad::EagerTensor(Tensor::eye(3, DType::f64)), 4.0));
  };
  add("solve", "solve_matrix", {{{3, 3}}, {{3, 2}}}, [shifted_a](auto& c, Args x) { return Out{ad::solve(c, shifted_a(c, x[0]), x[1])}; });
  add("solve", "solve_batched", {{{3, 3, 2}}, {{3, 2, 2}}}, [shifted_a](auto& c, Args x) {
    return Out{ad::solve(c, shifted_a(c, x[0]), x[1])};
  });
  add("solve", "solve_vector", {{{3, 3}}, {{3}}}, [shifted_a](auto& c, Args x) { return Out{ad::solve(c, shifted_a(c, x[0]), x[1])}; });
  for (Side side : {Side::left, Side::right})
    for (Triangle tri : {Triangle::lower, Triangle::upper})
      for (MatOp op : {MatOp::none, MatOp::transpose, MatOp::adjoint})
        for (bool unit : {false, true}) {
          TriangularSolveOptions o;
          o.side = side;
          o.tri = tri;
          o.op = op;
          o.unit_diagonal = unit;
          const std::string nm = std::string("triangular_solve_") + (side == Side::left ? "left_" : "right_") +
                                 (tri == Triangle::lower ? "lower_" : "upper_") +
                                 (op == MatOp::none ? "none" : op == MatOp::transpose ? "transpose" : "adjoint") + (unit ? "_unit" : "");
          const Shape bshape = side == Side::left ? Shape{3, 2} : Shape{2, 3};
          add("triangular_solve", nm, {{{3, 3}}, {bshape}}, [shifted_a, o](auto& c, Args x) {
            return Out{ad::triangular_solve(c, shifted_a(c, x[0]), x[1], o)};
          });
        }
  add("inv", "inv", {{{3, 3}}}, [shifted_a](auto& c, Args x) { return Out{ad::inv(c, shifted_a(c, x[0]))}; });
  add("inv", "inv_batched", {{{3, 3, 2}}}, [shifted_a](auto& c, Args x) { return Out{ad::inv(c, shifted_a(c, x[0]))}; });
  add("det", "det", {{{3, 3}}}, [shifted_a](auto& c, Args x) { return Out{ad::det(c, shifted_a(c, x[0]))}; });
  add("det", "det_batched", {{{3, 3, 2}}}, [shifted_a](auto& c, Args x) { return Out{ad::det(c, shifted_a(c, x[0]))}; });
  add("matrix_exp", "matrix_exp", {{{3, 3}}}, [](auto& c, Args x) { return Out{ad::matrix_exp(c, x[0])}; });
  add("matrix_exp", "matrix_exp_batched", {{{3, 3, 2}}}, [](auto& c, Args x) { return Out{ad::matrix_exp(c, x[0])}; });
  // cholesky of A = X·Xᴴ + 3·I (Hermitian positive definite for any X).
  for (Triangle tri : {Triangle::lower, Triangle::upper})
    for (bool batched : {false, true}) {
      const Shape xs = batched ? Shape{3, 3, 2} : Shape{3, 3};
      add("cholesky", std::string("cholesky_") + (tri == Triangle::lower ? "lower" : "upper") + (batched ? "_batched" : ""), {{xs}},
          [tri](auto& c, Args x) {
            DotDims d;
            d.lhs_contracting = {1};
            d.rhs_contracting = {1};
            if (x[0].rank() == 3) {
              d.lhs_batch = {2};
              d.rhs_batch = {2};
            }
            d.conj_rhs = true;
            ad::EagerTensor a = ad::add(c, ad::dot_general(c, x[0], x[0], d), ad::mul(c, ad::EagerTensor(Tensor::eye(3, DType::f64)), 3.0));
            return Out{ad::cholesky(c, a, tri)};
          });
    }
  add("cholesky", "cholesky_reads_one_triangle", {{{3, 3}, -0.3, 0.3}}, [](auto& c, Args x) {
    // A non-Hermitian input: only the lower triangle matters, so Ā must vanish above it.
    return Out{ad::cholesky(c, ad::add(c, x[0], ad::mul(c, ad::EagerTensor(Tensor::eye(3, DType::f64)), 3.0)), Triangle::lower)};
  }, false);
  // eigh of a Hermitian A = X + Xᴴ (+ a spread diagonal: distinct eigenvalues); outputs
  // W and the gauge-invariant V·diag(sin W)·Vᴴ (complex), or V itself (real).
  for (bool batched : {false, true})
    add("eigh", std::string("eigh") + (batched ? "_batched" : ""), {{batched ? Shape{3, 3, 2} : Shape{3, 3}}}, [](auto& c, Args x) {
      const Tensor spread = Tensor::from_data<double>({3, 3}, {-2, 0, 0, 0, 0.5, 0, 0, 0, 3});
      const Dims perm = x[0].rank() == 3 ? Dims{1, 0, 2} : Dims{1, 0};
      ad::EagerTensor a = ad::add(c, ad::add(c, x[0], ad::transpose(c, ad::conj(c, x[0]), perm.span())), spread);
      ad::EighPair r = ad::eigh(c, a);
      DotDims d;
      d.lhs_contracting = {1};
      d.rhs_contracting = {1};
      if (a.rank() == 3) {
        d.lhs_batch = {2};
        d.rhs_batch = {2};
      }
      d.conj_rhs = true;
      Dims row{1, 3};
      if (a.rank() == 3) row.push_back(2);
      ad::EagerTensor vs = ad::mul(c, r.V, ad::reshape(c, ad::sin(c, r.W), row.span()));
      return Out{r.W, ad::dot_general(c, vs, r.V, d)};
    });
  add("eigh", "eigh_vectors_real_upper", {{{3, 3}}}, [](auto& c, Args x) {
    const Tensor spread = Tensor::from_data<double>({3, 3}, {-2, 0, 0, 0, 0.5, 0, 0, 0, 3});
    ad::EighPair r = ad::eigh(c, ad::add(c, x[0], spread), Triangle::upper);  // reads the upper triangle only
    return Out{r.W, r.V};
  }, false);
  add("qr", "qr_tall_positive_diagonal", {{{4, 3}}}, [](auto& c, Args x) {
    ad::QrPair r = ad::qr(c, x[0], true);
    return Out{r.Q, r.R};
  });
  add("qr", "qr_square_batched_positive_diagonal", {{{3, 3, 2}}}, [](auto& c, Args x) {
    ad::QrPair r = ad::qr(c, x[0], true);
    return Out{r.Q, r.R};
  });
  add("qr", "qr_tall_lapack_gauge", {{{4, 3}}}, [](auto& c, Args x) {
    ad::QrPair r = ad::qr(c, x[0]);
    return Out{r.Q, r.R};
  }, false);
}

}  // namespace tenferro::testing
