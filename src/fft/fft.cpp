// The CPU kernel of fft, ifft, rfft, irfft and their n-dimensional forms on FFTW3's
// guru64 interface (cpu::fft_kernel, cpu/provider_kernels.hpp).
//
// The front end (src/ops/fft.cpp) resolves the request (validation, axes, lengths,
// output shape and dtype) completely before anything is written; the kernel then runs:
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
#include "cpu/provider_kernels.hpp"
#include "fft/fft_plan.hpp"
#include "fft/fft_threads.hpp"
#include "tenferro/fft.hpp"

namespace tenferro {
namespace detail {
namespace {

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
    packed = new_output(s, std::span<const std::int64_t>(r.in_need, static_cast<std::size_t>(r.rank)), d, op);
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

}  // namespace
}  // namespace detail

namespace cpu {

void fft_kernel(Session& s, std::string_view op, const Tensor& x, const detail::FftRequest& r, const Tensor& out) {
  detail::run(s, op, x, r, out);
}

}  // namespace cpu

PlanCacheStats fft_plan_cache_stats(Session& s) {
  s.check("fft_plan_cache_stats");
  return detail::cpu_context(s).resources->fft_plans.stats();
}

}  // namespace tenferro
