// Ops along one axis (cumsum cumprod softmax log_softmax) against a plain reference loop:
// every op x dtype of its set x layout x shape x axis (negative axes too), allocating
// and `_into` forms (strided outputs, the input itself as output); integer wrapping;
// softmax stability and NaN rules; every validation error with the output untouched;
// results independent of the thread count.
#include <cstring>
#include <limits>

#include "support/alloc_counter.hpp"
#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::testing {
namespace {

using cd = std::complex<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Op { cumsum, cumprod, softmax, log_softmax };
const Op kOps[] = {Op::cumsum, Op::cumprod, Op::softmax, Op::log_softmax};

std::string op_name(Op op) {
  const char* names[] = {"cumsum", "cumprod", "softmax", "log_softmax"};
  return names[static_cast<int>(op)];
}
bool accepts(Op op, DType d) { return op == Op::cumsum || op == Op::cumprod ? !is_bool(d) : is_floating(d); }

Tensor call(Session& s, Op op, const Tensor& x, std::int64_t axis) {
  switch (op) {
    case Op::cumsum: return cumsum(s, x, axis);
    case Op::cumprod: return cumprod(s, x, axis);
    case Op::softmax: return softmax(s, x, axis);
    case Op::log_softmax: return log_softmax(s, x, axis);
  }
  return {};
}
void call_into(Session& s, Op op, const Tensor& x, std::int64_t axis, const Tensor& out) {
  switch (op) {
    case Op::cumsum: return cumsum_into(s, x, axis, out);
    case Op::cumprod: return cumprod_into(s, x, axis, out);
    case Op::softmax: return softmax_into(s, x, axis, out);
    case Op::log_softmax: return log_softmax_into(s, x, axis, out);
  }
}

/// Wrapped integer in the width of `d`, as a double.
double wrap_to(DType d, std::uint64_t u) {
  return d == DType::i32 ? static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(u)))
                         : static_cast<double>(static_cast<std::int64_t>(u));
}

/// The plain reference: for every slice along `axis` (normalized), the op in long
/// double / complex<long double> (integers: in u64, wrapped to the width at the end).
std::vector<cd> reference(Op op, const Tensor& x, int axis) {
  const Shape& shape = x.shape();
  std::vector<cd> r(static_cast<std::size_t>(x.numel()));
  auto linear = [&](const Dims& idx) {
    std::int64_t o = 0, st = 1;
    for (int i = 0; i < shape.size(); ++i) o += idx[i] * st, st *= shape[i];
    return o;
  };
  const std::int64_t len = shape[axis];
  Shape outer = shape;
  outer[axis] = 1;
  for_each_index(outer, [&](const Dims& base) {
    Dims idx = base;
    if (is_integer(x.dtype())) {
      std::uint64_t acc = op == Op::cumsum ? 0 : 1;
      for (std::int64_t k = 0; k < len; ++k) {
        idx[axis] = k;
        const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(value_at(x, idx).real()));
        acc = op == Op::cumsum ? acc + u : acc * u;
        r[linear(idx)] = wrap_to(x.dtype(), acc);
      }
      return;
    }
    if (op == Op::cumsum || op == Op::cumprod) {
      std::complex<long double> acc = op == Op::cumsum ? 0 : 1;
      for (std::int64_t k = 0; k < len; ++k) {
        idx[axis] = k;
        const cd v = value_at(x, idx);
        const std::complex<long double> vl(v.real(), v.imag());
        acc = op == Op::cumsum ? acc + vl : acc * vl;
        r[linear(idx)] = cd(static_cast<double>(acc.real()), static_cast<double>(acc.imag()));
      }
      return;
    }
    long double m = -kInf, sum = 0;
    for (std::int64_t k = 0; k < len; ++k) idx[axis] = k, m = std::max<long double>(m, value_at(x, idx).real());
    for (std::int64_t k = 0; k < len; ++k) idx[axis] = k, sum += std::exp(value_at(x, idx).real() - m);
    for (std::int64_t k = 0; k < len; ++k) {
      idx[axis] = k;
      const long double v = value_at(x, idx).real();
      r[linear(idx)] = static_cast<double>(op == Op::softmax ? std::exp(v - m) / sum : (v - m) - std::log(sum));
    }
  });
  return r;
}

/// Compares y with the reference; false (after one failure message) on mismatch.
bool check(const Tensor& y, const std::vector<cd>& want, double tol) {
  std::int64_t k = 0;
  bool ok = true;
  for_each_index(y.shape(), [&](const Dims& idx) {
    const cd got = value_at(y, idx), w = want[static_cast<std::size_t>(k++)];
    const bool good = is_complex(y.dtype()) ? std::abs(got - w) <= tol * (1 + std::abs(w)) : close(got, w, tol);
    if (ok && !good) {
      ADD_FAILURE() << "at " << idx.to_string() << ": got " << got << ", want " << w << " (tol " << tol << ")";
      ok = false;
    }
  });
  return ok;
}

