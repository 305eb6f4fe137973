#pragma once
// Shared machinery of the CPU's linalg kernels: packing strided inputs into column-major
// LAPACK buffers, pooled workspace, the workspace-size cache and the batch driver (the
// operand validation is the op layer's: ops/linalg.hpp).
//
// Note [Linalg batch driver]
// A call with B batches runs f(b, workspace) for b in [0, B). The fork decision is the
// session's cost model (Note [Fork cost model]) with a per-problem cost estimate (flops
// of the factorization). Every slot of workspace (one per thread) is carved from one
// pooled block allocated on the calling thread before the fork, because pool workers
// have no allocator hook. OpenBLAS gets the session's budget when batches run inline and
// 1 thread inside a parallel batch loop (Note [BLAS threads]). A failing problem stops
// its chunk; chunks are contiguous, so the smallest failing index over all chunks is the
// first failing batch overall, and that is the one reported.
#include "core/internal_check.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "cpu/blas.hpp"
#include "cpu/context.hpp"
#include "cpu/op_common.hpp"
#include "cpu/parallel.hpp"
#include "linalg/lapack.hpp"
#include "ops/linalg.hpp"
#include "tenferro/linalg.hpp"

namespace tenferro::detail::linalg {

/// A new compact result (session pool).
inline Tensor new_result(std::span<const std::int64_t> shape, DType d) { return Tensor::empty(shape, d); }

/// Element offset of batch `b` (flat column-major index over axes 2...) in view `a`.
std::int64_t batch_offset(const Tensor& a, std::int64_t b) noexcept;

/// Copies matrix `b` of view `a` into dst (column-major, leading dimension ld).
template <class T> void pack_matrix(const Tensor& a, std::int64_t b, T* dst, std::int64_t ld) noexcept {
  const std::int64_t m = a.extent(0), n = a.extent(1), rs = a.stride(0), cs = a.stride(1);
  const T* src = static_cast<const T*>(a.data()) + batch_offset(a, b);
  if (rs == 1 && (cs == m || n == 1) && ld == m) {
    if (m > 0 && n > 0) std::memcpy(dst, src, static_cast<std::size_t>(m * n) * sizeof(T));
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const T* c = src + j * cs;
    T* d = dst + j * ld;
    if (rs == 1) std::memcpy(d, c, static_cast<std::size_t>(m) * sizeof(T));
    else
      for (std::int64_t i = 0; i < m; ++i) d[i] = c[i * rs];
  }
}

/// Sets a column-major m×n matrix to the identity (ones on the diagonal, zeros elsewhere).
template <class T> void set_identity(T* a, std::int64_t m, std::int64_t n, std::int64_t ld) noexcept {
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a[i + j * ld] = i == j ? T(1) : T(0);
}

/// Bump allocator over one workspace slot; every piece 64-byte aligned.
class Carve {
 public:
  explicit Carve(std::byte* p) noexcept : p_(p) {}
  template <class U> U* take(std::int64_t count) noexcept {
    U* r = reinterpret_cast<U*>(p_);
    p_ += round(static_cast<std::size_t>(count < 1 ? 1 : count) * sizeof(U));
    return r;
  }
  /// Bytes `take<U>(count)` consumes.
  template <class U> static std::size_t bytes(std::int64_t count) noexcept {
    return round(static_cast<std::size_t>(count < 1 ? 1 : count) * sizeof(U));
  }
  static std::size_t round(std::size_t n) noexcept { return (n + 63) & ~std::size_t{63}; }

