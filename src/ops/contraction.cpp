// The contraction family (dot.hpp: dot_general, matmul, grouped_gemm; Note [Contraction
// in the op layer]): inference, then the front ends, which dispatch through the
// session's kernel table.
#include "ops/contraction.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/layout.hpp"
#include "ops/kernel_table.hpp"
#include "ops/prepare.hpp"

namespace tenferro {

// ---------------------------------------------------------------- inference (pure)
namespace detail {

namespace {

std::string dims_text(const DotDims& d) {
  return "lhs_contracting=" + d.lhs_contracting.to_string() + " rhs_contracting=" + d.rhs_contracting.to_string() +
         " lhs_batch=" + d.lhs_batch.to_string() + " rhs_batch=" + d.rhs_batch.to_string();
}

std::string operand_text(std::span<const std::int64_t> shape, DType d) { return dims_string(shape) + " " + std::string(dtype_name(d)); }

// Normalized axes of one operand's batch and contracting lists into b and c; marks
// them in `used`. AxisError for an axis out of range or listed twice (within or across
// the lists).
void operand_axes(std::string_view op, const char* side, int rank, const Dims& batch, const Dims& contracting, const DotDims& d,
                  std::int8_t* b, std::int8_t* c, bool* used) {
  std::fill(used, used + rank, false);
  auto take = [&](const Dims& list, std::int8_t* out) {
    for (int i = 0; i < list.size(); ++i) {
      const std::int64_t a = list[i] < 0 ? list[i] + rank : list[i];
      if (a < 0 || a >= rank)
        throw AxisError(op, std::string(side) + " axis " + std::to_string(list[i]) + " out of range for rank " + std::to_string(rank) + " (" +
                                dims_text(d) + ")");
      if (used[a]) throw AxisError(op, std::string(side) + " axis " + std::to_string(list[i]) + " listed twice (" + dims_text(d) + ")");
      used[a] = true;
      out[i] = static_cast<std::int8_t>(a);
    }
  };
  take(batch, b);
  take(contracting, c);
}

// ShapeError unless the paired axes of lhs and rhs have equal extents.
void require_paired(std::string_view op, const char* what, int n, const std::int8_t* la, const std::int8_t* ra,
                    std::span<const std::int64_t> lhs, std::span<const std::int64_t> rhs) {
  for (int i = 0; i < n; ++i)
    if (lhs[la[i]] != rhs[ra[i]])
      throw ShapeError(op, std::string(what) + " extents differ: lhs axis " + std::to_string(la[i]) + " has " + std::to_string(lhs[la[i]]) +
                               ", rhs axis " + std::to_string(ra[i]) + " has " + std::to_string(rhs[ra[i]]));
}

}  // namespace

void dot_infer(std::string_view op, std::span<const std::int64_t> lhs, DType lhs_dtype, std::span<const std::int64_t> rhs, DType rhs_dtype,
               const DotDims& dims, DotSignature& sig) {
  if (!is_inexact(lhs_dtype) || !is_inexact(rhs_dtype))
    throw DTypeError(op, "operands " + operand_text(lhs, lhs_dtype) + " and " + operand_text(rhs, rhs_dtype) + " must be float or complex");
  if (dims.lhs_batch.size() != dims.rhs_batch.size() || dims.lhs_contracting.size() != dims.rhs_contracting.size())
    throw ShapeError(op, "batch and contracting lists must pair up (" + dims_text(dims) + ")");
  const int lr = static_cast<int>(lhs.size()), rr = static_cast<int>(rhs.size());
  const int nb = dims.lhs_batch.size(), nk = dims.lhs_contracting.size();
  if (nb + nk > lr || nb + nk > rr) throw AxisError(op, "more batch and contracting axes than the operands have (" + dims_text(dims) + ")");
  bool lused[kMaxRank], rused[kMaxRank];
  operand_axes(op, "lhs", lr, dims.lhs_batch, dims.lhs_contracting, dims, sig.lhs_batch, sig.lhs_contracting, lused);
  operand_axes(op, "rhs", rr, dims.rhs_batch, dims.rhs_contracting, dims, sig.rhs_batch, sig.rhs_contracting, rused);
  require_paired(op, "batch", nb, sig.lhs_batch, sig.rhs_batch, lhs, rhs);
  require_paired(op, "contracting", nk, sig.lhs_contracting, sig.rhs_contracting, lhs, rhs);
  sig.dtype = promote(lhs_dtype, rhs_dtype);
  sig.conj_lhs = dims.conj_lhs && is_complex(sig.dtype);
  sig.conj_rhs = dims.conj_rhs && is_complex(sig.dtype);
  sig.nm = lr - nb - nk;
  sig.nn = rr - nb - nk;
  sig.nk = nk;
  sig.nb = nb;
  int q = 0;
  for (int a = 0, m = 0; a < lr; ++a)
    if (!lused[a]) {
      sig.lhs_free[m++] = static_cast<std::int8_t>(a);
      sig.shape[q++] = lhs[a];
    }
  for (int a = 0, n = 0; a < rr; ++a)
    if (!rused[a]) {
      sig.rhs_free[n++] = static_cast<std::int8_t>(a);
      sig.shape[q++] = rhs[a];
    }
  for (int i = 0; i < nb; ++i) sig.shape[q++] = lhs[sig.lhs_batch[i]];
  checked_numel(sig.out_shape(), op);
}

DotDims matmul_dims(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  const int ar = static_cast<int>(a.size()), br = static_cast<int>(b.size());
  if (ar < 1 || br < 1) throw RankError("matmul", "operands need rank >= 1, got " + std::to_string(ar) + " and " + std::to_string(br));
  DotDims d;
  d.lhs_contracting = {ar == 1 ? 0 : 1};
  d.rhs_contracting = {0};
  if (ar > 2 && br > 2) {
    if (ar != br) throw RankError("matmul", "batch ranks differ: " + dims_string(a) + " and " + dims_string(b));
    for (int i = 2; i < ar; ++i) {
      d.lhs_batch.push_back(i);
      d.rhs_batch.push_back(i);
    }
  }
  return d;
}

void matrix_form_signature(const MatrixForm& f, DotSignature& sig) noexcept {
  sig.dtype = f.dtype;
  sig.conj_lhs = f.conj_lhs;
  sig.conj_rhs = f.conj_rhs;
  sig.nm = f.lhs_rank - 1;
  sig.nn = f.rhs_rank - 1;
  sig.nk = 1;
  sig.nb = 0;
  sig.lhs_contracting[0] = f.lhs_contracting;
  sig.rhs_contracting[0] = f.rhs_contracting;
  sig.lhs_free[0] = static_cast<std::int8_t>(1 - f.lhs_contracting);
  sig.rhs_free[0] = static_cast<std::int8_t>(1 - f.rhs_contracting);
  sig.shape[0] = f.lhs_rank == 2 ? f.M : f.N;
  sig.shape[1] = f.N;
}

}  // namespace detail

// ---------------------------------------------------------------- front ends
namespace {

// The short form's checks (Note [dot fast path]); on true `mf` describes the product
// (and implies dot_infer's answer, matrix_form_signature). Never throws: false sends
// the call through dot_infer.
TENFERRO_ALWAYS_INLINE bool matrix_form(DeviceKind device, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out,
                                        const Scalar& alpha, const Scalar& beta, detail::MatrixForm& mf) noexcept {
  if (!lhs.defined() || !rhs.defined() || (out && !out->defined())) return false;
  const DType d = lhs.dtype();
  if (rhs.dtype() != d || !is_inexact(d) || (out && out->dtype() != d)) return false;
  const int lr = lhs.rank(), rr = rhs.rank();
  if (lr < 1 || lr > 2 || rr < 1 || rr > 2 || !dims.lhs_batch.empty() || !dims.rhs_batch.empty() || dims.lhs_contracting.size() != 1 ||
      dims.rhs_contracting.size() != 1)
    return false;
  if (lhs.device().kind != device || rhs.device().kind != device) return false;
  const std::int32_t *ll = lhs.inline_layout(), *rl = rhs.inline_layout();  // extents, then strides at +8
  if (!ll || !rl) return false;
  const std::int64_t cl64 = dims.lhs_contracting[0], cr64 = dims.rhs_contracting[0];
  if (cl64 < 0 || cl64 >= lr || cr64 < 0 || cr64 >= rr) return false;
  const int cl = static_cast<int>(cl64), cr = static_cast<int>(cr64);
  const std::int64_t K = ll[cl];
  const std::int64_t M = lr == 2 ? ll[1 - cl] : 1, N = rr == 2 ? rl[1 - cr] : 1;
  if (rl[cr] != K || M == 0 || N == 0 || K == 0) return false;  // empty products: the general path
  std::int64_t om = 0, on = 0;
  if (out) {
    const std::int32_t* ol = out->inline_layout();
    if (!ol || out->rank() != (lr - 1) + (rr - 1) || out->read_only() || out->device().kind != device) return false;
    int q = 0;
    if (lr == 2) {
      if (ol[q] != M) return false;
      om = ol[8 + q++];
    }
    if (rr == 2) {
      if (ol[q] != N) return false;
      on = ol[8 + q];
    }
    // Self-overlap (two indices on one element) and sharing with an operand: dot_infer's path rejects them.
    const std::int64_t am = std::llabs(om), an = std::llabs(on);
    if ((M > 1 && am == 0) || (N > 1 && an == 0)) return false;
    if (M > 1 && N > 1 && !(am <= an ? (M - 1) * am < an : (N - 1) * an < am)) return false;
    if (out->shares_storage(lhs) || out->shares_storage(rhs)) return false;
    if (!is_complex(d) && (alpha.kind() == Scalar::Kind::complex || beta.kind() == Scalar::Kind::complex)) return false;
  } else {  // the compact result the front end allocates
    om = lr == 2 ? 1 : 0;
    on = rr == 2 ? (lr == 2 ? M : 1) : 0;
  }
  mf = {M,
        N,
        K,
        lr == 2 ? ll[8 + 1 - cl] : 0,
        ll[8 + cl],
        rl[8 + cr],
        rr == 2 ? rl[8 + 1 - cr] : 0,
        om,
        on,
        d,
        dims.conj_lhs && is_complex(d),
        dims.conj_rhs && is_complex(d),
        static_cast<std::int8_t>(lr),
        static_cast<std::int8_t>(rr),
        static_cast<std::int8_t>(cl),
        static_cast<std::int8_t>(cr)};
  return true;
}

/// ArgumentError unless `v` (alpha or beta) is representable in the result dtype d: a
/// complex value with a non-zero imaginary part needs a complex result.
void require_scalar(const Scalar& v, DType d, std::string_view op, const char* what) {
  if (!is_complex(d) && v.kind() == Scalar::Kind::complex && v.to<c128>().imag() != 0)
    throw ArgumentError(op, std::string(what) + " " + v.to_string() + " is complex but the result dtype " + std::string(dtype_name(d)) +
                                " is real");
}

/// The general path's checks (everything the short form does not cover): operands on
/// the session's device, dot_infer, then `out` (when given) against the signature.
void validate(Session& s, std::string_view op, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out,
              const Scalar& alpha, const Scalar& beta, detail::DotSignature& sig) {
  detail::require_tensor_on(lhs, s.device(), op, "lhs");
  detail::require_tensor_on(rhs, s.device(), op, "rhs");
  std::int64_t bl[kMaxRank], br[kMaxRank];
  detail::dot_infer(op, detail::extents_of(lhs, bl), lhs.dtype(), detail::extents_of(rhs, br), rhs.dtype(), dims, sig);
  if (!out) return;
  detail::require_output(*out, op, sig.dtype, sig.out_shape(), s.device());
  detail::check_overlap(*out, lhs, op, /*same_ok=*/false);
  detail::check_overlap(*out, rhs, op, /*same_ok=*/false);
  require_scalar(alpha, sig.dtype, op, "alpha");
  require_scalar(beta, sig.dtype, op, "beta");
}

/// Both forms of dot_general and matmul: validate (the short form or the general
/// checks), prepare the output, dispatch. `out` for the _into forms; else `result`
/// receives the new tensor and beta is 0.
void dot_run(Session& s, std::string_view op, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor* out, Tensor* result,
             const Scalar& alpha, const Scalar& beta) {
  s.check(op);
  detail::DotSignature sig;
  detail::MatrixForm mf;
  const bool matrix = matrix_form(s.device(), lhs, rhs, dims, out, alpha, beta, mf);
  if (!matrix) validate(s, op, lhs, rhs, dims, out, alpha, beta, sig);
  const DType d = matrix ? mf.dtype : sig.dtype;
  const detail::DotKernel k = detail::kernel_for(s, OpId::dot_general, d).fn.dot;
  if (!out) {
    if (matrix) {
      const std::int64_t shape[2] = {mf.lhs_rank == 2 ? mf.M : mf.N, mf.N};
      *result = detail::new_output(s, std::span<const std::int64_t>(shape, static_cast<std::size_t>(mf.lhs_rank + mf.rhs_rank - 2)), d, op);
    } else {
      *result = detail::new_output(s, sig.out_shape(), d, op);
    }
    out = result;
  } else {
    out->note_write();  // Note [Version counters]
  }
  k(s, detail::DotCall{op, &lhs, &rhs, out, matrix ? nullptr : &sig, &dims, &alpha, &beta, matrix ? &mf : nullptr});
}

// grouped_gemm's item checks: every item's operands given and rank 2, dot_infer's
// checks, c against the signature and disjoint from a and b, alpha and beta
// representable. Returns the byte range the item writes (empty when c has no elements).
std::pair<const char*, const char*> validate_item(Session& s, const GemmItem& it, std::size_t i) {
  const std::string name = "grouped_gemm item " + std::to_string(i);
  if (!it.a || !it.b || !it.c) throw ArgumentError(name, "a, b and c must all be given");
  for (const Tensor* t : {it.a, it.b, it.c})
    if (t->defined() && t->rank() != 2) throw RankError(name, "operands must be matrices, got " + detail::describe(*t));
  const DotDims dims{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}, .conj_lhs = it.conj_a, .conj_rhs = it.conj_b};
  detail::DotSignature sig;
  validate(s, name, *it.a, *it.b, dims, it.c, it.alpha, it.beta, sig);
  detail::kernel_for(s, OpId::grouped_gemm, sig.dtype);
  return detail::byte_range(*it.c);
}

}  // namespace

