// einsum against a naive reference: random expressions (ranks up to 6, repeated labels,
// labels summed in one operand, ellipsis with broadcasting, zero extents, mixed real and
// complex dtypes, every operand layout) and hand-picked cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "einsum/einsum_ref.hpp"
#include "tenferro/einsum.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::einsum_test {
namespace {

using testing::expect_matches;
using testing::RefExpr;
using testing::reference_einsum;

constexpr int kEll = 1000;  // reference label of ellipsis axis d: kEll + d

struct Case {
  std::string subscripts;
  RefExpr ref;
  std::vector<Tensor> ops;
  std::vector<std::vector<std::int64_t>> int_labels;  // integer form (empty when ellipsis)
  std::optional<std::vector<std::int64_t>> int_output;
};

Case random_case(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  Case c;
  const int n = pick(1, 4);
  const int pool = pick(1, 6);
  std::vector<std::int64_t> ext(static_cast<std::size_t>(pool));
  for (auto& x : ext) x = coin(0.04) ? 0 : pick(1, 3);
  const int E = coin(0.3) ? pick(1, 2) : 0;
  std::vector<std::int64_t> ell_ext(static_cast<std::size_t>(E));
  for (auto& x : ell_ext) x = pick(1, 3);
  const DType dtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};
  std::vector<int> count(static_cast<std::size_t>(pool), 0);
  int used_ell = 0;
  bool any_ell = false;
  for (int k = 0; k < n; ++k) {
    const int named = pick(0, 4);
    std::vector<int> labels;
    for (int i = 0; i < named; ++i) {
      // Sometimes repeat a label of this operand (diagonals).
      labels.push_back(!labels.empty() && coin(0.15) ? labels[static_cast<std::size_t>(pick(0, static_cast<int>(labels.size()) - 1))]
                                                      : pick(0, pool - 1));
    }
    const bool ell = E > 0 && coin(0.7);
    const int ell_count = ell ? std::min(pick(0, E), 6 - named) : 0;
    const int ell_at = pick(0, named);
    std::string sub;
    Shape shape;
    std::vector<int> ref_labels;
    for (int i = 0; i <= named; ++i) {
      if (ell && i == ell_at) {
        sub += "...";
        any_ell = true;
        for (int d = 0; d < ell_count; ++d) {
          shape.push_back(coin(0.3) ? 1 : ell_ext[static_cast<std::size_t>(d)]);
          ref_labels.push_back(kEll + d);
        }
        used_ell = std::max(used_ell, ell_count);
      }
      if (i == named) break;
      const int l = labels[static_cast<std::size_t>(i)];
      sub += static_cast<char>('a' + l);
      shape.push_back(ext[static_cast<std::size_t>(l)]);
      ref_labels.push_back('a' + l);
      ++count[static_cast<std::size_t>(l)];
    }
    c.subscripts += (k ? "," : "") + sub;
    c.ref.inputs.push_back(ref_labels);
    const auto layout = testing::kAllLayouts[pick(0, 3)];
    c.ops.push_back(testing::random_layout(rng, shape, dtypes[pick(0, 3)], layout, -1, 1));
    if (!ell) c.int_labels.emplace_back(labels.begin(), labels.end());
  }
  if (any_ell) c.int_labels.clear();
  if (coin(0.3)) {  // implicit output: labels occurring once, ascending, then ellipsis axes
    for (int l = 0; l < pool; ++l)
      if (count[static_cast<std::size_t>(l)] == 1) c.ref.output.push_back('a' + l);
    for (int d = 0; d < used_ell; ++d) c.ref.output.push_back(kEll + d);
  } else {
    std::vector<int> present;
    for (int l = 0; l < pool; ++l)
      if (count[static_cast<std::size_t>(l)] > 0 && coin(0.6)) present.push_back(l);
    std::shuffle(present.begin(), present.end(), rng);
    const bool ell_out = any_ell && coin(0.7);
    const int ell_at = pick(0, static_cast<int>(present.size()));
    std::string out = "->";
    std::vector<std::int64_t> iout;
    for (int i = 0; i <= static_cast<int>(present.size()); ++i) {
      if (ell_out && i == ell_at) {
        out += "...";
        for (int d = 0; d < used_ell; ++d) c.ref.output.push_back(kEll + d);
      }
      if (i == static_cast<int>(present.size())) break;
      out += static_cast<char>('a' + present[static_cast<std::size_t>(i)]);
      c.ref.output.push_back('a' + present[static_cast<std::size_t>(i)]);
      iout.push_back(present[static_cast<std::size_t>(i)]);
    }
    c.subscripts += out;
    c.int_output = iout;
  }
  return c;
}

