// Numerical accuracy against references (issue 14, item 5):
// - complex analytic ops on their branch cuts, at signed zeros, infinities and NaN,
//   against std::complex (the C99 Annex G values), in c64 and c128;
// - complex pow at the special values NumPy defines (z^0 = 1, 0^b = 0 for Re b > 0);
// - f32 reductions (contiguous and strided axes) and long f32 contractions (dot_general,
//   einsum, vdot) against f64 references of the same f32 inputs.
#include <gmock/gmock.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "support/test_util.hpp"
#include "tenferro/einsum.hpp"

namespace tenferro::accuracy_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A rank-1 tensor holding v.
template <class T> Tensor vec_tensor(const std::vector<T>& v) {
  const std::int64_t shape[1] = {static_cast<std::int64_t>(v.size())};
  return Tensor::from_data<T>(shape, std::span<const T>(v));
}

struct Fixture : ::testing::Test {
  CpuBackend backend;
  HeldSession s = backend.open_session();
};

// ---------------------------------------------------------------- complex special values

/// Same value component by component: NaN where the reference is NaN, the same infinity,
/// the same sign of zero, otherwise within `rtol` (relative to the larger magnitude).
template <class R> bool same_component(R got, R want, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isnan(got)) return false;
  if (std::isinf(want) || std::isinf(got)) return got == want;
  if (want == 0 || got == 0) {
    const double m = std::max(std::abs(double(got)), std::abs(double(want)));
    return m <= rtol * 1e-300 ? std::signbit(got) == std::signbit(want) : (got == want && std::signbit(got) == std::signbit(want));
  }
  return std::abs(double(got) - double(want)) <= rtol * std::max(std::abs(double(got)), std::abs(double(want)));
}

using UnaryOp = Tensor (*)(Session&, const Tensor&);
struct UnaryCase {
  const char* name;
  UnaryOp op;
  std::complex<double> (*ref64)(std::complex<double>);
  std::complex<float> (*ref32)(std::complex<float>);
};

template <class T> T ref_log1p(T z) { return std::log(T(typename T::value_type(1) + z.real(), z.imag())); }
// expm1 keeps a zero argument's signs, as real expm1(-0) = -0 (exp(z) - 1 would give
// +0 for the real part; NumPy's formula gives -0 as tenferro does).
template <class T> T ref_expm1(T z) { return z == T(0) ? z : std::exp(z) - T(1); }
template <class T> T ref_rsqrt(T z) { return T(1) / std::sqrt(z); }

#define TF_CASE(name, ref) \
  UnaryCase{#name, &name, [](std::complex<double> z) { return ref; }, [](std::complex<float> z) { return ref; }}
const UnaryCase kUnaryCases[] = {
    TF_CASE(exp, std::exp(z)),   TF_CASE(log, std::log(z)),     TF_CASE(sqrt, std::sqrt(z)),   TF_CASE(rsqrt, ref_rsqrt(z)),
    TF_CASE(sin, std::sin(z)),   TF_CASE(cos, std::cos(z)),     TF_CASE(tan, std::tan(z)),     TF_CASE(tanh, std::tanh(z)),
    TF_CASE(sinh, std::sinh(z)), TF_CASE(cosh, std::cosh(z)),   TF_CASE(asin, std::asin(z)),   TF_CASE(acos, std::acos(z)),
    TF_CASE(atan, std::atan(z)), TF_CASE(expm1, ref_expm1(z)),  TF_CASE(log1p, ref_log1p(z)),
};
#undef TF_CASE

/// Real and imaginary parts covering every branch cut (the real axis beyond ±1 for
/// asin/acos/atanh-like cuts, the negative real axis for log/sqrt, the cut of log1p at
/// x < -1) with both signs of zero, plus infinities and NaN.
const double kParts[] = {-kInf, -4, -1.5, -1, -0.5, -0.0, 0.0, 0.5, 1, 1.5, 4, kInf, kNaN};

template <class C> void check_unary_grid(Session& s, const UnaryCase& c, DType dt, double rtol) {
  using R = typename C::value_type;
  std::vector<C> zs;
  for (double x : kParts)
    for (double y : kParts) zs.emplace_back(static_cast<R>(x), static_cast<R>(y));
  const auto n = static_cast<std::int64_t>(zs.size());
  const Tensor t = vec_tensor(zs);
  ASSERT_EQ(t.dtype(), dt);
  const Tensor r = c.op(s, t);
  int bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const C z = zs[static_cast<std::size_t>(i)];
    const C got = r.item<C>({i});
    C want;
    if constexpr (std::is_same_v<R, double>) want = c.ref64(z);
    else want = c.ref32(z);
    if ((!same_component(got.real(), want.real(), rtol) || !same_component(got.imag(), want.imag(), rtol)) && ++bad <= 6)
      ADD_FAILURE() << c.name << "(" << z << "): got " << got << ", std::complex gives " << want;
  }
  EXPECT_EQ(bad, 0) << c.name << " " << dtype_name(dt);
}

