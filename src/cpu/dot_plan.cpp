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


// Note [Small groups merged]
// The small path gathers each batch's blocks through offset tables when a group has
// several axes; a group whose axes follow each other contiguously in both tensors that
// index it (M: lhs and out, N: rhs and out, K: lhs and rhs) is one axis of the product
// (strides merged), and when every group is one axis the product reads the operands in
// place. M and N axes are first ordered by their lhs (rhs) stride, which only renames
// the output's elements; K keeps its order, so the sums keep theirs and the values stay
// those of the tables. The language-model instances have many such groups (M = 4×4
// stored as one 16-element column).
void merge_one(int& n, std::int64_t* ext, std::int64_t* a, std::int64_t* b, bool sort) {
  if (n <= 1) return;
  if (sort)
    for (int i = 1; i < n; ++i)
      for (int j = i; j > 0 && std::llabs(a[j]) < std::llabs(a[j - 1]); --j) {
        std::swap(ext[j], ext[j - 1]);
        std::swap(a[j], a[j - 1]);
        std::swap(b[j], b[j - 1]);
      }
  std::int64_t ma = 1, mb = 1;
  if (!merge_group(n, ext, a, ma) || !merge_group(n, ext, b, mb)) return;
  std::int64_t total = 1;
  for (int i = 0; i < n; ++i) total *= ext[i];
  n = 1;
  ext[0] = total;
  a[0] = ma;
  b[0] = mb;
}

void merge_small_groups(DotPlan& p) {
  merge_one(p.nm, p.mext, p.lm, p.om, true);
  merge_one(p.nn, p.next, p.rn, p.on, true);
  merge_one(p.nk, p.kext, p.lk, p.rk, false);
}

