// The vector exp and tanh (src/cpu/vecmath.hpp, Note [Vector exp and tanh]): accuracy
// against long double over the whole domain and its edges, special values, tails and
// aliasing of the line functions, and the same values on every path that computes the
// exp and tanh ops (contiguous, strided, negative strides, one element, threads, fused
// compiled graphs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/vecmath.hpp"
#include "support/test_util.hpp"
#include "tenferro/graph.hpp"

namespace tenferro::vecmath_test {
namespace {

namespace vm = tenferro::detail::vecmath;
using ld = long double;

/// |got − ref| in units of R's spacing at ref (0 for equal infinities and NaNs).
template <class R> double ulps(R got, ld ref) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) && std::isnan(ref) ? 0 : INFINITY;
  const R r = static_cast<R>(ref);
  if (std::isinf(r) || std::isinf(got)) return got == r ? 0 : INFINITY;
  const R a = std::fabs(r);
  const R next = std::nextafter(a, std::numeric_limits<R>::infinity());
  const ld spacing = std::isinf(next) ? static_cast<ld>(a - std::nextafter(a, R(0))) : static_cast<ld>(next - a);
  return static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / spacing);
}

/// Points over [lo, hi]: uniform draws, a log sweep of magnitudes, and `edges`.
template <class R> std::vector<R> sweep(double lo, double hi, const std::vector<double>& edges) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<R> v;
  for (int i = 0; i < 200000; ++i) v.push_back(static_cast<R>(u(rng)));
  for (double m = 1e-320; m < hi; m *= 1.09)
    for (const double x : {m, -m})
      if (x >= lo && x <= hi) v.push_back(static_cast<R>(x));
  for (const double e : edges) {
    R x = static_cast<R>(e);
    for (int k = 0; k < 20; ++k) {  // the edge and its neighbours
      v.push_back(x);
      v.push_back(-x);
      x = std::nextafter(x, std::numeric_limits<R>::infinity());
    }
  }
  return v;
}

struct Fn {
  const char* name;
  void (*f64)(const double*, double*, std::int64_t) noexcept;
  void (*f32)(const float*, float*, std::int64_t) noexcept;
  ld (*ref)(ld);
  double lo, hi;
  std::vector<double> edges;  // owned: an initializer_list member would dangle
  double bound64, bound32;  ///< ulps of the kernels (the ops' contract in ulp_test is looser)
};

std::vector<Fn> fns(const vm::LineFns& l) {
  return {
      {"exp", l.exp_f64, l.exp_f32, [](ld x) { return std::exp(x); }, -760, 720,
       {709.782712893384, 709.78, 88.72283, -87.33654, -103.972, -708.39641853226408, -745.13321910194111, 0.34657359027997264,
        0.6931471805599453, 1e-300, 2.2250738585072014e-308},
       1.0, 0.51},
      {"tanh", l.tanh_f64, l.tanh_f32, [](ld x) { return std::tanh(x); }, -25, 25,
       {0.5493061443340549, 1e-8, 3.7252902984e-9, 19.06154746539849, 9.010913, 0.25, 0.5, 1.0, 2.2250738585072014e-308}, 2.0, 0.51},
  };
}

template <class R> double worst(void (*f)(const R*, R*, std::int64_t) noexcept, ld (*ref)(ld), const std::vector<R>& x, R* at) {
  std::vector<R> y(x.size());
  f(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  double w = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = ulps<R>(y[i], ref(static_cast<ld>(x[i])));
    if (!(e <= w)) {
      w = e;
      *at = x[i];
    }
  }
  return w;
}

TEST(Vecmath, ReportsItsImplementation) {
  const std::string name = vm::line_fns().name;
  std::printf("[ vecmath ] %s\n", name.c_str());
  EXPECT_TRUE(name == "avx2+fma" || name == "libm") << name;
  EXPECT_STREQ(vm::libm_line_fns().name, "libm");
}

