// Real-world check of the contraction-order planners and of execution: for every
// instance of the tenferro benchmark suite (einsum-instances.jsonl, see
// shared/data/README.md) and every optimizer (the suite's own opt_flops path, automatic,
// greedy, anneal with a budget), it prepares an EinsumPlan (planning time), runs it on
// one thread (median measured time; skipped when the largest intermediate exceeds
// --max-elements or the predicted time exceeds --max-exec), and prints a markdown table
// plus, with --json, one JSON object per (instance, optimizer). The last line gives the
// rank correlation of predicted and measured time over all executed rows.
//   build/release/bench/bench_einsum_instances [--data FILE] [--anneal S] [--json OUT]
//       [--only SUBSTRING] [--max-exec S] [--max-elements N] [--reps-time S] [--no-exec]
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
  double build_s = 0, plan_s = 0, predicted_s = 0, measured_s = -1, flops = 0, largest = 0;
  std::int64_t slices = 1;
  // The time model's terms of this tree (for bench/fit_einsum_cost_model.py): steps,
  // Σ madds / efficiency for each half extent of kHalf, Σ operand and result bytes.
  double steps = 0, read_bytes = 0, write_bytes = 0;
  std::vector<double> gemm_terms;
  bool executed = false;
  std::string note;
};

const char* optimizer_name(tenferro::EinsumOptimizer o) {
  switch (o) {
    case tenferro::EinsumOptimizer::automatic: return "given";
    case tenferro::EinsumOptimizer::greedy: return "greedy";
    case tenferro::EinsumOptimizer::optimal: return "optimal";
    case tenferro::EinsumOptimizer::anneal: return "anneal";
    case tenferro::EinsumOptimizer::chain: return "chain";
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
  std::string file = "../shared/data/einsum-instances.jsonl", json_out, only;
  double anneal_s = 2.0, max_exec = 10.0, max_elements = 1 << 28, reps_time = 0.5;
  bool execute = true;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--data") file = next();
    else if (a == "--anneal") anneal_s = std::atof(next().c_str());
    else if (a == "--json") json_out = next();
    else if (a == "--only") only = next();
    else if (a == "--max-exec") max_exec = std::atof(next().c_str());
    else if (a == "--max-elements") max_elements = std::atof(next().c_str());
    else if (a == "--reps-time") reps_time = std::atof(next().c_str());
    else if (a == "--no-exec") execute = false;
    else if (a == "--seed") seed = std::strtoull(next().c_str(), nullptr, 10);
    else file = a;  // the old positional form
  }
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", file.c_str());
    return 1;
  }
  CpuBackendOptions bo;
  bo.num_threads = 1;
  CpuBackend backend(bo);
  HeldSession s = backend.open_session();
  std::vector<Row> rows;
  std::printf("| instance | n | suite exec ms | auto (choice) planning ms | auto exec ms | auto planning+exec / best | greedy exec ms | anneal %.3g s exec ms | predicted ms: suite / auto / greedy / anneal |\n", anneal_s);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::string line;
  std::mt19937_64 rng(1);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Parser p{line};
    const Json j = p.parse();
    const std::string name = j["name"].str;
    if (!only.empty() && name.find(only) == std::string::npos) continue;
    const Labels labels = column_major(j["eq_rowmajor"].str);
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    std::vector<Tensor> ops;
    for (const auto& sh : j["shapes_rowmajor"].items) {
      Shape shape;
      for (auto it = sh.items.rbegin(); it != sh.items.rend(); ++it) shape.push_back(static_cast<std::int64_t>(it->num));
      shapes.push_back(shape);
      dtypes.push_back(DType::f64);
      Tensor t = Tensor::empty(shape.span(), DType::f64);
      auto* d = t.mutable_data_ptr<double>();
      std::uniform_real_distribution<double> u(0.5, 1.0);
      for (std::int64_t k = 0; k < t.numel(); ++k) d[k] = u(rng);
      ops.push_back(t);
    }
    const int n = static_cast<int>(ops.size());
    std::vector<std::pair<int, int>> path;
    for (const auto& step : j["opt_flops"]["path"].items)
      path.emplace_back(static_cast<int>(step.items[0].num), step.items.size() > 1 ? static_cast<int>(step.items[1].num) : -1);
    std::map<std::string, Row> by;
    for (const char* which : {"suite", "automatic", "greedy", "anneal"}) {
      EinsumOptions o;
      const std::string w = which;
      if (w == "suite") o.path = path;
      else if (w == "greedy") o.plan.optimizer = EinsumOptimizer::greedy;
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
        rows.push_back(r);
        by[w] = r;
        continue;
      }
      r.build_s = seconds_since(t0);
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
        const Tensor out = Tensor::empty(plan->output_shape().span(), DType::f64);
        std::vector<double> times;
        const auto start = std::chrono::steady_clock::now();
        if (r.predicted_s < 0.05) plan->execute_into(s, ops, out);  // warm the pool
        do {
          const auto t1 = std::chrono::steady_clock::now();
          plan->execute_into(s, ops, out);
          times.push_back(seconds_since(t1));
        } while (seconds_since(start) < reps_time && times.size() < 50);
        std::sort(times.begin(), times.end());
        r.measured_s = times[times.size() / 2];
        r.executed = true;
      } else if (execute) {
        r.note = "not run (largest intermediate or predicted time above the caps)";
      }
      rows.push_back(r);
      by[w] = r;
    }
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
                   "  {\"instance\": \"%s\", \"n\": %d, \"optimizer\": \"%s\", \"chosen\": \"%s\", \"build_s\": %.6g, \"plan_s\": %.6g, "
                   "\"predicted_s\": %.6g, \"measured_s\": %.6g, \"flops\": %.6g, \"largest_intermediate\": %.6g, "
                   "\"slices\": %lld, \"steps\": %.6g, \"read_bytes\": %.6g, \"write_bytes\": %.6g, \"gemm_terms\": [%s], "
                   "\"executed\": %s, \"note\": \"%s\"}%s\n",
                   r.instance.c_str(), r.n, r.optimizer.c_str(), r.chosen.c_str(), r.build_s, r.plan_s, r.predicted_s, r.measured_s,
                   r.flops, r.largest, static_cast<long long>(r.slices), r.steps, r.read_bytes, r.write_bytes, terms.c_str(),
                   r.executed ? "true" : "false", note.c_str(),
                   i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
