#pragma once
// Matrix helpers shared by the linear-algebra rule files (rules_linalg*.cpp): products
// with adjoints, batch axes, Hermitian parts. Matrices are [M, N, batch...].
#include <limits>

#include "tenferro/ad.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad::linalg_util {

namespace T = ::tenferro;

/// Batch axes 2.. paired on both sides.
inline void add_batch(DotDims& d, int rank) {
  for (int k = 2; k < rank; ++k) {
    d.lhs_batch.push_back(k);
    d.rhs_batch.push_back(k);
  }
}
/// A·B for [M, K, b...]·[K, N, b...] (or a vector B [K] with an unbatched A).
inline Tensor mm(Session& s, const Tensor& a, const Tensor& b) {
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  if (b.rank() >= 2) add_batch(d, a.rank());
  return T::dot_general(s, a, b, d);
}
/// A·Bᴴ (both [M, K, b...] / [N, K, b...]; vectors give the outer product a·bᴴ).
inline Tensor mm_bh(Session& s, const Tensor& a, const Tensor& b) {
  DotDims d;
  if (a.rank() >= 2) {
    d.lhs_contracting = {1};
    d.rhs_contracting = {1};
    add_batch(d, a.rank());
  }
  d.conj_rhs = true;
  return T::dot_general(s, a, b, d);
}
/// Aᴴ·B.
inline Tensor mm_ah(Session& s, const Tensor& a, const Tensor& b) {
  DotDims d;
  d.lhs_contracting = {0};
  d.rhs_contracting = {0};
  add_batch(d, a.rank());
  d.conj_lhs = true;
  return T::dot_general(s, a, b, d);
}
inline Dims swap01(int rank) {
  Dims p;
  for (int i = 0; i < rank; ++i) p.push_back(i);
  std::swap(p[0], p[1]);
  return p;
}
/// Mᴴ (a view for real dtypes).
inline Tensor adjoint(Session& s, const Tensor& m) {
  Tensor t = m.permute_view(swap01(m.rank()).span());
  return is_complex(m.dtype()) ? T::conj(s, t) : t;
}
inline Tensor apply_op(Session& s, const Tensor& m, MatOp op) {
  switch (op) {
    case MatOp::none: return m;
    case MatOp::transpose: return m.permute_view(swap01(m.rank()).span());
    case MatOp::adjoint: return adjoint(s, m);
  }
  return m;
}
inline Tensor hermitian_part(Session& s, const Tensor& m) { return T::mul(s, T::add(s, m, adjoint(s, m)), 0.5); }
inline Tensor real_diag(Session& s, const Tensor& m) {
  Tensor d = T::triu(s, T::tril(s, m, 0), 0);
  return is_complex(d.dtype()) ? T::cast(s, T::real(s, d), d.dtype()) : d;
}
/// Batch values [b...] reshaped to [1, 1, b...], so they broadcast over the matrix axes.
inline Tensor batch_as_matrix(Session& s, const Tensor& v) {
  Dims shape{1, 1};
  for (int i = 0; i < v.rank(); ++i) shape.push_back(v.extent(i));
  return T::reshape(s, v, shape.span());
}

/// A vector [N] as one column [N, 1]; anything else as it is.
inline Tensor as_column(Session& s, const Tensor& v) { return v.rank() == 1 ? T::reshape(s, v, {v.extent(0), 1}) : v; }
/// The diagonal of [N, N, b...] as an [N, b...] view (extract_diagonal_view puts it
/// last; a permuted view moves it first).
inline Tensor diag_part(Session& s, const Tensor& m) {
  Tensor d = T::extract_diagonal_view(m, 0, 1);
  Dims perm{d.rank() - 1};
  for (int i = 0; i + 1 < d.rank(); ++i) perm.push_back(i);
  return d.permute_view(perm.span());
}
/// diag(v) [N, N, b...] from v [N, b...] (embed_diagonal takes the diagonal from the last
/// axis).
inline Tensor diag_embed(Session& s, const Tensor& v) {
  Dims last;
  for (int i = 1; i < v.rank(); ++i) last.push_back(i);
  last.push_back(0);
  return T::embed_diagonal(s, v.permute_view(last.span()), 0, 1);
}
/// M·diag(v): column j of m [M, N, b...] times v[j] (v [N, b...], any dtype promoting
/// with m's).
inline Tensor scale_columns(Session& s, const Tensor& m, const Tensor& v) {
  Dims row{1};
  for (int i = 0; i < v.rank(); ++i) row.push_back(v.extent(i));
  return T::mul(s, m, T::reshape(s, v, row.span()));
}
/// F [N, N, b...] with F_ij = 1/(w_j − w_i) off the diagonal and 0 on it (w [N, b...],
/// real or complex; F in `dtype`). Eigenvector rules (eigh, eig) divide by these gaps.
inline Tensor inverse_gaps(Session& s, const Tensor& w, DType dtype) {
  const std::int64_t n = w.extent(0);
  Dims row{1, n}, col{n, 1};
  for (int i = 1; i < w.rank(); ++i) {
    row.push_back(w.extent(i));
    col.push_back(w.extent(i));
  }
  Tensor wc = T::cast(s, w, dtype);
  Tensor e = T::sub(s, T::reshape(s, wc, row.span()), T::reshape(s, wc, col.span()));  // w_j - w_i
  Tensor eye = Tensor::eye(n, dtype);
  return T::sub(s, T::div(s, 1.0, T::add(s, e, eye)), eye);
}
/// F [N, N, b...] with F_ij = 1/(w_j − w_i) broadened as the SVD rules do (Note [SVD
/// broadening] in rules_svd.cpp): x/(x² + ε) with ε = η·max|w|² + tiny per batch matrix,
/// for real eigenvalues w [N, b...] (eigh). Exact ties give 0 (the degenerate-block
/// term is dropped), a gap of 1e-3·max|w| is exact to 1e-6 relative at η = 1e-12.
inline Tensor broadened_inverse_gaps(Session& s, const Tensor& w, DType dtype, double eta) {
  const std::int64_t n = w.extent(0);
  Dims row{1, n}, col{n, 1}, one{1, 1};
  for (int i = 1; i < w.rank(); ++i) {
    row.push_back(w.extent(i));
    col.push_back(w.extent(i));
    one.push_back(w.extent(i));
  }
  if (n == 0) return T::cast(s, T::mul(s, T::reshape(s, w, row.span()), T::reshape(s, w, col.span())), dtype);
  Tensor e = T::sub(s, T::reshape(s, w, row.span()), T::reshape(s, w, col.span()));  // w_j - w_i
  const double tiny = w.dtype() == DType::f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  Tensor wmax = T::reshape(s, T::max(s, T::abs(s, w), {0}), one.span());  // [1, 1, b...]
  Tensor eps = T::add(s, T::mul(s, T::mul(s, wmax, wmax), eta), tiny);
  return T::cast(s, T::div(s, e, T::add(s, T::mul(s, e, e), eps)), dtype);
}
/// Rows [begin, end) of `packed` as a recorded slice (lu's U from the LU factor, Note
/// [LU rules]): the cotangents of the parts meet in the factor's node.
inline EagerTensor rows(Context& ctx, const EagerTensor& packed, std::int64_t begin, std::int64_t end) {
  const int rank = packed.rank();
  Dims start(rank, 0), limit;
  for (int i = 0; i < rank; ++i) limit.push_back(packed.value().extent(i));
  start[0] = begin;
  limit[0] = end;
  return slice(ctx, packed, start, limit);
}

}  // namespace tenferro::ad::linalg_util
