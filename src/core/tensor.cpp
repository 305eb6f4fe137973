// Tensor handle: layout storage, views, element access. Constructors are in
// constructors.cpp and printing in print.cpp.
#include "tenferro/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/layout.hpp"

namespace tenferro {

// The default constructor, copies, moves and the destructor are inline in tensor.hpp (Note
// [Inline handle moves]).

void Tensor::copy_big_layout(const Tensor& o) {
  big_ = new std::int64_t[2 * static_cast<std::size_t>(o.rank_)];
  std::memcpy(big_, o.big_, 2 * o.rank_ * sizeof(std::int64_t));
}

void Tensor::free_layout() noexcept {
  delete[] big_;
  big_ = nullptr;
}

void Tensor::set_layout(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides) {
  const int r = static_cast<int>(shape.size());
  if (r > kMaxRank) throw RankError("tensor", "rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  free_layout();
  rank_ = static_cast<std::uint8_t>(r);
  bool fits = r <= 8;
  constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  for (int i = 0; fits && i < r; ++i)
    fits = shape[i] <= hi && strides[i] >= lo && strides[i] <= hi;
  if (fits) {
    small_ = {};
    for (int i = 0; i < r; ++i) {
      small_.ext[i] = static_cast<std::int32_t>(shape[i]);
      small_.str[i] = static_cast<std::int32_t>(strides[i]);
    }
  } else {
    big_ = new std::int64_t[2 * static_cast<std::size_t>(r)];
    std::copy(shape.begin(), shape.end(), big_);
    std::copy(strides.begin(), strides.end(), big_ + r);
  }
}

Shape Tensor::shape() const {
  Shape s;
  s.resize(rank_);
  for (int i = 0; i < rank_; ++i) s[i] = extent(i);
  return s;
}

Dims Tensor::strides() const {
  Dims s;
  s.resize(rank_);
  for (int i = 0; i < rank_; ++i) s[i] = stride(i);
  return s;
}

std::int64_t Tensor::offset() const noexcept {
  if (!block_) return 0;
  return static_cast<std::int64_t>(data_ - block_->data()) / static_cast<std::int64_t>(dtype_size(dtype_));
}

bool Tensor::is_contiguous_slow() const noexcept {
  std::uint64_t expect = 1;  // unsigned as in numel(): only an empty tensor wraps
  bool ok = true;
  for (int i = 0; i < rank_; ++i) {
    const std::int64_t e = extent(i);
    if (e == 0) return true;
    ok = ok && (e == 1 || static_cast<std::uint64_t>(stride(i)) == expect);
    expect *= static_cast<std::uint64_t>(e);
  }
  return ok;
}

void* Tensor::mutable_data(std::string_view op) const {
  if (read_only()) throw ArgumentError(op, "tensor is a read-only (broadcast) view");
  note_write();
  return data_;
}

void Tensor::check_dtype(DType d, std::string_view op) const {
  if (!defined()) throw ArgumentError(op, "tensor is undefined");
  if (d != dtype_)
    throw DTypeError(op, "requested " + std::string(dtype_name(d)) + " but the tensor is " + std::string(dtype_name(dtype_)));
}

const void* Tensor::element_ptr(std::span<const std::int64_t> index, DType d, bool write) const {
  const char* op = write ? "set" : "item";
  check_dtype(d, op);
  if (device().kind != DeviceKind::cpu)  // Note [Per-device allocation]: the host never reads device memory
    throw UnsupportedError(op, "element access on a " + std::string(device_name(device().kind)) + " tensor (copy it to the CPU first)");
  if (write && read_only()) throw ArgumentError(op, "tensor is a read-only (broadcast) view");
  if (write) note_write();
  if (static_cast<int>(index.size()) != rank_)
    throw RankError(op, "index " + dims_string(index) + " has " + std::to_string(index.size()) + " entries for a rank-" + std::to_string(rank_) + " tensor");
  std::int64_t off = 0;
  for (int i = 0; i < rank_; ++i) {
    std::int64_t k = index[i];
    const std::int64_t e = extent(i);
    if (k < 0) k += e;
    if (k < 0 || k >= e)
      throw IndexError(op, "index " + dims_string(index) + " out of range for shape " + shape().to_string());
    off += k * stride(i);
  }
  return data_ + off * static_cast<std::int64_t>(dtype_size(dtype_));
}

Scalar Tensor::at(std::span<const std::int64_t> index) const {
  return visit_dtype("at", dtype_, [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(*static_cast<const T*>(element_ptr(index, dtype_)));
  });
}

// ---- views ----

Tensor Tensor::make_view(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides, std::byte* data,
                         bool read_only) const {
  Tensor v;
  v.set_layout(shape, strides);
  v.block_ = block_;
  detail::retain_block(block_);
  v.data_ = data;
  v.dtype_ = dtype_;
  v.flags_ = read_only ? kReadOnly : 0;
  return v;
}

Tensor Tensor::carve_view(std::size_t byte_offset, std::span<const std::int64_t> shape, DType dtype) const {
  // Compact strides straight into the inline layout (a compiled run carves every
  // intermediate this way: Note [Arena plan]); the general path when they do not fit.
  Tensor v;
  const int r = static_cast<int>(shape.size());
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  bool fits = r <= 8;
  std::int64_t acc = 1;
  for (int i = 0; fits && i < r; ++i) {
    const std::int64_t e = shape[static_cast<std::size_t>(i)];
    fits = e <= kMax && acc <= kMax;
    v.small_.ext[i] = static_cast<std::int32_t>(e);
    v.small_.str[i] = static_cast<std::int32_t>(acc);
    acc *= e > 0 ? e : 1;  // the block holds the tensor, so the product fits
  }
  if (fits) {
    v.rank_ = static_cast<std::uint8_t>(r);
  } else {
    v.small_ = {};
    v.set_layout(shape, detail::compact_strides(shape));
  }
  v.block_ = block_;
  detail::retain_block(block_);
  v.data_ = block_->data() + byte_offset;
  v.dtype_ = dtype;
  return v;
}

namespace {
void require_defined(const Tensor& t, std::string_view op) {
  if (!t.defined()) throw ArgumentError(op, "tensor is undefined");
}
}  // namespace

Tensor Tensor::permute_view(std::span<const std::int64_t> perm) const {
  constexpr std::string_view op = "permute_view";
  require_defined(*this, op);
  detail::check_permutation(perm, rank_, op);
  Dims sh(rank_, 0), st(rank_, 0);
  for (int i = 0; i < rank_; ++i) {
    sh[i] = extent(static_cast<int>(perm[i]));
    st[i] = stride(static_cast<int>(perm[i]));
  }
  return make_view(sh, st, data_, read_only());
}

Tensor Tensor::transpose_view(int axis0, int axis1) const {
  constexpr std::string_view op = "transpose_view";
  require_defined(*this, op);
  if (rank_ < 2) throw RankError(op, "needs rank >= 2, got rank " + std::to_string(rank_));
  const int a = detail::normalize_axis(axis0, rank_, op), b = detail::normalize_axis(axis1, rank_, op);
  Dims perm(rank_, 0);
  for (int i = 0; i < rank_; ++i) perm[i] = i;
  std::swap(perm[a], perm[b]);
  return permute_view(perm);
}

Tensor Tensor::slice_view(int axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  constexpr std::string_view op = "slice_view";
  require_defined(*this, op);
  const int ax = detail::normalize_axis(axis, rank_, op);
  if (step == 0) throw ArgumentError(op, "step must not be 0");
  const std::int64_t n = extent(ax);
  const auto [first, count] = detail::python_slice(start, stop, step, n);
  Dims sh = shape(), st = strides();
  sh[ax] = count;
  st[ax] = detail::sliced_stride(stride(ax), step, count, static_cast<std::int64_t>(dtype_size(dtype_)), op);
  // Only a view with elements moves the data pointer: an empty tensor may have an
  // extent near INT64_MAX on this axis (shape [2^63 - 1, 0]), and first * stride * size
  // then overflowed (UB) for a pointer that addresses nothing (found by fuzz_einsum).
  std::byte* d = count > 0 && numel() > 0 ? data_ + first * stride(ax) * static_cast<std::int64_t>(dtype_size(dtype_)) : data_;
  return make_view(sh, st, d, read_only());
}

Tensor Tensor::reshape_view(std::span<const std::int64_t> new_shape_in) const {
  constexpr std::string_view op = "reshape_view";
  require_defined(*this, op);
  Dims new_shape = detail::infer_reshape(new_shape_in, numel(), op);
  Dims new_strides;
  if (!detail::reshape_strides(shape(), strides(), new_shape, new_strides))
    throw ArgumentError(op, "cannot view shape " + shape().to_string() + " with strides " + strides().to_string() +
                                " as " + new_shape.to_string() + " without a copy (use reshape)");
  return make_view(new_shape, new_strides, data_, read_only());
}

Tensor Tensor::broadcast_view(std::span<const std::int64_t> target) const {
  constexpr std::string_view op = "broadcast_view";
  require_defined(*this, op);
  const int r = static_cast<int>(target.size());
  if (r < rank_) throw ShapeError(op, "cannot broadcast shape " + shape().to_string() + " to lower rank shape " + dims_string(target));
  checked_numel(target, op);
  Dims st(r, 0);
  bool stretched = false;
  for (int i = 0; i < r; ++i) {
    const std::int64_t e = i < rank_ ? extent(i) : 1;
    if (e == target[i]) {
      st[i] = i < rank_ ? stride(i) : 0;
    } else if (e == 1) {
      st[i] = 0;
      stretched = true;
    } else {
      throw ShapeError(op, "cannot broadcast shape " + shape().to_string() + " to " + dims_string(target));
    }
  }
  return make_view(target, st, data_, read_only() || stretched);
}

Tensor Tensor::real_view() const {
  require_defined(*this, "real_view");
  if (!is_complex(dtype_)) throw DTypeError("real_view", "needs a complex dtype, got " + std::string(dtype_name(dtype_)));
  Dims st = strides();
  for (auto& s : st) s = checked_mul(s, 2, "real_view");
  Tensor v = make_view(shape(), st, data_, read_only());
  v.dtype_ = real_dtype(dtype_);
  return v;
}

Tensor Tensor::imag_view() const {
  require_defined(*this, "imag_view");
  if (!is_complex(dtype_)) throw DTypeError("imag_view", "needs a complex dtype, got " + std::string(dtype_name(dtype_)));
  Tensor v = real_view();
  v.data_ += dtype_size(v.dtype_);
  return v;
}

Tensor Tensor::as_strided_view(std::span<const std::int64_t> shape_in, std::span<const std::int64_t> strides_in,
                               std::int64_t off) const {
  constexpr std::string_view op = "as_strided_view";
  require_defined(*this, op);
  if (shape_in.size() != strides_in.size())
    throw RankError(op, "shape " + dims_string(shape_in) + " and strides " + dims_string(strides_in) + " differ in length");
  const std::int64_t n = checked_numel(shape_in, op);
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(dtype_));
  const std::int64_t capacity = static_cast<std::int64_t>(block_->bytes) / esize;
  bool zero_stride = false;
  if (n > 0) {
    const auto [lo, hi] = detail::offset_range(shape_in, strides_in, op);
    if (checked_add(off, lo, op) < 0 || checked_add(off, hi, op) >= capacity)
      throw IndexError(op, "view with shape " + dims_string(shape_in) + ", strides " + dims_string(strides_in) + " and offset " +
                               std::to_string(off) + " reaches outside the storage of " + std::to_string(capacity) + " elements");
    for (std::size_t i = 0; i < shape_in.size(); ++i) {
      zero_stride |= strides_in[i] == 0 && shape_in[i] > 1;
      // The storage check bounds only axes that step; an extent-1 axis's stride must
      // still fit in bytes (Note [Sliced strides] in core/layout.hpp).
      if (shape_in[i] == 1) (void)checked_mul(strides_in[i], esize, op);
    }
  } else if (off < 0 || off > capacity) {
    // An empty view reads nothing, but its data pointer is still formed from the
    // offset: it must point into the storage or just past it (an offset such as
    // INT64_MAX overflowed off * esize, undefined behaviour).
    throw IndexError(op, "empty view with offset " + std::to_string(off) + " lies outside the storage of " +
                             std::to_string(capacity) + " elements");
  }
  return make_view(shape_in, strides_in, block_->data() + off * esize, read_only() || zero_stride);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace tenferro
