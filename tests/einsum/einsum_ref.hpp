#pragma once
// A naive reference einsum for the tests: loops over every assignment of every label and
// accumulates the product of the operands in complex<double>. Independent of the
// library's parser: expressions are given as label lists with ellipsis axes already
// expanded into their own labels.
#include <map>
#include <string>
#include <vector>

#include "support/test_util.hpp"

namespace tenferro::testing {

/// One expression: per operand the label of each axis (any ints), the output labels.
struct RefExpr {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

/// The result in column-major order of the output shape (extents of 1 on an operand
/// axis stretch, as ellipsis broadcasting does).
inline std::vector<std::complex<double>> reference_einsum(const RefExpr& e, const std::vector<Tensor>& ops, Shape& out_shape) {
  std::map<int, std::int64_t> ext;
  for (std::size_t k = 0; k < ops.size(); ++k)
    for (std::size_t a = 0; a < e.inputs[k].size(); ++a) {
      const std::int64_t x = ops[k].extent(static_cast<int>(a));
      auto [it, fresh] = ext.emplace(e.inputs[k][a], x);
      if (!fresh && it->second == 1) it->second = x;
    }
  std::vector<int> labels;
  Shape all;
  for (auto [l, x] : ext) {
    labels.push_back(l);
    all.push_back(x);
  }
  out_shape = Shape();
  for (int l : e.output) out_shape.push_back(ext.at(l));
  std::int64_t out_n = 1;
  for (std::int64_t x : out_shape) out_n *= x;
  std::vector<std::complex<double>> out(static_cast<std::size_t>(out_n));
  std::map<int, int> pos;
  for (std::size_t i = 0; i < labels.size(); ++i) pos[labels[i]] = static_cast<int>(i);
  for_each_index(all, [&](const Dims& idx) {
    std::complex<double> prod = 1.0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      Dims oi;
      for (std::size_t a = 0; a < e.inputs[k].size(); ++a) {
        const std::int64_t v = idx[pos.at(e.inputs[k][a])];
        oi.push_back(ops[k].extent(static_cast<int>(a)) == 1 ? 0 : v);
      }
      prod *= value_at(ops[k], oi);
    }
    std::int64_t off = 0, mul = 1;
    for (std::size_t i = 0; i < e.output.size(); ++i) {
      off += idx[pos.at(e.output[i])] * mul;
      mul *= out_shape[static_cast<int>(i)];
    }
    out[static_cast<std::size_t>(off)] += prod;
  });
  return out;
}

/// Compares `got` with the reference values (column-major), relative to the largest
/// magnitude of the terms' scale.
inline void expect_matches(const Tensor& got, const std::vector<std::complex<double>>& want, double tol, const std::string& what) {
  double scale = 1;
  for (const auto& v : want) scale = std::max(scale, std::abs(v));
  std::int64_t i = 0;
  bool ok = true;
  for_each_index(got.shape(), [&](const Dims& idx) {
    const auto g = value_at(got, idx);
    if (ok && std::abs(g - want[static_cast<std::size_t>(i)]) > tol * scale) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", reference " << want[static_cast<std::size_t>(i)];
      ok = false;
    }
    ++i;
  });
}

}  // namespace tenferro::testing
