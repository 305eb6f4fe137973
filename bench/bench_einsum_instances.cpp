// Real-world check of the contraction-order planners and of execution: for every
// instance of the tenferro benchmark suite (einsum-instances.jsonl, see
// shared/data/README.md) and every optimizer (the suite's own opt_flops path, automatic,
// greedy, anneal with a budget: by default 10 s, the yardstick of issue 15 §1), it
// prepares an EinsumPlan (planning time), runs it on one thread, or --threads N (median
// measured time over about --reps-time seconds of executions after one untimed
// execution, plan after plan; skipped when the largest intermediate exceeds
// --max-elements or the predicted time exceeds --max-exec), and prints a markdown table
// plus, with --json, one JSON object per (instance, optimizer). The last line gives the
// rank correlation of predicted and measured time over all executed rows.
//   build/release/bench/bench_einsum_instances [--data FILE] [--anneal S] [--json OUT]
//       [--only SUBSTRING] [--max-exec S] [--max-elements N] [--reps-time S] [--no-exec]
//       [--seed N] [--auto-seed N] [--generated] [--memory-limit ELEMENTS] [--threads N] [--pool-mb MB]
//       [--optimizers suite,automatic,greedy,anneal[,partition,eliminate,chain]] [--calibrate S | --cost-model TEXT] [--build-reps N]
// --generated replaces the file by generated networks of the kinds users contract (MPS/MPO
// environments with mixed bonds, PEPS norms, random 3-regular graphs, matrix chains, tree
// tensor networks); they have no suite path, so the yardstick is anneal.
// --calibrate S plans and predicts with calibrate_cost_model's fit (S seconds on the
// bench's session), --cost-model with a model in to_string's text form (the shipped
// defaults otherwise); the model used is printed.
// --build-reps N builds each plan but anneal's N more times and records the fastest as
// warm_build_s: the EinsumPlan construction (parse, plan, lay out the steps) once the
// thread's scratch is warm, without the first build's cold caches and allocations.
#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace {

// Minimal JSON: objects, arrays, strings (\uXXXX not needed by the data), numbers, literals.
struct Json {
  enum Kind { null, number, string, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
  const Json& operator[](const std::string& k) const { return fields.at(k); }
};

struct Parser {
  const std::string& s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  Json parse() {
    ws();
    Json j;
    if (s[i] == '{') {
      j.kind = Json::object;
      ++i;
      ws();
      if (s[i] == '}') return ++i, j;
      for (;;) {
        ws();
        std::string key = parse().str;
        ws();
        ++i;  // ':'
        j.fields[key] = parse();
        ws();
        if (s[i++] == '}') return j;
      }
    }
    if (s[i] == '[') {
      j.kind = Json::array;
      ++i;
      ws();
      if (s[i] == ']') return ++i, j;
      for (;;) {
        j.items.push_back(parse());
        ws();
        if (s[i++] == ']') return j;
      }
    }
    if (s[i] == '"') {
      j.kind = Json::string;
      ++i;
      while (s[i] != '"') {
        if (s[i] == '\\') ++i;
        j.str += s[i++];
      }
      ++i;
      return j;
    }
    if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      return j;
    }
    j.kind = Json::number;
    std::size_t used = 0;
    j.num = std::stod(s.substr(i, 32), &used);
    i += used;
    return j;
  }
};

