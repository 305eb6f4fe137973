// Operand validation and helpers shared by the linalg family (see common.hpp).
#include "linalg/common.hpp"

#include <climits>

namespace tenferro::detail::linalg {

MatrixShape check_matrix(const Tensor& a, std::string_view op, std::string_view what) {
  require_cpu_tensor(a, op, what);
  if (a.rank() < 2)
    throw RankError(op, std::string(what) + " must have rank >= 2 ([M, N, batch...]), got " + describe(a));
  if (!is_inexact(a.dtype()))
    throw DTypeError(op, std::string(what) + " must have a float or complex dtype, got " + describe(a));
  MatrixShape r{a.extent(0), a.extent(1), 1};
  for (int i = 2; i < a.rank(); ++i) r.batches *= a.extent(i);
  // LAPACK takes 32-bit extents and leading dimensions.
  if (r.m > INT32_MAX / 2 || r.n > INT32_MAX / 2 || r.m * r.n > INT32_MAX / 2)
    throw ShapeError(op, std::string(what) + " is too large for LAPACK's 32-bit indices: " + describe(a));
  return r;
}

void require_square(const Tensor& a, std::string_view op, std::string_view what) {
  if (a.extent(0) != a.extent(1))
    throw ShapeError(op, std::string(what) + " must be square in its first two axes, got " + describe(a));
}

void require_same_batch(const Tensor& a, const Tensor& b, std::string_view op) {
  if (a.dtype() != b.dtype()) throw DTypeError(op, "operands must have the same dtype, got " + describe(a) + " and " + describe(b));
  bool same = a.rank() == b.rank();
  for (int i = 2; same && i < a.rank(); ++i) same = a.extent(i) == b.extent(i);
  if (!same) throw ShapeError(op, "batch axes (axes 2...) must match, got " + describe(a) + " and " + describe(b));
}

namespace {
// x − x is 0 for finite x and NaN for ±inf and NaN: one branch-free test per element.
template <class R> inline bool finite_bits(R v) noexcept { return v - v == R(0); }
}  // namespace

void require_finite(const Tensor& a, std::string_view op) {
  std::int64_t batches = 1;
  for (int i = 2; i < a.rank(); ++i) batches *= a.extent(i);
  const MatrixShape ms{a.extent(0), a.extent(1), batches};
  if (ms.m == 0 || ms.n == 0 || batches == 0) return;
  visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const T* base = static_cast<const T*>(a.data());
    const std::int64_t rs = a.stride(0), cs = a.stride(1);
    if (a.rank() == 2 && rs == 1 && cs == ms.m) {  // compact matrix: one flat scan
      const R* p = reinterpret_cast<const R*>(base);
      const std::int64_t count = ms.m * ms.n * (is_complex_v<T> ? 2 : 1);
      R acc = 0;
      for (std::int64_t i = 0; i < count; ++i) acc += p[i] - p[i];
      if (acc == R(0)) return;
    }
    for (std::int64_t b = 0; b < ms.batches; ++b) {
      const T* p = base + batch_offset(a, b);
      for (std::int64_t j = 0; j < ms.n; ++j)
        for (std::int64_t i = 0; i < ms.m; ++i) {
          const T v = p[i * rs + j * cs];
          bool ok;
          if constexpr (is_complex_v<T>) ok = finite_bits(v.real()) && finite_bits(v.imag());
          else ok = finite_bits(v);
          if (!ok)
            throw ArgumentError(op, "input must be finite, found a non-finite element at [" + std::to_string(i) + ", " + std::to_string(j) +
                                        "] of batch " + std::to_string(b) + " of " + describe(a));
        }
    }
  });
}

void require_into(const Tensor& out, std::string_view op, DType dtype, std::span<const std::int64_t> shape) {
  require_output(out, op, dtype, shape);
}

Dims matrix_shape(std::int64_t r, std::int64_t c, const Tensor& a) {
  Dims d;
  d.resize(a.rank());
  d[0] = r;
  d[1] = c;
  for (int i = 2; i < a.rank(); ++i) d[i] = a.extent(i);
  return d;
}

Dims vector_shape(std::int64_t r, const Tensor& a) {
  Dims d;
  d.resize(a.rank() - 1);
  d[0] = r;
  for (int i = 2; i < a.rank(); ++i) d[i - 1] = a.extent(i);
  return d;
}

Dims batch_shape(const Tensor& a) {
  Dims d;
  d.resize(a.rank() - 2);
  for (int i = 2; i < a.rank(); ++i) d[i - 2] = a.extent(i);
  return d;
}

std::int64_t batch_offset(const Tensor& a, std::int64_t b) noexcept {
  std::int64_t off = 0;
  for (int i = 2; i < a.rank() && b; ++i) {
    const std::int64_t e = a.extent(i);
    off += (b % e) * a.stride(i);
    b /= e;
  }
  return off;
}

void throw_numerical(std::string_view op, std::string_view routine, std::string_view what, const BatchFailure& f) {
  throw NumericalError(op, std::string(routine) + ": " + std::string(what) + " (info " + std::to_string(f.info) + ") in batch " +
                               std::to_string(f.batch),
                       f.info, f.batch);
}

}  // namespace tenferro::detail::linalg

namespace tenferro {

PlanCacheStats linalg_plan_cache_stats(Session& s) {
  s.check("linalg_plan_cache_stats");
  return detail::cpu_context(s).resources->linalg_plans.stats;
}

}  // namespace tenferro
