// Fault injection (issue 14; docs/reliability.md "Fault injection"): every call the
// library makes to an outside resource that can fail (a heap block, operator new, an
// FFTW planner, a LAPACK driver) is made to fail in turn, call by call, and each
// failure must surface as a documented error with the outputs untouched and the
// session usable afterwards. Leaks and use-after-free on those paths are ASan's part
// (this test runs in the asan preset like every other).
//
// How: the test executable links the library statically, so it can define the
// functions itself; its definitions win at link time over the shared libraries', and
// they reach the real ones through dlsym(RTLD_NEXT). No hook sits in the library.
// A definition injects only when armed, and only for calls made from the executable's
// own code (the library's objects and this file) unless a workload asks for every
// caller: failures inside oneTBB or OpenBLAS are the worker-pool workload's business.
#include <dlfcn.h>
#include <fftw3.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "support/backends.hpp"
#include "support/test_util.hpp"
#include "tenferro/tenferro.hpp"

extern "C" char __executable_start[];
extern "C" char etext[];

namespace fi {
enum Site : int { kHeapBlock, kNew, kFftwPlan, kLapack, kNumSites };
constexpr const char* kSiteNames[kNumSites] = {"aligned_alloc", "operator new", "FFTW planner", "LAPACKE driver"};

std::atomic<bool> armed{false};
std::atomic<bool> any_caller{false};
std::atomic<long> calls[kNumSites];
std::atomic<long> fail_at[kNumSites];  // 1-based call number that fails; 0: none
lapack_int lapack_info = 1;            // what an injected LAPACK failure returns

bool ours(const void* ra) noexcept {
  const char* p = static_cast<const char*>(ra);
  return p >= __executable_start && p < etext;
}
// Counts the call and says whether it must fail.
bool hit(Site s, const void* ra) noexcept {
  if (!armed.load(std::memory_order_relaxed)) return false;
  if (!any_caller.load(std::memory_order_relaxed) && !ours(ra)) return false;
  const long c = calls[s].fetch_add(1, std::memory_order_relaxed) + 1;
  return c == fail_at[s].load(std::memory_order_relaxed);
}
void arm(Site s, long k, bool every_caller) {
  for (auto& c : calls) c = 0;
  for (auto& f : fail_at) f = 0;
  fail_at[s] = k;
  any_caller = every_caller;
  armed = true;
}
void disarm() { armed = false; }

template <class Fn> Fn real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) std::abort();
  return reinterpret_cast<Fn>(p);
}
}  // namespace fi

// ---------------------------------------------------------------- the interposed calls

extern "C" void* aligned_alloc(std::size_t align, std::size_t n) {
  using Fn = void* (*)(std::size_t, std::size_t);
  static const Fn next = fi::real<Fn>("aligned_alloc");
  if (fi::hit(fi::kHeapBlock, __builtin_return_address(0))) return nullptr;
  return next(align, n);
}

