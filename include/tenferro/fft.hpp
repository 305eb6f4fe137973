#pragma once
/// \file fft.hpp
/// Discrete Fourier transforms on FFTW3: fft, ifft, rfft, irfft along one axis and
/// fftn, ifftn, rfftn, irfftn over any set of axes, with NumPy's semantics (numpy.fft)
/// read in column-major order.
///
/// Definitions (N = the transform length, k and j in [0, N)):
///   fft:  X[k] = scale · Σ_j x[j] · exp(-2πi·jk/N)
///   ifft: x[j] = scale · Σ_k X[k] · exp(+2πi·jk/N)
/// with scale set by FftNorm (NumPy's `norm`): backward (default) scales the inverse by
/// 1/N and the forward not at all, ortho scales both by 1/√N, forward scales the forward
/// by 1/N and the inverse not at all. For the n-dimensional forms N is the product of
/// the transform lengths.
///
/// Lengths: `n` (per axis for the n-d forms) is the transform length. The input is
/// cropped to n along the axis when longer and zero-padded when shorter. rfft returns
/// n/2+1 (integer division) complex values along its axis (the rest follow by Hermitian
/// symmetry); irfft reads n/2+1 of them (cropping or zero-padding its input) and
/// returns n real values; its default n is 2·(m−1) for an input of extent m, so an odd
/// length must be given explicitly (as in NumPy). In rfftn/irfftn the LAST axis of the
/// list is the halved one; the others get complex transforms.
///
/// Axes: the default axis is 0, the first (fastest) axis: with batch axes trailing, a
/// column-major [N, B] holds B signals of length N, which is NumPy's default (axis -1)
/// on the same memory. Negative axes count from the end. The n-d forms default to every
/// axis, or to the first n.size() axes when only `n` is given (NumPy: the last len(s)).
///
/// Dtypes: fft, ifft, fftn, ifftn and irfft(n) take f32, f64, c64, c128; a real input
/// is promoted (f32 → c64, f64 → c128). rfft and rfftn take f32 or f64 only. Outputs:
/// c64/c128 for complex results, f32/f64 for irfft. Integer and bool inputs are a
/// DTypeError, and so is a complex input to rfft.
///
/// Layouts: inputs may be any strided view (transposed, negative-stride, broadcast);
/// FFTW reads them in place through its guru interface. A copy is made only to
/// zero-pad, to convert a real input to complex (into the output itself), and for the
/// complex-to-real transforms, whose FFTW algorithms destroy their input.
///
/// Plans: FFTW plans are cached per backend (in the resources a session checks out),
/// keyed by the transform's shape, strides, alignment, dtype, direction, planner flags
/// and thread count; see fft_plan_cache_stats. The default planner is FFTW_ESTIMATE
/// (planning in microseconds, a deterministic choice); FftPlanner::measure times
/// candidate algorithms once per cached plan (milliseconds to seconds on the first
/// call, on scratch arrays: the caller's data is never touched while planning).
/// Threads: a transform runs on one thread unless it is large enough to be worth
/// forking (Note [Fork cost model]), then on the session's thread budget: FFTW's
/// parallel loops run on the backend's pinned worker arena (Note [FFTW threads]; this
/// replaces FFTW's loop process-wide, so threaded FFTW plans made by other code in the
/// process run their jobs on plain threads).
///
/// Errors (every function): SessionEntryError when the session is not usable on this
/// thread; ArgumentError for an undefined input, a transform length n <= 0 (given, or
/// implied by an empty axis or irfft's default with m = 1), or n and axes lists of
/// different lengths; AxisError for an axis out of range or listed twice; DTypeError as
/// above. `_into` forms also throw DTypeError / ShapeError for an output of the wrong
/// dtype / shape and ArgumentError for a read-only or self-overlapping output, or one
/// that overlaps the input. Every check runs before anything is written.

#include <cstdint>
#include <optional>

#include "tenferro/session.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

/// Normalization mode (NumPy's `norm`): which direction is scaled.
enum class FftNorm : std::uint8_t {
  backward,  ///< forward unscaled, inverse scaled by 1/N (default)
  ortho,     ///< both scaled by 1/√N (unitary)
  forward,   ///< forward scaled by 1/N, inverse unscaled
};

