// dot_general, matmul and grouped GEMM against a plain reference loop over random
// configurations: batch/contracting/free axes in random places, permuted and negative
// strides, complex with conjugation, alpha/beta, zero extents; and every bad input.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "cpu/dot_plan.hpp"
#include "support/test_util.hpp"

using namespace tenferro;
using namespace tenferro::testing;

namespace {

struct Config {
  Shape lhs_shape, rhs_shape;
  DotDims dims;
  Shape out_shape;
};

// Random dot_general configuration: nb batch, nk contracting, nm/nn free axes, placed at
// random positions of each operand.
Config random_config(std::mt19937_64& rng, int nb, int nk, int nm, int nn, std::int64_t max_extent) {
  std::uniform_int_distribution<std::int64_t> ext(1, max_extent);
  std::vector<std::int64_t> b(nb), k(nk), m(nm), n(nn);
  for (auto* v : {&b, &k, &m, &n})
    for (auto& e : *v) e = ext(rng);
  auto place = [&](int free_count, const std::vector<std::int64_t>& free_ext, Shape& shape, Dims& batch_axes, Dims& k_axes) {
    const int r = nb + nk + free_count;
    std::vector<int> pos(r);
    std::iota(pos.begin(), pos.end(), 0);
    std::shuffle(pos.begin(), pos.end(), rng);
    shape = Shape(r, 0);
    batch_axes = Dims(nb, 0);
    k_axes = Dims(nk, 0);
    int q = 0;
    for (int i = 0; i < nb; ++i) { batch_axes[i] = pos[q]; shape[pos[q++]] = b[i]; }
    for (int i = 0; i < nk; ++i) { k_axes[i] = pos[q]; shape[pos[q++]] = k[i]; }
    std::vector<int> free_pos(pos.begin() + q, pos.end());
    std::sort(free_pos.begin(), free_pos.end());  // free axes keep their order in the output
    for (int i = 0; i < free_count; ++i) shape[free_pos[i]] = free_ext[i];
  };
  Config c;
  place(nm, m, c.lhs_shape, c.dims.lhs_batch, c.dims.lhs_contracting);
  place(nn, n, c.rhs_shape, c.dims.rhs_batch, c.dims.rhs_contracting);
  for (auto e : m) c.out_shape.push_back(e);
  for (auto e : n) c.out_shape.push_back(e);
  for (auto e : b) c.out_shape.push_back(e);
  return c;
}

// Plain reference: loop over every output index and every contracted index.
Tensor reference(const Tensor& lhs, const Tensor& rhs, const DotDims& d, const Shape& out_shape, DType dtype,
                 std::complex<double> alpha = 1.0, std::complex<double> beta = 0.0, const Tensor* out = nullptr) {
  Tensor ref = Tensor::zeros(out_shape.span(), DType::c128);
  const int nb = d.lhs_batch.size(), nk = d.lhs_contracting.size();
  std::vector<int> lfree, rfree;
  auto is_in = [](const Dims& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); };
  for (int a = 0; a < lhs.rank(); ++a)
    if (!is_in(d.lhs_batch, a) && !is_in(d.lhs_contracting, a)) lfree.push_back(a);
  for (int a = 0; a < rhs.rank(); ++a)
    if (!is_in(d.rhs_batch, a) && !is_in(d.rhs_contracting, a)) rfree.push_back(a);
  Shape kshape;
  for (int i = 0; i < nk; ++i) kshape.push_back(lhs.extent(static_cast<int>(d.lhs_contracting[i])));
  for_each_index(out_shape, [&](const Dims& o) {
    Dims li(lhs.rank(), 0), ri(rhs.rank(), 0);
    int q = 0;
    for (int a : lfree) li[a] = o[q++];
    for (int a : rfree) ri[a] = o[q++];
    for (int i = 0; i < nb; ++i, ++q) {
      li[d.lhs_batch[i]] = o[q];
      ri[d.rhs_batch[i]] = o[q];
    }
    std::complex<double> acc = 0;
    for_each_index(kshape, [&](const Dims& k) {
      for (int i = 0; i < nk; ++i) {
        li[d.lhs_contracting[i]] = k[i];
        ri[d.rhs_contracting[i]] = k[i];
      }
      std::complex<double> x = value_at(lhs, li), y = value_at(rhs, ri);
      if (d.conj_lhs) x = std::conj(x);
      if (d.conj_rhs) y = std::conj(y);
      acc += x * y;
    });
    std::complex<double> v = alpha * acc;
    if (out && beta != 0.0) v += beta * value_at(*out, o);
    ref.set<c128>(o.span(), v);
  });
  (void)dtype;
  return ref;
}

