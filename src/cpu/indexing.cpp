// The CPU kernels of the indexing ops (cpu/index_common.hpp; the front ends in
// src/ops/indexing.cpp): dynamic_slice, dynamic_update_slice, take_along_axis and
// index_select, and the copy helpers of index_common.hpp. Arguments arrive validated
// (indices in range); copies go through LoopPlan without materializing inputs.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cpu/index_common.hpp"

namespace tenferro {
namespace detail {

// ---------------------------------------------------------------- shared helpers

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



// ---------------------------------------------------------------- kernels

namespace {

/// Byte offset of the window at `starts` (loaded from the i32/i64 vector), each clamped
/// to [0, extent - size] (StableHLO dynamic_slice / dynamic_update_slice:
/// "adjusted_start_indices").
std::int64_t clamped_window_offset(const Tensor& x, const Tensor& start_indices, const std::int64_t* sizes) {
  const Dims starts = load_index_vector(start_indices);
  std::int64_t off = 0;
  for (int d = 0; d < x.rank(); ++d) off += std::clamp<std::int64_t>(starts[d], 0, x.extent(d) - sizes[d]) * x.stride(d);
  return off * static_cast<std::int64_t>(dtype_size(x.dtype()));
}

}  // namespace
}  // namespace detail

namespace cpu {

using namespace detail;

void dynamic_slice_kernel(Session& s, const Tensor& x, const Tensor& starts, const Tensor& out) {
  if (out.numel() == 0) return;
  std::int64_t shape[kMaxRank], ds[kMaxRank], ss[kMaxRank];
  for (int d = 0; d < out.rank(); ++d) shape[d] = out.extent(d);
  byte_strides(out, ds);
  byte_strides(x, ss);
  copy_strided(s, x.rank(), shape, static_cast<char*>(out.mutable_data("dynamic_slice")), ds,
               static_cast<const char*>(x.data()) + clamped_window_offset(x, starts, shape), ss, dtype_size(x.dtype()));
}

void dynamic_update_slice_kernel(Session& s, const Tensor& x, const Tensor& update, const Tensor& starts, const Tensor& out) {
  // The window offset is read before out is written: out may be x (in place).
  std::int64_t shape[kMaxRank], ds[kMaxRank], ss[kMaxRank];
  for (int d = 0; d < x.rank(); ++d) shape[d] = update.extent(d);
  // out has x's shape, so the clamped window offset on out's strides addresses the same
  // window in out.
  const std::int64_t off = clamped_window_offset(out, starts, shape);
  copy_tensor(s, out, x);
  if (update.numel() == 0) return;
  byte_strides(out, ds);
  byte_strides(update, ss);
  copy_strided(s, x.rank(), shape, static_cast<char*>(out.mutable_data("dynamic_update_slice")) + off, ds,
               static_cast<const char*>(update.data()), ss, dtype_size(x.dtype()));
}

void take_along_axis_kernel(Session& s, const Tensor& x, const Tensor& indices, const Tensor& o, int ax) {
  const int r = x.rank();
  const std::int64_t n = x.extent(ax);
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
  char* ptrs[3] = {static_cast<char*>(o.mutable_data("take_along_axis")), static_cast<char*>(const_cast<void*>(indices.data())),
                   static_cast<char*>(const_cast<void*>(x.data()))};
  LoopPlan<3> plan;
  std::int64_t shape[kMaxRank];
  plan.build(r, extents_of(o, shape).data(), sp, ptrs);
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

void index_select_kernel(Session& s, const Tensor& x, const Tensor& indices, const Tensor& o, int ax) {
  const int r = x.rank();
  const std::int64_t n = x.extent(ax);
  // Indices are read in place (there may be more than a Dims holds).
  const std::int64_t m = indices.extent(0);
  const char* ip = static_cast<const char*>(indices.data());
  const std::int64_t ist = indices.stride(0) * static_cast<std::int64_t>(dtype_size(indices.dtype()));
  const DType dt = indices.dtype();
  if (o.numel() == 0) return;
  // The window is x (and out) without `axis`: one plan, rebased for every selected index.
  std::int64_t wshape[kMaxRank], os[kMaxRank], xs[kMaxRank];
  for (int d = 0; d < r; ++d) wshape[d] = d == ax ? 1 : x.extent(d);
  byte_strides(o, os);
  byte_strides(x, xs);
  const std::int64_t* sp[2] = {os, xs};
  char* base[2] = {static_cast<char*>(o.mutable_data("index_select")), static_cast<char*>(const_cast<void*>(x.data()))};
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

}  // namespace cpu
}  // namespace tenferro
