// The `_into` forms of every elementwise, analytic and conversion op, driven from one
// table: strided outputs (values right, storage outside the view untouched), in-place
// (out identical to an input), partial overlap, and every bad-input class with the exact
// error type, the op name leading the message, and the output untouched; session misuse
// (closed session, foreign thread).
#include <functional>
#include <limits>
#include <thread>

#include "support/expect_error.hpp"
#include "support/test_util.hpp"

namespace tenferro::ew_into_test {
namespace {

using testing::expect_error;
using testing::expect_session_error;
using testing::for_each_index;
using testing::kAllLayouts;
using testing::Layout;
using testing::layout_name;
using testing::random_layout;
using testing::random_tensor;
using testing::snapshot;

using Ins = std::vector<Tensor>;

enum class Kind { binary, compare, select, clamp, unary, convert, cast, copy };

/// One op of the table: input dtypes, output dtype, the `_into` call and the allocating
/// call it must agree with.
struct OpEntry {
  std::string name;  ///< the op name messages start with
  Kind kind;
  std::vector<DType> in;
  DType out;
  std::function<void(Session&, const Ins&, const Tensor&)> into;
  std::function<Tensor(Session&, const Ins&)> alloc;
  bool broadcasts() const { return in.size() > 1 || kind == Kind::copy; }
};

const DType F = DType::f64;

const std::vector<OpEntry>& ops() {
#define TF_BIN(op)                                                                                                   \
  OpEntry {                                                                                                          \
    #op, Kind::binary, {F, F}, F, [](Session& s, const Ins& i, const Tensor& o) { op##_into(s, i[0], i[1], o); },    \
        [](Session& s, const Ins& i) { return op(s, i[0], i[1]); }                                                   \
  }
#define TF_CMP(c)                                                                                                           \
  OpEntry {                                                                                                                 \
    "compare(" #c ")", Kind::compare, {F, F}, DType::b8,                                                                    \
        [](Session& s, const Ins& i, const Tensor& o) { compare_into(s, i[0], i[1], CompareOp::c, o); },                   \
        [](Session& s, const Ins& i) { return compare(s, i[0], i[1], CompareOp::c); }                                       \
  }
#define TF_UN(op)                                                                                                                  \
  OpEntry {                                                                                                                        \
    #op, Kind::unary, {F}, F, [](Session& s, const Ins& i, const Tensor& o) { op##_into(s, i[0], o); }, [](Session& s, const Ins& i) { \
      return op(s, i[0]);                                                                                                          \
    }                                                                                                                              \
  }
  static const std::vector<OpEntry> table = {
      TF_BIN(add), TF_BIN(sub), TF_BIN(mul), TF_BIN(div), TF_BIN(rem), TF_BIN(maximum), TF_BIN(minimum), TF_BIN(pow),
      TF_CMP(eq), TF_CMP(ne), TF_CMP(lt), TF_CMP(le), TF_CMP(gt), TF_CMP(ge),
      OpEntry{"select", Kind::select, {DType::b8, F, F}, F, [](Session& s, const Ins& i, const Tensor& o) { select_into(s, i[0], i[1], i[2], o); },
              [](Session& s, const Ins& i) { return select(s, i[0], i[1], i[2]); }},
      OpEntry{"clamp", Kind::clamp, {F, F, F}, F, [](Session& s, const Ins& i, const Tensor& o) { clamp_into(s, i[0], i[1], i[2], o); },
              [](Session& s, const Ins& i) { return clamp(s, i[0], i[1], i[2]); }},
      TF_UN(neg), TF_UN(conj), TF_UN(abs), TF_UN(sign), TF_UN(real), TF_UN(imag), TF_UN(angle),
      TF_UN(exp), TF_UN(log), TF_UN(sin), TF_UN(cos), TF_UN(tan), TF_UN(tanh), TF_UN(sqrt), TF_UN(rsqrt), TF_UN(expm1), TF_UN(log1p),
      TF_UN(erf), TF_UN(sigmoid), TF_UN(asin), TF_UN(acos), TF_UN(atan), TF_UN(sinh), TF_UN(cosh),
      OpEntry{"convert", Kind::convert, {DType::i32}, F, [](Session& s, const Ins& i, const Tensor& o) { convert_into(s, i[0], o); },
              [](Session& s, const Ins& i) { return convert(s, i[0], DType::f64); }},
      OpEntry{"cast", Kind::cast, {F}, DType::i32, [](Session& s, const Ins& i, const Tensor& o) { cast_into(s, i[0], o); },
              [](Session& s, const Ins& i) { return cast(s, i[0], DType::i32); }},
      OpEntry{"copy_into", Kind::copy, {F}, F, [](Session& s, const Ins& i, const Tensor& o) { copy_into(s, i[0], o); },
              [](Session& s, const Ins& i) { return to_contiguous(s, i[0]); }},
  };
#undef TF_BIN
#undef TF_CMP
#undef TF_UN
  return table;
}

/// A random input of dtype d in `layout` (f64 values in [0.5, 2]: positive, nonzero).
Tensor make_input(std::mt19937_64& rng, DType d, const Shape& shape, Layout l) {
  if (d == DType::b8) return random_layout(rng, shape, d, l);
  if (d == DType::i32) return random_layout(rng, shape, d, l, -5, 5);
  return random_layout(rng, shape, d, l, 0.5, 2);
}

Ins make_inputs(std::mt19937_64& rng, const OpEntry& op, const Shape& shape, int layout_seed) {
  Ins ins;
  for (std::size_t k = 0; k < op.in.size(); ++k) ins.push_back(make_input(rng, op.in[k], shape, kAllLayouts[(layout_seed + k) % 4]));
  return ins;
}

/// A compact element-by-element copy (independent of the ops under test).
Tensor clone(const Tensor& t) {
  const Tensor c = Tensor::empty(t.shape().span(), t.dtype());
  for_each_index(t.shape(), [&](const Dims& idx) {
    visit_dtype("clone", t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      c.set<T>(idx.span(), t.item<T>(idx.span()));
    });
  });
  return c;
}

