// The CPU kernel of iota (cpu/structural_common.hpp). The other re-indexing structural
// ops are a view plus the conversion kernel (src/ops/structural.cpp).
#include "cpu/structural_common.hpp"

namespace tenferro::cpu {

/// out[idx] = idx[d]: a compact arange of extent(d) values broadcast along the other
/// axes and copied (Note [Structural ops as views plus one copy]).
void iota_kernel(Session& s, const Tensor& out, int d) {
  if (out.numel() == 0) return;  // also keeps an arange of a huge extent from being built
  const std::int64_t n = out.extent(d);
  const Tensor line = Tensor::empty({n}, out.dtype());
  visit_dtype("iota", out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(line.mutable_data("iota"));
    for (std::int64_t k = 0; k < n; ++k) p[k] = detail::cast_value<T>(k);
  });
  Dims strides(out.rank(), 0);
  strides[d] = 1;
  detail::copy_same_dtype(s, line.as_strided_view(out.shape(), strides, 0), out);
}

}  // namespace tenferro::cpu
