#pragma once
// Random factor graphs for the planner tests, and their operands with the plain
// reference result (einsum_ref.hpp) for the execution tests.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "einsum/einsum_ref.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro::testing {

/// A uniform integer in [lo, hi].
inline int pick(std::mt19937_64& rng, int lo, int hi) { return static_cast<int>(uniform(rng, lo, hi)); }

/// A random factor graph: `vars` variables (labels, extents 1..4, some open), `factors`
/// factors over 0..3 distinct variables each (a factor over none is a scalar); with
/// `own_labels`, about one factor in five also holds a label of its own (extent 1..3,
/// summed alone).
inline ContractionNetwork factor_graph(std::mt19937_64& rng, int vars, int factors, bool own_labels = false) {
  ContractionNetwork net;
  for (int v = 0; v < vars; ++v) {
    net.extents.push_back(pick(rng, 1, 4));
    if (pick(rng, 0, 4) == 0) net.output.push_back(v);
  }
  for (int f = 0; f < factors; ++f) {
    std::vector<int> labels;
    const int arity = std::min(pick(rng, 0, 3), vars);
    while (static_cast<int>(labels.size()) < arity) {
      const int v = pick(rng, 0, vars - 1);
      if (std::find(labels.begin(), labels.end(), v) == labels.end()) labels.push_back(v);
    }
    if (own_labels && pick(rng, 0, 4) == 0) {
      labels.push_back(static_cast<int>(net.extents.size()));
      net.extents.push_back(pick(rng, 1, 3));
    }
    net.inputs.push_back(labels);
  }
  // An open variable no factor holds is not a network: drop it from the output.
  std::erase_if(net.output, [&](int v) {
    return std::none_of(net.inputs.begin(), net.inputs.end(),
                        [&](const auto& in) { return std::find(in.begin(), in.end(), v) != in.end(); });
  });
  return net;
}

/// The labels of a label bitset (Note [Label bitsets]: 64 labels a word) in increasing
/// order.
inline std::vector<int> set_labels(const std::uint64_t* set, int num_labels) {
  std::vector<int> out;
  for (int l = 0; l < num_labels; ++l)
    if ((set[l / 64] >> (l % 64)) & 1) out.push_back(l);
  return out;
}

/// A random 3-regular graph of n tensors (configuration model, drawn again until
/// simple), bonds of `bond` between them, closed.
inline ContractionNetwork regular_graph(std::mt19937_64& rng, int n, std::int64_t bond) {
  for (;;) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v) stubs.insert(stubs.end(), 3, v);
    std::shuffle(stubs.begin(), stubs.end(), rng);
    std::vector<std::pair<int, int>> edges;
    bool simple = true;
    for (std::size_t i = 0; i + 1 < stubs.size() && simple; i += 2) {
      const std::pair<int, int> e(std::min(stubs[i], stubs[i + 1]), std::max(stubs[i], stubs[i + 1]));
      simple = e.first != e.second && std::find(edges.begin(), edges.end(), e) == edges.end();
      edges.push_back(e);
    }
    if (!simple) continue;
    ContractionNetwork net;
    net.inputs.resize(static_cast<std::size_t>(n));
    for (auto [a, b] : edges) {
      net.inputs[static_cast<std::size_t>(a)].push_back(static_cast<int>(net.extents.size()));
      net.inputs[static_cast<std::size_t>(b)].push_back(static_cast<int>(net.extents.size()));
      net.extents.push_back(bond);
    }
    return net;
  }
}

/// Random operands (values 0.5..1.5) for `net` in einsum's integer form, and the plain
/// reference result.
struct NetworkOperands {
  std::vector<Tensor> ops;
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::int64_t> output;
  std::vector<std::complex<double>> want;
};

inline NetworkOperands network_operands(std::mt19937_64& rng, const ContractionNetwork& net) {
  NetworkOperands r;
  RefExpr ref;
  for (const auto& in : net.inputs) {
    Shape shape;
    for (int l : in) shape.push_back(net.extents[static_cast<std::size_t>(l)]);
    r.ops.push_back(random_tensor(rng, shape, DType::f64, 0.5, 1.5));
    r.labels.emplace_back(in.begin(), in.end());
    ref.inputs.push_back(in);
  }
  ref.output = net.output;
  r.output.assign(net.output.begin(), net.output.end());
  Shape shape;
  r.want = reference_einsum(ref, r.ops, shape);
  return r;
}

}  // namespace tenferro::testing
