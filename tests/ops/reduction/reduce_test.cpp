// Reductions (sum prod max min mean sum_squares argmax argmin logsumexp) against a plain reference
// loop: every op × dtype of its set × layout × axis set × keepdims, both the allocating
// and the `_into` forms; strided outputs; wrapping, NaN and tie rules; every validation
// error with the output untouched; determinism across thread counts; no heap allocation
// in the `_into` forms inside a held session.
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "cpu/context.hpp"
#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::testing {
namespace {

using cd = std::complex<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Op { sum, prod, max, min, mean, sum_squares, argmax, argmin, logsumexp };
const Op kOps[] = {Op::sum, Op::prod, Op::max, Op::min, Op::mean, Op::sum_squares, Op::argmax, Op::argmin, Op::logsumexp};

std::string op_name(Op op) {
  const char* names[] = {"sum", "prod", "max", "min", "mean", "sum_squares", "argmax", "argmin", "logsumexp"};
  return names[static_cast<int>(op)];
}
bool is_arg(Op op) { return op == Op::argmax || op == Op::argmin; }
bool needs_elements(Op op) { return op == Op::max || op == Op::min || is_arg(op); }
bool accepts(Op op, DType d) {
  switch (op) {
    case Op::sum:
    case Op::prod:
    case Op::mean: return true;
    case Op::sum_squares: return !is_bool(d);
    case Op::logsumexp: return is_floating(d);
    default: return !is_complex(d);
  }
}
DType result_dtype(Op op, DType d) {
  switch (op) {
    case Op::sum:
    case Op::prod: return is_bool(d) ? DType::i64 : d;
    case Op::mean: return is_inexact(d) ? d : DType::f64;
    case Op::sum_squares: return real_dtype(d);
    case Op::max:
    case Op::min:
    case Op::logsumexp: return d;
    default: return DType::i64;
  }
}

Tensor call(Session& s, Op op, const Tensor& x, const std::optional<Dims>& axes, bool keepdims) {
#define TF_CASE(name) \
  case Op::name: return axes ? tenferro::name(s, x, axes->span(), keepdims) : tenferro::name(s, x);
  switch (op) {
    TF_CASE(sum) TF_CASE(prod) TF_CASE(max) TF_CASE(min) TF_CASE(mean) TF_CASE(sum_squares) TF_CASE(argmax) TF_CASE(argmin) TF_CASE(logsumexp)
  }
#undef TF_CASE
  return {};
}

void call_into(Session& s, Op op, const Tensor& x, std::span<const std::int64_t> axes, const Tensor& out, bool keepdims) {
#define TF_CASE(name) \
  case Op::name: tenferro::name##_into(s, x, axes, out, keepdims); return;
  switch (op) {
    TF_CASE(sum) TF_CASE(prod) TF_CASE(max) TF_CASE(min) TF_CASE(mean) TF_CASE(sum_squares) TF_CASE(argmax) TF_CASE(argmin) TF_CASE(logsumexp)
  }
#undef TF_CASE
}

std::uint64_t mask_of(int rank, const std::optional<Dims>& axes) {
  if (!axes) return rank == 0 ? 0 : (std::uint64_t{1} << rank) - 1;
  std::uint64_t m = 0;
  for (auto a : *axes) m |= std::uint64_t{1} << (a < 0 ? a + rank : a);
  return m;
}

/// Expected result of a reduction: shape and values in column-major order.
struct Ref {
  Shape shape;
  std::vector<cd> v;
  std::int64_t reduced = 1;
};

// Wrapped integer result in the output width, as a double.
double wrap_to(DType out, std::uint64_t u) {
  return out == DType::i32 ? static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(u)))
                           : static_cast<double>(static_cast<std::int64_t>(u));
}

