// The eager emitter's in-place services (Note [Eager emitter] in emit.hpp).
#include "ad/emit.hpp"

namespace tenferro::ad::detail {

void scale_in_place(Session& s, const Tensor& g, const Scalar& c) {
  if (s.device() != DeviceKind::cpu) {
    mul_into(s, g, c, g);
    return;
  }
  visit_dtype<DTypeSet::inexact>("mul", g.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V v = c.to<V>();
    V* p = static_cast<V*>(const_cast<void*>(g.data()));
    for (std::int64_t i = 0, e = g.numel(); i < e; ++i) p[i] *= v;
  });
}

Tensor filled_like(Session& s, const Tensor& x, const Tensor& g) {
  std::int64_t shape[kMaxRank];
  for (int i = 0; i < x.rank(); ++i) shape[i] = x.extent(i);
  if (s.device() != DeviceKind::cpu)
    return broadcast_in_dim(s, g.reshape_view(std::span<const std::int64_t>()), std::span<const std::int64_t>(shape, static_cast<std::size_t>(x.rank())),
                            std::span<const std::int64_t>());
  Tensor t = Tensor::empty(std::span<const std::int64_t>(shape, static_cast<std::size_t>(x.rank())), g.dtype());
  visit_dtype<DTypeSet::inexact>("broadcast_in_dim", g.dtype(), [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V v = *g.data_ptr<V>();
    V* p = t.mutable_data_ptr<V>();
    for (std::int64_t i = 0, e = t.numel(); i < e; ++i) p[i] = v;
  });
  return t;
}

Tensor empty_on(Session& s, std::span<const std::int64_t> shape, DType dtype) {
  if (s.device() == DeviceKind::cpu) return Tensor::empty(shape, dtype);
  return Tensor::empty(shape, dtype, Device{s.device(), 0});
}

Tensor zeros_on(Session& s, std::span<const std::int64_t> shape, DType dtype) {
  if (s.device() == DeviceKind::cpu) return Tensor::zeros(shape, dtype);
  return broadcast_in_dim(s, Tensor::zeros({}, dtype), shape, std::span<const std::int64_t>());
}

}  // namespace tenferro::ad::detail
