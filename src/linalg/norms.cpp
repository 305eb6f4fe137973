// The CPU's norm kernels (cpu/provider_kernels.hpp; the front ends in
// src/ops/linalg_norms.cpp): matrix norms (Frobenius, nuclear, spectral, 1, inf) and
// vector p-norms along axis 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/provider_kernels.hpp"
#include "linalg/solve_common.hpp"

namespace tenferro {
namespace detail::linalg {

template <class T> SvdResult svd_typed(Session& s, const Tensor& a, SvdMode mode, std::string_view op);

namespace {

// Two-pass scaled sum of squares (as LAPACK's lassq, simpler): no overflow or underflow
// for any finite input.
template <class T> real_t<T> scaled_norm2(const T* p, std::int64_t n, std::int64_t inc) noexcept {
  using R = real_t<T>;
  R big = 0;
  for (std::int64_t i = 0; i < n; ++i) big = std::max<R>(big, std::abs(p[i * inc]));
  if (big == 0 || !std::isfinite(big)) {
    for (std::int64_t i = 0; i < n; ++i)  // NaN anywhere gives NaN
      if (std::isnan(std::abs(p[i * inc]))) return std::numeric_limits<R>::quiet_NaN();
    return big;
  }
  R sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const R v = std::abs(p[i * inc]) / big;
    sum += v * v;
  }
  return big * std::sqrt(sum);
}

template <class T> Tensor matrix_norm_typed(Session& s, const Tensor& a, MatrixNorm kind) {
  using R = real_t<T>;
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  Tensor out = new_result(batch_shape(a).span(), dtype_of<R>);
  R* o = static_cast<R*>(out.mutable_data());
  const std::int64_t nb = out.numel();
  if (kind == MatrixNorm::nuclear || kind == MatrixNorm::spectral) {
    if (k == 0) {
      for (std::int64_t b = 0; b < nb; ++b) o[b] = 0;
      return out;
    }
    const SvdResult r = svd_typed<T>(s, a, SvdMode::values, "matrix_norm");
    const R* sv = r.S.data_ptr<R>();
    for (std::int64_t b = 0; b < nb; ++b) {
      R acc = 0;
      if (kind == MatrixNorm::spectral) acc = sv[b * k];
      else
        for (std::int64_t i = 0; i < k; ++i) acc += sv[b * k + i];
      o[b] = acc;
    }
    return out;
  }
  const T* base = static_cast<const T*>(a.data());
  const std::int64_t rs = a.stride(0), cs = a.stride(1);
  parallel_for(s, nb, 2 * m * n + 16, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* p = base + batch_offset(a, b);
      R r = 0;
      if (kind == MatrixNorm::frobenius) {
        R big = 0;
        for (std::int64_t j = 0; j < n; ++j) big = std::max(big, scaled_norm2(p + j * cs, m, rs));
        if (big > 0 && std::isfinite(big)) {
          R sum = 0;
          for (std::int64_t j = 0; j < n; ++j) {
            const R c = scaled_norm2(p + j * cs, m, rs) / big;
            sum += c * c;
          }
          r = big * std::sqrt(sum);
        } else {
          r = big;
        }
      } else if (kind == MatrixNorm::one) {
        for (std::int64_t j = 0; j < n; ++j) {
          R c = 0;
          for (std::int64_t i = 0; i < m; ++i) c += std::abs(p[i * rs + j * cs]);
          r = std::isnan(c) || std::isnan(r) ? std::numeric_limits<R>::quiet_NaN() : std::max(r, c);
        }
      } else {
        for (std::int64_t i = 0; i < m; ++i) {
          R c = 0;
          for (std::int64_t j = 0; j < n; ++j) c += std::abs(p[i * rs + j * cs]);
          r = std::isnan(c) || std::isnan(r) ? std::numeric_limits<R>::quiet_NaN() : std::max(r, c);
        }
      }
      o[b] = r;
    }
  });
  return out;
}

template <class T> Tensor vector_norm_typed(Session& s, const Tensor& x, double p) {
  using R = real_t<T>;
  const std::int64_t n = x.extent(0);
  Dims shape;
  shape.resize(x.rank() - 1);
  for (int i = 1; i < x.rank(); ++i) shape[i - 1] = x.extent(i);
  Tensor out = new_result(shape.span(), dtype_of<R>);
  R* o = static_cast<R*>(out.mutable_data());
  const T* base = static_cast<const T*>(x.data());
  const std::int64_t inc = x.stride(0);
  parallel_for(s, out.numel(), 4 * n + 16, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* v = base + batch_offset_vec(x, b);
      R r = 0;
      if (p == 2) {
        r = scaled_norm2(v, n, inc);
      } else if (std::isinf(p)) {
        r = n ? std::abs(v[0]) : (p > 0 ? R(0) : std::numeric_limits<R>::infinity());
        for (std::int64_t i = 0; i < n; ++i) {
          const R a = std::abs(v[i * inc]);
          if (std::isnan(a)) {
            r = a;
            break;
          }
          r = p > 0 ? std::max(r, a) : std::min(r, a);
        }
      } else if (p == 0) {
        for (std::int64_t i = 0; i < n; ++i) r += v[i * inc] != T(0) ? R(1) : R(0);
      } else if (p == 1) {
        for (std::int64_t i = 0; i < n; ++i) r += std::abs(v[i * inc]);
      } else {
        // (sum |x|^p)^(1/p) scaled by max |x| (p > 0) to avoid overflow.
        R big = 0;
        for (std::int64_t i = 0; i < n; ++i) big = std::max<R>(big, std::abs(v[i * inc]));
        const bool scale = p > 0 && big > 0 && std::isfinite(big);
        double acc = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          const double a = static_cast<double>(std::abs(v[i * inc])) / (scale ? static_cast<double>(big) : 1.0);
          acc += std::pow(a, p);
        }
        r = static_cast<R>(std::pow(acc, 1.0 / p) * (scale ? static_cast<double>(big) : 1.0));
      }
      o[b] = r;
    }
  });
  return out;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

Tensor matrix_norm_kernel(Session& s, const Tensor& a, MatrixNorm kind) {
  return visit_dtype<DTypeSet::inexact>("matrix_norm", a.dtype(), [&](auto tag) {
    return detail::linalg::matrix_norm_typed<typename decltype(tag)::type>(s, a, kind);
  });
}

Tensor vector_norm_kernel(Session& s, const Tensor& x, double p) {
  return visit_dtype<DTypeSet::inexact>("vector_norm", x.dtype(), [&](auto tag) {
    return detail::linalg::vector_norm_typed<typename decltype(tag)::type>(s, x, p);
  });
}

}  // namespace cpu
}  // namespace tenferro