/// The plain reference: one pass over x in column-major order (so, for a fixed output,
/// the reduced elements come in column-major order of the reduced axes).
Ref reference(Op op, const Tensor& x, std::uint64_t mask, bool keepdims) {
  Ref r;
  const int rank = x.rank();
  std::int64_t outputs = 1;
  for (int i = 0; i < rank; ++i) {
    if (!(mask >> i & 1)) {
      r.shape.push_back(x.extent(i));
      outputs *= x.extent(i);
    } else {
      r.reduced *= x.extent(i);
      if (keepdims) r.shape.push_back(1);
    }
  }
  const DType in = x.dtype(), out = result_dtype(op, in);
  const bool exact_int = !is_inexact(in) && (op == Op::sum || op == Op::prod || op == Op::sum_squares);
  std::vector<cd> acc(outputs, op == Op::prod ? cd(1) : cd(0));
  std::vector<std::uint64_t> iacc(outputs, op == Op::prod ? 1 : 0);
  std::vector<std::int64_t> best_i(outputs, -1);
  std::vector<double> best_v(outputs, 0);
  for_each_index(x.shape(), [&](const Dims& idx) {
    std::int64_t o = 0, os = 1, ri = 0, rs = 1;
    for (int i = 0; i < rank; ++i) {
      if (mask >> i & 1) ri += idx[i] * rs, rs *= x.extent(i);
      else o += idx[i] * os, os *= x.extent(i);
    }
    const cd v = value_at(x, idx);
    if (exact_int) {
      const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(v.real()));
      iacc[o] = op == Op::sum ? iacc[o] + u : op == Op::prod ? iacc[o] * u : iacc[o] + u * u;
      return;
    }
    switch (op) {
      case Op::sum:
      case Op::mean: acc[o] += v; break;
      case Op::prod: acc[o] *= v; break;
      case Op::sum_squares: acc[o] += std::norm(v); break;
      case Op::logsumexp: acc[o] += std::exp(v.real()); break;  // |x| <= 3: no overflow
      default: {  // max min argmax argmin: NaN wins, first occurrence on ties
        const bool mx = op == Op::max || op == Op::argmax;
        const double a = v.real();
        const bool better = best_i[o] < 0 || (std::isnan(a) && !std::isnan(best_v[o])) ||
                            (!std::isnan(best_v[o]) && (mx ? a > best_v[o] : a < best_v[o]));
        if (better) best_v[o] = a, best_i[o] = ri;
      }
    }
  });
  r.v.resize(outputs);
  for (std::int64_t o = 0; o < outputs; ++o) {
    if (exact_int) r.v[o] = wrap_to(out, iacc[o]);
    else if (op == Op::mean) r.v[o] = r.reduced == 0 ? (is_complex(out) ? cd(kNaN, kNaN) : cd(kNaN, 0)) : acc[o] / double(r.reduced);
    else if (op == Op::max || op == Op::min) r.v[o] = best_v[o];
    else if (is_arg(op)) r.v[o] = double(best_i[o]);
    else if (op == Op::logsumexp) r.v[o] = std::log(acc[o].real());  // log(0) = -inf: empty
    else r.v[o] = acc[o];
  }
  return r;
}

/// Compares `out` with the reference; returns false (after one failure message) on mismatch.
bool check(const Tensor& out, DType dtype, const Ref& ref, double tol) {
  EXPECT_EQ(out.dtype(), dtype);
  EXPECT_EQ(out.shape(), ref.shape);
  if (out.dtype() != dtype || !(out.shape() == ref.shape)) return false;
  std::int64_t k = 0;
  bool ok = true;
  for_each_index(ref.shape, [&](const Dims& idx) {
    const cd got = value_at(out, idx), want = ref.v[k++];
    // Complex results compare by modulus: a product's small real part next to a large
    // imaginary part carries an error relative to |z|, not to the part.
    const bool finite = std::isfinite(want.real()) && std::isfinite(want.imag());
    const bool good = finite && is_complex(dtype) ? std::abs(got - want) <= tol * (1 + std::abs(want)) : close(got, want, tol);
    if (ok && !good) {
      ADD_FAILURE() << "at " << idx.to_string() << ": got " << got << ", want " << want << " (tol " << tol << ")";
      ok = false;
    }
  });
  return ok;
}

double tolerance(Op op, DType out, std::int64_t reduced) {
  return is_arg(op) || op == Op::max || op == Op::min ? 0 : 8.0 * double(std::max<std::int64_t>(reduced, 1)) * epsilon_of(out);
}

/// Rounds every element of t's storage to an integer (ties for argmax / max tests).
void quantize(const Tensor& t) {
  auto* base = t.block()->data();
  visit_dtype("quantize", t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      T* p = reinterpret_cast<T*>(base);
      for (std::size_t i = 0; i < t.block()->bytes / sizeof(T); ++i) p[i] = std::round(p[i]);
    }
  });
}

std::vector<std::optional<Dims>> axis_sets(int r) {
  std::vector<std::optional<Dims>> v = {std::nullopt, Dims{}};
  if (r >= 1) v.push_back(Dims{0}), v.push_back(Dims{-1});
  if (r >= 2) v.push_back(Dims{1}), v.push_back(Dims{0, r - 1}), v.push_back(Dims{r - 1, 0});
  if (r >= 3) v.push_back(Dims{1, -1}), v.push_back(Dims{0, 1}), v.push_back(Dims{-1, 0, 1});
  if (r >= 2) {
    Dims all;
    for (int i = 0; i < r; ++i) all.push_back(i);
    v.push_back(all);
  }
  return v;
}

