// The linalg family's shared inference and output handling (ops/linalg.hpp).
#include "ops/linalg.hpp"

#include <climits>
#include <string>

#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"
#include "tenferro/ops.hpp"

namespace tenferro::detail::linalg {

MatrixShape matrix_infer(const Tensor& a, std::string_view op, std::string_view what) {
  if (!a.defined()) throw ArgumentError(op, std::string(what) + " tensor is undefined");
  if (a.rank() < 2)
    throw RankError(op, std::string(what) + " must have rank >= 2 ([M, N, batch...]), got " + describe(a));
  if (!is_inexact(a.dtype()))
    throw DTypeError(op, std::string(what) + " must have a float or complex dtype, got " + describe(a));
  MatrixShape r{a.extent(0), a.extent(1), 1};
  for (int i = 2; i < a.rank(); ++i) r.batches *= a.extent(i);
  // LAPACK takes 32-bit extents and leading dimensions.
  if (r.m > INT32_MAX / 2 || r.n > INT32_MAX / 2 || r.m * r.n > INT32_MAX / 2)
    throw ShapeError(op, std::string(what) + " is too large for LAPACK's 32-bit indices: " + describe(a));
  return r;
}

MatrixShape check_matrix_operand(Session& s, const Tensor& a, std::string_view op) {
  s.check(op);
  require_tensor_on(a, s.device(), op, "a");
  return matrix_infer(a, op);
}

void require_square(const Tensor& a, std::string_view op, std::string_view what) {
  if (a.extent(0) != a.extent(1))
    throw ShapeError(op, std::string(what) + " must be square in its first two axes, got " + describe(a));
}

void require_same_batch(const Tensor& a, const Tensor& b, std::string_view op) {
  if (a.dtype() != b.dtype()) throw DTypeError(op, "operands must have the same dtype, got " + describe(a) + " and " + describe(b));
  bool same = a.rank() == b.rank();
  for (int i = 2; same && i < a.rank(); ++i) same = a.extent(i) == b.extent(i);
  if (!same) throw ShapeError(op, "batch axes (axes 2...) must match, got " + describe(a) + " and " + describe(b));
}

void require_finite(Session& s, const Tensor& a, std::string_view op) {
  // While tracing there is no data: the op's call node runs this check when the graph
  // runs (Note [Linear algebra in graphs] in src/runtime/trace_calls.cpp).
  if (s.device() == DeviceKind::trace) return;
  const std::int64_t bad = data_checks(s, op).first_nonfinite(s, a);
  if (bad < 0) return;
  const std::int64_t m = a.extent(0), n = a.extent(1);
  throw ArgumentError(op, "input must be finite, found a non-finite element at [" + std::to_string(bad % m) + ", " +
                              std::to_string(bad / m % n) + "] of batch " + std::to_string(bad / (m * n)) + " of " + describe(a));
}

void check_into(const Session& s, std::string_view op, std::initializer_list<IntoOut> outs, std::initializer_list<const Tensor*> inputs) {
  for (const IntoOut& o : outs) {
    const std::string name(o.name);
    if (!o.produced) {
      if (o.out->defined())
        throw ArgumentError(op, name + " must be an undefined Tensor: this mode does not compute it, got " + describe(*o.out));
      continue;
    }
    if (!o.out->defined()) throw ArgumentError(op, name + " tensor is undefined");
    require_tensor_on(*o.out, s.device(), op, name);
    const Tensor& t = *o.out;
    if (t.dtype() != o.dtype)
      throw DTypeError(op, name + " has dtype " + std::string(dtype_name(t.dtype())) + ", expected " + std::string(dtype_name(o.dtype)));
    bool same = t.rank() == o.shape.size();
    for (int i = 0; same && i < t.rank(); ++i) same = t.extent(i) == o.shape[i];
    if (!same) throw ShapeError(op, name + " has shape " + t.shape().to_string() + ", expected " + o.shape.to_string());
    if (t.read_only()) throw ArgumentError(op, name + " is a read-only (broadcast) view");
    const Shape sh = t.shape();
    const Dims st = t.strides();
    if (!is_non_overlapping(sh, st))
      throw ArgumentError(op, name + " has overlapping elements (shape " + sh.to_string() + ", strides " + st.to_string() + ")");
  }
  for (auto i = outs.begin(); i != outs.end(); ++i) {
    if (!i->produced) continue;
    for (auto j = outs.begin(); j != i; ++j)
      if (j->produced && memory_overlaps(*i->out, *j->out))
        throw ArgumentError(op, "outputs " + std::string(j->name) + " and " + std::string(i->name) + " overlap in memory");
    for (const Tensor* in : inputs)
      if (in && in->defined() && memory_overlaps(*i->out, *in))
        throw ArgumentError(op, std::string(i->name) + " overlaps an input in memory (" + describe(*in) + ")");
  }
  for (const IntoOut& o : outs)  // Note [Version counters]
    if (o.produced && o.out->defined()) o.out->note_write();
}

void commit_into(Session& s, std::initializer_list<IntoOut> outs, std::initializer_list<const Tensor*> results) {
  // outs and results are written side by side at every call site (same length).
  auto r = results.begin();
  for (const IntoOut& o : outs) {
    if (o.produced) copy_into(s, **r, *o.out);
    ++r;
  }
}

Dims matrix_shape(std::int64_t r, std::int64_t c, const Tensor& a) {
  Dims d;
  d.resize(a.rank());
  d[0] = r;
  d[1] = c;
  for (int i = 2; i < a.rank(); ++i) d[i] = a.extent(i);
  return d;
}

Dims vector_shape(std::int64_t r, const Tensor& a) {
  Dims d;
  d.resize(a.rank() - 1);
  d[0] = r;
  for (int i = 2; i < a.rank(); ++i) d[i - 1] = a.extent(i);
  return d;
}

Dims batch_shape(const Tensor& a) {
  Dims d;
  d.resize(a.rank() - 2);
  for (int i = 2; i < a.rank(); ++i) d[i - 2] = a.extent(i);
  return d;
}

Rhs rhs_infer(const Tensor& a, const Tensor& b, std::string_view op, std::int64_t rows, bool right_side) {
  if (!b.defined()) throw ArgumentError(op, "b tensor is undefined");
  if (!is_inexact(b.dtype())) throw DTypeError(op, "b must have a float or complex dtype, got " + describe(b));
  if (a.dtype() != b.dtype()) throw DTypeError(op, "a and b must have the same dtype, got " + describe(a) + " and " + describe(b));
  Rhs r;
  if (b.rank() == 1 && a.rank() == 2 && !right_side) {
    r.vector = true;
    r.rows = b.extent(0);
    r.cols = 1;
    r.owned = b.reshape_view({b.extent(0), 1});
  } else {
    if (b.rank() < 2) throw RankError(op, "b must be a matrix [N, K, batch...] (or a vector [N] for unbatched a), got " + describe(b));
    require_same_batch(a, b, op);
    r.rows = b.extent(0);
    r.cols = b.extent(1);
    r.view = &b;
  }
  const std::int64_t have = right_side ? r.cols : r.rows;
  if (have != rows)
    throw ShapeError(op, std::string("b must have ") + (right_side ? "columns" : "rows") + " matching a's order " + std::to_string(rows) +
                             ", got " + describe(a) + " and " + describe(b));
  if (r.rows > INT32_MAX / 2 || r.cols > INT32_MAX / 2 || r.rows * r.cols > INT32_MAX / 2)
    throw ShapeError(op, "b is too large for LAPACK's 32-bit indices: " + describe(b));
  return r;
}

Dims perm_shape(const Tensor& pivots, std::int64_t m) {
  Dims shape{m};
  for (int i = 1; i < pivots.rank(); ++i) shape.push_back(pivots.extent(i));
  return shape;
}

}  // namespace tenferro::detail::linalg