 private:
  std::byte* p_;
};

/// Routine ids for the workspace cache key.
enum class Routine : std::uint32_t { gesdd = 1, geqrf, orgqr, syevd, geev, getri, gels, gelsd, geqp3 };

/// Throws BackendError("<op>: <routine> workspace query failed (info i)").
[[noreturn]] void throw_query_failed(std::string_view op, Routine r, std::int64_t info);

/// Workspace sizes for `key`, from the session's cache or by running `query` once: it
/// makes a LAPACK lwork = -1 call, stores that call's info in its argument and returns
/// the sizes. A query whose info is not 0 caches nothing and throws BackendError (its
/// sizes would be garbage: cached, they failed every later call of that shape).
template <class Q> LinalgWorkspace cached_workspace(Session& s, std::string_view op, Routine r, DType d, std::uint32_t job,
                                                    std::int64_t m, std::int64_t n, std::int64_t k, Q&& query) {
  LinalgPlanCache& cache = cpu_context(s).resources->linalg_plans;
  const LinalgKey key{static_cast<std::uint32_t>(r), (static_cast<std::uint32_t>(d) << 24) | job, m, n, k};
  std::int64_t words[4];
  std::uint64_t hash = 0;
  const int len = key.words(words, hash);
  if (const LinalgWorkspace* w = cache.find(words, len, hash)) return *w;
  lapack::lint info = 0;
  LinalgWorkspace w = query(info);
  if (info != 0) throw_query_failed(op, r, info);
  cache.insert(words, len, hash, LinalgWorkspace(w));
  return w;
}

/// Workspace size LAPACK reported in work[0] (real part for complex types).
template <class T> std::int64_t lwork_of(const T& w) noexcept {
  if constexpr (is_complex_v<T>) return static_cast<std::int64_t>(w.real());
  else return static_cast<std::int64_t>(w);
}

/// The first failing problem of a batch (batch = -1: none).
struct BatchFailure {
  std::int64_t batch = -1;
  std::int64_t info = 0;
  explicit operator bool() const noexcept { return batch >= 0; }
};

/// Workspace up to this size is taken from the stack instead of the pool.
inline constexpr std::size_t kStackWorkspace = 8192;

/// Runs f(b, slot) -> info for every batch b (Note [Linalg batch driver]). `cost` is
/// the work of one problem in element-ops; `slot_bytes` the workspace one problem needs.
template <class F> BatchFailure run_batches(Session& s, std::int64_t batches, std::int64_t cost, std::size_t slot_bytes, F&& f) {
  BatchFailure fail;
  if (batches <= 0) return fail;
  const int budget = s.num_threads();
  const int threads = budget > 1 ? fork_threads(s, batches, cost) : 1;
  blas::set_threads(threads > 1 ? 1 : provider_threads(s));
  slot_bytes = Carve::round(slot_bytes);
  // Small workspace lives on the stack (a pool round trip costs about as much as a
  // 2×2 factorization); larger workspace comes from the session's pool.
  alignas(64) std::byte local[kStackWorkspace];
  Tensor ws;
  std::byte* base = local;
  if (slot_bytes * static_cast<std::size_t>(threads) > kStackWorkspace) {
    const auto words = static_cast<std::int64_t>((slot_bytes * static_cast<std::size_t>(threads) + 64) / 16);
    ws = Tensor::empty({words}, DType::c128);  // pooled; 64-byte aligned
    base = static_cast<std::byte*>(const_cast<void*>(ws.data()));
  }
  if (threads <= 1) {
    for (std::int64_t b = 0; b < batches; ++b)
      if (const std::int64_t info = f(b, base)) return {b, info};
    return fail;
  }
  const std::int64_t chunk = (batches + threads - 1) / threads;
  std::atomic<std::int64_t> first{batches};
  std::int64_t infos[256] = {};
  parallel_chunks(s, batches, threads, [&](std::int64_t b0, std::int64_t b1) {
    const std::int64_t slot = b0 / chunk;
    std::byte* w = base + static_cast<std::size_t>(slot) * slot_bytes;
    for (std::int64_t b = b0; b < b1; ++b)
      if (const std::int64_t info = f(b, w)) {
        infos[slot % 256] = info;
        std::int64_t cur = first.load();
        while (b < cur && !first.compare_exchange_weak(cur, b)) {
        }
        return;
      }
  });
  const std::int64_t b = first.load();
  if (b < batches) return {b, infos[(b / chunk) % 256]};
  return fail;
}

// Note [LAPACK info codes]
// info > 0 is a property of the matrix (a zero pivot, no convergence, not positive
// definite): a NumericalError, except where the op defines the result (getrf's zero
// pivot is det 0, and a valid LU). info < 0 says LAPACK found an argument illegal: a
// bug here or a failing provider, never the user's matrix, so it is a BackendError
// naming the argument, for every routine including those whose info > 0 is no error.
// A failed workspace query (lwork = -1) is a BackendError too, and caches nothing
// (cached_workspace). tests/reliability/fault_injection_test makes every LAPACK call
// return 1 and -1010 in turn to keep this so.

/// Throws NumericalError("<op>: <routine> <what> (info i) in batch b", info, batch); for a
/// negative info (LAPACK found an argument illegal: a bug here, or a failing provider),
/// BackendError naming the argument instead.
[[noreturn]] void throw_numerical(std::string_view op, std::string_view routine, std::string_view what, const BatchFailure& f);

/// Info code a per-problem callback returns for non-finite input found after packing
/// (never a LAPACK code: LAPACK's are small integers).
inline constexpr std::int64_t kNotFinite = INT64_MIN;

}  // namespace tenferro::detail::linalg