// Merges the groups and chooses the orientation and which operands (and whether out)
// need packing for BLAS.
void choose_layout(DotPlan& p, bool convert_l, bool convert_r) {
  const int nm = p.nm, nn = p.nn, nk = p.nk;
  const bool lm_ok = merge_group(nm, p.mext, p.lm, p.lm1), lk_ok = merge_group(nk, p.kext, p.lk, p.lk1);
  const bool rk_ok = merge_group(nk, p.kext, p.rk, p.rk1), rn_ok = merge_group(nn, p.next, p.rn, p.rn1);
  const bool om_ok = merge_group(nm, p.mext, p.om, p.om1), on_ok = merge_group(nn, p.next, p.on, p.on1);
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

// Note [Free axes looped over]
// A result whose free axes interleave (out [m1, n1, m2] for lhs free {m1, m2} and rhs
// free {n1}) is no matrix BLAS can write. Computing into a compact temporary and adding
// it into out costs two more passes over the result and the temporary's fresh pages; on
// str_nw_mera_open_26, whose last step writes 4.3·10^7 elements so, that was a third of
// the time. Instead the plan keeps as M and N the free axes that do form a writable
// matrix and loops over the others like batch axes held by one operand (stride 0 in the
// other), one GEMM per index: walking the free axes by increasing out stride, M (or N)
// is the run of one group's axes from stride 1 that follow each other contiguously, N
// (or M) the run of the other group's axes that follows, and every later free axis is
// looped over. It does so only while the GEMMs stay efficient enough to beat the copy:
// both sides ≥ kLoopMinSide and K ≤ kLoopMaxDepthPerSide × the shorter side (a thin GEMM
// with a long K costs more per element than the copy saves). `dot/held/interleaved_out`
// (bench_dot) measured the boundary: at side 16 looping is 2.5× faster for K = 4, equal
// for K = 128; at side 8 it is 1.6× faster for K = 4 and 1.4× slower for K = 128.
// Extent-1 free axes stay in their group (they merge with anything).
//   Example (column-major order): out [É Ç Å Ä Ã Â Á Q P] from lhs free {Ä P Á Â Ã Å}
//   and rhs free {Ç Q É}: N = {É, Ç} (81), M = {Å, Ä, Ã, Â, Á} (59049), looped over Q
//   and P: 9 GEMMs writing out directly.
constexpr std::int64_t kLoopMinSide = 8, kLoopMaxDepthPerSide = 4;

bool loop_free_axes(DotPlan& p) {
  struct Free {
    std::int64_t ext, l, r, o, perm;
    bool m;
  };
  Free f[2 * kMaxDotAxes], unit[2 * kMaxDotAxes];
  int nf = 0, nu = 0;
  for (int i = 0; i < p.nm; ++i) (p.mext[i] == 1 ? unit[nu++] : f[nf++]) = Free{p.mext[i], p.lm[i], 0, p.om[i], p.lperm[i], true};
  for (int i = 0; i < p.nn; ++i) (p.next[i] == 1 ? unit[nu++] : f[nf++]) = Free{p.next[i], 0, p.rn[i], p.on[i], p.rperm[p.nk + i], false};
  for (int i = 1; i < nf; ++i)  // insertion sort by out stride: stable, nf is tiny
    for (int j = i; j > 0 && f[j].o < f[j - 1].o; --j) std::swap(f[j], f[j - 1]);
  if (nf == 0 || f[0].o != 1) return false;
  int i = 0;
  std::int64_t rows = 1, cols = 1;
  while (i < nf && f[i].m == f[0].m && f[i].o == rows) rows *= f[i++].ext;
  if (i == nf || f[i].m == f[0].m || f[i].o < rows) return false;
  for (std::int64_t next = f[i].o; i < nf && f[i].m != f[0].m && f[i].o == next; next *= f[i++].ext) cols *= f[i].ext;
  const std::int64_t side = std::min(rows, cols);
  if (p.nb + nf - i > kMaxDotAxes || side < kLoopMinSide || p.K > kLoopMaxDepthPerSide * side) return false;
  // Rebuild the groups: the two runs (in stride order, then the unit axes), K and the
  // batch axes as they were, the rest looped over after the batch axes.
  std::int64_t lperm[3 * kMaxDotAxes], rperm[3 * kMaxDotAxes];
  int nl = 0, nr = p.nk;
  std::copy(p.rperm, p.rperm + p.nk, rperm);
  const int old_nm = p.nm, old_nn = p.nn;
  p.nm = p.nn = 0;
  p.M = p.N = 1;
  auto keep = [&](const Free& a) {
    if (a.m) {
      p.mext[p.nm] = a.ext, p.lm[p.nm] = a.l, p.om[p.nm++] = a.o, lperm[nl++] = a.perm;
      p.M *= a.ext;
    } else {
      p.next[p.nn] = a.ext, p.rn[p.nn] = a.r, p.on[p.nn++] = a.o, rperm[nr++] = a.perm;
      p.N *= a.ext;
    }
  };
  for (int j = 0; j < i; ++j) keep(f[j]);
  for (int j = 0; j < nu; ++j) keep(unit[j]);
  std::copy(p.lperm + old_nm, p.lperm + old_nm + p.nk + p.nb, lperm + nl);
  std::copy(p.rperm + p.nk + old_nn, p.rperm + p.nk + old_nn + p.nb, rperm + nr);
  nl += p.nk + p.nb;
  nr += p.nb;
  for (int j = i; j < nf; ++j) {
    const Free& a = f[j];
    p.bext[p.nb] = a.ext, p.lb[p.nb] = a.l, p.rb[p.nb] = a.r, p.ob[p.nb] = a.o;
    p.bholder[p.nb++] = a.m ? DotPlan::Holder::lhs : DotPlan::Holder::rhs;
    (a.m ? lperm[nl++] : rperm[nr++]) = a.perm;
    p.batches *= a.ext;
  }
  std::copy(lperm, lperm + nl, p.lperm);
  std::copy(rperm, rperm + nr, p.rperm);
  return true;
}

// Note [Unmerged free axes looped over]
// An operand whose free axes do not follow each other in memory is packed whole, even
// when it is far larger than the rest of the step: a step of
// lm_batch_likelihood_sentence_3_12d multiplies a 12 × 144 lhs by an rhs [n1 12, k2 12,
// k1 12, n2 1100] (1.9·10^6 elements) whose N axes n1 (stride 1) and n2 (stride 1728)
// cannot merge. Looping over the axes that break the merge instead (batch axes held by
// that operand alone, stride 0 in the other, as Note [Free axes looped over]) reads it in
// place: 1100 GEMMs of 12 × 12 × 144. The kept axes are the run, by increasing stride,
// that merges from the smallest. plan_dot takes the plan when
//  - the GEMMs keep both sides at kLoopMinSide or more;
//  - the axes of one operand only are looped over, and the other operand (which every
//    GEMM reads again, and BLAS packs again) holds at most kLoopSharedElements;
//  - every GEMM call it adds spares copying kLoopCallElements elements or more (a call
//    costs about what a copy of that many elements costs: a fraction of a microsecond).
// lm_batch_likelihood_sentence_3_12d at the suite's path: 51.0-51.8 → 42.9-44.5 ms per
// execution. Without the second rule str_nw_mera_closed_120 ran 216 GEMMs of
// 399 × 20 × 7290 instead of packing a 3.2·10^7-element operand, each call packing the
// other (2.9·10^6 elements) again: 1.18 → 1.60 s. An lhs [16, 7, 50] with its contracted
// axis in the middle is still packed (5600 elements) rather than run as 50 GEMMs of
// 16 × 12 × 7 (the third rule).
constexpr double kLoopCallElements = 1024;
constexpr std::int64_t kLoopSharedElements = 4096;

// Orders a group's axes by increasing |key| (one of its stride arrays), carrying its
// extents, its other stride array and its permutation entries along (insertion sort:
// stable, n is tiny).
void sort_group_by(int n, std::int64_t* key, std::int64_t* ext, std::int64_t* other, std::int64_t* perm) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && std::llabs(key[j]) < std::llabs(key[j - 1]); --j) {
      std::swap(ext[j], ext[j - 1]);
      std::swap(key[j], key[j - 1]);
      std::swap(other[j], other[j - 1]);
      std::swap(perm[j], perm[j - 1]);
    }
}

