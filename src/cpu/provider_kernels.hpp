#pragma once
// CPU kernels that a provider library implements in its family folder (FFTW in
// src/fft, LAPACK in src/linalg), declared here so the CPU kernel table (src/cpu/kernel_table.cpp) lists them
// without including a family header (Note [Kernel tables]).
#include "core/internal_check.hpp"

#include "ops/kernel_table.hpp"

namespace tenferro::cpu {

/// FftKernel on FFTW3's guru64 interface (src/fft/fft.cpp).
void fft_kernel(Session& s, std::string_view op, const Tensor& x, const detail::FftRequest& r, const Tensor& out);

/// SvdKernel on LAPACK gesdd (src/linalg/svd.cpp).
SvdResult svd_kernel(Session& s, const Tensor& a, SvdMode mode, std::string_view op);

/// EighKernel on LAPACK syevd / heevd (src/linalg/eigen.cpp).
EighResult eigh_kernel(Session& s, const Tensor& a, Triangle tri, bool vectors, std::string_view op);
/// EigKernel on LAPACK geev (src/linalg/eigen.cpp).
EigResult eig_kernel(Session& s, const Tensor& a, bool vectors, std::string_view op);

/// QrKernel on LAPACK geqrf / orgqr (src/linalg/qr.cpp).
QrResult qr_kernel(Session& s, const Tensor& a, QrMode mode, bool positive_diagonal);
/// PivotedQrKernel on LAPACK geqp3 (src/linalg/qr.cpp).
PivotedQrResult qr_pivoted_kernel(Session& s, const Tensor& a, double rtol);

/// SolveKernel on LAPACK getrf + getrs (src/linalg/solve.cpp).
Tensor solve_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, std::string_view op);
/// TriangularSolveKernel on BLAS trsm (src/linalg/solve.cpp).
Tensor triangular_solve_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, const TriangularSolveOptions& o);
/// CholeskyKernel on LAPACK potrf (src/linalg/solve.cpp).
Tensor cholesky_kernel(Session& s, const Tensor& a, Triangle tri);
/// InvKernel on LAPACK getrf + getri (src/linalg/solve.cpp).
Tensor inv_kernel(Session& s, const Tensor& a);

/// MatrixExpKernel: scaling and squaring with a Padé approximant (src/linalg/matrix_exp.cpp).
Tensor matrix_exp_kernel(Session& s, const Tensor& a);
/// PivotsKernel (src/linalg/pivots.cpp).
Tensor pivots_to_permutation_kernel(Session& s, const Tensor& pivots, std::int64_t m, std::string_view op);

/// QrAppendKernel on LAPACK geqrf / orgqr (src/linalg/qr_update.cpp).
QrResult qr_append_columns_kernel(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C);

/// LstsqKernel on LAPACK gels / gelsd (src/linalg/lstsq.cpp).
LstsqResult lstsq_kernel(Session& s, const Tensor& a, const detail::linalg::Rhs& rhs, const Tensor& b, LstsqDriver driver, double rcond);
/// PinvKernel on the SVD (src/linalg/lstsq.cpp).
Tensor pinv_kernel(Session& s, const Tensor& a, double rtol);

/// MatrixNormKernel (src/linalg/norms.cpp; the SVD for nuclear and spectral).
Tensor matrix_norm_kernel(Session& s, const Tensor& a, MatrixNorm kind);
/// VectorNormKernel (src/linalg/norms.cpp).
Tensor vector_norm_kernel(Session& s, const Tensor& x, double p);

/// LuKernel on LAPACK getrf (src/linalg/lu.cpp).
LuResult lu_kernel(Session& s, const Tensor& a);
/// LuFactorKernel on LAPACK getrf (src/linalg/lu.cpp).
LuFactorResult lu_factor_kernel(Session& s, const Tensor& a);
/// LuSolveKernel on LAPACK getrs (src/linalg/lu.cpp).
Tensor lu_solve_kernel(Session& s, const LuFactorResult& f, const detail::linalg::Rhs& rhs, const Tensor& b);
/// FullPivLuKernel: batched complete pivoting as LAPACK getc2 does (src/linalg/lu.cpp).
FullPivLuResult lu_full_pivot_kernel(Session& s, const Tensor& a);
/// DetKernel from the LU diagonal (src/linalg/lu.cpp).
void det_kernel(Session& s, const Tensor& a, Tensor* det, Tensor* sign, Tensor* logabs, std::string_view op);

}  // namespace tenferro::cpu

namespace tenferro::detail {
/// FFTW's version string (fftw_version; src/fft/fft_plan.cpp), for CpuBackend::execution_info.
const char* fftw_version_string() noexcept;
}  // namespace tenferro::detail