TEST_F(Fixture, ComplexBranchCutsAndSignedZerosMatchStdComplex) {
  for (const UnaryCase& c : kUnaryCases) {
    SCOPED_TRACE(c.name);
    check_unary_grid<std::complex<double>>(s, c, DType::c128, 1e-14);
    check_unary_grid<std::complex<float>>(s, c, DType::c64, 2e-6);
  }
}

// The case the issue reported: log1p(-4 - 0i) lies on log1p's cut and must keep the
// sign of the zero imaginary part (-pi, as std::log(-3 - 0i) and NumPy).
TEST_F(Fixture, Log1pOnTheCutKeepsTheSignOfZero) {
  const Tensor z = Tensor::from_data<c128>({2}, {c128(-4, -0.0), c128(-4, 0.0)});
  const Tensor r = log1p(s, z);
  EXPECT_EQ(r.item<c128>({0}).imag(), -M_PI);
  EXPECT_EQ(r.item<c128>({1}).imag(), M_PI);
  EXPECT_DOUBLE_EQ(r.item<c128>({0}).real(), std::log(3.0));
  const Tensor z32 = Tensor::from_data<c64>({1}, {c64(-4, -0.0f)});
  EXPECT_EQ(log1p(s, z32).item<c64>({0}).imag(), -static_cast<float>(M_PI));
}

// expm1 at special values: e^x sin(0) is 0, not inf * 0 = NaN (std::exp(inf + 0i) is inf + 0i).
TEST_F(Fixture, Expm1KeepsAZeroImaginaryPart) {
  const Tensor z = Tensor::from_data<c128>({3}, {c128(kInf, 0.0), c128(kNaN, -0.0), c128(800, 0.0)});
  const Tensor r = expm1(s, z);
  for (std::int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.item<c128>({i}).imag(), 0.0) << i;
    EXPECT_EQ(std::signbit(r.item<c128>({i}).imag()), i == 1) << i;
  }
  EXPECT_EQ(r.item<c128>({0}).real(), kInf);
}

