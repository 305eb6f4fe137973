// Real-world check of the contraction-order planners: plans every instance of the
// tenferro benchmark suite (einsum-instances.jsonl, see shared/data/README.md) with
// greedy, optimal (up to 16 operands) and anneal, and prints log10 flops next to the
// suite's opt_einsum metadata (`opt_flops.log10_flops`) and to our cost of the suite's
// own path. A table printer, not a Google Benchmark (planning quality, not speed).
//   build/release/bench/bench_einsum_instances [path/to/einsum-instances.jsonl] [anneal seconds]
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tenferro/einsum_path.hpp"

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

// Row-major equation and shapes → network. Labels repeated within an operand count once
// (einsum takes the diagonal first); label order within operands does not matter here.
tenferro::ContractionNetwork to_network(const std::string& eq, const Json& shapes) {
  tenferro::ContractionNetwork net;
  std::map<std::uint32_t, int> ids;
  std::size_t i = 0;
  int operand = 0, axis = 0;
  bool output = false;
  net.inputs.emplace_back();
  auto label = [&](std::uint32_t cp, std::int64_t extent) {
    auto [it, fresh] = ids.emplace(cp, static_cast<int>(ids.size()));
    if (fresh) net.extents.push_back(extent);
    return it->second;
  };
  while (i < eq.size()) {
    if (eq[i] == ',') {
      ++i, ++operand, axis = 0;
      net.inputs.emplace_back();
      continue;
    }
    if (eq[i] == '-' && i + 1 < eq.size() && eq[i + 1] == '>') {
      i += 2;
      output = true;
      continue;
    }
    const std::uint32_t cp = next_code_point(eq, i);
    if (output) {
      net.output.push_back(ids.at(cp));
    } else {
      const auto extent = static_cast<std::int64_t>(shapes.items[operand].items[axis++].num);
      const int l = label(cp, extent);
      auto& in = net.inputs.back();
      if (std::find(in.begin(), in.end(), l) == in.end()) in.push_back(l);
    }
  }
  return net;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "../shared/data/einsum-instances.jsonl";
  const double anneal_s = argc > 2 ? std::atof(argv[2]) : 2.0;
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "cannot open %s\n", file.c_str());
    return 1;
  }
  std::printf("| instance | n | suite log10 | our cost of suite path | greedy | optimal | anneal (%.0f s) |\n", anneal_s);
  std::printf("|---|---|---|---|---|---|---|\n");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Parser p{line};
    const Json j = p.parse();
    const auto net = to_network(j["eq_rowmajor"].str, j["shapes_rowmajor"]);
    const int n = static_cast<int>(net.inputs.size());
    const Json& path_json = j["opt_flops"]["path"];
    std::vector<std::pair<int, int>> path;
    for (const auto& step : path_json.items) {
      path.emplace_back(static_cast<int>(step.items[0].num),
                        step.items.size() > 1 ? static_cast<int>(step.items[1].num) : -1);
    }
    const double suite = j["opt_flops"]["log10_flops"].num;
    const double ours_of_suite =
        std::log10(tenferro::contraction_cost(net, tenferro::ContractionTree::from_linear_path(n, path)).flops);
    auto run = [&](tenferro::EinsumOptimizer opt) {
      tenferro::PlanOptions o;
      o.optimizer = opt;
      o.time_budget_s = anneal_s;
      o.seed = 1;
      o.progress = [](const tenferro::PlanProgress&) {};
      const auto t0 = std::chrono::steady_clock::now();
      const auto tree = tenferro::plan_contraction(net, o);
      const double dt = seconds_since(t0);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.4f (%.3g ms)", std::log10(tenferro::contraction_cost(net, tree).flops), dt * 1e3);
      return std::string(buf);
    };
    const std::string greedy = run(tenferro::EinsumOptimizer::greedy);
    const std::string optimal = n <= 16 ? run(tenferro::EinsumOptimizer::optimal) : "–";
    const std::string anneal = n > 10 ? run(tenferro::EinsumOptimizer::anneal) : "= optimal";
    std::printf("| %s | %d | %.4f | %.4f | %s | %s | %s |\n", j["name"].str.c_str(), n, suite, ours_of_suite,
                greedy.c_str(), optimal.c_str(), anneal.c_str());
    std::fflush(stdout);
  }
  return 0;
}
