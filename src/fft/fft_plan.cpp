// FFTW plan creation, execution and the per-backend plan cache. See
// Note [FFTW planner lock] in fft_plan.hpp.
#include "fft/fft_plan.hpp"

#include "fft/fft_threads.hpp"
#include "cpu/provider_kernels.hpp"

#include <fftw3.h>

#include <cstring>
#include <mutex>
#include <string>

namespace tenferro::detail {

const char* fftw_version_string() noexcept { return fftw_version; }

namespace {

static_assert(sizeof(FftIodim) == sizeof(fftw_iodim64) && sizeof(FftIodim) == sizeof(fftwf_iodim64), "FftIodim mirrors fftw_iodim64");
static_assert(sizeof(fftw_iodim64::n) == sizeof(std::int64_t), "guru64 uses 64-bit lengths and strides");

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

// fftw_init_threads once per precision, on first use (under the planner lock). Also
// fftw_make_planner_thread_safe (FFTW >= 3.3.5): it installs FFTW's own planner lock,
// which protects us from other code in the process that plans with the same FFTW
// without knowing our mutex (and vice versa).
void init_threads_locked() {
  static bool done = false;
  if (!done) {
    fftw_init_threads();
    fftwf_init_threads();
    fftw_make_planner_thread_safe();
    fftwf_make_planner_thread_safe();
    install_fftw_parallel_loop();  // Note [FFTW threads]
    done = true;
  }
}

// Scratch arrays for FFTW_MEASURE, which overwrites the arrays it plans on: one block
// per array covering the element range [lo, hi] its strides reach, shifted so the
// pointer has the alignment FFTW saw for the caller's array.
struct Scratch {
  void* block = nullptr;
  ~Scratch() { fftw_free(block); }
  void* make(std::int64_t lo, std::int64_t hi, std::size_t elem, int align) {
    const std::size_t bytes = static_cast<std::size_t>(hi - lo + 1) * elem + 64;
    block = fftw_malloc(bytes);
    if (!block) return nullptr;
    std::memset(block, 0, bytes);
    // Element 0 sits -lo elements into the block; round that offset up to the wanted
    // residue mod 64 (a multiple of every SIMD alignment FFTW uses).
    const std::int64_t base = -lo * static_cast<std::int64_t>(elem);
    const std::int64_t pad = base + (((align - base) % 64) + 64) % 64;
    return static_cast<char*>(block) + pad;
  }
};

template <bool Single> FftPlanHandle plan_locked(const FftProblem& p, void* in, void* out) {
  const unsigned flags = (p.measure ? FFTW_MEASURE : FFTW_ESTIMATE) |
                         (p.kind == FftKind::c2r ? FFTW_DESTROY_INPUT : FFTW_PRESERVE_INPUT);
  if constexpr (Single) {
    fftwf_plan_with_nthreads(p.threads);
    const auto* d = reinterpret_cast<const fftwf_iodim64*>(p.dims.data());
    const auto* h = reinterpret_cast<const fftwf_iodim64*>(p.howmany.data());
    fftwf_plan plan = nullptr;
    switch (p.kind) {
      case FftKind::c2c_forward:
      case FftKind::c2c_backward:
        plan = fftwf_plan_guru64_dft(p.rank, d, p.howmany_rank, h, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
                                     p.kind == FftKind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        break;
      case FftKind::r2c:
        plan = fftwf_plan_guru64_dft_r2c(p.rank, d, p.howmany_rank, h, static_cast<float*>(in), static_cast<fftwf_complex*>(out), flags);
        break;
      case FftKind::c2r:
        plan = fftwf_plan_guru64_dft_c2r(p.rank, d, p.howmany_rank, h, static_cast<fftwf_complex*>(in), static_cast<float*>(out), flags);
        break;
    }
    return {plan, true};
  } else {
    fftw_plan_with_nthreads(p.threads);
    const auto* d = reinterpret_cast<const fftw_iodim64*>(p.dims.data());
    const auto* h = reinterpret_cast<const fftw_iodim64*>(p.howmany.data());
    fftw_plan plan = nullptr;
    switch (p.kind) {
      case FftKind::c2c_forward:
      case FftKind::c2c_backward:
        plan = fftw_plan_guru64_dft(p.rank, d, p.howmany_rank, h, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out),
                                    p.kind == FftKind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        break;
      case FftKind::r2c:
        plan = fftw_plan_guru64_dft_r2c(p.rank, d, p.howmany_rank, h, static_cast<double*>(in), static_cast<fftw_complex*>(out), flags);
        break;
      case FftKind::c2r:
        plan = fftw_plan_guru64_dft_c2r(p.rank, d, p.howmany_rank, h, static_cast<fftw_complex*>(in), static_cast<double*>(out), flags);
        break;
    }
    return {plan, false};
  }
}

}  // namespace

int fft_alignment_of(const void* p, bool single) noexcept {
  // FFTW's API takes non-const pointers; alignment_of only reads the address.
  return single ? fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))) : fftw_alignment_of(static_cast<double*>(const_cast<void*>(p)));
}

