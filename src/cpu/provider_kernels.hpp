#pragma once
// CPU kernels that a provider library implements in its family folder (FFTW in
// src/fft), declared here so the CPU kernel table (src/cpu/kernel_table.cpp) lists them
// without including a family header (Note [Kernel tables]).
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// FftKernel on FFTW3's guru64 interface (src/fft/fft.cpp).
void fft_kernel(Session& s, std::string_view op, const Tensor& x, const detail::FftRequest& r, const Tensor& out);

}  // namespace tenferro::cpu