// The plan dot_general_into(s, lhs, rhs, dims, out) takes (alpha 1, beta 0).
detail::DotPlan plan_of(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor& out, DType d) {
  detail::DotSignature sig;
  detail::dot_infer("dot_general", lhs.shape().span(), d, rhs.shape().span(), d, dims, sig);
  const Scalar one(1.0), zero(0.0);
  const detail::DotCall call{"dot_general", &lhs, &rhs, &out, &sig, &dims, &one, &zero, nullptr};
  detail::DotPlan plan;
  detail::plan_dot(call, plan);
  return plan;
}

void expect_matches(const Tensor& got, const Tensor& ref, double tol) {
  ASSERT_EQ(got.shape(), ref.shape());
  for_each_index(got.shape(), [&](const Dims& i) {
    ASSERT_TRUE(close(value_at(got, i), value_at(ref, i), tol)) << "at " << i.to_string() << ": got " << value_at(got, i) << " expected " << value_at(ref, i);
  });
}

// Operand in one of several layouts (contiguous, transposed, negative strides).
Tensor operand(std::mt19937_64& rng, const Shape& shape, DType d, int layout) {
  return random_layout(rng, shape, d, layout == 0 ? Layout::contiguous : layout == 1 ? Layout::transposed : Layout::negative_stride);
}

}  // namespace

TEST(DotGeneral, RandomConfigurationsMatchReference) {
  CpuBackend backend;
  std::mt19937_64 rng(7);
  HeldSession s = backend.open_session();
  for (int trial = 0; trial < 300; ++trial) {
    std::uniform_int_distribution<int> small(0, 2), dt(0, 3), lay(0, 2);
    // Alternate tiny extents over up to 2 axes per group (small path) and larger extents
    // over at most one axis per group (BLAS path).
    const bool large = trial % 3 == 0;
    const int nb = small(rng) % (large ? 2 : 3), nk = small(rng) % (large ? 2 : 3), nm = small(rng) % (large ? 2 : 3), nn = small(rng) % (large ? 2 : 3);
    const DType d = kInexactDTypes[dt(rng)];
    const Config c = random_config(rng, nb, nk, nm, nn, large ? 24 : 4);
    DotDims dims = c.dims;
    dims.conj_lhs = is_complex(d) && (trial & 1);
    dims.conj_rhs = is_complex(d) && (trial & 2);
    const Tensor lhs = operand(rng, c.lhs_shape, d, lay(rng)), rhs = operand(rng, c.rhs_shape, d, lay(rng));
    SCOPED_TRACE("trial " + std::to_string(trial) + " " + std::string(dtype_name(d)) + " lhs " + c.lhs_shape.to_string() + " rhs " +
                 c.rhs_shape.to_string());
    const Tensor got = dot_general(s, lhs, rhs, dims);
    EXPECT_EQ(got.dtype(), d);
    std::int64_t K = 1;
    for (auto a : dims.lhs_contracting) K *= lhs.extent(static_cast<int>(a));
    expect_matches(got, reference(lhs, rhs, dims, c.out_shape, d), 8 * (K + 1) * epsilon_of(d));
  }
}

TEST(DotGeneral, IntoStridedOutputsWithAlphaBeta) {
  CpuBackend backend;
  std::mt19937_64 rng(11);
  HeldSession s = backend.open_session();
  for (int trial = 0; trial < 120; ++trial) {
    std::uniform_int_distribution<int> small(0, 2), dt(0, 3), lay(0, 2);
    const DType d = kInexactDTypes[dt(rng)];
    const bool large = trial % 2 == 1;
    const Config c = large ? random_config(rng, small(rng) % 2, 1, 1, small(rng) % 2, 24)
                           : random_config(rng, small(rng), 1 + small(rng) % 2, 1 + small(rng) % 2, small(rng), 3);
    const Tensor lhs = operand(rng, c.lhs_shape, d, lay(rng)), rhs = operand(rng, c.rhs_shape, d, lay(rng));
    // out: a transposed or negative-stride view of a bigger buffer.
    Tensor out = operand(rng, c.out_shape, d, lay(rng));
    const Tensor before = to_contiguous(s, out);
    const std::complex<double> alpha = is_complex(d) ? std::complex<double>(0.5, -1) : 0.5;
    const std::complex<double> beta = trial % 3 == 0 ? 0.0 : (is_complex(d) ? std::complex<double>(2, 1) : 2.0);
    Scalar sa = is_complex(d) ? Scalar(alpha) : Scalar(alpha.real()), sb = is_complex(d) ? Scalar(beta) : Scalar(beta.real());
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Tensor ref = reference(lhs, rhs, c.dims, c.out_shape, d, alpha, beta, &before);
    dot_general_into(s, lhs, rhs, c.dims, out, sa, sb);
    std::int64_t K = 1;
    for (auto a : c.dims.lhs_contracting) K *= lhs.extent(static_cast<int>(a));
    expect_matches(out, ref, 8 * (K + 4) * epsilon_of(d));
  }
}

