// The recorded forms of tenferro.linalg (Note [Eager arguments] in ad.cpp): the same
// NumPy signatures, run through the ad:: ops when an argument is a tenferro.ad.Tensor.
// The matrix swap of Note [Reversed axes] is a recorded transpose here.
#include "linalg_ad.hpp"

namespace tfpy {

namespace {

py::object swapped(ad::Context& ctx, ad::EagerTensor&& x) { return eager_result(eager_swap(ctx, x)); }

[[noreturn]] void not_recorded(const char* op, const std::string& what) {
  throw tenferro::UnsupportedError(op, what + " has no recorded form (pass x.value for a constant)");
}

}  // namespace

py::object recorded_linalg(const char* op, ad::Context& ctx, const ad::EagerTensor& a, const LinalgArgs& args) {
  if (a.rank() < 2) throw tenferro::RankError(op, "the array must be at least two-dimensional");
  const ad::EagerTensor m = eager_swap(ctx, a);  // [M, N, batch...]
  const std::string name = op;
  if (name == "svd") {
    if (!args.compute_uv) return eager_result(ad::svdvals(ctx, m));
    auto r = ad::svd(ctx, m, args.full_matrices ? tenferro::SvdMode::full : tenferro::SvdMode::thin);
    return py::make_tuple(swapped(ctx, std::move(r.U)), py::cast(std::move(r.S)), swapped(ctx, std::move(r.Vh)));
  }
  if (name == "svdvals") return eager_result(ad::svdvals(ctx, m));
  if (name == "qr") {
    if (args.mode == "complete") not_recorded(op, "mode='complete'");
    auto r = ad::qr(ctx, m);
    if (args.mode == "r") return swapped(ctx, std::move(r.R));
    return py::make_tuple(swapped(ctx, std::move(r.Q)), swapped(ctx, std::move(r.R)));
  }
  if (name == "eigh" || name == "eigvalsh") {
    auto r = ad::eigh(ctx, m, args.tri);
    if (name == "eigvalsh") return eager_result(std::move(r.W));
    return py::make_tuple(py::cast(std::move(r.W)), swapped(ctx, std::move(r.V)));
  }
  if (name == "eig") {
    auto r = ad::eig(ctx, m);
    return py::make_tuple(py::cast(std::move(r.W)), swapped(ctx, std::move(r.V)));
  }
  if (name == "eigvals") return eager_result(ad::eigvals(ctx, m));
  if (name == "inv") return swapped(ctx, ad::inv(ctx, m));
  if (name == "det") return eager_result(ad::det(ctx, m));
  if (name == "slogdet") {
    auto r = ad::slogdet(ctx, m);
    return py::make_tuple(py::cast(std::move(r.sign)), py::cast(std::move(r.logabsdet)));
  }
  if (name == "pinv") return swapped(ctx, ad::pinv(ctx, m, args.rcond));
  if (name == "cholesky") return swapped(ctx, ad::cholesky(ctx, m, tenferro::Triangle::lower));
  if (name == "matrix_exp") return swapped(ctx, ad::matrix_exp(ctx, m));
  not_recorded(op, "this op");
}

py::object recorded_solve(ad::Context& ctx, py::handle a_, py::handle b_) {
  const char* op = "solve";
  const ad::EagerTensor a = eager_arg(a_, op), b = eager_arg(b_, op);
  if (a.rank() < 2) throw tenferro::RankError(op, "a must be at least two-dimensional");
  const ad::EagerTensor am = eager_swap(ctx, a);
  if (b.rank() == a.rank() - 1) {  // a stack of vectors: [M, 1, batch...] for the C++ call
    std::vector<std::int64_t> shape = {b.shape()[0], 1};
    for (int i = 1; i < b.rank(); ++i) shape.push_back(b.shape()[i]);
    const ad::EagerTensor x = ad::solve(ctx, am, ad::reshape(ctx, b, shape));
    std::vector<std::int64_t> xs = {x.shape()[0]};
    for (int i = 2; i < x.rank(); ++i) xs.push_back(x.shape()[i]);
    return eager_result(ad::reshape(ctx, x, xs));
  }
  if (b.rank() < 2) throw tenferro::RankError(op, "b must be a vector or a matrix stack matching a");
  return swapped(ctx, ad::solve(ctx, am, eager_swap(ctx, b)));
}

py::object recorded_norm(ad::Context& ctx, const ad::EagerTensor& x, py::handle ord, py::handle axis, bool keepdims) {
  const char* op = "norm";
  if (keepdims) not_recorded(op, "keepdims=True");
  const int r = x.rank();
  if (axis.is_none() && (ord.is_none() || (r == 2 && py::isinstance<py::str>(ord) && ord.cast<std::string>() == "fro")))
    return eager_result(ad::vector_norm(ctx, ad::reshape(ctx, x, {x.numel()}), 2.0));
  std::int64_t cpp = -1;
  if (axis.is_none() && r == 1) cpp = 0;
  else if (!axis.is_none() && py::isinstance<py::int_>(axis)) cpp = cpp_axis(axis.cast<std::int64_t>(), r, op);
  if (cpp < 0 || py::isinstance<py::str>(ord)) not_recorded(op, "a matrix norm");
  std::vector<std::int64_t> perm = {cpp};
  for (int i = 0; i < r; ++i)
    if (i != cpp) perm.push_back(i);
  return eager_result(ad::vector_norm(ctx, ad::transpose(ctx, x, perm), ord.is_none() ? 2.0 : ord.cast<double>()));
}

}  // namespace tfpy
