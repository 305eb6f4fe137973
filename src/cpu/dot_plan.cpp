#include "cpu/dot_plan.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cpu/op_common.hpp"

namespace tenferro::detail {

namespace {

// Small-path limits: tiny products run a plain loop (no BLAS call, no allocation).
constexpr std::int64_t kSmallExtent = 64, kSmallWork = 4096;

std::string dims_text(const DotDims& d) {
  return "lhs_contracting=" + d.lhs_contracting.to_string() + " rhs_contracting=" + d.rhs_contracting.to_string() +
         " lhs_batch=" + d.lhs_batch.to_string() + " rhs_batch=" + d.rhs_batch.to_string();
}

// Normalized axes of one operand's batch and contracting lists; AxisError for an axis
// out of range or listed twice (within or across the lists).
void operand_axes(std::string_view op, const char* side, const Tensor& t, const Dims& batch, const Dims& contracting, const DotDims& d,
                  int* b, int* c, bool* used) {
  std::fill(used, used + t.rank(), false);
  auto take = [&](const Dims& list, int* out) {
    for (int i = 0; i < list.size(); ++i) {
      const std::int64_t a = list[i] < 0 ? list[i] + t.rank() : list[i];
      if (a < 0 || a >= t.rank())
        throw AxisError(op, std::string(side) + " axis " + std::to_string(list[i]) + " out of range for rank " + std::to_string(t.rank()) + " (" + dims_text(d) + ")");
      if (used[a]) throw AxisError(op, std::string(side) + " axis " + std::to_string(list[i]) + " listed twice (" + dims_text(d) + ")");
      used[a] = true;
      out[i] = static_cast<int>(a);
    }
  };
  take(batch, b);
  take(contracting, c);
}

// Merges a group of axes (in the given order) into one stride when each non-unit axis
// follows the previous one contiguously. Returns false when it cannot.
bool merge_group(int n, const std::int64_t* ext, const std::int64_t* str, std::int64_t& merged) {
  bool first = true;
  std::int64_t expect = 0;
  merged = 1;
  for (int i = 0; i < n; ++i) {
    if (ext[i] == 1) continue;
    if (first) {
      merged = str[i];
      first = false;
    } else if (str[i] != expect) {
      return false;
    }
    expect = str[i] * ext[i];
  }
  return true;
}

}  // namespace

// BLAS can take a matrix (rows R, cols C, strides rs/cs) as stored NoTrans (rs == 1) or
// Trans (cs == 1) with a leading dimension >= the stored row count; conj needs Trans.
bool blas_compatible(std::int64_t R, std::int64_t C, std::int64_t rs, std::int64_t cs, bool conj) {
  if (R <= 1) rs = 1;
  if (C <= 1) cs = rs == 1 ? std::max<std::int64_t>(R, 1) : 1;
  if (rs == 1 && cs >= std::max<std::int64_t>(1, R) && !conj) return true;
  return cs == 1 && rs >= std::max<std::int64_t>(1, C);
}

// A column-major output BLAS can write: unit row stride, leading dimension >= rows.
bool writable_by_blas(std::int64_t R, std::int64_t C, std::int64_t rs, std::int64_t cs) {
  if (R <= 1) rs = 1;
  if (C <= 1) cs = std::max<std::int64_t>(R, 1);
  return rs == 1 && cs >= std::max<std::int64_t>(1, R);
}

void analyze_dot(std::string_view op, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, DotPlan& p,
                 Dims& out_shape) {
  require_cpu_tensor(lhs, op, "lhs");
  require_cpu_tensor(rhs, op, "rhs");
  const DType d = promote(lhs.dtype(), rhs.dtype());
  if (!is_inexact(lhs.dtype()) || !is_inexact(rhs.dtype()))
    throw DTypeError(op, "operands " + describe(lhs) + " and " + describe(rhs) + " must be float or complex");
  if (dims.lhs_batch.size() != dims.rhs_batch.size() || dims.lhs_contracting.size() != dims.rhs_contracting.size())
    throw ShapeError(op, "batch and contracting lists must pair up (" + dims_text(dims) + ")");
  int lb[kMaxRank], lc[kMaxRank], rb[kMaxRank], rc[kMaxRank];
  bool lused[kMaxRank], rused[kMaxRank];
  if (dims.lhs_batch.size() + dims.lhs_contracting.size() > lhs.rank() || dims.rhs_batch.size() + dims.rhs_contracting.size() > rhs.rank())
    throw AxisError(op, "more batch and contracting axes than the operands have (" + dims_text(dims) + ")");
  operand_axes(op, "lhs", lhs, dims.lhs_batch, dims.lhs_contracting, dims, lb, lc, lused);
  operand_axes(op, "rhs", rhs, dims.rhs_batch, dims.rhs_contracting, dims, rb, rc, rused);
  const int nb = dims.lhs_batch.size(), nk = dims.lhs_contracting.size();
  for (int i = 0; i < nb; ++i)
    if (lhs.extent(lb[i]) != rhs.extent(rb[i]))
      throw ShapeError(op, "batch extents differ: lhs axis " + std::to_string(lb[i]) + " has " + std::to_string(lhs.extent(lb[i])) +
                               ", rhs axis " + std::to_string(rb[i]) + " has " + std::to_string(rhs.extent(rb[i])));
  for (int i = 0; i < nk; ++i)
    if (lhs.extent(lc[i]) != rhs.extent(rc[i]))
      throw ShapeError(op, "contracting extents differ: lhs axis " + std::to_string(lc[i]) + " has " + std::to_string(lhs.extent(lc[i])) +
                               ", rhs axis " + std::to_string(rc[i]) + " has " + std::to_string(rhs.extent(rc[i])));
  const int nm = lhs.rank() - nb - nk, nn = rhs.rank() - nb - nk;
  if (nm > kMaxDotAxes || nn > kMaxDotAxes || nk > kMaxDotAxes || nb > kMaxDotAxes)
    throw UnsupportedError(op, "more than " + std::to_string(kMaxDotAxes) + " axes in one group");
  out_shape = Dims(nm + nn + nb, 0);
  p.dtype = d;
  p.conj_l = dims.conj_lhs && is_complex(d);
  p.conj_r = dims.conj_rhs && is_complex(d);
  p.nm = nm;
  p.nn = nn;
  p.nk = nk;
  p.nb = nb;
  int m = 0, n = 0;
  for (int a = 0; a < lhs.rank(); ++a)
    if (!lused[a]) {
      out_shape[m] = p.mext[m] = lhs.extent(a);
      p.lm[m] = lhs.stride(a);
      p.lperm[m++] = a;
    }
  for (int a = 0; a < rhs.rank(); ++a)
    if (!rused[a]) {
      out_shape[nm + n] = p.next[n] = rhs.extent(a);
      p.rn[n] = rhs.stride(a);
      p.rperm[nk + n++] = a;
    }
  // K pairs sorted by |lhs stride| so a contiguous lhs group merges (order of a sum is free).
  int korder[kMaxDotAxes];
  for (int i = 0; i < nk; ++i) korder[i] = i;
  for (int i = 1; i < nk; ++i)  // insertion sort: stable, allocation-free, nk is tiny
    for (int j = i; j > 0 && std::llabs(lhs.stride(lc[korder[j]])) < std::llabs(lhs.stride(lc[korder[j - 1]])); --j) std::swap(korder[j], korder[j - 1]);
  for (int i = 0; i < nk; ++i) {
    const int k = korder[i];
    p.kext[i] = lhs.extent(lc[k]);
    p.lk[i] = lhs.stride(lc[k]);
    p.rk[i] = rhs.stride(rc[k]);
    p.lperm[nm + i] = lc[k];
    p.rperm[i] = rc[k];
  }
  for (int i = 0; i < nb; ++i) {
    out_shape[nm + nn + i] = p.bext[i] = lhs.extent(lb[i]);
    p.lb[i] = lhs.stride(lb[i]);
    p.rb[i] = rhs.stride(rb[i]);
    p.lperm[nm + nk + i] = lb[i];
    p.rperm[nk + nn + i] = rb[i];
  }
  p.M = checked_numel(std::span<const std::int64_t>(p.mext, nm), op);
  p.N = checked_numel(std::span<const std::int64_t>(p.next, nn), op);
  p.K = checked_numel(std::span<const std::int64_t>(p.kext, nk), op);
  p.batches = checked_numel(std::span<const std::int64_t>(p.bext, nb), op);
  checked_numel(out_shape, op);
  if (out) {
    require_output(*out, op, d, out_shape);
    check_overlap(*out, lhs, op, false);
    check_overlap(*out, rhs, op, false);
    for (int i = 0; i < nm; ++i) p.om[i] = out->stride(i);
    for (int i = 0; i < nn; ++i) p.on[i] = out->stride(nm + i);
    for (int i = 0; i < nb; ++i) p.ob[i] = out->stride(nm + nn + i);
  } else {
    const Dims cs = compact_strides(out_shape);
    for (int i = 0; i < nm; ++i) p.om[i] = cs[i];
    for (int i = 0; i < nn; ++i) p.on[i] = cs[nm + i];
    for (int i = 0; i < nb; ++i) p.ob[i] = cs[nm + nn + i];
  }
  const bool convert_l = lhs.dtype() != d, convert_r = rhs.dtype() != d;
  if (p.M == 0 || p.N == 0 || p.batches == 0 || p.K == 0) {
    p.kernel = DotKernel::empty;
    return;
  }
  if (!convert_l && !convert_r && p.M <= kSmallExtent && p.N <= kSmallExtent && p.K <= kSmallExtent && p.M * p.N * p.K <= kSmallWork) {
    p.kernel = DotKernel::small;
    return;
  }
  p.kernel = DotKernel::blas;
  const bool lm_ok = merge_group(nm, p.mext, p.lm, p.lm1), lk_ok = merge_group(nk, p.kext, p.lk, p.lk1);
  const bool rk_ok = merge_group(nk, p.kext, p.rk, p.rk1), rn_ok = merge_group(nn, p.next, p.rn, p.rn1);
  const bool om_ok = merge_group(nm, p.mext, p.om, p.om1), on_ok = merge_group(nn, p.next, p.on, p.on1);
  const bool big = p.M > INT32_MAX || p.N > INT32_MAX || p.K > INT32_MAX;
  if (big) throw UnsupportedError(op, "matrix extents above 2^31-1 (BLAS uses 32-bit integers)");
  auto fits = [](std::int64_t v) { return v >= -INT32_MAX && v <= INT32_MAX; };
  // Orientation: BLAS writes a column-major C; a row-major-like out is computed as Cᵀ.
  const bool out_fits = om_ok && on_ok && fits(p.om1) && fits(p.on1);
  const bool normal = out_fits && writable_by_blas(p.M, p.N, p.om1, p.on1);
  const bool swapped = out_fits && writable_by_blas(p.N, p.M, p.on1, p.om1);
  p.pack_out = !normal && !swapped;
  p.swap_out = !p.pack_out && (!normal || (swapped && p.M == 1 && p.N != 1));  // prefer gemv for a row result
  if (p.swap_out) {  // lhs and rhs are read transposed
    p.pack_l = convert_l || !lm_ok || !lk_ok || !fits(p.lm1) || !fits(p.lk1) || !blas_compatible(p.K, p.M, p.lk1, p.lm1, p.conj_l);
    p.pack_r = convert_r || !rk_ok || !rn_ok || !fits(p.rk1) || !fits(p.rn1) || !blas_compatible(p.N, p.K, p.rn1, p.rk1, p.conj_r);
  } else {
    p.pack_l = convert_l || !lm_ok || !lk_ok || !fits(p.lm1) || !fits(p.lk1) || !blas_compatible(p.M, p.K, p.lm1, p.lk1, p.conj_l);
    p.pack_r = convert_r || !rk_ok || !rn_ok || !fits(p.rk1) || !fits(p.rn1) || !blas_compatible(p.K, p.N, p.rk1, p.rn1, p.conj_r);
  }
}

int dot_cache_key(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, std::int64_t* key, int cap,
                  std::uint64_t& hash) {
  int n = 0;
  auto put = [&](std::int64_t v) {
    if (n < cap) key[n] = v;
    ++n;
  };
  auto tensor = [&](const Tensor& t) {
    put(static_cast<std::int64_t>(t.dtype()) << 16 | static_cast<std::int64_t>(t.read_only()) << 8 | t.rank());
    for (int i = 0; i < t.rank(); ++i) {
      put(t.extent(i));
      put(t.stride(i));
    }
  };
  tensor(lhs);
  tensor(rhs);
  if (out) tensor(*out);
  else put(-1);
  for (const Dims* l : {&dims.lhs_contracting, &dims.rhs_contracting, &dims.lhs_batch, &dims.rhs_batch}) {
    put(l->size());
    for (auto v : *l) put(v);
  }
  put(dims.conj_lhs * 2 + dims.conj_rhs);
  if (n > cap) return 0;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<std::uint64_t>(key[i]);
    h *= 1099511628211ull;
  }
  hash = h;
  return n;
}

}  // namespace tenferro::detail
