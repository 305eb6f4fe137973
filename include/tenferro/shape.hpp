#pragma once
/// \file shape.hpp
/// Shape/stride vectors with inline storage, and overflow-checked extent arithmetic.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>

#include "tenferro/error.hpp"
#include "tenferro/export.hpp"

namespace tenferro {

/// Largest rank a tensor may have. Ranks <= 8 are stored inline; above that on the heap.
inline constexpr int kMaxRank = 64;

/// A vector of int64 with inline room for 8 entries (no heap below that).
/// Used for shapes, strides, axis lists and permutations in the API.
class TENFERRO_API Dims {
 public:
  static constexpr int kInline = 8;
  Dims() noexcept = default;
  Dims(std::initializer_list<std::int64_t> v) { assign(v.begin(), static_cast<int>(v.size())); }
  Dims(std::span<const std::int64_t> v) { assign(v.data(), static_cast<int>(v.size())); }
  /// `n` copies of `value`.
  Dims(int n, std::int64_t value) {
    resize(n);
    std::fill(begin(), end(), value);
  }
  Dims(const Dims& o) { assign(o.data(), o.size()); }
  Dims(Dims&& o) noexcept { steal(o); }
  Dims& operator=(const Dims& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Dims() { release(); }

  int size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::int64_t* data() noexcept { return heap_ ? heap_ : inline_; }
  const std::int64_t* data() const noexcept { return heap_ ? heap_ : inline_; }
  std::int64_t& operator[](int i) noexcept { return data()[i]; }
  std::int64_t operator[](int i) const noexcept { return data()[i]; }
  std::int64_t* begin() noexcept { return data(); }
  std::int64_t* end() noexcept { return data() + size_; }
  const std::int64_t* begin() const noexcept { return data(); }
  const std::int64_t* end() const noexcept { return data() + size_; }
  std::int64_t back() const noexcept { return data()[size_ - 1]; }
  operator std::span<const std::int64_t>() const noexcept { return {data(), static_cast<std::size_t>(size_)}; }
  std::span<const std::int64_t> span() const noexcept { return *this; }

  /// Resize; new entries are zero.
  void resize(int n);
  /// Empties the list, keeping its capacity.
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ < cap_) {
      data()[size_++] = v;
      return;
    }
    resize(size_ + 1);
    data()[size_ - 1] = v;
  }
  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  /// "[2, 3, 4]".
  std::string to_string() const;

 private:
  void assign(const std::int64_t* p, int n) {
    resize(n);
    if (n) std::memmove(data(), p, static_cast<std::size_t>(n) * sizeof(std::int64_t));
  }
  void steal(Dims& o) noexcept {
    size_ = o.size_;
    cap_ = o.cap_;
    heap_ = o.heap_;
    if (!heap_) std::memcpy(inline_, o.inline_, sizeof(inline_));
    o.heap_ = nullptr;
    o.size_ = 0;
    o.cap_ = kInline;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
  }
  std::int64_t inline_[kInline] = {};
  std::int64_t* heap_ = nullptr;
  int size_ = 0;
  int cap_ = kInline;
};

/// Shapes are Dims: extents, first axis fastest (column-major).
using Shape = Dims;

/// "[2, 3]" for a span of int64.
TENFERRO_API std::string dims_string(std::span<const std::int64_t> d);

/// Overflow-checked arithmetic; throw IndexError("<op>: ... overflows int64").
TENFERRO_API std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view op);
TENFERRO_API std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view op);
/// Product of extents; validates each extent >= 0 (ShapeError) and overflow (IndexError).
TENFERRO_API std::int64_t checked_numel(std::span<const std::int64_t> shape, std::string_view op);

}  // namespace tenferro
