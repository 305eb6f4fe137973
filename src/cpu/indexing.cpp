// slice, slice_view, dynamic_slice, dynamic_update_slice, take_along_axis, index_select
// (indexing.hpp), and the copy helpers of index_common.hpp. Every op validates all of
// its arguments (and, where indices are checked rather than clamped, every index) before
// anything is written, then copies through LoopPlan without materializing its inputs.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cpu/index_common.hpp"

namespace tenferro {
namespace detail {

// ---------------------------------------------------------------- shared helpers

void require_index_tensor(const Tensor& t, std::string_view op, std::string_view what) {
  require_cpu_tensor(t, op, what);
  if (!is_integer(t.dtype()))
    throw DTypeError(op, std::string(what) + " must be i32 or i64, got " + std::string(dtype_name(t.dtype())));
}

Dims load_index_vector(const Tensor& t) {
  const std::int64_t n = t.extent(0);
  Dims v(static_cast<int>(n), 0);
  const char* p = static_cast<const char*>(t.data());
  const std::int64_t st = t.stride(0) * static_cast<std::int64_t>(dtype_size(t.dtype()));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<int>(i)] = load_index(p + i * st, t.dtype());
  return v;
}

void byte_strides(const Tensor& t, std::int64_t* out) noexcept {
  const auto es = static_cast<std::int64_t>(dtype_size(t.dtype()));
  for (int i = 0; i < t.rank(); ++i) out[i] = t.stride(i) * es;
}

namespace {
template <std::size_t ES>
void copy_elements_sized(char* dst, std::int64_t ds, const char* src, std::int64_t ss, std::int64_t n) noexcept {
  if (ds == static_cast<std::int64_t>(ES) && ss == static_cast<std::int64_t>(ES)) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * ES);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i, dst += ds, src += ss) std::memcpy(dst, src, ES);
}
}  // namespace

void copy_elements(char* dst, std::int64_t ds, const char* src, std::int64_t ss, std::int64_t n, std::size_t es) noexcept {
  switch (es) {
    case 1: return copy_elements_sized<1>(dst, ds, src, ss, n);
    case 4: return copy_elements_sized<4>(dst, ds, src, ss, n);
    case 8: return copy_elements_sized<8>(dst, ds, src, ss, n);
    default: return copy_elements_sized<16>(dst, ds, src, ss, n);
  }
}

void copy_strided(Session& s, int r, const std::int64_t* shape, char* dst, const std::int64_t* dst_strides, const char* src,
                  const std::int64_t* src_strides, std::size_t es) {
  const std::int64_t* st[2] = {dst_strides, src_strides};
  char* ptrs[2] = {dst, const_cast<char*>(src)};
  LoopPlan<2> plan;
  plan.build(r, shape, st, ptrs);
  parallel_for(s, plan.numel, 1, [&](std::int64_t b, std::int64_t e) { copy_plan_range(plan, es, b, e); });
}

bool same_layout(const Tensor& a, const Tensor& b) noexcept {
  if (a.data() != b.data() || a.rank() != b.rank() || dtype_size(a.dtype()) != dtype_size(b.dtype())) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.extent(i) != b.extent(i) || (a.extent(i) != 1 && a.stride(i) != b.stride(i))) return false;
  return true;
}

void copy_tensor(Session& s, const Tensor& dst, const Tensor& src) {
  if (same_layout(dst, src) || dst.numel() == 0) return;
  std::int64_t shape[kMaxRank], ds[kMaxRank], ss[kMaxRank];
  for (int i = 0; i < dst.rank(); ++i) shape[i] = dst.extent(i);
  byte_strides(dst, ds);
  byte_strides(src, ss);
  copy_strided(s, dst.rank(), shape, static_cast<char*>(dst.mutable_data()), ds, static_cast<const char*>(src.data()), ss,
               dtype_size(dst.dtype()));
}

void require_writable(const Tensor& t, std::string_view op, std::string_view what) {
  if (t.read_only()) throw ArgumentError(op, std::string(what) + " is a read-only (broadcast) view and cannot be updated in place");
}

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

/// Shape of a tensor as a Dims (no allocation up to rank 8).
Dims shape_of(const Tensor& t) { return t.shape(); }

// ---------------------------------------------------------------- slice

/// A validated StableHLO slice (spec "slice", constraints C2-C5): result extents,
/// element strides into x's storage, and the element offset of the first result element
/// from x's first element.
struct SliceGeometry {
  Dims shape;
  Dims strides;
  std::int64_t offset = 0;
};

