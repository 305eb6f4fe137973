// Fuzz target: tensor view construction. The bytes are a program over one small owned
// tensor: a base shape and dtype, then up to 24 view operations (reshape_view,
// permute_view, transpose_view, slice_view in both forms, broadcast_view,
// broadcast_in_dim_view, as_strided_view, real_view/imag_view, reverse_view,
// extract_diagonal_view) with shapes, strides, offsets and axes up to the int64 edges.
// Each view that is built must
// - lie inside its storage block (every element's bytes within [block, block + bytes));
// - read, through to_contiguous and a strided sum, exactly the storage elements its
//   shape, strides and offset name: storage f64 slot k holds the value k (complex
//   elements hold (k, k + 1)), so each element's value is its own byte offset / 8.
// Every refusal must be a tenferro::Error (Note [Fuzz contract], fuzz_support.hpp).
#include <cmath>
#include <complex>

#include "fuzz_support.hpp"

namespace tenferro::fuzz {
namespace {

constexpr const char* kHarness = "fuzz_views";
// Views with at most this many elements are read back (broadcast views may name 2^62).
constexpr std::int64_t kReadLimit = 4096;

Dims read_dims(Bytes& in, int max_rank, bool wide) {
  const int r = static_cast<int>(in.range(0, max_rank));
  Dims d;
  for (int i = 0; i < r; ++i) d.push_back(wide ? in.wide() : in.range(-1, 6));
  return d;
}

// The base: slot k of the storage (in f64 units) holds k.
Tensor make_base(Bytes& in) {
  const bool complex = in.flag();
  const Dims shape = read_dims(in, 4, false);
  Dims ext;
  for (std::int64_t e : shape) ext.push_back(e < 0 ? 0 : e);
  Tensor t = Tensor::empty(ext.span(), complex ? DType::c128 : DType::f64);
  auto* p = static_cast<double*>(t.mutable_data());
  for (std::int64_t k = 0; k < t.numel() * (complex ? 2 : 1); ++k) p[k] = static_cast<double>(k);
  return t;
}

// One view operation chosen by the next byte; returns the view (or throws).
Tensor apply(Bytes& in, const Tensor& t) {
  const int r = t.rank();
  auto axis = [&] { return static_cast<int>(in.range(-r - 1, r)); };
  switch (in.u8() % 12) {
    case 0: return t.reshape_view(read_dims(in, 6, false).span());
    case 1: return t.reshape_view(read_dims(in, 9, true).span());
    case 2: {
      Dims perm;
      for (int i = 0; i < r; ++i) perm.push_back(i);
      for (int i = r - 1; i > 0; --i) std::swap(perm[i], perm[static_cast<int>(in.range(0, i))]);
      if (in.u8() % 8 == 0 && r > 0) perm[static_cast<int>(in.range(0, r - 1))] = in.wide();  // sometimes invalid
      return t.permute_view(perm.span());
    }
    case 3: return t.transpose_view(axis(), axis());
    case 4: return t.slice_view(axis(), in.wide(), in.flag() ? Tensor::kSliceEnd : in.wide(), in.wide());
    case 5: {
      Dims starts, limits, strides;
      for (int i = 0; i < r; ++i) {
        starts.push_back(in.range(-1, 5));
        limits.push_back(in.range(-1, 6));
        strides.push_back(in.flag() ? in.range(-1, 3) : in.wide());
      }
      if (in.u8() % 8 == 0) starts.push_back(0);  // wrong length
      return slice_view(t, starts, limits, strides);
    }
    case 6: return t.broadcast_view(read_dims(in, 6, in.u8() % 4 == 0).span());
    case 7: {
      const Dims shape = read_dims(in, 6, in.u8() % 4 == 0);
      Dims dims;
      for (int i = 0; i < r; ++i) dims.push_back(in.range(-7, 6));
      return broadcast_in_dim_view(t, shape.span(), dims.span());
    }
    case 8:
    case 9: {
      // as_strided_view: usually modest values so that some views are valid, sometimes
      // the int64 edges so that the range check's arithmetic is exercised.
      const bool wide = in.u8() % 4 == 0;
      const Dims shape = read_dims(in, 6, wide);
      Dims strides;
      for (int i = 0; i < shape.size(); ++i) strides.push_back(wide ? in.wide() : in.range(-8, 8));
      if (in.u8() % 16 == 0) strides.push_back(1);  // wrong length
      const std::int64_t offset = wide ? in.wide() : in.range(-4, 40);
      return t.as_strided_view(shape.span(), strides.span(), offset);
    }
    case 10: return in.flag() ? t.real_view() : t.imag_view();
    default: {
      if (in.flag()) return extract_diagonal_view(t, in.range(-r - 1, r), in.range(-r - 1, r));
      Dims axes;
      const int n = static_cast<int>(in.range(0, 3));
      for (int i = 0; i < n; ++i) axes.push_back(in.range(-r - 1, r));
      return reverse_view(t, axes.span());
    }
  }
}

// Checks that `v` lies inside its block and reads exactly the elements it names.
void check_view(const Tensor& v) {
  const int r = v.rank();
  if (r < 0 || r > kMaxRank) fail(kHarness, "rank " + std::to_string(r));
  for (int i = 0; i < r; ++i)
    if (v.extent(i) < 0) fail(kHarness, "negative extent on axis " + std::to_string(i));
  const std::int64_t n = saturating_numel(v.shape().span());
  if (n == 0) return;
  const auto es = static_cast<Wide>(dtype_size(v.dtype()));
  const detail::StorageHeader* b = v.block();
  const Wide base = static_cast<const std::byte*>(v.data()) - b->base;
  Wide lo = 0, hi = 0;  // element offsets of the extreme elements (128 bits: no overflow here)
  for (int i = 0; i < r; ++i) {
    const Wide step = static_cast<Wide>(v.extent(i) - 1) * v.stride(i);
    (step < 0 ? lo : hi) += step;
  }
  if (base + lo * es < 0 || base + hi * es + es > static_cast<Wide>(b->bytes))
    fail(kHarness, "view " + v.shape().to_string() + " strides " + v.strides().to_string() + " at byte " +
                       std::to_string(static_cast<long long>(base)) + " leaves its block of " + std::to_string(b->bytes) +
                       " bytes");
  if (n > kReadLimit) return;

  // Expected value of each element (column-major order): its byte offset / 8.
  std::vector<double> expect(static_cast<std::size_t>(n));
  Dims idx(r, 0);
  for (std::int64_t k = 0; k < n; ++k) {
    Wide off = base;
    for (int i = 0; i < r; ++i) off += static_cast<Wide>(idx[i]) * v.stride(i) * es;
    expect[static_cast<std::size_t>(k)] = static_cast<double>(static_cast<long long>(off / 8));
    for (int i = 0; i < r && ++idx[i] == v.extent(i); ++i) idx[i] = 0;
  }
  Session& s = session();
  const Tensor c = to_contiguous(s, v);
  if (!c.is_contiguous() || c.shape() != v.shape() || c.dtype() != v.dtype())
    fail(kHarness, "to_contiguous changed the shape, the dtype or is not compact");
  const bool complex = v.dtype() == DType::c128;
  const auto* p = static_cast<const double*>(c.data());
  double total = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const double e = expect[static_cast<std::size_t>(k)];
    const double re = p[complex ? 2 * k : k];
    if (re != e || (complex && p[2 * k + 1] != e + 1))
      fail(kHarness, "element " + std::to_string(k) + " of view " + v.shape().to_string() + " strides " +
                         v.strides().to_string() + " reads " + std::to_string(re) + ", expected " + std::to_string(e));
    total += e;
  }
  // The same elements through a strided reduction (no copy first). Values are small
  // integers, so the sum is exact in any order.
  const Tensor sum_all = sum(s, v);
  const double got = complex ? sum_all.item<std::complex<double>>().real() : sum_all.item<double>();
  if (got != total) fail(kHarness, "sum over the view is " + std::to_string(got) + ", expected " + std::to_string(total));
}

}  // namespace
}  // namespace tenferro::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tenferro::fuzz;
  Bytes in(data, size);
  guarded(kHarness, [&] {
    tenferro::Tensor t = make_base(in);
    check_view(t);
    for (int step = 0; step < 24 && !in.empty(); ++step) {
      // A refused view leaves the current tensor as it is; the program goes on.
      guarded(kHarness, [&] {
        tenferro::Tensor v = apply(in, t);
        check_view(v);
        t = std::move(v);
      });
    }
  });
  return 0;
}
