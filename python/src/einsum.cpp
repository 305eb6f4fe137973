// einsum (NumPy's string and interleaved integer forms), einsum_path, prepared plans
// (tenferro.EinsumPlan) and matmul. A NumPy term's labels are the C++ term's labels
// reversed (Note [Reversed axes] in bind.hpp); the output is always made explicit, as
// NumPy's implicit rule (sorted labels, ellipsis first) reverses to no C++ rule.
#include <algorithm>
#include <map>
#include <sstream>

#include "fastcall.hpp"

namespace tfpy {

namespace {

using Tokens = std::vector<std::string>;  // one label (a UTF-8 character) or "..." each

Tokens tokenize(std::string_view term, const char* op) {
  Tokens out;
  for (std::size_t i = 0; i < term.size();) {
    if (term.compare(i, 3, "...") == 0) {
      out.emplace_back("...");
      i += 3;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(term[i]);
    if (c == '.' || c == '(' || c == ')' || c == '-' || c == '>')
      throw tenferro::ArgumentError(op, "invalid character '" + std::string(1, term[i]) + "' in subscripts");
    std::size_t len = 1;  // a UTF-8 sequence stays one label; the C++ parser validates it
    while (i + len < term.size() && (static_cast<unsigned char>(term[i + len]) & 0xC0) == 0x80) ++len;
    out.emplace_back(term.substr(i, len));
    i += len;
  }
  return out;
}

void append_reversed(std::string& out, const Tokens& t) {
  for (auto it = t.rbegin(); it != t.rend(); ++it) out += *it;
}

// NumPy subscripts as the C++ subscripts of the same contraction over the reversed axes.
std::string cpp_subscripts(std::string_view numpy, const char* op) {
  std::string s;
  for (char c : numpy)
    if (c != ' ') s += c;
  const auto arrow = s.find("->");
  const std::string_view lhs = std::string_view(s).substr(0, arrow);
  std::vector<Tokens> inputs;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    inputs.push_back(tokenize(lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start), op));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  Tokens output;
  if (arrow != std::string::npos) {
    output = tokenize(std::string_view(s).substr(arrow + 2), op);
  } else {  // NumPy's implicit output: "..." first, then the labels seen once, sorted
    std::map<std::string, int> count;
    bool ellipsis = false;
    for (const Tokens& t : inputs)
      for (const std::string& l : t) {
        if (l == "...") ellipsis = true;
        else ++count[l];
      }
    if (ellipsis) output.emplace_back("...");
    for (const auto& [l, n] : count)
      if (n == 1) output.push_back(l);
  }
  std::string out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) out += ',';
    append_reversed(out, inputs[i]);
  }
  out += "->";
  append_reversed(out, output);
  return out;
}

// The label of NumPy's integer form as a subscript letter (NumPy's limit: 52 labels).
char label_letter(py::handle h, const char* op) {
  const auto v = h.cast<std::int64_t>();
  if (v < 0 || v >= 52) throw tenferro::ArgumentError(op, "integer label " + std::to_string(v) + " is outside [0, 52)");
  return static_cast<char>(v < 26 ? 'a' + v : 'A' + (v - 26));
}

std::string sublist_term(py::handle sub, const char* op) {
  std::string t;
  for (py::handle h : sub) t += h.is(py::ellipsis()) ? std::string("...") : std::string(1, label_letter(h, op));
  return t;
}

// einsum's positional arguments as NumPy subscripts and operands: either
// (subscripts, op0, op1, ...) or the interleaved (op0, sub0, op1, sub1, ..., [out]).
struct Call {
  std::string subscripts;  // NumPy's
  std::vector<Tensor> operands;       // the values (of recorded operands too)
  std::vector<py::handle> handles;    // the arguments, for the recorded form
  const ad::EagerTensor* recorded = nullptr;  // the first recorded operand, if any

  void add(py::handle h, const char* op) {
    handles.push_back(h);
    const ad::EagerTensor* e = as_eager(h);
    if (is_active(e) && !recorded) recorded = e;
    operands.push_back(e ? e->value() : tensor_arg(h, op));
  }
};