double tolerance(const std::vector<Tensor>& ops) {
  for (const Tensor& t : ops)
    if (t.dtype() == DType::f32 || t.dtype() == DType::c64) return 2e-5;
  return 1e-12;
}

TEST(Einsum, RandomExpressionsMatchTheReference) {
  std::mt19937_64 rng(2026);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  int checked = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Case c = random_case(rng);
    SCOPED_TRACE(c.subscripts);
    Shape shape;
    const auto want = reference_einsum(c.ref, c.ops, shape);
    const double tol = tolerance(c.ops);
    Tensor got;
    try {
      got = einsum(s, c.subscripts, c.ops);
    } catch (const std::exception& e) {
      FAIL() << c.subscripts << ": " << e.what();
    }
    ASSERT_EQ(got.shape(), shape);
    expect_matches(got, want, tol, "einsum");
    // Into a transposed (row-major) buffer.
    Shape rev = shape;
    std::reverse(rev.begin(), rev.end());
    Dims perm(shape.size(), 0);
    for (int i = 0; i < shape.size(); ++i) perm[i] = shape.size() - 1 - i;
    const Tensor out = Tensor::full(rev, 7.0, got.dtype()).permute_view(perm);
    einsum_into(s, c.subscripts, c.ops, out);
    expect_matches(out, want, tol, "einsum_into");
    // The integer form of the same expression.
    if (!c.int_labels.empty()) {
      const Tensor gi = einsum(s, c.ops, c.int_labels, c.int_output ? std::optional(std::span<const std::int64_t>(*c.int_output)) : std::nullopt);
      expect_matches(gi, want, tol, "integer form");
    }
    // A prepared plan.
    const EinsumPlan plan = EinsumPlan::for_operands(c.subscripts, c.ops);
    expect_matches(plan.execute(s, c.ops), want, tol, "prepared");
    ++checked;
  }
  EXPECT_EQ(checked, 600);
}

/// A named expression, its operand shapes and the reference's form of it.
struct Named {
  const char* subs;
  std::vector<Shape> shapes;
  RefExpr ref;
};

