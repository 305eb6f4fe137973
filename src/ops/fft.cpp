// The FFT family's front ends: fft, ifft, rfft, irfft and their n-dimensional forms
// (fft.hpp). The request is resolved by pure inference (ops/fft.hpp), the output
// validated or allocated once, then the session's FftKernel runs it (on the CPU,
// FFTW's guru64 interface: src/fft/fft.cpp).
#include "ops/fft.hpp"

#include <string>
#include <type_traits>

#include "core/enum_check.hpp"
#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {
namespace {

// Dtype rule of the op family (see fft.hpp): rfft takes real floats only; the others
// any float or complex dtype.
void check_input(std::string_view op, const Tensor& x, FftKind kind) {
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

/// The input and option checks every transform shares, and the request they start.
FftRequest start_request(std::string_view op, const Tensor& x, FftKind kind, FftNorm norm, FftPlanner planner) {
  check_input(op, x, kind);
  check_options(op, norm, planner);
  FftRequest r;
  r.kind = kind;
  r.norm = norm;
  r.measure = planner == FftPlanner::measure;
  return r;
}

}  // namespace

FftRequest fft_infer(std::string_view op, const Tensor& x, const FftOptions& o, FftKind kind) {
  FftRequest r = start_request(op, x, kind, o.norm, o.planner);
  r.naxes = 1;
  r.axes[0] = normalize_axis(o.axis, x.rank(), op);
  r.len[0] = resolve_length(op, x, r.axes[0], true, kind, o.n ? &*o.n : nullptr);
  finish_request(op, x, r);
  return r;
}

FftRequest fft_infer(std::string_view op, const Tensor& x, const FftnOptions& o, FftKind kind) {
  FftRequest r = start_request(op, x, kind, o.norm, o.planner);
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
  return r;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;

/// The catalogue row of a transform kind (the n-dimensional forms share it).
constexpr OpId fft_op(FftKind k) noexcept {
  switch (k) {
    case FftKind::c2c_forward: return OpId::fft;
    case FftKind::c2c_backward: return OpId::ifft;
    case FftKind::r2c: return OpId::rfft;
    case FftKind::c2r: return OpId::irfft;
  }
  return OpId::fft;
}

// True when `out` certainly passes require_output: a defined, writable, compact
// tensor on the session's device of the right dtype and shape (compact means no self-overlap, so the sort in
// the general check is not needed). Anything else goes through require_output, which
// throws the precise error or accepts a valid strided view.
bool valid_compact_output(const Tensor& out, const FftRequest& r, DeviceKind device) noexcept {
  if (!out.defined() || out.device().kind != device || out.dtype() != r.out_dtype || out.rank() != r.rank || out.read_only())
    return false;
  for (int a = 0; a < r.rank; ++a)
    if (out.extent(a) != r.out_shape[a]) return false;
  return out.is_contiguous();
}

// The shared entry: resolve, validate/allocate the output, run.
template <class Options>
void fft_entry(Session& s, std::string_view op, const Tensor& x, const Options& o, FftKind kind, const Tensor* out, Tensor& result) {
  s.check(op);
  require_tensor_on(x, s.device(), op, "x");
  const FftRequest r = fft_infer(op, x, o, kind);
  const FftKernel k = kernel_for(s, fft_op(kind), x.dtype()).fn.fft;
  if (out) {
    if (!valid_compact_output(*out, r, s.device())) require_output(*out, op, r.out_dtype, r.shape(), s.device());
    check_overlap(*out, x, op, false);
    out->note_write();  // Note [Version counters]
    k(s, op, x, r, *out);
  } else {
    result = new_output(s, r.shape(), r.out_dtype, op);
    k(s, op, x, r, result);
  }
}

}  // namespace

#define TENFERRO_FFT_OP(name, Options, kind)                                           \
  Tensor name(Session& s, const Tensor& x, const Options& opt) {                       \
    Tensor r;                                                                          \
    fft_entry(s, #name, x, opt, FftKind::kind, nullptr, r);                            \
    return r;                                                                          \
  }                                                                                    \
  void name##_into(Session& s, const Tensor& x, const Tensor& out, const Options& opt) { \
    Tensor r;                                                                          \
    fft_entry(s, #name, x, opt, FftKind::kind, &out, r);                               \
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

}  // namespace tenferro
