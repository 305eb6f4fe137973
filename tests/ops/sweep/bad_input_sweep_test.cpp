// Note [Bad-input sweep]
// Issue 14, item 4: bad inputs generated from the op catalogue. Every catalogue op has
// a SweepEntry (sweep_*.hpp) saying how to build valid operands and call the op; from
// it and the catalogue row the driver derives the cases:
//   dtype:<d>      every dtype outside the row's set, on the main operand: DTypeError
//   zero-size      a zero-size main operand: a result, or a ValidationError
//   mismatch       a second operand with other extents: ShapeError/RankError (indexing
//                  ops: a result or a ValidationError)
//   rank0          a rank-0 main operand: a result, or a ValidationError
//   rank20         (ops of any rank) a rank-20 main operand: a result, equal to the
//                  flattened computation for elementwise ops
//   axis:<a>       (ops with an axis) rank, -rank-1, 99, INT64_MIN: AxisError; -1: a
//                  result or AxisError
//   enum           an out-of-range enum value: ArgumentError or DTypeError
//   nonfinite      (linalg) NaN in the main operand: ArgumentError
//   overflow       result extents whose product (or sum) passes INT64_MAX: a
//                  ValidationError or BackendError, never a result
//   out:<kind>     (`_into` forms) wrong shape (ShapeError/RankError), wrong dtype
//                  (DTypeError), broadcast, read-only and self-overlapping outputs
//                  (ArgumentError)
// Every error must name the op (its what() starts with a name containing the catalogue
// name) and leave every sentinel-filled output and every operand as it was. Any other
// outcome (a crash, an exception outside tenferro::Error, a result where an error is
// due) fails. The sweep prints the number of (op, case) pairs it ran, per case kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include "ops/sweep/sweep.hpp"
#include "ops/sweep/sweep_elementwise.hpp"
#include "ops/sweep/sweep_linalg.hpp"
#include "ops/sweep/sweep_structural.hpp"