TEST(Einsum, NamedCasesMatchTheReference) {
  std::mt19937_64 rng(7);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const int i = 'i', j = 'j', k = 'k', l = 'l', b = 'b';
  const std::vector<Named> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}, {{{i, j}, {j, k}}, {i, k}}},
      {"ij,jk", {{3, 4}, {4, 5}}, {{{i, j}, {j, k}}, {i, k}}},
      {"ij,jk->ki", {{3, 4}, {4, 5}}, {{{i, j}, {j, k}}, {k, i}}},
      {"ii->", {{4, 4}}, {{{i, i}}, {}}},
      {"ii->i", {{4, 4}}, {{{i, i}}, {i}}},
      {"iij->ij", {{3, 3, 2}}, {{{i, i, j}}, {i, j}}},
      {"ij->ji", {{3, 5}}, {{{i, j}}, {j, i}}},
      {"ij->", {{3, 5}}, {{{i, j}}, {}}},
      {"i,j->ij", {{3}, {4}}, {{{i}, {j}}, {i, j}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}, {{{i, j}, {i, j}}, {i, j}}},
      {"ij,ij->", {{3, 4}, {3, 4}}, {{{i, j}, {i, j}}, {}}},
      {"ijb,jkb->ikb", {{2, 3, 4}, {3, 5, 4}}, {{{i, j, b}, {j, k, b}}, {i, k, b}}},
      {"bij,bjk->bik", {{4, 2, 3}, {4, 3, 5}}, {{{b, i, j}, {b, j, k}}, {b, i, k}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {{{i, j}, {j, k}, {k, l}}, {i, l}}},
      {"(ij,jk),kl->il", {{2, 3}, {3, 4}, {4, 5}}, {{{i, j}, {j, k}, {k, l}}, {i, l}}},
      {"ij,(jk,kl)->il", {{2, 3}, {3, 4}, {4, 5}}, {{{i, j}, {j, k}, {k, l}}, {i, l}}},
      {"ij,jk,ki->", {{2, 3}, {3, 4}, {4, 2}}, {{{i, j}, {j, k}, {k, i}}, {}}},
      {"ijk,jl->il", {{2, 3, 4}, {3, 5}}, {{{i, j, k}, {j, l}}, {i, l}}},  // k summed first
      {",ij->ij", {{}, {2, 3}}, {{{}, {i, j}}, {i, j}}},
      {"ij...,jk...->ik...", {{2, 3, 4}, {3, 2, 4}}, {{{i, j, kEll}, {j, k, kEll}}, {i, k, kEll}}},
      {"ij...,jk...->ik...", {{2, 3, 1}, {3, 2, 4}}, {{{i, j, kEll}, {j, k, kEll}}, {i, k, kEll}}},
      {"...ij->...", {{2, 3, 4}}, {{{kEll, i, j}}, {kEll}}},
      {"ijk,ijk,ijk->k", {{2, 2, 3}, {2, 2, 3}, {2, 2, 3}}, {{{i, j, k}, {i, j, k}, {i, j, k}}, {k}}},
      {"ij,jk->ik", {{0, 4}, {4, 5}}, {{{i, j}, {j, k}}, {i, k}}},
      {"ij,jk->ik", {{3, 0}, {0, 5}}, {{{i, j}, {j, k}}, {i, k}}},
      {"αβ,βγ->αγ", {{2, 3}, {3, 4}}, {{{i, j}, {j, k}}, {i, k}}},
  };
  for (const auto& nc : cases) {
    SCOPED_TRACE(nc.subs);
    for (DType d : {DType::f64, DType::c128, DType::f32}) {
      std::vector<Tensor> ops;
      for (const auto& sh : nc.shapes) ops.push_back(testing::random_tensor(rng, sh, d, -1, 1));
      Shape shape;
      const auto want = reference_einsum(nc.ref, ops, shape);
      const Tensor got = einsum(s, nc.subs, ops);
      ASSERT_EQ(got.shape(), shape);
      expect_matches(got, want, d == DType::f32 ? 1e-5 : 1e-12, dtype_name(d).data());
    }
  }
}

// Note [Einsum broadcast products]: products big enough whose reused operand is walked
// out of stride order read a compact copy of it; the results equal the reference over
// dtypes, operand layouts and output layouts (einsum_into a permuted or strided view).
TEST(Einsum, BroadcastProductsReadReusedOperandsInTheResultsOrder) {
  std::mt19937_64 rng(31);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const int t = 't', j = 'j', k = 'k', o = 'o', i = 'i', a = 'a', b = 'b', c = 'c', d = 'd';
  const std::vector<Named> cases = {
      {"tjk,to->tokj", {{8, 4, 8}, {8, 64}}, {{{t, j, k}, {t, o}}, {t, o, k, j}}},     // A packed (reuse 64)
      {"i,jk->kij", {{64}, {16, 32}}, {{{i}, {j, k}}, {k, i, j}}},                    // B packed (reuse 64)
      {"tkj,to->tokj", {{8, 8, 4}, {8, 64}}, {{{t, k, j}, {t, o}}, {t, o, k, j}}},     // walked in order: no copy
      {"ab,c,d->dcba", {{8, 8}, {16}, {32}}, {{{a, b}, {c}, {d}}, {d, c, b, a}}},     // an intermediate product too
  };
  for (const auto& nc : cases) {
    SCOPED_TRACE(nc.subs);
    for (DType dt : {DType::f64, DType::c128, DType::f32})
      for (auto layout : {testing::Layout::contiguous, testing::Layout::transposed, testing::Layout::negative_stride}) {
        std::vector<Tensor> ops;
        for (const auto& sh : nc.shapes) ops.push_back(testing::random_layout(rng, sh, dt, layout, -1, 1));
        Shape shape;
        const auto want = reference_einsum(nc.ref, ops, shape);
        const double tol = dt == DType::f32 ? 1e-5 : 1e-12;
        expect_matches(einsum(s, nc.subs, ops), want, tol, std::string(dtype_name(dt)) + " " + testing::layout_name(layout));
        for (int variant = 1; variant < 4; ++variant) {  // transposed, reversed, every other element
          const Tensor out = testing::out_view(rng, shape, dt, variant);
          einsum_into(s, nc.subs, ops, out);
          expect_matches(out, want, tol, std::string(dtype_name(dt)) + " into variant " + std::to_string(variant));
        }
      }
  }
}

