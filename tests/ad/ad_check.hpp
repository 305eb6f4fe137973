#pragma once
// Derivative checks for AD rules: central differences (f64/c128) against the JVP, and
// the dot-product test Re<v, J u> = Re<Jᵀv, u> between JVP and VJP (and between the
// central difference and the VJP). Note [Complex convention]: the VJP is the adjoint of
// the R-linear JVP under Re<a, b> = Re Σ conj(a)·b.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tenferro/ad.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// A one-thread CPU backend shared by the AD tests of one executable (results do not
/// depend on the machine's core count).
inline CpuBackend& ad_backend() {
  static CpuBackend b([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  return b;
}

/// Re Σ conj(a)·b over any numeric dtypes and layouts (host loop through c128).
inline double real_inner(Session& s, const Tensor& a, const Tensor& b) {
  Tensor ac = tenferro::to_contiguous(s, tenferro::cast(s, a, DType::c128));
  Tensor bc = tenferro::to_contiguous(s, tenferro::cast(s, b, DType::c128));
  const c128* pa = ac.data_ptr<c128>();
  const c128* pb = bc.data_ptr<c128>();
  double r = 0;
  for (std::int64_t i = 0; i < ac.numel(); ++i) r += (std::conj(pa[i]) * pb[i]).real();
  return r;
}

/// max |a - b| over elements (as c128).
inline double max_abs_diff(Session& s, const Tensor& a, const Tensor& b) {
  Tensor ac = tenferro::to_contiguous(s, tenferro::cast(s, a, DType::c128));
  Tensor bc = tenferro::to_contiguous(s, tenferro::cast(s, b, DType::c128));
  double m = 0;
  for (std::int64_t i = 0; i < ac.numel(); ++i) m = std::max(m, std::abs(ac.data_ptr<c128>()[i] - bc.data_ptr<c128>()[i]));
  return m;
}
inline double max_abs(Session& s, const Tensor& a) {
  Tensor ac = tenferro::to_contiguous(s, tenferro::cast(s, a, DType::c128));
  double m = 0;
  for (std::int64_t i = 0; i < ac.numel(); ++i) m = std::max(m, std::abs(ac.data_ptr<c128>()[i]));
  return m;
}

/// Uniform values in [lo, hi) (complex: both parts), from `rng`.
inline Tensor rand_in(std::mt19937_64& rng, const Shape& shape, DType d, double lo, double hi) {
  Tensor t = Tensor::empty(shape.span(), d);
  std::uniform_real_distribution<double> u(lo, hi);
  visit_dtype<DTypeSet::inexact>("rand_in", d, [&](auto tag) {
    using V = typename decltype(tag)::type;
    V* p = t.mutable_data_ptr<V>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (is_complex_v<V>) {
        p[i] = V(u(rng), u(rng));
      } else {
        p[i] = static_cast<V>(u(rng));
      }
    }
  });
  return t;
}

/// Runs f on constants (plain evaluation) and returns its outputs.
inline std::vector<Tensor> eval_plain(Session& s, const ad::MultiFn& f, const std::vector<Tensor>& xs) {
  ad::Context c(s);
  std::vector<ad::EagerTensor> in(xs.begin(), xs.end());
  std::vector<Tensor> r;
  for (const auto& y : f(c, in)) r.push_back(y.value());
  return r;
}

/// x + h·u elementwise, in x's dtype.
inline Tensor shifted(Session& s, const Tensor& x, const Tensor& u, double h) {
  return tenferro::add(s, x, tenferro::mul(s, u, h));
}

struct CheckResult {
  double jvp_vs_fd = 0;   ///< relative error of J u against central differences
  double dot_jvp = 0;     ///< relative error of <v, J u> vs <Jᵀ v, u>
  double dot_fd = 0;      ///< relative error of <v, FD u> vs <Jᵀ v, u>
};

/// Checks f's JVP and VJP at xs with random directions (tangents drawn in each input's
/// dtype, cotangents in each output's dtype). h: central-difference step.
inline CheckResult check_derivatives(Session& s, const ad::MultiFn& f, const std::vector<Tensor>& xs, std::uint64_t seed,
                                     double h = 1e-6) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> us;
  for (const auto& x : xs) us.push_back(rand_in(rng, x.shape(), x.dtype(), -1, 1));
  // Central differences.
  std::vector<Tensor> xp, xm;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xp.push_back(shifted(s, xs[i], us[i], h));
    xm.push_back(shifted(s, xs[i], us[i], -h));
  }
  const auto yp = eval_plain(s, f, xp), ym = eval_plain(s, f, xm);
  std::vector<Tensor> fd;
  for (std::size_t k = 0; k < yp.size(); ++k) {
    const DType d = is_inexact(yp[k].dtype()) ? yp[k].dtype() : DType::f64;
    fd.push_back(tenferro::div(s, tenferro::sub(s, tenferro::cast(s, yp[k], d), tenferro::cast(s, ym[k], d)), 2 * h));
  }
  const ad::JvpResult jr = ad::jvp(s, f, xs, us);
  std::vector<Tensor> vs;
  for (const auto& y : jr.outputs) vs.push_back(rand_in(rng, y.shape(), is_inexact(y.dtype()) ? y.dtype() : DType::f64, -1, 1));
  const ad::VjpResult vr = ad::vjp(s, f, xs, vs);
  CheckResult r;
  double scale = 1e-300, lhs_j = 0, lhs_fd = 0, rhs = 0;
  for (std::size_t k = 0; k < fd.size(); ++k) {
    scale = std::max(scale, max_abs(s, fd[k]));
    r.jvp_vs_fd = std::max(r.jvp_vs_fd, max_abs_diff(s, jr.tangents[k], fd[k]));
    lhs_j += real_inner(s, vs[k], jr.tangents[k]);
    lhs_fd += real_inner(s, vs[k], fd[k]);
  }
  r.jvp_vs_fd /= std::max(scale, 1.0);
  for (std::size_t i = 0; i < xs.size(); ++i) rhs += real_inner(s, vr.cotangents[i], us[i]);
  const double dscale = std::max({std::abs(lhs_j), std::abs(rhs), 1.0});
  r.dot_jvp = std::abs(lhs_j - rhs) / dscale;
  r.dot_fd = std::abs(lhs_fd - rhs) / dscale;
  return r;
}

}  // namespace tenferro::testing