/// The table: every dtype of the op's set × layout × shape × axis set × keepdims.
void run_table(Op op) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(1000 + static_cast<int>(op));
  // Rank 10 exercises layouts above the inline rank of 8.
  const Shape shapes[] = {{3, 4, 5}, {7}, {}, {4, 1, 3}, {3, 0, 2}, {2, 3, 2, 2}, {19, 3}, {1, 1, 1}, {2, 2, 1, 2, 2, 2, 2, 2, 2, 2}};
  int cases = 0;
  for (DType dt : kAllDTypes) {
    if (!accepts(op, dt)) continue;
    const DType odt = result_dtype(op, dt);
    for (Layout layout : kAllLayouts) {
      for (const Shape& shape : shapes) {
        for (int quant = 0; quant < (needs_elements(op) && is_floating(dt) ? 2 : 1); ++quant) {
          // Long float products stay finite with factors near 1 (or inside the unit disc).
          std::int64_t numel = 1;
          for (auto e : shape) numel *= e;
          const bool long_prod = op == Op::prod && is_inexact(dt) && numel > 64;
          const double lo = !long_prod ? -3 : is_complex(dt) ? -0.7 : 0.9, hi = !long_prod ? 3 : is_complex(dt) ? 0.7 : 1.1;
          Tensor x = random_layout(rng, shape, dt, layout, lo, hi);
          if (quant) quantize(x);
          for (const auto& axes : axis_sets(shape.size())) {
            for (int keep = 0; keep < (axes ? 2 : 1); ++keep) {
              const std::uint64_t mask = mask_of(shape.size(), axes);
              const Ref ref = reference(op, x, mask, keep != 0);
              SCOPED_TRACE(op_name(op) + " " + std::string(dtype_name(dt)) + " " + layout_name(layout) + " shape " + shape.to_string() +
                           " axes " + (axes ? axes->to_string() : "all") + (keep ? " keepdims" : "") + (quant ? " quantized" : ""));
              ++cases;
              if (needs_elements(op) && ref.reduced == 0) {
                EXPECT_THROW(call(s, op, x, axes, keep != 0), ShapeError);
                continue;
              }
              const double tol = tolerance(op, odt, ref.reduced);
              if (!check(call(s, op, x, axes, keep != 0), odt, ref, tol)) return;
              if (axes) {
                Tensor out = Tensor::empty(ref.shape.span(), odt);
                call_into(s, op, x, axes->span(), out, keep != 0);
                if (!check(out, odt, ref, tol)) return;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 500);
  std::printf("%s: %d cases\n", op_name(op).c_str(), cases);
}

TEST(ReduceTable, Sum) { run_table(Op::sum); }
TEST(ReduceTable, Prod) { run_table(Op::prod); }
TEST(ReduceTable, Max) { run_table(Op::max); }
TEST(ReduceTable, Min) { run_table(Op::min); }
TEST(ReduceTable, Mean) { run_table(Op::mean); }
TEST(ReduceTable, SumSquares) { run_table(Op::sum_squares); }
TEST(ReduceTable, Argmax) { run_table(Op::argmax); }
TEST(ReduceTable, Argmin) { run_table(Op::argmin); }
TEST(ReduceTable, LogSumExp) { run_table(Op::logsumexp); }

// Longer lines than the table's: lanes, tails and both loop orders (row, column,
// short-vector reductions) on every layout.
TEST(ReduceTable, LongLinesAllLayouts) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(77);
  const Shape shapes[] = {{67, 45}, {2, 301}, {301, 2}, {5, 7, 33}};
  for (Op op : kOps)
    for (DType dt : {DType::f32, DType::f64, DType::i32, DType::c128})
      for (Layout layout : kAllLayouts)
        for (const Shape& shape : shapes) {
          if (!accepts(op, dt)) continue;
          // Products of thousands of factors stay finite with factors near 1 (real) or
          // inside the unit disc (complex).
          const double lo = op != Op::prod ? -3 : is_complex(dt) ? -0.7 : 0.9, hi = op != Op::prod ? 3 : is_complex(dt) ? 0.7 : 1.1;
          Tensor x = random_layout(rng, shape, dt, layout, lo, hi);
          for (const auto& axes : axis_sets(shape.size())) {
            const Ref ref = reference(op, x, mask_of(shape.size(), axes), false);
            SCOPED_TRACE(op_name(op) + " " + std::string(dtype_name(dt)) + " " + layout_name(layout) + " shape " + shape.to_string() +
                         " axes " + (axes ? axes->to_string() : "all"));
            if (!check(call(s, op, x, axes, false), result_dtype(op, dt), ref, tolerance(op, result_dtype(op, dt), ref.reduced))) return;
          }
        }
}

// ---------------------------------------------------------------- semantics

TEST(ReduceSemantics, IntegerWrapAndBool) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    const auto imax = std::numeric_limits<std::int32_t>::max();
    Tensor a = Tensor::from_data<std::int32_t>({3}, {imax, 1, 0});
    EXPECT_EQ(sum(s, a).item<std::int32_t>(), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(sum(s, a).dtype(), DType::i32);
    Tensor b = Tensor::from_data<std::int64_t>({2}, {std::int64_t{1} << 62, 4});
    EXPECT_EQ(prod(s, b).item<std::int64_t>(), 0);
    Tensor c = Tensor::from_data<std::int32_t>({1}, {65536});
    EXPECT_EQ(sum_squares(s, c).item<std::int32_t>(), 0);  // 2^32 wraps
    Tensor d = Tensor::from_data<bool>({4}, {true, false, true, true});
    EXPECT_EQ(sum(s, d).dtype(), DType::i64);
    EXPECT_EQ(sum(s, d).item<std::int64_t>(), 3);
    EXPECT_EQ(prod(s, d).item<std::int64_t>(), 0);
    EXPECT_EQ(max(s, d).item<bool>(), true);
    EXPECT_EQ(min(s, d).item<bool>(), false);
    EXPECT_EQ(mean(s, d).dtype(), DType::f64);
    EXPECT_DOUBLE_EQ(mean(s, d).item<double>(), 0.75);
    EXPECT_EQ(argmin(s, d).item<std::int64_t>(), 1);
  });
}

TEST(ReduceSemantics, NaNAndTies) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    Tensor x = Tensor::from_data<double>({5}, {1, kNaN, 3, kNaN, -1});
    EXPECT_TRUE(std::isnan(max(s, x).item<double>()));
    EXPECT_TRUE(std::isnan(min(s, x).item<double>()));
    EXPECT_EQ(argmax(s, x).item<std::int64_t>(), 1);  // first NaN
    EXPECT_EQ(argmin(s, x).item<std::int64_t>(), 1);
    Tensor t = Tensor::from_data<float>({4}, {3, 1, 3, 1});
    EXPECT_EQ(argmax(s, t).item<std::int64_t>(), 0);
    EXPECT_EQ(argmin(s, t).item<std::int64_t>(), 1);
    // Column-major flat index over the reduced axes: (1,0) is 1, (0,1) is 2.
    Tensor m = Tensor::from_data<double>({2, 2}, {0, 5, 5, 0});
    EXPECT_EQ(argmax(s, m).item<std::int64_t>(), 1);
    // The same logical tensor through a transposed layout: still index 1.
    Tensor mt = Tensor::from_data<double>({2, 2}, {0, 5, 5, 0}).transpose_view();  // symmetric
    EXPECT_EQ(argmax(s, mt).item<std::int64_t>(), 1);
    // Axes {0, 2} of [2, 3, 2]: index = i0 + 2 * i2.
    Tensor z = Tensor::zeros({2, 3, 2}, DType::f64);
    z.set<double>({1, 2, 1}, 9.0);
    Tensor r = argmax(s, z, {0, 2});
    EXPECT_EQ(r.shape(), Shape({3}));
    EXPECT_EQ(r.item<std::int64_t>({2}), 3);
    EXPECT_EQ(r.item<std::int64_t>({0}), 0);
    // NaN in a non-first line of a larger reduction wins over bigger numbers.
    Tensor big = Tensor::zeros({40, 30}, DType::f32);
    big.set<float>({5, 20}, 100.0f);
    big.set<float>({7, 25}, std::numeric_limits<float>::quiet_NaN());
    big.set<float>({3, 29}, std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(argmax(s, big).item<std::int64_t>(), 7 + 40 * 25);
    // Transposed, (3, 29) becomes (29, 3): index 29 + 30 * 3 comes before 25 + 30 * 7.
    EXPECT_EQ(argmax(s, big.transpose_view()).item<std::int64_t>(), 29 + 30 * 3);
    // Row-wise over a column-major matrix (the tiled path): NaN wins, ties go first.
    Tensor rows = argmax(s, big, {1});
    EXPECT_EQ(rows.item<std::int64_t>({7}), 25);
    EXPECT_EQ(rows.item<std::int64_t>({3}), 29);
    EXPECT_EQ(rows.item<std::int64_t>({5}), 20);
    EXPECT_EQ(rows.item<std::int64_t>({0}), 0);
    Tensor rmin = argmin(s, big, {1});
    EXPECT_EQ(rmin.item<std::int64_t>({7}), 25);
    EXPECT_EQ(rmin.item<std::int64_t>({5}), 0);
    // Reduced axes visited against column-major order (transposed 3-D, axes {0, 1}),
    // with NaNs and ties: checked against the reference.
    Tensor c = Tensor::zeros({16, 4, 3}, DType::f64);
    c.set<double>({2, 3, 1}, kNaN);
    c.set<double>({2, 0, 2}, kNaN);
    c.set<double>({5, 1, 0}, 4.0);
    c.set<double>({5, 2, 2}, 4.0);
    c.set<double>({9, 3, 0}, -4.0);
    c.set<double>({9, 0, 2}, -4.0);
    Tensor xt = c.permute_view({2, 1, 0});  // [3, 4, 16], axis 2 contiguous
    for (Op op : {Op::argmax, Op::argmin, Op::max, Op::min}) {
      SCOPED_TRACE(op_name(op));
      check(call(s, op, xt, Dims{0, 1}, false), result_dtype(op, DType::f64), reference(op, xt, 3, false), 0);
    }
  });
}

