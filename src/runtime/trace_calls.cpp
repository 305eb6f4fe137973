// The trace device's linear-algebra kernels: each records a call node (Note [Linear
// algebra in graphs]).
//
// Note [Linear algebra in graphs]
// A decomposition or solve kernel returns new results whose contents decide what
// happens next only through data checks (finiteness, singularity, convergence), so a
// graph keeps such an op whole: the trace kernel makes symbolic results of the shapes
// the op produces and records one `call` node holding the public op and its
// attributes. At run time the node calls that public op on the run's session, so
// validation, data checks and their typed errors are the eager ones (a non-finite
// input raises ArgumentError naming "svd" from the run). The front end's own
// finiteness check is skipped while tracing (there is no data). A graph transform
// replays the node through the op's differentiable form (ad::svd, ad::eigh, ...), whose
// rules emit ops on the trace session: the derivative graph holds the rules' products,
// solves and decompositions as nodes, so derivatives of any order compose through them.
// A configuration the eager rules refuse (complete QR, a full SVD of a non-square
// matrix) throws UnsupportedAdRule when transformed, as it would when differentiated.
#include <algorithm>
#include <initializer_list>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>

#include "ops/kernel_table.hpp"
#include "ops/linalg.hpp"
#include "runtime/trace.hpp"
#include "tenferro/ad.hpp"

namespace tenferro::detail {

namespace {

using ad::EagerTensor;
using graph::detail::CallParams;
using graph::detail::Node;
namespace L = tenferro::detail::linalg;

using RunFn = decltype(CallParams::run);
using ReplayFn = decltype(CallParams::replay);

Tensor symbolic(const Dims& shape, DType dtype) { return Tensor::empty(shape.span(), dtype, Device{DeviceKind::trace, 0}); }

/// Records op's call node reading `ins` and writing `outs` (fresh symbolic tensors).
void record(Session& s, OpId op, std::initializer_list<const Tensor*> ins, std::initializer_list<Tensor> outs, std::string attrs,
            RunFn run, ReplayFn replay) {
  TraceRecorder& r = recorder(s);
  int ids[3] = {-1, -1, -1};
  int k = 0;
  for (const Tensor* t : ins) ids[k++] = r.operand(*t, op_name(op));
  const std::vector<Tensor> results(outs);
  Node& n = r.write_call(op, results);
  n.num_ins = k;
  for (int i = 0; i < k; ++i) n.ins[i] = ids[i];
  auto p = std::make_shared<CallParams>();
  p->attrs = std::move(attrs);
  p->run = std::move(run);
  p->replay = std::move(replay);
  n.call = std::move(p);
}

/// v with every digit it needs to be read back exactly (the attributes CSE compares).
std::string exact(double v) {
  std::ostringstream os;
  os << std::setprecision(17) << v;
  return os.str();
}

std::string triangle_text(Triangle t) { return t == Triangle::lower ? "lower" : "upper"; }

SvdResult trace_svd(Session& s, const Tensor& a, SvdMode mode, std::string_view op) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  const bool values = mode == SvdMode::values;
  SvdResult r;
  r.S = symbolic(L::vector_shape(k, a), real_dtype(a.dtype()));
  if (values) {
    record(s, OpId::svd, {&a}, {r.S}, std::string(op) + ", values",
           [op = std::string(op)](Session& s, const Tensor* const* in, Tensor* out) {
             out[0] = op == "svdvals" ? svdvals(s, *in[0]) : svd(s, *in[0], SvdMode::values).S;
           },
           [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::svdvals(ctx, *in[0]); });
    return r;
  }
  const bool thin = mode == SvdMode::thin;
  r.U = symbolic(L::matrix_shape(m, thin ? k : m, a), a.dtype());
  r.Vh = symbolic(L::matrix_shape(thin ? k : n, n, a), a.dtype());
  record(s, OpId::svd, {&a}, {r.U, r.S, r.Vh}, thin ? "thin" : "full",
         [mode](Session& s, const Tensor* const* in, Tensor* out) {
           SvdResult x = svd(s, *in[0], mode);
           out[0] = std::move(x.U);
           out[1] = std::move(x.S);
           out[2] = std::move(x.Vh);
         },
         [mode](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::SvdTriple x = ad::svd(ctx, *in[0], mode);
           out[0] = x.U;
           out[1] = x.S;
           out[2] = x.Vh;
         });
  return r;
}

EighResult trace_eigh(Session& s, const Tensor& a, Triangle tri, bool vectors, std::string_view) {
  EighResult r;
  r.W = symbolic(L::vector_shape(a.extent(0), a), real_dtype(a.dtype()));
  if (!vectors) {
    record(s, OpId::eigh, {&a}, {r.W}, triangle_text(tri) + ", values",
           [tri](Session& s, const Tensor* const* in, Tensor* out) { out[0] = eigvalsh(s, *in[0], tri); },
           [tri](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::eigh(ctx, *in[0], tri).W; });
    return r;
  }
  r.V = symbolic(a.shape().span(), a.dtype());
  record(s, OpId::eigh, {&a}, {r.W, r.V}, triangle_text(tri),
         [tri](Session& s, const Tensor* const* in, Tensor* out) {
           EighResult x = eigh(s, *in[0], tri);
           out[0] = std::move(x.W);
           out[1] = std::move(x.V);
         },
         [tri](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::EighPair x = ad::eigh(ctx, *in[0], tri);
           out[0] = x.W;
           out[1] = x.V;
         });
  return r;
}

QrResult trace_qr(Session& s, const Tensor& a, QrMode mode, bool positive_diagonal) {
  const std::int64_t m = a.extent(0), n = a.extent(1), q = mode == QrMode::reduced ? std::min(m, n) : m;
  QrResult r{symbolic(L::matrix_shape(m, q, a), a.dtype()), symbolic(L::matrix_shape(q, n, a), a.dtype())};
  record(s, OpId::qr, {&a}, {r.Q, r.R}, std::string(mode == QrMode::reduced ? "reduced" : "complete") + (positive_diagonal ? ", positive_diagonal" : ""),
         [mode, positive_diagonal](Session& s, const Tensor* const* in, Tensor* out) {
           QrResult x = qr(s, *in[0], mode, positive_diagonal);
           out[0] = std::move(x.Q);
           out[1] = std::move(x.R);
         },
         [mode, positive_diagonal](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           if (mode != QrMode::reduced) throw UnsupportedAdRule("qr", "complete mode has no derivative rule (use QrMode::reduced)");
           ad::QrPair x = ad::qr(ctx, *in[0], positive_diagonal);
           out[0] = x.Q;
           out[1] = x.R;
         });
  return r;
}

Tensor trace_solve(Session& s, const Tensor& a, const linalg::Rhs&, const Tensor& b, std::string_view) {
  Tensor x = symbolic(b.shape().span(), b.dtype());
  record(s, OpId::solve, {&a, &b}, {x}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) { out[0] = solve(s, *in[0], *in[1]); },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::solve(ctx, *in[0], *in[1]); });
  return x;
}

