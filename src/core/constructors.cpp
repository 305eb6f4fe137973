// Tensor constructors: empty/zeros/ones/full, from data, arange, eye, random.
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "core/convert.hpp"
#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "tenferro/random.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

__extension__ typedef __int128 int128;  // exact span arithmetic for integer arange

struct TensorAccess {
  static Tensor owner(std::span<const std::int64_t> shape, DType dtype, std::string_view op, Device device = {}) {
    detail::require_valid_dtype(dtype, op);  // Note [Enums at the API boundary]
    Tensor t;
    if (device.kind == DeviceKind::cpu && shape.size() <= 8 && small_owner(t, shape, dtype)) return t;
    if (static_cast<int>(shape.size()) > kMaxRank)
      throw RankError(op, "rank " + std::to_string(shape.size()) + " exceeds the maximum " + std::to_string(kMaxRank));
    const std::int64_t n = checked_numel(shape, op);
    const std::int64_t bytes = checked_mul(n, static_cast<std::int64_t>(dtype_size(dtype)), op);
    t.set_layout(shape, detail::compact_strides(shape));
    t.block_ = detail::allocate_block_on(device, static_cast<std::size_t>(bytes), op);
    t.data_ = t.block_->data();
    t.dtype_ = dtype;
    return t;
  }

  static Tensor external(void* data, std::span<const std::int64_t> shape, std::span<const std::int64_t> strides_in, DType dtype,
                         ExternalOwner owner) {
    constexpr std::string_view op = "from_external";
    detail::require_valid_dtype(dtype, op);
    if (static_cast<int>(shape.size()) > kMaxRank)
      throw RankError(op, "rank " + std::to_string(shape.size()) + " exceeds the maximum " + std::to_string(kMaxRank));
    if (!strides_in.empty() && strides_in.size() != shape.size())
      throw RankError(op, "shape " + dims_string(shape) + " and strides " + dims_string(strides_in) + " differ in length");
    const std::int64_t n = checked_numel(shape, op);
    const Dims strides = strides_in.empty() ? detail::compact_strides(shape) : Dims(strides_in);
    const std::int64_t esize = static_cast<std::int64_t>(dtype_size(dtype));
    std::int64_t lo = 0, span = 0;
    bool zero_stride = false;
    if (n > 0) {
      const auto [l, h] = detail::offset_range(shape, strides, op);
      lo = l;
      std::int64_t extent = 0;  // h - l: may overflow when l is near INT64_MIN (found by fuzz_external)
      if (__builtin_sub_overflow(h, l, &extent))
        throw IndexError(op, "the layout spans offsets " + std::to_string(l) + " to " + std::to_string(h) + ", more than int64 holds");
      span = checked_mul(checked_add(extent, 1, op), esize, op);
      checked_mul(l, esize, op);
      for (std::size_t i = 0; i < shape.size(); ++i) {
        zero_stride |= strides[i] == 0 && shape[i] > 1;
        // As as_strided_view (Note [Sliced strides] in core/layout.hpp): an extent-1
        // axis never steps, but its stride must still fit in bytes; copies multiply it
        // by the element size (tf_tensor_create overflowed, UB; found by fuzz_external).
        if (shape[i] == 1) (void)checked_mul(strides[i], esize, op);
      }
      if (!data) throw ArgumentError(op, "null data for " + std::to_string(n) + " elements");
    }
    // The block's first byte as an address: a layout reaching below address 0 or past
    // the top cannot describe memory (data + lo * esize overflowed as a pointer, UB;
    // found by fuzz_external).
    const auto addr = reinterpret_cast<std::uintptr_t>(data);
    const auto below = static_cast<std::uintptr_t>(-static_cast<std::uint64_t>(lo)) * static_cast<std::uintptr_t>(esize);
    if (below > addr || static_cast<std::uintptr_t>(span) > UINTPTR_MAX - (addr - below))
      throw IndexError(op, "layout of shape " + dims_string(shape) + " and strides " + dims_string(strides) +
                               " reaches outside the address space from data " + std::to_string(addr));
    // Complex elements need the alignment of their component type.
    const std::size_t align = is_complex(dtype) ? dtype_size(dtype) / 2 : dtype_size(dtype);
    if (reinterpret_cast<std::uintptr_t>(data) % align != 0)
      throw ArgumentError(op, "data is not aligned to " + std::to_string(align) + " bytes for " + std::string(dtype_name(dtype)));
    Tensor t;
    t.set_layout(shape, strides);
    auto* h = new detail::StorageHeader();
    h->external = true;
    h->base = reinterpret_cast<std::byte*>(addr - below);
    h->bytes = h->capacity = static_cast<std::size_t>(span);
    h->release_external = owner.release;
    h->external_context = owner.context;
    t.block_ = h;
    t.data_ = static_cast<std::byte*>(data);
    t.dtype_ = dtype;
    if (owner.read_only || zero_stride) t.flags_ |= Tensor::kReadOnly;
    return t;
  }

