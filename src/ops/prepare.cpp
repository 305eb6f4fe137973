// Backend-neutral operand checks and output preparation (prepare.hpp).
#include "ops/prepare.hpp"

#include <string>

#include "core/layout.hpp"

namespace tenferro::detail {

void require_tensor_on(const Tensor& t, DeviceKind device, std::string_view op, std::string_view what) {
  if (!t.defined()) throw ArgumentError(op, std::string(what) + " tensor is undefined");
  if (t.device().kind == device) return;
  // A traced function may read host tensors: they become the graph's constants (Note [Tracing]).
  if (device == DeviceKind::trace && t.device().kind == DeviceKind::cpu) return;
  throw SessionEntryError(SessionEntryKind::IncompatibleContext, op,
                          device == DeviceKind::cpu ? std::string(what) + " tensor is not on the CPU (download it first)"
                                                    : std::string(what) + " tensor is not on device " + std::string(device_name(device)) +
                                                          " (upload it first)");
}

std::string describe(const Tensor& t) { return t.shape().to_string() + " " + std::string(dtype_name(t.dtype())); }

Dims position_index(const Tensor& t, std::int64_t k) {
  Dims idx(t.rank(), 0);
  for (int i = 0; i < t.rank(); ++i) {
    idx[i] = k % t.extent(i);
    k /= t.extent(i);
  }
  return idx;
}

void require_output(const Tensor& out, std::string_view op, DType dtype, std::span<const std::int64_t> shape, DeviceKind device) {
  require_tensor_on(out, device, op, "out");
  if (out.dtype() != dtype)
    throw DTypeError(op, "out has dtype " + std::string(dtype_name(out.dtype())) + ", expected " + std::string(dtype_name(dtype)));
  bool same = out.rank() == static_cast<int>(shape.size());
  for (int i = 0; same && i < out.rank(); ++i) same = out.extent(i) == shape[i];
  if (!same) throw ShapeError(op, "out has shape " + out.shape().to_string() + ", expected " + dims_string(shape));
  if (out.read_only()) throw ArgumentError(op, "out is a read-only (broadcast) view");
  const Shape sh = out.shape();
  const Dims st = out.strides();
  if (!is_non_overlapping(sh, st))
    throw ArgumentError(op, "out has overlapping elements (shape " + sh.to_string() + ", strides " + st.to_string() + ")");
  out.note_write();  // Note [Version counters]
}

std::pair<const char*, const char*> byte_range(const Tensor& t) noexcept {
  const char* base = static_cast<const char*>(t.data());
  std::int64_t lo = 0, hi = 0;
  for (int i = 0; i < t.rank(); ++i) {
    if (t.extent(i) == 0) return {base, base};
    const std::int64_t span = (t.extent(i) - 1) * t.stride(i);
    (span < 0 ? lo : hi) += span;
  }
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
  return {base + lo * es, base + (hi + 1) * es};
}

bool memory_overlaps(const Tensor& x, const Tensor& y) noexcept {
  if (!x.shares_storage(y)) return false;
  const auto [xl, xh] = byte_range(x);
  const auto [yl, yh] = byte_range(y);
  return xl < xh && yl < yh && xl < yh && yl < xh;
}

void check_overlap(const Tensor& out, const Tensor& in, std::string_view op, bool same_ok) {
  if (!memory_overlaps(out, in)) return;
  if (same_ok && in.data() == out.data() && dtype_size(in.dtype()) == dtype_size(out.dtype())) {
    std::int64_t s[kMaxRank];
    broadcast_byte_strides(in, out.rank(), s);
    const auto es = static_cast<std::int64_t>(dtype_size(out.dtype()));
    bool same = true;
    for (int i = 0; same && i < out.rank(); ++i) same = out.extent(i) == 1 || s[i] == out.stride(i) * es;
    if (same) return;
  }
  throw ArgumentError(op, "out overlaps an input in memory (only an identical layout may be shared)");
}

void broadcast_byte_strides(const Tensor& t, int rank, std::int64_t* out) noexcept {
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
  const int r = t.rank();
  // Unsigned (wrapping) products: a tensor with elements has byte strides that fit in
  // int64 (its byte span does), but an empty one's compact strides may not, e.g.
  // [0, 2^31, 2^31, 2] has stride 2^62 on its last axis (found by fuzz_ops). Its byte
  // strides are never used to address anything.
  for (int i = 0; i < rank; ++i)
    out[i] = (i < r && t.extent(i) != 1)
                 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(t.stride(i)) * static_cast<std::uint64_t>(es))
                 : 0;
}

Tensor new_like(const Tensor& x, DType d) {
  std::int64_t shape[kMaxRank];
  if (x.device().kind == DeviceKind::cpu) [[likely]] return Tensor::empty(extents_of(x, shape), d);
  return Tensor::empty(extents_of(x, shape), d, x.device());
}

Tensor new_output(const Session& s, std::span<const std::int64_t> shape, DType dtype, std::string_view op) {
  if (s.device() == DeviceKind::cpu) [[likely]] return Tensor::empty(shape, dtype);
  return Tensor::empty(shape, dtype, Device{s.device(), 0});
}

}  // namespace tenferro::detail
