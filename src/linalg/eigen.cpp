// The CPU's eigenproblem kernels (cpu::eigh_kernel, cpu::eig_kernel; the front ends in
// src/ops/linalg_eigen.cpp): Hermitian (LAPACK syevd/heevd, divide and conquer) and
// general (geev).
#include <algorithm>

#include "cpu/provider_kernels.hpp"
#include "linalg/common.hpp"

namespace tenferro {
namespace detail::linalg {
namespace {

// Hermitian eigenproblem. With vectors, A is packed straight into V and syevd
// overwrites it with the eigenvectors; without, into the workspace.
template <class T> EighResult eigh_typed(Session& s, const Tensor& a, Triangle tri, bool vectors, std::string_view op) {
  using R = real_t<T>;
  const std::int64_t n = a.extent(0);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  EighResult r;
  r.W = new_result(vector_shape(n, a).span(), dtype_of<R>);
  if (vectors) r.V = new_result(matrix_shape(n, n, a).span(), dtype_of<T>);
  if (nb == 0 || n == 0) return r;
  const char jobz = vectors ? 'V' : 'N', uplo = tri == Triangle::lower ? 'L' : 'U';
  const auto ln = static_cast<lapack::lint>(n);
  const LinalgWorkspace w = cached_workspace(s, op, Routine::syevd, dtype_of<T>, static_cast<std::uint32_t>(jobz) << 8 | uplo, n, 0, 0, [&](lapack::lint& info) {
    T a1{}, q{};
    R w1{}, rq{};
    lapack::lint iq{};
    info = lapack::syevd<T>(jobz, uplo, ln, &a1, ln, &w1, &q, -1, &rq, -1, &iq, -1);
    std::int64_t lr = 0;
    if constexpr (is_complex_v<T>) lr = static_cast<std::int64_t>(rq);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), std::max<std::int64_t>(1, lr), std::max<std::int64_t>(1, iq)};
  });
  T* V = vectors ? static_cast<T*>(r.V.mutable_data()) : nullptr;
  R* W = static_cast<R*>(r.W.mutable_data());
  const std::size_t slot = (vectors ? 0 : Carve::bytes<T>(n * n)) + Carve::bytes<T>(w.lwork) + Carve::bytes<R>(w.lrwork) +
                           Carve::bytes<lapack::lint>(w.liwork);
  const BatchFailure f = run_batches(s, nb, 10 * n * n * n + 256, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = vectors ? V + b * n * n : c.take<T>(n * n);
    T* work = c.take<T>(w.lwork);
    R* rwork = c.take<R>(w.lrwork);
    lapack::lint* iwork = c.take<lapack::lint>(w.liwork);
    pack_matrix(a, b, A, n);
    return lapack::syevd<T>(jobz, uplo, ln, A, ln, W + b * n, work, static_cast<lapack::lint>(w.lwork), rwork,
                            static_cast<lapack::lint>(w.lrwork), iwork, static_cast<lapack::lint>(w.liwork));
  });
  if (f) throw_numerical(op, is_complex_v<T> ? "heevd" : "syevd", "the eigensolver did not converge", f);
  return r;
}