TEST(ReduceSemantics, EmptyAndIdentity) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    Tensor e = Tensor::zeros({3, 0}, DType::f64);
    Tensor se = sum(s, e, {1});
    EXPECT_EQ(se.shape(), Shape({3}));
    EXPECT_EQ(se.item<double>({2}), 0.0);
    EXPECT_FALSE(std::signbit(se.item<double>({2})));
    EXPECT_EQ(prod(s, e, {1}).item<double>({0}), 1.0);
    EXPECT_TRUE(std::isnan(mean(s, e).item<double>()));
    EXPECT_EQ(sum_squares(s, e).item<double>(), 0.0);
    EXPECT_EQ(sum(s, e, {0}).shape(), Shape({0}));  // no outputs, nothing to reduce
    EXPECT_EQ(max(s, e, {0}).shape(), Shape({0}));  // the empty axis is kept: fine
    EXPECT_THROW(max(s, e, {1}), ShapeError);
    EXPECT_THROW(argmin(s, e), ShapeError);
    EXPECT_THROW(max(s, Tensor::zeros({0, 0}, DType::f64), {0}), ShapeError);
    // A reduction over no axes returns x exactly, -0.0 included.
    Tensor z = Tensor::from_data<double>({2}, {-0.0, 1.5});
    EXPECT_TRUE(std::signbit(sum(s, z, {}).item<double>({0})));
    EXPECT_TRUE(std::signbit(sum(s, Tensor::from_data<double>({1}, {-0.0})).item<double>()));
    // Rank 0.
    Tensor r0 = Tensor::scalar(2.5);
    EXPECT_EQ(sum(s, r0).item<double>(), 2.5);
    EXPECT_EQ(argmax(s, r0).item<std::int64_t>(), 0);
    EXPECT_EQ(mean(s, r0, {}, true).rank(), 0);
  });
}