Call parse_call(PyObject* const* args, std::size_t nargs, std::size_t first, const char* op) {
  Call c;
  if (nargs <= first) throw tenferro::ArgumentError(op, "no subscripts and operands given");
  if (PyUnicode_Check(args[first])) {
    Py_ssize_t len = 0;
    const char* text = PyUnicode_AsUTF8AndSize(args[first], &len);
    if (!text) throw py::error_already_set();
    c.subscripts.assign(text, static_cast<std::size_t>(len));
    for (std::size_t i = first + 1; i < nargs; ++i) c.add(args[i], op);
    return c;
  }
  const std::size_t n = nargs - first;
  std::string lhs;
  for (std::size_t i = 0; i + 1 < n; i += 2) {
    c.add(args[first + i], op);
    if (i) lhs += ',';
    lhs += sublist_term(args[first + i + 1], op);
  }
  c.subscripts = lhs;
  if (n % 2 == 1) c.subscripts += "->" + sublist_term(args[nargs - 1], op);
  return c;
}
Call parse_call(const py::args& args, std::size_t first, const char* op) {
  return parse_call(&PyTuple_GET_ITEM(args.ptr(), 0), args.size(), first, op);
}

tenferro::EinsumOptions options_from(py::handle optimize, py::handle memory_limit, const char* op,
                                     py::handle cost_model = py::none()) {
  tenferro::EinsumOptions o;
  if (!memory_limit.is_none()) o.plan.max_intermediate_elements = memory_limit.cast<double>();
  // The text form of tenferro::to_string (calibrate_cost_model returns one).
  if (!cost_model.is_none()) o.plan.cost_model = tenferro::parse_cost_model(cost_model.cast<std::string>());
  if (optimize.is_none() || PyBool_Check(optimize.ptr())) return o;  // the automatic default
  if (py::isinstance<py::str>(optimize)) {
    const auto name = optimize.cast<std::string>();
    using E = tenferro::EinsumOptimizer;
    static const std::map<std::string, E> kNames = {{"auto", E::automatic}, {"automatic", E::automatic},
                                                    {"greedy", E::greedy},  {"optimal", E::optimal},
                                                    {"anneal", E::anneal},  {"chain", E::chain},
                                                    {"eliminate", E::eliminate}, {"partition", E::partition}};
    const auto it = kNames.find(name);
    if (it == kNames.end())
      throw tenferro::ArgumentError(op, "optimize='" + name + "' is not one of auto, greedy, optimal, anneal, chain, eliminate, partition");
    o.plan.optimizer = it->second;
    return o;
  }
  for (py::handle step : optimize) {  // a path, as einsum_path returns it
    if (py::isinstance<py::str>(step)) continue;  // the leading 'einsum_path'
    const auto pos = step.cast<std::vector<int>>();
    if (pos.size() == 1) o.path.emplace_back(pos[0], -1);
    else if (pos.size() == 2) o.path.emplace_back(pos[0], pos[1]);
    else
      throw tenferro::ArgumentError(op, "path steps must contract one or two operands (got " + std::to_string(pos.size()) + ")");
  }
  return o;
}

bool big(const std::vector<Tensor>& ops) {
  std::int64_t n = 0;
  for (const Tensor& t : ops) n += t.numel();
  return n >= kReleaseGilElements;
}

// The integer labels of C++ subscript terms (the operands' then the output's; cpp_subscripts
// gives the output explicitly). The recorded einsum takes only these: an ellipsis, which
// Note [Reversed axes] puts first in C++ order, becomes labels aligned at the first axis.
std::pair<std::vector<std::vector<std::int64_t>>, std::vector<std::int64_t>> integer_labels(
    const std::vector<Tokens>& terms, std::span<const ad::EagerTensor> xs, const char* op) {
  std::map<std::string, std::int64_t> ids;
  std::int64_t ellipsis_rank = 0;
  const auto labels_of = [&](const Tokens& t, std::int64_t rank) {
    std::vector<std::int64_t> l;
    for (const std::string& tok : t) {
      if (tok != "...") {
        l.push_back(ids.try_emplace(tok, static_cast<std::int64_t>(ids.size()) + 1000).first->second);
        continue;
      }
      const std::int64_t n = rank - static_cast<std::int64_t>(t.size()) + 1;
      if (n < 0) throw tenferro::ShapeError(op, "operand has fewer axes than its subscripts");
      ellipsis_rank = std::max(ellipsis_rank, n);
      for (std::int64_t j = 0; j < n; ++j) l.push_back(j);
    }
    return l;
  };
  std::vector<std::vector<std::int64_t>> in;
  for (std::size_t i = 0; i + 1 < terms.size(); ++i) {
    if (i >= xs.size()) throw tenferro::ArgumentError(op, "more subscript terms than operands");
    in.push_back(labels_of(terms[i], xs[i].rank()));
  }
  const Tokens& out_terms = terms.back();
  const std::int64_t explicit_out =
      static_cast<std::int64_t>(std::count_if(out_terms.begin(), out_terms.end(), [](const std::string& t) { return t != "..."; }));
  return {std::move(in), labels_of(out_terms, explicit_out + ellipsis_rank)};
}

