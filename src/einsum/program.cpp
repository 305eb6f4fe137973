// Einsum program building: validation against the shapes, label ids, leaf preparation
// (diagonals, dropped broadcast axes, pre-sums), the contraction order, and the layout
// of every pairwise step.
//
// Worked example: "ij,jk,kl->il" with shapes [2,3], [3,4], [4,5]. Labels i j k l get ids
// 0 1 2 3; no leaf needs a view or a sum. The planner returns {(0,1), (3,2)}. Step 0
// contracts j (held by nodes 0 and 1 only, not in the output): dot_general with
// lhs_contracting {1}, rhs_contracting {0}, result labels [i, k]. Step 1 is the last:
// contracts k, result labels [i, l] in output order, so it writes straight into the
// result with no permutation.
#include <algorithm>
#include <bit>
#include <string>

#include "einsum/path_internal.hpp"
#include "einsum/program.hpp"
#include "tenferro/error.hpp"

namespace tenferro::detail::einsum {
namespace {

constexpr std::string_view kOp = "einsum";

/// Dense label ids in order of first appearance. Linear search while there are few
/// labels (the common case, no hashing); beyond that an open-addressing table of ids,
/// rebuilt at half load, whose storage is reused across builds (a warm build of a
/// network of hundreds of labels allocates nothing).
class LabelIds {
 public:
  void clear() noexcept {
    keys_.clear();
    hashed_ = false;
  }
  int find(std::int64_t key) const {
    if (!hashed_) {
      for (std::size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] == key) return static_cast<int>(i);
      return -1;
    }
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask) {
      const int s = slots_[i];
      if (s == 0) return -1;
      if (keys_[static_cast<std::size_t>(s) - 1] == key) return s - 1;
    }
  }
  int add(std::int64_t key) {
    const int id = find(key);
    if (id >= 0) return id;
    keys_.push_back(key);
    if (keys_.size() > kLinear) {
      if (!hashed_ || 2 * keys_.size() > slots_.size()) rehash();
      else insert(keys_.size() - 1);
    }
    return static_cast<int>(keys_.size() - 1);
  }
  int size() const noexcept { return static_cast<int>(keys_.size()); }
  std::int64_t key(int id) const noexcept { return keys_[static_cast<std::size_t>(id)]; }

 private:
  static constexpr std::size_t kLinear = 24;
  // Fibonacci hashing: the top bits of key · 2^64/φ.
  std::size_t slot_of(std::int64_t key) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void insert(std::size_t id) noexcept {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = slot_of(keys_[id]);
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = static_cast<int>(id) + 1;
  }
  void rehash() {
    std::size_t cap = 64;
    while (cap < 4 * keys_.size()) cap *= 2;
    slots_.assign(cap, 0);
    shift_ = 64 - std::countr_zero(cap);
    hashed_ = true;
    for (std::size_t id = 0; id < keys_.size(); ++id) insert(id);
  }
  std::vector<std::int64_t> keys_;
  std::vector<int> slots_;  // id + 1 per slot, 0 when empty
  int shift_ = 58;
  bool hashed_ = false;
};

/// Reused between builds on one thread (a warm build allocates nothing).
struct Scratch {
  LabelIds ids;
  std::vector<std::int64_t> extent;
  std::vector<int> first_op;   // operand where a label's extent was fixed (messages)
  std::vector<int> holders;    // operands holding the label
  std::vector<int> occurs;     // occurrences in the subscripts (implicit output rule)
  std::vector<int> out_pos;    // output position, -1 when not in the output
  std::vector<int> live;       // live nodes holding the label (step building)
  std::vector<int> axis_id;    // per operand axis (flat): label id, -1 when dropped
  std::vector<int> axis_begin;
  std::vector<Dims> nodes;     // every node's labels in its axis order
  std::vector<Dims> store;     // intermediates' storage orders (Note [Intermediate layouts])
  std::vector<int> pos_a, pos_b;  // a step's operands' axis of each label, -1 when not held
  ContractionNetwork net;
  ContractionTree tree;
};

