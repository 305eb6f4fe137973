// tenferro.linalg: NumPy's numpy.linalg over the C++ trailing-batch linear algebra.
// A Python batch of matrices (..., M, N) is the C++ [N, M, ...]; the C++ call runs on
// the view with its first two axes swapped (the true [M, N, ...]), and its matrix
// results come back through the same swap: Fortran-ordered in their last two axes.
// Vector results ([K, ...] in C++) are C-ordered (..., K) in Python as they are.
#include <cmath>
#include <limits>

#include "linalg_ad.hpp"

namespace tfpy {

namespace {

// The C++ matrix view [M, N, batch...] of a Python (..., M, N) argument.
Tensor matrix_arg(py::handle h, const char* op) {
  Tensor t = tensor_arg(h, op);
  if (t.rank() < 2)
    throw tenferro::RankError(op, std::to_string(t.rank()) + "-dimensional array given; the array must be at least two-dimensional");
  return swap_matrix_axes(t);
}

// A C++ matrix result [P, Q, batch...] as the Python (..., P, Q) tensor.
py::object matrix_result(const Tensor& t) { return py::cast(swap_matrix_axes(t)); }

// Broadcasts the batch axes (C++ axes from 2 on) of two matrix views to a common shape.
void broadcast_batches(Tensor& a, Tensor& b, int b_core, const char* op) {
  const int ba = a.rank() - 2, bb = b.rank() - b_core, n = std::max(ba, bb);
  if (ba == bb && ba == 0) return;
  std::vector<std::int64_t> batch(static_cast<std::size_t>(n), 1);
  // C++ batch axes align at their first axis (NumPy's last): Note [Reversed axes].
  auto merge = [&](const Tensor& t, int core) {
    for (int i = 0; i < t.rank() - core; ++i) {
      const std::int64_t e = t.extent(core + i);
      auto& c = batch[static_cast<std::size_t>(i)];
      if (c != e && c != 1 && e != 1)
        throw tenferro::ShapeError(op, "batch shapes do not broadcast (extent " + std::to_string(c) + " against " +
                                           std::to_string(e) + ")");
      if (e != 1) c = e;
    }
  };
  merge(a, 2);
  merge(b, b_core);
  auto expand = [&](const Tensor& t, int core) {
    std::vector<std::int64_t> shape;
    for (int i = 0; i < core; ++i) shape.push_back(t.extent(i));
    shape.insert(shape.end(), batch.begin(), batch.end());
    return t.broadcast_view(shape);
  };
  a = expand(a, 2);
  b = expand(b, b_core);
}

// The C++ view of `t` with Python axis `py_axis` as axis 0 (other axes kept in order).
Tensor axis_first(const Tensor& t, std::int64_t cpp) {
  std::vector<std::int64_t> perm = {cpp};
  for (int i = 0; i < t.rank(); ++i)
    if (i != cpp) perm.push_back(i);
  return t.permute_view(perm);
}

double ord_value(py::handle ord) {
  if (py::isinstance<py::str>(ord)) return std::numeric_limits<double>::quiet_NaN();
  return ord.cast<double>();
}

// NumPy's norm for one vector axis.
Tensor vector_norm(Session& s, const Tensor& x, std::int64_t cpp, py::handle ord) {
  const double p = ord.is_none() ? 2.0 : ord_value(ord);
  if (std::isnan(p)) throw tenferro::ArgumentError("norm", "invalid norm order for vectors");
  return tenferro::vector_norm(s, axis_first(x, cpp), p);
}

// NumPy's norm for the matrix axes (row, col) given as C++ axes.
Tensor matrix_norm(Session& s, const Tensor& x, std::int64_t row, std::int64_t col, py::handle ord) {
  std::vector<std::int64_t> perm = {row, col};
  for (int i = 0; i < x.rank(); ++i)
    if (i != row && i != col) perm.push_back(i);
  const Tensor a = x.permute_view(perm);  // [M, N, batch...]
  using MN = tenferro::MatrixNorm;
  if (ord.is_none()) return tenferro::matrix_norm(s, a, MN::frobenius);
  if (py::isinstance<py::str>(ord)) {
    const auto o = ord.cast<std::string>();
    if (o == "fro") return tenferro::matrix_norm(s, a, MN::frobenius);
    if (o == "nuc") return tenferro::matrix_norm(s, a, MN::nuclear);
    throw tenferro::ArgumentError("norm", "invalid norm order '" + o + "' for matrices");
  }
  const double p = ord.cast<double>();
  const double inf = std::numeric_limits<double>::infinity();
  if (p == 2) return tenferro::matrix_norm(s, a, MN::spectral);
  if (p == 1) return tenferro::matrix_norm(s, a, MN::one);
  if (p == inf) return tenferro::matrix_norm(s, a, MN::inf);
  const std::int64_t axis0[] = {0};
  if (p == -2) return tenferro::min(s, tenferro::svdvals(s, a), axis0);
  if (p == -1) return tenferro::min(s, tenferro::sum(s, tenferro::abs(s, a), axis0), axis0);  // min column sum
  if (p == -inf) {
    const std::int64_t axis1[] = {1};
    return tenferro::min(s, tenferro::sum(s, tenferro::abs(s, a), axis1), axis0);  // min row sum
  }
  throw tenferro::ArgumentError("norm", "invalid norm order " + std::to_string(p) + " for matrices");
}

py::object norm(py::handle s_, py::handle x_, py::handle ord, py::handle axis, bool keepdims) {
  const char* op = "norm";
  Session& s = session_arg(s_, op);
  ad::Context* ctx = nullptr;
  if (const ad::EagerTensor* e = recorded_arg(x_, s, op, ctx)) return recorded_norm(*ctx, *e, ord, axis, keepdims);
  Tensor x = tensor_arg(x_, op);
  const int r = x.rank();
  std::vector<std::int64_t> axes;  // C++ axes, in the order given
  Tensor result;
  if (axis.is_none()) {
    if (ord.is_none()) {  // the 2-norm of the flattened tensor (Frobenius for matrices)
      result = tenferro::vector_norm(s, tenferro::reshape(s, x, {x.numel()}), 2.0);
      for (int i = 0; i < r; ++i) axes.push_back(i);
    } else if (r == 1) {
      result = vector_norm(s, x, 0, ord);
      axes = {0};
    } else if (r == 2) {
      result = matrix_norm(s, x, 1, 0, ord);
      axes = {1, 0};
    } else {
      throw tenferro::ArgumentError(op, "improper number of dimensions to norm (give axis)");
    }
  } else if (py::isinstance<py::int_>(axis)) {
    axes = {cpp_axis(axis.cast<std::int64_t>(), r, op)};
    result = vector_norm(s, x, axes[0], ord);
  } else {
    for (py::handle a : axis) axes.push_back(cpp_axis(a.cast<std::int64_t>(), r, op));
    if (axes.size() == 1) result = vector_norm(s, x, axes[0], ord);
    else if (axes.size() == 2 && axes[0] != axes[1]) result = matrix_norm(s, x, axes[0], axes[1], ord);
    else throw tenferro::ArgumentError(op, "axis must name one axis or two distinct axes");
  }
  if (!keepdims) return py::cast(result);
  // Put back every reduced axis with extent 1, at its place.
  std::vector<std::int64_t> shape;
  int k = 0;
  for (int i = 0; i < r; ++i) {
    if (std::find(axes.begin(), axes.end(), i) != axes.end()) shape.push_back(1);
    else shape.push_back(result.extent(k++));
  }
  return py::cast(result.reshape_view(shape));
}

tenferro::Triangle uplo(const std::string& u) {
  if (u == "L" || u == "l") return tenferro::Triangle::lower;
  if (u == "U" || u == "u") return tenferro::Triangle::upper;
  throw tenferro::ArgumentError("eigh", "UPLO argument must be 'L' or 'U' (got '" + u + "')");
}

py::object solve(py::handle s_, py::handle a_, py::handle b_) {
  const char* op = "solve";
  Session& s = session_arg(s_, op);
  ad::Context* ctx = nullptr;
  if (recorded_arg(a_, s, op, ctx) || recorded_arg(b_, s, op, ctx)) return recorded_solve(*ctx, a_, b_);
  Tensor a = matrix_arg(a_, op);
  Tensor b = tensor_arg(b_, op);
  // NumPy 1.x: b is a stack of vectors when b.ndim == a.ndim - 1, else of matrices.
  if (b.rank() == a.rank() - 1) {
    std::vector<std::int64_t> shape = {b.extent(0), 1};
    for (int i = 1; i < b.rank(); ++i) shape.push_back(b.extent(i));
    Tensor bm = b.reshape_view(shape);  // [M, 1, batch...]
    broadcast_batches(a, bm, 2, op);
    Tensor x = without_gil([&] { return tenferro::solve(s, a, bm); });
    std::vector<std::int64_t> xs = {x.extent(0)};
    for (int i = 2; i < x.rank(); ++i) xs.push_back(x.extent(i));
    return py::cast(x.reshape_view(xs));
  }
  if (b.rank() < 2) throw tenferro::RankError(op, "b must be a vector or a matrix stack matching a");
  Tensor bm = swap_matrix_axes(b);
  broadcast_batches(a, bm, 2, op);
  return matrix_result(without_gil([&] { return tenferro::solve(s, a, bm); }));
}

py::tuple lstsq(py::handle s_, py::handle a_, py::handle b_, py::handle rcond) {
  const char* op = "lstsq";
  Session& s = session_arg(s_, op);
  Tensor a = matrix_arg(a_, op);
  if (a.rank() != 2) throw tenferro::RankError(op, "a must be two-dimensional (as NumPy's lstsq)");
  Tensor b = tensor_arg(b_, op);
  const bool vector = b.rank() == 1;
  if (b.rank() != 1 && b.rank() != 2) throw tenferro::RankError(op, "b must be one- or two-dimensional");
  Tensor bm = vector ? b : swap_matrix_axes(b);
  const double rc = rcond.is_none() ? -1.0 : rcond.cast<double>();
  tenferro::LstsqResult r = without_gil([&] { return tenferro::lstsq(s, a, bm, tenferro::LstsqDriver::svd, rc); });
  const std::int64_t m = a.extent(0), n = a.extent(1);
  const std::int64_t rank = r.rank.item<std::int64_t>();
  // Residuals: squared 2-norms of the columns of b - a x, when full rank and m > n (NumPy).
  Tensor residuals = Tensor::empty({0}, r.S.dtype());
  if (rank == n && m > n) {
    const Tensor x2 = vector ? r.X.reshape_view({n, 1}) : r.X;
    const Tensor b2 = vector ? bm.reshape_view({m, 1}) : bm;
    const Tensor resid = tenferro::sub(s, b2, tenferro::einsum(s, "ij,jk->ik", {a, x2}));
    const std::int64_t axis0[] = {0};
    residuals = tenferro::sum_squares(s, resid, axis0);
  }
  py::object x = vector ? py::cast(r.X) : matrix_result(r.X);
  return py::make_tuple(x, residuals, rank, r.S);
}

// The recorded form when a is a tenferro.ad.Tensor (linalg_ad.hpp), else the plain op.
template <class F> py::object dispatch(const char* op, py::handle s_, py::handle a_, const LinalgArgs& args, F plain) {
  Session& s = session_arg(s_, op);
  ad::Context* ctx = nullptr;
  if (const ad::EagerTensor* e = recorded_arg(a_, s, op, ctx)) return recorded_linalg(op, *ctx, *e, args);
  return plain(s, matrix_arg(a_, op));
}

}  // namespace

void register_linalg(py::module_& l) {
  l.doc() = "Linear algebra with numpy.linalg's names, signatures and defaults (batch axes leading).";
  l.def(
      "svd",
      [](py::handle s_, py::handle a_, bool full_matrices, bool compute_uv, bool hermitian) -> py::object {
        return dispatch("svd", s_, a_, {full_matrices, compute_uv}, [&](Session& s, const Tensor& a) -> py::object {
          if (!compute_uv) return py::cast(without_gil([&] { return tenferro::svdvals(s, a); }));
          auto r = without_gil([&] { return tenferro::svd(s, a, full_matrices ? tenferro::SvdMode::full : tenferro::SvdMode::thin); });
          return py::make_tuple(matrix_result(r.U), r.S, matrix_result(r.Vh));
        });
      },
      py::arg("s"), py::arg("a"), py::arg("full_matrices") = true, py::arg("compute_uv") = true,
      py::arg("hermitian") = false,
      "(U, S, Vh) with a = U @ diag(S) @ Vh, S descending (numpy.linalg.svd; full_matrices=True by default). "
      "hermitian is accepted and ignored (the general SVD is used).");
  l.def(
      "svdvals",
      [](py::handle s, py::handle a) {
        return dispatch("svdvals", s, a, {}, [](Session& ss, const Tensor& m) { return py::cast(tenferro::svdvals(ss, m)); });
      },
      py::arg("s"), py::arg("a"), "The singular values, descending.");
  l.def(
      "qr",
      [](py::handle s_, py::handle a_, const std::string& mode) -> py::object {
        if (mode != "reduced" && mode != "complete" && mode != "r")
          throw tenferro::ArgumentError("qr", "mode '" + mode + "' is not 'reduced', 'complete' or 'r'");
        LinalgArgs args;
        args.mode = mode;
        return dispatch("qr", s_, a_, args, [&](Session& s, const Tensor& a) -> py::object {
          auto r = without_gil([&] {
            return tenferro::qr(s, a, mode == "complete" ? tenferro::QrMode::complete : tenferro::QrMode::reduced);
          });
          if (mode == "r") return matrix_result(r.R);
          return py::make_tuple(matrix_result(r.Q), matrix_result(r.R));
        });
      },
      py::arg("s"), py::arg("a"), py::arg("mode") = "reduced", "(Q, R) with a = Q @ R (modes 'reduced', 'complete', 'r').");
  l.def(
      "eigh",
      [](py::handle s_, py::handle a_, const std::string& u) {
        LinalgArgs args;
        args.tri = uplo(u);
        return dispatch("eigh", s_, a_, args, [&](Session& s, const Tensor& a) -> py::object {
          auto r = without_gil([&] { return tenferro::eigh(s, a, args.tri); });
          return py::make_tuple(r.W, matrix_result(r.V));
        });
      },
      py::arg("s"), py::arg("a"), py::arg("UPLO") = "L", "(w, v): ascending eigenvalues and eigenvectors (columns).");
  l.def(
      "eigvalsh",
      [](py::handle s_, py::handle a_, const std::string& u) {
        LinalgArgs args;
        args.tri = uplo(u);
        return dispatch("eigvalsh", s_, a_, args,
                        [&](Session& s, const Tensor& a) { return py::cast(tenferro::eigvalsh(s, a, args.tri)); });
      },
      py::arg("s"), py::arg("a"), py::arg("UPLO") = "L", "Ascending eigenvalues of a Hermitian matrix.");
  l.def(
      "eig",
      [](py::handle s_, py::handle a_) {
        return dispatch("eig", s_, a_, {}, [](Session& s, const Tensor& a) -> py::object {
          auto r = without_gil([&] { return tenferro::eig(s, a); });
          return py::make_tuple(r.W, matrix_result(r.V));
        });
      },
      py::arg("s"), py::arg("a"),
      "(w, v) of a general matrix, always complex (NumPy returns real arrays when every eigenvalue is real).");
  l.def(
      "eigvals",
      [](py::handle s, py::handle a) {
        return dispatch("eigvals", s, a, {}, [](Session& ss, const Tensor& m) { return py::cast(tenferro::eigvals(ss, m)); });
      },
      py::arg("s"), py::arg("a"), "Eigenvalues of a general matrix (complex).");
  l.def("solve", &solve, py::arg("s"), py::arg("a"), py::arg("b"),
        "x with a @ x = b (b: a stack of vectors when b.ndim == a.ndim - 1, else of matrices; batch axes broadcast).");
  l.def("lstsq", &lstsq, py::arg("s"), py::arg("a"), py::arg("b"), py::arg("rcond") = py::none(),
        "(x, residuals, rank, s) as numpy.linalg.lstsq (SVD driver; rcond=None: eps * max(M, N)).");
  l.def(
      "inv",
      [](py::handle s, py::handle a) {
        return dispatch("inv", s, a, {}, [](Session& ss, const Tensor& m) { return matrix_result(tenferro::inv(ss, m)); });
      },
      py::arg("s"), py::arg("a"), "The inverse (NumericalError, a RuntimeError, for a singular matrix).");
  l.def(
      "det",
      [](py::handle s, py::handle a) {
        return dispatch("det", s, a, {}, [](Session& ss, const Tensor& m) { return py::cast(tenferro::det(ss, m)); });
      },
      py::arg("s"), py::arg("a"), "The determinant.");
  l.def(
      "slogdet",
      [](py::handle s, py::handle a) {
        return dispatch("slogdet", s, a, {}, [](Session& ss, const Tensor& m) -> py::object {
          auto r = tenferro::slogdet(ss, m);
          return py::make_tuple(r.sign, r.logabsdet);
        });
      },
      py::arg("s"), py::arg("a"), "(sign, logabsdet) of the determinant.");
  l.def(
      "pinv",
      [](py::handle s, py::handle a, double rcond, bool hermitian) {
        LinalgArgs args;
        args.rcond = rcond;
        return dispatch("pinv", s, a, args, [&](Session& ss, const Tensor& m) { return matrix_result(tenferro::pinv(ss, m, rcond)); });
      },
      py::arg("s"), py::arg("a"), py::arg("rcond") = 1e-15, py::arg("hermitian") = false,
      "The Moore-Penrose pseudo-inverse (singular values <= rcond * largest dropped; hermitian ignored).");
  l.def(
      "cholesky",
      [](py::handle s, py::handle a) {
        return dispatch("cholesky", s, a, {}, [](Session& ss, const Tensor& m) {
          return matrix_result(tenferro::cholesky(ss, m, tenferro::Triangle::lower));
        });
      },
      py::arg("s"), py::arg("a"), "The lower Cholesky factor L with a = L @ L^H.");
  l.def(
      "matrix_exp",
      [](py::handle s, py::handle a) {
        return dispatch("matrix_exp", s, a, {}, [](Session& ss, const Tensor& m) { return matrix_result(tenferro::matrix_exp(ss, m)); });
      },
      py::arg("s"), py::arg("a"), "The matrix exponential (scipy.linalg.expm).");
  l.def("norm", &norm, py::arg("s"), py::arg("x"), py::arg("ord") = py::none(), py::arg("axis") = py::none(),
        py::arg("keepdims") = false, "numpy.linalg.norm: vector and matrix norms with NumPy's ord, axis and keepdims.");
}

}  // namespace tfpy
