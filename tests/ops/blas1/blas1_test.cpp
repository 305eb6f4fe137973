// BLAS-1 (vdot, norm_squared, axpby) against plain reference loops: every numeric dtype
// (and every promoting dtype pair) × layout, conjugation, alpha/beta cases including
// beta = 0 over NaN, strided destinations, every validation error with y untouched,
// determinism across thread counts, and no heap allocation inside a held session.
#include <limits>
#include <set>

#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::testing {
namespace {

using cd = std::complex<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const Shape kShapes[] = {{3, 4, 5}, {7}, {}, {0, 3}, {33, 9}};

/// Writable layouts (a broadcast view cannot be written).
const Layout kWritableLayouts[] = {Layout::contiguous, Layout::transposed, Layout::negative_stride};

std::string desc(DType a, Layout la, DType b, Layout lb, const Shape& shape) {
  return std::string(dtype_name(a)) + " " + layout_name(la) + " / " + std::string(dtype_name(b)) + " " + layout_name(lb) + " shape " +
         shape.to_string();
}

// ---------------------------------------------------------------- vdot

TEST(Vdot, EveryDTypePairAndLayoutAgainstReference) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(11);
  int cases = 0;
  for (DType da : kNumericDTypes)
    for (DType db : kNumericDTypes)
      for (Layout la : kAllLayouts)
        for (const Shape& shape : kShapes) {
          const Layout lb = kAllLayouts[(static_cast<int>(la) + 1 + cases) % 4];
          SCOPED_TRACE(desc(da, la, db, lb, shape));
          Tensor a = random_layout(rng, shape, da, la), b = random_layout(rng, shape, db, lb);
          const DType d = promote(da, db);
          cd want = 0;
          std::int64_t n = 0;
          for_each_index(shape, [&](const Dims& idx) {
            want += std::conj(value_at(a, idx)) * value_at(b, idx);
            ++n;
          });
          Tensor r = vdot(s, a, b);
          ASSERT_EQ(r.dtype(), d);
          ASSERT_EQ(r.rank(), 0);
          const cd got = value_at(r, Dims{});
          ASSERT_TRUE(near(got, want, 8.0 * double(std::max<std::int64_t>(n, 1)) * epsilon_of(d))) << got << " vs " << want;
          if (n == 0) {
            EXPECT_FALSE(std::signbit(got.real()));
          }
          ++cases;
        }
  EXPECT_EQ(cases, 6 * 6 * 4 * 5);
}

TEST(Vdot, ConjugatesTheFirstOperand) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    Tensor a = Tensor::from_data<c128>({1}, {c128(1, 2)});
    Tensor b = Tensor::from_data<c128>({1}, {c128(3, 4)});
    EXPECT_EQ(vdot(s, a, b).item<c128>(), c128(11, -2));  // (1 - 2i)(3 + 4i)
    EXPECT_EQ(vdot(s, b, a).item<c128>(), c128(11, 2));
    Tensor z = Tensor::from_data<c64>({2}, {c64(0, 1), c64(2, -1)});
    EXPECT_EQ(vdot(s, z, z).item<c64>(), c64(6, 0));  // |z|^2
    // Mixed: a real f64 with a c64 → c128; an i32 with an f32 → f32.
    Tensor r = Tensor::from_data<double>({1}, {2.0});
    Tensor c = Tensor::from_data<c64>({1}, {c64(1, -1)});
    Tensor v = vdot(s, c, r);
    EXPECT_EQ(v.dtype(), DType::c128);
    EXPECT_EQ(v.item<c128>(), c128(2, 2));
    Tensor i = Tensor::from_data<std::int32_t>({2}, {3, -4});
    Tensor f = Tensor::from_data<float>({2}, {0.5f, 2.0f});
    EXPECT_EQ(vdot(s, i, f).dtype(), DType::f32);
    EXPECT_EQ(vdot(s, i, f).item<float>(), -6.5f);
    // Integers wrap.
    const auto big = std::numeric_limits<std::int32_t>::max();
    Tensor w = Tensor::from_data<std::int32_t>({2}, {big, 1});
    Tensor one = Tensor::from_data<std::int32_t>({2}, {1, 1});
    EXPECT_EQ(vdot(s, w, one).item<std::int32_t>(), std::numeric_limits<std::int32_t>::min());
  });
}

