// convert (checked), cast (lossy, every case defined), copy_into, to_contiguous and
// reshape: every dtype pair x every layout against a typed reference written here;
// lossy values rejected with the first offending element named; broadcasting copies;
// views vs copies.
#include <gmock/gmock.h>

#include <limits>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::convert_test {
namespace {

using testing::copy_elem;
using testing::expect_error;
using testing::for_each_index;
using testing::identical;
using testing::kAllDTypes;
using testing::kAllLayouts;
using testing::Layout;
using testing::layout_name;
using testing::random_layout;
using testing::random_tensor;
using testing::show;
using testing::with_layout;

using cd = std::complex<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const float kNaNf = std::numeric_limits<float>::quiet_NaN();
const float kInff = std::numeric_limits<float>::infinity();

/// A [n, 2] tensor holding `v` in column 0 and `v` reversed in column 1.
template <class T> Tensor two_columns(const std::vector<T>& v) {
  const auto n = static_cast<std::int64_t>(v.size());
  const Tensor t = Tensor::empty({n, 2}, dtype_of<T>);
  for (std::int64_t i = 0; i < n; ++i) {
    t.set<T>({i, 0}, v[static_cast<std::size_t>(i)]);
    t.set<T>({i, 1}, v[static_cast<std::size_t>(n - 1 - i)]);
  }
  return t;
}

// ---------------------------------------------------------------- the cast reference

/// ops.hpp: float → integer truncates and saturates (NaN → 0), complex → real keeps the
/// real part, → bool tests != 0. Integer → narrower integer wraps (two's complement, as
/// C++ and NumPy's astype); everything else is the IEEE conversion.
template <class To, class From> To ref_cast(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>) return x.real() != 0 || x.imag() != 0;
    else return x != From(0);
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) return To(static_cast<R>(x.real()), static_cast<R>(x.imag()));
    else return To(ref_cast<R>(x), R(0));
  } else if constexpr (is_complex_v<From>) {
    return ref_cast<To>(x.real());
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return 0;
    const long double v = std::trunc(static_cast<long double>(x));
    const long double lim = std::ldexp(1.0L, std::numeric_limits<To>::digits);  // 2^31 or 2^63
    if (v >= lim) return std::numeric_limits<To>::max();
    if (v < -lim) return std::numeric_limits<To>::min();
    return static_cast<To>(v);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(x));
  } else {
    return static_cast<To>(x);
  }
}

/// Source values per dtype: ordinary, extreme and special ones.
Tensor cast_source(DType d) {
  using I32 = std::numeric_limits<std::int32_t>;
  using I64 = std::numeric_limits<std::int64_t>;
  switch (d) {
    case DType::b8: return two_columns<bool>({false, true, true, false});
    case DType::i32: return two_columns<std::int32_t>({0, 1, -1, I32::min(), I32::max(), 123456789, 16777217, -7});
    case DType::i64:
      return two_columns<std::int64_t>({0, 1, -1, I64::min(), I64::max(), (std::int64_t{1} << 53) + 1, 3'000'000'000, -3'000'000'000,
                                        std::int64_t{1} << 31, 4294967297});
    case DType::f32:
      return two_columns<float>({0.0f, -0.0f, 1.0f, -1.0f, 2.7f, -2.7f, 0.5f, kNaNf, kInff, -kInff, 3e9f, -3e9f, 1e20f, -1e20f, 2147483648.0f,
                                 -2147483648.0f, 9.3e18f, -9.3e18f, 1e-40f, 16777216.0f});
    case DType::f64:
      return two_columns<double>({0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.5, kNaN, kInf, -kInf, 3e9, -3e9, 1e20, -1e20, 2147483647.5,
                                  -2147483648.9, -2147483649.0, 4294967296.5, 9223372036854775808.0, -9223372036854775808.0, 9.3e18,
                                  -9.3e18, 1e-310, 0.1});
    case DType::c64:
      return two_columns<c64>({c64(0, 0), c64(0, 1), c64(2.7f, -1), c64(-2.7f, 5), c64(kNaNf, 0), c64(kInff, 0), c64(3e9f, 1), c64(-0.0f, 0),
                               c64(1, 0)});
    case DType::c128:
      return two_columns<c128>({c128(0, 0), c128(0, 1), c128(2.7, -1), c128(-2.7, 5), c128(kNaN, 0), c128(-kInf, 2), c128(3e9, 1),
                                c128(-0.0, 0), c128(1, 0), c128(1e20, -1e20), c128(0.1, 1e-300)});
  }
  return {};
}

