#pragma once
// The bad-input sweep's vocabulary (Note [Bad-input sweep] in bad_input_sweep_test.cpp):
// one SweepEntry per catalogue op says how to build valid operands and how to call the
// op; the driver derives every bad case from that and from the catalogue row.
#include <complex>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::sweep {

using Args = std::vector<Tensor>;
using Outs = std::vector<Tensor>;

/// How the sweep drives one catalogue op.
struct SweepEntry {
  std::string op;  ///< the catalogue name
  /// Valid operands whose main operand has dtype `d` and shape `shape` (entries whose op
  /// needs particular shapes use `shape` only where they declare so).
  std::function<Args(Session&, DType d, const Shape& shape)> args;
  /// The allocating form; returns every result.
  std::function<Outs(Session&, const Args&)> run;
  /// The `_into` form writing `outs` (shapes and dtypes of run's results); null: none.
  std::function<void(Session&, const Args&, const Outs&)> run_into;
  /// The op with its axis argument replaced by `axis`; null: the op takes no axis.
  std::function<void(Session&, const Args&, std::int64_t axis)> with_axis;
  /// The op with an enum argument out of its range; null: the op takes no enum.
  std::function<void(Session&, const Args&)> bad_enum;
  /// Calls the op on zero-stride views whose result's extents multiply past INT64_MAX
  /// (or add past it); null: no such case for this op.
  std::function<void(Session&)> overflow;
  Shape shape{3, 4};         ///< the main operand's shape in the valid case
  Shape zero_shape{3, 0};    ///< a zero-size main operand
  bool any_rank = false;     ///< takes a main operand of any rank (the rank 0 and 20 cases)
  bool elementwise = false;  ///< each result element depends on the same element of each operand
  bool mismatch_is_error = true;   ///< a second operand of another extent is a ShapeError/RankError
  bool nonfinite_case = false;     ///< run the case of a NaN in the main operand
  bool rejects_nonfinite = false;  ///< ... which must then be an ArgumentError
  bool any_out_dtype = false;      ///< the output's dtype is the op's argument (convert, cast)
  bool out_defines_result = false; ///< the output's shape and dtype are the op's arguments (iota)
  int axis_rank = -1;              ///< the rank axes range over (-1: the main operand's)
};

/// A fresh output of this shape and dtype holding the sentinel value (7; true for bool).
inline Tensor sentinel(std::span<const std::int64_t> shape, DType d) {
  return Tensor::full(shape, d == DType::b8 ? Scalar(true) : Scalar(7), d);
}

/// Options of a one-thread backend.
inline CpuBackendOptions one_thread() {
  CpuBackendOptions o;
  o.num_threads = 1;
  return o;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 r(2024);
  return r;
}

/// Random values of dtype d in [lo, hi] (tests/support's random_tensor on the sweep's
/// generator).
inline Tensor rand(const Shape& shape, DType d, double lo = -2, double hi = 2) {
  return testing::random_tensor(rng(), shape, d, lo, hi);
}

/// A well-conditioned square batch: random + (2n + 1)·I (dtype d, shape [n, n, batch...]).
inline Tensor well_conditioned(Session& s, const Shape& shape, DType d) {
  const Tensor a = rand(shape, d);
  if (a.rank() < 2 || a.shape()[0] != a.shape()[1] || a.numel() == 0 || !is_inexact(d)) return a;
  const std::int64_t n = a.shape()[0];
  const Tensor eye = mul(s, Tensor::eye(n, d), static_cast<double>(2 * n + 1));
  const std::int64_t dims[2] = {0, 1};
  return add(s, a, broadcast_in_dim_view(eye, a.shape().span(), dims));
}

/// Symmetric (Hermitian) positive definite batch of the given shape.
inline Tensor spd(Session& s, const Shape& shape, DType d) {
  const Tensor a = well_conditioned(s, shape, d);
  if (a.rank() < 2 || a.numel() == 0) return a;
  Dims perm(a.rank(), 0);
  for (int k = 0; k < a.rank(); ++k) perm[k] = k;
  std::swap(perm[0], perm[1]);
  return add(s, a, conj(s, transpose(s, a, perm)));
}

/// A [2^32, 1] and a [1, 2^32] zero-stride view of one element: broadcasting them makes
/// 2^64 elements.
inline Args huge_pair(DType d) {
  const Tensor one = Tensor::zeros({1}, d);
  const std::int64_t big = std::int64_t{1} << 32;
  return {one.as_strided_view(Dims{big, 1}, Dims{0, 0}, 0), one.as_strided_view(Dims{1, big}, Dims{0, 0}, 0)};
}

/// The dtypes of a catalogue dtype set.
inline std::vector<DType> dtypes_of(DTypeSet set) {
  std::vector<DType> v;
  for (int i = 0; i < kNumDTypes; ++i)
    if (in_set(static_cast<DType>(i), set)) v.push_back(static_cast<DType>(i));
  return v;
}

}  // namespace tenferro::sweep