TEST(Vecmath, ResultsAreWithinTheirBoundsOverTheDomainAndItsEdges) {
  for (const Fn& f : fns(vm::line_fns())) {
    double at64 = 0;
    float at32 = 0;
    const double w64 = worst<double>(f.f64, f.ref, sweep<double>(f.lo, f.hi, f.edges), &at64);
    const double w32 = worst<float>(f.f32, f.ref, sweep<float>(f.lo, f.hi, f.edges), &at32);
    std::printf("[ vecmath ] %-5s f64 %.3f ulp (x = %.17g)   f32 %.3f ulp (x = %.9g)\n", f.name, w64, at64, w32, static_cast<double>(at32));
    EXPECT_LE(w64, f.bound64) << f.name << " f64 at x = " << at64;
    EXPECT_LE(w32, f.bound32) << f.name << " f32 at x = " << at32;
  }
}

TEST(Vecmath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double dmax = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> x = {0.0, -0.0, inf, -inf, nan, -nan, dmax, -dmax, tiny, -tiny, 1e6, -1e6, 710.0, -746.0, -745.2};
  std::vector<double> e(x.size()), t(x.size());
  vm::exp(x.data(), e.data(), static_cast<std::int64_t>(x.size()));
  vm::tanh(x.data(), t.data(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double we = std::exp(x[i]), wt = std::tanh(x[i]);
    if (std::isnan(we)) EXPECT_TRUE(std::isnan(e[i])) << "exp(" << x[i] << ") = " << e[i];
    else EXPECT_EQ(e[i], we) << "exp(" << x[i] << ")";
    if (std::isnan(wt)) {
      EXPECT_TRUE(std::isnan(t[i])) << "tanh(" << x[i] << ") = " << t[i];
    } else {
      EXPECT_EQ(t[i], wt) << "tanh(" << x[i] << ")";
      EXPECT_EQ(std::signbit(t[i]), std::signbit(wt)) << "tanh(" << x[i] << ") sign";
    }
  }
  // f32: overflow to inf, underflow to 0, NaN kept, signed zeros.
  const float finf = std::numeric_limits<float>::infinity();
  const std::vector<float> xf = {89.0f, -104.0f, std::numeric_limits<float>::quiet_NaN(), -0.0f, finf, -finf, 88.7f};
  std::vector<float> ef(xf.size()), tf(xf.size());
  vm::exp(xf.data(), ef.data(), static_cast<std::int64_t>(xf.size()));
  vm::tanh(xf.data(), tf.data(), static_cast<std::int64_t>(xf.size()));
  EXPECT_EQ(ef[0], finf);
  EXPECT_EQ(ef[1], 0.0f);
  EXPECT_TRUE(std::isnan(ef[2]) && std::isnan(tf[2]));
  EXPECT_EQ(ef[3], 1.0f);
  EXPECT_TRUE(tf[3] == 0.0f && std::signbit(tf[3]));
  EXPECT_EQ(ef[4], finf);
  EXPECT_EQ(ef[5], 0.0f);
  EXPECT_EQ(tf[4], 1.0f);
  EXPECT_EQ(tf[5], -1.0f);
  EXPECT_TRUE(std::isfinite(ef[6]));
}

TEST(Vecmath, EveryLengthAndAliasingGiveTheSameValuesAndNoWritePastTheLine) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-30, 30);
  std::vector<double> x(41);
  for (double& v : x) v = u(rng);
  std::vector<double> whole(x.size());
  vm::tanh(x.data(), whole.data(), static_cast<std::int64_t>(x.size()));
  for (std::int64_t n = 0; n <= 17; ++n)
    for (std::int64_t off = 0; off < 4; ++off) {
      std::vector<double> y(x.size(), -7.0);
      vm::tanh(x.data() + off, y.data() + off, n);
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(y.size()); ++i) {
        const bool inside = i >= off && i < off + n;
        EXPECT_EQ(y[i], inside ? whole[i] : -7.0) << "n " << n << " offset " << off << " at " << i;
      }
      std::vector<double> z(x.begin(), x.end());  // in place
      vm::tanh(z.data() + off, z.data() + off, n);
      for (std::int64_t i = off; i < off + n; ++i) EXPECT_EQ(z[i], whole[i]);
    }
  std::vector<float> xf(x.begin(), x.end()), yf(xf.size(), -7.0f), wholef(xf.size());
  vm::exp(xf.data(), wholef.data(), static_cast<std::int64_t>(xf.size()));
  vm::exp(xf.data(), yf.data(), 5);  // a vector and a tail of one
  for (int i = 0; i < 5; ++i) EXPECT_EQ(yf[i], wholef[i]) << i;
  for (std::size_t i = 5; i < yf.size(); ++i) EXPECT_EQ(yf[i], -7.0f) << i;
}