/// Checks r == ref_cast(x) element by element (exact; NaN == NaN).
void check_cast(const Tensor& x, const Tensor& r) {
  visit_dtype("test", x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype("test", r.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      int bad = 0;
      std::string first;
      for_each_index(x.shape(), [&](const Dims& idx) {
        const From v = x.item<From>(idx.span());
        const To got = r.item<To>(idx.span()), want = ref_cast<To>(v);
        if (!identical(got, want) && bad++ == 0) first = idx.to_string() + " (x = " + show(v) + "): got " + show(got) + ", want " + show(want);
      });
      if (bad) ADD_FAILURE() << bad << " of " << x.numel() << " elements differ; first at " << first;
    });
  });
}

TEST(Cast, EveryDTypePairAndLayoutMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType from : kAllDTypes) {
    const Tensor src = cast_source(from);
    for (DType to : kAllDTypes) {
      for (Layout l : kAllLayouts) {
        SCOPED_TRACE("cast " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) + " " + layout_name(l));
        const Tensor x = with_layout(src, l);
        const Tensor r = cast(s, x, to);
        ASSERT_EQ(r.dtype(), to);
        ASSERT_EQ(r.shape(), x.shape());
        EXPECT_TRUE(r.is_contiguous());
        check_cast(x, r);
        // cast_into a strided (transposed, offset) view of a bigger tensor.
        const Tensor big = Tensor::zeros({3, x.extent(0) + 1}, to);
        const Tensor out = big.slice_view(1, 1, Tensor::kSliceEnd).slice_view(0, 0, 2).transpose_view();
        ASSERT_EQ(out.shape(), x.shape());
        cast_into(s, x, out);
        check_cast(x, out);
        for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(testing::value_at(big, {j, 0}), cd(0)) << "column 0 is outside the view";
        for (std::int64_t i = 0; i < big.extent(1); ++i) EXPECT_EQ(testing::value_at(big, {2, i}), cd(0)) << "row 2 is outside the view";
      }
    }
  }
}

TEST(Cast, NamedCases) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor f = Tensor::from_data<double>({6}, {kNaN, 1e10, -1e10, 2.9, -2.9, kInf});
  const Tensor i = cast(s, f, DType::i32);
  EXPECT_EQ(i.item<std::int32_t>({0}), 0);  // NaN → 0
  EXPECT_EQ(i.item<std::int32_t>({1}), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(i.item<std::int32_t>({2}), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(i.item<std::int32_t>({3}), 2);  // truncates
  EXPECT_EQ(i.item<std::int32_t>({4}), -2);
  EXPECT_EQ(i.item<std::int32_t>({5}), std::numeric_limits<std::int32_t>::max());
  const Tensor z = Tensor::from_data<c128>({3}, {c128(2.5, -7), c128(0, 1), c128(0, 0)});
  EXPECT_EQ(cast(s, z, DType::f64).item<double>({0}), 2.5);  // keeps the real part
  EXPECT_EQ(cast(s, z, DType::i64).item<std::int64_t>({0}), 2);
  const Tensor zb = cast(s, z, DType::b8);
  EXPECT_TRUE(zb.item<bool>({0}));
  EXPECT_TRUE(zb.item<bool>({1})) << "cast(0+1i, bool): 0+1i != 0, so true (ops.hpp: '→ bool tests != 0')";
  EXPECT_FALSE(zb.item<bool>({2}));
  const Tensor nb = cast(s, Tensor::from_data<float>({3}, {kNaNf, -0.0f, 0.25f}), DType::b8);
  EXPECT_TRUE(nb.item<bool>({0}));
  EXPECT_FALSE(nb.item<bool>({1}));
  EXPECT_TRUE(nb.item<bool>({2}));
}

// ---------------------------------------------------------------- convert

TEST(Convert, ExactValuesConvertBetweenEveryDTypePairAndLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(17);
  const Shape shapes[] = {{}, {5}, {3, 4}, {2, 3, 4}, {0, 3}};
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (const Shape& shape : shapes) {
        for (Layout l : kAllLayouts) {
          SCOPED_TRACE("convert " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)) + " " + shape.to_string() + " " +
                       layout_name(l));
          // 0 and 1 are exact in every dtype.
          const Tensor bits = random_tensor(rng, shape, DType::b8);
          const Tensor c = Tensor::empty(shape.span(), from);
          visit_dtype("test", from, [&](auto tag) {
            using T = typename decltype(tag)::type;
            for_each_index(shape, [&](const Dims& idx) { c.set<T>(idx.span(), ref_cast<T>(bits.item<bool>(idx.span()))); });
          });
          const Tensor x = with_layout(c, l);
          const Tensor r = convert(s, x, to);
          ASSERT_EQ(r.dtype(), to);
          ASSERT_EQ(r.shape(), shape);
          for_each_index(shape, [&](const Dims& idx) { EXPECT_EQ(testing::value_at(r, idx), testing::value_at(x, idx)) << idx.to_string(); });
          if (shape.size() == 0) continue;
          const Tensor out = Tensor::full(shape.span(), 1, to).slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
          convert_into(s, x, out);
          for_each_index(shape, [&](const Dims& idx) { EXPECT_EQ(testing::value_at(out, idx), testing::value_at(x, idx)) << idx.to_string(); });
        }
      }
    }
  }
}