TEST(ReduceSemantics, LongF32SumIsAccurate) {
  CpuBackend backend;
  backend.with_session([](Session& s) {
    const std::vector<float> data(1 << 20, 0.1f);
    Tensor x = Tensor::from_data<float>(Shape{1 << 20}.span(), std::span<const float>(data));
    const double got = sum(s, x).item<float>();
    const double want = double(1 << 20) * double(0.1f);
    EXPECT_NEAR(got, want, want * 1e-6);  // pairwise: O(log n) ulps
    const double m = mean(s, x.reshape_view({1024, 1024}), {1}).item<float>({17});
    EXPECT_NEAR(m, double(0.1f), 1e-6);
  });
}

// ---------------------------------------------------------------- strided outputs

TEST(ReduceInto, StridedOutputViewOnlyTouchesItsElements) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(5);
  for (Op op : kOps) {
    for (Layout layout : {Layout::transposed, Layout::negative_stride}) {
      Tensor x = random_layout(rng, {3, 4, 5}, DType::f64, layout);
      const DType odt = result_dtype(op, DType::f64);
      for (bool keep : {false, true}) {
        SCOPED_TRACE(op_name(op) + " " + layout_name(layout) + (keep ? " keepdims" : ""));
        // big [5, 8] viewed as [8, 5], rows 6, 4, 2: a [3, 5] view with strides (-10, 1).
        Tensor big = Tensor::full({5, 8}, 7, odt);
        Tensor view = big.transpose_view().slice_view(0, 6, 0, -2);
        if (keep) view = view.as_strided_view(Dims{3, 1, 5}, Dims{-10, 99, 1}, view.offset());
        std::set<std::int64_t> in_view;
        for_each_index(view.shape(), [&](const Dims& idx) {
          std::int64_t off = view.offset();
          for (int i = 0; i < view.rank(); ++i) off += idx[i] * view.stride(i);
          in_view.insert(off);
        });
        const std::int64_t ax[] = {1};
        call_into(s, op, x, ax, view, keep);
        const Ref ref = reference(op, x, 2, keep);
        check(view, odt, ref, tolerance(op, odt, 4));
        for_each_index(big.shape(), [&](const Dims& idx) {
          if (!in_view.count(idx[0] + 5 * idx[1])) {
            EXPECT_EQ(value_at(big, idx), cd(7)) << idx.to_string();
          }
        });
      }
    }
  }
}

// ---------------------------------------------------------------- errors

