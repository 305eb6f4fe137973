#include "tenferro/shape.hpp"

namespace tenferro {

void Dims::resize(int n) {
  if (n < 0 || n > kMaxRank * 4) throw ArgumentError("Dims", "size " + std::to_string(n) + " out of range");
  if (n > cap_) {
    auto* p = new std::int64_t[static_cast<std::size_t>(n)]();
    std::memcpy(p, data(), static_cast<std::size_t>(size_) * sizeof(std::int64_t));
    delete[] heap_;
    heap_ = p;
    cap_ = n;
  } else if (n > size_) {
    std::fill(data() + size_, data() + n, 0);
  }
  size_ = n;
}

std::string Dims::to_string() const { return dims_string(*this); }

std::string dims_string(std::span<const std::int64_t> d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view op) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw IndexError(op, std::to_string(a) + " * " + std::to_string(b) + " overflows int64");
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view op) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw IndexError(op, std::to_string(a) + " + " + std::to_string(b) + " overflows int64");
  return r;
}

std::int64_t checked_numel(std::span<const std::int64_t> shape, std::string_view op) {
  std::int64_t n = 1;
  for (auto e : shape)
    if (e < 0) throw ShapeError(op, "negative extent in shape " + dims_string(shape));
  // Nonzero extents must multiply without overflow even when another extent is 0:
  // compact strides are their products.
  bool empty = false;
  for (auto e : shape) {
    if (e == 0) empty = true;
    else n = checked_mul(n, e, op);
  }
  return empty ? 0 : n;
}

}  // namespace tenferro