FftPlanHandle make_fft_plan(std::string_view op, const FftProblem& p, void* in, void* out, std::int64_t in_lo, std::int64_t in_hi,
                            std::int64_t out_lo, std::int64_t out_hi) {
  const std::size_t real = p.single ? sizeof(float) : sizeof(double);
  const std::size_t in_elem = p.kind == FftKind::r2c ? real : 2 * real;
  const std::size_t out_elem = p.kind == FftKind::c2r ? real : 2 * real;
  Scratch sin, sout;
  void* pin = in;
  void* pout = out;
  if (p.measure) {
    const bool in_place = in == out;
    pin = sin.make(in_lo, in_hi, in_elem, fft_alignment_of(in, p.single));
    pout = in_place ? pin : sout.make(out_lo, out_hi, out_elem, fft_alignment_of(out, p.single));
    if (!pin || !pout) throw BackendError(op, "fftw_malloc failed for planning scratch");
  }
  FftPlanHandle h;
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    init_threads_locked();
    h = p.single ? plan_locked<true>(p, pin, pout) : plan_locked<false>(p, pin, pout);
  }
  if (!h.plan)
    throw BackendError(op, "FFTW returned no plan (rank " + std::to_string(p.rank) + ", howmany rank " + std::to_string(p.howmany_rank) + ")");
  return h;
}

void destroy_fft_plan(FftPlanHandle h) noexcept {
  if (!h.plan) return;
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (h.single) fftwf_destroy_plan(static_cast<fftwf_plan>(h.plan));
  else fftw_destroy_plan(static_cast<fftw_plan>(h.plan));
}

void execute_fft_plan(const FftPlanHandle& h, FftKind kind, void* in, void* out) noexcept {
  if (h.single) {
    auto plan = static_cast<fftwf_plan>(h.plan);
    switch (kind) {
      case FftKind::c2c_forward:
      case FftKind::c2c_backward: fftwf_execute_dft(plan, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out)); break;
      case FftKind::r2c: fftwf_execute_dft_r2c(plan, static_cast<float*>(in), static_cast<fftwf_complex*>(out)); break;
      case FftKind::c2r: fftwf_execute_dft_c2r(plan, static_cast<fftwf_complex*>(in), static_cast<float*>(out)); break;
    }
  } else {
    auto plan = static_cast<fftw_plan>(h.plan);
    switch (kind) {
      case FftKind::c2c_forward:
      case FftKind::c2c_backward: fftw_execute_dft(plan, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out)); break;
      case FftKind::r2c: fftw_execute_dft_r2c(plan, static_cast<double*>(in), static_cast<fftw_complex*>(out)); break;
      case FftKind::c2r: fftw_execute_dft_c2r(plan, static_cast<fftw_complex*>(in), static_cast<double*>(out)); break;
    }
  }
}

int fft_cache_key(const FftProblem& p, int in_align, int out_align, bool in_place, std::int64_t* key, std::uint64_t& hash) noexcept {
  int n = 0;
  key[n++] = static_cast<std::int64_t>(p.kind) | std::int64_t{p.single} << 4 | std::int64_t{p.measure} << 5 | std::int64_t{in_place} << 6;
  key[n++] = p.threads;
  key[n++] = in_align;
  key[n++] = out_align;
  key[n++] = p.rank;
  key[n++] = p.howmany_rank;
  for (int i = 0; i < p.rank; ++i) {
    key[n++] = p.dims[i].n;
    key[n++] = p.dims[i].is;
    key[n++] = p.dims[i].os;
  }
  for (int i = 0; i < p.howmany_rank; ++i) {
    key[n++] = p.howmany[i].n;
    key[n++] = p.howmany[i].is;
    key[n++] = p.howmany[i].os;
  }
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<std::uint64_t>(key[i]);
    h *= 1099511628211ull;
  }
  hash = h;
  return n;
}

ErasedHandle owned_fft_plan(FftPlanHandle h) noexcept {
  constexpr auto destroy_single = [](void* p) noexcept { destroy_fft_plan({p, true}); };
  constexpr auto destroy_double = [](void* p) noexcept { destroy_fft_plan({p, false}); };
  return ErasedHandle(h.plan, h.single ? +destroy_single : +destroy_double);
}

}  // namespace tenferro::detail