TEST(Vdot, Errors) {
  CpuBackend backend;
  auto s = backend.open_session();
  Tensor a = Tensor::ones({3}, DType::f64);
  Tensor bo = Tensor::from_data<bool>({3}, {true, false, true});
  expect_error<DTypeError>([&] { vdot(s, bo, bo); }, "vdot");
  expect_error<DTypeError>([&] { vdot(s, a, bo); }, "vdot");
  expect_error<DTypeError>([&] { vdot(s, bo, a); }, "vdot");
  expect_error<ShapeError>([&] { vdot(s, a, Tensor::ones({4}, DType::f64)); }, "vdot");
  expect_error<ShapeError>([&] { vdot(s, a, Tensor::ones({3, 1}, DType::f64)); }, "vdot");
  expect_error<ArgumentError>([&] { vdot(s, Tensor(), a); }, "vdot");
  expect_error<ArgumentError>([&] { vdot(s, a, Tensor()); }, "vdot");
}

// ---------------------------------------------------------------- norm_squared

TEST(NormSquared, EveryDTypeAndLayoutAgainstReference) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(12);
  int cases = 0;
  for (DType d : kNumericDTypes)
    for (Layout l : kAllLayouts)
      for (const Shape& shape : kShapes) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + layout_name(l) + " " + shape.to_string());
        Tensor x = random_layout(rng, shape, d, l);
        double want = 0;
        std::int64_t n = 0;
        for_each_index(shape, [&](const Dims& idx) {
          want += std::norm(value_at(x, idx));
          ++n;
        });
        Tensor r = norm_squared(s, x);
        const DType rd = is_integer(d) ? DType::f64 : real_dtype(d);
        ASSERT_EQ(r.dtype(), rd);
        ASSERT_EQ(r.rank(), 0);
        ASSERT_TRUE(near(value_at(r, Dims{}), want, 8.0 * double(std::max<std::int64_t>(n, 1)) * epsilon_of(rd)));
        ++cases;
      }
  EXPECT_EQ(cases, 6 * 4 * 5);
}

TEST(NormSquared, Errors) {
  CpuBackend backend;
  auto s = backend.open_session();
  expect_error<DTypeError>([&] { norm_squared(s, Tensor::from_data<bool>({1}, {true})); }, "norm_squared");
  expect_error<ArgumentError>([&] { norm_squared(s, Tensor()); }, "norm_squared");
  // Large integers do not overflow: the answer is f64.
  Tensor big = Tensor::from_data<std::int64_t>({2}, {std::int64_t{1} << 40, 3});
  EXPECT_EQ(norm_squared(s, big).item<double>(), std::ldexp(1.0, 80) + 9.0);
}

// ---------------------------------------------------------------- axpby

/// alpha/beta pairs for y of dtype d.
std::vector<std::pair<Scalar, Scalar>> coefficients(DType d) {
  std::vector<std::pair<Scalar, Scalar>> v = {{Scalar(2), Scalar(-3)}, {Scalar(1), Scalar(0)}, {Scalar(0), Scalar(1)},
                                              {Scalar(-1), Scalar(1)}, {Scalar(true), Scalar(2.0)}};
  if (is_inexact(d)) v.push_back({Scalar(0.5), Scalar(-1.25)});
  if (is_complex(d)) v.push_back({Scalar(c128(1, 2)), Scalar(c128(0.5, -1))});
  return v;
}

