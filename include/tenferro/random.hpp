#pragma once
/// \file random.hpp
/// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). Element i of a
/// draw depends only on (seed, counter + i), so values never depend on thread count.

#include <array>
#include <cstdint>

#include "tenferro/export.hpp"

namespace tenferro {

/// Explicit, seeded generator state: a seed (key) and a position (counter).
class TENFERRO_API Generator {
 public:
  explicit Generator(std::uint64_t seed, std::uint64_t position = 0) noexcept : seed_(seed), position_(position) {}
  std::uint64_t seed() const noexcept { return seed_; }
  /// Index of the next random block; each element draw consumes one block.
  std::uint64_t position() const noexcept { return position_; }
  /// Reserves `n` blocks and returns the first.
  std::uint64_t advance(std::uint64_t n) noexcept {
    const std::uint64_t p = position_;
    position_ += n;
    return p;
  }
  /// Four 32-bit random words for block `counter` under `seed`.
  static std::array<std::uint32_t, 4> philox(std::uint64_t seed, std::uint64_t counter) noexcept;
  /// Uniform double in [0, 1) from 53 random bits of block `counter`, word pair `which` (0 or 1).
  static double uniform01(std::uint64_t seed, std::uint64_t counter, int which) noexcept;

 private:
  std::uint64_t seed_;
  std::uint64_t position_;
};

}  // namespace tenferro
