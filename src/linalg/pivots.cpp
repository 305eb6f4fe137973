// lu_pivots_to_permutation: LAPACK-style sequential row interchanges (0-based, as
// lu_factor returns them) to the row permutation they apply.
#include <string>

#include "linalg/common.hpp"
#include "tenferro/ops.hpp"

namespace tenferro {
namespace {

void check_pivots(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op) {
  s.check(op);
  detail::require_cpu_tensor(pivots, op, "pivots");
  if (pivots.dtype() != DType::i64) throw DTypeError(op, "pivots must be i64, got " + detail::describe(pivots));
  if (pivots.rank() < 1) throw RankError(op, "pivots must be [K, batch...], got " + detail::describe(pivots));
  if (m < pivots.extent(0))
    throw ShapeError(op, "the permutation size " + std::to_string(m) + " is smaller than the number of pivots " +
                             std::to_string(pivots.extent(0)) + " (" + detail::describe(pivots) + ")");
}

Dims perm_shape(const Tensor& pivots, std::int64_t m) {
  Dims shape{m};
  for (int i = 1; i < pivots.rank(); ++i) shape.push_back(pivots.extent(i));
  return shape;
}

/// perm [m, batch...]: (P·A) row i is A row perm[i]. ArgumentError for a pivot outside
/// [i, m) (nothing is returned, so no output is written).
Tensor run_pivots(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op) {
  const Tensor pv = to_contiguous(s, pivots);
  const std::int64_t k = pv.extent(0);
  Tensor out = detail::linalg::new_result(perm_shape(pv, m).span(), DType::i64);
  std::int64_t batches = 1;
  for (int i = 1; i < pv.rank(); ++i) batches *= pv.extent(i);
  const std::int64_t* p = pv.data_ptr<std::int64_t>();
  std::int64_t* o = out.mutable_data_ptr<std::int64_t>();
  for (std::int64_t b = 0; b < batches; ++b) {
    std::int64_t* r = o + b * m;
    for (std::int64_t i = 0; i < m; ++i) r[i] = i;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t v = p[b * k + i];
      if (v < i || v >= m)
        throw ArgumentError(op, "pivot " + std::to_string(v) + " at position " + std::to_string(i) + " of batch " + std::to_string(b) +
                                    " is out of range [" + std::to_string(i) + ", " + std::to_string(m) + ")");
      std::swap(r[i], r[v]);
    }
  }
  return out;
}

}  // namespace

Tensor lu_pivots_to_permutation(Session& s, const Tensor& pivots, std::int64_t m) {
  check_pivots(s, pivots, m, "lu_pivots_to_permutation");
  return run_pivots(s, pivots, m, "lu_pivots_to_permutation");
}

void lu_pivots_to_permutation_into(Session& s, const Tensor& pivots, std::int64_t m, const Tensor& out) {
  constexpr std::string_view op = "lu_pivots_to_permutation";
  check_pivots(s, pivots, m, op);
  const detail::linalg::IntoOut o{&out, "out", DType::i64, perm_shape(pivots, m)};
  detail::linalg::check_into(s, op, {o}, {&pivots});
  const Tensor r = run_pivots(s, pivots, m, op);
  detail::linalg::commit_into(s, {o}, {&r});
}

}  // namespace tenferro