TEST(Convert, ExactSpecialValuesAreAccepted) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  // i32 → i64 (negative), NaN/inf f64 → f32, complex with zero imaginary part → real.
  const Tensor a = convert(s, Tensor::from_data<std::int32_t>({2}, {-1, std::numeric_limits<std::int32_t>::min()}), DType::i64);
  EXPECT_EQ(a.item<std::int64_t>({0}), -1);
  EXPECT_EQ(a.item<std::int64_t>({1}), std::numeric_limits<std::int32_t>::min());
  const Tensor b = convert(s, Tensor::from_data<double>({4}, {kNaN, kInf, -kInf, 0.5}), DType::f32);
  EXPECT_TRUE(std::isnan(b.item<float>({0})));
  EXPECT_EQ(b.item<float>({1}), kInff);
  EXPECT_EQ(b.item<float>({2}), -kInff);
  EXPECT_EQ(b.item<float>({3}), 0.5f);
  const Tensor c = convert(s, Tensor::from_data<c128>({3}, {c128(3, 0), c128(kNaN, 0), c128(-0.5, -0.0)}), DType::f64);
  EXPECT_EQ(c.item<double>({0}), 3.0);
  EXPECT_TRUE(std::isnan(c.item<double>({1})));
  EXPECT_EQ(c.item<double>({2}), -0.5);
  EXPECT_EQ(convert(s, Tensor::from_data<c64>({1}, {c64(-4, 0)}), DType::i32).item<std::int32_t>({0}), -4);
  EXPECT_TRUE(convert(s, Tensor::from_data<c128>({1}, {c128(1, 0)}), DType::b8).item<bool>({0}));
  EXPECT_EQ(convert(s, Tensor::from_data<double>({1}, {9007199254740992.0}), DType::i64).item<std::int64_t>({0}), std::int64_t{1} << 53);
  EXPECT_EQ(convert(s, Tensor::from_data<double>({1}, {-9223372036854775808.0}), DType::i64).item<std::int64_t>({0}),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(convert(s, Tensor::from_data<std::int64_t>({1}, {std::int64_t{1} << 53}), DType::f64).item<double>({0}), 9007199254740992.0);
  EXPECT_EQ(convert(s, Tensor::from_data<std::int64_t>({1}, {-(std::int64_t{1} << 40)}), DType::f32).item<float>({0}), -1099511627776.0f);
  EXPECT_EQ(convert(s, Tensor::from_data<double>({1}, {-0.0}), DType::i32).item<std::int32_t>({0}), 0);
  const Tensor nanc = convert(s, Tensor::from_data<c128>({1}, {c128(kNaN, kNaN)}), DType::c64);
  EXPECT_TRUE(std::isnan(nanc.item<c64>({0}).real()));
}

