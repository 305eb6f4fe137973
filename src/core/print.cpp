// NumPy-like printing. Rows are axis 0 and columns axis 1 (a column-major matrix
// prints as it reads on paper); axes 2.. index blocks, printed as "[:, :, k]" slices.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tenferro/tensor.hpp"

namespace tenferro {

namespace {

constexpr std::int64_t kSummarizeAbove = 1000;  // elements; NumPy's threshold
constexpr std::int64_t kEdge = 3;

template <class T> std::string format_real(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", std::is_same_v<T, float> ? 6 : 8, static_cast<double>(v));
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".";
    return s;
  }
}

template <class T> std::string format_value(T v) {
  if constexpr (is_complex_v<T>) {
    std::string im = format_real(std::abs(v.imag()));
    return format_real(v.real()) + (std::signbit(v.imag()) ? "-" : "+") + im + "j";
  } else {
    return format_real(v);
  }
}

struct Printer {
  const Tensor& t;
  bool summarize;
  std::string out;

  // Indices along one axis to print (with -1 marking "...").
  std::vector<std::int64_t> picks(std::int64_t n) const {
    std::vector<std::int64_t> p;
    if (summarize && n > 2 * kEdge) {
      for (std::int64_t i = 0; i < kEdge; ++i) p.push_back(i);
      p.push_back(-1);
      for (std::int64_t i = n - kEdge; i < n; ++i) p.push_back(i);
    } else {
      for (std::int64_t i = 0; i < n; ++i) p.push_back(i);
    }
    return p;
  }

  template <class T> void run() {
    const int r = t.rank();
    if (r == 0) {
      out += format_value(t.item<T>({}));
      return;
    }
    Dims idx(r, 0);
    block<T>(r - 1, idx, 7);
  }

  // Prints axes [0, axis] with higher axes fixed in idx, nested like NumPy but with the
  // highest axis outermost.
  template <class T> void block(int axis, Dims& idx, int indent) {
    const int r = t.rank();
    if (axis <= 1) {
      if (r == 1) {
        row<T>(idx);
        return;
      }
      out += "[";
      bool first = true;
      for (auto i : picks(t.extent(0))) {
        if (!first) out += ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ');
        first = false;
        if (i < 0) {
          out += "...";
          continue;
        }
        idx[0] = i;
        row<T>(idx);
      }
      out += "]";
      return;
    }
    out += "[";
    bool first = true;
    for (auto i : picks(t.extent(axis))) {
      if (!first) out += ",\n\n" + std::string(static_cast<std::size_t>(indent + 1), ' ');
      first = false;
      if (i < 0) {
        out += "...";
        continue;
      }
      idx[axis] = i;
      block<T>(axis - 1, idx, indent + 1);
    }
    out += "]";
  }

  // One row: axis 1 varies (or axis 0 for rank 1).
  template <class T> void row(Dims& idx) {
    const int ax = t.rank() == 1 ? 0 : 1;
    out += "[";
    bool first = true;
    for (auto j : picks(t.extent(ax))) {
      if (!first) out += ", ";
      first = false;
      if (j < 0) {
        out += "...";
        continue;
      }
      idx[ax] = j;
      out += format_value(t.item<T>(idx.span()));
    }
    out += "]";
  }
};

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  if (device().kind != DeviceKind::cpu)  // device memory is not read from the host
    return "tensor(on " + std::string(device_name(device().kind)) + ", dtype=" + std::string(dtype_name(dtype_)) + ", shape=" + shape().to_string() + ")";
  if (numel() == 0) return "tensor([], dtype=" + std::string(dtype_name(dtype_)) + ", shape=" + shape().to_string() + ")";
  Printer p{*this, numel() > kSummarizeAbove, "tensor("};
  visit_dtype("print", dtype_, [&](auto tag) { p.template run<typename decltype(tag)::type>(); });
  p.out += ", dtype=" + std::string(dtype_name(dtype_)) + ", shape=" + shape().to_string() + ")";
  return p.out;
}

}  // namespace tenferro