// Moves the free axes of one group that do not merge (in order of |stride|) to the batch
// axes, held by that operand; `perm` is the group's permutation entries, `moved` receives
// those of the moved axes.
bool split_free_group(DotPlan& p, int& n, std::int64_t* ext, std::int64_t* str, std::int64_t* out, std::int64_t* perm,
                      std::int64_t* moved, std::int64_t& total, DotPlan::Holder holder) {
  sort_group_by(n, str, ext, out, perm);
  int keep = 0;
  std::int64_t expect = 0, kept = 1;
  for (bool first = true; keep < n && (ext[keep] == 1 || first || str[keep] == expect); kept *= ext[keep++])
    if (ext[keep] != 1) {
      expect = str[keep] * ext[keep];
      first = false;
    }
  if (keep == n || p.nb + n - keep > kMaxDotAxes) return false;
  for (int j = keep; j < n; ++j) {
    const bool lhs = holder == DotPlan::Holder::lhs;
    p.bext[p.nb] = ext[j], p.lb[p.nb] = lhs ? str[j] : 0, p.rb[p.nb] = lhs ? 0 : str[j], p.ob[p.nb] = out[j];
    p.bholder[p.nb++] = holder;
    p.batches *= ext[j];
    *moved++ = perm[j];
  }
  n = keep;
  total = kept;
  return true;
}