std::string operand_labels(const Parsed& parsed, int k) {
  std::string r;
  for (int i = parsed.begin[static_cast<std::size_t>(k)]; i < parsed.begin[static_cast<std::size_t>(k) + 1]; ++i) {
    const std::int64_t key = parsed.labels[static_cast<std::size_t>(i)];
    if (!r.empty() && !parsed.string_form) r += ' ';
    if (key == kEllipsis) r += "...";
    else if (parsed.string_form) r += utf8(key);
    else r += std::to_string(key);
  }
  return parsed.string_form ? "'" + r + "'" : "[" + r + "]";
}

/// Expands ellipses, checks ranks and extents, assigns ids. Fills sc.axis_id/axis_begin,
/// sc.extent and returns the number of ellipsis axes E.
int resolve_labels(const Parsed& parsed, const EinsumProgram& p, Scratch& sc) {
  const int n = p.n;
  sc.ids.clear();
  sc.extent.clear();
  sc.first_op.clear();
  sc.axis_id.clear();
  sc.axis_begin.assign(1, 0);
  int E = 0;
  for (int k = 0; k < n; ++k) {
    const Shape& shape = p.shapes[static_cast<std::size_t>(k)];
    const int b = parsed.begin[static_cast<std::size_t>(k)], e = parsed.begin[static_cast<std::size_t>(k) + 1];
    int named = 0;
    bool ell = false;
    for (int i = b; i < e; ++i) {
      if (parsed.labels[static_cast<std::size_t>(i)] == kEllipsis) ell = true;
      else ++named;
    }
    if (ell ? shape.size() < named : shape.size() != named)
      throw ShapeError(kOp, "operand " + std::to_string(k) + " has shape " + shape.to_string() + " (rank " + std::to_string(shape.size()) +
                                ") but its subscripts " + operand_labels(parsed, k) + " name " + std::to_string(named) + " axes");
    const int ell_count = shape.size() - named;
    E = std::max(E, ell ? ell_count : 0);
    int axis = 0;
    auto add_axis = [&](std::int64_t key) {
      const std::int64_t ext = shape[axis];
      const int id = sc.ids.add(key);
      if (id == static_cast<int>(sc.extent.size())) {
        sc.extent.push_back(-1);
        sc.first_op.push_back(k);
      }
      std::int64_t& x = sc.extent[static_cast<std::size_t>(id)];
      if (key < 0) {  // ellipsis axis: extents of 1 stretch
        if (x == -1 || x == 1) {
          if (x == -1 || ext != 1) sc.first_op[static_cast<std::size_t>(id)] = k;
          x = (x == -1 || ext != 1) ? ext : x;
        } else if (ext != 1 && ext != x) {
          throw ShapeError(kOp, label_name(key, parsed.string_form) + " has extent " + std::to_string(x) + " in operand " +
                                    std::to_string(sc.first_op[static_cast<std::size_t>(id)]) + " and " + std::to_string(ext) +
                                    " in operand " + std::to_string(k) + "; they do not broadcast");
        }
      } else if (x == -1) {
        x = ext;
      } else if (x != ext) {
        throw ShapeError(kOp, "label " + label_name(key, parsed.string_form) + " has extent " + std::to_string(x) + " in operand " +
                                  std::to_string(sc.first_op[static_cast<std::size_t>(id)]) + " and " + std::to_string(ext) +
                                  " in operand " + std::to_string(k));
      }
      sc.axis_id.push_back(id);
      ++axis;
    };
    for (int i = b; i < e; ++i) {
      const std::int64_t key = parsed.labels[static_cast<std::size_t>(i)];
      if (key == kEllipsis) {
        for (int d = 0; d < ell_count; ++d) add_axis(ellipsis_key(d));
      } else {
        add_axis(key);
      }
    }
    sc.axis_begin.push_back(static_cast<int>(sc.axis_id.size()));
  }
  // Ellipsis axes of extent 1 where the label's extent is larger are dropped: that
  // operand does not hold the label (it stretches).
  for (int k = 0; k < n; ++k) {
    const Shape& shape = p.shapes[static_cast<std::size_t>(k)];
    for (int a = sc.axis_begin[static_cast<std::size_t>(k)]; a < sc.axis_begin[static_cast<std::size_t>(k) + 1]; ++a) {
      const int id = sc.axis_id[static_cast<std::size_t>(a)];
      if (sc.ids.key(id) < 0 && shape[a - sc.axis_begin[static_cast<std::size_t>(k)]] == 1 && sc.extent[static_cast<std::size_t>(id)] != 1)
        sc.axis_id[static_cast<std::size_t>(a)] = -1;
    }
  }
  return E;
}