Tensor trace_triangular_solve(Session& s, const Tensor& a, const linalg::Rhs&, const Tensor& b, const TriangularSolveOptions& o) {
  Tensor x = symbolic(b.shape().span(), b.dtype());
  const char* ops[] = {"none", "transpose", "adjoint"};
  record(s, OpId::triangular_solve, {&a, &b}, {x},
         std::string(o.side == Side::left ? "left" : "right") + ", " + triangle_text(o.tri) + ", op = " + ops[static_cast<int>(o.op)] +
             (o.unit_diagonal ? ", unit_diagonal" : ""),
         [o](Session& s, const Tensor* const* in, Tensor* out) { out[0] = triangular_solve(s, *in[0], *in[1], o); },
         [o](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::triangular_solve(ctx, *in[0], *in[1], o); });
  return x;
}

Tensor trace_cholesky(Session& s, const Tensor& a, Triangle tri) {
  Tensor x = symbolic(a.shape().span(), a.dtype());
  record(s, OpId::cholesky, {&a}, {x}, triangle_text(tri),
         [tri](Session& s, const Tensor* const* in, Tensor* out) { out[0] = cholesky(s, *in[0], tri); },
         [tri](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::cholesky(ctx, *in[0], tri); });
  return x;
}

/// The kernels with one square matrix in and one result of its shape out.
template <OpId op> Tensor trace_square(Session& s, const Tensor& a) {
  Tensor x = symbolic(a.shape().span(), a.dtype());
  record(s, op, {&a}, {x}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) { out[0] = op == OpId::inv ? inv(s, *in[0]) : matrix_exp(s, *in[0]); },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           out[0] = op == OpId::inv ? ad::inv(ctx, *in[0]) : ad::matrix_exp(ctx, *in[0]);
         });
  return x;
}