/// The op's values over f64 and f32 in every layout, one element at a time, on two
/// threads and in a fused compiled graph: bitwise the line function's.
TEST(Vecmath, EveryPathOfTheOpsGivesTheLineFunctionsValues) {
  using testing::Layout;
  CpuBackend one({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  std::mt19937_64 rng(17);
  for (const DType dt : {DType::f64, DType::f32})
    for (const bool is_exp : {true, false}) {
      const auto op = [is_exp](Session& s, const Tensor& x) { return is_exp ? exp(s, x) : tanh(s, x); };
      const auto line_of = [&](const Tensor& x) {  // the line function over a compact copy
        Tensor want = Tensor::empty(x.shape().span(), dt);
        one.with_session([&](Session& s) { copy_into(s, x, want); });
        if (dt == DType::f64) {
          auto* p = static_cast<double*>(want.mutable_data());
          is_exp ? vm::exp(p, p, want.numel()) : vm::tanh(p, p, want.numel());
        } else {
          auto* p = static_cast<float*>(want.mutable_data());
          is_exp ? vm::exp(p, p, want.numel()) : vm::tanh(p, p, want.numel());
        }
        return want;
      };
      const auto same = [&](Session& s, const Tensor& got, const Tensor& want, const std::string& what) {
        Tensor g = Tensor::empty(got.shape().span(), dt);
        copy_into(s, got, g);
        EXPECT_EQ(std::memcmp(g.data(), want.data(), static_cast<std::size_t>(want.numel()) * dtype_size(dt)), 0)
            << (is_exp ? "exp " : "tanh ") << dtype_name(dt) << " " << what;
      };
      for (const Layout l : testing::kAllLayouts) {
        const Tensor x = testing::random_layout(rng, Shape{37, 29}, dt, l, -20, 20);
        const Tensor want = line_of(x);
        one.with_session([&](Session& s) { same(s, op(s, x), want, testing::layout_name(l)); });
        // Into a strided output (every other element of a larger buffer).
        one.with_session([&](Session& s) {
          const Tensor out = testing::out_view(rng, Shape{37, 29}, dt, 3);
          is_exp ? exp_into(s, x, out) : tanh_into(s, x, out);
          same(s, out, want, testing::layout_name(l) + " into a strided output");
        });
        // One element (a 1x1 window).
        one.with_session([&](Session& s) {
          const Tensor e = op(s, x.slice_view(0, 5, 6, 1).slice_view(1, 7, 8, 1));
          const Tensor w = want.slice_view(0, 5, 6, 1).slice_view(1, 7, 8, 1);
          same(s, e, w, "one element of " + testing::layout_name(l));
        });
      }
      // Large enough to fork over two threads.
      const Tensor big = testing::random_tensor(rng, Shape{1 << 18}, dt, -20, 20);
      const Tensor big_want = line_of(big);
      two.with_session([&](Session& s) { same(s, op(s, big), big_want, "on two threads"); });
      // A fused compiled graph: op(x * 1.5 + 0.25) with x transposed (gathered per chunk).
      const Tensor xt = testing::random_layout(rng, Shape{300, 7}, dt, Layout::transposed, -10, 10);
      const auto prog = [&](Session& s, std::span<const Tensor> in) -> std::vector<Tensor> {
        return {op(s, add(s, mul(s, in[0], 1.5), 0.25))};
      };
      const graph::CompiledGraph c = graph::compile(graph::trace(prog, {{xt.shape(), dt}}));
      EXPECT_EQ(c.num_steps(), 1) << c.graph().to_text();  // one fused step
      one.with_session([&](Session& s) {
        const Tensor in[1] = {xt};
        same(s, c.run(s, in)[0], prog(s, in)[0], "fused graph vs direct ops");
      });
    }
}

}  // namespace
}  // namespace tenferro::vecmath_test