TEST(Convert, LossyValuesAreArgumentErrorsNamingTheFirstElement) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  struct Lossy {
    std::string what;
    Tensor x;  ///< [4] with the offending value at index 2 (and 3), exact values elsewhere
    DType to;
  };
  auto at2 = [](auto bad, auto ok) {
    using T = decltype(bad);
    return Tensor::from_data<T>({4}, {ok, ok, bad, bad});
  };
  const std::int64_t i53 = (std::int64_t{1} << 53) + 1;
  const Lossy cases[] = {
      {"2.5 -> i32", at2(2.5, 1.0), DType::i32},
      {"1e40 -> f32", at2(1e40, 1.0), DType::f32},
      {"3+1i -> f64", at2(c128(3, 1), c128(1, 0)), DType::f64},
      {"i32 2 -> bool", at2(std::int32_t{2}, std::int32_t{1}), DType::b8},
      {"2^53+1 -> f64", at2(i53, std::int64_t{5}), DType::f64},
      {"INT64_MAX -> f64", at2(std::numeric_limits<std::int64_t>::max(), std::int64_t{5}), DType::f64},
      {"i64 -1 -> bool", at2(std::int64_t{-1}, std::int64_t{0}), DType::b8},
      {"3e9 -> i32", at2(std::int64_t{3'000'000'000}, std::int64_t{7}), DType::i32},
      {"INT64_MIN -> i32", at2(std::numeric_limits<std::int64_t>::min(), std::int64_t{7}), DType::i32},
      {"NaN -> i32", at2(kNaN, 2.0), DType::i32},
      {"inf -> i64", at2(kInf, 2.0), DType::i64},
      {"2^31 -> i32", at2(2147483648.0, 2.0), DType::i32},
      {"-2^31-1 -> i32", at2(-2147483649.0, 2.0), DType::i32},
      {"2^63 -> i64", at2(9223372036854775808.0, 2.0), DType::i64},
      {"f32 2^31 -> i32", at2(2147483648.0f, 2.0f), DType::i32},
      {"0.1 -> f32", at2(0.1, 0.5), DType::f32},
      {"16777217 -> f32", at2(std::int32_t{16777217}, std::int32_t{3}), DType::f32},
      {"c128 (1, 1e-300) -> c64", at2(c128(1, 1e-300), c128(1, 0)), DType::c64},
      {"c64 1+1i -> f32", at2(c64(1, 1), c64(2, 0)), DType::f32},
      {"c64 1+1i -> i64", at2(c64(1, 1), c64(2, 0)), DType::i64},
      {"f32 0.5 -> bool", at2(0.5f, 1.0f), DType::b8},
      {"c128 2 -> bool", at2(c128(2, 0), c128(0, 0)), DType::b8},
      {"NaN -> bool", at2(kNaN, 0.0), DType::b8},
      {"i64 2^40+1 -> c64", at2((std::int64_t{1} << 40) + 1, std::int64_t{1}), DType::c64},
  };
  for (const Lossy& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string msg = expect_error<ArgumentError>([&] { convert(s, c.x, c.to); }, "convert");
    EXPECT_THAT(msg, ::testing::HasSubstr("[2]")) << "the message names the first offending element";
    // convert_into: a strided out, untouched.
    const Tensor big = Tensor::ones({9}, c.to);
    const Tensor out = big.slice_view(0, 7, Tensor::kSliceEnd, -2);  // elements 7, 5, 3, 1
    ASSERT_EQ(out.numel(), 4);
    const auto before = testing::snapshot(big);
    expect_error<ArgumentError>([&] { convert_into(s, c.x, out); }, "convert");
    testing::expect_untouched(big, before);
    // The lossy value in a view: the index is the view's.
    const Tensor rev = c.x.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);  // bad at 0 and 1
    EXPECT_THAT(expect_error<ArgumentError>([&] { convert(s, rev, c.to); }, "convert"), ::testing::HasSubstr("[0]"));
    // cast accepts every one of them.
    EXPECT_NO_THROW(cast(s, c.x, c.to));
  }
}

// ---------------------------------------------------------------- copy_into

/// A compact copy made element by element (independent of the ops under test).
Tensor clone(const Tensor& t) {
  const Tensor c = Tensor::empty(t.shape().span(), t.dtype());
  for_each_index(t.shape(), [&](const Dims& idx) { copy_elem(c, idx, t, idx); });
  return c;
}

TEST(CopyInto, BroadcastingSourceIntoStridedDestinations) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(23);
  struct Case {
    Shape src, dst;
  };
  const Case cases[] = {{{3, 4}, {3, 4}}, {{3}, {3, 4}},         {{3, 1}, {3, 4}},       {{}, {3, 4}},
                        {{1, 4}, {3, 4, 2}}, {{2, 3, 4}, {2, 3, 4}}, {{0, 4}, {0, 4}}, {{}, {}}};
  const char* dst_layouts[] = {"compact", "transposed view", "negative-stride view"};
  for (DType d : kAllDTypes) {
    for (const Case& c : cases) {
      for (Layout ls : kAllLayouts) {
        for (int dl = 0; dl < 3; ++dl) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " src" + c.src.to_string() + " " + layout_name(ls) + " -> dst" + c.dst.to_string() + " " +
                       dst_layouts[dl]);
          const Tensor src = random_layout(rng, c.src, d, ls, -9, 9);
          // The destination is the inner block [1, 1 + extent) of a bigger tensor on every
          // axis: plain, through a transposition, or walked backwards.
          const int r = c.dst.size();
          Shape outer = c.dst;
          for (int i = 0; i < r; ++i) outer[i] += 2;
          Tensor big, dst;
          if (dl == 1) {
            Shape rev(r, 0);
            Dims perm(r, 0);
            for (int i = 0; i < r; ++i) rev[i] = outer[r - 1 - i], perm[i] = r - 1 - i;
            big = random_tensor(rng, rev, d, 20, 30);
            dst = big.permute_view(perm);
          } else {
            big = random_tensor(rng, outer, d, 20, 30);
            dst = big;
          }
          for (int i = 0; i < r; ++i) dst = dl == 2 ? dst.slice_view(i, c.dst[i], 0, -1) : dst.slice_view(i, 1, 1 + c.dst[i]);
          ASSERT_EQ(dst.shape(), c.dst);
          const Tensor big_before = clone(big);
          copy_into(s, src, dst);
          // Inside the view: the source, broadcast (dst index i walks backwards for dl == 2).
          int bad = 0;
          for_each_index(c.dst, [&](const Dims& idx) {
            Dims si(src.rank(), 0);
            for (int i = 0; i < src.rank(); ++i) si[i] = src.extent(i) == 1 ? 0 : idx[i];
            bad += testing::value_at(dst, idx) != testing::value_at(src, si);
          });
          EXPECT_EQ(bad, 0) << "values inside the destination view";
          // Outside the view: unchanged.
          int touched = 0;
          for_each_index(big.shape(), [&](const Dims& idx) {
            bool inside = true;
            for (int j = 0; j < r; ++j) {
              const std::int64_t e = dl == 1 ? c.dst[r - 1 - j] : c.dst[j];
              inside = inside && idx[j] >= 1 && idx[j] <= e;
            }
            if (!inside) touched += testing::value_at(big, idx) != testing::value_at(big_before, idx);
          });
          EXPECT_EQ(touched, 0) << "elements outside the destination view were written";
        }
      }
    }
  }
}