  // Note [Fast owner]: every allocating op ends here, so the common case (rank <= 8,
  // extents and strides that fit the inline int32 layout, no overflow) is one pass that
  // writes the compact strides straight into the inline layout. Anything else (negative
  // extents, overflow, large layouts) returns false and takes the checked general path,
  // which reports the error or builds the heap layout.
  static bool small_owner(Tensor& t, std::span<const std::int64_t> shape, DType dtype) {
    constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
    const int r = static_cast<int>(shape.size());
    std::int64_t acc = 1;
    bool ok = true, empty = false;
    for (int i = 0; i < r; ++i) {
      const std::int64_t e = shape[static_cast<std::size_t>(i)];
      ok = ok && e >= 0 && e <= kMax && acc <= kMax;
      t.small_.ext[i] = static_cast<std::int32_t>(e);
      t.small_.str[i] = static_cast<std::int32_t>(acc);
      empty = empty || e == 0;
      ok = ok && !__builtin_mul_overflow(acc, e > 0 ? e : 1, &acc);
    }
    std::int64_t bytes = 0;
    if (!ok || __builtin_mul_overflow(empty ? 0 : acc, static_cast<std::int64_t>(dtype_size(dtype)), &bytes)) {
      t.small_ = {};
      return false;
    }
    t.rank_ = static_cast<std::uint8_t>(r);
    t.block_ = detail::allocate_block(static_cast<std::size_t>(bytes));
    t.data_ = t.block_->data();
    t.dtype_ = dtype;
    return true;
  }
};

namespace {
template <class T> T checked_scalar(Scalar v, std::string_view op) {
  return visit_dtype(op, v.natural_dtype(), [&](auto tag) -> T {
    using S = typename decltype(tag)::type;
    const S s = v.to<S>();
    // Integer and bool fills must be exact (2.5 into i32 is an error); float fills round,
    // but never drop an imaginary part.
    bool lossy = !is_inexact(dtype_of<T>) && !detail::exact_value<T>(s);
    if constexpr (is_complex_v<S> && !is_complex_v<T>) lossy = lossy || s.imag() != 0;
    if constexpr (is_inexact(dtype_of<T>)) {  // a finite value must stay finite
      const auto back = std::abs(detail::cast_value<T>(s));
      lossy = lossy || (std::isinf(back) && std::isfinite(std::abs(detail::cast_value<c128>(s))));
    }
    if (lossy)
      throw ArgumentError(op, "value " + v.to_string() + " does not convert exactly to " + std::string(dtype_name(dtype_of<T>)));
    return detail::cast_value<T>(s);
  });
}

template <class T, class F> void fill_with(Tensor& t, F&& f) {
  T* p = static_cast<T*>(t.mutable_data());
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) p[i] = f(i);
}
}  // namespace

Tensor Tensor::empty(std::span<const std::int64_t> shape, DType dtype) { return TensorAccess::owner(shape, dtype, "empty"); }

Tensor Tensor::empty(std::span<const std::int64_t> shape, DType dtype, Device device) { return TensorAccess::owner(shape, dtype, "empty", device); }

Tensor Tensor::from_external(void* data, std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, DType dtype,
                             ExternalOwner owner) {
  return TensorAccess::external(data, shape, strides, dtype, owner);
}

Tensor Tensor::zeros(std::span<const std::int64_t> shape, DType dtype) {
  Tensor t = TensorAccess::owner(shape, dtype, "zeros");
  std::memset(t.data_, 0, static_cast<std::size_t>(t.numel()) * dtype_size(dtype));
  return t;
}

