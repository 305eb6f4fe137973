// The joining ops: concatenate (along an existing axis) and stack (along a new one).
// Inference is pure (ops/structural.hpp); each input is then copied into its slab of
// the output, a strided view of it, by the backend's conversion kernel (ConvertKernel:
// an input of another dtype than the promoted result converts on the way, with the
// values `promote` defines, so the checked conversion is never needed).
#include <string>

#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/structural.hpp"
#include "tenferro/structural.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {
namespace {

/// No input, or an undefined one: ArgumentError. Else the promoted dtype.
DType promoted_inputs(std::span<const Tensor> tensors, std::string_view op) {
  if (tensors.empty()) throw ArgumentError(op, "needs at least one tensor");
  DType d = DType::b8;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (!tensors[k].defined()) throw ArgumentError(op, "input " + std::to_string(k) + " tensor is undefined");
    d = k == 0 ? tensors[k].dtype() : promote(d, tensors[k].dtype());
  }
  return d;
}

}  // namespace

JoinSignature concatenate_infer(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op) {
  JoinSignature sig;
  sig.dtype = promoted_inputs(tensors, op);
  const Tensor& t0 = tensors[0];
  const int r = t0.rank();
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].rank() != r)
      throw RankError(op, "input " + std::to_string(k) + " " + describe(tensors[k]) + " has rank " + std::to_string(tensors[k].rank()) +
                              ", input 0 " + describe(t0) + " rank " + std::to_string(r));
  sig.axis = normalize_axis(axis, r, op);
  sig.shape = t0.shape();
  std::int64_t total = 0;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    for (int i = 0; i < r; ++i)
      if (i != sig.axis && t.extent(i) != t0.extent(i))
        throw ShapeError(op, "input " + std::to_string(k) + " has shape " + t.shape().to_string() + ", input 0 " + t0.shape().to_string() +
                                 ": extents must agree except along axis " + std::to_string(sig.axis));
    total = checked_add(total, t.extent(sig.axis), op);
  }
  sig.shape[sig.axis] = total;
  checked_numel(sig.shape, op);
  return sig;
}

JoinSignature stack_infer(std::span<const Tensor> tensors, std::int64_t axis, std::string_view op) {
  JoinSignature sig;
  sig.dtype = promoted_inputs(tensors, op);
  const Shape s0 = tensors[0].shape();
  for (std::size_t k = 1; k < tensors.size(); ++k)
    if (tensors[k].shape() != s0)
      throw ShapeError(op, "input " + std::to_string(k) + " has shape " + tensors[k].shape().to_string() + ", input 0 " + s0.to_string() +
                               ": stacked tensors must have equal shapes");
  const int r = static_cast<int>(s0.size()) + 1;
  if (r > kMaxRank) throw RankError(op, "result rank " + std::to_string(r) + " exceeds the maximum " + std::to_string(kMaxRank));
  sig.axis = normalize_axis(axis, r, op);
  sig.shape = Dims(r, 0);
  for (int i = 0, k = 0; i < r; ++i) sig.shape[i] = i == sig.axis ? static_cast<std::int64_t>(tensors.size()) : s0[k++];
  checked_numel(sig.shape, op);
  return sig;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;

/// s.check(op), then every input defined and on the session's device.
void check_inputs(Session& s, std::span<const Tensor> tensors, std::string_view op) {
  s.check(op);
  for (std::size_t k = 0; k < tensors.size(); ++k) require_tensor_on(tensors[k], s.device(), op, "input " + std::to_string(k));
}

void check_out(std::span<const Tensor> tensors, const JoinSignature& sig, const Tensor& out, Session& s, std::string_view op) {
  require_output(out, op, sig.dtype, sig.shape, s.device());
  for (const Tensor& t : tensors) check_overlap(out, t, op, false);
}

void concat_run(Session& s, ConvertKernel k, std::span<const Tensor> tensors, const JoinSignature& sig, const Tensor& out) {
  if (out.numel() == 0) return;
  std::int64_t pos = 0;
  for (const Tensor& t : tensors) {
    const std::int64_t e = t.extent(sig.axis);
    if (e > 0) k(s, t, out.slice_view(sig.axis, pos, pos + e));
    pos += e;
  }
}

void stack_run(Session& s, ConvertKernel k, std::span<const Tensor> tensors, const JoinSignature& sig, const Tensor& out) {
  if (out.numel() == 0) return;
  // The slab of input k: out with axis sig.axis fixed at k (that axis dropped).
  Dims strides;
  for (int i = 0; i < out.rank(); ++i)
    if (i != sig.axis) strides.push_back(out.stride(i));
  const std::int64_t step = out.stride(sig.axis);
  for (std::size_t j = 0; j < tensors.size(); ++j) {
    const Tensor& t = tensors[j];
    k(s, t, out.as_strided_view(t.shape(), strides, out.offset() + static_cast<std::int64_t>(j) * step));
  }
}

/// concatenate or stack, both forms (`out` null: allocate into `result`).
void join(Session& s, OpId id, std::span<const Tensor> tensors, std::int64_t axis, const Tensor* out, Tensor& result) {
  const std::string_view op = op_name(id);
  const bool concat = id == OpId::concatenate;
  check_inputs(s, tensors, op);
  const JoinSignature sig = concat ? concatenate_infer(tensors, axis, op) : stack_infer(tensors, axis, op);
  const ConvertKernel k = kernel_for(s, id, sig.dtype).fn.convert;
  if (out) check_out(tensors, sig, *out, s, op);
  else result = new_output(s, sig.shape, sig.dtype, op);
  const Tensor& o = out ? *out : result;
  if (concat) concat_run(s, k, tensors, sig, o);
  else stack_run(s, k, tensors, sig, o);
}

}  // namespace

Tensor concatenate(Session& s, std::span<const Tensor> tensors, std::int64_t axis) {
  Tensor r;
  join(s, OpId::concatenate, tensors, axis, nullptr, r);
  return r;
}

void concatenate_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out) {
  Tensor r;
  join(s, OpId::concatenate, tensors, axis, &out, r);
}

Tensor stack(Session& s, std::span<const Tensor> tensors, std::int64_t axis) {
  Tensor r;
  join(s, OpId::stack, tensors, axis, nullptr, r);
  return r;
}

void stack_into(Session& s, std::span<const Tensor> tensors, std::int64_t axis, const Tensor& out) {
  Tensor r;
  join(s, OpId::stack, tensors, axis, &out, r);
}

}  // namespace tenferro
