#pragma once
// The recorded forms of tenferro.linalg (linalg_ad.cpp).
#include "bind.hpp"

namespace tfpy {

/// The options of a linalg call that its recorded form needs.
struct LinalgArgs {
  bool full_matrices = true, compute_uv = true;
  std::string mode = "reduced";  ///< qr
  tenferro::Triangle tri = tenferro::Triangle::lower;
  double rcond = -1.0;  ///< pinv
};

/// The recorded single-matrix op `op` (svd, svdvals, qr, eigh, eigvalsh, eig, eigvals,
/// inv, det, slogdet, pinv, cholesky, matrix_exp) on a, with NumPy's results.
py::object recorded_linalg(const char* op, ad::Context& ctx, const ad::EagerTensor& a, const LinalgArgs& args);
/// The recorded solve (b a stack of vectors or of matrices, as NumPy's).
py::object recorded_solve(ad::Context& ctx, py::handle a, py::handle b);
/// The recorded norm: vector norms (axis None on a vector, or an int axis) and the
/// Frobenius norm of the whole tensor; UnsupportedError for the other matrix norms.
py::object recorded_norm(ad::Context& ctx, const ad::EagerTensor& x, py::handle ord, py::handle axis, bool keepdims);

}  // namespace tfpy