// One UTF-8 code point from `s` at `i`.
std::uint32_t next_code_point(const std::string& s, std::size_t& i) {
  const auto c = static_cast<unsigned char>(s[i++]);
  if (c < 0x80) return c;
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  std::uint32_t cp = c & (0x3F >> extra);
  while (extra-- > 0) cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  return cp;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Row-major subscripts → column-major label lists (integer form: the suite's labels
// include digits, which the string form does not accept): each operand's and the
// output's labels reversed, code points as labels.
struct Labels {
  std::vector<std::vector<std::int64_t>> inputs;
  std::vector<std::int64_t> output;
};
Labels column_major(const std::string& eq) {
  Labels out;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow), rhs = eq.substr(arrow + 2);
  out.inputs.emplace_back();
  for (std::size_t i = 0; i < lhs.size();) {
    if (lhs[i] == ',') {
      out.inputs.emplace_back();
      ++i;
      continue;
    }
    out.inputs.back().push_back(next_code_point(lhs, i));
  }
  for (std::size_t i = 0; i < rhs.size();) out.output.push_back(next_code_point(rhs, i));
  for (auto& in : out.inputs) std::reverse(in.begin(), in.end());
  std::reverse(out.output.begin(), out.output.end());
  return out;
}

constexpr double kHalf[] = {0, 2, 4, 8, 16, 32, 64};

struct Row {
  std::string instance, optimizer, chosen;
  int n = 0;
  double build_s = 0, warm_build_s = -1, plan_s = 0, predicted_s = 0, measured_s = -1, flops = 0, largest = 0;
  std::int64_t slices = 1;
  // The time model's terms of this tree (for bench/fit_einsum_cost_model.py): steps,
  // Σ madds / efficiency for each half extent of kHalf, Σ operand and result bytes.
  double steps = 0, read_bytes = 0, write_bytes = 0;
  std::vector<double> gemm_terms;
  bool executed = false;
  std::string note;
};

// One network to plan and run: column-major integer labels, shapes, and the suite's
// path (empty for generated networks).
struct Case {
  std::string name;
  Labels labels;
  std::vector<tenferro::Shape> shapes;
  std::vector<std::pair<int, int>> path;
};

std::vector<Case> read_cases(std::ifstream& in) {
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Parser p{line};
    const Json j = p.parse();
    Case c;
    c.name = j["name"].str;
    c.labels = column_major(j["eq_rowmajor"].str);
    for (const auto& sh : j["shapes_rowmajor"].items) {
      tenferro::Shape shape;
      for (auto it = sh.items.rbegin(); it != sh.items.rend(); ++it) shape.push_back(static_cast<std::int64_t>(it->num));
      c.shapes.push_back(shape);
    }
    for (const auto& step : j["opt_flops"]["path"].items)
      c.path.emplace_back(static_cast<int>(step.items[0].num), step.items.size() > 1 ? static_cast<int>(step.items[1].num) : -1);
    cases.push_back(std::move(c));
  }
  return cases;
}

// --- generated networks (--generated): the kinds users contract ---------------------

// Builds a case from per-operand label lists over `extents` (label ids are the labels).
struct NetBuilder {
  std::vector<std::int64_t> extents;
  Labels labels;
  int label(std::int64_t extent) {
    extents.push_back(extent);
    return static_cast<int>(extents.size()) - 1;
  }
  Case make(const std::string& name) const {
    Case c;
    c.name = name;
    c.labels = labels;
    for (const auto& in : labels.inputs) {
      tenferro::Shape shape;
      for (std::int64_t l : in) shape.push_back(extents[static_cast<std::size_t>(l)]);
      c.shapes.push_back(shape);
    }
    return c;
  }
};

// <psi|O|psi> of an MPS with bonds drawn in [dlo, dhi] and an MPO of bond w: 3n tensors.
Case mps_mpo(int n, std::int64_t dlo, std::int64_t dhi, std::int64_t d, std::int64_t w, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  NetBuilder b;
  std::vector<int> top(n + 1), mid(n + 1), bot(n + 1);
  for (int i = 0; i <= n; ++i) {
    const bool edge = i == 0 || i == n;
    const std::int64_t D = edge ? 1 : dlo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dhi - dlo + 1));
    top[i] = b.label(D);
    mid[i] = b.label(edge ? 1 : w);
    bot[i] = b.label(D);
  }
  for (int i = 0; i < n; ++i) {
    const int up = b.label(d), down = b.label(d);
    b.labels.inputs.push_back({top[i], up, top[i + 1]});
    b.labels.inputs.push_back({mid[i], up, down, mid[i + 1]});
    b.labels.inputs.push_back({bot[i], down, bot[i + 1]});
  }
  return b.make("mps_mpo_n" + std::to_string(n) + "_D" + std::to_string(dlo) + "-" + std::to_string(dhi) + "_w" + std::to_string(w));
}

