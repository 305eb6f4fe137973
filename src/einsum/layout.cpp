// The storage order of einsum's intermediates.
//
// Note [Intermediate layouts]
// A dot step writes its result as dot_general lays it out: [free of a, free of b,
// batch], each group in its operand's order. The next step reads it in place only when
// its contracted labels form one block, in the order its partner holds them, and its
// free labels the other block; otherwise the CPU backend copies it first (a packing
// copy of the whole intermediate). Choosing the order in which each intermediate is
// stored, for the step that reads it, removes those copies where the step that writes
// it can still write it directly: the layout planning TBLIS and cuTENSOR do.
//
// The choice goes top-down, from the last step (whose result order is the output's) to
// the first, so a step's result order is known when its operands' orders are chosen.
// For a dot step with result order R and contracted labels K:
//  1. K's order: the order a fixed operand (a leaf, or a product of an elementwise
//     step) holds K in when it holds K as one block; else the first operand's.
//  2. An intermediate operand X already ready (its free labels one block in R's
//     relative order, K one block in K's order) keeps its order. Else it takes the first
//     of [free in R's order, K, batch] and [K, free in R's order, batch] that the step
//     writing X can write directly, and else keeps its order. Writing directly means:
//     the labels X gets from each operand of that step form one block, in that operand's
//     order; the step's batch labels come after them (each batch's GEMM writes one
//     compact block); and when b's labels come first (BLAS then computes the transposed
//     product, whose rows are b's), b's block has at least 16 elements: dgemm of
//     12 × 13200 × 144 ran at 14.6 GF against 23.2 GF for 13200 × 12 × 144 (the kernel
//     has 16 rows). An operand copied anyway (its own free or contracted labels are not
//     one block) may have its labels in any order, since its copy lays them out in the
//     result's order (Note [Free axes in the result's order] in cpu/dot_plan.cpp), but
//     only when it is no larger than the copy saved: a copy in another order can be
//     slower (lm_batch_likelihood_sentence_3_12d lost 1.5 ms copying a 1.9M-element
//     operand in a new order to save a 17k-element copy).
// Labels of extent 1 are ignored (they sit anywhere in a merged group), and operands are
// taken as stored compact in the order of their labels; a leaf stored otherwise still
// runs correctly, with the copies the backend decides on. Products of elementwise steps
// keep their order: letting them be written permuted as well (an elementwise product
// writes any order) was mixed, focus_step409_316 11% faster under automatic but the
// language-model instances 4-7% slower, so it was not kept.
//
// Example: an MPS inner product zipped right to left, bra tensors [l_i, l_{i+1}, p_i] and
// ket tensors [m_i, m_{i+1}, p_i] (column-major, as the suite's
// str_mps_varying_inner_product_200). The environment [l_{i+1}, m_{i+1}] times bra i
// contracts the bra's middle axis (the bra is copied anyway) and would write
// [l_i, p_i, m_{i+1}]; ket i then contracts {m_{i+1}, p_i}, which it holds in that order,
// while the environment holds them the other way round: a second copy per site. Now the
// environment is written [m_{i+1}, p_i, l_i] and read in place.
#include <algorithm>
#include <cstdint>

#include "einsum/program.hpp"