/// Elementwise identical values (NaN == NaN).
bool same_values(const Tensor& a, const Tensor& b) {
  bool ok = a.shape() == b.shape();
  if (ok)
    for_each_index(a.shape(), [&](const Dims& idx) { ok = ok && close(value_at(a, idx), value_at(b, idx), 0); });
  return ok;
}

TEST(AxisOpsTable, EveryOpDTypeLayoutShapeAndAxisMatchesReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(77);
  // [300, 3] along axis 1: a line of 300 slices, more than one tile of the across order.
  const Shape shapes[] = {{7}, {3, 4}, {2, 3, 4}, {0, 3}, {4, 0}, {1, 5}, {300, 3}, {2, 1, 3, 2}};
  int cases = 0;
  for (Op op : kOps) {
    for (DType d : kAllDTypes) {
      if (!accepts(op, d)) continue;
      // Products stay moderate with factors near 1 (ints: small, wrapping is tested below).
      const bool prod = op == Op::cumprod;
      const double lo = !prod ? -3 : is_integer(d) ? -3 : is_complex(d) ? -0.8 : 0.8, hi = !prod ? 3 : is_complex(d) ? 0.8 : 1.2;
      for (const Shape& shape : shapes) {
        const int r = shape.size();
        for (Layout layout : kAllLayouts) {
          const Tensor x = random_layout(rng, shape, d, layout, lo, hi);
          for (int axis = -r; axis < r; ++axis) {
            const int a = axis < 0 ? axis + r : axis;
            SCOPED_TRACE(op_name(op) + " " + std::string(dtype_name(d)) + " " + shape.to_string() + " " + layout_name(layout) +
                         " axis " + std::to_string(axis));
            ++cases;
            const std::vector<cd> want = reference(op, x, a);
            const double tol = 8.0 * static_cast<double>(std::max<std::int64_t>(shape[a], 1)) * epsilon_of(d);
            const Tensor y = call(s, op, x, axis);
            ASSERT_EQ(y.dtype(), d);
            ASSERT_EQ(y.shape(), shape);
            EXPECT_TRUE(y.is_contiguous());
            if (!check(y, want, tol)) return;
            // _into a strided view: the same values, bit for bit (same arithmetic order).
            const Tensor out = out_view(rng, shape, d, cases);
            call_into(s, op, x, axis, out);
            EXPECT_TRUE(same_values(out, y)) << op_name(op) << "_into differs";
            // The input itself as the output (x compact or transposed: writable).
            if (layout != Layout::broadcast) {
              const Tensor c = Tensor::empty(shape.span(), d);
              copy_into(s, x, c);
              const Tensor self = with_layout(c, layout);
              call_into(s, op, self, axis, self);
              EXPECT_TRUE(same_values(self, y)) << op_name(op) << " in place differs";
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 1000);
  std::printf("%d cases\n", cases);
}

// ---------------------------------------------------------------- semantics

TEST(AxisOpsSemantics, IntegersWrapLikeAddAndMul) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  const Tensor a = Tensor::from_data<std::int32_t>({3}, {big, 1, 1});
  const Tensor ca = cumsum(s, a, 0);
  EXPECT_EQ(ca.item<std::int32_t>({1}), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(ca.item<std::int32_t>({2}), std::numeric_limits<std::int32_t>::min() + 1);
  const Tensor p = Tensor::from_data<std::int32_t>({3}, {65536, 65536, 7});
  const Tensor cp = cumprod(s, p, -1);
  EXPECT_EQ(cp.item<std::int32_t>({1}), 0);  // 2^32 wraps to 0
  const Tensor q = Tensor::from_data<std::int64_t>({2}, {std::int64_t{1} << 62, 4});
  EXPECT_EQ(cumprod(s, q, 0).item<std::int64_t>({1}), 0);
}

TEST(AxisOpsSemantics, CumprodWithZerosAndCumsumOfSpecialValues) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Tensor x = Tensor::from_data<double>({5}, {2, 0, 3, kInf, kNaN});
  const Tensor p = cumprod(s, x, 0);
  EXPECT_EQ(p.item<double>({0}), 2);
  EXPECT_EQ(p.item<double>({1}), 0);
  EXPECT_EQ(p.item<double>({2}), 0);
  EXPECT_TRUE(std::isnan(p.item<double>({3})));  // 0 * inf
  const Tensor c = cumsum(s, x, 0);
  EXPECT_EQ(c.item<double>({3}), kInf);
  EXPECT_TRUE(std::isnan(c.item<double>({4})));
}

TEST(AxisOpsSemantics, SoftmaxIsStableAndSumsToOne) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const double tol = 8 * epsilon_of(d);
    // e^1000 overflows either dtype; the shift by the maximum keeps it exact.
    const Tensor x = Tensor::full({2, 3}, 1000.0, d);
    const Tensor y = softmax(s, x, 1);
    const Tensor ly = log_softmax(s, x, 1);
    for_each_index(y.shape(), [&](const Dims& i) {
      EXPECT_NEAR(value_at(y, i).real(), 1.0 / 3, tol);
      EXPECT_NEAR(value_at(ly, i).real(), -std::log(3.0), tol);
    });
    // log_softmax of a tiny probability stays finite (log(softmax) would give -inf).
    Tensor z = Tensor::zeros({2}, d);
    if (d == DType::f32) z.set<float>({0}, -1000.0f);
    else z.set<double>({0}, -1000.0);
    const Tensor lz = log_softmax(s, z, 0);
    EXPECT_NEAR(value_at(lz, {0}).real(), -1000, 1000 * tol);
    EXPECT_NEAR(value_at(lz, {1}).real(), 0, tol);
    EXPECT_EQ(value_at(softmax(s, z, 0), {0}).real(), 0);
    // Random slices sum to one, values in [0, 1].
    std::mt19937_64 rng(3);
    const Tensor r = random_layout(rng, {5, 40}, d, Layout::transposed, -50, 50);
    const Tensor sr = softmax(s, r, -1);
    const Tensor tot = sum(s, sr, {1});
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_NEAR(value_at(tot, {i}).real(), 1, 40 * tol);
    EXPECT_GE(value_at(min(s, sr), {}).real(), 0);
    EXPECT_LE(value_at(max(s, sr), {}).real(), 1);
  }
  // NaN cases (documented): a NaN, an all -inf slice, a +inf element.
  const Tensor x = Tensor::from_data<double>({2, 3}, {1, kNaN, -kInf, -kInf, kInf, 0});
  // Slices (1, NaN), (-inf, -inf), (inf, 0): each is NaN throughout; a finite slice
  // next to them is unaffected.
  for (Op op : {Op::softmax, Op::log_softmax}) {
    SCOPED_TRACE(op_name(op));
    const Tensor t = call(s, op, x, 0);
    for_each_index(t.shape(), [&](const Dims& i) { EXPECT_TRUE(std::isnan(t.item<double>(i.span()))) << i.to_string(); });
    const Tensor x2 = Tensor::from_data<double>({2, 2}, {kNaN, 1, 0, 0});
    const Tensor t2 = call(s, op, x2, 0);
    EXPECT_TRUE(std::isnan(t2.item<double>({1, 0})));
    EXPECT_NEAR(t2.item<double>({0, 1}), op == Op::softmax ? 0.5 : -std::log(2.0), 1e-15);
  }
}

// ---------------------------------------------------------------- errors

TEST(AxisOpsErrors, EveryBadInputLeavesOutputUntouched) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(9);
  const Tensor x = random_tensor(rng, {3, 4}, DType::f64);
  for (Op op : kOps) {
    const std::string name = op_name(op);
    SCOPED_TRACE(name);
    Tensor o = Tensor::full({3, 4}, 7.0, DType::f64);
    const auto snap = snapshot(o);
    expect_error<ArgumentError>([&] { call(s, op, Tensor(), 0); }, name);
    expect_error<ArgumentError>([&] { call_into(s, op, Tensor(), 0, o); }, name);
    expect_error<ArgumentError>([&] { call_into(s, op, x, 0, Tensor()); }, name);
    for (std::int64_t bad : {2, -3, 100}) {
      expect_error<AxisError>([&] { call(s, op, x, bad); }, name);
      expect_error<AxisError>([&] { call_into(s, op, x, bad, o); }, name);
    }
    expect_error<AxisError>([&] { call(s, op, Tensor::full({}, 1.0, DType::f64), 0); }, name);
    // Wrong output shape and dtype.
    Tensor o43 = Tensor::full({4, 3}, 7.0, DType::f64), of32 = Tensor::full({3, 4}, 7.0, DType::f32);
    const auto s43 = snapshot(o43), s32 = snapshot(of32);
    expect_error<ShapeError>([&] { call_into(s, op, x, 0, o43); }, name);
    expect_error<DTypeError>([&] { call_into(s, op, x, 0, of32); }, name);
    // Read-only (broadcast) output; an output whose elements overlap each other.
    Tensor base = Tensor::full({3, 1}, 7.0, DType::f64);
    const auto sb = snapshot(base);
    expect_error<ArgumentError>([&] { call_into(s, op, x, 0, base.broadcast_view({3, 4})); }, name);
    Tensor self = Tensor::full({8}, 7.0, DType::f64);
    const auto ss = snapshot(self);
    expect_error<ArgumentError>([&] { call_into(s, op, x, 0, self.as_strided_view(Dims{3, 4}, Dims{1, 1}, 0)); }, name);
    // An output partially overlapping x (x shifted by one element).
    Tensor buf = random_tensor(rng, {13}, DType::f64);
    const auto sbuf = snapshot(buf);
    const Tensor xv = buf.as_strided_view(Dims{3, 4}, Dims{1, 3}, 0), ov = buf.as_strided_view(Dims{3, 4}, Dims{1, 3}, 1);
    expect_error<ArgumentError>([&] { call_into(s, op, xv, 1, ov); }, name);
    expect_untouched(o, snap);
    expect_untouched(o43, s43);
    expect_untouched(of32, s32);
    expect_untouched(base, sb);
    expect_untouched(self, ss);
    expect_untouched(buf, sbuf);
  }
  // Dtypes outside each op's set.
  for (Op op : kOps) {
    for (DType d : kAllDTypes) {
      if (accepts(op, d)) continue;
      SCOPED_TRACE(op_name(op) + " of " + std::string(dtype_name(d)));
      const Tensor xd = random_tensor(rng, {2, 3}, d);
      expect_error<DTypeError>([&] { call(s, op, xd, 0); }, op_name(op));
      for (DType od : {d, DType::f64}) {
        const Tensor out = random_tensor(rng, {2, 3}, od);
        const auto before = snapshot(out);
        expect_error<DTypeError>([&] { call_into(s, op, xd, 0, out); }, op_name(op));
        expect_untouched(out, before);
      }
    }
  }
}

TEST(AxisOpsErrors, ClosedSessionIsRefused) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  s.close();
  const Tensor x = Tensor::ones({3}, DType::f64);
  Tensor out = Tensor::zeros({3}, DType::f64);
  for (Op op : kOps) {
    EXPECT_THROW(call(s, op, x, 0), SessionEntryError);
    EXPECT_THROW(call_into(s, op, x, 0, out), SessionEntryError);
  }
}

