// Quickstart: build tensors, run a few ops in a held session, print the results and
// how long each call took (the first call of an op includes one-time costs: pool
// misses, page faults; the best of the repeats is the steady state).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <tenferro/tenferro.hpp>

using namespace tenferro;

namespace {
// Runs f once and then 1000 more times; prints first and best time.
template <class F> auto timed(const char* what, F&& f) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  auto result = f();
  const double first = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
  double best = first;
  for (int i = 0; i < 1000; ++i) {
    t0 = clock::now();
    auto r = f();
    best = std::min(best, std::chrono::duration<double, std::nano>(clock::now() - t0).count());
    (void)r;
  }
  std::printf("%-44s first %9.0f ns   best of 1000 %7.0f ns\n", what, first, best);
  return result;
}
}  // namespace

int main() {
  CpuBackend backend;
  std::printf("tenferro quickstart: CPU backend, %d thread(s), %zu CPU(s)\n\n", backend.num_threads(), backend.cpus().size());

  // Column-major owners; row-major input only through the named constructor.
  auto a = Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4});
  auto b = Tensor::ones({2, 2}, DType::f64);
  Generator gen(2026);
  auto z = Tensor::normal(gen, {3, 2}, DType::c128);
  std::cout << "a = " << a << "\nb = " << b << "\nz (normal, seed 2026) = " << z << "\n\n";

  HeldSession s = backend.open_session();
  auto out = Tensor::zeros({2, 2}, DType::f64);
  auto c = timed("add(s, a, b)", [&] { return add(s, a, b); });
  timed("add_into(s, a, b, out)", [&] { add_into(s, a, b, out); return 0; });
  auto e = timed("exp(s, a)", [&] { return exp(s, a); });
  auto at = timed("mul(s, a.transpose_view(), 2.0)", [&] { return mul(s, a.transpose_view(), 2.0); });
  auto col = timed("sum(s, a, {0})", [&] { return sum(s, a, {0}); });
  auto nz = timed("norm_squared(s, z)", [&] { return norm_squared(s, z); });
  auto big = Tensor::uniform(gen, {1000, 1000}, DType::f64);
  auto m = timed("max(s, big 1000x1000, {1})", [&] { return max(s, big, {1}); });
  // Einsum: column-major labels ("ij,jk->ik" is a·b); a prepared plan for repeated use.
  auto ab = timed("einsum(s, \"ij,jk->ik\", {a, b})", [&] { return einsum(s, "ij,jk->ik", {a, b}); });
  const EinsumPlan plan = EinsumPlan::for_operands("ij,jk->ik", std::vector<Tensor>{a, b});
  timed("plan.execute_into(s, {a, b}, out)", [&] { plan.execute_into(s, {a, b}, out); return 0; });
  auto tr = timed("einsum(s, \"ii->\", {a}) (trace)", [&] { return einsum(s, "ii->", {a}); });
  // Eager AD on the same session: loss = Σ svdvals(a·w) + Σ (w ∘ w); gradient for w.
  ad::Context ctx(s);
  const ad::EagerTensor w = ctx.leaf(at);
  auto loss_of = [&] {
    ad::EagerTensor aw = ad::einsum(ctx, "ij,jk->ik", {ad::EagerTensor(a), w});
    return ad::add(ctx, ad::sum(ctx, ad::svdvals(ctx, aw)), ad::sum(ctx, ad::mul(ctx, w, w)));
  };
  timed("forward + backward (einsum, svdvals, sum)", [&] {
    ctx.zero_grad();
    ctx.backward(loss_of());
    return 0;
  });
  const Tensor grad_w = w.grad();
  s.close();

  std::cout << "\na + b = " << c << "\nout = " << out << "\nexp(a) = " << e << "\n2 * a^T = " << at
            << "\ncolumn sums of a = " << col << "\n|z|^2 = " << nz << "\nrow maxima of big: " << m.shape().to_string() << ", first "
            << m.item<double>({0}) << "\na·b (einsum) = " << ab << "\ntrace(a) = " << tr
            << "\nd/dw [sum(svdvals(a·w)) + sum(w∘w)] at w = 2·a^T: " << grad_w << "\n";
  return 0;
}