TEST(Einsum, ParenthesesPathAndTreeFixTheOrder) {
  std::mt19937_64 rng(9);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::vector<Tensor> ops = {testing::random_tensor(rng, {2, 30}, DType::f64), testing::random_tensor(rng, {30, 40}, DType::f64),
                                   testing::random_tensor(rng, {40, 3}, DType::f64)};
  const Tensor want = matmul(s, matmul(s, ops[0], ops[1]), ops[2]);
  const Shape shapes[] = {{2, 30}, {30, 40}, {40, 3}};
  const DType dts[] = {DType::f64, DType::f64, DType::f64};
  const EinsumPlan left("(ij,jk),kl->il", shapes, dts);
  EXPECT_EQ(left.path().tree.steps, (std::vector<std::pair<int, int>>{{0, 1}, {3, 2}}));
  const EinsumPlan right("ij,(jk,kl)->il", shapes, dts);
  EXPECT_EQ(right.path().tree.steps, (std::vector<std::pair<int, int>>{{1, 2}, {0, 3}}));
  EinsumOptions by_path;
  by_path.path = {{1, 2}, {0, 1}};
  const EinsumPlan p2("ij,jk,kl->il", shapes, dts, by_path);
  EXPECT_EQ(p2.path().tree.steps, (std::vector<std::pair<int, int>>{{1, 2}, {0, 3}}));
  EinsumOptions by_tree;
  by_tree.tree = ContractionTree{{{0, 2}, {3, 1}}};
  for (const EinsumPlan* p : {&left, &right, &p2}) {
    const Tensor got = p->execute(s, ops);
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(got.item<double>({a, c}), want.item<double>({a, c}), 1e-10);
  }
  const Tensor outer_first = einsum(s, "ij,jk,kl->il", ops, by_tree);  // (0·2) is an outer product
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(outer_first.item<double>({a, c}), want.item<double>({a, c}), 1e-10);
}

TEST(Einsum, IntegerFormHandlesManyLabels) {
  // A chain of 40 matrices: 41 distinct labels, more than the string form's letters.
  std::mt19937_64 rng(11);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const int n = 40;
  std::vector<Tensor> ops;
  std::vector<std::vector<std::int64_t>> labels;
  for (int k = 0; k < n; ++k) {
    ops.push_back(testing::random_tensor(rng, {2, 2}, DType::f64, -1, 1));
    labels.push_back({100 + k, 100 + k + 1});
  }
  const std::vector<std::int64_t> out = {100, 100 + n};
  const Tensor got = einsum(s, ops, labels, std::span<const std::int64_t>(out));
  Tensor want = ops[0];
  for (int k = 1; k < n; ++k) want = matmul(s, want, ops[static_cast<std::size_t>(k)]);
  // Products of many random matrices shrink or grow geometrically: compare relative to
  // the result's largest entry.
  auto expect_close = [](const Tensor& got, const Tensor& want) {
    double scale = 0;
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 2; ++c) scale = std::max(scale, std::abs(want.item<double>({a, c})));
    ASSERT_GT(scale, 0);
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 2; ++c) EXPECT_NEAR(got.item<double>({a, c}), want.item<double>({a, c}), 1e-12 * scale);
  };
  expect_close(got, want);
  // 81 labels whose keys differ only in high bits (multiples of 2^40, in shuffled order):
  // the label table beyond 24 labels hashes them, collides and grows twice.
  const int m = 80;
  std::vector<std::int64_t> keys(m + 1);
  for (int k = 0; k <= m; ++k) keys[static_cast<std::size_t>(k)] = (std::int64_t{k} + 1) << 40;
  std::shuffle(keys.begin() + 1, keys.end() - 1, rng);
  std::vector<Tensor> ops2;
  std::vector<std::vector<std::int64_t>> labels2;
  for (int k = 0; k < 2 * m; ++k) {
    ops2.push_back(testing::random_tensor(rng, {2, 2}, DType::f64, -1, 1));
    // Matrices 2j and 2j+1 share both labels (a Hadamard product), so each label is
    // looked up several times.
    labels2.push_back({keys[static_cast<std::size_t>(k / 2)], keys[static_cast<std::size_t>(k / 2) + 1]});
  }
  const std::vector<std::int64_t> out2 = {keys.front(), keys.back()};
  const Tensor got2 = einsum(s, ops2, labels2, std::span<const std::int64_t>(out2));
  Tensor want2 = mul(s, ops2[0], ops2[1]);
  for (int k = 1; k < m; ++k)
    want2 = matmul(s, want2, mul(s, ops2[static_cast<std::size_t>(2 * k)], ops2[static_cast<std::size_t>(2 * k + 1)]));
  expect_close(got2, want2);
}

