#include "cpu/op_common.hpp"

#include <string>

namespace tenferro::detail {

std::uint64_t reduction_mask(const Tensor& x, std::span<const std::int64_t> axes, bool all, std::string_view op) {
  if (all) return x.rank() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << x.rank()) - 1;
  return axis_mask(axes, x.rank(), op);
}

Dims reduced_shape(const Tensor& x, std::uint64_t mask, bool keepdims) {
  Dims d;
  for (int i = 0; i < x.rank(); ++i) {
    if (!(mask >> i & 1)) d.push_back(x.extent(i));
    else if (keepdims) d.push_back(1);
  }
  return d;
}

}  // namespace tenferro::detail
