// Structural ops that write a fill value besides copying their input: embed_diagonal
// (zeros off the diagonal), tril and triu (zeros outside the triangle), pad (the padding
// value around and between elements).
#include <algorithm>
#include <string>

#include "cpu/parallel.hpp"
#include "cpu/structural_common.hpp"

namespace tenferro {

using namespace detail;  // this file implements public structural ops

namespace {

// ---------------------------------------------------------------- embed_diagonal

/// Result shape of embed_diagonal (validation included); normalized axes in a, b.
Dims embed_shape(const Tensor& x, std::int64_t axis1, std::int64_t axis2, int& a, int& b, std::string_view op) {
  if (x.rank() == 0) throw RankError(op, "needs rank >= 1 (the last axis is the diagonal), got " + describe(x));
  const int r = x.rank() + 1;
  if (r > kMaxRank) throw RankError(op, "result rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  a = normalize_axis(axis1, r, op);
  b = normalize_axis(axis2, r, op);
  if (a == b)
    throw AxisError(op, "axis1 " + std::to_string(axis1) + " and axis2 " + std::to_string(axis2) + " are the same axis of the rank-" +
                            std::to_string(r) + " result");
  const std::int64_t n = x.extent(x.rank() - 1);
  Dims shape(r, 0);
  int k = 0;
  for (int i = 0; i < r; ++i) shape[i] = (i == a || i == b) ? n : x.extent(k++);
  checked_numel(shape, op);  // n*n can overflow where n alone did not
  return shape;
}

/// Zeros everywhere, then x copied onto the diagonal view of out (whose shape is x's).
void embed_run(Session& s, const Tensor& x, int a, int b, const Tensor& out, std::string_view op) {
  fill_bytes(s, out, kZeroBytes);
  copy_same_dtype(s, x, diagonal_view(out, a, b, op));
}

// ---------------------------------------------------------------- tril / triu

/// Copies the kept rows of every column and zeros the rest. Columns (axis 1 × batch axes
/// 2...) are split across threads; each column is one strided line along axis 0.
/// In place (`out` is x) only the zeroed rows are written.
template <class E> void triangle_kernel(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset, bool lower) {
  const int r = x.rank();
  const std::int64_t M = x.extent(0), N = x.extent(1);
  std::int64_t xs[kMaxRank], os[kMaxRank];
  broadcast_byte_strides(x, r, xs);
  broadcast_byte_strides(out, r, os);
  bool in_place = x.data() == out.data();
  for (int i = 0; i < r && in_place; ++i) in_place = xs[i] == os[i];
  // Clamping keeps j - offset in range and changes nothing: offset <= -M keeps no row
  // (tril) or all (triu), offset >= N all (tril) or none (triu).
  offset = std::clamp(offset, -M, N);
  std::int64_t batch = 1;
  for (int i = 2; i < r; ++i) batch *= x.extent(i);
  const std::int64_t columns = N * batch;
  const char* xbase = static_cast<const char*>(x.data());
  char* obase = static_cast<char*>(out.mutable_data("tril"));
  parallel_for(s, columns, std::max<std::int64_t>(M, 1), [&](std::int64_t lo, std::int64_t hi) {
    // Odometer over (j, batch index) starting at column lo.
    std::int64_t idx[kMaxRank];
    std::int64_t rest = lo;
    const char* xp = xbase;
    char* outp = obase;
    for (int i = 1; i < r; ++i) {
      idx[i] = rest % x.extent(i);
      rest /= x.extent(i);
      xp += idx[i] * xs[i];
      outp += idx[i] * os[i];
    }
    for (std::int64_t c = lo; c < hi; ++c) {
      const std::int64_t j = idx[1];
      // Kept rows [keep_lo, keep_hi): tril keeps i >= j - offset, triu keeps i <= j - offset.
      const std::int64_t keep_lo = lower ? std::clamp(j - offset, std::int64_t{0}, M) : 0;
      const std::int64_t keep_hi = lower ? M : std::clamp(j - offset + 1, std::int64_t{0}, M);
      const E zero{};
      for (std::int64_t i = 0; i < M; ++i) {
        char* o = outp + i * os[0];
        if (i < keep_lo || i >= keep_hi) std::memcpy(o, &zero, sizeof(E));
        else if (!in_place) std::memcpy(o, xp + i * xs[0], sizeof(E));
      }
      for (int i = 1; i < r; ++i) {  // next column
        xp += xs[i];
        outp += os[i];
        if (++idx[i] < x.extent(i)) break;
        xp -= idx[i] * xs[i];
        outp -= idx[i] * os[i];
        idx[i] = 0;
      }
    }
  });
}

struct alignas(8) Elem16 {
  std::uint64_t lo = 0, hi = 0;
};

void triangle_run(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset, bool lower) {
  if (out.numel() == 0) return;
  switch (dtype_size(x.dtype())) {
    case 1: return triangle_kernel<std::uint8_t>(s, x, out, offset, lower);
    case 4: return triangle_kernel<std::uint32_t>(s, x, out, offset, lower);
    case 8: return triangle_kernel<std::uint64_t>(s, x, out, offset, lower);
    default: return triangle_kernel<Elem16>(s, x, out, offset, lower);
  }
}

void triangle_rank(const Tensor& x, std::string_view op) {
  if (x.rank() < 2) throw RankError(op, "needs rank >= 2 (matrices over the first two axes), got " + describe(x));
}

Tensor triangle(Session& s, const Tensor& x, std::int64_t offset, bool lower) {
  const std::string_view op = lower ? "tril" : "triu";
  check_input(s, x, op);
  triangle_rank(x, op);
  Tensor r = new_output(x.shape(), x.dtype(), op);
  triangle_run(s, x, r, offset, lower);
  return r;
}

void triangle_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out, bool lower) {
  const std::string_view op = lower ? "tril" : "triu";
  check_input(s, x, op);
  triangle_rank(x, op);
  require_output(out, op, x.dtype(), x.shape());
  check_overlap(out, x, op, true);
  triangle_run(s, x, out, offset, lower);
}

// ---------------------------------------------------------------- pad

/// Where x's elements land in pad's result, per axis: x's elements [src_first,
/// src_first + count) go to result positions dst_first + k * step (step = interior + 1);
/// the rest of the result is padding (and the rest of x is cropped).
struct PadPlan {
  Dims shape;      ///< result extents
  Dims count;      ///< surviving elements per axis
  Dims src_first;  ///< first surviving element of x per axis
  Dims dst_first;  ///< its position in the result
  Dims step;       ///< interior + 1 (1 when count <= 1)
  bool covers = true;  ///< every result element is a copied element (no fill needed)
  alignas(16) unsigned char value[16] = {};
};

PadPlan pad_plan(const Tensor& x, const Scalar& value, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
                 std::span<const std::int64_t> interior, std::string_view op) {
  const int r = x.rank();
  auto check_len = [&](std::span<const std::int64_t> v, const char* name) {
    if (static_cast<int>(v.size()) != r)
      throw RankError(op, std::string(name) + " " + dims_string(v) + " has " + std::to_string(v.size()) + " entries for an operand of rank " +
                              std::to_string(r));
  };
  check_len(low, "edge_padding_low");
  check_len(high, "edge_padding_high");
  check_len(interior, "interior_padding");
  PadPlan p;
  p.shape = Dims(r, 0);
  p.count = p.src_first = p.dst_first = p.step = Dims(r, 0);
  for (int i = 0; i < r; ++i) {
    if (interior[i] < 0) throw ArgumentError(op, "interior_padding " + dims_string(interior) + " has a negative entry");
    const std::int64_t e = x.extent(i);
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
    const i128 first = lo >= 0 ? 0 : (-lo + step - 1) / step;         // smallest k with position >= 0
    const i128 last = std::min<i128>(e - 1, (ext - 1 - lo) >= 0 ? (ext - 1 - lo) / step : -1);  // largest k with position < ext
    const i128 n = last >= first ? last - first + 1 : 0;
    p.count[i] = static_cast<std::int64_t>(n);
    p.src_first[i] = n > 0 ? static_cast<std::int64_t>(first) : 0;
    p.dst_first[i] = n > 0 ? static_cast<std::int64_t>(lo + first * step) : 0;
    p.step[i] = n > 1 ? static_cast<std::int64_t>(step) : 1;
    p.covers = p.covers && n == ext;
  }
  checked_numel(p.shape, op);
  scalar_to_bytes(value, x.dtype(), op, p.value);
  return p;
}

void pad_run(Session& s, const Tensor& x, const PadPlan& p, const Tensor& out) {
  if (out.numel() == 0) return;
  if (!p.covers) fill_bytes(s, out, p.value);
  const int r = x.rank();
  std::int64_t src_off = x.offset(), dst_off = out.offset();
  Dims dst_strides(r, 0);
  for (int i = 0; i < r; ++i) {
    if (p.count[i] == 0) return;  // everything cropped: padding only
    src_off += p.src_first[i] * x.stride(i);
    dst_off += p.dst_first[i] * out.stride(i);
    dst_strides[i] = out.stride(i) * p.step[i];
  }
  copy_same_dtype(s, x.as_strided_view(p.count, x.strides(), src_off), out.as_strided_view(p.count, dst_strides, dst_off));
}

}  // namespace

// ---------------------------------------------------------------- embed_diagonal

Tensor embed_diagonal(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2) {
  constexpr std::string_view op = "embed_diagonal";
  check_input(s, x, op);
  int a = 0, b = 0;
  const Dims shape = embed_shape(x, axis1, axis2, a, b, op);
  Tensor r = new_output(shape, x.dtype(), op);
  embed_run(s, x, a, b, r, op);
  return r;
}

void embed_diagonal_into(Session& s, const Tensor& x, std::int64_t axis1, std::int64_t axis2, const Tensor& out) {
  constexpr std::string_view op = "embed_diagonal";
  check_input(s, x, op);
  int a = 0, b = 0;
  const Dims shape = embed_shape(x, axis1, axis2, a, b, op);
  require_output(out, op, x.dtype(), shape);
  check_overlap(out, x, op, false);
  embed_run(s, x, a, b, out, op);
}

// ---------------------------------------------------------------- tril / triu

Tensor tril(Session& s, const Tensor& x, std::int64_t offset) { return triangle(s, x, offset, true); }
void tril_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out) { triangle_into(s, x, offset, out, true); }
Tensor triu(Session& s, const Tensor& x, std::int64_t offset) { return triangle(s, x, offset, false); }
void triu_into(Session& s, const Tensor& x, std::int64_t offset, const Tensor& out) { triangle_into(s, x, offset, out, false); }

// ---------------------------------------------------------------- pad

Tensor pad(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           std::span<const std::int64_t> interior) {
  constexpr std::string_view op = "pad";
  check_input(s, x, op);
  const PadPlan p = pad_plan(x, padding_value, low, high, interior, op);
  Tensor r = new_output(p.shape, x.dtype(), op);
  pad_run(s, x, p, r);
  return r;
}

void pad_into(Session& s, const Tensor& x, Scalar padding_value, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
              std::span<const std::int64_t> interior, const Tensor& out) {
  constexpr std::string_view op = "pad";
  check_input(s, x, op);
  const PadPlan p = pad_plan(x, padding_value, low, high, interior, op);
  require_output(out, op, x.dtype(), p.shape);
  check_overlap(out, x, op, false);
  pad_run(s, x, p, out);
}

}  // namespace tenferro