// Note [Free axes looped over]: results whose free axes interleave in memory. Each case
// gives the M and N extents, K, a batch extent (0: none), and the storage order of the
// result's axes (result order [M..., N..., B]); the plan either loops over the free axes
// outside its matrix (nb grows by `looped`) or, for thin matrices, computes into a
// temporary.
TEST(DotGeneral, InterleavedOutputsLoopFreeAxesOverGemms) {
  struct Case {
    std::vector<std::int64_t> m, n;
    std::int64_t k, b;
    std::vector<std::int64_t> store;
    int looped;  // -1: computed into a temporary
  };
  const Case cases[] = {
      {{48, 3}, {48, 2}, 5, 2, {0, 2, 1, 3, 4}, 2},   // [m1 n1 m2 n2 b]: M = m1, N = n1
      {{64, 3}, {40, 2}, 4, 0, {2, 0, 3, 1}, 2},      // [n1 m1 n2 m2]: N first (Cᵀ)
      {{8, 6, 3}, {48}, 7, 0, {0, 1, 3, 2}, 1},       // [m1 m2 n1 m3]: M = m1·m2
      {{3, 40}, {50, 3}, 3, 2, {4, 1, 2, 0, 3}, -1},  // [b m2 n1 m1 n2]: no free axis at stride 1
      {{4, 5}, {64, 2}, 6, 0, {0, 2, 1, 3}, -1},      // M = 4: too thin, a temporary
      {{8, 3}, {16, 2}, 40, 1, {0, 2, 1, 3, 4}, -1},  // M = 8, K = 40 > 4·8: a temporary
  };
  CpuBackend backend;
  std::mt19937_64 rng(17);
  HeldSession s = backend.open_session();
  int trial = 0;
  for (const Case& c : cases)
    for (DType d : kInexactDTypes) {
      ++trial;
      const int nm = static_cast<int>(c.m.size()), nn = static_cast<int>(c.n.size()), nb = c.b ? 1 : 0;
      Shape ls, rs, out_shape;
      DotDims dims;
      for (auto e : c.m) ls.push_back(e), out_shape.push_back(e);
      ls.push_back(c.k);
      rs.push_back(c.k);
      for (auto e : c.n) rs.push_back(e), out_shape.push_back(e);
      dims.lhs_contracting = {nm};
      dims.rhs_contracting = {0};
      if (nb) {
        ls.push_back(c.b), rs.push_back(c.b), out_shape.push_back(c.b);
        dims.lhs_batch = {nm + 1};
        dims.rhs_batch = {nn + 1};
      }
      dims.conj_lhs = is_complex(d) && (trial & 1);
      dims.conj_rhs = is_complex(d) && (trial & 2);
      const Tensor lhs = operand(rng, ls, d, trial % 3), rhs = operand(rng, rs, d, (trial + 1) % 3);
      Shape buf_shape;
      Dims to_buffer(static_cast<int>(c.store.size()), 0);
      for (std::size_t j = 0; j < c.store.size(); ++j) {
        buf_shape.push_back(out_shape[static_cast<int>(c.store[j])]);
        to_buffer[static_cast<int>(c.store[j])] = static_cast<std::int64_t>(j);
      }
      const Tensor buffer = random_tensor(rng, buf_shape, d);
      const Tensor out = buffer.permute_view(to_buffer.span());
      ASSERT_EQ(out.shape(), out_shape);
      SCOPED_TRACE("case " + std::to_string(trial) + " " + std::string(dtype_name(d)));
      const bool with_beta = trial % 2 == 0;
      const std::complex<double> alpha = is_complex(d) ? std::complex<double>(0.5, -1) : 0.5;
      const std::complex<double> beta = !with_beta ? 0.0 : (is_complex(d) ? std::complex<double>(2, 1) : 2.0);
      const Scalar sa = is_complex(d) ? Scalar(alpha) : Scalar(alpha.real()), sb = is_complex(d) ? Scalar(beta) : Scalar(beta.real());
      // The plan the call takes.
      detail::DotSignature sig;
      detail::dot_infer("dot_general", lhs.shape().span(), d, rhs.shape().span(), d, dims, sig);
      const detail::DotCall call{"dot_general", &lhs, &rhs, &out, &sig, &dims, &sa, &sb, nullptr};
      detail::DotPlan plan;
      detail::plan_dot(call, plan);
      ASSERT_EQ(plan.path, detail::DotPath::blas);
      EXPECT_EQ(plan.pack_out, c.looped < 0);
      if (c.looped >= 0) {
        EXPECT_EQ(plan.nb, nb + c.looped);
      }
      const Tensor before = to_contiguous(s, out);
      const Tensor ref = reference(lhs, rhs, dims, out_shape, d, alpha, beta, &before);
      dot_general_into(s, lhs, rhs, dims, out, sa, sb);
      expect_matches(out, ref, 8 * (c.k + 4) * epsilon_of(d));
    }
}