TEST(CopyInto, BadArgumentsWriteNothing) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(29);
  const Tensor dst = random_tensor(rng, {3, 4}, DType::f64);
  const auto before = testing::snapshot(dst);
  // dtype mismatch (no implicit conversion: use convert_into or cast_into).
  for (DType d : kAllDTypes) {
    if (d == DType::f64) continue;
    SCOPED_TRACE(std::string(dtype_name(d)) + " src");
    expect_error<DTypeError>([&] { copy_into(s, random_tensor(rng, {3, 4}, d), dst); }, "copy_into");
  }
  // Shapes that do not broadcast to the destination.
  expect_error<ShapeError>([&] { copy_into(s, random_tensor(rng, {4}, DType::f64), dst); }, "copy_into");
  expect_error<ShapeError>([&] { copy_into(s, random_tensor(rng, {3, 4, 2}, DType::f64), dst); }, "copy_into");
  expect_error<ShapeError>([&] { copy_into(s, random_tensor(rng, {3, 5}, DType::f64), dst); }, "copy_into");
  expect_error<ShapeError>([&] { copy_into(s, random_tensor(rng, {1, 4, 2}, DType::f64), dst); }, "copy_into");
  // Undefined tensors.
  expect_error<ArgumentError>([&] { copy_into(s, Tensor(), dst); }, "copy_into");
  // A source partially overlapping the destination.
  expect_error<ArgumentError>([&] { copy_into(s, dst.slice_view(0, 0, 2), dst.slice_view(0, 1, 3)); }, "copy_into");
  expect_error<ArgumentError>([&] { copy_into(s, dst.slice_view(1, 0, 3), dst.slice_view(1, 1, 4).slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1)); },
                              "copy_into");
  testing::expect_untouched(dst, before);
  // Read-only (broadcast) and self-overlapping destinations.
  const Tensor row = random_tensor(rng, {1, 4}, DType::f64);
  const auto row_before = testing::snapshot(row);
  expect_error<ArgumentError>([&] { copy_into(s, random_tensor(rng, {3, 4}, DType::f64), row.broadcast_view({3, 4})); }, "copy_into");
  const Dims zero_stride_shape{3, 4}, zero_strides{0, 1};
  expect_error<ArgumentError>([&] { copy_into(s, random_tensor(rng, {3, 4}, DType::f64), row.as_strided_view(zero_stride_shape, zero_strides, 0)); },
                              "copy_into");
  testing::expect_untouched(row, row_before);
  expect_error<ArgumentError>([&] { copy_into(s, Tensor::zeros({3, 4}, DType::f64), Tensor()); }, "copy_into");
  // The identical layout is allowed (a no-op), also through views.
  const Tensor v = dst.transpose_view();
  EXPECT_NO_THROW(copy_into(s, v, v));
  testing::expect_untouched(dst, before);
}