cd scalar_value(const Scalar& v, DType d) {
  // The coefficient as y's dtype sees it (as computed by the op).
  return visit_dtype<DTypeSet::numeric>("test", d, [&](auto t) -> cd {
    using T = typename decltype(t)::type;
    const T x = v.to<T>();
    if constexpr (is_complex_v<T>) return {double(x.real()), double(x.imag())};
    else return {double(x), 0.0};
  });
}

TEST(Axpby, EveryPromotingDTypePairLayoutAndCoefficients) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(13);
  int cases = 0;
  for (DType dy : kNumericDTypes)
    for (DType dx : kNumericDTypes) {
      if (promote(dx, dy) != dy) continue;
      for (Layout lx : kAllLayouts)
        for (Layout ly : kWritableLayouts)
          for (const Shape& shape : kShapes)
            for (const auto& [alpha, beta] : coefficients(dy)) {
              const cd a = scalar_value(alpha, dy), b = scalar_value(beta, dy);
              SCOPED_TRACE(::testing::Message() << desc(dx, lx, dy, ly, shape) << " alpha " << a << " beta " << b);
              Tensor x = random_layout(rng, shape, dx, lx), y = random_layout(rng, shape, dy, ly);
              std::vector<cd> want;
              for_each_index(shape, [&](const Dims& idx) {
                // x converted to y's dtype first (f32 y rounds an i64 x), as the op does.
                cd xv = value_at(x, idx);
                if (dy == DType::f32 || dy == DType::c64) xv = cd(float(xv.real()), float(xv.imag()));
                want.push_back(a * xv + b * value_at(y, idx));
              });
              axpby(s, alpha, x, beta, y);
              std::size_t k = 0;
              bool ok = true;
              for_each_index(shape, [&](const Dims& idx) {
                const cd got = value_at(y, idx);
                if (ok && !near(got, want[k], 8 * epsilon_of(dy))) {
                  ADD_FAILURE() << "at " << idx.to_string() << ": " << got << " vs " << want[k];
                  ok = false;
                }
                ++k;
              });
              if (!ok) return;
              ++cases;
            }
    }
  EXPECT_GT(cases, 1000);
}

TEST(Axpby, BetaZeroDoesNotReadY) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
      Tensor x = Tensor::ones({5, 3}, d);
      Tensor y = Tensor::full({5, 3}, kNaN, d);
      axpby(s, 2.0, x, 0.0, y);
      for_each_index(y.shape(), [&](const Dims& idx) { EXPECT_EQ(value_at(y, idx), cd(2.0)) << dtype_name(d); });
      // And beta = -0.0 is zero too.
      Tensor y2 = Tensor::full({4}, kNaN, d);
      axpby(s, 1, Tensor::ones({4}, d), -0.0, y2);
      EXPECT_EQ(value_at(y2, Dims{3}), cd(1.0));
    }
    // With beta != 0, NaN in y propagates (IEEE), and NaN in x always does.
    Tensor y = Tensor::full({2}, kNaN, DType::f64);
    axpby(s, 1.0, Tensor::ones({2}, DType::f64), 1.0, y);
    EXPECT_TRUE(std::isnan(y.item<double>({0})));
  });
}

