// The `_into` forms of the linalg family (Note [Linalg into forms]), table-driven: one
// case per function and mode, each with its inputs, the allocating call and the `_into`
// call. For every case:
// - the `_into` results equal the allocating results bit for bit (both run the same
//   code; the `_into` form copies the compact results into the views) for compact,
//   transposed, negative-stride and every-other-element output views, over input
//   layouts and dtypes;
// - every bad output (wrong dtype, wrong shape, read-only broadcast, self-overlapping,
//   undefined, overlapping an input, overlapping another output, defined where the mode
//   computes nothing) gives its error type with the op's name, and no output, bad or
//   good, nor any input is written;
// - numerical failures (lu_solve's zero pivot, gels on a rank-deficient matrix) and
//   non-finite input leave every output untouched.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "linalg/linalg_test_util.hpp"
#include "support/expect_error.hpp"

using namespace tenferro;
using namespace tenferro::testing;
using namespace tenferro::linalg_test;

namespace {

CpuBackend& backend1() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 1});
  return b;
}
CpuBackend& backend2() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 2});
  return b;
}

using Tensors = std::vector<Tensor>;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// One function (and mode) under test. `alloc` returns the results in the order the
/// `_into` form takes its outputs, an undefined Tensor where the mode computes none.
struct Case {
  std::string op;     ///< name in error messages
  std::string label;  ///< for SCOPED_TRACE
  Tensors in;
  std::function<Tensors(Session&, const Tensors&)> alloc;
  std::function<void(Session&, const Tensors&, const Tensors&)> into;
};

Tensor compact_copy(Session& s, const Tensor& t) {
  Tensor c = Tensor::empty(t.shape().span(), t.dtype());
  copy_into(s, t, c);
  return c;
}

/// A random well-conditioned square input: random + n·I, kept in layout `l`.
Tensor well_conditioned(std::mt19937_64& rng, const Shape& sh, DType d, Lay l, Session& s) {
  Tensor a = random_in(rng, sh, d, l);
  Tensor c = compact_copy(s, a);
  for (std::int64_t b = 0; b < batch_count(c); ++b) {
    Mat m = get(c, b);
    for (std::int64_t i = 0; i < m.m; ++i) m(i, i) += static_cast<double>(m.m);
    put(c, b, m);
  }
  copy_into(s, c, a);
  return a;
}

/// Hermitian positive definite input in layout `l`.
Tensor hpd_in(std::mt19937_64& rng, const Shape& sh, DType d, Lay l, Session& s) {
  const Tensor c = random_hpd(rng, sh, d);
  Tensor a = random_in(rng, sh, d, l);
  copy_into(s, c, a);
  return a;
}