/// Output labels (explicit or implicit) → p.out_labels, p.out_shape, sc.out_pos.
void resolve_output(const Parsed& parsed, int E, EinsumProgram& p, Scratch& sc) {
  const int L = sc.ids.size();
  sc.out_pos.assign(static_cast<std::size_t>(L), -1);
  p.out_labels.clear();
  auto push = [&](int id) {
    sc.out_pos[static_cast<std::size_t>(id)] = p.out_labels.size();
    p.out_labels.push_back(id);
  };
  if (parsed.explicit_output) {
    for (std::int64_t key : parsed.output) {
      if (key == kEllipsis) {
        for (int d = 0; d < E; ++d) push(sc.ids.find(ellipsis_key(d)));
        continue;
      }
      const int id = sc.ids.find(key);
      if (id < 0) throw ArgumentError(kOp, "output label " + label_name(key, parsed.string_form) + " appears in no operand");
      if (sc.out_pos[static_cast<std::size_t>(id)] >= 0)
        throw ArgumentError(kOp, "output label " + label_name(key, parsed.string_form) + " is repeated");
      push(id);
    }
  } else {
    sc.occurs.assign(static_cast<std::size_t>(L), 0);
    for (int id : sc.axis_id)
      if (id >= 0) ++sc.occurs[static_cast<std::size_t>(id)];
    // Labels that occur once, ascending by key (NumPy's rule), then the ellipsis axes.
    const std::size_t first = p.out_labels.size();
    for (int id = 0; id < L; ++id)
      if (sc.ids.key(id) >= 0 && sc.occurs[static_cast<std::size_t>(id)] == 1) p.out_labels.push_back(id);
    std::sort(p.out_labels.begin() + first, p.out_labels.end(), [&](std::int64_t a, std::int64_t b) {
      return sc.ids.key(static_cast<int>(a)) < sc.ids.key(static_cast<int>(b));
    });
    for (int i = 0; i < p.out_labels.size(); ++i) sc.out_pos[static_cast<std::size_t>(p.out_labels[i])] = i;
    for (int d = 0; d < E; ++d) push(sc.ids.find(ellipsis_key(d)));
  }
  p.out_shape.clear();
  for (std::int64_t id : p.out_labels) p.out_shape.push_back(sc.extent[static_cast<std::size_t>(id)]);
  (void)checked_numel(p.out_shape.span(), kOp);  // IndexError("einsum", ...) when the result's size overflows
}