namespace tenferro::sweep {
namespace {

std::vector<SweepEntry> all_entries() {
  std::vector<SweepEntry> v = elementwise_entries();
  for (auto* f : {&structural_entries, &linalg_entries})
    for (SweepEntry& e : (*f)()) v.push_back(std::move(e));
  return v;
}

const OpInfo* catalogue_row(const std::string& name) {
  for (const OpInfo& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

/// The compact bytes of t (for before/after comparisons).
std::vector<unsigned char> bytes(Session& s, const Tensor& t) {
  const Tensor c = to_contiguous(s, t);
  const auto* p = static_cast<const unsigned char*>(c.data());
  return {p, p + c.numel() * static_cast<std::int64_t>(dtype_size(c.dtype()))};
}

enum class Expect { error, result_or_error, result };

/// What a call did.
struct Outcome {
  bool threw = false;
  std::string type;  // the exception's class ("" for none)
  std::string what;
};

template <class F> Outcome attempt(F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return {true, typeid(e).name(), e.what()};
  } catch (...) {
    return {true, "non-std exception", ""};
  }
}

class Driver {
 public:
  explicit Driver(Session& s) : s_(s) {}

  /// Runs every case of entry e.
  void run(const SweepEntry& e) {
    const OpInfo* row = catalogue_row(e.op);
    ASSERT_NE(row, nullptr) << e.op << " is not a catalogue op";
    e_ = &e;
    d0_ = in_set(DType::f64, row->dtypes) ? DType::f64 : dtypes_of(row->dtypes).front();
    // The valid case: both forms agree; its results give the outputs' shapes and dtypes.
    const Args valid = e.args(s_, d0_, e.shape);
    Outs want;
    const Outcome ok = attempt([&] { want = e.run(s_, valid); });
    ASSERT_FALSE(ok.threw) << e.op << ": the valid case threw " << ok.what;
    ran("valid");
    if (e.run_into) {
      const Outs outs = sentinels(want);
      e.run_into(s_, valid, outs);
      for (std::size_t i = 0; i < outs.size(); ++i)
        EXPECT_EQ(bytes(s_, outs[i]), bytes(s_, want[i])) << e.op << ": _into output " << i << " differs from the allocating form";
    }
    for (const DType d : all_dtypes())
      if (!in_set(d, row->dtypes)) {
        Args a = valid;  // every operand of the main operand's dtype takes the bad one
        for (Tensor& t : a)
          if (t.dtype() == d0_) t = cast(s_, t, d);
        check("dtype:" + std::string(dtype_name(d)), a, want, {"DTypeError"});
      }
    check_shapes(valid, want);
    // Mismatched shapes: the first other operand of the main operand's dtype gets two
    // more rows (no broadcasting rule joins 3 with 5, or 4 with 6).
    for (std::size_t k = 1; k < valid.size(); ++k) {
      if (valid[k].dtype() != d0_ || valid[k].rank() == 0) continue;
      Args a = valid;
      Dims sh(valid[k].shape().span());
      sh[0] += 2;
      a[k] = rand(Shape(sh.span()), d0_);
      check("mismatch", a, want, {"ShapeError", "RankError"}, e.mismatch_is_error ? Expect::error : Expect::result_or_error);
      break;
    }
    if (e.with_axis) {
      const std::int64_t r = e.axis_rank >= 0 ? e.axis_rank : e.shape.size();
      for (const std::int64_t ax : {r, -r - 1, std::int64_t{99}, std::numeric_limits<std::int64_t>::min()})
        expect("axis:" + std::to_string(ax), valid, Expect::error, {"AxisError"}, [&] { e.with_axis(s_, valid, ax); });
      expect("axis:-1", valid, Expect::result_or_error, {"AxisError"}, [&] { e.with_axis(s_, valid, -1); });
    }
    if (e.bad_enum) expect("enum", valid, Expect::error, {"ArgumentError", "DTypeError"}, [&] { e.bad_enum(s_, valid); });
    if (e.nonfinite_case && d0_ == DType::f64 && valid[0].numel() > 0) {
      Args a = valid;
      a[0] = add(s_, a[0], 0.0);  // a private copy
      a[0].set<double>(Dims(a[0].rank(), 0).span(), std::numeric_limits<double>::quiet_NaN());
      check("nonfinite", a, want, {"ArgumentError"}, e.rejects_nonfinite ? Expect::error : Expect::result_or_error);
    }
    if (e.overflow)
      expect("overflow", {}, Expect::error, {"IndexError", "ShapeError", "ArgumentError", "BackendError"}, [&] { e.overflow(s_); });
    if (e.run_into) check_outputs(valid, want);
  }

  /// (case kind, count) over every entry run so far.
  const std::map<std::string, int>& counts() const { return counts_; }
  int total() const { return total_; }

 private:
  static std::vector<DType> all_dtypes() {
    std::vector<DType> v;
    for (int i = 0; i < kNumDTypes; ++i) v.push_back(static_cast<DType>(i));
    return v;
  }

  Outs sentinels(const Outs& like) const {
    Outs o;
    for (const Tensor& t : like) o.push_back(sentinel(t.shape().span(), t.dtype()));
    return o;
  }

  void ran(const std::string& c) {
    ++total_;
    ++counts_[c.substr(0, c.find(':'))];
  }

  /// The case with operands `a`: through the `_into` form with sentinel outputs when
  /// there is one, else the allocating form; an error of one of `types` is due.
  void check(const std::string& name, const Args& a, const Outs& want, std::vector<std::string> types, Expect ex = Expect::error) {
    if (e_->run_into) {
      const Outs outs = sentinels(want);
      check_into(name, a, outs, ex, types);
    } else {
      expect(name, a, ex, types, [&] { (void)e_->run(s_, a); });
    }
  }

  void check_into(const std::string& name, const Args& a, const Outs& outs, Expect ex, const std::vector<std::string>& types) {
    std::vector<std::vector<unsigned char>> before;
    for (const Tensor& t : outs) before.push_back(bytes(s_, t));
    const bool threw = expect(name, a, ex, types, [&] { e_->run_into(s_, a, outs); });
    if (!threw) return;
    for (std::size_t i = 0; i < outs.size(); ++i)
      EXPECT_EQ(bytes(s_, outs[i]), before[i]) << e_->op << " " << name << ": output " << i << " written before the error";
  }

  /// Runs f; checks the outcome against `ex` and `types`, the error's op name, and that
  /// the operands are unchanged. Returns whether f threw.
  template <class F> bool expect(const std::string& name, const Args& a, Expect ex, const std::vector<std::string>& types, F&& f) {
    ran(name);
    SCOPED_TRACE(e_->op + " " + name);
    std::vector<std::vector<unsigned char>> before;
    for (const Tensor& t : a) before.push_back(bytes(s_, t));
    std::string type;
    std::string what, op;
    bool threw = false, typed = false;
    try {
      f();
    } catch (const Error& err) {
      threw = typed = true;
      type = class_name(err);
      what = err.what();
      op = err.op();
    } catch (const std::exception& err) {
      threw = true;
      type = typeid(err).name();
      what = err.what();
    }
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bytes(s_, a[i]), before[i]) << "operand " << i << " was modified";
    if (!threw) {
      EXPECT_NE(ex, Expect::error) << "no error; expected one of " << join(types);
      return false;
    }
    EXPECT_TRUE(typed) << "threw a non-tenferro exception " << type << ": " << what;
    if (!typed) return true;
    EXPECT_NE(ex, Expect::result) << "threw " << type << ": " << what;
    const bool allowed = ex == Expect::result_or_error ? (is_validation(type) || contains(types, type)) : contains(types, type);
    EXPECT_TRUE(allowed) << "threw " << type << " (expected " << join(types) << "): " << what;
    EXPECT_NE(op.find(e_->op), std::string::npos) << "the error names op '" << op << "', not " << e_->op << ": " << what;
    return true;
  }

  void check_shapes(const Args& valid, const Outs& want) {
    const SweepEntry& e = *e_;
    const Args zero = e.args(s_, d0_, e.zero_shape);
    expect("zero-size", zero, Expect::result_or_error, {}, [&] { (void)e.run(s_, zero); });
    const Args r0 = e.args(s_, d0_, Shape{});
    expect("rank0", r0, Expect::result_or_error, {}, [&] { (void)e.run(s_, r0); });
    if (!e.any_rank) return;
    Dims shape20(20, 1);
    shape20[0] = 2;
    shape20[7] = 3;
    shape20[19] = 2;
    const Args r20 = e.args(s_, d0_, Shape(shape20.span()));
    Outs got;
    if (!expect("rank20", r20, Expect::result, {}, [&] { got = e.run(s_, r20); }) && e.elementwise) {
      Args flat;
      for (const Tensor& t : r20) flat.push_back(reshape(s_, t, {12}));
      const Outs ref = e.run(s_, flat);
      for (std::size_t i = 0; i < ref.size(); ++i)
        EXPECT_EQ(bytes(s_, got[i]), bytes(s_, ref[i])) << e.op << " rank20: differs from the flattened computation";
    }
    (void)valid;
    (void)want;
  }

  void check_outputs(const Args& valid, const Outs& want) {
    const Tensor& w = want[0];
    const DType dt = w.dtype();
    const Dims shape(w.shape().span());
    if (e_->out_defines_result) return;
    {  // wrong shape
      Dims bad = shape;
      if (bad.size() == 0) bad = Dims{2};
      else bad[0] += 1;
      Outs o = sentinels(want);
      o[0] = sentinel(bad.span(), dt);
      check_into("out:shape", valid, o, Expect::error, {"ShapeError", "RankError"});
    }
    if (!e_->any_out_dtype) {
      Outs o = sentinels(want);
      o[0] = sentinel(shape.span(), dt == DType::b8 ? DType::f64 : DType::b8);
      check_into("out:dtype", valid, o, Expect::error, {"DTypeError"});
    }
    if (w.numel() >= 2) {
      Outs o = sentinels(want);
      o[0] = sentinel(Dims{1}.span(), dt).as_strided_view(shape, Dims(shape.size(), 0), 0);
      check_into("out:broadcast", valid, o, Expect::error, {"ArgumentError"});
    }
    {  // read-only memory (an external block)
      static std::vector<unsigned char> store;
      const Tensor filled = sentinel(shape.span(), dt);
      const auto* p = static_cast<const unsigned char*>(filled.data());
      store.assign(p, p + filled.numel() * static_cast<std::int64_t>(dtype_size(dt)));
      store.push_back(0);  // never empty: data() is then a real address
      Outs o = sentinels(want);
      o[0] = Tensor::from_external(store.data(), shape.span(), filled.strides().span(), dt, ExternalOwner{.read_only = true});
      check_into("out:read-only", valid, o, Expect::error, {"ArgumentError"});
    }
    if (shape.size() >= 2 && shape[0] >= 2 && shape[1] >= 2) {
      Dims strides(shape.size(), 1);  // element (1, 0) is element (0, 1)
      Outs o = sentinels(want);
      o[0] = sentinel(Dims{w.numel()}.span(), dt).as_strided_view(shape, strides, 0);
      check_into("out:overlap", valid, o, Expect::error, {"ArgumentError"});
    }
  }

  static std::string class_name(const Error& e) {
    // The most derived public class, by name (the hierarchy of tenferro/error.hpp).
    if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
    if (dynamic_cast<const RankError*>(&e)) return "RankError";
    if (dynamic_cast<const AxisError*>(&e)) return "AxisError";
    if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
    if (dynamic_cast<const ArgumentError*>(&e)) return "ArgumentError";
    if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
    if (dynamic_cast<const ValidationError*>(&e)) return "ValidationError";
    if (dynamic_cast<const UnsupportedError*>(&e)) return "UnsupportedError";
    if (dynamic_cast<const NumericalError*>(&e)) return "NumericalError";
    if (dynamic_cast<const BackendError*>(&e)) return "BackendError";
    return "Error";
  }
  static bool is_validation(const std::string& t) {
    return t == "ShapeError" || t == "RankError" || t == "AxisError" || t == "DTypeError" || t == "ArgumentError" ||
           t == "IndexError" || t == "ValidationError";
  }
  static bool contains(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "/") + x;
    return s.empty() ? "a ValidationError" : s;
  }

  Session& s_;
  const SweepEntry* e_ = nullptr;
  DType d0_ = DType::f64;
  std::map<std::string, int> counts_;
  int total_ = 0;
};

TEST(BadInputSweep, EveryCatalogueOpHasAnEntry) {
  std::set<std::string> have;
  for (const SweepEntry& e : all_entries()) EXPECT_TRUE(have.insert(e.op).second) << e.op << " has two entries";
  for (const OpInfo& op : kOps) EXPECT_TRUE(have.count(std::string(op.name))) << op.name << " has no sweep entry";
}

TEST(BadInputSweep, EveryCaseGivesTheDocumentedErrorOrAResult) {
  CpuBackend be(one_thread());
  HeldSession s = be.open_session();
  Driver d(s);
  int ops = 0;
  for (const SweepEntry& e : all_entries()) {
    d.run(e);
    ++ops;
  }
  std::printf("[ sweep ] %d ops, %d (op, case) pairs:", ops, d.total());
  for (const auto& [k, n] : d.counts()) std::printf(" %s %d;", k.c_str(), n);
  std::printf("\n");
}

}  // namespace
}  // namespace tenferro::sweep
