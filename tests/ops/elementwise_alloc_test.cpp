// The `_into` path performs no heap allocation inside a held session: every global
// operator new/delete of this executable is replaced by a counting version, switched on
// only around the call under test (after a warm-up call). Tensor::shape() returns Dims
// with inline storage up to rank 8, and message strings are only built on error paths,
// so validation, broadcasting, planning and the kernels must all run allocation-free.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "support/test_util.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_news{0};
std::atomic<long> g_deletes{0};
void* volatile g_sink = nullptr;

void* counted_alloc(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  const auto al = static_cast<std::size_t>(a);
  const std::size_t size = ((n ? n : 1) + al - 1) / al * al;  // aligned_alloc wants a multiple
  return std::aligned_alloc(al, size);
}
void counted_free(void* p) noexcept {
  if (p && g_counting.load(std::memory_order_relaxed)) g_deletes.fetch_add(1, std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

// ---- the replaceable global allocation functions ([new.delete]) ----
void* operator new(std::size_t n) {
  if (void* p = counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = counted_aligned_alloc(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = counted_aligned_alloc(n, a)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted_aligned_alloc(n, a); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }

namespace tenferro::ew_alloc_test {
namespace {

using testing::random_tensor;

struct Counts {
  long news, deletes;
};

/// Calls f once to warm up (first-use statics, pool), then again while counting.
template <class F> Counts allocations_in(F&& f) {
  f();
  g_news = 0;
  g_deletes = 0;
  g_counting = true;
  f();
  g_counting = false;
  return {g_news.load(), g_deletes.load()};
}

#define EXPECT_NO_ALLOCATION(call)                                \
  do {                                                            \
    const Counts c_ = allocations_in([&] { call; });              \
    EXPECT_EQ(c_.news, 0) << "operator new calls in: " #call;     \
    EXPECT_EQ(c_.deletes, 0) << "operator delete calls in: " #call; \
  } while (0)

TEST(ElementwiseAlloc, CountingIsLive) {
  // The replacement is in effect (and the counter works): a vector allocates.
  const Counts c = allocations_in([] {
    std::vector<int> v(100);
    g_sink = v.data();  // keeps the allocation from being elided
  });
  EXPECT_GE(c.news, 1);
  EXPECT_GE(c.deletes, 1);
}

TEST(ElementwiseAlloc, IntoFormsDoNotAllocateInsideAHeldSession) {
  std::mt19937_64 rng(61);
  CpuBackend backend;
  HeldSession s = backend.open_session();
  // 2x2 f64, compact.
  const Tensor a = random_tensor(rng, {2, 2}, DType::f64, 0.5, 2), b = random_tensor(rng, {2, 2}, DType::f64, 0.5, 2);
  const Tensor out = Tensor::empty({2, 2}, DType::f64);
  EXPECT_NO_ALLOCATION(add_into(s, a, b, out));
  EXPECT_NO_ALLOCATION(exp_into(s, a, out));
  // Strided views: a transposed operand, a negative-stride operand, a transposed slice of
  // a bigger tensor as out.
  const Tensor at = random_tensor(rng, {4, 3}, DType::f64, 0.5, 2).transpose_view();
  const Tensor bn = random_tensor(rng, {3, 4}, DType::f64, 0.5, 2).slice_view(1, Tensor::kSliceEnd, Tensor::kSliceEnd, -1);
  const Tensor big = Tensor::zeros({6, 5}, DType::f64);
  const Tensor ov = big.slice_view(0, 1, 5).slice_view(1, 1, 4).transpose_view();  // [3, 4]
  EXPECT_NO_ALLOCATION(add_into(s, at, bn, ov));
  EXPECT_NO_ALLOCATION(exp_into(s, bn, ov));
  // Broadcasting and scalar operands, rank 3.
  const Tensor col = random_tensor(rng, {3}, DType::f64);
  const Tensor t3 = random_tensor(rng, {3, 4, 5}, DType::f64).permute_view({0, 2, 1}).permute_view({0, 2, 1});
  const Tensor o3 = Tensor::empty({3, 4, 5}, DType::f64);
  EXPECT_NO_ALLOCATION(add_into(s, at, col, ov));
  EXPECT_NO_ALLOCATION(add_into(s, a, 2.0, out));
  EXPECT_NO_ALLOCATION(mul_into(s, t3, col, o3));
  // In place.
  EXPECT_NO_ALLOCATION(add_into(s, ov, 1.0, ov));
  EXPECT_NO_ALLOCATION(exp_into(s, ov, ov));
  // The other families' `_into` forms, same rule.
  const Tensor flags = Tensor::empty({3, 4}, DType::b8);
  EXPECT_NO_ALLOCATION(compare_into(s, at, bn, CompareOp::lt, flags));
  EXPECT_NO_ALLOCATION(select_into(s, flags, at, 0.0, ov));
  EXPECT_NO_ALLOCATION(clamp_into(s, 0.75, bn, 1.5, ov));
  EXPECT_NO_ALLOCATION(sigmoid_into(s, bn, ov));
  EXPECT_NO_ALLOCATION(copy_into(s, col, ov));
  const Tensor ints = Tensor::empty({3, 4}, DType::i32);
  EXPECT_NO_ALLOCATION(cast_into(s, bn, ints));
  EXPECT_NO_ALLOCATION(convert_into(s, ints, ov));
  const Tensor ia = random_tensor(rng, {3, 4}, DType::i64, 1, 9), ib = random_tensor(rng, {3, 4}, DType::i64, 1, 9);
  const Tensor io = Tensor::empty({3, 4}, DType::i64);
  EXPECT_NO_ALLOCATION(div_into(s, ia, ib, io));  // includes the zero-divisor scan
  EXPECT_NO_ALLOCATION(pow_into(s, ia, 3, io));   // and the negative-exponent scan
}

}  // namespace
}  // namespace tenferro::ew_alloc_test