// Note [Contracted axes in the larger operand's order]: contracted axes contiguous in
// both operands but in opposite orders: the plan packs the smaller operand.
TEST(DotGeneral, OppositeContractedOrdersPackTheSmallerOperand) {
  CpuBackend backend;
  std::mt19937_64 rng(29);
  HeldSession s = backend.open_session();
  for (DType d : kInexactDTypes)
    for (bool lhs_small : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + (lhs_small ? " lhs small" : " rhs small"));
      const std::int64_t m = lhs_small ? 40 : 300, n = lhs_small ? 300 : 40;
      const Tensor lhs = random_tensor(rng, {4, 3, m}, d), rhs = random_tensor(rng, {3, 4, n}, d);
      const DotDims dims{.lhs_contracting = {0, 1}, .rhs_contracting = {1, 0}};
      const Tensor out = Tensor::zeros({m, n}, d);
      const detail::DotPlan plan = plan_of(lhs, rhs, dims, out, d);
      ASSERT_EQ(plan.path, detail::DotPath::blas);
      EXPECT_EQ(plan.pack_l, lhs_small);
      EXPECT_EQ(plan.pack_r, !lhs_small);
      dot_general_into(s, lhs, rhs, dims, out);
      expect_matches(out, reference(lhs, rhs, dims, {m, n}, d), 8 * 16 * epsilon_of(d));
    }
}

// Note [Free axes in the result's order]: an lhs packed anyway (its contracted axis sits
// between its free ones) is packed with its free axes in the order out stores them, so
// out is written directly: no temporary and no looped GEMMs. The same out with an lhs
// whose contracted axis is last gives the same values, whatever the plan.
TEST(DotGeneral, PackedOperandsTakeTheResultsFreeAxisOrder) {
  CpuBackend backend;
  std::mt19937_64 rng(31);
  HeldSession s = backend.open_session();
  for (DType d : kInexactDTypes)
    for (bool k_in_middle : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + (k_in_middle ? " lhs [m1, k, m2]" : " lhs [m1, m2, k]"));
      const std::int64_t m1 = 24, m2 = 20, k = 9, n = 6;  // n < kLoopMinSide: no looped GEMMs
      const Tensor lhs = k_in_middle ? random_tensor(rng, {m1, k, m2}, d) : random_tensor(rng, {m1, m2, k}, d);
      const Tensor rhs = random_tensor(rng, {k, n}, d);
      const DotDims dims{.lhs_contracting = {k_in_middle ? 1 : 2}, .rhs_contracting = {0}};
      // out [m1, m2, n] stored as [n, m2, m1]: its M axes run in the other order.
      const Tensor buffer = Tensor::zeros({n, m2, m1}, d);
      const Tensor out = buffer.permute_view({2, 1, 0});
      const detail::DotPlan plan = plan_of(lhs, rhs, dims, out, d);
      ASSERT_EQ(plan.path, detail::DotPath::blas);
      if (k_in_middle) {
        EXPECT_TRUE(plan.pack_l);
        EXPECT_FALSE(plan.pack_out);
        EXPECT_EQ(plan.nb, 0);  // one GEMM, no free axis looped over
      }
      dot_general_into(s, lhs, rhs, dims, out);
      expect_matches(out, reference(lhs, rhs, dims, {m1, m2, n}, d), 8 * (k + 4) * epsilon_of(d));
    }
}

