// The CPU kernel of lu_pivots_to_permutation (cpu/provider_kernels.hpp; the front end
// in src/ops/linalg_misc.cpp): LAPACK-style sequential row interchanges (0-based, as
// lu_factor returns them) to the row permutation they apply.
#include <string>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"
#include "tenferro/ops.hpp"

namespace tenferro::cpu {

/// perm [m, batch...]: (P·A) row i is A row perm[i]. ArgumentError for a pivot outside
/// [i, m) (nothing is returned, so no output is written).
Tensor pivots_to_permutation_kernel(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op) {
  // i32 pivots (LAPACK's own lapack_int, e.g. from outside code) widen to i64.
  const Tensor pv = pivots.dtype() == DType::i64 ? to_contiguous(s, pivots) : convert(s, pivots, DType::i64);
  const std::int64_t k = pv.extent(0);
  Tensor out = detail::linalg::new_result(detail::linalg::perm_shape(pv, m).span(), DType::i64);
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

}  // namespace tenferro::cpu