TEST(Axpby, StridedYOnlyTouchesItsElementsAndAliasingXIsAllowed) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(14);
  // y: rows 6, 4, 2 of a [5, 8] tensor viewed transposed: [3, 5] with strides (-10, 1).
  Tensor big = Tensor::full({5, 8}, 7.0, DType::f64);
  Tensor y = big.transpose_view().slice_view(0, 6, 0, -2);
  Tensor x = random_layout(rng, {3, 5}, DType::f64, Layout::broadcast);
  std::set<std::int64_t> in_view;
  for_each_index(y.shape(), [&](const Dims& idx) { in_view.insert(y.offset() + idx[0] * y.stride(0) + idx[1] * y.stride(1)); });
  axpby(s, 2.0, x, -1.0, y);
  for_each_index(y.shape(), [&](const Dims& idx) { EXPECT_EQ(value_at(y, idx), 2.0 * value_at(x, idx) - 7.0); });
  for_each_index(big.shape(), [&](const Dims& idx) {
    if (!in_view.count(idx[0] + 5 * idx[1])) {
      EXPECT_EQ(value_at(big, idx), cd(7.0));
    }
  });
  // x identical to y (same elements, same layout): y = 2y + 3y.
  Tensor z = random_layout(rng, {4, 6}, DType::c128, Layout::negative_stride);
  std::vector<cd> before;
  for_each_index(z.shape(), [&](const Dims& idx) { before.push_back(value_at(z, idx)); });
  axpby(s, 2, z, 3, z);
  std::size_t k = 0;
  for_each_index(z.shape(), [&](const Dims& idx) { EXPECT_TRUE(near(value_at(z, idx), 5.0 * before[k++], 1e-15)); });
}

TEST(Axpby, ErrorsLeaveYUntouched) {
  CpuBackend backend;
  auto s = backend.open_session();
  Tensor y = Tensor::full({4}, 1.0, DType::f32);
  const auto snap = snapshot(y);
  Tensor x32 = Tensor::ones({4}, DType::f32);
  expect_error<DTypeError>([&] { axpby(s, 1, Tensor::ones({4}, DType::f64), 1, y); }, "axpby");
  expect_error<DTypeError>([&] { axpby(s, 1, Tensor::ones({4}, DType::c64), 1, y); }, "axpby");
  expect_error<DTypeError>([&] { axpby(s, 1, Tensor::from_data<bool>({4}, {true, true, false, false}), 1, y); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, c128(1, 1), x32, 1, y); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, 1, x32, c128(0, 1), y); }, "axpby");
  expect_error<ShapeError>([&] { axpby(s, 1, Tensor::ones({5}, DType::f32), 1, y); }, "axpby");
  expect_error<ShapeError>([&] { axpby(s, 1, Tensor::ones({4, 1}, DType::f32), 1, y); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, 1, Tensor(), 1, y); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, 1, x32, 1, Tensor()); }, "axpby");
  expect_untouched(y, snap);
  // Integer y: no silent truncation of alpha/beta.
  Tensor yi = Tensor::full({3}, 5, DType::i32);
  const auto isnap = snapshot(yi);
  Tensor xi = Tensor::ones({3}, DType::i32);
  expect_error<ArgumentError>([&] { axpby(s, 2.5, xi, 1, yi); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, std::int64_t{1} << 40, xi, 1, yi); }, "axpby");
  expect_error<DTypeError>([&] { axpby(s, 1, Tensor::ones({3}, DType::i64), 1, yi); }, "axpby");
  expect_error<DTypeError>([&] { axpby(s, 1, Tensor::ones({3}, DType::f32), 1, yi); }, "axpby");
  expect_untouched(yi, isnap);
  axpby(s, 2.0, xi, -1, yi);  // an integral float is fine
  EXPECT_EQ(yi.item<std::int32_t>({0}), -3);
  // bool y, read-only y, self-overlapping y, y partially overlapping x.
  Tensor yb = Tensor::from_data<bool>({2}, {true, false});
  expect_error<DTypeError>([&] { axpby(s, 1, yb, 1, yb); }, "axpby");
  Tensor base = Tensor::full({1}, 1.0, DType::f64);
  const auto bsnap = snapshot(base);
  expect_error<ArgumentError>([&] { axpby(s, 1, Tensor::ones({4}, DType::f64), 1, base.broadcast_view({4})); }, "axpby");
  expect_untouched(base, bsnap);
  Tensor st = Tensor::full({6}, 1.0, DType::f64);
  const auto ssnap = snapshot(st);
  expect_error<ArgumentError>([&] { axpby(s, 1, Tensor::ones({3, 2}, DType::f64), 1, st.as_strided_view(Dims{3, 2}, Dims{1, 1}, 0)); },
                              "axpby");
  expect_error<ArgumentError>([&] { axpby(s, 1, st.slice_view(0, 0, 4), 1, st.slice_view(0, 1, 5)); }, "axpby");
  expect_error<ArgumentError>([&] { axpby(s, 1, st.slice_view(0, 0, 4), 1, st.slice_view(0, 3, Tensor::kSliceEnd, -1)); }, "axpby");
  expect_untouched(st, ssnap);
}