/// Leaf views and pre-sums.
void prepare_leaves(EinsumProgram& p, Scratch& sc) {
  const int n = p.n;
  sc.holders.assign(static_cast<std::size_t>(sc.ids.size()), 0);
  p.leaves.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    LeafPrep& lp = p.leaves[static_cast<std::size_t>(k)];
    lp.axis_to_label.clear();
    lp.labels.clear();
    lp.sum_axes.clear();
    lp.node_labels.clear();
    lp.needs_view = false;
    for (int a = sc.axis_begin[static_cast<std::size_t>(k)]; a < sc.axis_begin[static_cast<std::size_t>(k) + 1]; ++a) {
      const int id = sc.axis_id[static_cast<std::size_t>(a)];
      if (id < 0) {
        lp.axis_to_label.push_back(-1);
        lp.needs_view = true;
        continue;
      }
      const int j = index_of(lp.labels, id);
      if (j >= 0) {
        lp.axis_to_label.push_back(j);
        lp.needs_view = true;
      } else {
        lp.axis_to_label.push_back(lp.labels.size());
        lp.labels.push_back(id);
        ++sc.holders[static_cast<std::size_t>(id)];
      }
    }
  }
  for (int k = 0; k < n; ++k) {
    LeafPrep& lp = p.leaves[static_cast<std::size_t>(k)];
    for (int j = 0; j < lp.labels.size(); ++j) {
      const auto id = static_cast<std::size_t>(lp.labels[j]);
      const bool keep = sc.out_pos[id] >= 0 || (n >= 2 && sc.holders[id] > 1);
      if (keep) lp.node_labels.push_back(lp.labels[j]);
      else lp.sum_axes.push_back(j);
    }
  }
  if (n == 1) {
    const LeafPrep& lp = p.leaves[0];
    p.single_perm.clear();
    p.single_identity = true;
    for (int i = 0; i < lp.node_labels.size(); ++i) {
      const int pos = sc.out_pos[static_cast<std::size_t>(lp.node_labels[i])];
      p.single_perm.push_back(pos);
      p.single_identity &= pos == i;
    }
  }
}

void fill_network(const EinsumProgram& p, Scratch& sc) {
  ContractionNetwork& net = sc.net;
  net.inputs.resize(static_cast<std::size_t>(p.n));
  for (int k = 0; k < p.n; ++k) {
    auto& in = net.inputs[static_cast<std::size_t>(k)];
    in.assign(p.leaves[static_cast<std::size_t>(k)].node_labels.begin(), p.leaves[static_cast<std::size_t>(k)].node_labels.end());
  }
  net.output.assign(p.out_labels.begin(), p.out_labels.end());
  net.extents.assign(sc.extent.begin(), sc.extent.end());
}