SliceGeometry slice_geometry(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& steps, std::string_view op) {
  const int r = x.rank();
  auto check_len = [&](const Dims& d, const char* name) {
    if (d.size() != r)
      throw RankError(op, std::string(name) + " " + d.to_string() + " has " + num(d.size()) + " entries for x of rank " + num(r));
  };
  check_len(starts, "starts");
  check_len(limits, "limits");
  if (!steps.empty()) check_len(steps, "strides");
  SliceGeometry g;
  g.shape = Dims(r, 0);
  g.strides = Dims(r, 0);
  for (int d = 0; d < r; ++d) {
    const std::int64_t step = steps.empty() ? 1 : steps[d];
    if (step <= 0) throw ArgumentError(op, "strides[" + num(d) + "] = " + num(step) + " must be positive (strides " + steps.to_string() + ")");
    const std::int64_t n = x.extent(d);
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > n)
      throw IndexError(op, "starts[" + num(d) + "] = " + num(starts[d]) + ", limits[" + num(d) + "] = " + num(limits[d]) +
                               " out of range for axis " + num(d) + " of extent " + num(n) + " (need 0 <= start <= limit <= extent)");
    // ceil((limit - start) / step) without overflow: limit - start >= 0.
    g.shape[d] = limits[d] == starts[d] ? 0 : (limits[d] - starts[d] - 1) / step + 1;
    g.strides[d] = sliced_stride(x.stride(d), step, g.shape[d], static_cast<std::int64_t>(dtype_size(x.dtype())), op);
    if (g.shape[d] > 0) g.offset = checked_add(g.offset, checked_mul(starts[d], x.stride(d), op), op);
  }
  // An empty slice keeps x's first element as its base (no element is ever read).
  for (int d = 0; d < r; ++d)
    if (g.shape[d] == 0) g.offset = 0;
  return g;
}