// ---------------------------------------------------------------- parallel, allocation

TEST(Blas1Parallel, ResultsDoNotDependOnThreadCount) {
  CpuBackend one(CpuBackendOptions{.num_threads = 1, .cpus = {}});
  CpuBackend two(CpuBackendOptions{.num_threads = 2, .cpus = {}});
  std::mt19937_64 rng(15);
  const Tensor a = random_tensor(rng, {3'000'000}, DType::f64), b = random_tensor(rng, {3'000'000}, DType::f64);
  const Tensor c = random_tensor(rng, {1500, 1000}, DType::c128), d = random_tensor(rng, {1500, 1000}, DType::c128);
  const Tensor f = random_tensor(rng, {3'000'000}, DType::f32);
  using Fn = std::function<Tensor(Session&)>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"vdot f64", [&](Session& s) { return vdot(s, a, b); }},
      {"vdot c128 transposed", [&](Session& s) { return vdot(s, c.transpose_view(), d.transpose_view()); }},
      {"vdot f32 x f64", [&](Session& s) { return vdot(s, f, a); }},
      {"norm_squared f64", [&](Session& s) { return norm_squared(s, a); }},
      {"norm_squared c128", [&](Session& s) { return norm_squared(s, c); }},
  };
  for (const auto& [name, fn] : cases) {
    SCOPED_TRACE(name);
    EXPECT_EQ(bytes_of(one.with_session(fn)), bytes_of(two.with_session(fn)));
  }
  long double want = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) want += (long double)a.item<double>({i}) * b.item<double>({i});
  EXPECT_NEAR(two.with_session([&](Session& s) { return vdot(s, a, b).item<double>(); }), double(want), 1e-9 * 3e6);
  // axpby in parallel equals axpby inline.
  Tensor y1 = random_tensor(rng, {3'000'000}, DType::f64);
  Tensor y2 = Tensor::empty({3'000'000}, DType::f64);
  std::memcpy(const_cast<void*>(y2.data()), y1.data(), 3'000'000 * sizeof(double));
  one.with_session([&](Session& s) { axpby(s, 0.5, a, -2.0, y1); });
  two.with_session([&](Session& s) { axpby(s, 0.5, a, -2.0, y2); });
  EXPECT_EQ(bytes_of(y1), bytes_of(y2));
}

TEST(Blas1Alloc, NoHeapAllocationInHeldSession) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(16);
  Tensor a = random_tensor(rng, {64, 8}, DType::f64), b = random_layout(rng, {64, 8}, DType::f64, Layout::transposed);
  Tensor c = random_tensor(rng, {64, 8}, DType::c64), i = random_tensor(rng, {64, 8}, DType::i32);
  Tensor y = random_tensor(rng, {64, 8}, DType::f64);
  auto run = [&] {
    (void)vdot(s, a, b);
    (void)vdot(s, c, c);
    (void)vdot(s, i, a);
    (void)norm_squared(s, c);
    (void)norm_squared(s, i);
    axpby(s, 2.0, a, 0.5, y);
    axpby(s, 1, i, 0, y);
  };
  run();  // warm the pool (results are rank-0 blocks)
  const auto misses = s.pool_stats().misses;
  EXPECT_NO_ALLOCATION(run());  // runs once more to warm up, then counts a run
  EXPECT_EQ(s.pool_stats().misses, misses);
}

}  // namespace
}  // namespace tenferro::testing
