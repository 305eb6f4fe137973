// The indexing ops along axes and windows (indexing.hpp): slice (a view plus the
// ConvertKernel copy, Note [Structural ops as views plus one copy]), dynamic_slice and
// dynamic_update_slice (WindowKernel, UpdateWindowKernel: the starts are data, read by
// the kernel and clamped), take_along_axis and index_select (TakeKernel, after the data
// check `first_out_of_range`). Inference is pure; every argument, and every checked
// index, is validated before anything is written.
#include "ops/indexing.hpp"

#include <string>

#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {
namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

/// StableHLO dynamic_slice C2-C3 (one start per axis; here a rank-1 tensor).
void check_starts(const Tensor& start_indices, int r, std::string_view op) {
  require_index_dtype(start_indices, op, "start_indices");
  if (start_indices.rank() != 1)
    throw RankError(op, "start_indices must be a rank-1 tensor, got shape " + start_indices.shape().to_string());
  if (start_indices.extent(0) != r)
    throw ShapeError(op, "start_indices has " + num(start_indices.extent(0)) + " entries for an operand of rank " + num(r));
}

}  // namespace

void require_index_dtype(const Tensor& t, std::string_view op, std::string_view what) {
  if (!is_integer(t.dtype()))
    throw DTypeError(op, std::string(what) + " must be i32 or i64, got " + std::string(dtype_name(t.dtype())));
}

Tensor slice_view_of(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& steps, std::string_view op) {
  const int r = x.rank();
  auto check_len = [&](const Dims& d, const char* name) {
    if (d.size() != r)
      throw RankError(op, std::string(name) + " " + d.to_string() + " has " + num(d.size()) + " entries for x of rank " + num(r));
  };
  check_len(starts, "starts");
  check_len(limits, "limits");
  if (!steps.empty()) check_len(steps, "strides");
  Dims shape(r, 0), strides(r, 0);
  std::int64_t offset = 0;
  for (int d = 0; d < r; ++d) {
    const std::int64_t step = steps.empty() ? 1 : steps[d];
    if (step <= 0) throw ArgumentError(op, "strides[" + num(d) + "] = " + num(step) + " must be positive (strides " + steps.to_string() + ")");
    const std::int64_t n = x.extent(d);
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > n)
      throw IndexError(op, "starts[" + num(d) + "] = " + num(starts[d]) + ", limits[" + num(d) + "] = " + num(limits[d]) +
                               " out of range for axis " + num(d) + " of extent " + num(n) + " (need 0 <= start <= limit <= extent)");
    // ceil((limit - start) / step) without overflow: limit - start >= 0.
    shape[d] = limits[d] == starts[d] ? 0 : (limits[d] - starts[d] - 1) / step + 1;
    strides[d] = sliced_stride(x.stride(d), step, shape[d], static_cast<std::int64_t>(dtype_size(x.dtype())), op);
    if (shape[d] > 0) offset = checked_add(offset, checked_mul(starts[d], x.stride(d), op), op);
  }
  // An empty slice keeps x's first element as its base (no element is ever read).
  for (int d = 0; d < r; ++d)
    if (shape[d] == 0) offset = 0;
  return x.as_strided_view(shape, strides, x.offset() + offset);
}