// Note [Unmerged free axes looped over]: an operand whose free axes cannot merge is
// read in place, one GEMM per index of the axes that break the merge, when each GEMM
// spares enough copying; otherwise it is packed.
TEST(DotGeneral, UnmergedFreeAxesLoopedOverInsteadOfPacking) {
  struct Case {
    const char* what;
    Shape l, r;
    Dims lc, rc, lb, rb;
    Shape out;
    bool pack_l, pack_r;
    int nb;  // batch axes of the plan (looped ones included)
  };
  const Case cases[] = {
      // rhs [n1, k2, k1, n2]: n2 looped (60 GEMMs of 12 × 12 × 144), the lhs packed in the rhs's K order.
      {"rhs n2 looped", {12, 12, 12}, {12, 12, 12, 60}, {1, 2}, {2, 1}, {}, {}, {12, 12, 60}, true, false, 1},
      // The same with a batch axis both hold.
      {"rhs n2 looped, batch", {12, 12, 12, 3}, {12, 12, 12, 60, 3}, {1, 2}, {2, 1}, {3}, {4}, {12, 12, 60, 3}, true, false, 2},
      // lhs [m1, k1, k2, m2]: m2 looped, the rhs packed.
      {"lhs m2 looped", {12, 12, 12, 60}, {12, 12, 12}, {1, 2}, {1, 0}, {}, {}, {12, 60, 12}, false, true, 1},
      // lhs [m1, k, m2] of 5600 elements: 50 GEMMs of 16 × 12 × 7 would spare too little.
      {"lhs packed", {16, 7, 50}, {7, 12}, {1}, {0}, {}, {}, {16, 50, 12}, true, false, 0},
  };
  CpuBackend backend;
  std::mt19937_64 rng(37);
  HeldSession s = backend.open_session();
  for (const Case& c : cases)
    for (DType d : kInexactDTypes) {
      SCOPED_TRACE(std::string(c.what) + " " + std::string(dtype_name(d)));
      // No conjugation: BLAS reads a conjugated operand only transposed, which would pack it here.
      const DotDims dims{.lhs_contracting = c.lc, .rhs_contracting = c.rc, .lhs_batch = c.lb, .rhs_batch = c.rb};
      const Tensor lhs = random_tensor(rng, c.l, d), rhs = random_tensor(rng, c.r, d), out = random_tensor(rng, c.out, d);
      const detail::DotPlan plan = plan_of(lhs, rhs, dims, out, d);
      ASSERT_EQ(plan.path, detail::DotPath::blas);
      EXPECT_EQ(plan.pack_l, c.pack_l);
      EXPECT_EQ(plan.pack_r, c.pack_r);
      EXPECT_FALSE(plan.pack_out);
      EXPECT_EQ(plan.nb, c.nb);
      Tensor before = Tensor::empty(c.out.span(), d);  // a copy (to_contiguous of a compact out is out itself)
      copy_into(s, out, before);
      const std::complex<double> alpha = is_complex(d) ? std::complex<double>(0.5, -1) : 0.5, beta = 2.0;
      const Scalar sa = is_complex(d) ? Scalar(alpha) : Scalar(alpha.real()), sb(beta.real());
      dot_general_into(s, lhs, rhs, dims, out, sa, sb);
      expect_matches(out, reference(lhs, rhs, dims, c.out, d, alpha, beta, &before), 8 * 150 * epsilon_of(d));
    }
}

// Note [Products split over the session's threads]: products above the threading
// threshold are cut into column (or row) blocks, one single-threaded BLAS call each, on
// the session's workers; the values are those of one thread's call (same BLAS sums).
TEST(DotGeneral, ProductsSplitOverThreadsMatchOneThread) {
  CpuBackendOptions one, two;
  one.num_threads = 1;
  two.num_threads = 2;
  CpuBackend serial(one), parallel(two);
  std::mt19937_64 rng(31);
  struct Case {
    std::int64_t m, k, n, b;
  };
  // Batched: 3 products of 130x257x140 split one by one; 5 of them, 8 of 96^3 and 6 of
  // 64^3 shared out whole (Note [Batches split over the session's threads]).
  const Case cases[] = {{600, 300, 700, 0}, {900, 300, 200, 0}, {130, 257, 140, 3}, {3000, 1500, 1, 0},
                        {130, 257, 140, 5},  {96, 96, 96, 8},    {64, 64, 64, 6}};
  for (DType d : {DType::f64, DType::c128, DType::f32})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n));
      const Shape ls = c.b ? Shape{c.m, c.k, c.b} : Shape{c.m, c.k}, rs = c.b ? Shape{c.k, c.n, c.b} : Shape{c.k, c.n};
      const Tensor l = random_tensor(rng, ls, d), r = random_tensor(rng, rs, d);
      DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}};
      if (c.b) dims.lhs_batch = dims.rhs_batch = {2};
      // A transposed lhs as well: the plan's Cᵀ orientation.
      for (bool transposed : {false, true}) {
        const Tensor lt = transposed ? with_layout(l, Layout::transposed) : l;
        const Tensor a = serial.with_session([&](Session& s) { return dot_general(s, lt, r, dims); });
        const Tensor b = parallel.with_session([&](Session& s) { return dot_general(s, lt, r, dims); });
        expect_matches(b, a, 4 * c.k * epsilon_of(d));
      }
    }
}

