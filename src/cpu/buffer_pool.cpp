#include "cpu/buffer_pool.hpp"

#include <algorithm>
#include <bit>

namespace tenferro::detail {

namespace {
// The link to the next cached block reuses the (then unused) data area's first bytes.
StorageHeader*& next_of(StorageHeader* b) noexcept { return *reinterpret_cast<StorageHeader**>(b->data()); }
}  // namespace

// Capacities come from size_class_bytes: 64, then 5/4, 6/4, 7/4, 8/4 × 2^hi.
int BufferPool::class_index(std::size_t capacity) noexcept {
  if (capacity <= 64) return 0;
  const int hi = 63 - std::countl_zero(capacity - 1);
  const int q = static_cast<int>(capacity >> (hi - 2));  // 5..8
  return 1 + 4 * (hi - 6) + (q - 5);
}

// Note [Pool limit follows the peak]: 1.5 × the peak, at least the floor, within the limit.
std::size_t BufferPool::limit() const noexcept {
  return std::min(stats_.byte_limit, std::max(kPoolFloorBytes, stats_.peak_bytes + stats_.peak_bytes / 2));
}

StorageHeader* BufferPool::allocate(std::size_t bytes) {
  const std::size_t cap = size_class_bytes(bytes);
  const int c = class_index(cap);
  in_use_ += cap;
  stats_.peak_bytes = std::max(stats_.peak_bytes, in_use_);
  if (c < kClasses && free_[c]) {
    StorageHeader* b = free_[c];
    free_[c] = next_of(b);
    stats_.cached_bytes -= cap;
    --stats_.cached_blocks;
    ++stats_.hits;
    b->refs.store(1, std::memory_order_relaxed);
    b->bytes = bytes;
    return b;
  }
  ++stats_.misses;
  return heap_allocate_block(bytes);
}

void BufferPool::release(StorageHeader* b) noexcept {
  const std::size_t cap = b->capacity;
  const int c = class_index(cap);
  in_use_ -= std::min(in_use_, cap);
  // Blocks of at least 8 bytes hold the link; 64 is the smallest capacity.
  if (c >= kClasses || cap > limit()) {
    ++stats_.evictions;
    heap_free_block(b);
    return;
  }
  if (stats_.cached_bytes + cap > limit()) make_room(cap);
  next_of(b) = free_[c];
  free_[c] = b;
  if (c > highest_) highest_ = c;
  stats_.cached_bytes += cap;
  ++stats_.cached_blocks;
}

void BufferPool::make_room(std::size_t needed) noexcept {
  const std::size_t most = limit();
  for (int c = highest_; c >= 0 && stats_.cached_bytes + needed > most; --c) {
    while (free_[c] && stats_.cached_bytes + needed > most) {
      StorageHeader* b = free_[c];
      free_[c] = next_of(b);
      stats_.cached_bytes -= b->capacity;
      --stats_.cached_blocks;
      ++stats_.evictions;
      heap_free_block(b);
    }
    if (!free_[c] && c == highest_) --highest_;
  }
}

void BufferPool::trim() noexcept {
  for (int c = 0; c <= highest_; ++c) {
    while (StorageHeader* b = free_[c]) {
      free_[c] = next_of(b);
      heap_free_block(b);
    }
  }
  highest_ = -1;
  stats_.cached_bytes = 0;
  stats_.cached_blocks = 0;
  stats_.peak_bytes = in_use_;
}

void BufferPool::set_byte_limit(std::size_t bytes) noexcept {
  stats_.byte_limit = bytes;
  if (stats_.cached_bytes > limit()) make_room(0);
}

}  // namespace tenferro::detail
