#include "cpu/admission.hpp"

namespace tenferro::detail {

namespace {
TicketLock g_locks[kMaxCpus];

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

TicketLock& cpu_lock(int cpu) noexcept { return g_locks[cpu]; }

void TicketLock::lock() noexcept {
  // acq_rel (the same lock xadd on x86): what the waiter did before queueing, such as
  // reading its CpuBackend's state pointer, happens before anything that sees it queued
  // (queued()); a test destroys the CpuBackend once its waiter is seen queued.
  const std::uint32_t ticket = next.fetch_add(1, std::memory_order_acq_rel);
  std::uint32_t s = serving.load(std::memory_order_acquire);
  // Spin briefly (hand-offs between short sessions), then sleep on the futex.
  for (int i = 0; s != ticket && i < 256; ++i) {
    cpu_relax();
    s = serving.load(std::memory_order_acquire);
  }
  while (s != ticket) {
    serving.wait(s, std::memory_order_acquire);
    s = serving.load(std::memory_order_acquire);
  }
}

void TicketLock::unlock() noexcept {
  serving.fetch_add(1, std::memory_order_release);
  serving.notify_all();
}

void admit(std::span<const int> cpus) noexcept {
  for (int c : cpus) g_locks[c].lock();
}

bool try_admit(std::span<const int> cpus) noexcept {
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    if (!g_locks[cpus[i]].try_lock()) {
      while (i-- > 0) g_locks[cpus[i]].unlock();
      return false;
    }
  }
  return true;
}

void release(std::span<const int> cpus) noexcept {
  for (auto it = cpus.rbegin(); it != cpus.rend(); ++it) g_locks[*it].unlock();
}

}  // namespace tenferro::detail