// Note [Small products with AVX2]: the small path (AVX2 where the CPU has it, with a
// lhs that is not column-major copied compact first, and double columns of 4 to 16 rows
// in explicit vectors) performs the plain loop's operations in its order, so its values
// are bitwise those of sum_k l[m,k]·r[k,n] accumulated from zero in k order, then
// alpha·sum (+ beta·out), in every dtype.
template <class T>
void expect_plain_loop_values(const Tensor& l, const Tensor& r, const Tensor& got, const Tensor* before, T alpha, T beta) {
  const std::int64_t M = l.extent(0), K = l.extent(1), N = r.extent(1), B = l.extent(2);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t m = 0; m < M; ++m) {
        T acc{};
        for (std::int64_t k = 0; k < K; ++k) acc += l.item<T>({m, k, b}) * r.item<T>({k, n, b});
        const T want = before ? alpha * acc + beta * before->item<T>({m, n, b}) : alpha * acc;
        const T v = got.item<T>({m, n, b});
        ASSERT_EQ(std::memcmp(&v, &want, sizeof(T)), 0) << "m " << m << " n " << n << " b " << b;
      }
}

TEST(DotGeneral, SmallProductsAreBitwiseThePlainLoop) {
  CpuBackend backend;
  std::mt19937_64 rng(23);
  HeldSession s = backend.open_session();
  const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}};
  for (DType d : kInexactDTypes)
    for (std::int64_t M : {1, 3, 4, 5, 8, 12, 13, 16, 64})
      for (std::int64_t N : {1, 3, 7})
        for (std::int64_t K : {1, 5, 16}) {
          if (M * N * K > 4096) continue;
          SCOPED_TRACE(std::string(dtype_name(d)) + " M " + std::to_string(M) + " N " + std::to_string(N) + " K " + std::to_string(K));
          // A compact lhs, and one stored transposed (copied compact by the AVX2 path).
          const Tensor lc = random_tensor(rng, {M, K, 3}, d), r = random_tensor(rng, {K, N, 3}, d);
          const Tensor out0 = random_tensor(rng, {M, N, 3}, d);
          for (const Tensor& l : {lc, with_layout(lc, Layout::transposed)}) {
            auto check = [&]<class T>(T) {
              expect_plain_loop_values<T>(l, r, dot_general(s, l, r, dims), nullptr, T(1), T(0));
              // alpha and beta into a compact and a transposed out (rows not adjacent).
              for (Layout layout : {Layout::contiguous, Layout::transposed}) {
                Tensor copy = Tensor::empty(out0.shape().span(), d);
                copy_into(s, out0, copy);
                const Tensor out = with_layout(copy, layout);
                dot_general_into(s, l, r, dims, out, 0.5, 0.25);
                expect_plain_loop_values<T>(l, r, out, &out0, T(0.5), T(0.25));
              }
            };
            switch (d) {
              case DType::f32: check(float{}); break;
              case DType::f64: check(double{}); break;
              case DType::c64: check(c64{}); break;
              default: check(c128{}); break;
            }
          }
        }
}

TEST(DotGeneral, BetaZeroDoesNotReadOut) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  for (std::int64_t n : {2, 100}) {
    auto a = Tensor::ones({n, n}, DType::f64), x = Tensor::ones({n, 1}, DType::f64);
    auto out = Tensor::full({n, 1}, std::nan(""), DType::f64);
    dot_general_into(s, a, x, DotDims{.lhs_contracting = {1}, .rhs_contracting = {0}}, out);
    EXPECT_EQ(out.item<double>({0, 0}), static_cast<double>(n));
  }
}

TEST(DotGeneral, MixedDtypesPromote) {
  CpuBackend backend;
  std::mt19937_64 rng(3);
  HeldSession s = backend.open_session();
  for (std::int64_t n : {3, 40}) {
    const Tensor a = random_tensor(rng, {n, n}, DType::f32), b = random_tensor(rng, {n, 2}, DType::c128);
    const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}};
    const Tensor got = dot_general(s, a, b, dims);
    EXPECT_EQ(got.dtype(), DType::c128);
    expect_matches(got, reference(a, b, dims, {n, 2}, DType::c128), 1e-5 * n);
  }
}

