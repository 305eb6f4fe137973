#pragma once
/// \file typed_tensor.hpp
/// `TypedTensor<T>`: a Tensor whose dtype is fixed at compile time. It wraps a Tensor
/// (same handle, same storage), converts to `const Tensor&` for ops, and gives typed
/// element access without a dtype check per call.

#include "tenferro/tensor.hpp"

namespace tenferro {

/// Tensor with static element type T (one of the dtype table's types).
template <class T> class TypedTensor {
 public:
  static constexpr DType kDType = dtype_of<T>;

  /// Undefined tensor.
  TypedTensor() = default;
  /// Wraps `t`; DTypeError when its dtype is not T.
  explicit TypedTensor(Tensor t) : t_(std::move(t)) {
    if (t_.defined() && t_.dtype() != kDType)
      throw DTypeError("TypedTensor", "tensor has dtype " + std::string(dtype_name(t_.dtype())) + ", expected " +
                                          std::string(dtype_name(kDType)));
  }

  static TypedTensor zeros(std::initializer_list<std::int64_t> shape) { return TypedTensor(Tensor::zeros(shape, kDType)); }
  static TypedTensor ones(std::initializer_list<std::int64_t> shape) { return TypedTensor(Tensor::ones(shape, kDType)); }
  static TypedTensor full(std::initializer_list<std::int64_t> shape, T value) { return TypedTensor(Tensor::full(shape, Scalar(value), kDType)); }
  /// Column-major data.
  static TypedTensor from_data(std::initializer_list<std::int64_t> shape, std::initializer_list<T> data) {
    return TypedTensor(Tensor::from_data<T>(shape, data));
  }
  static TypedTensor from_data(std::span<const std::int64_t> shape, std::span<const T> data) {
    return TypedTensor(Tensor::from_data<T>(shape, data));
  }
  /// Row-major data, stored column-major.
  static TypedTensor from_row_major(std::initializer_list<std::int64_t> shape, std::initializer_list<T> data) {
    return TypedTensor(Tensor::from_row_major<T>(shape, data));
  }

  const Tensor& tensor() const noexcept { return t_; }
  operator const Tensor&() const noexcept { return t_; }
  int rank() const noexcept { return t_.rank(); }
  std::int64_t extent(int axis) const noexcept { return t_.extent(axis); }
  Shape shape() const { return t_.shape(); }
  std::int64_t numel() const noexcept { return t_.numel(); }

  /// Element (i, j, ...) with bounds checks (IndexError/RankError).
  template <class... I> T operator()(I... index) const {
    const std::int64_t idx[] = {static_cast<std::int64_t>(index)...};
    return t_.item<T>(std::span<const std::int64_t>(idx, sizeof...(I)));
  }
  /// Writes element (i, j, ...).
  template <class... I> void set(T value, I... index) const {
    const std::int64_t idx[] = {static_cast<std::int64_t>(index)...};
    t_.set<T>(std::span<const std::int64_t>(idx, sizeof...(I)), value);
  }
  /// Pointer to element (0, ..., 0); strides from tensor().stride(k).
  const T* data() const noexcept { return static_cast<const T*>(t_.data()); }
  T* mutable_data() const { return static_cast<T*>(t_.mutable_data()); }

  TypedTensor permute_view(std::initializer_list<std::int64_t> perm) const { return TypedTensor(t_.permute_view(perm)); }
  TypedTensor transpose_view(int a = 0, int b = 1) const { return TypedTensor(t_.transpose_view(a, b)); }
  TypedTensor slice_view(int axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const {
    return TypedTensor(t_.slice_view(axis, start, stop, step));
  }
  TypedTensor reshape_view(std::initializer_list<std::int64_t> shape) const { return TypedTensor(t_.reshape_view(shape)); }
  std::string to_string() const { return t_.to_string(); }

 private:
  Tensor t_;
};

}  // namespace tenferro
