// Intermediate layouts (Note [Intermediate layouts] in src/einsum/layout.cpp): an MPS
// inner product zipped against its site tensors' storage order stores each environment
// so the next step reads it in place (its contracted labels one block, in the order the
// site tensor holds them), and gives the reference's values; on random networks and
// random trees, programs with permuted intermediates give the reference's values.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "einsum/einsum_ref.hpp"
#include "einsum/program.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::einsum_layout_test {
namespace {

using detail::einsum::Step;
using testing::expect_matches;
using testing::random_tensor;
using testing::reference_einsum;
using testing::RefExpr;

struct Network {
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::int64_t> output;
  std::vector<Shape> shapes;
};

EinsumProgram build(const Network& net, const std::vector<std::pair<int, int>>& path, DType dtype) {
  detail::einsum::Parsed parsed;
  detail::einsum::parse_labels(EinsumLabels(net.labels), std::span<const std::int64_t>(net.output), parsed);
  EinsumProgram p;
  p.shapes = net.shapes;
  p.dtypes.assign(net.shapes.size(), dtype);
  EinsumOptions o;
  o.path = path;
  detail::einsum::build_program(parsed, o, false, p);
  return p;
}

// Every node's label ids in storage order: leaves as prepared, intermediates as stored.
std::vector<Dims> storage_orders(const EinsumProgram& p) {
  std::vector<Dims> nodes;
  for (const auto& leaf : p.leaves) nodes.push_back(leaf.node_labels);
  for (const Step& st : p.steps) {
    Dims order = st.labels;
    if (!st.last && !st.out_identity)
      for (int i = 0; i < st.labels.size(); ++i) order[static_cast<int>(st.out_perm[i])] = st.labels[i];
    nodes.push_back(order);
  }
  return nodes;
}

// Whether `pos` (axis positions) are consecutive once sorted.
bool consecutive(std::vector<std::int64_t> pos) {
  std::sort(pos.begin(), pos.end());
  for (std::size_t i = 1; i < pos.size(); ++i)
    if (pos[i] != pos[i - 1] + 1) return false;
  return true;
}

// ⟨ψ|φ⟩ of two open-boundary MPS of `sites` sites: bra tensors [l_i, l_{i+1}, p_i],
// ket tensors [m_i, m_{i+1}, p_i] (the end tensors lack their outer bond), bonds 16 and
// 17, physical extent 3 (labels: l_i = i, m_i = 100 + i, p_i = 200 + i).
Network mps_inner_product(int sites) {
  Network net;
  for (int side = 0; side < 2; ++side)
    for (int i = 0; i < sites; ++i) {
      const std::int64_t bond = side ? 100 : 0, extent = side ? 17 : 16;
      std::vector<std::int64_t> l;
      Shape sh;
      if (i > 0) l.push_back(bond + i), sh.push_back(extent);
      if (i + 1 < sites) l.push_back(bond + i + 1), sh.push_back(extent);
      l.push_back(200 + i);
      sh.push_back(3);
      net.labels.push_back(l);
      net.shapes.push_back(sh);
    }
  return net;
}

RefExpr ref_expr(const Network& net) {
  RefExpr e;
  for (const auto& l : net.labels) e.inputs.emplace_back(l.begin(), l.end());
  e.output.assign(net.output.begin(), net.output.end());
  return e;
}

// The network contracted along a linear path one pair at a time with the plain
// reference loop (each pair's loop is small where the whole network's is not).
std::vector<std::complex<double>> pairwise_reference(const Network& net, const std::vector<std::pair<int, int>>& path,
                                                     std::vector<Tensor> ops) {
  std::vector<std::vector<int>> labels;
  for (const auto& l : net.labels) labels.emplace_back(l.begin(), l.end());
  const std::vector<int> output(net.output.begin(), net.output.end());
  for (const auto& [a, b] : path) {
    std::vector<int> kept;
    for (int x : {a, b})
      for (int id : labels[static_cast<std::size_t>(x)]) {
        bool needed = std::find(output.begin(), output.end(), id) != output.end();
        for (std::size_t k = 0; k < labels.size(); ++k)
          if (static_cast<int>(k) != a && static_cast<int>(k) != b)
            needed |= std::find(labels[k].begin(), labels[k].end(), id) != labels[k].end();
        if (needed && std::find(kept.begin(), kept.end(), id) == kept.end()) kept.push_back(id);
      }
    Shape shape;
    const auto values = reference_einsum({{labels[static_cast<std::size_t>(a)], labels[static_cast<std::size_t>(b)]}, kept},
                                         {ops[static_cast<std::size_t>(a)], ops[static_cast<std::size_t>(b)]}, shape);
    for (int x : {std::max(a, b), std::min(a, b)}) {
      labels.erase(labels.begin() + x);
      ops.erase(ops.begin() + x);
    }
    labels.push_back(kept);
    ops.push_back(Tensor::from_data<std::complex<double>>(shape.span(), values));
  }
  Shape shape;
  return reference_einsum({labels, output}, ops, shape);
}

TEST(EinsumLayout, MpsZippedAgainstStorageOrderReadsEnvironmentsInPlace) {
  constexpr int kSites = 5;
  const Network net = mps_inner_product(kSites);
  // Right to left: the last bra and ket tensors, then per site the environment times
  // the bra tensor (over its right bond, the middle axis), then times the ket tensor.
  // Linear path positions: the operand list shrinks, the result goes last.
  std::vector<std::pair<int, int>> path;
  path.emplace_back(kSites - 1, 2 * kSites - 1);
  for (int i = kSites - 2; i >= 0; --i) {
    // Live: bra 0..i, ket 0..i, the environment last.
    path.emplace_back(i, 2 * i + 2);      // bra i · environment
    path.emplace_back(2 * i, 2 * i + 1);  // ket i (now at 2i) · that result
  }
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(7);
  for (DType d : {DType::f64, DType::c128}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const EinsumProgram p = build(net, path, d);
    const std::vector<Dims> nodes = storage_orders(p);
    int checked = 0;
    for (const Step& st : p.steps) {
      if (!st.dot) continue;
      // The ket step: an environment (intermediate) against a ket tensor (leaf).
      const int x = st.a >= p.n ? st.a : st.b, y = st.a >= p.n ? st.b : st.a;
      if (x < p.n || y >= p.n || st.dims.lhs_contracting.size() < 2) continue;
      const Dims& xk = x == st.a ? st.dims.lhs_contracting : st.dims.rhs_contracting;
      const Dims& yk = x == st.a ? st.dims.rhs_contracting : st.dims.lhs_contracting;
      ASSERT_TRUE(consecutive({yk.begin(), yk.end()}));  // the ket tensor holds {m, p} as one block
      std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
      for (int j = 0; j < xk.size(); ++j) pairs.emplace_back(yk[j], xk[j]);
      std::sort(pairs.begin(), pairs.end());
      std::vector<std::int64_t> xs;
      for (const auto& pr : pairs) xs.push_back(pr.second);
      EXPECT_TRUE(consecutive(xs) && std::is_sorted(xs.begin(), xs.end()))
          << "step (" << st.a << ", " << st.b << "): the environment " << nodes[static_cast<std::size_t>(x)].to_string()
          << " does not hold the contracted labels as the ket tensor " << nodes[static_cast<std::size_t>(y)].to_string()
          << " does";
      ++checked;
    }
    EXPECT_EQ(checked, kSites - 1);
    std::vector<Tensor> ops;
    for (const Shape& sh : net.shapes) ops.push_back(random_tensor(rng, sh, d));
    const auto want = pairwise_reference(net, path, ops);
    EinsumOptions o;
    o.path = path;
    const Tensor got = einsum(s, ops, EinsumLabels(net.labels), std::span<const std::int64_t>(net.output), o);
    expect_matches(got, want, 1e-12, "MPS zipped right to left");
  }
}

// Random networks of 4-7 operands (2-4 labels each, extents 1-4, some labels kept in
// the output), contracted along random linear paths, against the reference: programs
// that store intermediates permuted must give the same values.
TEST(EinsumLayout, RandomNetworksWithPermutedIntermediatesMatchTheReference) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  std::mt19937_64 rng(11);
  int permuted = 0, total = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 4), num_labels = n + 2 + static_cast<int>(rng() % 4);
    std::vector<std::int64_t> extent(static_cast<std::size_t>(num_labels));
    for (auto& e : extent) e = 1 + static_cast<std::int64_t>(rng() % 4);
    Network net;
    std::vector<int> holders(static_cast<std::size_t>(num_labels), 0);
    for (int k = 0; k < n; ++k) {
      const int rank = 2 + static_cast<int>(rng() % 3);
      std::vector<std::int64_t> l;
      while (static_cast<int>(l.size()) < rank) {
        const std::int64_t id = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(num_labels));
        if (std::find(l.begin(), l.end(), id) == l.end()) l.push_back(id);
      }
      Shape sh;
      for (auto id : l) sh.push_back(extent[static_cast<std::size_t>(id)]), ++holders[static_cast<std::size_t>(id)];
      net.labels.push_back(l);
      net.shapes.push_back(sh);
    }
    for (int id = 0; id < num_labels; ++id)
      if (holders[static_cast<std::size_t>(id)] == 1 || (holders[static_cast<std::size_t>(id)] > 1 && rng() % 5 == 0))
        net.output.push_back(id);
    std::shuffle(net.output.begin(), net.output.end(), rng);
    std::vector<std::pair<int, int>> path;
    for (int live = n; live > 1; --live) {
      const int a = static_cast<int>(rng() % static_cast<std::uint64_t>(live));
      int b = static_cast<int>(rng() % static_cast<std::uint64_t>(live - 1));
      if (b >= a) ++b;
      path.emplace_back(a, b);
    }
    const DType d = trial % 3 == 0 ? DType::c128 : DType::f64;
    const EinsumProgram p = build(net, path, d);
    bool any = false;
    for (const Step& st : p.steps) any |= !st.last && !st.out_identity;
    permuted += any;
    ++total;
    std::vector<Tensor> ops;
    for (const Shape& sh : net.shapes) ops.push_back(random_tensor(rng, sh, d));
    Shape shape;
    const auto want = reference_einsum(ref_expr(net), ops, shape);
    EinsumOptions o;
    o.path = path;
    const Tensor got = einsum(s, ops, EinsumLabels(net.labels), std::span<const std::int64_t>(net.output), o);
    expect_matches(got, want, 1e-12, "trial " + std::to_string(trial));
  }
  // The layouts are exercised: some programs store an intermediate permuted (most of
  // these small networks have nothing to gain).
  EXPECT_GE(permuted, 5) << permuted << " of " << total;
}

}  // namespace
}  // namespace tenferro::einsum_layout_test