// Norm of an lx×ly PEPS of bond D: ket and bra per site, physical legs summed.
Case peps_norm(int lx, int ly, std::int64_t D, std::int64_t d) {
  NetBuilder b;
  auto site = [&](int x, int y) { return static_cast<std::size_t>(y * lx + x); };
  std::vector<std::vector<std::int64_t>> ket(static_cast<std::size_t>(lx * ly)), bra(ket.size());
  for (int y = 0; y < ly; ++y)
    for (int x = 0; x < lx; ++x) {
      const int p = b.label(d);
      ket[site(x, y)].push_back(p);
      bra[site(x, y)].push_back(p);
      for (int dir = 0; dir < 2; ++dir) {
        const int nx = x + (dir == 0), ny = y + (dir == 1);
        if (nx >= lx || ny >= ly) continue;
        const int k = b.label(D), q = b.label(D);
        ket[site(x, y)].push_back(k), ket[site(nx, ny)].push_back(k);
        bra[site(x, y)].push_back(q), bra[site(nx, ny)].push_back(q);
      }
    }
  for (auto& k : ket) b.labels.inputs.push_back(k);
  for (auto& q : bra) b.labels.inputs.push_back(q);
  return b.make("peps_norm_" + std::to_string(lx) + "x" + std::to_string(ly) + "_D" + std::to_string(D));
}

// Random 3-regular graph (configuration model, redrawn until simple), closed.
Case regular_graph(int n, std::int64_t bond, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (;;) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v)
      for (int k = 0; k < 3; ++k) stubs.push_back(v);
    for (std::size_t i = stubs.size(); i > 1; --i) std::swap(stubs[i - 1], stubs[rng() % i]);
    std::vector<std::pair<int, int>> edges;
    bool simple = true;
    for (std::size_t i = 0; i + 1 < stubs.size() && simple; i += 2) {
      const std::pair<int, int> e(std::min(stubs[i], stubs[i + 1]), std::max(stubs[i], stubs[i + 1]));
      simple = e.first != e.second && std::find(edges.begin(), edges.end(), e) == edges.end();
      edges.push_back(e);
    }
    if (!simple) continue;
    NetBuilder b;
    b.labels.inputs.resize(static_cast<std::size_t>(n));
    for (auto [x, y] : edges) {
      const int l = b.label(bond);
      b.labels.inputs[static_cast<std::size_t>(x)].push_back(l);
      b.labels.inputs[static_cast<std::size_t>(y)].push_back(l);
    }
    return b.make("rrg3_n" + std::to_string(n) + "_bond" + std::to_string(bond));
  }
}

// Matrix chain of n matrices with extents in [lo, hi], operands shuffled.
Case matrix_chain(int n, std::int64_t lo, std::int64_t hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  NetBuilder b;
  std::vector<int> dims;
  for (int i = 0; i <= n; ++i) dims.push_back(b.label(lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1))));
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  for (int i : order) b.labels.inputs.push_back({dims[static_cast<std::size_t>(i)], dims[static_cast<std::size_t>(i) + 1]});
  b.labels.output = {dims[0], dims[static_cast<std::size_t>(n)]};
  return b.make("matrix_chain_n" + std::to_string(n));
}

// Binary tree tensor network with 2^levels leaves (physical d, bond chi), 4 legs open.
Case tree_network(int levels, std::int64_t chi, std::int64_t d) {
  NetBuilder b;
  std::vector<int> frontier;
  for (int i = 0; i < (1 << levels); ++i) {
    const int p = b.label(d), up = b.label(chi);
    b.labels.inputs.push_back({p, up});
    if (b.labels.output.size() < 4) b.labels.output.push_back(p);
    frontier.push_back(up);
  }
  while (frontier.size() > 2) {
    std::vector<int> next;
    for (std::size_t i = 0; i + 1 < frontier.size(); i += 2) {
      const int up = b.label(chi);
      b.labels.inputs.push_back({frontier[i], frontier[i + 1], up});
      next.push_back(up);
    }
    frontier = next;
  }
  b.labels.inputs.push_back({frontier[0], frontier[1]});  // the root
  return b.make("ttn_levels" + std::to_string(levels) + "_chi" + std::to_string(chi));
}

std::vector<Case> generated_cases() {
  return {mps_mpo(20, 64, 64, 2, 5, 1),   mps_mpo(30, 8, 96, 2, 4, 2), peps_norm(4, 4, 3, 2), peps_norm(3, 5, 4, 2),
          regular_graph(60, 2, 3),        regular_graph(120, 2, 4),    matrix_chain(60, 20, 300, 5),
          matrix_chain(200, 5, 100, 6),   tree_network(5, 16, 2),      tree_network(7, 8, 2)};
}

const char* optimizer_name(tenferro::EinsumOptimizer o) {
  switch (o) {
    case tenferro::EinsumOptimizer::automatic: return "given";
    case tenferro::EinsumOptimizer::greedy: return "greedy";
    case tenferro::EinsumOptimizer::optimal: return "optimal";
    case tenferro::EinsumOptimizer::anneal: return "anneal";
    case tenferro::EinsumOptimizer::chain: return "chain";
    case tenferro::EinsumOptimizer::eliminate: return "eliminate";
    case tenferro::EinsumOptimizer::partition: return "partition";
  }
  return "?";
}

