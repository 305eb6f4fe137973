// compare (eq ne lt le gt ge), select and clamp against a plain reference loop: every
// dtype, every layout of each operand, shapes of rank 0..3, zero extents and
// broadcasting, scalar operands, NaN, and the dtype rules (complex only eq/ne; bool pred).
#include <limits>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::ew_compare_test {
namespace {

using testing::convert_elem;
using testing::expect_error;
using testing::for_each_index;
using testing::identical;
using testing::kAllDTypes;
using testing::kAllLayouts;
using testing::Layout;
using testing::layout_name;
using testing::operand_value;
using testing::random_layout;
using testing::read_as;
using testing::show;
using testing::with_layout;

using cd = std::complex<double>;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- helpers

Shape broadcast(std::initializer_list<const Shape*> shapes) {
  int r = 0;
  for (const Shape* s : shapes) r = std::max(r, s->size());
  Shape o(r, 1);
  for (const Shape* s : shapes)
    for (int i = 0; i < s->size(); ++i)
      if ((*s)[i] != 1) o[i] = (*s)[i];
  return o;
}

/// Checks every element of `r` (dtype T) against ref(idx) exactly (these ops do no
/// arithmetic); `skip(idx)` excludes elements the contract leaves open.
template <class T, class Ref, class Skip> void expect_elements(const Tensor& r, Ref&& ref, Skip&& skip) {
  int bad = 0;
  std::string first;
  for_each_index(r.shape(), [&](const Dims& idx) {
    if (skip(idx)) return;
    const T got = r.item<T>(idx.span());
    const T want = ref(idx);
    if (!identical(got, want) && bad++ == 0) first = idx.to_string() + ": got " + show(got) + ", want " + show(want);
  });
  if (bad) ADD_FAILURE() << bad << " of " << r.numel() << " elements differ; first at " << first;
}
template <class T, class Ref> void expect_elements(const Tensor& r, Ref&& ref) {
  expect_elements<T>(r, ref, [](const Dims&) { return false; });
}

/// A compact tensor with elements drawn from `pool` (converted to the dtype).
Tensor from_pool(std::mt19937_64& rng, const Shape& shape, DType d, const std::vector<cd>& pool) {
  const Tensor t = Tensor::empty(shape.span(), d);
  visit_dtype("from_pool", d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_index(shape, [&](const Dims& idx) {
      cd v = pool[rng() % pool.size()];
      if constexpr (!std::is_floating_point_v<T> && !is_complex_v<T>) {
        if (std::isnan(v.real())) v = 0;
      }
      t.set<T>(idx.span(), convert_elem<T>(v));
    });
  });
  return t;
}

/// Values with many ties (and NaN for float and complex dtypes).
const std::vector<cd> kTies = {-2, -1, 0, 1, 2, cd(1, 1), cd(0, -1), cd(kNaN, 0), 1.5};

const Shape kS34{3, 4};
struct Shapes3 {
  Shape a, b, c;
};
const Shapes3 kShapes[] = {
    {{}, {}, {}},
    {{5}, {5}, {5}},
    {{3, 4}, {3, 4}, {3, 4}},
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
    {{0, 3}, {0, 3}, {1, 3}},
    {{3, 4}, {3}, {3, 4}},
    {{3, 1}, {1, 4}, {3, 4}},
    {{3, 4}, {3, 4, 2}, {3}},
    {{}, {3, 4}, {1, 4}},
    {{4, 1, 2}, {4, 3}, {}},
};

// ---------------------------------------------------------------- compare

const CompareOp kCompareOps[] = {CompareOp::eq, CompareOp::ne, CompareOp::lt, CompareOp::le, CompareOp::gt, CompareOp::ge};
const char* kCompareNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
std::string compare_op_name(CompareOp c) { return std::string("compare(") + kCompareNames[static_cast<int>(c)] + ")"; }