// The recorded einsum (Note [Eager arguments] in ad.cpp): the operands' tape order.
py::object run_recorded(Session& s, const Call& c, py::handle out, const char* op) {
  refuse_out(out, op);
  ad::Context& ctx = eager_context(*c.recorded, s, op);
  std::vector<ad::EagerTensor> xs;
  for (py::handle h : c.handles) xs.push_back(eager_arg(h, op));
  const std::string subs = cpp_subscripts(c.subscripts, op);
  const auto arrow = subs.find("->");
  std::vector<Tokens> terms;
  for (std::size_t start = 0;;) {
    const auto end = subs.find_first_of(",-", start);
    terms.push_back(tokenize(std::string_view(subs).substr(start, end == std::string::npos ? end : end - start), op));
    if (end == arrow) break;
    start = end + 1;
  }
  terms.push_back(tokenize(std::string_view(subs).substr(arrow + 2), op));
  const auto [labels, output] = integer_labels(terms, xs, op);
  return eager_result(ad::einsum(ctx, xs, labels, output));
}

py::object run(Session& s, const std::string& numpy_subscripts, const std::vector<Tensor>& ops, py::handle out,
               const tenferro::EinsumOptions& o, const char* op) {
  const std::string subs = cpp_subscripts(numpy_subscripts, op);
  if (out.is_none()) return py::cast(maybe_without_gil(big(ops), [&] { return tenferro::einsum(s, subs, ops, o); }));
  const Arg dst(out, op);
  if (dst.is_scalar()) throw tenferro::ArgumentError(op, "out must be a tensor");
  maybe_without_gil(big(ops), [&] { tenferro::einsum_into(s, subs, ops, dst.tensor(), o); });
  return py::reinterpret_borrow<py::object>(out);
}

const char* optimizer_name(tenferro::EinsumOptimizer e) {
  switch (e) {
    case tenferro::EinsumOptimizer::automatic: return "auto";
    case tenferro::EinsumOptimizer::greedy: return "greedy";
    case tenferro::EinsumOptimizer::optimal: return "optimal";
    case tenferro::EinsumOptimizer::anneal: return "anneal";
    case tenferro::EinsumOptimizer::chain: return "chain";
    case tenferro::EinsumOptimizer::eliminate: return "eliminate";
    case tenferro::EinsumOptimizer::partition: return "partition";
  }
  return "?";
}

py::tuple path_result(const tenferro::EinsumPathInfo& info, int n, const std::string& subscripts) {
  py::list path;
  path.append("einsum_path");
  for (const auto& [a, b] : info.tree.to_linear_path(n)) {
    if (b < 0) path.append(py::make_tuple(a));
    else path.append(py::make_tuple(a, b));
  }
  std::ostringstream r;
  r << "  Complete contraction:  " << subscripts << "\n"
    << "            Optimizer:  " << optimizer_name(info.optimizer) << "\n"
    << "     Planning seconds:  " << info.planning_seconds << "\n"
    << "       Multiply-adds:  " << info.cost.flops << "\n"
    << " Largest intermediate:  " << info.cost.largest_intermediate << " elements\n"
    << "    Predicted seconds:  " << info.cost.predicted_seconds << "\n"
    << "               Slices:  " << info.num_slices << " (overhead " << info.slicing_overhead << ")\n";
  return py::make_tuple(path, py::str(r.str()));
}

std::vector<tenferro::Shape> shapes_of(const std::vector<Tensor>& ops) {
  std::vector<tenferro::Shape> out;
  for (const Tensor& t : ops) out.push_back(t.shape());
  return out;
}

struct PyEinsumPlan {
  tenferro::EinsumPlan plan;
  std::string subscripts;  // NumPy's
  int num_operands;
};