void trace_det(Session& s, const Tensor& a, Tensor* d, Tensor* sign, Tensor* logabs, std::string_view) {
  const Dims bs = L::batch_shape(a);
  if (d) {
    *d = symbolic(bs, a.dtype());
    record(s, OpId::det, {&a}, {*d}, "",
           [](Session& s, const Tensor* const* in, Tensor* out) { out[0] = det(s, *in[0]); },
           [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::det(ctx, *in[0]); });
    return;
  }
  *sign = symbolic(bs, a.dtype());
  *logabs = symbolic(bs, real_dtype(a.dtype()));
  record(s, OpId::slogdet, {&a}, {*sign, *logabs}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) {
           SlogdetResult x = slogdet(s, *in[0]);
           out[0] = std::move(x.sign);
           out[1] = std::move(x.logabsdet);
         },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::SlogdetPair x = ad::slogdet(ctx, *in[0]);
           out[0] = x.sign;
           out[1] = x.logabsdet;
         });
}

Tensor trace_pinv(Session& s, const Tensor& a, double rtol) {
  Tensor x = symbolic(L::matrix_shape(a.extent(1), a.extent(0), a), a.dtype());
  record(s, OpId::pinv, {&a}, {x}, "rtol = " + exact(rtol),
         [rtol](Session& s, const Tensor* const* in, Tensor* out) { out[0] = pinv(s, *in[0], rtol); },
         [rtol](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::pinv(ctx, *in[0], rtol); });
  return x;
}

Tensor trace_matrix_norm(Session& s, const Tensor& a, MatrixNorm kind) {
  Tensor x = symbolic(L::batch_shape(a), real_dtype(a.dtype()));
  const char* kinds[] = {"frobenius", "nuclear", "spectral", "one", "inf"};
  record(s, OpId::matrix_norm, {&a}, {x}, kinds[static_cast<int>(kind)],
         [kind](Session& s, const Tensor* const* in, Tensor* out) { out[0] = matrix_norm(s, *in[0], kind); },
         [kind](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::matrix_norm(ctx, *in[0], kind); });
  return x;
}

Tensor trace_vector_norm(Session& s, const Tensor& v, double p) {
  Dims shape;
  for (int i = 1; i < v.rank(); ++i) shape.push_back(v.extent(i));
  Tensor x = symbolic(shape, real_dtype(v.dtype()));
  record(s, OpId::vector_norm, {&v}, {x}, "p = " + exact(p),
         [p](Session& s, const Tensor* const* in, Tensor* out) { out[0] = vector_norm(s, *in[0], p); },
         [p](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::vector_norm(ctx, *in[0], p); });
  return x;
}

EigResult trace_eig(Session& s, const Tensor& a, bool vectors, std::string_view) {
  const DType c = complex_dtype(a.dtype());
  EigResult r;
  r.W = symbolic(L::vector_shape(a.extent(0), a), c);
  if (!vectors) {
    record(s, OpId::eig, {&a}, {r.W}, "values",
           [](Session& s, const Tensor* const* in, Tensor* out) { out[0] = eigvals(s, *in[0]); },
           [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::eigvals(ctx, *in[0]); });
    return r;
  }
  r.V = symbolic(a.shape().span(), c);
  record(s, OpId::eig, {&a}, {r.W, r.V}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) {
           EigResult x = eig(s, *in[0]);
           out[0] = std::move(x.W);
           out[1] = std::move(x.V);
         },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::EigPair x = ad::eig(ctx, *in[0]);
           out[0] = x.W;
           out[1] = x.V;
         });
  return r;
}

LuResult trace_lu(Session& s, const Tensor& a) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  LuResult r{symbolic(L::matrix_shape(m, m, a), a.dtype()), symbolic(L::matrix_shape(m, k, a), a.dtype()), symbolic(L::matrix_shape(k, n, a), a.dtype())};
  record(s, OpId::lu, {&a}, {r.P, r.L, r.U}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) {
           LuResult x = lu(s, *in[0]);
           out[0] = std::move(x.P);
           out[1] = std::move(x.L);
           out[2] = std::move(x.U);
         },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::LuFactors x = ad::lu(ctx, *in[0]);
           out[0] = EagerTensor(x.P);  // a constant (piecewise constant in A)
           out[1] = x.L;
           out[2] = x.U;
         });
  return r;
}

LuFactorResult trace_lu_factor(Session& s, const Tensor& a) {
  LuFactorResult r{symbolic(a.shape().span(), a.dtype()), symbolic(L::vector_shape(std::min(a.extent(0), a.extent(1)), a), DType::i64)};
  record(s, OpId::lu_factor, {&a}, {r.LU, r.pivots}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) {
           LuFactorResult x = lu_factor(s, *in[0]);
           out[0] = std::move(x.LU);
           out[1] = std::move(x.pivots);
         },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
           ad::LuPacked x = ad::lu_factor(ctx, *in[0]);
           out[0] = x.LU;
           out[1] = EagerTensor(x.pivots);
         });
  return r;
}