Tensor Tensor::ones(std::span<const std::int64_t> shape, DType dtype) { return full(shape, Scalar(1), dtype); }

Tensor Tensor::full(std::span<const std::int64_t> shape, Scalar value, DType dtype) {
  Tensor t = TensorAccess::owner(shape, dtype, "full");
  visit_dtype("full", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = checked_scalar<T>(value, "full");
    fill_with<T>(t, [v](std::int64_t) { return v; });
  });
  return t;
}

Tensor Tensor::scalar(Scalar value) { return full({}, value, value.natural_dtype()); }
Tensor Tensor::scalar(Scalar value, DType dtype) { return full({}, value, dtype); }

Tensor Tensor::from_raw(std::span<const std::int64_t> shape, DType dtype, const void* data, std::int64_t count, bool row_major) {
  const char* op = row_major ? "from_row_major" : "from_data";
  Tensor t = TensorAccess::owner(shape, dtype, op);
  const std::int64_t n = t.numel();
  if (count != n)
    throw ShapeError(op, "shape " + dims_string(shape) + " needs " + std::to_string(n) + " elements, got " + std::to_string(count));
  const std::size_t es = dtype_size(dtype);
  if (!row_major || t.rank() <= 1) {
    if (n) std::memcpy(t.data_, data, static_cast<std::size_t>(n) * es);
    return t;
  }
  // Row-major source: its strides are the column-major strides of the reversed shape.
  const int r = t.rank();
  Dims idx(r, 0);
  Dims rstride(r, 0);
  std::int64_t acc = 1;
  for (int i = r - 1; i >= 0; --i) {
    rstride[i] = acc;
    acc *= shape[i];
  }
  const auto* src = static_cast<const std::byte*>(data);
  for (std::int64_t k = 0; k < n; ++k) {  // k walks the column-major destination
    std::int64_t off = 0;
    for (int i = 0; i < r; ++i) off += idx[i] * rstride[i];
    std::memcpy(t.data_ + k * static_cast<std::int64_t>(es), src + off * static_cast<std::int64_t>(es), es);
    for (int i = 0; i < r && ++idx[i] == shape[i]; ++i) idx[i] = 0;
  }
  return t;
}

Tensor Tensor::arange(Scalar start, Scalar stop, Scalar step, DType dtype) {
  constexpr std::string_view op = "arange";
  detail::require_valid_dtype(dtype, op);
  if (is_bool(dtype)) throw DTypeError(op, "dtype bool not supported");
  if (start.kind() == Scalar::Kind::complex || stop.kind() == Scalar::Kind::complex || step.kind() == Scalar::Kind::complex)
    throw ArgumentError(op, "start, stop and step must be real");
  const double a = start.to<double>(), b = stop.to<double>(), h = step.to<double>();
  if (h == 0 || !std::isfinite(h) || !std::isfinite(a) || !std::isfinite(b))
    throw ArgumentError(op, "bad range start=" + start.to_string() + " stop=" + stop.to_string() + " step=" + step.to_string());
  std::int64_t n;
  const bool integral = start.kind() != Scalar::Kind::floating && stop.kind() != Scalar::Kind::floating && step.kind() != Scalar::Kind::floating;
  if (integral) {
    // 128-bit arithmetic: the span of two int64 and |INT64_MIN| do not fit in int64.
    const int128 ia = start.to<std::int64_t>(), ib = stop.to<std::int64_t>(), ih = step.to<std::int64_t>();
    const int128 span = ih > 0 ? ib - ia : ia - ib;
    const int128 ah = ih > 0 ? ih : -ih;
    const int128 count = span <= 0 ? 0 : (span + ah - 1) / ah;
    if (count > INT64_MAX) throw IndexError(op, "range from " + start.to_string() + " to " + stop.to_string() + " has too many elements");
    n = static_cast<std::int64_t>(count);
  } else {
    const double c = std::ceil((b - a) / h);
    if (c > 1e15) throw ArgumentError(op, "range has too many elements");
    n = c > 0 ? static_cast<std::int64_t>(c) : 0;
  }
  const std::int64_t shape[1] = {n};
  Tensor t = TensorAccess::owner(shape, dtype, op);
  visit_dtype(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (integral) {
      const int128 ia = start.to<std::int64_t>(), ih = step.to<std::int64_t>();
      fill_with<T>(t, [&](std::int64_t i) { return detail::cast_value<T>(static_cast<std::int64_t>(ia + i * ih)); });
    } else {
      fill_with<T>(t, [&](std::int64_t i) { return detail::cast_value<T>(a + static_cast<double>(i) * h); });
    }
  });
  return t;
}