/// Counts elements of `t` that differ from `want` (NaN equals NaN).
int count_differences(const Tensor& t, const Tensor& want) {
  int bad = 0;
  for_each_index(t.shape(), [&](const Dims& idx) { bad += !testing::close(testing::value_at(t, idx), testing::value_at(want, idx), 0); });
  return bad;
}

const Shape kS34{3, 4};

// ---------------------------------------------------------------- strided outputs

TEST(ElementwiseInto, StridedOutputsGetTheValuesAndNothingElse) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(51);
  int seed = 0;
  for (const OpEntry& op : ops()) {
    for (int form = 0; form < 3; ++form) {
      const char* forms[] = {"transposed view of a bigger tensor", "negative-stride step -2 slice", "compact offset block"};
      SCOPED_TRACE(op.name + " into a " + forms[form]);
      const Ins ins = make_inputs(rng, op, kS34, seed++);
      const Tensor want = op.alloc(s, ins);
      ASSERT_EQ(want.shape(), kS34);
      ASSERT_EQ(want.dtype(), op.out);
      Tensor big, out;
      std::function<bool(const Dims&)> inside;
      switch (form) {
        case 0:  // big [6, 5]: rows 1..4, columns 1..3, transposed → [3, 4] with strides (6, 1)
          big = random_tensor(rng, {6, 5}, op.out);
          out = big.slice_view(0, 1, 5).slice_view(1, 1, 4).transpose_view();
          inside = [](const Dims& i) { return i[0] >= 1 && i[0] <= 4 && i[1] >= 1 && i[1] <= 3; };
          break;
        case 1:  // big [3, 9]: columns 7, 5, 3, 1 and the rows reversed
          big = random_tensor(rng, {3, 9}, op.out);
          out = big.slice_view(1, 7, Tensor::kSliceEnd, -2).slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
          inside = [](const Dims& i) { return i[1] % 2 == 1; };
          break;
        default:  // big [3, 6]: columns 1..4, compact with an offset
          big = random_tensor(rng, {3, 6}, op.out);
          out = big.slice_view(1, 1, 5);
          inside = [](const Dims& i) { return i[1] >= 1 && i[1] <= 4; };
          break;
      }
      ASSERT_EQ(out.shape(), kS34);
      const Tensor before = clone(big);
      op.into(s, ins, out);
      EXPECT_EQ(count_differences(out, want), 0) << "values in the view";
      int outside_changed = 0;
      for_each_index(big.shape(), [&](const Dims& idx) {
        if (!inside(idx)) outside_changed += !testing::close(testing::value_at(big, idx), testing::value_at(before, idx), 0);
      });
      EXPECT_EQ(outside_changed, 0) << "storage outside the view was written";
    }
  }
}