void slice_impl(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& steps, const Tensor* out,
                Tensor& result) {
  constexpr std::string_view op = "slice";
  s.check(op);
  require_cpu_tensor(x, op, "x");
  const SliceGeometry g = slice_geometry(x, starts, limits, steps, op);
  if (out) {
    require_output(*out, op, x.dtype(), g.shape);
    check_overlap(*out, x, op, false);
  } else {
    result = new_output(g.shape, x.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  if (o.numel() == 0) return;
  const auto es = static_cast<std::int64_t>(dtype_size(x.dtype()));
  std::int64_t ds[kMaxRank], ss[kMaxRank];
  byte_strides(o, ds);
  for (int d = 0; d < x.rank(); ++d) ss[d] = g.strides[d] * es;
  copy_strided(s, x.rank(), g.shape.data(), static_cast<char*>(o.mutable_data(op)), ds,
               static_cast<const char*>(x.data()) + g.offset * es, ss, static_cast<std::size_t>(es));
}

// ---------------------------------------------------------------- dynamic_slice / dynamic_update_slice

/// Validates a start_indices tensor for an operand of rank r (StableHLO dynamic_slice
/// C2-C3: one scalar per axis; here a rank-1 tensor) and loads it.
Dims load_starts(const Tensor& start_indices, int r, std::string_view op) {
  require_index_tensor(start_indices, op, "start_indices");
  if (start_indices.rank() != 1)
    throw RankError(op, "start_indices must be a rank-1 tensor, got shape " + start_indices.shape().to_string());
  if (start_indices.extent(0) != r)
    throw ShapeError(op, "start_indices has " + num(start_indices.extent(0)) + " entries for an operand of rank " + num(r));
  return load_index_vector(start_indices);
}

/// Byte offset of the window at `starts`, each clamped to [0, extent - size] (StableHLO
/// dynamic_slice / dynamic_update_slice: "adjusted_start_indices").
std::int64_t clamped_window_offset(const Tensor& x, const Dims& starts, const std::int64_t* sizes) {
  std::int64_t off = 0;
  for (int d = 0; d < x.rank(); ++d) off += std::clamp<std::int64_t>(starts[d], 0, x.extent(d) - sizes[d]) * x.stride(d);
  return off * static_cast<std::int64_t>(dtype_size(x.dtype()));
}

void dynamic_slice_impl(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& sizes, const Tensor* out,
                        Tensor& result) {
  constexpr std::string_view op = "dynamic_slice";
  s.check(op);
  require_cpu_tensor(x, op, "operand");
  const Dims starts = load_starts(start_indices, x.rank(), op);
  if (sizes.size() != x.rank())
    throw RankError(op, "slice_sizes " + sizes.to_string() + " has " + num(sizes.size()) + " entries for an operand of rank " + num(x.rank()));
  for (int d = 0; d < x.rank(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.extent(d))
      throw ShapeError(op, "slice_sizes[" + num(d) + "] = " + num(sizes[d]) + " outside [0, " + num(x.extent(d)) + "] (operand shape " +
                               x.shape().to_string() + ")");
  if (out) {
    require_output(*out, op, x.dtype(), sizes);
    check_overlap(*out, x, op, false);
    check_overlap(*out, start_indices, op, false);
  } else {
    result = new_output(sizes, x.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  if (o.numel() == 0) return;
  std::int64_t ds[kMaxRank], ss[kMaxRank];
  byte_strides(o, ds);
  byte_strides(x, ss);
  copy_strided(s, x.rank(), sizes.data(), static_cast<char*>(o.mutable_data(op)), ds,
               static_cast<const char*>(x.data()) + clamped_window_offset(x, starts, sizes.data()), ss, dtype_size(x.dtype()));
}

void dynamic_update_slice_impl(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices, const Tensor* out,
                               Tensor& result) {
  constexpr std::string_view op = "dynamic_update_slice";
  s.check(op);
  require_cpu_tensor(x, op, "operand");
  require_cpu_tensor(update, op, "update");
  if (update.dtype() != x.dtype())
    throw DTypeError(op, "update dtype " + std::string(dtype_name(update.dtype())) + " differs from operand dtype " +
                             std::string(dtype_name(x.dtype())));
  if (update.rank() != x.rank())
    throw RankError(op, "update of shape " + update.shape().to_string() + " has rank " + num(update.rank()) + ", operand " +
                            x.shape().to_string() + " rank " + num(x.rank()));
  for (int d = 0; d < x.rank(); ++d)
    if (update.extent(d) > x.extent(d))
      throw ShapeError(op, "update shape " + update.shape().to_string() + " exceeds operand shape " + x.shape().to_string() + " on axis " + num(d));
  const Dims starts = load_starts(start_indices, x.rank(), op);
  if (out) {
    require_output(*out, op, x.dtype(), shape_of(x));
    check_overlap(*out, x, op, true);  // in place (identical) or disjoint
    check_overlap(*out, update, op, false);
    check_overlap(*out, start_indices, op, false);
  } else {
    result = new_output(shape_of(x), x.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  copy_tensor(s, o, x);
  if (update.numel() == 0) return;
  std::int64_t shape[kMaxRank], ds[kMaxRank], ss[kMaxRank];
  for (int d = 0; d < x.rank(); ++d) shape[d] = update.extent(d);
  byte_strides(o, ds);
  byte_strides(update, ss);
  // o has x's shape, so the clamped window offset computed on o's strides addresses the
  // same window in o.
  copy_strided(s, x.rank(), shape, static_cast<char*>(o.mutable_data(op)) + clamped_window_offset(o, starts, shape), ds,
               static_cast<const char*>(update.data()), ss, dtype_size(x.dtype()));
}

// ---------------------------------------------------------------- take_along_axis / index_select

/// Multi-index (column-major) of the first element of `t` (i32/i64) outside [-n, n);
/// empty Dims with ok = true when none.
struct BadIndex {
  bool ok = true;
  Dims where;
  std::int64_t value = 0;
};

BadIndex find_bad_index(const Tensor& t, std::int64_t n) {
  const DType dt = t.dtype();
  // Fast scan over a LoopPlan (any order), then, only on failure, an ordered rescan for
  // the message (the first offending index in column-major order).
  std::int64_t shape[kMaxRank], st[kMaxRank];
  for (int i = 0; i < t.rank(); ++i) shape[i] = t.extent(i);
  byte_strides(t, st);
  const std::int64_t* sp[1] = {st};
  char* ptrs[1] = {static_cast<char*>(const_cast<void*>(t.data()))};
  LoopPlan<1> plan;
  plan.build(t.rank(), shape, sp, ptrs);
  bool bad = false;
  plan.run(0, plan.numel, [&](char** p, const std::int64_t* s, std::int64_t cnt) {
    const char* q = p[0];
    for (std::int64_t i = 0; i < cnt; ++i, q += s[0]) {
      const std::int64_t v = load_index(q, dt);
      bad |= v < -n || v >= n;
    }
  });
  BadIndex r;
  if (!bad) return r;
  Dims idx(t.rank(), 0);
  for (;;) {
    const char* q = static_cast<const char*>(t.data());
    for (int i = 0; i < t.rank(); ++i) q += idx[i] * st[i];
    const std::int64_t v = load_index(q, dt);
    if (v < -n || v >= n) {
      r.ok = false;
      r.where = idx;
      r.value = v;
      return r;
    }
    int i = 0;
    for (; i < t.rank() && ++idx[i] == t.extent(i); ++i) idx[i] = 0;
    if (i == t.rank()) return r;  // unreachable: the fast scan found one
  }
}

void take_along_axis_impl(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "take_along_axis";
  s.check(op);
  require_cpu_tensor(x, op, "x");
  require_index_tensor(indices, op, "indices");
  const int r = x.rank();
  if (indices.rank() != r)
    throw RankError(op, "indices of shape " + indices.shape().to_string() + " must have the rank of x " + x.shape().to_string());
  const int ax = normalize_axis(axis, r, op);
  Dims shape(r, 0);
  for (int d = 0; d < r; ++d) {
    const std::int64_t xe = x.extent(d), ie = indices.extent(d);
    if (d == ax || xe == ie || xe == 1) shape[d] = ie;
    else if (ie == 1) shape[d] = xe;
    else
      throw ShapeError(op, "indices shape " + indices.shape().to_string() + " does not broadcast against x shape " + x.shape().to_string() +
                               " off axis " + num(ax) + " (axis " + num(d) + ")");
  }
  const std::int64_t n = x.extent(ax);
  if (const BadIndex b = find_bad_index(indices, n); !b.ok)
    throw IndexError(op, "indices" + b.where.to_string() + " = " + num(b.value) + " out of range [" + num(-n) + ", " + num(n) +
                             ") for axis " + num(ax) + " of x with shape " + x.shape().to_string());
  if (out) {
    require_output(*out, op, x.dtype(), shape);
    check_overlap(*out, x, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(shape, x.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  if (o.numel() == 0) return;
  // One plan over the result: out, indices (broadcast) and x with its axis stride zeroed;
  // the index then moves x's pointer along the axis.
  std::int64_t st[3][kMaxRank];
  byte_strides(o, st[0]);
  broadcast_byte_strides(indices, r, st[1]);
  broadcast_byte_strides(x, r, st[2]);
  st[2][ax] = 0;
  const std::int64_t xs = x.stride(ax) * static_cast<std::int64_t>(dtype_size(x.dtype()));
  const std::int64_t* sp[3] = {st[0], st[1], st[2]};
  char* ptrs[3] = {static_cast<char*>(o.mutable_data(op)), static_cast<char*>(const_cast<void*>(indices.data())),
                   static_cast<char*>(const_cast<void*>(x.data()))};
  LoopPlan<3> plan;
  plan.build(r, shape.data(), sp, ptrs);
  const DType dt = indices.dtype();
  const std::size_t es = dtype_size(x.dtype());
  parallel_for(s, plan.numel, 2, [&](std::int64_t b, std::int64_t e) {
    plan.run(b, e, [&](char** p, const std::int64_t* stp, std::int64_t cnt) {
      for (std::int64_t i = 0; i < cnt; ++i) {
        std::int64_t v = load_index(p[1] + i * stp[1], dt);
        if (v < 0) v += n;
        copy_elements(p[0] + i * stp[0], 0, p[2] + i * stp[2] + v * xs, 0, 1, es);
      }
    });
  });
}

void index_select_impl(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices, const Tensor* out, Tensor& result) {
  constexpr std::string_view op = "index_select";
  s.check(op);
  require_cpu_tensor(x, op, "x");
  require_index_tensor(indices, op, "indices");
  if (indices.rank() != 1) throw RankError(op, "indices must be a rank-1 tensor, got shape " + indices.shape().to_string());
  const int r = x.rank();
  const int ax = normalize_axis(axis, r, op);
  const std::int64_t n = x.extent(ax);
  // Indices are read in place (there may be more than a Dims holds).
  const std::int64_t m = indices.extent(0);
  const char* ip = static_cast<const char*>(indices.data());
  const std::int64_t ist = indices.stride(0) * static_cast<std::int64_t>(dtype_size(indices.dtype()));
  const DType dt = indices.dtype();
  for (std::int64_t j = 0; j < m; ++j)
    if (const std::int64_t v = load_index(ip + j * ist, dt); v < -n || v >= n)
      throw IndexError(op, "indices[" + num(j) + "] = " + num(v) + " out of range [" + num(-n) + ", " + num(n) + ") for axis " +
                               num(ax) + " of x with shape " + x.shape().to_string());
  Dims shape = shape_of(x);
  shape[ax] = m;
  if (out) {
    require_output(*out, op, x.dtype(), shape);
    check_overlap(*out, x, op, false);
    check_overlap(*out, indices, op, false);
  } else {
    result = new_output(shape, x.dtype(), op);
  }
  const Tensor& o = out ? *out : result;
  if (o.numel() == 0) return;
  // The window is x (and out) without `axis`: one plan, rebased for every selected index.
  std::int64_t wshape[kMaxRank], os[kMaxRank], xs[kMaxRank];
  for (int d = 0; d < r; ++d) wshape[d] = d == ax ? 1 : x.extent(d);
  byte_strides(o, os);
  byte_strides(x, xs);
  const std::int64_t* sp[2] = {os, xs};
  char* base[2] = {static_cast<char*>(o.mutable_data(op)), static_cast<char*>(const_cast<void*>(x.data()))};
  LoopPlan<2> window;
  window.build(r, wshape, sp, base);
  const std::size_t es = dtype_size(x.dtype());
  const std::int64_t wn = window.numel;
  parallel_for(s, m, std::max<std::int64_t>(wn, 1), [&](std::int64_t b, std::int64_t e) {
    LoopPlan<2> w = window;
    for (std::int64_t j = b; j < e; ++j) {
      std::int64_t v = load_index(ip + j * ist, dt);
      if (v < 0) v += n;
      w.ptr[0] = base[0] + j * os[ax];
      w.ptr[1] = base[1] + v * xs[ax];
      if (w.rank == 0) copy_elements(w.ptr[0], 0, w.ptr[1], 0, 1, es);
      else copy_plan_range(w, es, 0, wn);
    }
  });
}

}  // namespace
}  // namespace detail

// ---------------------------------------------------------------- public entry points

Tensor slice(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides) {
  Tensor r;
  detail::slice_impl(s, x, starts, limits, strides, nullptr, r);
  return r;
}
void slice_into(Session& s, const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides, const Tensor& out) {
  Tensor r;
  detail::slice_impl(s, x, starts, limits, strides, &out, r);
}
Tensor slice_view(const Tensor& x, const Dims& starts, const Dims& limits, const Dims& strides) {
  constexpr std::string_view op = "slice_view";
  if (!x.defined()) throw ArgumentError(op, "x tensor is undefined");
  const detail::SliceGeometry g = detail::slice_geometry(x, starts, limits, strides, op);
  return x.as_strided_view(g.shape, g.strides, x.offset() + g.offset);
}

Tensor dynamic_slice(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes) {
  Tensor r;
  detail::dynamic_slice_impl(s, x, start_indices, slice_sizes, nullptr, r);
  return r;
}
void dynamic_slice_into(Session& s, const Tensor& x, const Tensor& start_indices, const Dims& slice_sizes, const Tensor& out) {
  Tensor r;
  detail::dynamic_slice_impl(s, x, start_indices, slice_sizes, &out, r);
}

Tensor dynamic_update_slice(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices) {
  Tensor r;
  detail::dynamic_update_slice_impl(s, x, update, start_indices, nullptr, r);
  return r;
}
void dynamic_update_slice_into(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices, const Tensor& out) {
  Tensor r;
  detail::dynamic_update_slice_impl(s, x, update, start_indices, &out, r);
}
void dynamic_update_slice_inplace(Session& s, const Tensor& x, const Tensor& update, const Tensor& start_indices) {
  s.check("dynamic_update_slice");
  detail::require_cpu_tensor(x, "dynamic_update_slice", "operand");
  detail::require_writable(x, "dynamic_update_slice", "operand");
  Tensor r;
  detail::dynamic_update_slice_impl(s, x, update, start_indices, &x, r);
}

Tensor take_along_axis(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis) {
  Tensor r;
  detail::take_along_axis_impl(s, x, indices, axis, nullptr, r);
  return r;
}
void take_along_axis_into(Session& s, const Tensor& x, const Tensor& indices, std::int64_t axis, const Tensor& out) {
  Tensor r;
  detail::take_along_axis_impl(s, x, indices, axis, &out, r);
}

Tensor index_select(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices) {
  Tensor r;
  detail::index_select_impl(s, x, axis, indices, nullptr, r);
  return r;
}
void index_select_into(Session& s, const Tensor& x, std::int64_t axis, const Tensor& indices, const Tensor& out) {
  Tensor r;
  detail::index_select_impl(s, x, axis, indices, &out, r);
}

}  // namespace tenferro