namespace {
void* new_block(std::size_t n, std::size_t align, const void* ra) {
  if (fi::hit(fi::kNew, ra)) return nullptr;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  void* p = nullptr;
  return posix_memalign(&p, align, n) == 0 ? p : nullptr;
}
// Never inlined: inlined into a delete that GCC inlines at a call site, the free() would
// be paired with that site's operator new (-Wmismatched-new-delete).
[[gnu::noinline]] void release(void* p) noexcept { std::free(p); }
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = new_block(n, 0, __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = new_block(n, 0, __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = new_block(n, static_cast<std::size_t>(a), __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  if (void* p = new_block(n, static_cast<std::size_t>(a), __builtin_return_address(0))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return new_block(n, 0, __builtin_return_address(0)); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return new_block(n, 0, __builtin_return_address(0)); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

// One definition per interposed function: same signature as the header's, failing with
// `fail` when the call is the injected one.
#define TF_INTERPOSE(site, fail, ret, name, params, args)                           \
  extern "C" ret name params {                                                      \
    using Fn = ret(*) params;                                                       \
    static const Fn next = fi::real<Fn>(#name);                                     \
    if (fi::hit(fi::site, __builtin_return_address(0))) return fail;                \
    return next args;                                                               \
  }

TF_INTERPOSE(kFftwPlan, nullptr, fftw_plan, fftw_plan_guru64_dft,
             (int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, fftw_complex* i, fftw_complex* o, int sign, unsigned f),
             (r, d, hr, hd, i, o, sign, f))
TF_INTERPOSE(kFftwPlan, nullptr, fftw_plan, fftw_plan_guru64_dft_r2c,
             (int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, double* i, fftw_complex* o, unsigned f), (r, d, hr, hd, i, o, f))
TF_INTERPOSE(kFftwPlan, nullptr, fftw_plan, fftw_plan_guru64_dft_c2r,
             (int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, fftw_complex* i, double* o, unsigned f), (r, d, hr, hd, i, o, f))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dgesdd_work,
             (int l, char j, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s, double* u, lapack_int ldu, double* vt,
              lapack_int ldvt, double* w, lapack_int lw, lapack_int* iw),
             (l, j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_zgesdd_work,
             (int l, char j, lapack_int m, lapack_int n, lapack_complex_double* a, lapack_int lda, double* s, lapack_complex_double* u,
              lapack_int ldu, lapack_complex_double* vt, lapack_int ldvt, lapack_complex_double* w, lapack_int lw, double* rw,
              lapack_int* iw),
             (l, j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, rw, iw))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dgeqrf_work,
             (int l, lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau, double* w, lapack_int lw),
             (l, m, n, a, lda, tau, w, lw))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dorgqr_work,
             (int l, lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda, const double* tau, double* w, lapack_int lw),
             (l, m, n, k, a, lda, tau, w, lw))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dsyevd_work,
             (int l, char j, char u, lapack_int n, double* a, lapack_int lda, double* w, double* wk, lapack_int lw, lapack_int* iw,
              lapack_int liw),
             (l, j, u, n, a, lda, w, wk, lw, iw, liw))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dgetrf_work,
             (int l, lapack_int m, lapack_int n, double* a, lapack_int lda, lapack_int* ipiv), (l, m, n, a, lda, ipiv))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dpotrf_work, (int l, char u, lapack_int n, double* a, lapack_int lda),
             (l, u, n, a, lda))
TF_INTERPOSE(kLapack, fi::lapack_info, lapack_int, LAPACKE_dgeev_work,
             (int l, char jl, char jr, lapack_int n, double* a, lapack_int lda, double* wr, double* wi, double* vl, lapack_int ldvl,
              double* vr, lapack_int ldvr, double* w, lapack_int lw),
             (l, jl, jr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, w, lw))
#undef TF_INTERPOSE

// ---------------------------------------------------------------- workloads

namespace {
using namespace tenferro;
using tenferro::testing::random_tensor;

constexpr double kSentinel = 12345.0;

CpuBackendOptions threads(int n) {
  CpuBackendOptions o;
  o.num_threads = n;
  return o;
}

/// A computation whose results land in caller-given (sentinel-filled) outputs.
struct Workload {
  std::string name;
  std::function<std::vector<Tensor>()> outputs;               // fresh, sentinel-filled
  std::function<void(Session&, const std::vector<Tensor>&)> run;
  int threads = 1;
  bool every_caller = false;  // inject into allocations of oneTBB and OpenBLAS too
};

Tensor sentinel(std::initializer_list<std::int64_t> shape, DType d = DType::f64) { return Tensor::full(shape, kSentinel, d); }

bool still_sentinel(const Tensor& t) {
  Tensor want = Tensor::full(t.shape().span(), kSentinel, t.dtype());
  return std::memcmp(t.data(), want.data(), static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype())) == 0;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.numel()) * dtype_size(a.dtype())) == 0;
}