TEST(DotGeneral, ZeroExtents) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}};
  // K = 0: the product is zero; into with beta scales out.
  auto a = Tensor::zeros({3, 0}, DType::f64), b = Tensor::zeros({0, 2}, DType::f64);
  Tensor c = dot_general(s, a, b, dims);
  EXPECT_EQ(c.shape(), Shape({3, 2}));
  EXPECT_EQ(c.item<double>({2, 1}), 0.0);
  auto out = Tensor::full({3, 2}, 5.0, DType::f64);
  dot_general_into(s, a, b, dims, out, 1.0, 2.0);
  EXPECT_EQ(out.item<double>({1, 1}), 10.0);
  dot_general_into(s, a, b, dims, out, 1.0, 0.0);
  EXPECT_EQ(out.item<double>({1, 1}), 0.0);
  // beta = 0 does not read out: a NaN there must not survive (also through grouped_gemm).
  auto nan_out = Tensor::full({3, 2}, std::numeric_limits<double>::quiet_NaN(), DType::f64);
  dot_general_into(s, a, b, dims, nan_out, 1.0, 0.0);
  EXPECT_EQ(nan_out.item<double>({2, 1}), 0.0);
  auto nan_c = Tensor::full({3, 2}, std::numeric_limits<double>::quiet_NaN(), DType::f64);
  const GemmItem item{.a = &a, .b = &b, .c = &nan_c};
  grouped_gemm(s, std::span(&item, 1));
  EXPECT_EQ(nan_c.item<double>({0, 0}), 0.0);
  // M = 0.
  EXPECT_EQ(dot_general(s, Tensor::zeros({0, 4}, DType::f64), Tensor::zeros({4, 2}, DType::f64), dims).numel(), 0);
}

TEST(Matmul, ShapesAndBatches) {
  CpuBackend backend;
  std::mt19937_64 rng(5);
  HeldSession s = backend.open_session();
  const Tensor a = random_tensor(rng, {3, 4, 5}, DType::f64), b = random_tensor(rng, {4, 2, 5}, DType::f64);
  const Tensor c = matmul(s, a, b);
  EXPECT_EQ(c.shape(), Shape({3, 2, 5}));
  expect_matches(c, reference(a, b, DotDims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}}, {3, 2, 5}, DType::f64), 1e-13);
  const Tensor v = random_tensor(rng, {4}, DType::f64), m = random_tensor(rng, {4, 6}, DType::f64);
  EXPECT_EQ(matmul(s, v, m).shape(), Shape({6}));
  EXPECT_EQ(matmul(s, m.transpose_view(), v).shape(), Shape({6}));
  EXPECT_THROW(matmul(s, a, random_tensor(rng, {4, 2, 6}, DType::f64)), ShapeError);
  EXPECT_THROW(matmul(s, a, random_tensor(rng, {4, 2}, DType::f64).reshape_view({4, 2, 1, 1})), RankError);
}

TEST(DotGeneral, BadInputsAreTypedAndLeaveOutUntouched) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  auto a = Tensor::ones({3, 4}, DType::f64), b = Tensor::ones({4, 2}, DType::f64);
  auto out = Tensor::full({3, 2}, 7.0, DType::f64);
  const auto snap = snapshot(out);
  auto bad = [&](const Tensor& l, const Tensor& r, const DotDims& d, const Tensor& o) { dot_general_into(s, l, r, d, o); };
  const DotDims ok{.lhs_contracting = {1}, .rhs_contracting = {0}};
  EXPECT_THROW(bad(a, Tensor::ones({5, 2}, DType::f64), ok, out), ShapeError);                         // contracting extents differ
  EXPECT_THROW(bad(a, b, DotDims{.lhs_contracting = {1, 1}, .rhs_contracting = {0, 0}}, out), AxisError);  // listed twice
  EXPECT_THROW(bad(a, b, DotDims{.lhs_contracting = {2}, .rhs_contracting = {0}}, out), AxisError);       // out of range
  EXPECT_THROW(bad(a, b, DotDims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {1}, .rhs_batch = {1}}, out), AxisError);  // batch and contracting
  EXPECT_THROW(bad(a, b, DotDims{.lhs_contracting = {1}, .rhs_contracting = {}}, out), ShapeError);       // unpaired
  EXPECT_THROW(bad(Tensor::ones({3, 4, 2}, DType::f64), Tensor::ones({4, 2, 3}, DType::f64),
                   DotDims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}}, Tensor::full({3, 2, 2}, 7.0, DType::f64)),
               ShapeError);  // batch extents differ
  EXPECT_THROW(bad(Tensor::ones({3, 4}, DType::i32), b, ok, out), DTypeError);
  EXPECT_THROW(bad(Tensor::ones({3, 4}, DType::b8), Tensor::ones({4, 2}, DType::b8), ok, out), DTypeError);
  EXPECT_THROW(bad(a, b, ok, Tensor::zeros({2, 3}, DType::f64)), ShapeError);  // wrong out shape
  EXPECT_THROW(bad(a, b, ok, Tensor::zeros({3, 2}, DType::f32)), DTypeError);  // wrong out dtype
  EXPECT_THROW(bad(a, b, ok, Tensor::zeros({3, 1}, DType::f64).broadcast_view({3, 2})), ArgumentError);  // read-only
  EXPECT_THROW(bad(a, b, ok, Tensor()), ArgumentError);
  auto storage = Tensor::ones({4, 4}, DType::f64);
  EXPECT_THROW(dot_general_into(s, storage.slice_view(0, 0, 4).slice_view(1, 0, 3), Tensor::ones({3, 4}, DType::f64), ok,
                                storage.slice_view(0, 0, 4).slice_view(1, 0, 4)),
               ArgumentError);  // out overlaps lhs
  expect_untouched(out, snap);
  EXPECT_THROW(dot_general_into(s, a, b, ok, out, Scalar(std::complex<double>(0, 1))), ArgumentError);  // complex alpha, real out
  expect_untouched(out, snap);
}