template <class T> bool ref_compare(CompareOp c, T a, T b) {
  switch (c) {
    case CompareOp::eq: return a == b;
    case CompareOp::ne: return a != b;
    default: break;
  }
  if constexpr (is_complex_v<T>) {
    ADD_FAILURE() << "ordered comparison of complex";
    return false;
  } else {
    switch (c) {
      case CompareOp::lt: return a < b;
      case CompareOp::le: return a <= b;
      case CompareOp::gt: return a > b;
      case CompareOp::ge: return a >= b;
      default: return false;
    }
  }
}

void check_compare(Session& s, CompareOp c, const Operand& a, const Operand& b, DType compute, const Shape& want_shape) {
  const Tensor r = compare(s, a, b, c);
  ASSERT_EQ(r.dtype(), DType::b8);
  ASSERT_EQ(r.shape(), want_shape);
  visit_dtype("test", compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    expect_elements<bool>(r, [&](const Dims& idx) { return ref_compare<T>(c, operand_value<T>(a, idx), operand_value<T>(b, idx)); });
  });
  const Tensor out = Tensor::empty(want_shape.span(), DType::b8);
  compare_into(s, a, b, c, out);
  if (r.numel() > 0) {
    EXPECT_EQ(std::memcmp(out.data(), r.data(), static_cast<std::size_t>(r.numel())), 0) << "compare_into differs from compare";
  }
}

