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
#include "einsum/program.hpp"
#include "tenferro/dot.hpp"
#include "tenferro/ops.hpp"

namespace tenferro::detail::einsum {
namespace {

constexpr std::string_view kOp = "einsum";

/// The view of operand `t` with one axis per distinct label (diagonals for repeated
/// labels, stretched ellipsis axes dropped).
Tensor leaf_view(const Tensor& t, const LeafPrep& lp) {
  if (!lp.needs_view) return t;
  Dims shape(lp.labels.size(), 0), strides(lp.labels.size(), 0);
  for (int a = 0; a < lp.axis_to_label.size(); ++a) {
    const std::int64_t j = lp.axis_to_label[a];
    if (j < 0) continue;
    shape[static_cast<int>(j)] = t.extent(a);
    strides[static_cast<int>(j)] += t.stride(a);
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

struct NodeGuard {
  std::vector<Tensor>& nodes;
  ~NodeGuard() {
    for (Tensor& t : nodes) t = Tensor();
  }
};

}  // namespace

void run_program(Session& s, const EinsumProgram& p, std::span<const Tensor> operands, const Tensor* out, Tensor& result) {
  if (out) {
    require_output(*out, kOp, p.dtype, p.out_shape);
    for (const Tensor& t : operands) check_overlap(*out, t, kOp, false);
  } else {
    result = new_output(p.out_shape, p.dtype, kOp);
  }
  const Tensor& o = out ? *out : result;
  const int n = p.n;
  if (n == 1) {
    const LeafPrep& lp = p.leaves[0];
    const Tensor v = leaf_view(operands[0], lp);
    const Tensor target = p.single_identity ? o : o.permute_view(p.single_perm);
    if (lp.sum_axes.empty()) copy_into(s, v, target);
    else sum_into(s, v, lp.sum_axes, target);
    return;
  }
  thread_local std::vector<Tensor> nodes;
  nodes.resize(static_cast<std::size_t>(2 * n - 1));
  NodeGuard guard{nodes};
  for (int k = 0; k < n; ++k) {
    const LeafPrep& lp = p.leaves[static_cast<std::size_t>(k)];
    Tensor& node = nodes[static_cast<std::size_t>(k)];
    node = leaf_view(operands[static_cast<std::size_t>(k)], lp);
    if (!lp.sum_axes.empty()) node = sum(s, node, lp.sum_axes);
  }
  for (int k = 0; k < n - 1; ++k) {
    const Step& st = p.steps[static_cast<std::size_t>(k)];
    Tensor& A = nodes[static_cast<std::size_t>(st.a)];
    Tensor& B = nodes[static_cast<std::size_t>(st.b)];
    Tensor& R = nodes[static_cast<std::size_t>(n + k)];
    if (st.last) {
      const Tensor target = st.out_identity ? o : o.permute_view(st.out_perm);
      if (st.dot) dot_general_into(s, A, B, st.dims, target);
      else mul_into(s, broadcast_to_step(A, st, st.a_axis), broadcast_to_step(B, st, st.b_axis), target);
    } else if (st.dot) {
      R = dot_general(s, A, B, st.dims);
    } else {
      R = mul(s, broadcast_to_step(A, st, st.a_axis), broadcast_to_step(B, st, st.b_axis));
    }
    A = Tensor();  // last use: back to the pool (Note [Einsum intermediates])
    B = Tensor();
  }
}

}  // namespace tenferro::detail::einsum
