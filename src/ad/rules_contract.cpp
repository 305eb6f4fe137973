// Differentiable contractions: dot_general (with conjugation flags), matmul (recorded as
// dot_general) and einsum. Rules follow Note [Complex convention]: for y = A·B the VJPs
// are g·conj(B)ᵀ and conj(A)ᵀ·g, expressed as dot_generals / einsums of the cotangent.
#include <algorithm>
#include <map>

#include "ad/emit.hpp"
#include "ad/tape.hpp"

namespace tenferro::ad {

using detail::Grad;
using detail::Node;
using detail::OpId;

namespace {

namespace T = ::tenferro;

bool contains(const Dims& d, std::int64_t v) { return std::find(d.begin(), d.end(), v) != d.end(); }
/// Axes of a rank-r operand that are neither contracted nor batch, ascending.
Dims free_axes(int r, const Dims& contracting, const Dims& batch) {
  Dims f;
  for (int a = 0; a < r; ++a)
    if (!contains(contracting, a) && !contains(batch, a)) f.push_back(a);
  return f;
}
/// Position of v in the ascending order of d's entries.
int rank_in(const Dims& d, std::int64_t v) {
  int k = 0;
  for (std::int64_t e : d) k += e < v ? 1 : 0;
  return k;
}

// Note [dot_general VJP]
// out axes are [A free (fa), B free (fb), batch]. gA contracts g's B-free axes with B's
// free axes (batch paired), giving [A free, B's contracted axes (ascending), batch]; a
// permutation view puts them back in A's axis order (A's contracted axis j sits where
// its partner rhs_contracting[j] falls among B's contracted axes). Conjugation: without
// conj_lhs, gA = g·conj(B')ᵀ with B' = conj_rhs ? conj(B) : B; with conj_lhs,
// gA = conj(g)·B'ᵀ. Symmetrically for gB.
bool is_identity(const Dims& p) {
  for (int i = 0; i < p.size(); ++i)
    if (p[i] != i) return false;
  return true;
}

/// The plain matrix product [M, K]·[K, N] without conjugation (matmul of matrices):
/// gA = g·Bᵀ, gB = Aᵀ·g with fixed dimension numbers (no per-call setup).
bool vjp_matrix_product(Session& s, const Node& n, const Tensor& g, Grad* out) {
  const DotDims& d = n.attr<DotAttrs>().dims;
  const Tensor& A = n.x[0];
  const Tensor& B = n.x[1];
  if (A.rank() != 2 || B.rank() != 2 || !d.lhs_batch.empty() || d.lhs_contracting.size() != 1 ||
      d.lhs_contracting[0] != 1 || d.rhs_contracting[0] != 0)
    return false;
  if (is_complex(A.dtype()) || is_complex(B.dtype()) || is_complex(g.dtype())) return false;
  static const DotDims ga = [] {
    DotDims r;
    r.lhs_contracting = {1};
    r.rhs_contracting = {1};
    return r;
  }();
  static const DotDims gb = [] {
    DotDims r;
    r.lhs_contracting = {0};
    r.rhs_contracting = {0};
    return r;
  }();
  if (n.in[0].kind) out[0] = {T::dot_general(s, g, B, ga), true};
  if (n.in[1].kind) out[1] = {T::dot_general(s, A, g, gb), true};
  return true;
}

void vjp_dot(Session& s, const Node& n, const Tensor& g, Grad* out) {
  if (vjp_matrix_product(s, n, g, out)) return;
  const DotDims& d = n.attr<DotAttrs>().dims;
  const Tensor& A = n.x[0];
  const Tensor& B = n.x[1];
  const Dims fa = free_axes(A.rank(), d.lhs_contracting, d.lhs_batch);
  const Dims fb = free_axes(B.rank(), d.rhs_contracting, d.rhs_batch);
  const int nfa = fa.size(), nfb = fb.size(), nb = d.lhs_batch.size(), nc = d.lhs_contracting.size();
  if (n.in[0].kind) {
    DotDims gd;
    for (int j = 0; j < nfb; ++j) {
      gd.lhs_contracting.push_back(nfa + j);
      gd.rhs_contracting.push_back(fb[j]);
    }
    for (int j = 0; j < nb; ++j) {
      gd.lhs_batch.push_back(nfa + nfb + j);
      gd.rhs_batch.push_back(d.rhs_batch[j]);
    }
    gd.conj_lhs = d.conj_lhs;
    gd.conj_rhs = d.conj_lhs ? d.conj_rhs : !d.conj_rhs;
    Tensor r = T::dot_general(s, g, B, gd);
    Dims perm(A.rank(), 0);
    for (int a = 0; a < A.rank(); ++a) {
      if (contains(fa, a)) {
        perm[a] = std::find(fa.begin(), fa.end(), a) - fa.begin();
      } else if (contains(d.lhs_batch, a)) {
        perm[a] = nfa + nc + (std::find(d.lhs_batch.begin(), d.lhs_batch.end(), a) - d.lhs_batch.begin());
      } else {
        const auto j = std::find(d.lhs_contracting.begin(), d.lhs_contracting.end(), a) - d.lhs_contracting.begin();
        perm[a] = nfa + rank_in(d.rhs_contracting, d.rhs_contracting[static_cast<int>(j)]);
      }
    }
    out[0] = {is_identity(perm) ? std::move(r) : r.permute_view(perm.span()), true};
  }
  if (n.in[1].kind) {
    DotDims gd;
    for (int j = 0; j < nfa; ++j) {
      gd.lhs_contracting.push_back(fa[j]);
      gd.rhs_contracting.push_back(j);
    }
    for (int j = 0; j < nb; ++j) {
      gd.lhs_batch.push_back(d.lhs_batch[j]);
      gd.rhs_batch.push_back(nfa + nfb + j);
    }
    gd.conj_lhs = d.conj_rhs ? d.conj_lhs : !d.conj_lhs;
    gd.conj_rhs = d.conj_rhs;
    Tensor r = T::dot_general(s, A, g, gd);
    Dims perm(B.rank(), 0);
    for (int b = 0; b < B.rank(); ++b) {
      if (contains(fb, b)) {
        perm[b] = nc + (std::find(fb.begin(), fb.end(), b) - fb.begin());
      } else if (contains(d.rhs_batch, b)) {
        perm[b] = nc + nfb + (std::find(d.rhs_batch.begin(), d.rhs_batch.end(), b) - d.rhs_batch.begin());
      } else {
        const auto j = std::find(d.rhs_contracting.begin(), d.rhs_contracting.end(), b) - d.rhs_contracting.begin();
        perm[b] = rank_in(d.lhs_contracting, d.lhs_contracting[static_cast<int>(j)]);
      }
    }
    out[1] = {is_identity(perm) ? std::move(r) : r.permute_view(perm.span()), true};
  }
}
Tensor jvp_dot(Session& s, const Node& n, const Tensor* t) {
  const DotDims& d = n.attr<DotAttrs>().dims;
  Tensor r;
  if (t[0].defined()) r = T::dot_general(s, t[0], n.x[1], d);
  if (t[1].defined()) r = detail::add_maybe(s, r, T::dot_general(s, n.x[0], t[1], d));
  return r;
}

// Note [einsum VJP]
// For y = einsum(x_1..x_n; L_1..L_n -> O), the cotangent of x_i is
// einsum(g, conj(x_j) for j != i; O, L_j -> U_i) where U_i are x_i's distinct labels
// that g or another operand holds. A label of x_i held by nobody else was summed: its
// axis receives the cotangent broadcast (stride 0). A label repeated in L_i (a diagonal)
// receives the cotangent on that diagonal only: the result is written through a view of
// a zero tensor whose axis strides add up (the transpose of taking a diagonal).
// Example: "ij,jk->ik": gA = einsum("ik,jk->ij", g, conj(B)).
Tensor einsum_cotangent(Session& s, const Node& n, const Tensor& g, int i) {
  const EinsumAttrs& e = n.attr<EinsumAttrs>();
  const int nops = n.num_inputs();
  std::vector<Tensor> ops;
  std::vector<std::vector<std::int64_t>> labels;
  ops.push_back(g);
  labels.push_back(e.out_labels);
  for (int j = 0; j < nops; ++j) {
    if (j == i) continue;
    ops.push_back(detail::conj_if_complex(s, n.input(j)));
    labels.push_back(e.labels[static_cast<std::size_t>(j)]);
  }
  const auto& li = e.labels[static_cast<std::size_t>(i)];
  std::vector<std::int64_t> uniq, avail;
  for (std::int64_t l : li)
    if (std::find(uniq.begin(), uniq.end(), l) == uniq.end()) uniq.push_back(l);
  for (std::int64_t l : uniq) {
    bool held = false;
    for (const auto& lj : labels) held |= std::find(lj.begin(), lj.end(), l) != lj.end();
    if (held) avail.push_back(l);
  }
  Tensor part = T::einsum(s, ops, labels, std::span<const std::int64_t>(avail));
  if (avail.size() == li.size()) return part;  // no repeated or lone labels: U_i == L_i
  const Tensor& x = n.input(i);
  Tensor full = detail::zeros_on(s, x.shape().span(), part.dtype());
  Dims ushape, dst_strides, src_strides;
  for (std::int64_t l : uniq) {
    std::int64_t st = 0, ext = 0;
    for (std::size_t p = 0; p < li.size(); ++p)
      if (li[p] == l) {
        st += full.stride(static_cast<int>(p));
        ext = x.extent(static_cast<int>(p));
      }
    ushape.push_back(ext);
    dst_strides.push_back(st);
    const auto k = std::find(avail.begin(), avail.end(), l);
    src_strides.push_back(k == avail.end() ? 0 : part.stride(static_cast<int>(k - avail.begin())));
  }
  Tensor dst = full.as_strided_view(ushape.span(), dst_strides.span(), full.offset());
  Tensor src = part.as_strided_view(ushape.span(), src_strides.span(), part.offset());
  T::copy_into(s, src, dst);
  return full;
}
void vjp_einsum(Session& s, const Node& n, const Tensor& g, Grad* out) {
  for (int i = 0; i < n.num_inputs(); ++i)
    if (n.ref(i).kind) out[i] = {einsum_cotangent(s, n, g, i), true};
}
Tensor jvp_einsum(Session& s, const Node& n, const Tensor* t) {
  const EinsumAttrs& e = n.attr<EinsumAttrs>();
  Tensor r;
  std::vector<Tensor> ops;
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (!t[i].defined()) continue;
    ops.clear();
    for (int j = 0; j < n.num_inputs(); ++j) ops.push_back(j == i ? t[i] : n.input(j));
    r = detail::add_maybe(s, r, T::einsum(s, ops, e.labels, std::span<const std::int64_t>(e.out_labels)));
  }
  return r;
}

/// Parses the letter subset of the einsum notation into integer labels.
void parse_subscripts(std::string_view sub, std::size_t nops, std::vector<std::vector<std::int64_t>>& labels,
                      std::vector<std::int64_t>& out) {
  labels.assign(1, {});
  bool explicit_out = false;
  std::size_t i = 0;
  for (; i < sub.size(); ++i) {
    const char c = sub[i];
    if (c == ' ') continue;
    if (c == ',') {
      labels.emplace_back();
    } else if (c == '-' && i + 1 < sub.size() && sub[i + 1] == '>') {
      explicit_out = true;
      i += 2;
      break;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      labels.back().push_back(static_cast<unsigned char>(c));
    } else {
      throw UnsupportedAdRule("einsum", "the differentiable string form accepts letters, ',' and '->' only; got '" +
                                            std::string(sub) + "' (use the integer-label form)");
    }
  }
  out.clear();
  if (explicit_out) {
    for (; i < sub.size(); ++i) {
      const char c = sub[i];
      if (c == ' ') continue;
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        throw UnsupportedAdRule("einsum", "unsupported output subscript in '" + std::string(sub) + "'");
      out.push_back(static_cast<unsigned char>(c));
    }
  } else {
    std::map<std::int64_t, int> count;
    for (const auto& l : labels)
      for (std::int64_t v : l) ++count[v];
    for (const auto& [v, c] : count)
      if (c == 1) out.push_back(v);
  }
  if (labels.size() != nops)
    throw ArgumentError("einsum", "subscripts '" + std::string(sub) + "' name " + std::to_string(labels.size()) +
                                      " operands, got " + std::to_string(nops));
}

}  // namespace