TEST(ElementwiseCompare, EveryOpDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(42);
  int cases = 0;
  for (CompareOp c : kCompareOps) {
    for (DType d : kAllDTypes) {
      for (const Shapes3& sh : kShapes) {
        const Shape want = broadcast({&sh.a, &sh.b});
        for (Layout la : kAllLayouts) {
          for (Layout lb : kAllLayouts) {
            SCOPED_TRACE(compare_op_name(c) + " " + std::string(dtype_name(d)) + " a" + sh.a.to_string() + " " + layout_name(la) + ", b" +
                         sh.b.to_string() + " " + layout_name(lb));
            const Tensor a = with_layout(from_pool(rng, sh.a, d, kTies), la);
            const Tensor b = with_layout(from_pool(rng, sh.b, d, kTies), lb);
            if (is_complex(d) && c != CompareOp::eq && c != CompareOp::ne) {
              expect_error<DTypeError>([&] { compare(s, a, b, c); }, compare_op_name(c));
              continue;
            }
            check_compare(s, c, a, b, d, want);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 2000);
}

TEST(ElementwiseCompare, MixedDTypesAndScalarsPromote) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(43);
  const DType table[7] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
  for (CompareOp c : kCompareOps) {
    for (DType da : table) {
      for (DType db : table) {
        SCOPED_TRACE(compare_op_name(c) + " " + std::string(dtype_name(da)) + " vs " + std::string(dtype_name(db)));
        const Tensor a = with_layout(from_pool(rng, {3, 4}, da, kTies), Layout::transposed);
        const Tensor b = with_layout(from_pool(rng, {3, 1}, db, kTies), Layout::negative_stride);
        const DType d = promote(da, db);
        if (is_complex(d) && c != CompareOp::eq && c != CompareOp::ne) {
          expect_error<DTypeError>([&] { compare(s, a, b, c); }, compare_op_name(c));
          continue;
        }
        check_compare(s, c, a, b, d, kS34);
      }
      // Scalars on either side (weak): 1 (integer), 1.5, true, complex 1+1i.
      const Tensor t = from_pool(rng, {3, 4}, da, kTies);
      const Scalar scalars[] = {Scalar(1), Scalar(1.5), Scalar(true), Scalar(c128(1, 1)), Scalar(-0.0)};
      for (const Scalar& sc : scalars) {
        SCOPED_TRACE(compare_op_name(c) + " " + std::string(dtype_name(da)) + " tensor vs scalar " + sc.to_string());
        const DType d = sc.result_dtype_with(da);
        if (is_complex(d) && c != CompareOp::eq && c != CompareOp::ne) {
          expect_error<DTypeError>([&] { compare(s, t, sc, c); }, compare_op_name(c));
          expect_error<DTypeError>([&] { compare(s, sc, t, c); }, compare_op_name(c));
          continue;
        }
        check_compare(s, c, t, sc, d, kS34);
        check_compare(s, c, sc, t, d, kS34);
      }
    }
  }
}

TEST(ElementwiseCompare, NaNAndBoolSemantics) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : {DType::f32, DType::f64}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor a = Tensor::full({3}, kNaN, d);
    const Tensor b = Tensor::zeros({3}, d);
    const Tensor bn = Tensor::full({3}, kNaN, d);
    for (const Tensor* rhs : {&b, &bn}) {
      EXPECT_FALSE(eq(s, a, *rhs).item<bool>({0}));
      EXPECT_TRUE(ne(s, a, *rhs).item<bool>({0}));
      EXPECT_FALSE(lt(s, a, *rhs).item<bool>({0}));
      EXPECT_FALSE(le(s, a, *rhs).item<bool>({0}));
      EXPECT_FALSE(gt(s, a, *rhs).item<bool>({0}));
      EXPECT_FALSE(ge(s, a, *rhs).item<bool>({0}));
      EXPECT_FALSE(ge(s, *rhs, a).item<bool>({1}));
    }
    EXPECT_FALSE(eq(s, a, kNaN).item<bool>({0}));
    EXPECT_TRUE(ne(s, kNaN, a).item<bool>({0}));
    EXPECT_TRUE(eq(s, Tensor::full({1}, -0.0, d), 0.0).item<bool>({0}));  // -0 == +0
  }
  // Complex NaN: eq false, ne true.
  const Tensor z = Tensor::from_data<c128>({2}, {c128(kNaN, 0), c128(1, 2)});
  EXPECT_FALSE(eq(s, z, z).item<bool>({0}));
  EXPECT_TRUE(ne(s, z, z).item<bool>({0}));
  EXPECT_TRUE(eq(s, z, z).item<bool>({1}));
  EXPECT_TRUE(eq(s, z, c128(1, 2)).item<bool>({1}));
  EXPECT_FALSE(eq(s, z, c128(1, -2)).item<bool>({1}));
  for (CompareOp c : {CompareOp::lt, CompareOp::le, CompareOp::gt, CompareOp::ge}) {
    expect_error<DTypeError>([&] { compare(s, z, z, c); }, compare_op_name(c));
    const Tensor out = Tensor::zeros({2}, DType::b8);
    const auto before = testing::snapshot(out);
    expect_error<DTypeError>([&] { compare_into(s, z, z, c, out); }, compare_op_name(c));
    testing::expect_untouched(out, before);
    const Tensor f = Tensor::ones({2}, DType::f64);
    expect_error<DTypeError>([&] { compare(s, f, c64(1, 0), c); }, compare_op_name(c));  // promotes to complex
  }
  // bool: false < true.
  const Tensor t = Tensor::from_data<bool>({4}, {false, false, true, true});
  const Tensor u = Tensor::from_data<bool>({4}, {false, true, false, true});
  const bool want_lt[] = {false, true, false, false};
  const bool want_ge[] = {true, false, true, true};
  const Tensor l = lt(s, t, u), g = ge(s, t, u);
  for (std::int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(l.item<bool>({i}), want_lt[i]);
    EXPECT_EQ(g.item<bool>({i}), want_ge[i]);
  }
  // i64 values beyond 2^53 compare exactly (no detour through double).
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  const Tensor bi = Tensor::from_data<std::int64_t>({1}, {big});
  EXPECT_FALSE(eq(s, bi, Tensor::from_data<std::int64_t>({1}, {big - 1})).item<bool>({0}));
  EXPECT_TRUE(gt(s, bi, std::int64_t{big - 1}).item<bool>({0}));
}

// ---------------------------------------------------------------- select

TEST(ElementwiseSelect, EveryDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(44);
  int n = 0;
  for (DType d : kAllDTypes) {
    for (const Shapes3& sh : kShapes) {
      const Shape want = broadcast({&sh.a, &sh.b, &sh.c});
      for (Layout lp : kAllLayouts) {
        for (Layout lt_ : kAllLayouts) {
          for (Layout lf : kAllLayouts) {
            SCOPED_TRACE("select " + std::string(dtype_name(d)) + " pred" + sh.a.to_string() + " " + layout_name(lp) + ", on_true" +
                         sh.b.to_string() + " " + layout_name(lt_) + ", on_false" + sh.c.to_string() + " " + layout_name(lf));
            const Tensor p = random_layout(rng, sh.a, DType::b8, lp);
            const Tensor t = random_layout(rng, sh.b, d, lt_, -9, 9);
            const Tensor f = random_layout(rng, sh.c, d, lf, -9, 9);
            const Tensor r = select(s, p, t, f);
            ASSERT_EQ(r.dtype(), d);
            ASSERT_EQ(r.shape(), want);
            visit_dtype("test", d, [&](auto tag) {
              using T = typename decltype(tag)::type;
              expect_elements<T>(r, [&](const Dims& idx) {
                return operand_value<bool>(p, idx) ? operand_value<T>(t, idx) : operand_value<T>(f, idx);
              });
            });
            const Tensor out = Tensor::empty(want.span(), d);
            select_into(s, p, t, f, out);
            if (r.numel() > 0) {
              EXPECT_EQ(std::memcmp(out.data(), r.data(), static_cast<std::size_t>(r.numel()) * dtype_size(d)), 0);
            }
            ++n;
          }
        }
      }
    }
  }
  EXPECT_GT(n, 4000);
}

TEST(ElementwiseSelect, BranchesPromoteAndScalarsAreWeak) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(45);
  const Tensor p = random_layout(rng, {3, 4}, DType::b8, Layout::transposed);
  const DType table[7] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
  for (DType dt : table) {
    for (DType df : table) {
      SCOPED_TRACE("select " + std::string(dtype_name(dt)) + " / " + std::string(dtype_name(df)));
      const Tensor t = random_layout(rng, {3, 4}, dt, Layout::negative_stride, -5, 5);
      const Tensor f = random_layout(rng, {3, 1}, df, Layout::contiguous, -5, 5);
      const DType d = promote(dt, df);
      const Tensor r = select(s, p, t, f);
      ASSERT_EQ(r.dtype(), d);
      visit_dtype("test", d, [&](auto tag) {
        using T = typename decltype(tag)::type;
        expect_elements<T>(r, [&](const Dims& idx) { return operand_value<bool>(p, idx) ? read_as<T>(t, idx) : read_as<T>(f, {idx[0], 0}); });
      });
    }
    // Scalar branches are weak: f32 with 0.0 stays f32; i32 with 2.5 goes to f64.
    const Tensor x = random_layout(rng, {3, 4}, dt, Layout::contiguous, -5, 5);
    const Scalar zero = 0.5;
    const DType want = zero.result_dtype_with(dt);
    const Tensor r = select(s, p, x, zero);
    EXPECT_EQ(r.dtype(), want);
    const Tensor r2 = select(s, p, zero, x);
    EXPECT_EQ(r2.dtype(), want);
    visit_dtype("test", want, [&](auto tag) {
      using T = typename decltype(tag)::type;
      expect_elements<T>(r, [&](const Dims& idx) { return operand_value<bool>(p, idx) ? read_as<T>(x, idx) : zero.to<T>(); });
      expect_elements<T>(r2, [&](const Dims& idx) { return operand_value<bool>(p, idx) ? zero.to<T>() : read_as<T>(x, idx); });
    });
  }
  // Examples: f32 / 0.0 → f32, i32 / 2.5 → f64.
  const Tensor xf = Tensor::ones({3, 4}, DType::f32);
  EXPECT_EQ(select(s, p, xf, 0.0).dtype(), DType::f32);
  EXPECT_EQ(select(s, p, Tensor::ones({3, 4}, DType::i32), 2.5).dtype(), DType::f64);
  // A scalar pred picks a whole branch (broadcast to the branches' shape).
  const Tensor a = random_layout(rng, {3, 4}, DType::f64, Layout::transposed);
  const Tensor b = random_layout(rng, {3, 4}, DType::f64, Layout::broadcast);
  expect_elements<double>(select(s, true, a, b), [&](const Dims& idx) { return a.item<double>(idx.span()); });
  expect_elements<double>(select(s, false, a, b), [&](const Dims& idx) { return b.item<double>(idx.span()); });
  // Broadcasting all three.
  const Tensor pc = random_layout(rng, {3, 1}, DType::b8, Layout::contiguous);
  const Tensor tr = random_layout(rng, {1, 4}, DType::i64, Layout::contiguous, -9, 9);
  const Tensor fr = random_layout(rng, {3, 4, 2}, DType::i64, Layout::negative_stride, -9, 9);
  const Tensor r3 = select(s, pc, tr, fr);
  ASSERT_EQ(r3.shape(), Shape({3, 4, 2}));
  expect_elements<std::int64_t>(r3, [&](const Dims& idx) {
    return pc.item<bool>({idx[0], 0}) ? tr.item<std::int64_t>({0, idx[1]}) : fr.item<std::int64_t>(idx.span());
  });
}