std::vector<Case> make_cases(std::mt19937_64& rng, Session& s, DType d, Lay l) {
  std::vector<Case> cs;
  const Tensor wide = random_in(rng, Shape{3, 5}, d, l);
  const Tensor tall_b = random_in(rng, Shape{5, 3, 2}, d, l);
  const Tensor sq_b = well_conditioned(rng, Shape{4, 4, 2}, d, l, s);
  const Tensor sq = well_conditioned(rng, Shape{3, 3}, d, l, s);
  for (const Tensor& a : {wide, tall_b}) {
    for (SvdMode mode : {SvdMode::thin, SvdMode::full, SvdMode::values}) {
      cs.push_back({"svd", "svd mode " + std::to_string(int(mode)), {a},
                    [mode](Session& s, const Tensors& in) {
                      SvdResult r = svd(s, in[0], mode);
                      return Tensors{r.U, r.S, r.Vh};
                    },
                    [mode](Session& s, const Tensors& in, const Tensors& o) { svd_into(s, in[0], o[0], o[1], o[2], mode); }});
    }
    cs.push_back({"svdvals", "svdvals", {a}, [](Session& s, const Tensors& in) { return Tensors{svdvals(s, in[0])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { svdvals_into(s, in[0], o[0]); }});
    for (QrMode mode : {QrMode::reduced, QrMode::complete})
      for (bool pos : {false, true})
        cs.push_back({"qr", "qr mode " + std::to_string(int(mode)) + " positive " + std::to_string(pos), {a},
                      [mode, pos](Session& s, const Tensors& in) {
                        QrResult r = qr(s, in[0], mode, pos);
                        return Tensors{r.Q, r.R};
                      },
                      [mode, pos](Session& s, const Tensors& in, const Tensors& o) { qr_into(s, in[0], o[0], o[1], mode, pos); }});
    cs.push_back({"qr_pivoted", "qr_pivoted", {a},
                  [](Session& s, const Tensors& in) {
                    PivotedQrResult r = qr_pivoted(s, in[0]);
                    return Tensors{r.Q, r.R, r.perm, r.rank};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { qr_pivoted_into(s, in[0], o[0], o[1], o[2], o[3]); }});
    cs.push_back({"lu", "lu", {a},
                  [](Session& s, const Tensors& in) {
                    LuResult r = lu(s, in[0]);
                    return Tensors{r.P, r.L, r.U};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { lu_into(s, in[0], o[0], o[1], o[2]); }});
    cs.push_back({"lu_factor", "lu_factor", {a},
                  [](Session& s, const Tensors& in) {
                    LuFactorResult r = lu_factor(s, in[0]);
                    return Tensors{r.LU, r.pivots};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { lu_factor_into(s, in[0], o[0], o[1]); }});
    cs.push_back({"pinv", "pinv", {a}, [](Session& s, const Tensors& in) { return Tensors{pinv(s, in[0])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { pinv_into(s, in[0], o[0]); }});
    for (MatrixNorm k : {MatrixNorm::frobenius, MatrixNorm::nuclear, MatrixNorm::spectral, MatrixNorm::one, MatrixNorm::inf})
      cs.push_back({"matrix_norm", "matrix_norm kind " + std::to_string(int(k)), {a},
                    [k](Session& s, const Tensors& in) { return Tensors{matrix_norm(s, in[0], k)}; },
                    [k](Session& s, const Tensors& in, const Tensors& o) { matrix_norm_into(s, in[0], o[0], k); }});
    for (double p : {2.0, 1.0, 0.0, 3.0, kInf, -kInf})
      cs.push_back({"vector_norm", "vector_norm p " + std::to_string(p), {a},
                    [p](Session& s, const Tensors& in) { return Tensors{vector_norm(s, in[0], p)}; },
                    [p](Session& s, const Tensors& in, const Tensors& o) { vector_norm_into(s, in[0], o[0], p); }});
  }
  {  // qr_append_columns: Q, R from the QR of a [5, 2], new columns C [5, 2].
    const QrResult f = qr(s, random_in(rng, Shape{5, 2}, d, l));
    const Tensor C = random_in(rng, Shape{5, 2}, d, l);
    cs.push_back({"qr_append_columns", "qr_append_columns", {f.Q, f.R, C},
                  [](Session& s, const Tensors& in) {
                    QrResult r = qr_append_columns(s, in[0], in[1], in[2]);
                    return Tensors{r.Q, r.R};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { qr_append_columns_into(s, in[0], in[1], in[2], o[0], o[1]); }});
  }
  for (const Tensor& a : {sq, sq_b}) {
    const LuFactorResult f = lu_factor(s, a);
    const Tensor b = a.rank() == 2 ? random_in(rng, Shape{3, 2}, d, l) : random_in(rng, Shape{4, 3, 2}, d, l);
    cs.push_back({"lu_solve", "lu_solve", {f.LU, f.pivots, b},
                  [](Session& s, const Tensors& in) { return Tensors{lu_solve(s, LuFactorResult{in[0], in[1]}, in[2])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { lu_solve_into(s, LuFactorResult{in[0], in[1]}, in[2], o[0]); }});
    if (a.rank() == 2)
      cs.push_back({"lu_solve", "lu_solve vector rhs", {f.LU, f.pivots, random_in(rng, Shape{3}, d, l)},
                    [](Session& s, const Tensors& in) { return Tensors{lu_solve(s, LuFactorResult{in[0], in[1]}, in[2])}; },
                    [](Session& s, const Tensors& in, const Tensors& o) { lu_solve_into(s, LuFactorResult{in[0], in[1]}, in[2], o[0]); }});
    cs.push_back({"lu_full_pivot", "lu_full_pivot", {a},
                  [](Session& s, const Tensors& in) {
                    FullPivLuResult r = lu_full_pivot(s, in[0]);
                    return Tensors{r.P, r.L, r.U, r.Q};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { lu_full_pivot_into(s, in[0], o[0], o[1], o[2], o[3]); }});
    cs.push_back({"det", "det", {a}, [](Session& s, const Tensors& in) { return Tensors{det(s, in[0])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { det_into(s, in[0], o[0]); }});
    cs.push_back({"slogdet", "slogdet", {a},
                  [](Session& s, const Tensors& in) {
                    SlogdetResult r = slogdet(s, in[0]);
                    return Tensors{r.sign, r.logabsdet};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { slogdet_into(s, in[0], o[0], o[1]); }});
    cs.push_back({"eig", "eig", {a},
                  [](Session& s, const Tensors& in) {
                    EigResult r = eig(s, in[0]);
                    return Tensors{r.W, r.V};
                  },
                  [](Session& s, const Tensors& in, const Tensors& o) { eig_into(s, in[0], o[0], o[1]); }});
    cs.push_back({"eigvals", "eigvals", {a}, [](Session& s, const Tensors& in) { return Tensors{eigvals(s, in[0])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { eigvals_into(s, in[0], o[0]); }});
    cs.push_back({"matrix_exp", "matrix_exp", {a}, [](Session& s, const Tensors& in) { return Tensors{matrix_exp(s, in[0])}; },
                  [](Session& s, const Tensors& in, const Tensors& o) { matrix_exp_into(s, in[0], o[0]); }});
    const Tensor h = hpd_in(rng, a.shape(), d, l, s);
    for (Triangle tri : {Triangle::lower, Triangle::upper}) {
      cs.push_back({"eigh", "eigh tri " + std::to_string(int(tri)), {h},
                    [tri](Session& s, const Tensors& in) {
                      EighResult r = eigh(s, in[0], tri);
                      return Tensors{r.W, r.V};
                    },
                    [tri](Session& s, const Tensors& in, const Tensors& o) { eigh_into(s, in[0], o[0], o[1], tri); }});
      cs.push_back({"eigvalsh", "eigvalsh tri " + std::to_string(int(tri)), {h},
                    [tri](Session& s, const Tensors& in) { return Tensors{eigvalsh(s, in[0], tri)}; },
                    [tri](Session& s, const Tensors& in, const Tensors& o) { eigvalsh_into(s, in[0], o[0], tri); }});
    }
  }
  {  // lstsq: tall batched and wide unbatched (minimum norm), matrix and vector rhs.
    const Tensor at = random_in(rng, Shape{5, 3, 2}, d, l), bt = random_in(rng, Shape{5, 2, 2}, d, l);
    const Tensor aw = random_in(rng, Shape{3, 5}, d, l), bw = random_in(rng, Shape{3}, d, l);
    for (const auto& [a, b] : {std::pair{at, bt}, std::pair{aw, bw}})
      for (LstsqDriver drv : {LstsqDriver::qr, LstsqDriver::svd})
        cs.push_back({"lstsq", "lstsq driver " + std::to_string(int(drv)), {a, b},
                      [drv](Session& s, const Tensors& in) {
                        LstsqResult r = lstsq(s, in[0], in[1], drv);
                        return Tensors{r.X, r.rank, r.S};
                      },
                      [drv](Session& s, const Tensors& in, const Tensors& o) { lstsq_into(s, in[0], in[1], o[0], o[1], o[2], drv); }});
  }
  return cs;
}

TEST(LinalgInto, MatchesAllocatingBitForBitOnStridedOutputs) {
  std::mt19937_64 rng(2026);
  int cases = 0;
  for (CpuBackend* be : {&backend1(), &backend2()}) {
    HeldSession s = be->open_session();
    for (DType d : kInexactDTypes)
      for (Lay l : kLays)
        for (const Case& c : make_cases(rng, s, d, l)) {
          ++cases;
          SCOPED_TRACE(c.label + " " + std::string(dtype_name(d)) + " layout " + std::to_string(int(l)));
          const Tensors want = c.alloc(s, c.in);
          for (int variant = 0; variant < 4; ++variant) {
            SCOPED_TRACE("out variant " + std::to_string(variant));
            Tensors outs;
            for (const Tensor& w : want) outs.push_back(w.defined() ? out_view(rng, w.shape(), w.dtype(), variant) : Tensor());
            c.into(s, c.in, outs);
            for (std::size_t i = 0; i < want.size(); ++i) {
              if (!want[i].defined()) continue;
              SCOPED_TRACE("output " + std::to_string(i));
              ASSERT_EQ(outs[i].shape(), want[i].shape());
              EXPECT_EQ(bytes_of(compact_copy(s, outs[i])), bytes_of(want[i]));
            }
          }
        }
  }
  EXPECT_EQ(cases, 2 * 4 * 3 * 74);  // every function and mode ran (count of make_cases)
}

/// A writable compact tensor of `shape` filled with 7.
Tensor sentinel(const Shape& shape, DType d) { return Tensor::full(shape.span(), 7, d); }

Dims compact_strides_of(const Shape& shape) {
  Dims st(shape.size(), 0);
  std::int64_t acc = 1;
  for (int i = 0; i < shape.size(); ++i) {
    st[i] = acc;
    acc *= std::max<std::int64_t>(shape[i], 1);
  }
  return st;
}

/// Runs c.into with outputs `outs` and expects E; no output and no input storage changes.
template <class E> void expect_refused(Session& s, const Case& c, const Tensors& outs, const std::string& what) {
  SCOPED_TRACE(what);
  std::vector<std::vector<unsigned char>> before_out, before_in;
  for (const Tensor& o : outs) before_out.push_back(o.defined() ? snapshot(o) : std::vector<unsigned char>{});
  for (const Tensor& t : c.in) before_in.push_back(snapshot(t));
  expect_error<E>([&] { c.into(s, c.in, outs); }, c.op);
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (outs[i].defined()) expect_untouched(outs[i], before_out[i]);
  for (std::size_t i = 0; i < c.in.size(); ++i) expect_untouched(c.in[i], before_in[i]);
}

TEST(LinalgInto, BadOutputsAreRefusedBeforeAnythingIsWritten) {
  std::mt19937_64 rng(7);
  HeldSession s = backend1().open_session();
  for (DType d : {DType::f64, DType::c64})
    for (const Case& c : make_cases(rng, s, d, Lay::contiguous)) {
      SCOPED_TRACE(c.label + " " + std::string(dtype_name(d)));
      const Tensors want = c.alloc(s, c.in);
      auto good = [&] {
        Tensors o;
        for (const Tensor& w : want) o.push_back(w.defined() ? sentinel(w.shape(), w.dtype()) : Tensor());
        return o;
      };
      for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("output " + std::to_string(i));
        const Shape sh = want.at(i).defined() ? want[i].shape() : Shape{2, 2};
        if (!want[i].defined()) {  // the mode computes no such result: a defined output is refused
          Tensors o = good();
          o[i] = sentinel(sh, d);
          expect_refused<ArgumentError>(s, c, o, "defined output the mode does not compute");
          continue;
        }
        const DType od = want[i].dtype();
        {
          Tensors o = good();
          o[i] = sentinel(sh, od == DType::f64 ? DType::f32 : DType::f64);
          expect_refused<DTypeError>(s, c, o, "wrong dtype");
        }
        {
          Tensors o = good();
          Shape bigger = sh;
          bigger.resize(sh.size() + 1);
          bigger[sh.size()] = 2;
          o[i] = sentinel(bigger, od);
          expect_refused<ShapeError>(s, c, o, "extra axis");
          if (sh.size() > 0) {
            Shape other = sh;
            other[0] += 1;
            o[i] = sentinel(other, od);
            expect_refused<ShapeError>(s, c, o, "wrong extent");
          }
        }
        {
          Tensors o = good();
          o[i] = Tensor();
          expect_refused<ArgumentError>(s, c, o, "undefined output");
        }
        int ax = -1;
        for (int k = 0; k < sh.size() && ax < 0; ++k)
          if (sh[k] > 1) ax = k;
        if (ax >= 0) {
          Tensors o = good();
          Shape base = sh;
          base[ax] = 1;
          o[i] = sentinel(base, od).broadcast_view(sh.span());
          expect_refused<ArgumentError>(s, c, o, "read-only broadcast output");
          Dims st = compact_strides_of(sh);
          st[ax] = 0;  // writable, but its elements share memory
          o[i] = sentinel(sh, od).as_strided_view(sh, st, 0);
          expect_refused<ArgumentError>(s, c, o, "self-overlapping output");
        }
        // Overlapping an input: a view of the first input's storage with that dtype.
        for (const Tensor& in : c.in) {
          if (in.dtype() != od || in.numel() < std::max<std::int64_t>(1, want[i].numel()) || !in.is_contiguous()) continue;
          Tensors o = good();
          o[i] = in.as_strided_view(sh, compact_strides_of(sh), 0);
          expect_refused<ArgumentError>(s, c, o, "output overlapping an input");
          break;
        }
        // Overlapping another output of the same dtype.
        for (std::size_t j = 0; j < i; ++j) {
          if (!want[j].defined() || want[j].dtype() != od || want[i].numel() == 0 || want[j].numel() == 0) continue;
          Tensors o = good();
          const std::int64_t n = std::max(want[i].numel(), want[j].numel());
          const Tensor store = Tensor::full({n}, 7, od);
          o[j] = store.as_strided_view(want[j].shape(), compact_strides_of(want[j].shape()), 0);
          o[i] = store.as_strided_view(sh, compact_strides_of(sh), 0);
          expect_refused<ArgumentError>(s, c, o, "outputs " + std::to_string(j) + " and " + std::to_string(i) + " overlap");
        }
      }
    }
}

TEST(LinalgInto, NumericalFailuresLeaveOutputsUntouched) {
  HeldSession s = backend1().open_session();
  for (DType d : kInexactDTypes) {
    SCOPED_TRACE(dtype_name(d));
    {  // lu_solve: batch 1 of LU has an exact zero on U's diagonal.
      Tensor LU64 = Tensor::zeros({3, 3, 2}, DType::f64);
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t i = 0; i < 3; ++i) LU64.set<double>({i, i, b}, b == 1 && i == 2 ? 0.0 : 2.0);
      const Tensor LU = cast(s, LU64, d);
      Tensor piv = Tensor::empty({3, 2}, DType::i64);
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t i = 0; i < 3; ++i) piv.set<std::int64_t>({i, b}, i);
      const Tensor b = Tensor::ones({3, 2, 2}, d);
      const Tensor store = Tensor::full({2, 3, 2}, 7, d);
      const Tensor out = store.transpose_view();  // [3, 2, 2], strided
      const auto before = snapshot(out);
      try {
        lu_solve_into(s, LuFactorResult{LU, piv}, b, out);
        ADD_FAILURE() << "no error";
      } catch (const NumericalError& e) {
        EXPECT_EQ(e.op(), "lu_solve");
        EXPECT_EQ(e.info(), 3);
        EXPECT_EQ(e.batch_index(), 1);
      }
      expect_untouched(out, before);
    }
    {  // lstsq (qr driver): an exactly zero column makes R singular.
      Tensor a64 = Tensor::zeros({4, 2, 2}, DType::f64);  // batch 0: [e0, e1]; batch 1: [e0 + e2, 0]
      a64.set<double>({0, 0, 0}, 1.0);
      a64.set<double>({1, 1, 0}, 1.0);
      a64.set<double>({0, 0, 1}, 1.0);
      a64.set<double>({2, 0, 1}, 1.0);
      const Tensor a = cast(s, a64, d);
      const Tensor b = Tensor::ones({4, 1, 2}, d);
      Tensor X = Tensor::full({2, 1, 2}, 7, d), rank = Tensor::full({2}, 7, DType::i64);
      const auto bx = snapshot(X), br = snapshot(rank);
      try {
        lstsq_into(s, a, b, X, rank, Tensor(), LstsqDriver::qr);
        ADD_FAILURE() << "no error";
      } catch (const NumericalError& e) {
        EXPECT_EQ(e.op(), "lstsq");
        EXPECT_EQ(e.batch_index(), 1);
        EXPECT_NE(std::string(e.what()).find("gels"), std::string::npos);
      }
      expect_untouched(X, bx);
      expect_untouched(rank, br);
    }
    {  // Non-finite input to the iterative decompositions: ArgumentError, outputs untouched.
      Tensor a64 = Tensor::eye(3, DType::f64);
      a64.set<double>({1, 2}, std::numeric_limits<double>::quiet_NaN());
      const Tensor a = cast(s, a64, d);
      Tensor U = sentinel(Shape{3, 3}, d), S = sentinel(Shape{3}, real_dtype(d)), Vh = sentinel(Shape{3, 3}, d);
      const auto bu = snapshot(U), bs = snapshot(S), bv = snapshot(Vh);
      expect_error<ArgumentError>([&] { svd_into(s, a, U, S, Vh); }, "svd");
      Tensor W = sentinel(Shape{3}, real_dtype(d)), V = sentinel(Shape{3, 3}, d);
      const auto bw = snapshot(W), bV = snapshot(V);
      expect_error<ArgumentError>([&] { eigh_into(s, a, W, V); }, "eigh");
      expect_error<ArgumentError>([&] { matrix_exp_into(s, a, V); }, "matrix_exp");
      expect_untouched(U, bu);
      expect_untouched(S, bs);
      expect_untouched(Vh, bv);
      expect_untouched(W, bw);
      expect_untouched(V, bV);
    }
  }
}

TEST(LinalgInto, BadInputsAreReportedBeforeOutputs) {
  // Input validation comes first: an integer input with a wrong output reports the input.
  HeldSession s = backend1().open_session();
  const Tensor ai = Tensor::ones({3, 3}, DType::i32);
  const Tensor out = sentinel(Shape{4}, DType::f64);
  const auto before = snapshot(out);
  expect_error<DTypeError>([&] { det_into(s, ai, out); }, "det");
  expect_error<DTypeError>([&] { vector_norm_into(s, ai, out); }, "vector_norm");
  expect_error<ShapeError>([&] { matrix_exp_into(s, Tensor::ones({2, 3}, DType::f64), out); }, "matrix_exp");
  expect_untouched(out, before);
}

TEST(LinalgInto, ZeroSizeAndRankZeroOutputs) {
  HeldSession s = backend1().open_session();
  // det of one matrix is rank 0; of an empty batch, [0].
  const Tensor a = Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4});
  Tensor d0 = Tensor::full(std::span<const std::int64_t>{}, 7, DType::f64);
  det_into(s, a, d0);
  EXPECT_NEAR(d0.item<double>({}), -2.0, 1e-14);
  Tensor db = Tensor::full({0}, 7, DType::f64);
  det_into(s, Tensor::zeros({2, 2, 0}, DType::f64), db);
  // svd of a 0×3 matrix with full U/Vh: Vh is the identity of order 3.
  Tensor U = Tensor::full({0, 0}, 7, DType::f64), S = Tensor::full({0}, 7, DType::f64), Vh = Tensor::full({3, 3}, 7, DType::f64);
  svd_into(s, Tensor::zeros({0, 3}, DType::f64), U, S, Vh, SvdMode::full);
  EXPECT_LE(max_diff(get(Vh), eye(3)), 0.0);
}

}  // namespace