// General eigenproblem (right vectors). Complex T: geev writes W and V directly.
// Real T: conjugate pairs come back as (wr ± i·wi) with vectors vr[:, j] ± i·vr[:, j+1].
template <class T> EigResult eig_typed(Session& s, const Tensor& a, bool vectors, std::string_view op) {
  using R = real_t<T>;
  using C = std::complex<R>;
  const std::int64_t n = a.extent(0);
  std::int64_t nb = 1;
  for (int i = 2; i < a.rank(); ++i) nb *= a.extent(i);
  EigResult r;
  r.W = new_result(vector_shape(n, a).span(), dtype_of<C>);
  if (vectors) r.V = new_result(matrix_shape(n, n, a).span(), dtype_of<C>);
  if (nb == 0 || n == 0) return r;
  const char jobvr = vectors ? 'V' : 'N';
  const auto ln = static_cast<lapack::lint>(n);
  const LinalgWorkspace w = cached_workspace(s, op, Routine::geev, dtype_of<T>, static_cast<std::uint32_t>(jobvr), n, 0, 0, [&](lapack::lint& info) {
    T a1{}, w1{}, v1{}, q{};
    R wi{}, rw{};
    info = lapack::geev<T>('N', jobvr, ln, &a1, ln, &w1, &wi, &v1, 1, &v1, ln, &q, -1, &rw);
    return LinalgWorkspace{std::max<std::int64_t>(1, lwork_of(q)), is_complex_v<T> ? 2 * n : 0, 0};
  });
  C* W = static_cast<C*>(r.W.mutable_data());
  C* V = vectors ? static_cast<C*>(r.V.mutable_data()) : nullptr;
  const bool real = !is_complex_v<T>;
  const std::size_t slot = Carve::bytes<T>(n * n) + Carve::bytes<T>(w.lwork) + Carve::bytes<R>(w.lrwork) +
                           (real ? Carve::bytes<R>(2 * n) + (vectors ? Carve::bytes<T>(n * n) : 0) : 0);
  const BatchFailure f = run_batches(s, nb, 25 * n * n * n + 256, slot, [&](std::int64_t b, std::byte* ws) -> std::int64_t {
    Carve c(ws);
    T* A = c.take<T>(n * n);
    T* work = c.take<T>(w.lwork);
    R* rwork = c.take<R>(w.lrwork);
    pack_matrix(a, b, A, n);
    T v1{};
    if constexpr (is_complex_v<T>) {
      return lapack::geev<T>('N', jobvr, ln, A, ln, W + b * n, nullptr, &v1, 1, vectors ? V + b * n * n : &v1, ln, work,
                             static_cast<lapack::lint>(w.lwork), rwork);
    } else {
      R* wr = c.take<R>(n);
      R* wi = c.take<R>(n);
      T* vr = vectors ? c.take<T>(n * n) : &v1;
      const lapack::lint info = lapack::geev<T>('N', jobvr, ln, A, ln, wr, wi, &v1, 1, vr, ln, work, static_cast<lapack::lint>(w.lwork), rwork);
      if (info) return info;
      C* Wb = W + b * n;
      C* Vb = vectors ? V + b * n * n : nullptr;
      for (std::int64_t j = 0; j < n; ++j) {
        Wb[j] = C(wr[j], wi[j]);
        if (!Vb) continue;
        if (wi[j] == 0) {
          for (std::int64_t i = 0; i < n; ++i) Vb[i + j * n] = C(vr[i + j * n], 0);
        } else if (j + 1 < n) {  // pair (j, j+1): v = vr[:, j] ± i·vr[:, j+1]
          for (std::int64_t i = 0; i < n; ++i) {
            Vb[i + j * n] = C(vr[i + j * n], vr[i + (j + 1) * n]);
            Vb[i + (j + 1) * n] = C(vr[i + j * n], -vr[i + (j + 1) * n]);
          }
          Wb[j + 1] = C(wr[j + 1], wi[j + 1]);
          ++j;
        }
      }
      return 0;
    }
  });
  if (f) throw_numerical(op, "geev", "the QR algorithm failed to compute all eigenvalues", f);
  return r;
}

}  // namespace
}  // namespace detail::linalg

namespace cpu {

EighResult eigh_kernel(Session& s, const Tensor& a, Triangle tri, bool vectors, std::string_view op) {
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::eigh_typed<typename decltype(tag)::type>(s, a, tri, vectors, op);
  });
}

EigResult eig_kernel(Session& s, const Tensor& a, bool vectors, std::string_view op) {
  return visit_dtype<DTypeSet::inexact>(op, a.dtype(), [&](auto tag) {
    return detail::linalg::eig_typed<typename decltype(tag)::type>(s, a, vectors, op);
  });
}

}  // namespace cpu
}  // namespace tenferro