TEST(ReduceErrors, EveryBadInputLeavesOutputUntouched) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(9);
  Tensor x = random_tensor(rng, {3, 4, 5}, DType::f64);
  Tensor out = Tensor::full({3, 5}, 1.0, DType::f64);
  const auto snap = snapshot(out);
  const std::int64_t ax1[] = {1}, ax_bad[] = {3}, ax_neg_bad[] = {-4}, ax_dup[] = {1, 1}, ax_dup_neg[] = {1, -2};
  for (Op op : kOps) {
    const std::string name = op_name(op);
    SCOPED_TRACE(name);
    Tensor o = Tensor::full({3, 5}, 1, result_dtype(op, DType::f64));
    const auto osnap = snapshot(o);
    expect_error<ArgumentError>([&] { call_into(s, op, Tensor(), ax1, o, false); }, name);
    expect_error<ArgumentError>([&] { call(s, op, Tensor(), std::nullopt, false); }, name);
    expect_error<ArgumentError>([&] { call_into(s, op, x, ax1, Tensor(), false); }, name);
    expect_error<AxisError>([&] { call_into(s, op, x, ax_bad, o, false); }, name);
    expect_error<AxisError>([&] { call_into(s, op, x, ax_neg_bad, o, false); }, name);
    expect_error<AxisError>([&] { call_into(s, op, x, ax_dup, o, false); }, name);
    expect_error<AxisError>([&] { call_into(s, op, x, ax_dup_neg, o, false); }, name);
    expect_error<AxisError>([&] { call(s, op, x, Dims{0, 0}, false); }, name);
    // Wrong output shape, including a keepdims mismatch either way.
    Tensor o34 = Tensor::full({3, 4}, 1, result_dtype(op, DType::f64));
    const auto o34snap = snapshot(o34);
    expect_error<ShapeError>([&] { call_into(s, op, x, ax1, o34, false); }, name);
    expect_error<ShapeError>([&] { call_into(s, op, x, ax1, o, true); }, name);
    Tensor o315 = Tensor::full({3, 1, 5}, 1, result_dtype(op, DType::f64));
    expect_error<ShapeError>([&] { call_into(s, op, x, ax1, o315, false); }, name);
    // Wrong output dtype.
    Tensor of32 = Tensor::full({3, 5}, 1, is_arg(op) ? DType::f64 : DType::f32);
    expect_error<DTypeError>([&] { call_into(s, op, x, ax1, of32, false); }, name);
    // Read-only (broadcast) output.
    Tensor base = Tensor::full({3, 1}, 1, result_dtype(op, DType::f64));
    const auto bsnap = snapshot(base);
    expect_error<ArgumentError>([&] { call_into(s, op, x, ax1, base.broadcast_view({3, 5}), false); }, name);
    expect_untouched(base, bsnap);
    // An output whose elements overlap each other.
    Tensor self = Tensor::full({8}, 1, result_dtype(op, DType::f64));
    const auto ssnap = snapshot(self);
    expect_error<ArgumentError>([&] { call_into(s, op, x, ax1, self.as_strided_view(Dims{3, 5}, Dims{1, 1}, 0), false); }, name);
    expect_untouched(self, ssnap);
    expect_untouched(o, osnap);
    expect_untouched(o34, o34snap);
  }
  // The output overlapping the input (a slice of x's own storage), and x itself.
  for (Op op : {Op::sum, Op::max, Op::mean}) {
    Tensor xs = random_tensor(rng, {3, 4, 5}, DType::f64);
    const auto xsnap = snapshot(xs);
    expect_error<ArgumentError>([&] { call_into(s, op, xs, ax1, xs.slice_view(1, 0, 1), true); }, op_name(op));
    expect_error<ArgumentError>([&] { call_into(s, op, xs, std::span<const std::int64_t>{}, xs, false); }, op_name(op));
    expect_untouched(xs, xsnap);
  }
  // Unsupported dtypes.
  for (DType cdt : {DType::c64, DType::c128}) {
    Tensor xc = random_tensor(rng, {3, 4}, cdt);
    for (Op op : {Op::max, Op::min, Op::argmax, Op::argmin}) {
      Tensor oc = Tensor::full({3}, 1, result_dtype(op, DType::f64));
      const auto csnap = snapshot(oc);
      expect_error<DTypeError>([&] { call_into(s, op, xc, ax1, oc, false); }, op_name(op));
      expect_error<DTypeError>([&] { call(s, op, xc, std::nullopt, false); }, op_name(op));
      expect_untouched(oc, csnap);
    }
  }
  Tensor xb = Tensor::from_data<bool>({2}, {true, false});
  expect_error<DTypeError>([&] { sum_squares(s, xb); }, "sum_squares");
  // Empty max/min/argmax/argmin.
  Tensor e = Tensor::zeros({3, 0}, DType::f64);
  for (Op op : {Op::max, Op::min, Op::argmax, Op::argmin}) {
    Tensor oe = Tensor::full({3}, 1, result_dtype(op, DType::f64));
    const auto esnap = snapshot(oe);
    expect_error<ShapeError>([&] { call_into(s, op, e, ax1, oe, false); }, op_name(op));
    expect_error<ShapeError>([&] { call(s, op, e, std::nullopt, false); }, op_name(op));
    expect_untouched(oe, esnap);
  }
  expect_untouched(out, snap);
}

TEST(ReduceErrors, ClosedSessionIsRefused) {
  CpuBackend backend;
  auto s = backend.open_session();
  s.close();
  Tensor x = Tensor::ones({3}, DType::f64);
  Tensor out = Tensor::zeros({}, DType::f64);
  EXPECT_THROW(sum(s, x), SessionEntryError);
  EXPECT_THROW(sum_into(s, x, std::span<const std::int64_t>{}, out), SessionEntryError);
}

// ---------------------------------------------------------------- parallel determinism