/// FFTW planner effort.
enum class FftPlanner : std::uint8_t {
  estimate,  ///< FFTW_ESTIMATE: heuristic choice, cheap to plan (default)
  measure,   ///< FFTW_MEASURE: times candidates once per cached plan (slow first call)
};

/// Options of the one-axis transforms.
struct FftOptions {
  std::optional<std::int64_t> n = std::nullopt;  ///< transform length (default: see fft.hpp)
  std::int64_t axis = 0;          ///< transformed axis (negative counts from the end)
  FftNorm norm = FftNorm::backward;
  FftPlanner planner = FftPlanner::estimate;
};

/// Options of the n-dimensional transforms.
struct FftnOptions {
  Dims axes = {};  ///< transformed axes in order (empty: all axes, or the first n.size())
  Dims n = {};     ///< per-axis transform lengths, paired with axes (empty: default lengths)
  FftNorm norm = FftNorm::backward;
  FftPlanner planner = FftPlanner::estimate;
};

/// Complex forward DFT along one axis. Throws as listed in fft.hpp.
TENFERRO_API Tensor fft(Session& s, const Tensor& x, const FftOptions& opt = {});
/// fft into `out` (complex, x's shape with n along the axis; any writable strided view).
TENFERRO_API void fft_into(Session& s, const Tensor& x, const Tensor& out, const FftOptions& opt = {});
/// Complex inverse DFT along one axis. Throws as listed in fft.hpp.
TENFERRO_API Tensor ifft(Session& s, const Tensor& x, const FftOptions& opt = {});
/// ifft into `out`.
TENFERRO_API void ifft_into(Session& s, const Tensor& x, const Tensor& out, const FftOptions& opt = {});
/// Real-input forward DFT along one axis: n/2+1 complex outputs. Throws as in fft.hpp.
TENFERRO_API Tensor rfft(Session& s, const Tensor& x, const FftOptions& opt = {});
/// rfft into `out` (complex, x's shape with n/2+1 along the axis).
TENFERRO_API void rfft_into(Session& s, const Tensor& x, const Tensor& out, const FftOptions& opt = {});
/// Inverse of rfft: n real outputs (default n = 2·(m−1)). Throws as in fft.hpp.
TENFERRO_API Tensor irfft(Session& s, const Tensor& x, const FftOptions& opt = {});
/// irfft into `out` (real, x's shape with n along the axis).
TENFERRO_API void irfft_into(Session& s, const Tensor& x, const Tensor& out, const FftOptions& opt = {});

/// Complex forward DFT over a set of axes. Throws as listed in fft.hpp.
TENFERRO_API Tensor fftn(Session& s, const Tensor& x, const FftnOptions& opt = {});
/// fftn into `out`.
TENFERRO_API void fftn_into(Session& s, const Tensor& x, const Tensor& out, const FftnOptions& opt = {});
/// Complex inverse DFT over a set of axes. Throws as listed in fft.hpp.
TENFERRO_API Tensor ifftn(Session& s, const Tensor& x, const FftnOptions& opt = {});
/// ifftn into `out`.
TENFERRO_API void ifftn_into(Session& s, const Tensor& x, const Tensor& out, const FftnOptions& opt = {});
/// Real-input DFT over a set of axes (the last listed axis halved). At least one axis
/// (ArgumentError otherwise). Throws as listed in fft.hpp.
TENFERRO_API Tensor rfftn(Session& s, const Tensor& x, const FftnOptions& opt = {});
/// rfftn into `out`.
TENFERRO_API void rfftn_into(Session& s, const Tensor& x, const Tensor& out, const FftnOptions& opt = {});
/// Inverse of rfftn (the last listed axis has n real outputs, default 2·(m−1)). At
/// least one axis (ArgumentError otherwise). Throws as listed in fft.hpp.
TENFERRO_API Tensor irfftn(Session& s, const Tensor& x, const FftnOptions& opt = {});
/// irfftn into `out`.
TENFERRO_API void irfftn_into(Session& s, const Tensor& x, const Tensor& out, const FftnOptions& opt = {});

/// Counters of the FFTW plan cache of the session's checked-out resources (hits,
/// misses, entries now cached, evictions). Throws SessionEntryError when the session
/// is not usable on this thread.
TENFERRO_API PlanCacheStats fft_plan_cache_stats(Session& s);

}  // namespace tenferro
