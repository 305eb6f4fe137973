// Outside consumer of an installed tenferro: only public headers and the
// exported symbols of libtenferro.so are available here.
#include <tenferro/tenferro.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>

int main() {
  try {
    int failures = 0;
    tenferro::CpuBackend backend;
    backend.with_session([&](tenferro::Session& s) {
      auto a = tenferro::Tensor::ones({2, 2}, tenferro::DType::f64);
      auto c = tenferro::add(s, a, a);
      for (std::int64_t i = 0; i < 2; ++i) {
        for (std::int64_t j = 0; j < 2; ++j) {
          const double v = c.item<double>({i, j});
          if (v != 2.0) {
            std::fprintf(stderr, "consumer: c(%lld,%lld) = %g, expected 2\n",
                         static_cast<long long>(i), static_cast<long long>(j), v);
            ++failures;
          }
        }
      }
    });
    if (failures != 0) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: exception: %s\n", e.what());
    return 1;
  }
  std::puts("tenferro consumer: OK");
  return 0;
}
