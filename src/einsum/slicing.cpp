// Slicing for memory: which labels to cut so that every intermediate fits a limit.
//
// Note [Einsum slicing]
// Slicing label l into parts of `chunk` indices runs the whole contraction once per part
// with l restricted to that part, and sums the parts' results (a sliced label kept in the
// output: each part fills its own range of that axis). Every intermediate holding l
// shrinks by extent/chunk; a step not holding l is repeated once per part, which is the
// overhead. The tree does not change: a label cut to one index is still a label.
//
// The choice is greedy, as cotengra's SliceFinder (Gray & Kourtis, Quantum 5, 410
// (2021), §IV): while some intermediate exceeds the limit, try cutting each label of an
// oversized intermediate to its next smaller divisor (chunks divide the extent, so every
// slice has the same shapes and one prepared program runs them all) and keep the cut
// whose total cost over all slices (the planner's objective, per slice, times the number
// of slices) is least, ties to the smaller largest intermediate. When no label of an
// oversized intermediate can be cut further the limit cannot be met: ArgumentError.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro::einsum_detail {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Eval {
  double largest = 0, cost = 0, flops = 0, written = 0, bytes = 0, seconds = 0;
};

// Per-slice figures of the tree under extents `ext` (labels of every node in `labels`).
Eval evaluate(const PreparedNetwork& net, const std::vector<Step>& steps, const std::vector<Word>& labels,
              const double* ext, const StepModel& model, const StepModel* seconds_model) {
  const int W = net.words;
  Eval e;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const auto [a, b] = steps[k];
    const int c = net.n + static_cast<int>(k);
    const Word *A = &labels[a * W], *B = &labels[b * W], *C = &labels[c * W];
    const double size = set_size(C, W, ext);
    e.largest = std::max(e.largest, size);
    e.cost += model.step(A, B, C, W, ext);
    if (seconds_model) {
      e.flops += union_size(A, B, W, ext);
      e.written += size;
      e.bytes += seconds_model->bytes(set_size(A, W, ext), set_size(B, W, ext), size);
      e.seconds += seconds_model->step(A, B, C, W, ext);
    }
  }
  return e;
}

// The chunks a label of extent `extent` may be cut to, ascending: its divisors q with
// q <= sqrt(extent) and their partners extent / q. Counting q up to sqrt(extent) is
// O(sqrt(extent)), so it stops at 2^20 (extents above 2^40 only, far beyond anything
// executable), keeping the divisors found so far: valid, finer cuts. Counting down from
// the chunk ran for ages on a large prime extent such as 2^61 - 1 (found by
// fuzz_einsum), and so did counting up again in every round of the slicing loop, which
// can cut one label many times (a 10 s timeout of fuzz_einsum): the list is built once
// per label.
std::vector<std::int64_t> chunk_choices(std::int64_t extent) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t q = 1; q <= extent / q && q <= (std::int64_t{1} << 20); ++q) {
    if (extent % q != 0) continue;
    small.push_back(q);
    if (extent / q != q) large.push_back(extent / q);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// The largest of `choices` (chunk_choices) below `chunk`, 1 when none.
std::int64_t next_chunk(const std::vector<std::int64_t>& choices, std::int64_t chunk) {
  const auto it = std::lower_bound(choices.begin(), choices.end(), chunk);
  return it == choices.begin() ? 1 : *(it - 1);
}

}  // namespace

void slice_tree(std::string_view op, const PreparedNetwork& net, const std::vector<std::int64_t>& true_extents,
                const std::vector<Step>& steps, double limit, const StepModel& model, ContractionPlan& plan) {
  const int n = net.n, W = net.words, L = net.num_labels;
  std::vector<Word> labels, scratch;
  tree_labels(net, steps, labels, scratch);
  std::vector<std::int64_t> chunk(static_cast<std::size_t>(L));
  std::vector<double> ext(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l) {
    chunk[l] = std::max<std::int64_t>(true_extents[l], 1);
    ext[l] = static_cast<double>(true_extents[l]);
  }
  const StepModel seconds_model(PlanObjective::time, model.m);
  const Eval whole = evaluate(net, steps, labels, ext.data(), model, &seconds_model);
  Eval current = whole;
  double slices = 1;
  std::vector<char> candidate(static_cast<std::size_t>(L));
  std::vector<std::vector<std::int64_t>> choices(static_cast<std::size_t>(L));  // chunk_choices, when first needed
  while (current.largest > limit) {
    std::fill(candidate.begin(), candidate.end(), 0);
    for (int c = n; c < 2 * n - 1; ++c) {
      const Word* C = &labels[c * W];
      if (set_size(C, W, ext.data()) <= limit) continue;
      for (int w = 0; w < W; ++w)
        for (Word x = C[w]; x != 0; x &= x - 1) candidate[w * 64 + std::countr_zero(x)] = 1;
    }
    int best = -1;
    std::int64_t best_chunk = 0;
    Eval best_eval;
    double best_total = kInf;
    for (int l = 0; l < L; ++l) {
      if (!candidate[l] || chunk[l] <= 1) continue;
      if (choices[l].empty()) choices[l] = chunk_choices(true_extents[l]);
      const std::int64_t d = next_chunk(choices[l], chunk[l]);
      const double saved = ext[l];
      ext[l] = static_cast<double>(d);
      const Eval e = evaluate(net, steps, labels, ext.data(), model, nullptr);
      ext[l] = saved;
      const double total = e.cost * slices * static_cast<double>(chunk[l] / d);
      if (total < best_total || (total == best_total && e.largest < best_eval.largest)) {
        best = l;
        best_chunk = d;
        best_eval = e;
        best_total = total;
      }
    }
    if (best < 0)
      throw ArgumentError(op, "memory limit of " + num(limit) + " elements cannot be met: an intermediate holds " +
                                  num(current.largest) + " elements with every label of it already cut to extent 1");
    slices = slices / static_cast<double>(true_extents[best] / chunk[best]) * static_cast<double>(true_extents[best] / best_chunk);
    if (slices > 0x1p62)
      throw ArgumentError(op, "memory limit of " + num(limit) + " elements needs more than 2^62 slices");
    chunk[best] = best_chunk;
    ext[best] = static_cast<double>(best_chunk);
    current = best_eval;
  }
  plan.sliced.clear();
  plan.num_slices = 1;
  for (int l = 0; l < L; ++l) {
    if (chunk[l] >= std::max<std::int64_t>(true_extents[l], 1)) continue;
    SlicedLabel s;
    s.label = l;
    s.extent = true_extents[l];
    s.chunk = chunk[l];
    s.parts = true_extents[l] / chunk[l];
    plan.num_slices *= s.parts;
    plan.sliced.push_back(s);
  }
  const Eval per = evaluate(net, steps, labels, ext.data(), model, &seconds_model);
  const double k = static_cast<double>(plan.num_slices);
  plan.cost.flops = per.flops * k;
  plan.cost.largest_intermediate = per.largest;
  plan.cost.elements_written = per.written * k;
  plan.cost.bytes = per.bytes * k;
  plan.cost.predicted_seconds = per.seconds * k;
  if (plan.num_slices > 1) {
    // Each slice's result is added onto the output: read both, write one.
    const double out = set_size(&labels[(2 * n - 2) * W], W, ext.data());
    const double acc = 3 * model.m.element_bytes * out * k;
    plan.cost.bytes += acc;
    plan.cost.predicted_seconds += acc / model.m.bytes_rate;
  }
  plan.slicing_overhead = whole.flops > 0 ? plan.cost.flops / whole.flops : 1.0;
}

}  // namespace tenferro::einsum_detail