Tensor trace_lu_solve(Session& s, const LuFactorResult& f, const linalg::Rhs&, const Tensor& b) {
  Tensor x = symbolic(b.shape().span(), b.dtype());
  record(s, OpId::lu_solve, {&f.LU, &f.pivots, &b}, {x}, "",
         [](Session& s, const Tensor* const* in, Tensor* out) { out[0] = lu_solve(s, LuFactorResult{*in[0], *in[1]}, *in[2]); },
         [](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) { out[0] = ad::lu_solve(ctx, *in[0], in[1]->value(), *in[2]); });
  return x;
}

LstsqResult trace_lstsq(Session& s, const Tensor& a, const linalg::Rhs&, const Tensor& b, LstsqDriver driver, double rcond) {
  Dims xs = b.shape().span();
  xs[0] = a.extent(1);
  const bool svd = driver == LstsqDriver::svd;
  LstsqResult r{symbolic(xs, a.dtype()), symbolic(L::batch_shape(a), DType::i64), Tensor()};
  const auto run = [driver, rcond](Session& s, const Tensor* const* in, Tensor* out) {
    LstsqResult x = lstsq(s, *in[0], *in[1], driver, rcond);
    out[0] = std::move(x.X);
    out[1] = std::move(x.rank);
    if (x.S.defined()) out[2] = std::move(x.S);
  };
  const auto replay = [driver, rcond](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
    ad::LstsqSolution x = ad::lstsq(ctx, *in[0], *in[1], driver, rcond);
    out[0] = x.X;
    out[1] = x.rank;
    if (driver == LstsqDriver::svd) out[2] = x.S;
  };
  const std::string attrs = std::string(svd ? "svd" : "qr") + ", rcond = " + exact(rcond);
  if (svd) {
    r.S = symbolic(L::vector_shape(std::min(a.extent(0), a.extent(1)), a), real_dtype(a.dtype()));
    record(s, OpId::lstsq, {&a, &b}, {r.X, r.rank, r.S}, attrs, run, replay);
  } else {
    record(s, OpId::lstsq, {&a, &b}, {r.X, r.rank}, attrs, run, replay);
  }
  return r;
}

