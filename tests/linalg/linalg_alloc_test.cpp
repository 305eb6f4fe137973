// Linalg ops perform no heap allocation inside a held session in steady state:
// workspace sizes come from the session plan cache, workspace and packed copies and the
// results from the session pool. Every global operator new/delete of this executable is
// replaced by a counting version, switched on only around the call under test (after a
// warm-up call with the same shapes). LAPACKE's `_work` entry points in column-major
// order allocate nothing themselves (OpenBLAS's own per-call buffer comes from its
// preallocated arena, not the heap).
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

namespace tenferro::linalg_alloc_test {
namespace {

using testing::random_tensor;

struct Counts {
  long news, deletes;
};

template <class F> Counts allocations_in(F&& f) {
  f();
  g_news = 0;
  g_deletes = 0;
  g_counting = true;
  f();
  g_counting = false;
  return {g_news.load(), g_deletes.load()};
}

#define EXPECT_NO_ALLOCATION(call)                                  \
  do {                                                              \
    const Counts c_ = allocations_in([&] { call; });                \
    EXPECT_EQ(c_.news, 0) << "operator new calls in: " #call;       \
    EXPECT_EQ(c_.deletes, 0) << "operator delete calls in: " #call; \
  } while (0)

TEST(LinalgAlloc, CountingIsLive) {
  const Counts c = allocations_in([] {
    std::vector<int> v(100);
    g_sink = v.data();
  });
  EXPECT_GE(c.news, 1);
}

TEST(LinalgAlloc, SteadyStateCallsDoNotAllocate) {
  std::mt19937_64 rng(5);
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  HeldSession s = backend.open_session();
  for (std::int64_t n : {2, 8, 40}) {  // 40: workspace larger than the stack buffer
    SCOPED_TRACE(n);
    Tensor a = random_tensor(rng, {n, n}, DType::f64, -1, 1);
    Tensor spd = Tensor::empty({n, n}, DType::f64);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        for (std::int64_t k = 0; k < n; ++k) v += a.item<double>({i, k}) * a.item<double>({j, k});
        spd.set<double>({i, j}, v + (i == j ? static_cast<double>(n) : 0.0));
      }
    const Tensor b = random_tensor(rng, {n, 2}, DType::f64, -1, 1);
    const Tensor at = random_tensor(rng, {n, n}, DType::c128, -1, 1).transpose_view();  // strided complex
    const Tensor batch = random_tensor(rng, {n, n, 3}, DType::f32, -1, 1);
    Tensor x = Tensor::empty({n, 2}, DType::f64);
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, a).S.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, at, SvdMode::full).U.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(svd(s, batch).S.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr(s, a).Q.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr(s, at, QrMode::complete, true).R.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eigh(s, spd).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eigh(s, at).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(eig(s, a).V.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(solve(s, spd, b).data()));
    EXPECT_NO_ALLOCATION(solve_into(s, spd, b, x));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(triangular_solve(s, spd, b).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(cholesky(s, spd).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(inv(s, spd).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu(s, a).U.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_factor(s, a).LU.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(det(s, batch).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(slogdet(s, at).sign.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_full_pivot(s, a).Q.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(qr_pivoted(s, a).R.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lstsq(s, a, b).X.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lstsq(s, a, b, LstsqDriver::svd).X.data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(pinv(s, a).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(matrix_norm(s, a, MatrixNorm::spectral).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(vector_norm(s, b, 3.0).data()));
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(matrix_exp(s, a).data()));
    const LuFactorResult f = lu_factor(s, spd);
    EXPECT_NO_ALLOCATION(g_sink = const_cast<void*>(lu_solve(s, f, b).data()));
  }
}

}  // namespace
}  // namespace tenferro::linalg_alloc_test
