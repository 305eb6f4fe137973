#pragma once
// Sweep entries of the linear-algebra family (Note [Bad-input sweep]). The main operand
// is a [4, 4] matrix (batch axes trail); zero size is [0, 0].
#include <set>

#include "ops/sweep/sweep.hpp"

namespace tenferro::sweep {

namespace detail {
/// A linalg entry: `args` builds the operands from the main operand's dtype and shape.
inline SweepEntry linalg(std::string op, std::function<Outs(Session&, const Args&)> run,
                         std::function<void(Session&, const Args&, const Outs&)> run_into,
                         std::function<Args(Session&, DType, const Shape&)> args = nullptr) {
  SweepEntry e;
  e.op = std::move(op);
  e.args = args ? std::move(args) : [](Session& s, DType d, const Shape& sh) { return Args{well_conditioned(s, sh, d)}; };
  e.run = std::move(run);
  e.run_into = std::move(run_into);
  e.shape = {4, 4};
  e.zero_shape = {0, 0};
  // Documented (linalg.hpp): svd, eigh, eig, pinv, lstsq, matrix_norm (nuclear,
  // spectral), qr_pivoted and matrix_exp reject non-finite input; the others may
  // propagate NaN (the nonfinite case then wants a result or a typed error).
  static const std::set<std::string> kRejects = {"svd", "eigh", "eig", "pinv", "lstsq", "matrix_norm", "qr_pivoted", "matrix_exp"};
  e.rejects_nonfinite = kRejects.count(e.op) > 0;
  e.nonfinite_case = true;
  return e;
}
inline Args with_rhs(Session& s, DType d, const Shape& sh) {
  Shape b = sh;
  if (b.size() >= 2) b[1] = 3;
  return Args{well_conditioned(s, sh, d), rand(b, d)};
}
inline Args hermitian(Session& s, DType d, const Shape& sh) {
  return Args{spd(s, sh, d)};
}
}  // namespace detail

inline std::vector<SweepEntry> linalg_entries() {
  using detail::linalg;
  std::vector<SweepEntry> v;
  v.push_back(linalg("svd", [](Session& s, const Args& a) { auto r = svd(s, a[0]); return Outs{r.U, r.S, r.Vh}; },
                     [](Session& s, const Args& a, const Outs& o) { svd_into(s, a[0], o[0], o[1], o[2]); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)svd(s, a[0], static_cast<SvdMode>(9)); };
  v.push_back(linalg("qr", [](Session& s, const Args& a) { auto r = qr(s, a[0]); return Outs{r.Q, r.R}; },
                     [](Session& s, const Args& a, const Outs& o) { qr_into(s, a[0], o[0], o[1]); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)qr(s, a[0], static_cast<QrMode>(9)); };
  v.push_back(linalg("qr_pivoted", [](Session& s, const Args& a) { auto r = qr_pivoted(s, a[0]); return Outs{r.Q, r.R, r.perm, r.rank}; },
                     [](Session& s, const Args& a, const Outs& o) { qr_pivoted_into(s, a[0], o[0], o[1], o[2], o[3]); }));
  v.push_back(linalg(
      "qr_append_columns",
      [](Session& s, const Args& a) { auto r = qr_append_columns(s, a[0], a[1], a[2]); return Outs{r.Q, r.R}; },
      [](Session& s, const Args& a, const Outs& o) { qr_append_columns_into(s, a[0], a[1], a[2], o[0], o[1]); },
      [](Session& s, DType d, const Shape& sh) {  // Q [m, 2] and R [2, 2] of a QR, C [m, 1]
        const std::int64_t m = sh.size() >= 1 ? sh[0] : 1;
        const QrResult r = qr(s, rand(Shape{m, 2}, d));
        return Args{r.Q, r.R, rand(Shape{m, 1}, d)};
      }));
  v.push_back(linalg("lu", [](Session& s, const Args& a) { auto r = lu(s, a[0]); return Outs{r.P, r.L, r.U}; },
                     [](Session& s, const Args& a, const Outs& o) { lu_into(s, a[0], o[0], o[1], o[2]); }));
  v.push_back(linalg("lu_factor", [](Session& s, const Args& a) { auto r = lu_factor(s, a[0]); return Outs{r.LU, r.pivots}; },
                     [](Session& s, const Args& a, const Outs& o) { lu_factor_into(s, a[0], o[0], o[1]); }));
  v.push_back(linalg(  // operands LU, pivots (of a valid matrix), b
      "lu_solve", [](Session& s, const Args& a) { return Outs{lu_solve(s, LuFactorResult{a[0], a[1]}, a[2])}; },
      [](Session& s, const Args& a, const Outs& o) { lu_solve_into(s, LuFactorResult{a[0], a[1]}, a[2], o[0]); },
      [](Session& s, DType d, const Shape& sh) {
        const Args ab = detail::with_rhs(s, d, sh);
        if (sh.size() < 2 || !is_inexact(d)) return Args{ab[0], Tensor::zeros({1}, DType::i64), ab[1]};
        const LuFactorResult f = lu_factor(s, ab[0]);
        return Args{f.LU, f.pivots, ab[1]};
      }));
  v.push_back(linalg("lu_full_pivot", [](Session& s, const Args& a) { auto r = lu_full_pivot(s, a[0]); return Outs{r.P, r.L, r.U, r.Q}; },
                     [](Session& s, const Args& a, const Outs& o) { lu_full_pivot_into(s, a[0], o[0], o[1], o[2], o[3]); }));
  {
    SweepEntry e = linalg("lu_pivots_to_permutation", [](Session& s, const Args& a) { return Outs{lu_pivots_to_permutation(s, a[0], 4)}; },
                          [](Session& s, const Args& a, const Outs& o) { lu_pivots_to_permutation_into(s, a[0], 4, o[0]); },
                          [](Session& s, DType d, const Shape& sh) {
                            // pivots[i] = i: no interchange (the identity)
                            if (sh.size() == 0) return Args{Tensor::zeros({}, d)};
                            return Args{iota(s, Shape{sh[0]}.span(), d, 0)};
                          });
    e.nonfinite_case = false;  // integer pivots
    v.push_back(std::move(e));
  }
  v.push_back(linalg("cholesky", [](Session& s, const Args& a) { return Outs{cholesky(s, a[0])}; },
                     [](Session& s, const Args& a, const Outs& o) { cholesky_into(s, a[0], o[0]); }, detail::hermitian));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)cholesky(s, a[0], static_cast<Triangle>(5)); };
  v.push_back(linalg("eigh", [](Session& s, const Args& a) { auto r = eigh(s, a[0]); return Outs{r.W, r.V}; },
                     [](Session& s, const Args& a, const Outs& o) { eigh_into(s, a[0], o[0], o[1]); }, detail::hermitian));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)eigh(s, a[0], static_cast<Triangle>(5)); };
  v.push_back(linalg("eig", [](Session& s, const Args& a) { auto r = eig(s, a[0]); return Outs{r.W, r.V}; },
                     [](Session& s, const Args& a, const Outs& o) { eig_into(s, a[0], o[0], o[1]); }));
  v.push_back(linalg("solve", [](Session& s, const Args& a) { return Outs{solve(s, a[0], a[1])}; },
                     [](Session& s, const Args& a, const Outs& o) { solve_into(s, a[0], a[1], o[0]); }, detail::with_rhs));
  v.push_back(linalg("triangular_solve", [](Session& s, const Args& a) { return Outs{triangular_solve(s, a[0], a[1])}; },
                     [](Session& s, const Args& a, const Outs& o) { triangular_solve_into(s, a[0], a[1], o[0]); }, detail::with_rhs));
  v.back().bad_enum = [](Session& s, const Args& a) {
    (void)triangular_solve(s, a[0], a[1], TriangularSolveOptions{.side = static_cast<Side>(7)});
  };
  v.push_back(linalg("lstsq", [](Session& s, const Args& a) { auto r = lstsq(s, a[0], a[1], LstsqDriver::svd); return Outs{r.X, r.rank, r.S}; },
                     [](Session& s, const Args& a, const Outs& o) { lstsq_into(s, a[0], a[1], o[0], o[1], o[2], LstsqDriver::svd); }, detail::with_rhs));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)lstsq(s, a[0], a[1], static_cast<LstsqDriver>(9)); };
  v.push_back(linalg("inv", [](Session& s, const Args& a) { return Outs{inv(s, a[0])}; },
                     [](Session& s, const Args& a, const Outs& o) { inv_into(s, a[0], o[0]); }));
  v.push_back(linalg("det", [](Session& s, const Args& a) { return Outs{det(s, a[0])}; },
                     [](Session& s, const Args& a, const Outs& o) { det_into(s, a[0], o[0]); }));
  v.push_back(linalg("slogdet", [](Session& s, const Args& a) { auto r = slogdet(s, a[0]); return Outs{r.sign, r.logabsdet}; },
                     [](Session& s, const Args& a, const Outs& o) { slogdet_into(s, a[0], o[0], o[1]); }));
  v.push_back(linalg("pinv", [](Session& s, const Args& a) { return Outs{pinv(s, a[0])}; },
                     [](Session& s, const Args& a, const Outs& o) { pinv_into(s, a[0], o[0]); }));
  v.push_back(linalg("matrix_norm", [](Session& s, const Args& a) { return Outs{matrix_norm(s, a[0], MatrixNorm::nuclear)}; },
                     [](Session& s, const Args& a, const Outs& o) { matrix_norm_into(s, a[0], o[0], MatrixNorm::nuclear); }));
  v.back().bad_enum = [](Session& s, const Args& a) { (void)matrix_norm(s, a[0], static_cast<MatrixNorm>(42)); };
  v.push_back(linalg("vector_norm", [](Session& s, const Args& a) { return Outs{vector_norm(s, a[0], 3.0)}; },
                     [](Session& s, const Args& a, const Outs& o) { vector_norm_into(s, a[0], o[0], 3.0); }));
  v.push_back(linalg("matrix_exp", [](Session& s, const Args& a) { return Outs{matrix_exp(s, a[0])}; },
                     [](Session& s, const Args& a, const Outs& o) { matrix_exp_into(s, a[0], o[0]); }));
  return v;
}

}  // namespace tenferro::sweep