// ---------------------------------------------------------------- in place

TEST(ElementwiseInto, OutputIdenticalToAnInputIsAllowed) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(52);
  int n = 0;
  for (const OpEntry& op : ops()) {
    for (std::size_t k = 0; k < op.in.size(); ++k) {
      if (op.in[k] != op.out) continue;
      for (Layout l : {Layout::contiguous, Layout::transposed, Layout::negative_stride}) {
        SCOPED_TRACE(op.name + ": out is input " + std::to_string(k) + " (" + layout_name(l) + ")");
        Ins ins = make_inputs(rng, op, kS34, static_cast<int>(k));
        ins[k] = make_input(rng, op.in[k], kS34, l);
        // Other operands may broadcast against the in-place one.
        if (op.broadcasts() && op.kind != Kind::copy) {
          const std::size_t other = (k + 1) % op.in.size();
          ins[other] = make_input(rng, op.in[other], Shape{3}, Layout::contiguous);
        }
        Ins copies;
        for (const Tensor& t : ins) copies.push_back(clone(t));
        const Tensor want = op.alloc(s, copies);
        op.into(s, ins, ins[k]);
        EXPECT_EQ(count_differences(ins[k], want), 0);
        ++n;
      }
    }
  }
  // compare and select on bool operands: the bool output may be the bool input.
  const Tensor a = random_layout(rng, kS34, DType::b8, Layout::transposed), b = random_tensor(rng, kS34, DType::b8);
  const Tensor want = compare(s, clone(a), b, CompareOp::ne);
  compare_into(s, a, b, CompareOp::ne, a);
  EXPECT_EQ(count_differences(a, want), 0) << "compare_into in place";
  const Tensor p = random_tensor(rng, kS34, DType::b8), t = random_tensor(rng, kS34, DType::b8);
  const Tensor want_sel = select(s, clone(p), t, false);
  select_into(s, p, t, false, p);
  EXPECT_EQ(count_differences(p, want_sel), 0) << "select_into in place on the pred";
  EXPECT_GT(n, 100);
}

// Note [Elementwise fast path] (scalar case): a compact inexact tensor with a scalar that keeps
// its dtype runs one loop, also in place; other layouts and promoting scalars take the
// general path. Both must match the reference.
TEST(ElementwiseInto, ScalarOperandInPlaceEveryInexactDTypeAndLayout) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(53);
  for (DType d : {DType::f32, DType::f64, DType::c64, DType::c128}) {
    for (Layout l : {Layout::contiguous, Layout::transposed, Layout::negative_stride}) {
      for (bool left : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + layout_name(l) + (left ? " scalar left" : " scalar right"));
        const Tensor x = random_layout(rng, kS34, d, l);
        const Scalar c = is_complex(d) ? Scalar(c128(0.5, -2.0)) : Scalar(-1.75);
        const Tensor want_mul = left ? mul(s, c, clone(x)) : mul(s, clone(x), c);
        const Tensor want_div = left ? div(s, c, clone(x)) : div(s, clone(x), c);
        const Tensor want_sub = left ? sub(s, c, clone(x)) : sub(s, clone(x), c);
        const Tensor xd = with_layout(clone(x), l), xs = with_layout(clone(x), l);
        if (left) mul_into(s, c, x, x); else mul_into(s, x, c, x);
        EXPECT_EQ(count_differences(x, want_mul), 0) << "mul in place";
        if (left) div_into(s, c, xd, xd); else div_into(s, xd, c, xd);
        EXPECT_EQ(count_differences(xd, want_div), 0) << "div in place";
        if (left) sub_into(s, c, xs, xs); else sub_into(s, xs, c, xs);
        EXPECT_EQ(count_differences(xs, want_sub), 0) << "sub in place";
      }
    }
  }
  // A complex scalar promotes a real tensor (general path): the into form needs a
  // complex out, and the real tensor itself is a DTypeError with nothing written.
  const Tensor r = random_tensor(rng, kS34, DType::f64), before = clone(r);
  EXPECT_THROW(mul_into(s, r, c128(0, 1), r), DTypeError);
  EXPECT_EQ(count_differences(r, before), 0);
}

