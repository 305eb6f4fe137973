#pragma once
// The PEPS norm network shared by examples/mpi_contract.cpp and bench/bench_mpi_scaling.cpp
// (one ket and one bra tensor per site of an lx × ly lattice), the deterministic planner
// setting and the flag parsing both use.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tenferro/tenferro.hpp>

namespace peps_network {

using tenferro::EinsumOptimizer;
using tenferro::PlanOptions;
using tenferro::Shape;

// A label as a UTF-8 code point: a-z, A-Z, then U+0100 onwards.
inline std::string label(int l) {
  if (l < 26) return std::string(1, static_cast<char>('a' + l));
  if (l < 52) return std::string(1, static_cast<char>('A' + l - 26));
  const unsigned cp = 0x100u + static_cast<unsigned>(l - 52);
  return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
}

// Subscripts and shapes of the PEPS norm: one ket and one bra tensor per site, bonds to
// the right and upper neighbours, the physical leg shared by ket and bra.
inline void peps_norm(int lx, int ly, std::int64_t D, std::int64_t d, std::string& subscripts, std::vector<Shape>& shapes) {
  std::vector<std::vector<int>> ket(static_cast<std::size_t>(lx * ly)), bra(ket.size());
  std::vector<std::int64_t> ext;
  auto site = [&](int x, int y) { return static_cast<std::size_t>(y * lx + x); };
  for (int y = 0; y < ly; ++y)
    for (int x = 0; x < lx; ++x) {
      ext.push_back(d);
      ket[site(x, y)].push_back(static_cast<int>(ext.size()) - 1);
      bra[site(x, y)].push_back(static_cast<int>(ext.size()) - 1);
      for (int dir = 0; dir < 2; ++dir) {
        const int nx = x + (dir == 0), ny = y + (dir == 1);
        if (nx >= lx || ny >= ly) continue;
        for (auto* side : {&ket, &bra}) {
          ext.push_back(D);
          const int l = static_cast<int>(ext.size()) - 1;
          (*side)[site(x, y)].push_back(l), (*side)[site(nx, ny)].push_back(l);
        }
      }
    }
  subscripts.clear();
  shapes.clear();
  for (const auto* side : {&ket, &bra})
    for (const auto& t : *side) {
      if (!subscripts.empty()) subscripts += ",";
      Shape sh;
      for (int l : t) subscripts += label(l), sh.push_back(ext[static_cast<std::size_t>(l)]);
      shapes.push_back(sh);
    }
  subscripts += "->";
}

// anneal with a fixed number of trials (seed 1): the same plan on every run and machine;
// trials = 0: the automatic planner (its budget depends on the machine's speed).
inline void set_optimizer(PlanOptions& p, std::int64_t trials) {
  if (trials <= 0) return;
  p.optimizer = EinsumOptimizer::anneal;
  p.max_trials = trials;
  p.time_budget_s = 600;
  p.seed = 1;
}

/// The number after command-line flag `name` ("--threads 2"), or `fallback`.
inline double arg(int argc, char** argv, const char* name, double fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atof(argv[i + 1]);
  return fallback;
}

}  // namespace peps_network