std::vector<Workload> workloads() {
  std::mt19937_64 rng(7);
  const Tensor a = random_tensor(rng, {6, 5}, DType::f64), b = random_tensor(rng, {5, 7}, DType::f64);
  const Tensor c = random_tensor(rng, {7, 4}, DType::f64), z = random_tensor(rng, {6, 4}, DType::c128);
  Tensor spd = random_tensor(rng, {5, 5}, DType::f64);
  {
    CpuBackend be(threads(1));
    HeldSession s = be.open_session();
    spd = add(s, matmul(s, spd, spd.permute_view({1, 0})), mul(s, Tensor::eye(5, DType::f64), Tensor::full({}, 5.0, DType::f64)));
  }
  const Tensor sq = random_tensor(rng, {5, 5}, DType::f64), sig = random_tensor(rng, {64}, DType::c128);
  const Tensor re = random_tensor(rng, {64, 3}, DType::f64);
  std::vector<Workload> w;
  w.push_back({"einsum ij,jk,kl->il", [] { return std::vector{sentinel({6, 4})}; },
               [=](Session& s, const std::vector<Tensor>& o) { einsum_into(s, "ij,jk,kl->il", std::vector{a, b, c}, o[0]); }});
  w.push_back({"sum then copy", [] { return std::vector{sentinel({5})}; },
               [=](Session& s, const std::vector<Tensor>& o) { copy_into(s, sum(s, a, {0}), o[0]); }});
  w.push_back({"svd f64", [] { return std::vector{sentinel({6, 5}), sentinel({5}), sentinel({5, 5})}; },
               [=](Session& s, const std::vector<Tensor>& o) { svd_into(s, a, o[0], o[1], o[2]); }});
  w.push_back({"svd c128", [] { return std::vector{sentinel({6, 4}, DType::c128), sentinel({4}), sentinel({4, 4}, DType::c128)}; },
               [=](Session& s, const std::vector<Tensor>& o) { svd_into(s, z, o[0], o[1], o[2]); }});
  w.push_back({"qr", [] { return std::vector{sentinel({6, 5}), sentinel({5, 5})}; },
               [=](Session& s, const std::vector<Tensor>& o) { qr_into(s, a, o[0], o[1]); }});
  w.push_back({"eigh", [] { return std::vector{sentinel({5}), sentinel({5, 5})}; },
               [=](Session& s, const std::vector<Tensor>& o) { eigh_into(s, spd, o[0], o[1]); }});
  w.push_back({"eig", [] { return std::vector{sentinel({5}, DType::c128), sentinel({5, 5}, DType::c128)}; },
               [=](Session& s, const std::vector<Tensor>& o) { eig_into(s, sq, o[0], o[1]); }});
  w.push_back({"solve", [] { return std::vector{sentinel({5, 7})}; },
               [=](Session& s, const std::vector<Tensor>& o) { solve_into(s, sq, b, o[0]); }});
  w.push_back({"det", [] { return std::vector{sentinel({})}; },
               [=](Session& s, const std::vector<Tensor>& o) { det_into(s, sq, o[0]); }});
  w.push_back({"cholesky", [] { return std::vector{sentinel({5, 5})}; },
               [=](Session& s, const std::vector<Tensor>& o) { cholesky_into(s, spd, o[0]); }});
  w.push_back({"fft c128", [] { return std::vector{sentinel({64}, DType::c128)}; },
               [=](Session& s, const std::vector<Tensor>& o) { fft_into(s, sig, o[0]); }});
  w.push_back({"rfft f64", [] { return std::vector{sentinel({33, 3}, DType::c128)}; },
               [=](Session& s, const std::vector<Tensor>& o) { rfft_into(s, re, o[0]); }});
  w.push_back({"eager backward of svdvals", [] { return std::vector{sentinel({6, 5})}; },
               [=](Session& s, const std::vector<Tensor>& o) {
                 ad::Context ctx(s);
                 const ad::EagerTensor x = ctx.leaf(a);
                 const ad::EagerTensor loss = ad::sum(ctx, ad::svdvals(ctx, x));
                 try {
                   ctx.backward(loss);
                 } catch (...) {
                   EXPECT_FALSE(x.grad().defined()) << "a failed backward wrote a gradient";
                   throw;
                 }
                 copy_into(s, x.grad(), o[0]);
               }});
  w.push_back({"worker pool start and a parallel op", [] { return std::vector{sentinel({256, 256})}; },
               [](Session& s, const std::vector<Tensor>& o) {
                 const Tensor x = Tensor::full({256, 256}, 1.5, DType::f64);
                 add_into(s, x, x, o[0]);
               },
               2, true});
  return w;
}