TEST(DotGeneral, PlanCacheHitsOnRepeatedHighRankCalls) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  auto a = Tensor::ones({3, 4, 5}, DType::f64), b = Tensor::ones({4, 6, 5}, DType::f64);
  const DotDims d{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}};
  const PlanCacheStats s0 = dot_plan_cache_stats(s);
  for (int i = 0; i < 5; ++i) dot_general(s, a, b, d);
  const PlanCacheStats s1 = dot_plan_cache_stats(s);
  EXPECT_EQ(s1.misses, s0.misses + 1);
  EXPECT_EQ(s1.hits, s0.hits + 4);
  EXPECT_GE(s1.entries, 1u);
}

TEST(GroupedGemm, ManyShapesMatchReferenceSequentialAndParallel) {
  for (int threads : {1, 2}) {
    CpuBackend backend(CpuBackendOptions{.num_threads = threads});
    std::mt19937_64 rng(21);
    HeldSession s = backend.open_session();
    std::vector<Tensor> as, bs, cs, refs;
    std::vector<GemmItem> items;
    const int count = 600;  // enough work to split across threads
    for (int i = 0; i < count; ++i) {
      std::uniform_int_distribution<std::int64_t> e(1, i % 50 == 0 ? 70 : 6);
      const std::int64_t m = e(rng), k = e(rng), n = e(rng);
      const DType d = kInexactDTypes[i % 4];
      as.push_back(random_layout(rng, {m, k}, d, i % 3 == 1 ? Layout::transposed : Layout::contiguous));
      bs.push_back(random_tensor(rng, {k, n}, d));
      cs.push_back(random_tensor(rng, {m, n}, d));
    }
    for (int i = 0; i < count; ++i) {
      const bool cplx = is_complex(as[i].dtype());
      GemmItem it{&as[i], &bs[i], &cs[i], 2.0, i % 2 ? Scalar(0.5) : Scalar(0.0), cplx && i % 3 == 0, cplx && i % 5 == 0};
      items.push_back(it);
      const DotDims d{.lhs_contracting = {1}, .rhs_contracting = {0}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
      refs.push_back(reference(as[i], bs[i], d, cs[i].shape(), as[i].dtype(), 2.0, i % 2 ? 0.5 : 0.0, &cs[i]));
    }
    grouped_gemm(s, items);
    for (int i = 0; i < count; ++i) {
      SCOPED_TRACE("item " + std::to_string(i) + " threads " + std::to_string(threads));
      expect_matches(cs[i], refs[i], 1e-4 * (as[i].extent(1) + 1));
    }
  }
}

TEST(GroupedGemm, ValidatesEveryItemBeforeComputingAny) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  auto a = Tensor::ones({2, 3}, DType::f64), b = Tensor::ones({3, 2}, DType::f64);
  auto c0 = Tensor::full({2, 2}, 9.0, DType::f64), c1 = Tensor::full({2, 2}, 9.0, DType::f64);
  const auto snap0 = snapshot(c0);
  auto bad_b = Tensor::ones({4, 2}, DType::f64);
  std::vector<GemmItem> items{{&a, &b, &c0}, {&a, &bad_b, &c1}};
  EXPECT_THROW(grouped_gemm(s, items), ShapeError);
  expect_untouched(c0, snap0);  // item 0 was valid but nothing ran
  std::vector<GemmItem> same_out{{&a, &b, &c0}, {&a, &b, &c0}};
  EXPECT_THROW(grouped_gemm(s, same_out), ArgumentError);
  std::vector<GemmItem> out_is_operand{{&a, &b, &c0}, {&c0, &c1, &c1}};
  EXPECT_THROW(grouped_gemm(s, out_is_operand), ArgumentError);
  std::vector<GemmItem> null_item{{&a, nullptr, &c0}};
  EXPECT_THROW(grouped_gemm(s, null_item), ArgumentError);
  expect_untouched(c0, snap0);
  grouped_gemm(s, std::span<const GemmItem>());  // empty: nothing to do
}
