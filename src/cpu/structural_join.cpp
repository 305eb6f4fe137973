// Joining ops: concatenate (along an existing axis) and stack (along a new one). Each
// input is copied into its slab of the output, a strided view of it; inputs of another
// dtype than the promoted result are converted on the way (cast_into: promotion never
// needs the checked conversion, and the values are those `promote` defines).
#include <string>

#include "cpu/structural_common.hpp"

namespace tenferro {

using namespace detail;  // this file implements public structural ops

namespace {

/// Validated request of concatenate or stack.
struct JoinPlan {
  Dims shape;   ///< result shape
  DType dtype;  ///< promoted dtype
  int axis;     ///< result axis the inputs are laid along
};

/// Checks every input (defined, CPU) and promotes their dtypes.
DType check_inputs(std::span<const Tensor> tensors, std::string_view op) {
  if (tensors.empty()) throw ArgumentError(op, "needs at least one tensor");
  DType d = tensors[0].defined() ? tensors[0].dtype() : DType::b8;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    require_cpu_tensor(tensors[k], op, "input " + std::to_string(k));
    d = promote(d, tensors[k].dtype());
  }
  return d;
}

JoinPlan concat_plan(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op) {
  JoinPlan p;
  p.dtype = check_inputs(tensors, op);
  const Tensor& t0 = tensors[0];
  const int r = t0.rank();
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].rank() != r)
      throw RankError(op, "input " + std::to_string(k) + " " + describe(tensors[k]) + " has rank " + std::to_string(tensors[k].rank()) +
                              ", input 0 " + describe(t0) + " rank " + std::to_string(r));
  p.axis = normalize_axis(axis, r, op);
  p.shape = t0.shape();
  std::int64_t total = 0;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    for (int i = 0; i < r; ++i)
      if (i != p.axis && t.extent(i) != t0.extent(i))
        throw ShapeError(op, "input " + std::to_string(k) + " has shape " + t.shape().to_string() + ", input 0 " + t0.shape().to_string() +
                                 ": extents must agree except along axis " + std::to_string(p.axis));
    total = checked_add(total, t.extent(p.axis), op);
  }
  p.shape[p.axis] = total;
  checked_numel(p.shape, op);
  return p;
}

JoinPlan stack_plan(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op) {
  JoinPlan p;
  p.dtype = check_inputs(tensors, op);
  const Tensor& t0 = tensors[0];
  const Shape s0 = t0.shape();
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].shape() != s0)
      throw ShapeError(op, "input " + std::to_string(k) + " has shape " + tensors[k].shape().to_string() + ", input 0 " + s0.to_string() +
                               ": stacked tensors must have equal shapes");
  const int r = t0.rank() + 1;
  if (r > kMaxRank) throw RankError(op, "result rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  p.axis = normalize_axis(axis, r, op);
  p.shape = Dims(r, 0);
  for (int i = 0, k = 0; i < r; ++i) p.shape[i] = i == p.axis ? static_cast<std::int64_t>(tensors.size()) : s0[k++];
  checked_numel(p.shape, op);
  return p;
}

/// dst[...] = src[...] converting to dst's dtype when needed.
void copy_or_cast(Session& s, const Tensor& src, const Tensor& dst) {
  if (src.dtype() == dst.dtype()) copy_same_dtype(s, src, dst);
  else cast_into(s, src, dst);
}

void concat_run(Session& s, std::span<const Tensor> tensors, const JoinPlan& p, const Tensor& out) {
  if (out.numel() == 0) return;
  std::int64_t pos = 0;
  for (const Tensor& t : tensors) {
    const std::int64_t e = t.extent(p.axis);
    if (e > 0) copy_or_cast(s, t, out.slice_view(p.axis, pos, pos + e));
    pos += e;
  }
}

void stack_run(Session& s, std::span<const Tensor> tensors, const JoinPlan& p, const Tensor& out) {
  if (out.numel() == 0) return;
  // The slab of input k: out with axis p.axis fixed at k (that axis dropped).
  Dims strides;
  for (int i = 0; i < out.rank(); ++i)
    if (i != p.axis) strides.push_back(out.stride(i));
  const std::int64_t step = out.stride(p.axis);
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    copy_or_cast(s, t, out.as_strided_view(t.shape(), strides, out.offset() + static_cast<std::int64_t>(k) * step));
  }
}

void check_out(std::span<const Tensor> tensors, const JoinPlan& p, const Tensor& out, std::string_view op) {
  require_output(out, op, p.dtype, p.shape);
  for (const Tensor& t : tensors) check_overlap(out, t, op, false);
}

}  // namespace

Tensor concatenate(Session& s, std::span<const Tensor> tensors, std::int64_t axis) {
  constexpr std::string_view op = "concatenate";
  s.check(op);
  const JoinPlan p = concat_plan(tensors, axis, op);
  Tensor r = new_output(p.shape, p.dtype, op);
  concat_run(s, tensors, p, r);
  return r;
}

void concatenate_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out) {
  constexpr std::string_view op = "concatenate";
  s.check(op);
  const JoinPlan p = concat_plan(tensors, axis, op);
  check_out(tensors, p, out, op);
  concat_run(s, tensors, p, out);
}

Tensor stack(Session& s, std::span<const Tensor> tensors, std::int64_t axis) {
  constexpr std::string_view op = "stack";
  s.check(op);
  const JoinPlan p = stack_plan(tensors, axis, op);
  Tensor r = new_output(p.shape, p.dtype, op);
  stack_run(s, tensors, p, r);
  return r;
}

void stack_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out) {
  constexpr std::string_view op = "stack";
  s.check(op);
  const JoinPlan p = stack_plan(tensors, axis, op);
  check_out(tensors, p, out, op);
  stack_run(s, tensors, p, out);
}

}  // namespace tenferro
