#pragma once
// Test support: random host tensors in every layout the ops must accept (inputs and
// writable outputs), index loops and element helpers for reference implementations,
// tolerance and formatting helpers. Error checks: expect_error.hpp; allocation
// counting: alloc_counter.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <sstream>
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

/// A compact f64 tensor whose storage element i holds i (views of it show which storage
/// element each logical element reads).
inline Tensor iota_f64(std::initializer_list<std::int64_t> shape) {
  Tensor t = Tensor::empty(shape, DType::f64);
  auto* p = static_cast<double*>(t.mutable_data());
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<double>(i);
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

/// A writable output of `shape` filled with random values, laid out by `variant % 4` as
/// 0 compact, 1 transposed, 2 negative strides, 3 every other element of a larger buffer.
inline Tensor out_view(std::mt19937_64& rng, const Shape& shape, DType dt, int variant) {
  const int r = shape.size();
  switch (variant % 4) {
    case 1: return random_layout(rng, shape, dt, Layout::transposed);
    case 2: return random_layout(rng, shape, dt, Layout::negative_stride);
    case 3: {
      Shape big = shape;
      for (int i = 0; i < r; ++i) big[i] = 2 * shape[i] + 1;
      Tensor t = random_tensor(rng, big, dt);
      for (int i = 0; i < r; ++i) t = t.slice_view(i, 1, Tensor::kSliceEnd, 2);
      return t;
    }
    default: return random_tensor(rng, shape, dt);
  }
}

/// A uniformly drawn integer in [lo, hi].
inline std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

/// A view of `t`'s storage with explicit layout (braced shape and strides at the call
/// site); throws what Tensor::as_strided_view throws.
inline Tensor strided(const Tensor& t, const Dims& shape, const Dims& strides, std::int64_t offset) {
  return t.as_strided_view(shape, strides, offset);
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

/// Index into an operand of `t`'s shape for result index `idx` of a broadcast
/// (extent-1 axes stretch; axes beyond `t`'s rank are dropped).
inline Dims operand_index(const Tensor& t, const Dims& idx) {
  Dims r(t.rank(), 0);
  for (int i = 0; i < t.rank(); ++i) r[i] = t.extent(i) == 1 ? 0 : idx[i];
  return r;
}

/// `u` converted to T as the ops convert: complex to real takes the real part, to bool
/// tests != 0, NaN to an integer gives 0 (the other out-of-range float to integer
/// conversions are undefined; callers avoid them).
template <class T, class U> T convert_elem(U u) {
  if constexpr (std::is_same_v<T, U>) {
    return u;
  } else if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    if constexpr (is_complex_v<U>) return T(static_cast<R>(u.real()), static_cast<R>(u.imag()));
    else return T(static_cast<R>(u), R(0));
  } else if constexpr (is_complex_v<U>) {
    return convert_elem<T>(u.real());
  } else if constexpr (std::is_same_v<T, bool>) {
    return u != U(0);
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<U>) {
    return std::isnan(u) ? T(0) : static_cast<T>(u);
  } else {
    return static_cast<T>(u);
  }
}

/// Element `idx` of `t` converted to T (the promotion the op performs).
template <class T> T read_as(const Tensor& t, const Dims& idx) {
  return visit_dtype("read_as", t.dtype(), [&](auto tag) -> T {
    using U = typename decltype(tag)::type;
    return convert_elem<T>(t.item<U>(idx.span()));
  });
}

/// Value of operand `o` (a tensor broadcast to the result, or a scalar) at result index
/// `idx`, in the compute type T.
template <class T> T operand_value(const Operand& o, const Dims& idx) {
  if (o.is_tensor()) return read_as<T>(o.tensor(), operand_index(o.tensor(), idx));
  return o.scalar().to<T>();
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

/// Copies element `si` of `src` into element `di` of `dst` (same dtype).
inline void copy_elem(const Tensor& dst, const Dims& di, const Tensor& src, const Dims& si) {
  visit_dtype("copy_elem", src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    dst.set<T>(di.span(), src.item<T>(si.span()));
  });
}

/// The logical values of compact `c` laid out as `layout` (the layouts of random_layout;
/// for broadcast: the first slice of the first axis > 1, stretched, so a reference that
/// reads through the view sees those values).
inline Tensor with_layout(const Tensor& c, Layout layout) {
  const Shape shape = c.shape();
  const int r = shape.size();
  switch (layout) {
    case Layout::contiguous: return c;
    case Layout::transposed: {
      Shape rev(r, 0);
      Dims perm(r, 0);
      for (int i = 0; i < r; ++i) rev[i] = shape[r - 1 - i], perm[i] = r - 1 - i;
      const Tensor base = Tensor::empty(rev.span(), c.dtype());
      for_each_index(shape, [&](const Dims& idx) {
        Dims ri(r, 0);
        for (int i = 0; i < r; ++i) ri[i] = idx[r - 1 - i];
        copy_elem(base, ri, c, idx);
      });
      return base.permute_view(perm);
    }
    case Layout::negative_stride: {
      const Tensor base = Tensor::empty(shape.span(), c.dtype());
      for_each_index(shape, [&](const Dims& idx) {
        Dims fi(r, 0);
        for (int i = 0; i < r; ++i) fi[i] = shape[i] - 1 - idx[i];
        copy_elem(base, fi, c, idx);
      });
      Tensor t = base;
      for (int i = 0; i < r; ++i) t = t.slice_view(i, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
      return t;
    }
    case Layout::broadcast: {
      int ax = -1;
      for (int i = 0; i < r && ax < 0; ++i)
        if (shape[i] > 1) ax = i;
      if (ax < 0) return c;
      Shape bs = shape;
      bs[ax] = 1;
      const Tensor base = Tensor::empty(bs.span(), c.dtype());
      for_each_index(bs, [&](const Dims& idx) { copy_elem(base, idx, c, idx); });
      return base.broadcast_view(shape.span());
    }
  }
  return {};
}

/// The bytes of a compact tensor's elements (for bit-for-bit comparisons of results).
/// max |a - b| / (1 + max |b|) over the elements (a and b of one shape and dtype).
inline double relative_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_EQ(a.dtype(), b.dtype());
  double num = 0, den = 0;
  for_each_index(b.shape(), [&](const Dims& i) {
    num = std::max(num, std::abs(value_at(a, i) - value_at(b, i)));
    den = std::max(den, std::abs(value_at(b, i)));
  });
  return num / (1 + den);
}

inline std::vector<unsigned char> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  return std::vector<unsigned char>(p, p + t.numel() * static_cast<std::int64_t>(dtype_size(t.dtype())));
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

/// |a - b| <= tol (1 + |b|) on the complex magnitude (complex rounding errors scale with
/// |z|, not with each part); NaN/inf parts as close().
inline bool near(std::complex<double> a, std::complex<double> b, double tol) {
  if (std::isnan(a.real()) || std::isnan(a.imag()) || std::isnan(b.real()) || std::isnan(b.imag()) || std::isinf(a.real()) ||
      std::isinf(a.imag()) || std::isinf(b.real()) || std::isinf(b.imag()))
    return close(a, b, tol);
  return std::abs(a - b) <= tol * (1 + std::abs(b));
}

/// Exact equality, except that NaN equals NaN (per part for complex).
template <class T> bool identical(T a, T b) {
  if constexpr (is_complex_v<T>) return identical(a.real(), b.real()) && identical(a.imag(), b.imag());
  else if constexpr (std::is_floating_point_v<T>) return (std::isnan(a) && std::isnan(b)) || a == b;
  else return a == b;
}

/// `v` as text for failure messages: bools as true/false, small integer types as
/// numbers (not characters), floats with 17 significant digits.
template <class V> std::string show(V v) {
  std::ostringstream os;
  os.precision(17);
  if constexpr (std::is_same_v<V, bool>) os << (v ? "true" : "false");
  else if constexpr (std::is_integral_v<V>) os << static_cast<long long>(v);
  else os << v;
  return os.str();
}

/// A copy of every byte of `t`'s storage block (not only the bytes its view reaches),
/// for "output untouched" checks.
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