Tensor Tensor::arange(std::int64_t n, DType dtype) { return arange(Scalar(std::int64_t{0}), Scalar(n), Scalar(std::int64_t{1}), dtype); }

Tensor Tensor::eye(std::int64_t n, DType dtype, std::int64_t m) {
  detail::require_valid_dtype(dtype, "eye");
  if (m < 0) m = n;
  const std::int64_t shape[2] = {n, m};
  Tensor t = zeros(shape, dtype);
  visit_dtype("eye", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(t.data_);
    for (std::int64_t i = 0; i < std::min(n, m); ++i) p[i + i * n] = T(1);
  });
  return t;
}

// Random draws: element i (column-major) uses Philox block position+i, so the values
// are the same whatever order or thread computes them.
Tensor Tensor::uniform(Generator& gen, std::span<const std::int64_t> shape, DType dtype, double low, double high) {
  constexpr std::string_view op = "uniform";
  detail::require_valid_dtype(dtype, op);
  if (!is_inexact(dtype)) throw DTypeError(op, "dtype " + std::string(dtype_name(dtype)) + " not supported (needs a float or complex dtype)");
  if (!(low <= high) || !std::isfinite(low) || !std::isfinite(high))
    throw ArgumentError(op, "bad bounds low=" + detail::shortest_text(low) + " high=" + detail::shortest_text(high));
  Tensor t = TensorAccess::owner(shape, dtype, op);
  const std::uint64_t seed = gen.seed(), base = gen.advance(static_cast<std::uint64_t>(t.numel()));
  const double w = high - low;
  visit_dtype<DTypeSet::inexact>(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    fill_with<T>(t, [&](std::int64_t i) {
      const std::uint64_t c = base + static_cast<std::uint64_t>(i);
      // Round-to-nearest may land on `high` for f32; keep the interval half-open.
      auto draw = [&](int which) {
        R v = static_cast<R>(low + w * Generator::uniform01(seed, c, which));
        return v < static_cast<R>(high) || low == high ? v : std::nextafter(static_cast<R>(high), static_cast<R>(low));
      };
      if constexpr (is_complex_v<T>) return T(draw(0), draw(1));
      else return draw(0);
    });
  });
  return t;
}

Tensor Tensor::normal(Generator& gen, std::span<const std::int64_t> shape, DType dtype, double mean, double stddev) {
  constexpr std::string_view op = "normal";
  detail::require_valid_dtype(dtype, op);
  if (!is_inexact(dtype)) throw DTypeError(op, "dtype " + std::string(dtype_name(dtype)) + " not supported (needs a float or complex dtype)");
  if (!(stddev >= 0) || !std::isfinite(stddev) || !std::isfinite(mean))
    throw ArgumentError(op, "bad parameters mean=" + detail::shortest_text(mean) + " stddev=" + detail::shortest_text(stddev));
  Tensor t = TensorAccess::owner(shape, dtype, op);
  const std::uint64_t seed = gen.seed(), base = gen.advance(static_cast<std::uint64_t>(t.numel()));
  visit_dtype<DTypeSet::inexact>(op, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    fill_with<T>(t, [&](std::int64_t i) {
      // Box-Muller on the block's two 53-bit uniforms gives two independent normals.
      const std::uint64_t c = base + static_cast<std::uint64_t>(i);
      const double u1 = 1.0 - Generator::uniform01(seed, c, 0), u2 = Generator::uniform01(seed, c, 1);
      const double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * std::numbers::pi * u2;
      if constexpr (is_complex_v<T>) {
        const double s = stddev * std::numbers::sqrt2 / 2;
        return T(static_cast<R>(mean + s * r * std::cos(th)), static_cast<R>(s * r * std::sin(th)));
      } else {
        return static_cast<R>(mean + stddev * r * std::cos(th));
      }
    });
  });
  return t;
}

}  // namespace tenferro