namespace detail {
void register_contract_rules(std::array<Rules, tenferro::detail::kNumOps>& t) {
  t[static_cast<int>(OpId::dot_general)] = {jvp_dot, vjp_dot};
  t[static_cast<int>(OpId::einsum)] = {jvp_einsum, vjp_einsum};
}
}  // namespace detail

EagerTensor dot_general(Context& ctx, const EagerTensor& lhs, const EagerTensor& rhs, const DotDims& dims) {
  Tensor y = T::dot_general(ctx.session(), lhs.value(), rhs.value(), dims);
  return detail::finish<2>(ctx, OpId::dot_general, std::move(y), {&lhs, &rhs}, [&](Node& n) {
    n.x[0] = lhs.value();
    n.x[1] = rhs.value();
    n.set_attrs<DotAttrs>().dims = dims;
  });
}

EagerTensor matmul(Context& ctx, const EagerTensor& a, const EagerTensor& b) {
  Tensor y = T::matmul(ctx.session(), a.value(), b.value());
  return detail::finish<2>(ctx, OpId::dot_general, std::move(y), {&a, &b}, [&](Node& n) {
    n.x[0] = a.value();
    n.x[1] = b.value();
    DotDims& d = n.set_attrs<DotAttrs>().dims;  // a reused node keeps its buffers: set every field
    d.lhs_batch.clear();
    d.rhs_batch.clear();
    d.conj_lhs = d.conj_rhs = false;
    const int ra = a.rank(), rb = b.rank();
    d.lhs_contracting = {ra == 1 ? 0 : 1};
    d.rhs_contracting = {0};
    if (ra >= 2 && rb >= 2) {
      if (ra != rb) throw UnsupportedAdRule("dot_general", "matmul: no rule for operands of different ranks");
      for (int k = 2; k < ra; ++k) {
        d.lhs_batch.push_back(k);
        d.rhs_batch.push_back(k);
      }
    }
  });
}

EagerTensor einsum(Context& ctx, std::span<const EagerTensor> operands, EinsumLabels labels, std::span<const std::int64_t> output) {
  std::vector<Tensor> vals;
  vals.reserve(operands.size());
  for (const auto& x : operands) vals.push_back(x.value());
  Tensor y = T::einsum(ctx.session(), vals, labels, output);
  return detail::finish_variadic(ctx, OpId::einsum, std::move(y), operands, [&](Node& n) {
    EinsumAttrs& e = n.set_attrs<EinsumAttrs>();
    e.labels.assign(labels.begin(), labels.end());
    e.out_labels.assign(output.begin(), output.end());
  });
}

EagerTensor einsum(Context& ctx, std::string_view subscripts, std::span<const EagerTensor> operands) {
  std::vector<std::vector<std::int64_t>> labels;
  std::vector<std::int64_t> out;
  parse_subscripts(subscripts, operands.size(), labels, out);
  return einsum(ctx, operands, labels, out);
}

}  // namespace tenferro::ad