/// Element k (column-major) of t (defined with the reshape tests).
cd linear_value(const Tensor& t, std::int64_t k);

/// Elements of a and b (same shape and dtype) that differ, compared in their own type.
std::int64_t count_mismatches(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.shape(), b.shape());
  std::int64_t bad = 0;
  visit_dtype("test", a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_index(a.shape(), [&](const Dims& idx) { bad += !identical(a.item<T>(idx.span()), b.item<T>(idx.span())); });
  });
  return bad;
}

// Copies that transpose memory order at sizes where a cache-blocked kernel may take
// over (sides >= 16, odd extents that are not multiples of any tile, offsets, negative
// strides, a batch axis): every element must land exactly where the reference says.
TEST(CopyInto, TransposingCopiesOfMediumSizeAreExact) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(41);
  for (DType d : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor base = random_tensor(rng, {53, 37}, d, -100, 100);
    const Tensor t = base.transpose_view();  // [37, 53], row-major strides
    {
      SCOPED_TRACE("to_contiguous of a transposed view");
      const Tensor c = to_contiguous(s, t);
      EXPECT_TRUE(c.is_contiguous());
      EXPECT_EQ(count_mismatches(c, t), 0);
    }
    {
      SCOPED_TRACE("copy_into a transposed destination");
      const Tensor src = clone(t);
      const Tensor buf = Tensor::zeros({53, 37}, d);
      copy_into(s, src, buf.transpose_view());
      EXPECT_EQ(count_mismatches(buf.transpose_view(), src), 0);
    }
    {
      SCOPED_TRACE("negative strides and offsets on both sides");
      const Tensor big_src = random_tensor(rng, {60, 45}, d, -100, 100);
      const Tensor src = big_src.slice_view(0, 57, 2, -1).slice_view(1, 3, 43).transpose_view();  // [40, 55]
      const Tensor big_dst = random_tensor(rng, {44, 58}, d, -100, 100);
      const Tensor before = clone(big_dst);
      const Tensor dst = big_dst.slice_view(0, 1, 41).slice_view(1, 57, 2, -1);  // [40, 55]
      ASSERT_EQ(src.shape(), dst.shape());
      copy_into(s, src, dst);
      EXPECT_EQ(count_mismatches(dst, src), 0);
      std::int64_t outside = 0;
      visit_dtype("test", d, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for_each_index(big_dst.shape(), [&](const Dims& i) {
          const bool inside = i[0] >= 1 && i[0] <= 40 && i[1] >= 3 && i[1] <= 57;
          if (!inside) outside += !identical(big_dst.item<T>(i.span()), before.item<T>(i.span()));
        });
      });
      EXPECT_EQ(outside, 0) << "elements outside the destination view were written";
    }
    {
      SCOPED_TRACE("rank 3 permutations");
      const Tensor x = random_tensor(rng, {40, 30, 3}, d, -100, 100);
      for (const Dims& perm : {Dims{1, 0, 2}, Dims{2, 0, 1}, Dims{1, 2, 0}, Dims{2, 1, 0}}) {
        SCOPED_TRACE("perm " + perm.to_string());
        const Tensor v = x.permute_view(perm);
        EXPECT_EQ(count_mismatches(to_contiguous(s, v), v), 0);
        EXPECT_EQ(count_mismatches(cast(s, v, d), v), 0);
      }
    }
    {
      SCOPED_TRACE("reshape of a transposed view (copy path)");
      const Tensor r = reshape(s, t, {37 * 53});
      ASSERT_FALSE(r.shares_storage(t));
      std::int64_t bad = 0;
      for (std::int64_t k = 0; k < t.numel(); ++k) bad += linear_value(r, k) != linear_value(t, k);
      EXPECT_EQ(bad, 0);
    }
  }
}

