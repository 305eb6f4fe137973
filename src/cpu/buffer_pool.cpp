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

// Note [Pool limit follows the peak]: twice the peak, at least the floor, within the limit.
std::size_t BufferPool::limit() const noexcept {
  return std::min(stats_.byte_limit, std::max(kPoolFloorBytes, 2 * stats_.peak_bytes));
}

// Note [Larger cached blocks serve smaller requests]
// A request whose size class has no cached block takes one of the next kReuseClasses
// classes (a block at most twice its size) before it goes to the heap. Without that, two
// contractions run in turn whose large blocks differ in size by a class or more (a
// sweep's alternating steps) each found the other's blocks in the cache, and the cache
// held both only while they fit under the limit: with one block live at a time the
// peak is the larger, and under the limit of 1.5 times that (as it was then) results of
// 183 and 153 MiB (192 and 160 MiB classes) alternating missed on every call, each
// faulting its block in again (bench_session pool/alternating_results: see
// docs/benchmarks.md). The block counts in use at its own capacity, so the peak and the
// limit see the waste.
StorageHeader* BufferPool::allocate(std::size_t bytes) {
  const std::size_t cap = size_class_bytes(bytes);
  const int c = class_index(cap);
  StorageHeader* b = nullptr;
  int k = c;
  if (c < kClasses)  // the request's own class first, then up to kReuseClasses above it
    for (const int last = std::min(c + kReuseClasses, highest_); !(b = free_[k]) && k < last;) ++k;
  if (b) {
    free_[k] = next_of(b);
    in_use_ += b->capacity;
    stats_.peak_bytes = std::max(stats_.peak_bytes, in_use_);
    stats_.cached_bytes -= b->capacity;
    --stats_.cached_blocks;
    ++stats_.hits;
    b->refs.store(1, std::memory_order_relaxed);
    b->bytes = bytes;
    return b;
  }
  in_use_ += cap;
  stats_.peak_bytes = std::max(stats_.peak_bytes, in_use_);
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
