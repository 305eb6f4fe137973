#pragma once
// The CPU buffer pool: cached storage blocks in size classes, with a byte limit.
#include "core/internal_check.hpp"

#include <array>

#include "tenferro/cpu_backend.hpp"
#include "tenferro/storage.hpp"

namespace tenferro::detail {

/// Owned by one backend; used only by the session that has checked it out, so it needs
/// no lock. Free lists are intrusive (linked through the block headers): caching and
/// reusing a block allocates nothing.
///
/// Note [Pool limit follows the peak]
/// The pool caches at most min(byte_limit, max(kPoolFloorBytes, 2 × peak)) bytes,
/// where peak is the most bytes its blocks held in use at once (since the last trim).
/// A block too large to cache goes back to the heap, and the next block of its size is
/// faulted in and zeroed by the kernel, with direct compaction for its huge pages (Note
/// [Huge pages for large blocks]) when memory is fragmented: on the suite's MERA
/// networks and gm_queen5_5_3 (intermediates of 240-330 MB and 2.2 GB live at once;
/// 100 MiB the fixed limit until 2026-12-07) up to half of an execution was the kernel
/// clearing pages, and one execution took anywhere from 1.3 to 8.9 s. Following the
/// peak caches what a repeated contraction (a sweep) needs again. The room above the
/// peak is there because the blocks one execution uses one after the other add up to
/// more than its peak: at 1 × peak gm_queen5_5_3's automatic plan evicted and faulted
/// in one large block on every execution (median 2.6-8.9 s, against 1.0-1.4 s at 1.5),
/// and at 1.5 × its suite path still did (its blocks add up to 1.54 × its 1.88 GB peak:
/// one 1 GB block evicted and faulted in again per execution, 2.7-4.1 s against 2.6-3.4
/// s at 2 × peak with no miss; 2026-12-07). The pool thus never holds more than twice
/// what the program already had live at once (or the floor): a process's memory stays
/// within three times its peak of live tensors.
/// The default byte_limit (default_pool_byte_limit(): a quarter of physical memory)
/// only bounds that; an explicit limit is honoured as before (below the floor it is the
/// limit), and 0 turns caching off. In-use bytes are counted from this pool's
/// allocations and the releases it receives; a block allocated here and freed outside
/// any session is never subtracted (the count then errs high, bounded by the limit), a
/// block released here that another pool allocated never makes it negative.
class BufferPool final : public BlockAllocator {
 public:
  explicit BufferPool(std::size_t byte_limit) noexcept { stats_.byte_limit = byte_limit; }
  ~BufferPool() { trim(); }
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  StorageHeader* allocate(std::size_t bytes) override;
  void release(StorageHeader* block) noexcept override;

  const BufferPoolStats& stats() const noexcept { return stats_; }
  /// Frees every cached block.
  void trim() noexcept;
  /// New limit; evicts above it.
  void set_byte_limit(std::size_t bytes) noexcept;
  /// Bytes it may cache now (Note [Pool limit follows the peak]).
  std::size_t limit() const noexcept;

  /// The floor of the peak-following limit.
  static constexpr std::size_t kPoolFloorBytes = std::size_t{100} << 20;

 private:
  static constexpr int kClasses = 240;
  /// A miss in one class may take a block of up to this many classes higher (twice the
  /// size: Note [Larger cached blocks serve smaller requests] in buffer_pool.cpp).
  static constexpr int kReuseClasses = 4;
  static int class_index(std::size_t capacity) noexcept;
  /// Evicts cached blocks, largest classes first, until `needed` more bytes fit.
  void make_room(std::size_t needed) noexcept;

  std::array<StorageHeader*, kClasses> free_{};
  int highest_ = -1;  ///< highest class index that may be non-empty
  std::size_t in_use_ = 0;  ///< capacity of the blocks handed out and not yet back
  BufferPoolStats stats_;
};

}  // namespace tenferro::detail
