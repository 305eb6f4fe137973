// fft, ifft, rfft, irfft and their n-dimensional forms on FFTW3's guru64 interface.
//
// Every public function resolves its request (validation, axes, lengths, output shape
// and dtype) completely before anything is written, then runs one driver:
//   1. crop: the input sliced to the transform length along each transformed axis (a
//      view, no copy);
//   2. source: the cropped view itself when FFTW can read it (any strides, including
//      negative and zero ones: FFTW's guru interface takes signed strides and plans
//      out-of-place transforms with FFTW_PRESERVE_INPUT); otherwise a copy:
//        - complex transforms that zero-pad or promote a real input copy into the
//          output itself and transform it in place (no temporary);
//        - rfft that zero-pads copies into a pooled compact temporary;
//        - irfft always copies into a pooled temporary, since FFTW's c2r algorithms
//          destroy their input (and multi-dimensional ones cannot preserve it);
//   3. plan: FFTW's guru problem is the transformed axes (in the caller's order, the
//      last one halved for r2c/c2r) with the source's and the output's strides, and a
//      loop ("howmany") over the other axes. The plan comes from the session's cache;
//   4. execute with the new-array functions, then scale by the norm when needed.
//
// Example: fftn(x, {.axes = {2, 0}}) on a compact [4, 5, 6] c128 x gives FFTW
//   dims    = {(6, 20, 20), (4, 1, 1)}   (n, input stride, output stride)
//   howmany = {(5, 4, 4)}
// one plan, one call, no copy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/layout.hpp"
#include "cpu/context.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "fft/fft_plan.hpp"
#include "fft/fft_threads.hpp"
#include "tenferro/fft.hpp"

namespace tenferro {
namespace detail {
namespace {

/// A validated request: which transform, over which axes, with which lengths.
struct FftRequest {
  FftKind kind = FftKind::c2c_forward;
  FftNorm norm = FftNorm::backward;
  bool measure = false;
  int naxes = 0;
  int axes[kMaxRank];          ///< normalized, in the caller's order
  std::int64_t len[kMaxRank];  ///< logical transform length per listed axis
  DType out_dtype = DType::c128;
  int rank = 0;
  std::int64_t out_shape[kMaxRank];
  std::int64_t in_need[kMaxRank];  ///< extent the transform reads along each x axis

