// Einsum execution: leaf views and pre-sums, then the pairwise steps, the last one
// writing into the result (or the caller's buffer) through a permuted view.
//
// Note [Einsum intermediates]
// Nodes live in a thread-local vector of tensors reused across calls. Intermediates are
// allocated by the ops themselves (dot_general, mul, sum) from the session's buffer
// pool and dropped as soon as a step has consumed them, so a block goes back to the
// pool at its last use and the next step can reuse it. The guard clears every node on
// exit, errors included, so no block outlives the call.
#include "cpu/op_common.hpp"
#include "tenferro/error.hpp"
#include "einsum/program.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/ops.hpp"
#include "tenferro/cpu_backend.hpp"

#include <algorithm>
#include <cstdlib>

namespace tenferro::detail::einsum {
namespace {

constexpr std::string_view kOp = "einsum";

/// The view of operand `t` with one axis per distinct label (diagonals for repeated
/// labels, stretched ellipsis axes dropped). An axis of extent 0 or 1 never steps, so its
/// stride (which may be anything, up to the int64 edges) is left out of the diagonal's
/// sum; the strides of longer axes are bounded by the tensor's span, so their sums fit.
Tensor leaf_view(const Tensor& t, const LeafPrep& lp) {
  if (!lp.needs_view) return t;
  Dims shape(lp.labels.size(), 0), strides(lp.labels.size(), 0);
  for (int a = 0; a < lp.axis_to_label.size(); ++a) {
    const std::int64_t j = lp.axis_to_label[a];
    if (j < 0) continue;
    shape[static_cast<int>(j)] = t.extent(a);
    if (t.extent(a) > 1) strides[static_cast<int>(j)] += t.stride(a);
  }
  return t.as_strided_view(shape, strides, t.offset());
}

/// `t` seen with the step's result shape: its axes placed by `axis_of`, stride 0 where
/// it has no axis (a read-only broadcast view).
Tensor broadcast_to_step(const Tensor& t, const Step& st, const Dims& axis_of) {
  bool identity = axis_of.size() == t.rank();
  for (int r = 0; r < axis_of.size() && identity; ++r) identity = axis_of[r] == r;
  if (identity) return t;
  Dims strides(st.shape.size(), 0);
  for (int r = 0; r < axis_of.size(); ++r)
    if (axis_of[r] >= 0) strides[r] = t.stride(static_cast<int>(axis_of[r]));
  return t.as_strided_view(st.shape, strides, t.offset());
}

// Note [Einsum broadcast products]
// A step without a summed label is an elementwise product of broadcast views, run in
// the order the result is written (its smallest strides innermost). An operand that
// the product reuses across axes it lacks, yet whose own axes that order walks out of
// stride order, makes every inner line strided: "tjk,to->tokj" (column-major: A(k,j,t),
// B(o,t), result (j,k,o,t)) reads A along j with stride 16 in lines of 16. When the
// operand is reused at least kPackReuse times and the product is big enough to pay for
// a copy, the operand is first copied compact in the result's axis order (a pooled
// temporary, numel(result) / reuse elements): then its axes merge with the result's and
// the inner lines run the length of its block, contiguous (the line kernel's vector
// path). The compact instance "tkj,to->tokj" needs no copy and gets none.
constexpr std::int64_t kPackReuse = 4;
constexpr std::int64_t kPackMinElements = std::int64_t{1} << 14;

/// The view of `t` (axes placed by `axis_of`, stride 0 elsewhere) a product step reads,
/// copied compact in the order of `target`'s strides when Note [Einsum broadcast
/// products] says so.
Tensor product_operand(Session& s, const Tensor& t, const Step& st, const Dims& axis_of, const Tensor* target) {
  const int r = st.shape.size();
  std::int64_t total = 1, own = 1;
  int ord[kMaxRank];
  bool overflow = false;  // extents of broadcast views are not bounded by memory: the op that allocates reports it
  for (int i = 0; i < r && !overflow; ++i) {
    ord[i] = i;
    overflow = __builtin_mul_overflow(total, st.shape[i], &total);
    if (axis_of[i] >= 0) own *= st.shape[i];  // at most total
  }
  if (overflow || total < kPackMinElements || own > total / kPackReuse || s.device() != DeviceKind::cpu) return broadcast_to_step(t, st, axis_of);
  if (target)  // the order the product walks: the target's strides, smallest first
    std::stable_sort(ord, ord + r, [&](int a, int b) { return std::llabs(target->stride(a)) < std::llabs(target->stride(b)); });
  // t's axes in that order, extent-1 axes left out: in order when their strides grow.
  std::int64_t ext[kMaxRank], str[kMaxRank];
  int at[kMaxRank];  // the step axis of each
  int m = 0;
  bool in_order = true;
  for (int k = 0; k < r; ++k) {
    const int i = ord[k];
    if (axis_of[i] < 0 || st.shape[i] == 1) continue;
    at[m] = i;
    ext[m] = st.shape[i];
    str[m] = t.stride(static_cast<int>(axis_of[i]));
    in_order = in_order && (m == 0 || std::llabs(str[m]) > std::llabs(str[m - 1]));
    ++m;
  }
  if (in_order) return broadcast_to_step(t, st, axis_of);
  const std::span<const std::int64_t> shape(ext, static_cast<std::size_t>(m));
  const Tensor packed = Tensor::empty(shape, t.dtype());
  copy_into(s, t.as_strided_view(shape, std::span<const std::int64_t>(str, static_cast<std::size_t>(m)), t.offset()), packed);
  Dims strides(r, 0);
  for (int j = 0; j < m; ++j) strides[at[j]] = packed.stride(j);
  return packed.as_strided_view(st.shape, strides, 0);
}

/// Writes zeros into `t` (any writable view) by copying a broadcast zero.
void zero_fill(Session& s, const Tensor& t) {
  const Tensor zero = Tensor::zeros(std::span<const std::int64_t>{}, t.dtype());
  const Dims strides(t.rank(), 0);
  copy_into(s, zero.as_strided_view(t.shape(), strides, 0), t);
}

/// Clears the owned nodes on exit, errors included (Note [Einsum intermediates]).
struct NodeGuard {
  std::vector<Tensor>& owned;
  ~NodeGuard() {
    for (Tensor& t : owned) t = Tensor();
  }
};

/// Runs f; validation errors of the op it calls are re-raised as einsum's, same type.
template <class F> void as_einsum_errors(F&& f) {
  try {
    f();
  } catch (const ShapeError& e) {
    throw ShapeError(kOp, e.what());
  } catch (const DTypeError& e) {
    throw DTypeError(kOp, e.what());
  } catch (const ArgumentError& e) {
    throw ArgumentError(kOp, e.what());
  }
}

}  // namespace

bool is_direct(const EinsumProgram& p) noexcept {
  if (p.n != 2 || !p.steps[0].dot || !p.steps[0].out_identity) return false;
  for (const LeafPrep& lp : p.leaves)
    if (lp.needs_view || !lp.sum_axes.empty()) return false;
  return true;
}

void run_program(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor* out, Tensor& result) {
  if (p.num_slices > 1) {
    run_slices(s, p, operands, out, result, 0, p.num_slices, false);
    return;
  }
  const int n = p.n;
  // Note [Einsum direct step]
  // Two plain operands contracted straight into the result in its own axis order are
  // one dot_general call, which validates `out` (shape, dtype, writable, overlap) itself;
  // validating it here as well would double the fixed cost of the commonest einsum.
  if (p.direct) {
    const Step& st = p.steps[0];
    const Tensor& l = operands[static_cast<std::size_t>(st.a)];
    const Tensor& r = operands[static_cast<std::size_t>(st.b)];
    if (out) as_einsum_errors([&] { dot_general_into(s, l, r, st.dims, *out); });
    else result = dot_general(s, l, r, st.dims);
    return;
  }
  if (out) {
    require_output(*out, kOp, p.dtype, p.out_shape, s.device());
    for (const Tensor& t : operands) check_overlap(*out, t, kOp, false);
  } else {
    result = new_output(s, p.out_shape, p.dtype, kOp);
  }
  const Tensor& o = out ? *out : result;
  // Note [Empty einsum]
  // An operand with no element makes every product empty: the result is zeros (or has
  // no element itself). The steps are not run, since their intermediates can be far
  // larger than the operands and the result (ij,jk->ik with j = 0 and i = 2^59 would
  // sum the first operand into 2^59 zeros before an empty product).
  if (p.empty) {
    zero_fill(s, o);
    return;
  }
  if (n == 1) {
    const LeafPrep& lp = p.leaves[0];
    const Tensor v = leaf_view(operands[0], lp);
    const Tensor target = p.single_identity ? o : o.permute_view(p.single_perm);
    if (lp.sum_axes.empty()) copy_into(s, v, target);
    else sum_into(s, v, lp.sum_axes, target);
    return;
  }
  // node[i] points at the operand itself when it needs no preparation, else at owned[i].
  thread_local std::vector<Tensor> owned;
  thread_local std::vector<const Tensor*> node;
  owned.resize(static_cast<std::size_t>(2 * n - 1));
  node.resize(static_cast<std::size_t>(2 * n - 1));
  NodeGuard guard{owned};
  for (int k = 0; k < n; ++k) {
    const LeafPrep& lp = p.leaves[static_cast<std::size_t>(k)];
    const Tensor& t = operands[static_cast<std::size_t>(k)];
    Tensor& own = owned[static_cast<std::size_t>(k)];
    if (lp.needs_view) own = leaf_view(t, lp);
    if (!lp.sum_axes.empty()) own = sum(s, lp.needs_view ? own : t, lp.sum_axes);
    node[static_cast<std::size_t>(k)] = lp.needs_view || !lp.sum_axes.empty() ? &own : &t;
  }
  for (int k = 0; k < n - 1; ++k) {
    const Step& st = p.steps[static_cast<std::size_t>(k)];
    const Tensor& A = *node[static_cast<std::size_t>(st.a)];
    const Tensor& B = *node[static_cast<std::size_t>(st.b)];
    Tensor& R = owned[static_cast<std::size_t>(n + k)];
    if (st.last || !st.out_identity) {
      // The result, or an intermediate stored permuted (Note [Intermediate layouts] in
      // layout.cpp), written through a view in step order.
      Tensor target;
      if (st.last) {
        target = st.out_identity ? o : o.permute_view(st.out_perm);
      } else {
        R = new_output(s, st.store_shape, promote(A.dtype(), B.dtype()), kOp);
        target = R.permute_view(st.out_perm);
      }
      if (st.dot) dot_general_into(s, A, B, st.dims, target);
      else mul_into(s, product_operand(s, A, st, st.a_axis, &target), product_operand(s, B, st, st.b_axis, &target), target);
    } else if (st.dot) {
      R = dot_general(s, A, B, st.dims);
    } else {  // a compact intermediate in step order
      R = mul(s, product_operand(s, A, st, st.a_axis, nullptr), product_operand(s, B, st, st.b_axis, nullptr));
    }
    node[static_cast<std::size_t>(n + k)] = &R;
    // Last use: intermediates go back to the pool (Note [Einsum intermediates]).
    owned[static_cast<std::size_t>(st.a)] = Tensor();
    owned[static_cast<std::size_t>(st.b)] = Tensor();
  }
}

// Note [Einsum slice execution]
// Slices run through the one-slice program on views of the operands (their sliced axes
// narrowed to the slice's range), so every slice's intermediates come from a session's
// pool and go back to it before that session's next slice.
//
// One after another: slices whose sliced labels are all kept in the output write
// disjoint ranges of the result, so the first slice to reach a range of the output
// writes it directly; later slices of that range (those of summed labels) run into a
// pooled temporary that axpby adds on. Ranges no slice of [begin, end) reaches are
// zero-filled. With `accumulate` every slice adds onto the output.
//
// At once (PlanOptions::slice_lanes, default the session's threads): the slices go to
// lanes of the session (Note [Lanes]), each with its own pool. When the output ranges are
// at least as many as the lanes, lane t owns a contiguous block of ranges and runs every
// slice of [begin, end) that falls in it, writing straight into the output as above (the
// blocks are disjoint, so no two lanes write one element). Otherwise lane t runs the t-th
// contiguous block of [begin, end): lane 0 into the output, the others into partial
// results the parent allocated before the fan-out, which it then adds onto the output.
namespace {

/// The output ranges of sliced program `p`: one per combination of the parts of its
/// sliced output labels.
std::int64_t output_ranges(const Slicing& sl) noexcept {
  std::int64_t ranges = 1;
  for (const auto& [axis, j] : sl.out_axes) ranges *= sl.parts[static_cast<std::size_t>(j)];
  return ranges;
}

/// Slices [begin, end) of sliced program `p` whose output range lies in [range_lo,
/// range_hi), into the validated output `o` (Note [Einsum slice execution]).
void run_slice_block(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor& o,
                     std::int64_t begin, std::int64_t end, bool accumulate, std::int64_t range_lo, std::int64_t range_hi) {
  const Slicing& sl = p.slicing;
  const EinsumProgram& one = *sl.program;
  const int J = static_cast<int>(sl.chunk.size());
  // The output range of a slice: its parts of the sliced output labels, mixed radix.
  auto range_of = [&](const std::vector<std::int64_t>& part) {
    std::int64_t range = 0;
    for (const auto& [axis, j] : sl.out_axes) range = range * sl.parts[static_cast<std::size_t>(j)] + part[static_cast<std::size_t>(j)];
    return range;
  };
  auto range_view = [&](std::int64_t range) {
    Tensor target = o;
    for (auto it = sl.out_axes.rbegin(); it != sl.out_axes.rend(); ++it) {
      const auto [axis, j] = *it;
      const std::int64_t lo = range % sl.parts[static_cast<std::size_t>(j)] * sl.chunk[static_cast<std::size_t>(j)];
      range /= sl.parts[static_cast<std::size_t>(j)];
      target = target.slice_view(axis, lo, lo + sl.chunk[static_cast<std::size_t>(j)]);
    }
    return target;
  };
  constexpr std::int64_t kMaxTracked = std::int64_t{1} << 24;
  const std::int64_t ranges = range_hi - range_lo;
  if (!accumulate && ranges > kMaxTracked) {
    // Too many ranges to track which are reached: zeros first, then add.
    if (ranges == output_ranges(sl)) zero_fill(s, o);
    else
      for (std::int64_t r = range_lo; r < range_hi; ++r) zero_fill(s, range_view(r));
    accumulate = true;
  }
  std::vector<char> reached(accumulate ? 0 : static_cast<std::size_t>(ranges), 0);
  std::vector<Tensor> views(operands.begin(), operands.end());
  std::vector<std::int64_t> part(static_cast<std::size_t>(J));
  for (std::int64_t slice = begin; slice < end; ++slice) {
    for (int j = 0; j < J; ++j) part[j] = slice / sl.stride[j] % sl.parts[j];
    const std::int64_t range = range_of(part);
    if (range < range_lo || range >= range_hi) continue;
    for (std::size_t k = 0; k < views.size(); ++k) views[k] = operands[k];
    for (const auto& [k, axis, j] : sl.operand_axes) {
      const std::int64_t lo = part[j] * sl.chunk[j];
      views[static_cast<std::size_t>(k)] = views[static_cast<std::size_t>(k)].slice_view(axis, lo, lo + sl.chunk[j]);
    }
    const Tensor target = range_view(range);
    if (!accumulate && !reached[static_cast<std::size_t>(range - range_lo)]) {
      reached[static_cast<std::size_t>(range - range_lo)] = 1;
      Tensor unused;
      run_program(s, one, views, &target, unused);
    } else {
      Tensor piece;
      run_program(s, one, views, nullptr, piece);
      axpby(s, 1.0, piece, 1.0, target);
    }
  }
  if (accumulate) return;
  for (std::int64_t r = range_lo; r < range_hi; ++r)
    if (!reached[static_cast<std::size_t>(r - range_lo)]) zero_fill(s, range_view(r));
}

}  // namespace

void run_slices(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor* out, Tensor& result,
                std::int64_t begin, std::int64_t end, bool accumulate) {
  if (out) {
    require_output(*out, kOp, p.dtype, p.out_shape, s.device());
    for (const Tensor& t : operands) check_overlap(*out, t, kOp, false);
  } else {
    result = new_output(s, p.out_shape, p.dtype, kOp);
    accumulate = false;
  }
  const Tensor& o = out ? *out : result;
  if (p.num_slices <= 1) {  // an unsliced program: slice 0 is the whole contraction
    if (begin == end) {
      if (!accumulate) zero_fill(s, o);
    } else if (!accumulate) {
      run_program(s, p, operands, &o, result);
    } else {
      Tensor part;
      run_program(s, p, operands, nullptr, part);
      axpby(s, 1.0, part, 1.0, o);
    }
    return;
  }
  const Slicing& sl = p.slicing;
  const std::int64_t ranges = output_ranges(sl);
  // Inside a lane the session has one thread, so slices never fan out twice.
  const std::int64_t want = sl.lanes > 0 ? sl.lanes : s.num_threads();
  const int lanes = static_cast<int>(std::min({want, std::int64_t{s.num_threads()}, end - begin}));
  if (lanes <= 1 || s.device() == DeviceKind::trace) {  // a trace records the slices in order
    run_slice_block(s, p, operands, o, begin, end, accumulate, 0, ranges);
    return;
  }
  // The start of block t of n items from lo in `parts` near-equal blocks (no overflow).
  auto block = [](std::int64_t lo, std::int64_t n, int parts, int t) { return lo + n / parts * t + std::min<std::int64_t>(t, n % parts); };
  if (ranges >= lanes) {
    run_lanes(s, lanes, [&](Session& lane, int t) {
      run_slice_block(lane, p, operands, o, begin, end, accumulate, block(0, ranges, lanes, t), block(0, ranges, lanes, t + 1));
    });
    return;
  }
  // Partial results of lanes 1.., from the parent's pool (it is unusable during the lanes).
  std::vector<Tensor> partial(static_cast<std::size_t>(lanes - 1));
  for (Tensor& t : partial) t = new_output(s, p.out_shape, p.dtype, kOp);
  run_lanes(s, lanes, [&](Session& lane, int t) {
    const Tensor& target = t == 0 ? o : partial[static_cast<std::size_t>(t - 1)];
    run_slice_block(lane, p, operands, target, block(begin, end - begin, lanes, t), block(begin, end - begin, lanes, t + 1),
                    t == 0 && accumulate, 0, ranges);
  });
  for (const Tensor& t : partial) axpby(s, 1.0, t, 1.0, o);
}

}  // namespace tenferro::detail::einsum