TEST(CopyInto, ParallelTransposingCopyIsIdenticalToSingleThread) {
  std::mt19937_64 rng(43);
  const Tensor x = random_tensor(rng, {700, 601}, DType::f64).transpose_view();  // [601, 700]
  auto run = [&](int threads) {
    CpuBackendOptions options;
    options.num_threads = threads;
    CpuBackend b(options);
    return b.with_session([&](Session& s) {
      const Tensor dst = Tensor::empty({601, 700}, DType::f64);
      copy_into(s, x, dst);
      return dst;
    });
  };
  const Tensor one = run(1), two = run(2);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), static_cast<std::size_t>(one.numel()) * sizeof(double)), 0);
  EXPECT_EQ(count_mismatches(two, x), 0);
}

// ---------------------------------------------------------------- to_contiguous

TEST(ToContiguous, CompactInputIsReturnedAndViewsAreCopied) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(31);
  const Shape shapes[] = {{}, {5}, {3, 4}, {2, 3, 4}, {0, 3}};
  for (DType d : kAllDTypes) {
    for (const Shape& shape : shapes) {
      for (Layout l : kAllLayouts) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + shape.to_string() + " " + layout_name(l));
        const Tensor x = random_layout(rng, shape, d, l);
        const Tensor c = to_contiguous(s, x);
        ASSERT_EQ(c.dtype(), d);
        ASSERT_EQ(c.shape(), shape);
        EXPECT_TRUE(c.is_contiguous());
        EXPECT_FALSE(c.read_only());
        if (x.is_contiguous() && !x.read_only()) {
          EXPECT_TRUE(c.shares_storage(x)) << "compact input: the same storage";
          EXPECT_EQ(c.data(), x.data());
        } else {
          EXPECT_FALSE(c.shares_storage(x)) << "a view: a compact copy";
        }
        for_each_index(shape, [&](const Dims& idx) { EXPECT_EQ(testing::value_at(c, idx), testing::value_at(x, idx)) << idx.to_string(); });
      }
    }
  }
  // A compact view with an offset (whole columns of a column-major matrix) is compact.
  const Tensor m = random_tensor(rng, {3, 4}, DType::f32);
  const Tensor cols = m.slice_view(1, 1, 3);
  ASSERT_TRUE(cols.is_contiguous());
  const Tensor cc = to_contiguous(s, cols);
  EXPECT_TRUE(cc.shares_storage(m));
  EXPECT_EQ(cc.data(), cols.data());
  // Transposed and sliced rows are not compact: copied, and the copy is independent.
  const Tensor rows = m.slice_view(0, 0, 2);
  const Tensor rc = to_contiguous(s, rows);
  EXPECT_FALSE(rc.shares_storage(m));
  rc.set<float>({0, 0}, 123.0f);
  EXPECT_NE(m.item<float>({0, 0}), 123.0f);
  expect_error<ArgumentError>([&] { to_contiguous(s, Tensor()); }, "to_contiguous");
}