// einsum as a fast call (Note [Fast calls]): einsum(s, *args, out=None, optimize=None,
// memory_limit=None, cost_model=None).
PyObject* einsum_call(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    const char* op = "einsum";
    PyObject *out = Py_None, *optimize = Py_None, *memory_limit = Py_None, *cost_model = Py_None;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      PyObject*& slot = PyUnicode_CompareWithASCIIString(key, "out") == 0        ? out
                        : PyUnicode_CompareWithASCIIString(key, "optimize") == 0 ? optimize
                        : PyUnicode_CompareWithASCIIString(key, "memory_limit") == 0 ? memory_limit
                        : PyUnicode_CompareWithASCIIString(key, "cost_model") == 0   ? cost_model
                                                                                     : throw py::type_error("einsum() got an unexpected keyword argument '" +
                                                   py::str(key).cast<std::string>() + "'");
      slot = args[nargs + i];
    }
    if (nargs == 0) throw tenferro::ArgumentError(op, "the first argument must be a tenferro.Session");
    Session& s = session_arg(args[0], op);
    Call c = parse_call(args, static_cast<std::size_t>(nargs), 1, op);
    if (c.recorded) return run_recorded(s, c, out, op);
    if (optimize == Py_None && memory_limit == Py_None && cost_model == Py_None)
      return run(s, c.subscripts, c.operands, out, {}, op);
    return run(s, c.subscripts, c.operands, out, options_from(optimize, memory_limit, op, cost_model), op);
  });
}

const char* matmul_subscripts(int ra, int rb) {
  if (ra == 0 || rb == 0) throw tenferro::RankError("matmul", "matmul does not take rank-0 operands (use multiply)");
  if (ra == 1 && rb == 1) return "i,i->";
  if (ra == 1) return "j,...jk->...k";
  if (rb == 1) return "...ij,j->...i";
  return "...ij,...jk->...ik";
}

}  // namespace

py::object matmul(Session& s, py::handle a_, py::handle b_, py::handle out) {
  Call c;
  c.add(a_, "matmul");
  c.add(b_, "matmul");
  c.subscripts = matmul_subscripts(c.operands[0].rank(), c.operands[1].rank());
  if (c.recorded) return run_recorded(s, c, out, "matmul");
  return run(s, c.subscripts, c.operands, out, {}, "matmul");
}