TEST(Einsum, PreparedPlanRunsOnNewDataAndAnyStrides) {
  std::mt19937_64 rng(13);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const Shape shapes[] = {{3, 4}, {4, 5}};
  const DType dts[] = {DType::f64, DType::f64};
  const EinsumPlan plan("ij,jk->ik", shapes, dts);
  EXPECT_EQ(plan.output_shape(), (Shape{3, 5}));
  EXPECT_EQ(plan.output_dtype(), DType::f64);
  for (auto layout : testing::kAllLayouts) {
    const Tensor a = testing::random_layout(rng, {3, 4}, DType::f64, layout), b = testing::random_layout(rng, {4, 5}, DType::f64, layout);
    const Tensor want = matmul(s, a, b);
    const Tensor got = plan.execute(s, {a, b});
    const Tensor into = Tensor::zeros({3, 5}, DType::f64);
    plan.execute_into(s, {a, b}, into);
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 5; ++y) {
        EXPECT_NEAR(got.item<double>({x, y}), want.item<double>({x, y}), 1e-12);
        EXPECT_NEAR(into.item<double>({x, y}), want.item<double>({x, y}), 1e-12);
      }
  }
}

TEST(Einsum, EinsumPathReportsTheCostOfTheTree) {
  const Shape shapes[] = {{2, 3}, {3, 4}, {4, 5}};
  EinsumOptions o;
  o.path = {{0, 1}, {0, 1}};
  const EinsumPathInfo info = einsum_path("ij,jk,kl->il", shapes, o);
  // The second pair names positions in the current list [operand 2, node 3].
  EXPECT_EQ(info.tree.steps, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
  // (ij,jk): 2·3·4 = 24 products, result 2·4; then (ik,kl): 2·4·5 = 40, result 2·5.
  EXPECT_DOUBLE_EQ(info.cost.flops, 64);
  EXPECT_DOUBLE_EQ(info.cost.largest_intermediate, 10);
  EXPECT_DOUBLE_EQ(info.cost.elements_written, 18);
}

// Note [Empty einsum]: an operand without elements gives zeros (or an empty result)
// without running the steps, whose intermediates could be far larger than the result:
// here the leaf sum of ij over j would have 2^59 elements (the fuzz input
// crash-empty-operand-huge-leaf-sum).
TEST(Einsum, EmptyOperandGivesZerosWithoutHugeIntermediates) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  const std::int64_t huge = std::int64_t{1} << 59;
  const Tensor a = Tensor::zeros({huge, 0}, DType::f64);  // ij: no element
  const Tensor b = Tensor::ones({2, 2}, DType::f64);      // kk
  const Tensor c = Tensor::ones({2, 0}, DType::f64);      // kl
  EXPECT_EQ(einsum(s, "ij,kk,kl->il", {a, b, c}).shape(), (Shape{huge, 0}));
  // The empty label summed: zeros of the output's shape and the promoted dtype.
  const Tensor x = Tensor::ones({3, 0}, DType::f64), y = Tensor::ones({0, 4}, DType::c128), z = Tensor::ones({4, 5}, DType::f64);
  for (const char* subs : {"ij,jk,kl->il", "ij,jk,kl->li", "ij,jk,kl->i", "ij,jk,kl->"}) {
    const Tensor got = einsum(s, subs, {x, y, z});
    EXPECT_EQ(got.dtype(), DType::c128) << subs;
    testing::for_each_index(got.shape(), [&](const Dims& i) { EXPECT_EQ(testing::value_at(got, i), 0.0) << subs; });
  }
  // Into a caller's buffer that held other values: overwritten with zeros.
  const Tensor into = Tensor::full({5, 3}, 7.0, DType::c128);
  einsum_into(s, "ij,jk,kl->li", {x, y, z}, into);
  testing::for_each_index(into.shape(), [&](const Dims& i) { EXPECT_EQ(testing::value_at(into, i), 0.0); });
}

}  // namespace
}  // namespace tenferro::einsum_test