// ---------------------------------------------------------------- reshape

/// Element k (column-major) of t.
cd linear_value(const Tensor& t, std::int64_t k) {
  Dims idx(t.rank(), 0);
  for (int i = 0; i < t.rank(); ++i) {
    idx[i] = k % t.extent(i);
    k /= t.extent(i);
  }
  return testing::value_at(t, idx);
}

TEST(Reshape, AViewWhenTheLayoutAllowsElseACopy) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(37);
  const Tensor m = random_tensor(rng, {3, 4}, DType::f64);
  struct Case {
    std::string what;
    Tensor x;
    Shape to;
    bool view;
  };
  const Tensor t3 = random_tensor(rng, {2, 3, 4}, DType::c64);
  const Case cases[] = {
      {"compact [3,4] -> [4,3]", m, {4, 3}, true},
      {"compact [3,4] -> [12]", m, {12}, true},
      {"compact [3,4] -> [2,6]", m, {2, 6}, true},
      {"compact [3,4] -> [-1, 2]", m, {-1, 2}, true},
      {"compact [3,4] -> [3,1,4,1]", m, {3, 1, 4, 1}, true},
      {"columns [3,2] -> [6]", m.slice_view(1, 1, 3), {6}, true},
      {"rows [2,4] -> [2,2,2] (split the strided axis)", m.slice_view(0, 0, 2), {2, 2, 2}, true},
      {"rows [2,4] -> [8]", m.slice_view(0, 0, 2), {8}, false},
      {"transposed [4,3] -> [12]", m.transpose_view(), {12}, false},
      {"transposed [4,3] -> [2,6]", m.transpose_view(), {2, 6}, false},
      {"transposed [4,3] -> [4,3,1]", m.transpose_view(), {4, 3, 1}, true},
      {"negative stride [3,4] -> [12]", m.slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1), {12}, false},
      {"broadcast [3,4] -> [12]", m.slice_view(1, 0, 1).broadcast_view({3, 4}), {12}, false},
      {"rank 3 -> [6,4]", t3, {6, 4}, true},
      {"rank 3 permuted -> [24]", t3.permute_view({2, 0, 1}), {24}, false},
      {"scalar -> [1,1]", Tensor::scalar(2.5), {1, 1}, true},
      {"[0,3] -> [3,0]", Tensor::zeros({0, 3}, DType::i32), {3, 0}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Tensor r = reshape(s, c.x, c.to.span());
    Shape want = c.to;
    for (int i = 0; i < want.size(); ++i)
      if (want[i] == -1) want[i] = c.x.numel() / 2;
    ASSERT_EQ(r.shape(), want);
    ASSERT_EQ(r.dtype(), c.x.dtype());
    EXPECT_EQ(r.shares_storage(c.x), c.view) << (c.view ? "expected a view" : "expected a copy");
    if (!c.view) {
      EXPECT_TRUE(r.is_contiguous());
    }
    for (std::int64_t k = 0; k < c.x.numel(); ++k) EXPECT_EQ(linear_value(r, k), linear_value(c.x, k)) << "element " << k;
  }
  expect_error<ShapeError>([&] { reshape(s, m, {5, 3}); }, "reshape");
  expect_error<ShapeError>([&] { reshape(s, m.transpose_view(), {7}); }, "reshape");
  expect_error<ArgumentError>([&] { reshape(s, Tensor(), {1}); }, "reshape");
}

}  // namespace
}  // namespace tenferro::convert_test