TEST(ReduceParallel, ResultsDoNotDependOnThreadCount) {
  CpuBackend one(CpuBackendOptions{.num_threads = 1, .cpus = {}});
  CpuBackend two(CpuBackendOptions{.num_threads = 2, .cpus = {}});
  std::mt19937_64 rng(21);
  const Tensor v = random_tensor(rng, {3'000'000}, DType::f64);
  const Tensor vf = random_tensor(rng, {3'000'000}, DType::f32);
  const Tensor m = random_tensor(rng, {2000, 1500}, DType::f64);
  const Tensor mc = random_tensor(rng, {1000, 700}, DType::c128);
  const Tensor mi = random_tensor(rng, {3000, 1000}, DType::i32, -1000, 1000);
  using Fn = std::function<Tensor(Session&)>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"sum v", [&](Session& s) { return sum(s, v); }},
      {"sum vf", [&](Session& s) { return sum(s, vf); }},
      {"mean v", [&](Session& s) { return mean(s, v); }},
      {"sum_squares v", [&](Session& s) { return sum_squares(s, v); }},
      {"max v", [&](Session& s) { return max(s, v); }},
      {"argmax v", [&](Session& s) { return argmax(s, v); }},
      {"argmin v^T", [&](Session& s) { return argmin(s, m.transpose_view()); }},
      {"sum m rows", [&](Session& s) { return sum(s, m, {1}); }},
      // Note [Pairwise vector accumulation]: 8 outputs, tiles of one output row split
      // over threads by kept position; a wide inner axis split in 64 KiB tiles.
      {"sum vf as [8, 375000] rows", [&](Session& s) { return sum(s, vf.reshape_view({8, 375000}), {1}); }},
      {"sum_squares vf as [30000, 100] rows", [&](Session& s) { return sum_squares(s, vf.reshape_view({30000, 100}), {1}); }},
      {"sum m cols", [&](Session& s) { return sum(s, m, {0}); }},
      {"sum m^T rows", [&](Session& s) { return sum(s, m.transpose_view(), {1}); }},
      {"mean m rows", [&](Session& s) { return mean(s, m, {1}); }},
      {"max m rows", [&](Session& s) { return max(s, m, {1}); }},
      {"argmax m rows", [&](Session& s) { return argmax(s, m, {1}); }},
      {"argmin m cols", [&](Session& s) { return argmin(s, m, {0}); }},
      {"sum mc rows", [&](Session& s) { return sum(s, mc, {1}); }},
      {"prod mc cols", [&](Session& s) { return prod(s, mc, {0}); }},
      {"sum mi all", [&](Session& s) { return sum(s, mi); }},
      {"mean mi rows", [&](Session& s) { return mean(s, mi, {1}); }},
      {"logsumexp v", [&](Session& s) { return logsumexp(s, v); }},
      {"logsumexp m rows", [&](Session& s) { return logsumexp(s, m, {1}); }},
      {"logsumexp m^T cols", [&](Session& s) { return logsumexp(s, m.transpose_view(), {0}); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    const Tensor a = one.with_session(f);
    const Tensor b = two.with_session(f);
    EXPECT_EQ(bytes_of(a), bytes_of(b));
  }
  EXPECT_EQ(one.state().workers.load(), nullptr);  // never forked
  EXPECT_NE(two.state().workers.load(), nullptr);  // the large cases did
  // And the values are right.
  long double want = 0;
  for (std::int64_t i = 0; i < v.numel(); ++i) want += v.item<double>({i});
  const double got = one.with_session([&](Session& s) { return sum(s, v).item<double>(); });
  EXPECT_NEAR(got, double(want), 1e-9 * 3e6);
  const Tensor rows = two.with_session([&](Session& s) { return sum(s, m, {1}); });
  for (std::int64_t i : {0, 777, 1999}) {
    double w = 0;
    for (std::int64_t j = 0; j < 1500; ++j) w += m.item<double>({i, j});
    EXPECT_NEAR(rows.item<double>({i}), w, 1e-10 * 1500);
  }
}

// ---------------------------------------------------------------- allocation

TEST(ReduceAlloc, IntoFormsDoNotHeapAllocateInHeldSession) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(3);
  Tensor x = random_tensor(rng, {16, 8, 4}, DType::f64);
  Tensor xt = random_layout(rng, {16, 8, 4}, DType::f64, Layout::transposed);
  Tensor xi = random_tensor(rng, {16, 8, 4}, DType::i32);
  Tensor out = Tensor::empty({16, 4}, DType::f64);
  Tensor outi = Tensor::empty({16, 4}, DType::i64);
  Tensor out32 = Tensor::empty({16, 4}, DType::i32);
  Tensor out0 = Tensor::empty({}, DType::f64);
  Tensor outi0 = outi.slice_view(0, 0, 1).slice_view(1, 0, 1).reshape_view({});
  const std::int64_t ax[] = {1}, all[] = {0, 1, 2};
  auto run = [&] {
    sum_into(s, x, ax, out);
    sum_into(s, xt, ax, out);
    prod_into(s, x, ax, out);
    max_into(s, xt, ax, out);
    min_into(s, x, ax, out);
    mean_into(s, x, ax, out);
    sum_squares_into(s, xt, ax, out);
    logsumexp_into(s, xt, ax, out);
    argmax_into(s, x, ax, outi);
    argmin_into(s, xt, ax, outi);
    sum_into(s, xi, ax, out32);
    sum_into(s, x, all, out0);
    argmax_into(s, xt, all, outi0);
    (void)sum(s, x);  // allocating: the result block comes from the session's pool
  };
  run();  // warm the pool
  const auto misses = s.pool_stats().misses;
  EXPECT_NO_ALLOCATION(run());  // runs once more to warm up, then counts a run
  EXPECT_EQ(s.pool_stats().misses, misses);
}

