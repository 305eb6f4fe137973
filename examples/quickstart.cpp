// Quickstart: build tensors, run a few ops in a held session, print results and timings.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <tenferro/tenferro.hpp>

int main() {
  using namespace tenferro;
  CpuBackend backend;
  std::printf("tenferro quickstart: CPU backend with %d thread(s)\n", backend.num_threads());
  auto a = Tensor::from_row_major<double>({2, 2}, {1, 2, 3, 4});
  auto b = Tensor::ones({2, 2}, DType::f64);
  std::cout << "a = " << a << "\nb = " << b << "\n";
  HeldSession s = backend.open_session();
  auto c = add(s, a, b);
  std::cout << "a + b = " << c << "\n";
  std::cout << "exp(a) = " << exp(s, a) << "\n";
  std::cout << "sum(a, axis 0) = " << sum(s, a, {0}) << "\n";
  s.close();
}
