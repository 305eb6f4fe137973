#pragma once
// The per-thread allocator hook (Note [Storage and the session pool]) for the library's
// own code: a backend swaps it on every session entry and exit, so the swap is inline
// (the public set_thread_allocator is the same operation out of line).
#include "core/internal_check.hpp"

#include "tenferro/storage.hpp"

namespace tenferro::detail {

/// This thread's allocator (null: the heap). Constant-initialized, so an access needs no
/// init guard; see Note [Thread-local storage model] in CMakeLists.txt for its cost.
extern constinit thread_local BlockAllocator* tls_block_allocator;

/// Installs `a` (or nullptr) and returns the previous allocator.
inline BlockAllocator* swap_thread_allocator(BlockAllocator* a) noexcept {
  BlockAllocator* prev = tls_block_allocator;
  tls_block_allocator = a;
  return prev;
}

}  // namespace tenferro::detail
