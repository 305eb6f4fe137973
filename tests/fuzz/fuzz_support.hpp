#pragma once
// Shared pieces of the fuzz harnesses (tests/fuzz/fuzz_*.cpp): a reader that decodes
// the fuzzer's bytes into bounded values, the session every harness runs on, the
// contract check (Note [Fuzz contract]), and tensors whose storage says where each
// element came from.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tenferro::fuzz {

/// 128-bit integers for the harnesses' own layout arithmetic, which must not overflow
/// where the library's int64 arithmetic may (`__extension__`: GCC and clang have it).
__extension__ typedef __int128 Wide;

// Note [Fuzz contract]
// Every public entry point either succeeds or throws an exception derived from
// tenferro::Error (DESIGN.md, Errors). So a harness passes an input when the call
// returns or throws a tenferro::Error; anything else is a bug and aborts, which
// libFuzzer (and the replay main) reports as a crash: another exception type
// (std::out_of_range from a container, std::bad_alloc from a size the library should
// have refused, std::length_error), a broken invariant the harness checks (fail()),
// and whatever ASan/UBSan report (out-of-bounds reads, signed overflow). Hangs are
// caught by libFuzzer's -timeout. Sizes are bounded by the harnesses, not by the
// library, only where a valid request would allocate: metadata-only calls (views,
// planning, inference) get extents up to INT64_MAX.

/// Aborts with a message naming the harness and the broken invariant.
[[noreturn]] inline void fail(const char* harness, const std::string& what) {
  std::fprintf(stderr, "%s: invariant broken: %s\n", harness, what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `f`; a tenferro::Error is the contract's answer to bad input, anything else aborts.
template <class F> void guarded(const char* harness, F&& f) {
  try {
    f();
  } catch (const Error&) {
    // typed refusal: fine
  } catch (const std::exception& e) {
    fail(harness, std::string("exception outside tenferro::Error: ") + typeid(e).name() + ": " + e.what());
  }
}

/// Decodes the fuzzer's bytes. Past the end every read returns zero, so every input is
/// a complete program and a short one is a small one (libFuzzer grows inputs slowly).
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) noexcept : p_(data), n_(size) {}
  bool empty() const noexcept { return i_ >= n_; }
  std::size_t left() const noexcept { return i_ < n_ ? n_ - i_ : 0; }
  std::uint8_t u8() noexcept { return i_ < n_ ? p_[i_++] : 0; }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint64_t u64() noexcept {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(u8()) << (8 * k);
    return v;
  }
  bool flag() noexcept { return (u8() & 1) != 0; }
  /// A value in [lo, hi] (hi - lo < 2^16).
  std::int64_t range(std::int64_t lo, std::int64_t hi) noexcept {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    const std::uint64_t raw = span <= 256 ? u8() : u16();
    return lo + static_cast<std::int64_t>(raw % span);
  }
  /// An integer that is usually small but reaches the edges: one byte picks a class
  /// (small signed, a power of two near 2^31 or 2^62, INT64_MIN/MAX, a raw 64-bit value).
  std::int64_t wide() noexcept {
    const std::uint8_t c = u8();
    switch (c % 16) {
      case 12: return std::numeric_limits<std::int64_t>::max() - range(0, 2);
      case 13: return std::numeric_limits<std::int64_t>::min() + range(0, 2);
      case 14: {
        const int shift = static_cast<int>(range(30, 62));
        const std::int64_t v = (std::int64_t{1} << shift) + range(-2, 2);
        return flag() ? -v : v;
      }
      case 15: return static_cast<std::int64_t>(u64());
      default: return static_cast<std::int64_t>(static_cast<std::int8_t>(u8())) % 12;
    }
  }
  /// Up to `max` raw bytes as a string.
  std::string text(std::size_t max) {
    const std::size_t len = std::min<std::size_t>(left(), max);
    std::string s(reinterpret_cast<const char*>(p_ + i_), len);
    i_ += len;
    return s;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t i_ = 0;
};

/// The session the harnesses run on: one thread (deterministic and no worker pool to
/// race with the fuzzer), held open for the whole process.
inline Session& session() {
  static CpuBackend backend([] {
    CpuBackendOptions o;
    o.num_threads = 1;
    return o;
  }());
  static HeldSession held = backend.open_session();
  return held;
}

/// Every dtype, in enum order.
inline constexpr DType kDTypes[] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64, DType::c64, DType::c128};
inline DType pick_dtype(Bytes& in) { return kDTypes[in.u8() % 7]; }

/// A compact tensor whose element i holds a small value derived from i and `salt`
/// (bool: parity; integers: in [-3, 5]; floats: quarters in [-3, 5); complex: both parts).
/// Small values keep integer pow/cumprod from overflowing into UB-free but noisy wraps.
inline Tensor pattern_tensor(std::span<const std::int64_t> shape, DType dtype, unsigned salt) {
  Tensor t = Tensor::empty(shape, dtype);
  visit_dtype("pattern_tensor", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.mutable_data());
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const auto k = static_cast<std::int64_t>((static_cast<std::uint64_t>(i) * 2654435761u + salt) % 9) - 3;
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (k & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(k);
      } else if constexpr (is_complex_v<T>) {
        using R = typename T::value_type;
        p[i] = T(static_cast<R>(k) / R(4) + R(1), static_cast<R>(-k) / R(2));
      } else {
        p[i] = static_cast<T>(k) / T(4) + T(1);
      }
    }
  });
  return t;
}

/// Product of `shape`, saturating at INT64_MAX (the harnesses compare it with small
/// bounds before allocating; negative extents count as 0).
inline std::int64_t saturating_numel(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) {
    if (e <= 0) return 0;
    if (n > std::numeric_limits<std::int64_t>::max() / e) n = std::numeric_limits<std::int64_t>::max();
    else n *= e;
  }
  return n;
}

}  // namespace tenferro::fuzz
