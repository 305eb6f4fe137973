#pragma once
// Test support: random host tensors in every layout the ops must accept, index loops for
// reference implementations, and tolerance helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// Layouts every op is checked on.
enum class Layout { contiguous, transposed, negative_stride, broadcast };
inline const Layout kAllLayouts[] = {Layout::contiguous, Layout::transposed, Layout::negative_stride, Layout::broadcast};
inline const DType kAllDTypes[] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
inline const DType kNumericDTypes[] = {DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
inline const DType kInexactDTypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};
inline const DType kFloatDTypes[] = {DType::f32, DType::f64};

inline std::string layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "contiguous";
    case Layout::transposed: return "transposed";
    case Layout::negative_stride: return "negative_stride";
    case Layout::broadcast: return "broadcast";
  }
  return "?";
}

/// Random value of type T from `rng`: ints in [lo, hi], bools 0/1, floats in [lo, hi),
/// complex with both parts so.
template <class T> T random_value(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    return static_cast<T>(d(rng));
  } else if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(u(rng)), static_cast<R>(u(rng)));
  } else {
    return static_cast<T>(u(rng));
  }
}

/// A compact random tensor with values in [lo, hi].
inline Tensor random_tensor(std::mt19937_64& rng, const Shape& shape, DType dtype, double lo = -3, double hi = 3) {
  Tensor t = Tensor::empty(shape.span(), dtype);
  visit_dtype("random_tensor", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.mutable_data());
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = random_value<T>(rng, lo, hi);
  });
  return t;
}

/// A random tensor with logical `shape` laid out as `layout`:
/// - contiguous: compact column-major;
/// - transposed: a compact tensor of the reversed shape, permuted back (row-major strides);
/// - negative_stride: every axis reversed through a step -1 slice of a compact tensor;
/// - broadcast: axis 0 (if its extent > 1, else the last axis > 1) stretched from
///   extent 1 (read-only view, zero stride).
inline Tensor random_layout(std::mt19937_64& rng, const Shape& shape, DType dtype, Layout layout, double lo = -3, double hi = 3) {
  const int r = shape.size();
  switch (layout) {
    case Layout::contiguous: return random_tensor(rng, shape, dtype, lo, hi);
    case Layout::transposed: {
      Shape rev(r, 0);
      Dims perm(r, 0);
      for (int i = 0; i < r; ++i) {
        rev[i] = shape[r - 1 - i];
        perm[i] = r - 1 - i;
      }
      return random_tensor(rng, rev, dtype, lo, hi).permute_view(perm);
    }
    case Layout::negative_stride: {
      Tensor t = random_tensor(rng, shape, dtype, lo, hi);
      for (int i = 0; i < r; ++i) t = t.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
      return t;
    }
    case Layout::broadcast: {
      int ax = -1;
      for (int i = 0; i < r && ax < 0; ++i)
        if (shape[i] > 1) ax = i;
      if (ax < 0) return random_tensor(rng, shape, dtype, lo, hi);
      Shape base = shape;
      base[ax] = 1;
      return random_tensor(rng, base, dtype, lo, hi).broadcast_view(shape.span());
    }
  }
  return {};
}

/// Calls f(index) for every multi-index of `shape` (column-major order).
inline void for_each_index(const Shape& shape, const std::function<void(const Dims&)>& f) {
  const int r = shape.size();
  for (int i = 0; i < r; ++i)
    if (shape[i] == 0) return;
  Dims idx(r, 0);
  for (;;) {
    f(idx);
    int i = 0;
    for (; i < r; ++i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
    if (i == r) return;
  }
}

/// Element as complex<double> (for comparisons across dtypes).
inline std::complex<double> value_at(const Tensor& t, const Dims& idx) {
  return visit_dtype("value_at", t.dtype(), [&](auto tag) -> std::complex<double> {
    using T = typename decltype(tag)::type;
    const T v = t.item<T>(idx.span());
    if constexpr (is_complex_v<T>) return {static_cast<double>(v.real()), static_cast<double>(v.imag())};
    else return {static_cast<double>(v), 0.0};
  });
}

/// Unit roundoff of a dtype (0 for exact dtypes).
inline double epsilon_of(DType d) {
  switch (real_dtype(d)) {
    case DType::f32: return 1.2e-7;
    case DType::f64: return 2.3e-16;
    default: return 0;
  }
}

/// |a - b| <= tol * (1 + |b|), NaN == NaN, inf == inf of the same sign.
inline bool close(std::complex<double> a, std::complex<double> b, double tol) {
  auto part = [tol](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (std::isinf(x) || std::isinf(y)) return x == y;
    return std::abs(x - y) <= tol * (1 + std::abs(y));
  };
  return part(a.real(), b.real()) && part(a.imag(), b.imag());
}

/// Fills every byte of `t`'s storage reachable by its view with a pattern, returns a
/// copy of the storage bytes for "output untouched" checks.
inline std::vector<unsigned char> snapshot(const Tensor& t) {
  const auto* b = t.block();
  const auto* p = reinterpret_cast<const unsigned char*>(b + 1);
  return std::vector<unsigned char>(p, p + b->bytes);
}

/// EXPECT that `t`'s storage bytes equal `before`.
inline void expect_untouched(const Tensor& t, const std::vector<unsigned char>& before) {
  EXPECT_EQ(snapshot(t), before) << "output was written although the op failed";
}

}  // namespace tenferro::testing