  std::span<const std::int64_t> shape() const noexcept { return {out_shape, static_cast<std::size_t>(rank)}; }
};

bool is_forward(FftKind k) noexcept { return k == FftKind::c2c_forward || k == FftKind::r2c; }

// Dtype rule of the op family (see fft.hpp): rfft takes real floats only; the others
// any float or complex dtype.
void check_input(std::string_view op, const Tensor& x, FftKind kind) {
  require_cpu_tensor(x, op, "x");
  if (kind == FftKind::r2c) {
    if (!is_floating(x.dtype())) throw DTypeError(op, "input " + describe(x) + " must be f32 or f64 (a real transform)");
  } else if (!is_inexact(x.dtype())) {
    throw DTypeError(op, "input " + describe(x) + " must be f32, f64, c64 or c128");
  }
}

// Note [Enums at the API boundary] (core/enum_check.hpp): an unknown FftNorm would
// silently apply a scale, an unknown FftPlanner silently estimate.
void check_options(std::string_view op, FftNorm norm, FftPlanner planner) {
  require_enum(norm, FftNorm::forward, op, "FftNorm");
  require_enum(planner, FftPlanner::measure, op, "FftPlanner");
}

// Output shape, dtype and the per-axis input extents, from the resolved axes/lengths.
void finish_request(std::string_view op, const Tensor& x, FftRequest& r) {
  r.rank = x.rank();
  for (int a = 0; a < r.rank; ++a) r.out_shape[a] = r.in_need[a] = x.extent(a);
  for (int i = 0; i < r.naxes; ++i) {
    const int a = r.axes[i];
    r.out_shape[a] = r.in_need[a] = r.len[i];
  }
  if (r.naxes > 0) {
    const int last = r.axes[r.naxes - 1];
    const std::int64_t half = r.len[r.naxes - 1] / 2 + 1;
    if (r.kind == FftKind::r2c) r.out_shape[last] = half;
    if (r.kind == FftKind::c2r) r.in_need[last] = half;
  }
  const DType c = complex_dtype(x.dtype());
  r.out_dtype = r.kind == FftKind::c2r ? real_dtype(c) : c;
  checked_numel(r.shape(), op);
}

// Transform length of listed axis i: given (must be >= 1) or the default.
std::int64_t resolve_length(std::string_view op, const Tensor& x, int axis, bool halved_axis, FftKind kind, const std::int64_t* given) {
  if (given) {
    if (*given <= 0) throw ArgumentError(op, "transform length n = " + std::to_string(*given) + " for axis " + std::to_string(axis) + " must be >= 1");
    return *given;
  }
  const std::int64_t m = x.extent(axis);
  const std::int64_t n = kind == FftKind::c2r && halved_axis ? 2 * (m - 1) : m;
  if (n <= 0)
    throw ArgumentError(op, "invalid transform length " + std::to_string(n) + " implied by axis " + std::to_string(axis) + " of extent " +
                                std::to_string(m) + " of " + describe(x) + " (give n explicitly)");
  return n;
}

void resolve_1d(std::string_view op, const Tensor& x, const FftOptions& o, FftKind kind, FftRequest& r) {
  check_input(op, x, kind);
  check_options(op, o.norm, o.planner);
  r.kind = kind;
  r.norm = o.norm;
  r.measure = o.planner == FftPlanner::measure;
  r.naxes = 1;
  r.axes[0] = normalize_axis(o.axis, x.rank(), op);
  r.len[0] = resolve_length(op, x, r.axes[0], true, kind, o.n ? &*o.n : nullptr);
  finish_request(op, x, r);
}

void resolve_nd(std::string_view op, const Tensor& x, const FftnOptions& o, FftKind kind, FftRequest& r) {
  check_input(op, x, kind);
  check_options(op, o.norm, o.planner);
  r.kind = kind;
  r.norm = o.norm;
  r.measure = o.planner == FftPlanner::measure;
  if (o.axes.empty()) {
    const int count = o.n.empty() ? x.rank() : o.n.size();
    if (count > x.rank())
      throw ArgumentError(op, "n " + o.n.to_string() + " has more entries than " + describe(x) + " has axes");
    r.naxes = count;
    for (int i = 0; i < count; ++i) r.axes[i] = i;
  } else {
    if (!o.n.empty() && o.n.size() != o.axes.size())
      throw ArgumentError(op, "n " + o.n.to_string() + " and axes " + o.axes.to_string() + " have different lengths");
    if (o.axes.size() > x.rank()) throw AxisError(op, "axes " + o.axes.to_string() + " list more axes than " + describe(x) + " has");
    r.naxes = o.axes.size();
    std::uint64_t seen = 0;
    for (int i = 0; i < r.naxes; ++i) {
      r.axes[i] = normalize_axis(o.axes[i], x.rank(), op);
      const std::uint64_t bit = std::uint64_t{1} << r.axes[i];
      if (seen & bit) throw AxisError(op, "axis " + std::to_string(o.axes[i]) + " listed twice in axes " + o.axes.to_string());
      seen |= bit;
    }
  }
  if (r.naxes == 0 && (kind == FftKind::r2c || kind == FftKind::c2r))
    throw ArgumentError(op, "a real transform needs at least one axis (x is " + describe(x) + ")");
  for (int i = 0; i < r.naxes; ++i)
    r.len[i] = resolve_length(op, x, r.axes[i], i == r.naxes - 1, kind, o.n.empty() ? nullptr : o.n.data() + i);
  finish_request(op, x, r);
}

// Sets a (possibly strided) tensor to zero.
void zero_fill(Session& s, const Tensor& t) {
  if (t.is_contiguous()) {
    std::memset(t.mutable_data(), 0, static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype()));
    return;
  }
  const Tensor z = Tensor::zeros({}, t.dtype());
  copy_into(s, z.broadcast_view(t.shape().span()), t);
}

// `t` sliced to [0, extent[a]) along every axis (a view).
Tensor leading_view(Tensor t, const std::int64_t* extent) {
  for (int a = 0; a < t.rank(); ++a)
    if (extent[a] < t.extent(a)) t = t.slice_view(a, 0, extent[a]);
  return t;
}

// Copies (with dtype conversion) the cropped input into `dst` (shape = the transform's
// input extents), zero-filling the padding.
void pack(Session& s, const Tensor& xin, const Tensor& dst, bool pad) {
  if (pad) zero_fill(s, dst);
  std::int64_t ext[kMaxRank];
  for (int a = 0; a < xin.rank(); ++a) ext[a] = xin.extent(a);
  const Tensor region = pad ? leading_view(dst, ext) : dst;
  if (xin.dtype() == dst.dtype()) copy_into(s, xin, region);
  else cast_into(s, xin, region);
}

int ceil_log2(std::int64_t v) noexcept {
  int l = 0;
  while ((std::int64_t{1} << l) < v && l < 62) ++l;
  return l;
}

// Runs a resolved request into `out` (validated, or freshly allocated).
void run(Session& s, std::string_view op, const Tensor& x, const FftRequest& r, const Tensor& out) {
  if (out.numel() == 0) return;
  // 1. Crop (a view only when some axis is longer than the transform reads).
  std::int64_t crop[kMaxRank];
  bool pad = false, cut = false;
  for (int a = 0; a < r.rank; ++a) {
    crop[a] = std::min(x.extent(a), r.in_need[a]);
    pad = pad || r.in_need[a] > x.extent(a);
    cut = cut || r.in_need[a] < x.extent(a);
  }
  Tensor cropped;
  if (cut) cropped = leading_view(x, crop);
  const Tensor& xin = cut ? cropped : x;
  // 2. Source (no handle copies on the direct path: this runs for every tiny call).
  Tensor packed;
  const Tensor* srcp = &xin;
  if (r.kind == FftKind::c2c_forward || r.kind == FftKind::c2c_backward) {
    if (pad || xin.dtype() != out.dtype()) {
      pack(s, xin, out, pad);
      srcp = &out;
    }
  } else if (r.kind == FftKind::c2r || pad) {
    const DType d = r.kind == FftKind::r2c ? x.dtype() : complex_dtype(r.out_dtype);
    packed = new_output(std::span<const std::int64_t>(r.in_need, static_cast<std::size_t>(r.rank)), d, op);
    pack(s, xin, packed, pad);
    srcp = &packed;
  }
  const Tensor& src = *srcp;
  // 3. Problem: transformed axes in the caller's order, the others as the loop.
  FftProblem p;
  p.kind = r.kind;
  p.single = real_dtype(r.out_dtype) == DType::f32;
  p.measure = r.measure;
  std::uint64_t listed = 0;
  std::int64_t total = 1;
  for (int i = 0; i < r.naxes; ++i) {
    const int a = r.axes[i];
    listed |= std::uint64_t{1} << a;
    p.dims[static_cast<std::size_t>(i)] = {r.len[i], src.stride(a), out.stride(a)};
    total *= r.len[i];
  }
  p.rank = r.naxes;
  for (int a = 0; a < r.rank; ++a)
    if (!(listed >> a & 1) && out.extent(a) != 1)
      p.howmany[static_cast<std::size_t>(p.howmany_rank++)] = {out.extent(a), src.stride(a), out.stride(a)};
  p.threads = fork_threads(s, out.numel(), std::max(1, ceil_log2(total)));
  // 4. Plan (cached) and execute.
  void* in_ptr = const_cast<void*>(src.data());  // read-only unless c2r on our temporary
  void* out_ptr = out.mutable_data(op);
  const bool in_place = in_ptr == out_ptr;
  std::int64_t key[kMaxFftKey];
  std::uint64_t hash = 0;
  const int len = fft_cache_key(p, fft_alignment_of(in_ptr, p.single), fft_alignment_of(out_ptr, p.single), in_place, key, hash);
  // FFTW's parallel loops (plans with threads > 1) run on this session's arena while
  // planning and executing: Note [FFTW threads].
  const FftSessionScope fftw_session(p.threads > 1 ? &s : nullptr);
  BoundedCache<ErasedHandle>& cache = cpu_context(s).resources->fft_plans;
  ErasedHandle* plan = cache.find(key, len, hash);
  if (!plan) {
    std::int64_t in_lo = 0, in_hi = 0, out_lo = 0, out_hi = 0;
    if (p.measure) {
      std::tie(in_lo, in_hi) = offset_range(src.shape().span(), src.strides().span(), op);
      std::tie(out_lo, out_hi) = offset_range(out.shape().span(), out.strides().span(), op);
    }
    plan = cache.insert(key, len, hash, owned_fft_plan(make_fft_plan(op, p, in_ptr, out_ptr, in_lo, in_hi, out_lo, out_hi)));
  }
  execute_fft_plan({plan->get(), p.single}, p.kind, in_ptr, out_ptr);
  // 5. Normalization (FFTW computes unnormalized sums).
  double scale = 1.0;
  const double N = static_cast<double>(total);
  if (r.norm == FftNorm::ortho) scale = 1.0 / std::sqrt(N);
  else if ((r.norm == FftNorm::backward) != is_forward(r.kind)) scale = 1.0 / N;
  if (scale != 1.0) mul_into(s, out, scale, out);
}

// True when `out` certainly passes require_output: a defined, writable, compact CPU
// tensor of the right dtype and shape (compact means no self-overlap, so the sort in
// the general check is not needed). Anything else goes through require_output, which
// throws the precise error or accepts a valid strided view.
bool valid_compact_output(const Tensor& out, const FftRequest& r) noexcept {
  if (!out.defined() || out.device().kind != DeviceKind::cpu || out.dtype() != r.out_dtype || out.rank() != r.rank || out.read_only())
    return false;
  for (int a = 0; a < r.rank; ++a)
    if (out.extent(a) != r.out_shape[a]) return false;
  return out.is_contiguous();
}

// The shared entry: resolve, validate/allocate the output, run.
template <class Options>
void fft_entry(Session& s, std::string_view op, const Tensor& x, const Options& o, FftKind kind, const Tensor* out, Tensor& result) {
  s.check(op);
  FftRequest r;
  if constexpr (std::is_same_v<Options, FftOptions>) resolve_1d(op, x, o, kind, r);
  else resolve_nd(op, x, o, kind, r);
  if (out) {
    if (!valid_compact_output(*out, r)) require_output(*out, op, r.out_dtype, r.shape());
    check_overlap(*out, x, op, false);
    run(s, op, x, r, *out);
  } else {
    result = new_output(r.shape(), r.out_dtype, op);
    run(s, op, x, r, result);
  }
}

}  // namespace
}  // namespace detail

