#pragma once
// Plain references for the FFT tests: an O(n²) DFT along one axis of a host c128
// tensor (with NumPy's crop / zero-pad to n), composed axis by axis for the
// n-dimensional forms, and the Hermitian completion that defines irfft.
#include <cmath>
#include <numbers>

#include "support/test_util.hpp"

namespace tenferro::testing {

/// A compact c128 host copy of any tensor's values.
inline Tensor to_c128(const Tensor& x) {
  Tensor r = Tensor::empty(x.shape().span(), DType::c128);
  for_each_index(x.shape(), [&](const Dims& i) { r.set<c128>(i.span(), value_at(x, i)); });
  return r;
}

/// x cropped or zero-padded to extent n along `axis` (a new compact c128 tensor).
inline Tensor resize_axis(const Tensor& x, int axis, std::int64_t n) {
  Shape shape = x.shape();
  shape[axis] = n;
  Tensor r = Tensor::zeros(shape.span(), DType::c128);
  for_each_index(shape, [&](const Dims& i) {
    if (i[axis] < x.extent(axis)) r.set<c128>(i.span(), value_at(x, i));
  });
  return r;
}

/// Unnormalized DFT along `axis` after resizing to n; sign -1 forward, +1 inverse.
/// The twiddle uses (j·k mod n) so large products keep full accuracy.
inline Tensor naive_dft(const Tensor& x, int axis, std::int64_t n, int sign) {
  const Tensor a = resize_axis(x, axis, n);
  Tensor r = Tensor::zeros(a.shape().span(), DType::c128);
  for_each_index(a.shape(), [&](const Dims& out_i) {
    Dims in_i = out_i;
    c128 acc = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      in_i[axis] = j;
      const double ang = sign * 2 * std::numbers::pi * static_cast<double>((j * out_i[axis]) % n) / static_cast<double>(n);
      acc += a.item<c128>(in_i.span()) * std::polar(1.0, ang);
    }
    r.set<c128>(out_i.span(), acc);
  });
  return r;
}

/// The first `count` entries along `axis`.
inline Tensor head_axis(const Tensor& x, int axis, std::int64_t count) { return resize_axis(x, axis, count); }

/// irfft along one axis (unnormalized): the input resized to n/2+1, completed to a
/// Hermitian spectrum of length n (X[n-k] = conj(X[k]); the imaginary parts of X[0]
/// and, for even n, X[n/2] are dropped, as NumPy and FFTW do), inverse DFT, real part.
inline Tensor naive_irfft(const Tensor& x, int axis, std::int64_t n) {
  const Tensor h = resize_axis(x, axis, n / 2 + 1);
  Shape shape = h.shape();
  shape[axis] = n;
  Tensor full = Tensor::zeros(shape.span(), DType::c128);
  for_each_index(shape, [&](const Dims& i) {
    Dims src = i;
    const std::int64_t k = i[axis];
    c128 v;
    if (k <= n / 2) {
      v = h.item<c128>(i.span());
      if (k == 0 || 2 * k == n) v = v.real();
    } else {
      src[axis] = n - k;
      v = std::conj(h.item<c128>(src.span()));
    }
    full.set<c128>(i.span(), v);
  });
  Tensor r = naive_dft(full, axis, n, +1);
  for_each_index(shape, [&](const Dims& i) { r.set<c128>(i.span(), r.item<c128>(i.span()).real()); });
  return r;
}

/// Product of lengths → the norm's scale for a forward (or inverse) transform.
inline double norm_scale(FftNorm norm, bool forward, double N) {
  if (norm == FftNorm::ortho) return 1 / std::sqrt(N);
  if ((norm == FftNorm::backward) != forward) return 1 / N;
  return 1;
}

/// Multiplies every element of a c128 host tensor by `f`.
inline Tensor scaled(Tensor t, double f) {
  for_each_index(t.shape(), [&](const Dims& i) { t.set<c128>(i.span(), t.item<c128>(i.span()) * f); });
  return t;
}

/// Tolerance for an FFT of total length N in dtype d: an FFT's error grows like
/// eps·log2(N) relative to the largest output (≈ √N·|x|), which `close` measures
/// against 1 + |b|.
inline double fft_tol(DType d, double N) { return 8 * epsilon_of(d) * (std::log2(N + 1) + 1) * std::sqrt(N + 1); }

/// EXPECT every element of `got` close to the c128 reference.
inline void expect_close_to(const Tensor& got, const Tensor& ref, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  int bad = 0;
  for_each_index(ref.shape(), [&](const Dims& i) {
    const auto a = value_at(got, i), b = ref.item<c128>(i.span());
    if (!close(a, b, tol) && bad++ < 3) ADD_FAILURE() << what << " at " << i.to_string() << ": got " << a << ", want " << b << " (tol " << tol << ")";
  });
}

}  // namespace tenferro::testing