Tensor dot_general(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims) {
  Tensor r;
  dot_run(s, "dot_general", lhs, rhs, dims, nullptr, &r, Scalar(1.0), Scalar(0.0));
  return r;
}

void dot_general_into(Session& s, const Tensor& lhs, const Tensor& rhs, const DotDims& dims, const Tensor& out, Scalar alpha, Scalar beta) {
  dot_run(s, "dot_general", lhs, rhs, dims, &out, nullptr, alpha, beta);
}

namespace {
DotDims matmul_dims_of(Session& s, const Tensor& a, const Tensor& b) {
  s.check("matmul");
  detail::require_tensor_on(a, s.device(), "matmul", "a");
  detail::require_tensor_on(b, s.device(), "matmul", "b");
  return detail::matmul_dims(a.shape(), b.shape());
}
}  // namespace

Tensor matmul(Session& s, const Tensor& a, const Tensor& b) {
  Tensor r;
  dot_run(s, "matmul", a, b, matmul_dims_of(s, a, b), nullptr, &r, Scalar(1.0), Scalar(0.0));
  return r;
}

void matmul_into(Session& s, const Tensor& a, const Tensor& b, const Tensor& out, Scalar alpha, Scalar beta) {
  dot_run(s, "matmul", a, b, matmul_dims_of(s, a, b), &out, nullptr, alpha, beta);
}

void grouped_gemm(Session& s, std::span<const GemmItem> items) {
  constexpr std::string_view op = "grouped_gemm";
  s.check(op);
  // 1. Validate every item before computing any.
  std::vector<std::pair<const char*, const char*>> written;
  written.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto range = validate_item(s, items[i], i);
    if (range.first != range.second) written.push_back(range);
  }
  // 2. Outputs must be disjoint from each other and from every operand.
  std::sort(written.begin(), written.end());
  for (std::size_t i = 1; i < written.size(); ++i)
    if (written[i].first < written[i - 1].second) throw ArgumentError(op, "two items write overlapping c tensors");
  for (const GemmItem& it : items)
    for (const Tensor* t : {it.a, it.b}) {
      const auto r = detail::byte_range(*t);
      if (r.first == r.second) continue;
      auto at = std::upper_bound(written.begin(), written.end(), std::make_pair(r.second, r.second));
      if (at != written.begin() && std::prev(at)->second > r.first) throw ArgumentError(op, "a c tensor overlaps an operand of some item");
    }
  // 3. Run.
  if (!items.empty()) detail::kernel_for(s, OpId::grouped_gemm, items[0].c->dtype()).fn.grouped_gemm(s, items);
}

}  // namespace tenferro
