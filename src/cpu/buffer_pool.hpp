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

 private:
  static constexpr int kClasses = 240;
  static int class_index(std::size_t capacity) noexcept;
  /// Evicts cached blocks, largest classes first, until `needed` more bytes fit.
  void make_room(std::size_t needed) noexcept;

  std::array<StorageHeader*, kClasses> free_{};
  int highest_ = -1;  ///< highest class index that may be non-empty
  BufferPoolStats stats_;
};

}  // namespace tenferro::detail