Tensor trace_pivots(Session& s, const Tensor& pivots, std::int64_t m, std::string_view) {
  Dims shape{m};
  for (int i = 1; i < pivots.rank(); ++i) shape.push_back(pivots.extent(i));
  Tensor x = symbolic(shape, DType::i64);
  record(s, OpId::lu_pivots_to_permutation, {&pivots}, {x}, "m = " + std::to_string(m),
         [m](Session& s, const Tensor* const* in, Tensor* out) { out[0] = lu_pivots_to_permutation(s, *in[0], m); },
         [m](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {  // integers: a constant
           out[0] = EagerTensor(lu_pivots_to_permutation(ctx.session(), in[0]->value(), m));
         });
  return x;
}

/// The replay of an op without derivative rules: constants of the plain op when no
/// input is differentiated, else UnsupportedAdRule naming it (as eager AD would).
template <class Run> ReplayFn constant_replay(std::string_view op, Run run, int num_ins, int num_outs) {
  return [op = std::string(op), run, num_ins, num_outs](ad::Context& ctx, const EagerTensor* const* in, EagerTensor* out) {
    Tensor values[3], results[4];
    for (int k = 0; k < num_ins; ++k) {
      if (in[k]->requires_grad() || in[k]->tangent().defined())
        throw UnsupportedAdRule(op, "has no derivative rule (its input is differentiated in this graph transform)");
      values[k] = in[k]->value();
    }
    const Tensor* ptrs[3] = {&values[0], &values[1], &values[2]};
    run(ctx.session(), ptrs, results);
    for (int k = 0; k < num_outs; ++k) out[k] = EagerTensor(results[k]);
  };
}

PivotedQrResult trace_qr_pivoted(Session& s, const Tensor& a, double rtol) {
  const std::int64_t m = a.extent(0), n = a.extent(1), k = std::min(m, n);
  Dims perm{n};
  for (int i = 2; i < a.rank(); ++i) perm.push_back(a.extent(i));
  PivotedQrResult r{symbolic(L::matrix_shape(m, k, a), a.dtype()), symbolic(L::matrix_shape(k, n, a), a.dtype()), symbolic(perm, DType::i64),
                    symbolic(L::batch_shape(a), DType::i64)};
  const auto run = [rtol](Session& s, const Tensor* const* in, Tensor* out) {
    PivotedQrResult x = qr_pivoted(s, *in[0], rtol);
    out[0] = std::move(x.Q);
    out[1] = std::move(x.R);
    out[2] = std::move(x.perm);
    out[3] = std::move(x.rank);
  };
  record(s, OpId::qr_pivoted, {&a}, {r.Q, r.R, r.perm, r.rank}, "rtol = " + exact(rtol), run, constant_replay("qr_pivoted", run, 1, 4));
  return r;
}

FullPivLuResult trace_lu_full_pivot(Session& s, const Tensor& a) {
  FullPivLuResult r{symbolic(a.shape().span(), a.dtype()), symbolic(a.shape().span(), a.dtype()), symbolic(a.shape().span(), a.dtype()),
                    symbolic(a.shape().span(), a.dtype())};
  const auto run = [](Session& s, const Tensor* const* in, Tensor* out) {
    FullPivLuResult x = lu_full_pivot(s, *in[0]);
    out[0] = std::move(x.P);
    out[1] = std::move(x.L);
    out[2] = std::move(x.U);
    out[3] = std::move(x.Q);
  };
  record(s, OpId::lu_full_pivot, {&a}, {r.P, r.L, r.U, r.Q}, "", run, constant_replay("lu_full_pivot", run, 1, 4));
  return r;
}

/// qr_append_columns: Q' [M, K'] and R' [K', N + P], K' = min(M, K + P); no derivative
/// rules (a constant in transforms unless differentiated).
QrResult trace_qr_append(Session& s, const Tensor& Q, const Tensor& R, const Tensor& C) {
  const std::int64_t m = Q.extent(0), k = Q.extent(1), n = R.extent(1), p = C.extent(1), kk = k + std::min(m - k, p);
  QrResult r{symbolic(Dims{m, kk}, Q.dtype()), symbolic(Dims{kk, n + p}, Q.dtype())};
  const auto run = [](Session& s, const Tensor* const* in, Tensor* out) {
    QrResult x = qr_append_columns(s, *in[0], *in[1], *in[2]);
    out[0] = std::move(x.Q);
    out[1] = std::move(x.R);
  };
  record(s, OpId::qr_append_columns, {&Q, &R, &C}, {r.Q, r.R}, "", run, constant_replay("qr_append_columns", run, 3, 2));
  return r;
}

}  // namespace

bool trace_call_kernel(OpId op, KernelFn& fn) noexcept {
  switch (op) {
    case OpId::svd: fn.svd = &trace_svd; return true;
    case OpId::eigh: fn.eigh = &trace_eigh; return true;
    case OpId::qr: fn.qr = &trace_qr; return true;
    case OpId::solve: fn.solve = &trace_solve; return true;
    case OpId::triangular_solve: fn.triangular_solve = &trace_triangular_solve; return true;
    case OpId::cholesky: fn.cholesky = &trace_cholesky; return true;
    case OpId::inv: fn.inv = &trace_square<OpId::inv>; return true;
    case OpId::matrix_exp: fn.matrix_exp = &trace_square<OpId::matrix_exp>; return true;
    case OpId::det:
    case OpId::slogdet: fn.det = &trace_det; return true;
    case OpId::pinv: fn.pinv = &trace_pinv; return true;
    case OpId::matrix_norm: fn.matrix_norm = &trace_matrix_norm; return true;
    case OpId::vector_norm: fn.vector_norm = &trace_vector_norm; return true;
    case OpId::eig: fn.eig = &trace_eig; return true;
    case OpId::lu: fn.lu = &trace_lu; return true;
    case OpId::lu_factor: fn.lu_factor = &trace_lu_factor; return true;
    case OpId::lu_solve: fn.lu_solve = &trace_lu_solve; return true;
    case OpId::lstsq: fn.lstsq = &trace_lstsq; return true;
    case OpId::lu_pivots_to_permutation: fn.pivots = &trace_pivots; return true;
    case OpId::qr_pivoted: fn.qr_pivoted = &trace_qr_pivoted; return true;
    case OpId::lu_full_pivot: fn.lu_full_pivot = &trace_lu_full_pivot; return true;
    case OpId::qr_append_columns: fn.qr_append = &trace_qr_append; return true;
    default: return false;
  }
}

}  // namespace tenferro::detail