namespace tenferro::detail::einsum {
namespace {

// The fewest rows a GEMM written transposed may get (see writable() below).
constexpr double kMinRows = 16;

/// Whether the labels of `order` that `in` accepts, of extent above 1, sit in it as one
/// block (labels of extent 1 in between do not count), and, with `pos` (each accepted
/// label's position in a reference order), in the reference's relative order.
template <class In>
bool one_block(const Dims& order, In in, const std::int64_t* pos, const std::vector<std::int64_t>& extent) {
  bool open = false, closed = false;
  std::int64_t last = -1;
  for (std::int64_t id : order) {
    if (extent[static_cast<std::size_t>(id)] <= 1) continue;
    if (in(id)) {
      if (closed) return false;
      open = true;
      if (pos) {
        if (pos[id] < last) return false;
        last = pos[id];
      }
    } else if (open) {
      closed = true;
    }
  }
  return true;
}

/// The labels of `from` that `keep` accepts, in `from`'s order, appended to `to`.
template <class F> void append_if(const Dims& from, F keep, Dims& to) {
  for (std::int64_t id : from)
    if (keep(id)) to.push_back(id);
}

}  // namespace

void choose_layouts(const std::vector<Step>& steps, int n, const Dims& out_labels, const std::vector<std::int64_t>& extent,
                    const std::vector<Dims>& nodes, std::vector<Dims>& store) {
  store.resize(nodes.size());
  for (Dims& d : store) d.clear();
  // Label sets of the nodes, W words each (an order changes, its set does not; the last
  // step's result holds the output's labels), and a label-position table for the
  // reference orders of one_block: membership is a bit test, not a scan.
  thread_local std::vector<std::uint64_t> held;
  thread_local std::vector<std::int64_t> pos;
  const std::size_t W = (extent.size() + 63) / 64;
  held.assign(nodes.size() * W, 0);
  pos.resize(extent.size());
  for (std::size_t v = 0; v < nodes.size(); ++v)
    for (std::int64_t id : nodes[v]) held[v * W + static_cast<std::size_t>(id) / 64] |= std::uint64_t{1} << (id % 64);
  auto has = [&](int v, std::int64_t id) {
    return (held[static_cast<std::size_t>(v) * W + static_cast<std::size_t>(id) / 64] >> (id % 64)) & 1;
  };
  auto positions = [&](const Dims& ref) {
    for (int i = 0; i < ref.size(); ++i) pos[static_cast<std::size_t>(ref[i])] = i;
    return pos.data();
  };
  auto order = [&](int v) -> const Dims& { return store[static_cast<std::size_t>(v)].empty() ? nodes[static_cast<std::size_t>(v)] : store[static_cast<std::size_t>(v)]; };
  // Intermediates whose order is ours to choose: results of non-last dot steps.
  auto choosable = [&](int v) { return v >= n && steps[static_cast<std::size_t>(v - n)].dot; };
  Dims K, F, B, cand;  // reused: a warm rebuild allocates nothing
  // Whether step k's operand v would be copied in its current order: its labels in the
  // result (free) or those it shares with the partner and not the result (contracted)
  // are not one block.
  auto copied = [&](int k, int v, int partner) {
    const int res = n + k;
    return !one_block(order(v), [&](std::int64_t id) { return has(res, id) && !has(partner, id); }, nullptr, extent) ||
           !one_block(order(v), [&](std::int64_t id) { return !has(res, id); }, nullptr, extent);
  };
  auto size = [&](int v) {
    double e = 1;
    for (std::int64_t id : nodes[static_cast<std::size_t>(v)]) e *= static_cast<double>(extent[static_cast<std::size_t>(id)]);
    return e;
  };
  // Whether step k can write its result in order `d` directly: the free labels of each
  // operand one block, and its batch labels after them (each batch's GEMM writes one
  // compact block). An operand copied anyway may have its free labels in another order
  // when it holds at most `reorder` elements: copying it in another order can be slower
  // (walking its unit-stride axis outermost), which only a saved copy as large pays for.
  auto writable = [&](int k, const Dims& d, double reorder) {
    const Step& st = steps[static_cast<std::size_t>(k)];
    for (int side = 0; side < 2; ++side) {
      const int v = side ? st.b : st.a, partner = side ? st.a : st.b;
      const bool any_order = size(v) <= reorder && copied(k, v, partner);
      // d holds the labels of the result n + k.
      if (!one_block(d, [&](std::int64_t id) { return has(v, id) && !has(partner, id); }, any_order ? nullptr : positions(order(v)),
                     extent))
        return false;
    }
    bool batch_seen = false;
    int first = -1;  // the operand whose free labels come first: 0 (a), 1 (b)
    double free_b = 1;
    for (std::int64_t id : d) {
      const auto e = extent[static_cast<std::size_t>(id)];
      if (e <= 1) continue;
      const bool in_a = has(st.a, id), in_b = has(st.b, id);
      if (!(in_a && in_b) && batch_seen) return false;
      batch_seen |= in_a && in_b;
      if (in_a != in_b && first < 0) first = in_b;
      if (in_b && !in_a) free_b *= static_cast<double>(e);
    }
    // b's free labels first make BLAS compute the transposed product, whose rows are
    // then b's: fewer than the kernel's rows (16) run it far below its rate (dgemm of
    // 12 × 13200 × 144: 14.6 GF against 23.2 GF for 13200 × 12 × 144).
    return first != 1 || free_b >= kMinRows;
  };
  for (int k = static_cast<int>(steps.size()) - 1; k >= 0; --k) {
    const Step& st = steps[static_cast<std::size_t>(k)];
    if (!st.dot || (!choosable(st.a) && !choosable(st.b))) continue;
    const int r = n + k;  // the result, in order R
    const Dims& R = st.last ? out_labels : order(r);
    auto in_r = [&](std::int64_t id) { return has(r, id); };
    // 1. K's order.
    const Dims* k_from = &order(st.a);
    for (int v : {st.b, st.a}) {
      if (choosable(v)) continue;
      if (one_block(order(v), [&](std::int64_t id) { return !in_r(id); }, nullptr, extent)) {
        k_from = &order(v);
        break;
      }
    }
    // 2. Each intermediate operand.
    for (int side = 0; side < 2; ++side) {
      const int x = side ? st.b : st.a, y = side ? st.a : st.b;
      if (!choosable(x)) continue;
      const Dims& X = order(x);
      K.clear();
      F.clear();
      B.clear();
      auto in_k = [&](std::int64_t id) { return !in_r(id) && has(y, id); };  // X's contracted labels
      auto in_f = [&](std::int64_t id) { return in_r(id) && !has(y, id); };  // X's free labels
      append_if(*k_from, [&](std::int64_t id) { return in_k(id) && has(x, id); }, K);
      append_if(R, [&](std::int64_t id) { return has(x, id) && !has(y, id); }, F);
      append_if(X, [&](std::int64_t id) { return in_r(id) && has(y, id); }, B);
      if (one_block(X, in_f, positions(R), extent) && one_block(X, in_k, positions(K), extent)) continue;
      // The copy this saves: X's, or (X's blocks only in another order) the smaller one.
      const bool blocks = one_block(X, in_f, nullptr, extent) && one_block(X, in_k, nullptr, extent);
      const double saved = blocks ? std::min(size(x), size(y)) : size(x);
      const Dims* arrangements[2][2] = {{&F, &K}, {&K, &F}};
      for (const auto& parts : arrangements) {
        cand.clear();
        for (const Dims* part : parts)
          for (std::int64_t id : *part) cand.push_back(id);
        for (std::int64_t id : B) cand.push_back(id);
        if (writable(x - n, cand, saved)) {
          store[static_cast<std::size_t>(x)] = cand;
          break;
        }
      }
    }
  }
}

}  // namespace tenferro::detail::einsum