/// The layout of every step along sc.tree, with the intermediates stored in the orders
/// of `store` where given (Note [Intermediate layouts]).
void lay_out_steps(EinsumProgram& p, Scratch& sc, const std::vector<Dims>* store) {
  const int n = p.n;
  sc.live.assign(static_cast<std::size_t>(sc.ids.size()), 0);
  sc.nodes.resize(static_cast<std::size_t>(2 * n - 1));
  for (int k = 0; k < n; ++k) {
    sc.nodes[static_cast<std::size_t>(k)] = p.leaves[static_cast<std::size_t>(k)].node_labels;
    for (std::int64_t id : sc.nodes[static_cast<std::size_t>(k)]) ++sc.live[static_cast<std::size_t>(id)];
  }
  p.steps.resize(static_cast<std::size_t>(n - 1));
  // Each step's operands' axes by label (reset after the step): membership and axis
  // lookups without scanning label lists.
  sc.pos_a.assign(sc.extent.size(), -1);
  sc.pos_b.assign(sc.extent.size(), -1);
  Dims free_a, free_b, batch, contract;
  for (int k = 0; k < n - 1; ++k) {
    Step& st = p.steps[static_cast<std::size_t>(k)];
    st.a = sc.tree.steps[static_cast<std::size_t>(k)].first;
    st.b = sc.tree.steps[static_cast<std::size_t>(k)].second;
    st.last = k == n - 2;
    free_a.clear();
    free_b.clear();
    batch.clear();
    contract.clear();
    const Dims& A = sc.nodes[static_cast<std::size_t>(st.a)];
    const Dims& B = sc.nodes[static_cast<std::size_t>(st.b)];
    int* in_a = sc.pos_a.data();
    int* in_b = sc.pos_b.data();
    for (int i = 0; i < A.size(); ++i) in_a[A[i]] = i;
    for (int i = 0; i < B.size(); ++i) in_b[B[i]] = i;
    auto kept = [&](std::int64_t id, int here) {
      return sc.out_pos[static_cast<std::size_t>(id)] >= 0 || sc.live[static_cast<std::size_t>(id)] > here;
    };
    for (std::int64_t id : A) {
      const bool inB = in_b[id] >= 0;
      if (!kept(id, inB ? 2 : 1)) {
        if (!inB) throw InternalError(kOp, "a label held by one node only survived the leaf sums");
        contract.push_back(id);
      } else {
        (inB ? batch : free_a).push_back(id);
      }
    }
    for (std::int64_t id : B) {
      if (in_a[id] >= 0) continue;
      if (!kept(id, 1)) throw InternalError(kOp, "a label held by one node only survived the leaf sums");
      free_b.push_back(id);
    }
    st.dot = !contract.empty();
    if (st.last && st.dot && !free_a.empty() && !free_b.empty() &&
        sc.out_pos[static_cast<std::size_t>(free_b[0])] < sc.out_pos[static_cast<std::size_t>(free_a[0])]) {
      // The output starts with b's free axes: contract b·a, so the result is already in
      // output order ("jib,kjb->kib" runs as kjb·jib, one GEMM per batch, no permuted out).
      std::swap(st.a, st.b);
      std::swap(free_a, free_b);
      std::swap(in_a, in_b);
    }
    // The operands' axes in the order dot_general gets them.
    const int* axis_l = in_a;
    const int* axis_r = in_b;
    st.labels.clear();
    if (st.last) {
      // dot_general keeps free axes in operand order; the batch order is ours to choose.
      std::sort(batch.begin(), batch.end(), [&](std::int64_t x, std::int64_t y) {
        return sc.out_pos[static_cast<std::size_t>(x)] < sc.out_pos[static_cast<std::size_t>(y)];
      });
    }
    if (st.dot || !st.last) {
      // dot_general's result order [lhs_free, rhs_free, batch]; a mul intermediate uses
      // the same order, which keeps A's axes together.
      for (std::int64_t id : free_a) st.labels.push_back(id);
      for (std::int64_t id : free_b) st.labels.push_back(id);
      for (std::int64_t id : batch) st.labels.push_back(id);
    } else {
      st.labels = p.out_labels;  // an elementwise last step writes in output order
    }
    st.dims.lhs_contracting.clear();
    st.dims.rhs_contracting.clear();
    st.dims.lhs_batch.clear();
    st.dims.rhs_batch.clear();
    st.a_axis.clear();
    st.b_axis.clear();
    if (st.dot) {
      for (std::int64_t id : contract) {
        st.dims.lhs_contracting.push_back(axis_l[id]);
        st.dims.rhs_contracting.push_back(axis_r[id]);
      }
      for (std::int64_t id : batch) {
        st.dims.lhs_batch.push_back(axis_l[id]);
        st.dims.rhs_batch.push_back(axis_r[id]);
      }
    } else {
      for (std::int64_t id : st.labels) {
        st.a_axis.push_back(axis_l[id]);
        st.b_axis.push_back(axis_r[id]);
      }
    }
    for (std::int64_t id : A) sc.pos_a[static_cast<std::size_t>(id)] = -1;  // A, B: the tables as filled
    for (std::int64_t id : B) sc.pos_b[static_cast<std::size_t>(id)] = -1;
    st.shape.clear();
    for (std::int64_t id : st.labels) st.shape.push_back(sc.extent[static_cast<std::size_t>(id)]);
    st.out_perm.clear();
    st.out_identity = true;
    if (st.last) {
      for (int i = 0; i < st.labels.size(); ++i) {
        const int pos = sc.out_pos[static_cast<std::size_t>(st.labels[i])];
        st.out_perm.push_back(pos);
        st.out_identity &= pos == i;
      }
    }
    for (std::int64_t id : A) --sc.live[static_cast<std::size_t>(id)];
    for (std::int64_t id : B) --sc.live[static_cast<std::size_t>(id)];
    for (std::int64_t id : st.labels) ++sc.live[static_cast<std::size_t>(id)];
    const Dims* stored = store ? &(*store)[static_cast<std::size_t>(n + k)] : nullptr;
    st.store_shape.clear();
    if (stored && !stored->empty() && !(*stored == st.labels)) {
      for (std::int64_t id : *stored) st.store_shape.push_back(sc.extent[static_cast<std::size_t>(id)]);
      for (std::int64_t id : st.labels) st.out_perm.push_back(index_of(*stored, id));
      st.out_identity = false;
      sc.nodes[static_cast<std::size_t>(n + k)] = *stored;
    } else {
      sc.nodes[static_cast<std::size_t>(n + k)] = st.labels;
    }
  }
}

