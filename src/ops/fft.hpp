#pragma once
// The FFT family's inference (src/ops/fft.cpp): a request (FftOptions or FftnOptions on
// an input's shape and dtype) resolved into the transform kind, the normalized axes,
// the transform lengths and the output signature, from metadata only. The CPU kernel
// (FFTW, src/fft/fft.cpp) receives the resolved request.
#include "core/internal_check.hpp"

#include <cstdint>
#include <span>
#include <string_view>

#include "tenferro/fft.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// The transform kind (FFTW's: complex forward/backward, real-to-complex, complex-to-real).
enum class FftKind : std::uint8_t { c2c_forward, c2c_backward, r2c, c2r };

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

  /// The output shape.
  std::span<const std::int64_t> shape() const noexcept { return {out_shape, static_cast<std::size_t>(rank)}; }
};

/// Whether `k` is a forward transform (the sign and the default normalization).
inline bool is_forward(FftKind k) noexcept { return k == FftKind::c2c_forward || k == FftKind::r2c; }

/// fft / ifft / rfft / irfft along one axis: DTypeError for an input dtype the kind does
/// not take, ArgumentError for a bad length or option, AxisError for a bad axis.
FftRequest fft_infer(std::string_view op, const Tensor& x, const FftOptions& o, FftKind kind);
/// The n-dimensional forms: as fft_infer, plus AxisError for a repeated axis and
/// ArgumentError for n and axes of different lengths or a real transform of no axis.
FftRequest fft_infer(std::string_view op, const Tensor& x, const FftnOptions& o, FftKind kind);

}  // namespace tenferro::detail