// NumPy's complex power: z^0 = 1 for every z (NaN and infinities included), 0^b = 0 for
// Re b > 0. std::pow(0, 0) and std::pow(inf + 1i, 0) are NaN (exp(0 * log z)).
template <class C> void check_pow_special(Session& s) {
  using R = typename C::value_type;
  const R inf = std::numeric_limits<R>::infinity(), nan = std::numeric_limits<R>::quiet_NaN();
  const std::vector<C> a = {C(0, 0), C(inf, 1), C(-0.0f, -0.0f), C(nan, nan), C(inf, inf), C(2, 3), C(0, 0), C(0, 0), C(0, 0), C(-0.0f, 0)};
  const std::vector<C> b = {C(0, 0), C(0, 0), C(0, -0.0f), C(0, 0), C(-0.0f, 0), C(0, 0), C(2, 0), C(0.5f, 3), C(1, 0), C(3, 0)};
  const std::vector<C> want = {C(1, 0), C(1, 0), C(1, 0), C(1, 0), C(1, 0), C(1, 0), C(0, 0), C(0, 0), C(0, 0), C(0, 0)};
  const auto n = static_cast<std::int64_t>(a.size());
  const Tensor r = pow(s, vec_tensor(a), vec_tensor(b));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(r.item<C>({i}), want[k]) << "pow(" << a[k] << ", " << b[k] << ")";
  }
  // Scalar exponent (the scalar fast path) and a broadcast base.
  const Tensor r0 = pow(s, Tensor::from_data<C>({2}, {C(0, 0), C(inf, 1)}), Operand(C(0, 0)));
  EXPECT_EQ(r0.item<C>({0}), C(1, 0));
  EXPECT_EQ(r0.item<C>({1}), C(1, 0));
  // Elsewhere the values stay std::pow's.
  const Tensor r1 = pow(s, Tensor::from_data<C>({1}, {C(2, 3)}), Tensor::from_data<C>({1}, {C(0.5f, -1)}));
  const C w = std::pow(C(2, 3), C(0.5f, -1));
  EXPECT_NEAR(std::abs(r1.item<C>({0}) - w), 0, 4 * std::numeric_limits<R>::epsilon() * std::abs(w));
}

TEST_F(Fixture, ComplexPowSpecialValuesAsNumPy) {
  check_pow_special<c128>(s);
  check_pow_special<c64>(s);
}

// ---------------------------------------------------------------- long f32 reductions