/// The steps, laid out again when some intermediate is better stored in another order.
void build_steps(EinsumProgram& p, Scratch& sc) {
  lay_out_steps(p, sc, nullptr);
  if (p.n < 3) return;
  choose_layouts(p.steps, p.n, p.out_labels, sc.extent, sc.nodes, sc.store);
  if (std::any_of(sc.store.begin(), sc.store.end(), [](const Dims& d) { return !d.empty(); })) lay_out_steps(p, sc, &sc.store);
}

/// The slices of `plan` (Note [Einsum slicing]): the label keys for path(), the operand
/// and output axes each sliced label cuts, and the program of one slice, built last
/// (the recursive build reuses the thread's scratch `sc`).
void build_slicing(const Parsed& parsed, const ContractionPlan& plan, EinsumProgram& p, Scratch& sc) {
  Slicing& sl = p.slicing;
  const int J = static_cast<int>(plan.sliced.size());
  sl.chunk.assign(static_cast<std::size_t>(J), 0);
  sl.parts.assign(static_cast<std::size_t>(J), 0);
  sl.stride.assign(static_cast<std::size_t>(J), 1);
  sl.operand_axes.clear();
  sl.out_axes.clear();
  if (!sl.program) sl.program = std::make_unique<EinsumProgram>();
  EinsumProgram& sub = *sl.program;
  sub.shapes = p.shapes;
  sub.dtypes = p.dtypes;
  for (int j = J - 1; j >= 0; --j) {
    const SlicedLabel& s = plan.sliced[static_cast<std::size_t>(j)];
    sl.chunk[j] = s.chunk;
    sl.parts[j] = s.parts;
    if (j < J - 1) sl.stride[j] = sl.stride[j + 1] * sl.parts[j + 1];
    p.path.sliced.push_back({sc.ids.key(s.label), s.extent, s.chunk, s.parts});
    for (int k = 0; k < p.n; ++k)
      for (int a = sc.axis_begin[static_cast<std::size_t>(k)]; a < sc.axis_begin[static_cast<std::size_t>(k) + 1]; ++a)
        if (sc.axis_id[static_cast<std::size_t>(a)] == s.label) {
          const int axis = a - sc.axis_begin[static_cast<std::size_t>(k)];
          sl.operand_axes.push_back({k, axis, j});
          sub.shapes[static_cast<std::size_t>(k)][axis] = s.chunk;
        }
    if (sc.out_pos[static_cast<std::size_t>(s.label)] >= 0) sl.out_axes.push_back({sc.out_pos[static_cast<std::size_t>(s.label)], j});
  }
  std::reverse(p.path.sliced.begin(), p.path.sliced.end());
  p.num_slices = plan.num_slices;
  p.path.num_slices = plan.num_slices;
  p.path.slicing_overhead = plan.slicing_overhead;
  EinsumOptions one;
  one.tree = plan.tree;
  build_program(parsed, one, false, sub);
}

}  // namespace