// ---------------------------------------------------------------- partial overlap

TEST(ElementwiseInto, OutputPartiallyOverlappingAnInputIsArgumentError) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(53);
  for (const OpEntry& op : ops()) {
    for (std::size_t k = 0; k < op.in.size(); ++k) {
      if (op.in[k] != op.out) continue;
      for (int form = 0; form < 3; ++form) {
        const char* forms[] = {"shifted by one column", "the transpose of a square input", "the input reversed"};
        SCOPED_TRACE(op.name + ": out overlaps input " + std::to_string(k) + ", " + forms[form]);
        const Shape shape = form == 1 ? Shape{3, 3} : kS34;
        Ins ins = make_inputs(rng, op, shape, static_cast<int>(k));
        const Tensor base = random_tensor(rng, {3, 5}, op.out, 0.5, 2);
        Tensor out;
        switch (form) {
          case 0:
            ins[k] = base.slice_view(1, 0, 4);
            out = base.slice_view(1, 1, 5);
            break;
          case 1:
            ins[k] = base.slice_view(1, 0, 3);
            out = ins[k].transpose_view();
            break;
          default:
            ins[k] = base.slice_view(1, 0, 4);
            out = ins[k].slice_view(0, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
            break;
        }
        const auto before = snapshot(base);
        expect_error<ArgumentError>([&] { op.into(s, ins, out); }, op.name);
        testing::expect_untouched(base, before);
      }
    }
  }
  // Different dtypes sharing storage: the real part of a complex input.
  const Tensor z = random_tensor(rng, kS34, DType::c128);
  const auto before = snapshot(z);
  expect_error<ArgumentError>([&] { cast_into(s, z, z.real_view()); }, "cast");
  expect_error<ArgumentError>([&] { abs_into(s, z, z.imag_view()); }, "abs");
  expect_error<ArgumentError>([&] { real_into(s, z, z.real_view()); }, "real");
  testing::expect_untouched(z, before);
}

// ---------------------------------------------------------------- bad inputs