/// Runs w on a fresh backend (its caches empty, so every planner call happens again),
/// with call k of `site` failing (k = 0: none). Returns what was thrown ("" for none).
/// The backend is made while armed: its worker pool and the resources an entry checks
/// out are part of what may fail.
std::string trial(const Workload& w, fi::Site site, long k, const std::vector<Tensor>& want, long* calls) {
  std::optional<CpuBackend> be;
  std::string thrown;
  std::vector<Tensor> outs = w.outputs();
  fi::arm(site, k, w.every_caller);
  try {
    be.emplace(threads(w.threads));
    HeldSession s = be->open_session();
    w.run(s, outs);
  } catch (const SessionEntryError& e) {
    thrown = e.kind() == SessionEntryKind::Executor ? "SessionEntryError(Executor)" : std::string("wrong kind: ") + e.what();
  } catch (const BackendError&) {
    thrown = "BackendError";
  } catch (const NumericalError&) {
    thrown = "NumericalError";
  } catch (const Error& e) {
    thrown = std::string("other tenferro error: ") + e.what();
  } catch (const std::bad_alloc&) {
    thrown = "std::bad_alloc";
  }
  fi::disarm();
  *calls = fi::calls[site].load();
  if (thrown.empty()) {
    // A LAPACK info > 0 may be a result rather than an error (getrf's zero pivot is
    // det 0): then the output changes, legitimately. Any other absorbed failure must
    // give the right result.
    bool same = true;
    for (std::size_t i = 0; i < outs.size(); ++i) same = same && same_bytes(outs[i], want[i]);
    if (!same && site == fi::kLapack && fi::lapack_info > 0) return "absorbed (a result of LAPACK's info > 0)";
    EXPECT_TRUE(same) << w.name << ": " << fi::kSiteNames[site] << " call " << k << " failed, nothing was thrown, and the output differs";
    return thrown;
  }
  for (std::size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(still_sentinel(outs[i])) << w.name << ": output " << i << " written before '" << thrown << "' at " << fi::kSiteNames[site]
                                         << " call " << k;
  // The backend (a new one if its construction failed) and a new session on it work,
  // and give the right result.
  if (!be) be.emplace(threads(w.threads));
  HeldSession s = be->open_session();
  std::vector<Tensor> again = w.outputs();
  w.run(s, again);
  for (std::size_t i = 0; i < again.size(); ++i)
    EXPECT_TRUE(same_bytes(again[i], want[i])) << w.name << ": rerun after '" << thrown << "', output " << i << " differs";
  return thrown;
}

TEST(FaultInjection, EveryFailingCallGivesADocumentedErrorAndWritesNothing) {
  long points = 0;
  std::map<std::string, long> by_error;
  for (const Workload& w : workloads()) {
    // The reference run: nothing fails; it also counts each site's calls.
    long counts[fi::kNumSites] = {};
    std::vector<Tensor> want;
    for (int site = 0; site < fi::kNumSites; ++site) {
      std::vector<Tensor> outs = w.outputs();
      fi::arm(static_cast<fi::Site>(site), 0, w.every_caller);
      {
        CpuBackend be(threads(w.threads));
        HeldSession s = be.open_session();
        w.run(s, outs);
      }
      fi::disarm();
      counts[site] = fi::calls[site].load();
      if (want.empty()) want = outs;
    }
    for (int site = 0; site < fi::kNumSites; ++site) {
      const auto sv = static_cast<fi::Site>(site);
      const std::vector<lapack_int> infos = sv == fi::kLapack ? std::vector<lapack_int>{1, -1010} : std::vector<lapack_int>{1};
      for (const lapack_int info : infos) {
        fi::lapack_info = info;
        for (long k = 1; k <= counts[site]; ++k) {
          long calls = 0;
          const std::string thrown = trial(w, sv, k, want, &calls);
          EXPECT_FALSE(thrown.rfind("other", 0) == 0 || thrown.rfind("wrong", 0) == 0)
              << w.name << ": " << fi::kSiteNames[site] << " call " << k << ": " << thrown;
          ++points;
          ++by_error[thrown.empty() ? "absorbed (the right result)" : thrown];
        }
      }
      if (counts[site] > 0)
        std::printf("[ fault ] %-36s %-15s %4ld calls, each failed in turn\n", w.name.c_str(), fi::kSiteNames[site], counts[site]);
    }
  }
  std::printf("[ fault ] %ld injected failures:", points);
  for (const auto& [e, n] : by_error) std::printf(" %s %ld;", e.c_str(), n);
  std::printf("\n");
  EXPECT_GT(points, 100);
}

}  // namespace