/// n f32 values uniform in [0, 1): every partial sum grows, so an accumulation that adds
/// one element at a time loses about n * eps / 2 relative (1e-2 for n = 1e6 worst case);
/// a pairwise one O(log n * eps).
std::vector<float> positive_f32(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double rel_err(double got, double want) { return std::abs(got - want) / std::abs(want); }

/// Relative errors below this are O(log n) ulps of f32 (eps = 6e-8).
constexpr double kF32Tol = 2e-6;

// sum over an outer (strided) axis of length 1e6 with several outputs: x [8, 1e6]
// column-major reduced over axis 1 runs as vector accumulations out[0:8] += x[:, j]
// (Note [Reduction loop order]); before the blocked pairwise accumulation its relative
// error was about 1e-2.
TEST_F(Fixture, F32SumAlongAStridedAxisIsPairwise) {
  constexpr std::int64_t M = 8, R = 1000000;
  const std::vector<float> v = positive_f32(static_cast<std::size_t>(M * R), 11);
  const Tensor x = vec_tensor(v).reshape_view({M, R});
  std::vector<double> ref(M, 0.0), ref_sq(M, 0.0);
  for (std::int64_t j = 0; j < R; ++j)
    for (std::int64_t i = 0; i < M; ++i) {
      const double e = v[static_cast<std::size_t>(i + M * j)];
      ref[static_cast<std::size_t>(i)] += e;
      ref_sq[static_cast<std::size_t>(i)] += e * e;
    }
  const Tensor sm = sum(s, x, {1}), mn = mean(s, x, {1}), sq = sum_squares(s, x, {1});
  double worst_sum = 0, worst_mean = 0, worst_sq = 0;
  for (std::int64_t i = 0; i < M; ++i) {
    const double want = ref[static_cast<std::size_t>(i)];
    worst_sum = std::max(worst_sum, rel_err(sm.item<float>({i}), want));
    worst_mean = std::max(worst_mean, rel_err(mn.item<float>({i}), want / R));
    worst_sq = std::max(worst_sq, rel_err(sq.item<float>({i}), ref_sq[static_cast<std::size_t>(i)]));
  }
  std::printf("[ accuracy ] f32 [8, 1e6] over axis 1: sum %.3g, mean %.3g, sum_squares %.3g (relative)\n", worst_sum, worst_mean, worst_sq);
  EXPECT_LT(worst_sum, kF32Tol);
  EXPECT_LT(worst_mean, kF32Tol);
  EXPECT_LT(worst_sq, kF32Tol);
  // The same reduction through a strided view (every other column of [8, 2e6]... here
  // every other row of [16, 1e6]) and over a middle axis of [4, 1e6, 2].
  const std::vector<float> w = positive_f32(static_cast<std::size_t>(2 * M * R), 12);
  const Tensor xw = vec_tensor(w).reshape_view({2 * M, R}).slice_view(0, 1, Tensor::kSliceEnd, 2);
  const Tensor sw = sum(s, xw, {1});
  const Tensor y = vec_tensor(w).reshape_view({4, R, 4});
  const Tensor sy = sum(s, y, {1});
  double worst_w = 0, worst_y = 0;
  for (std::int64_t i = 0; i < M; ++i) {
    double want = 0;
    for (std::int64_t j = 0; j < R; ++j) want += w[static_cast<std::size_t>(2 * i + 1 + 2 * M * j)];
    worst_w = std::max(worst_w, rel_err(sw.item<float>({i}), want));
  }
  for (std::int64_t a = 0; a < 4; ++a)
    for (std::int64_t c = 0; c < 4; ++c) {
      double want = 0;
      for (std::int64_t j = 0; j < R; ++j) want += w[static_cast<std::size_t>(a + 4 * j + 4 * R * c)];
      worst_y = std::max(worst_y, rel_err(sy.item<float>({a, c}), want));
    }
  std::printf("[ accuracy ] f32 strided view [8, 1e6] over axis 1: %.3g; [4, 1e6, 4] over axis 1: %.3g\n", worst_w, worst_y);
  EXPECT_LT(worst_w, kF32Tol);
  EXPECT_LT(worst_y, kF32Tol);
  // A constant 0.1: every addition rounds the same way, the naive error is systematic.
  const Tensor c = sum(s, Tensor::full({M, R}, Scalar(0.1), DType::f32), {1});
  const double want_c = static_cast<double>(0.1f) * R;
  double worst_c = 0;
  for (std::int64_t i = 0; i < M; ++i) worst_c = std::max(worst_c, rel_err(c.item<float>({i}), want_c));
  std::printf("[ accuracy ] f32 [8, 1e6] of 0.1 over axis 1: %.3g\n", worst_c);
  EXPECT_LT(worst_c, kF32Tol);
}

// Full and contiguous reductions were pairwise already; keep them so.
TEST_F(Fixture, F32FullAndContiguousReductionsArePairwise) {
  constexpr std::int64_t N = 1 << 22;
  const std::vector<float> v = positive_f32(static_cast<std::size_t>(N), 13);
  double want = 0;
  for (float e : v) want += e;
  const Tensor x = vec_tensor(v);
  const double full = rel_err(sum(s, x).item<float>(), want);
  const double strided = rel_err(sum(s, x.slice_view(0, 0, Tensor::kSliceEnd, 1).reshape_view({1024, 4096}), {0, 1}).item<float>(), want);
  const Tensor cols = sum(s, x.reshape_view({4096, 1024}), {0});  // contiguous lines
  double worst_cols = 0;
  for (std::int64_t j = 0; j < 1024; ++j) {
    double w = 0;
    for (std::int64_t i = 0; i < 4096; ++i) w += v[static_cast<std::size_t>(i + 4096 * j)];
    worst_cols = std::max(worst_cols, rel_err(cols.item<float>({j}), w));
  }
  std::printf("[ accuracy ] f32 full sum of 4M: %.3g; as [1024, 4096] over both: %.3g; columns of 4096: %.3g\n", full, strided, worst_cols);
  EXPECT_LT(full, kF32Tol);
  EXPECT_LT(strided, kF32Tol);
  EXPECT_LT(worst_cols, kF32Tol);
}

// ---------------------------------------------------------------- long f32 contractions

/// f64 reference of sum_k a[k] b[k] over f32 inputs.
double ref_dot(const std::vector<float>& a, const std::vector<float>& b, std::size_t off_a = 0, std::size_t st_a = 1,
               std::size_t off_b = 0, std::size_t st_b = 1, std::size_t n = 0) {
  double acc = 0;
  for (std::size_t k = 0; k < n; ++k) acc += double(a[off_a + k * st_a]) * double(b[off_b + k * st_b]);
  return acc;
}

// dot_general / einsum "i,i->" with K = 1e7 in f32: BLAS sdot/sgemv/sgemm accumulate in
// f32 (relative error 2e-2 before, NumPy no better); K is now blocked and the block
// products combined pairwise (Note [Long contractions]).
TEST_F(Fixture, F32LongContractionsAreBlocked) {
  constexpr std::int64_t K = 10'000'000;
  const std::vector<float> a = positive_f32(K, 21), b = positive_f32(K, 22);
  const Tensor ta = vec_tensor(a), tb = vec_tensor(b);
  const double want = ref_dot(a, b, 0, 1, 0, 1, K);
  DotDims d;
  d.lhs_contracting = {0};
  d.rhs_contracting = {0};
  const double e_dot = rel_err(dot_general(s, ta, tb, d).item<float>(), want);
  const double e_ein = rel_err(einsum(s, "i,i->", {ta, tb}).item<float>(), want);
  const double e_vdot = rel_err(vdot(s, ta, tb).item<float>(), want);
  // Matrix forms: [3, K/8] . [K/8, 2] (gemm; A a transposed view: A[i, k] = a[k + K/8 i])
  // and [K/8] . [K/8, 2] (gemv), from the same data.
  constexpr std::int64_t K8 = K / 8;
  const Tensor A = ta.slice_view(0, 0, 3 * K8).reshape_view({K8, 3}).transpose_view();
  const Tensor B = tb.slice_view(0, 0, 2 * K8).reshape_view({K8, 2});
  DotDims dm;
  dm.lhs_contracting = {1};
  dm.rhs_contracting = {0};
  const Tensor C = dot_general(s, A, B, dm);
  double e_gemm = 0;
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      e_gemm = std::max(e_gemm, rel_err(C.item<float>({i, j}), ref_dot(a, b, static_cast<std::size_t>(K8 * i), 1, static_cast<std::size_t>(K8 * j), 1,
                                                                        static_cast<std::size_t>(K8))));
  const Tensor v = dot_general(s, ta.slice_view(0, 0, K8), B, d);
  double e_gemv = 0;
  for (std::int64_t j = 0; j < 2; ++j)
    e_gemv = std::max(e_gemv, rel_err(v.item<float>({j}), ref_dot(a, b, 0, 1, static_cast<std::size_t>(K8 * j), 1, static_cast<std::size_t>(K8))));
  // Accumulate form: out = 2 (a . b) + 1 * out.
  const Tensor out = Tensor::full({}, Scalar(1.0), DType::f32);
  dot_general_into(s, ta, tb, d, out, 2.0, 1.0);
  const double e_acc = rel_err(out.item<float>(), 2 * want + 1);
  std::printf("[ accuracy ] f32 K = 1e7: dot_general %.3g, einsum i,i-> %.3g, vdot %.3g, accumulate %.3g; "
              "K = 1.25e6: gemm [3, K] [K, 2] %.3g, gemv [K] [K, 2] %.3g\n", e_dot, e_ein, e_vdot, e_acc, e_gemm, e_gemv);
  EXPECT_LT(e_dot, kF32Tol);
  EXPECT_LT(e_ein, kF32Tol);
  EXPECT_LT(e_vdot, kF32Tol);
  EXPECT_LT(e_acc, kF32Tol);
  EXPECT_LT(e_gemm, kF32Tol);
  EXPECT_LT(e_gemv, kF32Tol);
}

}  // namespace
}  // namespace tenferro::accuracy_test