TEST(ElementwiseSelect, NonBoolPredIsDTypeError) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor a = Tensor::ones({2, 2}, DType::f64), b = Tensor::zeros({2, 2}, DType::f64);
  const Tensor out = Tensor::full({2, 2}, 7.0, DType::f64);
  const auto before = testing::snapshot(out);
  for (DType d : {DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)) + " pred");
    const Tensor p = Tensor::ones({2, 2}, d);
    expect_error<DTypeError>([&] { select(s, p, a, b); }, "select");
    expect_error<DTypeError>([&] { select_into(s, p, a, b, out); }, "select");
  }
  expect_error<DTypeError>([&] { select(s, 1, a, b); }, "select");
  expect_error<DTypeError>([&] { select_into(s, 1.0, a, b, out); }, "select");
  expect_error<DTypeError>([&] { select_into(s, c64(1, 0), a, b, out); }, "select");
  testing::expect_untouched(out, before);
}

// ---------------------------------------------------------------- clamp

/// min(max(x, lo), hi) with NaN x staying NaN (ops.hpp; StableHLO clamp).
template <class T> T ref_clamp(T lo, T x, T hi) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
  }
  const T m = x < lo ? lo : x;
  return m > hi ? hi : m;
}

TEST(ElementwiseClamp, EveryDTypeLayoutAndShapeMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(46);
  int n = 0, checked = 0;
  for (DType d : {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64}) {
    const bool integral = !is_floating(d);
    for (const Shapes3& sh : kShapes) {
      const Shape want = broadcast({&sh.a, &sh.b, &sh.c});
      for (Layout llo : kAllLayouts) {
        for (Layout lx : kAllLayouts) {
          for (Layout lhi : kAllLayouts) {
            SCOPED_TRACE("clamp " + std::string(dtype_name(d)) + " lo" + sh.a.to_string() + " " + layout_name(llo) + ", x" + sh.b.to_string() +
                         " " + layout_name(lx) + ", hi" + sh.c.to_string() + " " + layout_name(lhi));
            // lo mostly below hi; elements with lo > hi are the subject of their own test.
            const Tensor lo = random_layout(rng, sh.a, d, llo, integral ? -20 : -2, integral ? 5 : 0.5);
            const Tensor x = random_layout(rng, sh.b, d, lx, integral ? -50 : -3, integral ? 50 : 3);
            const Tensor hi = random_layout(rng, sh.c, d, lhi, integral ? -5 : -0.5, integral ? 20 : 2);
            const Tensor r = clamp(s, lo, x, hi);
            ASSERT_EQ(r.dtype(), d);
            ASSERT_EQ(r.shape(), want);
            visit_dtype<DTypeSet::real>("test", d, [&](auto tag) {
              using T = typename decltype(tag)::type;
              expect_elements<T>(
                  r, [&](const Dims& idx) { return ref_clamp<T>(operand_value<T>(lo, idx), operand_value<T>(x, idx), operand_value<T>(hi, idx)); },
                  [&](const Dims& idx) { return operand_value<T>(lo, idx) > operand_value<T>(hi, idx); });
              for_each_index(want, [&](const Dims& idx) { checked += !(operand_value<T>(lo, idx) > operand_value<T>(hi, idx)); });
            });
            const Tensor out = Tensor::empty(want.span(), d);
            clamp_into(s, lo, x, hi, out);
            if (r.numel() > 0) {
              EXPECT_EQ(std::memcmp(out.data(), r.data(), static_cast<std::size_t>(r.numel()) * dtype_size(d)), 0);
            }
            ++n;
          }
        }
      }
    }
  }
  EXPECT_GT(n, 3000);
  EXPECT_GT(checked, 20000);
}

