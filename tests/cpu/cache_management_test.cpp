// The backend's cache management calls (cache_stats, clear_cache, set_cache_limits):
// they act on the caches the sessions check out, never wait (RuntimeStateError while
// a session holds them), and limits take effect for the next session.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "tenferro/tenferro.hpp"

namespace tenferro {
namespace {

using testing::expect_error;

const DotDims kBatched{.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {2}, .rhs_batch = {2}};

void run_dots(CpuBackend& backend, int n) {
  backend.with_session([&](Session& s) {
    for (int i = 1; i <= n; ++i) {
      auto a = Tensor::ones({i, 4, 2}, DType::f64), b = Tensor::ones({4, 3, 2}, DType::f64);
      (void)dot_general(s, a, b, kBatched);
    }
  });
}

TEST(CacheManagement, StatsClearAndLimits) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  run_dots(backend, 3);
  run_dots(backend, 3);  // second round: all hits
  PlanCacheStats st = backend.cache_stats(CacheKind::dot_plans);
  EXPECT_EQ(st.entries, 3u);
  EXPECT_EQ(st.misses, 3u);
  EXPECT_EQ(st.hits, 3u);
  EXPECT_GT(st.bytes, 0u);
  EXPECT_EQ(st.entry_limit, 64u);

  backend.clear_cache(CacheKind::dot_plans);
  st = backend.cache_stats(CacheKind::dot_plans);
  EXPECT_EQ(st.entries, 0u);
  EXPECT_EQ(st.bytes, 0u);

  backend.set_cache_limits(CacheKind::dot_plans, 2, std::size_t{1} << 20);
  run_dots(backend, 3);
  st = backend.cache_stats(CacheKind::dot_plans);
  EXPECT_EQ(st.entries, 2u);
  EXPECT_EQ(st.entry_limit, 2u);
  EXPECT_GE(st.evictions, 1u);

  // Caching off: results are still right, nothing is kept.
  backend.set_cache_limits(CacheKind::dot_plans, 0, 0);
  backend.with_session([&](Session& s) {
    auto a = Tensor::ones({3, 4, 2}, DType::f64), b = Tensor::ones({4, 3, 2}, DType::f64);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(dot_general(s, a, b, kBatched).item<double>({1, 2, 1}), 4.0);
    EXPECT_EQ(dot_plan_cache_stats(s).entries, 0u);
  });
}

TEST(CacheManagement, EveryKindAnswersAndBadKindsAreRefused) {
  CpuBackend backend;
  for (int k = 0; k < kNumCacheKinds; ++k) {
    const auto kind = static_cast<CacheKind>(k);
    EXPECT_NE(cache_kind_name(kind), "?");
    EXPECT_EQ(backend.cache_stats(kind).entries, 0u);
    backend.clear_cache(kind);
    backend.set_cache_limits(kind, 8, 1 << 16);
    EXPECT_EQ(backend.cache_stats(kind).byte_limit, std::size_t{1} << 16);
  }
  const auto bad = static_cast<CacheKind>(kNumCacheKinds);
  expect_error<ArgumentError>([&] { (void)backend.cache_stats(bad); }, "cache_stats");
  expect_error<ArgumentError>([&] { backend.clear_cache(bad); }, "clear_cache");
  expect_error<ArgumentError>([&] { backend.set_cache_limits(bad, 1, 1); }, "set_cache_limits");
}

TEST(CacheManagement, NeverWaitsWhileASessionHoldsTheCaches) {
  CpuBackend backend;
  HeldSession s = backend.open_session();
  expect_error<RuntimeStateError>([&] { (void)backend.cache_stats(CacheKind::fft_plans); }, "cache_stats");
  expect_error<RuntimeStateError>([&] { backend.clear_cache(CacheKind::fft_plans); }, "clear_cache");
  expect_error<RuntimeStateError>([&] { backend.set_cache_limits(CacheKind::linalg_workspaces, 1, 1); }, "set_cache_limits");
  s.close();
  EXPECT_NO_THROW((void)backend.cache_stats(CacheKind::fft_plans));
}

TEST(CacheManagement, FftAndLinalgCachesAreBounded) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.set_cache_limits(CacheKind::fft_plans, 2, std::size_t{1} << 20);
  backend.with_session([&](Session& s) {
    for (int n = 2; n <= 6; ++n) (void)fft(s, Tensor::ones({n}, DType::c128));
    for (int n = 2; n <= 6; ++n) (void)svdvals(s, Tensor::eye(n, DType::f64));
  });
  EXPECT_EQ(backend.cache_stats(CacheKind::fft_plans).entries, 2u);
  EXPECT_EQ(backend.cache_stats(CacheKind::fft_plans).misses, 5u);
  EXPECT_GE(backend.cache_stats(CacheKind::linalg_workspaces).entries, 1u);
  EXPECT_GE(backend.cache_stats(CacheKind::linalg_workspaces).misses, 5u);
}

}  // namespace
}  // namespace tenferro
