#pragma once
// Counting replacements of the global operator new/delete, for tests that prove a path
// allocates nothing. Include this header in exactly one source file of a test
// executable (each tests/**/*_test.cpp is its own executable): it defines the
// replaceable allocation functions ([new.delete]). Counting is switched on only around
// the call under test, after a warm-up call (first-use statics, pool blocks).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace tenferro::testing::alloc {
inline std::atomic<bool> counting{false};
inline std::atomic<long> news{0};
inline std::atomic<long> deletes{0};
inline void* volatile sink = nullptr;  // keeps test allocations from being elided

inline void* counted_alloc(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
inline void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  const auto al = static_cast<std::size_t>(a);
  if (n > SIZE_MAX - al) return nullptr;  // rounding up would wrap to a tiny block
  return std::aligned_alloc(al, ((n ? n : 1) + al - 1) / al * al);  // aligned_alloc wants a multiple
}
// Never inlined: once inlined into an operator delete that GCC inlines at a call site, it
// pairs this free() with the operator new of that site and warns (-Wmismatched-new-delete).
[[gnu::noinline]] inline void counted_free(void* p) noexcept {
  if (p && counting.load(std::memory_order_relaxed)) deletes.fetch_add(1, std::memory_order_relaxed);
  std::free(p);
}
}  // namespace tenferro::testing::alloc

// Defined here, not `inline`: the replaceable allocation functions may not be declared
// inline ([replacement.functions]).
void* operator new(std::size_t n) {
  if (void* p = tenferro::testing::alloc::counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = tenferro::testing::alloc::counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return tenferro::testing::alloc::counted_alloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return tenferro::testing::alloc::counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = tenferro::testing::alloc::counted_aligned_alloc(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = tenferro::testing::alloc::counted_aligned_alloc(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return tenferro::testing::alloc::counted_aligned_alloc(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return tenferro::testing::alloc::counted_aligned_alloc(n, a);
}
void operator delete(void* p) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { tenferro::testing::alloc::counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { tenferro::testing::alloc::counted_free(p); }

namespace tenferro::testing {

/// Heap allocations and frees counted during one call.
struct AllocCounts {
  long news = 0;
  long deletes = 0;
};

/// Calls f once to warm up, then again while counting; returns the counts of the second
/// call. An exception from f propagates (counting is switched off first).
template <class F> AllocCounts allocations_in(F&& f) {
  f();
  alloc::news = 0;
  alloc::deletes = 0;
  struct CountingScope {
    CountingScope() { alloc::counting = true; }
    ~CountingScope() { alloc::counting = false; }
  };
  {
    const CountingScope scope;
    f();
  }
  return {alloc::news.load(), alloc::deletes.load()};
}

}  // namespace tenferro::testing

/// Expects that `call` (after a warm-up run) neither allocates nor frees heap memory.
#define EXPECT_NO_ALLOCATION(call)                                                            \
  do {                                                                                        \
    const ::tenferro::testing::AllocCounts c_ = ::tenferro::testing::allocations_in([&] { call; }); \
    EXPECT_EQ(c_.news, 0) << "operator new calls in: " #call;                                 \
    EXPECT_EQ(c_.deletes, 0) << "operator delete calls in: " #call;                           \
  } while (0)