TEST(ElementwiseInto, BadInputsThrowTypedErrorsAndWriteNothing) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(54);
  for (const OpEntry& op : ops()) {
    SCOPED_TRACE(op.name);
    const Ins good = make_inputs(rng, op, kS34, 0);
    const Tensor out = random_tensor(rng, kS34, op.out);
    const auto before = snapshot(out);
    {
      SCOPED_TRACE("undefined input / out");
      for (std::size_t k = 0; k < op.in.size(); ++k) {
        Ins ins = good;
        ins[k] = Tensor();
        expect_error<ArgumentError>([&] { op.into(s, ins, out); }, op.name);
      }
      expect_error<ArgumentError>([&] { op.into(s, good, Tensor()); }, op.name);
    }
    if (op.broadcasts()) {
      SCOPED_TRACE("shapes that do not broadcast");
      for (std::size_t k = 0; k < op.in.size(); ++k) {
        for (const Shape& bad : {Shape{3, 5}, Shape{4}, Shape{2, 4}}) {
          Ins ins = good;
          ins[k] = make_input(rng, op.in[k], bad, Layout::contiguous);
          expect_error<ShapeError>([&] { op.into(s, ins, out); }, op.name);
        }
      }
    }
    {
      SCOPED_TRACE("wrong out shape");
      for (const Shape& bad : {Shape{4, 3}, Shape{3, 4, 2}, Shape{12}, Shape{}}) {
        if (op.kind == Kind::copy && bad.size() == 3) continue;  // copy_into broadcasts [3, 4] to [3, 4, 2]
        const Tensor o = random_tensor(rng, bad, op.out);
        const auto ob = snapshot(o);
        expect_error<ShapeError>([&] { op.into(s, good, o); }, op.name);
        testing::expect_untouched(o, ob);
      }
      // The inputs do not broadcast *to* the out shape (only copy_into's source does).
      if (op.kind != Kind::copy) {
        const Tensor o = random_tensor(rng, {3, 4, 2}, op.out);
        expect_error<ShapeError>([&] { op.into(s, good, o); }, op.name);
      }
    }
    if (op.kind != Kind::convert && op.kind != Kind::cast) {  // their out dtype is the target
      SCOPED_TRACE("wrong out dtype");
      for (DType d : {DType::b8, DType::i32, DType::f32, DType::f64, DType::c128}) {
        if (d == op.out) continue;
        const Tensor o = random_tensor(rng, kS34, d);
        const auto ob = snapshot(o);
        expect_error<DTypeError>([&] { op.into(s, good, o); }, op.name);
        testing::expect_untouched(o, ob);
      }
    }
    {
      SCOPED_TRACE("read-only out (broadcast view)");
      const Tensor row = random_tensor(rng, {1, 4}, op.out);
      const auto rb = snapshot(row);
      expect_error<ArgumentError>([&] { op.into(s, good, row.broadcast_view({3, 4})); }, op.name);
      expect_error<ArgumentError>([&] { op.into(s, good, row.broadcast_view({3, 4}).slice_view(0, 0, 3)); }, op.name);
      testing::expect_untouched(row, rb);
    }
    {
      SCOPED_TRACE("self-overlapping out");
      const Tensor store = random_tensor(rng, {20}, op.out);
      const auto sb = snapshot(store);
      const Dims shape{3, 4};
      for (const Dims& strides : {Dims{0, 1}, Dims{1, 0}, Dims{1, 2}, Dims{2, 1}}) {
        SCOPED_TRACE("strides " + strides.to_string());
        expect_error<ArgumentError>([&] { op.into(s, good, store.as_strided_view(shape, strides, 0)); }, op.name);
      }
      testing::expect_untouched(store, sb);
    }
    testing::expect_untouched(out, before);
  }
}

// ---------------------------------------------------------------- session misuse

TEST(ElementwiseInto, ClosedSessionAndForeignThreadAreRefused) {
  CpuBackend backend;
  std::mt19937_64 rng(55);
  for (const OpEntry& op : ops()) {
    SCOPED_TRACE(op.name);
    const Ins ins = make_inputs(rng, op, kS34, 1);
    const Tensor out = random_tensor(rng, kS34, op.out);
    const auto before = snapshot(out);
    {
      HeldSession h = backend.open_session();
      h.close();
      expect_session_error([&] { op.into(h, ins, out); }, SessionEntryKind::Poisoned, op.name);
      expect_session_error([&] { op.alloc(h, ins); }, SessionEntryKind::Poisoned, op.kind == Kind::copy ? "to_contiguous" : op.name);
    }
    {
      HeldSession h = backend.open_session();
      std::thread t([&] {
        expect_session_error([&] { op.into(h, ins, out); }, SessionEntryKind::IncompatibleContext, op.name);
        expect_session_error([&] { op.alloc(h, ins); }, SessionEntryKind::IncompatibleContext, op.kind == Kind::copy ? "to_contiguous" : op.name);
      });
      t.join();
      // The session is still fine on its own thread.
      EXPECT_NO_THROW(op.into(h, ins, random_tensor(rng, kS34, op.out)));
    }
    {
      // A session moved from is poisoned too.
      HeldSession h = backend.open_session();
      HeldSession moved = std::move(h);
      expect_session_error([&] { op.into(h, ins, out); }, SessionEntryKind::Poisoned, op.name);
    }
    testing::expect_untouched(out, before);
  }
}

}  // namespace
}  // namespace tenferro::ew_into_test