// ---------------------------------------------------------------- parallel path

TEST(AxisOpsParallel, ResultsDoNotDependOnThreadCount) {
  CpuBackend one(CpuBackendOptions{.num_threads = 1, .cpus = {}});
  CpuBackend two(CpuBackendOptions{.num_threads = 2, .cpus = {}});
  std::mt19937_64 rng(21);
  const Tensor m = random_tensor(rng, {1500, 1000}, DType::f64);
  const Tensor mi = random_tensor(rng, {1000, 1000}, DType::i64, -5, 5);
  using Fn = std::function<Tensor(Session&)>;
  const std::vector<std::pair<std::string, Fn>> cases = {
      {"cumsum m 0", [&](Session& s) { return cumsum(s, m, 0); }},
      {"cumsum m 1", [&](Session& s) { return cumsum(s, m, 1); }},
      {"cumprod m^T 0", [&](Session& s) { return cumprod(s, m.transpose_view(), 0); }},
      {"cumsum mi 1", [&](Session& s) { return cumsum(s, mi, 1); }},
      {"softmax m 0", [&](Session& s) { return softmax(s, m, 0); }},
      {"softmax m 1", [&](Session& s) { return softmax(s, m, 1); }},
      {"log_softmax m^T 1", [&](Session& s) { return log_softmax(s, m.transpose_view(), 1); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    const Tensor a = one.with_session(f);
    const Tensor b = two.with_session(f);
    EXPECT_EQ(bytes_of(a), bytes_of(b));
  }
}

// ---------------------------------------------------------------- allocation

TEST(AxisOpsAlloc, IntoFormsDoNotHeapAllocateInHeldSession) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(3);
  const Tensor x = random_tensor(rng, {16, 8, 4}, DType::f64);
  const Tensor xt = random_layout(rng, {16, 8, 4}, DType::f64, Layout::transposed);
  const Tensor xi = random_tensor(rng, {16, 8, 4}, DType::i32);
  Tensor out = Tensor::empty({16, 8, 4}, DType::f64), outi = Tensor::empty({16, 8, 4}, DType::i32);
  auto run = [&] {
    cumsum_into(s, x, 1, out);
    cumprod_into(s, xt, -1, out);
    cumsum_into(s, xi, 0, outi);
    softmax_into(s, xt, 1, out);
    log_softmax_into(s, x, 0, out);
    (void)softmax(s, x, 2);  // allocating: the result block comes from the session's pool
  };
  run();  // warm the pool
  EXPECT_NO_ALLOCATION(run());
}

}  // namespace
}  // namespace tenferro::testing