#define TENFERRO_FFT_OP(name, Options, kind)                                           \
  Tensor name(Session& s, const Tensor& x, const Options& opt) {                       \
    Tensor r;                                                                          \
    detail::fft_entry(s, #name, x, opt, detail::FftKind::kind, nullptr, r);            \
    return r;                                                                          \
  }                                                                                    \
  void name##_into(Session& s, const Tensor& x, const Tensor& out, const Options& opt) { \
    Tensor r;                                                                          \
    detail::fft_entry(s, #name, x, opt, detail::FftKind::kind, &out, r);               \
  }
TENFERRO_FFT_OP(fft, FftOptions, c2c_forward)
TENFERRO_FFT_OP(ifft, FftOptions, c2c_backward)
TENFERRO_FFT_OP(rfft, FftOptions, r2c)
TENFERRO_FFT_OP(irfft, FftOptions, c2r)
TENFERRO_FFT_OP(fftn, FftnOptions, c2c_forward)
TENFERRO_FFT_OP(ifftn, FftnOptions, c2c_backward)
TENFERRO_FFT_OP(rfftn, FftnOptions, r2c)
TENFERRO_FFT_OP(irfftn, FftnOptions, c2r)
#undef TENFERRO_FFT_OP

PlanCacheStats fft_plan_cache_stats(Session& s) {
  s.check("fft_plan_cache_stats");
  return detail::cpu_context(s).resources->fft_plans.stats();
}

}  // namespace tenferro