// Note [Unmerged free axes looped over]: both free groups of filled groups.
bool loop_unmerged_free_axes(DotPlan& p) {
  int lheld = 0, rheld = 0;  // batch axes each operand holds
  for (int i = 0; i < p.nb; ++i) {
    lheld += p.bholder[i] != DotPlan::Holder::rhs;
    rheld += p.bholder[i] != DotPlan::Holder::lhs;
  }
  // lperm is M, K, the held batch axes; rperm K, N, the held batch axes. The moved axes
  // leave their group and join the held batch axes at the end.
  std::int64_t moved[kMaxDotAxes];
  const int nm = p.nm, nn = p.nn;
  const bool l = split_free_group(p, p.nm, p.mext, p.lm, p.om, p.lperm, moved, p.M, DotPlan::Holder::lhs);
  if (l) {
    std::copy(p.lperm + nm, p.lperm + nm + p.nk + lheld, p.lperm + p.nm);
    std::copy(moved, moved + (nm - p.nm), p.lperm + p.nm + p.nk + lheld);
  }
  const bool r = split_free_group(p, p.nn, p.next, p.rn, p.on, p.rperm + p.nk, moved, p.N, DotPlan::Holder::rhs);
  if (r) {
    std::copy(p.rperm + p.nk + nn, p.rperm + p.nk + nn + rheld, p.rperm + p.nk + p.nn);
    std::copy(moved, moved + (nn - p.nn), p.rperm + p.nk + p.nn + rheld);
  }
  return l || r;
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

namespace {

// The groups of a call, one entry per axis, with the K axes ordered by their lhs stride
// (by their rhs stride with `k_by_rhs`), the M and N axes in operand order (by their out
// stride with `free_by_out`), and the group products.
void fill_groups(const DotCall& c, DotPlan& p, bool k_by_rhs, bool free_by_out) {
  const DotSignature& sig = *c.sig;
  const Tensor &lhs = *c.lhs, &rhs = *c.rhs, &out = *c.out;
  const int nm = sig.nm, nn = sig.nn, nk = sig.nk, nb = sig.nb;
  p.dtype = sig.dtype;
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
  // K pairs sorted by |stride| in one operand so its group merges when it is contiguous
  // (the order of a sum is free; it fixes the rounding, per layout).
  const std::int8_t *lc = sig.lhs_contracting, *rc = sig.rhs_contracting;
  const Tensor& by = k_by_rhs ? rhs : lhs;
  const std::int8_t* bc = k_by_rhs ? rc : lc;
  int korder[kMaxDotAxes];
  for (int i = 0; i < nk; ++i) korder[i] = i;
  for (int i = 1; i < nk; ++i)  // insertion sort: stable, allocation-free, nk is tiny
    for (int j = i; j > 0 && std::llabs(by.stride(bc[korder[j]])) < std::llabs(by.stride(bc[korder[j - 1]])); --j) std::swap(korder[j], korder[j - 1]);
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
    p.bholder[i] = DotPlan::Holder::both;
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
  if (free_by_out) {
    sort_group_by(nm, p.om, p.mext, p.lm, p.lperm);
    sort_group_by(nn, p.on, p.next, p.rn, p.rperm + nk);
  }
}

// The BLAS layout of filled groups: orientation and packing, with the free axes looped
// over when that spares a temporary result (Note [Free axes looped over]).
void blas_layout(DotPlan& p, bool convert_l, bool convert_r) {
  choose_layout(p, convert_l, convert_r);
  if (p.pack_out) {
    DotPlan looped = p;
    if (loop_free_axes(looped)) {
      choose_layout(looped, convert_l, convert_r);
      if (!looped.pack_out) p = looped;
    }
  }
}

// Elements a plan copies before (and after) its products.
double packed_elements(const DotPlan& p, const DotCall& c) {
  return (p.pack_l ? static_cast<double>(c.lhs->numel()) : 0.0) + (p.pack_r ? static_cast<double>(c.rhs->numel()) : 0.0) +
         (p.pack_out ? static_cast<double>(c.out->numel()) : 0.0);
}

}  // namespace

void plan_dot(const DotCall& c, DotPlan& p) {
  const std::string_view op = c.op;
  const DotSignature& sig = *c.sig;
  if (sig.nm > kMaxDotAxes || sig.nn > kMaxDotAxes || sig.nk > kMaxDotAxes || sig.nb > kMaxDotAxes)
    throw UnsupportedError(op, "more than " + std::to_string(kMaxDotAxes) + " axes in one group");
  fill_groups(c, p, false, false);
  const bool convert_l = c.lhs->dtype() != sig.dtype, convert_r = c.rhs->dtype() != sig.dtype;
  if (p.M == 0 || p.N == 0 || p.batches == 0 || p.K == 0) {
    p.path = DotPath::empty;
    return;
  }
  if (!convert_l && !convert_r && small_product_size(p.M, p.N, p.K)) {
    p.path = DotPath::small;
    merge_small_groups(p);
    return;
  }
  p.path = DotPath::blas;
  const bool big = p.M > INT32_MAX || p.N > INT32_MAX || p.K > INT32_MAX;
  if (big) throw UnsupportedError(op, "matrix extents above 2^31-1 (BLAS uses 32-bit integers)");
  blas_layout(p, convert_l, convert_r);
  // Note [Contracted axes in the larger operand's order]
  // The K axes of both operands must merge in one order. Ordered by lhs stride, an rhs
  // whose contracted axes are contiguous in another order is packed; when that costs
  // more copying than ordering them by rhs stride (packing the lhs instead, or
  // nothing), the rhs order is taken. On lm_batch_likelihood_brackets_4_4d a 4096-element
  // lhs and a 127 744-element rhs contracted over three axes of 4 now pack the lhs.
  bool k_by_rhs = false;
  if (sig.nk > 1 && p.pack_r) {
    DotPlan q;
    fill_groups(c, q, true, false);
    q.path = DotPath::blas;
    blas_layout(q, convert_l, convert_r);
    if (packed_elements(q, c) < packed_elements(p, c)) {
      p = q;
      k_by_rhs = true;
    }
  }
  // Note [Free axes in the result's order]
  // The M axes take the lhs's order, so an out whose M axes follow each other in another
  // order (an intermediate einsum stores for its next step, Note [Intermediate layouts]
  // in einsum/layout.cpp) is written through a temporary, or with GEMMs looped over free
  // axes where Note [Free axes looped over] allows. When the lhs is packed anyway, the
  // packing copy can lay it out in out's order instead (the same for N and the rhs): the
  // M and N axes are taken in out-stride order, and that plan is kept when it copies
  // fewer elements, or as many with fewer GEMM calls.
  if ((p.pack_l && p.nm > 1) || (p.pack_r && p.nn > 1)) {
    DotPlan q;
    fill_groups(c, q, k_by_rhs, true);
    q.path = DotPath::blas;
    blas_layout(q, convert_l, convert_r);
    const double pq = packed_elements(q, c), pp = packed_elements(p, c);
    if (pq < pp || (pq == pp && q.batches < p.batches)) p = q;
  }
  // Note [Unmerged free axes looped over]
  if ((p.pack_l || p.pack_r) && !p.pack_out)
    for (bool by_rhs : {false, true}) {
      DotPlan q;
      fill_groups(c, q, by_rhs, false);
      q.path = DotPath::blas;
      if (!loop_unmerged_free_axes(q)) continue;
      choose_layout(q, convert_l, convert_r);
      if (q.pack_out || std::min(q.M, q.N) < kLoopMinSide) continue;
      const bool lhs_looped = std::any_of(q.bholder, q.bholder + q.nb, [](auto h) { return h == DotPlan::Holder::lhs; });
      const bool rhs_looped = std::any_of(q.bholder, q.bholder + q.nb, [](auto h) { return h == DotPlan::Holder::rhs; });
      if (lhs_looped == rhs_looped || (lhs_looped ? q.K * q.N : q.M * q.K) > kLoopSharedElements) continue;
      const double saved = packed_elements(p, c) - packed_elements(q, c);
      if (saved > 0 && saved >= kLoopCallElements * static_cast<double>(q.batches - p.batches)) p = q;
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