TEST(ElementwiseClamp, ScalarsNaNAndDTypes) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const double nan = kNaN;
  for (DType d : {DType::f32, DType::f64}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    Tensor x = Tensor::zeros({5}, d);
    const double xs[] = {-2, 0.25, 2, nan, -0.0};
    for (std::int64_t i = 0; i < 5; ++i) {
      if (d == DType::f32) x.set<float>({i}, static_cast<float>(xs[i]));
      else x.set<double>({i}, xs[i]);
    }
    const Tensor r = clamp(s, 0.0, x, 1.0);
    ASSERT_EQ(r.dtype(), d);  // weak scalars
    const double want[] = {0, 0.25, 1, nan, 0};
    for (std::int64_t i = 0; i < 5; ++i) {
      const double got = testing::value_at(r, {i}).real();
      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got)) << "NaN x stays NaN";
      else EXPECT_EQ(got, want[i]) << i;
    }
  }
  // Integer x with integer scalar bounds stays integer; a float bound promotes to f64.
  const Tensor xi = Tensor::from_data<std::int32_t>({4}, {-7, 0, 3, 9});
  const Tensor ri = clamp(s, -1, xi, 5);
  ASSERT_EQ(ri.dtype(), DType::i32);
  EXPECT_EQ(ri.item<std::int32_t>({0}), -1);
  EXPECT_EQ(ri.item<std::int32_t>({3}), 5);
  EXPECT_EQ(clamp(s, -0.5, xi, 5).dtype(), DType::f64);
  // Mixed tensors promote: i32 lo, f32 x → f32.
  const Tensor lo = Tensor::from_data<std::int32_t>({4}, {0, 0, 0, 0});
  EXPECT_EQ(clamp(s, lo, Tensor::ones({4}, DType::f32), 2.0).dtype(), DType::f32);
  // Complex is not ordered.
  const Tensor z = Tensor::ones({2}, DType::c64);
  expect_error<DTypeError>([&] { clamp(s, 0.0, z, 1.0); }, "clamp");
  expect_error<DTypeError>([&] { clamp(s, c128(0, 0), Tensor::ones({2}, DType::f64), 1.0); }, "clamp");
  const Tensor outz = Tensor::zeros({2}, DType::c64);
  const auto before = testing::snapshot(outz);
  expect_error<DTypeError>([&] { clamp_into(s, 0.0, z, 1.0, outz); }, "clamp");
  testing::expect_untouched(outz, before);
}

// ops.hpp: clamp is min(max(x, lo), hi). When lo > hi that is hi for every x.
TEST(ElementwiseClamp, LowerBoundAboveUpperBoundGivesUpperBound) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::from_data<double>({4}, {0.0, 3.0, 6.0, -1.0});
  const Tensor r = clamp(s, 5.0, x, 1.0);
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(r.item<double>({i}), 1.0) << "clamp(lo=5, x=" << x.item<double>({i}) << ", hi=1)";
  const Tensor xi = Tensor::from_data<std::int64_t>({3}, {0, 3, 6});
  const Tensor ri = clamp(s, 5, xi, 1);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(ri.item<std::int64_t>({i}), 1) << "clamp(lo=5, x=" << xi.item<std::int64_t>({i}) << ", hi=1)";
}

}  // namespace
}  // namespace tenferro::ew_compare_test
