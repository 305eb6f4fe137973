#include "cpu/dot_plan.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace tenferro::detail {

namespace {

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

void plan_dot(const DotCall& c, DotPlan& p) {
  const std::string_view op = c.op;
  const DotSignature& sig = *c.sig;
  const Tensor &lhs = *c.lhs, &rhs = *c.rhs, &out = *c.out;
  const int nm = sig.nm, nn = sig.nn, nk = sig.nk, nb = sig.nb;
  if (nm > kMaxDotAxes || nn > kMaxDotAxes || nk > kMaxDotAxes || nb > kMaxDotAxes)
    throw UnsupportedError(op, "more than " + std::to_string(kMaxDotAxes) + " axes in one group");
  const DType d = sig.dtype;
  p.dtype = d;
  p.conj_l = sig.conj_lhs;
  p.conj_r = sig.conj_rhs;
  p.nm = nm;
  p.nn = nn;
  p.nk = nk;
  p.nb = nb;
  for (int m = 0; m < nm; ++m) {
    const int a = sig.lhs_free[m];
    p.mext[m] = lhs.extent(a);
    p.lm[m] = lhs.stride(a);
    p.lperm[m] = a;
    p.om[m] = out.stride(m);
  }
  for (int n = 0; n < nn; ++n) {
    const int a = sig.rhs_free[n];
    p.next[n] = rhs.extent(a);
    p.rn[n] = rhs.stride(a);
    p.rperm[nk + n] = a;
    p.on[n] = out.stride(nm + n);
  }
  // K pairs sorted by |lhs stride| so a contiguous lhs group merges (order of a sum is free).
  const std::int8_t *lc = sig.lhs_contracting, *rc = sig.rhs_contracting;
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
    p.bext[i] = lhs.extent(sig.lhs_batch[i]);
    p.lb[i] = lhs.stride(sig.lhs_batch[i]);
    p.rb[i] = rhs.stride(sig.rhs_batch[i]);
    p.ob[i] = out.stride(nm + nn + i);
    p.lperm[nm + nk + i] = sig.lhs_batch[i];
    p.rperm[nk + nn + i] = sig.rhs_batch[i];
  }
  // Extents of validated tensors: every product fits (the result's was checked).
  auto product = [](const std::int64_t* e, int n) {
    std::int64_t v = 1;
    for (int i = 0; i < n; ++i) v *= e[i];
    return v;
  };
  p.M = product(p.mext, nm);
  p.N = product(p.next, nn);
  p.K = product(p.kext, nk);
  p.batches = product(p.bext, nb);
  const bool convert_l = lhs.dtype() != d, convert_r = rhs.dtype() != d;
  if (p.M == 0 || p.N == 0 || p.batches == 0 || p.K == 0) {
    p.path = DotPath::empty;
    return;
  }
  if (!convert_l && !convert_r && small_product_size(p.M, p.N, p.K)) {
    p.path = DotPath::small;
    return;
  }
  p.path = DotPath::blas;
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

int dot_cache_key(const DotCall& c, std::int64_t* key, int cap, std::uint64_t& hash) {
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
  tensor(*c.lhs);
  tensor(*c.rhs);
  tensor(*c.out);
  const DotDims& dims = *c.dims;
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
