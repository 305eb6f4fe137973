#pragma once
// Ops along one axis shared by the rule files (reductions, scans, det's adjugate).
#include "core/internal_check.hpp"

#include "tenferro/ops.hpp"
#include "tenferro/structural.hpp"

namespace tenferro::ad::scan_util {

/// t reversed along `axis` (a negative-stride view: no copy).
inline Tensor flip(const Tensor& t, std::int64_t axis) {
  return t.slice_view(static_cast<int>(axis), Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
}
/// t shifted by d (> 0: towards higher indices, < 0: lower) along `axis`, the vacated
/// entries `fill`: one pad op (low d, high -d crops what falls off).
inline Tensor shift(Session& s, const Tensor& t, std::int64_t axis, std::int64_t d, Scalar fill) {
  Dims low(t.rank(), 0), high(t.rank(), 0), interior(t.rank(), 0);
  low[static_cast<int>(axis)] = d;
  high[static_cast<int>(axis)] = -d;
  return tenferro::pad(s, t, fill, low.span(), high.span(), interior.span());
}
/// Note [prod with zeros]: o[i] = Π_{j≠i} x[j] along `axis` (x's shape), exact with
/// zeros (no division): (exclusive cumprod from the front) · (exclusive cumprod from the
/// back), each a cumprod op and a shift.
inline Tensor products_of_others(Session& s, const Tensor& x, std::int64_t axis) {
  if (x.numel() == 0) return x;
  Tensor front = shift(s, tenferro::cumprod(s, x, axis), axis, 1, 1.0);
  Tensor back = flip(shift(s, tenferro::cumprod(s, flip(x, axis), axis), axis, 1, 1.0), axis);
  return tenferro::mul(s, front, back);
}

}  // namespace tenferro::ad::scan_util
