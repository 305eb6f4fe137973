// The structural ops that write a fill value besides copying their operand:
// embed_diagonal (zeros off the diagonal), tril and triu (zeros outside the triangle),
// pad (the padding value around and between elements). Inference is pure
// (ops/structural.hpp); the front ends dispatch TriangleKernel or PlaceKernel through
// the session's table.
#include <algorithm>
#include <string>

#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/structural.hpp"
#include "tenferro/structural.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {

EmbedSignature embed_diagonal_infer(std::span<const std::int64_t> x, std::int64_t axis1, std::int64_t axis2, std::string_view op) {
  const int xr = static_cast<int>(x.size());
  if (xr == 0) throw RankError(op, "needs rank >= 1 (the last axis is the diagonal), got shape " + dims_string(x));
  const int r = xr + 1;
  if (r > kMaxRank) throw RankError(op, "result rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  EmbedSignature sig;
  sig.a = normalize_axis(axis1, r, op);
  sig.b = normalize_axis(axis2, r, op);
  if (sig.a == sig.b)
    throw AxisError(op, "axis1 " + std::to_string(axis1) + " and axis2 " + std::to_string(axis2) + " are the same axis of the rank-" +
                            std::to_string(r) + " result");
  const std::int64_t n = x[xr - 1];
  sig.shape = Dims(r, 0);
  for (int i = 0, k = 0; i < r; ++i) sig.shape[i] = (i == sig.a || i == sig.b) ? n : x[k++];
  checked_numel(sig.shape, op);  // n*n can overflow where n alone did not
  return sig;
}

void triangle_infer(std::span<const std::int64_t> x, std::string_view op) {
  if (x.size() < 2) throw RankError(op, "needs rank >= 2 (matrices over the first two axes), got shape " + dims_string(x));
}

PadPlan pad_infer(std::span<const std::int64_t> x, DType dtype, const Scalar& value, std::span<const std::int64_t> low,
                  std::span<const std::int64_t> high, std::span<const std::int64_t> interior, std::string_view op) {
  const int r = static_cast<int>(x.size());
  auto check_len = [&](std::span<const std::int64_t> v, const char* name) {
    if (static_cast<int>(v.size()) != r)
      throw RankError(op, std::string(name) + " " + dims_string(v) + " has " + std::to_string(v.size()) + " entries for an operand of rank " +
                              std::to_string(r));
  };
  check_len(low, "edge_padding_low");
  check_len(high, "edge_padding_high");
  check_len(interior, "interior_padding");
  PadPlan p;
  p.shape = p.count = p.src_first = p.dst_first = p.step = Dims(r, 0);
  for (int i = 0; i < r; ++i) {
    if (interior[i] < 0) throw ArgumentError(op, "interior_padding " + dims_string(interior) + " has a negative entry");
    const std::int64_t e = x[i];
    const std::int64_t body = e == 0 ? 0 : checked_add(e, checked_mul(e - 1, interior[i], op), op);
    const std::int64_t ext = checked_add(checked_add(body, low[i], op), high[i], op);
    if (ext < 0)
      throw ShapeError(op, "axis " + std::to_string(i) + " of extent " + std::to_string(e) + " with low " + std::to_string(low[i]) + ", high " +
                               std::to_string(high[i]) + ", interior " + std::to_string(interior[i]) + " gives a negative extent " +
                               std::to_string(ext));
    p.shape[i] = ext;
    // Element k of x lands at low + k*step. In 128 bits: low may be near INT64_MIN.
    __extension__ using i128 = __int128;
    const i128 step = static_cast<i128>(interior[i]) + 1, lo = low[i];
    const i128 first = lo >= 0 ? 0 : (-lo + step - 1) / step;                                  // smallest k with position >= 0
    const i128 last = std::min<i128>(e - 1, (ext - 1 - lo) >= 0 ? (ext - 1 - lo) / step : -1);  // largest k with position < ext
    const i128 n = last >= first ? last - first + 1 : 0;
    p.count[i] = static_cast<std::int64_t>(n);
    p.src_first[i] = n > 0 ? static_cast<std::int64_t>(first) : 0;
    p.dst_first[i] = n > 0 ? static_cast<std::int64_t>(lo + first * step) : 0;
    p.step[i] = n > 1 ? static_cast<std::int64_t>(step) : 1;
    p.covers = p.covers && n == ext;
    p.empty = p.empty || n == 0;
  }
  checked_numel(p.shape, op);
  scalar_to_bytes(value, dtype, op, p.value);
  return p;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;

/// The session's PlaceKernel for `op` on dtype `d`.
PlaceKernel place_kernel(Session& s, OpId op, DType d) { return kernel_for(s, op, d).fn.place; }

/// Zeros everywhere in out, then x onto out's diagonal over axes a, b.
void embed_run(Session& s, const Tensor& x, const EmbedSignature& sig, const Tensor& out) {
  const PlaceKernel k = place_kernel(s, OpId::embed_diagonal, x.dtype());
  if (out.numel() == 0) return;
  k(s, out, kZeroBytes, x, diagonal_view(out, sig.a, sig.b, "embed_diagonal"));
}

/// The padding value everywhere in out (unless x covers it), then x's surviving
/// elements onto their strided positions.
void pad_run(Session& s, const Tensor& x, const PadPlan& p, const Tensor& out) {
  const PlaceKernel k = place_kernel(s, OpId::pad, x.dtype());
  if (out.numel() == 0) return;
  std::int64_t src_off = x.offset(), dst_off = out.offset();
  Dims dst_strides = out.strides();
  if (!p.empty)  // else every operand element is cropped: the views below are empty
    for (int i = 0; i < x.rank(); ++i) {
      src_off += p.src_first[i] * x.stride(i);
      dst_off += p.dst_first[i] * out.stride(i);
      dst_strides[i] = out.stride(i) * p.step[i];
    }
  k(s, out, p.covers ? nullptr : p.value, x.as_strided_view(p.count, x.strides(), src_off), out.as_strided_view(p.count, dst_strides, dst_off));
}

Tensor triangle(Session& s, OpId op, const Tensor& x, std::int64_t offset) {
  const std::string_view name = op_name(op);
  check_input(s, x, name);
  triangle_infer(x.shape(), name);
  const TriangleKernel k = kernel_for(s, op, x.dtype()).fn.triangle;
  Tensor r = new_output(s, x.shape(), x.dtype(), name);
  k(s, x, r, offset);
  return r;
}

void triangle_into(Session& s, OpId op, const Tensor& x, std::int64_t offset, const Tensor& out) {
  const std::string_view name = op_name(op);
  check_input(s, x, name);
  triangle_infer(x.shape(), name);
  const TriangleKernel k = kernel_for(s, op, x.dtype()).fn.triangle;
  require_output(out, name, x.dtype(), x.shape(), s.device());
  check_overlap(out, x, name, true);
  k(s, x, out, offset);
}

}  // namespace

Tensor embed_diagonal(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "embed_diagonal";
  check_input(s, x, op);
  const EmbedSignature sig = embed_diagonal_infer(x.shape(), axis1, axis2, op);
  Tensor r = new_output(s, sig.shape, x.dtype(), op);
  embed_run(s, x, sig, r);
  return r;
}

void embed_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out) {
  constexpr std::string_view op = "embed_diagonal";
  check_input(s, x, op);
  const EmbedSignature sig = embed_diagonal_infer(x.shape(), axis1, axis2, op);
  require_output(out, op, x.dtype(), sig.shape, s.device());
  check_overlap(out, x, op, false);
  embed_run(s, x, sig, out);
}

Tensor tril(Session& s, const Tensor& x, std::int64_t offset) { return triangle(s, OpId::tril, x, offset); }
void tril_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out) { triangle_into(s, OpId::tril, x, offset, out); }
Tensor triu(Session& s, const Tensor& x, std::int64_t offset) { return triangle(s, OpId::triu, x, offset); }
void triu_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out) { triangle_into(s, OpId::triu, x, offset, out); }

Tensor pad(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           std::span<const std::int64_t> interior) {
  constexpr std::string_view op = "pad";
  check_input(s, x, op);
  const PadPlan p = pad_infer(x.shape(), x.dtype(), padding_value, low, high, interior, op);
  Tensor r = new_output(s, p.shape, x.dtype(), op);
  pad_run(s, x, p, r);
  return r;
}

void pad_into(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
              std::span<const std::int64_t> interior, const Tensor& out) {
  constexpr std::string_view op = "pad";
  check_input(s, x, op);
  const PadPlan p = pad_infer(x.shape(), x.dtype(), padding_value, low, high, interior, op);
  require_output(out, op, x.dtype(), p.shape, s.device());
  check_overlap(out, x, op, false);
  pad_run(s, x, p, out);
}

}  // namespace tenferro