// ---------------------------------------------------------------- logsumexp

/// logsumexp of one float vector (dtype d) as a double.
double lse_of(Session& s, DType d, std::initializer_list<double> v) {
  Tensor x = Tensor::empty({static_cast<std::int64_t>(v.size())}, d);
  std::int64_t i = 0;
  for (double e : v) {
    if (d == DType::f32) x.set<float>({i++}, static_cast<float>(e));
    else x.set<double>({i++}, e);
  }
  return value_at(logsumexp(s, x), {}).real();
}

// The max shift keeps huge and tiny arguments finite and exact; -inf, +inf and NaN
// follow the documented rules.
TEST(ReduceSemantics, LogSumExpIsStableAndHandlesInfAndNaN) {
  CpuBackend backend;
  auto s = backend.open_session();
  const double inf = std::numeric_limits<double>::infinity(), ln2 = std::log(2.0);
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const double tol = 4 * epsilon_of(d);
    const double big = d == DType::f32 ? 80 : 1000;  // e^big overflows the dtype
    EXPECT_NEAR(lse_of(s, d, {big, big}), big + ln2, tol * big);
    EXPECT_NEAR(lse_of(s, d, {-big, -big}), -big + ln2, tol * big);
    EXPECT_NEAR(lse_of(s, d, {big, 0}), big, tol * big);
    EXPECT_NEAR(lse_of(s, d, {0, 0, 0, 0}), 2 * ln2, tol);
    EXPECT_EQ(lse_of(s, d, {-inf, -inf, -inf}), -inf);
    EXPECT_NEAR(lse_of(s, d, {-inf, 0, -inf}), 0, tol);
    EXPECT_EQ(lse_of(s, d, {1, inf, 2}), inf);
    EXPECT_EQ(lse_of(s, d, {-inf, inf}), inf);
    EXPECT_TRUE(std::isnan(lse_of(s, d, {1, kNaN, 2})));
    EXPECT_TRUE(std::isnan(lse_of(s, d, {inf, kNaN})));
    EXPECT_TRUE(std::isnan(lse_of(s, d, {kNaN, -inf})));
    EXPECT_EQ(value_at(logsumexp(s, Tensor::zeros({0}, d)), {}).real(), -inf);
  }
  // Per slice, along a strided axis: each slice decides for itself.
  Tensor x = Tensor::from_data<double>({2, 3}, {-inf, -inf, 5, 1000, kNaN, inf});
  const Tensor y = logsumexp(s, x.transpose_view(), {1});  // slices (-inf, -inf), (5, 1000), (NaN, inf)
  EXPECT_EQ(y.item<double>({0}), -inf);
  EXPECT_NEAR(y.item<double>({1}), 1000, 1e-12);
  EXPECT_TRUE(std::isnan(y.item<double>({2})));
  // A long line: against a long double reference, O(log n) error (pairwise lanes).
  std::mt19937_64 rng(4);
  const Tensor v = random_tensor(rng, {100000}, DType::f32, -20, 20);
  long double m = -inf, acc = 0;
  for (std::int64_t i = 0; i < v.numel(); ++i) m = std::max<long double>(m, v.item<float>({i}));
  for (std::int64_t i = 0; i < v.numel(); ++i) acc += std::exp(static_cast<long double>(v.item<float>({i})) - m);
  EXPECT_NEAR(value_at(logsumexp(s, v), {}).real(), static_cast<double>(m + std::log(acc)), 1e-5);
}

TEST(ReduceErrors, LogSumExpTakesFloatDTypesOnly) {
  CpuBackend backend;
  auto s = backend.open_session();
  std::mt19937_64 rng(12);
  const std::int64_t ax[] = {0};
  for (DType d : {DType::b8, DType::i32, DType::i64, DType::c64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor x = random_tensor(rng, {3, 2}, d);
    expect_error<DTypeError>([&] { logsumexp(s, x); }, "logsumexp");
    for (DType od : {d, DType::f64}) {
      Tensor o = random_tensor(rng, {2}, od);
      const auto snap = snapshot(o);
      expect_error<DTypeError>([&] { logsumexp_into(s, x, ax, o); }, "logsumexp");
      expect_untouched(o, snap);
    }
  }
}

}  // namespace
}  // namespace tenferro::testing
