// The CPU backend's data-dependent checks (Note [Data-dependent checks]).
#include "core/convert.hpp"
#include "core/layout.hpp"
#include "ops/kernel_table.hpp"

namespace tenferro::detail {
namespace {

// x − x is 0 for finite x and NaN for ±inf and NaN: one branch-free test per element.
template <class R> inline bool finite_bits(R v) noexcept { return v - v == R(0); }

/// Position of the first element of t (elements of type T at `base`, any strides) with
/// bad(v), walking in column-major order, or -1.
template <class T, class Bad> std::int64_t first_where(const T* base, const Tensor& t, Bad bad) {
  const std::int64_t n = t.numel();
  const int r = t.rank();
  std::int64_t idx[kMaxRank] = {};
  std::int64_t off = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if (bad(base[off])) return k;
    for (int a = 0; a < r; ++a) {  // odometer step
      off += t.stride(a);
      if (++idx[a] < t.extent(a)) break;
      off -= t.stride(a) * t.extent(a);
      idx[a] = 0;
    }
  }
  return -1;
}

std::int64_t first_nonfinite_cpu(Session&, const Tensor& t) {
  const std::int64_t n = t.numel();
  if (n == 0) return -1;
  return visit_dtype<DTypeSet::inexact>("first_nonfinite", t.dtype(), [&](auto tag) -> std::int64_t {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const T* base = static_cast<const T*>(t.data());
    if (t.is_contiguous()) {  // one flat scan first: the common, all-finite case
      const R* p = reinterpret_cast<const R*>(base);
      const std::int64_t count = n * (is_complex_v<T> ? 2 : 1);
      R acc = 0;
      for (std::int64_t i = 0; i < count; ++i) acc += p[i] - p[i];
      if (acc == R(0)) return -1;
    }
    return first_where(base, t, [](T v) {
      if constexpr (is_complex_v<T>) return !(finite_bits(v.real()) && finite_bits(v.imag()));
      else return !finite_bits(v);
    });
  });
}

/// Position of the first element of integer tensor t with bad(v), or -1.
template <class Bad> std::int64_t first_integer_where(const Tensor& t, Bad bad) {
  if (t.numel() == 0) return -1;
  return visit_dtype<DTypeSet::integer>("integer data check", t.dtype(), [&](auto tag) -> std::int64_t {
    using T = typename decltype(tag)::type;
    return first_where(static_cast<const T*>(t.data()), t, bad);
  });
}

std::int64_t first_zero_cpu(Session&, const Tensor& t) {
  return first_integer_where(t, [](auto v) { return v == 0; });
}
std::int64_t first_negative_cpu(Session&, const Tensor& t) {
  return first_integer_where(t, [](auto v) { return v < 0; });
}

std::int64_t first_inexact_cpu(Session&, const Tensor& t, DType to) {
  if (t.numel() == 0 || t.dtype() == to) return -1;
  return visit_dtype("convert", t.dtype(), [&](auto from_tag) -> std::int64_t {
    using From = typename decltype(from_tag)::type;
    return visit_dtype("convert", to, [&](auto to_tag) -> std::int64_t {
      using To = typename decltype(to_tag)::type;
      return first_where(static_cast<const From*>(t.data()), t, [](From v) { return !exact_value<To>(v); });
    });
  });
}

std::int64_t first_out_of_range_cpu(Session&, const Tensor& t, std::int64_t n) {
  return first_integer_where(t, [n](auto v) { return static_cast<std::int64_t>(v) < -n || static_cast<std::int64_t>(v) >= n; });
}

constexpr DataChecks kCpuChecks{&first_nonfinite_cpu, &first_zero_cpu, &first_negative_cpu, &first_inexact_cpu, &first_out_of_range_cpu};

}  // namespace

const DataChecks& cpu_data_checks() noexcept { return kCpuChecks; }

}  // namespace tenferro::detail
