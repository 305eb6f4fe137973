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

// ---- einsum programs (Note [Einsum program cache])

/// [m, k] and [k, n] f64 operands whose product is known: a = 1, b = 2, so every
/// element of "ij,jk->ik" is 2k.
std::vector<Tensor> matmul_operands(std::int64_t m, std::int64_t k, std::int64_t n) {
  return {Tensor::full({m, k}, 1.0, DType::f64), Tensor::full({k, n}, 2.0, DType::f64)};
}

/// Runs "ij,jk->ik" for each m in `ms` (k = 3, n = 2) and checks the result.
void run_einsums(Session& s, std::initializer_list<std::int64_t> ms) {
  for (std::int64_t m : ms) {
    const auto ops = matmul_operands(m, 3, 2);
    const Tensor c = einsum(s, "ij,jk->ik", ops);
    ASSERT_EQ(c.shape(), Shape({m, 2}));
    EXPECT_EQ(c.item<double>({m - 1, 1}), 6.0);
  }
}

PlanCacheStats einsum_stats(const CpuBackend& b) { return b.cache_stats(CacheKind::einsum_programs); }

TEST(CacheManagement, EinsumProgramsCountHitsMissesEntriesAndBytes) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.with_session([&](Session& s) {
    run_einsums(s, {2, 3, 2, 2});
    const PlanCacheStats st = einsum_program_cache_stats(s);
    EXPECT_EQ(st.misses, 2u);
    EXPECT_EQ(st.hits, 2u);
    EXPECT_EQ(st.entries, 2u);
    // Calls with non-default options and the integer form are not cached.
    EinsumOptions greedy;
    greedy.plan.optimizer = EinsumOptimizer::greedy;
    (void)einsum(s, "ij,jk->ik", matmul_operands(2, 3, 2), greedy);
    const std::vector<std::vector<std::int64_t>> labels = {{0, 1}, {1, 2}};
    (void)einsum(s, matmul_operands(2, 3, 2), labels, std::nullopt);
    EXPECT_EQ(einsum_program_cache_stats(s).misses, 2u);
    EXPECT_EQ(einsum_program_cache_stats(s).hits, 2u);
  });
  PlanCacheStats st = einsum_stats(backend);
  EXPECT_EQ(st.entries, 2u);
  EXPECT_GT(st.bytes, 0u);
  EXPECT_EQ(st.evictions, 0u);
  EXPECT_EQ(st.entry_limit, 32u);
  EXPECT_EQ(cache_kind_name(CacheKind::einsum_programs), "einsum_programs");
}

TEST(CacheManagement, EinsumProgramsClearAndLimits) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.with_session([&](Session& s) { run_einsums(s, {2, 3}); });
  backend.clear_cache(CacheKind::einsum_programs);
  PlanCacheStats st = einsum_stats(backend);
  EXPECT_EQ(st.entries, 0u);
  EXPECT_EQ(st.bytes, 0u);
  backend.with_session([&](Session& s) { run_einsums(s, {2}); });  // planned again
  EXPECT_EQ(einsum_stats(backend).misses, 3u);

  backend.set_cache_limits(CacheKind::einsum_programs, 2, std::size_t{1} << 20);
  backend.with_session([&](Session& s) { run_einsums(s, {2, 3, 4, 4}); });
  st = einsum_stats(backend);
  EXPECT_EQ(st.entries, 2u);
  EXPECT_EQ(st.entry_limit, 2u);
  EXPECT_EQ(st.evictions, 1u);
  EXPECT_EQ(st.hits, 1u);

  // A byte limit below one program's footprint: nothing is kept, results stay right.
  backend.set_cache_limits(CacheKind::einsum_programs, 8, 16);
  backend.with_session([&](Session& s) { run_einsums(s, {2, 2, 3}); });
  st = einsum_stats(backend);
  EXPECT_EQ(st.entries, 0u);
  EXPECT_EQ(st.bytes, 0u);
  EXPECT_EQ(st.byte_limit, 16u);
}

TEST(CacheManagement, EinsumProgramsWithZeroEntriesStillGiveCorrectResults) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  backend.set_cache_limits(CacheKind::einsum_programs, 0, 0);
  backend.with_session([&](Session& s) {
    // Interleaved shapes and subscripts: each call plans into the scratch slot, which the
    // next call replaces.
    run_einsums(s, {2, 3, 2, 4});
    const Tensor x = Tensor::full({3, 4}, 2.0, DType::f64);
    EXPECT_EQ(einsum(s, "ij->", {x}).item<double>(), 24.0);
    EXPECT_EQ(einsum(s, "ij->ji", {x}).shape(), Shape({4, 3}));
    Tensor out = Tensor::zeros({2, 2}, DType::f64);
    einsum_into(s, "ij,jk->ik", matmul_operands(2, 3, 2), out);
    EXPECT_EQ(out.item<double>({1, 0}), 6.0);
    EXPECT_EQ(einsum_program_cache_stats(s).entries, 0u);
    EXPECT_EQ(einsum_program_cache_stats(s).hits, 0u);
  });
}

TEST(CacheManagement, EinsumProgramsAreSharedBySessionsHeldOneAfterAnother) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  {
    HeldSession s = backend.open_session();
    run_einsums(s, {2});
    s.close();
  }
  {
    HeldSession s = backend.open_session();
    run_einsums(s, {2});
    EXPECT_EQ(einsum_program_cache_stats(s).hits, 1u);
    // Held: the management calls refuse rather than wait.
    expect_error<RuntimeStateError>([&] { (void)backend.cache_stats(CacheKind::einsum_programs); }, "cache_stats");
    expect_error<RuntimeStateError>([&] { backend.clear_cache(CacheKind::einsum_programs); }, "clear_cache");
    expect_error<RuntimeStateError>([&] { backend.set_cache_limits(CacheKind::einsum_programs, 1, 1); }, "set_cache_limits");
    s.close();
  }
  backend.with_session([&](Session& s) { run_einsums(s, {2}); });
  const PlanCacheStats st = einsum_stats(backend);
  EXPECT_EQ(st.misses, 1u);
  EXPECT_EQ(st.hits, 2u);
  // Another backend has its own programs.
  CpuBackend other(CpuBackendOptions{.num_threads = 1});
  other.with_session([&](Session& s) { run_einsums(s, {2}); });
  EXPECT_EQ(einsum_stats(other).misses, 1u);
  EXPECT_EQ(einsum_stats(other).hits, 0u);
}

}  // namespace
}  // namespace tenferro
