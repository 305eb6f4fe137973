// The CPU backend's structural kernels (cpu/structural.hpp): iota, tril/triu, and the
// fill-then-place kernel of embed_diagonal and pad.
#include "cpu/structural.hpp"

#include <algorithm>
#include <cstring>

#include "core/convert.hpp"
#include "cpu/parallel.hpp"
#include "cpu/transpose_copy.hpp"
#include "ops/prepare.hpp"

namespace tenferro::cpu {
namespace {

/// Copies the kept rows of every column and zeros the rest. Columns (axis 1 × batch axes
/// 2...) are split across threads; each column is one strided line along axis 0.
/// In place (`out` is x) only the zeroed rows are written.
template <class E> void triangle_lines(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset, bool lower) {
  const int r = x.rank();
  const std::int64_t M = x.extent(0), N = x.extent(1);
  std::int64_t xs[kMaxRank], os[kMaxRank];
  detail::broadcast_byte_strides(x, r, xs);
  detail::broadcast_byte_strides(out, r, os);
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
  detail::parallel_for(s, columns, std::max<std::int64_t>(M, 1), [&](std::int64_t lo, std::int64_t hi) {
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

void triangle(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset, bool lower) {
  if (out.numel() == 0) return;
  switch (dtype_size(x.dtype())) {
    case 1: return triangle_lines<std::uint8_t>(s, x, out, offset, lower);
    case 4: return triangle_lines<std::uint32_t>(s, x, out, offset, lower);
    case 8: return triangle_lines<std::uint64_t>(s, x, out, offset, lower);
    default: return triangle_lines<Elem16>(s, x, out, offset, lower);
  }
}

}  // namespace

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

void tril_kernel(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset) { triangle(s, x, out, offset, true); }
void triu_kernel(Session& s, const Tensor& x, const Tensor& out, std::int64_t offset) { triangle(s, x, out, offset, false); }

void place_kernel(Session& s, const Tensor& out, const unsigned char* fill, const Tensor& x, const Tensor& dst) {
  if (fill) detail::fill_bytes(s, out, fill);
  if (x.numel() > 0) detail::copy_same_dtype(s, x, dst);
}

}  // namespace tenferro::cpu
