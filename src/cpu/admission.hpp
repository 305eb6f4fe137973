#pragma once
// FIFO admission per CPU (see Note [Session admission] in cpu_backend.hpp).
#include "core/internal_check.hpp"

#include <atomic>
#include <cstdint>
#include <span>

namespace tenferro::detail {

/// A FIFO ticket lock. Unlock may happen on any thread.
struct alignas(64) TicketLock {
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint32_t> serving{0};

  void lock() noexcept;
  bool try_lock() noexcept {
    std::uint32_t s = serving.load(std::memory_order_acquire);
    return next.compare_exchange_strong(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept;
  /// Threads holding or waiting (for tests and diagnostics).
  std::uint32_t queued() const noexcept {
    return next.load(std::memory_order_acquire) - serving.load(std::memory_order_acquire);
  }
};

/// Number of CPU ids admission covers (ids must be below it).
inline constexpr int kMaxCpus = 1024;

/// The lock of one CPU (process-wide table).
TicketLock& cpu_lock(int cpu) noexcept;

/// Admits to every CPU in `cpus` (ascending, distinct), waiting in FIFO order.
void admit(std::span<const int> cpus) noexcept;
/// Admits without waiting; false (holding nothing) when any CPU is busy.
bool try_admit(std::span<const int> cpus) noexcept;
/// Releases every CPU in `cpus`.
void release(std::span<const int> cpus) noexcept;

}  // namespace tenferro::detail