void dynamic_slice_infer(const Tensor& x, const Tensor& start_indices, const Dims& sizes, std::string_view op) {
  check_starts(start_indices, x.rank(), op);
  if (sizes.size() != x.rank())
    throw RankError(op, "slice_sizes " + sizes.to_string() + " has " + num(sizes.size()) + " entries for an operand of rank " + num(x.rank()));
  for (int d = 0; d < x.rank(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.extent(d))
      throw ShapeError(op, "slice_sizes[" + num(d) + "] = " + num(sizes[d]) + " outside [0, " + num(x.extent(d)) + "] (operand shape " +
                               x.shape().to_string() + ")");
}

void dynamic_update_slice_infer(const Tensor& x, const Tensor& update, const Tensor& start_indices, std::string_view op) {
  if (update.dtype() != x.dtype())
    throw DTypeError(op, "update dtype " + std::string(dtype_name(update.dtype())) + " differs from operand dtype " +
                             std::string(dtype_name(x.dtype())));
  if (update.rank() != x.rank())
    throw RankError(op, "update of shape " + update.shape().to_string() + " has rank " + num(update.rank()) + ", operand " +
                            x.shape().to_string() + " rank " + num(x.rank()));
  for (int d = 0; d < x.rank(); ++d)
    if (update.extent(d) > x.extent(d))
      throw ShapeError(op, "update shape " + update.shape().to_string() + " exceeds operand shape " + x.shape().to_string() + " on axis " + num(d));
  check_starts(start_indices, x.rank(), op);
}

TakeSignature take_along_axis_infer(const Tensor& x, const Tensor& indices, std::int64_t axis, std::string_view op) {
  require_index_dtype(indices, op, "indices");
  const int r = x.rank();
  if (indices.rank() != r)
    throw RankError(op, "indices of shape " + indices.shape().to_string() + " must have the rank of x " + x.shape().to_string());
  TakeSignature sig;
  sig.axis = normalize_axis(axis, r, op);
  sig.shape = Dims(r, 0);
  for (int d = 0; d < r; ++d) {
    const std::int64_t xe = x.extent(d), ie = indices.extent(d);
    if (d == sig.axis || xe == ie || xe == 1) sig.shape[d] = ie;
    else if (ie == 1) sig.shape[d] = xe;
    else
      throw ShapeError(op, "indices shape " + indices.shape().to_string() + " does not broadcast against x shape " + x.shape().to_string() +
                               " off axis " + num(sig.axis) + " (axis " + num(d) + ")");
  }
  return sig;
}

TakeSignature index_select_infer(const Tensor& x, const Tensor& indices, std::int64_t axis, std::string_view op) {
  require_index_dtype(indices, op, "indices");
  if (indices.rank() != 1) throw RankError(op, "indices must be a rank-1 tensor, got shape " + indices.shape().to_string());
  TakeSignature sig;
  sig.axis = normalize_axis(axis, x.rank(), op);
  sig.shape = x.shape();
  sig.shape[sig.axis] = indices.extent(0);
  return sig;
}

void check_index_range(Session& s, const Tensor& x, const Tensor& indices, int axis, std::string_view op) {
  // While tracing there is no data: the graph's take node runs this check when it runs
  // (Note [Tracing] in tenferro/graph.hpp).
  if (s.device() == DeviceKind::trace) return;
  const std::int64_t n = x.extent(axis);
  const std::int64_t k = data_checks(s, op).first_out_of_range(s, indices, n);
  if (k < 0) return;
  const Dims where = position_index(indices, k);
  throw IndexError(op, "indices" + where.to_string() + " = " + indices.at(where.span()).to_string() + " out of range [" + num(-n) + ", " +
                           num(n) + ") for axis " + num(axis) + " of x with shape " + x.shape().to_string());
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

using namespace detail;

/// s.check(op), then each tensor defined and on the session's device.
void check_inputs(Session& s, std::string_view op, std::initializer_list<std::pair<const Tensor*, const char*>> ts) {
  s.check(op);
  for (const auto& [t, what] : ts) require_tensor_on(*t, s.device(), op, what);
}


void slice_run(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& steps, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "slice";
  check_inputs(s, op, {{&x, "x"}});
  const Tensor view = slice_view_of(x, starts, limits, steps, op);
  const ConvertKernel k = kernel_for(s, OpId::slice, x.dtype()).fn.convert;
  if (out) {
    require_output(*out, op, x.dtype(), view.shape(), s.device());
    check_overlap(*out, x, op, false);
  } else {
    result = new_output(s, view.shape(), x.dtype(), op);
  }
  k(s, view, out ? *out : result);
}

void dynamic_slice_run(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& sizes, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "dynamic_slice";
  check_inputs(s, op, {{&x, "operand"}, {&start_indices, "start_indices"}});
  dynamic_slice_infer(x, start_indices, sizes, op);
  const WindowKernel k = kernel_for(s, OpId::dynamic_slice, x.dtype()).fn.window;
  if (out) {
    require_output(*out, op, x.dtype(), sizes, s.device());
    check_overlap(*out, x, op, false);
    check_overlap(*out, start_indices, op, false);
  } else {
    result = new_output(s, sizes, x.dtype(), op);
  }
  k(s, x, start_indices, out ? *out : result);
}

void dynamic_update_slice_run(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices, const Tensor* out,
                              Tensor& result) {
  constexpr std::string_view op = "dynamic_update_slice";
  check_inputs(s, op, {{&x, "operand"}, {&update, "update"}, {&start_indices, "start_indices"}});
  dynamic_update_slice_infer(x, update, start_indices, op);
  const UpdateWindowKernel k = kernel_for(s, OpId::dynamic_update_slice, x.dtype()).fn.update_window;
  const Shape shape = x.shape();
  if (out) {
    require_output(*out, op, x.dtype(), shape, s.device());
    check_overlap(*out, x, op, true);  // in place (identical) or disjoint
    check_overlap(*out, update, op, false);
    check_overlap(*out, start_indices, op, false);
  } else {
    result = new_output(s, shape, x.dtype(), op);
  }
  k(s, x, update, start_indices, out ? *out : result);
}

/// take_along_axis or index_select, both forms (`out` null: allocate into `result`).
void take_run(Session& s, OpId id, const Tensor& x, const Tensor& indices, std::int64_t axis, const Tensor* out, Tensor& result) {
  const std::string_view op = op_name(id);
  check_inputs(s, op, {{&x, "x"}, {&indices, "indices"}});
  const TakeSignature sig = id == OpId::take_along_axis ? take_along_axis_infer(x, indices, axis, op) : index_select_infer(x, indices, axis, op);
  const TakeKernel k = kernel_for(s, id, x.dtype()).fn.take;
  check_index_range(s, x, indices, sig.axis, op);
  if (out) {
    require_output(*out, op, x.dtype(), sig.shape, s.device());
    check_overlap(*out, x, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(s, sig.shape, x.dtype(), op);
  }
  k(s, x, indices, out ? *out : result, sig.axis);
}

}  // namespace

Tensor slice(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides) {
  Tensor r;
  slice_run(s, x, starts, limits, strides, nullptr, r);
  return r;
}
void slice_into(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides, const Tensor& out) {
  Tensor r;
  slice_run(s, x, starts, limits, strides, &out, r);
}
Tensor slice_view(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides) {
  constexpr std::string_view op = "slice_view";
  if (!x.defined()) throw ArgumentError(op, "x tensor is undefined");
  return slice_view_of(x, starts, limits, strides, op);
}

Tensor dynamic_slice(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes) {
  Tensor r;
  dynamic_slice_run(s, x, start_indices, slice_sizes, nullptr, r);
  return r;
}
void dynamic_slice_into(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes, const Tensor& out) {
  Tensor r;
  dynamic_slice_run(s, x, start_indices, slice_sizes, &out, r);
}

Tensor dynamic_update_slice(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices) {
  Tensor r;
  dynamic_update_slice_run(s, x, update, start_indices, nullptr, r);
  return r;
}
void dynamic_update_slice_into(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices, const Tensor& out) {
  Tensor r;
  dynamic_update_slice_run(s, x, update, start_indices, &out, r);
}
void dynamic_update_slice_inplace(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices) {
  constexpr std::string_view op = "dynamic_update_slice";
  check_inputs(s, op, {{&x, "operand"}});
  if (x.read_only()) throw ArgumentError(op, "operand is a read-only (broadcast) view and cannot be updated in place");
  x.note_write();
  Tensor r;
  dynamic_update_slice_run(s, x, update, start_indices, &x, r);
}

Tensor take_along_axis(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis) {
  Tensor r;
  take_run(s, OpId::take_along_axis, x, indices, axis, nullptr, r);
  return r;
}
void take_along_axis_into(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis, const Tensor& out) {
  Tensor r;
  take_run(s, OpId::take_along_axis, x, indices, axis, &out, r);
}

Tensor index_select(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices) {
  Tensor r;
  take_run(s, OpId::index_select, x, indices, axis, nullptr, r);
  return r;
}
void index_select_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices, const Tensor& out) {
  Tensor r;
  take_run(s, OpId::index_select, x, indices, axis, &out, r);
}

}  // namespace tenferro