void register_einsum(py::module_& m) {
  static const char* kEinsumDoc = R"doc(einsum($module, s, *operands, out=None, optimize=None, memory_limit=None, cost_model=None)
--

einsum(s, subscripts, *operands, out=None, optimize=None, memory_limit=None, cost_model=None)
einsum(s, op0, sublist0, op1, sublist1, ..., [sublistout], ...)

NumPy's einsum: explicit ('ij,jk->ik') and implicit ('ij,jk') output, ellipsis
broadcasting, the interleaved integer form. optimize: None/True/False or 'auto' (the
automatic planner, the default: tenferro always optimizes), 'greedy', 'optimal',
'anneal', 'chain', or a path as einsum_path returns it. memory_limit: the most elements
an intermediate may hold (larger ones are sliced). cost_model: the planners' time model
as calibrate_cost_model returns it (plans every call: only calls without optimize,
memory_limit and cost_model reuse their plan; prefer EinsumPlan in loops). out: a
writable tensor (any strides) of the result's shape and dtype.)doc";
  static PyMethodDef einsum_def = {"einsum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&einsum_call)),
                                   METH_FASTCALL | METH_KEYWORDS, kEinsumDoc};
  add_fast(m, &einsum_def, nullptr);
  m.def(
      "einsum_path",
      [](py::args args, py::handle optimize, py::handle memory_limit, py::handle cost_model) {
        Call c = parse_call(args, 0, "einsum_path");
        const std::vector<tenferro::Shape> shapes = shapes_of(c.operands);
        const auto info = tenferro::einsum_path(cpp_subscripts(c.subscripts, "einsum_path"), shapes,
                                                options_from(optimize, memory_limit, "einsum_path", cost_model));
        return path_result(info, static_cast<int>(c.operands.size()), c.subscripts);
      },
      py::kw_only(), py::arg("optimize") = py::none(), py::arg("memory_limit") = py::none(),
      py::arg("cost_model") = py::none(),
      R"doc(einsum_path(subscripts, *operands, optimize=None, memory_limit=None, cost_model=None) -> (path, report)

The contraction order einsum would use (NumPy's einsum_path: a list starting with
'einsum_path', then the pairs of an opt_einsum linear path) and a report naming the
optimizer the automatic planner chose, the multiply-adds, the largest intermediate,
the predicted time and the slicing. Needs no session (planning reads only shapes).
cost_model: the planners' time model in its text form ("gemm_rate=2.8e10
step_seconds=1e-7 ...", fields left out keep their defaults), e.g. what
calibrate_cost_model returned on this machine.)doc");
  m.def(
      "calibrate_cost_model",
      [](py::handle s, double seconds) {
        Session& session = session_arg(s, "calibrate_cost_model");
        py::gil_scoped_release nogil;
        return tenferro::to_string(tenferro::calibrate_cost_model(session, seconds));
      },
      py::arg("s"), py::arg("seconds") = 0.5,
      R"doc(calibrate_cost_model(s, seconds=0.5) -> str

The einsum planners' time model for this machine: a step's fixed cost, the GEMM rate
and the memory rate, measured through session s (its threads) for about `seconds`,
scale the shipped constants. Returns the model in the text form that einsum_path's and
EinsumPlan's cost_model= take; store the string to calibrate once per machine.)doc");
  py::class_<PyEinsumPlan>(m, "EinsumPlan", R"doc(A prepared einsum for fixed operand shapes and dtypes.

EinsumPlan(subscripts, *operands, optimize=None, memory_limit=None, cost_model=None)
parses, validates and plans once (the operands' data is not read); plan(s, *operands, out=None) runs it.)doc")
      .def(py::init([](py::args args, py::handle optimize, py::handle memory_limit, py::handle cost_model) {
             Call c = parse_call(args, 0, "EinsumPlan");
             auto plan = tenferro::EinsumPlan::for_operands(cpp_subscripts(c.subscripts, "EinsumPlan"), c.operands,
                                                            options_from(optimize, memory_limit, "EinsumPlan", cost_model));
             return new PyEinsumPlan{std::move(plan), c.subscripts, static_cast<int>(c.operands.size())};
           }),
           py::kw_only(), py::arg("optimize") = py::none(), py::arg("memory_limit") = py::none(),
           py::arg("cost_model") = py::none())
      .def(
          "__call__",
          [](const PyEinsumPlan& p, py::args args, py::handle out) -> py::object {
            if (args.size() == 0) throw tenferro::ArgumentError("EinsumPlan", "the first argument must be a tenferro.Session");
            Session& s = session_arg(args[0], "EinsumPlan");
            std::vector<Tensor> ops;
            for (std::size_t i = 1; i < args.size(); ++i) ops.push_back(tensor_arg(args[i], "EinsumPlan"));
            if (out.is_none()) return py::cast(maybe_without_gil(big(ops), [&] { return p.plan.execute(s, ops); }));
            const Arg dst(out, "EinsumPlan");
            if (dst.is_scalar()) throw tenferro::ArgumentError("EinsumPlan", "out must be a tensor");
            maybe_without_gil(big(ops), [&] { p.plan.execute_into(s, ops, dst.tensor()); });
            return py::reinterpret_borrow<py::object>(out);
          },
          py::kw_only(), py::arg("out") = py::none(), "Runs the plan: plan(s, *operands, out=None).")
      .def_property_readonly(
          "path", [](const PyEinsumPlan& p) { return py::object(path_result(p.plan.path(), p.num_operands, p.subscripts)[0]); },
          "The contraction order (as einsum_path's first result).")
      .def_property_readonly(
          "report", [](const PyEinsumPlan& p) { return py::object(path_result(p.plan.path(), p.num_operands, p.subscripts)[1]); },
          "einsum_path's report for this plan.")
      .def_property_readonly(
          "shape",
          [](const PyEinsumPlan& p) {
            const tenferro::Shape& sh = p.plan.output_shape();
            py::tuple t(static_cast<std::size_t>(sh.size()));
            for (int i = 0; i < sh.size(); ++i) t[static_cast<std::size_t>(i)] = py::int_(sh[sh.size() - 1 - i]);
            return t;
          },
          "The result's shape.")
      .def_property_readonly("num_slices", [](const PyEinsumPlan& p) { return p.plan.num_slices(); },
                             "How many slices the memory limit split the contraction into.");
  m.def(
      "matmul", [](py::handle s, py::handle a, py::handle b, py::handle out) { return matmul(session_arg(s, "matmul"), a, b, out); },
      py::arg("s"), py::arg("x1"), py::arg("x2"), py::kw_only(), py::arg("out") = py::none(),
      "NumPy's matmul: (..., M, K) @ (..., K, N) with broadcast batch axes; 1-D operands as NumPy's.");
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  // A tenferro.ad.Tensor operand: its class's operator records the product.
  const auto op = [](py::handle a, py::handle b) -> py::object {
    if (as_eager(a) || as_eager(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return matmul(tenferro::current_session(), a, b, py::none());
  };
  cls.def("__matmul__", op).def("__rmatmul__", [op](py::handle a, py::handle b) { return op(b, a); });
}

}  // namespace tfpy