// Spearman rank correlation (average ranks for ties).
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < idx.size();) {
      std::size_t j = i;
      while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
      for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j)) / 2;
      i = j + 1;
    }
    return r;
  };
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += rx[i] / n, my += ry[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

std::string ms(double s) {
  if (s < 0) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1e-3 ? "%.3f" : s < 1 ? "%.2f" : "%.0f", s * 1e3);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tenferro;
  std::string file = "../shared/data/einsum-instances.jsonl", json_out, only, optimizers;
  double anneal_s = 10.0, max_exec = 10.0, max_elements = 1 << 28, reps_time = 0.5;
  int build_reps = 0;
  bool execute = true, generated = false;
  double memory_limit = 0;  // PlanOptions::max_intermediate_elements for every optimizer
  std::uint64_t seed = 1;
  std::uint64_t auto_seed = 0;  // automatic's PlanOptions::seed (0: what einsum uses)
  int threads = 1;
  double pool_mb = 0;  // 0: CpuBackendOptions' default pool_byte_limit
  double calibrate_s = 0;
  std::string model_text;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--data") file = next();
    else if (a == "--anneal") anneal_s = std::atof(next().c_str());
    else if (a == "--json") json_out = next();
    else if (a == "--only") only = next();
    else if (a == "--optimizers") optimizers = "," + next() + ",";
    else if (a == "--max-exec") max_exec = std::atof(next().c_str());
    else if (a == "--max-elements") max_elements = std::atof(next().c_str());
    else if (a == "--reps-time") reps_time = std::atof(next().c_str());
    else if (a == "--build-reps") build_reps = std::atoi(next().c_str());
    else if (a == "--no-exec") execute = false;
    else if (a == "--generated") generated = true;
    else if (a == "--memory-limit") memory_limit = std::atof(next().c_str());
    else if (a == "--seed") seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--auto-seed") auto_seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--pool-mb") pool_mb = std::atof(next().c_str());
    else if (a == "--calibrate") calibrate_s = std::atof(next().c_str());
    else if (a == "--cost-model") model_text = next();
    else file = a;  // the old positional form
  }
  std::ifstream in(file);
  if (!generated && !in) {
    std::fprintf(stderr, "cannot open %s\n", file.c_str());
    return 1;
  }
  CpuBackendOptions bo;
  bo.num_threads = threads;
  if (pool_mb > 0) bo.pool_byte_limit = static_cast<std::size_t>(pool_mb * (1 << 20));
  CpuBackend backend(bo);
  HeldSession s = backend.open_session();
  const CostModel model = calibrate_s > 0 ? calibrate_cost_model(s, calibrate_s) : parse_cost_model(model_text);
  std::printf("cost model: %s\n", to_string(model).c_str());
  std::vector<Row> rows;
  // Which kernels OpenBLAS runs: a CPU model it does not know gets its generic ones
  // (docs/benchmarks.md, 2026-12-06 second sitting; OPENBLAS_CORETYPE overrides).
  std::printf("BLAS kernels: OpenBLAS %s\n\n", openblas_get_corename());
  std::printf("| instance | n | suite exec ms | auto (choice) planning ms | auto exec ms | auto planning+exec / best | greedy exec ms | anneal %.3g s exec ms | predicted ms: suite / auto / greedy / anneal |\n", anneal_s);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<Case> cases = generated ? generated_cases() : read_cases(in);
  std::mt19937_64 rng(1);
  for (const Case& c : cases) {
    const std::string& name = c.name;
    if (!only.empty() && name.find(only) == std::string::npos) continue;
    const Labels& labels = c.labels;
    const std::vector<Shape>& shapes = c.shapes;
    const std::vector<std::pair<int, int>>& path = c.path;
    std::vector<DType> dtypes;
    std::vector<Tensor> ops;
    for (const Shape& shape : shapes) {
      dtypes.push_back(DType::f64);
      Tensor t = Tensor::empty(shape.span(), DType::f64);
      auto* d = t.mutable_data_ptr<double>();
      std::uniform_real_distribution<double> u(0.5, 1.0);
      for (std::int64_t k = 0; k < t.numel(); ++k) d[k] = u(rng);
      ops.push_back(t);
    }
    const int n = static_cast<int>(ops.size());
    std::map<std::string, Row> by;
    struct Run {
      std::unique_ptr<EinsumPlan> plan;
      Tensor out;
      std::vector<double> times;
      std::string which;
    };
    std::vector<Run> runs;
    for (const char* which : {"suite", "automatic", "greedy", "anneal", "partition", "eliminate", "chain"}) {
      // partition, eliminate and chain run only when asked for (--optimizers).
      const bool asked_only = std::string(which) == "partition" || std::string(which) == "eliminate" || std::string(which) == "chain";
      if (optimizers.empty() ? asked_only
                             : optimizers.find(std::string(",") + which + ",") == std::string::npos)
        continue;
      EinsumOptions o;
      o.plan.cost_model = model;
      o.plan.max_intermediate_elements = memory_limit;
      const std::string w = which;
      if (w == "suite") {
        if (path.empty()) continue;  // generated networks have no suite path
        o.path = path;
      }
      else if (w == "automatic") o.plan.seed = auto_seed;
      else if (w == "greedy") o.plan.optimizer = EinsumOptimizer::greedy;
      else if (w == "partition") o.plan.optimizer = EinsumOptimizer::partition;
      else if (w == "eliminate") o.plan.optimizer = EinsumOptimizer::eliminate;
      else if (w == "chain") o.plan.optimizer = EinsumOptimizer::chain;  // refused (a row with a note) off chains
      else if (w == "anneal") {
        if (n <= 3) continue;
        o.plan.optimizer = EinsumOptimizer::anneal;
        o.plan.time_budget_s = anneal_s;
        o.plan.seed = seed;
        o.plan.progress = [](const PlanProgress&) {};
      }
      Row r;
      r.instance = name;
      r.optimizer = w;
      r.n = n;
      const auto t0 = std::chrono::steady_clock::now();
      std::unique_ptr<EinsumPlan> plan;
      try {
        plan = std::make_unique<EinsumPlan>(labels.inputs, std::span<const std::int64_t>(labels.output), shapes, dtypes, o);
      } catch (const std::exception& e) {
        r.note = e.what();
        std::fprintf(stderr, "%s / %s: %s\n", name.c_str(), which, e.what());
        by[w] = r;
        continue;
      }
      r.build_s = seconds_since(t0);
      for (int i = 0; i < build_reps && w != "anneal"; ++i) {
        const auto t1 = std::chrono::steady_clock::now();
        plan = std::make_unique<EinsumPlan>(labels.inputs, std::span<const std::int64_t>(labels.output), shapes, dtypes, o);
        const double t = seconds_since(t1);
        if (r.warm_build_s < 0 || t < r.warm_build_s) r.warm_build_s = t;
      }
      const auto& info = plan->path();
      r.plan_s = info.planning_seconds;
      r.chosen = optimizer_name(info.optimizer);
      r.predicted_s = info.cost.predicted_seconds;
      r.flops = info.cost.flops;
      r.largest = info.cost.largest_intermediate;
      r.slices = info.num_slices;
      r.steps = static_cast<double>(std::max(n - 1, 0)) * static_cast<double>(info.num_slices);
      auto term = [&](const CostModel& m) {
        EinsumOptions t;
        t.tree = info.tree;
        t.plan.cost_model = m;
        return EinsumPlan(labels.inputs, std::span<const std::int64_t>(labels.output), shapes, dtypes, t).path().cost.predicted_seconds;
      };
      CostModel only;
      only.step_seconds = 0;
      only.gemm_rate = 1e300;
      only.bytes_rate = 1;
      only.element_bytes = 8;
      only.read_factor = 1;
      only.write_factor = 0;
      r.read_bytes = term(only);
      only.read_factor = 0;
      only.write_factor = 1;
      r.write_bytes = term(only);
      only.write_factor = 0;
      only.bytes_rate = 1e300;
      only.gemm_rate = 1;
      for (double h : kHalf) {
        only.gemm_half_extent = h;
        r.gemm_terms.push_back(term(only));
      }
      if (execute && r.largest <= max_elements && r.predicted_s <= max_exec) {
        Tensor out = Tensor::empty(plan->output_shape().span(), DType::f64);
        runs.push_back({std::move(plan), std::move(out), {}, w});
        r.executed = true;
      } else if (execute) {
        r.note = "not run (largest intermediate or predicted time above the caps)";
      }
      by[w] = r;
    }
    // Each plan's executions run one after the other: one untimed execution, then timed
    // ones for about --reps-time seconds; the median per plan. The first execution finds
    // the buffer pool cold, as a sweep does only once (Note [Pool limit follows the
    // peak]; on this VM a first execution of gm_queen5_5_3 spent 0.4-4.5 s in the kernel
    // faulting in its 2.2 GB of intermediates). Rounds interleaving the plans (until
    // 2026-12-07) made plans of different intermediates evict each other's cached blocks
    // on every round, which a repeated contraction does not do.
    if (!runs.empty()) {
      for (Run& x : runs) {
        x.plan->execute_into(s, ops, x.out);
        const auto start = std::chrono::steady_clock::now();
        do {
          const auto t1 = std::chrono::steady_clock::now();
          x.plan->execute_into(s, ops, x.out);
          x.times.push_back(seconds_since(t1));
        } while (seconds_since(start) < reps_time && x.times.size() < 50);
      }
      for (Run& x : runs) {
        std::sort(x.times.begin(), x.times.end());
        by[x.which].measured_s = x.times[x.times.size() / 2];
      }
    }
    for (const char* w : {"suite", "automatic", "greedy", "anneal", "partition", "eliminate", "chain"})
      if (by.count(w)) rows.push_back(by[w]);
    const Row& a = by["automatic"];
    double best = -1;
    for (const char* w : {"suite", "anneal"})
      if (by.count(w) && by[w].executed && (best < 0 || by[w].measured_s < best)) best = by[w].measured_s;
    char ratio[32] = "–";
    if (a.executed && best > 0) std::snprintf(ratio, sizeof ratio, "%.2f", (a.plan_s + a.measured_s) / best);
    auto exec = [&](const char* w) { return by.count(w) ? ms(by[w].measured_s) : std::string("–"); };
    auto pred = [&](const char* w) { return by.count(w) && !by[w].chosen.empty() ? ms(by[w].predicted_s) : std::string("–"); };
    const std::string preds = pred("suite") + " / " + pred("automatic") + " / " + pred("greedy") + " / " + pred("anneal");
    std::printf("| %s | %d | %s | %s (%s) | %s | %s | %s | %s | %s |\n", name.c_str(), n, exec("suite").c_str(),
                ms(a.plan_s).c_str(), a.chosen.c_str(), ms(a.measured_s).c_str(), ratio, exec("greedy").c_str(),
                exec("anneal").c_str(), preds.c_str());
    std::fflush(stdout);
  }
  std::vector<double> px, mx;
  for (const Row& r : rows)
    if (r.executed) px.push_back(r.predicted_s), mx.push_back(r.measured_s);
  if (px.size() > 2) std::printf("\nrank correlation (Spearman) of predicted and measured time over %zu runs: %.3f\n", px.size(), spearman(px, mx));
  if (!json_out.empty()) {
    std::FILE* f = std::fopen(json_out.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_out.c_str());
      return 1;
    }
    std::fprintf(f, "[\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::string terms;
      for (std::size_t k = 0; k < r.gemm_terms.size(); ++k) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.6g", k ? ", " : "", r.gemm_terms[k]);
        terms += buf;
      }
      std::string note;
      for (char c : r.note) note += c == '"' || c == '\\' ? ' ' : c;
      std::fprintf(f,
                   "  {\"instance\": \"%s\", \"n\": %d, \"optimizer\": \"%s\", \"chosen\": \"%s\", \"build_s\": %.6g, \"warm_build_s\": %.6g, \"plan_s\": %.6g, "
                   "\"predicted_s\": %.6g, \"measured_s\": %.6g, \"flops\": %.6g, \"largest_intermediate\": %.6g, "
                   "\"slices\": %lld, \"steps\": %.6g, \"read_bytes\": %.6g, \"write_bytes\": %.6g, \"gemm_terms\": [%s], "
                   "\"executed\": %s, \"note\": \"%s\"}%s\n",
                   r.instance.c_str(), r.n, r.optimizer.c_str(), r.chosen.c_str(), r.build_s, r.warm_build_s, r.plan_s, r.predicted_s, r.measured_s,
                   r.flops, r.largest, static_cast<long long>(r.slices), r.steps, r.read_bytes, r.write_bytes, terms.c_str(),
                   r.executed ? "true" : "false", note.c_str(),
                   i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
