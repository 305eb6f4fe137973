#include "tenferro/random.hpp"

namespace tenferro {

// Philox4x32 with 10 rounds; multipliers and Weyl key increments from the paper.
std::array<std::uint32_t, 4> Generator::philox(std::uint64_t seed, std::uint64_t counter) noexcept {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(M0) * c0, p1 = static_cast<std::uint64_t>(M1) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += W0;
    k1 += W1;
  }
  return {c0, c1, c2, c3};
}

double Generator::uniform01(std::uint64_t seed, std::uint64_t counter, int which) noexcept {
  const auto w = philox(seed, counter);
  const std::uint64_t bits = (static_cast<std::uint64_t>(w[2 * which]) << 32 | w[2 * which + 1]) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

}  // namespace tenferro