void build_program(const Parsed& parsed, const EinsumOptions& options, bool with_cost, EinsumProgram& p) {
  thread_local Scratch sc;
  const int n = parsed.num_operands;
  if (static_cast<int>(p.shapes.size()) != n)
    throw ArgumentError(kOp, "the subscripts name " + std::to_string(n) + " operand" + (n == 1 ? "" : "s") + ", got " +
                                 std::to_string(p.shapes.size()));
  if (n == 0) throw ArgumentError(kOp, "needs at least one operand");
  p.n = n;
  DType dt = p.dtypes[0];
  for (int k = 0; k < n; ++k) {
    const DType d = p.dtypes[static_cast<std::size_t>(k)];
    if (!is_inexact(d))
      throw DTypeError(kOp, "operand " + std::to_string(k) + " has dtype " + std::string(dtype_name(d)) + "; einsum needs f32, f64, c64 or c128");
    dt = promote(dt, d);
  }
  p.dtype = dt;
  const int E = resolve_labels(parsed, p, sc);
  resolve_output(parsed, E, p, sc);
  prepare_leaves(p, sc);

  // The contraction order: parentheses, a given tree or path, the planner, or (two
  // operands) the one possible step. With a memory limit (or when the cost is wanted)
  // plan_impl also slices and costs it.
  const bool given = parsed.has_tree || options.tree || !options.path.empty();
  const bool planned = n >= 3 && !given;
  // Any non-zero limit goes through plan_impl, which validates it (a negative or NaN
  // limit is an ArgumentError even where nothing needs slicing).
  const bool slicing = options.plan.max_intermediate_elements != 0 || options.plan.max_intermediate_bytes != 0;
  if (with_cost || planned || slicing) fill_network(p, sc);
  p.num_slices = 1;
  p.path.sliced.clear();
  p.path.num_slices = 1;
  p.path.slicing_overhead = 1.0;
  p.path.optimizer = EinsumOptimizer::automatic;
  p.path.planning_seconds = 0;
  ContractionPlan plan;
  try {  // errors of the path/tree functions become einsum's ("einsum: <function>: ...")
    if (parsed.has_tree) sc.tree.steps = parsed.tree;
    else if (options.tree) sc.tree.steps = options.tree->steps;
    else if (!options.path.empty()) sc.tree = ContractionTree::from_linear_path(n, options.path);
    else if (n == 2) sc.tree.steps.assign(1, {0, 1});
    else sc.tree.steps.clear();
    if (with_cost || slicing) {
      // The planner's element size is the result dtype's (memory limit in bytes, traffic).
      PlanOptions po = options.plan;
      po.cost_model.element_bytes = static_cast<double>(dtype_size(p.dtype));
      plan = einsum_detail::plan_impl("plan_sliced_contraction", sc.net, po, planned ? nullptr : &sc.tree, true);
      sc.tree = plan.tree;
      if (planned) p.path.optimizer = plan.chosen;
      else if (!given && n == 2) p.path.optimizer = EinsumOptimizer::optimal;
      p.path.planning_seconds = plan.planning_seconds;
    } else if (planned) {
      sc.tree = plan_contraction(sc.net, options.plan);
    }
    validate_contraction_tree(n, sc.tree);
  } catch (const ArgumentError& e) {
    throw ArgumentError(kOp, e.what());
  }
  p.has_cost = with_cost;
  if (with_cost) p.path.cost = plan.cost;
  p.path.tree.steps = sc.tree.steps;
  if (n >= 2) build_steps(p, sc);
  else p.steps.clear();
  p.direct = is_direct(p);
  p.empty = std::any_of(p.shapes.begin(), p.shapes.end(), [](const Shape& sh) { return std::find(sh.begin(), sh.end(), 0) != sh.end(); });
  if (plan.num_slices > 1) {
    build_slicing(parsed, plan, p, sc);
    p.slicing.lanes = options.plan.slice_lanes;
  }
}

}  // namespace tenferro::detail::einsum
